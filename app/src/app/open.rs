//! Opening recordings off the UI thread: the file dialog (injected, so tests never open one),
//! reading the summaries, and writing the demo.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crossbeam_channel::Sender;

use crate::data::layout_file::LayoutFile;
use crate::data::signal_export::{ExportJob, ExportProgress, SignalColumn};
use crate::data::source::{DataSource, RecordingSource};
use crate::error::Error;
use crate::ui::format::format_bytes;

pub use crate::ui::path_entry::PickKind;

/// Shows a file dialog and returns the chosen path. Called on a worker thread, so it may
/// block; tests inject one that returns a fixed path. `None` when no path came back: the
/// dialog was closed, or none could be shown (rfd cannot tell these apart), and the app then
/// offers its own path entry.
pub type PickPath = Arc<dyn Fn(PickKind) -> Option<PathBuf> + Send + Sync>;

/// The native dialog, through rfd's xdg portal backend.
pub fn native_dialog() -> PickPath {
    Arc::new(|kind| {
        let dialog = rfd::FileDialog::new().set_title("Open recording");
        match kind {
            PickKind::File => dialog.add_filter("MCAP", &["mcap"]).pick_file(),
            PickKind::Folder => dialog.pick_folder(),
            PickKind::SecondFile => dialog
                .set_title("Compare with a second recording")
                .add_filter("MCAP", &["mcap"])
                .pick_file(),
            PickKind::SecondFolder => dialog
                .set_title("Compare with a second recording")
                .pick_folder(),
            PickKind::SaveBag => rfd::FileDialog::new()
                .set_title("Save recording as (a new bag directory)")
                .set_file_name("capture")
                .save_file(),
            PickKind::SaveLayout => rfd::FileDialog::new()
                .set_title("Save layout")
                .add_filter("Layout", &["yaml", "yml"])
                .set_file_name("layout.yaml")
                .save_file(),
            PickKind::OpenLayout => rfd::FileDialog::new()
                .set_title("Open layout")
                .add_filter("Layout", &["yaml", "yml"])
                .pick_file(),
            PickKind::ExportCsv => rfd::FileDialog::new()
                .set_title("Export the plotted signals (.csv or .parquet)")
                .add_filter("CSV", &["csv"])
                .add_filter("Parquet", &["parquet"])
                .set_file_name("signals.csv")
                .save_file(),
        }
    })
}

/// What an opening job reports.
#[derive(Debug)]
pub enum OpenEvent {
    /// The dialog gave no path back (closed, or no dialog could be shown).
    NothingPicked(PickKind),
    /// A source is open (summaries read).
    Opened {
        /// The source.
        source: Arc<dyn DataSource>,
        /// True for the built-in demo (not added to recent files).
        demo: bool,
        /// To be opened beside the open recording, not instead of it.
        second: bool,
    },
    /// Opening failed.
    Failed(Error),
    /// A layout file was written here.
    LayoutSaved(PathBuf),
    /// A layout file was read.
    LayoutRead(PathBuf, LayoutFile),
    /// An export finished: the file and its rows, or why not.
    Exported(Result<(PathBuf, u64), Error>),
}

impl std::fmt::Debug for dyn DataSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DataSource({})", self.summary().name)
    }
}

/// Runs `job` on a thread named `name` and sends what it reports.
fn spawn(
    name: &'static str,
    tx: Sender<OpenEvent>,
    repaint: Arc<dyn Fn() + Send + Sync>,
    job: impl FnOnce() -> OpenEvent + Send + 'static,
) -> Result<(), Error> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            // A job that panics (a dialog library without a display, say) must still answer,
            // or the app would show "Opening..." forever.
            let event = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job))
                .unwrap_or_else(|_| OpenEvent::Failed(Error::JobPanicked { name }));
            // The app may have gone away meanwhile: then nobody is waiting.
            tx.send(event).ok();
            repaint();
        })
        .map(drop)
        .map_err(|source| Error::Thread { name, source })
}

