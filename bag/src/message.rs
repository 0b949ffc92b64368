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

/// A problem met while reading messages: a part stops early; the rest still reads.
#[derive(Debug, Clone)]
pub struct ReadIssue {
    /// The part's name.
    pub part: String,
    /// What happened, with its causes (shared, so that issues can be cloned).
    pub error: Arc<BagError>,
}

impl std::fmt::Display for ReadIssue {
    /// The error and its causes; the error names the part's path.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.error.detail())
    }
}
