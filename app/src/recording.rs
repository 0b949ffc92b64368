//! An open source in the app: its summary at once, its topics' columns as the loader (or the
//! live capture) delivers them, and what went wrong on the way.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::data::column_builder::compile_plan;
use crate::data::derived::{DERIVED_TOPIC, DerivedSpec, Lookup, resolve};
use crate::data::derived_jobs::DerivedJobs;
use crate::data::expression::Expression;
use crate::data::layout::SignalRef;
use crate::data::loader::{LoadEvent, Loader};
use crate::data::source::{DataSource, SourceSummary};
use crate::data::topic_data::TopicData;
use crate::error::Error;
use crate::live::{LiveCapture, LiveEvent, LiveStats};

/// Evicted messages a live topic keeps in its columns before they are dropped (dropping
/// rebuilds the columns, so it waits until a good share is dead).
pub const DEAD_PREFIX_MIN: usize = 4_096;

/// A live capture's derived signals are evaluated again at most this often.
pub const LIVE_DERIVED_EVERY: Duration = Duration::from_millis(250);

/// Names a second recording's topics in signals and the topic tree: `B:/imu/data`.
pub const SECOND_PREFIX: &str = "B:";

/// Told apart from the first recording's topics and derived signals in cache numbers.
const SECOND_INDEX: usize = usize::MAX / 2;

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
    /// The derived signals' columns, evaluated from this recording's.
    derived: DerivedJobs,
    /// A second recording opened beside this one.
    second: Option<Second>,
    /// Types decoded with definitions built in, and types without any (see
    /// [`Recording::definitions`]).
    definitions: Definitions,
}

/// The types a recording names without defining them (a rosbag2 SQLite bag from before Iron):
/// those decoded with the ROS 2 standard definitions built in, and those that cannot be.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Definitions {
    /// Topic types decoded with (some of) the standard definitions built in, sorted.
    pub built_in: Vec<String>,
    /// Topic types with no definition in the recording and none built in, sorted.
    pub missing: Vec<String>,
    /// Per topic (in the summary's order), the types its plan took from the definitions
    /// built in (`Plan::standard_types`): what the topic tree says on hover.
    pub by_topic: Vec<Vec<String>>,
}

impl Definitions {
    /// Compiles the schema of each ROS 2 topic with a `.msg` schema (the only ones that can
    /// lack definitions; each compiles in microseconds).
    fn of(summary: &SourceSummary) -> Self {
        let mut found = Self {
            by_topic: vec![Vec::new(); summary.topics.len()],
            ..Self::default()
        };
        for (topic, taken) in summary.topics.iter().zip(&mut found.by_topic) {
            if topic.message_encoding != "cdr" || topic.schema_encoding != "ros2msg" {
                continue;
            }
            let Ok(plan) = compile_plan(topic) else {
                continue;
            };
            taken.extend_from_slice(plan.standard_types());
            let list = if plan.lacks_definition() {
                &mut found.missing
            } else if !plan.standard_types().is_empty() {
                &mut found.built_in
            } else {
                continue;
            };
            if !list.contains(&topic.type_name) {
                list.push(topic.type_name.clone());
            }
        }
        found.built_in.sort();
        found.missing.sort();
        found
    }
}

