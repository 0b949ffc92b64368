//! The two time cursors (A and B) every plot shares, and what a signal reads at a cursor:
//! a sample lying exactly there, else what the plot draws there (linear interpolation
//! between joined samples, or the held value of a step), else nothing, and why.

use crate::data::envelope::Draw;
use crate::data::series::Series;

/// One of the two cursors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Which {
    /// Cursor A (the range's start when it is the earlier).
    A,
    /// Cursor B.
    B,
}

impl Which {
    /// `A` or `B`.
    pub fn name(self) -> &'static str {
        match self {
            Which::A => "A",
            Which::B => "B",
        }
    }
}

/// Where the cursors are, log time in ns (`None`: not placed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cursors {
    /// Cursor A.
    pub a_ns: Option<u64>,
    /// Cursor B.
    pub b_ns: Option<u64>,
}

impl Cursors {
    /// Where cursor `which` is.
    pub fn at(&self, which: Which) -> Option<u64> {
        match which {
            Which::A => self.a_ns,
            Which::B => self.b_ns,
        }
    }

    /// Places cursor `which` at `t_ns`.
    pub fn place(&mut self, which: Which, t_ns: u64) {
        match which {
            Which::A => self.a_ns = Some(t_ns),
            Which::B => self.b_ns = Some(t_ns),
        }
    }

    /// Removes both cursors.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// True when either cursor is placed.
    pub fn any(&self) -> bool {
        self.a_ns.is_some() || self.b_ns.is_some()
    }

    /// The cursor a click at `t_ns` places: A when none is placed, B when only A is, else
    /// the nearer one.
    pub fn for_click(&self, t_ns: u64) -> Which {
        match (self.a_ns, self.b_ns) {
            (None, _) => Which::A,
            (Some(_), None) => Which::B,
            (Some(a), Some(b)) => {
                if b.abs_diff(t_ns) < a.abs_diff(t_ns) {
                    Which::B
                } else {
                    Which::A
                }
            }
        }
    }

    /// B - A in ns, exactly; `None` unless both are placed.
    pub fn delta_ns(&self) -> Option<i128> {
        Some(i128::from(self.b_ns?) - i128::from(self.a_ns?))
    }
}

/// Why a signal has no value at a cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoValue {
    /// The cursor is before the signal's first sample.
    BeforeFirst,
    /// After its last sample (the plot draws nothing past it).
    AfterLast,
    /// Between two samples the plot does not join: a silence, or a non-finite or absent
    /// value at either end.
    NotJoined,
}

/// What a signal reads at a cursor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reading {
    /// Sample `.0` lies exactly at the cursor.
    Exact(usize),
    /// Between joined samples `.0` and `.0 + 1` of a line: the line's value there.
    Interpolated(usize, f64),
    /// After sample `.0` of a step, before the next: its value, held.
    Held(usize),
    /// Nothing is drawn there.
    None(NoValue),
}

impl Reading {
    /// The value read (`None` for [`Reading::None`]).
    pub fn value(&self, series: &Series) -> Option<f64> {
        match *self {
            Reading::Exact(i) | Reading::Held(i) => series.value(i),
            Reading::Interpolated(_, v) => Some(v),
            Reading::None(_) => None,
        }
    }

    /// The sample the reading is, when it is one (exact or held).
    pub fn sample(&self) -> Option<usize> {
        match *self {
            Reading::Exact(i) | Reading::Held(i) => Some(i),
            _ => None,
        }
    }

    /// How the value was read, as the cursor table says it.
    pub fn how(&self) -> &'static str {
        match self {
            Reading::Exact(_) => "exact",
            Reading::Interpolated(..) => "interpolated",
            Reading::Held(_) => "held",
            Reading::None(NoValue::BeforeFirst) => "before the first sample",
            Reading::None(NoValue::AfterLast) => "after the last sample",
            Reading::None(NoValue::NotJoined) => "not drawn here",
        }
    }
}

/// What `series` (logged at `times_ns`, drawn as `draw`, its topic's gap threshold `gap_ns`)
/// reads at `t_ns`, as the plot draws it: samples `i` and `i + 1` are joined when both are
/// finite and no gap lies between them (the envelope's rule). With several samples at
/// `t_ns`, the last of them.
pub fn read_at(
    times_ns: &[u64],
    series: &Series,
    draw: Draw,
    gap_ns: Option<u64>,
    t_ns: u64,
) -> Reading {
    let n = times_ns.len().min(series.len());
    let Some(times) = times_ns.get(..n) else {
        return Reading::None(NoValue::BeforeFirst);
    };
    let after = times.partition_point(|&t| t <= t_ns);
    let Some(i) = after.checked_sub(1) else {
        return Reading::None(NoValue::BeforeFirst);
    };
    if times.get(i) == Some(&t_ns) {
        return Reading::Exact(i);
    }
    let (Some(&ta), Some(&tb), Some(a), Some(b)) = (
        times.get(i),
        times.get(i + 1),
        series.value(i),
        series.value(i + 1),
    ) else {
        return Reading::None(NoValue::AfterLast);
    };
    let joined = a.is_finite() && b.is_finite() && gap_ns.is_none_or(|g| tb - ta <= g);
    if !joined {
        return Reading::None(NoValue::NotJoined);
    }
    match draw {
        Draw::Step => Reading::Held(i),
        Draw::Linear => {
            // Weights in [0, 1]: no overflow for values near f64::MAX, as `a + (b - a) f`
            // would have; and exactly `a` where both ends are equal.
            let f = (t_ns - ta) as f64 / (tb - ta) as f64;
            let v = if a == b { a } else { a * (1.0 - f) + b * f };
            Reading::Interpolated(i, v)
        }
    }
}

