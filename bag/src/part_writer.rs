//! Writes one MCAP part: a data section of chunks, each built in memory and compressed in one
//! call when it closes, then a summary (schemas, channels, statistics, chunk indexes) and the
//! footer.
//!
//! Why not the mcap crate's writer: it streams every message into its compressor through
//! several small writes (opcode, length, each header field, payload), and at live rates that
//! per-call cost is as large as the compression itself. Here a message is one append to a
//! buffer. Reading stays with the mcap crate, which reads these files back in the tests, and
//! `bag verify` checks them with its own parser.
//!
//! Records are laid out by the format layer (`crate::format`: message and chunk headers, summary
//! offsets, footer, field encoding), the same one the reader parses with; what is left here is
//! what to write when: chunking, compression choices, indexes and statistics.
//!
//! Schema and channel records go at the top level, outside chunks, as soon as they are added,
//! so they reach the file before any message that uses them: a part cut short keeps every
//! closed chunk readable.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use crate::format::encode::{put_bytes, put_map, put_str, put_u16, put_u32, put_u64, record};
use crate::format::{
    ChunkHeader, Compression, Footer, MAGIC, MAX_RECORD_BYTES, MESSAGE_RECORD_OVERHEAD,
    MessageHeader, SummaryOffset, op,
};

/// The most bytes of records one chunk holds. Readers refuse a chunk whose record or whose
/// uncompressed records exceed [`MAX_RECORD_BYTES`]; a chunk's bytes on disk are never more than
/// its records (compression that does not shrink them is not used), and the rest leaves room
/// for the chunk's header.
pub(crate) const MAX_CHUNK_RECORDS_BYTES: usize = MAX_RECORD_BYTES - 4096;

/// The part being written. Chunks close on [`PartWriter::flush`], or by themselves once they
/// hold `auto_chunk_bytes` of records when that is set.
pub(crate) struct PartWriter<W: Write> {
    out: Output<W>,
    compressor: ChunkCompressor,
    auto_chunk_bytes: Option<usize>,
    schemas: Vec<Vec<u8>>,
    schema_ids: HashMap<(String, String, Vec<u8>), u16>,
    channels: Vec<Vec<u8>>,
    channel_ids: HashMap<ChannelKey, u16>,
    chunk: OpenChunk,
    chunk_indexes: Vec<u8>,
    chunk_count: u32,
    stats: Statistics,
}

type ChannelKey = (u16, String, String, BTreeMap<String, String>);

#[derive(Default)]
struct OpenChunk {
    records: Vec<u8>,
    time_range: Option<(u64, u64)>,
    /// By channel id: (log time, offset in `records`) of its messages in this chunk.
    indexes: Vec<Vec<(u64, u64)>>,
}

#[derive(Default)]
struct Statistics {
    message_count: u64,
    time_range: Option<(u64, u64)>,
    /// Message count by channel id, one entry per channel added.
    channel_counts: Vec<u64>,
}

impl<W: Write> PartWriter<W> {
    /// Starts a part on `out` (magic and header record, whose profile is `profile`: `""` or
    /// `ros2`, see [`Profile`](crate::Profile)).
    pub(crate) fn new(
        out: W,
        profile: &str,
        compression: Compression,
        level: i32,
        auto_chunk_bytes: Option<usize>,
    ) -> io::Result<Self> {
        let mut out = Output::new(out);
        out.write_all(MAGIC)?;
        let mut header = Vec::new();
        record(&mut header, op::HEADER, |b| {
            put_str(b, profile);
            put_str(b, concat!("redline-bag/", env!("CARGO_PKG_VERSION")));
        });
        out.write_all(&header)?;
        Ok(PartWriter {
            out,
            compressor: ChunkCompressor::new(compression, level)?,
            auto_chunk_bytes,
            schemas: Vec::new(),
            schema_ids: HashMap::new(),
            channels: Vec::new(),
            channel_ids: HashMap::new(),
            chunk: OpenChunk::default(),
            chunk_indexes: Vec::new(),
            chunk_count: 0,
            stats: Statistics::default(),
        })
    }

