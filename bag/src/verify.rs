//! `bag verify`: an independent MCAP parser and checker.
//!
//! Our reader is a thin layer over the `mcap` crate, which is lenient, so a writer and a reader
//! built on that one library can agree with each other about a malformed file. The predecessor
//! shipped a writer whose part roll emitted a summary listing schema and channel ids the data
//! section never contained, and only a foreign `doctor` tool noticed. This module re-implements
//! MCAP parsing from the spec, with no use of the `mcap` crate, and checks every structural claim a
//! file makes about itself: framing, CRCs, chunk contents, message and chunk indexes, statistics,
//! summary offsets, and that the summary only repeats what the data section holds.
//!
//! For the same reason it does not use the library's own format layer ([`crate::format`]), which
//! the reader and the writer share: its record framing, headers and chunk decompression are
//! written a second time here, on purpose, so that a mistake in one is caught by the other. The
//! only things it takes from the rest of the crate are bag layout, not MCAP: the order of parts
//! in a directory, the `metadata.yaml` it checks against them, and the decompressed copy of a
//! part stored compressed whole ([`crate::decompressed`], zstd or LZ4 of the whole file), whose
//! content it then checks as it checks any part.
//!
//! Parsing is sans-io over `&[u8]` (record by record); the checker streams a part from any
//! `Read + Seek` in one pass, holding one record at a time, so memory is bounded by the record
//! limit ([`VerifyOptions::max_record_bytes`]) and not by the size of the part. Damage is reported as [`Finding`]s, never as a panic or an `Err`: a file that is
//! not MCAP at all is one finding. [`VerifyError`] only means verification could not run.
//!
//! ```no_run
//! let report = bag::verify::verify_path(std::path::Path::new("run_42"))?;
//! for finding in report.findings() {
//!     eprintln!("{finding}");
//! }
//! assert!(report.is_valid());
//! # Ok::<(), bag::verify::VerifyError>(())
//! ```

mod check;
mod decompress;
mod foreign;
mod index;
mod parse;
mod report;

use std::path::{Path, PathBuf};

// The one rule of part order, shared with the reader: a bag-layout rule, not MCAP parsing.
#[cfg(test)]
use crate::layout::part_sort_key;
use crate::layout::{discover_parts, open_regular, twin_of_listed, whole_file_compression};

pub use report::{BagReport, ChannelSummary, Finding, Report, Severity, TimeRange, TopicSummary};

/// Verification could not run at all (as opposed to finding damage, which is a [`Finding`]).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The path could not be read or listed.
    #[error("reading {path:?}: {source}")]
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// Limits that keep verification's memory bounded on hostile input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyOptions {
    max_record_bytes: u64,
    max_chunk_uncompressed_bytes: u64,
    max_listed_findings: usize,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        Self {
            max_record_bytes: 256 * 1024 * 1024,
            max_chunk_uncompressed_bytes: 256 * 1024 * 1024,
            max_listed_findings: 1000,
        }
    }
}

impl VerifyOptions {
    /// The defaults: records up to 256 MiB, chunks up to 256 MiB uncompressed, 1000 findings
    /// listed per part.
    pub fn new() -> Self {
        Self::default()
    }

    /// A record longer than this is reported and skipped unread (so neither its contents nor
    /// the CRC that covers it are checked): verification holds one record in memory at a time,
    /// so this bounds its memory. The default is the reader's own limit.
    pub fn max_record_bytes(mut self, bytes: u64) -> Self {
        self.max_record_bytes = bytes;
        self
    }

    /// A chunk declaring a larger uncompressed size is reported and its contents are not checked,
    /// rather than allocating what the file claims.
    pub fn max_chunk_uncompressed_bytes(mut self, bytes: u64) -> Self {
        self.max_chunk_uncompressed_bytes = bytes;
        self
    }

    /// Findings beyond this many are counted (see [`Report::unlisted_findings`]) but not kept.
    pub fn max_listed_findings(mut self, count: usize) -> Self {
        self.max_listed_findings = count;
        self
    }
}

/// Verifies one MCAP part held in memory. `part_name` only labels the findings.
pub fn verify_bytes(part_name: &str, bytes: &[u8]) -> Report {
    verify_bytes_with(part_name, bytes, &VerifyOptions::default())
}

