//! The live capture's raw messages: a ring bounded by bytes that evicts the oldest whole
//! messages and counts them. Payloads sit back to back in 1 MiB blocks with a 32-byte record
//! per message, so a 200-byte message costs about 1.17 bytes per payload byte once the ring is
//! full (see `benches/capture.rs`).

use std::collections::VecDeque;

/// Payload bytes per block (a message over a quarter of it gets a block of its own).
const BLOCK_BYTES: usize = 1 << 20;

/// What one message costs besides its payload: its record (times, topic, where its payload is).
pub const RECORD_BYTES: usize = std::mem::size_of::<Record>();

/// Default cap on what the capture holds.
pub const DEFAULT_CAP_BYTES: usize = 1 << 30;

#[derive(Debug, Clone, Copy)]
struct Record {
    log_time_ns: u64,
    /// `u64::MAX`: the sample came unstamped.
    publish_time_ns: u64,
    /// Absolute block number (see [`CaptureStore::first_block`]).
    block: u32,
    offset: u32,
    len: u32,
    topic: u32,
}

/// One stored message, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stored<'a> {
    /// Capture-wide sequence number (0 for the first message ever captured).
    pub seq: u64,
    /// Topic id (the capture's topic table).
    pub topic: u32,
    /// Arrival time, ns since the epoch.
    pub log_time_ns: u64,
    /// The sample's timestamp; `None` when it came unstamped.
    pub publish_time_ns: Option<u64>,
    /// Payload.
    pub data: &'a [u8],
}

/// The ring.
#[derive(Debug)]
pub struct CaptureStore {
    cap_bytes: usize,
    records: VecDeque<Record>,
    blocks: VecDeque<Vec<u8>>,
    /// Absolute number of `blocks[0]`.
    first_block: u32,
    /// Sequence number of `records[0]`.
    first_seq: u64,
    /// Payload plus record bytes of what is held.
    held_bytes: usize,
    evicted: u64,
}

impl CaptureStore {
    /// A ring holding at most `cap_bytes` of payload plus records.
    pub fn new(cap_bytes: usize) -> Self {
        CaptureStore {
            cap_bytes: cap_bytes.max(1),
            records: VecDeque::new(),
            blocks: VecDeque::new(),
            first_block: 0,
            first_seq: 0,
            held_bytes: 0,
            evicted: 0,
        }
    }

    /// Stores a message, evicting the oldest while over the cap. Returns how many it evicted
    /// (a message larger than the cap is itself not kept, and counted).
    pub fn push(
        &mut self,
        topic: u32,
        log_time_ns: u64,
        publish_time_ns: Option<u64>,
        data: &[u8],
    ) -> u64 {
        self.push_spilling(topic, log_time_ns, publish_time_ns, data, &mut |_| {})
    }

    /// As [`CaptureStore::push`], handing each message to `spill` as it leaves the ring (a
    /// message larger than the cap goes straight to `spill`).
    pub fn push_spilling(
        &mut self,
        topic: u32,
        log_time_ns: u64,
        publish_time_ns: Option<u64>,
        data: &[u8],
        spill: &mut dyn FnMut(Stored<'_>),
    ) -> u64 {
        let cost = data.len() + RECORD_BYTES;
        if cost > self.cap_bytes || u32::try_from(data.len()).is_err() {
            spill(Stored {
                seq: self.end_seq(),
                topic,
                log_time_ns,
                publish_time_ns,
                data,
            });
            self.evicted += 1;
            return 1;
        }
        let mut evicted = 0;
        while self.held_bytes + cost > self.cap_bytes {
            if let Some(oldest) = self.stored(0) {
                spill(oldest);
            }
            if !self.evict_one() {
                break;
            }
            evicted += 1;
        }
        if evicted > 0 {
            self.trim_records();
        }
        let fits = self
            .blocks
            .back()
            .is_some_and(|b| b.capacity() - b.len() >= data.len());
        if !fits {
            // Large messages get a block of their own, exactly their size, so no block is
            // left mostly empty.
            let size = if data.len() > BLOCK_BYTES / 4 {
                data.len()
            } else {
                BLOCK_BYTES
            };
            self.blocks.push_back(Vec::with_capacity(size));
        }
        let block_no = self.first_block + (self.blocks.len() - 1) as u32;
        let Some(block) = self.blocks.back_mut() else {
            return evicted;
        };
        let offset = block.len() as u32;
        block.extend_from_slice(data);
        self.records.push_back(Record {
            log_time_ns,
            publish_time_ns: publish_time_ns.unwrap_or(u64::MAX),
            block: block_no,
            offset,
            len: data.len() as u32,
            topic,
        });
        self.held_bytes += cost;
        evicted
    }

    /// Once the ring is full its record count stays about the same, but the deque grew by
    /// doubling on the way there and may hold up to twice the room it needs: give it back,
    /// checking only every few thousand evictions.
    fn trim_records(&mut self) {
        if !self.evicted.is_multiple_of(4_096) {
            return;
        }
        let len = self.records.len();
        if self.records.capacity() > len + len / 4 + 1_024 {
            self.records.shrink_to(len + len / 16);
        }
    }

    fn evict_one(&mut self) -> bool {
        let Some(old) = self.records.pop_front() else {
            return false;
        };
        self.held_bytes -= old.len as usize + RECORD_BYTES;
        self.first_seq += 1;
        self.evicted += 1;
        // Blocks before the next record's block hold nothing live any more.
        let keep_from = self.records.front().map_or(old.block + 1, |r| r.block);
        while self.first_block < keep_from && self.blocks.len() > 1 {
            self.blocks.pop_front();
            self.first_block += 1;
        }
        if self.records.is_empty() {
            self.blocks.clear();
        }
        true
    }

    fn stored(&self, index: usize) -> Option<Stored<'_>> {
        let r = self.records.get(index)?;
        let block = self
            .blocks
            .get(r.block.wrapping_sub(self.first_block) as usize)?;
        let data = block.get(r.offset as usize..(r.offset + r.len) as usize)?;
        Some(Stored {
            seq: self.first_seq + index as u64,
            topic: r.topic,
            log_time_ns: r.log_time_ns,
            publish_time_ns: (r.publish_time_ns != u64::MAX).then_some(r.publish_time_ns),
            data,
        })
    }

