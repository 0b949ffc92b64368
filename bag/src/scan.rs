//! File-order reading of one MCAP part, tolerant of a torn end.
//!
//! Used for parts without a usable summary (the writer died) and for parts without chunk indexes.
//! It walks top-level records from the start, expands chunks, and stops at the first damaged
//! record, keeping every complete message before it, including the readable prefix of a chunk
//! that was cut off mid-write. Where it stopped and why is kept as [`Damage`]. A whole chunk that
//! does not check out (CRC, decompression) is skipped instead, and the scan goes on past it: it
//! is kept as a [`SkippedChunk`], with the messages its MessageIndex records list.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use crate::channel::{ChannelSpec, SchemaSpec};
use crate::error::{BagError, Result};
use crate::format::{
    ChunkDecompressor, ChunkHeader, FormatError, MAGIC, MAX_RECORD_BYTES, MESSAGE_HEADER_LEN,
    MessageHeader, RECORD_PREFIX_LEN, RecordPrefix, decompress_prefix, message_index_body_entries,
    op, parse_record, record_at,
};
use crate::layout::open_regular;

/// Where and why a file-order read stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// Byte offset of the top-level record that could not be read whole.
    pub offset: u64,
    /// What was wrong there.
    pub what: String,
}

/// A whole chunk the scan skipped because it does not check out.
#[derive(Debug)]
pub(crate) struct SkippedChunk {
    /// Byte offset of the chunk record.
    pub offset: u64,
    /// Byte offset just past it.
    pub end: u64,
    /// Messages its MessageIndex records list (`None`: none follow it, or one is malformed).
    pub lost_messages: Option<u64>,
    /// What is wrong with it.
    pub error: FormatError,
}

impl SkippedChunk {
    /// The damage as every tool reports it, for part `part`.
    pub fn damage(&self, part: &str) -> crate::message::ChunkDamage {
        crate::message::ChunkDamage {
            part: part.to_owned(),
            offset: self.offset,
            end: self.end,
            lost_messages: self.lost_messages,
        }
    }
}

/// A message as the scanner yields it; `data` borrows the scanner's buffer.
#[derive(Debug)]
pub(crate) struct RawMessage<'a> {
    pub header: MessageHeader,
    pub data: &'a [u8],
}

/// Schema or channel definitions met on the way.
pub(crate) enum Definition {
    Schema {
        id: u16,
        name: String,
        encoding: String,
        data: Vec<u8>,
    },
    Channel {
        id: u16,
        schema_id: u16,
        spec_without_schema: ChannelSpec,
    },
}

/// Schemas seen so far in a scan, so that channels can be given theirs.
#[derive(Default)]
pub(crate) struct Definitions {
    schemas: std::collections::HashMap<u16, SchemaSpec>,
}

impl Definitions {
    /// Remembers a schema (and returns `None`), or returns a channel with its schema resolved.
    pub fn resolve(&mut self, definition: Definition) -> Option<(u16, ChannelSpec)> {
        match definition {
            Definition::Schema {
                id,
                name,
                encoding,
                data,
            } => {
                let schema = SchemaSpec {
                    name,
                    encoding,
                    data,
                };
                self.schemas.insert(id, schema);
                None
            }
            Definition::Channel {
                id,
                schema_id,
                mut spec_without_schema,
            } => {
                spec_without_schema.schema = self.schemas.get(&schema_id).cloned();
                Some((id, spec_without_schema))
            }
        }
    }
}

pub(crate) enum ScanItem<'a> {
    Definition(Definition),
    Message(RawMessage<'a>),
}

/// Reads one part in file order.
pub(crate) struct FileOrderScanner {
    path: PathBuf,
    input: BufReader<File>,
    file_len: u64,
    offset: u64,
    record: Vec<u8>,
    decoder: ChunkDecompressor,
    chunk: Vec<u8>,
    chunk_pos: usize,
    in_chunk: bool,
    chunk_offset: u64,
    finished: bool,
    damage: Option<Damage>,
    /// False when only message headers are wanted (counting): payloads are skipped unread.
    payloads: bool,
    skipped: Vec<SkippedChunk>,
    /// The records just read are the MessageIndex records of the last skipped chunk.
    counting_skipped: bool,
}

