//! What verification found and counted, per part and per bag.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use crate::message::ChunkDamage;

/// How bad a [`Finding`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The file breaks the MCAP spec or contradicts itself; a reader may lose or invent data.
    Error,
    /// Legal but suspicious (for example log-time disorder inside a chunk).
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// One problem, located by part and byte offset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Error or warning.
    pub severity: Severity,
    /// The part (file name) the finding is about.
    pub part: String,
    /// Byte offset in the file of the record concerned (for records inside a chunk: of the chunk).
    pub offset: u64,
    /// For records inside a chunk: offset within the chunk's decompressed records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset_in_chunk: Option<u64>,
    /// Record type (`"Chunk"`, `"Statistics"`, ...), or `"file"` / `"bag"` for whole-file issues.
    pub record: &'static str,
    /// What the spec, or another record of the file, says should be there.
    pub expected: String,
    /// What is there.
    pub found: String,
}

impl fmt::Display for Finding {
    /// One line: `part:offset: severity: Record: expected ..., found ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.part, self.offset)?;
        if let Some(inner) = self.offset_in_chunk {
            write!(f, " (chunk +{inner})")?;
        }
        write!(
            f,
            ": {}: {}: expected {}, found {}",
            self.severity, self.record, self.expected, self.found
        )
    }
}

/// An inclusive log-time range in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TimeRange {
    /// Earliest log time.
    pub start_ns: u64,
    /// Latest log time.
    pub end_ns: u64,
}

impl TimeRange {
    pub(crate) fn include(range: &mut Option<TimeRange>, time_ns: u64) {
        match range {
            Some(r) => {
                r.start_ns = r.start_ns.min(time_ns);
                r.end_ns = r.end_ns.max(time_ns);
            }
            None => {
                *range = Some(TimeRange {
                    start_ns: time_ns,
                    end_ns: time_ns,
                })
            }
        }
    }

    fn merge(range: &mut Option<TimeRange>, other: Option<TimeRange>) {
        if let Some(other) = other {
            TimeRange::include(range, other.start_ns);
            TimeRange::include(range, other.end_ns);
        }
    }
}

/// A channel as defined in the data section, with what verification counted on it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChannelSummary {
    /// Channel id.
    pub id: u16,
    /// Topic.
    pub topic: String,
    /// Channel message encoding.
    pub message_encoding: String,
    /// Schema id (0: no schema).
    pub schema_id: u16,
    /// Name of that schema, when it was defined.
    pub schema_name: Option<String>,
    /// Message records on this channel.
    pub message_count: u64,
    /// Log-time range of those messages.
    pub log_time_range_ns: Option<TimeRange>,
}

/// Messages per topic (channels sharing a topic are merged), for cross-checking `metadata.yaml`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TopicSummary {
    /// Topic.
    pub topic: String,
    /// Message records on the topic.
    pub message_count: u64,
    /// Log-time range of those messages.
    pub log_time_range_ns: Option<TimeRange>,
}

/// The verdict on one MCAP part, with counts taken from the records themselves (not the summary).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Part name the findings use.
    pub part: String,
    /// File size.
    pub size_bytes: u64,
    /// Findings in file order, at most [`VerifyOptions::max_listed_findings`](super::VerifyOptions::max_listed_findings).
    pub findings: Vec<Finding>,
    /// Errors found, listed or not.
    pub error_count: u64,
    /// Warnings found, listed or not.
    pub warning_count: u64,
    /// Findings counted but not kept in `findings`.
    pub unlisted_findings: u64,
    /// The file ends with a Footer and the magic (false for a part whose writer died).
    pub finished: bool,
    /// Header profile (`None` without a Header).
    pub profile: Option<String>,
    /// Header library (`None` without a Header).
    pub library: Option<String>,
    /// Message records in the data section (inside and outside chunks).
    pub message_count: u64,
    /// Distinct non-zero schema ids in the data section.
    pub schema_count: u64,
    /// Distinct channel ids in the data section.
    pub channel_count: u64,
    /// Chunk records.
    pub chunk_count: u64,
    /// Attachment records.
    pub attachment_count: u64,
    /// Metadata records.
    pub metadata_count: u64,
    /// Log-time range of all messages.
    pub log_time_range_ns: Option<TimeRange>,
    /// Channels by id.
    pub channels: Vec<ChannelSummary>,
    /// Chunks whose contents do not check out, which readers skip, with the messages each
    /// costs: the same numbers the reader reports (see [`ChunkDamage`]).
    pub damaged_chunks: Vec<ChunkDamage>,
}

impl Report {
    /// No errors (warnings allowed).
    pub fn is_valid(&self) -> bool {
        self.error_count == 0
    }

    /// Listed findings of severity Error.
    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
    }

    /// Listed findings of severity Warning.
    pub fn warnings(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
    }

    /// Message counts and time ranges per topic, sorted by topic.
    pub fn topics(&self) -> Vec<TopicSummary> {
        let mut topics: BTreeMap<&str, TopicSummary> = BTreeMap::new();
        for channel in &self.channels {
            let topic = topics
                .entry(channel.topic.as_str())
                .or_insert_with(|| TopicSummary {
                    topic: channel.topic.clone(),
                    message_count: 0,
                    log_time_range_ns: None,
                });
            topic.message_count += channel.message_count;
            TimeRange::merge(&mut topic.log_time_range_ns, channel.log_time_range_ns);
        }
        topics.into_values().collect()
    }
}

/// The verdict on a bag directory (or a single file): one [`Report`] per part plus bag-level findings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BagReport {
    /// The path that was verified.
    pub path: String,
    /// For a recording that is not MCAP (a ROS 1 bag, rosbag2 SQLite): what was checked there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checked: Option<String>,
    /// One report per part (`*.mcap`, then `*.db3`; or the one file), in part order.
    pub parts: Vec<Report>,
    /// Findings about the bag as a whole (no parts, unreadable part, metadata.yaml mismatches).
    pub findings: Vec<Finding>,
}

impl BagReport {
    /// No errors in any part nor at bag level.
    pub fn is_valid(&self) -> bool {
        self.error_count() == 0
    }

    /// Errors in all parts plus bag-level errors.
    pub fn error_count(&self) -> u64 {
        let bag = self
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count() as u64;
        bag + self.parts.iter().map(|p| p.error_count).sum::<u64>()
    }

    /// Warnings in all parts plus bag-level warnings.
    pub fn warning_count(&self) -> u64 {
        let bag = self
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count() as u64;
        bag + self.parts.iter().map(|p| p.warning_count).sum::<u64>()
    }

    /// Every listed finding: bag-level first, then each part's.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .chain(self.parts.iter().flat_map(|p| p.findings.iter()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finding_is_one_line() {
        let finding = Finding {
            severity: Severity::Error,
            part: "run_0.mcap".to_owned(),
            offset: 1234,
            offset_in_chunk: Some(56),
            record: "Message",
            expected: "channel 3 defined before use".to_owned(),
            found: "no such channel".to_owned(),
        };
        assert_eq!(
            finding.to_string(),
            "run_0.mcap:1234 (chunk +56): error: Message: expected channel 3 defined before use, found no such channel"
        );
    }
}
