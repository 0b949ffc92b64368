//! What reading a recording yields: messages, borrowed ([`MessageRef`]) or owned ([`Message`]),
//! and the [`ReadIssue`]s met on the way.

use std::sync::Arc;

use crate::channel::ChannelInfo;
use crate::error::BagError;

/// A message borrowed from the reader.
#[derive(Debug, Clone, Copy)]
pub struct MessageRef<'a> {
    /// The channel it was published on.
    pub channel: &'a ChannelInfo,
    /// `Message.sequence`.
    pub sequence: u32,
    /// When the recorder received it, ns since the epoch.
    pub log_time_ns: u64,
    /// When the publisher stamped it (log time if it came unstamped).
    pub publish_time_ns: u64,
    /// The payload, byte for byte.
    pub data: &'a [u8],
    /// Index of the part it came from in [`BagReader::parts`](crate::BagReader::parts).
    pub part: usize,
}

/// An owned message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Index in [`BagReader::channels`](crate::BagReader::channels).
    pub channel: usize,
    /// `Message.sequence`.
    pub sequence: u32,
    /// Log time, ns.
    pub log_time_ns: u64,
    /// Publish time, ns.
    pub publish_time_ns: u64,
    /// The payload.
    pub data: Vec<u8>,
}

impl MessageRef<'_> {
    /// Copies the message out of the reader.
    pub fn to_owned(&self) -> Message {
        Message {
            channel: self.channel.id,
            sequence: self.sequence,
            log_time_ns: self.log_time_ns,
            publish_time_ns: self.publish_time_ns,
            data: self.data.to_vec(),
        }
    }
}

/// A problem met while reading messages: a part stops early, or one of its chunks is skipped;
/// the rest still reads.
#[derive(Debug, Clone)]
pub struct ReadIssue {
    /// The part's name.
    pub part: String,
    /// What happened, with its causes (shared, so that issues can be cloned).
    pub error: Arc<BagError>,
    /// When reading went on past the damage: the chunk skipped (`None`: the part stopped here).
    pub skipped: Option<ChunkDamage>,
}

impl ReadIssue {
    /// Whether the read that met this issue read a rosbag2 SQLite file in row order, on trust,
    /// and found it out of time order: what it read is not to be used, and reading again (now
    /// in time order) gives every message.
    pub fn asks_reread(&self) -> bool {
        matches!(
            &*self.error,
            BagError::Sqlite { source, .. }
                if matches!(**source, crate::sqlite_part::SqliteError::NotInIdOrder { .. })
        )
    }
}

impl std::fmt::Display for ReadIssue {
    /// For a skipped chunk, where it is and what it cost, then the error and its causes; the
    /// error names the part's path.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(chunk) = &self.skipped {
            write!(f, "{chunk}: ")?;
        }
        f.write_str(&self.error.detail())
    }
}

/// A damaged chunk that readers skip (its CRC does not match, it does not decompress, its
/// records do not parse): where it is and how many messages it cost. Every tool reports a
/// damaged chunk with these same numbers: the reader (and so `bag cat`, `bag play`, the scope's
/// loader) as a [`ReadIssue`], `bag verify` in its report.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChunkDamage {
    /// The part's name.
    pub part: String,
    /// Byte offset of the chunk record in the part.
    pub offset: u64,
    /// Byte offset just past the chunk record.
    pub end: u64,
    /// Messages the chunk held, as its MessageIndex records list them (which lie outside the
    /// chunk, so survive its damage); `None` when the file has no MessageIndex records for it:
    /// unknown, not zero.
    pub lost_messages: Option<u64>,
}

impl std::fmt::Display for ChunkDamage {
    /// `part: chunk at bytes A..B skipped, N messages lost`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: chunk at bytes {}..{} skipped, ",
            self.part, self.offset, self.end
        )?;
        match self.lost_messages {
            Some(n) => write!(f, "{n} messages lost"),
            None => f.write_str("an unknown number of messages lost (no message index)"),
        }
    }
}
