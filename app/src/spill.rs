//! Spill to disk: what the capture ring evicts goes into a temporary bag instead of being lost,
//! so File > Save Recording still includes it and `dropped_messages` counts only what was truly
//! lost. The temporary bag is removed when the capture ends.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use bag::live::RECORD_COMPRESSION_LEVEL;
use bag::{BagReader, BagWriter, ChannelId, ChannelSpec, ReadFilter, WriteOptions};

use crate::capture::Stored;

/// Channel metadata key marking spilled messages that came without a timestamp (their MCAP
/// publish time is their log time, which would otherwise read as stamped).
const UNSTAMPED_KEY: &str = "redline/spill-unstamped";

/// The temporary bag evicted messages go to.
pub struct Spill {
    dir: PathBuf,
    writer: Option<BagWriter>,
    channels: HashMap<(u32, bool), ChannelId>,
    written: u64,
    failed: u64,
    error: Option<String>,
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
    /// A new temporary bag under the system's temp directory.
    pub fn create() -> Result<Self, String> {
        let root = std::env::temp_dir().join("redline-scope-spill");
        std::fs::create_dir_all(&root).map_err(|e| format!("creating {}: {e}", root.display()))?;
        let stamp = bag::live::now_ns();
        let dir = root.join(format!("capture-{}-{stamp}", std::process::id()));
        let writer = BagWriter::create(
            &dir,
            WriteOptions::new().compression_level(RECORD_COMPRESSION_LEVEL),
        )
        .map_err(|e| format!("creating the spill bag {}: {e}", dir.display()))?;
        Ok(Spill {
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
                self.error.get_or_insert_with(|| e.to_string());
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
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Hands everything written so far to the OS, so a reader sees it.
    pub fn flush(&mut self) -> Result<(), String> {
        match self.writer.as_mut() {
            Some(w) => w
                .flush()
                .map_err(|e| format!("flushing the spill bag: {e}")),
            None => Ok(()),
        }
    }
}

/// Copies into `out` the spilled messages whose positions in spill order (0 is the first
/// spilled) fall in `ranges`, which are sorted and disjoint; returns how many it found. Read
/// back through [`BagReader`], like any other bag.
pub fn copy_spilled(dir: &Path, ranges: &[Range<u64>], out: &mut BagWriter) -> Result<u64, String> {
    let Some(last) = ranges.last().map(|r| r.end) else {
        return Ok(0);
    };
    if last == 0 {
        return Ok(0);
    }
    let reader = BagReader::open(dir).map_err(|e| format!("reading the spill bag: {e}"))?;
    let mut channels: HashMap<usize, ChannelId> = HashMap::new();
    let mut cursor = reader
        .messages(&ReadFilter::all())
        .map_err(|e| format!("reading the spill bag: {e}"))?;
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
            .map_err(|e| format!("copying spilled messages: {e}"))?;
        copied += 1;
    }
    Ok(copied)
}

impl Drop for Spill {
    fn drop(&mut self) {
        drop(self.writer.take());
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
