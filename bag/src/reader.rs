//! [`BagReader`]: a bag directory, a single `.mcap` file or a rosbag2 directory, read as one
//! stream in log-time order, tolerant of torn, missing and garbage parts.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use mcap::sans_io::indexed_reader::{IndexedReadEvent, IndexedReader, IndexedReaderOptions};

use crate::channel::{ChannelInfo, ChannelSpec};
use crate::chunk_cursor::ChunkCursor;
use crate::compressed_message;
use crate::decompressed::Decompressing;
use crate::error::{BagError, Result};
use crate::filter::ReadFilter;
use crate::format::{FormatError, MAX_RECORD_BYTES};
use crate::layout::{discover_parts, open_regular, twin_of_listed};
use crate::message::{Message, MessageRef, ReadIssue};
use crate::metadata::{Advertised, METADATA_FILE, Metadata};
use crate::part::{ChannelMap, PartAccess, PartInfo, PartStatus, read_summary};
use crate::scan::{FileOrderScanner, ScanItem};
use std::sync::Arc;

/// What kind of path a recording was opened from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordingKind {
    /// A directory with `metadata.yaml` that has our `redline:` section.
    Bag,
    /// A directory with a rosbag2 `metadata.yaml` written by another tool.
    Rosbag2,
    /// A directory of `.mcap` files without `metadata.yaml` (parts discovered on disk).
    UnindexedDirectory,
    /// A single `.mcap` file.
    McapFile,
}

/// The state of the recording's index file.
#[derive(Debug, Clone)]
pub enum IndexState {
    /// `metadata.yaml` was read.
    Present(Box<Metadata>),
    /// There is none (a single file, or a directory without one).
    Absent,
    /// It exists but could not be parsed; parts were discovered on disk instead.
    Unreadable(String),
}

/// An opened recording.
#[derive(Debug, Clone)]
pub struct BagReader {
    path: PathBuf,
    kind: RecordingKind,
    index: IndexState,
    parts: Vec<PartInfo>,
    channels: Vec<ChannelInfo>,
    notes: Vec<String>,
}

