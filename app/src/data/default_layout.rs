//! The default layout: what a recording shows before the user has chosen anything. Up to
//! [`MAX_PLOTS`] plots of informative fields (they vary, and are not timestamps or counters),
//! one topic per plot, and only fields of one unit and a similar scale sharing an axis, so a
//! plot never squashes coolant temperature flat under engine speed.
//!
//! The chooser works on [`FieldStats`], a few numbers per field read from the columns'
//! pyramids, so it costs next to nothing however long the recording is and can be tested on
//! synthetic columns.

use decode::LeafKind;

use crate::data::layout::{Layout, PlotSpec, SignalRef};
use crate::data::topic_data::{FieldColumn, TopicData};

/// Plots in a default layout.
pub const MAX_PLOTS: usize = 4;

/// Signals in one default plot.
pub const MAX_SIGNALS_PER_PLOT: usize = 4;

/// Each field of a shared plot spans at least this share of the plot's y extent (else it
/// would be drawn as a flat line).
pub const MIN_SHARE_OF_AXIS: f64 = 0.1;

/// Samples looked at to tell a counter or a timestamp (never decreasing) from a signal.
const MONOTONIC_PROBES: usize = 64;

/// Values at or above this that never decrease are clock readings (epoch seconds are 1.7e9).
const CLOCK_MAGNITUDE: f64 = 1e9;

/// What the chooser knows about one field.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldStats {
    /// The leaf's path.
    pub path: String,
    /// What it holds.
    pub kind: LeafKind,
    /// Smallest value present.
    pub min: f64,
    /// Largest value present.
    pub max: f64,
    /// True when, probed across the recording, it never decreases.
    pub never_decreasing: bool,
}

impl FieldStats {
    /// The stats of `column`; `None` when it holds no value at all.
    pub fn of(column: &FieldColumn) -> Option<Self> {
        let len = column.series.len();
        let (min, max) = column.series.min_max(0, len)?;
        // Probe evenly spaced samples rather than scanning: this runs on the UI thread.
        let step = (len / MONOTONIC_PROBES).max(1);
        let mut last = f64::NEG_INFINITY;
        let mut never_decreasing = true;
        for i in (0..len).step_by(step).chain(len.checked_sub(1)) {
            let Some(v) = column.series.value(i).filter(|v| !v.is_nan()) else {
                continue;
            };
            if v < last {
                never_decreasing = false;
                break;
            }
            last = v;
        }
        Some(Self {
            path: column.path.clone(),
            kind: column.kind,
            min,
            max,
            never_decreasing,
        })
    }

    /// Stats of every field of `data` that holds a value.
    pub fn of_topic(data: &TopicData) -> Vec<Self> {
        data.fields.iter().filter_map(Self::of).collect()
    }

    /// True when plotting it tells something: it varies, and it is neither a time, nor a
    /// header, nor a counter.
    pub fn informative(&self) -> bool {
        self.min < self.max && self.plottable()
    }

    /// True unless it is a time, a header field or a counter (it may be constant).
    pub fn plottable(&self) -> bool {
        let time_kind = matches!(self.kind, LeafKind::TimeNs | LeafKind::DurationNs);
        let integer = matches!(self.kind, LeafKind::Int | LeafKind::UInt);
        // A constant integer is a constant, not a counter.
        let counter = self.never_decreasing && integer && self.min < self.max;
        let clock = self.never_decreasing && self.max.abs() >= CLOCK_MAGNITUDE;
        !time_kind && !counter && !clock && !time_named(&self.path)
    }

    /// True for booleans, enums and union tags: drawn as steps, never beside a measurement.
    fn discrete(&self) -> bool {
        matches!(self.kind, LeafKind::Bool | LeafKind::Enum | LeafKind::Which)
    }
}

