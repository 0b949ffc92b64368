//! Statistics of one signal between two times (the cursors' range), read from a summary built
//! once per column ([`RangeIndex`]), so a query costs O(log n + [`BLOCK`] + [`FANOUT`] x
//! levels), whatever the number of samples in the range.
//!
//! What a range holds: the samples logged at `t_a <= t <= t_b` (the cursors swapped when
//! `t_a > t_b`). Of them, the finite ones make the statistics; `+inf`, `-inf`, a NaN the
//! recording holds and absent values (a message that did not carry the leaf) are skipped and
//! counted, each on its own. The statistics come from the samples, never from the plots'
//! envelope:
//!
//! - min and max are samples (their index, so their time and, for a 64-bit integer, the exact
//!   integer the message carried; ties go to the earliest, equal `f64`s of rounded integers
//!   are told apart by their residual);
//! - mean, standard deviation (population: divided by the count) and RMS, merged block by
//!   block as Chan et al. merge (count, mean, sum of squared deviations about the mean), so a
//!   large offset costs no precision, as raw sums of `x²` would;
//! - the integral over time by the trapezoid rule, in value-seconds: one trapezoid per pair of
//!   consecutive samples that are both finite and both in the range. The range's edges are
//!   not extrapolated (the integral runs from the first sample in the range to the last, not
//!   from cursor to cursor), and a pair with a non-finite or absent end adds nothing: the time
//!   the integral covers is reported beside it. Consecutive samples are joined across a
//!   silence too (the plots break the line there; the integral does not judge gaps).
//!
//! Values near `f64::MAX` (1e306) or near the smallest normals would overflow or underflow
//! the squares: a column whose largest magnitude is beyond `2^±400` is summarised scaled by a
//! power of two (exact), and results are scaled back; what still exceeds `f64` (an integral of
//! 1e308 over hours) comes back infinite, for the UI to say it overflows.

use crate::data::series::{Sample, Series, is_absent};

/// Samples summarised by one block of the lowest level.
pub const BLOCK: usize = 256;

/// Blocks of one level summarised by one block of the level above.
pub const FANOUT: usize = 16;

/// Magnitudes up to `2^SCALE_LIMIT` are summarised as they are; beyond, scaled.
const SCALE_LIMIT: i32 = 400;

/// At most this many samples past what an index covers are scanned by a query (a live
/// column that grew since); beyond, the query waits for the index to catch up.
pub const MAX_TAIL: usize = 1 << 16;

/// A sample that is the minimum or maximum of a range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Extreme {
    /// Its index in the column.
    pub index: usize,
    /// Its log time, ns.
    pub t_ns: u64,
    /// Its value as the column holds it (see [`Series::exact`] for a 64-bit integer).
    pub value: f64,
}

/// What samples `first..end` of a column hold (see the module doc for each statistic).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RangeStats {
    /// Index of the first sample in the range.
    pub first: usize,
    /// One past the last.
    pub end: usize,
    /// Finite samples (the ones the statistics are made of).
    pub finite: u64,
    /// `+inf` samples, skipped.
    pub pos_inf: u64,
    /// `-inf` samples, skipped.
    pub neg_inf: u64,
    /// NaNs the recording holds, skipped.
    pub nan: u64,
    /// Messages that did not carry the value, skipped.
    pub absent: u64,
    /// The smallest finite sample.
    pub min: Option<Extreme>,
    /// The largest finite sample.
    pub max: Option<Extreme>,
    /// Mean of the finite samples.
    pub mean: Option<f64>,
    /// Population standard deviation of the finite samples.
    pub std: Option<f64>,
    /// Root mean square of the finite samples.
    pub rms: Option<f64>,
    /// Trapezoid integral over time, value x s (infinite when it overflows `f64`); `None`
    /// when no two consecutive finite samples span any time.
    pub integral: Option<f64>,
    /// Time covered by the integral's trapezoids, ns.
    pub integrated_ns: u64,
    /// From the first sample in the range to the last, ns.
    pub span_ns: u64,
}

impl RangeStats {
    /// Messages in the range (every sample, finite or not, present or not).
    pub fn count(&self) -> usize {
        self.end - self.first
    }

    /// Non-finite samples skipped (`+inf`, `-inf`, NaN; absent ones are not counted here).
    pub fn non_finite(&self) -> u64 {
        self.pos_inf + self.neg_inf + self.nan
    }
}

/// Mergeable summary of samples `lo..hi`; `mean`, `m2` and `trapezoid` are of values scaled
/// by the column's factor.
#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    lo: usize,
    hi: usize,
    finite: u64,
    pos_inf: u64,
    neg_inf: u64,
    nan: u64,
    absent: u64,
    min: Option<(f64, usize)>,
    max: Option<(f64, usize)>,
    mean: f64,
    m2: f64,
    /// Sum over joined pairs inside `lo..hi` of `(x_i + x_{i+1}) * dt_ns` (twice the area).
    trapezoid: f64,
    covered_ns: u64,
}

