//! Derived signals: an expression over signals ([`crate::data::expression`]), optionally
//! followed by a transform over time (derivative, integral, moving average, low-pass),
//! evaluated into a column like any decoded one, so it plots, scrubs, takes cursors and
//! exports alike. They are listed under [`DERIVED_TOPIC`] and named by the user.
//!
//! Alignment: the result has a sample at each sample of the input with the most samples (the
//! fastest); every other input gives its last sample at or before that time (held), and the
//! samples before every input has spoken are left out. Inputs from one topic share their
//! times, so `sqrt({/imu/acc.x}^2 + {/imu/acc.y}^2)` is exact per message.
//!
//! Values: a sample whose inputs lack a value (the message did not carry the field) has none;
//! a NaN the arithmetic makes (`sqrt(-1)`) is a value, marked like a NaN a recording holds.
//! The transforms skip non-finite samples (their result is left empty) and join the finite
//! ones on either side, as the range statistics do:
//! - derivative: `(v[i] - v[i-1]) / (t[i] - t[i-1])` per second, at `t[i]` (none for the
//!   first sample or two samples at one time);
//! - integral: the trapezoid rule from the first sample, value x s;
//! - moving average: the mean of the samples in the trailing window `(t - w, t]`;
//! - low-pass: first order with time constant `tau`, exact for a held input:
//!   `y += (1 - exp(-dt / tau)) * (x - y)`, starting at the first sample.

use std::sync::Arc;

use decode::LeafKind;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::data::expression::{BLOCK, Expression, ExpressionError, Lanes};
use crate::data::layout::SignalRef;
use crate::data::series::{DATA_NAN, Series, Typed};
use crate::data::topic_data::{FieldColumn, TopicData, find_gaps, time_levels};
use crate::data::xy::Column;

/// The topic name derived signals are listed under (`Derived/speed`).
pub const DERIVED_TOPIC: &str = "Derived";

/// A derived signal as the user defines it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DerivedSpec {
    /// Its name (the path under [`DERIVED_TOPIC`]).
    pub name: String,
    /// The expression over signals, `{topic/path}` in braces.
    pub expression: String,
    /// What is done with the expression's values over time.
    #[serde(default, skip_serializing_if = "Transform::is_none")]
    pub transform: Transform,
}

impl DerivedSpec {
    /// The signal it is plotted as.
    pub fn signal(&self) -> SignalRef {
        SignalRef {
            topic: DERIVED_TOPIC.to_owned(),
            path: self.name.clone(),
        }
    }
}

/// A transform over time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Transform {
    /// The expression's values.
    #[default]
    None,
    /// Rate of change per second.
    Derivative,
    /// Trapezoid integral over time, from the first sample.
    Integral,
    /// Mean over a trailing window.
    MovingAverage {
        /// The window, ms.
        window_ms: u64,
    },
    /// First-order low-pass.
    LowPass {
        /// Time constant, ms (cut-off frequency `1 / (2 pi tau)`).
        tau_ms: u64,
    },
}

impl Transform {
    fn is_none(&self) -> bool {
        *self == Transform::None
    }

    /// In words, for the tree and the editor.
    pub fn describe(&self) -> String {
        match self {
            Transform::None => String::new(),
            Transform::Derivative => "derivative (per s)".into(),
            Transform::Integral => "integral (x s)".into(),
            Transform::MovingAverage { window_ms } => format!("moving average over {window_ms} ms"),
            Transform::LowPass { tau_ms } => {
                let hz = 1000.0 / (std::f64::consts::TAU * (*tau_ms).max(1) as f64);
                format!("low-pass, tau {tau_ms} ms ({hz:.3} Hz)")
            }
        }
    }
}

/// Why a derived signal has no values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DerivedError {
    /// The expression is not one.
    #[error("the expression: {0}")]
    Expression(#[from] ExpressionError),
    /// It reads a signal this recording does not have.
    #[error("no signal {0} in this recording")]
    Missing(String),
    /// It reads a derived signal defined after it, or itself.
    #[error("{0} is not defined before this signal")]
    Order(String),
    /// Its name is empty, or holds a brace.
    #[error("a derived signal needs a name without braces")]
    Name,
    /// The name is taken.
    #[error("another derived signal is named {0}")]
    Duplicate(String),
}

