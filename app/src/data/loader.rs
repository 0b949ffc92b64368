//! Background loading: each topic decoded once, on rayon workers, into [`TopicData`] columns.
//!
//! The recording is read once: [`DataSource::windows`] splits it into disjoint time windows
//! (by part, and within a part read through its chunk indexes, so a window only decompresses
//! its own chunks); each rayon worker reads a window and decodes every topic in it in one pass,
//! with its own [`ColumnBuilder`] per topic (and so its own decoding plan). Each topic's columns are then joined in time order (columns
//! matched by leaf path, since each plan learns leaves as messages show them) and its pyramids
//! built, topics in parallel.
//!
//! The UI thread only starts a [`Loader`], reads its progress counters and drains its events;
//! dropping the loader (closing the recording) cancels it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};
use std::collections::HashMap;

use decode::{LeafKind, Row};
use rayon::prelude::*;

use crate::data::column_builder::{ColumnBuilder, Columns, compile_plan};
use crate::data::series::SeriesBuilder;
use crate::data::source::{DataSource, TimeWindow};
use crate::data::topic_data::{FieldColumn, Latency, TopicData};
use crate::error::Error;

/// What the loader reports.
#[derive(Debug)]
pub enum LoadEvent {
    /// A topic finished decoding.
    Topic {
        /// Index in the summary's topics.
        topic: usize,
        /// Its columns (or why its schema could not be used).
        data: Result<Arc<TopicData>, Arc<Error>>,
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
    totals: Vec<Option<u64>>,
    /// Messages in the source's readable parts.
    total: u64,
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
        let totals: Vec<Option<u64>> = source
            .summary()
            .topics
            .iter()
            .map(|t| t.message_count)
            .collect();
        let total = source.summary().health.message_count;
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
            total,
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

    /// Messages decoded so far for topic `i`, and its total from the summary (`None`: not
    /// counted before loading).
    pub fn topic_progress(&self, i: usize) -> (u64, Option<u64>) {
        let done = self
            .progress
            .get(i)
            .map_or(0, |a| a.load(Ordering::Relaxed));
        (done, self.totals.get(i).copied().flatten())
    }

    /// Fraction of all messages decoded, 0..=1.
    pub fn overall_progress(&self) -> f32 {
        let total = self.total;
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

/// Messages a window should hold at least, so that small recordings are read in one pass.
const MIN_WINDOW_MESSAGES: u64 = 16_384;

/// Windows per rayon worker: enough that an uneven window does not leave a core idle.
const WINDOWS_PER_THREAD: usize = 4;

/// How many windows to read `source` in.
fn window_count(source: &dyn DataSource) -> usize {
    let messages = source.summary().health.message_count;
    let by_size = usize::try_from(messages / MIN_WINDOW_MESSAGES).unwrap_or(usize::MAX);
    by_size.clamp(1, rayon::current_num_threads() * WINDOWS_PER_THREAD)
}

fn run(
    source: &dyn DataSource,
    tx: &Sender<LoadEvent>,
    progress: &[AtomicU64],
    cancel: &AtomicBool,
    repaint: &(dyn Fn() + Send + Sync),
) {
    let start = Instant::now();
    let windows = source.windows(window_count(source));
    let issues = load_windows(source, &windows, cancel, progress, &mut |topic, data| {
        // The UI may have gone away: nothing to do then.
        tx.send(LoadEvent::Topic {
            topic,
            data: data.map(Arc::new),
        })
        .ok();
        repaint();
    });
    tx.send(LoadEvent::Finished {
        issues,
        elapsed: start.elapsed(),
        cancelled: cancel.load(Ordering::Relaxed),
    })
    .ok();
    repaint();
}

/// One window's columns (one per topic) and what reading it met.
type WindowRead = (Vec<Columns>, Result<Vec<String>, Error>);

/// Reads one window of every topic in `decodable` in one pass; one set of columns per topic.
fn read_window(
    source: &dyn DataSource,
    window: TimeWindow,
    share: u64,
    decodable: &[usize],
    cancel: &AtomicBool,
    progress: &[AtomicU64],
) -> WindowRead {
    let topics = &source.summary().topics;
    // A topic not counted yet is guessed at an even share of all messages.
    let guess = source.summary().health.message_count / (topics.len().max(1) as u64);
    let mut builders: Vec<ColumnBuilder> = topics
        .iter()
        .map(|t| {
            let count = t.message_count.unwrap_or(guess);
            // Room for a fair share plus a margin; a busier window grows as usual.
            let expected = usize::try_from(count / share + count / share / 8)
                .unwrap_or(0)
                .min(1 << 24);
            ColumnBuilder::with_capacity(expected)
        })
        .collect();
    // Per topic, the messages already added to its progress counter.
    let mut reported: Vec<usize> = vec![0; topics.len()];
    let mut row = Row::new();
    let mut since_report = 0u32;
    let report = |builders: &[ColumnBuilder], reported: &mut [usize]| {
        for ((builder, done), counter) in builders.iter().zip(reported.iter_mut()).zip(progress) {
            if builder.len() > *done {
                counter.fetch_add((builder.len() - *done) as u64, Ordering::Relaxed);
                *done = builder.len();
            }
        }
    };
    let result = source.stream(decodable, window, cancel, &mut |m| {
        if let (Some(builder), Some(info)) = (builders.get_mut(m.topic), topics.get(m.topic)) {
            builder.push(info, &m, &mut row);
        }
        since_report += 1;
        if since_report == 4096 {
            report(&builders, &mut reported);
            since_report = 0;
        }
        true
    });
    report(&builders, &mut reported);
    (
        builders.into_iter().map(ColumnBuilder::finish).collect(),
        result,
    )
}

/// Decodes every topic of `source`, reading `windows` (disjoint, in time order) in parallel,
/// each in one pass over all topics, then joins each topic's pieces in time order and builds
/// its pyramids. `deliver` is called once per topic (from worker threads); returns the
/// problems met reading (parts that stopped early). Public for benchmarks and tests.
pub fn load_windows(
    source: &dyn DataSource,
    windows: &[TimeWindow],
    cancel: &AtomicBool,
    progress: &[AtomicU64],
    deliver: &mut (dyn FnMut(usize, Result<TopicData, Arc<Error>>) + Send),
) -> Vec<String> {
    let topics = &source.summary().topics;
    let mut decodable: Vec<usize> = Vec::with_capacity(topics.len());
    for (i, info) in topics.iter().enumerate() {
        match compile_plan(info) {
            Ok(_) => decodable.push(i),
            Err(e) => deliver(i, Err(Arc::new(e))),
        }
    }
    let share = u64::try_from(windows.len()).unwrap_or(1).max(1);
    let read_all = || -> Vec<WindowRead> {
        windows
            .par_iter()
            .map(|&w| read_window(source, w, share, &decodable, cancel, progress))
            .collect()
    };
    let mut read = read_all();
    if read
        .iter()
        .any(|(_, result)| matches!(result, Err(Error::ReadAgain)))
    {
        // A SQLite file read in row order on trust was not in time order: nothing read is
        // kept, and the source now reads it in time order (so this happens once).
        for p in progress {
            p.store(0, Ordering::Relaxed);
        }
        read = read_all();
    }
    let mut issues: Vec<String> = Vec::new();
    let mut failure: Option<Arc<Error>> = None;
    // Per topic, its pieces in window order.
    let mut by_topic: Vec<Vec<Columns>> = topics.iter().map(|_| Vec::new()).collect();
    for (pieces, result) in read {
        match result {
            Ok(found) => {
                for issue in found {
                    if !issues.contains(&issue) {
                        issues.push(issue);
                    }
                }
            }
            Err(e) => {
                failure.get_or_insert(Arc::new(e));
            }
        }
        for (slot, piece) in by_topic.iter_mut().zip(pieces) {
            slot.push(piece);
        }
    }
    if cancel.load(Ordering::Relaxed) {
        return issues;
    }
    // Biggest topics first so the longest join starts at once.
    let mut jobs: Vec<(usize, Vec<Columns>)> = decodable
        .iter()
        .filter_map(|&i| Some((i, std::mem::take(by_topic.get_mut(i)?))))
        .collect();
    jobs.sort_by_key(|(_, pieces)| {
        std::cmp::Reverse(pieces.iter().map(|p| p.times_ns.len()).sum::<usize>())
    });
    let deliver = std::sync::Mutex::new(deliver);
    jobs.into_par_iter().for_each(|(i, pieces)| {
        let data = match &failure {
            Some(e) => Err(Arc::clone(e)),
            None => Ok(join(pieces)),
        };
        if let Ok(mut d) = deliver.lock() {
            d(i, data);
        }
    });
    issues
}

/// Joins a topic's pieces (in time order) into its columns.
fn join(pieces: Vec<Columns>) -> TopicData {
    let total: usize = pieces.iter().map(|p| p.times_ns.len()).sum();
    let mut data = TopicData {
        times_ns: Vec::with_capacity(total),
        ..TopicData::default()
    };
    let mut latencies: Vec<i64> = Vec::with_capacity(total);
    // Leaves by path, in order of first appearance; per leaf, its column in each piece.
    let mut leaves: Vec<(String, LeafKind)> = Vec::new();
    let mut by_path: HashMap<String, usize> = HashMap::new();
    let mut columns: Vec<Vec<(Option<SeriesBuilder>, usize)>> = Vec::new();
    let mut lens: Vec<usize> = Vec::new();
    for (k, mut piece) in pieces.into_iter().enumerate() {
        let len = piece.times_ns.len();
        data.times_ns.extend_from_slice(&piece.times_ns);
        latencies.extend_from_slice(&piece.latencies_ns);
        data.torn_messages += piece.torn_messages;
        data.clipped_messages += piece.clipped_messages;
        data.decode_errors += piece.decode_errors;
        if data.first_error.is_none() {
            data.first_error = piece.first_error.take();
        }
        lens.push(len);
        for col in &mut columns {
            col.push((None, len));
        }
        let piece_leaves = std::mem::take(&mut piece.leaves);
        for ((path, kind), col) in piece_leaves
            .into_iter()
            .zip(std::mem::take(&mut piece.values))
        {
            let u = *by_path.entry(path.clone()).or_insert_with(|| {
                leaves.push((path, kind));
                // Absent in every earlier piece, and a placeholder for this one.
                columns.push(lens.iter().map(|&n| (None, n)).collect());
                columns.len() - 1
            });
            if let Some(slot) = columns.get_mut(u).and_then(|c| c.get_mut(k)) {
                *slot = (Some(col), len);
            }
        }
    }
    // Columns are joined and summarised in parallel too: one big topic is most of the work.
    let mut columns: Vec<SeriesBuilder> =
        columns.into_par_iter().map(SeriesBuilder::concat).collect();
    // A torn part read in file order can be slightly out of order: sort by time, stably.
    if !data.times_ns.is_sorted() {
        let mut idx: Vec<usize> = (0..data.times_ns.len()).collect();
        idx.sort_by_key(|&i| data.times_ns.get(i).copied().unwrap_or(0));
        data.times_ns = idx
            .iter()
            .filter_map(|&i| data.times_ns.get(i).copied())
            .collect();
        for col in &mut columns {
            *col = col.permute(&idx);
        }
    }
    data.times_ns.shrink_to_fit();
    data.time_levels = crate::data::topic_data::time_levels(&data.times_ns);
    (data.gaps, data.gap_count) = crate::data::topic_data::find_gaps(&data.times_ns);
    data.latency = Latency::from_ns(&mut latencies);
    data.fields = leaves
        .into_par_iter()
        .zip(columns)
        .map(|((path, kind), col)| FieldColumn {
            path,
            kind,
            series: col.finish(),
        })
        .collect();
    data
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::source::RecordingSource;
    use crate::demo::{DemoOptions, write_demo};

    fn load(source: &RecordingSource, windows: &[TimeWindow]) -> Vec<Option<TopicData>> {
        let count = source.summary().topics.len();
        let progress: Vec<AtomicU64> = (0..count).map(|_| AtomicU64::new(0)).collect();
        let results = std::sync::Mutex::new((0..count).map(|_| None).collect::<Vec<_>>());
        let issues = load_windows(
            source,
            windows,
            &AtomicBool::new(false),
            &progress,
            &mut |i, data| {
                if let (Ok(mut r), Ok(d)) = (results.lock(), data) {
                    r[i] = Some(d);
                }
            },
        );
        assert!(issues.len() <= 1, "{issues:?}");
        for (i, p) in progress.iter().enumerate() {
            let done = p.load(Ordering::Relaxed);
            assert_eq!(
                Some(done),
                source.summary().topics[i].message_count,
                "progress of {i}"
            );
        }
        results.into_inner().unwrap_or_default()
    }

    /// A rosbag2 SQLite file of `rows` (topic 1 or 2, timestamp, an `int32` value), with the
    /// timestamp index and message definitions rosbag2 writes.
    fn write_db3(path: &std::path::Path, rows: &[(i64, i64, i32)]) {
        let mut conn = rusqlite::Connection::open(path).expect("create");
        conn.execute_batch(
            "CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,
               serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL);
             CREATE TABLE message_definitions(id INTEGER PRIMARY KEY, topic_type TEXT NOT NULL,
               encoding TEXT NOT NULL, encoded_message_definition TEXT NOT NULL,
               type_description_hash TEXT NOT NULL);
             CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL,
               timestamp INTEGER NOT NULL, data BLOB NOT NULL);
             CREATE INDEX timestamp_idx ON messages (timestamp ASC);
             INSERT INTO message_definitions VALUES
               (1, 'std_msgs/msg/Int32', 'ros2msg', 'int32 data', '');
             INSERT INTO topics VALUES (1, '/a', 'std_msgs/msg/Int32', 'cdr', '');
             INSERT INTO topics VALUES (2, '/b', 'std_msgs/msg/Int32', 'cdr', '');",
        )
        .expect("tables");
        let tx = conn.transaction().expect("transaction");
        for &(topic, t, v) in rows {
            let mut data = vec![0u8, 1, 0, 0];
            data.extend(v.to_le_bytes());
            tx.execute(
                "INSERT INTO messages (topic_id, timestamp, data) VALUES (?1, ?2, ?3)",
                rusqlite::params![topic, t, data],
            )
            .expect("insert");
        }
        tx.commit().expect("commit");
    }

    #[test]
    fn a_sqlite_file_loads_every_message_in_time_order_and_is_counted_by_loading() {
        let dir = tempfile::tempdir().expect("tempdir");
        let n = 40_000i64;
        let in_order: Vec<(i64, i64, i32)> =
            (0..n).map(|i| (1 + i % 2, 1_000 + i, i as i32)).collect();
        // One row far from where its timestamp belongs: a read in row order would miss it or
        // put it out of order.
        let mut one_back = in_order.clone();
        one_back[30_000].1 = 1_005;
        for (name, rows) in [("in_order", &in_order), ("one_back", &one_back)] {
            let path = dir.path().join(format!("{name}.db3"));
            write_db3(&path, rows);
            let source = RecordingSource::open(&path).expect("open");
            let topics = &source.summary().topics;
            assert_eq!(topics.len(), 2);
            assert!(topics.iter().all(|t| t.message_count.is_none()), "{name}");
            assert_eq!(source.summary().health.message_count, n as u64);
            let windows = source.windows(4);
            assert!(windows.len() >= 3, "{name}: {windows:?}");
            let progress: Vec<AtomicU64> = (0..2).map(|_| AtomicU64::new(0)).collect();
            let results = std::sync::Mutex::new(vec![None, None]);
            let issues = load_windows(
                &source,
                &windows,
                &AtomicBool::new(false),
                &progress,
                &mut |i, data| {
                    if let (Ok(mut r), Ok(d)) = (results.lock(), data) {
                        r[i] = Some(d);
                    }
                },
            );
            assert!(issues.is_empty(), "{name}: {issues:?}");
            let results = results.into_inner().expect("results");
            for (k, topic) in [(0usize, 1i64), (1, 2)] {
                let mut want: Vec<(u64, f64)> = rows
                    .iter()
                    .filter(|r| r.0 == topic)
                    .map(|r| (r.1 as u64, f64::from(r.2)))
                    .collect();
                want.sort_by_key(|w| w.0);
                let data = results[k].as_ref().expect("loaded");
                assert_eq!(data.times_ns.len(), want.len(), "{name} {topic}");
                assert_eq!(
                    progress[k].load(Ordering::Relaxed),
                    want.len() as u64,
                    "{name}: progress counts each message once"
                );
                let field = data.field("data").expect("data");
                for (j, (t, v)) in want.iter().enumerate() {
                    assert_eq!(data.times_ns[j], *t, "{name} {topic} {j}");
                    assert_eq!(field.series.value(j), Some(*v), "{name} {topic} {j}");
                }
            }
        }
    }

    /// One topic recorded with two types (a node restarted with a new message version): two
    /// topics, each decoded with its own definition, never the other's.
    #[test]
    fn a_topic_recorded_with_two_types_decodes_each_with_its_own_definition() {
        use bag::{BagWriter, ChannelSpec, SchemaSpec, WriteOptions};
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bag");
        let mut w = BagWriter::create(&path, WriteOptions::new()).expect("create");
        let spec = |name: &str, text: &str| ChannelSpec {
            topic: "/motor".into(),
            message_encoding: "cdr".into(),
            schema: Some(SchemaSpec {
                name: name.into(),
                encoding: "ros2msg".into(),
                data: text.as_bytes().to_vec(),
            }),
            metadata: Default::default(),
        };
        let old = w.add_channel(spec("m/msg/Speed", "float64 rpm\n"));
        let new = w.add_channel(spec("m/msg/Speed2", "int32 gear\nfloat64 rpm\n"));
        // The same type again, as a re-advertised channel: one topic with the first.
        let again = w.add_channel(spec("m/msg/Speed", "float64 rpm\n"));
        for i in 0..10u64 {
            let t = 1_000_000_000 + i * 1_000_000;
            let mut a = vec![0u8, 1, 0, 0];
            a.extend((i as f64).to_le_bytes());
            w.write(if i < 5 { old } else { again }, t, Some(t), &a)
                .expect("write");
            let mut b = vec![0u8, 1, 0, 0];
            b.extend((i as i32).to_le_bytes());
            b.extend([0u8; 4]);
            b.extend((1_000.0 + i as f64).to_le_bytes());
            w.write(new, t + 500_000, Some(t + 500_000), &b)
                .expect("write");
        }
        w.close().expect("close");
        let source = RecordingSource::open(&path).expect("open");
        let names: Vec<&str> = source
            .summary()
            .topics
            .iter()
            .map(|t| t.topic.as_str())
            .collect();
        assert_eq!(names, ["/motor", "/motor (as m/msg/Speed2)"]);
        let progress: Vec<AtomicU64> = (0..2).map(|_| AtomicU64::new(0)).collect();
        let results = std::sync::Mutex::new(vec![None, None]);
        let issues = load_windows(
            &source,
            &source.windows(2),
            &AtomicBool::new(false),
            &progress,
            &mut |i, data| {
                if let (Ok(mut r), Ok(d)) = (results.lock(), data) {
                    r[i] = Some(d);
                }
            },
        );
        assert!(issues.is_empty(), "{issues:?}");
        let results = results.into_inner().expect("results");
        for (k, first) in [(0usize, 0.0), (1, 1_000.0)] {
            let data = results[k].as_ref().expect("loaded");
            assert_eq!(data.times_ns.len(), 10, "{k}");
            let rpm = data.field("rpm").expect("rpm");
            for j in 0..10 {
                assert_eq!(rpm.series.value(j), Some(first + j as f64), "{k} {j}");
            }
        }
        let gear = results[1]
            .as_ref()
            .and_then(|d| d.field("gear"))
            .expect("gear");
        assert_eq!(gear.series.value(9), Some(9.0));
        assert!(results[0].as_ref().and_then(|d| d.field("gear")).is_none());
    }

    #[test]
    fn many_windows_load_the_same_columns_as_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write_demo(
            &dir.path().join("drive"),
            DemoOptions {
                duration_secs: 40.0,
                part_secs: 10.0,
                ..DemoOptions::default()
            },
        )
        .expect("demo");
        let source = RecordingSource::open(&path).expect("open");
        // Cut every 2.7 s, inside chunks (the demo's are 1 s) and across parts alike; the
        // source's own windows cut only at chunk starts.
        let (first, last) = source.summary().time_range_ns.expect("messages");
        let cuts: Vec<u64> = (1..)
            .map(|k| first + k * 2_700_000_000)
            .take_while(|&c| c < last)
            .collect();
        assert!(cuts.len() >= 12, "{} cuts", cuts.len());
        let windows: Vec<TimeWindow> = std::iter::once(None)
            .chain(cuts.iter().copied().map(Some))
            .zip(cuts.iter().copied().map(Some).chain(std::iter::once(None)))
            .map(|(start_ns, end_ns)| TimeWindow {
                start_ns,
                end_ns,
                tiled: true,
            })
            .collect();
        // Disjoint, in order, covering everything.
        assert_eq!(windows.first().and_then(|w| w.start_ns), None);
        assert_eq!(windows.last().and_then(|w| w.end_ns), None);
        for pair in windows.windows(2) {
            assert_eq!(pair[0].end_ns, pair[1].start_ns);
        }
        let one = load(&source, &[TimeWindow::ALL]);
        let many = load(&source, &windows);
        assert!(one.iter().flatten().any(|d| d.torn_messages > 0));
        // The demo's dropped IMU messages are the only silence in it.
        let topics = &source.summary().topics;
        for (topic, data) in topics.iter().zip(one.iter().flatten()) {
            if topic.topic == "car/imu" {
                assert_eq!(data.gap_count, 1);
                let secs = data.longest_gap().map(|g| g.secs());
                // 37 messages at 200 Hz missing: 38 periods of 5 ms.
                assert!(secs.is_some_and(|s| (s - 0.19).abs() < 1e-6), "{secs:?}");
            } else {
                assert_eq!(data.gap_count, 0, "{}", topic.topic);
            }
        }
        assert_eq!(one.len(), many.len());
        for (a, b) in one.iter().zip(&many) {
            let (Some(a), Some(b)) = (a, b) else {
                panic!("a topic did not load");
            };
            assert_eq!(a.times_ns, b.times_ns);
            assert_eq!(a.torn_messages, b.torn_messages);
            assert_eq!(a.decode_errors, b.decode_errors);
            assert_eq!(a.latency, b.latency);
            let paths = |d: &TopicData| d.fields.iter().map(|f| f.path.clone()).collect::<Vec<_>>();
            assert_eq!(paths(a), paths(b));
            for (fa, fb) in a.fields.iter().zip(&b.fields) {
                for i in 0..a.times_ns.len() {
                    let (x, y) = (fa.series.value(i), fb.series.value(i));
                    assert!(
                        x == y || x.is_some_and(f64::is_nan) && y.is_some_and(f64::is_nan),
                        "{} [{i}]: {x:?} vs {y:?}",
                        fa.path
                    );
                }
            }
        }
    }
}
