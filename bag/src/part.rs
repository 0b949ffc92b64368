//! One part of a recording: where it is, what state it is in, and how to read it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::channel::ChannelSpec;
use crate::decompressed::{Decompressed, Decompressing};
use crate::error::{BagError, Result};
use crate::format::{
    FOOTER_TAIL_LEN, Footer, MAGIC, MAX_RECORD_BYTES, RECORD_PREFIX_LEN, RecordPrefix, Records,
    SummaryBuilder, SummaryOffset, op,
};
use crate::layout::open_regular;
use crate::message::ChunkDamage;
use crate::scan::{Damage, Definitions, FileOrderScanner, ScanItem};

/// The health of one part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartStatus {
    /// Closed cleanly.
    Complete,
    /// The writer died: read in file order up to `damage`.
    Torn {
        /// Where the readable data ends and why.
        damage: Damage,
    },
    /// Listed in `metadata.yaml` but not on disk.
    Missing,
    /// Not an MCAP file at all, or not a file that can be read (a FIFO, a directory, permission
    /// denied): skipped.
    Garbage {
        /// What was found.
        what: String,
    },
}

impl PartStatus {
    /// A short word for tables: `complete`, `torn`, `missing`, `garbage`.
    pub fn label(&self) -> &'static str {
        match self {
            PartStatus::Complete => "complete",
            PartStatus::Torn { .. } => "torn",
            PartStatus::Missing => "missing",
            PartStatus::Garbage { .. } => "garbage",
        }
    }

    /// True when messages can be read from the part.
    pub fn readable(&self) -> bool {
        matches!(self, PartStatus::Complete | PartStatus::Torn { .. })
    }
}

/// How a readable part is read.
#[derive(Debug, Clone)]
pub(crate) enum PartAccess {
    /// Through its summary and chunk indexes (seekable).
    Indexed(Arc<mcap::Summary>),
    /// Through its summary, whose chunk indexes are only loaded when messages are first read (so
    /// opening costs the same for any number of chunks), then kept for later reads.
    IndexedLazy(Arc<OnceLock<Arc<mcap::Summary>>>),
    /// In file order from the start.
    FileOrder,
    /// In file order, then sorted by log time in memory (a part without indexes whose messages
    /// are not in log-time order).
    FileOrderSorted,
    /// A ROS 1 bag, through the chunk places its scan found.
    Ros1(Arc<crate::ros1_bag::Ros1Index>),
    /// A rosbag2 SQLite file, through SQLite.
    Sqlite(Arc<crate::sqlite_part::SqliteIndex>),
    /// Not readable.
    Unreadable,
}

/// Part-local channel id -> recording-wide channel index; a flat table, since it is consulted
/// for every message.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChannelMap(Vec<Option<usize>>);

impl ChannelMap {
    pub(crate) fn insert(&mut self, local: u16, global: usize) {
        let i = usize::from(local);
        if self.0.len() <= i {
            self.0.resize(i + 1, None);
        }
        self.0[i] = Some(global);
    }

    pub(crate) fn get(&self, local: u16) -> Option<usize> {
        self.0.get(usize::from(local)).copied().flatten()
    }
}

/// An attachment as a part's summary lists it (its bytes are not read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// Its name.
    pub name: String,
    /// Its media type (`application/json`, `text/plain`, or empty).
    pub media_type: String,
    /// Bytes of its data.
    pub data_size: u64,
    /// Its log time, in nanoseconds.
    pub log_time_ns: u64,
}