impl Acc {
    fn empty(at: usize) -> Self {
        Acc {
            lo: at,
            hi: at,
            ..Acc::default()
        }
    }

    fn is_empty(&self) -> bool {
        self.lo >= self.hi
    }
}

/// The power of two a column with largest magnitude `max_abs` is scaled by, as an exponent.
fn scale_exp_for(max_abs: f64) -> i32 {
    if !(max_abs.is_finite() && max_abs > 0.0) {
        return 0;
    }
    let e = max_abs.log2().floor() as i32;
    if !(-SCALE_LIMIT..=SCALE_LIMIT).contains(&e) {
        (-e).min(1000)
    } else {
        0
    }
}

/// Largest finite magnitude of samples `lo..hi` (0 when none is finite), from the pyramid.
fn max_abs(series: &Series, lo: usize, hi: usize) -> f64 {
    series
        .min_max(lo, hi)
        .map_or(0.0, |(a, b)| a.abs().max(b.abs()))
}

/// Beyond this magnitude not every integer is an `f64`.
const EXACT_F64: f64 = 9_007_199_254_740_992.0;

/// The exact integer the statistics of samples `lo..hi` are taken about: 0, unless they reach
/// past 2^53 (64-bit counters near `u64::MAX`, whose `f64`s all round to the same few
/// values), where it is the first such sample's exact integer, so that mean, deviation and
/// integral are of the differences, which `f64` holds exactly.
fn offset_for(series: &Series, lo: usize, hi: usize) -> i128 {
    if max_abs(series, lo, hi) < EXACT_F64 {
        return 0;
    }
    (lo..hi)
        .find(|&i| series.value(i).is_some_and(|x| x.abs() >= EXACT_F64))
        .and_then(|i| series.exact(i))
        .unwrap_or(0)
}

/// One column as the summaries read it.
struct Column<'a> {
    times: &'a [u64],
    series: &'a Series,
    factor: f64,
    /// Values are summarised less this (see [`offset_for`]).
    offset: i128,
}

