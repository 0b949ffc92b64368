//! `bag reindex`: rebuild the index and make torn parts whole.

use std::path::Path;

use anyhow::Context;
use bag::reindex::PreviousIndex;

use super::Outcome;

pub fn run(path: &Path) -> anyhow::Result<Outcome> {
    let report = match bag::reindex::reindex(path) {
        Ok(report) => report,
        // Not a mistake in the bag: reindex does not apply to it (exit 2, as for verify).
        Err(e @ bag::BagError::ForeignStorage { .. }) => {
            return Err(anyhow::Error::new(super::UsageError(e.to_string())));
        }
        Err(e) => return Err(e).with_context(|| format!("reindexing {path:?}")),
    };
    let info = &report.metadata.rosbag2_bagfile_information;
    outln!(
        "rebuilt {}: {} parts, {} messages",
        path.join(bag::metadata::METADATA_FILE).display(),
        info.files.len(),
        info.message_count
    );
    if let Some(backup) = &report.index_backup {
        outln!("the previous index is kept as {}", backup.display());
    }
    for (part, kept, backup) in &report.repaired {
        outln!(
            "repaired torn part {part}: {kept} messages kept in a complete MCAP file; the original is kept as {}",
            backup.display()
        );
    }
    for (part, why) in &report.skipped {
        eprintln!("warning: {part} left out of the index: {why}");
    }
    let redline = report.metadata.redline.as_ref();
    let count = |c: Option<u64>| c.map_or_else(|| "unknown".to_string(), |c| c.to_string());
    let dropped = count(redline.and_then(|r| r.dropped_messages));
    let unstamped = count(redline.and_then(|r| r.unstamped_messages));
    let advertised = redline.map_or(0, |r| r.advertised_never_published.len());
    let damaged_index = matches!(report.previous_index, PreviousIndex::Damaged { .. });
    match &report.previous_index {
        PreviousIndex::Redline => outln!(
            "kept from the previous index: {dropped} dropped, {unstamped} unstamped, \
             {advertised} advertised but never published"
        ),
        PreviousIndex::Damaged {
            error,
            salvaged: true,
        } => eprintln!(
            "warning: the previous index was damaged ({error}); salvaged from it: {dropped} \
             dropped, {unstamped} unstamped, {advertised} advertised but never published"
        ),
        PreviousIndex::Damaged {
            error,
            salvaged: false,
        } => eprintln!(
            "warning: the previous index was damaged ({error}) and none of its drop and \
             unstamped counts could be read: the new index says unknown"
        ),
        PreviousIndex::Foreign => outln!(
            "the previous index was written by another tool and has no drop or unstamped \
             counts: the new index says unknown"
        ),
        PreviousIndex::Absent => eprintln!(
            "warning: there was no index, so dropped and unstamped counts and topics advertised \
             but never published cannot be recovered: the new index says unknown and none."
        ),
    }
    for loss in redline.map(|r| r.loss.as_slice()).unwrap_or_default() {
        eprintln!("warning: {loss}");
    }
    let lossy = !report.skipped.is_empty()
        || redline.is_some_and(|r| !r.loss.is_empty())
        || !report.repaired.is_empty()
        || damaged_index
        || report.previous_index == PreviousIndex::Absent
        || redline.is_some_and(|r| r.dropped_messages.is_some_and(|d| d > 0));
    Ok(if lossy {
        Outcome::Damaged
    } else {
        Outcome::Clean
    })
}
