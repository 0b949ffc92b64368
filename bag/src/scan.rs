//! File-order reading of one MCAP part, tolerant of a torn end.
//!
//! Used for parts without a usable summary (the writer died) and for parts without chunk indexes.
//! It walks top-level records from the start, expands chunks, and stops at the first damaged
//! record, keeping every complete message before it, including the readable prefix of a chunk
//! that was cut off mid-write. Where it stopped and why is kept as [`Damage`].

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use crate::channel::ChannelSpec;
use crate::error::{BagError, Result};

/// The eight bytes every MCAP file starts and ends with.
pub const MCAP_MAGIC: &[u8; 8] = b"\x89MCAP0\r\n";

/// Refuse chunks that claim to decompress beyond this (a corrupted length must not allocate).
const MAX_CHUNK_UNCOMPRESSED: u64 = crate::reader::MAX_RECORD_BYTES as u64;

pub(crate) use crate::format::op;

/// Where and why a file-order read stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// Byte offset of the top-level record that could not be read whole.
    pub offset: u64,
    /// What was wrong there.
    pub what: String,
}

/// A message as the scanner yields it; `data` borrows the scanner's buffer.
#[derive(Debug)]
pub(crate) struct RawMessage<'a> {
    pub channel_id: u16,
    pub sequence: u32,
    pub log_time: u64,
    pub publish_time: u64,
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
    schemas: std::collections::HashMap<u16, crate::channel::SchemaSpec>,
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
                let schema = crate::channel::SchemaSpec {
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
    decoder: ChunkDecoder,
    chunk: Vec<u8>,
    chunk_pos: usize,
    in_chunk: bool,
    chunk_offset: u64,
    finished: bool,
    damage: Option<Damage>,
}