impl FileOrderScanner {
    /// Opens `path` and checks the leading magic.
    pub fn open(path: &Path) -> Result<Self> {
        let file = open_regular(path).map_err(|e| BagError::io("opening", path, e))?;
        let file_len = file
            .metadata()
            .map_err(|e| BagError::io("reading metadata of", path, e))?
            .len();
        let mut scanner = FileOrderScanner {
            path: path.to_path_buf(),
            input: BufReader::with_capacity(1 << 20, file),
            file_len,
            offset: 0,
            record: Vec::new(),
            decoder: ChunkDecompressor::default(),
            chunk: Vec::new(),
            chunk_pos: 0,
            in_chunk: false,
            chunk_offset: 0,
            finished: false,
            damage: None,
            payloads: true,
            skipped: Vec::new(),
            counting_skipped: false,
        };
        let mut magic = [0u8; MAGIC.len()];
        if file_len < MAGIC.len() as u64 {
            scanner.stop(0, FormatError::ShorterThanMagic { len: file_len }.detail());
        } else if let Err(e) = scanner.input.read_exact(&mut magic) {
            return Err(BagError::io("reading", path, e));
        } else if &magic != MAGIC {
            scanner.stop(0, FormatError::BadMagic.detail());
        } else {
            scanner.offset = MAGIC.len() as u64;
        }
        Ok(scanner)
    }

    /// Opens `path` like [`Self::open`], for a scan that wants message headers only: message
    /// payloads outside chunks are skipped without being read (messages come with empty data).
    pub fn open_headers_only(path: &Path) -> Result<Self> {
        let mut scanner = Self::open(path)?;
        scanner.payloads = false;
        Ok(scanner)
    }

    /// Why the scan stopped early, if it did.
    pub fn damage(&self) -> Option<&Damage> {
        self.damage.as_ref()
    }

    /// The chunks skipped so far whose count of lost messages is settled (their MessageIndex
    /// records are behind the scan), taken out of the scanner.
    pub fn take_skipped(&mut self) -> Vec<SkippedChunk> {
        let settled = if self.counting_skipped && !self.finished {
            self.skipped.len().saturating_sub(1)
        } else {
            self.skipped.len()
        };
        let rest = self.skipped.split_off(settled);
        std::mem::replace(&mut self.skipped, rest)
    }

    fn stop(&mut self, offset: u64, what: String) {
        self.finished = true;
        self.in_chunk = false;
        if self.damage.is_none() {
            self.damage = Some(Damage { offset, what });
        }
    }

