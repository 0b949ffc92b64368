//! A loaded topic: one time column shared by its fields, one [`Series`] per numeric leaf, and
//! what loading learned about it (decode errors, latency, torn parts).

use std::sync::Arc;

use decode::LeafKind;

use crate::data::column_builder::Columns;
use crate::data::series::{FANOUT, Series};
use crate::error::Error;

/// One numeric leaf of a topic, as a column.
#[derive(Debug, Clone)]
pub struct FieldColumn {
    /// The leaf's path (`rpm`, `header.seq`, `wheels[2]`).
    pub path: String,
    /// What it holds.
    pub kind: LeafKind,
    /// Its values, one per message (NaN where the message did not carry it).
    pub series: Series,
}

/// Publish-vs-log latency of a topic: `log_time - publish_time`; negative means the
/// publisher's clock is ahead of the recorder's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    /// Median, ms.
    pub p50_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Largest, ms.
    pub max_ms: f64,
}

impl Latency {
    /// Percentiles of latencies in ns (reordered in place); `None` when empty.
    pub fn from_ns(samples: &mut [i64]) -> Option<Self> {
        let last = samples.len().checked_sub(1)?;
        let rank = |q: f64| ((last as f64 * q).round() as usize).min(last);
        let (p50, p99) = (rank(0.5), rank(0.99));
        // Selection instead of a full sort: p99 first, then p50 among the values below it.
        let (below, &mut at99, above) = samples.select_nth_unstable(p99);
        let max = above.iter().copied().max().unwrap_or(at99);
        let at50 = if p50 == p99 {
            at99
        } else {
            *below.select_nth_unstable(p50).1
        };
        Some(Self {
            p50_ms: at50 as f64 / 1e6,
            p99_ms: at99 as f64 / 1e6,
            max_ms: max as f64 / 1e6,
        })
    }
}

/// Everything decoded from one topic.
#[derive(Debug, Clone, Default)]
pub struct TopicData {
    /// Log time of each message, ns since the epoch, ascending.
    pub times_ns: Vec<u64>,
    /// `time_levels[k][j]` is the time of message `j * FANOUT^(k+1)`: the start of each
    /// pyramid block, so a coarse envelope reads only small, sequential arrays.
    pub time_levels: Vec<Vec<u64>>,
    /// One column per numeric leaf, in the plan's slot order.
    pub fields: Vec<FieldColumn>,
    /// Messages that failed to decode (their values are absent).
    pub decode_errors: u64,
    /// The first decode error.
    pub first_error: Option<Arc<Error>>,
    /// Messages that came from a torn part.
    pub torn_messages: u64,
    /// Publish-vs-log latency.
    pub latency: Option<Latency>,
    /// Messages whose list tail was not flattened (too long).
    pub clipped_messages: u64,
    /// Silences inside the topic (see [`find_gaps`]), the first [`MAX_GAPS`] of them.
    pub gaps: Vec<Gap>,
    /// How many gaps there are in all.
    pub gap_count: u64,
}

/// A stretch in which a topic that publishes steadily sent nothing: from its last message
/// before the silence to its first after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    /// The last message before, ns since the epoch.
    pub from_ns: u64,
    /// The first message after.
    pub to_ns: u64,
}

impl Gap {
    /// How long nothing arrived, s.
    pub fn secs(&self) -> f64 {
        self.to_ns.saturating_sub(self.from_ns) as f64 / 1e9
    }
}

/// A silence is a gap when it lasts this many of the topic's typical (median) periods.
pub const GAP_PERIODS: u64 = 5;

/// Gaps kept per topic; the rest are only counted.
pub const MAX_GAPS: usize = 1_000;

/// Topics with fewer messages than this have no typical period to judge by.
const GAP_MIN_MESSAGES: usize = 16;

/// Silences longer than [`GAP_PERIODS`] typical periods in ascending `times_ns`, the first
/// [`MAX_GAPS`] of them, and how many there are in all. The typical period is the median
/// interval, estimated from up to 4,096 intervals spread over the topic.
pub fn find_gaps(times_ns: &[u64]) -> (Vec<Gap>, u64) {
    let mut gaps = Vec::new();
    let mut count = 0;
    if let Some(threshold) = gap_threshold(times_ns) {
        scan_gaps(times_ns, threshold, &mut gaps, &mut count);
    }
    (gaps, count)
}

