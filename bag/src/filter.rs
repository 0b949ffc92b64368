//! [`ReadFilter`]: which messages of a recording to read, by topic and log time.

use std::collections::BTreeSet;

/// Which messages to read.
#[derive(Debug, Clone, Default)]
pub struct ReadFilter {
    /// Only these topics (`None`: all).
    pub topics: Option<BTreeSet<String>>,
    /// Only log times at or after this.
    pub start_ns: Option<u64>,
    /// Only log times before this.
    pub end_ns: Option<u64>,
    /// This read is one of several whose time windows together cover all time, each read to
    /// its end or abandoned with the rest. A rosbag2 SQLite file whose row order is not known
    /// is then read in row order and checked, and a read that finds it out of order stops
    /// that part with an issue that [asks for the read to be repeated](crate::ReadIssue::asks_reread).
    pub tiled: bool,
}

impl ReadFilter {
    /// Every message.
    pub fn all() -> Self {
        Self::default()
    }

    /// Only these topics.
    pub fn topics<I: IntoIterator<Item = S>, S: Into<String>>(mut self, topics: I) -> Self {
        self.topics = Some(topics.into_iter().map(Into::into).collect());
        self
    }

    /// Log times at or after `start_ns`.
    pub fn start_ns(mut self, start_ns: u64) -> Self {
        self.start_ns = Some(start_ns);
        self
    }

    /// Log times before `end_ns`.
    pub fn end_ns(mut self, end_ns: u64) -> Self {
        self.end_ns = Some(end_ns);
        self
    }

    /// One of several reads whose windows cover all time (see [`ReadFilter::tiled`]).
    pub fn tiled(mut self) -> Self {
        self.tiled = true;
        self
    }

    pub(crate) fn includes_time(&self, t: u64) -> bool {
        self.start_ns.is_none_or(|s| t >= s) && self.end_ns.is_none_or(|e| t < e)
    }
}