/// What an opening job is doing, beyond "Opening...": set by the job, read by the UI each
/// frame (without waiting: a frame that finds it being written shows nothing more).
#[derive(Debug, Default)]
pub struct OpenStatus(Mutex<Option<String>>);

impl OpenStatus {
    /// What the job last said it was doing, if anything.
    pub fn get(&self) -> Option<String> {
        self.0.try_lock().ok().and_then(|s| s.clone())
    }

    fn set(&self, status: Option<String>) {
        if let Ok(mut s) = self.0.lock() {
            *s = status;
        }
    }
}

fn open_path(
    path: PathBuf,
    demo: bool,
    second: bool,
    (status, repaint): (&OpenStatus, &(dyn Fn() + Send + Sync)),
) -> OpenEvent {
    let report = |d: &bag::Decompressing| {
        status.set(Some(format!(
            "decompressing {}: {} of {}",
            d.part,
            format_bytes(d.read_bytes),
            format_bytes(d.stored_bytes)
        )));
        repaint();
    };
    let opened = RecordingSource::open_reporting(&path, &report);
    status.set(None);
    match opened {
        Ok(source) => OpenEvent::Opened {
            source: Arc::new(source),
            demo,
            second,
        },
        Err(e) => OpenEvent::Failed(e),
    }
}

/// Opens `path` on a worker thread (as a second recording when `second`), saying in `status`
/// what it is doing.
pub fn open_in_background(
    path: PathBuf,
    second: bool,
    status: Arc<OpenStatus>,
    tx: Sender<OpenEvent>,
    repaint: Arc<dyn Fn() + Send + Sync>,
) -> Result<(), Error> {
    let job_repaint = Arc::clone(&repaint);
    spawn("scope-open", tx, repaint, move || {
        open_path(path, false, second, (&status, &*job_repaint))
    })
}

/// Shows the dialog on a worker thread, then opens what was chosen.
pub fn pick_in_background(
    pick: PickPath,
    kind: PickKind,
    status: Arc<OpenStatus>,
    tx: Sender<OpenEvent>,
    repaint: Arc<dyn Fn() + Send + Sync>,
) -> Result<(), Error> {
    let second = matches!(kind, PickKind::SecondFile | PickKind::SecondFolder);
    let job_repaint = Arc::clone(&repaint);
    spawn("scope-dialog", tx, repaint, move || match pick(kind) {
        Some(path) => open_path(path, false, second, (&status, &*job_repaint)),
        None => OpenEvent::NothingPicked(kind),
    })
}

/// Where a file goes or comes from: a path, or whatever the dialog picks.
pub enum FileTarget {
    /// This file.
    Path(PathBuf),
    /// The dialog's choice.
    Pick(PickPath),
}

impl FileTarget {
    /// The path: given, or asked of the dialog for `kind` (on the worker thread); when the
    /// dialog gives none, the event that says so.
    fn resolve(self, kind: PickKind) -> Result<PathBuf, OpenEvent> {
        match self {
            FileTarget::Path(p) => Ok(p),
            FileTarget::Pick(pick) => pick(kind).ok_or(OpenEvent::NothingPicked(kind)),
        }
    }
}

/// Writes `file` on a worker thread (to the path the dialog picks, for a [`FileTarget::Pick`]).
pub fn save_layout_in_background(
    file: LayoutFile,
    target: FileTarget,
    tx: Sender<OpenEvent>,
    repaint: Arc<dyn Fn() + Send + Sync>,
) -> Result<(), Error> {
    spawn("scope-layout", tx, repaint, move || {
        let path = match target.resolve(PickKind::SaveLayout) {
            Ok(p) => p,
            Err(nothing) => return nothing,
        };
        match file.write(&path) {
            Ok(()) => OpenEvent::LayoutSaved(path),
            Err(e) => OpenEvent::Failed(e.into()),
        }
    })
}

