//! Live capture: zenoh samples, kept raw in a [`CaptureStore`] and decoded as they arrive into
//! the same columns the plots read. All of it runs on one worker thread; the UI only drains
//! [`LiveEvent`]s and reads [`LiveStats`].

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bag::live::sim::Simulator;
use bag::live::{Advertised, LiveMessage, SessionOptions, Subscription, channel_for};
use bag::{ChannelSpec, DropQueue};
use crossbeam_channel::{Receiver, Sender, unbounded};
use decode::{Plan, Row, SchemaSource, compile};

use crate::capture::{CaptureStore, DEFAULT_CAP_BYTES};
use crate::source::{DataSource, Health, MessageView, SourceSummary, TimeWindow, TopicInfo};
use crate::spill::Spill;
use crate::topic_data::{Batch, Latency};

/// What to capture.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    /// How to reach the network.
    pub session: SessionOptions,
    /// Key expressions to subscribe to.
    pub key_exprs: Vec<String>,
    /// Cap on the raw capture (payload plus 32 bytes a message).
    pub cap_bytes: usize,
    /// Also run the simulated vehicle on the same session (the demo).
    pub simulate: bool,
    /// Keep what the ring evicts in a temporary bag on disk, for Save Recording.
    pub spill: bool,
}

impl LiveOptions {
    /// Capture everything from `endpoint`.
    pub fn connect(endpoint: &str, key_expr: &str) -> Self {
        LiveOptions {
            session: SessionOptions::connecting(endpoint),
            key_exprs: vec![key_expr.to_string()],
            cap_bytes: DEFAULT_CAP_BYTES,
            simulate: false,
            spill: false,
        }
    }

    /// The demo: the simulated vehicle on a session that never leaves the process.
    pub fn demo() -> Self {
        LiveOptions {
            session: SessionOptions::in_process(),
            key_exprs: vec!["car/**".into()],
            cap_bytes: DEFAULT_CAP_BYTES,
            simulate: true,
            spill: false,
        }
    }

    /// A name for the title bar.
    pub fn describe(&self) -> String {
        if self.simulate {
            "Live demo (simulated vehicle)".into()
        } else if self.spill {
            format!(
                "Live: {} ({}; spilling to disk)",
                self.key_exprs.join(" "),
                self.session.describe()
            )
        } else {
            format!(
                "Live: {} ({})",
                self.key_exprs.join(" "),
                self.session.describe()
            )
        }
    }
}

/// What the capture worker reports to the UI.
#[derive(Debug)]
pub enum LiveEvent {
    /// A new topic; topics arrive in id order.
    Topic(TopicInfo),
    /// New decoded messages of topic `topic`.
    Batch {
        /// Topic id.
        topic: usize,
        /// The messages.
        batch: Batch,
    },
    /// The capture could not start or stopped on an error.
    Failed(String),
}

/// Counters of a running capture.
#[derive(Debug, Clone, Default)]
pub struct LiveStats {
    /// The session is open.
    pub connected: bool,
    /// Peers and routers the session is linked to.
    pub links: usize,
    /// Samples received.
    pub received: u64,
    /// Samples per second, over the last second.
    pub rate_per_s: f64,
    /// Bytes the ring holds, and its cap.
    pub held_bytes: usize,
    /// The ring's cap.
    pub cap_bytes: usize,
    /// Messages evicted from the ring.
    pub evicted: u64,
    /// Of those, messages kept in the spill bag on disk.
    pub spilled: u64,
    /// Messages the spill bag failed to take (lost), and why.
    pub spill_failed: u64,
    /// The spill bag's first error.
    pub spill_error: Option<String>,
    /// Messages the transport queue dropped before the ring (the capture fell behind).
    pub transport_dropped: u64,
    /// Messages received without a timestamp.
    pub unstamped: u64,
    /// Log time of the oldest message held.
    pub oldest_ns: Option<u64>,
    /// Topics advertised so far.
    pub advertised: Vec<Advertised>,
}

/// State shared by the worker, the UI, the inspector and Save Recording.
#[derive(Debug)]
pub struct LiveShared {
    /// The raw messages.
    pub store: Mutex<CaptureStore>,
    /// Topics by id.
    pub topics: Mutex<Vec<TopicInfo>>,
    /// Counters.
    pub stats: Mutex<LiveStats>,
    /// The channel each topic is recorded as, by topic id.
    specs: Mutex<Vec<ChannelSpec>>,
    /// Where evicted messages go, when spilling.
    spill: Mutex<Option<Spill>>,
    summary: SourceSummary,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl LiveShared {
    /// The store, locked.
    pub fn store(&self) -> MutexGuard<'_, CaptureStore> {
        lock(&self.store)
    }

    /// The counters, copied.
    pub fn stats(&self) -> LiveStats {
        lock(&self.stats).clone()
    }

    /// The topics, copied.
    pub fn topics(&self) -> Vec<TopicInfo> {
        lock(&self.topics).clone()
    }

    /// The spill bag, locked (lock the store first when taking both).
    pub fn spill(&self) -> MutexGuard<'_, Option<Spill>> {
        lock(&self.spill)
    }

    /// The channel each topic is saved as, by topic id.
    pub fn channel_specs(&self) -> Vec<ChannelSpec> {
        lock(&self.specs).clone()
    }
}

