//! `bag info`: what a recording holds and whether it can be trusted, without decoding messages.
//! Torn and unindexed parts are scanned once, and marked so; every chunk is read once to check
//! its CRC (a damaged chunk is loss every other tool reports too), one chunk in memory at a
//! time.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use bag::metadata::{METADATA_FILE, Metadata, RedlineSection};
use bag::{BagReader, ChunkDamage, IndexState, PartStatus, RecordingKind};
use serde_json::json;

use super::Outcome;
use super::format::{bytes, seconds, utc};

pub fn run(path: &Path, as_json: bool) -> anyhow::Result<Outcome> {
    let reader = super::progress::open_recording(path)?;
    let report = Report::of(&reader)?;
    if as_json {
        outln!("{}", report.json(&reader));
    } else {
        report.print(&reader);
    }
    // The one-line reason for exit 3; the full list is in the output above.
    if let Some(first) = report.gaps.first() {
        let more = match report.gaps.len() {
            1 => String::new(),
            n => format!(" (and {} more warnings)", n - 1),
        };
        eprintln!("bag info: {first}{more}");
    }
    Ok(if report.damaged {
        Outcome::Damaged
    } else {
        Outcome::Clean
    })
}

struct TopicRow {
    topic: String,
    type_name: String,
    encoding: String,
    count: u64,
}

struct Report {
    start_ns: u64,
    end_ns: u64,
    topics: Vec<TopicRow>,
    damaged: bool,
    gaps: Vec<String>,
    /// Facts that are not damage (a bag being written).
    notes: Vec<String>,
    /// What could be read of a damaged index's counts (`None` when the index is not damaged).
    salvaged: Option<RedlineSection>,
    /// Chunks whose CRC or compression is bad, per part.
    damaged_chunks: Vec<ChunkDamage>,
}

impl Report {
    fn of(reader: &BagReader) -> anyhow::Result<Self> {
        let (start_ns, end_ns) = reader.time_range_ns().unwrap_or((0, 0));
        let mut per_topic: BTreeMap<(String, String, String), u64> = BTreeMap::new();
        for c in reader.channels() {
            let key = (
                c.spec.topic.clone(),
                c.spec.type_name().to_string(),
                c.spec.message_encoding.clone(),
            );
            // `BagReader::open` counts every channel.
            *per_topic.entry(key).or_insert(0) += c.message_count.unwrap_or_default();
        }
        let topics = per_topic
            .into_iter()
            .map(|((topic, type_name, encoding), count)| TopicRow {
                topic,
                type_name,
                encoding,
                count,
            })
            .collect();
        let mut gaps = Vec::new();
        let mut notes = definition_notes(reader);
        notes.extend(compressed_whole_note(reader));
        let mut salvaged = None;
        if let IndexState::Unreadable(error) = reader.index() {
            gaps.push(format!(
                "{METADATA_FILE} is damaged ({error}); parts were found on disk, and what could be \
                 read of its counts is shown"
            ));
            let index = reader.path().join(METADATA_FILE);
            salvaged = Some(Metadata::salvage_file(&index)?.unwrap_or(RedlineSection {
                dropped_messages: None,
                unstamped_messages: None,
                ..RedlineSection::default()
            }));
        }
        let recorded_loss = reader
            .metadata()
            .and_then(|m| m.redline.as_ref())
            .map(|r| r.loss.as_slice())
            .or(salvaged.as_ref().map(|s| s.loss.as_slice()))
            .unwrap_or_default();
        for loss in recorded_loss {
            gaps.push(loss.to_string());
        }
        let damaged_chunks = reader.damaged_chunks()?;
        for chunk in &damaged_chunks {
            gaps.push(chunk.to_string());
        }
        for refused in reader.metadata().iter().flat_map(|m| &m.refused_part_names) {
            gaps.push(refused.to_string());
        }
        let total = reader.message_count();
        let dropped = reader
            .dropped_messages()
            .or(salvaged.as_ref().and_then(|s| s.dropped_messages));
        if let Some(dropped) = dropped.filter(|d| *d > 0) {
            gaps.push(format!(
                "This recording has gaps: {dropped} messages ({:.2}% of {} published) never \
                 reached it, so a topic that goes quiet may have been dropped rather than silent.",
                share(dropped, u128::from(dropped) + u128::from(total)),
                u128::from(dropped) + u128::from(total)
            ));
        }
        // A bag being recorded right now has an open last part that reads as torn: say so
        // instead of calling it damage.
        let being_written = matches!(
            bag::writer_lock::ensure_not_being_written(reader.path()),
            Err(bag::BagError::BeingWritten { .. })
        );
        // reindex works on bag directories only.
        // A ROS 1 bag or a SQLite rosbag2 is read as far as it goes; reindex rewrites MCAP
        // parts only (and leaves such a bag alone).
        let foreign = reader
            .parts()
            .iter()
            .any(|p| p.is_ros1_bag() || p.is_sqlite());
        let repair = if foreign {
            "What it holds is read; `bag reindex` repairs MCAP parts only."
        } else if reader.kind() == RecordingKind::McapFile {
            "To make it whole, move it into a directory of its own and run `bag reindex` on that."
        } else {
            "`bag reindex` makes it whole."
        };
        for part in reader.parts() {
            match &part.status {
                PartStatus::Complete => {}
                PartStatus::Torn { damage } if being_written => notes.push(format!(
                    "{} is being written now: {} messages up to byte {} so far",
                    part.name, part.message_count, damage.offset
                )),
                PartStatus::Torn { damage } => gaps.push(format!(
                    "{} is torn (its writer did not finish): {} messages recovered up to byte {}; \
                     anything after that is lost. {repair}",
                    part.name, part.message_count, damage.offset
                )),
                PartStatus::Missing => gaps.push(format!(
                    "{} is listed in metadata.yaml but missing on disk: its messages are lost.",
                    part.name
                )),
                PartStatus::Garbage { what } => {
                    gaps.push(format!("{} cannot be read: it {what}; skipped.", part.name))
                }
            }
        }
        let damaged = !gaps.is_empty();
        Ok(Report {
            start_ns,
            end_ns,
            topics,
            damaged,
            gaps,
            notes,
            salvaged,
            damaged_chunks,
        })
    }