    /// Bytes handed to `out` so far; the open chunk is not among them.
    pub(crate) fn position(&self) -> u64 {
        self.out.position
    }

    /// Whether one more channel and one more schema still fit in this part (MCAP numbers them
    /// with 16 bits: channels 0 to 65535, schemas 1 to 65535).
    pub(crate) fn has_room_for_a_channel(&self) -> bool {
        self.channels.len() <= usize::from(u16::MAX) && self.schemas.len() < usize::from(u16::MAX)
    }

    /// Bytes of records in the open chunk, before compression.
    pub(crate) fn open_chunk_bytes(&self) -> usize {
        self.chunk.records.len()
    }

    /// The id of a schema with this content, writing its record the first time (ids start
    /// at 1; 0 means no schema).
    pub(crate) fn add_schema(
        &mut self,
        name: &str,
        encoding: &str,
        data: &[u8],
    ) -> io::Result<u16> {
        let key = (name.to_string(), encoding.to_string(), data.to_vec());
        if let Some(id) = self.schema_ids.get(&key) {
            return Ok(*id);
        }
        let id = u16::try_from(self.schemas.len() + 1)
            .map_err(|_| invalid_input("more than 65535 schemas in one part"))?;
        let mut bytes = Vec::with_capacity(data.len() + name.len() + encoding.len() + 32);
        record(&mut bytes, op::SCHEMA, |b| {
            put_u16(b, id);
            put_str(b, name);
            put_str(b, encoding);
            put_bytes(b, data);
        });
        self.out.write_all(&bytes)?;
        self.schemas.push(bytes);
        self.schema_ids.insert(key, id);
        Ok(id)
    }

    /// The id of a channel with this content, writing its record the first time.
    pub(crate) fn add_channel(
        &mut self,
        schema_id: u16,
        topic: &str,
        message_encoding: &str,
        metadata: &BTreeMap<String, String>,
    ) -> io::Result<u16> {
        if schema_id != 0 && usize::from(schema_id) > self.schemas.len() {
            return Err(invalid_input(format!(
                "schema id {schema_id} was never added"
            )));
        }
        let key = (
            schema_id,
            topic.to_string(),
            message_encoding.to_string(),
            metadata.clone(),
        );
        if let Some(id) = self.channel_ids.get(&key) {
            return Ok(*id);
        }
        let id = u16::try_from(self.channels.len())
            .map_err(|_| invalid_input("more than 65536 channels in one part"))?;
        let mut bytes = Vec::new();
        record(&mut bytes, op::CHANNEL, |b| {
            put_u16(b, id);
            put_u16(b, schema_id);
            put_str(b, topic);
            put_str(b, message_encoding);
            put_map(b, metadata.iter(), |b, (k, v)| {
                put_str(b, k);
                put_str(b, v);
            });
        });
        self.out.write_all(&bytes)?;
        self.channels.push(bytes);
        self.channel_ids.insert(key, id);
        self.stats.channel_counts.push(0);
        self.chunk.indexes.push(Vec::new());
        Ok(id)
    }