/// The silence beyond which `times_ns` has a gap; `None` for too few messages to judge.
pub fn gap_threshold(times_ns: &[u64]) -> Option<u64> {
    if times_ns.len() < GAP_MIN_MESSAGES {
        return None;
    }
    let intervals = times_ns.len() - 1;
    let stride = intervals.div_ceil(4_096).max(1);
    let mut sample: Vec<u64> = (0..intervals)
        .step_by(stride)
        .filter_map(|i| Some(times_ns.get(i + 1)?.saturating_sub(*times_ns.get(i)?)))
        .collect();
    // At least 15 intervals, so the middle one exists.
    let middle = sample.len() / 2;
    let median = *sample.select_nth_unstable(middle).1;
    // Messages stamped in bursts (median 0) still have gaps of at least a millisecond.
    Some(median.saturating_mul(GAP_PERIODS).max(1_000_000))
}

/// Adds the silences longer than `threshold` between consecutive `times_ns` to `gaps` (while
/// it holds fewer than [`MAX_GAPS`]) and to `count`.
fn scan_gaps(times_ns: &[u64], threshold: u64, gaps: &mut Vec<Gap>, count: &mut u64) {
    for pair in times_ns.windows(2) {
        if let [a, b] = *pair
            && b.saturating_sub(a) > threshold
        {
            *count += 1;
            if gaps.len() < MAX_GAPS {
                gaps.push(Gap {
                    from_ns: a,
                    to_ns: b,
                });
            }
        }
    }
}

impl TopicData {
    /// The longest of the kept gaps.
    pub fn longest_gap(&self) -> Option<Gap> {
        self.gaps
            .iter()
            .copied()
            .max_by_key(|g| g.to_ns.saturating_sub(g.from_ns))
    }

    /// The column of the leaf `path`.
    pub fn field(&self, path: &str) -> Option<&FieldColumn> {
        self.fields.iter().find(|f| f.path == path)
    }

    /// Index of the last message at or before `t_ns` (`None` before the first).
    pub fn index_at(&self, t_ns: u64) -> Option<usize> {
        self.times_ns.partition_point(|&t| t <= t_ns).checked_sub(1)
    }

    /// Bytes held by the columns.
    pub fn heap_bytes(&self) -> usize {
        self.times_ns.capacity() * 8
            + self
                .time_levels
                .iter()
                .map(|l| l.capacity() * 8)
                .sum::<usize>()
            + self
                .fields
                .iter()
                .map(|f| f.series.heap_bytes() + f.path.capacity())
                .sum::<usize>()
    }

    /// Numeric samples held (messages x fields).
    pub fn sample_count(&self) -> usize {
        self.times_ns.len() * self.fields.len()
    }
}

impl TopicData {
    /// Appends a live topic's newly decoded columns (decoded by the capture's worker): the
    /// columns grow and their pyramids with them, at a cost proportional to what is appended,
    /// not to what is held. Columns match by slot (a topic's plan only ever adds leaves); a
    /// leaf new in `columns` is absent for every message held before.
    pub fn append(&mut self, columns: &Columns) {
        let held_before = self.times_ns.len();
        let n = columns.len();
        for (path, kind) in columns.leaves.iter().skip(self.fields.len()) {
            let mut series = Series::default();
            for _ in 0..held_before {
                series.push(f64::NAN);
            }
            self.fields.push(FieldColumn {
                path: path.clone(),
                kind: *kind,
                series,
            });
        }
        for &t in &columns.times_ns {
            self.times_ns.push(t);
            push_time_level(&mut self.time_levels, &self.times_ns);
        }
        for (slot, field) in self.fields.iter_mut().enumerate() {
            let before = field.series.len();
            if let Some(values) = columns.values.get(slot) {
                field.series.extend(values);
            }
            // A column the piece lacks (its messages all failed to decode) is absent there.
            for _ in field.series.len()..before + n {
                field.series.push(f64::NAN);
            }
        }
        self.decode_errors += columns.decode_errors;
        if self.first_error.is_none() {
            self.first_error.clone_from(&columns.first_error);
        }
        self.clipped_messages += columns.clipped_messages;
        self.find_new_gaps(held_before);
    }

    /// Extends the gaps over the messages from index `held_before` on (and the silence before
    /// the first of them), judged by the typical period of everything held. Until a topic has
    /// enough messages to judge by, nothing was judged, so the first judgement covers it all.
    fn find_new_gaps(&mut self, held_before: usize) {
        if held_before < GAP_MIN_MESSAGES {
            (self.gaps, self.gap_count) = find_gaps(&self.times_ns);
            return;
        }
        if let (Some(threshold), Some(new)) = (
            gap_threshold(&self.times_ns),
            self.times_ns.get(held_before - 1..),
        ) {
            scan_gaps(new, threshold, &mut self.gaps, &mut self.gap_count);
        }
    }

