//! An open source in the app: its summary at once, its topics' columns as the loader (or the
//! live capture) delivers them, and what went wrong on the way.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::data::loader::{LoadEvent, Loader};
use crate::data::source::{DataSource, SourceSummary};
use crate::data::topic_data::TopicData;
use crate::error::Error;
use crate::live::{LiveCapture, LiveEvent, LiveStats};

/// Evicted messages a live topic keeps in its columns before they are dropped (dropping
/// rebuilds the columns, so it waits until a good share is dead).
pub const DEAD_PREFIX_MIN: usize = 4_096;

/// How far a topic has got.
#[derive(Debug, Clone, Default)]
pub enum TopicState {
    /// Still decoding.
    #[default]
    Loading,
    /// Decoded.
    Loaded(Arc<TopicData>),
    /// Its schema could not be used or reading failed.
    Failed(Arc<Error>),
}

/// An open recording.
pub struct Recording {
    /// The source (shared with the loader and inspector threads).
    pub source: Arc<dyn DataSource>,
    /// Per topic, in the summary's order.
    pub topics: Vec<TopicState>,
    /// Problems met reading (parts that stopped early), and a live capture's failure, as
    /// the health panel lists them.
    pub issues: Vec<String>,
    /// A live capture's failure, until the app takes it to show.
    failure: Option<Error>,
    /// Set when every topic is done.
    pub load_time: Option<Duration>,
    /// True when loading was cancelled.
    pub cancelled: bool,
    loader: Option<Loader>,
    /// The summary: the source's, grown by a live capture.
    summary: SourceSummary,
    live: Option<LiveCapture>,
    live_stats: LiveStats,
    /// Bumped whenever columns change (plots recompute their points).
    generation: u64,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("name", &self.summary().name)
            .field("load_time", &self.load_time)
            .finish()
    }
}

impl Recording {
    /// Starts loading `source` in the background.
    pub fn start(source: Arc<dyn DataSource>, repaint: Arc<dyn Fn() + Send + Sync>) -> Self {
        let count = source.summary().topics.len();
        let loader = Loader::start(Arc::clone(&source), repaint);
        Self {
            summary: source.summary().clone(),
            source,
            topics: vec![TopicState::Loading; count],
            issues: Vec::new(),
            failure: None,
            load_time: None,
            cancelled: false,
            loader: Some(loader),
            live: None,
            live_stats: LiveStats::default(),
            generation: 0,
        }
    }

    /// Shows a live capture: topics appear as they are first heard and their columns grow.
    pub fn live(capture: LiveCapture) -> Self {
        let source: Arc<dyn DataSource> = Arc::clone(capture.shared()) as Arc<dyn DataSource>;
        Self {
            summary: source.summary().clone(),
            source,
            topics: Vec::new(),
            issues: Vec::new(),
            failure: None,
            load_time: Some(Duration::ZERO),
            cancelled: false,
            loader: None,
            live: Some(capture),
            live_stats: LiveStats::default(),
            generation: 0,
        }
    }

    /// The summary.
    pub fn summary(&self) -> &SourceSummary {
        &self.summary
    }

    /// The live capture, when this is one.
    pub fn capture(&self) -> Option<&LiveCapture> {
        self.live.as_ref()
    }

    /// The live capture's counters (zero for a recording).
    pub fn live_stats(&self) -> &LiveStats {
        &self.live_stats
    }

    /// Changes whenever any topic's columns change.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Takes in what the loader or the capture has delivered, for at most `budget`.
    pub fn poll(&mut self, budget: Duration) {
        if self.live.is_some() {
            self.poll_live(budget);
            return;
        }
        let start = Instant::now();
        let Some(loader) = &self.loader else {
            return;
        };
        while start.elapsed() < budget {
            let Some(event) = loader.try_event() else {
                break;
            };
            match event {
                LoadEvent::Topic { topic, data } => {
                    self.generation += 1;
                    if let Some(slot) = self.topics.get_mut(topic) {
                        *slot = match data {
                            Ok(d) => TopicState::Loaded(d),
                            Err(e) => TopicState::Failed(e),
                        };
                    }
                }
                LoadEvent::Finished {
                    issues,
                    elapsed,
                    cancelled,
                } => {
                    self.issues = issues;
                    self.load_time = Some(elapsed);
                    self.cancelled = cancelled;
                    self.loader = None;
                    return;
                }
            }
        }
    }