impl FileOrderScanner {
    /// Opens `path` and checks the leading magic.
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| BagError::io("opening", path, e))?;
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
            decoder: ChunkDecoder::default(),
            chunk: Vec::new(),
            chunk_pos: 0,
            in_chunk: false,
            chunk_offset: 0,
            finished: false,
            damage: None,
        };
        let mut magic = [0u8; 8];
        if file_len < 8 {
            scanner.stop(
                0,
                format!("file is {file_len} bytes, shorter than the MCAP magic"),
            );
        } else if let Err(e) = scanner.input.read_exact(&mut magic) {
            return Err(BagError::io("reading", path, e));
        } else if &magic != MCAP_MAGIC {
            scanner.stop(0, "not an MCAP file (bad magic)".into());
        } else {
            scanner.offset = 8;
        }
        Ok(scanner)
    }

    /// Why the scan stopped early, if it did.
    pub fn damage(&self) -> Option<&Damage> {
        self.damage.as_ref()
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
                match next_chunk_record(&self.chunk, &mut self.chunk_pos) {
                    ChunkStep::Record(opcode, start, end) => {
                        if matches!(opcode, op::SCHEMA | op::CHANNEL | op::MESSAGE) {
                            // Borrow-split: parse from the chunk buffer.
                            let body_range = start..end;
                            return self.item_from_chunk(opcode, body_range);
                        }
                        continue;
                    }
                    ChunkStep::End => {
                        self.in_chunk = false;
                        continue;
                    }
                    ChunkStep::Cut => {
                        let at = self.chunk_offset;
                        self.stop(at, "chunk ends in the middle of a record".into());
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
                self.stop(
                    record_start,
                    "file ends without a footer (the writer did not finish)".into(),
                );
                return Ok(None);
            }
            let mut head = [0u8; 9];
            if remaining < 9 {
                self.stop(record_start, "file ends inside a record header".into());
                return Ok(None);
            }
            self.input
                .read_exact(&mut head)
                .map_err(|e| BagError::io("reading", &self.path, e))?;
            let opcode = head[0];
            let len = u64::from_le_bytes(head[1..9].try_into().unwrap_or([0; 8]));
            let available = remaining - 9;
            if opcode == 0 {
                self.stop(
                    record_start,
                    "opcode 0x00 is not a record (garbage or zero fill)".into(),
                );
                return Ok(None);
            }
            if len > available {
                if opcode == op::CHUNK {
                    self.read_torn_chunk(record_start, available)?;
                    continue;
                }
                self.stop(
                    record_start,
                    format!("record 0x{opcode:02x} claims {len} bytes but only {available} remain"),
                );
                return Ok(None);
            }
            self.offset += 9 + len;
            match opcode {
                op::SCHEMA | op::CHANNEL | op::MESSAGE => {
                    self.fill_record(len)?;
                    return self.item_from_record(opcode, record_start);
                }
                op::CHUNK => {
                    self.fill_record(len)?;
                    self.open_chunk(record_start)?;
                }
                op::FOOTER => {
                    self.finished = true;
                    return Ok(None);
                }
                _ => {
                    // Summary, index and unknown records carry no messages: skip them.
                    std::io::copy(&mut (&mut self.input).take(len), &mut std::io::sink())
                        .map_err(|e| BagError::io("reading", &self.path, e))?;
                }
            }
        }
    }

    fn fill_record(&mut self, len: u64) -> Result<()> {
        let len = usize::try_from(len)
            .map_err(|_| BagError::InvalidArgument("record too large".into()))?;
        self.record.clear();
        self.record.resize(len, 0);
        self.input
            .read_exact(&mut self.record)
            .map_err(|e| BagError::io("reading", &self.path, e))
    }

    fn item_from_record(&mut self, opcode: u8, record_start: u64) -> Result<Option<ScanItem<'_>>> {
        match parse_item(opcode, &self.record) {
            Ok(parsed) => Ok(Some(parsed.with_data(&self.record))),
            Err(what) => {
                self.stop(record_start, what);
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
        let body = self.chunk.get(range.clone()).unwrap_or(&[]);
        match parse_item(opcode, body) {
            Ok(parsed) => Ok(Some(parsed.with_data(self.chunk.get(range).unwrap_or(&[])))),
            Err(what) => {
                self.stop(at, format!("inside chunk: {what}"));
                Ok(None)
            }
        }
    }

    fn open_chunk(&mut self, record_start: u64) -> Result<()> {
        match self.decoder.decode_into(&self.record, &mut self.chunk) {
            Ok(()) => {
                self.chunk_pos = 0;
                self.chunk_offset = record_start;
                self.in_chunk = true;
            }
            Err(what) => self.stop(record_start, format!("chunk: {what}")),
        }
        Ok(())
    }

    /// The file ends inside a chunk: decompress what is there and keep its whole records.
    fn read_torn_chunk(&mut self, record_start: u64, available: u64) -> Result<()> {
        self.fill_record(available)?;
        let what = format!(
            "the chunk starting here is cut off after {available} bytes (the writer was interrupted)"
        );
        self.finished = true;
        self.damage = Some(Damage {
            offset: record_start,
            what,
        });
        if let Ok((header, records)) = parse_chunk_header_prefix(&self.record) {
            self.chunk = decompress_prefix(&header, records);
            self.chunk_pos = 0;
            self.chunk_offset = record_start;
            self.in_chunk = true;
        }
        Ok(())
    }
}

/// Decompresses chunks, reusing one zstd context across them (creating one costs about as much
/// as decompressing a small chunk).
#[derive(Default)]
pub(crate) struct ChunkDecoder {
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

impl ChunkDecoder {
    /// Decompresses a chunk record's body (after opcode and length) into `out` (cleared first;
    /// its allocation is reused) and checks its CRC.
    pub(crate) fn decode_into(
        &mut self,
        body: &[u8],
        out: &mut Vec<u8>,
    ) -> std::result::Result<(), String> {
        let (header, records) = parse_chunk_header(body)?;
        self.decompress_into(&header, records, out)?;
        if header.crc != 0 {
            let actual = crc32fast::hash(out);
            if actual != header.crc {
                return Err(format!(
                    "CRC mismatch: expected {:08x}, found {actual:08x}",
                    header.crc
                ));
            }
        }
        Ok(())
    }

