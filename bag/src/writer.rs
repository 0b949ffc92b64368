//! [`BagWriter`]: writes a bag directory of rolling MCAP parts plus `metadata.yaml`.
//!
//! Built so that a killed writer loses as little as possible:
//! - parts are written front to back (by the crate's `part_writer`), each chunk whole when it
//!   closes, so no record on disk is ever left with placeholder lengths;
//! - a chunk closes by size (about 4 MiB) or by age (about 1 s), and every closed chunk is handed to
//!   the OS at once, so a crash loses at most about a second of data;
//! - `metadata.yaml` is rewritten atomically at creation, on every roll and at close.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::channel::{ChannelSpec, Profile};
use crate::error::{BagError, Result};
use crate::format::MESSAGE_RECORD_OVERHEAD;
use crate::format::{Compression, MessageHeader};
use crate::layout::part_file_name;
use crate::metadata::{
    Advertised, BagfileInformation, LossRecord, Metadata, PartRecord, PartState, RedlineSection,
    SourceRecord, TopicCounts, TopicMatch,
};
use crate::part_writer::{MAX_CHUNK_RECORDS_BYTES, PartWriter};
use crate::write_behind::WriteBehind;
use crate::writer_lock::WriterLock;

/// Options for [`BagWriter`], built like mcap's `WriteOptions`.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    compression: Compression,
    compression_level: i32,
    chunk_size_bytes: u64,
    chunk_max_age: Option<Duration>,
    part_max_bytes: Option<u64>,
    part_max_duration_ns: Option<u64>,
    source: Option<SourceRecord>,
    profile: Profile,
    described_by: Option<BagfileInformation>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            compression: Compression::Zstd,
            compression_level: 0,
            chunk_size_bytes: 4 * 1024 * 1024,
            chunk_max_age: Some(Duration::from_secs(1)),
            part_max_bytes: None,
            part_max_duration_ns: None,
            source: None,
            profile: Profile::Unnamed,
            described_by: None,
        }
    }
}

impl WriteOptions {
    /// Defaults: zstd, 4 MiB or 1 s chunks, one part.
    pub fn new() -> Self {
        Self::default()
    }

    /// Chunk compression.
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Compression level: 0 is the compressor's default (zstd 3); zstd goes from -7, the
    /// fastest, to 19, the smallest; live recording uses
    /// `live::RECORD_COMPRESSION_LEVEL` (feature `live`). lz4 ignores it.
    pub fn compression_level(mut self, level: i32) -> Self {
        self.compression_level = level;
        self
    }

    /// Close a chunk once it holds about this many uncompressed bytes.
    pub fn chunk_size_bytes(mut self, bytes: u64) -> Self {
        self.chunk_size_bytes = bytes.max(1);
        self
    }

    /// Close a chunk once its first message is this old (wall clock), bounding what a crash
    /// loses: checked by [`BagWriter::flush_if_stale`], which a live writer calls whenever it
    /// waits, and every 64 messages. `None` for offline rewrites where only size matters.
    pub fn chunk_max_age(mut self, age: Option<Duration>) -> Self {
        self.chunk_max_age = age;
        self
    }

    /// Start a new part once the current one reaches about this many bytes on disk.
    pub fn part_max_bytes(mut self, bytes: Option<u64>) -> Self {
        self.part_max_bytes = bytes.map(|b| b.max(1));
        self
    }

    /// Start a new part once the current one spans this much log time.
    pub fn part_max_duration_ns(mut self, ns: Option<u64>) -> Self {
        self.part_max_duration_ns = ns;
        self
    }

    /// Record in `metadata.yaml` that this bag was cut from another one.
    pub fn source(mut self, source: SourceRecord) -> Self {
        self.source = Some(source);
        self
    }

    /// The MCAP profile to write in each part's header. `Profile::Ros2` is a request: a part
    /// says `ros2` only while every channel added so far fits the ROS 2 profile, and a channel
    /// that does not fit moves the writer to a new part that says `""` (see [`Profile`]).
    /// Default `Profile::Unnamed` (`""`).
    pub fn profile(mut self, profile: Profile) -> Self {
        self.profile = profile;
        self
    }

