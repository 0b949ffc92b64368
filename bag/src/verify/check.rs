//! The checker: one linear walk over the records, then cross-checks of the summary against what
//! the walk saw.
//!
//! Everything the data section defines or contains is recorded as the walk goes; summary records
//! come after DataEnd, so each is checked against a complete picture of the data section the
//! moment it is parsed. Memory is proportional to the input: the file itself, one decompressed
//! chunk at a time (its size checked before allocating), and small per-record bookkeeping.

use std::collections::{HashMap, HashSet};

use super::VerifyOptions;
use super::decompress::{ChunkDecoder, MAX_EXPANSION_RATIO};
use super::parse::{
    self, FieldError, FramingError, MAGIC, MessageHeader, RECORD_PREFIX_LEN, RawRecord, Records,
    op, record_name,
};
use super::report::{ChannelSummary, Finding, Report, Severity, TimeRange};

/// Where a record sits: file offset of the record (or of its chunk) and offset inside the chunk.
#[derive(Clone, Copy, Debug)]
struct Loc {
    offset: u64,
    in_chunk: Option<u64>,
}

impl Loc {
    fn file(offset: u64) -> Self {
        Self {
            offset,
            in_chunk: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Section {
    Data,
    Summary,
    SummaryOffsets,
}

struct SchemaDef {
    name: String,
    encoding: String,
    data: Vec<u8>,
}

struct ChannelDef {
    id: u16,
    schema_id: u16,
    topic: String,
    message_encoding: String,
    metadata: Vec<u8>,
    message_count: u64,
    log_time_range: Option<TimeRange>,
    /// Messages on this channel inside chunks (these need a summary copy of the channel).
    chunked_message_count: u64,
}

struct ChunkInfo {
    offset: u64,
    total_len: u64,
    message_start_time: u64,
    message_end_time: u64,
    compression: String,
    compressed_size: u64,
    uncompressed_size: u64,
    /// `(channel_id, offset, total record length)` of the MessageIndex records after the chunk.
    message_indexes: Vec<(u16, u64, u64)>,
    indexed: bool,
}

struct AttachmentInfo {
    offset: u64,
    total_len: u64,
    log_time: u64,
    create_time: u64,
    data_size: u64,
    name: String,
    media_type: String,
    indexed: bool,
}

struct MetadataInfo {
    offset: u64,
    total_len: u64,
    name: String,
    indexed: bool,
}

#[derive(Clone, Copy)]
struct ChunkMessage {
    offset: u64,
    channel_id: u16,
    log_time: u64,
}

/// The chunk whose MessageIndex records may follow, with what it contained.
struct OpenChunk {
    chunk: usize,
    /// Message records of the chunk, by offset in the decompressed records (ascending).
    messages: Vec<ChunkMessage>,
    per_channel: HashMap<u16, u64>,
    indexed_channels: HashSet<u16>,
    /// Contents were decoded (false when the chunk could not be decompressed).
    contents_known: bool,
}

struct Group {
    opcode: u8,
    start: u64,
    end: u64,
}

struct Sink {
    part: String,
    findings: Vec<Finding>,
    limit: usize,
    errors: u64,
    warnings: u64,
    unlisted: u64,
}

impl Sink {
    fn push(
        &mut self,
        severity: Severity,
        loc: Loc,
        record: &'static str,
        expected: String,
        found: String,
    ) {
        match severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
        }
        if self.findings.len() >= self.limit {
            self.unlisted += 1;
            return;
        }
        self.findings.push(Finding {
            severity,
            part: self.part.clone(),
            offset: loc.offset,
            offset_in_chunk: loc.in_chunk,
            record,
            expected,
            found,
        });
    }
}

struct Checker<'a> {
    bytes: &'a [u8],
    options: &'a VerifyOptions,
    sink: Sink,
    section: Section,
    records_seen: u64,

    schemas: HashMap<u16, SchemaDef>,
    /// Channel id -> index into `channels` (`u32::MAX`: undefined). Dense: a message costs one load.
    channel_slots: Vec<u32>,
    channels: Vec<ChannelDef>,
    chunks: Vec<ChunkInfo>,
    chunk_at: HashMap<u64, usize>,
    attachments: Vec<AttachmentInfo>,
    attachment_at: HashMap<u64, usize>,
    metadata: Vec<MetadataInfo>,
    metadata_at: HashMap<u64, usize>,
    message_count: u64,
    log_time_range: Option<TimeRange>,
    loose_messages: u64,
    first_loose_message: Option<u64>,
    open_chunk: Option<OpenChunk>,
    decoder: ChunkDecoder,
    scratch: Vec<u8>,

    data_end: Option<(u64, u64)>,
    first_summary_record: Option<u64>,
    first_summary_offset: Option<u64>,
    groups: Vec<Group>,
    misgrouped: HashSet<u8>,
    summary_schema_ids: HashSet<u16>,
    summary_channel_ids: HashSet<u16>,
    chunk_index_count: u64,
    attachment_index_count: u64,
    metadata_index_count: u64,
    statistics_at: Option<u64>,
    summary_offsets: Vec<(u64, parse::SummaryOffset)>,
    footer_end: Option<u64>,
    finished: bool,
    profile: Option<String>,
    library: Option<String>,
}

const NO_CHANNEL: u32 = u32::MAX;

/// Verifies one part held in memory.
pub(crate) fn check(part: &str, bytes: &[u8], options: &VerifyOptions) -> Report {
    let mut checker = Checker {
        bytes,
        options,
        sink: Sink {
            part: part.to_owned(),
            findings: Vec::new(),
            limit: options.max_listed_findings,
            errors: 0,
            warnings: 0,
            unlisted: 0,
        },
        section: Section::Data,
        records_seen: 0,
        schemas: HashMap::new(),
        channel_slots: Vec::new(),
        channels: Vec::new(),
        chunks: Vec::new(),
        chunk_at: HashMap::new(),
        attachments: Vec::new(),
        attachment_at: HashMap::new(),
        metadata: Vec::new(),
        metadata_at: HashMap::new(),
        message_count: 0,
        log_time_range: None,
        loose_messages: 0,
        first_loose_message: None,
        open_chunk: None,
        decoder: ChunkDecoder::default(),
        scratch: Vec::new(),
        data_end: None,
        first_summary_record: None,
        first_summary_offset: None,
        groups: Vec::new(),
        misgrouped: HashSet::new(),
        summary_schema_ids: HashSet::new(),
        summary_channel_ids: HashSet::new(),
        chunk_index_count: 0,
        attachment_index_count: 0,
        metadata_index_count: 0,
        statistics_at: None,
        summary_offsets: Vec::new(),
        footer_end: None,
        finished: false,
        profile: None,
        library: None,
    };
    checker.run();
    checker.into_report()
}

/// `{:?}` of a string from the file, so a finding stays on one line.
fn quoted(s: &str) -> String {
    format!("{s:?}")
}

fn bytes_hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

impl<'a> Checker<'a> {
    fn error(
        &mut self,
        loc: Loc,
        record: &'static str,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) {
        self.sink
            .push(Severity::Error, loc, record, expected.into(), found.into());
    }

