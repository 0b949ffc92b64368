//! Cap'n Proto: run-time decoding from the recording's schema vs capnpc-generated code reading
//! the same fields into an array. `capnp_imu/{runtime,generated}/{samples}`.

#[path = "support/imu.rs"]
mod imu_message;
#[allow(clippy::all, unused, unsafe_code)]
#[path = "../tests/gen/telemetry_capnp.rs"]
mod telemetry_capnp;

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use decode::Row;
use imu_message::{generated, imu_plan, message};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("capnp_imu");
    for samples in [0u32, 64] {
        let bytes = message(samples);
        let mut plan = imu_plan();
        let mut row = Row::new();
        plan.decode(&bytes, &mut row).expect("decode");
        let mut out = [0.0; 96];
        let n = generated(&bytes, &mut out).expect("generated");
        assert_eq!(n, row.present_count(), "both read the same leaves");
        g.bench_with_input(BenchmarkId::new("runtime", samples), &bytes, |b, bytes| {
            b.iter(|| {
                plan.decode(black_box(bytes), &mut row).expect("decode");
                black_box(row.get(0))
            })
        });
        g.bench_with_input(
            BenchmarkId::new("generated", samples),
            &bytes,
            |b, bytes| {
                b.iter(|| black_box(generated(black_box(bytes), &mut out).expect("generated")))
            },
        );
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