    /// The rosbag2 section of the index this bag's messages come from (`bag export`): the
    /// fields a writer cannot know are taken from it, namely `ros_distro`, `custom_data` and,
    /// per topic of the same name, type and serialization format, its QoS profiles and
    /// `type_description_hash`.
    pub fn described_by(mut self, info: BagfileInformation) -> Self {
        self.described_by = Some(info);
        self
    }
}

/// A handle to a channel added to a [`BagWriter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChannelId(pub(crate) usize);

/// What a closed bag holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BagSummary {
    /// The bag directory.
    pub dir: PathBuf,
    /// Every part, in order.
    pub parts: Vec<PartRecord>,
    /// Messages written.
    pub message_count: u64,
    /// Messages counted as dropped.
    pub dropped_messages: u64,
    /// Whether `dropped_messages` is the whole count; `false` after
    /// [`BagWriter::mark_drop_count_unknown`], and the index then says `null`.
    pub drop_count_known: bool,
    /// Messages written without a publisher timestamp.
    pub unstamped_messages: u64,
    /// Advertised topics that never published.
    pub advertised_never_published: Vec<Advertised>,
}

struct ChannelState {
    spec: ChannelSpec,
    next_sequence: u32,
    message_count: u64,
}

struct OpenPart {
    record: PartRecord,
    path: PathBuf,
    writer: PartWriter<BufWriter<WriteBehind>>,
    /// What the part's header says.
    profile: Profile,
    /// Recording-wide channel index -> the part's MCAP channel id, once used in this part.
    mcap_channel_ids: Vec<Option<u16>>,
    chunk_opened_at: Option<Instant>,
}

/// Writes a bag: a directory `NAME/` of `NAME_0.mcap`, `NAME_1.mcap`, ... and `metadata.yaml`.
pub struct BagWriter {
    dir: PathBuf,
    name: String,
    options: WriteOptions,
    channels: Vec<ChannelState>,
    channel_lookup: HashMap<ChannelSpec, ChannelId>,
    part: Option<OpenPart>,
    finished_parts: Vec<PartRecord>,
    dropped_messages: u64,
    unstamped_messages: u64,
    drop_count_known: bool,
    unstamped_count_known: bool,
    loss: Vec<LossRecord>,
    /// Messages this writer refused, by reason (also counted in `dropped_messages`).
    dropped_by_reason: BTreeMap<String, u64>,
    advertised: BTreeSet<Advertised>,
    /// Drop, unstamped and advertisement counts as the index on disk last recorded them.
    indexed_counters: (u64, u64, usize),
    last_index_store: Option<Instant>,
    closed: bool,
    /// Held until the bag is finished, so that reindex and export leave it alone meanwhile.
    lock: WriterLock,
}

/// `write` checks the open chunk's age once per this many messages.
const AGE_CHECK_EVERY: u64 = 64;

