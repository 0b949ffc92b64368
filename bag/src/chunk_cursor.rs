//! Reading a part chunk by chunk when the chunks it needs do not overlap in time: each chunk is read,
//! decompressed and CRC-checked once, and its messages are lent straight out of the chunk buffer
//! in log-time order (no copy per message).

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

use crate::part::PartInfo;
use crate::reader::{MAX_RECORD_BYTES, ReadFilter};
use crate::scan::{ChunkDecoder, MESSAGE_HEADER_LEN, chunk_records, message_header, op};

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
}

pub(crate) struct ChunkCursor {
    file: File,
    chunks: Vec<ChunkSpan>,
    next_chunk: usize,
    record: Vec<u8>,
    decoder: ChunkDecoder,
    pub(crate) buf: Vec<u8>,
    entries: Vec<Entry>,
    pos: usize,
    wanted_local: Option<BTreeSet<u16>>,
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
            .map(|c| ChunkSpan {
                offset: c.chunk_start_offset,
                length: c.chunk_length,
                start_ns: c.message_start_time,
                end_ns: c.message_end_time,
            })
            .collect();
        chunks.sort_by_key(|c| (c.start_ns, c.offset));
        if chunks.windows(2).any(|w| w[1].start_ns < w[0].end_ns) {
            return None;
        }
        Some(ChunkCursor {
            file,
            chunks,
            next_chunk: 0,
            record: Vec::new(),
            decoder: ChunkDecoder::default(),
            buf: Vec::new(),
            entries: Vec::new(),
            pos: 0,
            wanted_local,
        })
    }

    /// The next wanted message, `Ok(None)` at the end, `Err` when a chunk is damaged.
    pub(crate) fn next(
        &mut self,
        part: &PartInfo,
        filter: &ReadFilter,
    ) -> Result<Option<Entry>, String> {
        loop {
            if let Some(entry) = self.entries.get(self.pos) {
                self.pos += 1;
                return Ok(Some(entry.clone()));
            }
            let Some(&span) = self.chunks.get(self.next_chunk) else {
                return Ok(None);
            };
            self.next_chunk += 1;
            let at = span.offset;
            self.load(span, part)
                .map_err(|e| format!("chunk at byte {at}: {e}"))?;
            self.index_messages(part, filter)
                .map_err(|e| format!("chunk at byte {at}: {e}"))?;
        }
    }

    fn load(&mut self, span: ChunkSpan, part: &PartInfo) -> Result<(), String> {
        let end = span.offset.saturating_add(span.length);
        if end > part.size_bytes || span.length < 9 {
            return Err("the chunk index points past the end of the file".into());
        }
        let len = usize::try_from(span.length)
            .ok()
            .filter(|l| *l <= MAX_RECORD_BYTES)
            .ok_or("the chunk is larger than the reader accepts")?;
        self.record.resize(len, 0);
        self.file
            .seek(SeekFrom::Start(span.offset))
            .and_then(|_| self.file.read_exact(&mut self.record))
            .map_err(|e| e.to_string())?;
        if self.record.first() != Some(&op::CHUNK) {
            return Err("the chunk index does not point at a chunk".into());
        }
        self.decoder
            .decode_into(self.record.get(9..).unwrap_or(&[]), &mut self.buf)?;
        Ok(())
    }

    fn index_messages(&mut self, part: &PartInfo, filter: &ReadFilter) -> Result<(), String> {
        self.entries.clear();
        self.pos = 0;
        let mut sorted = true;
        for (opcode, range) in chunk_records(&self.buf) {
            if opcode != op::MESSAGE {
                continue;
            }
            let body = self.buf.get(range.clone()).unwrap_or(&[]);
            let Some((channel_id, sequence, log_time, publish_time)) = message_header(body) else {
                return Err("a message record is shorter than its header".into());
            };
            if self
                .wanted_local
                .as_ref()
                .is_some_and(|w| !w.contains(&channel_id))
                || !filter.includes_time(log_time)
            {
                continue;
            }
            let Some(channel) = part.global_ids.get(channel_id) else {
                return Err(format!(
                    "a message refers to channel {channel_id}, which is not defined"
                ));
            };
            if let Some(last) = self.entries.last() {
                sorted &= last.log_time <= log_time;
            }
            self.entries.push(Entry {
                channel,
                sequence,
                log_time,
                publish_time,
                data: range.start + MESSAGE_HEADER_LEN..range.end,
            });
        }
        if !sorted {
            self.entries.sort_by_key(|e| e.log_time);
        }
        Ok(())
    }
}
