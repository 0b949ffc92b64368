//! The plots never draw what is not in the recording (issue 20, item 1), as a property: for
//! random sparse, bursty and gappy series at random zooms, every drawn pixel column holds a
//! sample or lies on the connection of two adjacent samples with no gap between them, each
//! column's drawn extent is the true min and max of its samples, and the pyramid's summaries
//! equal a brute-force scan.

use proptest::prelude::*;
use scope::data::envelope::{Cell, Draw, Trace, Window, cells, trace};
use scope::data::series::{DATA_NAN, Series, SeriesBuilder, flag_of};
use scope::data::topic_data::{gap_threshold, time_levels};

/// One generated case.
#[derive(Debug, Clone)]
struct Case {
    times: Vec<u64>,
    values: Vec<f64>,
    use_gap_rule: bool,
    window: (f64, f64),
    width: usize,
    draw: Draw,
}

/// Intervals between samples: steady with jitter, bursts with long silences, rare samples.
fn intervals() -> impl Strategy<Value = Vec<u64>> {
    let steady = (1_000u64..2_000_000, 0usize..6).prop_flat_map(|(period, silences)| {
        prop::collection::vec(
            prop_oneof![
                20 => period..period + period / 4 + 1,
                // A silence of many periods now and then.
                (silences as u32) => period * 6..period * 400,
            ],
            1..3_000,
        )
    });
    let bursty = prop::collection::vec(
        prop_oneof![
            8 => 0u64..50,
            2 => 50u64..5_000,
            1 => 10_000_000u64..3_000_000_000,
        ],
        1..3_000,
    );
    let sparse = prop::collection::vec(1u64..10_000_000_000, 1..40);
    prop_oneof![steady, bursty, sparse]
}

fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        30 => -1e3f64..1e3,
        10 => (-5i32..5).prop_map(f64::from),
        2 => prop_oneof![-1e300f64..1e300, -1e-9f64..1e-9],
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(DATA_NAN),
        1 => Just(f64::NAN),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (intervals(), any::<bool>(), 1usize..400, any::<bool>()).prop_flat_map(
        |(gaps, use_gap_rule, width, step)| {
            let mut t = 1_780_300_800_000_000_000u64;
            let times: Vec<u64> = gaps
                .iter()
                .map(|g| {
                    t += g;
                    t
                })
                .collect();
            let span = (times.last().copied().unwrap_or(t) - times[0]) as f64 / 1e9;
            let n = times.len();
            (
                Just(times),
                prop::collection::vec(value(), n),
                Just(use_gap_rule),
                // A window anywhere from well before the start to past the end, down to a
                // small fraction of the span.
                (-0.2f64..1.0, 1e-4f64..1.3),
                Just(width),
                Just(if step { Draw::Step } else { Draw::Linear }),
                Just(span.max(1e-6)),
            )
                .prop_map(
                    |(times, values, use_gap_rule, (start, len), width, draw, span)| Case {
                        times,
                        values,
                        use_gap_rule,
                        window: (start * span, (start + len) * span),
                        width,
                        draw,
                    },
                )
        },
    )
}

fn series(values: &[f64]) -> Series {
    let mut b = SeriesBuilder::default();
    for &v in values {
        b.push(v);
    }
    b.finish()
}

/// The brute-force truth of one pixel column.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Truth {
    min_max: Option<(f64, f64)>,
    flags: u8,
}

struct Checker<'a> {
    c: &'a Case,
    w: Window,
    t0: u64,
    xs: Vec<f64>,
    /// The value each sample holds as stored (f32 columns round).
    vs: Vec<f64>,
    gap: Option<u64>,
    truth: Vec<Truth>,
}

impl<'a> Checker<'a> {
    fn new(c: &'a Case, s: &Series) -> Self {
        let t0 = c.times[0];
        let w = Window::new(t0, c.window, c.width).expect("window");
        let xs: Vec<f64> = c.times.iter().map(|&t| w.x_of(t)).collect();
        let vs: Vec<f64> = (0..c.values.len())
            .map(|i| s.value(i).expect("value"))
            .collect();
        let gap = if c.use_gap_rule {
            gap_threshold(&c.times)
        } else {
            None
        };
        let mut truth = vec![Truth::default(); c.width];
        for (i, &x) in xs.iter().enumerate() {
            let Some(px) = w.column(x) else { continue };
            let v = vs[i];
            let t = &mut truth[px];
            t.flags |= flag_of(v);
            if v.is_finite() {
                t.min_max = Some(match t.min_max {
                    None => (v, v),
                    Some((a, b)) => (a.min(v), b.max(v)),
                });
            }
        }
        Self {
            c,
            w,
            t0,
            xs,
            vs,
            gap,
            truth,
        }
    }