impl BagWriter {
    /// Creates `dir` (or uses it if it exists and is empty) and starts part 0.
    pub fn create(dir: impl AsRef<Path>, options: WriteOptions) -> Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        match fs::read_dir(&dir) {
            Ok(mut entries) => {
                if entries.next().is_some() {
                    return Err(BagError::DirectoryNotEmpty(dir));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                fs::create_dir_all(&dir).map_err(|e| BagError::io("creating", &dir, e))?;
            }
            Err(e) => return Err(BagError::io("opening", &dir, e)),
        }
        let lock = WriterLock::acquire(&dir)?;
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| !n.is_empty())
            .unwrap_or("bag")
            .to_string();
        let mut writer = BagWriter {
            dir,
            name,
            options,
            channels: Vec::new(),
            channel_lookup: HashMap::new(),
            part: None,
            finished_parts: Vec::new(),
            dropped_messages: 0,
            unstamped_messages: 0,
            drop_count_known: true,
            unstamped_count_known: true,
            loss: Vec::new(),
            dropped_by_reason: BTreeMap::new(),
            advertised: BTreeSet::new(),
            indexed_counters: (0, 0, 0),
            last_index_store: None,
            closed: false,
            lock,
        };
        writer.open_part()?;
        writer.store_metadata()?;
        Ok(writer)
    }

    /// The bag directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Adds a channel (or returns the handle of an identical one added before).
    pub fn add_channel(&mut self, spec: ChannelSpec) -> ChannelId {
        if let Some(id) = self.channel_lookup.get(&spec) {
            return *id;
        }
        let id = ChannelId(self.channels.len());
        self.channel_lookup.insert(spec.clone(), id);
        self.channels.push(ChannelState {
            spec,
            next_sequence: 1,
            message_count: 0,
        });
        id
    }

    /// Writes one message. `publish_time_ns: None` means the sample came unstamped: the
    /// publish time is set to the log time and the unstamped count grows.
    pub fn write(
        &mut self,
        channel: ChannelId,
        log_time_ns: u64,
        publish_time_ns: Option<u64>,
        data: &[u8],
    ) -> Result<()> {
        self.refuse_if_too_large(channel, data.len())?;
        let state = self
            .channels
            .get_mut(channel.0)
            .ok_or(BagError::UnknownChannel(channel.0))?;
        let sequence = state.next_sequence;
        state.next_sequence = state.next_sequence.wrapping_add(1);
        let publish = match publish_time_ns {
            Some(t) => t,
            None => {
                self.unstamped_messages += 1;
                log_time_ns
            }
        };
        self.write_message(channel, sequence, log_time_ns, publish, data)
    }

    /// Writes one message exactly as given (sequence and both times), as when copying a
    /// recording. Does not touch the unstamped count.
    pub fn write_message(
        &mut self,
        channel: ChannelId,
        sequence: u32,
        log_time_ns: u64,
        publish_time_ns: u64,
        data: &[u8],
    ) -> Result<()> {
        if self.channels.get(channel.0).is_none() {
            return Err(BagError::UnknownChannel(channel.0));
        }
        self.refuse_if_too_large(channel, data.len())?;
        self.roll_if_due(log_time_ns)?;
        let mcap_channel = self.mcap_channel(channel)?;
        let part = self.current_part()?;
        let header = MessageHeader {
            channel_id: mcap_channel,
            sequence,
            log_time: log_time_ns,
            publish_time: publish_time_ns,
        };
        part.writer
            .write_message(&header, data)
            .map_err(|e| BagError::io("writing", &part.path, e))?;
        let record = &mut part.record;
        if record.message_count == 0 {
            record.start_ns = log_time_ns;
            record.end_ns = log_time_ns;
        } else {
            record.start_ns = record.start_ns.min(log_time_ns);
            record.end_ns = record.end_ns.max(log_time_ns);
        }
        record.message_count += 1;
        part.chunk_opened_at.get_or_insert_with(Instant::now);
        // Reading the clock costs as much as writing a small message: check the chunk's age
        // every so many messages here (and on every `flush_if_stale`).
        let check_age = part.record.message_count.is_multiple_of(AGE_CHECK_EVERY);
        if let Some(state) = self.channels.get_mut(channel.0) {
            state.message_count += 1;
        }
        self.close_chunk_if_due(check_age)
    }

    /// A message too large for any chunk (readers refuse such chunks) is not written: it is
    /// counted as dropped, with the reason, and the caller told.
    fn refuse_if_too_large(&mut self, channel: ChannelId, bytes: usize) -> Result<()> {
        let limit = MAX_CHUNK_RECORDS_BYTES - MESSAGE_RECORD_OVERHEAD;
        if bytes <= limit {
            return Ok(());
        }
        self.dropped_messages += 1;
        *self
            .dropped_by_reason
            .entry(format!(
                "larger than a chunk may be ({limit} bytes, the reader's limit)"
            ))
            .or_insert(0) += 1;
        self.store_metadata_if_counters_changed()?;
        let topic = self
            .channels
            .get(channel.0)
            .map(|c| c.spec.topic.clone())
            .unwrap_or_default();
        Err(BagError::MessageTooLarge {
            topic,
            bytes,
            limit,
        })
    }

    /// Counts `n` messages that never reached the recording because of `reason` (a topic limit,
    /// ...): in `dropped_messages` and, by reason, in `dropped_by_reason`.
    pub fn add_dropped_for(&mut self, reason: &str, n: u64) {
        self.dropped_messages += n;
        *self
            .dropped_by_reason
            .entry(reason.to_string())
            .or_insert(0) += n;
    }

    /// Counts `n` messages that never reached the recording.
    pub fn add_dropped(&mut self, n: u64) {
        self.dropped_messages += n;
    }

    /// Says that messages may have been lost without being counted (as when copying a bag whose
    /// drop count is unknown): the index then records the drop count as unknown (`null`) rather
    /// than a number that would understate the loss. Cannot be undone. Stores the index at once,
    /// so that a writer killed right after does not leave a count that claims to be whole.
    pub fn mark_drop_count_unknown(&mut self) -> Result<()> {
        if !self.drop_count_known {
            return Ok(());
        }
        self.drop_count_known = false;
        self.store_metadata()
    }

    /// Says that some messages' publish times may be synthesized without being counted (as when
    /// copying a bag whose unstamped count is unknown): the index records `null`, stored at once.
    pub fn mark_unstamped_count_unknown(&mut self) -> Result<()> {
        if !self.unstamped_count_known {
            return Ok(());
        }
        self.unstamped_count_known = false;
        self.store_metadata()
    }

    /// Records a loss in the index (as an export that cannot finish does), stored at once.
    pub fn record_loss(&mut self, record: LossRecord) -> Result<()> {
        self.loss.push(record);
        self.store_metadata()
    }

    /// Counts `n` messages that were written elsewhere without a publisher timestamp (used when
    /// copying a bag whose index already counted them).
    pub fn add_unstamped(&mut self, n: u64) {
        self.unstamped_messages += n;
    }

    /// Records that `topic` was advertised with registry schema `schema`.
    pub fn advertise(&mut self, topic: &str, schema: &str) {
        self.advertised.insert(Advertised {
            topic: topic.to_string(),
            schema: schema.to_string(),
        });
    }

    /// How many (topic, schema) advertisements it holds.
    pub fn advertised_count(&self) -> usize {
        self.advertised.len()
    }

    /// Closes the current chunk if it is older than the age limit. Call it from an idle loop so
    /// a quiet recording still reaches the disk.
    pub fn flush_if_stale(&mut self) -> Result<()> {
        self.close_chunk_if_due(true)
    }

    /// Closes the current chunk and hands it to the OS.
    pub fn flush(&mut self) -> Result<()> {
        let part = self.current_part()?;
        part.writer
            .flush()
            .map_err(|e| BagError::io("writing", &part.path, e))?;
        part.chunk_opened_at = None;
        self.store_metadata_if_counters_changed()
    }

    /// Keeps drop and unstamped counts on disk between rolls, so that a killed recorder's bag
    /// still says it lost messages. At most once a second, except for the first change.
    fn store_metadata_if_counters_changed(&mut self) -> Result<()> {
        let counters = (
            self.dropped_messages,
            self.unstamped_messages,
            self.advertised.len(),
        );
        if counters == self.indexed_counters {
            return Ok(());
        }
        let recently = self
            .last_index_store
            .is_some_and(|t| t.elapsed() < Duration::from_secs(1));
        let first_change = self.indexed_counters == (0, 0, 0);
        if recently && !first_change {
            return Ok(());
        }
        self.store_metadata()
    }

    /// Finishes the last part, writes the final `metadata.yaml` and says what was written.
    pub fn close(mut self) -> Result<BagSummary> {
        self.finish()?;
        Ok(self.summary())
    }

    fn summary(&self) -> BagSummary {
        BagSummary {
            dir: self.dir.clone(),
            parts: self.finished_parts.clone(),
            message_count: self.channels.iter().map(|c| c.message_count).sum(),
            dropped_messages: self.dropped_messages,
            drop_count_known: self.drop_count_known,
            unstamped_messages: self.unstamped_messages,
            advertised_never_published: self.advertised_never_published(),
        }
    }

    fn finish(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        self.finish_part()?;
        self.store_metadata()?;
        self.lock.release();
        Ok(())
    }

    fn current_part(&mut self) -> Result<&mut OpenPart> {
        if self.part.is_none() {
            self.open_part()?;
            self.store_metadata()?;
        }
        self.part
            .as_mut()
            .ok_or_else(|| BagError::InvalidArgument("the bag writer is closed".into()))
    }

    fn open_part(&mut self) -> Result<()> {
        let index = self.finished_parts.len();
        let file_name = part_file_name(&self.name, index);
        let path = self.dir.join(&file_name);
        // Decided now: the header is the part's first record.
        let profile = match self.options.profile {
            Profile::Ros2 if self.channels.iter().all(|c| c.spec.fits_ros2_profile()) => {
                Profile::Ros2
            }
            _ => Profile::Unnamed,
        };
        let file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| BagError::io("creating", &path, e))?;
        let writer = PartWriter::new(
            BufWriter::with_capacity(1 << 20, WriteBehind::new(file)),
            profile.mcap_name(),
            self.options.compression,
            self.options.compression_level,
            None,
        )
        .map_err(|e| BagError::io("writing", &path, e))?;
        self.part = Some(OpenPart {
            record: PartRecord {
                path: file_name,
                state: PartState::Open,
                ..PartRecord::default()
            },
            path,
            writer,
            profile,
            mcap_channel_ids: Vec::new(),
            chunk_opened_at: None,
        });
        Ok(())
    }

    /// Starts the open part again from its first byte, with the header `open_part` now
    /// chooses. Only for a part that holds no channel and no message yet.
    fn restart_part(&mut self) -> Result<()> {
        let Some(part) = self.part.take() else {
            return Ok(());
        };
        let path = part.path.clone();
        drop(part);
        fs::remove_file(&path).map_err(|e| BagError::io("removing", &path, e))?;
        self.open_part()
    }

    fn finish_part(&mut self) -> Result<()> {
        let Some(mut part) = self.part.take() else {
            return Ok(());
        };
        let file = part
            .writer
            .finish()
            .map_err(|e| BagError::io("writing", &part.path, e))?
            .into_inner()
            .map_err(|e| BagError::io("writing", &part.path, e.into_error()))?
            .into_file();
        file.sync_all()
            .map_err(|e| BagError::io("syncing", &part.path, e))?;
        part.record.state = PartState::Complete;
        self.finished_parts.push(part.record);
        Ok(())
    }

    fn roll_if_due(&mut self, log_time_ns: u64) -> Result<()> {
        let Some(part) = self.part.as_ref() else {
            return Ok(());
        };
        if part.record.message_count == 0 {
            return Ok(());
        }
        let too_big = self
            .options
            .part_max_bytes
            .is_some_and(|max| part.writer.position() >= max);
        let too_long = self
            .options
            .part_max_duration_ns
            .is_some_and(|max| log_time_ns.saturating_sub(part.record.start_ns) >= max);
        if too_big || too_long {
            self.finish_part()?;
            self.open_part()?;
            self.store_metadata()?;
        }
        Ok(())
    }

    fn close_chunk_if_due(&mut self, check_age: bool) -> Result<()> {
        let Some(part) = self.part.as_ref() else {
            return Ok(());
        };
        let too_big = part.writer.open_chunk_bytes() as u64 >= self.options.chunk_size_bytes;
        let too_old = match (part.chunk_opened_at, self.options.chunk_max_age) {
            (Some(opened), Some(max)) if check_age => opened.elapsed() >= max,
            _ => false,
        };
        if too_big || too_old {
            self.flush()?;
        }
        Ok(())
    }

    /// The part-local MCAP channel id, adding schema and channel to the part on first use so a
    /// part's summary lists exactly what its data section holds.
    fn mcap_channel(&mut self, channel: ChannelId) -> Result<u16> {
        let Some(part) = self.part.as_mut() else {
            return Err(BagError::InvalidArgument("the bag writer is closed".into()));
        };
        if let Some(Some(id)) = part.mcap_channel_ids.get(channel.0) {
            return Ok(*id);
        }
        if !part.writer.has_room_for_a_channel() {
            // MCAP numbers a part's channels with 16 bits: a peer publishing on more keys than
            // that gets a new part, not the end of the recording.
            self.finish_part()?;
            self.open_part()?;
            self.store_metadata()?;
            return self.mcap_channel(channel);
        }
        let Some(state) = self.channels.get(channel.0) else {
            return Err(BagError::UnknownChannel(channel.0));
        };
        if part.profile == Profile::Ros2 && !state.spec.fits_ros2_profile() {
            // This part's header already says `ros2`, which this channel would make untrue:
            // it goes into a new part, whose header says `""` (`open_part` sees the channel).
            if part.record.message_count == 0 && part.mcap_channel_ids.iter().all(Option::is_none) {
                self.restart_part()?;
            } else {
                self.finish_part()?;
                self.open_part()?;
                self.store_metadata()?;
            }
            return self.mcap_channel(channel);
        }
        let spec = &state.spec;
        let Some(part) = self.part.as_mut() else {
            return Err(BagError::InvalidArgument("the bag writer is closed".into()));
        };
        let written = |e| BagError::io("writing", &part.path, e);
        let schema_id = match &spec.schema {
            None => 0,
            Some(schema) => part
                .writer
                .add_schema(&schema.name, &schema.encoding, &schema.data)
                .map_err(written)?,
        };
        let id = part
            .writer
            .add_channel(
                schema_id,
                &spec.topic,
                &spec.message_encoding,
                &spec.metadata,
            )
            .map_err(written)?;
        if part.mcap_channel_ids.len() <= channel.0 {
            part.mcap_channel_ids.resize(channel.0 + 1, None);
        }
        part.mcap_channel_ids[channel.0] = Some(id);
        Ok(id)
    }

    fn advertised_never_published(&self) -> Vec<Advertised> {
        let published: BTreeSet<&str> = self
            .channels
            .iter()
            .filter(|c| c.message_count > 0)
            .map(|c| c.spec.topic.as_str())
            .collect();
        self.advertised
            .iter()
            .filter(|a| !published.contains(a.topic.as_str()))
            .cloned()
            .collect()
    }

    fn metadata(&self) -> Metadata {
        let mut parts = self.finished_parts.clone();
        if let Some(open) = &self.part {
            parts.push(open.record.clone());
        }
        let mut topics = TopicCounts::default();
        for c in &self.channels {
            topics.add(&c.spec, c.message_count);
        }
        let mut info = BagfileInformation::build(&parts, topics);
        if let Some(described_by) = &self.options.described_by {
            info.take_descriptions_of(described_by, TopicMatch::Exact);
        }
        Metadata {
            rosbag2_bagfile_information: info,
            redline: Some(RedlineSection {
                dropped_messages: self.drop_count_known.then_some(self.dropped_messages),
                unstamped_messages: self
                    .unstamped_count_known
                    .then_some(self.unstamped_messages),
                dropped_by_reason: self.dropped_by_reason.clone(),
                advertised_never_published: self.advertised_never_published(),
                parts,
                source: self.options.source.clone(),
                loss: self.loss.clone(),
                other_fields: Default::default(),
            }),
            refused_part_names: Vec::new(),
            other_fields: Default::default(),
        }
    }

    fn store_metadata(&mut self) -> Result<()> {
        self.metadata().store_atomically(&self.dir)?;
        self.indexed_counters = (
            self.dropped_messages,
            self.unstamped_messages,
            self.advertised.len(),
        );
        self.last_index_store = Some(Instant::now());
        Ok(())
    }
}

impl Drop for BagWriter {
    fn drop(&mut self) {
        // A writer dropped without `close()` (an early return, a panic elsewhere) still leaves a
        // complete bag; errors here have nobody to go to.
        self.finish().ok();
    }
}