impl Column<'_> {
    /// Sample `i`, finite value `x`, less the offset, as exactly as `f64` holds it.
    #[inline]
    fn centred(&self, i: usize, x: f64) -> f64 {
        if self.offset == 0 {
            x
        } else if x.abs() >= EXACT_F64 && x.abs() < 1.7e38 {
            // Whole (every f64 this large is); its exact integer is x plus the residual.
            (x as i128 + i128::from(self.series.residual(i)) - self.offset) as f64
        } else {
            x - self.offset as f64
        }
    }

    /// `(v, i)` before `(w, j)`: smaller, or equal as `f64` and smaller as the exact integer.
    #[inline]
    fn less(&self, (v, i): (f64, usize), (w, j): (f64, usize)) -> bool {
        v < w || (v == w && self.series.residual(i) < self.series.residual(j))
    }

    /// Summary of samples `lo..hi`, read one by one.
    fn scan(&self, lo: usize, hi: usize) -> Acc {
        let Some(ts) = self.times.get(lo..hi).filter(|_| hi <= self.series.len()) else {
            return Acc::empty(lo);
        };
        match self.series {
            Series::Const(c) => self.scan_values(std::iter::repeat_n(c.value, ts.len()), ts, lo),
            Series::F32(t) => {
                let values = t.values.get(lo..hi).unwrap_or(&[]);
                self.scan_values(values.iter().map(|v| v.to_f64()), ts, lo)
            }
            Series::F64(t) => {
                let values = t.values.get(lo..hi).unwrap_or(&[]);
                self.scan_values(values.iter().copied(), ts, lo)
            }
        }
    }

    /// Summary of `values`, samples `lo..` at times `ts`.
    fn scan_values(&self, values: impl Iterator<Item = f64>, ts: &[u64], lo: usize) -> Acc {
        let mut acc = Acc::empty(lo);
        acc.hi = lo + ts.len();
        let mut prev: Option<(f64, u64)> = None;
        for (k, (x, &t)) in values.zip(ts).enumerate() {
            if !x.is_finite() {
                prev = None;
                if is_absent(x) {
                    acc.absent += 1;
                } else if x == f64::INFINITY {
                    acc.pos_inf += 1;
                } else if x == f64::NEG_INFINITY {
                    acc.neg_inf += 1;
                } else {
                    acc.nan += 1;
                }
                continue;
            }
            let i = lo + k;
            if acc.min.is_none_or(|m| self.less((x, i), m)) {
                acc.min = Some((x, i));
            }
            if acc.max.is_none_or(|m| self.less(m, (x, i))) {
                acc.max = Some((x, i));
            }
            acc.finite += 1;
            let xs = self.centred(i, x) * self.factor;
            let d = xs - acc.mean;
            acc.mean += d / acc.finite as f64;
            acc.m2 += d * (xs - acc.mean);
            if let Some((ps, pt)) = prev {
                let dt = t.saturating_sub(pt);
                acc.trapezoid += (ps + xs) * dt as f64;
                acc.covered_ns += dt;
            }
            prev = Some((xs, t));
        }
        acc
    }

    /// The summary of `a` followed by `b` (adjacent: `a.hi == b.lo`, or either empty).
    fn merge(&self, a: Acc, b: Acc) -> Acc {
        // Both empty: `a`, so an empty range stays where it starts.
        if b.is_empty() {
            return a;
        }
        if a.is_empty() {
            return b;
        }
        let mut out = Acc {
            lo: a.lo,
            hi: b.hi,
            finite: a.finite + b.finite,
            pos_inf: a.pos_inf + b.pos_inf,
            neg_inf: a.neg_inf + b.neg_inf,
            nan: a.nan + b.nan,
            absent: a.absent + b.absent,
            min: match (a.min, b.min) {
                (Some(x), Some(y)) => Some(if self.less(y, x) { y } else { x }),
                (x, y) => x.or(y),
            },
            max: match (a.max, b.max) {
                (Some(x), Some(y)) => Some(if self.less(x, y) { y } else { x }),
                (x, y) => x.or(y),
            },
            mean: 0.0,
            m2: 0.0,
            trapezoid: a.trapezoid + b.trapezoid,
            covered_ns: a.covered_ns + b.covered_ns,
        };
        match (a.finite, b.finite) {
            (0, _) => (out.mean, out.m2) = (b.mean, b.m2),
            (_, 0) => (out.mean, out.m2) = (a.mean, a.m2),
            (na, nb) => {
                let wb = nb as f64 / (na + nb) as f64;
                let d = b.mean - a.mean;
                out.mean = a.mean + d * wb;
                out.m2 = a.m2 + b.m2 + d * d * na as f64 * wb;
            }
        }
        // The pair across the seam.
        let i = a.hi - 1;
        if let (Some(x), Some(y), Some(&s), Some(&t)) = (
            self.series.value(i),
            self.series.value(i + 1),
            self.times.get(i),
            self.times.get(i + 1),
        ) && x.is_finite()
            && y.is_finite()
        {
            let dt = t.saturating_sub(s);
            out.trapezoid += (self.centred(i, x) * self.factor
                + self.centred(i + 1, y) * self.factor)
                * dt as f64;
            out.covered_ns += dt;
        }
        out
    }

    /// Blocks `a..b` of `level`, merged in order.
    fn fold(&self, level: &[Acc], a: usize, b: usize) -> Acc {
        let mut acc = Acc::empty(a);
        for &block in level.get(a..b).unwrap_or(&[]) {
            acc = self.merge(acc, block);
        }
        acc
    }

    /// What `acc` says, scaled back.
    fn finish(&self, acc: &Acc, scale_exp: i32) -> RangeStats {
        let unscale = 2f64.powi(-scale_exp);
        let extreme = |m: Option<(f64, usize)>| {
            let (value, index) = m?;
            Some(Extreme {
                index,
                t_ns: *self.times.get(index)?,
                value,
            })
        };
        let n = acc.finite as f64;
        let var = (acc.m2 / n).max(0.0);
        let finite = acc.finite > 0;
        let offset = self.offset as f64;
        let mean = acc.mean * unscale + offset;
        let std = var.sqrt() * unscale;
        let span_ns = match (self.times.get(acc.lo), acc.hi.checked_sub(1)) {
            (Some(&a), Some(last)) if !acc.is_empty() => {
                self.times.get(last).map_or(0, |&b| b.saturating_sub(a))
            }
            _ => 0,
        };
        RangeStats {
            first: acc.lo,
            end: acc.hi.max(acc.lo),
            finite: acc.finite,
            pos_inf: acc.pos_inf,
            neg_inf: acc.neg_inf,
            nan: acc.nan,
            absent: acc.absent,
            min: extreme(acc.min),
            max: extreme(acc.max),
            mean: finite.then_some(mean),
            std: finite.then_some(std),
            // sqrt(mean^2 + variance), without squaring either.
            rms: finite.then(|| mean.hypot(std)),
            integral: (acc.covered_ns > 0).then_some(
                acc.trapezoid * 0.5e-9 * unscale + offset * acc.covered_ns as f64 * 1e-9,
            ),
            integrated_ns: acc.covered_ns,
            span_ns,
        }
    }
}

/// The index range of the samples logged at `t_a..=t_b` (either order) of `times_ns`.
pub fn index_range(times_ns: &[u64], t_a: u64, t_b: u64) -> (usize, usize) {
    let (a, b) = if t_a <= t_b { (t_a, t_b) } else { (t_b, t_a) };
    let lo = times_ns.partition_point(|&t| t < a);
    let hi = times_ns.partition_point(|&t| t <= b);
    (lo, hi.max(lo))
}

/// Statistics of the samples logged at `t_a..=t_b` (either order), read one by one: O(samples
/// in the range). For short ranges, and as what [`RangeIndex::query`] must equal.
pub fn scan_range(times_ns: &[u64], series: &Series, t_a: u64, t_b: u64) -> RangeStats {
    let n = times_ns.len().min(series.len());
    let (lo, hi) = index_range(times_ns.get(..n).unwrap_or(&[]), t_a, t_b);
    let scale_exp = scale_exp_for(max_abs(series, lo, hi));
    let col = Column {
        times: times_ns,
        series,
        factor: 2f64.powi(scale_exp),
        offset: offset_for(series, lo, hi),
    };
    col.finish(&col.scan(lo, hi), scale_exp)
}

