//! The capture worker: opens the session, subscribes, keeps every sample in the ring (spilling
//! what it evicts when asked), decodes each with its topic's [`ColumnBuilder`] and, every
//! [`FLUSH_EVERY`], hands the app the new columns.
//!
//! The channel to the app is bounded ([`EVENTS_CAP`]), and the worker never queues more decoded
//! messages than the ring holds: when the app falls behind (a window hidden for long, a slow
//! frame) the columns wait here, and what the ring evicts meanwhile leaves them too, so memory
//! stays bounded by the capture's cap whether or not anyone takes the events.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bag::live::sim::Simulator;
use bag::live::{LiveMessage, Subscription, TopicId};
use bag::{ChannelSpec, DropQueue};
use crossbeam_channel::Sender;
use decode::Row;

use crate::data::column_builder::ColumnBuilder;
use crate::data::source::{MessageView, TopicInfo};
use crate::data::topic_data::Latency;
use crate::error::Error;
use crate::live::shared::{LiveShared, lock};
use crate::live::spill::Spill;
use crate::live::{LiveEvent, LiveOptions};

/// Events the channel to the app holds at most.
pub(super) const EVENTS_CAP: usize = 128;

/// Latencies a topic's percentiles are taken over: its most recent messages'.
const LATENCY_WINDOW: usize = 2_000;

/// How often new columns go to the app.
const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// One topic as the worker decodes it.
struct LiveTopic {
    info: TopicInfo,
    /// The columns decoded and not yet sent.
    builder: ColumnBuilder,
    /// Messages decoded and then evicted by the ring before they could be sent.
    skipped: u64,
    /// Recent latencies (a ring), for the percentiles sent with each piece.
    latencies: Vec<i64>,
    next_latency: usize,
}

impl LiveTopic {
    fn new(info: TopicInfo) -> Self {
        LiveTopic {
            info,
            builder: ColumnBuilder::default(),
            skipped: 0,
            latencies: Vec::new(),
            next_latency: 0,
        }
    }

    fn push(&mut self, m: &LiveMessage, row: &mut Row) {
        let view = MessageView {
            topic: m.topic as usize,
            log_time_ns: m.log_time_ns,
            publish_time_ns: m.publish_time_ns,
            data: &m.data,
            from_torn_part: false,
        };
        self.builder.push(&self.info, &view, row);
    }

    /// Moves the latencies decoded since the last flush into the window.
    fn keep_latencies(&mut self) {
        for latency in self.builder.drain_latencies() {
            if self.latencies.len() < LATENCY_WINDOW {
                self.latencies.push(latency);
            } else if let Some(slot) = self.latencies.get_mut(self.next_latency) {
                *slot = latency;
                self.next_latency = (self.next_latency + 1) % LATENCY_WINDOW;
            }
        }
    }

    fn latency(&self) -> Option<Latency> {
        let mut latencies = self.latencies.clone();
        Latency::from_ns(&mut latencies)
    }
}

/// The worker's end of the channel to the app.
pub(super) struct Outbox<'a> {
    /// The bounded channel.
    pub tx: &'a Sender<LiveEvent>,
    /// Decoded messages sent and not yet taken by the app (it subtracts what it takes).
    pub queued: &'a AtomicU64,
    /// Topic announcements the channel had no room for yet, in order.
    pub waiting: VecDeque<LiveEvent>,
}

/// The channel's far end is gone: the capture was dropped.
struct Disconnected;

impl Outbox<'_> {
    /// Sends what waits and each topic's new columns, as far as the channel and the ring
    /// allow; returns whether anything was sent.
    fn flush(
        &mut self,
        topics: &mut [LiveTopic],
        held_messages: usize,
        oldest_ns: Option<u64>,
    ) -> Result<bool, Disconnected> {
        let mut sent = false;
        while !self.tx.is_full()
            && let Some(event) = self.waiting.pop_front()
        {
            self.tx.send(event).map_err(|_| Disconnected)?;
            sent = true;
        }
        for (topic, t) in topics.iter_mut().enumerate() {
            t.keep_latencies();
            // Columns follow the ring: what it evicted never reaches the app.
            if let Some(oldest) = oldest_ns {
                t.skipped += t.builder.drop_before(oldest) as u64;
            }
            // A topic's columns follow its announcement.
            if !self.waiting.is_empty() || (t.builder.is_empty() && t.skipped == 0) {
                continue;
            }
            let len = t.builder.len() as u64;
            let queued = self.queued.load(Ordering::Relaxed);
            // Never more decoded messages in the channel than the ring holds, so an app that
            // takes nothing holds up no more than that; the first piece always goes, so an app
            // that keeps up is never held back.
            if queued > 0 && queued + len > held_messages as u64 {
                continue;
            }
            if self.tx.is_full() {
                break;
            }
            self.queued.fetch_add(len, Ordering::Relaxed);
            let event = LiveEvent::Columns {
                topic,
                columns: t.builder.take(),
                latency: t.latency(),
                skipped: std::mem::take(&mut t.skipped),
            };
            // This thread is the only sender and there was room, so this does not wait.
            self.tx.send(event).map_err(|_| Disconnected)?;
            sent = true;
        }
        Ok(sent)
    }
}