    /// Appends a message to the open chunk.
    ///
    /// Closes the open chunk first when the message would take it past
    /// [`MAX_CHUNK_RECORDS_BYTES`], and refuses a message that alone would, so that no reader
    /// ever meets a chunk it refuses.
    pub(crate) fn write_message(&mut self, header: &MessageHeader, data: &[u8]) -> io::Result<()> {
        let record_len = MESSAGE_RECORD_OVERHEAD.saturating_add(data.len());
        if record_len > MAX_CHUNK_RECORDS_BYTES {
            return Err(invalid_input(format!(
                "a message of {} bytes is larger than a chunk may be ({MAX_CHUNK_RECORDS_BYTES} bytes)",
                data.len()
            )));
        }
        if usize::from(header.channel_id) < self.stats.channel_counts.len()
            && self.chunk.records.len() + record_len > MAX_CHUNK_RECORDS_BYTES
        {
            self.close_chunk()?;
        }
        let channel = usize::from(header.channel_id);
        let Some(count) = self.stats.channel_counts.get_mut(channel) else {
            return Err(invalid_input(format!(
                "channel id {} was never added",
                header.channel_id
            )));
        };
        *count += 1;
        let time = header.log_time;
        self.stats.message_count += 1;
        self.stats.time_range = Some(widen(self.stats.time_range, time));
        let chunk = &mut self.chunk;
        chunk.time_range = Some(widen(chunk.time_range, time));
        chunk.indexes[channel].push((time, chunk.records.len() as u64));
        header.write_record(&mut chunk.records, data);
        if self
            .auto_chunk_bytes
            .is_some_and(|max| self.chunk.records.len() >= max)
        {
            self.close_chunk()?;
        }
        Ok(())
    }

    /// Closes the open chunk (if it holds anything) and flushes `out`.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.close_chunk()?;
        self.out.flush()
    }

    /// Closes the open chunk and writes the data end, the summary and the footer; hands `out`
    /// back, flushed.
    pub(crate) fn finish(mut self) -> io::Result<W> {
        self.close_chunk()?;
        let mut tail = Vec::new();
        let data_crc = self.out.crc.clone().finalize();
        record(&mut tail, op::DATA_END, |b| put_u32(b, data_crc));
        self.out.write_all(&tail)?;

        let summary_start = self.out.position;
        self.out.crc = crc32fast::Hasher::new();
        let mut offsets = Vec::new();
        let statistics = self.statistics_record();
        let groups: [(u8, &[u8]); 4] = [
            (op::SCHEMA, &self.schemas.concat()),
            (op::CHANNEL, &self.channels.concat()),
            (op::STATISTICS, &statistics),
            (op::CHUNK_INDEX, &self.chunk_indexes),
        ];
        for (opcode, group) in groups {
            if group.is_empty() {
                continue;
            }
            let start = self.out.position;
            self.out.write_all(group)?;
            SummaryOffset {
                group_opcode: opcode,
                group_start: start,
                group_length: group.len() as u64,
            }
            .write_record(&mut offsets);
        }
        let offsets_start = self.out.position;
        self.out.write_all(&offsets)?;
        let mut footer = Vec::new();
        Footer {
            summary_start,
            summary_offset_start: offsets_start,
        }
        .write_head(&mut footer);
        self.out.write_all(&footer)?;
        let summary_crc = self.out.crc.clone().finalize();
        self.out.write_all(&summary_crc.to_le_bytes())?;
        self.out.write_all(MAGIC)?;
        self.out.flush()?;
        Ok(self.out.inner)
    }

    fn statistics_record(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        let (start, end) = self.stats.time_range.unwrap_or((0, 0));
        record(&mut bytes, op::STATISTICS, |b| {
            put_u64(b, self.stats.message_count);
            put_u16(b, self.schemas.len() as u16);
            put_u32(b, self.channels.len() as u32);
            put_u32(b, 0); // attachments
            put_u32(b, 0); // metadata records
            put_u32(b, self.chunk_count);
            put_u64(b, start);
            put_u64(b, end);
            put_map(
                b,
                self.stats.channel_counts.iter().enumerate(),
                |b, (id, n)| {
                    put_u16(b, id as u16);
                    put_u64(b, *n);
                },
            );
        });
        bytes
    }

    fn close_chunk(&mut self) -> io::Result<()> {
        let Some((start_time, end_time)) = self.chunk.time_range.take() else {
            return Ok(());
        };
        let records = &self.chunk.records;
        let mut records_crc = crc32fast::Hasher::new();
        records_crc.update(records);
        let uncompressed_crc = records_crc.clone().finalize();
        let (name, compressed) = self.compressor.compress(records, end_time)?;
        let chunk_start = self.out.position;
        let mut head = Vec::with_capacity(64);
        ChunkHeader {
            message_start_time: start_time,
            message_end_time: end_time,
            uncompressed_size: records.len() as u64,
            uncompressed_crc,
            compression: name,
        }
        .write_head(&mut head, compressed.len() as u64);
        self.out.write_all(&head)?;
        if name.is_empty() {
            // Stored as they are: the records' CRC extends the data section's, without a
            // second pass over them.
            self.out.write_all_hashed(compressed, &records_crc)?;
        } else {
            self.out.write_all(compressed)?;
        }
        let chunk_length = self.out.position - chunk_start;

        let index_start = self.out.position;
        let mut index_offsets = Vec::new();
        let mut indexes = Vec::new();
        for (channel, entries) in self.chunk.indexes.iter_mut().enumerate() {
            if entries.is_empty() {
                continue;
            }
            let channel = channel as u16;
            index_offsets.push((channel, index_start + indexes.len() as u64));
            record(&mut indexes, op::MESSAGE_INDEX, |b| {
                put_u16(b, channel);
                put_u32(b, (entries.len() * 16) as u32);
                for (time, offset) in entries.iter() {
                    put_u64(b, *time);
                    put_u64(b, *offset);
                }
            });
            entries.clear();
        }
        self.out.write_all(&indexes)?;

        record(&mut self.chunk_indexes, op::CHUNK_INDEX, |b| {
            put_u64(b, start_time);
            put_u64(b, end_time);
            put_u64(b, chunk_start);
            put_u64(b, chunk_length);
            put_map(b, index_offsets.iter(), |b, (channel, offset)| {
                put_u16(b, *channel);
                put_u64(b, *offset);
            });
            put_u64(b, indexes.len() as u64);
            put_str(b, name);
            put_u64(b, compressed.len() as u64);
            put_u64(b, records.len() as u64);
        });
        self.chunk_count += 1;
        self.chunk.records.clear();
        Ok(())
    }
}

