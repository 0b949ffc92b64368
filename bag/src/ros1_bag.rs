//! ROS 1 bag files (format 2.0, `.bag`) as parts of a recording: each connection becomes a
//! channel (message encoding `ros1`, schema `ros1msg` = the connection's `message_definition`),
//! each message data record a message whose log time is the record's time.
//!
//! A small reader of our own rather than the `rosbag` crate (0.6), which the decode crate's
//! tests use: `rosbag` maps the whole file (`unsafe` mmap: a file truncated while mapped is a
//! SIGBUS, not an error), slices the map at the header's `index_pos` (a bag whose writer died
//! has `index_pos` 0 or past the end: a panic, not the readable prefix), panics on index
//! records with trailing bytes, and reserves the decompressed size a chunk header claims (up to
//! 4 GiB) before decompressing. Here every length read from the file is checked against what
//! remains and capped at [`MAX_RECORD_BYTES`], a truncated file is read up to its last whole
//! record, and a chunk that does not decompress is skipped and reported.
//!
//! Opening reads the index section at the end of the file (connections, and per chunk its
//! place, times and message counts) when it describes the file: the bag header points at it,
//! it lists as many chunks as the header says, and a walk over the record headers before it
//! (no chunk decompressed) finds exactly those chunks. Otherwise (no index section, as when the
//! writer died; a stale one; loose records) opening scans the file, chunk by chunk, and keeps
//! where each readable chunk is and which times it spans. Reading merges chunks by time,
//! holding only the chunks whose time ranges overlap in memory at once, so messages come in
//! log-time order even when connections or chunks are out of order. A chunk that turns out
//! unreadable when read costs only its own messages (the index says how many), and `bag info`
//! reads every chunk to find such chunks ([`Ros1Index::damaged_chunks`]).
//!
//! Opening from the index section, and loading a bag in time windows cut at its chunk starts
//! (the loader's threads each read their own chunks): the loader on a 400,000-message bag went
//! from 0.54x to 1.19x of its speed on the same messages in MCAP (33.0 vs 39.4 ms, medians of
//! one run of `cargo bench -p scope --bench formats -- ros1`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::channel::{ChannelSpec, SchemaSpec};
use crate::format::MAX_RECORD_BYTES;
use crate::id_map::IdMap;
use crate::message::ChunkDamage;
use crate::scan::Damage;

mod check;
pub(crate) use check::check_bag;

/// The first bytes of every ROS 1 bag of format 2.0.
pub(crate) const ROS1_MAGIC: &[u8] = b"#ROSBAG V2.0\n";

const OP_MESSAGE_DATA: u8 = 0x02;
const OP_BAG_HEADER: u8 = 0x03;
const OP_INDEX_DATA: u8 = 0x04;
const OP_CHUNK: u8 = 0x05;
const OP_CHUNK_INFO: u8 = 0x06;
const OP_CONNECTION: u8 = 0x07;

/// What is wrong in a ROS 1 bag.
#[derive(Debug, thiserror::Error)]
pub enum Ros1Error {
    /// A record's header or data runs past the end of the file (the writer died).
    #[error("a record claims {claimed} bytes but only {available} remain in the file")]
    PastEnd {
        /// Bytes the length field claims.
        claimed: u64,
        /// Bytes left in the file.
        available: u64,
    },
    /// A record inside a chunk runs past the chunk's end.
    #[error("a record claims {claimed} bytes but only {available} remain in its chunk")]
    PastChunkEnd {
        /// Bytes the length field claims.
        claimed: u64,
        /// Bytes left in the chunk.
        available: u64,
    },
    /// A length larger than any record we read.
    #[error("a record claims {claimed} bytes, more than the {limit} bytes a record may have")]
    TooLarge {
        /// Bytes claimed.
        claimed: u64,
        /// The limit.
        limit: usize,
    },
    /// A record header whose fields do not parse.
    #[error("a record header is malformed: {what}")]
    BadHeader {
        /// What is wrong.
        what: String,
    },
    /// A chunk compressed with something other than `none`, `bz2` or `lz4`.
    #[error("unknown chunk compression {0:?}")]
    UnknownCompression(String),
    /// A chunk that does not decompress.
    #[error("the {compression} chunk does not decompress")]
    Decompress {
        /// The chunk's compression.
        compression: String,
        /// What the decompressor said.
        #[source]
        source: std::io::Error,
    },
    /// A chunk whose decompressed size is not the size its header says.
    #[error("the chunk decompresses to {got} bytes, its header says {expected}")]
    SizeMismatch {
        /// The header's size.
        expected: u64,
        /// What decompression gave (up to the size plus one).
        got: u64,
    },
    /// More connections than a part can hold channels.
    #[error("more than {0} connections")]
    TooManyConnections(usize),
    /// Reading the file failed.
    #[error("reading the file failed")]
    Io(#[from] std::io::Error),
}

/// One record: its op, its header (checked to hold well-formed fields), and its data.
struct Record<'a> {
    op: u8,
    header: &'a [u8],
    data: &'a [u8],
    /// The first `conn` and `time` fields, kept from the one walk that checks the header:
    /// every message record has them, and they are read for every message.
    conn: Option<&'a [u8]>,
    time: Option<&'a [u8]>,
}

impl<'a> Record<'a> {
    /// A record of its header's op, the header checked once; `conn` and `time` are kept from
    /// that walk, other fields read again when asked for (connection records).
    fn new(header: &'a [u8], data: &'a [u8]) -> Result<Self, Ros1Error> {
        let (mut op, mut conn, mut time) = (None, None, None);
        for field in fields(header) {
            let (name, value) = field?;
            match name {
                b"op" => op = Some(value),
                b"conn" => conn = conn.or(Some(value)),
                b"time" => time = time.or(Some(value)),
                _ => {}
            }
        }
        match op {
            Some([op]) => Ok(Record {
                op: *op,
                header,
                data,
                conn,
                time,
            }),
            _ => Err(Ros1Error::BadHeader {
                what: "no one-byte op field".into(),
            }),
        }
    }