fn topic_info(spec: &ChannelSpec) -> TopicInfo {
    let (schema_encoding, schema_name, schema_data) = match &spec.schema {
        Some(s) => (s.encoding.clone(), s.name.clone(), s.data.clone()),
        None => (String::new(), String::new(), Vec::new()),
    };
    TopicInfo {
        topic: spec.topic.clone(),
        type_name: spec.type_name().to_string(),
        message_encoding: spec.message_encoding.clone(),
        schema_encoding,
        schema_name,
        schema_data,
        message_count: Some(0),
    }
}

/// Captures until `stop` is set or the app drops its end of the channel.
pub(super) fn run(
    options: &LiveOptions,
    shared: &LiveShared,
    outbox: &mut Outbox<'_>,
    stop: &AtomicBool,
    repaint: &(dyn Fn() + Send + Sync),
) -> Result<(), Error> {
    let session = options.session.open()?;
    // Between zenoh's callback and this thread: generous, since the ring does the bounding.
    let queue = Arc::new(DropQueue::new(usize::MAX, 256 << 20));
    let subscription = Subscription::start(&session, &options.key_exprs, Arc::clone(&queue))?;
    // The simulator after the subscription, so its first messages are not missed.
    let simulator = if options.simulate {
        Some(Simulator::start(&session)?)
    } else {
        None
    };
    if options.spill {
        *shared.spill() = Some(Spill::create()?);
    }
    lock(&shared.stats).connected = true;
    repaint();

    let mut topics: Vec<LiveTopic> = Vec::new();
    let mut specs: Vec<ChannelSpec> = Vec::new();
    let mut row = Row::new();
    let mut batch: Vec<LiveMessage> = Vec::new();
    let mut last_flush = Instant::now();
    let mut last_rate = (Instant::now(), 0u64);
    let mut unstamped = 0u64;
    let mut links_checked = Instant::now() - Duration::from_secs(10);
    while !stop.load(Ordering::Relaxed) {
        batch.extend(queue.pop_timeout(FLUSH_EVERY));
        queue.drain_into(&mut batch);
        // New topics first, in id order.
        if subscription.topics().len() > topics.len() {
            let known = topics.len();
            let table = subscription.topics();
            for id in known..table.len() {
                // With the schema its publisher describes, waited for at most a second.
                let Some(spec) = TopicId::try_from(id).ok().and_then(|id| table.channel(id)) else {
                    break;
                };
                let info = topic_info(&spec);
                topics.push(LiveTopic::new(info.clone()));
                specs.push(spec.clone());
                lock(&shared.specs).push(spec);
                lock(&shared.topics).push(info.clone());
                outbox.waiting.push_back(LiveEvent::Topic(info));
            }
        }
        if !batch.is_empty() {
            let mut store = shared.store();
            let mut spill = shared.spill();
            for m in &batch {
                store.push_spilling(
                    m.topic,
                    m.log_time_ns,
                    m.publish_time_ns,
                    &m.data,
                    &mut |old| {
                        if let Some(spill) = spill.as_mut() {
                            spill.write(specs.get(old.topic as usize), old);
                        }
                    },
                );
            }
        }
        for m in batch.drain(..) {
            unstamped += u64::from(m.publish_time_ns.is_none());
            if let Some(t) = topics.get_mut(m.topic as usize) {
                t.push(&m, &mut row);
            }
        }
        if last_flush.elapsed() >= FLUSH_EVERY {
            last_flush = Instant::now();
            let (held_messages, oldest_ns) = {
                let store = shared.store();
                (store.len(), store.oldest_time_ns())
            };
            let Ok(sent) = outbox.flush(&mut topics, held_messages, oldest_ns) else {
                break;
            };
            let received = subscription.received();
            let (held, evicted, oldest) = {
                let store = shared.store();
                (store.held_bytes(), store.evicted(), store.oldest_time_ns())
            };
            let (spilled, spill_failed, spill_error) =
                shared.spill().as_ref().map_or((0, 0, None), |s| {
                    (s.written(), s.failed(), s.error().cloned())
                });
            let links = if links_checked.elapsed() >= Duration::from_secs(1) {
                links_checked = Instant::now();
                Some(bag::live::link_count(&session))
            } else {
                None
            };
            {
                let mut stats = lock(&shared.stats);
                let elapsed = last_rate.0.elapsed().as_secs_f64();
                if elapsed >= 1.0 {
                    stats.rate_per_s = (received - last_rate.1) as f64 / elapsed;
                    last_rate = (Instant::now(), received);
                }
                stats.received = received;
                stats.held_bytes = held;
                stats.evicted = evicted;
                stats.spilled = spilled;
                stats.spill_failed = spill_failed;
                stats.spill_error = spill_error;
                stats.transport_dropped = queue.dropped();
                stats.unstamped = unstamped;
                stats.oldest_ns = oldest;
                stats.advertised = subscription.advertisements().snapshot();
                if let Some(links) = links {
                    stats.links = links;
                }
            }
            if sent {
                repaint();
            }
        }
    }
    drop(subscription);
    if let Some(s) = simulator {
        s.stop().ok();
    }
    bag::live::close(session).ok();
    Ok(())
}
