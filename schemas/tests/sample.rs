//! Sample messages decode, with the generated readers, to the simulated state they were built
//! from, and the simulated drive does what the demos rely on.

use std::collections::BTreeSet;

use capnp::message::ReaderOptions;
use capnp::serialize;
use schemas::battery_capnp::battery;
use schemas::common_capnp::header;
use schemas::diagnostic_log_capnp::diagnostic_log;
use schemas::driver_inputs_capnp::driver_inputs::{self, Gear};
use schemas::engine_rpm_capnp::engine_rpm;
use schemas::gnss_fix_capnp::gnss_fix::{self, FixType};
use schemas::imu_capnp::imu;
use schemas::sample::{self, Mode, VehicleState};
use schemas::wheel_speeds_capnp::wheel_speeds;

const TIMES: [f64; 12] = [
    0.0, 1.5, 4.0, 12.5, 31.0, 45.25, 65.0, 101.0, 250.0, 333.3, 1234.5, 3600.0,
];

fn decode(bytes: &[u8]) -> capnp::message::Reader<serialize::OwnedSegments> {
    assert_eq!(
        bytes.get(..4),
        Some(&[0u8; 4][..]),
        "a single-segment message"
    );
    let mut rest = bytes;
    let message = serialize::read_message(&mut rest, ReaderOptions::new()).expect("decodes");
    assert!(rest.is_empty(), "trailing bytes");
    message
}

fn check_header(h: header::Reader<'_>, state: &VehicleState, seq: u64, frame_id: &str) {
    assert_eq!(h.get_seq(), seq);
    assert_eq!(h.get_stamp_ns(), (state.t_secs * 1e9).round() as u64);
    assert_eq!(h.get_frame_id().unwrap().to_str().unwrap(), frame_id);
}

#[test]
fn every_message_decodes_to_the_state_it_was_built_from() {
    for (seq, &t) in (100u64..).zip(TIMES.iter()) {
        let state = VehicleState::at(t);
        assert_eq!(state.t_secs, t);

        let bytes = sample::encode("EngineRpm", t, seq).unwrap();
        let message = decode(&bytes);
        let m = message.get_root::<engine_rpm::Reader>().unwrap();
        check_header(m.get_header().unwrap(), &state, seq, "engine");
        assert_eq!(m.get_rpm(), state.rpm);
        assert_eq!(m.get_coolant_temp_c(), state.coolant_temp_c);
        assert_eq!(m.get_throttle_position_pct(), state.throttle_position_pct);

        let bytes = sample::encode("WheelSpeeds", t, seq).unwrap();
        let message = decode(&bytes);
        let m = message.get_root::<wheel_speeds::Reader>().unwrap();
        check_header(m.get_header().unwrap(), &state, seq, "chassis");
        let decoded = [
            m.get_front_left(),
            m.get_front_right(),
            m.get_rear_left(),
            m.get_rear_right(),
        ];
        assert_eq!(decoded, state.wheel_speeds_mps);

        let bytes = sample::encode("Imu", t, seq).unwrap();
        let message = decode(&bytes);
        let m = message.get_root::<imu::Reader>().unwrap();
        check_header(m.get_header().unwrap(), &state, seq, "imu_link");
        let w = m.get_angular_velocity().unwrap();
        assert_eq!(
            [w.get_x(), w.get_y(), w.get_z()],
            state.angular_velocity_radps
        );
        let a = m.get_linear_acceleration().unwrap();
        assert_eq!(
            [a.get_x(), a.get_y(), a.get_z()],
            state.linear_acceleration_mps2
        );
        let q = m.get_orientation().unwrap();
        assert_eq!(
            [q.get_x(), q.get_y(), q.get_z(), q.get_w()],
            state.orientation
        );

        let bytes = sample::encode("GnssFix", t, seq).unwrap();
        let message = decode(&bytes);
        let m = message.get_root::<gnss_fix::Reader>().unwrap();
        check_header(m.get_header().unwrap(), &state, seq, "gnss_antenna");
        assert_eq!(m.get_latitude_deg(), state.latitude_deg);
        assert_eq!(m.get_longitude_deg(), state.longitude_deg);
        assert_eq!(m.get_altitude_m(), state.altitude_m);
        assert_eq!(m.get_fix_type().unwrap(), state.fix_type);
        assert_eq!(m.get_satellites_used(), state.satellites_used);
        assert_eq!(m.get_hdop(), state.hdop);

        let bytes = sample::encode("Battery", t, seq).unwrap();
        let message = decode(&bytes);
        let m = message.get_root::<battery::Reader>().unwrap();
        check_header(m.get_header().unwrap(), &state, seq, "battery_pack");
        assert_eq!(m.get_voltage_v(), state.battery_voltage_v);
        assert_eq!(m.get_current_a(), state.battery_current_a);
        assert_eq!(m.get_state_of_charge_pct(), state.state_of_charge_pct);
        let cells: Vec<f32> = m.get_cell_temps_c().unwrap().iter().collect();
        assert_eq!(cells, state.cell_temps_c);

        let bytes = sample::encode("DriverInputs", t, seq).unwrap();
        let message = decode(&bytes);
        let m = message.get_root::<driver_inputs::Reader>().unwrap();
        check_header(m.get_header().unwrap(), &state, seq, "cabin");
        assert_eq!(m.get_throttle_pct(), state.throttle_pct);
        assert_eq!(m.get_brake_pct(), state.brake_pct);
        assert_eq!(m.get_steering_angle_deg(), state.steering_angle_deg);
        assert_eq!(m.get_gear().unwrap(), state.gear);
        let mode = match m.get_mode().which().unwrap() {
            driver_inputs::mode::Manual(()) => Mode::Manual,
            driver_inputs::mode::Cruise(set_speed_mps) => Mode::Cruise { set_speed_mps },
            driver_inputs::mode::Autonomous(level) => Mode::Autonomous { level },
        };
        assert_eq!(mode, state.mode);

        let bytes = sample::encode("DiagnosticLog", t, seq).unwrap();
        let message = decode(&bytes);
        let m = message.get_root::<diagnostic_log::Reader>().unwrap();
        check_header(m.get_header().unwrap(), &state, seq, "vehicle");
        assert_eq!(m.get_severity().unwrap(), state.diagnostic.severity);
        assert_eq!(
            m.get_source().unwrap().to_str().unwrap(),
            state.diagnostic.source
        );
        assert_eq!(
            m.get_message().unwrap().to_str().unwrap(),
            state.diagnostic.message
        );
        assert_eq!(m.get_code(), state.diagnostic.code);
    }
}