impl BagReader {
    /// Opens a bag directory, a rosbag2 directory, a directory of parts, or one `.mcap` file.
    ///
    /// Reads `metadata.yaml` and each part's summary; parts without a summary are scanned once.
    /// Missing, garbage and torn parts are reported in [`Self::parts`], never fatal.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_reporting(path, true, &|_| {})
    }

    /// Opens as [`Self::open`] does, but does not count the messages per channel where the
    /// format does not store that count (rosbag2 SQLite: counting is a pass over the whole
    /// table). Those channels' [`ChannelInfo::message_count`] is `None`; totals and time ranges
    /// are known. For a reader that reads every message anyway and counts them as it goes.
    pub fn open_uncounted(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_reporting(path, false, &|_| {})
    }

    /// Opens as [`Self::open`] (`count`) or [`Self::open_uncounted`] does, telling `report` how
    /// the one step that takes time in proportion to the data goes: decompressing the parts
    /// stored compressed whole (every few MiB, on the calling thread).
    pub fn open_reporting(
        path: impl AsRef<Path>,
        count: bool,
        report: &dyn Fn(&Decompressing),
    ) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let meta = std::fs::metadata(&path).map_err(|e| BagError::io("opening", &path, e))?;
        if !meta.is_dir() && !meta.is_file() {
            // A FIFO would block forever, a device may never end: say what it is instead.
            let why = open_regular(&path)
                .err()
                .map_or_else(|| "not a regular file".to_string(), |e| e.to_string());
            return Err(BagError::NotARecording { path, why });
        }
        let mut notes = Vec::new();
        let (kind, index, listed) = if meta.is_dir() {
            let index_path = path.join(METADATA_FILE);
            let index = if index_path.exists() {
                match Metadata::load(&index_path) {
                    Ok(m) => IndexState::Present(Box::new(m)),
                    Err(e) => {
                        notes.push(format!(
                            "{}; parts were discovered on disk instead",
                            e.detail()
                        ));
                        IndexState::Unreadable(e.detail())
                    }
                }
            } else {
                IndexState::Absent
            };
            let (kind, listed) = match &index {
                IndexState::Present(m) => {
                    let kind = if m.redline.is_some() {
                        RecordingKind::Bag
                    } else {
                        RecordingKind::Rosbag2
                    };
                    let info = &m.rosbag2_bagfile_information;
                    if info.compression_mode.eq_ignore_ascii_case("message") {
                        notes.push(format!(
                            "messages compressed one by one ({} by rosbag2's `compression_mode: \
                             message`): decompressed as they are read",
                            info.compression_format
                        ));
                    }
                    (kind, listed_parts(m))
                }
                _ => {
                    if matches!(index, IndexState::Absent) {
                        notes.push("no metadata.yaml: parts were discovered on disk".into());
                    }
                    (RecordingKind::UnindexedDirectory, Vec::new())
                }
            };
            (kind, index, listed)
        } else {
            (RecordingKind::McapFile, IndexState::Absent, Vec::new())
        };

        let mut names: Vec<(String, bool)> = listed.iter().map(|n| (n.clone(), true)).collect();
        if meta.is_dir() {
            // A set: an index can list tens of thousands of parts.
            let listed: HashSet<&str> = listed.iter().map(String::as_str).collect();
            for found in discover_parts(&path)? {
                if let Some(compressed) = twin_of_listed(&found, |n| listed.contains(n)) {
                    notes.push(format!(
                        "{found} is the decompressed copy of the listed part {compressed} (as \
                         rosbag2, reading beside the original, or `zstd -d` leave it): not read \
                         twice"
                    ));
                    continue;
                }
                if !listed.contains(found.as_str()) {
                    if !listed.is_empty() {
                        notes.push(format!(
                            "{found} is on disk but not listed in metadata.yaml"
                        ));
                    }
                    names.push((found, false));
                }
            }
            if names.is_empty() {
                return Err(BagError::NotARecording {
                    path,
                    why: "the directory holds no .mcap or .db3 files (nor such files compressed \
                          whole, .zstd) and no metadata.yaml listing any"
                        .into(),
                });
            }
        }

        let mut parts = Vec::with_capacity(names.len().max(1));
        if meta.is_dir() {
            for (name, listed) in names {
                let part_path = path.join(&name);
                parts.push(PartInfo::inspect(name, part_path, listed, count, report));
            }
        } else {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let part = PartInfo::inspect(name, path.clone(), false, count, report);
            if let PartStatus::Garbage { what } = &part.status {
                return Err(BagError::NotARecording {
                    path,
                    why: what.clone(),
                });
            }
            parts.push(part);
        }

        let channels = unify_channels(&mut parts);
        Ok(BagReader {
            path,
            kind,
            index,
            parts,
            channels,
            notes,
        })
    }

    /// The path it was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What kind of recording this is.
    pub fn kind(&self) -> RecordingKind {
        self.kind
    }

    /// The index file's state.
    pub fn index(&self) -> &IndexState {
        &self.index
    }

    /// The parsed `metadata.yaml`, if there is one.
    pub fn metadata(&self) -> Option<&Metadata> {
        match &self.index {
            IndexState::Present(m) => Some(m),
            _ => None,
        }
    }

    /// Every part, in order, with its state.
    pub fn parts(&self) -> &[PartInfo] {
        &self.parts
    }

    /// Every channel, unified across parts.
    pub fn channels(&self) -> &[ChannelInfo] {
        &self.channels
    }

    /// Plain sentences about how the recording was opened (discovered parts and the like).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Messages in all readable parts.
    pub fn message_count(&self) -> u64 {
        self.parts.iter().map(|p| p.message_count).sum()
    }

    /// First and last log time over all parts.
    pub fn time_range_ns(&self) -> Option<(u64, u64)> {
        self.parts
            .iter()
            .filter_map(|p| p.time_range_ns)
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
    }

    /// Messages the recorder counted as dropped (`None` when the recording has no such count).
    pub fn dropped_messages(&self) -> Option<u64> {
        self.metadata()
            .and_then(|m| m.redline.as_ref())
            .and_then(|r| r.dropped_messages)
    }

    /// Messages recorded without a publisher timestamp (`None` when unknown).
    pub fn unstamped_messages(&self) -> Option<u64> {
        self.metadata()
            .and_then(|m| m.redline.as_ref())
            .and_then(|r| r.unstamped_messages)
    }

    /// One sentence per loss or damage known from opening the recording (without reading its
    /// messages): messages the recorder counted as dropped, an index that cannot be read, loss
    /// the index records (see [`crate::metadata::LossRecord`]), part names it lists that were
    /// refused, and
    /// each part that is torn, missing or skipped, and each damaged chunk found at open (see
    /// [`PartInfo::damaged_chunks`]). Empty when nothing is known to be lost.
    ///
    /// Commands exit with "damage or loss" (3) when this is not empty, and print these lines.
    pub fn known_loss(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(dropped) = self.dropped_messages().filter(|d| *d > 0) {
            lines.push(format!(
                "the recorder counted {dropped} dropped messages (they are not in the recording)"
            ));
        }
        if let IndexState::Unreadable(why) = &self.index {
            lines.push(format!(
                "the index cannot be read ({why}); parts were found on disk instead"
            ));
        }
        if let Some(m) = self.metadata() {
            // Loss an earlier tool recorded, and what the index lists outside the bag.
            lines.extend(
                m.redline
                    .iter()
                    .flat_map(|r| &r.loss)
                    .map(|l| l.to_string()),
            );
            lines.extend(m.refused_part_names.iter().map(ToString::to_string));
        }
        for part in &self.parts {
            match &part.status {
                PartStatus::Complete => {}
                PartStatus::Torn { damage } => lines.push(format!(
                    "{} is torn at byte {} ({}): {} messages recovered, anything after is lost",
                    part.name, damage.offset, damage.what, part.message_count
                )),
                PartStatus::Missing => lines.push(format!(
                    "{} is listed in the index but missing: its messages are lost",
                    part.name
                )),
                PartStatus::Garbage { what } => {
                    lines.push(format!("{} is skipped: {what}", part.name))
                }
            }
            lines.extend(part.damaged_chunks.iter().map(ToString::to_string));
        }
        lines
    }

    /// Every damaged chunk of the recording, with where it is and what it costs: the ones
    /// found at open (parts read by scanning) and, for parts read through their summary, the
    /// ones found by reading and checking each chunk (decompression and CRC; no message is
    /// yielded). Costs one read of every chunk: for `bag info`, which otherwise trusts the
    /// summary. Parts that cannot be read at all are in [`Self::known_loss`] instead.
    pub fn damaged_chunks(&self) -> Result<Vec<crate::message::ChunkDamage>> {
        let mut found = Vec::new();
        for part in &self.parts {
            found.extend(part.damaged_chunks.iter().cloned());
            if let PartAccess::Ros1(index) = &part.access {
                let damaged =
                    index
                        .damaged_chunks(part.data_path(), &part.name)
                        .map_err(|source| BagError::Ros1 {
                            path: part.path.clone(),
                            source,
                        })?;
                found.extend(damaged);
            }
            if let Some(summary) = indexed_summary(part)? {
                let file = open_regular(part.data_path())
                    .map_err(|e| BagError::io("opening", &part.path, e))?;
                let damaged = ChunkCursor::damaged_chunks(file, &summary, part)?;
                found.extend(damaged.into_iter().map(|(damage, _)| damage));
            }
        }
        Ok(found)
    }

    /// Topics advertised but never published, as the recorder saw them.
    pub fn advertised_never_published(&self) -> &[Advertised] {
        self.metadata()
            .and_then(|m| m.redline.as_ref())
            .map_or(&[], |r| r.advertised_never_published.as_slice())
    }

    /// The first log time of each chunk of part `part`, sorted, when the part is read through
    /// its chunk indexes or is a ROS 1 bag (`None` for a part read in file order, or one whose
    /// summary can no longer be read). A reader that splits a part in time at these instants decompresses
    /// each chunk once. May read the part's summary.
    pub fn chunk_start_times(&self, part: usize) -> Option<Vec<u64>> {
        let part = self.parts.get(part)?;
        if let PartAccess::Ros1(index) = &part.access {
            return Some(index.chunk_start_times());
        }
        let summary = indexed_summary(part).ok()??;
        let mut starts: Vec<u64> = summary
            .chunk_indexes
            .iter()
            .map(|c| c.message_start_time)
            .collect();
        starts.sort_unstable();
        Some(starts)
    }

    /// Starts reading messages in log-time order.
    pub fn messages(&self, filter: &ReadFilter) -> Result<MessageCursor<'_>> {
        let wanted: Option<BTreeSet<usize>> = filter.topics.as_ref().map(|topics| {
            self.channels
                .iter()
                .filter(|c| topics.contains(&c.spec.topic))
                .map(|c| c.id)
                .collect()
        });
        let mut sources = Vec::new();
        let mut issues = Vec::new();
        for (index, part) in self.parts.iter().enumerate() {
            if let Some((first, last)) = part.time_range_ns {
                let before = filter.end_ns.is_some_and(|e| first >= e);
                let after = filter.start_ns.is_some_and(|s| last < s);
                if before || after {
                    continue;
                }
            }
            // A part that can no longer be opened (replaced, permissions changed) is an issue of
            // that part: the others still read.
            match part_source(part, filter, &wanted, &mut issues) {
                Ok(Some(source)) => sources.push(PartCursor::new(index, source)),
                Ok(None) => {}
                Err(error) => issues.push(ReadIssue {
                    part: part.name.clone(),
                    error: Arc::new(error),
                    skipped: None,
                }),
            }
        }
        let mut cursor = MessageCursor {
            reader: self,
            filter: filter.clone(),
            wanted,
            sources,
            issues,
            current: None,
            plain: Vec::new(),
        };
        cursor.prime();
        Ok(cursor)
    }
}

