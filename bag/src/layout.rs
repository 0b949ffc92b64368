//! Where things are in a bag directory: what the parts are called and in which order they come.
//!
//! One rule orders parts for everyone who lists a directory (the reader, `bag verify`): by the
//! number a part's name ends with, so `run2` comes before `run10` and `drive_9` before
//! `drive_10`. The writer names its parts so that this order is the order it wrote them in.
//!
//! One rule opens every file of a recording ([`open_regular`]): a part, a single `.mcap` file,
//! `metadata.yaml`. Symbolic links are followed; anything that is not a regular file at the end
//! (a FIFO, a device, a directory, a socket) is refused with an error that says what it is,
//! since reading a FIFO blocks forever and `/dev/zero` never ends.

use std::fs::File;
use std::path::Path;

use crate::error::{BagError, Result};

/// The file name of part `index` of a bag named `bag_name`: `drive_0.mcap`, `drive_1.mcap`, ...
pub(crate) fn part_file_name(bag_name: &str, index: usize) -> String {
    format!("{bag_name}_{index}.mcap")
}

/// What a file stored compressed whole is named with after its own name: rosbag2's
/// `compression_mode: file` writes `.zstd`; the `zstd` and `lz4` tools write `.zst` and `.lz4`.
const WHOLE_FILE_SUFFIXES: [&str; 3] = [".zstd", ".zst", ".lz4"];

/// A part's name without what marks it as one: `.mcap` or `.db3`, after any
/// [`WHOLE_FILE_SUFFIXES`] (`bag_0.db3.zstd` is `bag_0`); `None` for a name that is not a
/// part's.
fn part_stem(name: &str) -> Option<&str> {
    let inner = WHOLE_FILE_SUFFIXES
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
        .unwrap_or(name);
    inner
        .strip_suffix(".mcap")
        .or_else(|| inner.strip_suffix(".db3"))
}

/// The name of the file `name` decompresses to (`bag_0.db3` for `bag_0.db3.zstd`); `None` for a
/// name without a compression suffix.
fn uncompressed_name(name: &str) -> Option<&str> {
    WHOLE_FILE_SUFFIXES
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
}

/// The listed part that `name` is the decompressed twin of (`bag_0.db3.zstd` for `bag_0.db3`
/// when the index lists the compressed file), as rosbag2 leaves it (it decompresses such a
/// file beside the original to read it) or `zstd -d` does. The twin holds the listed part's
/// messages: it is not another part.
/// `is_listed` says whether the index lists a name (asked once per compression suffix, so a
/// set of tens of thousands of parts is not walked for each file found).
pub(crate) fn twin_of_listed(name: &str, is_listed: impl Fn(&str) -> bool) -> Option<String> {
    WHOLE_FILE_SUFFIXES
        .iter()
        .map(|suffix| format!("{name}{suffix}"))
        .find(|compressed| is_listed(compressed))
}

/// Sort key of a part file name: the name without `.mcap` or `.db3` (and a compression suffix
/// after it) and its trailing digits, then the number those digits make (0 when there are
/// none), then the whole name to break ties (`run01` and `run1`).
pub(crate) fn part_sort_key(name: &str) -> (String, u64, String) {
    let stem = part_stem(name).unwrap_or(name);
    let prefix = stem.trim_end_matches(|c: char| c.is_ascii_digit());
    let digits = stem.get(prefix.len()..).unwrap_or("");
    let number = if digits.is_empty() {
        0
    } else {
        // More digits than a u64 holds: after every number that fits.
        digits.parse().unwrap_or(u64::MAX)
    };
    (prefix.to_string(), number, name.to_string())
}

/// Every entry of `dir` named `*.mcap` or `*.db3` (rosbag2's SQLite storage), or one of those
/// stored compressed whole (`*.db3.zstd`, as rosbag2 writes with `compression_mode: file`,
/// [`WHOLE_FILE_SUFFIXES`]), in part order, whatever it is: a regular file, a symbolic link (to
/// a part elsewhere, or to nothing), a FIFO or a directory. Entries that are not readable parts
/// are kept, so that whoever opens them reports them rather than skipping them unseen. A
/// compressed file whose decompressed twin lies beside it (`bag_0.db3` and `bag_0.db3.zstd`, as
/// `zstd -d` leaves them) is the same part: only the twin is listed, so no message is read twice.
pub(crate) fn discover_parts(dir: &Path) -> Result<Vec<String>> {
    let entries = std::fs::read_dir(dir).map_err(|e| BagError::io("listing", dir, e))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| part_stem(n).is_some())
        .collect();
    let plain: std::collections::HashSet<String> = names
        .iter()
        .filter(|n| uncompressed_name(n).is_none())
        .cloned()
        .collect();
    names.retain(|n| uncompressed_name(n).is_none_or(|twin| !plain.contains(twin)));
    names.sort_by_cached_key(|n| part_sort_key(n));
    Ok(names)
}