/// A column's summary for range statistics: level 0 summarises blocks of [`BLOCK`] samples,
/// each level above blocks of [`FANOUT`] blocks of the one below (the last block of a level
/// may be partial). Built by [`RangeIndex::extend`], a budget of samples at a time, for a
/// column that only grows; a column that lost its oldest samples (a live capture evicting)
/// or whose scale changed is summarised again from the start.
#[derive(Debug, Clone, Default)]
pub struct RangeIndex {
    /// Samples summarised.
    len: usize,
    /// The column's first log time when summarised (a changed one: samples were dropped).
    first_ns: Option<u64>,
    /// Largest finite magnitude summarised.
    max_abs: f64,
    /// Values are summarised times `2^scale_exp`.
    scale_exp: i32,
    /// Values are summarised less this (see [`offset_for`]).
    offset: i128,
    levels: Vec<Vec<Acc>>,
}

impl RangeIndex {
    /// The summary of the whole column (O(n); build it off the UI thread).
    pub fn build(times_ns: &[u64], series: &Series) -> Self {
        let mut index = Self::default();
        index.extend(times_ns, series, usize::MAX);
        index
    }

    /// Samples summarised.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is summarised.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether this summary is of (a prefix of) this column.
    pub fn fits(&self, times_ns: &[u64], series: &Series) -> bool {
        let n = times_ns.len().min(series.len());
        self.len <= n && (self.len == 0 || self.first_ns == times_ns.first().copied())
    }

    /// Summarises up to `max_samples` more of the column (all of it with `usize::MAX`), or
    /// starts again when it no longer [`fits`](Self::fits) or a new sample needs another
    /// scale. Returns true when the whole column is summarised. Costs O(samples added +
    /// [`BLOCK`] + [`FANOUT`] x levels).
    pub fn extend(&mut self, times_ns: &[u64], series: &Series, max_samples: usize) -> bool {
        let n = times_ns.len().min(series.len());
        if !self.fits(times_ns, series) {
            *self = Self::default();
        }
        let target = n.min(self.len.saturating_add(max_samples));
        if target <= self.len {
            return self.len == n;
        }
        let grown_max = self.max_abs.max(max_abs(series, self.len, target));
        if scale_exp_for(grown_max) != self.scale_exp && self.len > 0 {
            // Start again at the new scale (over the whole column known now).
            *self = Self::default();
            return self.extend(times_ns, series, max_samples);
        }
        if self.len == 0 {
            self.scale_exp = scale_exp_for(max_abs(series, 0, n));
            self.offset = offset_for(series, 0, n);
            self.first_ns = times_ns.first().copied();
        }
        self.max_abs = grown_max;
        let col = Column {
            times: times_ns,
            series,
            factor: 2f64.powi(self.scale_exp),
            offset: self.offset,
        };
        if self.levels.is_empty() {
            self.levels.push(Vec::new());
        }
        let start_block = self.len / BLOCK;
        let mut changed_from = start_block;
        if let Some(leaves) = self.levels.first_mut() {
            leaves.truncate(start_block);
            let mut lo = start_block * BLOCK;
            while lo < target {
                let hi = (lo + BLOCK).min(target);
                leaves.push(col.scan(lo, hi));
                lo = hi;
            }
        }
        let mut k = 1;
        loop {
            let below_len = self.levels.get(k - 1).map_or(0, Vec::len);
            if below_len <= FANOUT {
                self.levels.truncate(k);
                break;
            }
            if self.levels.len() == k {
                self.levels.push(Vec::new());
            }
            let (lower, upper) = self.levels.split_at_mut(k);
            let (Some(below), Some(this)) = (lower.last(), upper.first_mut()) else {
                break;
            };
            let first = (changed_from / FANOUT).min(this.len());
            this.truncate(first);
            for j in first..below_len.div_ceil(FANOUT) {
                this.push(col.fold(below, j * FANOUT, ((j + 1) * FANOUT).min(below_len)));
            }
            changed_from = first;
            k += 1;
        }
        self.len = target;
        self.len == n
    }

    /// Statistics of the samples logged at `t_a..=t_b` (either order). `None` when this
    /// summary is not of this column, or the range reaches more than [`MAX_TAIL`] samples
    /// past what it covers (wait for [`extend`](Self::extend)).
    pub fn query(
        &self,
        times_ns: &[u64],
        series: &Series,
        t_a: u64,
        t_b: u64,
    ) -> Option<RangeStats> {
        if !self.fits(times_ns, series) {
            return None;
        }
        let n = times_ns.len().min(series.len());
        let (lo, hi) = index_range(times_ns.get(..n)?, t_a, t_b);
        let tail_lo = lo.max(self.len);
        if hi > tail_lo
            && (hi - tail_lo > MAX_TAIL
                || scale_exp_for(self.max_abs.max(max_abs(series, tail_lo, hi))) != self.scale_exp)
        {
            return None;
        }
        let col = Column {
            times: times_ns,
            series,
            factor: 2f64.powi(self.scale_exp),
            offset: self.offset,
        };
        let covered = if lo < hi.min(self.len) {
            self.range(&col, lo, hi.min(self.len))
        } else {
            Acc::empty(lo)
        };
        let tail = if hi > tail_lo {
            col.scan(tail_lo, hi)
        } else {
            Acc::empty(tail_lo)
        };
        Some(col.finish(&col.merge(covered, tail), self.scale_exp))
    }

