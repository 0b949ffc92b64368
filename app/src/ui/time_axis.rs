//! The plots' time axis: ticks in 1-2-5 steps from nanoseconds to hours, at least four of
//! them at any zoom and width, labelled short enough to fit between them, in seconds since
//! the recording's start or by the wall clock (UTC or local).
//!
//! When absolute labels would not fit (a microsecond step deep into an hour-long recording),
//! the ticks are labelled as offsets (`20µs`) from a base the axis names once
//! ([`Labels::base_text`]).

use time::{OffsetDateTime, UtcOffset};

/// What the time axis counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// Seconds since the recording's start.
    #[default]
    Relative,
    /// Wall clock, UTC.
    Utc,
    /// Wall clock at this offset from UTC (the machine's local time).
    Local(UtcOffset),
}

impl Clock {
    /// The machine's local time, when the offset can be read safely (not always possible
    /// in a process with threads; then `None`).
    pub fn local() -> Option<Self> {
        UtcOffset::current_local_offset().ok().map(Clock::Local)
    }

    /// The choice's name, as the plots' menu shows it.
    pub fn name(&self) -> &'static str {
        match self {
            Clock::Relative => "relative s",
            Clock::Utc => "UTC",
            Clock::Local(_) => "local time",
        }
    }
}

/// Width a tick label takes, in points per character (the axis font is [`TICK_FONT`] points).
pub const CHAR_PX: f64 = 6.0;

/// The tick labels' font size, points.
pub const TICK_FONT: f32 = 11.0;

/// Fewest labels on an axis.
pub const MIN_TICKS: usize = 4;

/// Tick steps, s: 1-2-5 from a nanosecond to 20 s, then minutes and hours.
fn steps() -> impl Iterator<Item = f64> {
    let decades = (-9..=1).flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)));
    let minutes = [60.0, 120.0, 300.0, 600.0, 1_200.0, 1_800.0];
    let hours = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0].map(|h| h * 3_600.0);
    decades.chain(minutes).chain(hours)
}

/// The largest step at most `max_step` (the smallest there is when none is).
fn step_at_most(max_step: f64) -> f64 {
    steps()
        .take_while(|&s| s <= max_step)
        .last()
        .unwrap_or(1e-9)
}

/// The ticks of `x0..x1` (s) on an axis `width_px` wide: the step and the tick values. About
/// one tick per 90 points, never fewer than [`MIN_TICKS`] (a window narrower than four
/// nanoseconds aside). Labels fit between them from 300 points on.
pub fn ticks(x0: f64, x1: f64, width_px: f64) -> (f64, Vec<f64>) {
    let span = x1 - x0;
    if span.is_nan() || span <= 0.0 || !x0.is_finite() || !x1.is_finite() {
        return (1.0, Vec::new());
    }
    let target = ((width_px / 90.0).floor() as usize).max(MIN_TICKS);
    let step = step_at_most(span / target as f64);
    let first = (x0 / step).ceil();
    let last = (x1 / step).floor();
    let count = (last - first + 1.0).clamp(0.0, 4.0 * target as f64) as usize;
    let ticks = (0..count).map(|k| (first + k as f64) * step).collect();
    (step, ticks)
}

/// How a window's ticks are labelled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Labels {
    clock: Clock,
    t0_ns: u64,
    step: f64,
    /// Ticks are labelled as offsets from this (s since the start), or absolutely.
    base: Option<f64>,
}

/// Decimals that tell ticks `step` apart.
fn decimals(step: f64) -> usize {
    (-step.log10() - 1e-9).ceil().max(0.0) as usize
}

impl Labels {
    /// Labels for `ticks` (from [`ticks`]) of the window `span` s wide on an axis `width_px`
    /// wide.
    pub fn new(
        clock: Clock,
        t0_ns: u64,
        step: f64,
        ticks: &[f64],
        span: f64,
        width_px: f64,
    ) -> Self {
        let mut labels = Self {
            clock,
            t0_ns,
            step,
            base: None,
        };
        let room = width_px * step / span;
        let widest = ticks
            .iter()
            .map(|&x| labels.label(x).chars().count())
            .max()
            .unwrap_or(0);
        if widest as f64 * CHAR_PX > room {
            labels.base = ticks.first().copied();
        }
        labels
    }

    /// The label of the tick at `x` s.
    pub fn label(&self, x: f64) -> String {
        if let Some(base) = self.base {
            return offset_text(x - base, self.step);
        }
        match self.clock {
            Clock::Relative => relative_text(x, self.step),
            Clock::Utc => wall_text(self.t0_ns, x, self.step, UtcOffset::UTC),
            Clock::Local(offset) => wall_text(self.t0_ns, x, self.step, offset),
        }
    }

    /// What the offsets count from, when the ticks are offsets: `t = 12.3456 s + …`.
    pub fn base_text(&self) -> Option<String> {
        let base = self.base?;
        let d = decimals(self.step).min(9);
        Some(match self.clock {
            Clock::Relative => format!("{base:.d$} s +"),
            Clock::Utc => format!(
                "{} UTC +",
                wall_text(self.t0_ns, base, self.step, UtcOffset::UTC)
            ),
            Clock::Local(offset) => {
                format!("{} +", wall_text(self.t0_ns, base, self.step, offset))
            }
        })
    }
}

/// `x` s since the start: seconds with the decimals `step` needs, `h:mm:ss` from a minute
/// step on.
fn relative_text(x: f64, step: f64) -> String {
    if step >= 60.0 {
        let sign = if x < 0.0 { "-" } else { "" };
        let total = x.abs().round() as u64;
        return format!(
            "{sign}{}:{:02}:{:02}",
            total / 3_600,
            total / 60 % 60,
            total % 60
        );
    }
    let d = decimals(step);
    let text = format!("{x:.d$} s");
    // A tick at zero is "0", never "-0".
    if text.starts_with('-') && x.abs() < step / 2.0 {
        text[1..].to_owned()
    } else {
        text
    }
}

