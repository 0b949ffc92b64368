//! The command queue: what the app was asked to open, started on worker threads by
//! `Scope::logic`, and what those workers report back.

use std::path::PathBuf;
use std::sync::Arc;

use crate::app::open::{
    FileTarget, OpenEvent, PickKind, demo_in_background, export_in_background, open_in_background,
    pick_in_background, read_layout_in_background, save_layout_in_background,
};
use crate::app::{Scope, remember};
use crate::data::inspector::Inspector;
use crate::data::layout_file::LayoutFile;
use crate::data::signal_export::{ExportProgress, SignalColumn};
use crate::error::Error;
use crate::live::{LiveCapture, LiveOptions};
use crate::recording::Recording;
use crate::ui::path_entry::PathEntry;

/// Something to open, queued until the next `logic`.
#[derive(Debug)]
pub(super) enum Command {
    /// A recording at a path.
    Open(PathBuf),
    /// A recording at a path, beside the open one.
    OpenSecond(PathBuf),
    /// Whatever the file dialog picks.
    Pick(PickKind),
    /// The built-in demo recording.
    DemoRecording,
    /// A live capture (replaces what is open at once).
    Live(LiveOptions),
    /// Write this layout (to the path, or where the dialog says).
    SaveLayout(LayoutFile, Option<PathBuf>),
    /// Read a layout (from the path, or where the dialog says).
    OpenLayout(Option<PathBuf>),
    /// Export signals (to the path, or where the dialog says).
    Export {
        /// The signals.
        columns: Vec<SignalColumn>,
        /// Log times, both included.
        range_ns: (u64, u64),
        /// The recording's start.
        t0_ns: u64,
        /// Where.
        path: Option<PathBuf>,
        /// Shared with the menu bar.
        progress: Arc<ExportProgress>,
    },
}

/// What worker threads call when they have something new.
pub(super) type Repaint = Arc<dyn Fn() + Send + Sync>;

impl Scope {
    /// `path`, or the dialog when there is none.
    fn file_target(&self, path: Option<PathBuf>) -> FileTarget {
        match path {
            Some(p) => FileTarget::Path(p),
            None => FileTarget::Pick(Arc::clone(&self.pick)),
        }
    }

    /// Starts each queued command: opening jobs on their threads, a live capture at once.
    pub(super) fn run_commands(&mut self, repaint: &Repaint) {
        for command in std::mem::take(&mut self.commands) {
            let tx = self.open_tx.clone();
            let started = match command {
                Command::Open(path) => {
                    let status = Arc::clone(&self.open_status);
                    open_in_background(path, false, status, tx, Arc::clone(repaint))
                }
                Command::OpenSecond(path) => {
                    let status = Arc::clone(&self.open_status);
                    open_in_background(path, true, status, tx, Arc::clone(repaint))
                }
                Command::Pick(kind) => {
                    let (pick, status) = (Arc::clone(&self.pick), Arc::clone(&self.open_status));
                    pick_in_background(pick, kind, status, tx, Arc::clone(repaint))
                }
                Command::DemoRecording => demo_in_background(tx, Arc::clone(repaint)),
                Command::SaveLayout(file, path) => {
                    let target = self.file_target(path);
                    save_layout_in_background(file, target, tx, Arc::clone(repaint))
                }
                Command::OpenLayout(path) => {
                    let target = self.file_target(path);
                    read_layout_in_background(target, tx, Arc::clone(repaint))
                }
                Command::Export {
                    columns,
                    range_ns,
                    t0_ns,
                    path,
                    progress,
                } => {
                    let target = self.file_target(path);
                    export_in_background(
                        columns,
                        (range_ns, t0_ns),
                        target,
                        progress,
                        (tx, Arc::clone(repaint)),
                    )
                }
                Command::Live(options) => {
                    self.start_capture(options, repaint);
                    continue;
                }
            };
            match started {
                Ok(()) => self.opening += 1,
                Err(e) => self.error = Some(e),
            }
        }
    }

    fn start_capture(&mut self, options: LiveOptions, repaint: &Repaint) {
        self.close();
        let capture = LiveCapture::start(options, Arc::clone(repaint));
        let source = Arc::clone(capture.shared());
        self.inspector = Some(Inspector::start(source, Arc::clone(repaint)));
        self.recording = Some(Recording::live(capture));
        self.follow = true;
        self.error = None;
        self.focused_plot = None;
        self.layout_settled = false;
    }

    /// Takes in what the opening jobs report: a source to load, an error, or nothing chosen.
    pub(super) fn take_opened(&mut self, repaint: &Repaint) {
        while let Ok(event) = self.open_rx.try_recv() {
            self.opening = self.opening.saturating_sub(1);
            match event {
                OpenEvent::NothingPicked(kind) => {
                    if kind == PickKind::ExportCsv {
                        self.export_progress = None;
                    }
                    self.path_entry = Some(PathEntry::after_empty_dialog(kind));
                }
                OpenEvent::Failed(e) => {
                    self.error = Some(e);
                    // A second recording waiting for a first that failed to open waits for
                    // nothing: it must not join the next recording opened.
                    if self.opening == 0 {
                        self.pending_second = None;
                    }
                }
                OpenEvent::LayoutSaved(path) => {
                    remember(&mut self.persisted.recent_layouts, &path);
                    self.notice = Some(format!("Layout saved to {}", path.display()));
                }
                OpenEvent::LayoutRead(path, file) => self.apply_layout_file(path, file),
                OpenEvent::Exported(result) => {
                    self.export_progress = None;
                    match result {
                        Ok((path, rows)) => {
                            self.notice =
                                Some(format!("Exported {rows} rows to {}", path.display()));
                        }
                        Err(e) => self.error = Some(e),
                    }
                }
                OpenEvent::Opened {
                    source,
                    second: true,
                    ..
                } => match &mut self.recording {
                    Some(rec) => {
                        rec.open_second(source, Arc::clone(repaint));
                        self.error = None;
                    }
                    // The first recording is still being opened (`scope A --compare B`).
                    None if self.opening > 0 => self.pending_second = Some(source),
                    None => self.error = Some(Error::NothingToCompare),
                },
                OpenEvent::Opened { source, demo, .. } => {
                    self.close();
                    if !demo {
                        remember(&mut self.persisted.recent, &source.summary().path);
                    }
                    self.playback.playhead_ns = source.summary().time_range_ns.map_or(0, |r| r.0);
                    self.inspector =
                        Some(Inspector::start(Arc::clone(&source), Arc::clone(repaint)));
                    let mut rec = Recording::start(source, Arc::clone(repaint));
                    if let Some(second) = self.pending_second.take() {
                        rec.open_second(second, Arc::clone(repaint));
                    }
                    self.recording = Some(rec);
                    self.error = None;
                    self.focused_plot = None;
                    self.layout_settled = false;
                    self.reset_view = true;
                }
            }
        }
    }
}
