//! Issue 24's hostile inputs, one row each, with the exit code every read subcommand must give:
//! the table shared by the `bag` tool's adversarial test (`adversarial.rs`, every subcommand as
//! a child process) and the app's (`app/tests/hostile_inputs.rs`, the scope's loader).
//!
//! To add a case: write a `fn build(dir: &Path) -> PathBuf` that makes the input inside `dir`
//! and returns the path to open, and add a [`Case`] row to [`cases`].
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

#[path = "recordings.rs"]
mod recordings;
use recordings::{mkfifo, part_paths, small_bag, small_db3_bag};

/// The exit code a command must give on a row's input.
#[derive(Clone, Copy, Debug)]
pub enum Code {
    /// Exactly this code.
    Exit(i32),
}

/// The read subcommands, in the order of [`Expect`]'s fields.
pub const COMMANDS: [&str; 5] = ["info", "cat", "verify", "export", "play"];

/// One expected code per subcommand.
#[derive(Clone, Copy, Debug)]
pub struct Expect {
    pub info: Code,
    pub cat: Code,
    pub verify: Code,
    pub export: Code,
    pub play: Code,
}

impl Expect {
    /// The same code from every subcommand.
    pub const fn all(code: i32) -> Self {
        Expect {
            info: Code::Exit(code),
            cat: Code::Exit(code),
            verify: Code::Exit(code),
            export: Code::Exit(code),
            play: Code::Exit(code),
        }
    }

    pub fn code(&self, command: &str) -> Code {
        match command {
            "info" => self.info,
            "cat" => self.cat,
            "verify" => self.verify,
            "export" => self.export,
            _ => self.play,
        }
    }
}

/// One hostile input.
pub struct Case {
    pub name: &'static str,
    pub build: fn(&Path) -> PathBuf,
    pub expect: Expect,
}

pub const NOT_A_RECORDING: i32 = 1;
pub const USAGE: i32 = 2;
pub const DAMAGE: i32 = 3;

pub fn cases() -> Vec<Case> {
    use Code::Exit;
    vec![
        Case {
            name: "clean bag",
            build: clean_bag,
            expect: Expect::all(0),
        },
        Case {
            name: "clean single file",
            build: clean_file,
            expect: Expect::all(0),
        },
        Case {
            name: "directory of symlinked parts",
            build: symlinked_parts,
            expect: Expect::all(0),
        },
        // verify checks SQLite's pages and metadata.yaml against the files: it agrees.
        Case {
            name: "rosbag2 SQLite bag",
            build: db3_bag,
            expect: Expect::all(0),
        },
        Case {
            name: "rosbag2 SQLite bag with a truncated part",
            build: db3_truncated_part,
            expect: Expect::all(DAMAGE),
        },
        Case {
            name: "rosbag2 SQLite bag with a listed part missing",
            build: db3_missing_part,
            expect: Expect::all(DAMAGE),
        },
        Case {
            name: "zero-length file",
            build: zero_length_file,
            expect: Expect {
                // A writer that died before its first byte: a torn part with nothing in it.
                info: Exit(DAMAGE),
                cat: Exit(DAMAGE),
                verify: Exit(DAMAGE),
                export: Exit(DAMAGE),
                play: Exit(NOT_A_RECORDING), // nothing to play
            },
        },
        Case {
            name: "garbage file",
            build: garbage_file,
            expect: Expect {
                verify: Exit(DAMAGE), // verify's finding: not MCAP
                ..Expect::all(NOT_A_RECORDING)
            },
        },
        Case {
            name: "truncated single file",
            build: truncated_file,
            expect: Expect::all(DAMAGE),
        },
        Case {
            name: "torn part in a bag",
            build: torn_part,
            expect: Expect::all(DAMAGE),
        },
        Case {
            name: "listed part missing",
            build: missing_part,
            expect: Expect::all(DAMAGE),
        },
        Case {
            name: "sparse file claiming a 12 GiB chunk",
            build: huge_chunk_claim,
            expect: Expect {
                play: Exit(NOT_A_RECORDING), // nothing readable to play
                ..Expect::all(DAMAGE)
            },
        },
        Case {
            name: "sparse file claiming a 3 GiB message",
            build: huge_message_claim,
            expect: Expect {
                play: Exit(NOT_A_RECORDING),
                ..Expect::all(DAMAGE)
            },
        },
        Case {
            name: "FIFO as the input",
            build: fifo_input,
            expect: Expect::all(NOT_A_RECORDING),
        },
        Case {
            name: "symlink to /dev/zero as the input",
            build: dev_zero_input,
            expect: Expect::all(NOT_A_RECORDING),
        },
        Case {
            name: "FIFO named like a part",
            build: fifo_part,
            expect: Expect::all(DAMAGE),
        },
        Case {
            name: "FIFO as a listed part",
            build: fifo_listed_part,
            expect: Expect::all(DAMAGE),
        },
        Case {
            name: "FIFO as metadata.yaml",
            build: fifo_index,
            expect: Expect::all(DAMAGE),
        },
        Case {
            name: "directory where a part should be",
            build: directory_part,
            expect: Expect::all(DAMAGE),
        },
        Case {
            name: "symlink loop as a part",
            build: symlink_loop_part,
            expect: Expect::all(DAMAGE),
        },
        Case {
            name: "bag with dropped messages",
            build: dropped_bag,
            expect: Expect::all(DAMAGE),
        },
        Case {
            name: "drop count of u64::MAX",
            build: dropped_max_bag,
            expect: Expect::all(DAMAGE),
        },
        Case {
            name: "index that does not parse",
            build: unparseable_index,
            expect: Expect::all(DAMAGE),
        },
        Case {
            name: "empty directory",
            build: empty_directory,
            expect: Expect {
                verify: Exit(DAMAGE), // verify's finding: no parts
                ..Expect::all(NOT_A_RECORDING)
            },
        },
    ]
}

