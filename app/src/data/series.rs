//! One numeric signal's values plus its min/max pyramid, so any time window reduces to a
//! per-pixel-column envelope in time that does not grow with the number of samples.
//!
//! Values start as `f32` and switch to `f64` the first time a value does not survive the round
//! trip (a latitude, a nanosecond counter), so most columns cost 4 bytes a sample; a column whose
//! every sample holds the same value bit for bit (a covariance, a frame's fixed axis) is a
//! [`Constant`] and costs nothing a sample, until a different value arrives. Absent values
//! (a message that did not carry the leaf, a decode error) are the canonical NaN and skipped by
//! min/max. A NaN the recording itself holds is stored as [`DATA_NAN`] (a NaN with a payload),
//! so it can be told apart from an absent value; it and the infinities are kept out of the
//! pyramid's min/max (they would blank a plot's scale) and recorded as flags instead.

/// Samples summarised by one pyramid entry, and the fan-out between levels.
pub const FANOUT: usize = 16;

/// A NaN the recording holds (not an absent value): a quiet NaN with payload 1.
pub const DATA_NAN: f64 = f64::from_bits(0x7ff8_0000_2000_0000);

/// [`DATA_NAN`] as `f32` (the same payload: widening keeps it).
const DATA_NAN_F32: f32 = f32::from_bits(0x7fc0_0001);

/// Flag: some sample is `+inf`.
pub const POS_INF: u8 = 1;
/// Flag: some sample is `-inf`.
pub const NEG_INF: u8 = 2;
/// Flag: some sample is a NaN the recording holds ([`DATA_NAN`]).
pub const NAN: u8 = 4;

/// True for a value that is absent (NaN, but not [`DATA_NAN`]).
#[inline]
pub fn is_absent(v: f64) -> bool {
    v.is_nan() && v.to_bits() != DATA_NAN.to_bits()
}

/// The non-finite flag of one value ([`POS_INF`], [`NEG_INF`], [`NAN`]; 0 for a finite or
/// absent value).
#[inline]
pub fn flag_of(v: f64) -> u8 {
    if v.is_finite() {
        0
    } else if v == f64::INFINITY {
        POS_INF
    } else if v == f64::NEG_INFINITY {
        NEG_INF
    } else if is_absent(v) {
        0
    } else {
        NAN
    }
}

/// `v` narrowed to `f32` when that loses nothing (an absent value or [`DATA_NAN`] keeps what
/// it is), `None` when it needs `f64`.
#[inline]
fn narrow(v: f64) -> Option<f32> {
    if v.is_nan() {
        return Some(if is_absent(v) { f32::NAN } else { DATA_NAN_F32 });
    }
    let n = v as f32;
    (f64::from(n) == v).then_some(n)
}

/// A value type a column can hold.
pub trait Sample: Copy + PartialOrd + Send + Sync + 'static {
    /// The absent value.
    const NAN: Self;
    /// Positive infinity (where a running minimum starts).
    const INFINITY: Self;
    /// Negative infinity (where a running maximum starts).
    const NEG_INFINITY: Self;
    /// Widens to `f64` ([`DATA_NAN`] stays one).
    fn to_f64(self) -> f64;
    /// True for a finite value.
    fn finite(self) -> bool;
}

impl Sample for f32 {
    const NAN: Self = f32::NAN;
    const INFINITY: Self = f32::INFINITY;
    const NEG_INFINITY: Self = f32::NEG_INFINITY;
    #[inline]
    fn to_f64(self) -> f64 {
        if self.is_nan() {
            // Widening keeps a payload on the machines we build for, but the language does
            // not promise it: say it explicitly.
            if self.to_bits() == DATA_NAN_F32.to_bits() {
                DATA_NAN
            } else {
                f64::NAN
            }
        } else {
            f64::from(self)
        }
    }
    #[inline]
    fn finite(self) -> bool {
        self.is_finite()
    }
}

impl Sample for f64 {
    const NAN: Self = f64::NAN;
    const INFINITY: Self = f64::INFINITY;
    const NEG_INFINITY: Self = f64::NEG_INFINITY;
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline]
    fn finite(self) -> bool {
        self.is_finite()
    }
}

/// What a range of samples holds: the finite min and max (`None` when no sample is finite)
/// and the flags of the non-finite values present.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    /// Smallest and largest finite value.
    pub min_max: Option<(f64, f64)>,
    /// [`POS_INF`] | [`NEG_INF`] | [`NAN`] for what is present.
    pub flags: u8,
}

/// Values of one type with their pyramid: `levels[k][j]` is the (min, max) of the finite raw
/// samples `j * FANOUT^(k+1) .. (j+1) * FANOUT^(k+1)` (NaN when none is finite) and
/// `flags[k][j]` says which non-finite values they hold.
#[derive(Debug, Clone, Default)]
pub struct Typed<T> {
    /// Raw values, one per message of the topic.
    pub values: Vec<T>,
    levels: Vec<Vec<(T, T)>>,
    flags: Vec<Vec<u8>>,
    /// Every flag any value sets: when 0 (no value is infinite or a NaN the recording holds,
    /// as for most signals), ranges skip reading `flags`, which saves a cache line per level
    /// at each end of a pixel column.
    any_flags: u8,
    /// For a column of 64-bit integers some of which `f64` rounds: per value, the exact
    /// integer minus the value as `f64` (at most 2048 away for 64-bit integers); empty when
    /// every value is exact.
    residual: Vec<i16>,
}

/// Folds one finite (min, max) pair into `acc`; a NaN pair (nothing finite) is skipped.
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