#[test]
fn every_registered_name_has_a_sample_and_others_are_refused() {
    for info in schemas::ALL {
        let bytes = sample::encode(info.registry_name, 10.0, 1).unwrap();
        assert_eq!(
            bytes,
            VehicleState::at(10.0)
                .encode(info.registry_name, 1)
                .unwrap()
        );
    }
    let err = sample::encode("engine_rpm.capnp:EngineRpm", 0.0, 0).unwrap_err();
    assert!(
        matches!(&err, schemas::Error::UnknownSchema { registry_name } if registry_name == "engine_rpm.capnp:EngineRpm"),
        "{err}"
    );
}

#[test]
fn odd_times_read_as_the_start() {
    for t in [-5.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(VehicleState::at(t), VehicleState::at(0.0), "{t}");
    }
}

/// Samples the first four minutes at 10 Hz.
fn drive() -> Vec<VehicleState> {
    (0..2400)
        .map(|i| VehicleState::at(f64::from(i) * 0.1))
        .collect()
}

#[test]
fn the_drive_is_realistic() {
    let states = drive();
    for s in &states {
        assert!((0.0..=25.0).contains(&s.speed_mps), "speed {}", s.speed_mps);
        assert!(
            (780.0..=4000.0).contains(&s.rpm),
            "rpm {} at {}",
            s.rpm,
            s.t_secs
        );
        for (i, &w) in s.wheel_speeds_mps.iter().enumerate() {
            assert!(
                (f64::from(w) - s.speed_mps).abs() < 0.2,
                "wheel {i} {w} vs {}",
                s.speed_mps
            );
        }
        // Level ground: the accelerometer reads gravity upwards.
        assert_eq!(s.linear_acceleration_mps2[2], 9.80665);
        let norm: f64 = s.orientation.iter().map(|c| c * c).sum();
        assert!(
            (norm - 1.0).abs() < 1e-9,
            "orientation is not a unit quaternion"
        );
        assert!((0.0..=100.0).contains(&s.throttle_pct) && (0.0..=100.0).contains(&s.brake_pct));
        assert!(
            s.throttle_pct == 0.0 || s.brake_pct == 0.0,
            "both pedals at {}",
            s.t_secs
        );
        assert_eq!(s.cell_temps_c.len(), 12);
    }

    let gears: BTreeSet<u16> = states.iter().map(|s| s.gear as u16).collect();
    let all_gears = [
        Gear::Park,
        Gear::Neutral,
        Gear::First,
        Gear::Second,
        Gear::Third,
        Gear::Fourth,
        Gear::Fifth,
        Gear::Sixth,
    ];
    assert_eq!(
        gears,
        all_gears.iter().map(|&g| g as u16).collect(),
        "gear changes"
    );

    let arms: BTreeSet<&str> = states
        .iter()
        .map(|s| match s.mode {
            Mode::Manual => "manual",
            Mode::Cruise { set_speed_mps } => {
                assert!(set_speed_mps > 0.0);
                "cruise"
            }
            Mode::Autonomous { level } => {
                assert!((2..=3).contains(&level));
                "autonomous"
            }
        })
        .collect();
    assert_eq!(arms.len(), 3, "every mode arm appears: {arms:?}");

    let fixes: BTreeSet<u16> = states.iter().map(|s| s.fix_type as u16).collect();
    assert!(
        fixes.contains(&(FixType::NoFix as u16)) && fixes.contains(&(FixType::RtkFixed as u16))
    );

    let rpm_range = states
        .iter()
        .map(|s| s.rpm)
        .fold((f32::MAX, f32::MIN), |(lo, hi), r| (lo.min(r), hi.max(r)));
    assert!(
        rpm_range.1 - rpm_range.0 > 1000.0,
        "rpm varies: {rpm_range:?}"
    );

    let (first, last) = (&states[0], &states[states.len() - 1]);
    let moved_deg = (last.latitude_deg - first.latitude_deg).abs()
        + (last.longitude_deg - first.longitude_deg).abs();
    assert!(moved_deg > 1e-4, "GNSS moves");
    assert!(
        last.cell_temps_c[0] > first.cell_temps_c[0] + 2.0,
        "cells warm up"
    );
    assert!(
        last.coolant_temp_c > first.coolant_temp_c + 20.0,
        "engine warms up"
    );
    assert!(
        last.state_of_charge_pct < first.state_of_charge_pct,
        "battery drains"
    );

    let sources: BTreeSet<&str> = states.iter().map(|s| s.diagnostic.source).collect();
    assert!(
        sources.len() >= 5,
        "diagnostics come from several sources: {sources:?}"
    );
}