/// How part `part` is read for `filter`, or `None` when it is not read at all.
fn part_source(
    part: &PartInfo,
    filter: &ReadFilter,
    wanted: &Option<BTreeSet<usize>>,
    issues: &mut Vec<ReadIssue>,
) -> Result<Option<Source>> {
    let source = match (indexed_summary(part)?, &part.access) {
        (Some(summary), _) => {
            let summary = summary.as_ref();
            let file = open_regular(part.data_path())
                .map_err(|e| BagError::io("opening", &part.path, e))?;
            if let Some(chunks) = ChunkCursor::new(file, summary, part, filter, wanted) {
                return Ok(Some(Source::Chunks(Box::new(chunks))));
            }
            // Chunks that overlap in time, merged by the mcap crate's reader, which checks no
            // CRC: find the damaged chunks first and leave them out, so they cost only
            // themselves here too.
            let file = open_regular(part.data_path())
                .map_err(|e| BagError::io("opening", &part.path, e))?;
            let damaged = ChunkCursor::damaged_chunks(file, summary, part)?;
            let mut kept;
            let summary = if damaged.is_empty() {
                summary
            } else {
                kept = summary.clone();
                kept.chunk_indexes.retain(|c| {
                    !damaged
                        .iter()
                        .any(|(d, _)| d.offset == c.chunk_start_offset)
                });
                issues.extend(skipped_issues(part, damaged));
                &kept
            };
            // A corrupted index must not make us allocate what the file cannot hold.
            let mut options =
                IndexedReaderOptions::new().with_record_length_limit(MAX_RECORD_BYTES);
            if let Some(topics) = &filter.topics {
                options = options.include_topics(topics.iter().cloned());
            }
            if let Some(s) = filter.start_ns {
                options = options.starting_at(s);
            }
            if let Some(e) = filter.end_ns {
                options = options.ending_before(e);
            }
            let reader = IndexedReader::new_with_options(summary, options)
                .map_err(|e| BagError::mcap(&part.path, e))?;
            let file = open_regular(part.data_path())
                .map_err(|e| BagError::io("opening", &part.path, e))?;
            Source::Indexed {
                reader: Box::new(reader),
                file,
                chunk: Vec::new(),
            }
        }
        (None, PartAccess::Ros1(index)) => Source::Ros1(Box::new(
            crate::ros1_bag::Ros1Cursor::new(
                part.data_path(),
                &part.name,
                index,
                filter.start_ns,
                filter.end_ns,
            )
            .map_err(|source| BagError::Ros1 {
                path: part.path.clone(),
                source,
            })?,
        )),
        (None, PartAccess::Sqlite(index)) => Source::Sqlite(Box::new(
            crate::sqlite_part::SqliteCursor::new(
                part.data_path(),
                index,
                filter.start_ns,
                filter.end_ns,
                filter.tiled,
            )
            .map_err(|source| BagError::Sqlite {
                path: part.path.clone(),
                source: Box::new(source),
            })?,
        )),
        (None, PartAccess::FileOrder) => Source::FileOrder {
            scanner: Box::new(FileOrderScanner::open(part.data_path())?),
        },
        (None, PartAccess::FileOrderSorted) => {
            let mut scanner = FileOrderScanner::open(part.data_path())?;
            let mut messages = Vec::new();
            let mut head = Head::default();
            loop {
                match next_file_order(&mut scanner, part, filter, wanted, &mut head) {
                    Ok(true) => messages.push(std::mem::take(&mut head)),
                    Ok(false) => break,
                    Err(error) => {
                        issues.push(ReadIssue {
                            part: part.name.clone(),
                            error: Arc::new(error),
                            skipped: None,
                        });
                        break;
                    }
                }
            }
            issues.extend(scanned_skips(part, scanner.take_skipped()));
            // Stable: equal log times keep their file order.
            messages.sort_by_key(|m| m.log_time);
            messages.reverse();
            Source::Sorted { messages }
        }
        (None, _) => return Ok(None),
    };
    Ok(Some(source))
}

