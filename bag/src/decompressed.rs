//! A part stored compressed whole, as rosbag2 writes each file with `compression_mode: file`
//! (`NAME.db3.zstd`, `NAME.mcap.zstd`; zstd or LZ4 frames): decompressed once, as the part is
//! opened, into a temporary file that every reader then opens in the part's place.
//!
//! rosbag2 itself decompresses such a file beside the original, inside the bag. This never
//! writes in the recording: the copy goes to the system's temporary directory (`TMPDIR`), is
//! written in a streaming pass (memory does not grow with the file), and is deleted when the
//! last reader of the part lets go of it. A process that is killed leaves its copies behind:
//! their names carry the process id and its PID namespace
//! (`redline-decompressed-NS-PID-...`), and the next decompression removes those of processes
//! of its own namespace no longer running (where `/proc` tells; a copy from another container
//! sharing the directory is left alone). SQLite and
//! the MCAP readers need a file they can seek in, which a compressed stream is not, hence the
//! copy rather than decompressing on the fly. (A file without a name, opened again through
//! `/proc/self/fd`, would leave nothing behind, but SQLite resolves that link to the deleted
//! name and cannot open it.)
//!
//! A small file can decompress to a great deal, by accident or by design, so the copy stops
//! (and is deleted) before it leaves less than [`RESERVE_BYTES`] free where it is written (or a
//! tenth of a smaller file system), instead of filling the disk.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::sync::Arc;

use tempfile::TempPath;

/// Room a copy leaves free in its file system (at most a tenth of the file system's size).
pub(crate) const RESERVE_BYTES: u64 = 256 << 20;

/// Bytes written between two looks at the free space.
const CHECK_EVERY: u64 = 8 << 20;

/// The copy's write buffer.
const WRITE_BUFFER: usize = 1 << 20;

/// The start of a copy's file name; the PID namespace, the process id and a random part
/// follow.
const PREFIX: &str = "redline-decompressed-";

/// This process's PID namespace (the number in `/proc/self/ns/pid`'s `pid:[N]`); 0 where
/// `/proc` does not tell.
fn pid_namespace() -> u64 {
    std::fs::read_link("/proc/self/ns/pid")
        .ok()
        .and_then(|l| {
            let l = l.to_str()?.strip_prefix("pid:[")?.strip_suffix(']')?;
            l.parse().ok()
        })
        .unwrap_or(0)
}

/// The start of this process's copies' names.
fn own_prefix() -> String {
    format!("{PREFIX}{}-{}-", pid_namespace(), std::process::id())
}

/// A part's decompressed copy: where it is, and the handle that deletes it on drop (shared by
/// every clone of the part's description, so the copy lives as long as the part can be read).
#[derive(Debug, Clone)]
pub(crate) struct Decompressed {
    copy: Arc<TempPath>,
    /// The compression of the file on disk (`zstd`, `lz4`).
    pub(crate) format: &'static str,
    /// Its size on disk.
    pub(crate) stored_bytes: u64,
}

impl Decompressed {
    /// The temporary file holding the decompressed bytes.
    pub(crate) fn path(&self) -> &Path {
        &self.copy
    }
}

/// A part being decompressed as its recording opens (the one step of opening that takes time
/// in proportion to the data), as told to [`BagReader::open_reporting`]'s `report`.
///
/// [`BagReader::open_reporting`]: crate::BagReader::open_reporting
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decompressing {
    /// The part's name.
    pub part: String,
    /// Compressed bytes read so far.
    pub read_bytes: u64,
    /// The part's size on disk (compressed).
    pub stored_bytes: u64,
    /// Decompressed bytes written to the copy so far.
    pub written_bytes: u64,
}

/// Told how a decompression goes: compressed bytes read, decompressed bytes written.
pub(crate) type Report<'a> = &'a mut dyn FnMut(u64, u64);

/// Why a part could not be decompressed (said as the part's condition, after its name).
#[derive(Debug)]
pub(crate) struct Failed(pub(crate) String);

/// Decompresses `file` (in `format`, as [`whole_file_compression`] names it) into a new
/// temporary file. The copy is deleted again when this fails. `report` is told every few MiB
/// how far it got.
///
/// [`whole_file_compression`]: crate::layout::whole_file_compression
pub(crate) fn decompress(
    file: File,
    format: &'static str,
    report: Report<'_>,
) -> Result<Decompressed, Failed> {
    decompress_in(file, format, &std::env::temp_dir(), reserve, report)
}

/// The room a copy leaves free in a file system of `size` bytes.
fn reserve(size: u64) -> u64 {
    RESERVE_BYTES.min(size / 10)
}

