//! `bag reindex`: rebuild `metadata.yaml` from the parts and make torn parts whole again.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::{self, BufWriter, Read};
use std::path::{Path, PathBuf};

use crate::channel::Profile;
use crate::error::{BagError, Result};
use crate::format::{Compression, MessageHeader};
use crate::metadata::{
    BagfileInformation, LossKind, LossRecord, METADATA_FILE, Metadata, PartRecord, PartState,
    RedlineSection, TopicCounts, sync_dir,
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
    /// Whether an earlier index supplied the drop, unstamped and advertisement records
    /// (intact, or salvaged from a damaged one).
    pub kept_from_previous_index: bool,
    /// What the index it replaced was.
    pub previous_index: PreviousIndex,
    /// Where the index it replaced is kept (`metadata.yaml.bak-N`), if there was one.
    pub index_backup: Option<PathBuf>,
    /// The new index.
    pub metadata: Metadata,
}

/// The index a [`reindex`] found before it rebuilt it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum PreviousIndex {
    /// There was no `metadata.yaml`.
    #[default]
    Absent,
    /// Ours, read whole.
    Redline,
    /// Another tool's (rosbag2), read whole; it has no drop or unstamped counts.
    Foreign,
    /// It did not parse; `salvaged` says whether any of our section could still be read.
    Damaged {
        /// Why it did not parse.
        error: String,
        /// Whether counts or lists of our section were recovered from it.
        salvaged: bool,
    },
}