    /// The next definition or message, `None` at the end (clean or damaged: see [`Self::damage`]).
    /// I/O errors other than a short file are returned.
    pub fn next_item(&mut self) -> Result<Option<ScanItem<'_>>> {
        loop {
            if self.in_chunk {
                match record_at(&self.chunk, self.chunk_pos) {
                    Some(Ok(record)) => {
                        self.chunk_pos = record.end();
                        if matches!(record.opcode, op::SCHEMA | op::CHANNEL | op::MESSAGE) {
                            // Borrow-split: parse from the chunk buffer by range.
                            return self.item_from_chunk(record.opcode, record.body_range());
                        }
                        continue;
                    }
                    None => {
                        self.in_chunk = false;
                        continue;
                    }
                    Some(Err(error)) => {
                        let at = self.chunk_offset;
                        self.stop(at, format!("inside chunk: {}", error.detail()));
                        return Ok(None);
                    }
                }
            }
            if self.finished {
                return Ok(None);
            }
            let record_start = self.offset;
            let remaining = self.file_len.saturating_sub(self.offset);
            if remaining == 0 {
                self.stop(record_start, FormatError::NoFooter.detail());
                return Ok(None);
            }
            if remaining < RECORD_PREFIX_LEN as u64 {
                let error = FormatError::TruncatedPrefix {
                    available: remaining,
                };
                self.stop(record_start, error.detail());
                return Ok(None);
            }
            let mut head = [0u8; RECORD_PREFIX_LEN];
            self.input
                .read_exact(&mut head)
                .map_err(|e| BagError::io("reading", &self.path, e))?;
            let prefix = RecordPrefix::parse(head);
            let available = remaining - RECORD_PREFIX_LEN as u64;
            if prefix.opcode == 0 {
                self.stop(record_start, FormatError::ZeroOpcode.detail());
                return Ok(None);
            }
            // A length beyond the limit is damage, whatever the file's size: a sparse file can
            // be as long as it claims without holding anything.
            if prefix.body_len > MAX_RECORD_BYTES as u64 {
                let error = FormatError::RecordTooLarge {
                    opcode: prefix.opcode,
                    len: prefix.body_len,
                    limit: MAX_RECORD_BYTES,
                };
                self.stop(record_start, error.detail());
                return Ok(None);
            }
            let len = match prefix.body_len_within(available) {
                Ok(len) => len,
                Err(_) if prefix.opcode == op::CHUNK => {
                    self.read_torn_chunk(record_start, available)?;
                    continue;
                }
                Err(error) => {
                    self.stop(record_start, error.detail());
                    return Ok(None);
                }
            };
            self.offset += RECORD_PREFIX_LEN as u64 + len as u64;
            let counting = std::mem::take(&mut self.counting_skipped);
            match prefix.opcode {
                op::MESSAGE_INDEX if counting => {
                    self.fill_record(len)?;
                    let listed = message_index_body_entries(&self.record);
                    if let Some(last) = self.skipped.last_mut() {
                        // A malformed index makes the count unknown, never smaller.
                        last.lost_messages =
                            listed.and_then(|n| last.lost_messages.unwrap_or(0).checked_add(n));
                        self.counting_skipped = last.lost_messages.is_some();
                    }
                }
                op::MESSAGE if !self.payloads && len > MESSAGE_HEADER_LEN => {
                    self.fill_record(MESSAGE_HEADER_LEN)?;
                    self.skip(len - MESSAGE_HEADER_LEN)?;
                    return self.item_from_record(prefix.opcode, record_start);
                }
                op::SCHEMA | op::CHANNEL | op::MESSAGE => {
                    self.fill_record(len)?;
                    return self.item_from_record(prefix.opcode, record_start);
                }
                op::CHUNK => {
                    self.fill_record(len)?;
                    self.open_chunk(record_start);
                }
                op::FOOTER => {
                    self.skip(len)?;
                    // Whole only with the magic right after the Footer: a file cut there
                    // is not complete, whatever the Footer says.
                    let after = self.file_len.saturating_sub(self.offset);
                    let mut tail = [0u8; MAGIC.len()];
                    let whole = after == MAGIC.len() as u64
                        && self.input.read_exact(&mut tail).is_ok()
                        && &tail == MAGIC;
                    if whole {
                        self.finished = true;
                    } else {
                        self.stop(self.offset, FormatError::NoEndMagic { after }.detail());
                    }
                    return Ok(None);
                }
                _ => {
                    // Summary, index and unknown records carry no messages: skip them.
                    self.skip(len)?;
                }
            }
        }
    }

    /// Moves past the next `len` bytes without reading them.
    fn skip(&mut self, len: usize) -> Result<()> {
        let len = i64::try_from(len).unwrap_or(i64::MAX);
        self.input
            .seek_relative(len)
            .map_err(|e| BagError::io("seeking in", &self.path, e))
    }

    /// Reads the next `len` bytes (a record body no longer than what remains of the file).
    fn fill_record(&mut self, len: usize) -> Result<()> {
        self.record.clear();
        self.record.resize(len, 0);
        self.input
            .read_exact(&mut self.record)
            .map_err(|e| BagError::io("reading", &self.path, e))
    }

    fn item_from_record(&mut self, opcode: u8, record_start: u64) -> Result<Option<ScanItem<'_>>> {
        match parse_item(opcode, &self.record) {
            Ok(parsed) => Ok(Some(parsed.with_data(&self.record))),
            Err(error) => {
                self.stop(record_start, error.detail());
                Ok(None)
            }
        }
    }

    fn item_from_chunk(
        &mut self,
        opcode: u8,
        range: std::ops::Range<usize>,
    ) -> Result<Option<ScanItem<'_>>> {
        let at = self.chunk_offset;
        let body = self.chunk.get(range.clone()).unwrap_or_default();
        match parse_item(opcode, body) {
            Ok(parsed) => Ok(Some(
                parsed.with_data(self.chunk.get(range).unwrap_or_default()),
            )),
            Err(error) => {
                self.stop(at, format!("inside chunk: {}", error.detail()));
                Ok(None)
            }
        }
    }

    fn open_chunk(&mut self, record_start: u64) {
        match self.decoder.decode_chunk(&self.record, &mut self.chunk) {
            Ok(()) => {
                self.chunk_pos = 0;
                self.chunk_offset = record_start;
                self.in_chunk = true;
            }
            // The chunk is whole (its length checked out) but its contents do not: it costs
            // its own messages, and the next record is read as usual.
            Err(error) => {
                self.skipped.push(SkippedChunk {
                    offset: record_start,
                    end: self.offset,
                    lost_messages: None,
                    error,
                });
                self.counting_skipped = true;
            }
        }
    }

    /// The file ends inside a chunk: decompress what is there and keep its whole records.
    fn read_torn_chunk(&mut self, record_start: u64, available: u64) -> Result<()> {
        // What remains of the file, which is shorter than the chunk claims, and the claim is
        // within the record limit: bounded, whatever the file's size.
        let Ok(len) = usize::try_from(available) else {
            let error = FormatError::RecordTooLarge {
                opcode: op::CHUNK,
                len: available,
                limit: MAX_RECORD_BYTES,
            };
            self.stop(record_start, error.detail());
            return Ok(());
        };
        self.fill_record(len)?;
        self.finished = true;
        self.damage = Some(Damage {
            offset: record_start,
            what: FormatError::TornChunk { available }.detail(),
        });
        if let Ok((header, records)) = ChunkHeader::parse_prefix(&self.record) {
            self.chunk = decompress_prefix(&header, records);
            self.chunk_pos = 0;
            self.chunk_offset = record_start;
            self.in_chunk = true;
        }
        Ok(())
    }
}