/// Folds one raw value: finite ones into `acc`, the others into `flags`.
#[inline]
fn fold_value<T: Sample>(acc: &mut Option<(T, T)>, flags: &mut u8, v: T) {
    if v.finite() {
        fold(acc, v, v);
    } else {
        *flags |= flag_of(v.to_f64());
    }
}

/// (min, max) and flags of each group of raw values.
fn summarise_values<T: Sample>(values: &[T]) -> (Vec<(T, T)>, Vec<u8>) {
    values
        .chunks(FANOUT)
        .map(|c| {
            let (mut acc, mut flags) = (None, 0u8);
            for &v in c {
                fold_value(&mut acc, &mut flags, v);
            }
            (acc.unwrap_or((T::NAN, T::NAN)), flags)
        })
        .unzip()
}

/// (min, max) and flags of each group of blocks of the level below.
fn summarise_blocks<T: Sample>(pairs: &[(T, T)], flags: &[u8]) -> (Vec<(T, T)>, Vec<u8>) {
    pairs
        .chunks(FANOUT)
        .zip(flags.chunks(FANOUT))
        .map(|(p, f)| {
            let mut acc = None;
            for &(lo, hi) in p {
                fold(&mut acc, lo, hi);
            }
            (
                acc.unwrap_or((T::NAN, T::NAN)),
                f.iter().fold(0, |a, &b| a | b),
            )
        })
        .unzip()
}

impl<T: Sample> Typed<T> {
    /// Builds the pyramid over `values`: level 0 whenever there are values, and level `k + 1`
    /// while level `k` has more than `FANOUT` blocks (the rule [`time_levels`] follows).
    ///
    /// [`time_levels`]: crate::data::topic_data::time_levels
    pub fn new(values: Vec<T>) -> Self {
        let mut levels: Vec<Vec<(T, T)>> = Vec::new();
        let mut flags: Vec<Vec<u8>> = Vec::new();
        if !values.is_empty() {
            let (l, f) = summarise_values(&values);
            levels.push(l);
            flags.push(f);
        }
        while let (Some(top), Some(top_flags)) =
            (levels.last().filter(|l| l.len() > FANOUT), flags.last())
        {
            let (l, f) = summarise_blocks(top, top_flags);
            levels.push(l);
            flags.push(f);
        }
        levels.shrink_to_fit();
        flags.shrink_to_fit();
        let any_flags = flags.first().map_or(0, |f| f.iter().fold(0, |a, &b| a | b));
        Self {
            values,
            levels,
            flags,
            any_flags,
            residual: Vec::new(),
        }
    }

    /// Appends one value and keeps the pyramid exact: the last block of each level holds the
    /// min and max of what it has so far, and levels appear as [`Typed::new`] would have them
    /// (level `k` once there are more than `FANOUT^(k+1)` values; level 0 from the first).
    pub fn push(&mut self, v: T) {
        let i = self.values.len();
        self.values.push(v);
        self.any_flags |= flag_of(v.to_f64());
        let n = i + 1;
        let mut block = FANOUT;
        for k in 0.. {
            if k == self.levels.len() {
                if k > 0 && n <= block {
                    break;
                }
                // A new level: summarise the one below (or the values) in blocks.
                let (l, f) = if k == 0 {
                    summarise_values(&self.values)
                } else {
                    match (self.levels.get(k - 1), self.flags.get(k - 1)) {
                        (Some(p), Some(f)) => summarise_blocks(p, f),
                        _ => break,
                    }
                };
                self.levels.push(l);
                self.flags.push(f);
            } else {
                let j = i / block;
                let (Some(level), Some(flags)) = (self.levels.get_mut(k), self.flags.get_mut(k))
                else {
                    break;
                };
                if j == level.len() {
                    let (mut acc, mut f) = (None, 0u8);
                    fold_value(&mut acc, &mut f, v);
                    level.push(acc.unwrap_or((T::NAN, T::NAN)));
                    flags.push(f);
                } else if let (Some(slot), Some(f)) = (level.get_mut(j), flags.get_mut(j)) {
                    let mut acc = if slot.0.partial_cmp(&slot.0).is_some() {
                        Some(*slot)
                    } else {
                        None
                    };
                    fold_value(&mut acc, f, v);
                    *slot = acc.unwrap_or((T::NAN, T::NAN));
                }
            }
            block = block.saturating_mul(FANOUT);
        }
    }

    /// Finite min and max of samples `lo..hi`; `None` when none is finite.
    pub fn min_max(&self, lo: usize, hi: usize) -> Option<(f64, f64)> {
        self.summary(lo, hi).min_max
    }