/// Removes the copies in `dir` that processes of this PID namespace no longer running left
/// behind (killed before they could delete them). Only where `/proc` says which processes run;
/// a copy whose name does not parse, of another namespace, or whose process runs, is left
/// alone.
fn remove_orphans(dir: &Path) {
    let namespace = pid_namespace();
    if !cfg!(target_os = "linux") || namespace == 0 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.strip_prefix(&format!("{namespace}-")))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            // Another process may be removing it too: either way it goes.
            std::fs::remove_file(entry.path()).ok();
        }
    }
}

/// [`decompress`] into a temporary file in `dir`, leaving `keep_free(size of its file system)`
/// bytes free there.
fn decompress_in(
    file: File,
    format: &'static str,
    dir: &Path,
    keep_free: fn(u64) -> u64,
    report: Report<'_>,
) -> Result<Decompressed, Failed> {
    let stored_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    let creating = |e: std::io::Error| {
        Failed(format!(
            "cannot be decompressed: creating a temporary file in {} failed: {e}",
            dir.display()
        ))
    };
    remove_orphans(dir);
    // On failure the copy is deleted as `copy` drops.
    let (out, copy) = tempfile::Builder::new()
        .prefix(&own_prefix())
        .tempfile_in(dir)
        .map_err(creating)?
        .into_parts();
    write_decompressed(file, format, &out, keep_free, report).map_err(|e| match e {
        Copy::Read(e) => Failed(format!("cannot be decompressed ({format}): {e}")),
        Copy::Full { written, free } => Failed(format!(
            "cannot be decompressed: its copy in {} stopped after {written} bytes with {free} \
             bytes left free there, to keep the disk from filling (set TMPDIR to a directory \
             with room for it)",
            dir.display(),
        )),
        Copy::Write(e) => Failed(format!(
            "cannot be decompressed: writing the decompressed copy in {} failed: {e} (set \
             TMPDIR to a directory with room for it)",
            dir.display()
        )),
    })?;
    Ok(Decompressed {
        copy: Arc::new(copy),
        format,
        stored_bytes,
    })
}

/// Which side of the copy failed.
enum Copy {
    Read(std::io::Error),
    Write(std::io::Error),
    /// Less than the reserve is left free.
    Full {
        written: u64,
        free: u64,
    },
}

/// Bytes free for this user in the file system of `file`, and its size (`None`: cannot tell).
#[cfg(target_os = "linux")]
// `c_ulong` and `fsblkcnt_t` are `u64` on 64-bit Linux only.
#[allow(clippy::useless_conversion)]
fn space(file: &File) -> Option<(u64, u64)> {
    let s = nix::sys::statvfs::fstatvfs(file).ok()?;
    let unit = u64::from(s.fragment_size());
    Some((
        u64::from(s.blocks_available()).saturating_mul(unit),
        u64::from(s.blocks()).saturating_mul(unit),
    ))
}

#[cfg(not(target_os = "linux"))]
fn space(_: &File) -> Option<(u64, u64)> {
    None
}

/// A reader that counts the bytes read through it, where the one who reads it (a decompressor
/// that owns it) cannot be asked.
struct Counted<R> {
    inner: R,
    count: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get().saturating_add(n as u64));
        Ok(n)
    }
}