/// One issue per skipped chunk: the part read on past it.
fn skipped_issues(
    part: &PartInfo,
    damaged: Vec<(crate::message::ChunkDamage, BagError)>,
) -> impl Iterator<Item = ReadIssue> + '_ {
    damaged.into_iter().map(|(damage, error)| ReadIssue {
        part: part.name.clone(),
        error: Arc::new(error),
        skipped: Some(damage),
    })
}

/// One issue per chunk a file-order scan skipped.
fn scanned_skips(
    part: &PartInfo,
    skipped: Vec<crate::scan::SkippedChunk>,
) -> impl Iterator<Item = ReadIssue> + '_ {
    skipped.into_iter().map(|s| ReadIssue {
        part: part.name.clone(),
        skipped: Some(s.damage(&part.name)),
        error: Arc::new(BagError::damaged(&part.path, s.offset, s.error)),
    })
}

/// Part names from an index: rosbag2's lists first, then ours (with states), each name once,
/// in the order first listed. Linear in the number of names.
fn listed_parts(m: &Metadata) -> Vec<String> {
    let info = &m.rosbag2_bagfile_information;
    let ours = m
        .redline
        .iter()
        .flat_map(|r| r.parts.iter().map(|p| &p.path));
    let all = info
        .relative_file_paths
        .iter()
        .chain(info.files.iter().map(|f| &f.path))
        .chain(ours);
    let mut seen: HashSet<&str> = HashSet::new();
    all.filter(|name| seen.insert(name.as_str()))
        .cloned()
        .collect()
}

