//! Spill to disk: what the capture ring evicts goes into a temporary bag instead of being lost,
//! so File > Save Recording still includes it and `dropped_messages` counts only what was truly
//! lost. The temporary bag is removed when the capture ends.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bag::live::RECORD_COMPRESSION_LEVEL;
use bag::{BagReader, BagWriter, ChannelId, ChannelSpec, ReadFilter, WriteOptions};

use crate::error::Error;
use crate::live::capture::Stored;

/// Channel metadata key marking spilled messages that came without a timestamp (their MCAP
/// publish time is their log time, which would otherwise read as stamped).
const UNSTAMPED_KEY: &str = "redline/spill-unstamped";

/// The temporary bag evicted messages go to.
pub struct Spill {
    /// This capture's private directory (`capture-<pid>-<random>`), removed with everything in it.
    home: PathBuf,
    /// The bag inside it.
    dir: PathBuf,
    writer: Option<BagWriter>,
    channels: HashMap<(u32, bool), ChannelId>,
    written: u64,
    failed: u64,
    error: Option<Arc<Error>>,
}

impl std::fmt::Debug for Spill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spill")
            .field("dir", &self.dir)
            .field("written", &self.written)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl Spill {
    /// A new temporary bag in this user's private spill directory ([`spill_root`]), named by
    /// this process and a fresh random suffix, so no other user can predict or plant it.
    pub fn create() -> Result<Self, Error> {
        let root = spill_root()?;
        remove_orphans(&root);
        let home = tempfile::Builder::new()
            .prefix(&format!("capture-{}-", std::process::id()))
            .rand_bytes(8)
            .tempdir_in(&root)
            .map_err(|source| Error::Io {
                what: "creating",
                path: root.clone(),
                source,
            })?
            // Removed by `Drop` below, after the writer has closed.
            .keep();
        // `BagWriter::create` wants to create the bag directory itself: it goes inside.
        let dir = home.join("spill");
        let writer = BagWriter::create(
            &dir,
            WriteOptions::new().compression_level(RECORD_COMPRESSION_LEVEL),
        )
        .map_err(|source| Error::Spill {
            what: "creating",
            source,
        })?;
        Ok(Spill {
            home,
            dir,
            writer: Some(writer),
            channels: HashMap::new(),
            written: 0,
            failed: 0,
            error: None,
        })
    }

    /// Where it is.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes one evicted message of the topic recorded as `spec` (`None`: unknown topic,
    /// counted as failed).
    pub fn write(&mut self, spec: Option<&ChannelSpec>, m: Stored<'_>) {
        let (Some(writer), Some(spec)) = (self.writer.as_mut(), spec) else {
            self.failed += 1;
            return;
        };
        let unstamped = m.publish_time_ns.is_none();
        let id = *self
            .channels
            .entry((m.topic, unstamped))
            .or_insert_with(|| {
                let mut spec = spec.clone();
                if unstamped {
                    spec.metadata
                        .insert(UNSTAMPED_KEY.to_string(), "1".to_string());
                }
                writer.add_channel(spec)
            });
        match writer.write(id, m.log_time_ns, m.publish_time_ns, m.data) {
            Ok(()) => self.written += 1,
            Err(e) => {
                self.failed += 1;
                self.error.get_or_insert_with(|| {
                    Arc::new(Error::Spill {
                        what: "writing to",
                        source: e,
                    })
                });
            }
        }
    }

    /// Messages written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Messages that could not be written (lost).
    pub fn failed(&self) -> u64 {
        self.failed
    }

    /// The first write error.
    pub fn error(&self) -> Option<&Arc<Error>> {
        self.error.as_ref()
    }

    /// Hands everything written so far to the OS, so a reader sees it.
    pub fn flush(&mut self) -> Result<(), Error> {
        match self.writer.as_mut() {
            Some(w) => w.flush().map_err(|source| Error::Spill {
                what: "flushing",
                source,
            }),
            None => Ok(()),
        }
    }
}

/// Copies into `out` the spilled messages whose positions in spill order (0 is the first
/// spilled) fall in `ranges`, which are sorted and disjoint; returns how many it found. Read
/// back through [`BagReader`], like any other bag.
pub fn copy_spilled(dir: &Path, ranges: &[Range<u64>], out: &mut BagWriter) -> Result<u64, Error> {
    let Some(last) = ranges.last().map(|r| r.end) else {
        return Ok(0);
    };
    if last == 0 {
        return Ok(0);
    }
    let reading = |source| Error::Spill {
        what: "reading",
        source,
    };
    let reader = BagReader::open(dir).map_err(reading)?;
    let mut channels: HashMap<usize, ChannelId> = HashMap::new();
    let mut cursor = reader.messages(&ReadFilter::all()).map_err(reading)?;
    let (mut position, mut copied) = (0u64, 0u64);
    while position < last
        && let Some(m) = cursor.next_message()
    {
        let wanted = ranges.iter().any(|r| r.contains(&position));
        position += 1;
        if !wanted {
            continue;
        }
        let unstamped = m.channel.spec.metadata.contains_key(UNSTAMPED_KEY);
        let id = *channels.entry(m.channel.id).or_insert_with(|| {
            let mut spec = m.channel.spec.clone();
            spec.metadata.remove(UNSTAMPED_KEY);
            out.add_channel(spec)
        });
        let publish = (!unstamped).then_some(m.publish_time_ns);
        out.write(id, m.log_time_ns, publish, m.data)
            .map_err(|source| Error::Save {
                dir: out.dir().to_path_buf(),
                source,
            })?;
        copied += 1;
    }
    Ok(copied)
}

