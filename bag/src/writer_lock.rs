//! The lock a [`BagWriter`](crate::BagWriter) holds on its bag, so that tools that rewrite a
//! bag (reindex) or read it as finished (export) can tell a bag being written from one whose
//! writer died.
//!
//! The writer creates `.writer.lock` in the bag and holds an exclusive advisory lock (`flock`)
//! on it until it closes, then removes it. The kernel drops the lock when the writer's process
//! dies, however it dies, so a lock file nobody holds is a writer that did not finish (its
//! index still lists a part as `open`), and a held one is a writer at work.

use std::fs::{self, File, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

use crate::error::{BagError, Result};

/// The lock file's name inside a bag directory.
pub const WRITER_LOCK_FILE: &str = ".writer.lock";

/// An exclusive lock on a bag, held while it is written.
#[derive(Debug)]
pub(crate) struct WriterLock {
    path: PathBuf,
    file: Option<File>,
}

impl WriterLock {
    /// Creates and locks `dir/.writer.lock`. Fails if another writer holds it.
    pub(crate) fn acquire(dir: &Path) -> Result<Self> {
        let path = dir.join(WRITER_LOCK_FILE);
        let file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| BagError::io("creating", &path, e))?;
        match file.try_lock() {
            Ok(()) => Ok(WriterLock {
                path,
                file: Some(file),
            }),
            Err(TryLockError::WouldBlock) => Err(BagError::BeingWritten {
                path: dir.to_path_buf(),
            }),
            Err(TryLockError::Error(e)) => Err(BagError::io("locking", &path, e)),
        }
    }

    /// Removes the lock file, then lets the lock go: the bag is finished.
    pub(crate) fn release(&mut self) {
        if let Some(file) = self.file.take() {
            // Removed while still held, so nobody can take a lock on a file about to vanish
            // and think the bag is being written.
            fs::remove_file(&self.path).ok();
            drop(file);
        }
    }
}

/// `Err(BagError::BeingWritten)` when a writer holds the lock on the bag `dir` (or on the bag
/// holding the file `dir`); `Ok` when there is no lock file or nobody holds it.
pub fn ensure_not_being_written(path: &Path) -> Result<()> {
    let dir = if path.is_dir() {
        path
    } else {
        match path.parent() {
            Some(parent) => parent,
            None => return Ok(()),
        }
    };
    let lock_path = dir.join(WRITER_LOCK_FILE);
    let file = match File::open(&lock_path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(BagError::io("opening", &lock_path, e)),
    };
    match file.try_lock_shared() {
        Ok(()) => Ok(()),
        Err(TryLockError::WouldBlock) => Err(BagError::BeingWritten {
            path: dir.to_path_buf(),
        }),
        Err(TryLockError::Error(e)) => Err(BagError::io("locking", &lock_path, e)),
    }
}
