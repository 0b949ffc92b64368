//! One numeric signal's values plus its min/max pyramid, so any time window reduces to a
//! per-pixel-column envelope in time that does not grow with the number of samples.
//!
//! Values start as `f32` and switch to `f64` the first time a value does not survive the round
//! trip (a latitude, a nanosecond counter), so most columns cost 4 bytes a sample. Absent values
//! (a message that did not carry the leaf, a decode error) are NaN and skipped by min/max.

/// Samples summarised by one pyramid entry, and the fan-out between levels.
pub const FANOUT: usize = 16;

/// A value type a column can hold.
pub trait Sample: Copy + PartialOrd + Send + Sync + 'static {
    /// The absent value.
    const NAN: Self;
    /// Widens to `f64`.
    fn to_f64(self) -> f64;
}

impl Sample for f32 {
    const NAN: Self = f32::NAN;
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Sample for f64 {
    const NAN: Self = f64::NAN;
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
}

/// Values of one type with their pyramid: `levels[k][j]` is the (min, max) of raw samples
/// `j * FANOUT^(k+1) .. (j+1) * FANOUT^(k+1)`; NaN when all of them are absent.
#[derive(Debug, Clone, Default)]
pub struct Typed<T> {
    /// Raw values, one per message of the topic.
    pub values: Vec<T>,
    levels: Vec<Vec<(T, T)>>,
}

#[inline]
fn fold<T: Sample>(acc: &mut Option<(T, T)>, lo: T, hi: T) {
    // NaN compares false both ways: skip it.
    if lo.partial_cmp(&lo).is_none() {
        return;
    }
    match acc {
        None => *acc = Some((lo, hi)),
        Some((a, b)) => {
            if lo < *a {
                *a = lo;
            }
            if hi > *b {
                *b = hi;
            }
        }
    }
}

/// (min, max) of each group of pairs; NaN for a group with nothing present.
fn summarise<T: Sample, G: IntoIterator<Item = (T, T)>>(
    groups: impl Iterator<Item = G>,
) -> Vec<(T, T)> {
    groups
        .map(|g| {
            let mut acc = None;
            for (lo, hi) in g {
                fold(&mut acc, lo, hi);
            }
            acc.unwrap_or((T::NAN, T::NAN))
        })
        .collect()
}

impl<T: Sample> Typed<T> {
    /// Builds the pyramid over `values`: level 0 whenever there are values, and level `k + 1`
    /// while level `k` has more than `FANOUT` blocks (the rule [`time_levels`] follows).
    ///
    /// [`time_levels`]: crate::data::topic_data::time_levels
    pub fn new(values: Vec<T>) -> Self {
        let mut levels: Vec<Vec<(T, T)>> = Vec::new();
        if !values.is_empty() {
            levels.push(summarise(
                values.chunks(FANOUT).map(|c| c.iter().map(|&x| (x, x))),
            ));
        }
        while let Some(top) = levels.last().filter(|l| l.len() > FANOUT) {
            let next = summarise(top.chunks(FANOUT).map(|c| c.iter().copied()));
            levels.push(next);
        }
        levels.shrink_to_fit();
        Self { values, levels }
    }

    /// Appends one value and keeps the pyramid exact: the last block of each level holds the
    /// min and max of what it has so far, and levels appear as [`Typed::new`] would have them
    /// (level `k` once there are more than `FANOUT^(k+1)` values; level 0 from the first).
    pub fn push(&mut self, v: T) {
        let i = self.values.len();
        self.values.push(v);
        let n = i + 1;
        let mut block = FANOUT;
        for k in 0.. {
            if k == self.levels.len() {
                if k > 0 && n <= block {
                    break;
                }
                // A new level: summarise the one below (or the values) in blocks.
                let built: Vec<(T, T)> = if k == 0 {
                    summarise(
                        self.values
                            .chunks(FANOUT)
                            .map(|c| c.iter().map(|&x| (x, x))),
                    )
                } else {
                    summarise(self.levels[k - 1].chunks(FANOUT).map(|c| c.iter().copied()))
                };
                self.levels.push(built);
            } else {
                let j = i / block;
                let level = &mut self.levels[k];
                if j == level.len() {
                    level.push((v, v));
                } else if let Some(slot) = level.get_mut(j) {
                    let mut acc = if slot.0.partial_cmp(&slot.0).is_some() {
                        Some(*slot)
                    } else {
                        None
                    };
                    fold(&mut acc, v, v);
                    *slot = acc.unwrap_or((T::NAN, T::NAN));
                }
            }
            block = block.saturating_mul(FANOUT);
        }
    }

