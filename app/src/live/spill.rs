//! Spill to disk: what the capture ring evicts goes into a temporary bag instead of being lost,
//! so File > Save Recording still includes it and `dropped_messages` counts only what was truly
//! lost. The temporary bag is removed when the capture ends.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bag::live::RECORD_COMPRESSION_LEVEL;
use bag::{BagReader, BagWriter, ChannelId, ChannelSpec, ReadFilter, WriteOptions};

use crate::error::Error;
use crate::live::capture::Stored;

/// Channel metadata key marking spilled messages that came without a timestamp (their MCAP
/// publish time is their log time, which would otherwise read as stamped).
const UNSTAMPED_KEY: &str = "redline/spill-unstamped";

/// The temporary bag evicted messages go to.
pub struct Spill {
    dir: PathBuf,
    writer: Option<BagWriter>,
    channels: HashMap<(u32, bool), ChannelId>,
    written: u64,
    failed: u64,
    error: Option<Arc<Error>>,
}

impl std::fmt::Debug for Spill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spill")
            .field("dir", &self.dir)
            .field("written", &self.written)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl Spill {
    /// A new temporary bag under the system's temp directory.
    pub fn create() -> Result<Self, Error> {
        let root = std::env::temp_dir().join("redline-scope-spill");
        std::fs::create_dir_all(&root).map_err(|source| Error::Io {
            what: "creating",
            path: root.clone(),
            source,
        })?;
        remove_orphans(&root);
        let stamp = bag::live::now_ns();
        let dir = root.join(format!("capture-{}-{stamp}", std::process::id()));
        let writer = BagWriter::create(
            &dir,
            WriteOptions::new().compression_level(RECORD_COMPRESSION_LEVEL),
        )
        .map_err(|source| Error::Spill {
            what: "creating",
            source,
        })?;
        Ok(Spill {
            dir,
            writer: Some(writer),
            channels: HashMap::new(),
            written: 0,
            failed: 0,
            error: None,
        })
    }

    /// Where it is.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes one evicted message of the topic recorded as `spec` (`None`: unknown topic,
    /// counted as failed).
    pub fn write(&mut self, spec: Option<&ChannelSpec>, m: Stored<'_>) {
        let (Some(writer), Some(spec)) = (self.writer.as_mut(), spec) else {
            self.failed += 1;
            return;
        };
        let unstamped = m.publish_time_ns.is_none();
        let id = *self
            .channels
            .entry((m.topic, unstamped))
            .or_insert_with(|| {
                let mut spec = spec.clone();
                if unstamped {
                    spec.metadata
                        .insert(UNSTAMPED_KEY.to_string(), "1".to_string());
                }
                writer.add_channel(spec)
            });
        match writer.write(id, m.log_time_ns, m.publish_time_ns, m.data) {
            Ok(()) => self.written += 1,
            Err(e) => {
                self.failed += 1;
                self.error.get_or_insert_with(|| {
                    Arc::new(Error::Spill {
                        what: "writing to",
                        source: e,
                    })
                });
            }
        }
    }

    /// Messages written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Messages that could not be written (lost).
    pub fn failed(&self) -> u64 {
        self.failed
    }

    /// The first write error.
    pub fn error(&self) -> Option<&Arc<Error>> {
        self.error.as_ref()
    }

    /// Hands everything written so far to the OS, so a reader sees it.
    pub fn flush(&mut self) -> Result<(), Error> {
        match self.writer.as_mut() {
            Some(w) => w.flush().map_err(|source| Error::Spill {
                what: "flushing",
                source,
            }),
            None => Ok(()),
        }
    }
}

/// Copies into `out` the spilled messages whose positions in spill order (0 is the first
/// spilled) fall in `ranges`, which are sorted and disjoint; returns how many it found. Read
/// back through [`BagReader`], like any other bag.
pub fn copy_spilled(dir: &Path, ranges: &[Range<u64>], out: &mut BagWriter) -> Result<u64, Error> {
    let Some(last) = ranges.last().map(|r| r.end) else {
        return Ok(0);
    };
    if last == 0 {
        return Ok(0);
    }
    let reading = |source| Error::Spill {
        what: "reading",
        source,
    };
    let reader = BagReader::open(dir).map_err(reading)?;
    let mut channels: HashMap<usize, ChannelId> = HashMap::new();
    let mut cursor = reader.messages(&ReadFilter::all()).map_err(reading)?;
    let (mut position, mut copied) = (0u64, 0u64);
    while position < last
        && let Some(m) = cursor.next_message()
    {
        let wanted = ranges.iter().any(|r| r.contains(&position));
        position += 1;
        if !wanted {
            continue;
        }
        let unstamped = m.channel.spec.metadata.contains_key(UNSTAMPED_KEY);
        let id = *channels.entry(m.channel.id).or_insert_with(|| {
            let mut spec = m.channel.spec.clone();
            spec.metadata.remove(UNSTAMPED_KEY);
            out.add_channel(spec)
        });
        let publish = (!unstamped).then_some(m.publish_time_ns);
        out.write(id, m.log_time_ns, publish, m.data)
            .map_err(|source| Error::Save {
                dir: out.dir().to_path_buf(),
                source,
            })?;
        copied += 1;
    }
    Ok(copied)
}

/// Removes the spill bags under `root` left by processes that are gone: an app that quits
/// mid-capture exits before its worker removes its bag. Only on Linux, where `/proc` tells
/// whether a process id is running; elsewhere they stay until the temp directory is cleaned.
fn remove_orphans(root: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix("capture-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid
            && !Path::new("/proc").join(pid.to_string()).exists()
        {
            std::fs::remove_dir_all(entry.path()).ok();
        }
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        drop(self.writer.take());
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spill_bags_of_processes_that_are_gone_are_removed() {
        if !Path::new("/proc/self").exists() {
            eprintln!("skipped: no /proc on this system, orphans are not removed");
            return;
        }
        let root = tempfile::tempdir().expect("tempdir");
        // Above Linux's highest process id (2^22).
        let gone = root.path().join("capture-99999999-1");
        let ours = root
            .path()
            .join(format!("capture-{}-1", std::process::id()));
        let other = root.path().join("notes");
        for dir in [&gone, &ours, &other] {
            std::fs::create_dir_all(dir.join("bag")).expect("mkdir");
        }
        remove_orphans(root.path());
        assert!(!gone.exists(), "an orphan stayed");
        assert!(
            ours.exists() && other.exists(),
            "removed a live or foreign directory"
        );
    }
}
