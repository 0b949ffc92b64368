//! Layout files from the app's side: File > Save Layout and Open Layout (and Recent Layouts,
//! `scope PATH --layout FILE`), read and written on worker threads, applied to what is open.

use std::path::PathBuf;

use crate::app::commands::Command;
use crate::app::{Scope, remember};
use crate::data::cursors::Which;
use crate::data::layout_file::{CursorsFile, LayoutFile, TimeAxis};
use crate::error::Error;
use crate::ui::time_axis::Clock;

/// A layout file read, waiting for the recording to be loaded: then it is checked against
/// the recording's fields and its cursors placed.
#[derive(Debug, Clone)]
pub(super) struct PendingLayout {
    path: PathBuf,
    cursors: CursorsFile,
}

impl Scope {
    /// File > Save Layout: the dialog, then the file.
    pub fn save_layout(&mut self) {
        self.commands
            .push(Command::SaveLayout(self.layout_file(), None));
    }

    /// Writes the layout file `path`.
    pub fn save_layout_to(&mut self, path: PathBuf) {
        self.path_entry = None;
        self.commands
            .push(Command::SaveLayout(self.layout_file(), Some(path)));
    }

    /// File > Open Layout: the dialog, then the file.
    pub fn open_layout(&mut self) {
        self.commands.push(Command::OpenLayout(None));
    }

    /// Reads and applies the layout file `path`.
    pub fn open_layout_from(&mut self, path: PathBuf) {
        self.path_entry = None;
        self.commands.push(Command::OpenLayout(Some(path)));
    }

    /// What is shown now, as a layout file.
    fn layout_file(&self) -> LayoutFile {
        let t0 = self.recording.as_ref().map_or(0, |r| r.t0_ns());
        let from_start = |t: Option<u64>| t.map(|t| t.saturating_sub(t0));
        let cursors = CursorsFile {
            a_from_start_ns: from_start(self.cursors.a_ns),
            b_from_start_ns: from_start(self.cursors.b_ns),
        };
        let time_axis = match self.view.clock {
            Clock::Relative => TimeAxis::Relative,
            Clock::Utc => TimeAxis::Utc,
            Clock::Local(_) => TimeAxis::Local,
        };
        LayoutFile::new(&self.persisted.layout, &self.view.draw, cursors, time_axis)
    }

    /// Shows the layout of `file` (read from `path`); what it names that the recording lacks
    /// is left out and said, once the recording is loaded.
    pub(super) fn apply_layout_file(&mut self, path: PathBuf, file: LayoutFile) {
        remember(&mut self.persisted.recent_layouts, &path);
        let (layout, draw) = file.layout();
        self.persisted.layout = layout;
        self.view.draw.extend(draw);
        self.view.clock = match file.time_axis {
            TimeAxis::Relative => Clock::Relative,
            TimeAxis::Utc => Clock::Utc,
            // Where the offset cannot be read safely, UTC, which is exact.
            TimeAxis::Local => Clock::local().unwrap_or(Clock::Utc),
        };
        self.focused_plot = None;
        // Not the default layout: this one was asked for.
        self.default_layout = false;
        self.pending_layout = Some(PendingLayout {
            path,
            cursors: file.cursors,
        });
        if self.recording.as_ref().is_some_and(|r| r.loaded()) {
            self.settle_layout();
        }
    }

    /// Part of settling the layout on a loaded recording: the layout file's cursors, and what
    /// of it the recording lacks. `missing` is what `settle_layout` left out.
    pub(super) fn settle_layout_file(&mut self, missing: Vec<String>) {
        let Some(pending) = self.pending_layout.take() else {
            return;
        };
        let t0 = self.recording.as_ref().map_or(0, |r| r.t0_ns());
        self.cursors.clear();
        for (which, offset) in [
            (Which::A, pending.cursors.a_from_start_ns),
            (Which::B, pending.cursors.b_from_start_ns),
        ] {
            if let Some(offset) = offset {
                self.cursors.place(which, t0.saturating_add(offset));
            }
        }
        if !missing.is_empty() {
            self.error = Some(Error::LayoutFieldsMissing {
                path: pending.path,
                missing,
            });
        }
    }
}
