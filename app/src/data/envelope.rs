//! Decimation that never draws what is not in the recording: a time window of a column
//! becomes the polylines, lone points and non-finite marks a plot draws, with at most a few
//! vertices per pixel column, read from the column's min/max pyramid, so drawing costs the
//! same for ten thousand and a hundred million samples.
//!
//! The rules (issue 20): a pixel column gets a min/max stroke only when samples lie in it,
//! and its stroke spans exactly their finite min and max; two consecutive samples are joined
//! only when both are finite and no gap (the Health panel's rule, [`gap_threshold`]) lies
//! between them; a sample with no joined neighbour is a point; a non-finite sample is left
//! out of lines (and so of autoscale) and marked instead. Floats are joined linearly, while
//! booleans, enums and integers hold their value until the next sample ([`Draw::Step`]).
//!
//! Points come out as any [`Point`]; the plots ask for egui_plot's, so this module needs no
//! egui.
//!
//! [`gap_threshold`]: crate::data::topic_data::gap_threshold

use std::ops::Range;

use crate::data::series::{FANOUT, Series, Summary, flag_of};

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

/// How two joined samples are connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Draw {
    /// A straight line: a float measured at both ends.
    #[default]
    Linear,
    /// Sample and hold: the value stays until the next sample (booleans, enums, integers).
    Step,
}

/// The mapping from time to the pixel columns of one plot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    t0_ns: u64,
    x0: f64,
    x1: f64,
    width_px: usize,
    dx: f64,
}

impl Window {
    /// `x_range_s` (seconds since `t0_ns`) over `width_px` columns; `None` when empty.
    pub fn new(t0_ns: u64, x_range_s: (f64, f64), width_px: usize) -> Option<Self> {
        let (x0, x1) = x_range_s;
        if width_px == 0 || !x0.is_finite() || !x1.is_finite() || x1 <= x0 {
            return None;
        }
        Some(Self {
            t0_ns,
            x0,
            x1,
            width_px,
            dx: (x1 - x0) / width_px as f64,
        })
    }

    /// Seconds since the start of a time, exact to the nanosecond for spans up to 104 days
    /// (the difference is taken in integers, then converted once). The difference's magnitude
    /// always fits a `u64`, and converting it is the same rounding as converting the signed
    /// `i128` difference, without the software `i128` conversion (measured in `frame`).
    #[inline]
    pub fn x_of(&self, t_ns: u64) -> f64 {
        if t_ns >= self.t0_ns {
            (t_ns - self.t0_ns) as f64 / 1e9
        } else {
            -((self.t0_ns - t_ns) as f64) / 1e9
        }
    }

    /// The visible range, s.
    pub fn x_range(&self) -> (f64, f64) {
        (self.x0, self.x1)
    }

    /// Number of pixel columns.
    pub fn width_px(&self) -> usize {
        self.width_px
    }

    /// The pixel column of `x` seconds; `None` outside the window. The right edge belongs to
    /// the last column.
    #[inline]
    pub fn column(&self, x: f64) -> Option<usize> {
        if !(x >= self.x0 && x <= self.x1) {
            return None;
        }
        Some((((x - self.x0) / self.dx) as usize).min(self.width_px - 1))
    }

    /// The column of `t_ns`, counting columns left of the window as 0 and right of it as the
    /// last (for searching, where only the order matters).
    #[inline]
    fn column_clamped(&self, t_ns: u64) -> usize {
        let x = self.x_of(t_ns);
        if x <= self.x0 {
            0
        } else {
            (((x - self.x0) / self.dx) as usize).min(self.width_px - 1)
        }
    }
}

/// Samples `lo..hi` of a column, all in pixel column `px` (in the dense case, all of that
/// column's samples; else one sample).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    /// First sample.
    pub lo: usize,
    /// One past the last.
    pub hi: usize,
    /// The pixel column.
    pub px: usize,
    /// Finite min and max, and the non-finite values present.
    pub summary: Summary,
}

/// A non-finite sample (or several in one pixel column), drawn as a mark at the plot's edge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mark {
    /// Where, s since the start (the middle of the samples).
    pub x: f64,
    /// [`POS_INF`](crate::data::series::POS_INF) | [`NEG_INF`](crate::data::series::NEG_INF)
    /// | [`NAN`](crate::data::series::NAN).
    pub flags: u8,
    /// Log times of the first and last sample of the column, ns.
    pub t_ns: (u64, u64),
}

