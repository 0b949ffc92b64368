//! `bag reindex`: rebuild `metadata.yaml` from the parts and make torn parts whole again.

use std::collections::HashMap;
use std::fs;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use crate::error::{BagError, Result};
use crate::format::{Compression, MessageHeader};
use crate::metadata::{
    BagfileInformation, Metadata, PartRecord, PartState, RedlineSection, TopicCounts, sync_dir,
};
use crate::part::{PartInfo, PartStatus};
use crate::part_writer::PartWriter;
use crate::reader::{BagReader, IndexState};
use crate::scan::{Definitions, FileOrderScanner, ScanItem};

/// What [`reindex`] did.
#[derive(Debug, Clone, Default)]
pub struct ReindexReport {
    /// Torn parts rewritten as complete MCAP files: (part, messages kept, backup of the original).
    pub repaired: Vec<(String, u64, PathBuf)>,
    /// Parts left out of the new index, with why (missing, garbage).
    pub skipped: Vec<(String, String)>,
    /// Whether an earlier index supplied the drop, unstamped and advertisement records.
    pub kept_from_previous_index: bool,
    /// The new index.
    pub metadata: Metadata,
}

/// Rebuilds `dir/metadata.yaml` from the parts on disk.
///
/// Keeps `dropped_messages`, `unstamped_messages` and `advertised_never_published` from an
/// existing index (resetting drops to zero would claim a lossy recording is complete), less the
/// advertised topics whose messages the parts hold. Each torn
/// part is rewritten beside itself as a complete MCAP with summary and indexes, re-read and
/// checked, then swapped in atomically; the original is kept as `NAME.mcap.torn`.
pub fn reindex(dir: &Path) -> Result<ReindexReport> {
    if !dir.is_dir() {
        return Err(BagError::NotARecording {
            path: dir.to_path_buf(),
            why: "reindex works on a bag directory".into(),
        });
    }
    let reader = BagReader::open(dir)?;
    let previous = match reader.index() {
        IndexState::Present(m) => Some(m.as_ref().clone()),
        _ => None,
    };
    let mut report = ReindexReport::default();
    // Names that lead outside the bag were never opened; the new index leaves them out.
    for refused in previous.iter().flat_map(|m| &m.refused_part_names) {
        report
            .skipped
            .push((refused.name.clone(), refused.to_string()));
    }
    let mut records = Vec::new();
    let mut topics = TopicCounts::default();

    for part in reader.parts() {
        match &part.status {
            PartStatus::Missing => {
                report.skipped.push((part.name.clone(), "missing".into()));
                continue;
            }
            PartStatus::Garbage { what } => {
                report
                    .skipped
                    .push((part.name.clone(), format!("garbage: {what}")));
                continue;
            }
            PartStatus::Torn { .. } => {
                let (kept, backup) = repair_torn_part(part)?;
                report.repaired.push((part.name.clone(), kept, backup));
            }
            PartStatus::Complete => {}
        }
    }
    // Re-open so that repaired parts are read through their new summaries.
    let reader = if report.repaired.is_empty() {
        reader
    } else {
        BagReader::open(dir)?
    };
    for part in reader.parts().iter().filter(|p| p.status.readable()) {
        let (start, end) = part.time_range_ns.unwrap_or((0, 0));
        records.push(PartRecord {
            path: part.name.clone(),
            state: match part.status {
                PartStatus::Torn { .. } => PartState::Torn,
                _ => PartState::Complete,
            },
            message_count: part.message_count,
            start_ns: start,
            end_ns: end,
        });
    }
    for channel in reader.channels() {
        topics.add(&channel.spec, channel.message_count);
    }
    let old = previous.as_ref().and_then(|m| m.redline.clone());
    report.kept_from_previous_index = old.is_some();
    let mut old = old.unwrap_or_default();
    // The old index was written while recording: a topic it lists may have published since.
    old.advertised_never_published
        .retain(|a| !topics.published(&a.topic));
    let metadata = Metadata {
        rosbag2_bagfile_information: BagfileInformation::build(&records, topics),
        redline: Some(RedlineSection {
            dropped_messages: old.dropped_messages,
            unstamped_messages: old.unstamped_messages,
            advertised_never_published: old.advertised_never_published,
            parts: records,
            source: old.source,
        }),
        refused_part_names: Vec::new(),
    };
    metadata.store_atomically(dir)?;
    report.metadata = metadata;
    Ok(report)
}

/// Chunk size of a repaired part, before compression.
const REPAIR_CHUNK_BYTES: usize = 4 << 20;

/// Rewrites a torn part as a complete MCAP file; returns messages kept and the backup path.
fn repair_torn_part(part: &PartInfo) -> Result<(u64, PathBuf)> {
    let tmp = part.path.with_extension("mcap.reindex-tmp");
    let compression = part
        .compression
        .iter()
        .find_map(|c| c.parse::<Compression>().ok())
        .unwrap_or_default();
    let file = fs::File::create(&tmp).map_err(|e| BagError::io("creating", &tmp, e))?;
    let written = |e| BagError::io("writing", &tmp, e);
    let mut writer = PartWriter::new(
        BufWriter::new(file),
        compression,
        0,
        Some(REPAIR_CHUNK_BYTES),
    )
    .map_err(written)?;

    let mut scanner = FileOrderScanner::open(&part.path)?;
    let mut definitions = Definitions::default();
    let mut channels: HashMap<u16, u16> = HashMap::new();
    let mut kept = 0u64;
    while let Some(item) = scanner.next_item()? {
        match item {
            ScanItem::Definition(definition) => {
                let Some((id, spec)) = definitions.resolve(definition) else {
                    continue;
                };
                // Identical schemas get one id.
                let schema_id = match &spec.schema {
                    None => 0,
                    Some(schema) => writer
                        .add_schema(&schema.name, &schema.encoding, &schema.data)
                        .map_err(written)?,
                };
                let new_id = writer
                    .add_channel(
                        schema_id,
                        &spec.topic,
                        &spec.message_encoding,
                        &spec.metadata,
                    )
                    .map_err(written)?;
                channels.insert(id, new_id);
            }
            ScanItem::Message(m) => {
                let Some(&channel_id) = channels.get(&m.header.channel_id) else {
                    continue;
                };
                let header = MessageHeader {
                    channel_id,
                    ..m.header
                };
                writer.write_message(&header, m.data).map_err(written)?;
                kept += 1;
            }
        }
    }
    let file = writer
        .finish()
        .map_err(written)?
        .into_inner()
        .map_err(|e| BagError::io("writing", &tmp, e.into_error()))?;
    file.sync_all()
        .map_err(|e| BagError::io("syncing", &tmp, e))?;
    drop(file);

    // Check before swapping: the new file must be complete and hold every recovered message.
    let check = PartInfo::inspect(part.name.clone(), tmp.clone(), true)?;
    if check.status != PartStatus::Complete
        || check.message_count != kept
        || kept != part.message_count
    {
        fs::remove_file(&tmp).ok();
        return Err(BagError::RepairFailed {
            path: part.path.clone(),
            found: check.message_count,
            expected: part.message_count,
            status: check.status.label(),
        });
    }
    let backup = part.path.with_extension("mcap.torn");
    fs::hard_link(&part.path, &backup)
        .or_else(|_| fs::copy(&part.path, &backup).map(|_| ()))
        .map_err(|e| BagError::io("backing up", &part.path, e))?;
    fs::rename(&tmp, &part.path).map_err(|e| BagError::io("replacing", &part.path, e))?;
    if let Some(dir) = part.path.parent() {
        sync_dir(dir)?;
    }
    Ok((kept, backup))
}