/// Gives every distinct channel content one recording-wide id.
fn unify_channels(parts: &mut [PartInfo]) -> Vec<ChannelInfo> {
    let mut channels: Vec<ChannelInfo> = Vec::new();
    let mut by_content: HashMap<ChannelSpec, usize> = HashMap::new();
    for part in parts.iter_mut() {
        let mut global_ids = ChannelMap::default();
        for (local, spec) in &part.channels {
            let id = *by_content.entry(spec.clone()).or_insert_with(|| {
                channels.push(ChannelInfo {
                    id: channels.len(),
                    spec: spec.clone(),
                    message_count: Some(0),
                });
                channels.len() - 1
            });
            global_ids.insert(*local, id);
            let count = part
                .channels_counted
                .then(|| part.channel_counts.get(local).copied().unwrap_or(0));
            if let Some(c) = channels.get_mut(id) {
                c.message_count = c.message_count.zip(count).map(|(a, b)| a + b);
            }
        }
        part.global_ids = global_ids;
    }
    channels
}

#[derive(Default)]
struct Head {
    channel: usize,
    sequence: u32,
    log_time: u64,
    publish_time: u64,
    /// The payload, copied (sources that cannot lend it).
    data: Vec<u8>,
    /// Lent by the source: the payload's place in a [`ChunkCursor`]'s buffer, or (any range)
    /// held by a SQLite cursor as its last message.
    lent: Option<std::ops::Range<usize>>,
}

impl Head {
    /// Makes `entry`, lent from a [`ChunkCursor`]'s buffer, the head.
    fn set_lent(&mut self, entry: crate::chunk_cursor::Entry) {
        self.channel = entry.channel;
        self.sequence = entry.sequence;
        self.log_time = entry.log_time;
        self.publish_time = entry.publish_time;
        self.lent = Some(entry.data);
    }

