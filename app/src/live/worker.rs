//! The capture worker: opens the session, subscribes, keeps every sample in the ring (spilling
//! what it evicts when asked), decodes each into its topic's batch and hands the batches to the
//! app every [`FLUSH_EVERY`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bag::live::sim::Simulator;
use bag::live::{LiveMessage, Subscription, channel_for};
use bag::{ChannelSpec, DropQueue};
use crossbeam_channel::Sender;
use decode::{Plan, Row};

use crate::data::column_builder::compile_plan;
use crate::data::source::TopicInfo;
use crate::data::topic_data::{Batch, Latency};
use crate::error::Error;
use crate::live::shared::{LiveShared, lock};
use crate::live::spill::Spill;
use crate::live::{LiveEvent, LiveOptions};

/// One topic as the worker decodes it.
struct TopicState {
    plan: Option<Plan>,
    plan_error: Option<Arc<Error>>,
    pending: Batch,
    /// Recent latencies (ring), for the percentiles sent with each batch.
    latencies: Vec<i64>,
    next_latency: usize,
}

const LATENCY_WINDOW: usize = 2_000;
/// How often batches go to the UI.
const FLUSH_EVERY: Duration = Duration::from_millis(50);

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
        message_count: 0,
    }
}

pub(super) fn run(
    options: &LiveOptions,
    shared: &LiveShared,
    tx: &Sender<LiveEvent>,
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

    let mut topics: Vec<TopicState> = Vec::new();
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
            for live in subscription.topics().since(topics.len()) {
                let spec = channel_for(&live.key, &live.encoding);
                let info = topic_info(&spec);
                let (plan, plan_error) = match compile_plan(&info) {
                    Ok(p) => (Some(p), None),
                    Err(e) => (None, Some(Arc::new(e))),
                };
                topics.push(TopicState {
                    plan,
                    plan_error,
                    pending: Batch::default(),
                    latencies: Vec::new(),
                    next_latency: 0,
                });
                specs.push(spec.clone());
                lock(&shared.specs).push(spec);
                lock(&shared.topics).push(info.clone());
                let _ = tx.send(LiveEvent::Topic(info));
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
                decode_into(t, &m, &mut row);
            }
        }
        if last_flush.elapsed() >= FLUSH_EVERY {
            last_flush = Instant::now();
            let mut sent = false;
            for (i, t) in topics.iter_mut().enumerate() {
                if t.pending.times_ns.is_empty() {
                    continue;
                }
                let mut latencies = t.latencies.clone();
                t.pending.latency = Latency::from_ns(&mut latencies);
                let batch = std::mem::take(&mut t.pending);
                if tx.send(LiveEvent::Batch { topic: i, batch }).is_err() {
                    return Ok(());
                }
                sent = true;
            }
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
        let _ = s.stop();
    }
    bag::live::close(session).ok();
    Ok(())
}

fn decode_into(t: &mut TopicState, m: &LiveMessage, row: &mut Row) {
    // An unstamped sample says nothing about latency.
    if let Some(publish) = m.publish_time_ns {
        let latency = (i128::from(m.log_time_ns) - i128::from(publish)) as i64;
        if t.latencies.len() < LATENCY_WINDOW {
            t.latencies.push(latency);
        } else if let Some(slot) = t.latencies.get_mut(t.next_latency) {
            *slot = latency;
            t.next_latency = (t.next_latency + 1) % LATENCY_WINDOW;
        }
    }
    let batch = &mut t.pending;
    batch.times_ns.push(m.log_time_ns);
    let Some(plan) = &mut t.plan else {
        batch.decode_errors += 1;
        if batch.first_error.is_none() {
            batch.first_error.clone_from(&t.plan_error);
        }
        pad_row(batch);
        return;
    };
    match plan.decode(&m.data, row) {
        Ok(decoded) => {
            batch.clipped_messages += u64::from(decoded.clipped);
            let leaves = plan.leaves();
            if leaves.len() > batch.leaves.len() {
                // The leaf list only grows: earlier rows of this batch get NaN for new slots.
                let old = batch.leaves.len();
                let rows = batch.times_ns.len() - 1;
                let mut widened = Vec::with_capacity(rows * leaves.len());
                for r in 0..rows {
                    widened
                        .extend_from_slice(batch.values.get(r * old..(r + 1) * old).unwrap_or(&[]));
                    widened.resize(widened.len() + leaves.len() - old, f64::NAN);
                }
                batch.values = widened;
                batch.leaves = leaves.iter().map(|l| (l.path.clone(), l.kind)).collect();
            }
            for slot in 0..batch.leaves.len() {
                batch.values.push(row.get_f64(slot).unwrap_or(f64::NAN));
            }
        }
        Err(e) => {
            batch.decode_errors += 1;
            if batch.first_error.is_none() {
                batch.first_error = Some(Arc::new(Error::Decode(e)));
            }
            pad_row(batch);
        }
    }
}

fn pad_row(batch: &mut Batch) {
    let width = batch.leaves.len();
    batch.values.resize(batch.values.len() + width, f64::NAN);
}