    /// What samples `lo..hi` hold, read from the pyramid: O(FANOUT x levels), not O(hi - lo).
    pub fn summary(&self, lo: usize, hi: usize) -> Summary {
        let hi = hi.min(self.values.len());
        if lo >= hi {
            return Summary::default();
        }
        // A running min and max from the infinities: a finite value always replaces them, so
        // min > max at the end says nothing finite was met.
        let mut acc = (T::INFINITY, T::NEG_INFINITY);
        let mut flags = 0u8;
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
                self.scan(level, lo, hi_c, &mut acc, &mut flags);
                break;
            }
            self.scan(level, lo, lo_up * FANOUT, &mut acc, &mut flags);
            self.scan(level, hi_up * FANOUT, hi_c, &mut acc, &mut flags);
            lo = lo_up;
            hi = hi_up;
            level += 1;
        }
        let (min, max) = acc;
        Summary {
            min_max: (min <= max).then(|| (min.to_f64(), max.to_f64())),
            flags,
        }
    }

    /// Folds `lo..hi` of `level` into the running (min, max) `acc` and `flags`: raw values
    /// when finite (the others into `flags`), pyramid pairs as they are (a NaN pair, a block
    /// with nothing finite, compares false and changes nothing). The comparisons are those of
    /// [`fold`], in the same order, so the result is the same to the sign of a zero.
    #[inline]
    fn scan(&self, level: usize, lo: usize, hi: usize, acc: &mut (T, T), flags: &mut u8) {
        let (mut min, mut max) = *acc;
        if level == 0 {
            if let Some(s) = self.values.get(lo..hi) {
                for &v in s {
                    if v.finite() {
                        if v < min {
                            min = v;
                        }
                        if v > max {
                            max = v;
                        }
                    } else {
                        *flags |= flag_of(v.to_f64());
                    }
                }
            }
        } else if let Some(s) = self.levels.get(level - 1).and_then(|l| l.get(lo..hi)) {
            for &(a, b) in s {
                if a < min {
                    min = a;
                }
                if b > max {
                    max = b;
                }
            }
            if self.any_flags != 0
                && let Some(f) = self.flags.get(level - 1).and_then(|l| l.get(lo..hi))
            {
                *flags |= f.iter().fold(0, |a, &b| a | b);
            }
        }
        *acc = (min, max);
    }

    /// Finite min and max of block `j` of pyramid level `k` (blocks of `FANOUT^(k+1)`
    /// samples).
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
            + self.flags.iter().map(Vec::capacity).sum::<usize>()
            + self.residual.capacity() * 2
    }
}

/// `exact` as the `f64` a column holds, and what that `f64` misses of it.
#[inline]
pub fn split_exact(exact: i128) -> (f64, i16) {
    let v = exact as f64;
    // Integers past 2^53 are spaced at most 4096 apart up to 2^64: the rest fits an i16.
    (v, i16::try_from(exact - v as i128).unwrap_or(0))
}

/// A column whose every sample holds one value, bit for bit (an absent value counts as one):
/// stored once, with no pyramid, answering every question a [`Typed`] column answers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Constant {
    /// The value (NaN: absent; [`DATA_NAN`]: a NaN the recording holds).
    pub value: f64,
    /// For a 64-bit integer `f64` rounds, what the value misses of it (see [`split_exact`]).
    pub residual: i16,
    /// Number of samples.
    pub len: usize,
}

impl Default for Constant {
    fn default() -> Self {
        Constant {
            value: f64::NAN,
            residual: 0,
            len: 0,
        }
    }
}

impl Constant {
    /// True when `v` with `residual` is this column's value, bit for bit (or the column is
    /// empty, so any value is).
    #[inline]
    fn holds(&self, v: f64, residual: i16) -> bool {
        self.len == 0 || (v.to_bits() == self.value.to_bits() && residual == self.residual)
    }

    /// Appends `v` (with `residual`) when it is this column's value; false when it is not.
    #[inline]
    fn try_push(&mut self, v: f64, residual: i16) -> bool {
        if !self.holds(v, residual) {
            return false;
        }
        if self.len == 0 {
            (self.value, self.residual) = (v, residual);
        }
        self.len += 1;
        true
    }

    /// The pyramid levels a [`Typed`] column of as many samples would have.
    fn level_count(&self) -> usize {
        let mut levels = 0;
        let mut blocks = self.len.div_ceil(FANOUT);
        if self.len > 0 {
            levels = 1;
            while blocks > FANOUT {
                blocks = blocks.div_ceil(FANOUT);
                levels += 1;
            }
        }
        levels
    }

    /// What samples `lo..hi` hold.
    fn summary(&self, lo: usize, hi: usize) -> Summary {
        if lo >= hi.min(self.len) {
            return Summary::default();
        }
        Summary {
            min_max: self.value.is_finite().then_some((self.value, self.value)),
            flags: flag_of(self.value),
        }
    }

    /// The same samples as a column of values, with room for `capacity`.
    fn to_builder(self, capacity: usize) -> SeriesBuilder {
        let room = capacity.max(self.len);
        if self.residual != 0 {
            let mut values = Vec::with_capacity(room);
            values.resize(self.len, self.value);
            let mut residual = Vec::with_capacity(room);
            residual.resize(self.len, self.residual);
            return SeriesBuilder::Exact(values, residual);
        }
        if let Some(n) = narrow(self.value) {
            let mut values = Vec::with_capacity(room);
            values.resize(self.len, n);
            SeriesBuilder::F32(values)
        } else {
            let mut values = Vec::with_capacity(room);
            values.resize(self.len, self.value);
            SeriesBuilder::F64(values)
        }
    }
}

/// A value column: one value stored once, `f32` unless some value needs `f64`.
#[derive(Debug, Clone)]
pub enum Series {
    /// Every sample holds the same value.
    Const(Constant),
    /// Every value survives a round trip through `f32`.
    F32(Typed<f32>),
    /// Some value needs `f64`.
    F64(Typed<f64>),
}

impl Default for Series {
    /// An empty column (constant until it holds two different values).
    fn default() -> Self {
        Series::Const(Constant::default())
    }
}

impl Series {
    /// A column of `values`, in order (NaN as a value the recording holds).
    pub fn from_values(values: &[f64]) -> Series {
        let mut b = SeriesBuilder::default();
        values.iter().for_each(|&v| b.push(v));
        b.finish()
    }

    /// Sample `i` as an exact integer: for a 64-bit integer `f64` rounds, the integer the
    /// message carried; else the value when it is a whole number. `None` when absent, not
    /// whole or past the end.
    pub fn exact(&self, i: usize) -> Option<i128> {
        let v = self.value(i)?;
        if !v.is_finite() || v.fract() != 0.0 || v.abs() >= 1.8e19 * 2.0 {
            return None;
        }
        Some(v as i128 + i128::from(self.residual(i)))
    }