/// What is known of one part after opening.
#[derive(Debug, Clone)]
pub struct PartInfo {
    /// File name relative to the recording (or the file itself).
    pub name: String,
    /// Full path.
    pub path: PathBuf,
    /// Complete, torn, missing or garbage.
    pub status: PartStatus,
    /// Size on disk (0 when missing).
    pub size_bytes: u64,
    /// Messages in the part (for a torn part: the messages recovered).
    pub message_count: u64,
    /// First and last log time, when the part has messages.
    pub time_range_ns: Option<(u64, u64)>,
    /// Chunk compressions used (`zstd`, `lz4`, `` for none).
    pub compression: BTreeSet<String>,
    /// Whether counts came from a scan, or from the summary (or a ROS 1 bag's index section)
    /// without reading any data.
    pub counted_by_scan: bool,
    /// Whether `metadata.yaml` lists this part (false when discovered on disk).
    pub listed_in_index: bool,
    /// Chunks found damaged when the part was scanned at open (a part read through its summary
    /// is not scanned: its damaged chunks come up as [`ReadIssue`](crate::ReadIssue)s when its
    /// messages are read). Reading skips them; the rest of the part reads.
    pub damaged_chunks: Vec<ChunkDamage>,
    /// The attachments the part's summary lists (none when it has no summary: a part that is
    /// scanned is read for its messages only).
    pub attachments: Vec<Attachment>,
    /// The names of the metadata records the part's summary lists, in file order.
    pub metadata_names: Vec<String>,
    pub(crate) access: PartAccess,
    /// Part-local channel id -> channel content, and message counts per part-local channel.
    pub(crate) channels: BTreeMap<u16, ChannelSpec>,
    pub(crate) channel_counts: BTreeMap<u16, u64>,
    /// Whether `channel_counts` holds the counts: not for a rosbag2 SQLite file opened without
    /// counting (see [`BagReader::open_uncounted`](crate::BagReader::open_uncounted)).
    pub(crate) channels_counted: bool,
    /// Part-local channel id -> recording-wide channel index, filled by the reader.
    pub(crate) global_ids: ChannelMap,
    /// For a part stored compressed whole (rosbag2 `compression_mode: file`), the decompressed
    /// copy every read goes to (see [`Self::data_path`]); `size_bytes` and every offset are the
    /// copy's.
    pub(crate) decompressed: Option<Decompressed>,
}

impl PartInfo {
    /// Whether this part is a ROS 1 `.bag` (recognised by its magic, whatever its name): read
    /// as far as it goes, never rewritten by `bag reindex`, which repairs MCAP parts only.
    pub fn is_ros1_bag(&self) -> bool {
        matches!(self.access, PartAccess::Ros1(_))
    }

    /// Whether a read of a time window of this part goes to that window's data (through a
    /// summary's chunk indexes, a ROS 1 bag's chunks, or SQLite's timestamps) instead of reading
    /// the part from its start: what splitting a load into time windows needs.
    pub fn reads_time_windows(&self) -> bool {
        matches!(self.status, PartStatus::Complete) && (!self.counted_by_scan || self.is_ros1_bag())
    }

    /// Whether this part is a rosbag2 SQLite file (`.db3`, recognised by its magic): read through
    /// SQLite, never rewritten by `bag reindex`.
    pub fn is_sqlite(&self) -> bool {
        matches!(self.access, PartAccess::Sqlite(_))
    }

    /// Where the part's bytes are read: its file, or the decompressed copy of a part stored
    /// compressed whole. Messages and errors name the part by [`Self::path`].
    pub(crate) fn data_path(&self) -> &Path {
        self.decompressed
            .as_ref()
            .map_or(self.path.as_path(), Decompressed::path)
    }

    /// For a part stored compressed whole (rosbag2 `compression_mode: file`): the compression
    /// (`zstd`, `lz4`) and the size of the file on disk. Such a part is read from a copy
    /// decompressed into the temporary directory when it is opened; [`Self::size_bytes`] is the
    /// copy's size.
    pub fn stored_compressed(&self) -> Option<(&'static str, u64)> {
        self.decompressed
            .as_ref()
            .map(|d| (d.format, d.stored_bytes))
    }

    fn empty(name: String, path: PathBuf, status: PartStatus, listed: bool) -> Self {
        PartInfo {
            name,
            path,
            status,
            size_bytes: 0,
            message_count: 0,
            time_range_ns: None,
            compression: BTreeSet::new(),
            counted_by_scan: false,
            listed_in_index: listed,
            damaged_chunks: Vec::new(),
            attachments: Vec::new(),
            metadata_names: Vec::new(),
            access: PartAccess::Unreadable,
            channels: BTreeMap::new(),
            channel_counts: BTreeMap::new(),
            channels_counted: true,
            global_ids: ChannelMap::default(),
            decompressed: None,
        }
    }

