//! File > Save Recording as a job: the dialog on one thread, then the writing on another, so
//! the UI never waits on either; `Scope::logic` polls it.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use bag::BagSummary;
use crossbeam_channel::{Receiver, TryRecvError, bounded};

use crate::app::open::{PickKind, PickPath};
use crate::error::Error;
use crate::live::LiveShared;
use crate::live::save::{SaveProgress, save_capture};

/// A Save Recording in progress.
#[derive(Debug)]
pub enum SaveJob {
    /// The dialog is asking where to.
    Picking(Receiver<Option<PathBuf>>),
    /// The bag is being written.
    Writing {
        /// The bag directory.
        path: PathBuf,
        /// Messages written and the total.
        progress: Arc<SaveProgress>,
        /// The writer's result, once it is done.
        result: Receiver<Result<BagSummary, Error>>,
    },
}

/// Where a [`SaveJob`] has got to.
#[derive(Debug)]
pub enum SaveState {
    /// Still running.
    Running,
    /// The dialog gave no path back (closed, or no dialog could be shown).
    NothingPicked,
    /// The dialog chose this bag directory: write it.
    Picked(PathBuf),
    /// Written; the sentence for the status bar.
    Saved(String),
    /// Writing failed.
    Failed(Error),
}

impl SaveJob {
    /// Shows the injected dialog on its own thread.
    pub fn pick(pick: &PickPath) -> Result<Self, Error> {
        let (tx, rx) = bounded(1);
        let pick = Arc::clone(pick);
        std::thread::Builder::new()
            .name("scope-save-dialog".into())
            .spawn(move || {
                // The app may have closed meanwhile: then nobody is waiting.
                tx.send(pick(PickKind::SaveBag)).ok();
            })
            .map_err(|source| Error::Thread {
                name: "scope-save-dialog",
                source,
            })?;
        Ok(SaveJob::Picking(rx))
    }

    /// Writes what `shared` holds into the new bag `dir`, on its own thread.
    pub fn write(shared: Arc<LiveShared>, dir: PathBuf) -> Result<Self, Error> {
        let progress = Arc::new(SaveProgress::default());
        let (tx, rx) = bounded(1);
        let job_progress = Arc::clone(&progress);
        let target = dir.clone();
        std::thread::Builder::new()
            .name("scope-save".into())
            .spawn(move || {
                tx.send(save_capture(&shared, &target, &job_progress)).ok();
            })
            .map_err(|source| Error::Thread {
                name: "scope-save",
                source,
            })?;
        Ok(SaveJob::Writing {
            path: dir,
            progress,
            result: rx,
        })
    }

    /// Messages written so far and the total, while writing.
    pub fn progress(&self) -> Option<(u64, u64)> {
        match self {
            SaveJob::Picking(_) => None,
            SaveJob::Writing { progress, .. } => Some((
                progress.done.load(Ordering::Relaxed),
                progress.total.load(Ordering::Relaxed),
            )),
        }
    }

    /// Where the job has got to (never blocks).
    pub fn poll(&self) -> SaveState {
        match self {
            SaveJob::Picking(choice) => match choice.try_recv() {
                Ok(Some(dir)) => SaveState::Picked(dir),
                Ok(None) => SaveState::NothingPicked,
                // The dialog's thread ended without answering: it panicked.
                Err(TryRecvError::Disconnected) => SaveState::Failed(Error::DialogFailed),
                Err(TryRecvError::Empty) => SaveState::Running,
            },
            SaveJob::Writing { path, result, .. } => match result.try_recv() {
                Ok(Ok(summary)) => SaveState::Saved(saved_notice(&summary, path)),
                Ok(Err(e)) => SaveState::Failed(e),
                Err(TryRecvError::Empty) => SaveState::Running,
                Err(TryRecvError::Disconnected) => {
                    SaveState::Failed(Error::SaveThreadFailed { dir: path.clone() })
                }
            },
        }
    }
}

/// What the status bar says once `summary` is written at `path`.
fn saved_notice(summary: &BagSummary, path: &std::path::Path) -> String {
    let mut notice = format!(
        "Saved {} messages to {}",
        summary.message_count,
        path.display()
    );
    if summary.dropped_messages > 0 {
        notice.push_str(&format!(
            " ({} dropped before saving, recorded in its index)",
            summary.dropped_messages
        ));
    }
    notice
}