    /// Min and max of samples `lo..hi`, skipping absent ones; `None` when all are absent.
    pub fn min_max(&self, lo: usize, hi: usize) -> Option<(f64, f64)> {
        let hi = hi.min(self.values.len());
        if lo >= hi {
            return None;
        }
        let mut acc: Option<(T, T)> = None;
        let (mut lo, mut hi) = (lo, hi);
        // Level 0 is raw values; level k >= 1 is `levels[k - 1]`.
        let mut level = 0usize;
        loop {
            let len = if level == 0 {
                self.values.len()
            } else {
                self.levels.get(level - 1).map_or(0, Vec::len)
            };
            let hi_c = hi.min(len);
            let has_up = self.levels.get(level).is_some();
            let lo_up = lo.div_ceil(FANOUT);
            let hi_up = hi_c / FANOUT;
            if !has_up || lo_up >= hi_up || hi_c - lo < 2 * FANOUT {
                self.scan(level, lo, hi_c, &mut acc);
                break;
            }
            self.scan(level, lo, lo_up * FANOUT, &mut acc);
            self.scan(level, hi_up * FANOUT, hi_c, &mut acc);
            lo = lo_up;
            hi = hi_up;
            level += 1;
        }
        acc.map(|(a, b)| (a.to_f64(), b.to_f64()))
    }

    fn scan(&self, level: usize, lo: usize, hi: usize, acc: &mut Option<(T, T)>) {
        if level == 0 {
            if let Some(s) = self.values.get(lo..hi) {
                for &v in s {
                    fold(acc, v, v);
                }
            }
        } else if let Some(s) = self.levels.get(level - 1).and_then(|l| l.get(lo..hi)) {
            for &(a, b) in s {
                fold(acc, a, b);
            }
        }
    }

    /// Min and max of block `j` of pyramid level `k` (blocks of `FANOUT^(k+1)` samples).
    #[inline]
    pub fn block(&self, k: usize, j: usize) -> Option<(f64, f64)> {
        let &(lo, hi) = self.levels.get(k)?.get(j)?;
        lo.partial_cmp(&lo)?;
        Some((lo.to_f64(), hi.to_f64()))
    }

    /// Number of pyramid levels.
    pub fn level_count(&self) -> usize {
        self.levels.len()
    }

    /// Pyramid level `k`: (min, max) per block of `FANOUT^(k+1)` samples.
    pub fn level(&self, k: usize) -> &[(T, T)] {
        self.levels.get(k).map_or(&[], Vec::as_slice)
    }

    /// Bytes held (values and pyramid).
    pub fn heap_bytes(&self) -> usize {
        let pair = std::mem::size_of::<(T, T)>();
        self.values.capacity() * std::mem::size_of::<T>()
            + self
                .levels
                .iter()
                .map(|l| l.capacity() * pair)
                .sum::<usize>()
    }
}

/// A value column: `f32` unless some value needs `f64`.
#[derive(Debug, Clone)]
pub enum Series {
    /// Every value survives a round trip through `f32`.
    F32(Typed<f32>),
    /// Some value needs `f64`.
    F64(Typed<f64>),
}

impl Series {
    /// The value of sample `i` (NaN when absent), `None` past the end.
    pub fn value(&self, i: usize) -> Option<f64> {
        match self {
            Series::F32(t) => t.values.get(i).map(|v| f64::from(*v)),
            Series::F64(t) => t.values.get(i).copied(),
        }
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        match self {
            Series::F32(t) => t.values.len(),
            Series::F64(t) => t.values.len(),
        }
    }

    /// True when there are no samples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends one value (NaN: absent), widening the column to `f64` the first time a value
    /// does not survive `f32`.
    pub fn push(&mut self, v: f64) {
        match self {
            Series::F32(t) => {
                let narrow = v as f32;
                if f64::from(narrow) == v || v.is_nan() {
                    t.push(narrow);
                } else {
                    let mut wide: Vec<f64> = t.values.iter().map(|&x| f64::from(x)).collect();
                    wide.push(v);
                    *self = Series::F64(Typed::new(wide));
                }
            }
            Series::F64(t) => t.push(v),
        }
    }

    /// Appends every value of `values`, as [`Series::push`] would one by one.
    pub fn extend(&mut self, values: &SeriesBuilder) {
        match values {
            SeriesBuilder::F32(v) => v.iter().for_each(|&x| self.push(f64::from(x))),
            SeriesBuilder::F64(v) => v.iter().for_each(|&x| self.push(x)),
        }
    }

    /// The values from index `from` on, as a new series with its own pyramid.
    pub fn tail(&self, from: usize) -> Series {
        match self {
            Series::F32(t) => Series::F32(Typed::new(t.values.get(from..).unwrap_or(&[]).to_vec())),
            Series::F64(t) => Series::F64(Typed::new(t.values.get(from..).unwrap_or(&[]).to_vec())),
        }
    }