    /// Opens and classifies the part at `path`. Never fails: a part that cannot be opened or
    /// read (not a regular file, permission denied, an I/O error) is [`PartStatus::Garbage`],
    /// reported and skipped, so that one bad part does not hide the others.
    /// `count`: count a rosbag2 SQLite file's messages per topic (a pass over its table; other
    /// formats' counts come with their index or scan).
    /// `report`: told how decompressing a part stored compressed whole goes.
    pub(crate) fn inspect(
        name: String,
        path: PathBuf,
        listed: bool,
        count: bool,
        report: &dyn Fn(&Decompressing),
    ) -> Self {
        let mut file = match open_regular(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && listed => {
                return Self::empty(name, path, PartStatus::Missing, listed);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let what = "cannot be opened: a symbolic link to nothing".to_string();
                return Self::empty(name, path, PartStatus::Garbage { what }, listed);
            }
            Err(e) => {
                let what = format!("cannot be opened: {e}");
                return Self::empty(name, path, PartStatus::Garbage { what }, listed);
            }
        };
        let mut magic = [0u8; 4];
        let compression = read_up_to(&mut file, &mut magic)
            .ok()
            .and_then(|got| crate::layout::whole_file_compression(magic.get(..got)?));
        if let Err(e) = file.rewind() {
            let what = format!("cannot be read: {e}");
            return Self::empty(name, path, PartStatus::Garbage { what }, listed);
        }
        if let Some(format) = compression {
            return Self::inspect_decompressed(name, path, listed, count, file, format, report);
        }
        match Self::inspect_file(name.clone(), path.clone(), listed, count, &mut file) {
            Ok(info) => info,
            Err(e) => {
                let what = format!("cannot be read: {}", e.detail());
                Self::empty(name, path, PartStatus::Garbage { what }, listed)
            }
        }
    }

    /// A part stored compressed whole: decompressed into a temporary copy, which is then
    /// opened as any part is; the part keeps its own name and path.
    fn inspect_decompressed(
        name: String,
        path: PathBuf,
        listed: bool,
        count: bool,
        file: File,
        format: &'static str,
        report: &dyn Fn(&Decompressing),
    ) -> Self {
        let stored_bytes = file.metadata().map_or(0, |m| m.len());
        let garbage = |name: String, path: PathBuf, what: String| {
            let mut info = Self::empty(name, path, PartStatus::Garbage { what }, listed);
            info.size_bytes = stored_bytes;
            info
        };
        let mut tell = |read_bytes, written_bytes| {
            report(&Decompressing {
                part: name.clone(),
                read_bytes,
                stored_bytes,
                written_bytes,
            })
        };
        let decompressed = match crate::decompressed::decompress(file, format, &mut tell) {
            Ok(d) => d,
            Err(crate::decompressed::Failed(what)) => return garbage(name, path, what),
        };
        let copy = decompressed.path().to_path_buf();
        let opened = File::open(&copy)
            .map_err(|e| BagError::io("opening the decompressed copy", &copy, e))
            .and_then(|mut f| Self::inspect_file(name.clone(), copy, listed, count, &mut f));
        let mut info = match opened {
            Ok(info) => info,
            Err(e) => {
                let what = format!(
                    "cannot be read (decompressed from {format}): {}",
                    e.detail()
                );
                return garbage(name, path, what);
            }
        };
        info.path = path;
        info.decompressed = Some(decompressed);
        info
    }

