//! The bag directory's `metadata.yaml` checked against what verify found in the parts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::report::{BagReport, Finding, Severity};
use crate::metadata::{METADATA_FILE, Metadata, PartState};

fn finding(severity: Severity, record: &'static str, expected: String, found: String) -> Finding {
    Finding {
        severity,
        part: METADATA_FILE.to_owned(),
        offset: 0,
        offset_in_chunk: None,
        record,
        expected,
        found,
    }
}

/// Adds findings where `dir/metadata.yaml` disagrees with the verified parts: files listed but
/// absent or present but unlisted, per-part and total counts, time ranges, per-topic counts, and
/// part states. Does nothing when the directory has no index.
pub(crate) fn check_index(dir: &Path, bag: &mut BagReport) {
    let index_path = dir.join(METADATA_FILE);
    if !index_path.exists() {
        return;
    }
    let metadata = match Metadata::load(&index_path) {
        Ok(m) => m,
        Err(e) => {
            bag.findings.push(finding(
                Severity::Error,
                "index",
                "a parseable rosbag2 metadata.yaml".into(),
                e.detail(),
            ));
            return;
        }
    };
    let info = &metadata.rosbag2_bagfile_information;
    let verified: BTreeMap<&str, &super::Report> =
        bag.parts.iter().map(|p| (p.part.as_str(), p)).collect();
    let mut listed: BTreeSet<&str> = info
        .relative_file_paths
        .iter()
        .map(String::as_str)
        .collect();
    listed.extend(info.files.iter().map(|f| f.path.as_str()));
    let mut findings = Vec::new();

    for name in &listed {
        if verified.contains_key(name) {
            continue;
        }
        if !dir.join(name).exists() {
            findings.push(finding(
                Severity::Error,
                "relative_file_paths",
                format!("part {name} on disk"),
                "no such file".into(),
            ));
        }
    }
    for name in verified.keys() {
        if !listed.contains(name) {
            findings.push(finding(
                Severity::Warning,
                "relative_file_paths",
                format!("every part on disk listed (including {name})"),
                format!("{name} is not listed"),
            ));
        }
    }

    let states: BTreeMap<&str, PartState> = metadata
        .redline
        .iter()
        .flat_map(|r| r.parts.iter())
        .map(|p| (p.path.as_str(), p.state))
        .collect();
    for file in &info.files {
        let Some(report) = verified.get(file.path.as_str()) else {
            continue;
        };
        let state = states.get(file.path.as_str()).copied();
        let complete_claimed = state.is_none_or(|s| s == PartState::Complete);
        if complete_claimed && !report.finished {
            findings.push(finding(
                Severity::Error,
                "files.state",
                format!("{} complete, as the index says", file.path),
                "a part that does not end cleanly (torn)".into(),
            ));
        }
        if !complete_claimed && report.finished {
            findings.push(finding(
                Severity::Warning,
                "files.state",
                format!(
                    "{} {:?}, as the index says",
                    file.path,
                    state.unwrap_or_default()
                ),
                "a complete part (run `bag reindex`)".into(),
            ));
        }
        // Counts of parts the index marks open or torn are what was known when it was written.
        let severity = if complete_claimed {
            Severity::Error
        } else {
            Severity::Warning
        };
        if file.message_count != report.message_count {
            findings.push(finding(
                severity,
                "files.message_count",
                format!("{}: {} messages", file.path, file.message_count),
                format!("{} messages", report.message_count),
            ));
        }
        if let Some(range) = report.log_time_range_ns {
            let start = file.starting_time.nanoseconds_since_epoch;
            let end = start.saturating_add(file.duration.nanoseconds);
            if (start, end) != (range.start_ns, range.end_ns) && file.message_count > 0 {
                findings.push(finding(
                    severity,
                    "files.starting_time",
                    format!("{}: log times {start}..{end}", file.path),
                    format!("{}..{}", range.start_ns, range.end_ns),
                ));
            }
        }
    }

    // Loss the recorder counted is loss, however sound the bytes are: verify says so.
    if let Some(dropped) = metadata
        .redline
        .as_ref()
        .and_then(|r| r.dropped_messages)
        .filter(|d| *d > 0)
    {
        findings.push(finding(
            Severity::Error,
            "dropped_messages",
            "no messages dropped before they reached the recording".into(),
            format!("{dropped} dropped, as the recorder counted them"),
        ));
    }

    // Loss an earlier tool recorded (a torn tail cut by reindex, a refused part name, ...) is
    // loss too, though the bytes left are sound.
    for loss in metadata.redline.iter().flat_map(|r| &r.loss) {
        findings.push(finding(
            Severity::Error,
            "redline.loss",
            "no loss recorded".into(),
            loss.to_string(),
        ));
    }
    for refused in &metadata.refused_part_names {
        findings.push(finding(
            Severity::Error,
            refused.field,
            "part names inside the bag directory".into(),
            refused.to_string(),
        ));
    }

    let total: u64 = bag.parts.iter().map(|p| p.message_count).sum();
    let all_complete = bag.parts.iter().all(|p| p.finished);
    if info.message_count != total && all_complete {
        findings.push(finding(
            Severity::Error,
            "message_count",
            format!("{} messages in all parts", info.message_count),
            format!("{total}"),
        ));
    }
    if all_complete {
        let mut per_topic: BTreeMap<String, u64> = BTreeMap::new();
        for part in &bag.parts {
            for t in part.topics() {
                *per_topic.entry(t.topic).or_insert(0) += t.message_count;
            }
        }
        let mut declared: BTreeMap<&str, u64> = BTreeMap::new();
        for t in &info.topics_with_message_count {
            *declared.entry(t.topic_metadata.name.as_str()).or_insert(0) += t.message_count;
        }
        for (topic, count) in &declared {
            let found = per_topic.get(*topic).copied().unwrap_or(0);
            if *count != found {
                findings.push(finding(
                    Severity::Error,
                    "topics_with_message_count",
                    format!("{topic}: {count} messages"),
                    format!("{found}"),
                ));
            }
        }
        for (topic, found) in &per_topic {
            if !declared.contains_key(topic.as_str()) {
                findings.push(finding(
                    Severity::Error,
                    "topics_with_message_count",
                    format!("topic {topic} listed"),
                    format!("{found} messages on an unlisted topic"),
                ));
            }
        }
    }
    bag.findings.extend(findings);
}
