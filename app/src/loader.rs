//! Background loading: each topic decoded once, on rayon workers, into [`TopicData`] columns.
//!
//! The UI thread only starts a [`Loader`], reads its progress counters and drains its events;
//! dropping the loader (closing the recording) cancels it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};
use decode::{Row, SchemaSource, compile};
use rayon::prelude::*;

use crate::series::SeriesBuilder;
use crate::source::DataSource;
use crate::topic_data::{FieldColumn, Latency, TopicData};

/// What the loader reports.
#[derive(Debug)]
pub enum LoadEvent {
    /// A topic finished decoding.
    Topic {
        /// Index in the summary's topics.
        topic: usize,
        /// Its columns (or why its schema could not be used).
        data: Result<Arc<TopicData>, String>,
    },
    /// Every topic is done.
    Finished {
        /// Problems reading the recording (parts that stopped early).
        issues: Vec<String>,
        /// Wall time of the whole load.
        elapsed: Duration,
        /// True when it was cancelled.
        cancelled: bool,
    },
}

/// A running load. Dropping it cancels the work.
pub struct Loader {
    events: Receiver<LoadEvent>,
    cancel: Arc<AtomicBool>,
    progress: Arc<Vec<AtomicU64>>,
    totals: Vec<u64>,
}

impl std::fmt::Debug for Loader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loader")
            .field("totals", &self.totals)
            .finish()
    }
}

impl Loader {
    /// Starts decoding every topic of `source` on background threads; `repaint` is called
    /// whenever there is something new to show.
    pub fn start(source: Arc<dyn DataSource>, repaint: Arc<dyn Fn() + Send + Sync>) -> Self {
        let topics = source.summary().topics.len();
        let totals: Vec<u64> = source
            .summary()
            .topics
            .iter()
            .map(|t| t.message_count)
            .collect();
        let progress: Arc<Vec<AtomicU64>> =
            Arc::new((0..topics).map(|_| AtomicU64::new(0)).collect());
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = bounded(64);
        {
            let progress = Arc::clone(&progress);
            let cancel = Arc::clone(&cancel);
            std::thread::Builder::new()
                .name("scope-loader".into())
                .spawn(move || run(source.as_ref(), &tx, &progress, &cancel, repaint.as_ref()))
                .ok();
        }
        Self {
            events: rx,
            cancel,
            progress,
            totals,
        }
    }

    /// Events so far (never blocks).
    pub fn try_event(&self) -> Option<LoadEvent> {
        self.events.try_recv().ok()
    }

    /// Waits for the next event (for benchmarks and tools; the UI never calls this).
    pub fn wait_event(&self) -> Option<LoadEvent> {
        self.events.recv().ok()
    }

    /// Messages decoded so far for topic `i`, and its total from the summary.
    pub fn topic_progress(&self, i: usize) -> (u64, u64) {
        let done = self
            .progress
            .get(i)
            .map_or(0, |a| a.load(Ordering::Relaxed));
        (done, self.totals.get(i).copied().unwrap_or(0))
    }

    /// Fraction of all messages decoded, 0..=1.
    pub fn overall_progress(&self) -> f32 {
        let total: u64 = self.totals.iter().sum();
        if total == 0 {
            return 1.0;
        }
        let done: u64 = self
            .progress
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .sum();
        (done as f64 / total as f64).min(1.0) as f32
    }

    /// Asks the workers to stop.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl Drop for Loader {
    fn drop(&mut self) {
        self.cancel();
    }
}

fn run(
    source: &dyn DataSource,
    tx: &Sender<LoadEvent>,
    progress: &[AtomicU64],
    cancel: &AtomicBool,
    repaint: &(dyn Fn() + Send + Sync),
) {
    let start = Instant::now();
    let count = source.summary().topics.len();
    // Biggest topics first so the longest job starts at once.
    let mut order: Vec<usize> = (0..count).collect();
    order.sort_by_key(|&i| {
        std::cmp::Reverse(
            source
                .summary()
                .topics
                .get(i)
                .map_or(0, |t| t.message_count),
        )
    });
    let issues: Vec<String> = order
        .par_iter()
        .flat_map_iter(|&i| {
            if cancel.load(Ordering::Relaxed) {
                return Vec::new();
            }
            let counter = progress.get(i);
            let (data, issues) = load_topic(source, i, cancel, counter);
            // The UI may have gone away: nothing to do then.
            let _ = tx.send(LoadEvent::Topic {
                topic: i,
                data: data.map(Arc::new),
            });
            repaint();
            issues
        })
        .collect();
    let mut unique: Vec<String> = Vec::new();
    for issue in issues {
        if !unique.contains(&issue) {
            unique.push(issue);
        }
    }
    let _ = tx.send(LoadEvent::Finished {
        issues: unique,
        elapsed: start.elapsed(),
        cancelled: cancel.load(Ordering::Relaxed),
    });
    repaint();
}