    fn decompress_into(
        &mut self,
        header: &ChunkHeader,
        records: &[u8],
        out: &mut Vec<u8>,
    ) -> std::result::Result<(), String> {
        if header.uncompressed_size > MAX_CHUNK_UNCOMPRESSED {
            return Err(format!(
                "claims {} uncompressed bytes, over the {MAX_CHUNK_UNCOMPRESSED}-byte limit",
                header.uncompressed_size
            ));
        }
        let size = header.uncompressed_size as usize;
        out.clear();
        match header.compression.as_str() {
            "" => out.extend_from_slice(records),
            "zstd" => {
                let zstd = match &mut self.zstd {
                    Some(z) => z,
                    None => self
                        .zstd
                        .insert(zstd::bulk::Decompressor::new().map_err(|e| format!("zstd: {e}"))?),
                };
                // Room for exactly the size the header gives: more is an error.
                out.reserve(size);
                zstd.decompress_to_buffer(records, out)
                    .map_err(|e| format!("zstd: {e}"))?;
            }
            "lz4" => {
                out.reserve(size.min(records.len().saturating_mul(255)));
                lz4_flex::frame::FrameDecoder::new(records)
                    .take(size as u64 + 1)
                    .read_to_end(out)
                    .map_err(|e| format!("lz4: {e}"))?;
            }
            other => return Err(format!("unknown compression {other:?}")),
        }
        if out.len() as u64 != header.uncompressed_size {
            return Err(format!(
                "decompressed to {} bytes, header says {}",
                out.len(),
                header.uncompressed_size
            ));
        }
        Ok(())
    }
}

/// The records of a decompressed chunk: (opcode, body range), stopping at a cut record.
pub(crate) fn chunk_records(
    chunk: &[u8],
) -> impl Iterator<Item = (u8, std::ops::Range<usize>)> + '_ {
    let mut pos = 0;
    std::iter::from_fn(move || match next_chunk_record(chunk, &mut pos) {
        ChunkStep::Record(opcode, start, end) => Some((opcode, start..end)),
        ChunkStep::End | ChunkStep::Cut => None,
    })
}

/// A message record's header: (channel id, sequence, log time, publish time); the payload
/// follows at [`MESSAGE_HEADER_LEN`].
pub(crate) fn message_header(body: &[u8]) -> Option<(u16, u32, u64, u64)> {
    let fixed = body.get(..MESSAGE_HEADER_LEN)?;
    let u64_at = |i: usize| -> Option<u64> {
        Some(u64::from_le_bytes(fixed.get(i..i + 8)?.try_into().ok()?))
    };
    Some((
        u16::from_le_bytes([fixed[0], fixed[1]]),
        u32::from_le_bytes([fixed[2], fixed[3], fixed[4], fixed[5]]),
        u64_at(6)?,
        u64_at(14)?,
    ))
}

enum ChunkStep {
    Record(u8, usize, usize),
    End,
    Cut,
}

fn next_chunk_record(chunk: &[u8], pos: &mut usize) -> ChunkStep {
    let rest = chunk.get(*pos..).unwrap_or(&[]);
    if rest.is_empty() {
        return ChunkStep::End;
    }
    let Some(head) = rest.get(..9) else {
        return ChunkStep::Cut;
    };
    let opcode = head[0];
    let len = u64::from_le_bytes(head[1..9].try_into().unwrap_or([0; 8]));
    let Ok(len) = usize::try_from(len) else {
        return ChunkStep::Cut;
    };
    if len > rest.len() - 9 {
        return ChunkStep::Cut;
    }
    let start = *pos + 9;
    *pos = start + len;
    ChunkStep::Record(opcode, start, start + len)
}