    fn field(&self, name: &str) -> Option<&'a [u8]> {
        match name {
            "conn" => self.conn,
            "time" => self.time,
            _ => fields(self.header)
                .map_while(Result::ok)
                .find(|(n, _)| *n == name.as_bytes())
                .map(|(_, v)| v),
        }
    }

    fn u32_field(&self, name: &str) -> Result<u32, Ros1Error> {
        let v = self.field(name).ok_or_else(|| missing(self.op, name))?;
        let bytes: [u8; 4] = v.try_into().map_err(|_| Ros1Error::BadHeader {
            what: format!("field {name} is {} bytes, not 4", v.len()),
        })?;
        Ok(u32::from_le_bytes(bytes))
    }

    fn time_field(&self, name: &str) -> Result<u64, Ros1Error> {
        let v = self.field(name).ok_or_else(|| missing(self.op, name))?;
        time_ns(v).ok_or_else(|| Ros1Error::BadHeader {
            what: format!("field {name} is {} bytes, not 8", v.len()),
        })
    }
}

fn missing(op: u8, name: &str) -> Ros1Error {
    Ros1Error::BadHeader {
        what: format!("record 0x{op:02x} has no {name} field"),
    }
}

/// A ROS 1 time (u32 seconds, u32 nanoseconds) as nanoseconds.
fn time_ns(v: &[u8]) -> Option<u64> {
    let secs = u32::from_le_bytes(v.get(..4)?.try_into().ok()?);
    let nsecs = u32::from_le_bytes(v.get(4..8)?.try_into().ok()?);
    if v.len() != 8 {
        return None;
    }
    Some(u64::from(secs) * 1_000_000_000 + u64::from(nsecs))
}

/// A header's fields: (name, value) pairs.
type Fields<'a> = Vec<(&'a [u8], &'a [u8])>;

/// The `name=value` fields of a header (a connection record's data is one too), in order; the
/// first malformed one is an error, and ends them.
fn fields(mut bytes: &[u8]) -> impl Iterator<Item = Result<(&[u8], &[u8]), Ros1Error>> {
    std::iter::from_fn(move || {
        if bytes.is_empty() {
            return None;
        }
        let parsed = (|| {
            let (len, rest) = split_len(bytes).ok_or_else(|| Ros1Error::BadHeader {
                what: "a field length is cut short".into(),
            })?;
            let (field, rest) = rest
                .split_at_checked(len)
                .ok_or_else(|| Ros1Error::BadHeader {
                    what: format!("a field claims {len} bytes but {} remain", rest.len()),
                })?;
            let eq = field
                .iter()
                .position(|b| *b == b'=')
                .ok_or_else(|| Ros1Error::BadHeader {
                    what: "a field has no '='".into(),
                })?;
            Ok(((&field[..eq], &field[eq + 1..]), rest))
        })();
        match parsed {
            Ok((field, rest)) => {
                bytes = rest;
                Some(Ok(field))
            }
            Err(e) => {
                bytes = &[];
                Some(Err(e))
            }
        }
    })
}

/// Every field of a header, or the first error.
fn parse_fields(bytes: &[u8]) -> Result<Fields<'_>, Ros1Error> {
    fields(bytes).collect()
}

fn split_len(bytes: &[u8]) -> Option<(usize, &[u8])> {
    let (len, rest) = bytes.split_at_checked(4)?;
    let len = u32::from_le_bytes(len.try_into().ok()?);
    Some((usize::try_from(len).ok()?, rest))
}

/// The records in `bytes` (a chunk's decompressed data, or one record read whole), each with
/// its offset in `bytes`.
fn records(mut bytes: &[u8]) -> impl Iterator<Item = Result<Record<'_>, Ros1Error>> {
    std::iter::from_fn(move || {
        if bytes.is_empty() {
            return None;
        }
        let parsed = (|| {
            let cut = |len: usize, rest: &[u8]| Ros1Error::PastChunkEnd {
                claimed: len as u64,
                available: rest.len() as u64,
            };
            let (header_len, rest) = split_len(bytes).ok_or_else(|| cut(4, bytes))?;
            let (header, rest) = rest
                .split_at_checked(header_len)
                .ok_or_else(|| cut(header_len, rest))?;
            let (data_len, rest) = split_len(rest).ok_or_else(|| cut(4, rest))?;
            let (data, rest) = rest
                .split_at_checked(data_len)
                .ok_or_else(|| cut(data_len, rest))?;
            Ok((Record::new(header, data)?, rest))
        })();
        match parsed {
            Ok((record, rest)) => {
                bytes = rest;
                Some(Ok(record))
            }
            Err(e) => {
                bytes = &[];
                Some(Err(e))
            }
        }
    })
}

/// A connection as a channel: the connection header's `type` and `message_definition` become
/// the schema, `md5sum`, `callerid` and `latching` the channel's metadata (as MCAP's ROS 1
/// profile keeps them).
fn connection_channel(record: &Record<'_>) -> Result<(u32, ChannelSpec), Ros1Error> {
    let conn = record.u32_field("conn")?;
    let header = parse_fields(record.data)?;
    let text = |name: &str| {
        header
            .iter()
            .find(|(n, _)| *n == name.as_bytes())
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
    };
    let topic = record
        .field("topic")
        .map(|t| String::from_utf8_lossy(t).into_owned())
        .or_else(|| text("topic"))
        .ok_or_else(|| missing(OP_CONNECTION, "topic"))?;
    let mut metadata = BTreeMap::new();
    for key in ["md5sum", "callerid", "latching"] {
        if let Some(v) = text(key) {
            metadata.insert(key.to_string(), v);
        }
    }
    let definition = header
        .iter()
        .find(|(n, _)| *n == b"message_definition")
        .map(|(_, v)| v.to_vec())
        .unwrap_or_default();
    let spec = ChannelSpec {
        topic,
        message_encoding: "ros1".into(),
        schema: Some(SchemaSpec {
            name: text("type").unwrap_or_default(),
            encoding: "ros1msg".into(),
            data: definition,
        }),
        metadata,
    };
    Ok((conn, spec))
}

/// Where a chunk (or a message record outside any chunk) is, the times it spans and how many
/// messages it holds.
#[derive(Debug, Clone)]
struct ChunkPlace {
    offset: u64,
    end: u64,
    first_ns: u64,
    last_ns: u64,
    messages: u64,
}

/// What opening a ROS 1 bag learned: enough to read it again without a scan.
#[derive(Debug, Default)]
pub(crate) struct Ros1Index {
    /// Chunks, sorted by their first log time: every one readable when `checked`, else as the
    /// bag's index section lists them (a damaged one is found when read).
    chunks: Vec<ChunkPlace>,
    /// ROS 1 connection id -> part-local channel id.
    connections: IdMap,
    /// Whether every chunk was decompressed and parsed at open (a scan), or only listed (the
    /// index section).
    checked: bool,
}