/// True for a header's fields and leaves named as times (`stamp`, `timestamp`, `*_ns`).
fn time_named(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    if lower.starts_with("header.") || lower.contains(".header.") || lower.contains("stamp") {
        return true;
    }
    let leaf = lower.rsplit('.').next().unwrap_or(&lower);
    matches!(
        leaf,
        "time" | "t" | "sec" | "secs" | "nanosec" | "nsec" | "nsecs"
    ) || ["_ns", "_us", "_time", "time_ns"]
        .iter()
        .any(|s| leaf.ends_with(s))
}

/// The unit a leaf's name ends with (`coolantTempC` -> `C`, `engine_rpm` -> `rpm`), when it is
/// one the chooser knows; fields with different units never share an axis.
pub fn unit_of(path: &str) -> Option<&'static str> {
    let leaf = path.rsplit('.').next().unwrap_or(path);
    // `cellTempsC[3]` is a `C` like `cellTempsC`.
    let leaf = leaf.split('[').next().unwrap_or(leaf);
    // The last word: after the last `_`, or from the last upper-case run (`TempC`, `DegC`).
    let word = match leaf.rfind('_') {
        Some(i) => leaf.get(i + 1..).unwrap_or(leaf),
        None => {
            let chars: Vec<(usize, char)> = leaf.char_indices().collect();
            let mut start = 0;
            for (k, &(i, c)) in chars.iter().enumerate() {
                let prev_lower = k > 0
                    && chars
                        .get(k - 1)
                        .is_some_and(|&(_, p)| p.is_ascii_lowercase() || p.is_ascii_digit());
                if c.is_ascii_uppercase() && prev_lower {
                    start = i;
                }
            }
            leaf.get(start..).unwrap_or(leaf)
        }
    };
    // A bare one-letter leaf (`x`, `w`, `a`) is a coordinate or a name, not a unit.
    if word.len() == leaf.len() && word.len() == 1 {
        return None;
    }
    let unit = match word.to_ascii_lowercase().as_str() {
        "c" | "degc" | "celsius" => "degC",
        "f" | "degf" | "fahrenheit" => "degF",
        "k" | "kelvin" => "K",
        "rpm" => "rpm",
        "pct" | "percent" => "%",
        "deg" | "degrees" => "deg",
        "rad" | "radians" => "rad",
        "rads" | "radps" => "rad/s",
        "dps" | "degps" => "deg/s",
        "v" | "volt" | "volts" | "mv" => "V",
        "a" | "amp" | "amps" | "ma" => "A",
        "w" | "watt" | "watts" | "kw" => "W",
        "m" | "meters" | "metres" | "km" | "mm" | "cm" => "m",
        "s" | "ms" | "secs" | "seconds" => "s",
        "hz" | "khz" => "Hz",
        "kph" | "kmh" | "mps" | "mph" => "speed",
        "mps2" | "g" => "accel",
        "bar" | "kpa" | "pa" | "psi" | "hpa" => "pressure",
        "nm" => "Nm",
        _ => return None,
    };
    Some(unit)
}

/// Fields of one topic that may share an axis.
#[derive(Debug)]
struct Group<'a> {
    fields: Vec<&'a FieldStats>,
    discrete: bool,
}

impl Group<'_> {
    /// True when `f` may join: same unit (or none on both), same family (discrete or not),
    /// and every field, `f` included, still spans [`MIN_SHARE_OF_AXIS`] of the shared axis.
    fn accepts(&self, f: &FieldStats) -> bool {
        if self.fields.len() >= MAX_SIGNALS_PER_PLOT || self.discrete != f.discrete() {
            return false;
        }
        let unit = unit_of(&f.path);
        if self.fields.iter().any(|g| unit_of(&g.path) != unit) {
            return false;
        }
        let all = || self.fields.iter().copied().chain(std::iter::once(f));
        let lo = all().map(|g| g.min).fold(f64::INFINITY, f64::min);
        let hi = all().map(|g| g.max).fold(f64::NEG_INFINITY, f64::max);
        let extent = hi - lo;
        // Stats are of finite values (infinities are drawn as edge marks, not scaled to), so
        // the extent is finite; the check guards against a sum that overflows to infinity.
        extent.is_finite() && all().all(|g| (g.max - g.min) >= MIN_SHARE_OF_AXIS * extent)
    }
}

