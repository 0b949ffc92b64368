//! The checker: one linear walk over the records, then cross-checks of the summary against what
//! the walk saw.
//!
//! Everything the data section defines or contains is recorded as the walk goes; summary records
//! come after DataEnd, so each is checked against a complete picture of the data section the
//! moment it is parsed. The walk reads the file in order, one record at a time, so memory is one
//! record (at most the record limit), one decompressed chunk (its size checked before
//! allocating), and small per-record bookkeeping; never the file. The CRCs of the data section
//! and of the summary are computed as the walk passes over their bytes.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom};

use super::VerifyOptions;

mod summary;
use super::decompress::{ChunkDecoder, MAX_EXPANSION_RATIO};
use super::parse::{
    self, FieldError, FramingError, MAGIC, MessageHeader, RECORD_PREFIX_LEN, RawRecord, Records,
    op, record_name,
};
use super::report::{ChannelSummary, Finding, Report, Severity, TimeRange};
use crate::message::ChunkDamage;

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
    /// Its contents do not check out (CRC, decompression, size): readers skip it.
    damaged: bool,
    /// Messages its MessageIndex records list (`None`: none, or one that does not parse).
    listed_messages: Option<u64>,
    /// A MessageIndex record of it did not parse: the count is unknown.
    listing_broken: bool,
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
    /// Length of the file being checked.
    file_len: u64,
    /// CRC of the bytes read so far in the data section (what DataEnd's CRC covers).
    data_crc: crc32fast::Hasher,
    /// CRC of the records read so far after DataEnd (what the Footer's summary CRC covers).
    summary_crc: crc32fast::Hasher,
    /// False once a record of the data section was skipped unread: its CRC cannot be checked.
    data_crc_complete: bool,
    /// False once a summary record was skipped unread.
    summary_crc_complete: bool,
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
    grouped_opcodes: HashSet<u8>,
    misgrouped: HashSet<u8>,
    summary_schema_ids: HashSet<u16>,
    summary_channel_ids: HashSet<u16>,
    chunk_index_count: u64,
    attachment_index_count: u64,
    metadata_index_count: u64,
    statistics_at: Option<u64>,
    summary_offsets: Vec<(u64, parse::SummaryOffset)>,
    /// Where the Footer starts: the end of the summary.
    footer_at: Option<u64>,
    footer_end: Option<u64>,
    finished: bool,
    profile: Option<String>,
    library: Option<String>,
}

const NO_CHANNEL: u32 = u32::MAX;