    /// Drops: from the index, or salvaged from a damaged one.
    fn dropped(&self, reader: &BagReader) -> Option<u64> {
        reader
            .dropped_messages()
            .or(self.salvaged.as_ref().and_then(|s| s.dropped_messages))
    }

    /// Unstamped messages: from the index, or salvaged from a damaged one.
    fn unstamped(&self, reader: &BagReader) -> Option<u64> {
        reader
            .unstamped_messages()
            .or(self.salvaged.as_ref().and_then(|s| s.unstamped_messages))
    }

    /// Why a count is unknown.
    fn unknown_because(&self, reader: &BagReader) -> &'static str {
        if self.salvaged.is_some() {
            "unknown (not readable in the damaged index)"
        } else if reader.metadata().and_then(|m| m.redline.as_ref()).is_some() {
            "unknown (the index says so)"
        } else {
            "unknown (no Redline index)"
        }
    }

    fn chunks_damaged_in(&self, part: &str) -> usize {
        self.damaged_chunks
            .iter()
            .filter(|c| c.part == part)
            .count()
    }

    fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }

    fn rate_hz(&self, count: u64) -> f64 {
        let secs = self.duration_ns() as f64 / 1e9;
        if secs > 0.0 { count as f64 / secs } else { 0.0 }
    }

    fn print(&self, reader: &BagReader) {
        let total = reader.message_count();
        let size: u64 = reader.parts().iter().map(on_disk).sum();
        // Per part: its chunks' (or messages') compressions, or how the whole file is stored.
        let mut compression: Vec<&str> = reader
            .parts()
            .iter()
            .flat_map(|p| {
                let whole = match p.stored_compressed() {
                    Some(("lz4", _)) => Some("lz4 (whole file)"),
                    Some(_) => Some("zstd (whole file)"),
                    None => None,
                };
                let inside = p
                    .compression
                    .iter()
                    .filter(move |c| whole.is_none() || !c.is_empty())
                    .map(|c| if c.is_empty() { "none" } else { c.as_str() });
                whole.into_iter().chain(inside)
            })
            .collect();
        compression.sort_unstable();
        compression.dedup();
        outln!("path:        {}", reader.path().display());
        outln!("kind:        {}", kind_label(reader));
        if total > 0 {
            outln!("start:       {} ({} ns)", utc(self.start_ns), self.start_ns);
            outln!("end:         {} ({} ns)", utc(self.end_ns), self.end_ns);
        }
        outln!("duration:    {}", seconds(self.duration_ns()));
        outln!("messages:    {total}");
        outln!("size:        {}", bytes(size));
        outln!(
            "compression: {}",
            if compression.is_empty() {
                "-".into()
            } else {
                compression.join(", ")
            }
        );
        let from = if self.salvaged.is_some() {
            ", salvaged from the damaged index"
        } else {
            ""
        };
        match self.dropped(reader) {
            Some(d) => outln!(
                "dropped:     {d} ({:.2}%{from})",
                share(d, u128::from(d) + u128::from(total))
            ),
            None => outln!("dropped:     {}", self.unknown_because(reader)),
        }
        let reasons = reader
            .metadata()
            .and_then(|m| m.redline.as_ref())
            .map(|r| &r.dropped_by_reason);
        for (reason, count) in reasons.into_iter().flatten() {
            outln!("             {count} of them refused by the writer: {reason}");
        }
        match self.unstamped(reader) {
            Some(u) => outln!(
                "unstamped:   {u} ({:.2}% have a synthesized publish time{from})",
                share(u, u128::from(total))
            ),
            None => outln!("unstamped:   {}", self.unknown_because(reader)),
        }
        outln!("parts:");
        for p in reader.parts() {
            let range = p
                .time_range_ns
                .map(|(a, b)| format!("{} .. {}", utc(a), utc(b)))
                .unwrap_or_else(|| "-".into());
            let state = match &p.status {
                PartStatus::Torn { damage } => {
                    format!(
                        "torn, {} recovered, damaged at byte {}: {}",
                        p.message_count, damage.offset, damage.what
                    )
                }
                PartStatus::Garbage { what } => format!("garbage: {what}"),
                s => s.label().to_string(),
            };
            let bad = self.chunks_damaged_in(&p.name);
            let state = match bad {
                0 => state,
                1 => format!("{state}, 1 damaged chunk skipped"),
                n => format!("{state}, {n} damaged chunks skipped"),
            };
            let scanned = if p.counted_by_scan {
                " (counted by scan)"
            } else {
                ""
            };
            outln!(
                "  {:<24} {:>10} msgs {:>10}  {}  [{state}]{scanned}",
                p.name,
                p.message_count,
                bytes(on_disk(p)),
                range
            );
        }
        outln!("topics:");
        let width = self.topics.iter().map(|t| t.topic.len()).max().unwrap_or(0);
        for t in &self.topics {
            outln!(
                "  {:<width$}  {:>10} msgs {:>9.2} Hz  {}  [{}]",
                t.topic,
                t.count,
                self.rate_hz(t.count),
                t.type_name,
                t.encoding
            );
        }
        // Attachments and metadata records, as the parts' summaries list them.
        if reader.parts().iter().any(|p| !p.attachments.is_empty()) {
            outln!("attachments:");
            for p in reader.parts() {
                for a in &p.attachments {
                    let media_type = if a.media_type.is_empty() {
                        "no media type"
                    } else {
                        &a.media_type
                    };
                    outln!(
                        "  {:<24} {:>10}  {media_type}  {}  in {}",
                        a.name,
                        bytes(a.data_size),
                        utc(a.log_time_ns),
                        p.name
                    );
                }
            }
        }
        if reader.parts().iter().any(|p| !p.metadata_names.is_empty()) {
            outln!("metadata records:");
            for p in reader.parts() {
                for name in &p.metadata_names {
                    outln!("  {name}  in {}", p.name);
                }
            }
        }
        let never = reader.advertised_never_published();
        if !never.is_empty() {
            outln!("advertised but never published:");
            for a in never {
                outln!("  {} ({})", a.topic, a.schema);
            }
        }
        for note in reader.notes().iter().chain(&self.notes) {
            outln!("note: {note}");
        }
        for gap in &self.gaps {
            outln!("warning: {gap}");
        }
    }

    fn json(&self, reader: &BagReader) -> serde_json::Value {
        let total = reader.message_count();
        json!({
            "path": reader.path(),
            "kind": kind_label(reader),
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
            "start": utc(self.start_ns),
            "end": utc(self.end_ns),
            "duration_ns": self.duration_ns(),
            "message_count": total,
            "size_bytes": reader.parts().iter().map(on_disk).sum::<u64>(),
            "dropped_messages": self.dropped(reader),
            "unstamped_messages": self.unstamped(reader),
            "index": match reader.index() {
                IndexState::Present(_) => "present",
                IndexState::Absent => "absent",
                IndexState::Unreadable(_) => "damaged",
            },
            "advertised_never_published": reader.advertised_never_published().iter()
                .map(|a| json!({"topic": a.topic, "schema": a.schema})).collect::<Vec<_>>(),
            "parts": reader.parts().iter().map(|p| json!({
                "name": p.name,
                "state": p.status.label(),
                "damage": match &p.status {
                    PartStatus::Torn { damage } => json!({"offset": damage.offset, "what": damage.what}),
                    PartStatus::Garbage { what } => json!({"offset": 0, "what": what}),
                    _ => serde_json::Value::Null,
                },
                "damaged_chunks": self.damaged_chunks.iter().filter(|c| c.part == p.name)
                    .map(|c| json!({"offset": c.offset, "end": c.end, "lost_messages": c.lost_messages}))
                    .collect::<Vec<_>>(),
                "message_count": p.message_count,
                "start_ns": p.time_range_ns.map(|r| r.0),
                "end_ns": p.time_range_ns.map(|r| r.1),
                "size_bytes": on_disk(p),
                "compression": p.compression,
                "stored_compressed": p.stored_compressed().map(|(format, _)| format),
                "decompressed_bytes": p.stored_compressed().map(|_| p.size_bytes),
                "counted_by_scan": p.counted_by_scan,
                "listed_in_index": p.listed_in_index,
                "attachments": p.attachments.iter().map(|a| json!({
                    "name": a.name,
                    "media_type": a.media_type,
                    "size_bytes": a.data_size,
                    "log_time_ns": a.log_time_ns,
                })).collect::<Vec<_>>(),
                "metadata_records": p.metadata_names,
            })).collect::<Vec<_>>(),
            "topics": self.topics.iter().map(|t| json!({
                "topic": t.topic,
                "schema": t.type_name,
                "encoding": t.encoding,
                "message_count": t.count,
                "rate_hz": self.rate_hz(t.count),
            })).collect::<Vec<_>>(),
            "channels": reader.channels().iter().map(|c| json!({
                "id": c.id,
                "topic": c.spec.topic,
                "message_encoding": c.spec.message_encoding,
                "schema_name": c.spec.schema.as_ref().map(|s| s.name.clone()),
                "schema_encoding": c.spec.schema.as_ref().map(|s| s.encoding.clone()),
                "metadata": c.spec.metadata,
                "message_count": c.message_count,
            })).collect::<Vec<_>>(),
            "notes": reader.notes().iter().chain(&self.notes).collect::<Vec<_>>(),
            "warnings": self.gaps,
        })
    }
}