fn widen(range: Option<(u64, u64)>, time: u64) -> (u64, u64) {
    match range {
        None => (time, time),
        Some((start, end)) => (start.min(time), end.max(time)),
    }
}

fn invalid_input(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what.into())
}

/// After a chunk that compression barely shrank, the chunks that follow are stored untried: at
/// least this many of them,
const RAW_AFTER_POOR: u32 = 15;

/// and all that end less than this long (log time, ns) after it. At live rates of hardly
/// compressible data, chunks fill many times a second, and a trial every sixteenth chunk still
/// took an eighth of the recorder's time.
const RETRY_AFTER_NS: u64 = 1_000_000_000;

/// Compresses whole chunks, keeping its context and output buffer from chunk to chunk.
///
/// A chunk that compression shrinks by less than an eighth is stored as it is, and so are the
/// chunks after it for a while ([`RAW_AFTER_POOR`], [`RETRY_AFTER_NS`]), untried: data that hardly
/// compresses (noise-like floats, already compressed images) would cost the recorder's CPU for
/// next to nothing on disk, and would cost every reader a decompression. Readers need nothing
/// special: each chunk names its own compression.
struct ChunkCompressor {
    codec: Codec,
    /// After a poor trial: chunks still to store untried, and the log time the trial's chunk
    /// ended at.
    raw_chunks_left: u32,
    poor_at_ns: Option<u64>,
}

impl ChunkCompressor {
    fn new(compression: Compression, level: i32) -> io::Result<Self> {
        Ok(ChunkCompressor {
            codec: Codec::new(compression, level)?,
            raw_chunks_left: 0,
            poor_at_ns: None,
        })
    }