// ---- inputs -------------------------------------------------------------------------------

fn clean_bag(dir: &Path) -> PathBuf {
    let bag = dir.join("drive");
    small_bag(&bag, 2, 0);
    bag
}

/// One part of a clean bag, alone.
fn clean_file(dir: &Path) -> PathBuf {
    let scratch = tempfile::tempdir().unwrap();
    let bag = scratch.path().join("drive");
    small_bag(&bag, 1, 0);
    let file = dir.join("drive.mcap");
    std::fs::copy(part_paths(&bag).remove(0), &file).unwrap();
    file
}

fn symlinked_parts(dir: &Path) -> PathBuf {
    let bag = clean_bag(dir);
    let links = dir.join("links");
    std::fs::create_dir(&links).unwrap();
    for part in part_paths(&bag) {
        std::os::unix::fs::symlink(&part, links.join(part.file_name().unwrap())).unwrap();
    }
    links
}

fn db3_bag(dir: &Path) -> PathBuf {
    let bag = dir.join("rosbag2");
    small_db3_bag(&bag, 3);
    bag
}

/// The middle `.db3` cut to half its size (a copy taken while SQLite was writing it).
fn db3_truncated_part(dir: &Path) -> PathBuf {
    let bag = db3_bag(dir);
    let part = bag.join("rosbag2_1.db3");
    let bytes = std::fs::read(&part).unwrap();
    std::fs::write(&part, &bytes[..bytes.len() / 2]).unwrap();
    bag
}

fn db3_missing_part(dir: &Path) -> PathBuf {
    let bag = db3_bag(dir);
    std::fs::remove_file(bag.join("rosbag2_1.db3")).unwrap();
    bag
}

fn zero_length_file(dir: &Path) -> PathBuf {
    let file = dir.join("empty.mcap");
    std::fs::File::create(&file).unwrap();
    file
}

fn garbage_file(dir: &Path) -> PathBuf {
    let file = dir.join("garbage.mcap");
    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&file, bytes).unwrap();
    file
}

fn truncated_file(dir: &Path) -> PathBuf {
    let file = clean_file(dir);
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() * 2 / 3]).unwrap();
    file
}

fn torn_part(dir: &Path) -> PathBuf {
    let bag = clean_bag(dir);
    let last = part_paths(&bag).pop().unwrap();
    let bytes = std::fs::read(&last).unwrap();
    std::fs::write(&last, &bytes[..bytes.len() / 2]).unwrap();
    bag
}

fn missing_part(dir: &Path) -> PathBuf {
    let bag = dir.join("drive");
    small_bag(&bag, 3, 0);
    std::fs::remove_file(part_paths(&bag).remove(1)).unwrap();
    bag
}