impl Ros1Index {
    /// Whether every chunk was read at open (a scan) rather than listed by the index section.
    pub(crate) fn checked(&self) -> bool {
        self.checked
    }

    /// The first log time of each chunk, sorted.
    pub(crate) fn chunk_start_times(&self) -> Vec<u64> {
        self.chunks.iter().map(|c| c.first_ns).collect()
    }

    /// The chunks that do not decompress or parse, each with the messages the index says it
    /// holds. Reads every chunk once when the bag was opened from its index section; nothing
    /// to read when a scan checked them at open (its damaged chunks are the part's already).
    pub(crate) fn damaged_chunks(
        &self,
        path: &Path,
        part_name: &str,
    ) -> Result<Vec<ChunkDamage>, Ros1Error> {
        if self.checked {
            return Ok(Vec::new());
        }
        let mut file = crate::layout::open_regular(path)?;
        let size = file.metadata()?.len();
        let mut damaged = Vec::new();
        for chunk in &self.chunks {
            let readable = read_top(&mut file, chunk.offset, size)
                .and_then(|top| chunk_data(&mut file, &top))
                .and_then(|data| check_records(&data));
            if readable.is_err() {
                damaged.push(chunk.damage(part_name));
            }
        }
        damaged.sort_by_key(|d| d.offset);
        Ok(damaged)
    }
}

impl ChunkPlace {
    fn damage(&self, part_name: &str) -> ChunkDamage {
        ChunkDamage {
            part: part_name.to_string(),
            offset: self.offset,
            end: self.end,
            lost_messages: Some(self.messages),
        }
    }
}

/// Whether every record of a chunk's data parses, message records with their `conn` and
/// `time`.
fn check_records(data: &[u8]) -> Result<(), Ros1Error> {
    for record in records(data) {
        let record = record?;
        if record.op == OP_MESSAGE_DATA {
            record.u32_field("conn")?;
            record.time_field("time")?;
        }
    }
    Ok(())
}

/// What a scan of a ROS 1 bag found.
#[derive(Debug, Default)]
pub(crate) struct Ros1Scan {
    pub(crate) index: Ros1Index,
    pub(crate) channels: BTreeMap<u16, ChannelSpec>,
    pub(crate) channel_counts: BTreeMap<u16, u64>,
    /// Messages per part-local channel while scanning (a table, not a map: one per message);
    /// into `channel_counts` at the end.
    counts: Vec<u64>,
    pub(crate) message_count: u64,
    pub(crate) time_range_ns: Option<(u64, u64)>,
    pub(crate) compression: BTreeSet<String>,
    pub(crate) damaged_chunks: Vec<ChunkDamage>,
    /// Where the readable data ends, when the file does not end at a record boundary.
    pub(crate) torn: Option<Damage>,
}

/// A top-level record read from the file: its header fields (owned) and where its data is.
struct TopRecord {
    header: Vec<u8>,
    data_offset: u64,
    data_len: u64,
    end: u64,
}

/// Reads the header of the record at `offset` and locates its data, checking every length
/// against what remains of the file.
fn read_top(file: &mut File, offset: u64, size: u64) -> Result<TopRecord, Ros1Error> {
    let header_len = read_len(file, offset, size)?;
    let header_at = offset + 4;
    let header = read_exact_at(file, header_at, header_len)?;
    let data_len_at = header_at + header_len;
    let data_len = read_len(file, data_len_at, size)?;
    let data_offset = data_len_at + 4;
    Ok(TopRecord {
        header,
        data_offset,
        data_len,
        end: data_offset + data_len,
    })
}

/// A u32 length at `at`, checked against the rest of the file and the record limit.
fn read_len(file: &mut File, at: u64, size: u64) -> Result<u64, Ros1Error> {
    let bytes = read_exact_at_checked(file, at, 4, size)?;
    let len = u64::from(u32::from_le_bytes(bytes.as_slice().try_into().map_err(
        |_| Ros1Error::BadHeader {
            what: "length cut short".into(),
        },
    )?));
    let available = size.saturating_sub(at + 4);
    if len > available {
        return Err(Ros1Error::PastEnd {
            claimed: len,
            available,
        });
    }
    if len > MAX_RECORD_BYTES as u64 {
        return Err(Ros1Error::TooLarge {
            claimed: len,
            limit: MAX_RECORD_BYTES,
        });
    }
    Ok(len)
}

fn read_exact_at_checked(
    file: &mut File,
    at: u64,
    len: u64,
    size: u64,
) -> Result<Vec<u8>, Ros1Error> {
    let available = size.saturating_sub(at);
    if len > available {
        return Err(Ros1Error::PastEnd {
            claimed: len,
            available,
        });
    }
    read_exact_at(file, at, len)
}

/// `len` bytes at `at`; `len` was checked against the file and the record limit.
fn read_exact_at(file: &mut File, at: u64, len: u64) -> Result<Vec<u8>, Ros1Error> {
    let len = usize::try_from(len)
        .ok()
        .filter(|l| *l <= MAX_RECORD_BYTES)
        .ok_or(Ros1Error::TooLarge {
            claimed: len,
            limit: MAX_RECORD_BYTES,
        })?;
    let mut buf = vec![0u8; len];
    file.seek(SeekFrom::Start(at))?;
    file.read_exact(&mut buf)?;
    Ok(buf)
}

/// The decompressed data of the chunk record `top`.
fn chunk_data(file: &mut File, top: &TopRecord) -> Result<Vec<u8>, Ros1Error> {
    let record = Record::new(&top.header, &[])?;
    let compression = record
        .field("compression")
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .ok_or_else(|| missing(OP_CHUNK, "compression"))?;
    let size = u64::from(record.u32_field("size")?);
    if size > MAX_RECORD_BYTES as u64 {
        return Err(Ros1Error::TooLarge {
            claimed: size,
            limit: MAX_RECORD_BYTES,
        });
    }
    let raw = read_exact_at(file, top.data_offset, top.data_len)?;
    let decompressed = match compression.as_str() {
        "none" => raw,
        "bz2" => decompress(
            bzip2::read::BzDecoder::new(raw.as_slice()),
            size,
            &compression,
        )?,
        "lz4" => decompress(
            lz4_flex::frame::FrameDecoder::new(raw.as_slice()),
            size,
            &compression,
        )?,
        _ => return Err(Ros1Error::UnknownCompression(compression)),
    };
    if decompressed.len() as u64 != size {
        return Err(Ros1Error::SizeMismatch {
            expected: size,
            got: decompressed.len() as u64,
        });
    }
    Ok(decompressed)
}

