//! Derived signals: `sqrt({t/x}^2 + {t/y}^2)` over 10M samples of one topic, against the same
//! arithmetic in a plain Rust loop over the same columns (issue 23 asks for at least 0.3x).
//!
//! - `plain_loop`: `(x * x + y * y).sqrt()` over the two value slices into a new `Vec`.
//! - `expression`: [`derived::compute`]: the parsed expression, aligned and evaluated a block at a
//!   time, the blocks on the rayon pool (what the background evaluation does before it builds
//!   the column). The plain loop runs on one core; this on all (two here).
//! - `expression_to_column`: the same plus the column the plots read (pyramid, time levels,
//!   gaps), i.e. everything a derived signal costs.
//!
//! Measured here (2 cores, same run, medians): plain_loop 51.0 ms, expression 102.0 ms (0.50x),
//! expression_to_column 139.7 ms; one block after another, before rayon: 48.8 ms vs 164.2 ms
//! (0.30x).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use scope::data::derived::{self, Input, Transform};
use scope::data::expression::Expression;
use scope::data::series::{Series, Typed};

const N: usize = 10_000_000;

fn columns() -> (Vec<u64>, Vec<f64>, Vec<f64>) {
    // A cheap generator: values that need f64 (no f32 narrowing).
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 * 200.0 - 100.0
    };
    let times = (0..N as u64)
        .map(|i| 1_700_000_000_000_000_000 + i * 1_000_000)
        .collect();
    let x = (0..N).map(|_| next()).collect();
    let y = (0..N).map(|_| next()).collect();
    (times, x, y)
}

fn bench(c: &mut Criterion) {
    let (times, x, y) = columns();
    let sx = Series::F64(Typed::new(x.clone()));
    let sy = Series::F64(Typed::new(y.clone()));
    let expression = Expression::parse("sqrt({t/x}^2 + {t/y}^2)").expect("parses");
    let inputs = [
        Input {
            times: &times,
            series: &sx,
        },
        Input {
            times: &times,
            series: &sy,
        },
    ];
    let mut g = c.benchmark_group("derived");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .throughput(Throughput::Elements(N as u64));
    g.bench_function("plain_loop", |b| {
        b.iter(|| {
            let out: Vec<f64> = black_box(&x)
                .iter()
                .zip(black_box(&y))
                .map(|(a, b)| (a * a + b * b).sqrt())
                .collect();
            out
        })
    });
    g.bench_function("expression", |b| {
        b.iter(|| derived::compute(&expression, Transform::None, black_box(&inputs)))
    });
    g.bench_function("expression_to_column", |b| {
        b.iter(|| {
            let (t, v) = derived::compute(&expression, Transform::None, black_box(&inputs));
            derived::column("speed", t, v)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