    /// Min and max over samples `lo..hi` (absent ones skipped).
    pub fn min_max(&self, lo: usize, hi: usize) -> Option<(f64, f64)> {
        match self {
            Series::F32(t) => t.min_max(lo, hi),
            Series::F64(t) => t.min_max(lo, hi),
        }
    }

    /// Min and max of block `j` of pyramid level `k`.
    #[inline]
    pub fn block(&self, k: usize, j: usize) -> Option<(f64, f64)> {
        match self {
            Series::F32(t) => t.block(k, j),
            Series::F64(t) => t.block(k, j),
        }
    }

    /// Number of pyramid levels.
    pub fn level_count(&self) -> usize {
        match self {
            Series::F32(t) => t.level_count(),
            Series::F64(t) => t.level_count(),
        }
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        match self {
            Series::F32(t) => t.heap_bytes(),
            Series::F64(t) => t.heap_bytes(),
        }
    }
}

/// Collects a column while loading, then builds its [`Series`].
#[derive(Debug, Clone)]
pub enum SeriesBuilder {
    /// Still `f32`.
    F32(Vec<f32>),
    /// Switched to `f64`.
    F64(Vec<f64>),
}

impl Default for SeriesBuilder {
    fn default() -> Self {
        SeriesBuilder::F32(Vec::new())
    }
}

impl SeriesBuilder {
    /// A builder already holding `absent` absent values (a leaf first seen late).
    pub fn with_absent(absent: usize) -> Self {
        SeriesBuilder::F32(vec![f32::NAN; absent])
    }

    /// Like [`SeriesBuilder::with_absent`], with room for `capacity` values.
    pub fn with_absent_and_capacity(absent: usize, capacity: usize) -> Self {
        let mut v = Vec::with_capacity(capacity.max(absent));
        v.resize(absent, f32::NAN);
        SeriesBuilder::F32(v)
    }

    /// Number of values pushed.
    pub fn len(&self) -> usize {
        match self {
            SeriesBuilder::F32(v) => v.len(),
            SeriesBuilder::F64(v) => v.len(),
        }
    }

    /// True when nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes the first `n` values (all of them when there are fewer).
    pub fn drain_front(&mut self, n: usize) {
        match self {
            SeriesBuilder::F32(v) => drop(v.drain(..n.min(v.len()))),
            SeriesBuilder::F64(v) => drop(v.drain(..n.min(v.len()))),
        }
    }

    /// Appends one value (NaN for absent).
    #[inline]
    pub fn push(&mut self, v: f64) {
        match self {
            SeriesBuilder::F32(values) => {
                let narrow = v as f32;
                if f64::from(narrow) == v || v.is_nan() {
                    values.push(narrow);
                } else {
                    let mut wide: Vec<f64> = Vec::with_capacity(values.capacity().max(16));
                    wide.extend(values.iter().map(|&x| f64::from(x)));
                    wide.push(v);
                    *self = SeriesBuilder::F64(wide);
                }
            }
            SeriesBuilder::F64(values) => values.push(v),
        }
    }

    /// Joins pieces end to end, widening to `f64` if any piece is; a `None` piece stands for
    /// `len` absent values. Each piece is freed once copied.
    pub fn concat(pieces: Vec<(Option<SeriesBuilder>, usize)>) -> SeriesBuilder {
        if let [(Some(_), _)] = pieces.as_slice() {
            return pieces
                .into_iter()
                .next()
                .and_then(|(p, _)| p)
                .unwrap_or_default();
        }
        let total: usize = pieces.iter().map(|(_, n)| n).sum();
        if pieces
            .iter()
            .any(|(p, _)| matches!(p, Some(SeriesBuilder::F64(_))))
        {
            let mut out: Vec<f64> = Vec::with_capacity(total);
            for (piece, len) in pieces {
                match piece {
                    Some(SeriesBuilder::F64(v)) => out.extend_from_slice(&v),
                    Some(SeriesBuilder::F32(v)) => out.extend(v.iter().map(|&x| f64::from(x))),
                    None => out.resize(out.len() + len, f64::NAN),
                }
            }
            SeriesBuilder::F64(out)
        } else {
            let mut out: Vec<f32> = Vec::with_capacity(total);
            for (piece, len) in pieces {
                match piece {
                    Some(SeriesBuilder::F32(v)) => out.extend_from_slice(&v),
                    Some(SeriesBuilder::F64(_)) => {}
                    None => out.resize(out.len() + len, f32::NAN),
                }
            }
            SeriesBuilder::F32(out)
        }
    }