/// An offset of `dx` s, in a unit at most ten steps: `20µs`, `1.8µs`, `2min` (the axis names
/// the base with a `+`).
fn offset_text(dx: f64, step: f64) -> String {
    let units = [
        (1e-9, "ns"),
        (1e-6, "µs"),
        (1e-3, "ms"),
        (1.0, "s"),
        (60.0, "min"),
        (3_600.0, "h"),
    ];
    let (unit, name) = units
        .iter()
        .copied()
        .rfind(|&(u, _)| u <= step * 10.0 && (u < 60.0 || u <= step))
        .unwrap_or((1e-9, "ns"));
    let d = decimals(step / unit);
    format!("{:.d$}{name}", dx / unit)
}

/// The wall-clock time `x` s after `t0_ns`, at `offset`: `08:00:12.345` with the decimals
/// `step` needs, `08:20` from a minute step on.
fn wall_text(t0_ns: u64, x: f64, step: f64, offset: UtcOffset) -> String {
    let t_ns = i128::from(t0_ns) + (x * 1e9).round() as i128;
    let Ok(t) = OffsetDateTime::from_unix_timestamp_nanos(t_ns) else {
        return format!("{x:.3} s");
    };
    let t = t.to_offset(offset);
    if step >= 60.0 {
        return format!("{:02}:{:02}", t.hour(), t.minute());
    }
    let d = decimals(step).min(9);
    let mut text = format!("{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second());
    if d > 0 {
        let frac = format!("{:09}", t.nanosecond());
        text.push('.');
        text.push_str(frac.get(..d).unwrap_or(&frac));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-06-01T08:00:00Z.
    const T0: u64 = 1_780_300_800_000_000_000;

    #[test]
    fn at_least_four_distinct_labels_that_fit_at_any_zoom_and_width() {
        let mut spans: Vec<f64> = Vec::new();
        let mut s: f64 = 4e-9;
        while s < 4.0 * 3_600.0 {
            spans.push(s);
            s *= 1.37;
        }
        spans.push(3.0 * 3_600.0);
        for &span in &spans {
            for width in [300.0, 400.0, 800.0, 1_333.0, 2_500.0, 4_000.0] {
                for start in [
                    0.0,
                    0.123_456_789,
                    1_234.567_891,
                    10_799.0 - span.min(10_000.0),
                ] {
                    for clock in [Clock::Relative, Clock::Utc] {
                        let (x0, x1) = (start, start + span);
                        let (step, marks) = ticks(x0, x1, width);
                        let what = format!("span {span} s at {start} s, {width} px, {clock:?}");
                        assert!(marks.len() >= MIN_TICKS, "{what}: {} ticks", marks.len());
                        assert!(marks.iter().all(|&x| x >= x0 && x <= x1), "{what}");
                        let labels = Labels::new(clock, T0, step, &marks, span, width);
                        let texts: Vec<String> = marks.iter().map(|&x| labels.label(x)).collect();
                        let mut unique = texts.clone();
                        unique.sort();
                        unique.dedup();
                        assert_eq!(unique.len(), texts.len(), "{what}: {texts:?}");
                        // Each label fits the room a tick has (egui_plot skips those that do
                        // not).
                        let room = width * step / span;
                        for t in &texts {
                            assert!(
                                t.chars().count() as f64 * CHAR_PX <= room,
                                "{what}: {t:?} in {room} px ({texts:?})"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_sub_second_recording_is_labelled_in_its_own_digits() {
        let (step, marks) = ticks(0.0, 0.4, 800.0);
        let labels = Labels::new(Clock::Relative, T0, step, &marks, 0.4, 800.0);
        let texts: Vec<String> = marks.iter().map(|&x| labels.label(x)).collect();
        assert_eq!(
            texts,
            [
                "0.00 s", "0.05 s", "0.10 s", "0.15 s", "0.20 s", "0.25 s", "0.30 s", "0.35 s",
                "0.40 s"
            ]
        );
    }

    #[test]
    fn three_hours_by_the_clock_and_since_the_start() {
        let (step, marks) = ticks(0.0, 3.0 * 3_600.0, 800.0);
        assert_eq!(step, 1_200.0);
        let rel = Labels::new(Clock::Relative, T0, step, &marks, 10_800.0, 800.0);
        assert_eq!(rel.label(5_400.0), "1:30:00");
        let utc = Labels::new(Clock::Utc, T0, step, &marks, 10_800.0, 800.0);
        assert_eq!(utc.label(5_400.0), "09:30");
        let local = Labels::new(
            Clock::Local(UtcOffset::from_hms(2, 0, 0).unwrap_or(UtcOffset::UTC)),
            T0,
            step,
            &marks,
            10_800.0,
            800.0,
        );
        assert_eq!(local.label(5_400.0), "11:30");
    }

    #[test]
    fn nanosecond_ticks_deep_in_a_recording_are_offsets_from_a_named_base() {
        let (step, marks) = ticks(1_234.567_891_000, 1_234.567_891_050, 400.0);
        assert_eq!(step, 1e-8);
        let labels = Labels::new(Clock::Relative, T0, step, &marks, 5e-8, 400.0);
        assert_eq!(labels.base_text().as_deref(), Some("1234.56789100 s +"));
        assert_eq!(labels.label(1_234.567_891_020), "20ns");
    }
}