    fn joined(&self, i: usize) -> bool {
        i + 1 < self.vs.len()
            && self.vs[i].is_finite()
            && self.vs[i + 1].is_finite()
            && self
                .gap
                .is_none_or(|g| self.c.times[i + 1] - self.c.times[i] <= g)
    }

    fn holds_sample(&self, x: f64) -> bool {
        self.w
            .column(x)
            .is_some_and(|px| self.truth[px].min_max.is_some())
    }

    /// True when `p` lies on the drawn connection of samples `i` and `i + 1`.
    fn on_connection(&self, i: usize, p: [f64; 2]) -> bool {
        let (xa, xb, a, b) = (self.xs[i], self.xs[i + 1], self.vs[i], self.vs[i + 1]);
        let near = |u: f64, v: f64| (u - v).abs() <= 1e-9 * (1.0 + u.abs().max(v.abs()));
        let x_eps = 1e-12 * (1.0 + xa.abs().max(xb.abs()));
        if p[0] < xa - x_eps || p[0] > xb + x_eps {
            return false;
        }
        match self.c.draw {
            Draw::Linear => {
                let y = if xb > xa {
                    a + (b - a) * ((p[0] - xa) / (xb - xa))
                } else {
                    a
                };
                near(p[1], y)
                    || (near(p[0], xa) && near(p[1], a))
                    || (near(p[0], xb) && near(p[1], b))
            }
            Draw::Step => {
                near(p[1], a)
                    || (near(p[0], xb) && (p[1] - a) * (p[1] - b) <= 0.0)
                    || (near(p[0], xb) && near(p[1], b))
            }
        }
    }

    /// True when the segment `p`-`q` lies on the connection of two joined samples.
    fn on_a_join(&self, p: [f64; 2], q: [f64; 2]) -> bool {
        let lo = p[0].min(q[0]);
        let first = self.xs.partition_point(|&x| x < lo).saturating_sub(2);
        (first..self.xs.len().saturating_sub(1))
            .take_while(|&i| self.xs[i] <= lo + 1e-9)
            .any(|i| {
                self.joined(i)
                    && self.on_connection(i, p)
                    && self.on_connection(i, q)
                    && match self.c.draw {
                        // A step's two pieces are separate segments.
                        Draw::Step => p[1] == q[1] || p[0] == q[0],
                        Draw::Linear => true,
                    }
            })
    }

    fn check_cells(&self, cells: &[Cell]) -> Result<(), String> {
        let mut got = vec![Truth::default(); self.c.width];
        for cell in cells {
            for i in cell.lo..cell.hi {
                if self.w.column(self.xs[i]) != Some(cell.px) {
                    return Err(format!("sample {i} is not in column {}", cell.px));
                }
            }
            let g = &mut got[cell.px];
            g.flags |= cell.summary.flags;
            if let Some((a, b)) = cell.summary.min_max {
                g.min_max = Some(match g.min_max {
                    None => (a, b),
                    Some((x, y)) => (x.min(a), y.max(b)),
                });
            }
        }
        for (px, (g, t)) in got.iter().zip(&self.truth).enumerate() {
            if g != t {
                return Err(format!("column {px}: pyramid {g:?}, brute force {t:?}"));
            }
        }
        Ok(())
    }

