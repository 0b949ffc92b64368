//! [`LiveShared`]: what the capture worker shares with the app, the inspector and Save
//! Recording (the raw ring, the topic table, the counters, the spill bag), and the capture
//! seen as a [`DataSource`].

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bag::ChannelSpec;
use bag::live::Advertised;

use crate::data::source::{DataSource, Health, MessageView, SourceSummary, TimeWindow, TopicInfo};
use crate::error::Error;
use crate::live::LiveOptions;
use crate::live::capture::CaptureStore;
use crate::live::spill::Spill;

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
    pub spill_error: Option<Arc<Error>>,
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
    pub(super) specs: Mutex<Vec<ChannelSpec>>,
    /// Where evicted messages go, when spilling.
    spill: Mutex<Option<Spill>>,
    summary: SourceSummary,
}

/// Locks `m`; a panic on another thread while it held the lock does not make the data
/// unreachable.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl LiveShared {
    /// Nothing captured yet, with a ring of `options.cap_bytes`.
    pub(super) fn new(options: &LiveOptions) -> Self {
        LiveShared {
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
        }
    }

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
    ) -> Result<Vec<String>, Error> {
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
                publish_time_ns: m.publish_time_ns,
                data: m.data,
                from_torn_part: false,
            })
        });
        Ok(Vec::new())
    }
}