/// Rebuilds `dir/metadata.yaml` from the parts on disk.
///
/// Keeps `dropped_messages`, `unstamped_messages` and `advertised_never_published` from an
/// existing index (resetting drops to zero would claim a lossy recording is complete), less the
/// advertised topics whose messages the parts hold; from a damaged index, what can be salvaged
/// ([`Metadata::salvage`]); without either, the counts are unknown (`null`), never 0. The old
/// index is kept beside the new one as `metadata.yaml.bak-N` (the first N not taken). Each torn
/// part is rewritten beside itself as a complete MCAP with summary and indexes, re-read and
/// checked, then swapped in atomically; the original is kept as `NAME.mcap.torn`.
///
/// Refuses a bag whose writer is still at work ([`BagError::BeingWritten`]).
pub fn reindex(dir: &Path) -> Result<ReindexReport> {
    if !dir.is_dir() {
        return Err(BagError::NotARecording {
            path: dir.to_path_buf(),
            why: "reindex works on a bag directory".into(),
        });
    }
    // A bag being written has an open part that only looks torn: repairing it would cut the
    // writer off from its own file.
    crate::writer_lock::ensure_not_being_written(dir)?;
    // Files stored compressed whole, listed or found on disk, are judged before opening, which
    // would decompress them.
    if !crate::metadata::stored_compressed_parts(dir).is_empty() {
        return Err(BagError::ForeignStorage {
            path: dir.to_path_buf(),
            what: "files stored compressed whole (rosbag2 `compression_mode: file`)",
        });
    }
    let reader = BagReader::open(dir)?;
    // An index of MCAP parts over SQLite or ROS 1 files would send ROS tools to the wrong
    // storage plugin: such a bag's index is not ours to rebuild.
    let foreign = reader.parts().iter().find_map(|p| {
        if p.is_sqlite() {
            Some("rosbag2 SQLite files (.db3)")
        } else if p.is_ros1_bag() {
            Some("ROS 1 bag files")
        } else {
            None
        }
    });
    if let Some(what) = foreign {
        return Err(BagError::ForeignStorage {
            path: dir.to_path_buf(),
            what,
        });
    }
    let mut report = ReindexReport::default();
    let mut old = match reader.index() {
        IndexState::Present(m) => {
            report.previous_index = if m.redline.is_some() {
                PreviousIndex::Redline
            } else {
                PreviousIndex::Foreign
            };
            m.redline.clone()
        }
        IndexState::Absent => None,
        IndexState::Unreadable(error) => {
            let salvaged = Metadata::salvage_file(&dir.join(METADATA_FILE))?;
            report.previous_index = PreviousIndex::Damaged {
                error: error.clone(),
                salvaged: salvaged.is_some(),
            };
            salvaged
        }
    };
    // Names that lead outside the bag were never opened; the new index leaves them out.
    let refused_names = reader.metadata().map(|m| m.refused_part_names.as_slice());
    for refused in refused_names.unwrap_or_default() {
        report
            .skipped
            .push((refused.name.clone(), refused.to_string()));
    }
    let mut records = Vec::new();
    let mut topics = TopicCounts::default();
    // What this rebuild finds lost, added to what earlier ones recorded.
    let mut loss = Vec::new();
    for refused in refused_names.unwrap_or_default() {
        loss.push(LossRecord::new(
            LossKind::RefusedPartName,
            Some(refused.name.clone()),
            refused.why,
        ));
    }
    let old_record = |name: &str| {
        old.iter()
            .flat_map(|o| &o.parts)
            .find(|p| p.path == name)
            .cloned()
    };

    for part in reader.parts() {
        match &part.status {
            PartStatus::Missing => {
                report.skipped.push((part.name.clone(), "missing".into()));
                let mut record = LossRecord::new(
                    LossKind::MissingPart,
                    Some(part.name.clone()),
                    "listed in the index, not on disk",
                );
                if let Some(listed) = old_record(&part.name) {
                    record.messages = Some(listed.message_count);
                    if listed.message_count > 0 {
                        record.start_ns = Some(listed.start_ns);
                        record.end_ns = Some(listed.end_ns.saturating_add(1));
                    }
                }
                loss.push(record);
                continue;
            }
            PartStatus::Garbage { what } => {
                report
                    .skipped
                    .push((part.name.clone(), format!("garbage: {what}")));
                let mut record =
                    LossRecord::new(LossKind::UnreadablePart, Some(part.name.clone()), what);
                record.messages = old_record(&part.name).map(|p| p.message_count);
                loss.push(record);
                continue;
            }
            PartStatus::Torn { damage } => {
                let Repaired {
                    kept,
                    unattributed,
                    backup,
                } = repair_torn_part(part)?;
                if !unattributed.is_empty() {
                    let ids: Vec<String> = unattributed.keys().map(u16::to_string).collect();
                    let mut record = LossRecord::new(
                        LossKind::UnattributedMessages,
                        Some(part.name.clone()),
                        format!(
                            "on channel ids {} that the part never defines; the original {} \
                             still holds them",
                            ids.join(", "),
                            backup.display()
                        ),
                    );
                    record.messages = Some(unattributed.values().sum());
                    loss.push(record);
                }
                let mut record = LossRecord::new(
                    LossKind::TornTail,
                    Some(part.name.clone()),
                    format!(
                        "{}; {kept} messages before it kept, the original is {}",
                        damage.what,
                        backup.display()
                    ),
                );
                record.start_byte = Some(damage.offset);
                record.end_byte = Some(part.size_bytes);
                record.start_ns = part.time_range_ns.map(|(_, last)| last.saturating_add(1));
                loss.push(record);
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
        // Opened counting: every channel's count is known.
        topics.add(&channel.spec, channel.message_count.unwrap_or_default());
    }
    // An export whose writer never finished (a part still `open` in its index) covers less
    // than its source range: record the part of the range the parts do not reach.
    if let Some(section) = &old
        && let Some(source) = &section.source
        && section.parts.iter().any(|p| p.state == PartState::Open)
    {
        let reached = records
            .iter()
            .filter(|r| r.message_count > 0)
            .map(|r| r.end_ns.saturating_add(1))
            .max()
            .unwrap_or(source.start_ns);
        let mut record = LossRecord::new(
            LossKind::ExportCutShort,
            None,
            format!("the export from {} did not finish", source.path),
        );
        record.start_ns = Some(reached.max(source.start_ns));
        record.end_ns = Some(source.end_ns);
        loss.push(record);
    }
    report.kept_from_previous_index = old.is_some();
    // Without an earlier record nobody knows what was dropped: unknown, not 0.
    let mut old = old.take().unwrap_or(RedlineSection {
        dropped_messages: None,
        unstamped_messages: None,
        ..RedlineSection::default()
    });
    // The old index was written while recording: a topic it lists may have published since.
    old.advertised_never_published
        .retain(|a| !topics.published(&a.topic));
    let mut info = BagfileInformation::build(&records, topics);
    let mut other_fields = Default::default();
    if let Some(previous) = reader.metadata() {
        // Fields of the old index that the parts cannot rebuild (QoS profiles, a newer
        // version's keys) are kept, not reset.
        info.keep_fields_of(&previous.rosbag2_bagfile_information);
        other_fields = previous.other_fields.clone();
    }
    let metadata = Metadata {
        rosbag2_bagfile_information: info,
        redline: Some(RedlineSection {
            dropped_messages: old.dropped_messages,
            unstamped_messages: old.unstamped_messages,
            dropped_by_reason: old.dropped_by_reason,
            advertised_never_published: old.advertised_never_published,
            parts: records,
            source: old.source,
            loss: merged_loss(old.loss, loss),
            other_fields: old.other_fields,
        }),
        refused_part_names: Vec::new(),
        other_fields,
    };
    report.index_backup = keep_old_index(dir)?;
    metadata.store_atomically(dir)?;
    report.metadata = metadata;
    Ok(report)
}

/// The earlier records, then the new ones that are not among them (a second reindex of the same
/// damage adds nothing).
fn merged_loss(mut earlier: Vec<LossRecord>, new: Vec<LossRecord>) -> Vec<LossRecord> {
    for record in new {
        if !earlier.contains(&record) {
            earlier.push(record);
        }
    }
    earlier
}

/// Keeps `dir/metadata.yaml` (if any) as `metadata.yaml.bak-N`, the first N not taken, so that
/// no index is ever replaced without a copy, and no earlier copy is overwritten.
fn keep_old_index(dir: &Path) -> Result<Option<PathBuf>> {
    let index = dir.join(METADATA_FILE);
    match fs::symlink_metadata(&index) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(BagError::io("opening", &index, e)),
    }
    keep_beside(&index, |n| dir.join(format!("{METADATA_FILE}.bak-{n}"))).map(Some)
}

/// Keeps `original` under the first of `name(1)`, `name(2)`, ... that does not exist yet: a hard
/// link where the file system has them, else a copy. Never follows or replaces what is there.
fn keep_beside(original: &Path, name: impl Fn(u32) -> PathBuf) -> Result<PathBuf> {
    for n in 1..=u32::MAX {
        let target = name(n);
        match fs::hard_link(original, &target) {
            Ok(()) => return Ok(target),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(_) => {}
        }
        // No hard links here (some file systems): copy into a file created new.
        let mut out = match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
        {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(BagError::io("creating", &target, e)),
        };
        let mut input =
            fs::File::open(original).map_err(|e| BagError::io("opening", original, e))?;
        io::copy(&mut input, &mut out)
            .and_then(|_| out.sync_all())
            .map_err(|e| BagError::io("writing", &target, e))?;
        return Ok(target);
    }
    Err(BagError::InvalidArgument(format!(
        "no free name to keep {original:?} under"
    )))
}

/// Chunk size of a repaired part, before compression.
const REPAIR_CHUNK_BYTES: usize = 4 << 20;

/// What [`repair_torn_part`] did.
struct Repaired {
    /// Messages in the rewrite.
    kept: u64,
    /// Messages left out because their channel is never defined, by channel id.
    unattributed: BTreeMap<u16, u64>,
    /// The original, kept beside the rewrite.
    backup: PathBuf,
}

/// Rewrites a torn part as a complete MCAP file. Messages on channels the part never defines
/// cannot be attributed to a topic: they are left out and counted, not a reason to give up on
/// the rest. The rewrite keeps the original's profile `ros2` when every channel it holds fits
/// that profile (else it says `""`).
fn repair_torn_part(part: &PartInfo) -> Result<Repaired> {
    let tmp = part.path.with_extension("mcap.reindex-tmp");
    let mut start = Vec::new();
    fs::File::open(&part.path)
        .and_then(|f| f.take(4096).read_to_end(&mut start))
        .map_err(|e| BagError::io("reading", &part.path, e))?;
    let original = crate::format::header_profile(&start).unwrap_or("");
    // The header comes before the channels: a channel that does not fit `ros2` is found only
    // while copying, and the copy is then made again without a profile.
    let mut profiles = vec![Profile::Unnamed];
    if original == Profile::Ros2.mcap_name() {
        profiles.insert(0, Profile::Ros2);
    }
    for profile in profiles {
        if let Some((kept, unattributed)) = copy_torn_part(part, &tmp, profile)? {
            return swap_in_repair(part, &tmp, kept, unattributed);
        }
    }
    Err(BagError::RepairFailed {
        path: part.path.clone(),
        found: 0,
        expected: part.message_count,
        status: "not copied",
    })
}

/// Copies what can be read of a torn part into a complete MCAP file at `tmp` whose header says
/// `profile`: the messages kept and, by channel id, those left out. `None` (and no `tmp`) when
/// `profile` is `ros2` and a channel does not fit it.
fn copy_torn_part(
    part: &PartInfo,
    tmp: &Path,
    profile: Profile,
) -> Result<Option<(u64, BTreeMap<u16, u64>)>> {
    let compression = part
        .compression
        .iter()
        .find_map(|c| c.parse::<Compression>().ok())
        .unwrap_or_default();
    // Created new, so that a planted symlink of that name is never followed out of the bag.
    let _ = fs::remove_file(tmp);
    let file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(tmp)
        .map_err(|e| BagError::io("creating", tmp, e))?;
    let written = |e| BagError::io("writing", tmp, e);
    let mut writer = PartWriter::new(
        BufWriter::new(file),
        profile.mcap_name(),
        compression,
        0,
        Some(REPAIR_CHUNK_BYTES),
    )
    .map_err(written)?;

    let mut scanner = FileOrderScanner::open(&part.path)?;
    let mut definitions = Definitions::default();
    let mut channels: HashMap<u16, u16> = HashMap::new();
    let mut kept = 0u64;
    let mut unattributed: BTreeMap<u16, u64> = BTreeMap::new();
    while let Some(item) = scanner.next_item()? {
        match item {
            ScanItem::Definition(definition) => {
                let Some((id, spec)) = definitions.resolve(definition) else {
                    continue;
                };
                if profile == Profile::Ros2 && !spec.fits_ros2_profile() {
                    drop(writer);
                    fs::remove_file(tmp).map_err(|e| BagError::io("removing", tmp, e))?;
                    return Ok(None);
                }
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
                    *unattributed.entry(m.header.channel_id).or_insert(0) += 1;
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
        .map_err(|e| BagError::io("writing", tmp, e.into_error()))?;
    file.sync_all()
        .map_err(|e| BagError::io("syncing", tmp, e))?;
    Ok(Some((kept, unattributed)))
}

/// Puts the copy at `tmp` in the torn part's place, after checking that it is complete and holds
/// every recovered message; the original is kept beside it.
fn swap_in_repair(
    part: &PartInfo,
    tmp: &Path,
    kept: u64,
    unattributed: BTreeMap<u16, u64>,
) -> Result<Repaired> {
    // Check before swapping: the new file must be complete and hold every recovered message.
    let check = PartInfo::inspect(part.name.clone(), tmp.to_path_buf(), true, true, &|_| {});
    let left_out: u64 = unattributed.values().sum();
    if check.status != PartStatus::Complete
        || check.message_count != kept
        || kept + left_out != part.message_count
    {
        fs::remove_file(tmp).ok();
        return Err(BagError::RepairFailed {
            path: part.path.clone(),
            found: check.message_count,
            expected: part.message_count,
            status: check.status.label(),
        });
    }
    // An earlier repair's backup (`.torn`) is never overwritten: the next one is `.torn-2`.
    let backup = keep_beside(&part.path, |n| match n {
        1 => part.path.with_extension("mcap.torn"),
        n => part.path.with_extension(format!("mcap.torn-{n}")),
    })?;
    fs::rename(tmp, &part.path).map_err(|e| BagError::io("replacing", &part.path, e))?;
    if let Some(dir) = part.path.parent() {
        sync_dir(dir)?;
    }
    Ok(Repaired {
        kept,
        unattributed,
        backup,
    })
}
