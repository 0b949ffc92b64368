//! Decimation: a time window of a column reduced to at most about two points per pixel
//! column, read from the column's min/max pyramid, so drawing costs the same for ten thousand
//! and a hundred million samples. Points come out as any [`Point`]; the plots ask for
//! egui_plot's, so this module needs no egui.

use crate::data::series::{FANOUT, Sample, Series};

/// A plotted point, built from seconds since the recording's start and a value.
pub trait Point {
    /// The point at `x` seconds with value `y`.
    fn new(x: f64, y: f64) -> Self;
}

impl Point for [f64; 2] {
    #[inline]
    fn new(x: f64, y: f64) -> Self {
        [x, y]
    }
}

/// Folds pyramid blocks `first..first + starts.len()` into the pixel columns they start in.
fn fold_blocks<T: Sample>(
    level: &[(T, T)],
    first: usize,
    starts: &[u64],
    origin_ns: f64,
    per_ns: f64,
    max_px: f64,
    columns: &mut [Option<(f64, f64)>],
) {
    let blocks = level.get(first..first + starts.len()).unwrap_or(&[]);
    // Blocks come in time order, so a column's blocks are consecutive: fold them into a running
    // extreme (f64::min/max skip an all-absent block's NaN) and store it when the column changes.
    let (mut column, mut lo, mut hi) = (usize::MAX, f64::INFINITY, f64::NEG_INFINITY);
    for (&t, &(mn, mx)) in starts.iter().zip(blocks) {
        let px = ((t as f64 - origin_ns) * per_ns).clamp(0.0, max_px) as usize;
        if px != column {
            store_extremes(columns, column, lo, hi);
            (column, lo, hi) = (px, f64::INFINITY, f64::NEG_INFINITY);
        }
        lo = lo.min(mn.to_f64());
        hi = hi.max(mx.to_f64());
    }
    store_extremes(columns, column, lo, hi);
}

/// Merges `lo..=hi` into column `px`, unless nothing was folded (`lo > hi`).
fn store_extremes(columns: &mut [Option<(f64, f64)>], px: usize, lo: f64, hi: f64) {
    if lo > hi {
        return;
    }
    if let Some(c) = columns.get_mut(px) {
        *c = Some(match *c {
            None => (lo, hi),
            Some((a, b)) => (a.min(lo), b.max(hi)),
        });
    }
}

