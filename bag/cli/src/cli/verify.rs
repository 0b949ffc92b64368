//! `bag verify`: every MCAP part checked by our own MCAP parser (a ROS 1 bag: its index against
//! its chunks; a rosbag2 SQLite bag: its files and metadata.yaml), one finding per line.
//!
//! The report (findings, each part's counts, the verdict) is the command's output, on stdout;
//! when the recording is not valid the verdict is also the one-line reason on stderr.

use std::path::Path;

use anyhow::Context;

use super::Outcome;

pub fn run(path: &Path, as_json: bool) -> anyhow::Result<Outcome> {
    let report = bag::verify::verify_path(path).with_context(|| format!("verifying {path:?}"))?;
    if as_json {
        outln!(
            "{}",
            serde_json::to_string(&report).context("encoding the report")?
        );
    } else {
        if let Some(checked) = &report.checked {
            outln!("checked: {checked}");
        }
        for finding in report.findings() {
            outln!("{finding}");
        }
        for part in &report.parts {
            // What each damaged chunk costs, in the words (and numbers) `bag cat` uses.
            for chunk in &part.damaged_chunks {
                outln!("{chunk}");
            }
            let unlisted = if part.unlisted_findings > 0 {
                format!(" ({} more findings not listed)", part.unlisted_findings)
            } else {
                String::new()
            };
            // A SQLite file has no chunks to count.
            let chunks = if part.part.ends_with(".db3") {
                String::new()
            } else {
                format!(" {} chunks,", part.chunk_count)
            };
            outln!(
                "{}: {} messages,{chunks} {} errors, {} warnings{unlisted}",
                part.part,
                part.message_count,
                part.error_count,
                part.warning_count
            );
        }
        if report.is_valid() {
            outln!("{}: valid", report.path);
        } else {
            // The first error as the reason, on the same line: the one line a script keeps.
            let first = report
                .findings()
                .find(|f| f.severity == bag::verify::Severity::Error)
                .map(|f| format!("; first: {f}"))
                .unwrap_or_default();
            let verdict = format!(
                "{}: {} errors, {} warnings{first}",
                report.path,
                report.error_count(),
                report.warning_count()
            );
            outln!("{verdict}");
            eprintln!("{verdict}");
        }
    }
    Ok(if report.is_valid() {
        Outcome::Clean
    } else {
        Outcome::Damaged
    })
}