/// A second recording, its columns' times moved onto the first's axis: its start onto the
/// first's start, plus an offset.
struct Second {
    recording: Box<Recording>,
    /// Added to the start alignment, ns.
    offset_ns: i64,
    /// Per topic, the shift its columns carry now, ns.
    shifted: Vec<i64>,
    /// Its generation when last taken in.
    seen: u64,
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
            definitions: Definitions::of(source.summary()),
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
            derived: DerivedJobs::new(),
            second: None,
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
            derived: DerivedJobs::new(),
            second: None,
            definitions: Definitions::default(),
        }
    }

    /// The summary.
    pub fn summary(&self) -> &SourceSummary {
        &self.summary
    }

    /// The types it names without defining them.
    pub fn definitions(&self) -> &Definitions {
        &self.definitions
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

    /// Takes in what the loader or the capture has delivered, for at most `budget` (and as
    /// much again for a second recording).
    pub fn poll(&mut self, budget: Duration) {
        self.poll_own(budget);
        self.poll_second(budget);
    }

    fn poll_own(&mut self, budget: Duration) {
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
                    // A topic the summary could not count is counted by loading it.
                    if let (Ok(d), Some(info)) = (&data, self.summary.topics.get_mut(topic))
                        && info.message_count.is_none()
                    {
                        info.message_count = Some(d.times_ns.len() as u64);
                    }
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
                    info.message_count = Some(info.message_count.unwrap_or(0) + received);
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

    /// Opens `source` beside this recording (replacing a second one open before): its topics
    /// are named with [`SECOND_PREFIX`], its start aligned with this one's.
    pub fn open_second(
        &mut self,
        source: Arc<dyn DataSource>,
        repaint: Arc<dyn Fn() + Send + Sync>,
    ) {
        self.second = Some(Second {
            recording: Box::new(Recording::start(source, repaint)),
            offset_ns: 0,
            shifted: Vec::new(),
            seen: 0,
        });
        self.generation += 1;
    }

    /// Closes the second recording.
    pub fn close_second(&mut self) {
        if self.second.take().is_some() {
            self.generation += 1;
        }
    }

    /// The second recording, as it was recorded (its summary's times are its own; its
    /// columns' are on this recording's axis).
    pub fn second(&self) -> Option<&Recording> {
        self.second.as_ref().map(|s| &*s.recording)
    }

    /// How far the second recording's start is moved past this one's, ns.
    pub fn second_offset_ns(&self) -> i64 {
        self.second.as_ref().map_or(0, |s| s.offset_ns)
    }

    /// Moves the second recording's start `offset_ns` past this one's, its loaded columns
    /// at once (those still loading as they arrive).
    pub fn set_second_offset_ns(&mut self, offset_ns: i64) {
        if let Some(second) = &mut self.second {
            second.offset_ns = offset_ns;
        }
        self.align_second();
    }

    /// How far the second recording's samples are drawn from the times it recorded, ns (0
    /// without one): its start onto this one's, plus the offset.
    pub fn second_shift_ns(&self) -> i64 {
        let Some(second) = &self.second else {
            return 0;
        };
        let (ours, theirs) = (
            self.summary.time_range_ns,
            second.recording.summary.time_range_ns,
        );
        let start = match (ours, theirs) {
            (Some((a, _)), Some((b, _))) => i128::from(a) - i128::from(b),
            _ => 0,
        };
        let shift = start.saturating_add(i128::from(second.offset_ns));
        i64::try_from(shift).unwrap_or(if shift < 0 { i64::MIN } else { i64::MAX })
    }

    fn poll_second(&mut self, budget: Duration) {
        let Some(second) = &mut self.second else {
            return;
        };
        second.recording.poll(budget);
        if second.recording.generation != second.seen {
            second.seen = second.recording.generation;
            self.generation += 1;
        }
        self.align_second();
    }

    /// Moves the second recording's loaded columns onto this one's axis, where they are not
    /// yet.
    fn align_second(&mut self) {
        let shift = self.second_shift_ns();
        let Some(second) = &mut self.second else {
            return;
        };
        second.shifted.resize(second.recording.topics.len(), 0);
        let mut moved = false;
        for (state, done) in second.recording.topics.iter_mut().zip(&mut second.shifted) {
            if let TopicState::Loaded(data) = state
                && *done != shift
            {
                Arc::make_mut(data).shift_times(shift.saturating_sub(*done));
                *done = shift;
                moved = true;
            }
        }
        if moved {
            self.generation += 1;
        }
    }

    /// Whether every signal `spec`'s expression reads is in this recording (a derived one:
    /// among `defined`, with its own inputs here); an expression that does not parse reads
    /// none. A saved layout keeps a derived signal only then, as it keeps a field only when the
    /// recording has it.
    pub fn has_inputs_of(&self, spec: &DerivedSpec, defined: &[DerivedSpec]) -> bool {
        self.has_inputs_within(spec, defined, 0)
    }

    /// [`Recording::has_inputs_of`], `depth` derived signals down (a chain longer than the
    /// definitions is a loop: not here).
    fn has_inputs_within(&self, spec: &DerivedSpec, defined: &[DerivedSpec], depth: usize) -> bool {
        let Ok(expression) = Expression::parse(&spec.expression) else {
            return true;
        };
        let mut names: Vec<String> = self
            .summary
            .topics
            .iter()
            .map(|t| t.topic.clone())
            .collect();
        if let Some(second) = &self.second {
            let topics = &second.recording.summary.topics;
            names.extend(topics.iter().map(|t| format!("{SECOND_PREFIX}{}", t.topic)));
        }
        expression.inputs().iter().all(|name| {
            match resolve(name, names.iter().map(String::as_str)) {
                Some(s) if s.topic == DERIVED_TOPIC => {
                    depth < defined.len()
                        && defined
                            .iter()
                            .find(|d| d.name == s.path)
                            .is_some_and(|d| self.has_inputs_within(d, defined, depth + 1))
                }
                Some(s) => self
                    .signal_data(&s)
                    .is_some_and(|(_, d)| d.field(&s.path).is_some()),
                None => false,
            }
        })
    }

    /// Evaluates the derived signals `specs` from this recording's columns (in the background,
    /// again when they or their inputs change; for a live capture at most every
    /// [`LIVE_DERIVED_EVERY`]). `repaint` wakes the UI when new results are in. True when
    /// derived columns changed.
    pub fn update_derived(
        &mut self,
        specs: &[DerivedSpec],
        repaint: &Arc<dyn Fn() + Send + Sync>,
    ) -> bool {
        let Recording {
            derived,
            topics,
            summary,
            live,
            generation,
            second,
            ..
        } = self;
        let names: Vec<&str> = summary.topics.iter().map(|t| t.topic.as_str()).collect();
        let second_names: Vec<String> = second
            .as_ref()
            .map(|s| {
                let topics = &s.recording.summary.topics;
                topics
                    .iter()
                    .map(|t| format!("{SECOND_PREFIX}{}", t.topic))
                    .collect()
            })
            .unwrap_or_default();
        let state = |s: &SignalRef| {
            let own = names.iter().position(|&t| t == s.topic);
            match (own, s.topic.strip_prefix(SECOND_PREFIX), second.as_ref()) {
                (Some(i), _, _) => topics.get(i),
                (None, Some(topic), Some(second)) => second
                    .recording
                    .topic_index(topic)
                    .and_then(|i| second.recording.topics.get(i)),
                _ => None,
            }
        };
        let lookup = |s: &SignalRef| match state(s) {
            Some(TopicState::Loaded(d)) => Lookup::Found(Arc::clone(d)),
            Some(TopicState::Loading) => Lookup::Loading,
            _ => Lookup::Missing,
        };
        let mut names = names.clone();
        names.extend(second_names.iter().map(String::as_str));
        let throttle = if live.is_some() {
            LIVE_DERIVED_EVERY
        } else {
            Duration::ZERO
        };
        let changed = derived.poll(specs, &names, &lookup, throttle, repaint);
        if changed {
            *generation += 1;
        }
        changed
    }

    /// The columns holding `signal` (a topic's, or a derived signal's, which comes first when a
    /// topic is named [`DERIVED_TOPIC`] too), with a number that tells the columns apart for
    /// caches.
    pub fn signal_data(&self, signal: &SignalRef) -> Option<(usize, &Arc<TopicData>)> {
        match self.signal_state(signal)? {
            (i, TopicState::Loaded(d)) => Some((i, d)),
            _ => None,
        }
    }

    /// How far the columns holding `signal` have got (see [`Recording::signal_data`]).
    pub fn signal_state(&self, signal: &SignalRef) -> Option<(usize, &TopicState)> {
        if signal.topic == DERIVED_TOPIC
            && let Some(state) = self.derived.state(&signal.path)
        {
            let i = self.derived.index(&signal.path).unwrap_or_default();
            return Some((self.topics.len() + i, state));
        }
        if let Some(i) = self.topic_index(&signal.topic) {
            return Some((i, self.topics.get(i)?));
        }
        let topic = signal.topic.strip_prefix(SECOND_PREFIX)?;
        let second = &self.second.as_ref()?.recording;
        let i = second.topic_index(topic)?;
        Some((SECOND_INDEX + i, second.topics.get(i)?))
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
    pub fn topic_progress(&self, i: usize) -> Option<(u64, Option<u64>)> {
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

    /// The first log time (0 when empty); with a second recording, the earlier of the two
    /// starts on this one's axis.
    pub fn t0_ns(&self) -> u64 {
        let own = self.summary().time_range_ns.map(|r| r.0);
        match (own, self.second_range_ns()) {
            (Some(a), Some((b, _))) => a.min(b),
            (a, b) => a.or(b.map(|r| r.0)).unwrap_or(0),
        }
    }

    /// Whether any message has a time: not for a recording without messages, nor a capture
    /// before its first message ([`Recording::t0_ns`] is then 0, which is no time of it).
    pub fn has_time(&self) -> bool {
        self.summary().time_range_ns.is_some() || self.second_range_ns().is_some()
    }

    /// The last log time; with a second recording, the later of the two ends.
    pub fn t1_ns(&self) -> u64 {
        let own = self.summary().time_range_ns.map(|r| r.1);
        match (own, self.second_range_ns()) {
            (Some(a), Some((_, b))) => a.max(b),
            (a, b) => a.or(b.map(|r| r.1)).unwrap_or(0),
        }
    }

    /// The second recording's time range on this one's axis.
    fn second_range_ns(&self) -> Option<(u64, u64)> {
        let (a, b) = self.second.as_ref()?.recording.summary.time_range_ns?;
        let shift = self.second_shift_ns();
        Some((
            a.saturating_add_signed(shift),
            b.saturating_add_signed(shift),
        ))
    }
}