/// The directory spill bags go in: `$XDG_CACHE_HOME/redline-scope/spill` (or
/// `~/.cache/...`), which only this user can write to, or `redline-scope-spill-<uid>` in the
/// temp directory when there is no home. It is created private (0700); if it already exists it
/// must be a real directory (not a symlink), owned by this user and closed to others, or
/// nothing is written there: a shared, predictable path that another user could have planted
/// (a symlink to elsewhere) must not make us write or delete through it.
pub fn spill_root() -> Result<PathBuf, Error> {
    let uid = nix::unistd::getuid().as_raw();
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|home| home.join(".cache"))
        });
    let root = match cache {
        Some(cache) => {
            let parent = cache.join("redline-scope");
            std::fs::create_dir_all(&parent).map_err(|source| Error::Io {
                what: "creating",
                path: parent.clone(),
                source,
            })?;
            parent.join("spill")
        }
        None => std::env::temp_dir().join(format!("redline-scope-spill-{uid}")),
    };
    private_dir(&root, uid)?;
    Ok(root)
}

/// Creates `dir` with mode 0700, or checks that the one already there is a directory (not a
/// symlink) owned by `uid` with no access for group or others.
fn private_dir(dir: &Path, uid: u32) -> Result<(), Error> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let refuse = |why: &str| Error::Io {
        what: "using",
        path: dir.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::PermissionDenied, why.to_owned()),
    };
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(source) => {
            return Err(Error::Io {
                what: "creating",
                path: dir.to_path_buf(),
                source,
            });
        }
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|source| Error::Io {
        what: "checking",
        path: dir.to_path_buf(),
        source,
    })?;
    if !meta.file_type().is_dir() {
        return Err(refuse(
            "the spill directory is a symlink or not a directory; not following it",
        ));
    }
    if meta.uid() != uid {
        return Err(refuse("the spill directory belongs to another user"));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(refuse(
            "the spill directory is open to other users (expected mode 0700)",
        ));
    }
    Ok(())
}

/// Removes the spill bags under `root` left by processes that are gone: an app that quits
/// mid-capture exits before its worker removes its bag. Only real directories named
/// `capture-<pid>-...` are removed, never what a symlink points to. Only on Linux, where
/// `/proc` tells whether a process id is running; elsewhere they stay until removed by hand.
fn remove_orphans(root: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        // `DirEntry::file_type` does not follow symlinks.
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix("capture-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid
            && !Path::new("/proc").join(pid.to_string()).exists()
        {
            std::fs::remove_dir_all(entry.path()).ok();
        }
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        drop(self.writer.take());
        std::fs::remove_dir_all(&self.home).ok();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spill_bags_of_processes_that_are_gone_are_removed() {
        if !Path::new("/proc/self").exists() {
            eprintln!("skipped: no /proc on this system, orphans are not removed");
            return;
        }
        let root = tempfile::tempdir().expect("tempdir");
        // Above Linux's highest process id (2^22).
        let gone = root.path().join("capture-99999999-1");
        let ours = root
            .path()
            .join(format!("capture-{}-1", std::process::id()));
        let other = root.path().join("notes");
        for dir in [&gone, &ours, &other] {
            std::fs::create_dir_all(dir.join("bag")).expect("mkdir");
        }
        remove_orphans(root.path());
        assert!(!gone.exists(), "an orphan stayed");
        assert!(
            ours.exists() && other.exists(),
            "removed a live or foreign directory"
        );
    }

    #[test]
    fn a_planted_symlink_or_a_shared_directory_is_refused_as_the_spill_directory() {
        use std::os::unix::fs::PermissionsExt;
        let uid = nix::unistd::getuid().as_raw();
        let tmp = tempfile::tempdir().expect("tempdir");
        let target = tmp.path().join("victim");
        std::fs::create_dir(&target).expect("mkdir");
        std::fs::write(target.join("capture-99999999-1"), b"keep").expect("write");
        let planted = tmp.path().join("planted");
        std::os::unix::fs::symlink(&target, &planted).expect("symlink");
        let err = private_dir(&planted, uid).expect_err("a symlink is refused");
        assert!(err.report().contains("symlink"), "{}", err.report());

        let shared = tmp.path().join("shared");
        std::fs::create_dir(&shared).expect("mkdir");
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        assert!(
            private_dir(&shared, uid).is_err(),
            "a world-writable directory is refused"
        );

        let fresh = tmp.path().join("fresh");
        private_dir(&fresh, uid).expect("created");
        let mode = std::fs::metadata(&fresh)
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(
            target.join("capture-99999999-1").exists(),
            "nothing removed through the link"
        );
    }
}
