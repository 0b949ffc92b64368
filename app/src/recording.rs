//! An open source in the app: its summary at once, its topics' columns as the loader delivers
//! them, and what went wrong on the way.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::loader::{LoadEvent, Loader};
use crate::source::{DataSource, SourceSummary};
use crate::topic_data::TopicData;

/// How far a topic has got.
#[derive(Debug, Clone, Default)]
pub enum TopicState {
    /// Still decoding.
    #[default]
    Loading,
    /// Decoded.
    Loaded(Arc<TopicData>),
    /// Its schema could not be used or reading failed.
    Failed(String),
}

/// An open recording.
pub struct Recording {
    /// The source (shared with the loader and inspector threads).
    pub source: Arc<dyn DataSource>,
    /// Per topic, in the summary's order.
    pub topics: Vec<TopicState>,
    /// Problems met reading (parts that stopped early).
    pub issues: Vec<String>,
    /// Set when every topic is done.
    pub load_time: Option<Duration>,
    /// True when loading was cancelled.
    pub cancelled: bool,
    loader: Option<Loader>,
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
            source,
            topics: vec![TopicState::Loading; count],
            issues: Vec::new(),
            load_time: None,
            cancelled: false,
            loader: Some(loader),
        }
    }

    /// The summary.
    pub fn summary(&self) -> &SourceSummary {
        self.source.summary()
    }

    /// Takes in what the loader has delivered, for at most `budget`.
    pub fn poll(&mut self, budget: Duration) {
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