/// A parsed record that does not borrow the buffer (so errors can still mutate the scanner).
enum Parsed {
    Message {
        channel_id: u16,
        sequence: u32,
        log_time: u64,
        publish_time: u64,
    },
    Definition(Definition),
}

/// Bytes of a message record before its payload.
pub(crate) const MESSAGE_HEADER_LEN: usize = 22;

impl Parsed {
    fn with_data(self, body: &[u8]) -> ScanItem<'_> {
        match self {
            Parsed::Message {
                channel_id,
                sequence,
                log_time,
                publish_time,
            } => ScanItem::Message(RawMessage {
                channel_id,
                sequence,
                log_time,
                publish_time,
                data: body.get(MESSAGE_HEADER_LEN..).unwrap_or(&[]),
            }),
            Parsed::Definition(d) => ScanItem::Definition(d),
        }
    }
}

fn parse_item(opcode: u8, body: &[u8]) -> std::result::Result<Parsed, String> {
    match opcode {
        op::MESSAGE => {
            let Some((channel_id, sequence, log_time, publish_time)) = message_header(body) else {
                return Err(format!(
                    "message record of {} bytes is shorter than its header",
                    body.len()
                ));
            };
            Ok(Parsed::Message {
                channel_id,
                sequence,
                log_time,
                publish_time,
            })
        }
        _ => match crate::record_check::parse_record(opcode, body) {
            Ok(mcap::records::Record::Schema { header, data }) => {
                Ok(Parsed::Definition(Definition::Schema {
                    id: header.id,
                    name: header.name,
                    encoding: header.encoding,
                    data: data.into_owned(),
                }))
            }
            Ok(mcap::records::Record::Channel(c)) => Ok(Parsed::Definition(Definition::Channel {
                id: c.id,
                schema_id: c.schema_id,
                spec_without_schema: ChannelSpec {
                    topic: c.topic,
                    message_encoding: c.message_encoding,
                    schema: None,
                    metadata: c.metadata,
                },
            })),
            Ok(_) => Err(format!("unexpected record 0x{opcode:02x}")),
            Err(e) => Err(e),
        },
    }
}

struct ChunkHeader {
    uncompressed_size: u64,
    crc: u32,
    compression: String,
}

fn take<'a>(buf: &mut &'a [u8], n: usize) -> std::result::Result<&'a [u8], String> {
    if buf.len() < n {
        return Err("chunk header is cut off".into());
    }
    let (head, rest) = buf.split_at(n);
    *buf = rest;
    Ok(head)
}

fn take_u64(buf: &mut &[u8]) -> std::result::Result<u64, String> {
    Ok(u64::from_le_bytes(
        take(buf, 8)?.try_into().unwrap_or([0; 8]),
    ))
}

/// Parses a chunk header and returns the compressed records, possibly cut short.
fn parse_chunk_header_prefix(body: &[u8]) -> std::result::Result<(ChunkHeader, &[u8]), String> {
    parse_chunk_header_inner(body).map(|(header, records, _)| (header, records))
}

/// Parses a whole chunk record: its records must all be there.
fn parse_chunk_header(body: &[u8]) -> std::result::Result<(ChunkHeader, &[u8]), String> {
    let (header, records, declared) = parse_chunk_header_inner(body)?;
    if (records.len() as u64) < declared {
        return Err(format!(
            "declares {declared} bytes of records but holds {}",
            records.len()
        ));
    }
    Ok((header, records))
}

fn parse_chunk_header_inner(body: &[u8]) -> std::result::Result<(ChunkHeader, &[u8], u64), String> {
    let mut buf = body;
    let _start = take_u64(&mut buf)?;
    let _end = take_u64(&mut buf)?;
    let uncompressed_size = take_u64(&mut buf)?;
    let crc = u32::from_le_bytes(take(&mut buf, 4)?.try_into().unwrap_or([0; 4]));
    let name_len = u32::from_le_bytes(take(&mut buf, 4)?.try_into().unwrap_or([0; 4]));
    let name = take(&mut buf, name_len as usize)?;
    let compression = String::from_utf8_lossy(name).into_owned();
    let declared = take_u64(&mut buf)?;
    let records_len = usize::try_from(declared).unwrap_or(usize::MAX);
    let records = buf.get(..records_len.min(buf.len())).unwrap_or(&[]);
    Ok((
        ChunkHeader {
            uncompressed_size,
            crc,
            compression,
        },
        records,
        declared,
    ))
}