/// Verifies one part read from `input`, `file_len` bytes long, in one pass.
pub(crate) fn check<R: Read + Seek>(
    part: &str,
    input: &mut R,
    file_len: u64,
    options: &VerifyOptions,
) -> Report {
    let mut checker = Checker {
        file_len,
        data_crc: crc32fast::Hasher::new(),
        summary_crc: crc32fast::Hasher::new(),
        data_crc_complete: true,
        summary_crc_complete: true,
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
        grouped_opcodes: HashSet::new(),
        misgrouped: HashSet::new(),
        summary_schema_ids: HashSet::new(),
        summary_channel_ids: HashSet::new(),
        chunk_index_count: 0,
        attachment_index_count: 0,
        metadata_index_count: 0,
        statistics_at: None,
        summary_offsets: Vec::new(),
        footer_at: None,
        footer_end: None,
        finished: false,
        profile: None,
        library: None,
    };
    checker.run(input);
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

    /// One pass over the file, in order: each record is read into one reused buffer, checked,
    /// and dropped, so memory is bounded by the largest record (at most the record limit), not
    /// by the file.
    fn run<R: Read + Seek>(&mut self, input: &mut R) {
        let len = self.file_len;
        if len == 0 {
            self.error(
                Loc::file(0),
                "file",
                "an MCAP file (starting with the magic)",
                "an empty file",
            );
            return;
        }
        let magic_len = MAGIC.len() as u64;
        let mut head = [0u8; MAGIC.len()];
        let head_len = usize::try_from(len.min(magic_len)).unwrap_or(MAGIC.len());
        let head = head.get_mut(..head_len).unwrap_or_default();
        if let Err(err) = read_at(input, 0, head) {
            return self.read_failed(0, err);
        }
        if head != MAGIC.as_slice() {
            self.error(
                Loc::file(0),
                "file",
                format!("MCAP magic {}", bytes_hex(MAGIC)),
                format!("{} (not an MCAP file)", bytes_hex(head)),
            );
            return;
        }
        // With the end magic present, records run up to it; without (a torn part), to the end.
        let tail_start = len.saturating_sub(magic_len);
        let mut tail = [0u8; MAGIC.len()];
        let tail = tail.get_mut(..head_len).unwrap_or_default();
        if let Err(err) = read_at(input, tail_start, tail) {
            return self.read_failed(tail_start, err);
        }
        let tail_magic = len >= 2 * magic_len && tail == MAGIC.as_slice();
        let records_end = if tail_magic { tail_start } else { len };
        if !tail_magic {
            self.error(
                Loc::file(tail_start),
                "file",
                format!("MCAP magic {} at the end of the file", bytes_hex(MAGIC)),
                format!("{} (truncated or unfinished part?)", bytes_hex(tail)),
            );
        }
        if let Err(err) = input.seek(SeekFrom::Start(magic_len)) {
            return self.read_failed(magic_len, err);
        }
        self.data_crc.update(MAGIC);
        let mut pos = magic_len;
        let mut body = Vec::new();
        let mut stopped_at = None;
        while pos < records_end {
            let available = records_end - pos;
            let mut prefix = [0u8; RECORD_PREFIX_LEN];
            if available < RECORD_PREFIX_LEN as u64 {
                self.framing_error(
                    FramingError::TruncatedPrefix {
                        offset: pos,
                        available,
                    },
                    None,
                    "file",
                );
                stopped_at = Some(pos);
                break;
            }
            if let Err(err) = input.read_exact(&mut prefix) {
                self.read_failed(pos, err);
                stopped_at = Some(pos);
                break;
            }
            let [opcode, len_bytes @ ..] = prefix;
            let claimed = u64::from_le_bytes(len_bytes);
            let after_prefix = available - RECORD_PREFIX_LEN as u64;
            if claimed > after_prefix {
                let err = FramingError::LengthBeyondEnd {
                    opcode,
                    offset: pos,
                    claimed,
                    available: after_prefix,
                };
                self.framing_error(err, None, "file");
                stopped_at = Some(pos);
                break;
            }
            let in_data = self.section == Section::Data;
            let body_len = usize::try_from(claimed)
                .ok()
                .filter(|_| claimed <= self.options.max_record_bytes);
            let Some(body_len) = body_len else {
                if let Err(err) = self.skip_record(input, pos, opcode, claimed) {
                    self.read_failed(pos, err);
                    stopped_at = Some(pos);
                    break;
                }
                pos += RECORD_PREFIX_LEN as u64 + claimed;
                continue;
            };
            body.clear();
            body.resize(body_len, 0);
            if let Err(err) = input.read_exact(&mut body) {
                self.read_failed(pos, err);
                stopped_at = Some(pos);
                break;
            }
            self.record(RawRecord {
                opcode,
                offset: pos,
                body: &body,
            });
            // Everything before DataEnd is covered by its CRC; DataEnd itself by neither CRC;
            // what follows it by the Footer's.
            if in_data && self.section == Section::Data {
                self.data_crc.update(&prefix);
                self.data_crc.update(&body);
            } else if !in_data {
                self.summary_crc.update(&prefix);
                self.summary_crc.update(&body);
            }
            pos += RECORD_PREFIX_LEN as u64 + claimed;
            if self.footer_end.is_some() {
                break;
            }
        }
        let walked_to = pos;
        if self.records_seen == 0 {
            self.error(
                Loc::file(magic_len),
                "Header",
                "a Header as the first record",
                "no records",
            );
        }
        self.close_open_chunk();
        match self.footer_end {
            Some(footer_end) if footer_end < records_end => {
                self.error(
                    Loc::file(footer_end),
                    "file",
                    "the end magic right after the Footer",
                    format!("{} more bytes", records_end - footer_end),
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

    /// A record longer than the record limit: reported and skipped unread.
    fn skip_record<R: Read + Seek>(
        &mut self,
        input: &mut R,
        pos: u64,
        opcode: u8,
        claimed: u64,
    ) -> std::io::Result<()> {
        self.records_seen += 1;
        if opcode != op::MESSAGE_INDEX {
            self.close_open_chunk();
        }
        self.error(
            Loc::file(pos),
            record_name(opcode),
            format!(
                "a record of at most {} bytes (the verify limit; contents not checked)",
                self.options.max_record_bytes
            ),
            format!("{claimed} bytes"),
        );
        // Not read, so the CRC that covers it cannot be checked: the finding above says why
        // (reading a sparse file's terabyte claim to compute a CRC would be a hang).
        if self.section == Section::Data {
            self.data_crc_complete = false;
        } else {
            self.summary_crc_complete = false;
        }
        input.seek(SeekFrom::Current(
            i64::try_from(claimed).unwrap_or(i64::MAX),
        ))?;
        Ok(())
    }

    /// The file could not be read at `offset` (an I/O error, or it shrank while being read).
    fn read_failed(&mut self, offset: u64, err: std::io::Error) {
        self.error(
            Loc::file(offset),
            "file",
            "bytes that can be read",
            format!("read error: {err}"),
        );
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

    fn record(&mut self, rec: RawRecord<'_>) {
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

    fn data_record(&mut self, rec: RawRecord<'_>) {
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

    fn chunk(&mut self, rec: RawRecord<'_>) {
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
            damaged: false,
            listed_messages: None,
            listing_broken: false,
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
        let errors_before = self.sink.errors;
        let contents = self.chunk_contents(&chunk, loc, &mut buf);
        if (contents.is_none() || self.sink.errors > errors_before)
            && let Some(info) = self.chunks.get_mut(index)
        {
            info.damaged = true;
        }
        if let Some(records) = contents {
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
                        // Private and not-yet-defined opcodes: future records, skipped by length.
                        0x10..=0xFF => {}
                        other => self.error(
                            loc,
                            record_name(other),
                            "only Schema, Channel and Message records (or unknown opcodes) inside a chunk",
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

    fn message_index(&mut self, rec: RawRecord<'_>) {
        let loc = Loc::file(rec.offset);
        let index = match parse::MessageIndex::parse(rec.body) {
            Ok(index) => index,
            Err(err) => {
                if let Some(chunk) = self
                    .open_chunk
                    .as_ref()
                    .and_then(|open| self.chunks.get_mut(open.chunk))
                {
                    chunk.listing_broken = true;
                }
                return self.field_error(loc, rec.opcode, err);
            }
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
            chunk.listed_messages =
                Some(chunk.listed_messages.unwrap_or(0) + index.entry_count() as u64);
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

    fn attachment(&mut self, rec: RawRecord<'_>) {
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

    fn metadata_record(&mut self, rec: RawRecord<'_>) {
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

    fn data_end(&mut self, rec: RawRecord<'_>) {
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
        if data_end.data_section_crc != 0 && self.data_crc_complete {
            let crc = self.data_crc.clone().finalize();
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
}

impl Checker<'_> {
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
        // Each damaged chunk with what it cost, in the numbers the reader reports it with.
        let damaged_chunks = self
            .chunks
            .iter()
            .filter(|c| c.damaged)
            .map(|c| ChunkDamage {
                part: self.sink.part.clone(),
                offset: c.offset,
                end: c.offset + c.total_len,
                lost_messages: c.listed_messages.filter(|_| !c.listing_broken),
            })
            .collect();
        let mut findings = self.sink.findings;
        // Emitted as each check completes; listed in file order.
        findings.sort_by_key(|f| (f.offset, f.offset_in_chunk));
        Report {
            part: self.sink.part,
            size_bytes: self.file_len,
            findings,
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
            damaged_chunks,
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

/// Fills `buf` from `offset`.
fn read_at<R: Read + Seek>(input: &mut R, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
    input.seek(SeekFrom::Start(offset))?;
    input.read_exact(buf)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn record(out: &mut Vec<u8>, opcode: u8, body: &[u8]) {
        out.push(opcode);
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(body);
    }

    /// Magic, empty Header, one uncompressed chunk of `inner` records, DataEnd, Footer, magic.
    fn file_with_chunk(inner: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        record(&mut out, op::HEADER, &[0; 8]);
        let mut chunk = Vec::new();
        chunk.extend_from_slice(&[0; 16]);
        chunk.extend_from_slice(&(inner.len() as u64).to_le_bytes());
        chunk.extend_from_slice(&0u32.to_le_bytes());
        chunk.extend_from_slice(&0u32.to_le_bytes());
        chunk.extend_from_slice(&(inner.len() as u64).to_le_bytes());
        chunk.extend_from_slice(inner);
        record(&mut out, op::CHUNK, &chunk);
        record(&mut out, op::DATA_END, &[0; 4]);
        record(&mut out, op::FOOTER, &[0; 20]);
        out.extend_from_slice(MAGIC);
        out
    }

    fn check_default(bytes: &[u8]) -> Report {
        let mut input = std::io::Cursor::new(bytes);
        check(
            "t.mcap",
            &mut input,
            bytes.len() as u64,
            &VerifyOptions::default(),
        )
    }

    #[test]
    fn minimal_chunked_file_is_clean() {
        let report = check_default(&file_with_chunk(&[]));
        assert!(report.findings.is_empty(), "{:?}", report.findings);
        assert!(report.finished);
        assert_eq!(report.chunk_count, 1);
    }

    #[test]
    fn unknown_opcodes_in_chunks_are_skipped_known_foreign_ones_are_errors() {
        let mut inner = Vec::new();
        record(&mut inner, 0x20, b"future record");
        record(&mut inner, 0x90, b"private record");
        let report = check_default(&file_with_chunk(&inner));
        assert!(report.findings.is_empty(), "{:?}", report.findings);

        record(&mut inner, op::ATTACHMENT, &[0; 40]);
        let report = check_default(&file_with_chunk(&inner));
        let errors: Vec<_> = report.errors().collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        let Some(error) = errors.first() else {
            return;
        };
        assert_eq!(error.record, "Attachment");
        assert_eq!(error.offset_in_chunk, Some(2 * 9 + 13 + 14));
    }

    #[test]
    fn zero_opcode_is_an_error_but_skipped_by_length() {
        let mut out = MAGIC.to_vec();
        record(&mut out, op::HEADER, &[0; 8]);
        record(&mut out, 0x00, b"??");
        record(&mut out, op::DATA_END, &[0; 4]);
        record(&mut out, op::FOOTER, &[0; 20]);
        out.extend_from_slice(MAGIC);
        let report = check_default(&out);
        assert_eq!(report.error_count, 1, "{:?}", report.findings);
        assert!(report.finished);
    }
}