    fn check_trace(&self, out: &Trace<[f64; 2]>) -> Result<(), String> {
        // Vertices that end a segment lying on a join may lie outside their column's extent.
        let mut on_joins: Vec<[f64; 2]> = Vec::new();
        for line in out.lines() {
            if line.len() < 2 {
                return Err("a polyline of fewer than two vertices".into());
            }
            for pair in line.windows(2) {
                let (p, q) = (pair[0], pair[1]);
                for v in [p, q] {
                    if !v[1].is_finite() || self.w.column(v[0]).is_none() {
                        return Err(format!("vertex {v:?} outside the window or not finite"));
                    }
                }
                let same = self.w.column(p[0]) == self.w.column(q[0]);
                if self.on_a_join(p, q) {
                    on_joins.extend([p, q]);
                } else if !(same && self.holds_sample(p[0])) {
                    return Err(format!(
                        "segment {p:?} - {q:?} (columns {:?}, {:?}) neither stays in a column \
                         holding samples nor joins two adjacent samples without a gap",
                        self.w.column(p[0]),
                        self.w.column(q[0])
                    ));
                }
            }
        }
        for d in &out.dots {
            let i = self
                .xs
                .iter()
                .zip(&self.vs)
                .position(|(&x, &v)| x == d[0] && v == d[1]);
            let Some(i) = i else {
                return Err(format!("dot {d:?} is no sample"));
            };
            if self.w.column(d[0]).is_none() {
                return Err(format!("dot {d:?} outside the window"));
            }
            let alone = (i == 0 || !self.joined(i - 1)) && !self.joined(i);
            // Samples at one instant share a column; the lone one is any of them.
            let twin = self.xs.iter().filter(|&&x| x == d[0]).count() > 1;
            if !alone && !twin {
                return Err(format!("dot {d:?} is sample {i}, which is joined"));
            }
        }
        // Each column holding samples is drawn from its min to its max, and no further except
        // along a join.
        let mut extent: Vec<Option<(f64, f64)>> = vec![None; self.c.width];
        for v in out.points.iter().chain(&out.dots) {
            let Some(px) = self.w.column(v[0]) else {
                continue;
            };
            let Some((mn, mx)) = self.truth[px].min_max else {
                continue;
            };
            if v[1] < mn || v[1] > mx {
                if !on_joins.contains(v) {
                    return Err(format!("vertex {v:?} outside column {px}'s {mn}..{mx}"));
                }
                continue;
            }
            let e = &mut extent[px];
            *e = Some(e.map_or((v[1], v[1]), |(a, b)| (a.min(v[1]), b.max(v[1]))));
        }
        for (px, (e, t)) in extent.iter().zip(&self.truth).enumerate() {
            if *e != t.min_max {
                return Err(format!(
                    "column {px} drawn over {e:?}, its samples span {:?}",
                    t.min_max
                ));
            }
        }
        let mut marked = vec![0u8; self.c.width];
        for m in &out.marks {
            let Some(px) = self.w.column(m.x) else {
                return Err(format!("mark {m:?} outside the window"));
            };
            marked[px] |= m.flags;
        }
        for (px, (m, t)) in marked.iter().zip(&self.truth).enumerate() {
            if *m != t.flags {
                return Err(format!("column {px} marked {m}, holds {}", t.flags));
            }
        }
        let _ = self.t0;
        Ok(())
    }
}

fn check(c: &Case) -> Result<(), String> {
    let s = series(&c.values);
    let levels = time_levels(&c.times);
    let checker = Checker::new(c, &s);
    let mut cs = Vec::new();
    cells(&c.times, &levels, &s, &checker.w, &mut cs);
    checker.check_cells(&cs)?;
    let mut out = Trace::default();
    trace(
        &c.times,
        &levels,
        &s,
        checker.gap,
        &checker.w,
        c.draw,
        &mut out,
    );
    checker.check_trace(&out)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn every_drawn_column_holds_a_sample_or_lies_on_a_join(c in case()) {
        if let Err(e) = check(&c) {
            prop_assert!(false, "{e}");
        }
    }
}

/// The issue's cases, as fixed examples: four samples over ten seconds; a 3 s silence.
#[test]
fn the_issues_examples_hold_the_property() {
    let t0 = 1_780_300_800_000_000_000u64;
    let four = Case {
        times: vec![t0, t0 + 1_000_000, t0 + 2_000_000, t0 + 10_000_000_000],
        values: vec![0.0, 10.0, 0.0, 0.0],
        use_gap_rule: true,
        window: (0.0, 10.0),
        width: 800,
        draw: Draw::Linear,
    };
    check(&four).expect("four samples");
    let mut times: Vec<u64> = (0..2_000u64).map(|i| t0 + i * 1_000_000).collect();
    times.extend((0..2_000u64).map(|i| t0 + 5_000_000_000 + i * 1_000_000));
    let values: Vec<f64> = (0..4_000).map(|i| f64::from(i % 17)).collect();
    let silence = Case {
        times,
        values,
        use_gap_rule: true,
        window: (0.0, 7.0),
        width: 300,
        draw: Draw::Linear,
    };
    check(&silence).expect("silence");
}
