//! `bag reindex`: rebuild the index and make torn parts whole.

use std::path::Path;

use anyhow::Context;

use super::Outcome;

pub fn run(path: &Path) -> anyhow::Result<Outcome> {
    let report = bag::reindex::reindex(path).with_context(|| format!("reindexing {path:?}"))?;
    let info = &report.metadata.rosbag2_bagfile_information;
    println!(
        "rebuilt {}: {} parts, {} messages",
        path.join(bag::metadata::METADATA_FILE).display(),
        info.files.len(),
        info.message_count
    );
    for (part, kept, backup) in &report.repaired {
        println!(
            "repaired torn part {part}: {kept} messages kept in a complete MCAP file; the original is kept as {}",
            backup.display()
        );
    }
    for (part, why) in &report.skipped {
        eprintln!("warning: {part} left out of the index: {why}");
    }
    if report.kept_from_previous_index {
        if let Some(r) = &report.metadata.redline {
            println!(
                "kept from the previous index: {} dropped, {} unstamped, {} advertised but never published",
                r.dropped_messages,
                r.unstamped_messages,
                r.advertised_never_published.len()
            );
        }
    } else {
        eprintln!(
            "warning: there was no readable index, so dropped and unstamped counts and topics \
             advertised but never published cannot be recovered: the new index says 0 and none, \
             which may understate what was lost."
        );
    }
    let lossy = !report.skipped.is_empty()
        || !report.repaired.is_empty()
        || !report.kept_from_previous_index
        || report
            .metadata
            .redline
            .as_ref()
            .is_some_and(|r| r.dropped_messages > 0);
    Ok(if lossy {
        Outcome::Damaged
    } else {
        Outcome::Clean
    })
}
