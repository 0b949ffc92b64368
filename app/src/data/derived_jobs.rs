//! Evaluates the derived signals ([`crate::data::derived`]) on a background thread, once for
//! each set of definitions and inputs: again when a definition changes, when an input topic
//! finishes loading, and when a live capture grows an input (at most every `throttle`).
//!
//! One job at a time evaluates every definition in order; the UI keeps showing the previous
//! results until it is done. A job holds its inputs' columns (`Arc`s), so a live topic that
//! grows meanwhile is copied once by `Arc::make_mut`; the next job sees the new columns.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, TryRecvError, bounded};

use crate::data::derived::{
    DERIVED_TOPIC, DerivedError, DerivedSpec, Lookup, evaluate_all, resolve,
};
use crate::data::expression::Expression;
use crate::data::layout::SignalRef;
use crate::data::topic_data::TopicData;
use crate::error::Error;
use crate::recording::TopicState;

/// What one job returns: per definition, its column, why it has none, or `None` (waiting).
type Results = Vec<Option<Result<Arc<TopicData>, DerivedError>>>;

/// An input as a job key sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum InputKey {
    /// Its topic's columns (by identity), how many samples they hold and the first one's
    /// time (which moves when a second recording's offset does).
    Found(usize, usize, Option<u64>),
    Loading,
    Missing,
}

/// What a set of results was computed from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    specs: Vec<DerivedSpec>,
    inputs: Vec<InputKey>,
}

struct Running {
    key: Key,
    results: Receiver<Results>,
}

/// The derived signals of one recording.
#[derive(Default)]
pub struct DerivedJobs {
    /// Per definition name, its state (the latest results).
    states: HashMap<String, TopicState>,
    /// The definitions' names in order, as last polled.
    names: Vec<String>,
    done: Option<Key>,
    running: Option<Running>,
    last_start: Option<Instant>,
    /// Expression text -> the names in its braces (empty when it does not parse).
    inputs: HashMap<String, Vec<String>>,
}

/// The state of a definition whose first result has not come yet.
static WAITING: TopicState = TopicState::Loading;

impl DerivedJobs {
    /// No derived signals yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes in a finished job and starts the next one when `specs` or their inputs (what
    /// `lookup` gives for a signal of `topics`) changed since the last. Returns true when
    /// results changed. `repaint` wakes the UI when a job is done.
    pub fn poll(
        &mut self,
        specs: &[DerivedSpec],
        topics: &[&str],
        lookup: &dyn Fn(&SignalRef) -> Lookup,
        throttle: Duration,
        repaint: &Arc<dyn Fn() + Send + Sync>,
    ) -> bool {
        let mut changed = false;
        if let Some(running) = &self.running {
            match running.results.try_recv() {
                Ok(results) => {
                    self.states = running
                        .key
                        .specs
                        .iter()
                        .zip(results)
                        .map(|(spec, result)| (spec.name.clone(), state_of(spec, result)))
                        .collect();
                    self.done = Some(running.key.clone());
                    self.running = None;
                    changed = true;
                }
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => {
                    // The job ended without results (it panicked): do not start it again.
                    self.done = Some(running.key.clone());
                    self.running = None;
                }
            }
        }
        if self.names.len() != specs.len()
            || self.names.iter().zip(specs).any(|(n, s)| *n != s.name)
        {
            self.names = specs.iter().map(|s| s.name.clone()).collect();
            changed = true;
        }
        let key = self.key(specs, topics, lookup);
        let throttled = self.last_start.is_some_and(|t| t.elapsed() < throttle);
        if self.done.as_ref() != Some(&key) && self.running.is_none() && !throttled {
            self.start(key, topics, lookup, Arc::clone(repaint));
        }
        changed
    }

    /// The state of derived signal `name` (`None`: there is no such definition).
    pub fn state(&self, name: &str) -> Option<&TopicState> {
        if !self.names.iter().any(|n| n == name) {
            return None;
        }
        Some(self.states.get(name).unwrap_or(&WAITING))
    }

    /// The column of derived signal `name`, once evaluated.
    pub fn data(&self, name: &str) -> Option<&Arc<TopicData>> {
        match self.state(name)? {
            TopicState::Loaded(d) => Some(d),
            _ => None,
        }
    }

    /// Where derived signal `name` is in the definitions' order.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// True while a job runs.
    pub fn busy(&self) -> bool {
        self.running.is_some()
    }

    fn key(
        &mut self,
        specs: &[DerivedSpec],
        topics: &[&str],
        lookup: &dyn Fn(&SignalRef) -> Lookup,
    ) -> Key {
        let mut inputs = Vec::new();
        for spec in specs {
            let names = self
                .inputs
                .entry(spec.expression.clone())
                .or_insert_with(|| {
                    Expression::parse(&spec.expression)
                        .map(|e| e.inputs().to_vec())
                        .unwrap_or_default()
                });
            for name in names.iter() {
                let Some(signal) = resolve(name, topics.iter().copied()) else {
                    inputs.push(InputKey::Missing);
                    continue;
                };
                if signal.topic == DERIVED_TOPIC {
                    continue;
                }
                inputs.push(match lookup(&signal) {
                    Lookup::Found(d) => InputKey::Found(
                        Arc::as_ptr(&d) as usize,
                        d.times_ns.len(),
                        d.times_ns.first().copied(),
                    ),
                    Lookup::Loading => InputKey::Loading,
                    Lookup::Missing => InputKey::Missing,
                });
            }
        }
        Key {
            specs: specs.to_vec(),
            inputs,
        }
    }