    /// The compression as MCAP names it and the bytes of a chunk whose last message was logged
    /// at `end_time`.
    fn compress<'a>(
        &'a mut self,
        records: &'a [u8],
        end_time: u64,
    ) -> io::Result<(&'static str, &'a [u8])> {
        let ChunkCompressor {
            codec,
            raw_chunks_left,
            poor_at_ns,
        } = self;
        if matches!(codec, Codec::None) {
            return Ok(("", records));
        }
        // A log time before the poor trial's (a clock stepped back) does not hold retries off.
        let within_retry_wait = poor_at_ns
            .and_then(|poor_at| end_time.checked_sub(poor_at))
            .is_some_and(|since| since < RETRY_AFTER_NS);
        if *raw_chunks_left > 0 || within_retry_wait {
            *raw_chunks_left = raw_chunks_left.saturating_sub(1);
            return Ok(("", records));
        }
        let name = codec.name();
        let compressed = codec.compress(records)?;
        if compressed.len() * 8 > records.len() * 7 {
            *raw_chunks_left = RAW_AFTER_POOR;
            *poor_at_ns = Some(end_time);
            return Ok(("", records));
        }
        Ok((name, compressed))
    }
}

/// One compression, keeping its context and output buffer from chunk to chunk.
enum Codec {
    None,
    Zstd(Box<zstd::bulk::Compressor<'static>>, Vec<u8>),
    Lz4(Vec<u8>),
}

impl Codec {
    fn new(compression: Compression, level: i32) -> io::Result<Self> {
        Ok(match compression {
            Compression::None => Codec::None,
            Compression::Zstd => {
                Codec::Zstd(Box::new(zstd::bulk::Compressor::new(level)?), Vec::new())
            }
            Compression::Lz4 => Codec::Lz4(Vec::new()),
        })
    }

    /// The name MCAP gives the compression.
    fn name(&self) -> &'static str {
        match self {
            Codec::None => "",
            Codec::Zstd(..) => "zstd",
            Codec::Lz4(_) => "lz4",
        }
    }

    fn compress<'a>(&'a mut self, records: &'a [u8]) -> io::Result<&'a [u8]> {
        match self {
            Codec::None => Ok(records),
            Codec::Zstd(context, out) => {
                out.clear();
                out.reserve(zstd::zstd_safe::compress_bound(records.len()));
                context.compress_to_buffer(records, out)?;
                Ok(out)
            }
            Codec::Lz4(out) => {
                out.clear();
                // MCAP's lz4 chunks are LZ4 frames.
                let mut encoder = lz4_flex::frame::FrameEncoder::new(&mut *out);
                encoder.write_all(records)?;
                encoder.finish().map_err(io::Error::other)?;
                Ok(out)
            }
        }
    }
}

/// The file side: counts bytes and keeps a running CRC for the data section and the summary.
struct Output<W> {
    inner: W,
    position: u64,
    crc: crc32fast::Hasher,
}

impl<W: Write> Output<W> {
    fn new(inner: W) -> Self {
        Output {
            inner,
            position: 0,
            crc: crc32fast::Hasher::new(),
        }
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.write_all(bytes)?;
        self.crc.update(bytes);
        self.position += bytes.len() as u64;
        Ok(())
    }