/// A time window reduced to at most about two points per pixel column.
///
/// `t0_ns` is the recording's start: x values are seconds since it. Fewer samples than pixels
/// are returned as they are; more become a min and a max per pixel column, taken from the
/// series' pyramid, so the cost depends on `width_px`, not on `n`.
///
/// When a pixel column holds many samples, the pyramid level whose blocks are at most a
/// quarter of a column is read sequentially and each block is folded into the column where it
/// starts: no extreme is ever lost, and one may be drawn up to a quarter column late.
pub fn envelope<P: Point>(
    times_ns: &[u64],
    time_levels: &[Vec<u64>],
    series: &Series,
    t0_ns: u64,
    x_range_s: (f64, f64),
    width_px: usize,
    out: &mut Vec<P>,
) {
    out.clear();
    let (x0, x1) = x_range_s;
    if times_ns.is_empty()
        || width_px == 0
        || x1.partial_cmp(&x0) != Some(std::cmp::Ordering::Greater)
    {
        return;
    }
    let to_ns = |x: f64| -> u64 {
        let ns = t0_ns as f64 + x * 1e9;
        if ns <= 0.0 { 0 } else { ns as u64 }
    };
    let to_s = |t: u64| (t as f64 - t0_ns as f64) / 1e9;
    // One sample either side so lines run off the edges instead of stopping short.
    let lo = times_ns
        .partition_point(|&t| t < to_ns(x0))
        .saturating_sub(1);
    let hi = (times_ns.partition_point(|&t| t <= to_ns(x1)) + 1).min(times_ns.len());
    if lo >= hi {
        return;
    }
    if hi - lo <= 2 * width_px {
        for i in lo..hi {
            if let (Some(&t), Some(v)) = (times_ns.get(i), series.value(i))
                && !v.is_nan()
            {
                out.push(P::new(to_s(t), v));
            }
        }
        return;
    }
    let dx = (x1 - x0) / width_px as f64;
    let per_px = (hi - lo) / width_px;
    // The coarsest level whose blocks are at most a quarter of a pixel column.
    let mut level = None;
    let mut block = FANOUT;
    for k in 0..series.level_count().min(time_levels.len()) {
        if block * 4 > per_px {
            break;
        }
        level = Some((k, block));
        block = block.saturating_mul(FANOUT);
    }
    if let (Some((k, block)), Some(starts)) = (level, level.and_then(|(k, _)| time_levels.get(k))) {
        let first = lo / block;
        let last = hi.div_ceil(block).min(starts.len());
        let starts = starts.get(first..last).unwrap_or(&[]);
        // Column of a time, as one multiply per block.
        let per_ns = 1.0 / (dx * 1e9);
        let origin_ns = t0_ns as f64 + x0 * 1e9;
        let max_px = (width_px - 1) as f64;
        let mut columns: Vec<Option<(f64, f64)>> = vec![None; width_px];
        match series {
            Series::F32(t) => fold_blocks(
                t.level(k),
                first,
                starts,
                origin_ns,
                per_ns,
                max_px,
                &mut columns,
            ),
            Series::F64(t) => fold_blocks(
                t.level(k),
                first,
                starts,
                origin_ns,
                per_ns,
                max_px,
                &mut columns,
            ),
        }
        for (px, c) in columns.iter().enumerate() {
            let Some((mn, mx)) = *c else {
                continue;
            };
            let x = x0 + dx * (px as f64 + 0.5);
            if px % 2 == 0 {
                out.push(P::new(x, mn));
                out.push(P::new(x, mx));
            } else {
                out.push(P::new(x, mx));
                out.push(P::new(x, mn));
            }
        }
        return;
    }
    let mut start = lo;
    for px in 0..width_px {
        let edge = x0 + dx * (px + 1) as f64;
        let end = if px + 1 == width_px {
            hi
        } else {
            let e = to_ns(edge);
            start
                + times_ns
                    .get(start..hi)
                    .map_or(0, |s| s.partition_point(|&t| t < e))
        };
        if end > start
            && let Some((mn, mx)) = series.min_max(start, end)
        {
            let x = x0 + dx * (px as f64 + 0.5);
            // Alternate the order so the connecting strokes stay short.
            if px % 2 == 0 {
                out.push(P::new(x, mn));
                out.push(P::new(x, mx));
            } else {
                out.push(P::new(x, mx));
                out.push(P::new(x, mn));
            }
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::series::SeriesBuilder;
    use crate::data::topic_data::time_levels;

    #[test]
    fn envelope_is_bounded_by_width_and_keeps_extremes() {
        let n = 1_000_000usize;
        let times: Vec<u64> = (0..n as u64).map(|i| 1_000 + i * 1_000).collect();
        let mut b = SeriesBuilder::default();
        for i in 0..n {
            b.push(if i == 123_456 { 1e6 } else { (i % 100) as f64 });
        }
        let s = b.finish();
        let levels = time_levels(&times);
        let mut out: Vec<[f64; 2]> = Vec::new();
        envelope(&times, &levels, &s, 1_000, (0.0, 1.0), 800, &mut out);
        assert!(out.len() <= 1600, "{}", out.len());
        assert!(out.iter().any(|p| p[1] == 1e6));
        assert!(out.iter().all(|p| p[0] >= 0.0 && p[0] <= 1.0));
        // Zoomed in: raw samples.
        envelope(&times, &levels, &s, 1_000, (0.5, 0.5001), 800, &mut out);
        assert!(out.len() > 90 && out.len() < 110, "{}", out.len());
        // Medium zoom: exact per-column min/max.
        envelope(&times, &levels, &s, 1_000, (0.1, 0.15), 800, &mut out);
        assert!(out.len() <= 1600, "{}", out.len());
    }
}