    /// What the `f64` of sample `i` misses of the 64-bit integer the message carried
    /// (see [`split_exact`]); 0 for every other value.
    #[inline]
    pub fn residual(&self, i: usize) -> i16 {
        match self {
            Series::Const(c) if i < c.len => c.residual,
            Series::F64(t) => t.residual.get(i).copied().unwrap_or(0),
            Series::Const(_) | Series::F32(_) => 0,
        }
    }

    /// The value of sample `i` (NaN when absent), `None` past the end.
    #[inline]
    pub fn value(&self, i: usize) -> Option<f64> {
        match self {
            Series::Const(c) => (i < c.len).then_some(c.value),
            Series::F32(t) => t.values.get(i).map(|v| v.to_f64()),
            Series::F64(t) => t.values.get(i).copied(),
        }
    }

    /// Appends the values of samples `range` (as many as there are) to `out`.
    pub fn copy_values(&self, range: std::ops::Range<usize>, out: &mut Vec<f64>) {
        match self {
            Series::Const(c) => {
                let n = range.len().min(c.len.saturating_sub(range.start));
                out.extend(std::iter::repeat_n(c.value, n));
            }
            Series::F32(t) => {
                let values = t
                    .values
                    .get(range.start.min(t.values.len())..)
                    .unwrap_or(&[]);
                let n = range.len().min(values.len());
                out.extend(values.iter().take(n).map(|v| v.to_f64()));
            }
            Series::F64(t) => {
                let values = t
                    .values
                    .get(range.start.min(t.values.len())..)
                    .unwrap_or(&[]);
                out.extend_from_slice(values.get(..range.len().min(values.len())).unwrap_or(&[]));
            }
        }
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        match self {
            Series::Const(c) => c.len,
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
            Series::Const(c) => {
                if !c.try_push(v, 0) {
                    *self = c.to_builder(c.len + 1).finish_values();
                    self.push(v);
                }
            }
            Series::F32(t) => {
                if let Some(n) = narrow(v) {
                    t.push(n);
                } else {
                    let mut wide: Vec<f64> = t.values.iter().map(|&x| x.to_f64()).collect();
                    wide.push(v);
                    *self = Series::F64(Typed::new(wide));
                }
            }
            Series::F64(t) => {
                t.push(v);
                if !t.residual.is_empty() {
                    t.residual.push(0);
                }
            }
        }
    }

    /// Appends `v` whose exact integer is `v + residual` ([`split_exact`]).
    pub fn push_exact(&mut self, v: f64, residual: i16) {
        if let Series::Const(c) = self {
            if c.try_push(v, residual) {
                return;
            }
            *self = c.to_builder(c.len + 1).finish_values();
        }
        if residual == 0 {
            self.push(v);
            return;
        }
        if let Series::F32(t) = self {
            let wide: Vec<f64> = t.values.iter().map(|&x| x.to_f64()).collect();
            *self = Series::F64(Typed::new(wide));
        }
        if let Series::F64(t) = self {
            t.residual.resize(t.values.len(), 0);
            t.push(v);
            t.residual.push(residual);
        }
    }

    /// Appends every value of `values`, as [`Series::push`] would one by one.
    pub fn extend(&mut self, values: &SeriesBuilder) {
        match values {
            SeriesBuilder::Const(c, _) => {
                if let Series::Const(own) = self
                    && own.holds(c.value, c.residual)
                {
                    if own.len == 0 {
                        *own = *c;
                    } else {
                        own.len += c.len;
                    }
                } else {
                    (0..c.len).for_each(|_| self.push_exact(c.value, c.residual));
                }
            }
            SeriesBuilder::F32(v) => v.iter().for_each(|&x| self.push(x.to_f64())),
            SeriesBuilder::F64(v) => v.iter().for_each(|&x| self.push(x)),
            SeriesBuilder::Exact(v, r) => {
                v.iter().zip(r).for_each(|(&x, &r)| self.push_exact(x, r))
            }
        }
    }

    /// The values from index `from` on, as a new series with its own pyramid.
    pub fn tail(&self, from: usize) -> Series {
        match self {
            Series::Const(c) => Series::Const(Constant {
                len: c.len.saturating_sub(from),
                ..*c
            }),
            Series::F32(t) => Series::F32(Typed::new(t.values.get(from..).unwrap_or(&[]).to_vec())),
            Series::F64(t) => {
                let mut tail = Typed::new(t.values.get(from..).unwrap_or(&[]).to_vec());
                tail.residual = t.residual.get(from..).unwrap_or(&[]).to_vec();
                Series::F64(tail)
            }
        }
    }

    /// Finite min and max over samples `lo..hi` (absent and non-finite ones skipped).
    pub fn min_max(&self, lo: usize, hi: usize) -> Option<(f64, f64)> {
        self.summary(lo, hi).min_max
    }

    /// What samples `lo..hi` hold: finite min and max, and which non-finite values.
    pub fn summary(&self, lo: usize, hi: usize) -> Summary {
        match self {
            Series::Const(c) => c.summary(lo, hi),
            Series::F32(t) => t.summary(lo, hi),
            Series::F64(t) => t.summary(lo, hi),
        }
    }

    /// Min and max of block `j` of pyramid level `k` (for a constant column, the value when
    /// finite and the block exists, as a [`Typed`] column of the same samples would say).
    #[inline]
    pub fn block(&self, k: usize, j: usize) -> Option<(f64, f64)> {
        match self {
            Series::Const(c) => {
                let size = FANOUT.checked_pow(u32::try_from(k + 1).ok()?)?;
                (k < c.level_count() && j < c.len.div_ceil(size) && c.value.is_finite())
                    .then_some((c.value, c.value))
            }
            Series::F32(t) => t.block(k, j),
            Series::F64(t) => t.block(k, j),
        }
    }