fn write_decompressed(
    file: File,
    format: &'static str,
    out: &File,
    keep_free: fn(u64) -> u64,
    report: Report<'_>,
) -> Result<(), Copy> {
    let read = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let input = BufReader::new(Counted {
        inner: file,
        count: read.clone(),
    });
    let mut decoder: Box<dyn Read> = match format {
        "lz4" => Box::new(lz4_flex::frame::FrameDecoder::new(input)),
        _ => Box::new(zstd::stream::read::Decoder::with_buffer(input).map_err(Copy::Read)?),
    };
    let mut out = BufWriter::with_capacity(WRITE_BUFFER, out);
    let mut buf = vec![0u8; 1 << 16];
    let (mut written, mut next_check) = (0u64, 0u64);
    loop {
        if written >= next_check {
            // What is written before the next look (and what the buffer holds) must fit above
            // the room kept free.
            let ahead = CHECK_EVERY + WRITE_BUFFER as u64;
            if let Some((free, size)) = space(out.get_ref())
                && free < keep_free(size).saturating_add(ahead)
            {
                return Err(Copy::Full { written, free });
            }
            next_check = written.saturating_add(CHECK_EVERY);
            report(read.get(), written);
        }
        let n = match decoder.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Copy::Read(e)),
        };
        out.write_all(buf.get(..n).unwrap_or(&[]))
            .map_err(Copy::Write)?;
        written = written.saturating_add(n as u64);
    }
    // Read back by this machine only: written through the page cache, not synced.
    out.flush().map_err(Copy::Write)?;
    report(read.get(), written);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compressed(format: &'static str, data: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        let bytes = match format {
            "lz4" => {
                let mut w = lz4_flex::frame::FrameEncoder::new(Vec::new());
                w.write_all(data).unwrap();
                w.finish().unwrap()
            }
            _ => zstd::encode_all(data, 3).unwrap(),
        };
        f.write_all(&bytes).unwrap();
        f
    }

    #[test]
    fn both_frames_decompress_to_a_copy_that_goes_with_the_last_handle() {
        let data: Vec<u8> = (0..300_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        for format in ["zstd", "lz4"] {
            let f = compressed(format, &data);
            let mut reports = Vec::new();
            let d = decompress(
                File::open(f.path()).unwrap(),
                format,
                &mut |read, written| reports.push((read, written)),
            )
            .unwrap();
            assert_eq!(std::fs::read(d.path()).unwrap(), data, "{format}");
            assert_eq!(d.stored_bytes, f.as_file().metadata().unwrap().len());
            // Told at the start and at the end, with every byte read and written by then.
            assert_eq!(reports.first(), Some(&(0, 0)), "{format}");
            assert_eq!(
                reports.last(),
                Some(&(d.stored_bytes, data.len() as u64)),
                "{format}"
            );
            let path = d.path().to_path_buf();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.starts_with(&own_prefix()), "{name}");
            let clone = d.clone();
            drop(d);
            assert_eq!(
                std::fs::read(&path).unwrap(),
                data,
                "a clone still holds the copy"
            );
            drop(clone);
            assert!(!path.exists(), "the copy outlived its last holder");
        }
    }

    #[test]
    fn a_cut_or_garbled_frame_says_so_and_leaves_no_copy() {
        let data: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
        for format in ["zstd", "lz4"] {
            let f = compressed(format, &data);
            let mut bytes = std::fs::read(f.path()).unwrap();
            bytes.truncate(bytes.len() / 2);
            let cut = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(cut.path(), &bytes).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let e = decompress_in(
                File::open(cut.path()).unwrap(),
                format,
                dir.path(),
                reserve,
                &mut |_, _| {},
            )
            .unwrap_err();
            assert!(
                e.0.starts_with("cannot be decompressed"),
                "{format}: {}",
                e.0
            );
            let left = std::fs::read_dir(dir.path()).unwrap().count();
            assert_eq!(left, 0, "{format}: a copy was left behind");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_copy_that_would_fill_the_disk_stops_and_says_so() {
        let data = vec![0u8; 1 << 20];
        let f = compressed("zstd", &data);
        let dir = tempfile::tempdir().unwrap();
        // Keeping more free than any disk has: the first look at the free space stops it.
        let e = decompress_in(
            File::open(f.path()).unwrap(),
            "zstd",
            dir.path(),
            |_| u64::MAX,
            &mut |_, _| {},
        )
        .unwrap_err();
        assert!(e.0.contains("to keep the disk from filling"), "{}", e.0);
        assert!(e.0.contains("set TMPDIR"), "{}", e.0);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn copies_left_by_a_process_no_longer_running_are_removed_and_others_kept() {
        let dir = tempfile::tempdir().unwrap();
        // Process ids above the kernel's largest (2^22) never run.
        let ns = pid_namespace();
        assert_ne!(ns, 0, "/proc/self/ns/pid");
        let orphan = dir.path().join(format!("{PREFIX}{ns}-4194305-abc"));
        let running = dir.path().join(format!("{}abc", own_prefix()));
        let elsewhere = dir.path().join(format!("{PREFIX}{}-4194305-abc", ns + 1));
        let other = dir.path().join("redline-decompressed-notapid");
        for path in [&orphan, &running, &elsewhere, &other] {
            std::fs::write(path, b"x").unwrap();
        }
        let f = compressed("zstd", b"data");
        let d = decompress_in(
            File::open(f.path()).unwrap(),
            "zstd",
            dir.path(),
            reserve,
            &mut |_, _| {},
        )
        .unwrap();
        assert!(!orphan.exists(), "an orphan was kept");
        assert!(running.exists(), "a copy in use was removed");
        assert!(elsewhere.exists(), "another namespace's copy was removed");
        assert!(other.exists(), "a file not ours was removed");
        drop(d);
    }
}