    /// Makes a message of a format with one time per message and no sequence (rosbag2 SQLite)
    /// the head, its payload held by the source until it moves on (see [`PartCursor::data`]):
    /// the publish time is the log time.
    fn set_held(&mut self, channel: usize, log_time: u64) {
        self.channel = channel;
        self.sequence = 0;
        self.log_time = log_time;
        self.publish_time = log_time;
        self.lent = Some(0..0);
    }

    /// Makes a message of a format with one time per message and no sequence (ROS 1 bags) the
    /// head, its payload copied: the publish time is the log time.
    fn set_copied(&mut self, channel: usize, log_time: u64, data: &[u8]) {
        self.channel = channel;
        self.sequence = 0;
        self.log_time = log_time;
        self.publish_time = log_time;
        self.data.clear();
        self.data.extend_from_slice(data);
    }
}

/// Whether a part-local channel is wanted: it maps to a recording channel (`ids`) that the
/// read asks for (`wanted`, `None`: all).
fn wants<'a>(
    ids: &'a ChannelMap,
    wanted: &'a Option<BTreeSet<usize>>,
) -> impl Fn(u16) -> bool + 'a {
    move |local| {
        ids.get(local)
            .is_some_and(|g| wanted.as_ref().is_none_or(|w| w.contains(&g)))
    }
}

enum Source {
    /// Chunk by chunk, lending payloads from the chunk buffer.
    Chunks(Box<ChunkCursor>),
    Indexed {
        reader: Box<IndexedReader>,
        file: File,
        chunk: Vec<u8>,
    },
    FileOrder {
        scanner: Box<FileOrderScanner>,
    },
    /// A ROS 1 bag's chunks, merged by time.
    Ros1(Box<crate::ros1_bag::Ros1Cursor>),
    /// A rosbag2 SQLite file's messages, paged from SQLite in time order.
    Sqlite(Box<crate::sqlite_part::SqliteCursor>),
    /// Already read and sorted; popped from the back.
    Sorted {
        messages: Vec<Head>,
    },
}

struct PartCursor {
    part: usize,
    source: Source,
    head: Head,
    has_head: bool,
    done: bool,
}

impl PartCursor {
    fn new(part: usize, source: Source) -> Self {
        PartCursor {
            part,
            source,
            head: Head::default(),
            has_head: false,
            done: false,
        }
    }

    /// The current message's payload.
    fn data(&self) -> &[u8] {
        match (&self.source, &self.head.lent) {
            (Source::Chunks(chunks), Some(range)) => chunks.buf.get(range.clone()).unwrap_or(&[]),
            (Source::Sqlite(sqlite), Some(_)) => sqlite.payload(),
            _ => &self.head.data,
        }
    }
}

/// Reads messages of a [`BagReader`] in log-time order across parts.
///
/// Call [`MessageCursor::next_message`] until it returns `None`, then look at
/// [`MessageCursor::issues`]: a part that stopped early is reported there and the others still
/// read. Parts read in file order (torn ones) are merged as they come, so their messages can be
/// slightly out of order.
pub struct MessageCursor<'r> {
    reader: &'r BagReader,
    filter: ReadFilter,
    wanted: Option<BTreeSet<usize>>,
    sources: Vec<PartCursor>,
    issues: Vec<ReadIssue>,
    current: Option<usize>,
    /// Where a message compressed alone is decompressed before it becomes its head's payload.
    plain: Vec<u8>,
}

impl<'r> MessageCursor<'r> {
    /// Problems met so far.
    pub fn issues(&self) -> &[ReadIssue] {
        &self.issues
    }

    fn prime(&mut self) {
        for i in 0..self.sources.len() {
            self.advance(i);
        }
    }