    /// Number of pyramid levels (for a constant column, as many as a [`Typed`] column of the
    /// same samples would have).
    pub fn level_count(&self) -> usize {
        match self {
            Series::Const(c) => c.level_count(),
            Series::F32(t) => t.level_count(),
            Series::F64(t) => t.level_count(),
        }
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        match self {
            Series::Const(_) => 0,
            Series::F32(t) => t.heap_bytes(),
            Series::F64(t) => t.heap_bytes(),
        }
    }
}

/// Collects a column while loading, then builds its [`Series`]. It starts constant and holds
/// values from the first sample that differs.
#[derive(Debug, Clone)]
pub enum SeriesBuilder {
    /// Every value so far is the same; the room to reserve once they differ.
    Const(Constant, usize),
    /// Still `f32`.
    F32(Vec<f32>),
    /// Switched to `f64`.
    F64(Vec<f64>),
    /// `f64` with the residuals of 64-bit integers it rounds (see [`split_exact`]).
    Exact(Vec<f64>, Vec<i16>),
}

impl Default for SeriesBuilder {
    fn default() -> Self {
        SeriesBuilder::Const(Constant::default(), 0)
    }
}

impl SeriesBuilder {
    /// A builder already holding `absent` absent values (a leaf first seen late).
    pub fn with_absent(absent: usize) -> Self {
        Self::with_absent_and_capacity(absent, 0)
    }

    /// Like [`SeriesBuilder::with_absent`], with room for `capacity` values once they differ.
    pub fn with_absent_and_capacity(absent: usize, capacity: usize) -> Self {
        let absent = Constant {
            len: absent,
            ..Constant::default()
        };
        SeriesBuilder::Const(absent, capacity)
    }

    /// Number of values pushed.
    pub fn len(&self) -> usize {
        match self {
            SeriesBuilder::Const(c, _) => c.len,
            SeriesBuilder::F32(v) => v.len(),
            SeriesBuilder::F64(v) | SeriesBuilder::Exact(v, _) => v.len(),
        }
    }

    /// True when nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes the first `n` values (all of them when there are fewer).
    pub fn drain_front(&mut self, n: usize) {
        match self {
            SeriesBuilder::Const(c, _) => c.len = c.len.saturating_sub(n),
            SeriesBuilder::F32(v) => drop(v.drain(..n.min(v.len()))),
            SeriesBuilder::F64(v) => drop(v.drain(..n.min(v.len()))),
            SeriesBuilder::Exact(v, r) => {
                drop(v.drain(..n.min(v.len())));
                drop(r.drain(..n.min(r.len())));
            }
        }
    }

    /// Appends one value (NaN for absent).
    #[inline(always)]
    pub fn push(&mut self, v: f64) {
        match self {
            SeriesBuilder::Const(c, _) => {
                if c.try_push(v, 0) {
                    return;
                }
            }
            SeriesBuilder::F32(values) => {
                if let Some(n) = narrow(v) {
                    values.push(n);
                    return;
                }
            }
            SeriesBuilder::F64(values) => return values.push(v),
            SeriesBuilder::Exact(values, residual) => {
                values.push(v);
                return residual.push(0);
            }
        }
        self.change_and_push(v);
    }

    /// Appends `v`, which the column as it is cannot hold: a constant's first different
    /// value, or an `f32` column's first value that needs `f64`.
    #[cold]
    #[inline(never)]
    fn change_and_push(&mut self, v: f64) {
        match self {
            SeriesBuilder::Const(c, capacity) => *self = c.to_builder(*capacity),
            SeriesBuilder::F32(values) => {
                let mut wide: Vec<f64> = Vec::with_capacity(values.capacity().max(16));
                wide.extend(values.iter().map(|&x| x.to_f64()));
                *self = SeriesBuilder::F64(wide);
            }
            SeriesBuilder::F64(_) | SeriesBuilder::Exact(..) => {}
        }
        self.push(v);
    }

    /// Appends a 64-bit signed integer exactly.
    #[inline(always)]
    pub fn push_i64(&mut self, v: i64) {
        // Up to 2^53 `f64` holds it: no 128-bit arithmetic on the common path.
        let f = v as f64;
        if v.unsigned_abs() <= 1 << 53 {
            self.push(f);
        } else if f.abs() < 9.2e18 {
            // Rounded, but back in range of i64: the residual without 128-bit arithmetic (a
            // nanosecond timestamp lands here).
            self.push_split(f, i16::try_from(v - f as i64).unwrap_or(0));
        } else {
            self.push_int(i128::from(v));
        }
    }

    /// Appends a 64-bit unsigned integer exactly.
    #[inline(always)]
    pub fn push_u64(&mut self, v: u64) {
        let f = v as f64;
        if v <= 1 << 53 {
            self.push(f);
        } else if f < 1.8e19 {
            self.push_split(
                f,
                i16::try_from(v.wrapping_sub(f as u64) as i64).unwrap_or(0),
            );
        } else {
            self.push_int(i128::from(v));
        }
    }

    /// Keeps the first `n` values.
    pub fn truncate(&mut self, n: usize) {
        match self {
            SeriesBuilder::Const(c, _) => c.len = c.len.min(n),
            SeriesBuilder::F32(v) => v.truncate(n),
            SeriesBuilder::F64(v) => v.truncate(n),
            SeriesBuilder::Exact(v, r) => {
                v.truncate(n);
                r.truncate(n);
            }
        }
    }

