//! Layout files (File > Save Layout and Open Layout, `scope PATH --layout FILE`): the plots and
//! their signals, how each is drawn, where the cursors are and what the time axis counts, as
//! YAML that a person can read and edit:
//!
//! ```yaml
//! version: 1
//! time_axis: relative
//! cursors:
//!   a_from_start_ns: 250000000
//!   b_from_start_ns: 750500000
//! plots:
//! - signals:
//!   - topic: /imu
//!     path: linear_acceleration.x
//!     draw: lines
//!   - topic: Derived
//!     path: acc_xy
//! derived:
//! - name: acc_xy
//!   expression: sqrt({/imu/linear_acceleration.x}^2 + {/imu/linear_acceleration.y}^2)
//!   transform:
//!     op: moving_average
//!     window_ms: 100
//! ```
//!
//! Cursors are kept as offsets from the recording's start, so that a layout carries over to
//! another recording of the same kind; signals by topic and path, as the rest of the app
//! knows them.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::data::derived::DerivedSpec;
use crate::data::envelope::Draw;
use crate::data::layout::{Layout, PlotSpec, SignalRef};

/// The format version this build writes and reads.
pub const VERSION: u32 = 1;

/// What the time axis counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeAxis {
    /// Seconds since the recording's start.
    #[default]
    Relative,
    /// Wall clock, UTC.
    Utc,
    /// Wall clock, the machine's local time.
    Local,
}

/// How a signal is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DrawFile {
    /// Straight lines between joined samples.
    Lines,
    /// Each value held until the next sample.
    Steps,
}

impl From<Draw> for DrawFile {
    fn from(d: Draw) -> Self {
        match d {
            Draw::Linear => DrawFile::Lines,
            Draw::Step => DrawFile::Steps,
        }
    }
}

impl From<DrawFile> for Draw {
    fn from(d: DrawFile) -> Self {
        match d {
            DrawFile::Lines => Draw::Linear,
            DrawFile::Steps => Draw::Step,
        }
    }
}

/// One signal of a plot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignalFile {
    /// Topic name.
    pub topic: String,
    /// Leaf path within the topic's messages.
    pub path: String,
    /// How it is drawn; absent: by its kind (floats as lines, integers as steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw: Option<DrawFile>,
}

/// One plot.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PlotFile {
    /// Its signals, top of the legend first (an XY plot's y signals).
    pub signals: Vec<SignalFile>,
    /// An XY plot's x signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<SignalFile>,
    /// An XY plot with one unit the same length on both axes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub equal_axes: bool,
}

/// Where the cursors are, from the recording's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CursorsFile {
    /// Cursor A, ns after the recording's first message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a_from_start_ns: Option<u64>,
    /// Cursor B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b_from_start_ns: Option<u64>,
}

/// A layout file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutFile {
    /// [`VERSION`].
    pub version: u32,
    /// What the time axis counts.
    #[serde(default)]
    pub time_axis: TimeAxis,
    /// The cursors.
    #[serde(default)]
    pub cursors: CursorsFile,
    /// The plots, top to bottom.
    #[serde(default)]
    pub plots: Vec<PlotFile>,
    /// Derived signals, in the order they are evaluated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived: Vec<DerivedSpec>,
}

/// Why a layout file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LayoutFileError {
    /// Reading or writing it failed.
    #[error("{what} the layout file {}", path.display())]
    Io {
        /// "reading", "writing".
        what: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// It is not a layout file this build reads.
    #[error("{} is not a layout file this version reads", path.display())]
    Parse {
        /// The file.
        path: std::path::PathBuf,
        /// What the YAML reader said (line and column).
        #[source]
        source: serde_yaml_ng::Error,
    },
    /// A layout of a later format.
    #[error("{} is a layout of format version {found}; this version reads {VERSION}", path.display())]
    Version {
        /// The file.
        path: std::path::PathBuf,
        /// Its version.
        found: u32,
    },
}

/// Layout files hold a few kilobytes; a larger one is not one (and is not read whole).
const MAX_BYTES: u64 = 4 << 20;

impl LayoutFile {
    /// The layout `layout` with the chosen draw modes `draw`, `cursors` as offsets from the
    /// start, and the time axis.
    pub fn new(
        layout: &Layout,
        draw: &HashMap<SignalRef, Draw>,
        cursors: CursorsFile,
        time_axis: TimeAxis,
    ) -> Self {
        LayoutFile {
            version: VERSION,
            time_axis,
            cursors,
            plots: layout
                .plots
                .iter()
                .map(|p| {
                    let file = |s: &SignalRef| SignalFile {
                        topic: s.topic.clone(),
                        path: s.path.clone(),
                        draw: draw.get(s).map(|&d| d.into()),
                    };
                    PlotFile {
                        signals: p.signals.iter().map(file).collect(),
                        x: p.x.as_ref().map(file),
                        equal_axes: p.equal_axes,
                    }
                })
                .collect(),
            derived: layout.derived.clone(),
        }
    }

