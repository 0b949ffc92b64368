//! `bag export`: a sub-range of a recording as a new bag, byte for byte.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use crate::channel::Profile;
use crate::error::Result;
use crate::filter::ReadFilter;
use crate::format::Compression;
use crate::metadata::{LossKind, LossRecord, SourceRecord};
use crate::part::PartStatus;
use crate::reader::BagReader;
use crate::writer::{BagSummary, BagWriter, WriteOptions};

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Which messages (topics, time range).
    pub filter: ReadFilter,
    /// Chunk compression of the new bag.
    pub compression: Compression,
    /// The complete `ros2msg` text of a type a source names without defining it (a rosbag2
    /// SQLite bag from before Iron: a `cdr` channel whose `ros2msg` schema is empty), given the
    /// type name; `None` for a type it does not know. What it gives becomes the exported
    /// schema's data, so that tools reading the export find definitions; without it, or for an
    /// unknown type, the schema is copied as it is.
    pub define: Option<fn(&str) -> Option<String>>,
}

/// What [`export`] wrote.
#[derive(Debug, Clone)]
pub struct ExportReport {
    /// The new bag.
    pub summary: BagSummary,
    /// Drops the source recorded, carried into the export's index; `None` when the source's
    /// drop count is unknown, and the export's index then says unknown too.
    pub carried_dropped: Option<u64>,
    /// Source parts that were not complete (torn, missing, garbage): the export can only hold
    /// what they yielded.
    pub damaged_source_parts: Vec<String>,
    /// Problems met while reading the source.
    pub read_issues: Vec<String>,
    /// Types the source named without defining, written with [`ExportOptions::define`]'s
    /// definitions.
    pub defined_types: Vec<String>,
}