/// Decompresses at most `size + 1` bytes (one more tells a chunk longer than it says).
fn decompress(reader: impl Read, size: u64, compression: &str) -> Result<Vec<u8>, Ros1Error> {
    let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0).min(MAX_RECORD_BYTES));
    reader
        .take(size + 1)
        .read_to_end(&mut out)
        .map_err(|source| Ros1Error::Decompress {
            compression: compression.to_string(),
            source,
        })?;
    Ok(out)
}

/// The compression of a chunk header, for `bag info` (`` for none, as MCAP says it).
fn compression_name(header: &[u8]) -> Option<String> {
    let fields = parse_fields(header).ok()?;
    let c = fields.iter().find(|(n, _)| *n == b"compression")?.1;
    Some(match c {
        b"none" => String::new(),
        other => String::from_utf8_lossy(other).into_owned(),
    })
}

/// A chunk as the index section lists it.
struct ListedChunk {
    place: ChunkPlace,
    /// Per connection: messages in the chunk, as its chunk info says.
    counts: Vec<(u32, u64)>,
    /// Per connection: the (time, offset in the chunk) entries of the index data records after
    /// the chunk; kept only when asked for.
    entries: Vec<(u32, Vec<(u64, u32)>)>,
}

/// What a bag's index section says.
struct IndexSection {
    connections: Vec<(u32, ChannelSpec)>,
    /// Sorted by position in the file.
    chunks: Vec<ListedChunk>,
    compression: BTreeSet<String>,
}

/// What the bag's index section says, when it describes this file: the bag header points at
/// it; it lists the connections and one chunk info per chunk, as many as the header says; and
/// a walk over the record headers before it (no chunk is read) finds exactly the chunks it
/// lists, each followed only by index data records. `None` otherwise (no index section, as when
/// the writer died; a stale one; loose records). With `keep_index_data`, the index data
/// records' entries are read too (12 bytes per message: for checking, not for opening).
fn read_index_section(file: &mut File, size: u64, keep_index_data: bool) -> Option<IndexSection> {
    let first = ROS1_MAGIC.len() as u64;
    let top = read_top(file, first, size).ok()?;
    let header = Record::new(&top.header, &[]).ok()?;
    if header.op != OP_BAG_HEADER {
        return None;
    }
    let u64_field = |record: &Record<'_>, name: &str| {
        let v = record.field(name)?;
        Some(u64::from_le_bytes(v.try_into().ok()?))
    };
    let index_pos = u64_field(&header, "index_pos")?;
    let conn_count = header.u32_field("conn_count").ok()?;
    let chunk_count = header.u32_field("chunk_count").ok()?;
    if index_pos < top.end || index_pos >= size {
        return None;
    }

    let mut connections = Vec::new();
    let mut chunks: Vec<ListedChunk> = Vec::new();
    let mut offset = index_pos;
    while offset < size {
        let top = read_top(file, offset, size).ok()?;
        let data = read_exact_at(file, top.data_offset, top.data_len).ok()?;
        let record = Record::new(&top.header, &data).ok()?;
        match record.op {
            OP_CONNECTION => connections.push(connection_channel(&record).ok()?),
            OP_CHUNK_INFO => {
                let chunk_pos = u64_field(&record, "chunk_pos")?;
                let first_ns = record.time_field("start_time").ok()?;
                let last_ns = record.time_field("end_time").ok()?;
                let pairs = record.u32_field("count").ok()? as usize;
                if data.len() != pairs.checked_mul(8)? || first_ns > last_ns {
                    return None;
                }
                let counts: Vec<(u32, u64)> = data
                    .chunks_exact(8)
                    .map(|p| {
                        let [c0, c1, c2, c3, n0, n1, n2, n3] = p.try_into().unwrap_or([0; 8]);
                        let n = u32::from_le_bytes([n0, n1, n2, n3]);
                        (u32::from_le_bytes([c0, c1, c2, c3]), u64::from(n))
                    })
                    .collect();
                let place = ChunkPlace {
                    offset: chunk_pos,
                    end: 0,
                    first_ns,
                    last_ns,
                    messages: counts.iter().map(|c| c.1).sum(),
                };
                chunks.push(ListedChunk {
                    place,
                    counts,
                    entries: Vec::new(),
                });
            }
            _ => return None,
        }
        offset = top.end;
    }
    if connections.len() != conn_count as usize || chunks.len() != chunk_count as usize {
        return None;
    }

    // The chunks before the index section, by their headers alone, must be the ones listed.
    chunks.sort_by_key(|c| c.place.offset);
    let mut compression = BTreeSet::new();
    let mut listed = 0;
    let mut offset = top.end;
    while offset < index_pos {
        let top = read_top(file, offset, index_pos).ok()?;
        let record = Record::new(&top.header, &[]).ok()?;
        match record.op {
            OP_CHUNK => {
                let chunk = chunks.get_mut(listed)?;
                if chunk.place.offset != offset {
                    return None;
                }
                listed += 1;
                chunk.place.end = top.end;
                if let Some(c) = compression_name(&top.header) {
                    compression.insert(c);
                }
            }
            OP_INDEX_DATA if keep_index_data => {
                let chunk = chunks.get_mut(listed.checked_sub(1)?)?;
                let conn = record.u32_field("conn").ok()?;
                let data = read_exact_at(file, top.data_offset, top.data_len).ok()?;
                let entries = data
                    .chunks_exact(12)
                    .filter_map(|e| {
                        let offset = u32::from_le_bytes(e.get(8..12)?.try_into().ok()?);
                        Some((time_ns(e.get(..8)?)?, offset))
                    })
                    .collect();
                chunk.entries.push((conn, entries));
            }
            OP_INDEX_DATA => {}
            _ => return None,
        }
        offset = top.end;
    }
    if offset != index_pos || listed != chunks.len() {
        return None;
    }
    Some(IndexSection {
        connections,
        chunks,
        compression,
    })
}