    /// Messages held.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Sequence number of the oldest message held (messages evicted from the ring before it).
    pub fn first_seq(&self) -> u64 {
        self.first_seq
    }

    /// Sequence number the next message will get.
    pub fn end_seq(&self) -> u64 {
        self.first_seq + self.records.len() as u64
    }

    /// Messages evicted so far.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// Payload plus record bytes held (what the cap bounds).
    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// Bytes allocated for blocks and records (what the process actually spends).
    pub fn allocated_bytes(&self) -> usize {
        self.blocks.iter().map(Vec::capacity).sum::<usize>()
            + self.records.capacity() * RECORD_BYTES
    }

    /// The cap.
    pub fn cap_bytes(&self) -> usize {
        self.cap_bytes
    }

    /// Log time of the oldest message held.
    pub fn oldest_time_ns(&self) -> Option<u64> {
        self.records.front().map(|r| r.log_time_ns)
    }

    /// Calls `f` for each held message with sequence number in `from..to`, oldest first, and
    /// stops early when `f` returns false. Returns the sequence number after the last visited.
    pub fn visit(&self, from: u64, to: u64, f: &mut dyn FnMut(Stored<'_>) -> bool) -> u64 {
        let start = from.max(self.first_seq);
        let mut seq = start;
        while seq < to.min(self.end_seq()) {
            let Some(m) = self.stored((seq - self.first_seq) as usize) else {
                break;
            };
            seq += 1;
            if !f(m) {
                break;
            }
        }
        seq
    }

    /// Index of the first held message logged at or after `t_ns`, as a sequence number.
    pub fn seq_at(&self, t_ns: u64) -> u64 {
        self.first_seq + self.records.partition_point(|r| r.log_time_ns < t_ns) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(store: &CaptureStore) -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        store.visit(0, u64::MAX, &mut |m| {
            out.push((m.seq, m.data.to_vec()));
            true
        });
        out
    }

    #[test]
    fn keeps_the_newest_whole_messages_within_the_cap_and_counts_the_rest() {
        let per = 200 + RECORD_BYTES;
        let mut store = CaptureStore::new(per * 10);
        let mut evicted = 0;
        for i in 0..25u8 {
            evicted += store.push(
                u32::from(i % 3),
                u64::from(i),
                Some(u64::from(i)),
                &[i; 200],
            );
        }
        assert_eq!((evicted, store.evicted()), (15, 15));
        assert_eq!(store.len(), 10);
        assert!(store.held_bytes() <= store.cap_bytes());
        let held = collect(&store);
        assert_eq!(held.first(), Some(&(15, vec![15u8; 200])));
        assert_eq!(held.last(), Some(&(24, vec![24u8; 200])));
        assert_eq!(store.seq_at(20), 20);
    }

    #[test]
    fn a_full_ring_of_small_messages_allocates_little_more_than_their_payload() {
        let cap = 32 << 20;
        let mut store = CaptureStore::new(cap);
        for i in 0..(3 * cap / 200) as u64 {
            store.push(0, i, Some(i), &[1u8; 200]);
        }
        let payload = store.len() * 200;
        let ratio = store.allocated_bytes() as f64 / payload as f64;
        assert!(ratio <= 1.25, "{ratio:.3} bytes allocated per payload byte");
    }

    #[test]
    fn blocks_are_freed_as_they_empty_and_big_messages_fit() {
        let mut store = CaptureStore::new(8 << 20);
        for i in 0..40u32 {
            store.push(0, u64::from(i), None, &vec![i as u8; 600_000]);
        }
        // 8 MiB holds 13 messages of 600 kB, each in a block of its own size.
        assert_eq!(store.len(), 13);
        let payload = 13 * 600_000;
        assert!(
            store.allocated_bytes() < payload + payload / 50,
            "{} allocated for {payload}",
            store.allocated_bytes()
        );
        let held = collect(&store);
        assert!(
            held.iter()
                .all(|(seq, d)| d.len() == 600_000 && d[0] == *seq as u8)
        );
        let big = vec![7u8; 3 << 20];
        store.push(1, 99, Some(5), &big);
        let mut last = None;
        store.visit(store.end_seq() - 1, u64::MAX, &mut |m| {
            last = Some((m.topic, m.publish_time_ns, m.data.len()));
            true
        });
        assert_eq!(last, Some((1, Some(5), 3 << 20)));
        assert_eq!(
            store.push(0, 100, None, &vec![0; 9 << 20]),
            1,
            "larger than the cap"
        );
    }
}