    /// The next message in log-time order, or `None` when every part is exhausted.
    pub fn next_message(&mut self) -> Option<MessageRef<'_>> {
        // The previous message stays borrowed until now: only now move its part on.
        if let Some(i) = self.current.take() {
            self.advance(i);
        }
        let mut best: Option<(u64, usize)> = None;
        for (i, s) in self.sources.iter().enumerate() {
            if s.has_head && best.is_none_or(|(t, _)| s.head.log_time < t) {
                best = Some((s.head.log_time, i));
            }
        }
        let (_, i) = best?;
        self.current = Some(i);
        let source = self.sources.get(i)?;
        let channel = self.reader.channels.get(source.head.channel)?;
        Some(MessageRef {
            channel,
            sequence: source.head.sequence,
            log_time_ns: source.head.log_time,
            publish_time_ns: source.head.publish_time,
            data: source.data(),
            part: source.part,
        })
    }

    /// Loads the next wanted message of source `i` into its head.
    fn advance(&mut self, i: usize) {
        let Some(cursor) = self.sources.get_mut(i) else {
            return;
        };
        cursor.has_head = false;
        if cursor.done {
            return;
        }
        let Some(part) = self.reader.parts.get(cursor.part) else {
            return;
        };
        cursor.head.lent = None;
        let outcome = match &mut cursor.source {
            Source::Chunks(chunks) => {
                let next = chunks.next(part, &self.filter);
                // Chunks skipped on the way cost only their own messages: say which.
                self.issues
                    .extend(skipped_issues(part, chunks.take_damaged()));
                match next {
                    Ok(Some(entry)) => {
                        cursor.head.set_lent(entry);
                        Ok(true)
                    }
                    Ok(None) => Ok(false),
                    Err(e) => Err(e),
                }
            }
            Source::Indexed {
                reader,
                file,
                chunk,
            } => next_indexed(reader, file, chunk, part, &mut cursor.head),
            Source::FileOrder { scanner } => {
                let next =
                    next_file_order(scanner, part, &self.filter, &self.wanted, &mut cursor.head);
                self.issues
                    .extend(scanned_skips(part, scanner.take_skipped()));
                next
            }
            Source::Ros1(cursor_ros1) => {
                match &part.access {
                    PartAccess::Ros1(index) => {
                        let ids = &part.global_ids;
                        let next = match cursor_ros1.next(index, wants(ids, &self.wanted)) {
                            Ok(Some(m)) => {
                                let channel = ids.get(m.channel).unwrap_or(0);
                                cursor.head.set_copied(channel, m.log_time_ns, m.data);
                                Ok(true)
                            }
                            Ok(None) => Ok(false),
                            Err(source) => Err(BagError::Ros1 {
                                path: part.path.clone(),
                                source,
                            }),
                        };
                        // Chunks skipped on the way cost only their own messages: say which.
                        self.issues
                            .extend(cursor_ros1.take_damaged().into_iter().map(
                                |(damage, source)| ReadIssue {
                                    part: part.name.clone(),
                                    error: Arc::new(BagError::Ros1 {
                                        path: part.path.clone(),
                                        source,
                                    }),
                                    skipped: Some(damage),
                                },
                            ));
                        next
                    }
                    _ => Ok(false),
                }
            }
            Source::Sqlite(cursor_sqlite) => match &part.access {
                PartAccess::Sqlite(index) => {
                    let ids = &part.global_ids;
                    match cursor_sqlite.next(&index.topic_ids, wants(ids, &self.wanted)) {
                        Ok(Some(m)) => {
                            let channel = ids.get(m.channel).unwrap_or(0);
                            // The payload stays in the cursor's page until it moves on.
                            cursor.head.set_held(channel, m.log_time_ns);
                            Ok(true)
                        }
                        Ok(None) => Ok(false),
                        Err(source) => Err(BagError::Sqlite {
                            path: part.path.clone(),
                            source: Box::new(source),
                        }),
                    }
                }
                _ => Ok(false),
            },
            Source::Sorted { messages } => match messages.pop() {
                Some(m) => {
                    cursor.head = m;
                    Ok(true)
                }
                None => Ok(false),
            },
        };
        match outcome {
            Ok(true) => {
                cursor.has_head = true;
                let channel = self.reader.channels.get(cursor.head.channel);
                let encoding = channel.map_or("", |c| c.spec.message_encoding.as_str());
                let data = cursor.data();
                if compressed_message::is_compressed_cdr(encoding, data) {
                    match compressed_message::decompress(data, &mut self.plain) {
                        Ok(()) => {
                            std::mem::swap(&mut cursor.head.data, &mut self.plain);
                            cursor.head.lent = None;
                        }
                        Err(source) => self.issues.push(ReadIssue {
                            part: part.name.clone(),
                            error: Arc::new(BagError::MessageDecompress {
                                path: part.path.clone(),
                                topic: channel.map_or_else(String::new, |c| c.spec.topic.clone()),
                                log_time_ns: cursor.head.log_time,
                                source,
                            }),
                            skipped: None,
                        }),
                    }
                }
            }
            Ok(false) => cursor.done = true,
            Err(error) => {
                cursor.done = true;
                self.issues.push(ReadIssue {
                    part: part.name.clone(),
                    error: Arc::new(error),
                    skipped: None,
                });
            }
        }
    }
}