/// The compression a file starting with `magic` is stored in whole (a zstd or LZ4 frame), as
/// rosbag2 writes each file with `compression_mode: file`; `None` for anything else.
pub(crate) fn whole_file_compression(magic: &[u8]) -> Option<&'static str> {
    const ZSTD_FRAME: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
    const LZ4_FRAME: [u8; 4] = [0x04, 0x22, 0x4d, 0x18];
    match magic.get(..4)? {
        m if m == ZSTD_FRAME => Some("zstd"),
        m if m == LZ4_FRAME => Some("lz4"),
        _ => None,
    }
}

/// Opens `path` for reading if it is, or links to, a regular file. Anything else is an error of
/// kind [`std::io::ErrorKind::InvalidInput`] that names what was found ("a FIFO (named pipe)").
///
/// The type is checked before opening (opening a FIFO for reading waits for a writer), the file
/// is opened without blocking in case it was swapped for a FIFO in between, and the type of what
/// was opened is checked again.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<File> {
    let before = std::fs::metadata(path)?;
    refuse_irregular(&before.file_type())?;
    let file = open_nonblocking(path)?;
    refuse_irregular(&file.metadata()?.file_type())?;
    Ok(file)
}

#[cfg(target_os = "linux")]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // On a regular file O_NONBLOCK changes nothing; on a FIFO it makes `open` return at once.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
}

#[cfg(not(target_os = "linux"))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

fn refuse_irregular(kind: &std::fs::FileType) -> std::io::Result<()> {
    if kind.is_file() {
        return Ok(());
    }
    let what = file_type_name(kind);
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("{what}, not a regular file: refusing to read it"),
    ))
}

/// "a directory", "a FIFO (named pipe)", ...: what a non-regular file is, for messages.
fn file_type_name(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(names: &[&str]) -> Vec<String> {
        let mut names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        names.sort_by_cached_key(|n| part_sort_key(n));
        names
    }

    #[test]
    fn parts_sort_numerically_with_or_without_an_underscore() {
        assert_eq!(
            sorted(&["b_10.mcap", "b_2.mcap", "b_0.mcap", "a.mcap"]),
            ["a.mcap", "b_0.mcap", "b_2.mcap", "b_10.mcap"]
        );
        assert_eq!(
            sorted(&["run10.mcap", "run2.mcap", "run1.mcap", "run.mcap"]),
            ["run.mcap", "run1.mcap", "run2.mcap", "run10.mcap"]
        );
        assert_eq!(
            sorted(&["r_99999999999999999999.mcap", "r_1.mcap", "r_01.mcap"]),
            ["r_01.mcap", "r_1.mcap", "r_99999999999999999999.mcap"]
        );
    }

    #[test]
    fn only_regular_files_open_and_symlinks_to_them_are_followed() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("tempdir");
        };
        let file = dir.path().join("a.mcap");
        std::fs::write(&file, b"x").unwrap();
        assert!(open_regular(&file).is_ok());
        #[cfg(unix)]
        {
            let link = dir.path().join("b.mcap");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            assert!(open_regular(&link).is_ok());
            let fifo = dir.path().join("c.mcap");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            assert!(made.is_ok_and(|s| s.success()), "mkfifo");
            let error = open_regular(&fifo).unwrap_err();
            assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
            assert!(error.to_string().contains("FIFO"), "{error}");
        }
        let error = open_regular(dir.path()).unwrap_err();
        assert!(error.to_string().contains("a directory"), "{error}");
    }

    #[test]
    fn parts_stored_compressed_whole_are_found_in_order_and_a_decompressed_twin_wins() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("tempdir");
        };
        for name in [
            "b_10.db3.zstd",
            "b_9.db3.zstd",
            "b_0.db3.zstd",
            "c.mcap.zst",
            "d.mcap.lz4",
            "twin_0.db3",
            "twin_0.db3.zstd",
            "notes.zstd",
            "metadata.yaml",
        ] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        assert_eq!(
            discover_parts(dir.path()).unwrap(),
            [
                "b_0.db3.zstd",
                "b_9.db3.zstd",
                "b_10.db3.zstd",
                "c.mcap.zst",
                "d.mcap.lz4",
                "twin_0.db3"
            ]
        );
    }

    #[test]
    fn a_decompressed_twin_of_a_listed_compressed_part_is_known() {
        let listed = |n: &str| ["a_0.db3.zstd", "a_1.db3", "b_0.mcap.lz4"].contains(&n);
        let twin = |n| twin_of_listed(n, listed);
        assert_eq!(twin("a_0.db3").as_deref(), Some("a_0.db3.zstd"));
        assert_eq!(twin("b_0.mcap").as_deref(), Some("b_0.mcap.lz4"));
        assert_eq!(twin("a_1.db3"), None);
        assert_eq!(twin("a_2.db3"), None);
    }

    #[test]
    fn the_writers_names_sort_in_the_order_it_wrote_them() {
        let names: Vec<String> = (0..12).map(|i| part_file_name("drive", i)).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(sorted(&names), names);
    }
}