impl Ros1Scan {
    /// Scans the bag at `path` (already known to start with [`ROS1_MAGIC`]) record by record.
    /// Fails only when the file cannot be read at all; damage is in the result.
    pub(crate) fn scan(path: &Path, part_name: &str) -> Result<Self, Ros1Error> {
        let mut file = crate::layout::open_regular(path)?;
        let size = file.metadata()?.len();
        if let Some(scan) = Self::from_index_section(&mut file, size) {
            return Ok(scan);
        }
        let mut scan = Ros1Scan {
            index: Ros1Index {
                checked: true,
                ..Ros1Index::default()
            },
            ..Ros1Scan::default()
        };
        let mut offset = ROS1_MAGIC.len() as u64;
        while offset < size {
            let top = match read_top(&mut file, offset, size) {
                Ok(top) => top,
                Err(e) => {
                    scan.torn = Some(Damage {
                        offset,
                        what: e.to_string(),
                    });
                    break;
                }
            };
            let op = Record::new(&top.header, &[]).map(|r| r.op);
            match op {
                Ok(OP_CHUNK) => {
                    if let Some(c) = compression_name(&top.header) {
                        scan.compression.insert(c);
                    }
                    match chunk_data(&mut file, &top)
                        .and_then(|d| scan.add_chunk(offset, top.end, &d))
                    {
                        Ok(()) => {}
                        Err(_) => scan.damaged_chunks.push(ChunkDamage {
                            part: part_name.to_string(),
                            offset,
                            end: top.end,
                            lost_messages: None,
                        }),
                    }
                }
                Ok(OP_MESSAGE_DATA | OP_CONNECTION) => {
                    // Outside a chunk: read as a chunk of one record.
                    let whole = read_exact_at(&mut file, offset, top.end - offset)?;
                    if let Err(e) = scan.add_chunk(offset, top.end, &whole) {
                        scan.torn = Some(Damage {
                            offset,
                            what: e.to_string(),
                        });
                        break;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    scan.torn = Some(Damage {
                        offset,
                        what: e.to_string(),
                    });
                    break;
                }
            }
            offset = top.end;
        }
        scan.index.chunks.sort_by_key(|c| c.first_ns);
        scan.channel_counts = (0u16..)
            .zip(std::mem::take(&mut scan.counts))
            .filter(|&(_, n)| n > 0)
            .collect();
        Ok(scan)
    }

    /// The scan an index section that describes the file gives ([`read_index_section`]);
    /// `None` when there is none, and the file is scanned. Reads a few bytes per chunk instead
    /// of every chunk.
    fn from_index_section(file: &mut File, size: u64) -> Option<Self> {
        let section = read_index_section(file, size, false)?;
        let mut scan = Ros1Scan {
            compression: section.compression,
            ..Ros1Scan::default()
        };
        for (conn, spec) in section.connections {
            if scan.index.connections.get(i64::from(conn)).is_none() {
                let local = u16::try_from(scan.channels.len()).ok()?;
                scan.index.connections.insert(i64::from(conn), local);
                scan.channels.insert(local, spec);
            }
        }
        for listed in section.chunks {
            for &(conn, n) in &listed.counts {
                // Counts of a connection the index does not list: the index is not whole.
                let local = scan.index.connections.get(i64::from(conn))?;
                *scan.channel_counts.entry(local).or_insert(0) += n;
            }
            let place = listed.place;
            if place.messages == 0 {
                continue;
            }
            scan.message_count += place.messages;
            scan.time_range_ns = Some(
                scan.time_range_ns
                    .map_or((place.first_ns, place.last_ns), |(a, b)| {
                        (a.min(place.first_ns), b.max(place.last_ns))
                    }),
            );
            scan.index.chunks.push(place);
        }
        scan.channel_counts.retain(|_, n| *n > 0);
        scan.index.chunks.sort_by_key(|c| c.first_ns);
        Some(scan)
    }

    /// Adds the connections and messages of one chunk's data (the chunk record spans
    /// `offset..end` in the file); nothing when it does not parse.
    fn add_chunk(&mut self, offset: u64, end: u64, data: &[u8]) -> Result<(), Ros1Error> {
        let mut messages: Vec<(u32, u64)> = Vec::new();
        let mut connections = Vec::new();
        for record in records(data) {
            let record = record?;
            match record.op {
                OP_CONNECTION => connections.push(connection_channel(&record)?),
                OP_MESSAGE_DATA => {
                    messages.push((record.u32_field("conn")?, record.time_field("time")?));
                }
                _ => {}
            }
        }
        for (conn, spec) in connections {
            if self.index.connections.get(i64::from(conn)).is_none() {
                let local = u16::try_from(self.channels.len())
                    .map_err(|_| Ros1Error::TooManyConnections(usize::from(u16::MAX)))?;
                self.index.connections.insert(i64::from(conn), local);
                self.channels.insert(local, spec);
            }
        }
        let mut range: Option<(u64, u64)> = None;
        let mut count = 0;
        for (conn, time) in messages {
            // A message before its connection record: nothing to attribute it to.
            let Some(local) = self.index.connections.get(i64::from(conn)) else {
                continue;
            };
            let i = usize::from(local);
            if self.counts.len() <= i {
                self.counts.resize(i + 1, 0);
            }
            if let Some(count) = self.counts.get_mut(i) {
                *count += 1;
            }
            self.message_count += 1;
            count += 1;
            range = Some(range.map_or((time, time), |(a, b)| (a.min(time), b.max(time))));
        }
        if let Some((first_ns, last_ns)) = range {
            self.index.chunks.push(ChunkPlace {
                offset,
                end,
                first_ns,
                last_ns,
                messages: count,
            });
            self.time_range_ns = Some(self.time_range_ns.map_or((first_ns, last_ns), |(a, b)| {
                (a.min(first_ns), b.max(last_ns))
            }));
        }
        Ok(())
    }
}

/// One message of a loaded chunk.
struct Entry {
    log_time_ns: u64,
    channel: u16,
    data: std::ops::Range<usize>,
}

/// A chunk in memory, its messages sorted by time, latest first (popped from the back).
struct Loaded {
    buf: Vec<u8>,
    entries: Vec<Entry>,
}

/// The next message of a [`Ros1Cursor`].
pub(crate) struct Ros1Message<'a> {
    pub(crate) channel: u16,
    pub(crate) log_time_ns: u64,
    pub(crate) data: &'a [u8],
}

