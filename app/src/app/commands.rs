//! The command queue: what the app was asked to open, started on worker threads by
//! `Scope::logic`, and what those workers report back.

use std::path::PathBuf;
use std::sync::Arc;

use crate::app::open::{
    LayoutTarget, OpenEvent, PickKind, demo_in_background, open_in_background, pick_in_background,
    read_layout_in_background, save_layout_in_background,
};
use crate::app::{Scope, remember};
use crate::data::inspector::Inspector;
use crate::data::layout_file::LayoutFile;
use crate::live::{LiveCapture, LiveOptions};
use crate::recording::Recording;
use crate::ui::path_entry::PathEntry;

/// Something to open, queued until the next `logic`.
#[derive(Debug)]
pub(super) enum Command {
    /// A recording at a path.
    Open(PathBuf),
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
}

/// What worker threads call when they have something new.
pub(super) type Repaint = Arc<dyn Fn() + Send + Sync>;

impl Scope {
    /// `path`, or the dialog when there is none.
    fn layout_target(&self, path: Option<PathBuf>) -> LayoutTarget {
        match path {
            Some(p) => LayoutTarget::Path(p),
            None => LayoutTarget::Pick(Arc::clone(&self.pick)),
        }
    }

    /// Starts each queued command: opening jobs on their threads, a live capture at once.
    pub(super) fn run_commands(&mut self, repaint: &Repaint) {
        for command in std::mem::take(&mut self.commands) {
            let tx = self.open_tx.clone();
            let started = match command {
                Command::Open(path) => open_in_background(path, tx, Arc::clone(repaint)),
                Command::Pick(kind) => {
                    pick_in_background(Arc::clone(&self.pick), kind, tx, Arc::clone(repaint))
                }
                Command::DemoRecording => demo_in_background(tx, Arc::clone(repaint)),
                Command::SaveLayout(file, path) => {
                    let target = self.layout_target(path);
                    save_layout_in_background(file, target, tx, Arc::clone(repaint))
                }
                Command::OpenLayout(path) => {
                    let target = self.layout_target(path);
                    read_layout_in_background(target, tx, Arc::clone(repaint))
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
                    self.path_entry = Some(PathEntry::after_empty_dialog(kind));
                }
                OpenEvent::Failed(e) => self.error = Some(e),
                OpenEvent::LayoutSaved(path) => {
                    remember(&mut self.persisted.recent_layouts, &path);
                    self.notice = Some(format!("Layout saved to {}", path.display()));
                }
                OpenEvent::LayoutRead(path, file) => self.apply_layout_file(path, file),
                OpenEvent::Opened { source, demo } => {
                    self.close();
                    if !demo {
                        remember(&mut self.persisted.recent, &source.summary().path);
                    }
                    self.playback.playhead_ns = source.summary().time_range_ns.map_or(0, |r| r.0);
                    self.inspector =
                        Some(Inspector::start(Arc::clone(&source), Arc::clone(repaint)));
                    self.recording = Some(Recording::start(source, Arc::clone(repaint)));
                    self.error = None;
                    self.focused_plot = None;
                    self.layout_settled = false;
                    self.reset_view = true;
                }
            }
        }
    }
}