    /// Writes `bytes`, whose CRC `hashed` holds already.
    fn write_all_hashed(&mut self, bytes: &[u8], hashed: &crc32fast::Hasher) -> io::Result<()> {
        self.inner.write_all(bytes)?;
        self.crc.combine(hashed);
        self.position += bytes.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (channel, sequence, log time, payload) of each message written.
    type Written = Vec<(u16, u32, u64, Vec<u8>)>;

    /// A part with two channels sharing a schema and one without a schema, over several
    /// chunks; `step_back`: every tenth message is logged earlier than the one before.
    fn write_part(compression: Compression, step_back: bool) -> (Vec<u8>, Written) {
        let mut w = PartWriter::new(Vec::new(), "", compression, 0, Some(3_000)).unwrap();
        let schema = w.add_schema("Imu", "capnp", &[7u8; 300]).unwrap();
        assert_eq!(w.add_schema("Imu", "capnp", &[7u8; 300]).unwrap(), schema);
        let metadata = BTreeMap::from([("zenoh/encoding".to_string(), "x".to_string())]);
        let imu = w
            .add_channel(schema, "car/imu", "capnp", &metadata)
            .unwrap();
        let imu2 = w
            .add_channel(schema, "car/imu2", "capnp", &BTreeMap::new())
            .unwrap();
        let raw = w
            .add_channel(0, "car/raw", "bytes", &BTreeMap::new())
            .unwrap();
        assert_eq!(
            w.add_channel(schema, "car/imu", "capnp", &metadata)
                .unwrap(),
            imu
        );
        let mut written = Vec::new();
        for i in 0..500u32 {
            let channel = [imu, imu2, raw][i as usize % 3];
            let back = if step_back && i % 10 == 9 { 250 } else { 0 };
            let log_time = 1_000 + u64::from(i) * 100 - back;
            let data: Vec<u8> = (0..(i % 40) as u8)
                .map(|k| k.wrapping_mul(31) ^ i as u8)
                .collect();
            let header = MessageHeader {
                channel_id: channel,
                sequence: i,
                log_time,
                publish_time: log_time - 5,
            };
            w.write_message(&header, &data).unwrap();
            written.push((channel, i, log_time, data));
        }
        (w.finish().unwrap(), written)
    }

    #[test]
    fn the_mcap_crate_reads_back_every_message_and_the_summary() {
        for compression in [Compression::Zstd, Compression::Lz4, Compression::None] {
            let (bytes, written) = write_part(compression, true);
            let read: Written = mcap::MessageStream::new(&bytes)
                .unwrap()
                .map(|m| {
                    let m = m.unwrap();
                    assert_eq!(m.publish_time, m.log_time - 5);
                    (m.channel.id, m.sequence, m.log_time, m.data.into_owned())
                })
                .collect();
            assert_eq!(read, written, "{compression:?}");

            let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
            let stats = summary.stats.as_ref().unwrap();
            assert_eq!(stats.message_count, 500);
            assert_eq!((stats.schema_count, stats.channel_count), (1, 3));
            assert_eq!(stats.channel_message_counts.values().sum::<u64>(), 500);
            assert_eq!(stats.message_start_time, 1_000);
            assert_eq!(stats.message_end_time, 1_000 + 498 * 100);
            assert_eq!(summary.channels.len(), 3);
            assert_eq!(summary.channels[&0].metadata["zenoh/encoding"], "x");
            assert!(summary.chunk_indexes.len() > 5, "{compression:?}");
            assert_eq!(stats.chunk_count as usize, summary.chunk_indexes.len());
            let mut indexed = 0;
            for index in &summary.chunk_indexes {
                assert_eq!(index.compression, compression.mcap_name());
                let by_channel = summary.read_message_indexes(&bytes, index).unwrap();
                let offsets: Vec<u64> = by_channel.values().flatten().map(|e| e.offset).collect();
                let chunk = summary.stream_chunk(&bytes, index).unwrap();
                let messages: Vec<_> = chunk.map(|m| m.unwrap()).collect();
                assert_eq!(offsets.len(), messages.len());
                for entries in by_channel.values() {
                    for e in entries {
                        let m = summary.seek_message(&bytes, index, e).unwrap();
                        assert_eq!(m.log_time, e.log_time);
                    }
                }
                indexed += messages.len();
            }
            assert_eq!(indexed, 500);
        }
    }

    fn stats_chunk_count(bytes: &[u8]) -> u64 {
        let summary = mcap::Summary::read(bytes).unwrap().unwrap();
        u64::from(summary.stats.unwrap().chunk_count)
    }

    #[test]
    fn our_verifier_finds_nothing_to_report() {
        for compression in [Compression::Zstd, Compression::Lz4, Compression::None] {
            let (bytes, _) = write_part(compression, false);
            let report = crate::verify::verify_bytes("part.mcap", &bytes);
            assert!(report.findings.is_empty(), "{compression:?}: {report:#?}");
            assert_eq!(report.error_count + report.warning_count, 0);
            assert!(report.finished);
            assert_eq!(report.message_count, 500);
            assert_eq!(report.chunk_count, stats_chunk_count(&bytes));
        }
    }

    #[test]
    fn a_part_without_messages_is_still_a_whole_file() {
        let mut w = PartWriter::new(Vec::new(), "", Compression::Zstd, 0, None).unwrap();
        w.add_channel(0, "car/quiet", "json", &BTreeMap::new())
            .unwrap();
        w.flush().unwrap();
        let bytes = w.finish().unwrap();
        let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
        assert_eq!(summary.stats.as_ref().unwrap().message_count, 0);
        assert!(summary.chunk_indexes.is_empty());
        assert_eq!(summary.channels.len(), 1);
        assert_eq!(mcap::MessageStream::new(&bytes).unwrap().count(), 0);
        let report = crate::verify::verify_bytes("p", &bytes);
        assert_eq!(report.error_count + report.warning_count, 0, "{report:#?}");
    }

    /// Writes `noise` messages of noise, then `smooth` ones that compress well, the i-th at log
    /// time `log_time(i)`, into chunks of about 13 messages; checks that they read back and
    /// verify without an error, and returns the compression of each chunk with its start and
    /// end times, and the number of warnings.
    fn noise_then_smooth(
        compression: Compression,
        noise: u64,
        smooth: u64,
        log_time: impl Fn(u64) -> u64,
    ) -> (Vec<(String, u64, u64)>, u64) {
        let mut w = PartWriter::new(Vec::new(), "", compression, -1, Some(3_000)).unwrap();
        let channel = w
            .add_channel(0, "car/noise", "bytes", &BTreeMap::new())
            .unwrap();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut written = Vec::new();
        for i in 0..noise + smooth {
            let data: Vec<u8> = if i < noise {
                (0..200)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        state as u8
                    })
                    .collect()
            } else {
                vec![i as u8; 200]
            };
            let header = MessageHeader {
                channel_id: channel,
                sequence: i as u32,
                log_time: log_time(i),
                publish_time: log_time(i),
            };
            w.write_message(&header, &data).unwrap();
            written.push(data);
        }
        let bytes = w.finish().unwrap();

