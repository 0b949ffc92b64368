//! Reading a part chunk by chunk when the chunks it needs do not overlap in time: each chunk is read,
//! decompressed and CRC-checked once, and its messages are lent straight out of the chunk buffer
//! in log-time order (no copy per message). A damaged chunk costs only its own messages: it is
//! skipped, kept as a [`ChunkDamage`] with what it held, and reading goes on with the next.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

use crate::error::{BagError, Result};
use crate::filter::ReadFilter;
use crate::format::{
    ChunkDecompressor, FormatError, MAX_RECORD_BYTES, MESSAGE_HEADER_LEN, MessageHeader,
    RECORD_PREFIX_LEN, RecordPrefix, Records, message_index_entries, op,
};
use crate::message::ChunkDamage;
use crate::part::PartInfo;

/// One message of the loaded chunk.
#[derive(Clone)]
pub(crate) struct Entry {
    pub channel: usize,
    pub sequence: u32,
    pub log_time: u64,
    pub publish_time: u64,
    pub data: Range<usize>,
}

/// What the cursor needs of a chunk's index: where the chunk is and the times it spans.
#[derive(Clone, Copy)]
struct ChunkSpan {
    offset: u64,
    length: u64,
    start_ns: u64,
    end_ns: u64,
    /// Bytes of the MessageIndex records right after the chunk.
    message_index_length: u64,
}

impl ChunkSpan {
    fn of(c: &mcap::records::ChunkIndex) -> Self {
        ChunkSpan {
            offset: c.chunk_start_offset,
            length: c.chunk_length,
            start_ns: c.message_start_time,
            end_ns: c.message_end_time,
            message_index_length: c.message_index_length,
        }
    }
}

pub(crate) struct ChunkCursor {
    file: File,
    chunks: Vec<ChunkSpan>,
    next_chunk: usize,
    record: Vec<u8>,
    decoder: ChunkDecompressor,
    pub(crate) buf: Vec<u8>,
    entries: Vec<Entry>,
    pos: usize,
    wanted_local: Option<BTreeSet<u16>>,
    /// Chunks skipped as damaged since the last [`Self::take_damaged`].
    damaged: Vec<(ChunkDamage, BagError)>,
}

impl ChunkCursor {
    /// A cursor over the chunks of `summary` that can hold wanted messages, or `None` when the
    /// chunks overlap in time (then the caller merges them another way).
    pub(crate) fn new(
        file: File,
        summary: &mcap::Summary,
        part: &PartInfo,
        filter: &ReadFilter,
        wanted: &Option<BTreeSet<usize>>,
    ) -> Option<Self> {
        let wanted_local: Option<BTreeSet<u16>> = wanted.as_ref().map(|w| {
            (0..=u16::MAX)
                .filter(|id| part.global_ids.get(*id).is_some_and(|g| w.contains(&g)))
                .collect()
        });
        let mut chunks: Vec<ChunkSpan> = summary
            .chunk_indexes
            .iter()
            .filter(|c| {
                let in_time = filter.start_ns.is_none_or(|s| c.message_end_time >= s)
                    && filter.end_ns.is_none_or(|e| c.message_start_time < e);
                let has_channel = match &wanted_local {
                    None => true,
                    // Without message indexes a chunk cannot say which channels it holds.
                    Some(w) => {
                        c.message_index_offsets.is_empty()
                            || c.message_index_offsets.keys().any(|id| w.contains(id))
                    }
                };
                in_time && has_channel
            })
            .map(ChunkSpan::of)
            .collect();
        chunks.sort_by_key(|c| (c.start_ns, c.offset));
        if chunks.windows(2).any(|w| w[1].start_ns < w[0].end_ns) {
            return None;
        }
        Some(Self::over(file, chunks, wanted_local))
    }

    fn over(file: File, chunks: Vec<ChunkSpan>, wanted_local: Option<BTreeSet<u16>>) -> Self {
        ChunkCursor {
            file,
            chunks,
            next_chunk: 0,
            record: Vec::new(),
            decoder: ChunkDecompressor::default(),
            buf: Vec::new(),
            entries: Vec::new(),
            pos: 0,
            wanted_local,
            damaged: Vec::new(),
        }
    }

    /// The next wanted message, or `Ok(None)` at the end. A damaged chunk is skipped (see
    /// [`Self::take_damaged`]); `Err` only when the file cannot be read at all.
    pub(crate) fn next(&mut self, part: &PartInfo, filter: &ReadFilter) -> Result<Option<Entry>> {
        loop {
            if let Some(entry) = self.entries.get(self.pos) {
                self.pos += 1;
                return Ok(Some(entry.clone()));
            }
            let Some(&span) = self.chunks.get(self.next_chunk) else {
                return Ok(None);
            };
            self.next_chunk += 1;
            let loaded = self.load(span, part).and_then(|()| {
                self.index_messages(part, filter)
                    .map_err(|source| BagError::damaged(&part.path, span.offset, source))
            });
            match loaded {
                Ok(()) => {}
                // The file itself failed us: nothing after this reads either.
                Err(error @ BagError::Io { .. }) => return Err(error),
                Err(error) => {
                    self.entries.clear();
                    self.pos = 0;
                    let damage = self.damage_of(span, part);
                    self.damaged.push((damage, error));
                }
            }
        }
    }