impl Iterator for MessageCursor<'_> {
    type Item = Message;
    fn next(&mut self) -> Option<Message> {
        self.next_message().map(|m| m.to_owned())
    }
}

/// The summary of a part read through its chunk indexes (read from disk on the first read when
/// it was not loaded at open), or `None` for a part read in file order or not at all.
fn indexed_summary(part: &PartInfo) -> Result<Option<Arc<mcap::Summary>>> {
    match &part.access {
        PartAccess::Indexed(summary) => Ok(Some(Arc::clone(summary))),
        PartAccess::IndexedLazy(loaded) => {
            if let Some(summary) = loaded.get() {
                return Ok(Some(Arc::clone(summary)));
            }
            let mut file = open_regular(part.data_path())
                .map_err(|e| BagError::io("opening", &part.path, e))?;
            let summary = read_summary(&mut file, part.size_bytes).ok_or_else(|| {
                BagError::SummaryUnreadable {
                    path: part.path.clone(),
                }
            })?;
            // Two first reads at once may both load it; either copy will do.
            Ok(Some(Arc::clone(loaded.get_or_init(|| Arc::new(summary)))))
        }
        _ => Ok(None),
    }
}

fn next_indexed(
    reader: &mut IndexedReader,
    file: &mut File,
    chunk: &mut Vec<u8>,
    part: &PartInfo,
    head: &mut Head,
) -> Result<bool> {
    loop {
        let Some(event) = reader.next_event() else {
            return Ok(false);
        };
        match event.map_err(|e| BagError::mcap(&part.path, e))? {
            IndexedReadEvent::ReadChunkRequest { offset, length } => {
                if offset.saturating_add(length as u64) > part.size_bytes {
                    return Err(BagError::damaged(
                        &part.path,
                        offset,
                        FormatError::ChunkOutsideFile {
                            offset,
                            length: length as u64,
                            file_len: part.size_bytes,
                        },
                    ));
                }
                chunk.clear();
                chunk.resize(length, 0);
                file.seek(SeekFrom::Start(offset))
                    .and_then(|_| file.read_exact(chunk))
                    .map_err(|e| BagError::io("reading", &part.path, e))?;
                reader
                    .insert_chunk_record_data(offset, chunk)
                    .map_err(|e| {
                        let source = FormatError::Unreadable {
                            opcode: crate::format::op::CHUNK,
                            source: Box::new(e),
                        };
                        BagError::damaged(&part.path, offset, source)
                    })?;
            }
            IndexedReadEvent::Message { header, data } => {
                let Some(channel) = part.global_ids.get(header.channel_id) else {
                    return Err(BagError::Inconsistent {
                        path: part.path.clone(),
                        source: FormatError::UndefinedChannel {
                            channel_id: header.channel_id,
                        },
                    });
                };
                head.channel = channel;
                head.sequence = header.sequence;
                head.log_time = header.log_time;
                head.publish_time = header.publish_time;
                head.data.clear();
                head.data.extend_from_slice(data);
                return Ok(true);
            }
        }
    }
}

fn next_file_order(
    scanner: &mut FileOrderScanner,
    part: &PartInfo,
    filter: &ReadFilter,
    wanted: &Option<BTreeSet<usize>>,
    head: &mut Head,
) -> Result<bool> {
    while let Some(item) = scanner.next_item()? {
        let ScanItem::Message(m) = item else {
            continue;
        };
        let Some(channel) = part.global_ids.get(m.header.channel_id) else {
            // A message before (or without) its channel record: nothing to attribute it to.
            continue;
        };
        if wanted.as_ref().is_some_and(|w| !w.contains(&channel))
            || !filter.includes_time(m.header.log_time)
        {
            continue;
        }
        head.channel = channel;
        head.sequence = m.header.sequence;
        head.log_time = m.header.log_time;
        head.publish_time = m.header.publish_time;
        head.data.clear();
        head.data.extend_from_slice(m.data);
        return Ok(true);
    }
    Ok(false)
}