/// Copies the messages of `source` that pass `options.filter` into a new bag at `out`.
///
/// Messages keep their bytes, sequence and both timestamps; channels and schemas of the kept
/// topics come along (a schema the source left empty gets [`ExportOptions::define`]'s text).
/// The new index names the source and the range, and carries the source's drop count so that
/// a lossy recording does not turn into a complete-looking export. Messages
/// whose publish time equals their log time are counted as unstamped when the source counted
/// any (that is how unstamped messages are stored). `progress` is called with the number of
/// messages written so far. Refuses a source whose writer is still at work
/// ([`BagError::BeingWritten`](crate::BagError::BeingWritten)).
pub fn export(
    source: &BagReader,
    out: &Path,
    options: &ExportOptions,
    mut progress: impl FnMut(u64),
) -> Result<ExportReport> {
    // A bag being written is not finished: refuse rather than export a part of it as a whole.
    crate::writer_lock::ensure_not_being_written(source.path())?;
    let filter = &options.filter;
    let (first, last) = source.time_range_ns().unwrap_or((0, 0));
    let record = SourceRecord {
        path: source.path().display().to_string(),
        start_ns: filter.start_ns.unwrap_or(first),
        end_ns: filter.end_ns.unwrap_or(last.saturating_add(1)),
        topics: filter.topics.iter().flatten().cloned().collect(),
    };
    let range_end_ns = record.end_ns;
    let kept_topics: Option<&BTreeSet<String>> = filter.topics.as_ref();
    // Every channel is known before the first header is written: the parts say `ros2` when
    // every exported channel fits that profile (a rosbag2 CDR bag), so that ROS tools read them.
    let profile = Profile::for_channels(
        source
            .channels()
            .iter()
            .map(|c| &c.spec)
            .filter(|spec| kept_topics.is_none_or(|t| t.contains(&spec.topic))),
    );
    let mut write_options = WriteOptions::new()
        .compression(options.compression)
        .chunk_max_age(None)
        .source(record)
        .profile(profile);
    // What the source's index says and the messages cannot: ROS distribution, type hashes, QoS.
    if let Some(metadata) = source.metadata() {
        write_options = write_options.described_by(metadata.rosbag2_bagfile_information.clone());
    }
    let mut writer = BagWriter::create(out, write_options)?;
    // Unknown stays unknown: a 0 here would call a recording of unknown loss complete.
    let carried_dropped = source.dropped_messages();
    match carried_dropped {
        Some(dropped) => writer.add_dropped(dropped),
        None => writer.mark_drop_count_unknown()?,
    }
    let source_unstamped = source.unstamped_messages();
    if source_unstamped.is_none() {
        writer.mark_unstamped_count_unknown()?;
    }
    let count_unstamped = source_unstamped.unwrap_or(0) > 0;
    for a in source.advertised_never_published() {
        if kept_topics.is_none_or(|t| t.contains(&a.topic)) {
            writer.advertise(&a.topic, &a.schema);
        }
    }

    // A range cut from a lossy recording is not a clean one: the source's record of loss and
    // its damaged parts travel with the export.
    for loss in source_loss(source, filter.start_ns, filter.end_ns) {
        writer.record_loss(loss)?;
    }

    let mut channels = HashMap::new();
    let mut defined_types: Vec<String> = Vec::new();
    let mut written = 0u64;
    let mut cursor = source.messages(filter)?;
    while let Some(m) = cursor.next_message() {
        let channel = *channels.entry(m.channel.id).or_insert_with(|| {
            let mut spec = m.channel.spec.clone();
            if let Some(define) = options.define
                && spec.message_encoding == "cdr"
                && let Some(schema) = spec.schema.as_mut()
                && schema.encoding == "ros2msg"
                && schema.data.is_empty()
                && let Some(text) = define(&schema.name)
            {
                schema.data = text.into_bytes();
                if !defined_types.contains(&schema.name) {
                    defined_types.push(schema.name.clone());
                }
            }
            writer.add_channel(spec)
        });
        if count_unstamped && m.publish_time_ns == m.log_time_ns {
            writer.add_unstamped(1);
        }
        if let Err(error) = writer.write_message(
            channel,
            m.sequence,
            m.log_time_ns,
            m.publish_time_ns,
            m.data,
        ) {
            // The export is cut short (a full disk): its index must say which range it was
            // meant to cover and did not. Best effort: the open part left in the index says the
            // writer did not finish even when this cannot be stored.
            let mut loss = LossRecord::new(
                LossKind::ExportCutShort,
                None,
                format!("writing stopped: {}", error.detail()),
            );
            loss.start_ns = Some(m.log_time_ns);
            loss.end_ns = Some(range_end_ns);
            writer.record_loss(loss).ok();
            return Err(error);
        }
        written += 1;
        if written.is_multiple_of(10_000) {
            progress(written);
        }
    }
    progress(written);
    let read_issues = cursor.issues().iter().map(ToString::to_string).collect();
    let summary = writer.close()?;
    Ok(ExportReport {
        summary,
        carried_dropped,
        damaged_source_parts: source
            .parts()
            .iter()
            .filter(|p| p.status != crate::part::PartStatus::Complete)
            .map(|p| format!("{} ({})", p.name, p.status.label()))
            .collect(),
        read_issues,
        defined_types,
    })
}

/// The loss `source` records, and its damaged parts as loss records, less what lies wholly
/// outside `start_ns..end_ns` (an open end reaches past what the source could be read to).
fn source_loss(source: &BagReader, start_ns: Option<u64>, end_ns: Option<u64>) -> Vec<LossRecord> {
    let path = source.path().display();
    let mut loss: Vec<LossRecord> = source
        .metadata()
        .and_then(|m| m.redline.as_ref())
        .map(|r| r.loss.clone())
        .unwrap_or_default();
    for part in source.parts() {
        let record = match &part.status {
            PartStatus::Complete => continue,
            PartStatus::Missing => LossRecord::new(
                LossKind::MissingPart,
                Some(part.name.clone()),
                format!("missing from the source {path}"),
            ),
            PartStatus::Garbage { what } => LossRecord::new(
                LossKind::UnreadablePart,
                Some(part.name.clone()),
                format!("unreadable in the source {path}: {what}"),
            ),
            PartStatus::Torn { damage } => {
                let mut record = LossRecord::new(
                    LossKind::TornTail,
                    Some(part.name.clone()),
                    format!("torn in the source {path}: {}", damage.what),
                );
                record.start_byte = Some(damage.offset);
                record.end_byte = Some(part.size_bytes);
                record.start_ns = part.time_range_ns.map(|(_, last)| last.saturating_add(1));
                record
            }
        };
        loss.push(record);
    }
    loss.retain(|l| {
        let before = l.end_ns.zip(start_ns).is_some_and(|(e, start)| e <= start);
        let after = l.start_ns.zip(end_ns).is_some_and(|(s, end)| s >= end);
        !(before || after)
    });
    loss
}
