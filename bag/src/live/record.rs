//! Writing live samples into a bag: channels from the topic table, drops from the queue,
//! advertised topics at the end.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Advertised, LiveError, LiveMessage, TopicTable};
use crate::{BagSummary, BagWriter, ChannelId, DropQueue};

/// After a batch's first message arrives, how long the recorder lets more gather before taking
/// them. Waking once per batch instead of once per message leaves the CPU to the transport
/// under load; the delay is far below a chunk's one-second age limit, and the queue absorbs it.
const GATHER: Duration = Duration::from_millis(2);

/// Queued messages that already make a batch worth taking without gathering more.
const FULL_BATCH: usize = 1024;

/// How long one [`Recorder::pump`] writes before it returns (the rest of its batch waits for
/// the next call), so that a recorder far behind still notices Ctrl-C within a fraction of a
/// second.
const PUMP_BUDGET: Duration = Duration::from_millis(250);

/// `pump` reads the clock once per this many messages.
const CLOCK_EVERY: usize = 256;

/// What a [`Recorder`] has written so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordStats {
    /// Messages written.
    pub messages: u64,
    /// Payload bytes written.
    pub payload_bytes: u64,
    /// Messages written without a publisher timestamp.
    pub unstamped: u64,
    /// Messages lost before they reached the writer.
    pub dropped: u64,
    /// Messages refused (larger than a chunk may be, or on a topic beyond the limit); the
    /// index counts them as dropped, with the reason.
    pub refused: u64,
}

/// Drains a subscription's queue into a [`BagWriter`].
pub struct Recorder {
    writer: BagWriter,
    topics: Arc<TopicTable>,
    /// Per topic id: its channel once accepted, or refused (over the topic limit).
    channels: Vec<Slot>,
    /// Topics accepted so far, and how many may be.
    accepted_topics: usize,
    max_topics: usize,
    stats: RecordStats,
    batch: Vec<LiveMessage>,
    /// Messages of `batch` already written.
    batch_written: usize,
    /// Advertised topics the writer knows of.
    advertised: usize,
}

/// What the recorder has decided about a topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Unseen,
    Channel(ChannelId),
    Refused,
}