    fn start(
        &mut self,
        key: Key,
        topics: &[&str],
        lookup: &dyn Fn(&SignalRef) -> Lookup,
        repaint: Arc<dyn Fn() + Send + Sync>,
    ) {
        // The job's own view of the recording: the input columns it needs, by signal.
        let mut found: HashMap<SignalRef, Lookup> = HashMap::new();
        for spec in &key.specs {
            for name in self.inputs.get(&spec.expression).into_iter().flatten() {
                if let Some(signal) = resolve(name, topics.iter().copied())
                    && signal.topic != DERIVED_TOPIC
                {
                    let got = lookup(&signal);
                    found.insert(signal, got);
                }
            }
        }
        let topics: Vec<String> = topics.iter().map(|t| (*t).to_owned()).collect();
        let specs = key.specs.clone();
        let (tx, rx) = bounded(1);
        let spawned = std::thread::Builder::new()
            .name("scope-derived".into())
            .spawn(move || {
                let names: Vec<&str> = topics.iter().map(String::as_str).collect();
                let lookup = |s: &SignalRef| found.get(s).cloned().unwrap_or(Lookup::Missing);
                let results = evaluate_all(&specs, &names, &lookup);
                // The receiver may be gone (the recording was closed): nothing to do.
                let _ = tx.send(results);
                repaint();
            });
        self.last_start = Some(Instant::now());
        match spawned {
            Ok(_) => self.running = Some(Running { key, results: rx }),
            Err(source) => {
                let error = Arc::new(Error::Thread {
                    name: "derived signals",
                    source,
                });
                self.states = key
                    .specs
                    .iter()
                    .map(|s| (s.name.clone(), TopicState::Failed(Arc::clone(&error))))
                    .collect();
                self.done = Some(key);
            }
        }
    }
}

fn state_of(
    spec: &DerivedSpec,
    result: Option<Result<Arc<TopicData>, DerivedError>>,
) -> TopicState {
    match result {
        None => TopicState::Loading,
        Some(Ok(data)) => TopicState::Loaded(data),
        Some(Err(source)) => TopicState::Failed(Arc::new(Error::Derived {
            name: spec.name.clone(),
            source,
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::derived::{Transform, column};

    fn wait(
        jobs: &mut DerivedJobs,
        specs: &[DerivedSpec],
        topics: &[&str],
        lookup: &dyn Fn(&SignalRef) -> Lookup,
    ) {
        let start = Instant::now();
        let repaint: Arc<dyn Fn() + Send + Sync> = Arc::new(|| {});
        jobs.poll(specs, topics, lookup, Duration::ZERO, &repaint);
        while jobs.busy() && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(2));
            jobs.poll(specs, topics, lookup, Duration::ZERO, &repaint);
        }
    }

    #[test]
    fn results_follow_their_inputs_and_definitions() {
        let mut jobs = DerivedJobs::new();
        let spec = DerivedSpec {
            name: "double".into(),
            expression: "{/t/x} * 2".into(),
            transform: Transform::None,
        };
        let specs = vec![spec.clone()];
        let loading = |_: &SignalRef| Lookup::Loading;
        wait(&mut jobs, &specs, &["/t"], &loading);
        assert!(matches!(jobs.state("double"), Some(TopicState::Loading)));
        assert!(jobs.state("other").is_none());

        let data = Arc::new(column("x", vec![1, 2], vec![1.0, 2.0]));
        let loaded = |_: &SignalRef| Lookup::Found(Arc::clone(&data));
        wait(&mut jobs, &specs, &["/t"], &loaded);
        let values = |jobs: &DerivedJobs| {
            let d = jobs.data("double").expect("evaluated");
            (0..d.times_ns.len())
                .map(|i| d.fields[0].series.value(i).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(values(&jobs), vec![2.0, 4.0]);

        // The input grows (a live capture): evaluated again.
        let grown = Arc::new(column("x", vec![1, 2, 3], vec![1.0, 2.0, 5.0]));
        let grown_lookup = |_: &SignalRef| Lookup::Found(Arc::clone(&grown));
        wait(&mut jobs, &specs, &["/t"], &grown_lookup);
        assert_eq!(values(&jobs), vec![2.0, 4.0, 10.0]);

        // The definition changes.
        let specs = vec![DerivedSpec {
            expression: "{/t/x} + 1".into(),
            ..spec
        }];
        wait(&mut jobs, &specs, &["/t"], &grown_lookup);
        assert_eq!(values(&jobs), vec![2.0, 3.0, 6.0]);

        // A bad one says why.
        let specs = vec![DerivedSpec {
            name: "bad".into(),
            expression: "{/t/x} +".into(),
            transform: Transform::None,
        }];
        wait(&mut jobs, &specs, &["/t"], &grown_lookup);
        let Some(TopicState::Failed(e)) = jobs.state("bad") else {
            panic!("{:?}", jobs.state("bad"));
        };
        assert!(e.report().contains("derived signal bad"), "{}", e.report());
        assert!(jobs.state("double").is_none());
    }
}