    fn inspect_file(
        name: String,
        path: PathBuf,
        listed: bool,
        count: bool,
        file: &mut File,
    ) -> Result<Self> {
        let size = file
            .metadata()
            .map_err(|e| BagError::io("reading metadata of", &path, e))?
            .len();
        let mut magic = [0u8; 8];
        let got = read_up_to(file, &mut magic).map_err(|e| BagError::io("reading", &path, e))?;
        if got == 8 && magic.get(..8) == crate::ros1_bag::ROS1_MAGIC.get(..8) {
            return Self::from_ros1(name, path, listed, size);
        }
        if got == 8 && magic.get(..8) == crate::sqlite_part::SQLITE_MAGIC.get(..8) {
            return Self::from_sqlite(name, path, listed, size, count);
        }
        if got > 0 && magic.get(..got) != MAGIC.get(..got) {
            // A part stored compressed whole is decompressed before it gets here
            // ([`Self::inspect`]): this is one compressed twice over.
            let what = match crate::layout::whole_file_compression(&magic) {
                Some(format) => format!(
                    "decompresses to a file that is {format}-compressed again, which is not read \
                     (rosbag2 `compression_mode: file` compresses each file once)"
                ),
                None => "does not start with the MCAP magic".into(),
            };
            let mut info = Self::empty(name, path, PartStatus::Garbage { what }, listed);
            info.size_bytes = size;
            return Ok(info);
        }
        let mut info = Self::empty(name, path, PartStatus::Complete, listed);
        info.size_bytes = size;
        if got == 8
            && let Some(head) = summary_head(file, size).filter(self_describing)
        {
            info.fill_from_summary(head);
            info.access = PartAccess::IndexedLazy(Arc::default());
            return Ok(info);
        }
        let summary = if got == 8 {
            read_summary(file, size)
        } else {
            None
        };
        match summary {
            Some(summary) if self_describing(&summary) => info.fill_from_summary(summary),
            summary => {
                // No summary, or a foreign one that lacks statistics or definitions: learn
                // channels and counts by reading the part once. A complete part is still read
                // through its chunk indexes, so that its messages come in log-time order.
                info.fill_from_scan()?;
                if let Some(summary) = &summary {
                    info.list_attachments_and_metadata(summary);
                }
                if info.status == PartStatus::Complete
                    && let Some(mut summary) = summary.filter(|s| !s.chunk_indexes.is_empty())
                {
                    summary.channels = info.channels_for_reading();
                    info.access = PartAccess::Indexed(Arc::new(summary));
                }
            }
        }
        Ok(info)
    }

    /// A ROS 1 bag, opened from its index section or scanned once: its connections are the
    /// channels.
    fn from_ros1(name: String, path: PathBuf, listed: bool, size: u64) -> Result<Self> {
        let scan =
            crate::ros1_bag::Ros1Scan::scan(&path, &name).map_err(|source| BagError::Ros1 {
                path: path.clone(),
                source,
            })?;
        let mut info = Self::empty(name, path, PartStatus::Complete, listed);
        info.size_bytes = size;
        info.message_count = scan.message_count;
        info.time_range_ns = scan.time_range_ns;
        info.compression = scan.compression;
        // Counted from the bag's index section when it describes the file, else by a scan.
        info.counted_by_scan = scan.index.checked();
        info.damaged_chunks = scan.damaged_chunks;
        info.channels = scan.channels;
        info.channel_counts = scan.channel_counts;
        if let Some(damage) = scan.torn {
            info.status = PartStatus::Torn { damage };
        }
        info.access = PartAccess::Ros1(Arc::new(scan.index));
        Ok(info)
    }

    /// A rosbag2 SQLite file: its topics are the channels, SQLite counts the messages (per
    /// topic only with `count`).
    fn from_sqlite(
        name: String,
        path: PathBuf,
        listed: bool,
        size: u64,
        count: bool,
    ) -> Result<Self> {
        let scan = crate::sqlite_part::SqliteScan::scan(&path, count).map_err(|source| {
            BagError::Sqlite {
                path: path.clone(),
                source: Box::new(source),
            }
        })?;
        let mut info = Self::empty(name, path, PartStatus::Complete, listed);
        info.size_bytes = size;
        info.message_count = scan.message_count;
        info.time_range_ns = scan.time_range_ns;
        info.compression = scan.compression;
        info.channels = scan.channels;
        info.channels_counted = scan.channel_counts.is_some();
        info.channel_counts = scan.channel_counts.unwrap_or_default();
        info.access = PartAccess::Sqlite(Arc::new(scan.index));
        Ok(info)
    }