/// Exports `columns` (to the path the dialog picks, for a [`FileTarget::Pick`]) on a worker
/// thread, its progress in `progress`.
pub fn export_in_background(
    columns: Vec<SignalColumn>,
    (range_ns, t0_ns): ((u64, u64), u64),
    target: FileTarget,
    progress: Arc<ExportProgress>,
    (tx, repaint): (Sender<OpenEvent>, Arc<dyn Fn() + Send + Sync>),
) -> Result<(), Error> {
    spawn("scope-export", tx, repaint, move || {
        let path = match target.resolve(PickKind::ExportCsv) {
            Ok(p) => p,
            Err(nothing) => return nothing,
        };
        let job = ExportJob {
            columns,
            range_ns,
            t0_ns,
            path: path.clone(),
        };
        OpenEvent::Exported(
            job.run(&progress)
                .map(|rows| (path.clone(), rows))
                .map_err(|source| Error::Io {
                    what: "exporting the signals to",
                    path,
                    source,
                }),
        )
    })
}

/// Reads a layout file on a worker thread.
pub fn read_layout_in_background(
    target: FileTarget,
    tx: Sender<OpenEvent>,
    repaint: Arc<dyn Fn() + Send + Sync>,
) -> Result<(), Error> {
    spawn("scope-layout", tx, repaint, move || {
        let path = match target.resolve(PickKind::OpenLayout) {
            Ok(p) => p,
            Err(nothing) => return nothing,
        };
        match LayoutFile::read(&path) {
            Ok(file) => OpenEvent::LayoutRead(path, file),
            Err(e) => OpenEvent::Failed(e.into()),
        }
    })
}

/// Writes the demo recording on a worker thread, then opens it.
pub fn demo_in_background(
    tx: Sender<OpenEvent>,
    repaint: Arc<dyn Fn() + Send + Sync>,
) -> Result<(), Error> {
    spawn(
        "scope-demo",
        tx,
        repaint,
        move || match crate::demo::write_demo_in_temp() {
            // The demo is not compressed: nothing to tell on the way.
            Ok(path) => open_path(path, true, false, (&OpenStatus::default(), &|| {})),
            Err(e) => OpenEvent::Failed(Error::Demo(e)),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::{DemoOptions, write_demo};

    #[test]
    fn opening_parts_stored_compressed_whole_says_how_far_decompressing_got() {
        let dir = tempfile::tempdir().unwrap();
        let bag = write_demo(
            &dir.path().join("drive"),
            DemoOptions {
                duration_secs: 2.0,
                part_secs: 1.0,
                tear_fraction: 0.0,
                ..DemoOptions::default()
            },
        )
        .unwrap();
        // Each part compressed whole and the index gone: found on disk as `*.mcap.zstd`.
        std::fs::remove_file(bag.join("metadata.yaml")).unwrap();
        let mut parts = Vec::new();
        for entry in std::fs::read_dir(&bag).unwrap() {
            let path = entry.unwrap().path();
            let compressed = zstd::encode_all(std::fs::read(&path).unwrap().as_slice(), 1);
            let name = format!("{}.zstd", path.file_name().unwrap().to_string_lossy());
            std::fs::write(bag.join(&name), compressed.unwrap()).unwrap();
            std::fs::remove_file(&path).unwrap();
            parts.push(name);
        }
        assert_eq!(parts.len(), 2, "{parts:?}");
        let status = OpenStatus::default();
        let seen = Mutex::new(Vec::new());
        let repaint = || seen.lock().unwrap().push(status.get());
        let event = open_path(bag, false, false, (&status, &repaint));
        let OpenEvent::Opened { source, .. } = event else {
            panic!("{event:?}");
        };
        let summary = source.summary();
        assert!(!summary.topics.is_empty());
        assert!(summary.time_range_ns.is_some_and(|(a, b)| b > a));
        let seen = seen.into_inner().unwrap();
        for part in &parts {
            assert!(
                seen.iter()
                    .flatten()
                    .any(|s| s.starts_with(&format!("decompressing {part}: "))),
                "{part}: {seen:?}"
            );
        }
        assert_eq!(status.get(), None, "nothing is said once it is open");
    }
}