/// Where a braced name in an expression points: `Derived/name`, else the longest of `topics`
/// followed by `/` and a path (`/imu/acc.x` in a recording with topic `/imu`).
pub fn resolve<'a>(name: &str, topics: impl IntoIterator<Item = &'a str>) -> Option<SignalRef> {
    if let Some(path) = name
        .strip_prefix(DERIVED_TOPIC)
        .and_then(|r| r.strip_prefix('/'))
    {
        return Some(SignalRef {
            topic: DERIVED_TOPIC.to_owned(),
            path: path.to_owned(),
        });
    }
    topics
        .into_iter()
        .filter(|t| {
            name.strip_prefix(t)
                .and_then(|r| r.strip_prefix('/'))
                .is_some_and(|path| !path.is_empty())
        })
        .max_by_key(|t| t.len())
        .map(|topic| SignalRef {
            topic: topic.to_owned(),
            path: name[topic.len() + 1..].to_owned(),
        })
}

/// One input's column: times and values, as an XY plot's signals are given.
pub type Input<'a> = Column<'a>;

/// The expression's values over `inputs` (in [`Expression::inputs`] order), aligned as the
/// module says, then `transform`: (times, values).
pub fn compute(
    expression: &Expression,
    transform: Transform,
    inputs: &[Input<'_>],
) -> (Vec<u64>, Vec<f64>) {
    let (times, values) = evaluate(expression, inputs);
    let values = apply(transform, &times, values);
    (times, values)
}

/// The expression at each sample of the fastest input. Blocks of [`BLOCK`] samples are
/// independent (each finds its held values by binary search), so they are evaluated on the
/// rayon pool.
fn evaluate(expression: &Expression, inputs: &[Input<'_>]) -> (Vec<u64>, Vec<f64>) {
    let Some((driver, lead)) = inputs
        .iter()
        .enumerate()
        .max_by_key(|(i, c)| (c.len(), usize::MAX - i))
    else {
        return (Vec::new(), Vec::new());
    };
    let all_times = lead.times.get(..lead.len()).unwrap_or(&[]);
    // Left out: the driver's samples before some other input's first one.
    let start = inputs
        .iter()
        .filter_map(|c| c.times.first())
        .max()
        .map_or(all_times.len(), |&t| all_times.partition_point(|&x| x < t));
    let times = all_times.get(start..).unwrap_or(&[]).to_vec();
    let mut values = vec![0.0; times.len()];
    values
        .par_chunks_mut(BLOCK)
        .zip(times.par_chunks(BLOCK))
        .enumerate()
        .for_each(|(b, (out, block))| {
            let from = start + b * BLOCK;
            let lanes = inputs
                .iter()
                .enumerate()
                .map(|(k, input)| {
                    let mut lane = Vec::with_capacity(block.len());
                    // The driver, and inputs of the same topic (the same time column): as
                    // they are.
                    let same_times =
                        input.times.as_ptr() == lead.times.as_ptr() && input.len() == lead.len();
                    if k == driver || same_times {
                        input
                            .series
                            .copy_values(from..from + block.len(), &mut lane);
                    } else {
                        let t = input.times.get(..input.len()).unwrap_or(&[]);
                        // Samples at or before the block's first time.
                        let mut cursor = block
                            .first()
                            .map_or(0, |&at| t.partition_point(|&x| x <= at));
                        for &at in block {
                            while t.get(cursor).is_some_and(|&x| x <= at) {
                                cursor += 1;
                            }
                            let held = cursor.checked_sub(1).and_then(|i| input.series.value(i));
                            lane.push(held.unwrap_or(f64::NAN));
                        }
                    }
                    // A short column (it cannot be, but a lane must fill its block).
                    lane.resize(block.len(), f64::NAN);
                    lane
                })
                .collect::<Vec<_>>();
            let mut absent = [false; BLOCK];
            for lane in &lanes {
                for (a, &v) in absent.iter_mut().zip(lane) {
                    *a |= crate::data::series::is_absent(v);
                }
            }
            expression.eval_block(lanes.into_iter().map(Lanes::Block).collect(), out);
            for (v, &a) in out.iter_mut().zip(&absent) {
                if a {
                    *v = f64::NAN;
                } else if v.is_nan() {
                    *v = DATA_NAN;
                }
            }
        });
    (times, values)
}

/// The transform over `values` at `times`.
fn apply(transform: Transform, times: &[u64], mut values: Vec<f64>) -> Vec<f64> {
    let secs = |a: u64, b: u64| b.saturating_sub(a) as f64 / 1e9;
    let mut last: Option<(u64, f64)> = None;
    match transform {
        Transform::None => {}
        Transform::Derivative => {
            for (v, &t) in values.iter_mut().zip(times) {
                let x = *v;
                if !x.is_finite() {
                    *v = f64::NAN;
                    continue;
                }
                *v = match last {
                    Some((t0, x0)) if t > t0 => (x - x0) / secs(t0, t),
                    _ => f64::NAN,
                };
                last = Some((t, x));
            }
        }
        Transform::Integral => {
            let mut sum = 0.0;
            for (v, &t) in values.iter_mut().zip(times) {
                let x = *v;
                if !x.is_finite() {
                    *v = f64::NAN;
                    continue;
                }
                if let Some((t0, x0)) = last {
                    sum += (x0 + x) / 2.0 * secs(t0, t);
                }
                *v = sum;
                last = Some((t, x));
            }
        }
        Transform::MovingAverage { window_ms } => {
            let window = window_ms.saturating_mul(1_000_000);
            let raw = values.clone();
            // Sum and count of the finite samples in (t - window, t]. The sum is compensated
            // (Neumaier), so that what a large sample leaves behind when it leaves the window
            // is not rounding: 1e16 then ones average to exactly 1 once it is gone.
            let (mut sum, mut count, mut tail) = (Compensated::default(), 0u64, 0usize);
            for (i, (v, &t)) in values.iter_mut().zip(times).enumerate() {
                let x = raw.get(i).copied().unwrap_or(f64::NAN);
                if x.is_finite() {
                    sum.add(x);
                    count += 1;
                }
                while tail <= i
                    && times
                        .get(tail)
                        .is_some_and(|&s| t.saturating_sub(s) >= window)
                {
                    if let Some(&y) = raw.get(tail).filter(|y| y.is_finite()) {
                        sum.add(-y);
                        count -= 1;
                        if count == 0 {
                            sum = Compensated::default();
                        }
                    }
                    tail += 1;
                }
                *v = if !x.is_finite() || count == 0 {
                    f64::NAN
                } else {
                    sum.value() / count as f64
                };
            }
        }
        Transform::LowPass { tau_ms } => {
            let tau = tau_ms as f64 / 1e3;
            for (v, &t) in values.iter_mut().zip(times) {
                let x = *v;
                if !x.is_finite() {
                    *v = f64::NAN;
                    continue;
                }
                let y = match last {
                    Some((t0, y0)) if tau > 0.0 => {
                        y0 + (1.0 - (-secs(t0, t) / tau).exp()) * (x - y0)
                    }
                    _ => x,
                };
                *v = y;
                last = Some((t, y));
            }
        }
    }
    values
}

/// A running sum with Neumaier's compensation: what each addition rounds away is kept apart
/// and added back.
#[derive(Debug, Default, Clone, Copy)]
struct Compensated {
    sum: f64,
    lost: f64,
}

impl Compensated {
    fn add(&mut self, x: f64) {
        let t = self.sum + x;
        self.lost += if self.sum.abs() >= x.abs() {
            (self.sum - t) + x
        } else {
            (x - t) + self.sum
        };
        self.sum = t;
    }

    fn value(&self) -> f64 {
        self.sum + self.lost
    }
}

/// A derived signal's column, as a topic of one field named `name`.
pub fn column(name: &str, times: Vec<u64>, values: Vec<f64>) -> TopicData {
    let (gaps, gap_count) = find_gaps(&times);
    TopicData {
        time_levels: time_levels(&times),
        times_ns: times,
        fields: vec![FieldColumn {
            path: name.to_owned(),
            kind: LeafKind::Float,
            series: Series::F64(Typed::new(values)),
        }],
        gaps,
        gap_count,
        ..TopicData::default()
    }
}

/// Evaluates `specs` in order: each may read recorded signals (through `lookup`) and the
/// derived signals before it. Each gets its column or why it has none; `None` when an input
/// is still loading.
pub fn evaluate_all(
    specs: &[DerivedSpec],
    topics: &[&str],
    lookup: &dyn Fn(&SignalRef) -> Lookup,
) -> Vec<Option<Result<Arc<TopicData>, DerivedError>>> {
    let mut done: Vec<Option<Result<Arc<TopicData>, DerivedError>>> = Vec::new();
    for (k, spec) in specs.iter().enumerate() {
        let earlier = specs.get(..k).unwrap_or(&[]);
        let result = (|| {
            if spec.name.trim().is_empty() || spec.name.contains(['{', '}']) {
                return Some(Err(DerivedError::Name));
            }
            if earlier.iter().any(|s| s.name == spec.name) {
                return Some(Err(DerivedError::Duplicate(spec.name.clone())));
            }
            let expression = match Expression::parse(&spec.expression) {
                Ok(e) => e,
                Err(e) => return Some(Err(e.into())),
            };
            let mut columns: Vec<(Arc<TopicData>, usize)> = Vec::new();
            for name in expression.inputs() {
                let Some(signal) = resolve(name, topics.iter().copied()) else {
                    return Some(Err(DerivedError::Missing(name.clone())));
                };
                let data = if signal.topic == DERIVED_TOPIC {
                    let Some(j) = earlier.iter().position(|s| s.name == signal.path) else {
                        return Some(Err(DerivedError::Order(name.clone())));
                    };
                    match done.get(j) {
                        Some(Some(Ok(d))) => Arc::clone(d),
                        Some(None) => return None,
                        _ => return Some(Err(DerivedError::Missing(name.clone()))),
                    }
                } else {
                    match lookup(&signal) {
                        Lookup::Found(d) => d,
                        Lookup::Loading => return None,
                        Lookup::Missing => return Some(Err(DerivedError::Missing(name.clone()))),
                    }
                };
                let Some(field) = data.fields.iter().position(|f| f.path == signal.path) else {
                    return Some(Err(DerivedError::Missing(name.clone())));
                };
                columns.push((data, field));
            }
            let inputs: Vec<Input<'_>> = columns
                .iter()
                .filter_map(|(d, f)| {
                    Some(Input {
                        times: &d.times_ns,
                        series: &d.fields.get(*f)?.series,
                    })
                })
                .collect();
            let (times, values) = compute(&expression, spec.transform, &inputs);
            Some(Ok(Arc::new(column(&spec.name, times, values))))
        })();
        done.push(result);
    }
    done
}

/// What the recording holds for a signal.
#[derive(Clone)]
pub enum Lookup {
    /// Its topic's columns.
    Found(Arc<TopicData>),
    /// Its topic is still loading.
    Loading,
    /// No such topic, or it failed.
    Missing,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(values: &[f64]) -> Series {
        Series::from_values(values)
    }

    fn run(text: &str, transform: Transform, inputs: &[(&[u64], &[f64])]) -> (Vec<u64>, Vec<f64>) {
        let e = Expression::parse(text).unwrap();
        let columns: Vec<Series> = inputs.iter().map(|(_, v)| series(v)).collect();
        let inputs: Vec<Input<'_>> = inputs
            .iter()
            .zip(&columns)
            .map(|((t, _), s)| Input {
                times: t,
                series: s,
            })
            .collect();
        compute(&e, transform, &inputs)
    }

    #[test]
    fn the_fastest_input_drives_and_the_others_are_held() {
        // a at 0..=5 s, b at 1.5 s and 3.5 s: nothing before b's first sample.
        let ta = [0, 1, 2, 3, 4, 5].map(|s| s * 1_000_000_000);
        let tb = [1_500_000_000, 3_500_000_000];
        let (t, v) = run(
            "{a} - {b}",
            Transform::None,
            &[(&ta, &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]), (&tb, &[10.0, 20.0])],
        );
        assert_eq!(t, ta[2..].to_vec());
        assert_eq!(v, vec![2.0 - 10.0, 3.0 - 10.0, 4.0 - 20.0, 5.0 - 20.0]);
    }

    #[test]
    fn held_values_are_right_across_blocks() {
        // a: 5000 samples 1 ms apart (five blocks); b: a sample every 333 ms, one of them
        // exactly on a block's first time.
        let ta: Vec<u64> = (0..5000u64).map(|i| i * 1_000_000).collect();
        let va: Vec<f64> = (0..5000).map(f64::from).collect();
        let tb: Vec<u64> = vec![0, 333_000_000, 1_024_000_000, 2_997_000_000, 4_500_000_000];
        let vb: Vec<f64> = vec![0.5, 1.5, 2.5, 3.5, 4.5];
        let (t, v) = run("{a} + {b}", Transform::None, &[(&ta, &va), (&tb, &vb)]);
        assert_eq!(t, ta);
        for (i, (&at, &got)) in t.iter().zip(&v).enumerate() {
            let held = tb.iter().rposition(|&x| x <= at).map(|k| vb[k]).unwrap();
            assert_eq!(got, va[i] + held, "at {at}");
        }
    }

    #[test]
    fn absent_inputs_give_no_value_and_computed_nan_is_a_value() {
        let t = [1, 2, 3];
        let (_, v) = run(
            "sqrt({a})",
            Transform::None,
            &[(&t, &[4.0, f64::NAN, -1.0])],
        );
        assert_eq!(v[0], 2.0);
        assert!(crate::data::series::is_absent(v[1]), "{v:?}");
        assert_eq!(v[2].to_bits(), DATA_NAN.to_bits());
    }

    #[test]
    fn transforms_match_hand_computed_values() {
        let t = [0, 500_000_000, 1_000_000_000, 2_000_000_000];
        let x: &[f64] = &[0.0, 1.0, 3.0, 3.0];
        let (_, d) = run("{x}", Transform::Derivative, &[(&t, x)]);
        assert!(d[0].is_nan());
        assert_eq!(&d[1..], &[2.0, 4.0, 0.0]);
        let (_, i) = run("{x}", Transform::Integral, &[(&t, x)]);
        assert_eq!(i, vec![0.0, 0.25, 0.25 + 1.0, 0.25 + 1.0 + 3.0]);
        let (_, m) = run(
            "{x}",
            Transform::MovingAverage { window_ms: 1000 },
            &[(&t, x)],
        );
        // (t - 1 s, t]: {0}, {0, 1}, {1, 3}, {3}.
        assert_eq!(m, vec![0.0, 0.5, 2.0, 3.0]);
        let (_, l) = run("{x}", Transform::LowPass { tau_ms: 1000 }, &[(&t, x)]);
        let a = |dt: f64| 1.0 - (-dt).exp();
        let y1 = a(0.5) * 1.0;
        let y2 = y1 + a(0.5) * (3.0 - y1);
        let y3 = y2 + a(1.0) * (3.0 - y2);
        assert_eq!(l, vec![0.0, y1, y2, y3]);
        // Scale and offset are an expression.
        let (_, s) = run("{x} * 2 + 1", Transform::None, &[(&t, x)]);
        assert_eq!(s, vec![1.0, 3.0, 7.0, 7.0]);
    }

    #[test]
    fn a_moving_average_forgets_a_large_sample_exactly() {
        // 1e16 then ones: once it has left the window, the average is 1, not what
        // 1e16 + 1 - 1e16 rounds to. The window never empties on the way.
        let t: Vec<u64> = (0..200u64).map(|i| i * 1_000_000).collect();
        let mut x = vec![1.0; 200];
        x[0] = 1e16;
        x[1] = 3.0;
        let (_, m) = run(
            "{x}",
            Transform::MovingAverage { window_ms: 10 },
            &[(&t, &x)],
        );
        assert!(m[5] > 1e14, "{}", m[5]);
        // (t - 10 ms, t] at 10 ms: the 3 and nine ones.
        assert_eq!(m[10], 1.2);
        assert!(m[11..].iter().all(|&v| v == 1.0), "{:?}", &m[11..15]);
    }

    #[test]
    fn transforms_skip_non_finite_samples_and_join_their_neighbours() {
        let t = [0, 1_000_000_000, 2_000_000_000];
        let (_, i) = run(
            "{x}",
            Transform::Integral,
            &[(&t, &[2.0, f64::INFINITY, 2.0])],
        );
        assert_eq!(i[0], 0.0);
        assert!(i[1].is_nan());
        assert_eq!(i[2], 4.0);
        let (_, d) = run("{x}", Transform::Derivative, &[(&t, &[2.0, f64::NAN, 4.0])]);
        assert_eq!(d[2], 1.0);
    }

    #[test]
    fn names_resolve_to_the_longest_topic() {
        let topics = ["/imu", "/imu/raw", "speed"];
        let r = |n: &str| resolve(n, topics).map(|s| (s.topic, s.path));
        assert_eq!(r("/imu/acc.x"), Some(("/imu".into(), "acc.x".into())));
        assert_eq!(
            r("/imu/raw/acc.x"),
            Some(("/imu/raw".into(), "acc.x".into()))
        );
        assert_eq!(r("speed/v"), Some(("speed".into(), "v".into())));
        assert_eq!(r("Derived/v"), Some((DERIVED_TOPIC.into(), "v".into())));
        assert_eq!(r("/gps/lat"), None);
        assert_eq!(r("/imu/"), None);
    }

    #[test]
    fn derived_signals_read_earlier_ones_and_say_what_is_wrong() {
        let data = Arc::new(column("x", vec![0, 1_000_000_000], vec![1.0, 3.0]));
        let lookup = |s: &SignalRef| {
            if s.topic == "/t" {
                Lookup::Found(Arc::new(TopicData {
                    fields: vec![FieldColumn {
                        path: "x".into(),
                        ..data.fields[0].clone()
                    }],
                    ..(*data).clone()
                }))
            } else if s.topic == "/slow" {
                Lookup::Loading
            } else {
                Lookup::Missing
            }
        };
        let spec = |name: &str, e: &str, transform| DerivedSpec {
            name: name.into(),
            expression: e.into(),
            transform,
        };
        let specs = [
            spec("double", "{/t/x} * 2", Transform::None),
            spec("rate", "{Derived/double}", Transform::Derivative),
            spec("later", "{Derived/next}", Transform::None),
            spec("gone", "{/t/y}", Transform::None),
            spec("waits", "{/slow/v}", Transform::None),
            spec("double", "1", Transform::None),
            spec("next", "1 +", Transform::None),
        ];
        let got = evaluate_all(&specs, &["/t", "/slow"], &lookup);
        let values = |k: usize| {
            let Some(Some(Ok(d))) = got.get(k) else {
                panic!("{k}: {:?}", got.get(k));
            };
            (0..d.times_ns.len())
                .map(|i| d.fields[0].series.value(i).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(values(0), vec![2.0, 6.0]);
        assert_eq!(values(1)[1], 4.0);
        let error = |k: usize| match got.get(k) {
            Some(Some(Err(e))) => Some(e.clone()),
            _ => None,
        };
        assert_eq!(error(2), Some(DerivedError::Order("Derived/next".into())));
        assert_eq!(error(3), Some(DerivedError::Missing("/t/y".into())));
        assert!(got[4].is_none());
        assert_eq!(error(5), Some(DerivedError::Duplicate("double".into())));
        assert!(matches!(got[6], Some(Err(DerivedError::Expression(_)))));
    }
}