/// Reads a ROS 1 bag's messages in log-time order, merging the chunks whose times overlap.
/// A chunk that could not be read is skipped, kept with what it cost, and reading goes on.
pub(crate) struct Ros1Cursor {
    file: File,
    size: u64,
    part_name: String,
    chunks: Vec<ChunkPlace>,
    next_chunk: usize,
    loaded: Vec<Loaded>,
    start_ns: Option<u64>,
    end_ns: Option<u64>,
    damaged: Vec<(ChunkDamage, Ros1Error)>,
}

impl Ros1Cursor {
    /// Reads the chunks `index` found, keeping messages in `[start_ns, end_ns)`.
    pub(crate) fn new(
        path: &Path,
        part_name: &str,
        index: &Ros1Index,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
    ) -> Result<Self, Ros1Error> {
        let file = crate::layout::open_regular(path)?;
        let size = file.metadata()?.len();
        let chunks = index
            .chunks
            .iter()
            .filter(|c| {
                start_ns.is_none_or(|s| c.last_ns >= s) && end_ns.is_none_or(|e| c.first_ns < e)
            })
            .cloned()
            .collect();
        Ok(Ros1Cursor {
            file,
            size,
            part_name: part_name.to_string(),
            chunks,
            next_chunk: 0,
            loaded: Vec::new(),
            start_ns,
            end_ns,
            damaged: Vec::new(),
        })
    }

    /// The chunks skipped since the last call, with why.
    pub(crate) fn take_damaged(&mut self) -> Vec<(ChunkDamage, Ros1Error)> {
        std::mem::take(&mut self.damaged)
    }