/// [`verify_bytes`] with explicit limits.
pub fn verify_bytes_with(part_name: &str, bytes: &[u8], options: &VerifyOptions) -> Report {
    let mut input = std::io::Cursor::new(bytes);
    check::check(part_name, &mut input, bytes.len() as u64, options)
}

/// Verifies one MCAP file, streaming it. Findings name the part by its file name. A path that
/// is not (a symbolic link to) a regular file is an `Err`.
pub fn verify_file(path: &Path) -> Result<Report, VerifyError> {
    verify_file_with(path, &VerifyOptions::default())
}

/// [`verify_file`] with explicit limits.
pub fn verify_file_with(path: &Path, options: &VerifyOptions) -> Result<Report, VerifyError> {
    stream_part(path, options).map_err(|source| VerifyError::Io {
        path: path.to_owned(),
        source,
    })
}

/// Verifies a single `.mcap` file, or every `*.mcap` part of a bag directory (in part order).
///
/// Only an unreadable `path` is an `Err`; a directory without parts, or a part that cannot be
/// read, is a finding. The cross-check of `metadata.yaml` against the parts is left to the
/// metadata module, which can push its findings onto [`BagReport::findings`].
pub fn verify_path(path: &Path) -> Result<BagReport, VerifyError> {
    verify_path_with(path, &VerifyOptions::default())
}