    /// The plots as the app lays them out, and the draw modes the file chooses.
    pub fn layout(&self) -> (Layout, HashMap<SignalRef, Draw>) {
        let mut draw = HashMap::new();
        let mut signal = |s: &SignalFile| {
            let signal = SignalRef {
                topic: s.topic.clone(),
                path: s.path.clone(),
            };
            if let Some(d) = s.draw {
                draw.insert(signal.clone(), d.into());
            }
            signal
        };
        let plots = self
            .plots
            .iter()
            .map(|p| PlotSpec {
                signals: p.signals.iter().map(&mut signal).collect(),
                x: p.x.as_ref().map(&mut signal),
                equal_axes: p.equal_axes,
            })
            .filter(|p| !p.signals.is_empty())
            .collect();
        (
            Layout {
                plots,
                derived: self.derived.clone(),
            },
            draw,
        )
    }

    /// As YAML.
    pub fn to_yaml(&self) -> String {
        // Plain data of strings, numbers and lists: serialising cannot fail.
        serde_yaml_ng::to_string(self).unwrap_or_default()
    }

    /// Reads the layout file at `path`.
    pub fn read(path: &Path) -> Result<Self, LayoutFileError> {
        use std::io::Read;
        let io = |source| LayoutFileError::Io {
            what: "reading",
            path: path.to_owned(),
            source,
        };
        // A FIFO would block the reading thread forever, a device never end: regular files
        // only (symbolic links followed).
        let kind = std::fs::metadata(path).map_err(io)?.file_type();
        if !kind.is_file() {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file",
            )));
        }
        let mut text = String::new();
        std::fs::File::open(path)
            .map_err(io)?
            .take(MAX_BYTES)
            .read_to_string(&mut text)
            .map_err(io)?;
        let file: LayoutFile =
            serde_yaml_ng::from_str(&text).map_err(|source| LayoutFileError::Parse {
                path: path.to_owned(),
                source,
            })?;
        if file.version != VERSION {
            return Err(LayoutFileError::Version {
                path: path.to_owned(),
                found: file.version,
            });
        }
        Ok(file)
    }

    /// Writes it to `path` (through a file beside it, renamed over `path` once whole, so that
    /// a failed write leaves the old file as it was).
    pub fn write(&self, path: &Path) -> Result<(), LayoutFileError> {
        let io = |source| LayoutFileError::Io {
            what: "writing",
            path: path.to_owned(),
            source,
        };
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = std::path::PathBuf::from(partial);
        std::fs::write(&partial, self.to_yaml()).map_err(io)?;
        std::fs::rename(&partial, path).map_err(|e| {
            std::fs::remove_file(&partial).ok();
            io(e)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signal(topic: &str, path: &str) -> SignalRef {
        SignalRef {
            topic: topic.into(),
            path: path.into(),
        }
    }

    #[test]
    fn a_layout_round_trips_through_its_file() {
        let mut layout = Layout::default();
        layout.add(None, signal("/imu", "linear_acceleration.x"));
        layout.add(Some(0), signal("/imu", "linear_acceleration.y"));
        layout.add(None, signal("/count", "value"));
        layout.plots.push(PlotSpec {
            signals: vec![signal("/gps", "lat")],
            x: Some(signal("/gps", "lon")),
            equal_axes: true,
        });
        let draw = HashMap::from([(signal("/count", "value"), Draw::Step)]);
        let cursors = CursorsFile {
            a_from_start_ns: Some(250_000_000),
            b_from_start_ns: None,
        };
        let file = LayoutFile::new(&layout, &draw, cursors, TimeAxis::Utc);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("layout.yaml");
        file.write(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("draw: steps"), "{text}");
        assert!(text.contains("time_axis: utc"), "{text}");
        assert!(text.contains("equal_axes: true"), "{text}");
        let back = LayoutFile::read(&path).unwrap();
        assert_eq!(back, file);
        assert_eq!(back.layout(), (layout, draw));
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no partial file left"
        );
    }

    #[test]
    fn a_file_that_is_not_a_layout_says_where_it_went_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.yaml");
        std::fs::write(&path, "version: 1\nplots:\n- signalz: []\n").unwrap();
        let error = LayoutFile::read(&path).unwrap_err();
        let text = format!("{error}: {}", std::error::Error::source(&error).unwrap());
        assert!(
            text.contains("not a layout file") && text.contains("line 3"),
            "{text}"
        );
        std::fs::write(&path, "version: 2\n").unwrap();
        let error = LayoutFile::read(&path).unwrap_err().to_string();
        assert!(error.contains("format version 2"), "{error}");
        let error = LayoutFile::read(&dir.path().join("none.yaml"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("reading the layout file"), "{error}");
        // A FIFO is refused at once (reading it would wait for a writer forever).
        let fifo = dir.path().join("fifo.yaml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let error = LayoutFile::read(&fifo).unwrap_err();
        let text = format!("{error}: {}", std::error::Error::source(&error).unwrap());
        assert!(text.contains("not a regular file"), "{text}");
        // A directory too.
        assert!(LayoutFile::read(dir.path()).is_err());
    }
}
