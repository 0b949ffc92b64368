//! File > Export Signals from the app's side: the plotted signals, between the cursors when
//! both are placed (else the whole recording), written on a worker thread.

use std::path::PathBuf;
use std::sync::Arc;

use crate::app::Scope;
use crate::app::commands::Command;
use crate::data::signal_export::{ExportProgress, SignalColumn};
use crate::error::Error;

impl Scope {
    /// Exports the plotted signals to `path` (`None`: where the dialog says).
    pub fn export_signals(&mut self, path: Option<PathBuf>) {
        self.path_entry = None;
        if self.export_progress.is_some() {
            return;
        }
        let Some(rec) = &self.recording else {
            self.error = Some(Error::NothingToExport);
            return;
        };
        let mut columns: Vec<SignalColumn> = Vec::new();
        for signal in self.persisted.layout.signals() {
            let name = signal.label();
            if columns.iter().any(|c| c.name == name) {
                continue;
            }
            let column = rec
                .signal_data(signal)
                .and_then(|(_, data)| SignalColumn::new(name, Arc::clone(data), &signal.path));
            columns.extend(column);
        }
        if columns.is_empty() {
            self.error = Some(Error::NothingToExport);
            return;
        }
        let range = match (self.cursors.a_ns, self.cursors.b_ns) {
            (Some(a), Some(b)) => (a.min(b), a.max(b)),
            _ => (0, u64::MAX),
        };
        let progress = Arc::new(ExportProgress::default());
        self.export_progress = Some(Arc::clone(&progress));
        self.commands.push(Command::Export {
            columns,
            range_ns: range,
            t0_ns: rec.t0_ns(),
            path,
            progress,
        });
    }

    /// True while an export runs (its dialog included).
    pub fn is_exporting(&self) -> bool {
        self.export_progress.is_some()
    }
}