    /// Reorders values: the result's `i`th value is the `order[i]`th of this one.
    pub fn permute(&self, order: &[usize]) -> SeriesBuilder {
        match self {
            SeriesBuilder::F32(v) => SeriesBuilder::F32(
                order
                    .iter()
                    .map(|&i| v.get(i).copied().unwrap_or(f32::NAN))
                    .collect(),
            ),
            SeriesBuilder::F64(v) => SeriesBuilder::F64(
                order
                    .iter()
                    .map(|&i| v.get(i).copied().unwrap_or(f64::NAN))
                    .collect(),
            ),
        }
    }

    /// Freezes into a [`Series`] with its pyramid.
    pub fn finish(self) -> Series {
        match self {
            SeriesBuilder::F32(mut v) => {
                v.shrink_to_fit();
                Series::F32(Typed::new(v))
            }
            SeriesBuilder::F64(mut v) => {
                v.shrink_to_fit();
                Series::F64(Typed::new(v))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushing_one_by_one_builds_the_same_pyramid() {
        for n in [0usize, 1, 15, 16, 17, 255, 256, 257, 5_000] {
            let values: Vec<f64> = (0..n)
                .map(|i| {
                    if i % 97 == 5 {
                        f64::NAN
                    } else {
                        ((i * 7919) % 1013) as f64
                    }
                })
                .collect();
            let whole = Typed::new(values.clone());
            let mut grown = Typed::default();
            for &v in &values {
                grown.push(v);
            }
            assert_eq!(grown.level_count(), whole.level_count(), "n = {n}");
            for k in 0..whole.level_count() {
                let same = whole.level(k).iter().zip(grown.level(k)).all(|(a, b)| {
                    (a.0 == b.0 || (a.0.is_nan() && b.0.is_nan()))
                        && (a.1 == b.1 || (a.1.is_nan() && b.1.is_nan()))
                });
                assert!(
                    same && whole.level(k).len() == grown.level(k).len(),
                    "n = {n}, level {k}"
                );
            }
        }
    }

    fn brute(v: &[f64], lo: usize, hi: usize) -> Option<(f64, f64)> {
        let mut acc: Option<(f64, f64)> = None;
        for &x in v.get(lo..hi).unwrap_or(&[]) {
            if x.is_nan() {
                continue;
            }
            acc = Some(match acc {
                None => (x, x),
                Some((a, b)) => (a.min(x), b.max(x)),
            });
        }
        acc
    }

    #[test]
    fn min_max_matches_brute_force() {
        let n = 5000;
        let values: Vec<f64> = (0..n)
            .map(|i| {
                if i % 97 == 3 {
                    f64::NAN
                } else {
                    ((i * 7919) % 1013) as f64 - 500.0
                }
            })
            .collect();
        let mut b = SeriesBuilder::default();
        for &v in &values {
            b.push(v);
        }
        let s = b.finish();
        assert!(matches!(s, Series::F32(_)));
        for (lo, hi) in [
            (0, n),
            (1, 2),
            (5, 300),
            (16, 32),
            (15, 4097),
            (4000, 5000),
            (7, 7),
        ] {
            assert_eq!(s.min_max(lo, hi), brute(&values, lo, hi), "{lo}..{hi}");
        }
        for lo in (0..n).step_by(137) {
            for hi in (lo..n).step_by(311) {
                assert_eq!(s.min_max(lo, hi), brute(&values, lo, hi), "{lo}..{hi}");
            }
        }
    }

    #[test]
    fn widens_to_f64_when_needed() {
        let mut b = SeriesBuilder::default();
        b.push(1.5);
        b.push(48.775_812_345);
        let s = b.finish();
        assert!(matches!(s, Series::F64(_)));
        assert_eq!(s.value(0), Some(1.5));
        assert_eq!(s.value(1), Some(48.775_812_345));
    }

    #[test]
    fn concat_widens_and_fills_absent() {
        let mut a = SeriesBuilder::default();
        a.push(1.0);
        a.push(2.0);
        let mut b = SeriesBuilder::default();
        b.push(48.775_812_345);
        let joined = SeriesBuilder::concat(vec![(Some(a.clone()), 2), (None, 2), (Some(b), 1)]);
        let s = joined.finish();
        assert!(matches!(s, Series::F64(_)));
        assert_eq!(s.len(), 5);
        assert_eq!(s.value(1), Some(2.0));
        assert!(s.value(2).is_some_and(f64::is_nan));
        assert_eq!(s.value(4), Some(48.775_812_345));
        let narrow = SeriesBuilder::concat(vec![(None, 1), (Some(a), 2)]).finish();
        assert!(matches!(narrow, Series::F32(_)));
        assert_eq!(narrow.len(), 3);
        assert_eq!(narrow.value(2), Some(2.0));
    }

    #[test]
    fn all_absent_is_none() {
        let s = SeriesBuilder::with_absent(100).finish();
        assert_eq!(s.min_max(0, 100), None);
        assert_eq!(s.len(), 100);
    }
}