    /// The next message in log-time order, or `None` at the end. `wanted` says which
    /// part-local channels to keep.
    pub(crate) fn next(
        &mut self,
        index: &Ros1Index,
        wanted: impl Fn(u16) -> bool,
    ) -> Result<Option<Ros1Message<'_>>, Ros1Error> {
        self.loaded.retain(|l| !l.entries.is_empty());
        loop {
            let earliest = self
                .loaded
                .iter()
                .filter_map(|l| l.entries.last().map(|e| e.log_time_ns))
                .min();
            let Some(next) = self.chunks.get(self.next_chunk) else {
                break;
            };
            if earliest.is_some_and(|t| t < next.first_ns) {
                break;
            }
            let place = next.clone();
            self.next_chunk += 1;
            match self.load(place.offset, index, &wanted) {
                Ok(loaded) if !loaded.entries.is_empty() => self.loaded.push(loaded),
                Ok(_) => {}
                // It costs only its own messages.
                Err(e) => self.damaged.push((place.damage(&self.part_name), e)),
            }
        }
        let Some((i, _)) = self
            .loaded
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.entries.last().map(|e| (i, e.log_time_ns)))
            .min_by_key(|(_, t)| *t)
        else {
            return Ok(None);
        };
        let Some(loaded) = self.loaded.get_mut(i) else {
            return Ok(None);
        };
        let Some(entry) = loaded.entries.pop() else {
            return Ok(None);
        };
        let data = loaded.buf.get(entry.data).unwrap_or(&[]);
        Ok(Some(Ros1Message {
            channel: entry.channel,
            log_time_ns: entry.log_time_ns,
            data,
        }))
    }

    /// Reads the chunk (or lone record) at `offset` and sorts its wanted messages by time.
    fn load(
        &mut self,
        offset: u64,
        index: &Ros1Index,
        wanted: &impl Fn(u16) -> bool,
    ) -> Result<Loaded, Ros1Error> {
        let top = read_top(&mut self.file, offset, self.size)?;
        let op = Record::new(&top.header, &[])?.op;
        let buf = if op == OP_CHUNK {
            chunk_data(&mut self.file, &top)?
        } else {
            read_exact_at(&mut self.file, offset, top.end - offset)?
        };
        let mut entries = Vec::new();
        for record in records(&buf) {
            let record = record?;
            // The record's data is a subslice of `buf`: find where.
            let start = (record.data.as_ptr() as usize).saturating_sub(buf.as_ptr() as usize);
            let range = start..start + record.data.len();
            if record.op != OP_MESSAGE_DATA {
                continue;
            }
            let time = record.time_field("time")?;
            let Some(local) = index.connections.get(i64::from(record.u32_field("conn")?)) else {
                continue;
            };
            if !wanted(local)
                || self.start_ns.is_some_and(|s| time < s)
                || self.end_ns.is_some_and(|e| time >= e)
            {
                continue;
            }
            entries.push(Entry {
                log_time_ns: time,
                channel: local,
                data: range,
            });
        }
        // Stable: equal times keep their order in the chunk; then latest first, for popping.
        entries.sort_by_key(|e| e.log_time_ns);
        entries.reverse();
        Ok(Loaded { buf, entries })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, value: &[u8]) -> Vec<u8> {
        let mut f = Vec::new();
        let len = (name.len() + 1 + value.len()) as u32;
        f.extend_from_slice(&len.to_le_bytes());
        f.extend_from_slice(name.as_bytes());
        f.push(b'=');
        f.extend_from_slice(value);
        f
    }

    fn record(header: &[Vec<u8>], data: &[u8]) -> Vec<u8> {
        let header: Vec<u8> = header.concat();
        let mut r = Vec::new();
        r.extend_from_slice(&(header.len() as u32).to_le_bytes());
        r.extend_from_slice(&header);
        r.extend_from_slice(&(data.len() as u32).to_le_bytes());
        r.extend_from_slice(data);
        r
    }

    fn time(ns: u64) -> Vec<u8> {
        let mut t = ((ns / 1_000_000_000) as u32).to_le_bytes().to_vec();
        t.extend_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        t
    }

    /// A bag of two uncompressed chunks whose messages are out of time order, within and
    /// across chunks.
    fn bag() -> Vec<u8> {
        bag_compressed("none", |inner| inner.to_vec())
    }

    /// [`bag`] with its chunks compressed by `compress`, named `compression` in their headers.
    /// The fixtures' one connection: `/a`, `std_msgs/UInt8`, id 0.
    fn conn_record() -> Vec<u8> {
        record(
            &[
                field("op", &[OP_CONNECTION]),
                field("conn", &0u32.to_le_bytes()),
                field("topic", b"/a"),
            ],
            &[
                field("type", b"std_msgs/UInt8"),
                field("message_definition", b"uint8 data\n"),
            ]
            .concat(),
        )
    }

    /// A message on connection 0 at `ns` holding the one byte `v`.
    fn msg(ns: u64, v: u8) -> Vec<u8> {
        record(
            &[
                field("op", &[OP_MESSAGE_DATA]),
                field("conn", &0u32.to_le_bytes()),
                field("time", &time(ns)),
            ],
            &[v],
        )
    }

    fn bag_compressed(compression: &str, compress: impl Fn(&[u8]) -> Vec<u8>) -> Vec<u8> {
        let conn = conn_record();
        let chunk = |inner: Vec<u8>| {
            record(
                &[
                    field("op", &[OP_CHUNK]),
                    field("compression", compression.as_bytes()),
                    field("size", &(inner.len() as u32).to_le_bytes()),
                ],
                &compress(&inner),
            )
        };
        let mut bag = ROS1_MAGIC.to_vec();
        bag.extend(record(
            &[
                field("op", &[OP_BAG_HEADER]),
                field("index_pos", &0u64.to_le_bytes()),
            ],
            &[b' '; 16],
        ));
        bag.extend(chunk([conn, msg(30, 3), msg(10, 1)].concat()));
        bag.extend(chunk([msg(20, 2), msg(40, 4)].concat()));
        bag
    }

    fn read_all(path: &Path) -> (Ros1Scan, Vec<(u64, u8)>) {
        let scan = Ros1Scan::scan(path, "t.bag").expect("scan");
        let mut cursor = Ros1Cursor::new(path, "x.bag", &scan.index, None, None).expect("cursor");
        let mut got = Vec::new();
        while let Some(m) = cursor.next(&scan.index, |_| true).expect("next") {
            got.push((m.log_time_ns, m.data.first().copied().unwrap_or(0)));
        }
        (scan, got)
    }

    #[test]
    fn overlapping_chunks_merge_in_time_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.bag");
        std::fs::write(&path, bag()).expect("write");
        let (scan, got) = read_all(&path);
        assert_eq!(got, [(10, 1), (20, 2), (30, 3), (40, 4)]);
        assert_eq!(scan.message_count, 4);
        assert_eq!(scan.time_range_ns, Some((10, 40)));
        assert!(scan.torn.is_none());
        let spec = scan.channels.get(&0).expect("channel");
        assert_eq!(spec.topic, "/a");
        let schema = spec.schema.as_ref().expect("schema");
        assert_eq!(
            (schema.name.as_str(), schema.data.as_slice()),
            ("std_msgs/UInt8", &b"uint8 data\n"[..])
        );
    }

    #[test]
    fn lz4_chunks_read_like_uncompressed_ones_and_an_unknown_compression_is_damage() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.bag");
        let lz4 = bag_compressed("lz4", |inner| {
            let mut encoder = lz4_flex::frame::FrameEncoder::new(Vec::new());
            std::io::Write::write_all(&mut encoder, inner).expect("compress");
            encoder.finish().expect("finish")
        });
        std::fs::write(&path, lz4).expect("write");
        let (scan, got) = read_all(&path);
        assert_eq!(got, [(10, 1), (20, 2), (30, 3), (40, 4)]);
        assert_eq!(scan.compression, BTreeSet::from(["lz4".to_owned()]));
        assert!(scan.damaged_chunks.is_empty() && scan.torn.is_none());

        // A compression we do not know: each chunk is skipped and reported, nothing panics.
        std::fs::write(&path, bag_compressed("zip", |inner| inner.to_vec())).expect("write");
        let (scan, got) = read_all(&path);
        assert!(got.is_empty(), "{got:?}");
        assert_eq!(scan.damaged_chunks.len(), 2, "{:?}", scan.damaged_chunks);
    }

    #[test]
    fn a_cut_file_reads_its_whole_chunks_and_says_where_it_ends() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.bag");
        let whole = bag();
        for cut in ROS1_MAGIC.len()..whole.len() {
            std::fs::write(&path, &whole[..cut]).expect("write");
            let (scan, got) = read_all(&path);
            // Only a cut at a record boundary leaves a file that is not torn.
            let at_boundary = cut == ROS1_MAGIC.len() || matches!(got.len(), 0 | 2);
            assert!(scan.torn.is_some() || at_boundary, "cut at {cut}: torn");
            assert!(
                got.is_empty() || got == [(10, 1), (30, 3)],
                "cut at {cut}: only the first chunk is whole: {got:?}"
            );
        }
    }

    #[test]
    fn arbitrary_bytes_after_the_magic_never_panic() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.bag");
        for whole in [bag(), bag_indexed(2).0] {
            for i in ROS1_MAGIC.len()..whole.len() {
                let mut bytes = whole.clone();
                bytes[i] ^= 0xff;
                std::fs::write(&path, &bytes).expect("write");
                if let Ok(scan) = Ros1Scan::scan(&path, "t.bag")
                    && let Ok(mut cursor) = Ros1Cursor::new(&path, "x.bag", &scan.index, None, None)
                {
                    while let Ok(Some(_)) = cursor.next(&scan.index, |_| true) {}
                    let _ = scan.index.damaged_chunks(&path, "t.bag");
                }
            }
        }
    }

    /// [`bag`] as `rosbag` writes it: each chunk followed by an index data record, and at the
    /// end the index section (the connection, one chunk info per chunk) the header points to.
    /// The header claims `chunk_count` chunks. Returns the file, its chunks' offsets and where
    /// each chunk's index entries are.
    fn bag_indexed(chunk_count: u32) -> (Vec<u8>, Vec<u64>, Vec<u64>) {
        let conn = conn_record();
        let header = |index_pos: u64| {
            record(
                &[
                    field("op", &[OP_BAG_HEADER]),
                    field("index_pos", &index_pos.to_le_bytes()),
                    field("conn_count", &1u32.to_le_bytes()),
                    field("chunk_count", &chunk_count.to_le_bytes()),
                ],
                &[b' '; 16],
            )
        };
        let mut bag = ROS1_MAGIC.to_vec();
        bag.extend(header(0));
        let mut infos = Vec::new();
        let mut entries_at = Vec::new();
        // Each chunk's records, and per message its time and offset in the chunk.
        let first_at = conn.len() as u32;
        let second_at = msg(30, 3).len() as u32;
        for (inner, times, offsets) in [
            (
                [conn.clone(), msg(30, 3), msg(10, 1)].concat(),
                [30u64, 10],
                [first_at, first_at + second_at],
            ),
            ([msg(20, 2), msg(40, 4)].concat(), [20, 40], [0, second_at]),
        ] {
            let pos = bag.len() as u64;
            bag.extend(record(
                &[
                    field("op", &[OP_CHUNK]),
                    field("compression", b"none"),
                    field("size", &(inner.len() as u32).to_le_bytes()),
                ],
                &inner,
            ));
            let entries: Vec<u8> = times
                .iter()
                .zip(offsets)
                .flat_map(|(&t, at)| [time(t), at.to_le_bytes().to_vec()].concat())
                .collect();
            bag.extend(record(
                &[
                    field("op", &[OP_INDEX_DATA]),
                    field("ver", &1u32.to_le_bytes()),
                    field("conn", &0u32.to_le_bytes()),
                    field("count", &2u32.to_le_bytes()),
                ],
                &entries,
            ));
            entries_at.push((bag.len() - entries.len()) as u64);
            infos.push((pos, times[0].min(times[1]), times[0].max(times[1])));
        }
        let index_pos = bag.len() as u64;
        bag.extend(conn);
        for &(pos, first, last) in &infos {
            bag.extend(record(
                &[
                    field("op", &[OP_CHUNK_INFO]),
                    field("ver", &1u32.to_le_bytes()),
                    field("chunk_pos", &pos.to_le_bytes()),
                    field("start_time", &time(first)),
                    field("end_time", &time(last)),
                    field("count", &1u32.to_le_bytes()),
                ],
                &[0u32.to_le_bytes(), 2u32.to_le_bytes()].concat(),
            ));
        }
        let header = header(index_pos);
        bag.splice(ROS1_MAGIC.len()..ROS1_MAGIC.len() + header.len(), header);
        (bag, infos.iter().map(|i| i.0).collect(), entries_at)
    }

    #[test]
    fn an_indexed_bag_opens_from_its_index_section_and_reads_like_a_scanned_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.bag");
        std::fs::write(&path, bag_indexed(2).0).expect("write");
        let (scan, got) = read_all(&path);
        assert!(!scan.index.checked, "opened from the index section");
        assert_eq!(got, [(10, 1), (20, 2), (30, 3), (40, 4)]);
        assert_eq!(scan.message_count, 4);
        assert_eq!(scan.time_range_ns, Some((10, 40)));
        assert_eq!(scan.channel_counts, BTreeMap::from([(0, 4)]));
        assert_eq!(scan.compression, BTreeSet::from([String::new()]));
        assert_eq!(scan.channels.get(&0).map(|c| c.topic.as_str()), Some("/a"));
        assert_eq!(scan.index.chunk_start_times(), [10, 20]);
        assert_eq!(
            scan.index.damaged_chunks(&path, "t.bag").expect("check"),
            []
        );

        // An index that does not describe the file (it claims one chunk, there are two): the
        // file is scanned instead, with the same result.
        std::fs::write(&path, bag_indexed(1).0).expect("write");
        let (scan, got) = read_all(&path);
        assert!(scan.index.checked, "scanned");
        assert_eq!(got, [(10, 1), (20, 2), (30, 3), (40, 4)]);
        assert_eq!(scan.message_count, 4);
    }

    #[test]
    fn a_damaged_chunk_of_an_indexed_bag_costs_only_its_own_messages_and_says_how_many() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.bag");
        let (mut bytes, chunks, _) = bag_indexed(2);
        // The second chunk's first message record claims more header than the chunk holds.
        let second = chunks[1] as usize;
        let data_len_at = second
            + 4
            + u32::from_le_bytes(bytes[second..second + 4].try_into().expect("4 bytes")) as usize;
        bytes[data_len_at + 4..data_len_at + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        std::fs::write(&path, bytes).expect("write");

        let scan = Ros1Scan::scan(&path, "t.bag").expect("scan");
        assert!(!scan.index.checked);
        assert_eq!(
            scan.message_count, 4,
            "the index's count, before any chunk is read"
        );
        let mut cursor = Ros1Cursor::new(&path, "t.bag", &scan.index, None, None).expect("cursor");
        let mut got = Vec::new();
        while let Some(m) = cursor.next(&scan.index, |_| true).expect("next") {
            got.push(m.log_time_ns);
        }
        assert_eq!(got, [10, 30], "the first chunk's messages");
        let damaged = cursor.take_damaged();
        assert_eq!(damaged.len(), 1);
        let expected = ChunkDamage {
            part: "t.bag".into(),
            offset: chunks[1],
            end: damaged[0].0.end,
            lost_messages: Some(2),
        };
        assert_eq!(damaged[0].0, expected);
        assert!(damaged[0].0.end > chunks[1]);
        assert_eq!(
            scan.index.damaged_chunks(&path, "t.bag").expect("check"),
            [expected]
        );
    }

    #[test]
    fn checking_an_indexed_bag_finds_chunk_infos_and_index_entries_that_do_not_match() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.bag");
        let (bytes, _, entries_at) = bag_indexed(2);
        std::fs::write(&path, &bytes).expect("write");
        let check = check_bag(&path, "t.bag").expect("check");
        assert_eq!(check.problems, [], "the fixture is sound");
        assert_eq!((check.chunks, check.messages), (2, 4));
        assert_eq!(check.connections[&0].messages, 4);

        // The second chunk info says the chunk ends at 41 ns (its last message is at 40).
        let mut wrong_time = bytes.clone();
        let at = wrong_time
            .windows(9)
            .rposition(|w| w == b"end_time=")
            .expect("end_time")
            + 9;
        wrong_time[at..at + 8].copy_from_slice(&time(41));
        std::fs::write(&path, &wrong_time).expect("write");
        let check = check_bag(&path, "t.bag").expect("check");
        assert_eq!(check.problems.len(), 1, "{:?}", check.problems);
        assert_eq!(check.problems[0].record, "ChunkInfo");
        assert!(
            check.problems[0].found.contains("(20, 40)"),
            "{:?}",
            check.problems
        );

        // The first index entry of the second chunk points 1 byte into a record.
        let mut wrong_entry = bytes;
        // An entry: time (8 bytes), then the offset.
        let at = entries_at[1] as usize + 8;
        wrong_entry[at..at + 4].copy_from_slice(&1u32.to_le_bytes());
        std::fs::write(&path, &wrong_entry).expect("write");
        let check = check_bag(&path, "t.bag").expect("check");
        assert_eq!(check.problems.len(), 1, "{:?}", check.problems);
        assert_eq!(check.problems[0].record, "IndexData");
        assert_eq!(check.problems[0].offset_in_chunk, Some(1));
    }
}