/// A topic as the default layout weighs it.
#[derive(Debug, Clone)]
pub struct TopicCandidate {
    /// Its name.
    pub topic: String,
    /// Its messages.
    pub message_count: u64,
    /// True for a log, string or diagnostic topic: its numbers are codes and levels.
    pub text_like: bool,
    /// Its fields.
    pub fields: Vec<FieldStats>,
}

/// The topics in the order the default layout takes them: measurements before text-like
/// topics, then the busiest first (a 100 Hz IMU before a 1 Hz battery); ties keep the
/// recording's order.
pub fn in_order_of_interest(mut topics: Vec<TopicCandidate>) -> Vec<(String, Vec<FieldStats>)> {
    topics.sort_by_key(|t| (t.text_like, std::cmp::Reverse(t.message_count)));
    topics.into_iter().map(|t| (t.topic, t.fields)).collect()
}

/// The default layout for topics given as `(name, field stats)`, in the order given:
/// each topic's informative fields grouped by unit and scale, then one group per topic in
/// turn (measurements before discrete states) until [`MAX_PLOTS`] plots. Empty when nothing
/// varies (see [`constant_fields_layout`]).
pub fn choose_default_layout(topics: &[(String, Vec<FieldStats>)]) -> Layout {
    layout_of(topics, FieldStats::informative)
}

/// For a recording where no field varies (a test fixture, a parked vehicle) and nothing else
/// is to be read: its constant fields, grouped as [`choose_default_layout`] groups, rather
/// than nothing. Times, headers and counters are still left out.
pub fn constant_fields_layout(topics: &[(String, Vec<FieldStats>)]) -> Layout {
    layout_of(topics, FieldStats::plottable)
}

