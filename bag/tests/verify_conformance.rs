//! Every file of foxglove's MCAP conformance suite verifies clean, and verify counts the messages
//! the suite's expected output lists.

use std::path::{Path, PathBuf};

mod common;
use common::{files_named, oracle_dir};

const EXPECTED_FILES: usize = 416;

fn conformance_files() -> Option<Vec<PathBuf>> {
    let root = oracle_dir("foxglove-mcap/conformance/data")?;
    Some(files_named(&root, &|p| {
        p.extension().is_some_and(|e| e == "mcap")
    }))
}

/// Messages in the streaming reader's expected output (`records` with type "Message").
fn expected_message_count(mcap: &Path) -> usize {
    let json_path = mcap.with_extension("json");
    let Ok(text) = std::fs::read_to_string(&json_path) else {
        panic!("reading {json_path:?}");
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
        panic!("parsing {json_path:?}");
    };
    let Some(records) = json.get("records").and_then(|r| r.as_array()) else {
        panic!("{json_path:?} has no records array");
    };
    records
        .iter()
        .filter(|r| r.get("type").and_then(|t| t.as_str()) == Some("Message"))
        .count()
}

#[test]
fn every_conformance_file_verifies_clean_with_expected_message_count() {
    let Some(files) = conformance_files() else {
        return;
    };
    assert_eq!(files.len(), EXPECTED_FILES, "conformance file count");
    let mut failures = Vec::new();
    for path in &files {
        let report = match bag::verify::verify_file(path) {
            Ok(report) => report,
            Err(err) => {
                failures.push(format!("{path:?}: {err}"));
                continue;
            }
        };
        for finding in report.errors() {
            failures.push(finding.to_string());
        }
        let expected = expected_message_count(path) as u64;
        if report.message_count != expected {
            failures.push(format!(
                "{}: verify counted {} messages, the suite expects {expected}",
                report.part, report.message_count
            ));
        }
        if !report.finished {
            failures.push(format!("{}: not reported as finished", report.part));
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems in {} files:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// The per-topic view the metadata cross-check will use agrees with the message count.
#[test]
fn topics_add_up_on_conformance_files() {
    let Some(files) = conformance_files() else {
        return;
    };
    for path in &files {
        let Ok(report) = bag::verify::verify_file(path) else {
            panic!("verify {path:?}");
        };
        let per_topic: u64 = report.topics().iter().map(|t| t.message_count).sum();
        assert_eq!(per_topic, report.message_count, "{path:?}");
    }
}