/// A parsed record that does not borrow the buffer (so errors can still mutate the scanner).
enum Parsed {
    Message(MessageHeader),
    Definition(Definition),
}

impl Parsed {
    fn with_data(self, body: &[u8]) -> ScanItem<'_> {
        match self {
            Parsed::Message(header) => ScanItem::Message(RawMessage {
                header,
                data: MessageHeader::payload(body),
            }),
            Parsed::Definition(d) => ScanItem::Definition(d),
        }
    }
}

fn parse_item(opcode: u8, body: &[u8]) -> std::result::Result<Parsed, FormatError> {
    if opcode == op::MESSAGE {
        return MessageHeader::parse(body).map(Parsed::Message);
    }
    match parse_record(opcode, body)? {
        mcap::records::Record::Schema { header, data } => {
            Ok(Parsed::Definition(Definition::Schema {
                id: header.id,
                name: header.name,
                encoding: header.encoding,
                data: data.into_owned(),
            }))
        }
        mcap::records::Record::Channel(c) => Ok(Parsed::Definition(Definition::Channel {
            id: c.id,
            schema_id: c.schema_id,
            spec_without_schema: ChannelSpec {
                topic: c.topic,
                message_encoding: c.message_encoding,
                schema: None,
                metadata: c.metadata,
            },
        })),
        _ => Err(FormatError::UnexpectedRecord { opcode }),
    }
}