    /// Appends an integer exactly: as [`SeriesBuilder::push`] when `f64` holds it, else
    /// with its residual.
    #[inline]
    pub fn push_int(&mut self, exact: i128) {
        let (v, r) = split_exact(exact);
        self.push_split(v, r);
    }

    /// Appends the integer `v + r` ([`split_exact`]).
    #[inline]
    fn push_split(&mut self, v: f64, r: i16) {
        if let SeriesBuilder::Const(c, capacity) = self {
            if c.try_push(v, r) {
                return;
            }
            *self = c.to_builder(*capacity);
        }
        if r == 0 {
            self.push(v);
            return;
        }
        if let SeriesBuilder::Exact(values, residual) = self {
            values.push(v);
            residual.push(r);
            return;
        }
        // The first value f64 rounds: the column becomes f64 with residuals.
        let mut values = std::mem::take(self).into_f64s();
        let mut residual = vec![0; values.len()];
        values.push(v);
        residual.push(r);
        *self = SeriesBuilder::Exact(values, residual);
    }

    /// The values as `f64` (residuals left behind).
    fn into_f64s(self) -> Vec<f64> {
        match self {
            SeriesBuilder::Const(c, capacity) => {
                let mut values = Vec::with_capacity(capacity.max(c.len));
                values.resize(c.len, c.value);
                values
            }
            SeriesBuilder::F32(values) => values.iter().map(|&x| x.to_f64()).collect(),
            SeriesBuilder::F64(values) | SeriesBuilder::Exact(values, _) => values,
        }
    }

    /// The one value every piece holds (a `None` piece: absent), when there is one.
    fn common_constant(pieces: &[(Option<SeriesBuilder>, usize)]) -> Option<Constant> {
        let mut out = Constant::default();
        for (piece, len) in pieces {
            let c = match piece {
                Some(SeriesBuilder::Const(c, _)) => *c,
                None => Constant {
                    len: *len,
                    ..Constant::default()
                },
                Some(_) => return None,
            };
            if c.len == 0 {
                continue;
            }
            if !out.holds(c.value, c.residual) {
                return None;
            }
            out = Constant {
                len: out.len + c.len,
                ..c
            };
        }
        Some(out)
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
        if let Some(c) = Self::common_constant(&pieces) {
            return SeriesBuilder::Const(c, 0);
        }
        let total: usize = pieces.iter().map(|(_, n)| n).sum();
        // Constant pieces become values of their kind, so one rule joins every piece.
        let pieces = pieces.into_iter().map(|(piece, len)| match piece {
            Some(SeriesBuilder::Const(c, _)) => (Some(c.to_builder(0)), len),
            other => (other, len),
        });
        let pieces: Vec<_> = pieces.collect();
        if pieces
            .iter()
            .any(|(p, _)| matches!(p, Some(SeriesBuilder::Exact(..))))
        {
            let mut out: Vec<f64> = Vec::with_capacity(total);
            let mut residual: Vec<i16> = Vec::with_capacity(total);
            for (piece, len) in pieces {
                match piece {
                    Some(SeriesBuilder::Exact(v, r)) => {
                        out.extend_from_slice(&v);
                        residual.extend_from_slice(&r);
                    }
                    Some(SeriesBuilder::F64(v)) => out.extend_from_slice(&v),
                    Some(SeriesBuilder::F32(v)) => out.extend(v.iter().map(|&x| x.to_f64())),
                    Some(SeriesBuilder::Const(..)) | None => out.resize(out.len() + len, f64::NAN),
                }
                residual.resize(out.len(), 0);
            }
            return SeriesBuilder::Exact(out, residual);
        }
        if pieces
            .iter()
            .any(|(p, _)| matches!(p, Some(SeriesBuilder::F64(_))))
        {
            let mut out: Vec<f64> = Vec::with_capacity(total);
            for (piece, len) in pieces {
                match piece {
                    Some(SeriesBuilder::F64(v) | SeriesBuilder::Exact(v, _)) => {
                        out.extend_from_slice(&v)
                    }
                    Some(SeriesBuilder::F32(v)) => out.extend(v.iter().map(|&x| x.to_f64())),
                    Some(SeriesBuilder::Const(..)) | None => out.resize(out.len() + len, f64::NAN),
                }
            }
            SeriesBuilder::F64(out)
        } else {
            let mut out: Vec<f32> = Vec::with_capacity(total);
            for (piece, len) in pieces {
                match piece {
                    Some(SeriesBuilder::F32(v)) => out.extend_from_slice(&v),
                    Some(SeriesBuilder::F64(_) | SeriesBuilder::Exact(..)) => {}
                    Some(SeriesBuilder::Const(..)) | None => out.resize(out.len() + len, f32::NAN),
                }
            }
            SeriesBuilder::F32(out)
        }
    }

    /// Reorders values: the result's `i`th value is the `order[i]`th of this one.
    pub fn permute(&self, order: &[usize]) -> SeriesBuilder {
        match self {
            SeriesBuilder::Const(c, capacity) => {
                if order.iter().all(|&i| i < c.len) {
                    let len = if c.len == 0 { 0 } else { order.len() };
                    SeriesBuilder::Const(Constant { len, ..*c }, *capacity)
                } else {
                    c.to_builder(0).permute(order)
                }
            }
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
            SeriesBuilder::Exact(v, r) => SeriesBuilder::Exact(
                order
                    .iter()
                    .map(|&i| v.get(i).copied().unwrap_or(f64::NAN))
                    .collect(),
                order
                    .iter()
                    .map(|&i| r.get(i).copied().unwrap_or(0))
                    .collect(),
            ),
        }
    }