/// [`verify_path`] with explicit limits.
pub fn verify_path_with(path: &Path, options: &VerifyOptions) -> Result<BagReport, VerifyError> {
    let io_err = |source| VerifyError::Io {
        path: path.to_owned(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io_err)?;
    let mut bag = BagReport {
        path: path.display().to_string(),
        checked: None,
        parts: Vec::new(),
        findings: Vec::new(),
    };
    if !meta.is_dir() {
        let name = part_name(path);
        if starts_with(path, crate::ros1_bag::ROS1_MAGIC) {
            bag.checked = Some(foreign::ROS1_CHECKED.to_owned());
            bag.parts
                .push(foreign::ros1_report(path, &name, meta.len()));
        } else if starts_with(path, crate::sqlite_part::SQLITE_MAGIC) {
            bag.checked = Some(foreign::SQLITE_CHECKED.to_owned());
            bag.parts
                .push(foreign::sqlite_report(path, &name, meta.len()));
        } else if let Some(format) = whole_file_compression(&head(path, 4)) {
            verify_compressed(path, name, format, options, &mut bag);
        } else {
            bag.parts.push(verify_file_with(path, options)?);
        }
        return Ok(bag);
    }
    // The reader's rule for what the parts are (every `*.mcap` and `*.db3` entry and those
    // stored compressed whole, symbolic links followed), so that a bag the reader reads is the
    // bag verify checks. What a part holds is told by its first bytes, as the reader tells it:
    // SQLite parts are not MCAP, and compressed ones are checked through a copy.
    let discovered = discover_parts(path).map_err(|e| match e {
        crate::BagError::Io { source, .. } => io_err(source),
        other => io_err(std::io::Error::other(other.detail())),
    })?;
    // Parts stored compressed whole (rosbag2's `compression_mode: file`), listed or found on
    // disk, judged as the reader judges them; a listed one's decompressed twin is not checked
    // again (the reader skips it, with a note).
    let compressed = crate::metadata::stored_compressed_parts(path);
    let names: std::collections::HashSet<&str> =
        compressed.iter().map(|(name, _)| name.as_str()).collect();
    let (mut sqlite, mut parts) = (Vec::new(), Vec::new());
    for name in discovered {
        if names.contains(name.as_str()) || twin_of_listed(&name, |n| names.contains(n)).is_some() {
            continue;
        }
        if name.ends_with(".db3") {
            sqlite.push(name);
        } else {
            parts.push(path.join(name));
        }
    }
    if !sqlite.is_empty() {
        bag.checked = Some(foreign::SQLITE_CHECKED.to_owned());
    }
    for name in &sqlite {
        let file = path.join(name);
        let size = std::fs::metadata(&file).map_or(0, |m| m.len());
        bag.parts.push(foreign::sqlite_report(&file, name, size));
    }
    for (name, format) in &compressed {
        verify_compressed(&path.join(name), name.clone(), format, options, &mut bag);
    }
    let no_parts = parts.is_empty() && sqlite.is_empty() && compressed.is_empty();
    for part_path in parts {
        match stream_part(&part_path, options) {
            Ok(report) => bag.parts.push(report),
            Err(err) => bag.findings.push(Finding {
                severity: Severity::Error,
                part: part_name(&part_path),
                offset: 0,
                offset_in_chunk: None,
                record: "file",
                expected: "a readable part".to_owned(),
                found: format!("read error: {err}"),
            }),
        }
    }
    index::check_index(path, &mut bag);
    if no_parts {
        bag.findings.push(Finding {
            severity: Severity::Error,
            part: bag.path.clone(),
            offset: 0,
            offset_in_chunk: None,
            record: "bag",
            expected: "at least one *.mcap part in the directory".to_owned(),
            found: "none".to_owned(),
        });
    }
    Ok(bag)
}

/// Verifies the file at `path`, stored compressed whole with `format` (rosbag2's
/// `compression_mode: file`), as the part `name`: decompressed into a temporary copy (the
/// reader's way, see [`crate::decompressed`]), which is checked as the part it holds (MCAP, a
/// rosbag2 SQLite file or a ROS 1 bag). A file that does not decompress is a finding.
fn verify_compressed(
    path: &Path,
    name: String,
    format: &'static str,
    options: &VerifyOptions,
    bag: &mut BagReport,
) {
    let not_verified = |found: String| Finding {
        severity: Severity::Error,
        part: name.clone(),
        offset: 0,
        offset_in_chunk: None,
        record: "file",
        expected: format!("a file compressed whole with {format} that decompresses"),
        found,
    };
    let copy = match open_regular(path)
        .map_err(|e| format!("cannot be opened: {e}"))
        .and_then(|file| {
            crate::decompressed::decompress(file, format, &mut |_, _| {}).map_err(|e| e.0)
        }) {
        Ok(copy) => copy,
        Err(found) => {
            bag.findings.push(not_verified(found));
            return;
        }
    };
    let copy_path = copy.path();
    let len = std::fs::metadata(copy_path).map_or(0, |m| m.len());
    let mut report = if starts_with(copy_path, crate::ros1_bag::ROS1_MAGIC) {
        bag.checked = Some(foreign::ROS1_CHECKED.to_owned());
        foreign::ros1_report(copy_path, &name, len)
    } else if starts_with(copy_path, crate::sqlite_part::SQLITE_MAGIC) {
        bag.checked = Some(foreign::SQLITE_CHECKED.to_owned());
        foreign::sqlite_report(copy_path, &name, len)
    } else {
        match open_regular(copy_path) {
            Ok(file) => {
                let mut input = std::io::BufReader::with_capacity(1 << 20, file);
                check::check(&name, &mut input, len, options)
            }
            Err(e) => {
                bag.findings.push(not_verified(format!(
                    "its decompressed copy cannot be read: {e}"
                )));
                return;
            }
        }
    };
    report.part = name;
    bag.parts.push(report);
}

/// Whether the regular file at `path` starts with `magic` (unreadable: no, and the MCAP check
/// reports why).
fn starts_with(path: &Path, magic: &[u8]) -> bool {
    head(path, magic.len()) == magic
}

/// The first `n` bytes of the regular file at `path` (fewer when it is shorter, none when it
/// cannot be read).
fn head(path: &Path, n: usize) -> Vec<u8> {
    use std::io::Read;
    let mut head = Vec::with_capacity(n);
    match open_regular(path).and_then(|file| file.take(n as u64).read_to_end(&mut head)) {
        Ok(_) => head,
        Err(_) => Vec::new(),
    }
}

/// Opens a part (if it is, or links to, a regular file) and checks it in one streaming pass.
fn stream_part(path: &Path, options: &VerifyOptions) -> std::io::Result<Report> {
    let file = open_regular(path)?;
    let len = file.metadata()?.len();
    let mut input = std::io::BufReader::with_capacity(1 << 20, file);
    Ok(check::check(&part_name(path), &mut input, len, options))
}

fn part_name(path: &Path) -> String {
    path.file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_sort_by_numeric_index() {
        let mut names: Vec<PathBuf> = ["r_10.mcap", "r_2.mcap", "r_0.mcap", "r_1.mcap"]
            .iter()
            .map(PathBuf::from)
            .collect();
        names.sort_by_cached_key(|p| part_sort_key(&part_name(p)));
        let names: Vec<String> = names.iter().map(|p| part_name(p)).collect();
        assert_eq!(names, ["r_0.mcap", "r_1.mcap", "r_2.mcap", "r_10.mcap"]);
    }
}