/// B - A of one signal's readings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Delta {
    /// Both readings are samples of whole numbers: the exact difference (64-bit integers
    /// as the messages carried them).
    Exact(i128),
    /// The difference in `f64` (finite, or an infinity when one reading is infinite).
    Float(f64),
    /// Both finite, but the difference is beyond `f64`.
    Overflow,
    /// Either reading has no value, or the difference is undefined (inf - inf, NaN).
    None,
}

/// B - A for readings `a` and `b` of `series`; `integer` when the column holds integers
/// (their whole numbers are subtracted exactly).
pub fn delta(series: &Series, integer: bool, a: Reading, b: Reading) -> Delta {
    if integer
        && let (Some(i), Some(j)) = (a.sample(), b.sample())
        && let (Some(x), Some(y)) = (series.exact(i), series.exact(j))
    {
        return Delta::Exact(y - x);
    }
    let (Some(x), Some(y)) = (a.value(series), b.value(series)) else {
        return Delta::None;
    };
    let d = y - x;
    if d.is_nan() {
        Delta::None
    } else if d.is_infinite() && x.is_finite() && y.is_finite() {
        Delta::Overflow
    } else {
        Delta::Float(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::series::SeriesBuilder;

    fn series(values: &[f64]) -> Series {
        Series::from_values(values)
    }

    #[test]
    fn readings_follow_what_the_plot_draws() {
        let times = [100, 200, 300, 400, 1_000];
        let s = series(&[1.0, 3.0, f64::INFINITY, 5.0, 6.0]);
        let read = |draw, t| read_at(&times, &s, draw, Some(500), t);
        assert_eq!(read(Draw::Linear, 50), Reading::None(NoValue::BeforeFirst));
        assert_eq!(read(Draw::Linear, 200), Reading::Exact(1));
        assert_eq!(read(Draw::Linear, 150), Reading::Interpolated(0, 2.0));
        assert_eq!(read(Draw::Step, 150), Reading::Held(0));
        // Next to +inf nothing is joined.
        assert_eq!(read(Draw::Linear, 250), Reading::None(NoValue::NotJoined));
        assert_eq!(read(Draw::Step, 350), Reading::None(NoValue::NotJoined));
        // A silence longer than the gap threshold.
        assert_eq!(read(Draw::Step, 700), Reading::None(NoValue::NotJoined));
        assert_eq!(read(Draw::Linear, 2_000), Reading::None(NoValue::AfterLast));
        assert_eq!(read(Draw::Linear, 1_000), Reading::Exact(4));
    }

    #[test]
    fn interpolating_huge_values_does_not_overflow() {
        let times = [0, 100];
        let s = series(&[-1.5e308, 1.5e308]);
        assert_eq!(
            read_at(&times, &s, Draw::Linear, None, 50),
            Reading::Interpolated(0, 0.0)
        );
        let d = delta(&s, false, Reading::Exact(0), Reading::Exact(1));
        assert_eq!(d, Delta::Overflow);
    }

    #[test]
    fn deltas_of_64_bit_integers_are_exact() {
        let mut b = SeriesBuilder::default();
        b.push_int(i128::from(u64::MAX));
        b.push_int(i128::from(u64::MAX - 3));
        let s = b.finish();
        let d = delta(&s, true, Reading::Exact(0), Reading::Held(1));
        assert_eq!(d, Delta::Exact(-3));
        // As floats both are 2^64: the f64 difference would say 0.
        assert_eq!(
            delta(&s, false, Reading::Exact(0), Reading::Exact(1)),
            Delta::Float(0.0)
        );
    }

    #[test]
    fn a_click_places_a_then_b_then_the_nearer() {
        let mut c = Cursors::default();
        assert_eq!(c.for_click(5), Which::A);
        c.place(Which::A, 5);
        assert_eq!(c.for_click(50), Which::B);
        c.place(Which::B, 50);
        assert_eq!(c.for_click(40), Which::B);
        assert_eq!(c.for_click(10), Which::A);
        assert_eq!(c.delta_ns(), Some(45));
        c.clear();
        assert!(!c.any());
    }
}