/// Topics a [`Recorder`] accepts unless told otherwise: a peer publishing on ever more keys
/// must not grow a recording (or its memory) without bound.
pub const DEFAULT_MAX_TOPICS: usize = 65_536;

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("dir", &self.writer.dir())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// Records into `writer` the messages of a subscription whose topics are `topics`.
    pub fn new(writer: BagWriter, topics: Arc<TopicTable>) -> Self {
        Recorder {
            writer,
            topics,
            channels: Vec::new(),
            accepted_topics: 0,
            max_topics: DEFAULT_MAX_TOPICS,
            stats: RecordStats::default(),
            batch: Vec::new(),
            batch_written: 0,
            advertised: 0,
        }
    }

    /// Accepts at most `max` distinct topics (default [`DEFAULT_MAX_TOPICS`]); messages on
    /// further topics are not written and are counted as dropped, with the reason, in the index.
    pub fn max_topics(mut self, max: usize) -> Self {
        self.max_topics = max;
        self
    }

    /// Writes one message.
    pub fn write(&mut self, message: &LiveMessage) -> Result<(), LiveError> {
        let Some(channel) = self.channel(message.topic)? else {
            self.stats.refused += 1;
            self.writer.add_dropped_for(
                &format!(
                    "on a topic beyond the recorder's limit of {} topics",
                    self.max_topics
                ),
                1,
            );
            return Ok(());
        };
        match self.writer.write(
            channel,
            message.log_time_ns,
            message.publish_time_ns,
            &message.data,
        ) {
            Ok(()) => {}
            // Counted in the index already; one oversized sample must not end the recording.
            Err(crate::BagError::MessageTooLarge { .. }) => {
                self.stats.refused += 1;
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        }
        self.stats.messages += 1;
        self.stats.payload_bytes += message.data.len() as u64;
        if message.publish_time_ns.is_none() {
            self.stats.unstamped += 1;
        }
        Ok(())
    }

    /// The channel of `topic`, adding it the first time; `None` when the topic is refused.
    fn channel(&mut self, topic: u32) -> Result<Option<ChannelId>, LiveError> {
        let index = topic as usize;
        match self.channels.get(index) {
            Some(Slot::Channel(id)) => return Ok(Some(*id)),
            Some(Slot::Refused) => return Ok(None),
            Some(Slot::Unseen) | None => {}
        }
        if self.channels.len() <= index {
            self.channels.resize(index + 1, Slot::Unseen);
        }
        if self.accepted_topics >= self.max_topics {
            if let Some(slot) = self.channels.get_mut(index) {
                *slot = Slot::Refused;
            }
            return Ok(None);
        }
        // Waits for the topic's schema, at most a second after its first sample.
        let Some(spec) = self.topics.channel(topic) else {
            return Err(LiveError::Declare {
                what: format!("topic #{topic}"),
                reason: "not in the subscription's topic table".into(),
            });
        };
        let id = self.writer.add_channel(spec);
        if let Some(slot) = self.channels.get_mut(index) {
            *slot = Slot::Channel(id);
        }
        self.accepted_topics += 1;
        Ok(Some(id))
    }

    /// Takes what `queue` holds (waiting up to `wait` for the first message, then a couple of
    /// milliseconds for more unless a full batch is already there), writes it, and brings the
    /// drop count up to the queue's. Returns how many messages were written. Writes for about
    /// a quarter of a second at most: what it took and did not write yet goes first next time.
    pub fn pump(
        &mut self,
        queue: &DropQueue<LiveMessage>,
        wait: Duration,
    ) -> Result<usize, LiveError> {
        let mut batch = std::mem::take(&mut self.batch);
        if self.batch_written >= batch.len() {
            batch.clear();
            self.batch_written = 0;
            if let Some(first) = queue.pop_timeout(wait) {
                batch.push(first);
                if !wait.is_zero() && queue.len() < FULL_BATCH {
                    std::thread::sleep(GATHER);
                }
            }
            queue.drain_into(&mut batch);
        }
        let started = Instant::now();
        let mut written = 0;
        let mut result = Ok(());
        while let Some(m) = batch.get(self.batch_written) {
            if let Err(e) = self.write(m) {
                result = Err(e);
                break;
            }
            self.batch_written += 1;
            written += 1;
            if written % CLOCK_EVERY == 0 && started.elapsed() >= PUMP_BUDGET {
                break;
            }
        }
        if result.is_err() {
            batch.clear();
            self.batch_written = 0;
        }
        self.batch = batch;
        self.set_dropped(queue.dropped());
        self.writer.flush_if_stale()?;
        result.map(|()| written)
    }

    /// Stops taking messages: writes what is waiting for at most about `budget`, then counts
    /// the rest (in `queue` and taken from it) as dropped, so that a recorder far behind stops
    /// in about `budget` rather than after writing its whole backlog. Returns how many were
    /// counted as dropped here.
    pub fn stop_within(
        &mut self,
        queue: &DropQueue<LiveMessage>,
        budget: Duration,
    ) -> Result<u64, LiveError> {
        queue.close();
        let deadline = Instant::now() + budget;
        while (self.batch_written < self.batch.len() || !queue.is_empty())
            && Instant::now() < deadline
        {
            self.pump(queue, Duration::ZERO)?;
        }
        let from_queue = queue.discard_all();
        self.set_dropped(queue.dropped());
        let taken = self.batch.len().saturating_sub(self.batch_written) as u64;
        if taken > 0 {
            self.writer.add_dropped_for(
                "still waiting to be written when the recording stopped",
                taken,
            );
        }
        self.batch.clear();
        self.batch_written = 0;
        Ok(from_queue + taken)
    }

    /// Sets the number of messages lost before the writer (it only grows).
    pub fn set_dropped(&mut self, total: u64) {
        if total > self.stats.dropped {
            self.writer.add_dropped(total - self.stats.dropped);
            self.stats.dropped = total;
        }
    }

    /// What has been written so far.
    pub fn stats(&self) -> RecordStats {
        self.stats
    }

    /// Lists the advertised topics (all so far; call it as they appear). When the list grew,
    /// the open chunk closes and the index is rewritten, so that a recorder killed later still
    /// leaves a bag that names the topics advertised but never published.
    pub fn advertise(&mut self, advertised: &[Advertised]) -> Result<(), LiveError> {
        self.note_advertised(advertised);
        if self.writer.advertised_count() > self.advertised {
            self.advertised = self.writer.advertised_count();
            self.writer.flush()?;
        }
        Ok(())
    }

    /// Lists the advertised topics and closes the bag; the index names those that never
    /// published.
    pub fn finish(mut self, advertised: &[Advertised]) -> Result<BagSummary, LiveError> {
        self.note_advertised(advertised);
        Ok(self.writer.close()?)
    }

    fn note_advertised(&mut self, advertised: &[Advertised]) {
        for a in advertised {
            self.writer.advertise(&a.topic, &a.schema);
        }
    }
}