    /// Forgets the messages logged before `t_ns` (a live capture evicted them). Rebuilds the
    /// columns, so call it only when a good share of them is gone.
    pub fn drop_before(&mut self, t_ns: u64) {
        let k = self.times_ns.partition_point(|&t| t < t_ns);
        if k == 0 {
            return;
        }
        self.times_ns.drain(..k);
        self.times_ns.shrink_to_fit();
        self.time_levels = time_levels(&self.times_ns);
        for field in &mut self.fields {
            field.series = field.series.tail(k);
        }
        (self.gaps, self.gap_count) = find_gaps(&self.times_ns);
    }

    /// Moves every time by `delta_ns` (a second recording aligned onto the first's axis),
    /// saturating at the ends of the `u64` range, so that the order is kept.
    pub fn shift_times(&mut self, delta_ns: i64) {
        let shift = |t: &mut u64| *t = t.saturating_add_signed(delta_ns);
        self.times_ns.iter_mut().for_each(shift);
        self.time_levels.iter_mut().flatten().for_each(shift);
        for gap in &mut self.gaps {
            shift(&mut gap.from_ns);
            shift(&mut gap.to_ns);
        }
    }

    /// Messages logged before `t_ns`.
    pub fn count_before(&self, t_ns: u64) -> usize {
        self.times_ns.partition_point(|&t| t < t_ns)
    }
}

/// Extends [`time_levels`] after `times_ns` grew by one, as if they had been built whole.
pub fn push_time_level(levels: &mut Vec<Vec<u64>>, times_ns: &[u64]) {
    let Some(i) = times_ns.len().checked_sub(1) else {
        return;
    };
    let n = times_ns.len();
    let mut block = FANOUT;
    for k in 0.. {
        if k == levels.len() {
            if n <= block {
                break;
            }
            levels.push(times_ns.iter().step_by(block).copied().collect());
        } else if i % block == 0
            && let (Some(level), Some(&t)) = (levels.get_mut(k), times_ns.get(i))
        {
            level.push(t);
        }
        block = block.saturating_mul(FANOUT);
    }
}