/// Decompresses as much of a cut-off chunk as its bytes allow.
fn decompress_prefix(header: &ChunkHeader, records: &[u8]) -> Vec<u8> {
    let cap = header.uncompressed_size.min(MAX_CHUNK_UNCOMPRESSED);
    let mut out = Vec::new();
    let mut read_all = |reader: &mut dyn Read| {
        let mut buf = [0u8; 64 * 1024];
        while (out.len() as u64) < cap {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    };
    match header.compression.as_str() {
        "" => {
            return records
                .get(..(cap as usize).min(records.len()))
                .unwrap_or(&[])
                .to_vec();
        }
        "zstd" => {
            if let Ok(mut decoder) = zstd::stream::read::Decoder::with_buffer(records) {
                read_all(&mut decoder);
            }
        }
        "lz4" => read_all(&mut lz4_flex::frame::FrameDecoder::new(records)),
        _ => {}
    }
    out.truncate(cap as usize);
    out
}

#[cfg(test)]
mod tests {
    use super::ChunkDecoder;

    /// A chunk record body holding `records` compressed with `compression`, whose header says
    /// `claimed` uncompressed bytes and `crc`.
    fn chunk_body(records: &[u8], compression: &str, claimed: u64, crc: u32) -> Vec<u8> {
        let data = match compression {
            "zstd" => zstd::bulk::compress(records, 1).expect("compress"),
            "lz4" => {
                let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
                std::io::Write::write_all(&mut e, records).expect("compress");
                e.finish().expect("finish")
            }
            _ => records.to_vec(),
        };
        let mut body = Vec::new();
        body.extend_from_slice(&1u64.to_le_bytes());
        body.extend_from_slice(&2u64.to_le_bytes());
        body.extend_from_slice(&claimed.to_le_bytes());
        body.extend_from_slice(&crc.to_le_bytes());
        body.extend_from_slice(&(compression.len() as u32).to_le_bytes());
        body.extend_from_slice(compression.as_bytes());
        body.extend_from_slice(&(data.len() as u64).to_le_bytes());
        body.extend_from_slice(&data);
        body
    }

    #[test]
    fn one_decoder_reads_chunk_after_chunk_and_refuses_lying_headers() {
        let mut decoder = ChunkDecoder::default();
        let mut out = Vec::new();
        for (i, compression) in ["zstd", "lz4", "", "zstd"].into_iter().enumerate() {
            let records: Vec<u8> = (0..5000u32).map(|k| (k * 7 + i as u32) as u8).collect();
            let crc = crc32fast::hash(&records);
            let body = chunk_body(&records, compression, records.len() as u64, crc);
            decoder.decode_into(&body, &mut out).expect(compression);
            assert_eq!(out, records, "chunk {i} ({compression:?})");

            let short = chunk_body(&records, compression, records.len() as u64 - 1, 0);
            assert!(
                decoder.decode_into(&short, &mut out).is_err(),
                "{compression:?} short"
            );
            let long = chunk_body(&records, compression, records.len() as u64 + 1, 0);
            assert!(
                decoder.decode_into(&long, &mut out).is_err(),
                "{compression:?} long"
            );
            let bad_crc = chunk_body(&records, compression, records.len() as u64, crc ^ 1);
            let err = decoder.decode_into(&bad_crc, &mut out).err();
            assert!(
                err.is_some_and(|e| e.contains("CRC")),
                "{compression:?} CRC"
            );
        }
    }
}