    fn warning(
        &mut self,
        loc: Loc,
        record: &'static str,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) {
        self.sink.push(
            Severity::Warning,
            loc,
            record,
            expected.into(),
            found.into(),
        );
    }

    fn field_error(&mut self, loc: Loc, opcode: u8, err: FieldError) {
        let (expected, found) = err.describe();
        self.error(loc, record_name(opcode), expected, found);
    }

    fn run(&mut self) {
        let bytes = self.bytes;
        let len = bytes.len() as u64;
        if bytes.is_empty() {
            self.error(
                Loc::file(0),
                "file",
                "an MCAP file (starting with the magic)",
                "an empty file",
            );
            return;
        }
        if bytes.get(..MAGIC.len()) != Some(MAGIC.as_slice()) {
            let head = bytes.get(..MAGIC.len()).unwrap_or(bytes);
            self.error(
                Loc::file(0),
                "file",
                format!("MCAP magic {}", bytes_hex(MAGIC)),
                format!("{} (not an MCAP file)", bytes_hex(head)),
            );
            return;
        }
        // With the end magic present, records run up to it; without (a torn part), to the end.
        let tail_magic = len >= 2 * MAGIC.len() as u64
            && bytes.get(bytes.len() - MAGIC.len()..) == Some(MAGIC.as_slice());
        let records_end = if tail_magic {
            bytes.len() - MAGIC.len()
        } else {
            bytes.len()
        };
        if !tail_magic {
            let tail_start = bytes.len().saturating_sub(MAGIC.len());
            let tail = bytes.get(tail_start..).unwrap_or_default();
            self.error(
                Loc::file(tail_start as u64),
                "file",
                format!("MCAP magic {} at the end of the file", bytes_hex(MAGIC)),
                format!("{} (truncated or unfinished part?)", bytes_hex(tail)),
            );
        }
        let region = bytes.get(MAGIC.len()..records_end).unwrap_or_default();
        let mut records = Records::new(region, MAGIC.len() as u64);
        let mut stopped_at = None;
        for record in records.by_ref() {
            match record {
                Ok(record) => {
                    self.record(record);
                    if self.footer_end.is_some() {
                        break;
                    }
                }
                Err(err) => {
                    self.framing_error(err, None, "file");
                    stopped_at = Some(match err {
                        FramingError::TruncatedPrefix { offset, .. }
                        | FramingError::LengthBeyondEnd { offset, .. } => offset,
                    });
                }
            }
        }
        let walked_to = MAGIC.len() as u64 + records.position() as u64;
        self.close_open_chunk();
        match self.footer_end {
            Some(footer_end) if footer_end < records_end as u64 => {
                self.error(
                    Loc::file(footer_end),
                    "file",
                    "the end magic right after the Footer",
                    format!("{} more bytes", records_end as u64 - footer_end),
                );
            }
            Some(_) => self.finished = tail_magic,
            None => {
                let at = stopped_at.unwrap_or(walked_to);
                if self.data_end.is_none() {
                    self.error(
                        Loc::file(at),
                        "DataEnd",
                        "a DataEnd record ending the data section",
                        "none",
                    );
                }
                self.error(
                    Loc::file(at),
                    "Footer",
                    "a Footer record before the end magic",
                    "none",
                );
            }
        }
        self.finish_checks();
    }

    fn framing_error(&mut self, err: FramingError, chunk: Option<u64>, container: &'static str) {
        let (loc_offset, record, expected, found) = match err {
            FramingError::TruncatedPrefix { offset, available } => (
                offset,
                container,
                "a 9-byte record prefix (opcode and length)".to_owned(),
                format!("only {available} bytes left"),
            ),
            FramingError::LengthBeyondEnd {
                opcode,
                offset,
                claimed,
                available,
            } => (
                offset,
                record_name(opcode),
                format!(
                    "a record length within the {} ({available} bytes left)",
                    if chunk.is_some() { "chunk" } else { "file" }
                ),
                format!("length {claimed}"),
            ),
        };
        let loc = match chunk {
            Some(chunk_offset) => Loc {
                offset: chunk_offset,
                in_chunk: Some(loc_offset),
            },
            None => Loc::file(loc_offset),
        };
        self.error(loc, record, expected, found);
    }

    fn record(&mut self, rec: RawRecord<'a>) {
        let loc = Loc::file(rec.offset);
        let first = self.records_seen == 0;
        self.records_seen += 1;
        if first && rec.opcode != op::HEADER {
            self.error(
                loc,
                record_name(rec.opcode),
                "a Header as the first record",
                format!("{} record", record_name(rec.opcode)),
            );
        }
        if rec.opcode != op::MESSAGE_INDEX {
            self.close_open_chunk();
        }
        match rec.opcode {
            0x00 => self.error(
                loc,
                "file",
                "a valid opcode (0x00 is not one)",
                "opcode 0x00",
            ),
            op::HEADER => {
                if !first {
                    self.error(
                        loc,
                        "Header",
                        "a Header only as the first record",
                        "another Header",
                    );
                }
                match parse::Header::parse(rec.body) {
                    Ok(header) if first => {
                        self.profile = Some(header.profile.to_owned());
                        self.library = Some(header.library.to_owned());
                    }
                    Ok(_) => {}
                    Err(err) => self.field_error(loc, rec.opcode, err),
                }
            }
            op::FOOTER => self.footer(rec),
            op::DATA_END => self.data_end(rec),
            // Records for the summary and summary-offset sections.
            op::CHUNK_INDEX
            | op::ATTACHMENT_INDEX
            | op::METADATA_INDEX
            | op::STATISTICS
            | op::SUMMARY_OFFSET
                if self.section == Section::Data =>
            {
                self.error(
                    loc,
                    record_name(rec.opcode),
                    "only data-section records before DataEnd",
                    format!("a {} record in the data section", record_name(rec.opcode)),
                );
            }
            _ if self.section == Section::Data => self.data_record(rec),
            _ => self.summary_record(rec),
        }
    }

    // ---- data section ----------------------------------------------------------------------

    fn data_record(&mut self, rec: RawRecord<'a>) {
        let loc = Loc::file(rec.offset);
        match rec.opcode {
            op::SCHEMA | op::CHANNEL | op::MESSAGE => self.chunkable_record(rec, loc, None),
            op::CHUNK => self.chunk(rec),
            op::MESSAGE_INDEX => self.message_index(rec),
            op::ATTACHMENT => self.attachment(rec),
            op::METADATA => self.metadata_record(rec),
            // Private (0x80..) and reserved opcodes are skipped by length.
            _ => {}
        }
    }