        let read: Vec<Vec<u8>> = mcap::MessageStream::new(&bytes)
            .unwrap()
            .map(|m| m.unwrap().data.into_owned())
            .collect();
        assert_eq!(read, written, "{compression:?}");
        let report = crate::verify::verify_bytes("part.mcap", &bytes);
        assert_eq!(report.error_count, 0, "{compression:?}: {report:#?}");
        let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
        let chunks = summary
            .chunk_indexes
            .iter()
            .map(|c| {
                let name = c.compression.clone();
                (name, c.message_start_time, c.message_end_time)
            })
            .collect();
        (chunks, report.warning_count)
    }

    #[test]
    fn chunks_compression_barely_shrinks_are_stored_raw_until_a_retry_pays() {
        for compression in [Compression::Zstd, Compression::Lz4] {
            // 10 ms apart: 15 chunks take longer than the second a retry also waits for.
            const SPACING: u64 = 10_000_000;
            const SWITCH: u64 = 300 * SPACING;
            let (chunks, warnings) = noise_then_smooth(compression, 300, 600, |i| i * SPACING);
            assert_eq!(warnings, 0);
            let noise: Vec<&str> = chunks
                .iter()
                .filter(|c| c.2 < SWITCH)
                .map(|c| c.0.as_str())
                .collect();
            assert!(noise.len() > RAW_AFTER_POOR as usize, "{noise:?}");
            assert!(
                noise.iter().all(|c| c.is_empty()),
                "{compression:?}: {noise:?}"
            );
            let smooth: Vec<&str> = chunks
                .iter()
                .filter(|c| c.1 >= SWITCH)
                .map(|c| c.0.as_str())
                .collect();
            let raw = smooth.iter().take_while(|c| c.is_empty()).count();
            assert!(
                raw <= RAW_AFTER_POOR as usize,
                "{compression:?}: {smooth:?}"
            );
            assert!(
                smooth[raw..].iter().all(|c| *c == compression.mcap_name()),
                "{compression:?}: {smooth:?}"
            );
            assert!(smooth.len() > raw + 5, "{smooth:?}");
        }
    }

    #[test]
    fn at_high_rates_a_retry_also_waits_a_second_of_log_time() {
        // 1 ms apart: a chunk spans about 13 ms, so 15 chunks pass long before a second does.
        const SPACING: u64 = 1_000_000;
        let (chunks, warnings) = noise_then_smooth(Compression::Zstd, 300, 1_500, |i| i * SPACING);
        assert_eq!(warnings, 0);
        // The first chunk, noise, was tried; nothing is tried again for a second after it.
        let retry_at = chunks[0].2 + RETRY_AFTER_NS;
        let untried: Vec<_> = chunks.iter().filter(|c| c.2 < retry_at).collect();
        assert!(untried.iter().all(|c| c.0.is_empty()), "{chunks:?}");
        let smooth_untried = untried.iter().filter(|c| c.1 >= 300 * SPACING).count();
        assert!(smooth_untried > RAW_AFTER_POOR as usize, "{chunks:?}");
        // The first chunk to end after it is tried, compresses, and so do all after it.
        let tried: Vec<_> = chunks.iter().filter(|c| c.2 >= retry_at).collect();
        assert!(tried.len() > 5, "{chunks:?}");
        assert!(tried.iter().all(|c| c.0 == "zstd"), "{chunks:?}");
    }

    #[test]
    fn a_clock_stepped_back_does_not_hold_retries_off() {
        // Noise at 100 s, then data that compresses well logged from 0 s, 1 ms apart. (The
        // chunk where the clock steps back draws a warning from verify, as it should.)
        const NOISE: u64 = 300;
        let (chunks, _) = noise_then_smooth(Compression::Zstd, NOISE, 600, |i| {
            if i < NOISE {
                100_000_000_000 + i * 1_000_000
            } else {
                (i - NOISE) * 1_000_000
            }
        });
        let smooth: Vec<&str> = chunks
            .iter()
            .filter(|c| c.1 < 100_000_000_000)
            .map(|c| c.0.as_str())
            .collect();
        let raw = smooth.iter().take_while(|c| c.is_empty()).count();
        assert!(raw <= RAW_AFTER_POOR as usize, "{smooth:?}");
        assert!(smooth[raw..].iter().all(|c| *c == "zstd"), "{smooth:?}");
        assert!(smooth.len() > raw + 5, "{smooth:?}");
    }

    #[test]
    fn refuses_ids_it_never_gave_and_writes_nothing_for_them() {
        let mut w = PartWriter::new(Vec::new(), "", Compression::None, 0, None).unwrap();
        assert!(w.add_channel(3, "t", "e", &BTreeMap::new()).is_err());
        let header = MessageHeader {
            channel_id: 0,
            sequence: 0,
            log_time: 0,
            publish_time: 0,
        };
        assert!(w.write_message(&header, b"x").is_err());
        assert_eq!(w.open_chunk_bytes(), 0);
        let bytes = w.finish().unwrap();
        assert_eq!(
            mcap::Summary::read(&bytes).unwrap().unwrap().channels.len(),
            0
        );
    }
}
