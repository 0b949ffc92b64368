//! `capnp_imu` ratio on a noisy machine: the best of many short batches (not a median) of the
//! run-time decode, the generated-code reader of `benches/capnp.rs`, and the "API floor": only
//! the public `any_pointer` / `raw` calls the run-time path makes to reach the same structs and
//! list, with no plan, leaf tree or row. `cargo run --release -p decode --example capnp_ratio`.

#[path = "../benches/support/imu.rs"]
mod imu_message;
#[allow(clippy::all, unused, unsafe_code)]
#[path = "../tests/gen/telemetry_capnp.rs"]
mod telemetry_capnp;

use std::hint::black_box;

use decode::Row;
use imu_message::{generated, imu_plan, message};

type Carrier<'a> = capnp::schema_capnp::node::Reader<'a>;

fn f64_at(d: &[u8], at: usize) -> f64 {
    d.get(at..at + 8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map_or(0.0, f64::from_le_bytes)
}

/// The API floor: header, header.stamp, angularVelocity, linearAcceleration, orientation and
/// samples reached through `any_pointer_list::try_get` + `get_as` on an untyped carrier, as the
/// run-time path does; one number read from each.
fn floor(bytes: &[u8], out: &mut [f64; 96]) -> capnp::Result<usize> {
    let mut slice = bytes;
    let msg = capnp::serialize::read_message_from_flat_slice_no_alloc(
        &mut slice,
        capnp::message::ReaderOptions::new(),
    )?;
    let root: capnp::any_pointer::Reader<'_> = msg.get_root()?;
    let r: Carrier<'_> = root.get_as()?;
    let ptrs = capnp::raw::get_struct_pointer_section(r);
    let mut n = 0;
    let mut put = |v: f64| {
        if let Some(o) = out.get_mut(n) {
            *o = v;
            n += 1;
        }
    };
    for i in 0..4 {
        let Some(p) = ptrs.try_get(i).filter(|p| !p.is_null()) else {
            continue;
        };
        let c: Carrier<'_> = p.get_as()?;
        put(f64_at(capnp::raw::get_struct_data_section(c), 0));
        if i == 0
            && let Some(q) = capnp::raw::get_struct_pointer_section(c).try_get(0)
        {
            let t: Carrier<'_> = q.get_as()?;
            put(f64_at(capnp::raw::get_struct_data_section(t), 0));
        }
    }
    if let Some(p) = ptrs.try_get(5) {
        let l: capnp::primitive_list::Reader<'_, f32> = p.get_as()?;
        for b in capnp::raw::get_list_bytes(l).chunks_exact(4) {
            put(f64::from(f32::from_le_bytes(
                <[u8; 4]>::try_from(b).unwrap_or([0; 4]),
            )));
        }
    }
    Ok(n)
}

fn main() {
    use std::time::Instant;
    for samples in [0u32, 64] {
        let bytes = message(samples);
        let mut plan = imu_plan();
        let mut row = Row::new();
        plan.decode(&bytes, &mut row).expect("decode");
        let mut out = [0.0; 96];
        let (mut best_r, mut best_g, mut best_f) = (f64::MAX, f64::MAX, f64::MAX);
        const N: u32 = 2000;
        for _ in 0..400 {
            let t = Instant::now();
            for _ in 0..N {
                plan.decode(black_box(&bytes), &mut row).expect("decode");
                black_box(row.get(0));
            }
            best_r = best_r.min(t.elapsed().as_nanos() as f64 / f64::from(N));
            let t = Instant::now();
            for _ in 0..N {
                black_box(generated(black_box(&bytes), &mut out).expect("generated"));
            }
            best_g = best_g.min(t.elapsed().as_nanos() as f64 / f64::from(N));
            let t = Instant::now();
            for _ in 0..N {
                black_box(floor(black_box(&bytes), &mut out).expect("floor"));
            }
            best_f = best_f.min(t.elapsed().as_nanos() as f64 / f64::from(N));
        }
        println!(
            "samples {samples}: runtime {best_r:.1} ns, generated {best_g:.1} ns, ratio {:.3}; \
             API floor {best_f:.1} ns (generated / floor {:.3})",
            best_g / best_r,
            best_g / best_f
        );
    }
}