/// What one signal draws in a window.
#[derive(Debug, Clone)]
pub struct Trace<P> {
    /// Vertices of every polyline.
    pub points: Vec<P>,
    /// The polylines, as ranges of `points` (two vertices or more each).
    pub runs: Vec<Range<usize>>,
    /// Samples joined to nothing, drawn as points.
    pub dots: Vec<P>,
    /// Non-finite samples.
    pub marks: Vec<Mark>,
    cells: Vec<Cell>,
    run_start: usize,
}

impl<P> Default for Trace<P> {
    fn default() -> Self {
        Self {
            points: Vec::new(),
            runs: Vec::new(),
            dots: Vec::new(),
            marks: Vec::new(),
            cells: Vec::new(),
            run_start: 0,
        }
    }
}

impl<P> Trace<P> {
    /// Empties it (keeping its buffers).
    pub fn clear(&mut self) {
        self.points.clear();
        self.runs.clear();
        self.dots.clear();
        self.marks.clear();
        self.cells.clear();
        self.run_start = 0;
    }

    /// Vertices handed to the plot (polylines and points).
    pub fn len(&self) -> usize {
        self.points.len() + self.dots.len()
    }

    /// True when nothing is drawn (marks aside).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each polyline's vertices.
    pub fn lines(&self) -> impl Iterator<Item = &[P]> {
        self.runs.iter().filter_map(|r| self.points.get(r.clone()))
    }

    fn end_run(&mut self) {
        let n = self.points.len().saturating_sub(self.run_start);
        if n == 1 {
            // A lone vertex is a lone sample: a point, not a line.
            if let Some(p) = self.points.pop() {
                self.dots.push(p);
            }
        } else if n >= 2 {
            self.runs.push(self.run_start..self.points.len());
        }
        self.run_start = self.points.len();
    }
}

/// First index in `lo..hi` whose time is `past` (a predicate monotone in time), or `hi`.
/// The time levels narrow the search from the top down, so it reads a few short stretches
/// instead of bisecting the whole column.
fn first_past(
    times_ns: &[u64],
    time_levels: &[Vec<u64>],
    lo: usize,
    hi: usize,
    past: impl Fn(u64) -> bool,
) -> usize {
    let (mut a, mut b) = (lo, hi.min(times_ns.len()));
    let mut block = FANOUT.saturating_pow(time_levels.len() as u32);
    for level in time_levels.iter().rev() {
        // Block starts j * block inside a..b.
        let (j0, j1) = (a.div_ceil(block), b.div_ceil(block).min(level.len()));
        if let Some(starts) = level.get(j0..j1) {
            let m = starts.partition_point(|&t| !past(t));
            if m > 0 {
                a = a.max((j0 + m - 1) * block);
            }
            if j0 + m < j1 {
                b = b.min((j0 + m) * block);
            }
        }
        block /= FANOUT;
    }
    a + times_ns
        .get(a..b)
        .map_or(0, |s| s.partition_point(|&t| !past(t)))
}

/// How far [`first_past_near`] gallops at the lowest level before it lets the time levels
/// narrow the rest: 4,096 times are 32 KiB, past which the levels read fewer lines.
const GALLOP_LIMIT: usize = 1 << 12;

/// First index in `lo..hi` whose time is `past` (monotone in time), or `hi`, looked for near
/// `lo + guess` first: from there it gallops (1, 2, 4, ... samples) towards the answer, then
/// bisects the stretch it found. Where samples come at a steady rate the guess (the previous
/// pixel column's sample count) lands within a few samples of the answer, so a column costs
/// a few reads of one or two cache lines instead of a search from the top level; a far answer
/// (a gap, a burst) goes to [`first_past`] once the gallop passes [`GALLOP_LIMIT`].
fn first_past_near(
    times_ns: &[u64],
    time_levels: &[Vec<u64>],
    lo: usize,
    hi: usize,
    guess: usize,
    past: impl Fn(u64) -> bool,
) -> usize {
    let hi = hi.min(times_ns.len());
    if lo >= hi {
        return hi;
    }
    let is_past = |i: usize| times_ns.get(i).is_none_or(|&t| past(t));
    // The answer lies in a..=b: every index before a is not past, b is past or hi.
    let g = lo.saturating_add(guess).min(hi - 1);
    let mut step = 1usize;
    let (a, b) = if is_past(g) {
        let mut b = g;
        loop {
            if b == lo {
                return lo;
            }
            let probe = b.saturating_sub(step).max(lo);
            if !is_past(probe) {
                break (probe + 1, b);
            }
            b = probe;
            step = step.saturating_mul(2);
            if step > GALLOP_LIMIT {
                return first_past(times_ns, time_levels, lo, b, past);
            }
        }
    } else {
        let mut a = g + 1;
        loop {
            let probe = a.saturating_add(step - 1);
            if probe >= hi {
                break (a, hi);
            }
            if is_past(probe) {
                break (a, probe);
            }
            a = probe + 1;
            step = step.saturating_mul(2);
            if step > GALLOP_LIMIT {
                return first_past(times_ns, time_levels, a, hi, past);
            }
        }
    };
    a + times_ns
        .get(a..b)
        .map_or(0, |s| s.partition_point(|&t| !past(t)))
}