/// What a recording that names types without defining them (rosbag2 SQLite before Iron) means
/// for decoding: which types decode with the standard definitions built in, and which cannot.
/// A part's size on disk (for a part stored compressed whole, the compressed file's).
fn on_disk(p: &bag::PartInfo) -> u64 {
    p.stored_compressed()
        .map_or(p.size_bytes, |(_, stored)| stored)
}

/// Says which parts are stored compressed whole, and where they are read from.
fn compressed_whole_note(reader: &BagReader) -> Option<String> {
    let parts: Vec<(&str, u64)> = reader
        .parts()
        .iter()
        .filter(|p| p.stored_compressed().is_some())
        .map(|p| (p.name.as_str(), p.size_bytes))
        .collect();
    if parts.is_empty() {
        return None;
    }
    let names: Vec<&str> = parts.iter().map(|(n, _)| *n).collect();
    let total: u64 = parts.iter().map(|(_, b)| b).sum();
    Some(format!(
        "{} stored compressed whole (rosbag2 `compression_mode: file`): read from copies \
         decompressed into the temporary directory ({} in all, removed when done; set TMPDIR \
         to put them elsewhere)",
        names.join(", "),
        bytes(total)
    ))
}

fn definition_notes(reader: &BagReader) -> Vec<String> {
    let (mut standard, mut missing) = (BTreeSet::new(), BTreeSet::new());
    for c in reader.channels() {
        let Ok(plan) = super::cat::compile(c) else {
            continue;
        };
        let name = c.spec.type_name().to_string();
        if plan.lacks_definition() {
            missing.insert(name);
        } else if !plan.standard_types().is_empty() {
            standard.insert(name);
        }
    }
    let list = |s: BTreeSet<String>| s.into_iter().collect::<Vec<_>>().join(", ");
    let mut notes = Vec::new();
    if !standard.is_empty() {
        notes.push(format!(
            "the recording holds no complete definition of {}: decoded with the {} standard \
             definitions built in",
            list(standard),
            decode::STANDARD_TYPES_SOURCE
        ));
    }
    if !missing.is_empty() {
        notes.push(format!(
            "the recording holds no definition of {}, and none is built in: their messages \
             cannot be decoded (unless they are messages without fields)",
            list(missing)
        ));
    }
    notes
}

/// `part` as a percentage of `whole`; `whole` is wide enough for a sum of two counts, so
/// counts near `u64::MAX` (a hostile or damaged index) cannot wrap.
fn share(part: u64, whole: u128) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// How the recording is laid out, the same in text and JSON.
fn kind_label(reader: &BagReader) -> &'static str {
    match reader.kind() {
        // A lone ROS 1 bag or `.db3` file is a file, but not an MCAP one.
        RecordingKind::McapFile if reader.parts().iter().any(bag::PartInfo::is_ros1_bag) => {
            "ros1 bag file"
        }
        RecordingKind::McapFile if reader.parts().iter().any(bag::PartInfo::is_sqlite) => {
            "rosbag2 sqlite file"
        }
        RecordingKind::Bag => "bag",
        RecordingKind::Rosbag2 => "rosbag2",
        RecordingKind::UnindexedDirectory => "directory without metadata.yaml",
        RecordingKind::McapFile => "mcap file",
    }
}