    /// The chunks skipped as damaged since the last call, with why.
    pub(crate) fn take_damaged(&mut self) -> Vec<(ChunkDamage, BagError)> {
        std::mem::take(&mut self.damaged)
    }

    /// Where a skipped chunk is and what it held, as its MessageIndex records (outside the
    /// chunk) list it.
    fn damage_of(&mut self, span: ChunkSpan, part: &PartInfo) -> ChunkDamage {
        let index_start = span.offset.saturating_add(span.length);
        let lost_messages = usize::try_from(span.message_index_length)
            .ok()
            .filter(|len| *len > 0 && *len <= MAX_RECORD_BYTES)
            .filter(|len| index_start.saturating_add(*len as u64) <= part.size_bytes)
            .and_then(|len| {
                self.record.resize(len, 0);
                self.file
                    .seek(SeekFrom::Start(index_start))
                    .and_then(|_| self.file.read_exact(&mut self.record))
                    .ok()
            })
            .and_then(|()| message_index_entries(&self.record));
        ChunkDamage {
            part: part.name.clone(),
            offset: span.offset,
            end: index_start,
            lost_messages,
        }
    }

    fn load(&mut self, span: ChunkSpan, part: &PartInfo) -> Result<()> {
        let damaged = |source| BagError::damaged(&part.path, span.offset, source);
        let end = span.offset.saturating_add(span.length);
        if end > part.size_bytes {
            return Err(damaged(FormatError::ChunkOutsideFile {
                offset: span.offset,
                length: span.length,
                file_len: part.size_bytes,
            }));
        }
        if span.length < RECORD_PREFIX_LEN as u64 {
            return Err(damaged(FormatError::TruncatedPrefix {
                available: span.length,
            }));
        }
        let len = usize::try_from(span.length)
            .ok()
            .filter(|l| *l <= MAX_RECORD_BYTES)
            .ok_or_else(|| {
                damaged(FormatError::RecordTooLarge {
                    opcode: op::CHUNK,
                    len: span.length,
                    limit: MAX_RECORD_BYTES,
                })
            })?;
        self.record.resize(len, 0);
        self.file
            .seek(SeekFrom::Start(span.offset))
            .and_then(|_| self.file.read_exact(&mut self.record))
            .map_err(|e| BagError::io("reading", &part.path, e))?;
        // The index said how long the chunk is; its own prefix must agree that it fits.
        let prefix = RecordPrefix::read(&self.record).ok_or(FormatError::TruncatedPrefix {
            available: span.length,
        });
        let prefix = prefix.map_err(damaged)?;
        if prefix.opcode != op::CHUNK {
            return Err(damaged(FormatError::NotAChunk {
                opcode: prefix.opcode,
            }));
        }
        let after = self.record.get(RECORD_PREFIX_LEN..).unwrap_or_default();
        let body_len = prefix
            .body_len_within(after.len() as u64)
            .map_err(damaged)?;
        self.decoder
            .decode_chunk(after.get(..body_len).unwrap_or_default(), &mut self.buf)
            .map_err(damaged)
    }

    /// Every damaged chunk of `summary`, read one at a time: for a part whose chunks overlap in
    /// time, which the mcap crate's reader merges (it checks no CRC), so that the damaged ones
    /// can be left out of what it reads. `Err` only when the file cannot be read at all.
    pub(crate) fn damaged_chunks(
        file: File,
        summary: &mcap::Summary,
        part: &PartInfo,
    ) -> Result<Vec<(ChunkDamage, BagError)>> {
        let chunks = summary.chunk_indexes.iter().map(ChunkSpan::of).collect();
        let mut cursor = Self::over(file, chunks, None);
        // Every channel wanted, every time: each chunk's messages are indexed, then dropped.
        while cursor.next(part, &ReadFilter::all())?.is_some() {
            cursor.pos = cursor.entries.len();
        }
        Ok(cursor.take_damaged())
    }

    fn index_messages(
        &mut self,
        part: &PartInfo,
        filter: &ReadFilter,
    ) -> std::result::Result<(), FormatError> {
        self.entries.clear();
        self.pos = 0;
        let mut sorted = true;
        // A record cut off at the end of a chunk whose size and CRC checked out ends the chunk
        // quietly, as the records before it read.
        for record in Records::new(&self.buf).map_while(|r| r.ok()) {
            if record.opcode != op::MESSAGE {
                continue;
            }
            let header = MessageHeader::parse(record.body)?;
            if self
                .wanted_local
                .as_ref()
                .is_some_and(|w| !w.contains(&header.channel_id))
                || !filter.includes_time(header.log_time)
            {
                continue;
            }
            let Some(channel) = part.global_ids.get(header.channel_id) else {
                return Err(FormatError::UndefinedChannel {
                    channel_id: header.channel_id,
                });
            };
            if let Some(last) = self.entries.last() {
                sorted &= last.log_time <= header.log_time;
            }
            let body = record.body_range();
            self.entries.push(Entry {
                channel,
                sequence: header.sequence,
                log_time: header.log_time,
                publish_time: header.publish_time,
                data: body.start + MESSAGE_HEADER_LEN..body.end,
            });
        }
        if !sorted {
            self.entries.sort_by_key(|e| e.log_time);
        }
        Ok(())
    }
}