    /// Summary of samples `lo..hi` (all summarised): the raw edges, blocks between.
    fn range(&self, col: &Column<'_>, lo: usize, hi: usize) -> Acc {
        let (jl, jh) = (lo.div_ceil(BLOCK), hi / BLOCK);
        if jl >= jh {
            return col.scan(lo, hi);
        }
        let left = col.scan(lo, jl * BLOCK);
        let middle = self.blocks(col, 0, jl, jh);
        let right = col.scan(jh * BLOCK, hi);
        col.merge(col.merge(left, middle), right)
    }

    /// Summary of the (full) blocks `jl..jh` of `level`, using the levels above for the
    /// blocks they cover whole.
    fn blocks(&self, col: &Column<'_>, level: usize, jl: usize, jh: usize) -> Acc {
        let Some(this) = self.levels.get(level) else {
            return Acc::empty(0);
        };
        let (kl, kh) = (jl.div_ceil(FANOUT), jh / FANOUT);
        if self.levels.len() > level + 1 && kl < kh {
            let left = col.fold(this, jl, kl * FANOUT);
            let middle = self.blocks(col, level + 1, kl, kh);
            let right = col.fold(this, kh * FANOUT, jh);
            col.merge(col.merge(left, middle), right)
        } else {
            col.fold(this, jl, jh)
        }
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.levels
            .iter()
            .map(|l| l.capacity() * std::mem::size_of::<Acc>())
            .sum()
    }
}

/// Below this many samples in a range, a query reads them one by one: no summary to wait for.
pub const SCAN_LIMIT: usize = 1 << 16;

/// What a measurement of a range gives this frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measured {
    /// The statistics.
    Ready(RangeStats),
    /// The signal's summary is still being built, a budget of samples per frame: this many
    /// samples of that many so far.
    Summarising {
        /// Samples summarised.
        done: usize,
        /// Samples in the column.
        of: usize,
    },
}

/// The range summaries of the signals the cursors measure, one per key, each built
/// [`RangeIndexes::BUDGET`] samples per call, so that no frame is held up by a column of a
/// hundred million samples; a range of fewer than [`SCAN_LIMIT`] samples is read directly.
#[derive(Debug)]
pub struct RangeIndexes<K> {
    indexes: std::collections::HashMap<K, RangeIndex>,
}

impl<K> Default for RangeIndexes<K> {
    fn default() -> Self {
        RangeIndexes {
            indexes: std::collections::HashMap::new(),
        }
    }
}

impl<K: std::hash::Hash + Eq + Clone> RangeIndexes<K> {
    /// Samples summarised per call, for each key (about 6 ms: 100M samples take 0.63 s).
    pub const BUDGET: usize = 1_000_000;

    /// Statistics of `key`'s column between `t_a` and `t_b` (see [`RangeIndex::query`]).
    pub fn measure(
        &mut self,
        key: &K,
        times_ns: &[u64],
        series: &Series,
        t_a: u64,
        t_b: u64,
    ) -> Measured {
        let n = times_ns.len().min(series.len());
        let (lo, hi) = index_range(times_ns.get(..n).unwrap_or(&[]), t_a, t_b);
        if hi - lo <= SCAN_LIMIT {
            return Measured::Ready(scan_range(times_ns, series, t_a, t_b));
        }
        let index = self.indexes.entry(key.clone()).or_default();
        index.extend(times_ns, series, Self::BUDGET);
        match index.query(times_ns, series, t_a, t_b) {
            Some(stats) => Measured::Ready(stats),
            None => Measured::Summarising {
                done: index.len(),
                of: n,
            },
        }
    }

    /// Forgets every summary (another recording).
    pub fn clear(&mut self) {
        self.indexes.clear();
    }

    /// Keeps only the summaries of keys for which `keep` holds (signals still plotted).
    pub fn retain(&mut self, mut keep: impl FnMut(&K) -> bool) {
        self.indexes.retain(|k, _| keep(k));
    }