    /// Schema, Channel or Message, at the top level or inside a chunk.
    fn chunkable_record(&mut self, rec: RawRecord<'_>, loc: Loc, chunk: Option<&mut ChunkScan>) {
        match rec.opcode {
            op::SCHEMA => match parse::Schema::parse(rec.body) {
                Ok(schema) => self.define_schema(schema, loc),
                Err(err) => self.field_error(loc, rec.opcode, err),
            },
            op::CHANNEL => match parse::Channel::parse(rec.body) {
                Ok(channel) => self.define_channel(channel, loc),
                Err(err) => self.field_error(loc, rec.opcode, err),
            },
            op::MESSAGE => match MessageHeader::parse(rec.body) {
                Ok(message) => self.message(message, loc, chunk),
                Err(err) => self.field_error(loc, rec.opcode, err),
            },
            _ => {}
        }
    }

    fn define_schema(&mut self, schema: parse::Schema<'_>, loc: Loc) {
        if schema.id == 0 {
            self.warning(
                loc,
                "Schema",
                "a non-zero schema id (readers ignore id 0)",
                "id 0",
            );
            return;
        }
        match self.schemas.get(&schema.id) {
            Some(existing) => {
                if let Some(diff) = schema_difference(existing, &schema) {
                    self.error(
                        loc,
                        "Schema",
                        format!("schema {} identical to its earlier definition", schema.id),
                        diff,
                    );
                }
            }
            None => {
                self.schemas.insert(
                    schema.id,
                    SchemaDef {
                        name: schema.name.to_owned(),
                        encoding: schema.encoding.to_owned(),
                        data: schema.data.to_owned(),
                    },
                );
            }
        }
    }

    fn channel_index(&self, id: u16) -> Option<usize> {
        let slot = *self.channel_slots.get(usize::from(id))?;
        (slot != NO_CHANNEL).then_some(slot as usize)
    }

    fn define_channel(&mut self, channel: parse::Channel<'_>, loc: Loc) {
        if channel.schema_id != 0 && !self.schemas.contains_key(&channel.schema_id) {
            self.error(
                loc,
                "Channel",
                format!(
                    "schema {} defined before channel {} uses it",
                    channel.schema_id, channel.id
                ),
                "no such schema earlier in the data section",
            );
        }
        if let Some(existing) = self
            .channel_index(channel.id)
            .and_then(|i| self.channels.get(i))
        {
            if let Some(diff) = channel_difference(existing, &channel) {
                self.error(
                    loc,
                    "Channel",
                    format!("channel {} identical to its earlier definition", channel.id),
                    diff,
                );
            }
            return;
        }
        if self.channel_slots.is_empty() {
            self.channel_slots = vec![NO_CHANNEL; usize::from(u16::MAX) + 1];
        }
        let index = self.channels.len() as u32;
        if let Some(slot) = self.channel_slots.get_mut(usize::from(channel.id)) {
            *slot = index;
        }
        self.channels.push(ChannelDef {
            id: channel.id,
            schema_id: channel.schema_id,
            topic: channel.topic.to_owned(),
            message_encoding: channel.message_encoding.to_owned(),
            metadata: channel.metadata.to_owned(),
            message_count: 0,
            log_time_range: None,
            chunked_message_count: 0,
        });
    }

    fn message(&mut self, message: MessageHeader, loc: Loc, chunk: Option<&mut ChunkScan>) {
        self.message_count += 1;
        TimeRange::include(&mut self.log_time_range, message.log_time);
        let in_chunk = chunk.is_some();
        match self
            .channel_index(message.channel_id)
            .and_then(|i| self.channels.get_mut(i))
        {
            Some(channel) => {
                channel.message_count += 1;
                TimeRange::include(&mut channel.log_time_range, message.log_time);
                if in_chunk {
                    channel.chunked_message_count += 1;
                }
            }
            None => self.error(
                loc,
                "Message",
                format!(
                    "channel {} defined before its first message",
                    message.channel_id
                ),
                "no such channel earlier in the data section",
            ),
        }
        match chunk {
            Some(scan) => scan.message(message, loc.in_chunk.unwrap_or_default()),
            None => {
                self.loose_messages += 1;
                self.first_loose_message.get_or_insert(loc.offset);
            }
        }
    }