/// The samples of `series` inside `window`, as cells: one per sample when there are at most
/// two per pixel column, else one per pixel column that holds samples, summarised from the
/// pyramid. Returns the range of samples inside the window.
pub fn cells(
    times_ns: &[u64],
    time_levels: &[Vec<u64>],
    series: &Series,
    window: &Window,
    out: &mut Vec<Cell>,
) -> Range<usize> {
    out.clear();
    let (x0, x1) = window.x_range();
    let n = times_ns.len().min(series.len());
    let times_ns = times_ns.get(..n).unwrap_or(&[]);
    let lo = first_past(times_ns, time_levels, 0, n, |t| window.x_of(t) >= x0);
    let hi = first_past(times_ns, time_levels, lo, n, |t| window.x_of(t) > x1);
    if hi - lo <= 2 * window.width_px() {
        for i in lo..hi {
            let (Some(&t), Some(v)) = (times_ns.get(i), series.value(i)) else {
                continue;
            };
            out.push(Cell {
                lo: i,
                hi: i + 1,
                px: window.column_clamped(t),
                summary: Summary {
                    min_max: v.is_finite().then_some((v, v)),
                    flags: flag_of(v),
                },
            });
        }
        return lo..hi;
    }
    let mut start = lo;
    // Samples in the previous column: where the next column's end is looked for first.
    let mut guess = (hi - lo) / window.width_px();
    while start < hi {
        let Some(&t) = times_ns.get(start) else {
            break;
        };
        let px = window.column_clamped(t);
        let end = if px + 1 >= window.width_px() {
            hi
        } else {
            first_past_near(times_ns, time_levels, start, hi, guess, |t| {
                window.column_clamped(t) > px
            })
        }
        .max(start + 1);
        guess = end - start;
        out.push(Cell {
            lo: start,
            hi: end,
            px,
            summary: series.summary(start, end),
        });
        start = end;
    }
    lo..hi
}

/// Whether samples `i` and `i + 1` are joined: both finite and no gap between them.
#[inline]
fn joined(times_ns: &[u64], series: &Series, gap_ns: Option<u64>, i: usize) -> bool {
    let (Some(&a), Some(&b), Some(u), Some(v)) = (
        times_ns.get(i),
        times_ns.get(i + 1),
        series.value(i),
        series.value(i + 1),
    ) else {
        return false;
    };
    u.is_finite() && v.is_finite() && gap_ns.is_none_or(|g| b.saturating_sub(a) <= g)
}

/// The value where the connection of joined samples `i` and `i + 1` crosses `x`.
fn cross(times_ns: &[u64], series: &Series, window: &Window, draw: Draw, i: usize, x: f64) -> f64 {
    let (Some(&ta), Some(&tb), Some(a), Some(b)) = (
        times_ns.get(i),
        times_ns.get(i + 1),
        series.value(i),
        series.value(i + 1),
    ) else {
        return f64::NAN;
    };
    let (xa, xb) = (window.x_of(ta), window.x_of(tb));
    match draw {
        Draw::Step => a,
        Draw::Linear if xb > xa => a + (b - a) * ((x - xa) / (xb - xa)),
        Draw::Linear => a,
    }
}