    fn poll_live(&mut self, budget: Duration) {
        let start = Instant::now();
        let Some(capture) = &self.live else {
            return;
        };
        while start.elapsed() < budget {
            let Some(event) = capture.try_event() else {
                break;
            };
            match event {
                LiveEvent::Topic(info) => {
                    self.summary.topics.push(info);
                    self.topics
                        .push(TopicState::Loaded(Arc::new(TopicData::default())));
                }
                LiveEvent::Columns {
                    topic,
                    columns,
                    latency,
                    skipped,
                } => {
                    let (Some(TopicState::Loaded(data)), Some(info)) = (
                        self.topics.get_mut(topic),
                        self.summary.topics.get_mut(topic),
                    ) else {
                        continue;
                    };
                    let data = Arc::make_mut(data);
                    data.append(&columns);
                    if latency.is_some() {
                        data.latency = latency;
                    }
                    let received = columns.len() as u64 + skipped;
                    info.message_count += received;
                    self.summary.health.message_count += received;
                    if let (Some(&first), Some(&last)) =
                        (columns.times_ns.first(), columns.times_ns.last())
                    {
                        self.summary.time_range_ns = Some(match self.summary.time_range_ns {
                            None => (first, last),
                            Some((a, b)) => (a.min(first), b.max(last)),
                        });
                    }
                    self.generation += 1;
                }
                LiveEvent::Failed(e) => {
                    self.issues.push(e.report());
                    self.failure = Some(e);
                }
            }
        }
        let stats = capture.shared().stats();
        // Columns follow the ring: messages it evicted leave the plots too.
        if let Some(oldest) = stats.oldest_ns {
            for state in &mut self.topics {
                if let TopicState::Loaded(data) = state {
                    let dead = data.count_before(oldest);
                    if dead >= DEAD_PREFIX_MIN.max(data.times_ns.len() / 2) {
                        Arc::make_mut(data).drop_before(oldest);
                        self.generation += 1;
                    }
                }
            }
        }
        let health = &mut self.summary.health;
        // Evicted messages kept by the spill bag are not lost.
        health.dropped_messages =
            Some(stats.evicted.saturating_sub(stats.spilled) + stats.transport_dropped);
        health.unstamped_messages = Some(stats.unstamped);
        health.never_published = stats
            .advertised
            .iter()
            .filter(|a| !self.summary.topics.iter().any(|t| t.topic == a.topic))
            .map(|a| (a.topic.clone(), a.schema.clone()))
            .collect();
        self.live_stats = stats;
    }

    /// The live capture's failure, once: the app shows it until dismissed.
    pub fn take_failure(&mut self) -> Option<Error> {
        self.failure.take()
    }

    /// True when every topic has been decoded (or failed).
    pub fn loaded(&self) -> bool {
        self.load_time.is_some()
    }

    /// Overall progress 0..=1.
    pub fn progress(&self) -> f32 {
        self.loader.as_ref().map_or(1.0, Loader::overall_progress)
    }

    /// Messages decoded so far and the total, for topic `i`.
    pub fn topic_progress(&self, i: usize) -> Option<(u64, u64)> {
        self.loader.as_ref().map(|l| l.topic_progress(i))
    }

    /// The decoded columns of topic `i`.
    pub fn data(&self, i: usize) -> Option<&Arc<TopicData>> {
        match self.topics.get(i) {
            Some(TopicState::Loaded(d)) => Some(d),
            _ => None,
        }
    }

    /// Index of the topic named `topic`.
    pub fn topic_index(&self, topic: &str) -> Option<usize> {
        self.summary().topics.iter().position(|t| t.topic == topic)
    }

    /// The recording's first log time (0 when empty).
    pub fn t0_ns(&self) -> u64 {
        self.summary().time_range_ns.map_or(0, |r| r.0)
    }

    /// The recording's last log time.
    pub fn t1_ns(&self) -> u64 {
        self.summary().time_range_ns.map_or(0, |r| r.1)
    }
}