    /// Freezes into a [`Series`] with its pyramid (a constant stays one, with none).
    pub fn finish(self) -> Series {
        match self {
            SeriesBuilder::Const(c, _) => Series::Const(c),
            values => values.finish_values(),
        }
    }

    /// Freezes into a column of values with its pyramid, even when they are all the same.
    fn finish_values(self) -> Series {
        match self {
            SeriesBuilder::Const(c, _) => c.to_builder(0).finish_values(),
            SeriesBuilder::F32(mut v) => {
                v.shrink_to_fit();
                Series::F32(Typed::new(v))
            }
            SeriesBuilder::F64(mut v) => {
                v.shrink_to_fit();
                Series::F64(Typed::new(v))
            }
            SeriesBuilder::Exact(mut v, mut r) => {
                v.shrink_to_fit();
                r.shrink_to_fit();
                let mut t = Typed::new(v);
                t.residual = r;
                Series::F64(t)
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
    fn infinities_and_nan_are_flagged_not_folded_and_nan_is_not_absent() {
        let n = 3_000;
        let values: Vec<f64> = (0..n)
            .map(|i| match i % 211 {
                5 => f64::INFINITY,
                9 => f64::NEG_INFINITY,
                13 => DATA_NAN,
                17 => f64::NAN,
                _ => ((i * 7919) % 1013) as f64 - 500.0,
            })
            .collect();
        let mut b = SeriesBuilder::default();
        values.iter().for_each(|&v| b.push(v));
        let s = b.finish();
        assert!(matches!(s, Series::F32(_)));
        assert!(s.value(13).is_some_and(|v| v.is_nan() && !is_absent(v)));
        assert!(s.value(17).is_some_and(is_absent));
        let finite: Vec<f64> = values
            .iter()
            .map(|&v| if v.is_finite() { v } else { f64::NAN })
            .collect();
        for lo in (0..n).step_by(97) {
            for hi in (lo..n).step_by(389) {
                let flags = values
                    .get(lo..hi)
                    .unwrap_or(&[])
                    .iter()
                    .fold(0, |f, &v| f | flag_of(v));
                let want = Summary {
                    min_max: brute(&finite, lo, hi),
                    flags,
                };
                assert_eq!(s.summary(lo, hi), want, "{lo}..{hi}");
            }
        }
        // Grown one by one, the pyramid flags the same.
        let mut grown = Series::F32(Typed::default());
        values.iter().for_each(|&v| grown.push(v));
        assert_eq!(grown.summary(0, n), s.summary(0, n));
        assert_eq!(grown.summary(0, n).flags, POS_INF | NEG_INF | NAN);
    }

    #[test]
    fn all_absent_is_none() {
        let s = SeriesBuilder::with_absent(100).finish();
        assert_eq!(s.min_max(0, 100), None);
        assert_eq!(s.len(), 100);
    }

    /// Every question a column answers, asked of `a` and of `b` alike.
    fn assert_same_answers(a: &Series, b: &Series, what: &str) {
        assert_eq!(a.len(), b.len(), "{what}: len");
        assert_eq!(a.level_count(), b.level_count(), "{what}: levels");
        let n = a.len();
        for i in [0, 1, n / 2, n.saturating_sub(1), n, n + 1] {
            assert_eq!(
                a.value(i).map(f64::to_bits),
                b.value(i).map(f64::to_bits),
                "{what}: value {i}"
            );
            assert_eq!(a.exact(i), b.exact(i), "{what}: exact {i}");
            assert_eq!(a.residual(i), b.residual(i), "{what}: residual {i}");
        }
        for k in 0..a.level_count() + 1 {
            for j in [0, 1, 15, 16, 17, n / FANOUT, n / FANOUT + 1] {
                assert_eq!(a.block(k, j), b.block(k, j), "{what}: block {k} {j}");
            }
        }
        for (lo, hi) in [
            (0, n),
            (0, 0),
            (1, n),
            (n / 3, n / 2),
            (n, n + 5),
            (0, n + 9),
        ] {
            assert_eq!(a.summary(lo, hi), b.summary(lo, hi), "{what}: {lo}..{hi}");
        }
        let (mut va, mut vb) = (Vec::new(), Vec::new());
        a.copy_values(1..n + 3, &mut va);
        b.copy_values(1..n + 3, &mut vb);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&va), bits(&vb), "{what}: copied values");
        assert_same_tail(a, b, n / 2, what);
    }

    fn assert_same_tail(a: &Series, b: &Series, from: usize, what: &str) {
        let (ta, tb) = (a.tail(from), b.tail(from));
        assert_eq!(ta.len(), tb.len(), "{what}: tail");
        assert_eq!(
            ta.summary(0, ta.len()),
            tb.summary(0, tb.len()),
            "{what}: tail"
        );
    }

    #[test]
    fn a_constant_column_is_stored_once_and_answers_as_its_values_would() {
        let big = i128::from(u64::MAX) - 7;
        for n in [0usize, 1, 15, 16, 17, 255, 256, 257, 4097, 70_000] {
            let cases = [
                ("0.01", Ok(0.01)),
                ("-0", Ok(-0.0)),
                ("inf", Ok(f64::INFINITY)),
                ("nan", Ok(DATA_NAN)),
                ("absent", Ok(f64::NAN)),
                ("u64", Err(big)),
            ];
            for (what, value) in cases {
                let mut b = SeriesBuilder::default();
                for _ in 0..n {
                    match value {
                        Ok(v) => b.push(v),
                        Err(int) => b.push_int(int),
                    }
                }
                let values = b.clone().finish_values();
                let constant = b.finish();
                assert!(matches!(constant, Series::Const(_)), "{what} x {n}");
                assert_eq!(constant.heap_bytes(), 0);
                assert!(!matches!(values, Series::Const(_)));
                assert_same_answers(&constant, &values, &format!("{what} x {n}"));
                if n > 0 && what == "u64" {
                    assert_eq!(constant.exact(n - 1), Some(big));
                }
            }
        }
    }

    #[test]
    fn a_constant_column_holds_values_from_the_first_that_differs() {
        for n in [1usize, 16, 17, 300] {
            for (what, other) in [
                ("0.5", 0.5),
                ("f64", 0.1),
                ("-0", -0.0),
                ("absent", f64::NAN),
            ] {
                let mut values = vec![0.0; n];
                values.push(other);
                values.extend([0.0, 2.0]);
                // Built whole, grown from empty (as the live capture grows it), and
                // extended by a constant piece then the rest.
                let built = Series::from_values(&values);
                assert!(!matches!(built, Series::Const(_)), "{what}");
                let mut grown = Series::default();
                values.iter().for_each(|&v| grown.push(v));
                let mut extended = Series::default();
                extended.extend(&SeriesBuilder::Const(
                    Constant {
                        value: 0.0,
                        residual: 0,
                        len: n,
                    },
                    0,
                ));
                assert!(matches!(extended, Series::Const(_)));
                values.iter().skip(n).for_each(|&v| extended.push(v));
                let reference = SeriesBuilder::F64(values.clone()).finish_values();
                assert_same_answers(&built, &reference, &format!("built {what} {n}"));
                assert_same_answers(&grown, &reference, &format!("grown {what} {n}"));
                assert_same_answers(&extended, &reference, &format!("extended {what} {n}"));
            }
        }
        // A 64-bit integer that differs only in what f64 rounds away.
        let mut b = SeriesBuilder::default();
        b.push_int(i128::from(u64::MAX));
        b.push_int(i128::from(u64::MAX) - 1);
        let s = b.finish();
        assert!(!matches!(s, Series::Const(_)));
        assert_eq!(s.exact(1), Some(i128::from(u64::MAX) - 1));
    }

    #[test]
    fn constant_pieces_join_into_one_constant_and_differing_ones_into_values() {
        let piece = |v: f64, n: usize| {
            let mut b = SeriesBuilder::default();
            (0..n).for_each(|_| b.push(v));
            Some(b)
        };
        let same = SeriesBuilder::concat(vec![
            (piece(0.01, 3), 3),
            (piece(0.01, 0), 0),
            (piece(0.01, 4), 4),
        ]);
        assert!(matches!(same, SeriesBuilder::Const(c, _) if c.len == 7 && c.value == 0.01));
        let absent = SeriesBuilder::concat(vec![(None, 2), (piece(f64::NAN, 3), 3)]).finish();
        assert!(matches!(absent, Series::Const(c) if c.len == 5 && is_absent(c.value)));
        let mixed = SeriesBuilder::concat(vec![(piece(0.01, 3), 3), (None, 2), (piece(1.0, 2), 2)]);
        let s = mixed.finish();
        assert!(matches!(s, Series::F64(_)));
        let want = [0.01, 0.01, 0.01, f64::NAN, f64::NAN, 1.0, 1.0];
        let reference = SeriesBuilder::F64(want.to_vec()).finish_values();
        assert_same_answers(&s, &reference, "mixed");
        let narrow = SeriesBuilder::concat(vec![(piece(1.0, 2), 2), (None, 1)]).finish();
        assert!(matches!(narrow, Series::F32(_)));
        // Reordered (the loader sorts a window whose messages came out of time order).
        let order = [2, 0, 1];
        let permuted = piece(0.01, 3).map(|b| b.permute(&order));
        assert!(matches!(permuted, Some(SeriesBuilder::Const(c, _)) if c.len == 3));
    }

    #[test]
    fn sixty_four_bit_integers_push_as_exactly_as_through_128_bits() {
        let mut signed: Vec<i64> = vec![0, 1, -1, i64::MIN, i64::MAX, i64::MIN + 1, i64::MAX - 1];
        let mut unsigned: Vec<u64> = vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1];
        for k in [53u32, 54, 60, 62, 63] {
            for d in [-3i64, -1, 0, 1, 3, 1025, -1025] {
                let p = 1i128 << k;
                signed.extend(i64::try_from(p + i128::from(d)).ok());
                signed.extend(i64::try_from(-p + i128::from(d)).ok());
                unsigned.extend(u64::try_from(p + i128::from(d)).ok());
            }
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            unsigned.push(x);
            signed.push(x as i64);
            signed.push((x >> 3) as i64 + 1_700_000_000_000_000_000);
        }
        let check = |ints: Vec<i128>, fast: &dyn Fn(&mut SeriesBuilder, usize)| {
            let (mut a, mut b) = (SeriesBuilder::default(), SeriesBuilder::default());
            for (i, &v) in ints.iter().enumerate() {
                fast(&mut a, i);
                b.push_int(v);
            }
            let (a, b) = (a.finish(), b.finish());
            for (i, &v) in ints.iter().enumerate() {
                assert_eq!(a.exact(i), Some(v), "{v}");
                assert_eq!(
                    a.value(i).map(f64::to_bits),
                    b.value(i).map(f64::to_bits),
                    "{v}"
                );
            }
        };
        let s = signed.clone();
        check(signed.iter().map(|&v| i128::from(v)).collect(), &|b, i| {
            b.push_i64(s[i])
        });
        let u = unsigned.clone();
        check(
            unsigned.iter().map(|&v| i128::from(v)).collect(),
            &|b, i| b.push_u64(u[i]),
        );
    }
}