impl LiveShared {
    /// Topic `topic`'s description.
    pub fn topic_info(&self, topic: usize) -> Option<TopicInfo> {
        lock(&self.topics).get(topic).cloned()
    }
}

impl DataSource for LiveShared {
    fn summary(&self) -> &SourceSummary {
        &self.summary
    }

    fn stream(
        &self,
        topics: &[usize],
        window: TimeWindow,
        cancel: &AtomicBool,
        on_message: &mut dyn FnMut(MessageView<'_>) -> bool,
    ) -> Result<Vec<String>, String> {
        let store = self.store();
        let from = window.start_ns.map_or(0, |t| store.seq_at(t));
        let to = window.end_ns.map_or(u64::MAX, |t| store.seq_at(t));
        store.visit(from, to, &mut |m| {
            if cancel.load(Ordering::Relaxed) {
                return false;
            }
            if !topics.contains(&(m.topic as usize)) {
                return true;
            }
            on_message(MessageView {
                topic: m.topic as usize,
                log_time_ns: m.log_time_ns,
                publish_time_ns: m.publish_time_ns.unwrap_or(m.log_time_ns),
                data: m.data,
                from_torn_part: false,
            })
        });
        Ok(Vec::new())
    }
}

/// A running capture; dropping it stops the worker and closes the session.
pub struct LiveCapture {
    shared: Arc<LiveShared>,
    events: Receiver<LiveEvent>,
    stop: Arc<AtomicBool>,
    worker: Option<JoinHandle<()>>,
    options: LiveOptions,
}

impl std::fmt::Debug for LiveCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveCapture")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl LiveCapture {
    /// Starts capturing on a worker thread (the session is opened there, so a slow network
    /// never holds up the caller); `repaint` is called when there is something new.
    pub fn start(options: LiveOptions, repaint: Arc<dyn Fn() + Send + Sync>) -> Self {
        let shared = Arc::new(LiveShared {
            store: Mutex::new(CaptureStore::new(options.cap_bytes)),
            topics: Mutex::new(Vec::new()),
            specs: Mutex::new(Vec::new()),
            spill: Mutex::new(None),
            stats: Mutex::new(LiveStats {
                cap_bytes: options.cap_bytes,
                ..LiveStats::default()
            }),
            summary: SourceSummary {
                name: options.describe(),
                path: PathBuf::new(),
                topics: Vec::new(),
                time_range_ns: None,
                health: Health::default(),
            },
        });
        let (tx, events) = unbounded();
        let stop = Arc::new(AtomicBool::new(false));
        let worker = {
            let (shared, stop, options) = (Arc::clone(&shared), Arc::clone(&stop), options.clone());
            let spawned = std::thread::Builder::new()
                .name("scope-live".into())
                .spawn(move || {
                    if let Err(e) = run(&options, &shared, &tx, &stop, repaint.as_ref()) {
                        let _ = tx.send(LiveEvent::Failed(e));
                        repaint();
                    }
                });
            match spawned {
                Ok(handle) => Some(handle),
                Err(e) => {
                    eprintln!("scope: cannot start the capture thread: {e}");
                    None
                }
            }
        };
        LiveCapture {
            shared,
            events,
            stop,
            worker,
            options,
        }
    }

    /// The next event, if any.
    pub fn try_event(&self) -> Option<LiveEvent> {
        self.events.try_recv().ok()
    }

    /// What the UI, the inspector and Save Recording share with the worker.
    pub fn shared(&self) -> &Arc<LiveShared> {
        &self.shared
    }

    /// What was asked for.
    pub fn options(&self) -> &LiveOptions {
        &self.options
    }
}

impl Drop for LiveCapture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // The worker notices within one queue wait; joining would hold up the UI thread
        // while zenoh closes, so it is left to finish on its own.
        drop(self.worker.take());
    }
}

/// One topic as the worker decodes it.
struct TopicState {
    plan: Option<Plan>,
    plan_error: Option<String>,
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

fn run(
    options: &LiveOptions,
    shared: &LiveShared,
    tx: &Sender<LiveEvent>,
    stop: &AtomicBool,
    repaint: &(dyn Fn() + Send + Sync),
) -> Result<(), String> {
    let session = options.session.open().map_err(|e| e.to_string())?;
    // Between zenoh's callback and this thread: generous, since the ring does the bounding.
    let queue = Arc::new(DropQueue::new(usize::MAX, 256 << 20));
    let subscription = Subscription::start(&session, &options.key_exprs, Arc::clone(&queue))
        .map_err(|e| e.to_string())?;
    // The simulator after the subscription, so its first messages are not missed.
    let simulator = if options.simulate {
        Some(Simulator::start(&session).map_err(|e| e.to_string())?)
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
                let compiled = compile(&SchemaSource {
                    message_encoding: &info.message_encoding,
                    schema_encoding: &info.schema_encoding,
                    schema_name: &info.schema_name,
                    schema_data: &info.schema_data,
                });
                let (plan, plan_error) = match compiled {
                    Ok(p) => (Some(p), None),
                    Err(e) => (None, Some(format!("cannot decode {}: {e}", info.type_name))),
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
                    (s.written(), s.failed(), s.error().map(str::to_owned))
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
                batch.first_error = Some(e.to_string());
            }
            pad_row(batch);
        }
    }
}

fn pad_row(batch: &mut Batch) {
    let width = batch.leaves.len();
    batch.values.resize(batch.values.len() + width, f64::NAN);
}
