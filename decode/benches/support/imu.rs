//! The `Imu` message the Cap'n Proto benchmark and `examples/capnp_ratio.rs` decode, and the
//! reader over capnpc-generated code both compare the run-time decoder with. Included by both
//! with `#[path]`; each declares `telemetry_capnp` at its root.

use decode::{Plan, SchemaSource, compile};

use crate::telemetry_capnp::{Mode, imu};

const CGR: &[u8] = include_bytes!("../../tests/fixtures/telemetry.cgr");

/// The run-time decoder's plan for `Imu`, from the schema a recording would carry.
pub fn imu_plan() -> Plan {
    compile(&SchemaSource {
        message_encoding: "capnproto",
        schema_encoding: "capnproto",
        schema_name: "telemetry.capnp:Imu",
        schema_data: CGR,
    })
    .expect("compile")
}

pub fn message(samples: u32) -> Vec<u8> {
    let mut m = capnp::message::Builder::new_default();
    let mut i = m.init_root::<imu::Builder<'_>>();
    {
        let mut h = i.reborrow().init_header();
        h.set_seq(7);
        h.set_frame_id("imu_link");
        let mut t = h.init_stamp();
        t.set_sec(1_700_000_000);
        t.set_nsec(5);
    }
    {
        let mut w = i.reborrow().init_angular_velocity();
        w.set_x(0.1);
        w.set_y(-0.2);
        w.set_z(0.3);
    }
    {
        let mut a = i.reborrow().init_linear_acceleration();
        a.set_x(0.0);
        a.set_y(0.1);
        a.set_z(9.81);
    }
    i.reborrow().init_orientation().set_z(0.5);
    i.set_temperature(31.5);
    i.set_mode(Mode::Running);
    i.reborrow().init_status().set_fault(3);
    let mut s = i.init_samples(samples);
    for j in 0..samples {
        s.set(j, j as f32);
    }
    capnp::serialize::write_message_to_words(&m)
}

/// What a hand-written reader over generated code does: every numeric field into a slot.
pub fn generated(bytes: &[u8], out: &mut [f64; 96]) -> capnp::Result<usize> {
    let mut slice = bytes;
    let msg = capnp::serialize::read_message_from_flat_slice_no_alloc(
        &mut slice,
        capnp::message::ReaderOptions::new(),
    )?;
    let i: imu::Reader<'_> = msg.get_root()?;
    let h = i.get_header()?;
    let t = h.get_stamp()?;
    let w = i.get_angular_velocity()?;
    let a = i.get_linear_acceleration()?;
    let o = i.get_orientation()?;
    let fixed = [
        t.get_sec() as f64,
        f64::from(t.get_nsec()),
        f64::from(h.get_seq()),
        w.get_x(),
        w.get_y(),
        w.get_z(),
        a.get_x(),
        a.get_y(),
        a.get_z(),
        o.get_x(),
        o.get_y(),
        o.get_z(),
        o.get_w(),
        f64::from(i.get_temperature()),
        i.get_mode().map_or(f64::NAN, |m| m as u16 as f64),
    ];
    out[..fixed.len()].copy_from_slice(&fixed);
    let mut n = fixed.len();
    use crate::telemetry_capnp::imu::status::Which;
    match i.get_status().which() {
        Ok(Which::Ok(())) => {
            out[n] = 0.0;
            n += 1;
        }
        Ok(Which::Fault(f)) => {
            out[n] = 1.0;
            out[n + 1] = f64::from(f);
            n += 2;
        }
        Ok(Which::Saturated(v)) => {
            let v = v?;
            out[n..n + 4].copy_from_slice(&[2.0, v.get_x(), v.get_y(), v.get_z()]);
            n += 4;
        }
        Err(_) => {}
    }
    for v in i.get_samples()?.iter() {
        if n >= out.len() {
            break;
        }
        out[n] = f64::from(v);
        n += 1;
    }
    Ok(n)
}