    /// The channels a scan found, as the indexed reader wants them.
    fn channels_for_reading(&self) -> std::collections::HashMap<u16, Arc<mcap::Channel<'static>>> {
        self.channels
            .iter()
            .map(|(id, spec)| {
                let schema = spec.schema.as_ref().map(|s| {
                    Arc::new(mcap::Schema {
                        id: 0,
                        name: s.name.clone(),
                        encoding: s.encoding.clone(),
                        data: std::borrow::Cow::Owned(s.data.clone()),
                    })
                });
                let channel = mcap::Channel {
                    id: *id,
                    topic: spec.topic.clone(),
                    schema,
                    message_encoding: spec.message_encoding.clone(),
                    metadata: spec.metadata.clone(),
                };
                (*id, Arc::new(channel))
            })
            .collect()
    }

    /// The attachments and metadata records `summary` indexes, in file order.
    fn list_attachments_and_metadata(&mut self, summary: &mcap::Summary) {
        // In file order: the indexes are written as the records were.
        let mut attachments: Vec<_> = summary.attachment_indexes.iter().collect();
        attachments.sort_by_key(|a| a.offset);
        self.attachments = attachments
            .into_iter()
            .map(|a| Attachment {
                name: a.name.clone(),
                media_type: a.media_type.clone(),
                data_size: a.data_size,
                log_time_ns: a.log_time,
            })
            .collect();
        let mut metadata: Vec<_> = summary.metadata_indexes.iter().collect();
        metadata.sort_by_key(|m| m.offset);
        self.metadata_names = metadata.into_iter().map(|m| m.name.clone()).collect();
    }

    fn fill_from_summary(&mut self, summary: mcap::Summary) {
        for (id, channel) in &summary.channels {
            self.channels.insert(*id, ChannelSpec::from_mcap(channel));
        }
        for index in &summary.chunk_indexes {
            self.compression.insert(index.compression.clone());
        }
        self.list_attachments_and_metadata(&summary);
        if let Some(stats) = &summary.stats {
            self.message_count = stats.message_count;
            self.channel_counts = stats.channel_message_counts.clone();
            if stats.message_count > 0 {
                self.time_range_ns = Some((stats.message_start_time, stats.message_end_time));
            }
        }
        self.access = PartAccess::Indexed(Arc::new(summary));
    }

    fn fill_from_scan(&mut self) -> Result<()> {
        // Counting needs headers, not payloads: `bag info` reads no message data outside chunks.
        let mut scanner = FileOrderScanner::open_headers_only(self.data_path())?;
        let mut definitions = Definitions::default();
        let mut range: Option<(u64, u64)> = None;
        let mut in_order = true;
        let mut last_time = 0u64;
        while let Some(item) = scanner.next_item()? {
            match item {
                ScanItem::Definition(definition) => {
                    if let Some((id, spec)) = definitions.resolve(definition) {
                        self.channels.insert(id, spec);
                    }
                }
                ScanItem::Message(m) => {
                    let time = m.header.log_time;
                    self.message_count += 1;
                    in_order &= time >= last_time;
                    last_time = time;
                    *self.channel_counts.entry(m.header.channel_id).or_insert(0) += 1;
                    range = Some(match range {
                        None => (time, time),
                        Some((a, b)) => (a.min(time), b.max(time)),
                    });
                }
            }
        }
        self.time_range_ns = range;
        self.counted_by_scan = true;
        self.damaged_chunks = scanner
            .take_skipped()
            .into_iter()
            .map(|s| s.damage(&self.name))
            .collect();
        self.access = if in_order {
            PartAccess::FileOrder
        } else {
            PartAccess::FileOrderSorted
        };
        if let Some(damage) = scanner.damage() {
            let damage = damage.clone();
            self.status = if damage.offset == 0 && self.size_bytes >= 8 {
                PartStatus::Garbage { what: damage.what }
            } else {
                PartStatus::Torn { damage }
            };
        }
        Ok(())
    }
}