    fn chunk(&mut self, rec: RawRecord<'a>) {
        let loc = Loc::file(rec.offset);
        let chunk = match parse::Chunk::parse(rec.body) {
            Ok(chunk) => chunk,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        let index = self.chunks.len();
        self.chunks.push(ChunkInfo {
            offset: rec.offset,
            total_len: rec.total_len(),
            message_start_time: chunk.message_start_time,
            message_end_time: chunk.message_end_time,
            compression: chunk.compression.to_owned(),
            compressed_size: chunk.records.len() as u64,
            uncompressed_size: chunk.uncompressed_size,
            message_indexes: Vec::new(),
            indexed: false,
        });
        self.chunk_at.insert(rec.offset, index);
        let mut open = OpenChunk {
            chunk: index,
            messages: Vec::new(),
            per_channel: HashMap::new(),
            indexed_channels: HashSet::new(),
            contents_known: false,
        };
        let mut buf = std::mem::take(&mut self.scratch);
        if let Some(records) = self.chunk_contents(&chunk, loc, &mut buf) {
            let mut scan = ChunkScan::default();
            self.scan_chunk_records(records, rec.offset, &mut scan);
            self.check_chunk_times(&chunk, loc, &scan);
            open.messages = scan.messages;
            open.per_channel = scan.per_channel;
            open.contents_known = true;
        }
        self.scratch = buf;
        self.open_chunk = Some(open);
    }

    /// Decompresses and CRC-checks a chunk body; `None` when its contents cannot be checked.
    fn chunk_contents<'b>(
        &mut self,
        chunk: &parse::Chunk<'b>,
        loc: Loc,
        buf: &'b mut Vec<u8>,
    ) -> Option<&'b [u8]> {
        let declared = chunk.uncompressed_size;
        let compressed = chunk.records.len() as u64;
        let contents: &'b [u8] = if chunk.compression.is_empty() {
            if compressed != declared {
                self.error(
                    loc,
                    "Chunk",
                    format!(
                        "uncompressed_size {declared} equal to the size of the uncompressed records"
                    ),
                    format!("{compressed} bytes of records"),
                );
            }
            chunk.records
        } else {
            if !matches!(chunk.compression, "zstd" | "lz4") {
                self.error(
                    loc,
                    "Chunk",
                    "compression \"\", \"zstd\" or \"lz4\"",
                    quoted(chunk.compression),
                );
                return None;
            }
            if declared > self.options.max_chunk_uncompressed_bytes {
                self.error(
                    loc,
                    "Chunk",
                    format!(
                        "uncompressed_size at most {} bytes (the verify limit; contents not checked)",
                        self.options.max_chunk_uncompressed_bytes
                    ),
                    format!("{declared} bytes"),
                );
                return None;
            }
            let possible = compressed
                .saturating_mul(MAX_EXPANSION_RATIO)
                .saturating_add(4096);
            if declared > possible {
                self.error(
                    loc,
                    "Chunk",
                    format!(
                        "an uncompressed_size that {compressed} compressed bytes could expand to"
                    ),
                    format!("{declared} bytes"),
                );
                return None;
            }
            if let Err(err) =
                self.decoder
                    .decompress(chunk.compression, chunk.records, declared, buf)
            {
                self.error(
                    loc,
                    "Chunk",
                    format!(
                        "{} records decompressing to uncompressed_size {declared} bytes",
                        chunk.compression
                    ),
                    err,
                );
                return None;
            }
            let produced = buf.len() as u64;
            if produced != declared {
                let found = if produced > declared {
                    "more bytes".to_owned()
                } else {
                    format!("{produced} bytes")
                };
                self.error(
                    loc,
                    "Chunk",
                    format!("records decompressing to uncompressed_size {declared} bytes"),
                    found,
                );
                buf.truncate(usize::try_from(declared).unwrap_or(usize::MAX));
            }
            buf.as_slice()
        };
        if chunk.uncompressed_crc != 0 {
            let crc = crc32fast::hash(contents);
            if crc != chunk.uncompressed_crc {
                self.error(
                    loc,
                    "Chunk",
                    format!("uncompressed_crc {:#010x}", chunk.uncompressed_crc),
                    format!("CRC {crc:#010x} of the decompressed records"),
                );
            }
        }
        Some(contents)
    }

    fn scan_chunk_records(&mut self, data: &[u8], chunk_offset: u64, scan: &mut ChunkScan) {
        for inner in Records::new(data, 0) {
            match inner {
                Ok(rec) => {
                    let loc = Loc {
                        offset: chunk_offset,
                        in_chunk: Some(rec.offset),
                    };
                    match rec.opcode {
                        op::SCHEMA | op::CHANNEL | op::MESSAGE => {
                            self.chunkable_record(rec, loc, Some(scan))
                        }
                        0x80..=0xFF => {}
                        other => self.error(
                            loc,
                            record_name(other),
                            "only Schema, Channel, Message (or private) records inside a chunk",
                            format!("a {} record", record_name(other)),
                        ),
                    }
                }
                Err(err) => self.framing_error(err, Some(chunk_offset), "Chunk"),
            }
        }
        if scan.disordered > 0 {
            self.warning(
                Loc {
                    offset: chunk_offset,
                    in_chunk: scan.first_disorder,
                },
                "Chunk",
                "messages in log_time order within the chunk",
                format!(
                    "{} messages logged earlier than the message before them",
                    scan.disordered
                ),
            );
        }
    }

    fn check_chunk_times(&mut self, chunk: &parse::Chunk<'_>, loc: Loc, scan: &ChunkScan) {
        let found = (chunk.message_start_time, chunk.message_end_time);
        match scan.time_range {
            Some(range) if found != (range.start_ns, range.end_ns) => self.error(
                loc,
                "Chunk",
                format!(
                    "message_start_time..message_end_time {}..{} (its messages' log times)",
                    range.start_ns, range.end_ns
                ),
                format!("{}..{}", found.0, found.1),
            ),
            None if found != (0, 0) => self.warning(
                loc,
                "Chunk",
                "message_start_time..message_end_time 0..0 for a chunk without messages",
                format!("{}..{}", found.0, found.1),
            ),
            _ => {}
        }
    }

    /// Ends the run of MessageIndex records after a chunk: every channel of the chunk needs one
    /// once any is present.
    fn close_open_chunk(&mut self) {
        let Some(open) = self.open_chunk.take() else {
            return;
        };
        if open.indexed_channels.is_empty() || !open.contents_known {
            return;
        }
        let mut missing: Vec<u16> = open
            .per_channel
            .keys()
            .filter(|ch| !open.indexed_channels.contains(ch))
            .copied()
            .collect();
        if missing.is_empty() {
            return;
        }
        missing.sort_unstable();
        let offset = self.chunks.get(open.chunk).map_or(0, |c| c.offset);
        self.error(
            Loc::file(offset),
            "Chunk",
            format!(
                "a MessageIndex after the chunk for each of its channels ({})",
                id_list(&missing)
            ),
            "none for those channels",
        );
    }

    fn message_index(&mut self, rec: RawRecord<'a>) {
        let loc = Loc::file(rec.offset);
        let index = match parse::MessageIndex::parse(rec.body) {
            Ok(index) => index,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        let Some(mut open) = self.open_chunk.take() else {
            return self.error(
                loc,
                "MessageIndex",
                "MessageIndex records only right after a Chunk",
                "no Chunk before it",
            );
        };
        if let Some(chunk) = self.chunks.get_mut(open.chunk) {
            chunk
                .message_indexes
                .push((index.channel_id, rec.offset, rec.total_len()));
        }
        if !open.indexed_channels.insert(index.channel_id) {
            self.error(
                loc,
                "MessageIndex",
                format!(
                    "one MessageIndex for channel {} per chunk",
                    index.channel_id
                ),
                "a second one",
            );
        }
        if open.contents_known {
            self.check_message_index_entries(&index, loc, &open);
        }
        self.open_chunk = Some(open);
    }

    fn check_message_index_entries(
        &mut self,
        index: &parse::MessageIndex<'_>,
        loc: Loc,
        open: &OpenChunk,
    ) {
        let channel = index.channel_id;
        let in_chunk = open.per_channel.get(&channel).copied().unwrap_or(0);
        let listed = index.entry_count() as u64;
        if listed != in_chunk {
            self.error(
                loc,
                "MessageIndex",
                format!("{in_chunk} entries (the chunk's messages on channel {channel})"),
                format!("{listed} entries"),
            );
        }
        let mut bad = 0u64;
        let mut first_bad = None;
        for (log_time, offset) in index.entries() {
            let found = open
                .messages
                .binary_search_by_key(&offset, |m| m.offset)
                .ok()
                .and_then(|i| open.messages.get(i));
            let problem = match found {
                None => Some(format!("no Message record at chunk offset {offset}")),
                Some(m) if m.channel_id != channel => Some(format!(
                    "the Message at chunk offset {offset} is on channel {}",
                    m.channel_id
                )),
                Some(m) if m.log_time != log_time => Some(format!(
                    "the Message at chunk offset {offset} has log_time {} (index says {log_time})",
                    m.log_time
                )),
                Some(_) => None,
            };
            if let Some(problem) = problem {
                bad += 1;
                first_bad.get_or_insert(problem);
            }
        }
        if let Some(first_bad) = first_bad {
            let more = if bad > 1 {
                format!(" ({} more bad entries)", bad - 1)
            } else {
                String::new()
            };
            self.error(
                loc,
                "MessageIndex",
                format!(
                    "entries pointing at Messages on channel {channel} with the listed log_time"
                ),
                format!("{first_bad}{more}"),
            );
        }
    }

    fn attachment(&mut self, rec: RawRecord<'a>) {
        let loc = Loc::file(rec.offset);
        let attachment = match parse::Attachment::parse(rec.body) {
            Ok(attachment) => attachment,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        if attachment.crc != 0 {
            let crc = crc32fast::hash(attachment.crc_covered);
            if crc != attachment.crc {
                self.error(
                    loc,
                    "Attachment",
                    format!("crc {:#010x}", attachment.crc),
                    format!("CRC {crc:#010x} of the attachment fields"),
                );
            }
        }
        self.attachment_at
            .insert(rec.offset, self.attachments.len());
        self.attachments.push(AttachmentInfo {
            offset: rec.offset,
            total_len: rec.total_len(),
            log_time: attachment.log_time,
            create_time: attachment.create_time,
            data_size: attachment.data.len() as u64,
            name: attachment.name.to_owned(),
            media_type: attachment.media_type.to_owned(),
            indexed: false,
        });
    }

    fn metadata_record(&mut self, rec: RawRecord<'a>) {
        let loc = Loc::file(rec.offset);
        let metadata = match parse::Metadata::parse(rec.body) {
            Ok(metadata) => metadata,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        self.metadata_at.insert(rec.offset, self.metadata.len());
        self.metadata.push(MetadataInfo {
            offset: rec.offset,
            total_len: rec.total_len(),
            name: metadata.name.to_owned(),
            indexed: false,
        });
    }

    fn data_end(&mut self, rec: RawRecord<'a>) {
        let loc = Loc::file(rec.offset);
        if self.section != Section::Data {
            return self.error(
                loc,
                "DataEnd",
                "a single DataEnd",
                "another DataEnd after the data section",
            );
        }
        self.section = Section::Summary;
        self.data_end = Some((rec.offset, rec.offset + rec.total_len()));
        let data_end = match parse::DataEnd::parse(rec.body) {
            Ok(data_end) => data_end,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        if rec.body.len() != 4 {
            self.warning(
                loc,
                "DataEnd",
                "content length 4 (DataEnd is never extended)",
                format!("{}", rec.body.len()),
            );
        }
        if data_end.data_section_crc != 0 {
            let covered = usize::try_from(rec.offset)
                .ok()
                .and_then(|end| self.bytes.get(..end))
                .unwrap_or_default();
            let crc = crc32fast::hash(covered);
            if crc != data_end.data_section_crc {
                self.error(
                    loc,
                    "DataEnd",
                    format!("data_section_crc {:#010x}", data_end.data_section_crc),
                    format!("CRC {crc:#010x} of the bytes before DataEnd"),
                );
            }
        }
    }

    // ---- summary section -------------------------------------------------------------------

    fn summary_record(&mut self, rec: RawRecord<'a>) {
        let loc = Loc::file(rec.offset);
        if rec.opcode == op::SUMMARY_OFFSET {
            self.section = Section::SummaryOffsets;
            self.first_summary_offset.get_or_insert(rec.offset);
            match parse::SummaryOffset::parse(rec.body) {
                Ok(offset) => self.summary_offsets.push((rec.offset, offset)),
                Err(err) => self.field_error(loc, rec.opcode, err),
            }
            return;
        }
        if self.section == Section::SummaryOffsets {
            return self.error(
                loc,
                record_name(rec.opcode),
                "only SummaryOffset records between the first SummaryOffset and the Footer",
                format!("a {} record", record_name(rec.opcode)),
            );
        }
        self.first_summary_record.get_or_insert(rec.offset);
        self.group(rec);
        match rec.opcode {
            op::SCHEMA => self.summary_schema(rec),
            op::CHANNEL => self.summary_channel(rec),
            op::CHUNK_INDEX => self.chunk_index(rec),
            op::ATTACHMENT_INDEX => self.attachment_index(rec),
            op::METADATA_INDEX => self.metadata_index(rec),
            op::STATISTICS => self.statistics(rec),
            op::MESSAGE | op::CHUNK | op::MESSAGE_INDEX | op::ATTACHMENT | op::METADATA => self.error(
                loc,
                record_name(rec.opcode),
                "only Schema, Channel, ChunkIndex, AttachmentIndex, MetadataIndex and Statistics records in the summary section",
                format!("a {} record after DataEnd", record_name(rec.opcode)),
            ),
            _ => {}
        }
    }

    fn group(&mut self, rec: RawRecord<'_>) {
        let end = rec.offset + rec.total_len();
        if let Some(last) = self.groups.last_mut().filter(|g| g.opcode == rec.opcode) {
            last.end = end;
            return;
        }
        if self.groups.iter().any(|g| g.opcode == rec.opcode) && self.misgrouped.insert(rec.opcode)
        {
            self.error(
                Loc::file(rec.offset),
                record_name(rec.opcode),
                format!(
                    "summary records grouped by opcode (all {} records together)",
                    record_name(rec.opcode)
                ),
                "a second group of them",
            );
        }
        self.groups.push(Group {
            opcode: rec.opcode,
            start: rec.offset,
            end,
        });
    }

    fn summary_schema(&mut self, rec: RawRecord<'a>) {
        let loc = Loc::file(rec.offset);
        let schema = match parse::Schema::parse(rec.body) {
            Ok(schema) => schema,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        if schema.id == 0 {
            return self.warning(
                loc,
                "Schema",
                "a non-zero schema id (readers ignore id 0)",
                "id 0",
            );
        }
        self.summary_schema_ids.insert(schema.id);
        match self.schemas.get(&schema.id) {
            None => self.error(
                loc,
                "Schema",
                format!(
                    "schema {} in the data section (the summary only repeats data-section records)",
                    schema.id
                ),
                format!(
                    "schema {} ({}) only in the summary",
                    schema.id,
                    quoted(schema.name)
                ),
            ),
            Some(existing) => {
                if let Some(diff) = schema_difference(existing, &schema) {
                    self.error(
                        loc,
                        "Schema",
                        format!(
                            "summary schema {} identical to the data section's",
                            schema.id
                        ),
                        diff,
                    );
                }
            }
        }
    }

    fn summary_channel(&mut self, rec: RawRecord<'a>) {
        let loc = Loc::file(rec.offset);
        let channel = match parse::Channel::parse(rec.body) {
            Ok(channel) => channel,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        self.summary_channel_ids.insert(channel.id);
        match self.channel_index(channel.id).and_then(|i| self.channels.get(i)) {
            None => self.error(
                loc,
                "Channel",
                format!("channel {} in the data section (the summary only repeats data-section records)", channel.id),
                format!("channel {} ({}) only in the summary", channel.id, quoted(channel.topic)),
            ),
            Some(existing) => {
                if let Some(diff) = channel_difference(existing, &channel) {
                    self.error(
                        loc,
                        "Channel",
                        format!("summary channel {} identical to the data section's", channel.id),
                        diff,
                    );
                }
            }
        }
    }

    fn chunk_index(&mut self, rec: RawRecord<'a>) {
        let loc = Loc::file(rec.offset);
        let index = match parse::ChunkIndex::parse(rec.body) {
            Ok(index) => index,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        self.chunk_index_count += 1;
        let Some(&i) = self.chunk_at.get(&index.chunk_start_offset) else {
            return self.error(
                loc,
                "ChunkIndex",
                format!(
                    "a Chunk record at chunk_start_offset {}",
                    index.chunk_start_offset
                ),
                "no Chunk starts there",
            );
        };
        let Some(chunk) = self.chunks.get_mut(i) else {
            return;
        };
        let duplicate = std::mem::replace(&mut chunk.indexed, true);
        let mut problems: Vec<(String, String)> = Vec::new();
        if duplicate {
            problems.push((
                format!("one ChunkIndex for the chunk at {}", chunk.offset),
                "a second one".to_owned(),
            ));
        }
        let mut compare = |field: &str, claimed: u64, actual: u64| {
            if claimed != actual {
                problems.push((
                    format!("{field} {actual} (the chunk at {})", chunk.offset),
                    format!("{claimed}"),
                ));
            }
        };
        compare("chunk_length", index.chunk_length, chunk.total_len);
        compare(
            "message_start_time",
            index.message_start_time,
            chunk.message_start_time,
        );
        compare(
            "message_end_time",
            index.message_end_time,
            chunk.message_end_time,
        );
        compare(
            "compressed_size",
            index.compressed_size,
            chunk.compressed_size,
        );
        compare(
            "uncompressed_size",
            index.uncompressed_size,
            chunk.uncompressed_size,
        );
        if index.compression != chunk.compression {
            problems.push((
                format!(
                    "compression {} (the chunk at {})",
                    quoted(&chunk.compression),
                    chunk.offset
                ),
                quoted(index.compression),
            ));
        }
        let mut listed = 0usize;
        for entry in parse::u16_u64_map("message_index_offsets", index.message_index_offsets) {
            let Ok((channel, offset)) = entry else { break };
            listed += 1;
            match chunk
                .message_indexes
                .iter()
                .find(|(_, at, _)| *at == offset)
            {
                None => problems.push((
                    format!(
                        "a MessageIndex for channel {channel} after the chunk at offset {offset}"
                    ),
                    "none there".to_owned(),
                )),
                Some((actual, _, _)) if *actual != channel => problems.push((
                    format!("the MessageIndex at {offset} to be for channel {channel}"),
                    format!("channel {actual}"),
                )),
                Some(_) => {}
            }
        }
        let actual_indexes = chunk.message_indexes.len();
        if listed != 0 && listed != actual_indexes {
            problems.push((
                format!("message_index_offsets listing the {actual_indexes} MessageIndex records after the chunk"),
                format!("{listed} listed"),
            ));
        }
        let actual_length: u64 = chunk.message_indexes.iter().map(|(_, _, len)| len).sum();
        let unindexed = listed == 0 && index.message_index_length == 0;
        if !unindexed && index.message_index_length != actual_length {
            problems.push((
                format!("message_index_length {actual_length} (the MessageIndex records after the chunk)"),
                format!("{}", index.message_index_length),
            ));
        }
        for (expected, found) in problems {
            self.error(loc, "ChunkIndex", expected, found);
        }
    }

    fn attachment_index(&mut self, rec: RawRecord<'a>) {
        let loc = Loc::file(rec.offset);
        let index = match parse::AttachmentIndex::parse(rec.body) {
            Ok(index) => index,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        self.attachment_index_count += 1;
        let Some(attachment) = self
            .attachment_at
            .get(&index.offset)
            .and_then(|&i| self.attachments.get_mut(i))
        else {
            return self.error(
                loc,
                "AttachmentIndex",
                format!("an Attachment record at offset {}", index.offset),
                "no Attachment starts there",
            );
        };
        let mut problems: Vec<(String, String)> = Vec::new();
        if std::mem::replace(&mut attachment.indexed, true) {
            problems.push((
                format!(
                    "one AttachmentIndex for the attachment at {}",
                    attachment.offset
                ),
                "a second one".to_owned(),
            ));
        }
        let mut compare = |field: &str, claimed: u64, actual: u64| {
            if claimed != actual {
                problems.push((
                    format!("{field} {actual} (the attachment at {})", attachment.offset),
                    format!("{claimed}"),
                ));
            }
        };
        compare("length", index.length, attachment.total_len);
        compare("log_time", index.log_time, attachment.log_time);
        compare("create_time", index.create_time, attachment.create_time);
        compare("data_size", index.data_size, attachment.data_size);
        if index.name != attachment.name {
            problems.push((
                format!("name {}", quoted(&attachment.name)),
                quoted(index.name),
            ));
        }
        if index.media_type != attachment.media_type {
            problems.push((
                format!("media_type {}", quoted(&attachment.media_type)),
                quoted(index.media_type),
            ));
        }
        for (expected, found) in problems {
            self.error(loc, "AttachmentIndex", expected, found);
        }
    }

    fn metadata_index(&mut self, rec: RawRecord<'a>) {
        let loc = Loc::file(rec.offset);
        let index = match parse::MetadataIndex::parse(rec.body) {
            Ok(index) => index,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        self.metadata_index_count += 1;
        let Some(metadata) = self
            .metadata_at
            .get(&index.offset)
            .and_then(|&i| self.metadata.get_mut(i))
        else {
            return self.error(
                loc,
                "MetadataIndex",
                format!("a Metadata record at offset {}", index.offset),
                "no Metadata starts there",
            );
        };
        let mut problems: Vec<(String, String)> = Vec::new();
        if std::mem::replace(&mut metadata.indexed, true) {
            problems.push((
                format!("one MetadataIndex for the metadata at {}", metadata.offset),
                "a second one".to_owned(),
            ));
        }
        if index.length != metadata.total_len {
            problems.push((
                format!(
                    "length {} (the metadata at {})",
                    metadata.total_len, metadata.offset
                ),
                format!("{}", index.length),
            ));
        }
        if index.name != metadata.name {
            problems.push((
                format!("name {}", quoted(&metadata.name)),
                quoted(index.name),
            ));
        }
        for (expected, found) in problems {
            self.error(loc, "MetadataIndex", expected, found);
        }
    }

    fn statistics(&mut self, rec: RawRecord<'a>) {
        let loc = Loc::file(rec.offset);
        if self.statistics_at.replace(rec.offset).is_some() {
            self.error(
                loc,
                "Statistics",
                "at most one Statistics record",
                "a second one",
            );
        }
        let stats = match parse::Statistics::parse(rec.body) {
            Ok(stats) => stats,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        let (start, end) = self
            .log_time_range
            .map_or((0, 0), |r| (r.start_ns, r.end_ns));
        let checks: [(&str, u64, u64); 8] = [
            ("message_count", stats.message_count, self.message_count),
            (
                "schema_count",
                u64::from(stats.schema_count),
                self.schemas.len() as u64,
            ),
            (
                "channel_count",
                u64::from(stats.channel_count),
                self.channels.len() as u64,
            ),
            (
                "attachment_count",
                u64::from(stats.attachment_count),
                self.attachments.len() as u64,
            ),
            (
                "metadata_count",
                u64::from(stats.metadata_count),
                self.metadata.len() as u64,
            ),
            (
                "chunk_count",
                u64::from(stats.chunk_count),
                self.chunks.len() as u64,
            ),
            ("message_start_time", stats.message_start_time, start),
            ("message_end_time", stats.message_end_time, end),
        ];
        for (field, claimed, actual) in checks {
            if claimed != actual {
                self.error(
                    loc,
                    "Statistics",
                    format!("{field} {actual} (counted in the data section)"),
                    format!("{claimed}"),
                );
            }
        }
        if stats.channel_message_counts.is_empty() {
            return;
        }
        let mut seen = HashSet::new();
        let mut problems: Vec<(String, String)> = Vec::new();
        for entry in parse::u16_u64_map("channel_message_counts", stats.channel_message_counts) {
            let Ok((channel, count)) = entry else { break };
            if !seen.insert(channel) {
                problems.push((
                    format!("one channel_message_counts entry for channel {channel}"),
                    "two".to_owned(),
                ));
                continue;
            }
            match self.channel_index(channel).and_then(|i| self.channels.get(i)) {
                None => problems.push((
                    "channel_message_counts only for channels of the data section".to_owned(),
                    format!("a count of {count} for channel {channel}, which the data section never defined"),
                )),
                Some(c) if c.message_count != count => problems.push((
                    format!("channel_message_counts[{channel}] {} (counted in the data section)", c.message_count),
                    format!("{count}"),
                )),
                Some(_) => {}
            }
        }
        let mut unlisted: Vec<u16> = self
            .channels
            .iter()
            .filter(|c| c.message_count > 0 && !seen.contains(&c.id))
            .map(|c| c.id)
            .collect();
        unlisted.sort_unstable();
        if !unlisted.is_empty() {
            problems.push((
                format!(
                    "channel_message_counts for every channel with messages ({})",
                    id_list(&unlisted)
                ),
                "no entry for them".to_owned(),
            ));
        }
        for (expected, found) in problems {
            self.error(loc, "Statistics", expected, found);
        }
        let mut not_repeated: Vec<u16> = self
            .channels
            .iter()
            .filter(|c| !self.summary_channel_ids.contains(&c.id))
            .map(|c| c.id)
            .collect();
        if !not_repeated.is_empty() {
            not_repeated.sort_unstable();
            self.warning(
                loc,
                "Statistics",
                format!(
                    "every Channel repeated in the summary before a Statistics with channel_message_counts ({})",
                    id_list(&not_repeated)
                ),
                "not repeated",
            );
        }
    }

    fn footer(&mut self, rec: RawRecord<'a>) {
        let loc = Loc::file(rec.offset);
        self.footer_end = Some(rec.offset + rec.total_len());
        if self.section == Section::Data {
            self.error(loc, "Footer", "a DataEnd record before the Footer", "none");
        }
        let footer = match parse::Footer::parse(rec.body) {
            Ok(footer) => footer,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        if rec.body.len() != 20 {
            self.error(
                loc,
                "Footer",
                "content length 20 (readers find the Footer from the end of the file)",
                format!("{}", rec.body.len()),
            );
        }
        let expected_start = self.first_summary_record.unwrap_or(0);
        if footer.summary_start != expected_start {
            self.error(
                loc,
                "Footer",
                format!("summary_start {expected_start} (the first summary record, or 0 for none)"),
                format!("{}", footer.summary_start),
            );
        }
        let expected_offsets = self.first_summary_offset.unwrap_or(0);
        if footer.summary_offset_start != expected_offsets {
            self.error(
                loc,
                "Footer",
                format!("summary_offset_start {expected_offsets} (the first SummaryOffset record, or 0 for none)"),
                format!("{}", footer.summary_offset_start),
            );
        }
        if footer.summary_crc != 0
            && let Some((_, data_end)) = self.data_end
        {
            let covered = usize::try_from(data_end)
                .ok()
                .zip(usize::try_from(rec.offset + RECORD_PREFIX_LEN as u64 + 16).ok())
                .and_then(|(from, to)| self.bytes.get(from..to))
                .unwrap_or_default();
            let crc = crc32fast::hash(covered);
            if crc != footer.summary_crc {
                self.error(
                    loc,
                    "Footer",
                    format!("summary_crc {:#010x}", footer.summary_crc),
                    format!("CRC {crc:#010x} of the summary through summary_offset_start"),
                );
            }
        }
    }

    // ---- after the walk --------------------------------------------------------------------

    fn finish_checks(&mut self) {
        let offsets = std::mem::take(&mut self.summary_offsets);
        let mut opcodes_seen = HashSet::new();
        for (at, offset) in &offsets {
            let loc = Loc::file(*at);
            let name = record_name(offset.group_opcode);
            if !opcodes_seen.insert(offset.group_opcode) {
                self.error(
                    loc,
                    "SummaryOffset",
                    format!("one SummaryOffset for the {name} group"),
                    "a second one",
                );
            }
            let group = self.groups.iter().find(|g| g.start == offset.group_start);
            let problem = match group {
                None => Some((
                    format!(
                        "a group of {name} records starting at group_start {}",
                        offset.group_start
                    ),
                    "no summary group starts there".to_owned(),
                )),
                Some(g) if g.opcode != offset.group_opcode => Some((
                    format!("the group at {} to hold {name} records", offset.group_start),
                    format!("{} records", record_name(g.opcode)),
                )),
                Some(g) if g.end - g.start != offset.group_length => Some((
                    format!(
                        "group_length {} (all {name} records of the summary)",
                        g.end - g.start
                    ),
                    format!("{}", offset.group_length),
                )),
                Some(_) => None,
            };
            if let Some((expected, found)) = problem {
                self.error(loc, "SummaryOffset", expected, found);
            }
        }
        if self.chunk_index_count > 0 {
            let unindexed: Vec<u64> = self
                .chunks
                .iter()
                .filter(|c| !c.indexed)
                .map(|c| c.offset)
                .collect();
            for offset in unindexed {
                self.error(
                    Loc::file(offset),
                    "Chunk",
                    "a ChunkIndex for this chunk in the summary",
                    "none",
                );
            }
            if let Some(first) = self.first_loose_message {
                self.warning(
                    Loc::file(first),
                    "Message",
                    "every Message inside a chunk when the summary has ChunkIndex records",
                    format!(
                        "{} messages outside chunks, invisible to indexed readers",
                        self.loose_messages
                    ),
                );
            }
            self.check_summary_copies();
        }
        if self.attachment_index_count > 0 {
            let unindexed: Vec<u64> = self
                .attachments
                .iter()
                .filter(|a| !a.indexed)
                .map(|a| a.offset)
                .collect();
            for offset in unindexed {
                self.error(
                    Loc::file(offset),
                    "Attachment",
                    "an AttachmentIndex for this attachment in the summary",
                    "none",
                );
            }
        }
        if self.metadata_index_count > 0 {
            let unindexed: Vec<u64> = self
                .metadata
                .iter()
                .filter(|m| !m.indexed)
                .map(|m| m.offset)
                .collect();
            for offset in unindexed {
                self.error(
                    Loc::file(offset),
                    "Metadata",
                    "a MetadataIndex for this metadata in the summary",
                    "none",
                );
            }
        }
    }

    /// Indexed readers look channels and schemas up in the summary only.
    fn check_summary_copies(&mut self) {
        let mut channels: Vec<u16> = Vec::new();
        let mut schemas: Vec<u16> = Vec::new();
        for c in self.channels.iter().filter(|c| c.chunked_message_count > 0) {
            if !self.summary_channel_ids.contains(&c.id) {
                channels.push(c.id);
            }
            if c.schema_id != 0
                && !self.summary_schema_ids.contains(&c.schema_id)
                && !schemas.contains(&c.schema_id)
            {
                schemas.push(c.schema_id);
            }
        }
        let at = self.first_summary_record.unwrap_or(0);
        if !channels.is_empty() {
            channels.sort_unstable();
            self.warning(
                Loc::file(at),
                "Channel",
                format!(
                    "a summary copy of every channel of indexed chunks ({})",
                    id_list(&channels)
                ),
                "not in the summary",
            );
        }
        if !schemas.is_empty() {
            schemas.sort_unstable();
            self.warning(
                Loc::file(at),
                "Schema",
                format!(
                    "a summary copy of every schema of indexed chunks ({})",
                    id_list(&schemas)
                ),
                "not in the summary",
            );
        }
    }

    fn into_report(self) -> Report {
        let mut channels: Vec<ChannelSummary> = self
            .channels
            .iter()
            .map(|c| ChannelSummary {
                id: c.id,
                topic: c.topic.clone(),
                message_encoding: c.message_encoding.clone(),
                schema_id: c.schema_id,
                schema_name: self.schemas.get(&c.schema_id).map(|s| s.name.clone()),
                message_count: c.message_count,
                log_time_range_ns: c.log_time_range,
            })
            .collect();
        channels.sort_by_key(|c| c.id);
        Report {
            part: self.sink.part,
            size_bytes: self.bytes.len() as u64,
            findings: self.sink.findings,
            error_count: self.sink.errors,
            warning_count: self.sink.warnings,
            unlisted_findings: self.sink.unlisted,
            finished: self.finished,
            profile: self.profile,
            library: self.library,
            message_count: self.message_count,
            schema_count: self.schemas.len() as u64,
            channel_count: self.channels.len() as u64,
            chunk_count: self.chunks.len() as u64,
            attachment_count: self.attachments.len() as u64,
            metadata_count: self.metadata.len() as u64,
            log_time_range_ns: self.log_time_range,
            channels,
        }
    }
}

/// What one chunk's records contained.
#[derive(Default)]
struct ChunkScan {
    messages: Vec<ChunkMessage>,
    per_channel: HashMap<u16, u64>,
    time_range: Option<TimeRange>,
    last_log_time: Option<u64>,
    disordered: u64,
    first_disorder: Option<u64>,
}

impl ChunkScan {
    fn message(&mut self, message: MessageHeader, offset: u64) {
        self.messages.push(ChunkMessage {
            offset,
            channel_id: message.channel_id,
            log_time: message.log_time,
        });
        *self.per_channel.entry(message.channel_id).or_insert(0) += 1;
        TimeRange::include(&mut self.time_range, message.log_time);
        if self
            .last_log_time
            .is_some_and(|last| message.log_time < last)
        {
            self.disordered += 1;
            self.first_disorder.get_or_insert(offset);
        }
        self.last_log_time = Some(message.log_time);
    }
}

fn id_list(ids: &[u16]) -> String {
    const SHOWN: usize = 10;
    let mut out = ids
        .iter()
        .take(SHOWN)
        .map(|id| id.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        out.push_str(&format!(" and {} more", ids.len() - SHOWN));
    }
    out
}

fn schema_difference(existing: &SchemaDef, schema: &parse::Schema<'_>) -> Option<String> {
    if existing.name != schema.name {
        Some(format!(
            "name {} instead of {}",
            quoted(schema.name),
            quoted(&existing.name)
        ))
    } else if existing.encoding != schema.encoding {
        Some(format!(
            "encoding {} instead of {}",
            quoted(schema.encoding),
            quoted(&existing.encoding)
        ))
    } else if existing.data != schema.data {
        Some(format!(
            "different data ({} bytes instead of {})",
            schema.data.len(),
            existing.data.len()
        ))
    } else {
        None
    }
}

fn channel_difference(existing: &ChannelDef, channel: &parse::Channel<'_>) -> Option<String> {
    if existing.schema_id != channel.schema_id {
        Some(format!(
            "schema_id {} instead of {}",
            channel.schema_id, existing.schema_id
        ))
    } else if existing.topic != channel.topic {
        Some(format!(
            "topic {} instead of {}",
            quoted(channel.topic),
            quoted(&existing.topic)
        ))
    } else if existing.message_encoding != channel.message_encoding {
        Some(format!(
            "message_encoding {} instead of {}",
            quoted(channel.message_encoding),
            quoted(&existing.message_encoding)
        ))
    } else if existing.metadata != channel.metadata
        && sorted_map(&existing.metadata) != sorted_map(channel.metadata)
    {
        Some("different metadata".to_owned())
    } else {
        None
    }
}

fn sorted_map(bytes: &[u8]) -> Vec<(&str, &str)> {
    let mut entries: Vec<(&str, &str)> = parse::string_map("metadata", bytes)
        .map_while(Result::ok)
        .collect();
    entries.sort_unstable();
    entries
}