/// Magic, a Header, then a record of `opcode` claiming `claim` bytes, in a sparse file just
/// long enough for the claim.
fn sparse_claim(file: &Path, opcode: u8, claim: u64) {
    let mut head = b"\x89MCAP0\r\n".to_vec();
    head.push(0x01);
    head.extend_from_slice(&8u64.to_le_bytes());
    head.extend_from_slice(&[0; 8]);
    head.push(opcode);
    head.extend_from_slice(&claim.to_le_bytes());
    let mut f = std::fs::File::create(file).unwrap();
    f.write_all(&head).unwrap();
    f.set_len(claim + 4096).unwrap();
}

fn huge_chunk_claim(dir: &Path) -> PathBuf {
    let file = dir.join("huge.mcap");
    sparse_claim(&file, 0x06, 12 << 30);
    file
}

fn huge_message_claim(dir: &Path) -> PathBuf {
    let file = dir.join("huge.mcap");
    sparse_claim(&file, 0x05, 3 << 30);
    file
}

fn fifo_input(dir: &Path) -> PathBuf {
    let file = dir.join("drive.mcap");
    mkfifo(&file);
    file
}

fn dev_zero_input(dir: &Path) -> PathBuf {
    let file = dir.join("zero.mcap");
    std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
    file
}

fn fifo_part(dir: &Path) -> PathBuf {
    let bag = clean_bag(dir);
    mkfifo(&bag.join("drive_9.mcap"));
    bag
}

fn fifo_listed_part(dir: &Path) -> PathBuf {
    let bag = clean_bag(dir);
    let last = part_paths(&bag).pop().unwrap();
    std::fs::remove_file(&last).unwrap();
    mkfifo(&last);
    bag
}

fn fifo_index(dir: &Path) -> PathBuf {
    let bag = clean_bag(dir);
    let index = bag.join("metadata.yaml");
    std::fs::remove_file(&index).unwrap();
    mkfifo(&index);
    bag
}

fn directory_part(dir: &Path) -> PathBuf {
    let bag = clean_bag(dir);
    let last = part_paths(&bag).pop().unwrap();
    std::fs::remove_file(&last).unwrap();
    std::fs::create_dir(&last).unwrap();
    bag
}

fn symlink_loop_part(dir: &Path) -> PathBuf {
    let bag = clean_bag(dir);
    let looped = bag.join("drive_9.mcap");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    bag
}

fn dropped_bag(dir: &Path) -> PathBuf {
    let bag = dir.join("drive");
    small_bag(&bag, 2, 1234);
    bag
}

fn dropped_max_bag(dir: &Path) -> PathBuf {
    let bag = dropped_bag(dir);
    let mut m = bag::Metadata::load(&bag.join("metadata.yaml")).unwrap();
    if let Some(r) = m.redline.as_mut() {
        r.dropped_messages = Some(u64::MAX);
    }
    m.store_atomically(&bag).unwrap();
    bag
}

fn unparseable_index(dir: &Path) -> PathBuf {
    let bag = dropped_bag(dir);
    let index = bag.join("metadata.yaml");
    let text = std::fs::read_to_string(&index).unwrap();
    let damaged = text.replacen("version: ", "version: 8x", 1);
    assert_ne!(text, damaged, "the index has a version line");
    std::fs::write(&index, damaged).unwrap();
    bag
}

fn empty_directory(dir: &Path) -> PathBuf {
    let bag = dir.join("empty");
    std::fs::create_dir(&bag).unwrap();
    bag
}

// ---- what must not change ------------------------------------------------------------------

/// What a directory tree holds, without following symbolic links or opening anything but
/// regular files: per relative path, its type and, for files, length and a content hash
/// (for large, sparse files: length, modification time and the first MiB).
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let kind = meta.file_type();
            let what = if kind.is_symlink() {
                format!("link to {:?}", std::fs::read_link(&path).unwrap())
            } else if kind.is_dir() {
                stack.push(path.clone());
                "dir".to_string()
            } else if kind.is_file() {
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                let mut head = Vec::new();
                std::fs::File::open(&path)
                    .unwrap()
                    .take(1 << 20)
                    .read_to_end(&mut head)
                    .unwrap();
                head.hash(&mut hasher);
                if meta.len() <= 16 << 20 {
                    std::fs::read(&path).unwrap().hash(&mut hasher);
                } else {
                    meta.modified().unwrap().hash(&mut hasher);
                }
                format!("file {} {:x}", meta.len(), hasher.finish())
            } else {
                format!("other {kind:?}")
            };
            out.insert(path.strip_prefix(root).unwrap().to_path_buf(), what);
        }
    }
    out
}