/// A summary that tells everything without reading data: chunk indexes, statistics, and every
/// schema and channel the statistics count.
fn self_describing(summary: &mcap::Summary) -> bool {
    let Some(stats) = &summary.stats else {
        return false;
    };
    !summary.chunk_indexes.is_empty()
        && summary.schemas.len() == usize::from(stats.schema_count)
        && summary.channels.len() == stats.channel_count as usize
        && stats
            .channel_message_counts
            .keys()
            .all(|id| summary.channels.contains_key(id))
}

/// Where the footer says the summary and summary offsets start, and where the footer is.
struct FooterPlace {
    summary_start: u64,
    offsets_start: u64,
    footer_at: u64,
}

fn footer(file: &mut File, size: u64) -> Option<FooterPlace> {
    let footer_at = size.checked_sub(FOOTER_TAIL_LEN as u64)?;
    let tail = read_at(file, footer_at, FOOTER_TAIL_LEN as u64)?;
    let footer = Footer::parse_tail(&tail).ok()?;
    Some(FooterPlace {
        summary_start: footer.summary_start,
        offsets_start: footer.summary_offset_start,
        footer_at,
    })
}

/// The summary without its chunk indexes (but the first, for the compression name), read
/// through the footer's summary offsets: a few small reads whatever the file's size.
/// `None` when the file has no summary offsets or anything looks wrong (the caller falls back).
fn summary_head(file: &mut File, size: u64) -> Option<mcap::Summary> {
    let place = footer(file, size)?;
    if place.offsets_start == 0 || place.offsets_start >= place.footer_at {
        return None;
    }
    let offsets = read_at(
        file,
        place.offsets_start,
        place.footer_at - place.offsets_start,
    )?;
    let mut summary = SummaryBuilder::default();
    for record in Records::new(&offsets) {
        let record = record.ok()?;
        if record.opcode != op::SUMMARY_OFFSET {
            continue;
        }
        let Ok(offset) = SummaryOffset::parse(record.body) else {
            continue;
        };
        let (start, length) = (offset.group_start, offset.group_length);
        if start.checked_add(length)? > place.footer_at {
            return None;
        }
        let length = match offset.group_opcode {
            op::SCHEMA
            | op::CHANNEL
            | op::STATISTICS
            | op::ATTACHMENT_INDEX
            | op::METADATA_INDEX => length,
            // One chunk index is enough to name the compression.
            op::CHUNK_INDEX => {
                let prefix_len = RECORD_PREFIX_LEN as u64;
                let head = read_at(file, start, prefix_len.min(length))?;
                let first = RecordPrefix::read(&head)?;
                prefix_len.checked_add(first.body_len)?.min(length)
            }
            _ => continue,
        };
        summary.add(&read_at(file, start, length)?).ok()?;
    }
    Some(summary.finish())
}

/// `len` bytes at `offset`, or `None` if they cannot all be read or are more than a record may
/// hold (a summary that large is as damaged as a record that large; the part is then scanned).
fn read_at(file: &mut File, offset: u64, len: u64) -> Option<Vec<u8>> {
    let len = usize::try_from(len)
        .ok()
        .filter(|l| *l <= MAX_RECORD_BYTES)?;
    let mut buf = vec![0u8; len];
    file.seek(std::io::SeekFrom::Start(offset)).ok()?;
    file.read_exact(&mut buf).ok()?;
    Some(buf)
}

fn read_up_to(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// Reads the whole summary section of a part (without its data section), parsing every record
/// with its lengths checked. `None` when the part has no readable summary.
pub(crate) fn read_summary(file: &mut File, size: u64) -> Option<mcap::Summary> {
    let place = footer(file, size)?;
    if place.summary_start == 0 || place.summary_start >= place.footer_at {
        return None;
    }
    let section = read_at(
        file,
        place.summary_start,
        place.footer_at - place.summary_start,
    )?;
    let mut summary = SummaryBuilder::default();
    summary.add(&section).ok()?;
    Some(summary.finish())
}