    /// Bytes held by the summaries.
    pub fn heap_bytes(&self) -> usize {
        self.indexes.values().map(RangeIndex::heap_bytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::series::{DATA_NAN, SeriesBuilder};
    use proptest::prelude::*;

    /// The statistics the slow, obvious way (two passes, `f64` sums).
    fn brute(times: &[u64], values: &[f64], t_a: u64, t_b: u64) -> RangeStats {
        let (a, b) = (t_a.min(t_b), t_a.max(t_b));
        let idx: Vec<usize> = (0..times.len())
            .filter(|&i| times[i] >= a && times[i] <= b)
            .collect();
        let mut s = RangeStats::default();
        let (Some(&first), Some(&last)) = (idx.first(), idx.last()) else {
            let lo = times.partition_point(|&t| t < a);
            s.first = lo;
            s.end = lo;
            return s;
        };
        s.first = first;
        s.end = last + 1;
        s.span_ns = times[last] - times[first];
        let mut sum = 0.0;
        let mut finite = Vec::new();
        for &i in &idx {
            let x = values[i];
            if x.is_finite() {
                finite.push(x);
                sum += x;
                if s.min.is_none_or(|m| x < m.value) {
                    s.min = Some(Extreme {
                        index: i,
                        t_ns: times[i],
                        value: x,
                    });
                }
                if s.max.is_none_or(|m| x > m.value) {
                    s.max = Some(Extreme {
                        index: i,
                        t_ns: times[i],
                        value: x,
                    });
                }
            } else if is_absent(x) {
                s.absent += 1;
            } else if x == f64::INFINITY {
                s.pos_inf += 1;
            } else if x == f64::NEG_INFINITY {
                s.neg_inf += 1;
            } else {
                s.nan += 1;
            }
        }
        s.finite = finite.len() as u64;
        if !finite.is_empty() {
            let n = finite.len() as f64;
            let mean = sum / n;
            let var = finite.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
            s.mean = Some(mean);
            s.std = Some(var.sqrt());
            s.rms = Some((finite.iter().map(|x| x * x).sum::<f64>() / n).sqrt());
        }
        let mut integral = None;
        for w in idx.windows(2) {
            let (i, j) = (w[0], w[1]);
            if values[i].is_finite() && values[j].is_finite() {
                let dt = times[j] - times[i];
                *integral.get_or_insert(0.0) += (values[i] + values[j]) / 2.0 * dt as f64 / 1e9;
                s.integrated_ns += dt;
            }
        }
        s.integral = integral;
        s
    }

    fn close(a: Option<f64>, b: Option<f64>, scale: f64) -> bool {
        match (a, b) {
            (None, None) => true,
            (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * scale.max(a.abs()).max(b.abs()),
            _ => false,
        }
    }

    fn assert_matches(got: &RangeStats, want: &RangeStats, scale: f64, what: &str) {
        assert_eq!(
            (got.first, got.end, got.finite, got.absent),
            (want.first, want.end, want.finite, want.absent),
            "{what}"
        );
        assert_eq!(
            (
                got.pos_inf,
                got.neg_inf,
                got.nan,
                got.span_ns,
                got.integrated_ns
            ),
            (
                want.pos_inf,
                want.neg_inf,
                want.nan,
                want.span_ns,
                want.integrated_ns
            ),
            "{what}"
        );
        assert_eq!((got.min, got.max), (want.min, want.max), "{what}");
        assert!(
            close(got.mean, want.mean, scale),
            "{what}: mean {got:?} {want:?}"
        );
        assert!(
            close(got.std, want.std, scale),
            "{what}: std {got:?} {want:?}"
        );
        assert!(
            close(got.rms, want.rms, scale),
            "{what}: rms {got:?} {want:?}"
        );
        // The integral's sums run over seconds: its scale is value x span.
        let span_s = (want.span_ns as f64 / 1e9).max(1e-9);
        let integral_ok = match (got.integral, want.integral) {
            (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * (scale * span_s).max(b.abs()),
            (None, None) => true,
            // Zero-length pairs only: an integral of 0 either way.
            (Some(a), None) | (None, Some(a)) => a == 0.0,
        };
        assert!(integral_ok, "{what}: integral {got:?} {want:?}");
    }

    fn series_of(values: &[f64]) -> Series {
        Series::from_values(values)
    }

    /// `n` samples with repeated times, silences, absent and non-finite values.
    fn column(n: usize, seed: u64) -> (Vec<u64>, Vec<f64>) {
        let mut t = 1_000u64;
        let mut r = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let mut next = move || {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            r
        };
        let mut times = Vec::with_capacity(n);
        let mut values = Vec::with_capacity(n);
        for i in 0..n {
            let k = next();
            t += match k % 50 {
                0 => 0,
                1 => 5_000_000,
                _ => 1_000 + k % 997,
            };
            times.push(t);
            values.push(match (k >> 8) % 97 {
                0 => f64::NAN,
                1 => f64::INFINITY,
                2 => f64::NEG_INFINITY,
                3 => DATA_NAN,
                _ => ((k >> 16) % 20_001) as f64 / 10.0 - 1_000.0 + (i as f64 * 1e-3).sin(),
            });
        }
        (times, values)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn queries_equal_brute_force(
            n in 0usize..12_000,
            seed in any::<u64>(),
            a in 0.0f64..1.0,
            b in 0.0f64..1.0,
            piece in 1usize..3_000,
        ) {
            let (times, values) = column(n, seed);
            let s = series_of(&values);
            let span = times.last().copied().unwrap_or(2_000);
            let t_a = (a * span as f64 * 1.1) as u64;
            let t_b = (b * span as f64 * 1.1) as u64;
            let want = brute(&times, &values, t_a, t_b);
            let whole = RangeIndex::build(&times, &s);
            let got = whole.query(&times, &s, t_a, t_b);
            prop_assert!(got.is_some());
            assert_matches(&got.unwrap_or_default(), &want, 1e3, "whole");
            assert_matches(&scan_range(&times, &s, t_a, t_b), &want, 1e3, "scan");
            // Grown piece by piece, as a live column is.
            let mut grown = RangeIndex::default();
            let mut k = 0;
            while !grown.extend(&times, &s, piece) {
                k += 1;
                prop_assert!(k < 100_000);
            }
            let got = grown.query(&times, &s, t_a, t_b).unwrap_or_default();
            assert_matches(&got, &want, 1e3, "grown");
        }
    }

    #[test]
    fn a_live_column_that_grew_is_read_past_its_summary() {
        let (times, values) = column(20_000, 7);
        let s = series_of(&values);
        let half = series_of(&values[..10_000]);
        let index = RangeIndex::build(&times[..10_000], &half);
        let (t_a, t_b) = (times[5_000], times[19_000]);
        let got = index.query(&times, &s, t_a, t_b).unwrap_or_default();
        assert_matches(&got, &brute(&times, &values, t_a, t_b), 1e3, "tail");
        // A column that lost its start is not the one summarised.
        let dropped = series_of(&values[1..]);
        assert!(index.query(&times[1..], &dropped, t_a, t_b).is_none());
    }

    #[test]
    fn edges_empty_single_swapped_and_outside() {
        let times = vec![100, 200, 300, 400];
        let values = vec![1.0, -2.0, 4.0, 8.0];
        let s = series_of(&values);
        let index = RangeIndex::build(&times, &s);
        let q = |a, b| index.query(&times, &s, a, b).unwrap_or_default();
        // Between two samples: nothing.
        let empty = q(210, 290);
        assert_eq!((empty.count(), empty.finite, empty.mean), (0, 0, None));
        assert_eq!((empty.min, empty.integral, empty.span_ns), (None, None, 0));
        // One sample: its value, no spread, nothing to integrate.
        let one = q(200, 200);
        assert_eq!((one.count(), one.mean, one.std), (1, Some(-2.0), Some(0.0)));
        assert_eq!(one.rms, Some(2.0));
        assert_eq!(one.integral, None);
        // A after B is the same range.
        assert_eq!(q(350, 150), q(150, 350));
        let r = q(150, 350);
        assert_eq!((r.first, r.end, r.mean), (1, 3, Some(1.0)));
        // (−2 + 4) / 2 over 100 ns.
        // To the last bit but one: the sum is in value x ns, times 0.5e-9.
        assert!(
            r.integral.is_some_and(|v| (v - 1e-7).abs() < 1e-21),
            "{r:?}"
        );
        assert_eq!((r.integrated_ns, r.span_ns), (100, 100));
        // Outside the data.
        assert_eq!(q(0, 50).count(), 0);
        assert_eq!(q(500, 900).count(), 0);
        assert_eq!(q(0, 1_000).count(), 4);
        assert_eq!(q(0, 1_000).max.map(|m| (m.index, m.t_ns)), Some((3, 400)));
        // An empty column.
        let none = series_of(&[]);
        let empty_index = RangeIndex::build(&[], &none);
        assert_eq!(
            empty_index.query(&[], &none, 0, 10).map(|s| s.count()),
            Some(0)
        );
    }

    #[test]
    fn values_near_f64_max_do_not_overflow() {
        let n = 5_000u64;
        let times: Vec<u64> = (0..n).map(|i| i * 1_000_000_000).collect();
        // 1e306 and 3e306 alternating: mean 2e306, std 1e306, rms sqrt(5) e306.
        let values: Vec<f64> = (0..n)
            .map(|i| if i % 2 == 0 { 1e306 } else { 3e306 })
            .collect();
        let s = series_of(&values);
        let index = RangeIndex::build(&times, &s);
        let r = index.query(&times, &s, 0, u64::MAX).unwrap_or_default();
        let rel =
            |got: Option<f64>, want: f64| got.is_some_and(|g| ((g - want) / want).abs() < 1e-12);
        assert!(rel(r.mean, 2e306), "{r:?}");
        assert!(rel(r.std, 1e306), "{r:?}");
        assert!(rel(r.rms, 5f64.sqrt() * 1e306), "{r:?}");
        // Integral: 2e306 per second over 4,999 s is 9.998e309, past f64: infinite, said so.
        assert_eq!(r.integral, Some(f64::INFINITY));
        // Over two seconds it fits: (1 + 3) / 2 + (3 + 1) / 2 = 4e306.
        let short = index
            .query(&times, &s, 0, 2_000_000_000)
            .unwrap_or_default();
        assert!(rel(short.integral, 4e306), "{short:?}");
        // Offsets near the top do not cost the spread its precision.
        let offset: Vec<f64> = (0..n).map(|i| 1e306 + (i % 2) as f64 * 1e295).collect();
        let s = series_of(&offset);
        let r = RangeIndex::build(&times, &s)
            .query(&times, &s, 0, u64::MAX)
            .unwrap_or_default();
        // 1e306 + 1e295 is not an f64: the stored step is 1e295 to about 1e-5.
        assert!(
            r.std
                .is_some_and(|v| ((v - 0.5e295) / 0.5e295).abs() < 1e-4),
            "{r:?}"
        );
    }

    #[test]
    fn tiny_values_keep_their_spread() {
        let times: Vec<u64> = (0..1_000).map(|i| i * 1_000).collect();
        for unit in [1e-10, 1e-200, 1e-300] {
            let values: Vec<f64> = (0..1_000).map(|i| (i % 2) as f64 * 2.0 * unit).collect();
            let s = series_of(&values);
            let r = RangeIndex::build(&times, &s)
                .query(&times, &s, 0, u64::MAX)
                .unwrap_or_default();
            let rel =
                |got: Option<f64>, want: f64| got.is_some_and(|g| ((g - want) / want).abs() < 1e-9);
            assert!(rel(r.mean, unit), "{unit}: {r:?}");
            assert!(rel(r.std, unit), "{unit}: {r:?}");
            assert!(rel(r.rms, 2f64.sqrt() * unit), "{unit}: {r:?}");
            assert_eq!(r.min.map(|m| m.value), Some(0.0));
        }
    }

    #[test]
    fn rounded_64_bit_integers_are_told_apart_by_their_exact_value() {
        let mut b = SeriesBuilder::default();
        // u64::MAX - 1 and u64::MAX both round to 2^64 as f64.
        b.push_int(i128::from(u64::MAX));
        b.push_int(i128::from(u64::MAX - 1));
        b.push_int(i128::from(u64::MAX));
        let s = b.finish();
        let times = [10, 20, 30];
        let r = RangeIndex::build(&times, &s)
            .query(&times, &s, 0, 100)
            .unwrap_or_default();
        let (min, max) = (r.min.map(|m| m.index), r.max.map(|m| m.index));
        assert_eq!((min, max), (Some(1), Some(0)));
        assert_eq!(s.exact(1), Some(i128::from(u64::MAX - 1)));
    }

    #[test]
    fn statistics_of_64_bit_counters_near_the_top_are_of_their_exact_values() {
        // 51 consecutive integers below u64::MAX, 1 s apart: as f64 they are all 2^64.
        let mut b = SeriesBuilder::default();
        for k in 0..51u64 {
            b.push_int(i128::from(u64::MAX - 1000 + k));
        }
        let s = b.finish();
        let times: Vec<u64> = (0..51).map(|k| 1_000_000_000 * (k + 1)).collect();
        let by_index = RangeIndex::build(&times, &s)
            .query(&times, &s, 0, u64::MAX)
            .unwrap_or_default();
        for (how, r) in [
            ("index", by_index),
            ("scan", scan_range(&times, &s, 0, u64::MAX)),
        ] {
            // sqrt((51^2 - 1) / 12), not 0.
            let std = r.std.unwrap_or_default();
            assert!(
                (std - (2600.0f64 / 12.0).sqrt()).abs() < 1e-9,
                "{how}: std {std}"
            );
            let mean = (u64::MAX - 975) as f64;
            assert_eq!(r.mean, Some(mean), "{how}");
            // 50 s at the mean value (a straight ramp): mean x 50, to f64's precision.
            let integral = r.integral.unwrap_or_default();
            assert!(((integral - mean * 50.0) / integral).abs() < 1e-15, "{how}");
            assert_eq!(r.min.map(|m| m.index), Some(0), "{how}");
            assert_eq!(r.max.map(|m| m.index), Some(50), "{how}");
        }
    }

    #[test]
    fn a_long_column_is_summarised_a_budget_at_a_time_then_measured_exactly() {
        let n = RangeIndexes::<u8>::BUDGET * 2 + 10;
        let (times, values) = column(n, 7);
        let s = series_of(&values);
        let mut indexes = RangeIndexes::default();
        let (a, b) = (times[5], times[n - 3]);
        let first = indexes.measure(&1u8, &times, &s, a, b);
        assert_eq!(
            first,
            Measured::Summarising {
                done: RangeIndexes::<u8>::BUDGET,
                of: n
            }
        );
        // The budget after that reaches within MAX_TAIL of the end: measured.
        let Measured::Ready(got) = indexes.measure(&1u8, &times, &s, a, b) else {
            panic!("not ready after two budgets");
        };
        let want = scan_range(&times, &s, a, b);
        assert_matches(&got, &want, 1.0, "budgeted");
        // A short range needs no summary.
        let mut fresh = RangeIndexes::default();
        assert!(matches!(
            fresh.measure(&2u8, &times, &s, times[10], times[20]),
            Measured::Ready(_)
        ));
        assert_eq!(fresh.heap_bytes(), 0);
    }
}