/// Decodes one topic into columns. Public for benchmarks and tests.
pub fn load_topic(
    source: &dyn DataSource,
    topic: usize,
    cancel: &AtomicBool,
    counter: Option<&AtomicU64>,
) -> (Result<TopicData, String>, Vec<String>) {
    let Some(info) = source.summary().topics.get(topic) else {
        return (Err("no such topic".to_owned()), Vec::new());
    };
    let mut plan = match compile(&SchemaSource {
        message_encoding: &info.message_encoding,
        schema_encoding: &info.schema_encoding,
        schema_name: &info.schema_name,
        schema_data: &info.schema_data,
    }) {
        Ok(p) => p,
        Err(e) => {
            return (
                Err(format!("cannot decode {}: {e}", info.type_name)),
                Vec::new(),
            );
        }
    };
    let capacity = usize::try_from(info.message_count)
        .unwrap_or(0)
        .min(1 << 28);
    let mut data = TopicData {
        times_ns: Vec::with_capacity(capacity),
        ..TopicData::default()
    };
    let mut columns: Vec<SeriesBuilder> = Vec::new();
    let mut latencies: Vec<i64> = Vec::with_capacity(capacity);
    let mut row = Row::new();
    let mut since_report = 0u64;
    let result = source.stream(&[topic], None, cancel, &mut |m| {
        let n = data.times_ns.len();
        data.times_ns.push(m.log_time_ns);
        latencies.push((m.log_time_ns as i128 - m.publish_time_ns as i128) as i64);
        if m.from_torn_part {
            data.torn_messages += 1;
        }
        match plan.decode(m.data, &mut row) {
            Ok(decoded) => {
                if decoded.clipped {
                    data.clipped_messages += 1;
                }
                while columns.len() < plan.leaves().len() {
                    columns.push(SeriesBuilder::with_absent(n));
                }
                for (slot, col) in columns.iter_mut().enumerate() {
                    col.push(row.get_f64(slot).unwrap_or(f64::NAN));
                }
            }
            Err(e) => {
                data.decode_errors += 1;
                if data.first_error.is_none() {
                    data.first_error = Some(e.to_string());
                }
                for col in &mut columns {
                    col.push(f64::NAN);
                }
            }
        }
        since_report += 1;
        if since_report == 1024 {
            if let Some(c) = counter {
                c.fetch_add(since_report, Ordering::Relaxed);
            }
            since_report = 0;
        }
        true
    });
    if let Some(c) = counter {
        c.fetch_add(since_report, Ordering::Relaxed);
    }
    let issues = match result {
        Ok(issues) => issues,
        Err(e) => return (Err(e), Vec::new()),
    };
    // A torn part read in file order can be slightly out of order: sort by time, stably.
    if !data.times_ns.is_sorted() {
        let mut idx: Vec<usize> = (0..data.times_ns.len()).collect();
        idx.sort_by_key(|&i| data.times_ns.get(i).copied().unwrap_or(0));
        data.times_ns = idx
            .iter()
            .filter_map(|&i| data.times_ns.get(i).copied())
            .collect();
        for col in &mut columns {
            let mut sorted = SeriesBuilder::default();
            let frozen = std::mem::take(col).finish();
            for &i in &idx {
                sorted.push(frozen.value(i).unwrap_or(f64::NAN));
            }
            *col = sorted;
        }
    }
    data.times_ns.shrink_to_fit();
    data.time_levels = crate::topic_data::time_levels(&data.times_ns);
    data.latency = Latency::from_ns(&mut latencies);
    data.fields = plan
        .leaves()
        .iter()
        .zip(columns)
        .map(|(leaf, col)| FieldColumn {
            path: leaf.path.clone(),
            kind: leaf.kind,
            series: col.finish(),
        })
        .collect();
    (Ok(data), issues)
}
