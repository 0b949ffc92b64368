//! XY plots: one signal against another (longitude against latitude, torque against speed),
//! aligned in time by each sample of the faster signal and the held value of the slower one.
//!
//! "Faster" is the signal with more samples in the time range; each of its samples at time
//! `t` pairs with the other signal's last sample at or before `t` (none before its first
//! sample: that sample pairs with nothing and is left out). A pair with a non-finite or absent
//! value is left out and breaks the path, as a silence breaks a line in the time plots. Beyond
//! [`MAX_POINTS`] pairs, every k-th is kept, and the plot says so.

use std::ops::Range;

use crate::data::series::Series;

/// At most this many pairs are drawn.
pub const MAX_POINTS: usize = 200_000;

/// One signal's column.
#[derive(Clone, Copy)]
pub struct Column<'a> {
    /// Log times, ns, ascending.
    pub times: &'a [u64],
    /// Values.
    pub series: &'a Series,
}

impl Column<'_> {
    /// Samples with both a time and a value.
    pub(crate) fn len(&self) -> usize {
        self.times.len().min(self.series.len())
    }

    /// Samples logged in `lo..=hi`.
    fn range(&self, (lo, hi): (u64, u64)) -> Range<usize> {
        let t = self.times.get(..self.len()).unwrap_or(&[]);
        t.partition_point(|&x| x < lo)..t.partition_point(|&x| x <= hi)
    }

    /// The last sample at or before `t`.
    fn held_at(&self, t: u64) -> Option<usize> {
        let t_all = self.times.get(..self.len()).unwrap_or(&[]);
        t_all.partition_point(|&x| x <= t).checked_sub(1)
    }
}

/// The aligned path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct XyPath {
    /// (x, y) pairs in time order.
    pub points: Vec<[f64; 2]>,
    /// The time of each pair (its faster signal's sample).
    pub times: Vec<u64>,
    /// Unbroken stretches of `points`.
    pub runs: Vec<Range<usize>>,
    /// Every this-many-th pair is kept (1: all).
    pub stride: usize,
    /// The pairs follow x's samples (x is the faster signal), else y's.
    pub by_x: bool,
}

/// `x` against `y` over the log times `window` (both included).
pub fn align(x: Column<'_>, y: Column<'_>, window: (u64, u64)) -> XyPath {
    let (xr, yr) = (x.range(window), y.range(window));
    let by_x = xr.len() >= yr.len();
    let (lead, other, lead_range) = if by_x { (x, y, xr) } else { (y, x, yr) };
    let stride = lead_range.len().div_ceil(MAX_POINTS).max(1);
    let mut path = XyPath {
        stride,
        by_x,
        ..XyPath::default()
    };
    let mut run_start: Option<usize> = None;
    for i in lead_range.step_by(stride) {
        let (Some(&t), Some(a)) = (lead.times.get(i), lead.series.value(i)) else {
            continue;
        };
        let b = other.held_at(t).and_then(|j| other.series.value(j));
        let pair = match b {
            Some(b) if a.is_finite() && b.is_finite() => Some(if by_x { [a, b] } else { [b, a] }),
            _ => None,
        };
        match pair {
            Some(p) => {
                if run_start.is_none() {
                    run_start = Some(path.points.len());
                }
                path.points.push(p);
                path.times.push(t);
            }
            None => {
                if let Some(s) = run_start.take() {
                    path.runs.push(s..path.points.len());
                }
            }
        }
    }
    if let Some(s) = run_start {
        path.runs.push(s..path.points.len());
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(values: &[f64]) -> Series {
        Series::from_values(values)
    }

    #[test]
    fn the_faster_signal_leads_and_the_slower_is_held() {
        // x at 10 Hz-like times, y at twice the rate.
        let (xt, xv) = (vec![10, 30, 50], series(&[1.0, 2.0, 3.0]));
        let (yt, yv) = (
            vec![5, 10, 20, 30, 40, 60],
            series(&[0.5, 1.0, 2.0, 3.0, f64::NAN, 6.0]),
        );
        let x = Column {
            times: &xt,
            series: &xv,
        };
        let y = Column {
            times: &yt,
            series: &yv,
        };
        let path = align(x, y, (0, 100));
        assert!(!path.by_x, "y has more samples: it leads");
        // y at 5 has no x before it: left out; y's NaN at 40 breaks the path.
        assert_eq!(
            path.points,
            vec![[1.0, 1.0], [1.0, 2.0], [2.0, 3.0], [3.0, 6.0]]
        );
        assert_eq!(path.times, vec![10, 20, 30, 60]);
        assert_eq!(path.runs, vec![0..3, 3..4]);
        assert_eq!(path.stride, 1);
        // A window: only samples inside it lead, the other is held from before it.
        let part = align(x, y, (25, 45));
        assert_eq!(part.points, vec![[2.0, 3.0]]);
    }
}