fn layout_of(topics: &[(String, Vec<FieldStats>)], wanted: fn(&FieldStats) -> bool) -> Layout {
    // Per topic, its groups in field order.
    let mut per_topic: Vec<(&str, Vec<Group<'_>>)> = Vec::new();
    for (topic, fields) in topics {
        let mut groups: Vec<Group<'_>> = Vec::new();
        for f in fields.iter().filter(|f| wanted(f)) {
            match groups.iter_mut().find(|g| g.accepts(f)) {
                Some(g) => g.fields.push(f),
                None => groups.push(Group {
                    fields: vec![f],
                    discrete: f.discrete(),
                }),
            }
        }
        per_topic.push((topic, groups));
    }
    let mut layout = Layout::default();
    for discrete in [false, true] {
        // Round robin across topics, so four topics show before any topic shows twice.
        let mut round = 0;
        loop {
            let mut any = false;
            for (topic, groups) in &per_topic {
                let Some(group) = groups.iter().filter(|g| g.discrete == discrete).nth(round)
                else {
                    continue;
                };
                any = true;
                if layout.plots.len() >= MAX_PLOTS {
                    return layout;
                }
                layout.plots.push(PlotSpec::of(
                    group
                        .fields
                        .iter()
                        .map(|f| SignalRef {
                            topic: (*topic).to_owned(),
                            path: f.path.clone(),
                        })
                        .collect(),
                ));
            }
            if !any {
                break;
            }
            round += 1;
        }
    }
    layout
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::series::Series;
    use crate::data::series::Typed;

    fn column(path: &str, kind: LeafKind, values: &[f64]) -> FieldColumn {
        FieldColumn {
            path: path.into(),
            kind,
            series: Series::F64(Typed::new(values.to_vec())),
        }
    }

    fn wave(n: usize, offset: f64, amplitude: f64) -> Vec<f64> {
        (0..n)
            .map(|i| offset + amplitude * (i as f64 * 0.1).sin())
            .collect()
    }

    fn stats(columns: &[FieldColumn]) -> Vec<FieldStats> {
        columns.iter().filter_map(FieldStats::of).collect()
    }

    fn paths(layout: &Layout) -> Vec<Vec<String>> {
        layout
            .plots
            .iter()
            .map(|p| p.signals.iter().map(SignalRef::label).collect())
            .collect()
    }

    #[test]
    fn constants_timestamps_and_counters_are_left_out() {
        let n = 500;
        let engine = stats(&[
            column("header.seq", LeafKind::UInt, &wave(n, 5.0, 1.0)),
            column(
                "header.stampNs",
                LeafKind::UInt,
                &(0..n).map(|i| 1.7e18 + i as f64 * 1e7).collect::<Vec<_>>(),
            ),
            column(
                "seq",
                LeafKind::UInt,
                &(0..n).map(|i| i as f64).collect::<Vec<_>>(),
            ),
            column(
                "measured_at",
                LeafKind::Float,
                &(0..n).map(|i| 1.7e9 + i as f64 * 0.01).collect::<Vec<_>>(),
            ),
            column("stamp", LeafKind::TimeNs, &wave(n, 5.0, 1.0)),
            column("gear", LeafKind::Enum, &vec![3.0; n]),
            column("limit", LeafKind::Float, &vec![120.0; n]),
            column("rpm", LeafKind::Float, &wave(n, 3000.0, 2000.0)),
        ]);
        let layout = choose_default_layout(&[("car/engine".into(), engine.clone())]);
        assert_eq!(paths(&layout), vec![vec!["car/engine/rpm".to_owned()]]);
        // Without rpm nothing varies: no default layout; the constants on request, never
        // times or counters.
        let rest: Vec<FieldStats> = engine.into_iter().filter(|f| f.path != "rpm").collect();
        let topics = [("car/engine".to_owned(), rest)];
        assert!(choose_default_layout(&topics).plots.is_empty());
        assert_eq!(
            paths(&constant_fields_layout(&topics)),
            vec![
                vec!["car/engine/limit".to_owned()],
                vec!["car/engine/gear".to_owned()]
            ]
        );
    }

    #[test]
    fn rpm_and_degrees_celsius_never_share_an_axis_even_at_the_same_scale() {
        let n = 300;
        let engine = stats(&[
            column("rpm", LeafKind::Float, &wave(n, 90.0, 10.0)),
            column("coolantTempC", LeafKind::Float, &wave(n, 90.0, 10.0)),
        ]);
        let layout = choose_default_layout(&[("car/engine".into(), engine)]);
        assert_eq!(
            paths(&layout),
            vec![
                vec!["car/engine/rpm".to_owned()],
                vec!["car/engine/coolantTempC".to_owned()]
            ]
        );
    }

    #[test]
    fn fields_of_one_topic_and_similar_scale_share_a_plot_and_a_flat_one_does_not() {
        let n = 300;
        let imu = stats(&[
            column("acc.x", LeafKind::Float, &wave(n, 0.0, 2.0)),
            column("acc.y", LeafKind::Float, &wave(n, 0.5, 1.5)),
            // Gravity: around 9.81, varying by 0.05 on an axis 12 wide.
            column("acc.z", LeafKind::Float, &wave(n, 9.81, 0.05)),
        ]);
        let layout = choose_default_layout(&[("car/imu".into(), imu)]);
        assert_eq!(
            paths(&layout),
            vec![
                vec!["car/imu/acc.x".to_owned(), "car/imu/acc.y".to_owned()],
                vec!["car/imu/acc.z".to_owned()]
            ]
        );
    }

    #[test]
    fn topics_take_turns_and_there_are_at_most_four_plots_measurements_first() {
        let n = 200;
        let topic = |name: &str| {
            (
                name.to_owned(),
                stats(&[
                    column("state", LeafKind::Enum, &wave(n, 2.0, 1.0)),
                    column("speedKph", LeafKind::Float, &wave(n, 50.0, 30.0)),
                    column("tempC", LeafKind::Float, &wave(n, 40.0, 3.0)),
                ]),
            )
        };
        let layout = choose_default_layout(&[topic("a"), topic("b"), topic("c")]);
        assert_eq!(
            paths(&layout),
            vec![
                vec!["a/speedKph".to_owned()],
                vec!["b/speedKph".to_owned()],
                vec!["c/speedKph".to_owned()],
                vec!["a/tempC".to_owned()],
            ]
        );
        // With room left, discrete states come after every measurement.
        let layout = choose_default_layout(&[topic("a")]);
        assert_eq!(
            paths(&layout),
            vec![
                vec!["a/speedKph".to_owned()],
                vec!["a/tempC".to_owned()],
                vec!["a/state".to_owned()],
            ]
        );
    }

    #[test]
    fn a_field_with_an_infinite_value_groups_by_its_finite_range_and_absent_columns_are_skipped() {
        let n = 100;
        let mut with_inf = wave(n, 0.0, 1.0);
        with_inf[10] = f64::INFINITY;
        let fields = stats(&[
            column("a", LeafKind::Float, &with_inf),
            column("b", LeafKind::Float, &wave(n, 0.0, 1.0)),
            column("empty", LeafKind::Float, &vec![f64::NAN; n]),
        ]);
        assert_eq!(fields.len(), 2, "an all-absent column has no stats");
        assert_eq!(
            (fields[0].min, fields[0].max),
            (fields[1].min, fields[1].max)
        );
        // The plot scales to finite values and marks the infinity at its edge, so `a` shares
        // `b`'s axis as its finite values would.
        let layout = choose_default_layout(&[("t".into(), fields)]);
        assert_eq!(
            paths(&layout),
            vec![vec!["t/a".to_owned(), "t/b".to_owned()]]
        );
        // Only a field whose values span a sliver of the shared axis goes alone.
        let fields = stats(&[
            column("a", LeafKind::Float, &with_inf),
            column("b", LeafKind::Float, &wave(n, 0.0, 1000.0)),
        ]);
        let layout = choose_default_layout(&[("t".into(), fields)]);
        assert_eq!(
            paths(&layout),
            vec![vec!["t/a".to_owned()], vec!["t/b".to_owned()]]
        );
    }

    #[test]
    fn busy_measurements_come_before_slow_ones_and_text_topics_last() {
        let n = 100;
        let candidate = |topic: &str, message_count, text_like| TopicCandidate {
            topic: topic.into(),
            message_count,
            text_like,
            fields: stats(&[column("valueV", LeafKind::Float, &wave(n, 1.0, 1.0))]),
        };
        let ordered = in_order_of_interest(vec![
            candidate("battery", 10, false),
            candidate("diagnostics", 500, true),
            candidate("imu", 1000, false),
            candidate("engine", 500, false),
            candidate("wheels", 500, false),
        ]);
        let names: Vec<&str> = ordered.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(names, ["imu", "engine", "wheels", "battery", "diagnostics"]);
    }

    #[test]
    fn units_are_read_from_the_end_of_the_leaf_name() {
        assert_eq!(unit_of("coolantTempC"), Some("degC"));
        assert_eq!(unit_of("cellTempsC[3]"), Some("degC"));
        assert_eq!(unit_of("engine_rpm"), Some("rpm"));
        assert_eq!(unit_of("rpm"), Some("rpm"));
        assert_eq!(unit_of("throttlePositionPct"), Some("%"));
        assert_eq!(unit_of("linearAcceleration.x"), None);
        assert_eq!(unit_of("hdop"), None);
        assert_eq!(unit_of("orientation.w"), None);
        assert_eq!(unit_of("currentA"), Some("A"));
    }
}