/// What `series` (sampled at `times_ns`, pyramid times `time_levels`) draws in `window`, into
/// `out`. `gap_ns` is the topic's gap threshold (`None`: no gaps judged, as for a topic too
/// short to judge).
///
/// A cell with several samples is drawn first value, min, max, last value, all inside its
/// pixel column; cells are joined by the segment between their boundary samples when those
/// are joined. A connection crossing the window's edge is cut at the edge, so the y range
/// spans only what is visible.
pub fn trace<P: Point>(
    times_ns: &[u64],
    time_levels: &[Vec<u64>],
    series: &Series,
    gap_ns: Option<u64>,
    window: &Window,
    draw: Draw,
    out: &mut Trace<P>,
) {
    out.clear();
    let mut found = std::mem::take(&mut out.cells);
    let inside = cells(times_ns, time_levels, series, window, &mut found);
    let (x0, x1) = window.x_range();
    let x_at = |i: usize| times_ns.get(i).map_or(f64::NAN, |&t| window.x_of(t));
    let value = |i: usize| series.value(i).unwrap_or(f64::NAN);
    // A connection coming in over the left edge.
    if let Some(before) = inside.start.checked_sub(1)
        && joined(times_ns, series, gap_ns, before)
    {
        out.points.push(P::new(
            x0,
            cross(times_ns, series, window, draw, before, x0),
        ));
    }
    for cell in &found {
        if cell.lo == 0 || !joined(times_ns, series, gap_ns, cell.lo - 1) {
            out.end_run();
        } else if draw == Draw::Step {
            // Hold the previous value up to this sample, then rise.
            out.points.push(P::new(x_at(cell.lo), value(cell.lo - 1)));
        }
        if cell.summary.flags != 0
            && let (Some(&a), Some(&b)) = (times_ns.get(cell.lo), times_ns.get(cell.hi - 1))
        {
            out.marks.push(Mark {
                x: (window.x_of(a) + window.x_of(b)) / 2.0,
                flags: cell.summary.flags,
                t_ns: (a, b),
            });
        }
        let Some((mn, mx)) = cell.summary.min_max else {
            continue;
        };
        let (first, last) = (value(cell.lo), value(cell.hi - 1));
        let (xf, xl) = (x_at(cell.lo), x_at(cell.hi - 1));
        if cell.hi - cell.lo == 1 {
            out.points.push(P::new(xf, first));
            continue;
        }
        if first.is_finite() {
            out.points.push(P::new(xf, first));
        }
        let xm = (xf + xl) / 2.0;
        // End the stroke at the extreme nearer the last value, so the way out is short.
        if (last - mn).abs() < (last - mx).abs() {
            out.points.push(P::new(xm, mx));
            out.points.push(P::new(xm, mn));
        } else {
            out.points.push(P::new(xm, mn));
            out.points.push(P::new(xm, mx));
        }
        if last.is_finite() {
            out.points.push(P::new(xl, last));
        }
    }
    // A connection going out over the right edge.
    if let Some(last) = inside.end.checked_sub(1)
        && joined(times_ns, series, gap_ns, last)
    {
        out.points
            .push(P::new(x1, cross(times_ns, series, window, draw, last, x1)));
    }
    out.end_run();
    out.cells = found;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::series::SeriesBuilder;
    use crate::data::topic_data::time_levels;

    fn series(values: &[f64]) -> Series {
        let mut b = SeriesBuilder::default();
        for &v in values {
            b.push(v);
        }
        b.finish()
    }

    #[test]
    fn the_search_near_a_guess_finds_what_bisection_finds() {
        // Steady stretches, bursts of equal times, and silences far longer than the gallop
        // goes before handing over to the time levels.
        let mut t = 0u64;
        let times: Vec<u64> = (0..40_000u64)
            .map(|i| {
                t += match i % 9_001 {
                    0 => 10_000_000,
                    k if k < 300 => 0,
                    _ => 1 + (i * 7_919) % 3,
                };
                t
            })
            .collect();
        let levels = time_levels(&times);
        let span = *times.last().expect("times");
        let mut checked = 0;
        for lo in [0, 1, 299, 8_999, 9_001, 20_000, 39_999, 40_000] {
            for hi in [lo, lo + 1, lo + 17, lo + 5_000, 40_000] {
                let hi = hi.min(times.len());
                for cut in (0..=64)
                    .map(|k| span / 64 * k)
                    .chain([0, 1, span, span + 1])
                {
                    let past = |t: u64| t >= cut;
                    let want = lo + times[lo..hi].partition_point(|&t| !past(t));
                    assert_eq!(first_past(&times, &levels, lo, hi, past), want);
                    for guess in [0, 1, 2, 15, 100, 4_095, 4_097, 30_000, usize::MAX] {
                        let got = first_past_near(&times, &levels, lo, hi, guess, past);
                        assert_eq!(got, want, "lo {lo} hi {hi} cut {cut} guess {guess}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    #[test]
    fn a_million_samples_stay_within_a_few_vertices_per_column_and_keep_extremes() {
        let n = 1_000_000usize;
        let times: Vec<u64> = (0..n as u64).map(|i| 1_000 + i * 1_000).collect();
        let s = series(
            &(0..n)
                .map(|i| if i == 123_456 { 1e6 } else { (i % 100) as f64 })
                .collect::<Vec<_>>(),
        );
        let levels = time_levels(&times);
        let mut out: Trace<[f64; 2]> = Trace::default();
        let w = Window::new(1_000, (0.0, 1.0), 800).expect("window");
        trace(&times, &levels, &s, None, &w, Draw::Linear, &mut out);
        assert!(out.len() <= 4 * 800, "{}", out.len());
        assert!(out.points.iter().any(|p| p[1] == 1e6));
        assert!(out.points.iter().all(|p| p[0] >= 0.0 && p[0] <= 1.0));
        assert_eq!(out.runs.len(), 1);
        // Zoomed in: raw samples.
        let w = Window::new(1_000, (0.5, 0.5001), 800).expect("window");
        trace(&times, &levels, &s, None, &w, Draw::Linear, &mut out);
        assert!(out.len() > 90 && out.len() < 110, "{}", out.len());
    }

    #[test]
    fn x_of_converts_as_the_signed_difference_would() {
        let t0 = 1_780_300_800_123_456_789u64;
        let w = Window::new(t0, (0.0, 1.0), 100).expect("window");
        for t in [
            0,
            1,
            t0 - 1,
            t0,
            t0 + 1,
            t0 + 123_456_789_012,
            u64::MAX,
            t0 / 3,
        ] {
            let expected = (i128::from(t) - i128::from(t0)) as f64 / 1e9;
            assert_eq!(w.x_of(t).to_bits(), expected.to_bits(), "{t}");
        }
    }

    #[test]
    fn four_samples_across_ten_seconds_draw_no_triangle() {
        // The first case: 0 at 0 s, 10 at 1 ms, 0 at 2 ms, 0 at 10 s.
        let times = [0, 1_000_000, 2_000_000, 10_000_000_000u64];
        let s = series(&[0.0, 10.0, 0.0, 0.0]);
        let levels = time_levels(&times);
        let w = Window::new(0, (0.0, 10.0), 100).expect("window");
        let mut out: Trace<[f64; 2]> = Trace::default();
        trace(&times, &levels, &s, None, &w, Draw::Linear, &mut out);
        // Every vertex above 0 lies in the first column (x < 0.1 s).
        assert!(
            out.points.iter().all(|p| p[1] == 0.0 || p[0] < 0.1),
            "{:?}",
            out.points
        );
    }

    #[test]
    fn a_gap_breaks_the_line_and_a_lone_sample_is_a_point() {
        let times = [0, 10, 20, 1_000, 2_000, 2_010];
        let s = series(&[1.0, 2.0, 3.0, 9.0, 4.0, 5.0]);
        let levels = time_levels(&times);
        let w = Window::new(0, (0.0, 3e-6), 300).expect("window");
        let mut out: Trace<[f64; 2]> = Trace::default();
        trace(&times, &levels, &s, Some(100), &w, Draw::Linear, &mut out);
        assert_eq!(out.runs.len(), 2);
        assert_eq!(out.dots, vec![[1e-6, 9.0]]);
    }

    #[test]
    fn infinities_and_nan_are_marked_not_drawn() {
        let times = [0, 10, 20, 30, 40];
        let s = series(&[1.0, f64::INFINITY, 2.0, crate::data::series::DATA_NAN, 3.0]);
        let levels = time_levels(&times);
        let w = Window::new(0, (0.0, 5e-8), 100).expect("window");
        let mut out: Trace<[f64; 2]> = Trace::default();
        trace(&times, &levels, &s, None, &w, Draw::Linear, &mut out);
        assert!(out.points.iter().all(|p| p[1].is_finite()));
        assert_eq!(out.dots.len(), 3);
        assert_eq!(out.marks.len(), 2);
    }

    #[test]
    fn a_step_holds_the_value_until_the_next_sample() {
        let times = [0, 10, 20];
        let s = series(&[1.0, 2.0, 3.0]);
        let levels = time_levels(&times);
        let w = Window::new(0, (0.0, 2e-8), 100).expect("window");
        let mut out: Trace<[f64; 2]> = Trace::default();
        trace(&times, &levels, &s, None, &w, Draw::Step, &mut out);
        assert_eq!(
            out.points,
            vec![
                [0.0, 1.0],
                [1e-8, 1.0],
                [1e-8, 2.0],
                [2e-8, 2.0],
                [2e-8, 3.0]
            ]
        );
    }
}
