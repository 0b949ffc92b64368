//! [`WriteBehind`]: a part file that a long recording streams into without filling the page
//! cache.
//!
//! A recorder writes once and reads nothing back. Left alone, the kernel keeps every written
//! page cached, and dirty until its own writeback comes round: a recording at hundreds of MB/s
//! fills memory with pages nobody will read, and once the dirty limit is reached `write` stalls
//! while the kernel catches up, which is when a live queue overflows. So every [`WINDOW`]
//! bytes the file asks the kernel to start writing the window just filled, and to drop the
//! window two before it, which is normally on disk by then. Dirty data stays near two windows
//! per part, and the kernel hands the same few pages out again instead of fresh ones. On this
//! project's VM, where a page never used before is slow to write into, that lifts the rate a
//! recorder keeps up with (see "The bag on disk" in the README).
//!
//! Both requests are advice (`posix_fadvise(DONTNEED)`): the kernel starts writeback without
//! waiting for it to finish, and drops only pages already clean. Where the advice is not
//! available it is skipped, and the file behaves as an ordinary one.

use std::fs::File;
use std::io::{self, Write};

/// Bytes between two requests.
const WINDOW: u64 = 8 << 20;

/// A file written from start to end, handed to the kernel's writeback window by window.
#[derive(Debug)]
pub(crate) struct WriteBehind {
    file: File,
    written: u64,
}

impl WriteBehind {
    /// Writes into `file` from its start.
    pub(crate) fn new(file: File) -> Self {
        WriteBehind { file, written: 0 }
    }

    /// The file, for syncing and closing.
    pub(crate) fn into_file(self) -> File {
        self.file
    }

    /// The window from `start` is full: on to the disk with it, and out of the cache with the
    /// one two before it.
    fn window_filled(&self, start: u64) {
        advise_not_needed(&self.file, start, WINDOW);
        if let Some(older) = start.checked_sub(2 * WINDOW) {
            advise_not_needed(&self.file, older, WINDOW);
        }
    }
}

impl Write for WriteBehind {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        let full_before = self.written / WINDOW;
        self.written += n as u64;
        for window in full_before..self.written / WINDOW {
            self.window_filled(window * WINDOW);
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Tells the kernel `len` bytes of `file` from `offset` will not be read soon: dirty pages
/// start their writeback, clean ones leave the cache. Advice only, so a refusal (a file
/// system that does not take it) changes nothing and is ignored.
#[cfg(target_os = "linux")]
fn advise_not_needed(file: &File, offset: u64, len: u64) {
    use nix::fcntl::{PosixFadviseAdvice, posix_fadvise};
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return;
    };
    posix_fadvise(file, offset, len, PosixFadviseAdvice::POSIX_FADV_DONTNEED).ok();
}

#[cfg(not(target_os = "linux"))]
fn advise_not_needed(_file: &File, _offset: u64, _len: u64) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_lands_in_order_across_windows() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("part.mcap");
        let total = (3 * WINDOW + WINDOW / 2) as usize;
        let data: Vec<u8> = (0..total).map(|i| (i * 31 % 251) as u8).collect();
        let mut file = WriteBehind::new(File::create(&path).expect("create"));
        // Writes of uneven sizes, so that window boundaries fall inside them.
        let mut at = 0;
        for size in [1usize, 4095, 1 << 20, 7, (1 << 23) + 3].iter().cycle() {
            let end = (at + size).min(total);
            file.write_all(&data[at..end]).expect("write");
            at = end;
            if at == total {
                break;
            }
        }
        file.flush().expect("flush");
        file.into_file().sync_all().expect("sync");
        assert!(
            std::fs::read(&path).expect("read") == data,
            "file differs from what was written"
        );
    }
}