/// The start time of each pyramid block, per level (see [`TopicData::time_levels`]).
pub fn time_levels(times_ns: &[u64]) -> Vec<Vec<u64>> {
    let mut levels = Vec::new();
    let mut block = FANOUT;
    while block < times_ns.len() {
        levels.push(times_ns.iter().step_by(block).copied().collect());
        block = block.saturating_mul(FANOUT);
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::series::SeriesBuilder;

    /// A 200 Hz topic with 2 ms of jitter.
    fn steady(n: u64) -> Vec<u64> {
        (0..n)
            .map(|i| i * 5_000_000 + (i * 7_919) % 2_000_000)
            .collect()
    }

    #[test]
    fn a_steady_topic_with_jitter_has_no_gaps() {
        assert_eq!(find_gaps(&steady(10_000)), (Vec::new(), 0));
    }

    #[test]
    fn a_silence_of_many_periods_is_a_gap_and_one_lost_message_is_not() {
        let mut times = steady(10_000);
        // One message lost at 2,000 (a 10 ms interval); 37 lost from 6,000 (about 190 ms).
        times.remove(2_000);
        times.drain(6_000..6_037);
        let (gaps, count) = find_gaps(&times);
        assert_eq!(count, 1);
        assert_eq!(
            gaps,
            vec![Gap {
                from_ns: times[5_999],
                to_ns: times[6_000]
            }]
        );
        assert!((gaps[0].secs() - 0.19).abs() < 0.005, "{}", gaps[0].secs());
    }

    #[test]
    fn gaps_beyond_the_cap_are_counted_not_kept() {
        // 100 Hz, and every 10th interval a silence of 10 periods.
        let intervals = |unit: u64| {
            let mut t = 0u64;
            (0..30_000u64)
                .map(|i| {
                    t += if i % 10 == 9 { 10 * unit } else { unit };
                    t
                })
                .collect::<Vec<u64>>()
        };
        let times = intervals(10_000_000);
        let (gaps, count) = find_gaps(&times);
        assert_eq!(count, 3_000);
        assert_eq!(gaps.len(), MAX_GAPS);
        // Under a millisecond nothing is a gap, and too few messages say nothing.
        assert_eq!(find_gaps(&intervals(10)).1, 0);
        assert_eq!(find_gaps(&times[..10]), (Vec::new(), 0));
    }

    #[test]
    fn live_pieces_find_the_gaps_loading_whole_finds_and_forget_evicted_ones() {
        // 100 Hz with a 200 ms silence after messages 1,500 and 2,465; the second falls
        // between two pieces of 137.
        let mut times = Vec::new();
        let mut t = 1_000_000_000u64;
        for i in 0..3_000 {
            t += if i == 1_501 || i == 2_466 {
                200_000_000
            } else {
                10_000_000
            };
            times.push(t);
        }
        let mut live = TopicData::default();
        for chunk in times.chunks(137) {
            let piece = Columns {
                times_ns: chunk.to_vec(),
                ..Columns::default()
            };
            live.append(&piece);
        }
        let whole = find_gaps(&times);
        assert_eq!(whole.1, 2);
        assert_eq!((live.gaps.clone(), live.gap_count), whole);
        live.drop_before(times[2_000]);
        assert_eq!(live.gap_count, 1);
        assert_eq!(live.gaps[0].from_ns, times[2_465]);
    }

    #[test]
    fn appending_pieces_equals_loading_whole() {
        let n = 3_000usize;
        let times: Vec<u64> = (0..n as u64).map(|i| 1_000 + i * 10).collect();
        let mut live = TopicData::default();
        for chunk in (0..n).collect::<Vec<_>>().chunks(137) {
            // A second leaf appears after the first 1,000 messages.
            let width = if chunk[0] >= 1_000 { 2 } else { 1 };
            let mut piece = Columns {
                leaves: vec![("a".into(), LeafKind::Float), ("b".into(), LeafKind::Int)][..width]
                    .to_vec(),
                values: vec![SeriesBuilder::default(); width],
                ..Columns::default()
            };
            for &i in chunk {
                piece.times_ns.push(times[i]);
                piece.values[0].push((i % 91) as f64);
                if width == 2 {
                    piece.values[1].push(i as f64);
                }
            }
            live.append(&piece);
        }
        assert_eq!(live.times_ns, times);
        assert_eq!(live.time_levels, time_levels(&times));
        // Pieces of 137: the first to carry `b` starts at message 1,096.
        let b = live.field("b").expect("b");
        assert!(b.series.value(1_095).is_some_and(f64::is_nan));
        assert_eq!(b.series.value(1_096), Some(1_096.0));
        let whole = SeriesBuilder::F32((0..n).map(|i| (i % 91) as f32).collect()).finish();
        let a = &live.field("a").expect("a").series;
        for k in 0..whole.level_count() {
            for j in 0..whole.level_count().max(1) {
                assert_eq!(a.block(k, j), whole.block(k, j), "level {k} block {j}");
            }
        }

        live.drop_before(times[2_000]);
        assert_eq!(live.times_ns.first(), Some(&times[2_000]));
        assert_eq!(live.time_levels, time_levels(&live.times_ns));
        assert_eq!(
            live.field("b").and_then(|f| f.series.value(0)),
            Some(2_000.0)
        );
    }
    #[test]
    fn a_piece_whose_messages_all_failed_leaves_every_field_absent() {
        let mut live = TopicData::default();
        let mut values = SeriesBuilder::default();
        values.push(1.0);
        live.append(&Columns {
            times_ns: vec![10],
            leaves: vec![("a".into(), LeafKind::Float)],
            values: vec![values],
            ..Columns::default()
        });
        live.append(&Columns {
            times_ns: vec![20, 30],
            decode_errors: 2,
            ..Columns::default()
        });
        let a = &live.field("a").expect("a").series;
        assert_eq!((live.times_ns.len(), a.len()), (3, 3));
        assert!(a.value(2).is_some_and(f64::is_nan));
        assert_eq!(live.decode_errors, 2);
    }

    #[test]
    fn latency_percentiles() {
        let mut v: Vec<i64> = (1..=100).map(|i| i * 1_000_000).collect();
        let l = Latency::from_ns(&mut v).unwrap_or(Latency {
            p50_ms: 0.0,
            p99_ms: 0.0,
            max_ms: 0.0,
        });
        assert_eq!(l.max_ms, 100.0);
        assert!((l.p50_ms - 50.0).abs() <= 1.0);
        assert!((l.p99_ms - 99.0).abs() <= 1.0);
    }
}
