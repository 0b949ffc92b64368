//! What `bag verify` checks in recordings that are not MCAP, through the reader's own ROS 1 and
//! SQLite code (the independent parser is for MCAP, the format we write):
//!
//! - a ROS 1 `.bag`: its index against its data ([`crate::ros1_bag::check_bag`]): an index
//!   section that describes the file, every chunk readable, each chunk info's counts and times
//!   those of its chunk, each index entry pointing at its message;
//! - a rosbag2 `.db3` part: SQLite's own `quick_check` of the file (its pages and b-trees), and
//!   the rosbag2 tables readable; `metadata.yaml` is then checked against the parts' counts,
//!   times and topics as for MCAP parts ([`super::index`]).
//!
//! Each becomes a [`Report`] like an MCAP part's, so the command prints and exits alike.

use std::collections::BTreeMap;
use std::path::Path;

use super::report::{ChannelSummary, Finding, Report, Severity, TimeRange};

/// What verify says it checked in a ROS 1 bag, for the report.
pub(crate) const ROS1_CHECKED: &str = "a ROS 1 bag: its index section against its chunks \
     (every chunk read; chunk infos and index entries against the messages)";

/// What verify says it checked in a rosbag2 SQLite directory, for the report.
pub(crate) const SQLITE_CHECKED: &str = "a rosbag2 SQLite bag: each .db3 file's pages \
     (SQLite quick_check) and tables, and metadata.yaml against the files' messages, times \
     and topics";

fn empty_report(part: &str, size_bytes: u64) -> Report {
    Report {
        part: part.to_owned(),
        size_bytes,
        findings: Vec::new(),
        error_count: 0,
        warning_count: 0,
        unlisted_findings: 0,
        finished: true,
        profile: None,
        library: None,
        message_count: 0,
        schema_count: 0,
        channel_count: 0,
        chunk_count: 0,
        attachment_count: 0,
        metadata_count: 0,
        log_time_range_ns: None,
        channels: Vec::new(),
        damaged_chunks: Vec::new(),
    }
}

fn error(report: &mut Report, offset: u64, record: &'static str, expected: String, found: String) {
    report.error_count += 1;
    report.findings.push(Finding {
        severity: Severity::Error,
        part: report.part.clone(),
        offset,
        offset_in_chunk: None,
        record,
        expected,
        found,
    });
}

fn range(r: Option<(u64, u64)>) -> Option<TimeRange> {
    r.map(|(start_ns, end_ns)| TimeRange { start_ns, end_ns })
}

/// The report on the ROS 1 bag at `path`.
pub(crate) fn ros1_report(path: &Path, part: &str, size_bytes: u64) -> Report {
    let mut report = empty_report(part, size_bytes);
    let check = match crate::ros1_bag::check_bag(path, part) {
        Ok(check) => check,
        Err(e) => {
            error(
                &mut report,
                0,
                "file",
                "a readable ROS 1 bag".into(),
                e.to_string(),
            );
            return report;
        }
    };
    for p in &check.problems {
        report.error_count += 1;
        report.findings.push(Finding {
            severity: Severity::Error,
            part: part.to_owned(),
            offset: p.offset,
            offset_in_chunk: p.offset_in_chunk,
            record: p.record,
            expected: p.expected.clone(),
            found: p.found.clone(),
        });
    }
    if let Some(torn) = &check.torn {
        report.finished = false;
        error(
            &mut report,
            torn.offset,
            "file",
            "whole records to the end of the file".into(),
            torn.what.clone(),
        );
    }
    report.message_count = check.messages;
    report.chunk_count = check.chunks;
    report.damaged_chunks = check.damaged;
    for (id, c) in &check.connections {
        let Ok(id) = u16::try_from(*id) else { continue };
        report.channels.push(ChannelSummary {
            id,
            topic: c.topic.clone(),
            message_encoding: "ros1".into(),
            schema_id: 0,
            schema_name: Some(c.type_name.clone()),
            message_count: c.messages,
            log_time_range_ns: range(c.times),
        });
        if let Some(t) = range(c.times) {
            TimeRange::include(&mut report.log_time_range_ns, t.start_ns);
            TimeRange::include(&mut report.log_time_range_ns, t.end_ns);
        }
    }
    report.channel_count = report.channels.len() as u64;
    report
}

/// The report on the rosbag2 SQLite file at `path`.
pub(crate) fn sqlite_report(path: &Path, part: &str, size_bytes: u64) -> Report {
    let mut report = empty_report(part, size_bytes);
    if let Err(problem) = crate::sqlite_part::quick_check(path) {
        error(
            &mut report,
            0,
            "file",
            "a SQLite database whose pages check out (quick_check)".into(),
            problem,
        );
        return report;
    }
    let scan = match crate::sqlite_part::SqliteScan::scan(path, true) {
        Ok(scan) => scan,
        Err(e) => {
            error(
                &mut report,
                0,
                "file",
                "rosbag2's tables, readable".into(),
                e.to_string(),
            );
            return report;
        }
    };
    report.message_count = scan.message_count;
    report.log_time_range_ns = range(scan.time_range_ns);
    let mut per_topic: BTreeMap<u16, u64> = BTreeMap::new();
    for (id, count) in scan.channel_counts.iter().flatten() {
        per_topic.insert(*id, *count);
    }
    for (id, spec) in &scan.channels {
        report.channels.push(ChannelSummary {
            id: *id,
            topic: spec.topic.clone(),
            message_encoding: spec.message_encoding.clone(),
            schema_id: 0,
            schema_name: spec.schema.as_ref().map(|s| s.name.clone()),
            message_count: per_topic.get(id).copied().unwrap_or(0),
            log_time_range_ns: None,
        });
    }
    report.channel_count = report.channels.len() as u64;
    report
}
