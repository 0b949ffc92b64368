//! A simulated drive, for demos and tests elsewhere: one realistic message per registry name at
//! any point in time.
//!
//! The car laps a circular test track. Its speed swings between standstill and 90 km/h every
//! 90 s, the gearbox shifts with speed, the coolant and battery cells warm up, the GNSS
//! receiver goes from cold start to RTK and loses the sky under a bridge every two minutes, the
//! driving mode cycles manual -> cruise -> autonomous every 30 s, and a diagnostic event is
//! raised every 10 s. Everything is a pure function of time, so any `t_secs` can be asked for in
//! any order and gives the same message.
//!
//! ```
//! let state = schemas::sample::VehicleState::at(42.0);
//! for info in schemas::ALL {
//!     let bytes = state.encode(info.registry_name, 1)?;
//!     assert!(!bytes.is_empty());
//! }
//! # Ok::<(), schemas::Error>(())
//! ```

use std::f64::consts::{PI, TAU};

use capnp::message::Builder;

use crate::Error;
use crate::common_capnp::header;
use crate::diagnostic_log_capnp::diagnostic_log::{self, Severity};
use crate::driver_inputs_capnp::driver_inputs::{self, Gear};
use crate::gnss_fix_capnp::gnss_fix::{self, FixType};
use crate::{battery_capnp, engine_rpm_capnp, imu_capnp, wheel_speeds_capnp};

/// Standard gravity, m/s^2.
const GRAVITY_MPS2: f64 = 9.80665;
/// Top of the speed cycle, m/s (90 km/h).
const TOP_SPEED_MPS: f64 = 25.0;
/// Period of the speed cycle: stop, accelerate, top speed, brake, stop.
const SPEED_PERIOD_SECS: f64 = 90.0;
/// The drive starts parked for this long, s.
const PARKED_SECS: f64 = 2.0;
/// Radius of the test track, m.
const TRACK_RADIUS_M: f64 = 250.0;
/// Centre of the test track (WGS 84).
const TRACK_CENTRE_DEG: (f64, f64) = (48.7758, 9.1829);
const TRACK_ALTITUDE_M: f64 = 295.0;
const EARTH_RADIUS_M: f64 = 6_371_000.0;
const WHEELBASE_M: f64 = 2.7;
const TRACK_WIDTH_M: f64 = 1.6;
const STEERING_RATIO: f64 = 15.0;
const TYRE_RADIUS_M: f64 = 0.32;
const FINAL_DRIVE_RATIO: f64 = 3.9;
const IDLE_RPM: f64 = 800.0;
/// Gears by the speed (m/s) up to which each is used, with its ratio.
const GEARS: [(Gear, f64, f64); 6] = [
    (Gear::First, 4.0, 3.5),
    (Gear::Second, 8.0, 2.2),
    (Gear::Third, 12.0, 1.5),
    (Gear::Fourth, 17.0, 1.1),
    (Gear::Fifth, 22.0, 0.9),
    (Gear::Sixth, f64::INFINITY, 0.75),
];
/// Wheel-speed sensor scale of each wheel (tyre wear and pressure differ slightly).
const WHEEL_SCALE: [f64; 4] = [1.0, 1.0015, 0.999, 1.001];
/// Cell modules in the battery pack.
const BATTERY_CELLS: usize = 12;

/// The driving mode, mirroring the `DriverInputs.mode` union.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// The driver controls pedals and steering.
    Manual,
    /// Cruise control holds a set speed.
    Cruise {
        /// The set speed, m/s.
        set_speed_mps: f32,
    },
    /// Driving automation is engaged.
    Autonomous {
        /// SAE J3016 level.
        level: u8,
    },
}

/// One diagnostic event, mirroring `DiagnosticLog`.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// How urgent the event is.
    pub severity: Severity,
    /// The component that raised it.
    pub source: &'static str,
    /// One line of text, with live values.
    pub message: String,
    /// Source-specific fault code, 0 when none.
    pub code: u32,
}

/// The whole simulated vehicle at one instant: every value any sample message carries.
#[derive(Clone, Debug, PartialEq)]
pub struct VehicleState {
    /// Time since the start of the drive, s (negative and non-finite times read as 0).
    pub t_secs: f64,
    /// Vehicle speed, m/s.
    pub speed_mps: f64,

    /// Engine speed, rpm.
    pub rpm: f32,
    /// Coolant temperature, degrees Celsius.
    pub coolant_temp_c: f32,
    /// Throttle plate opening, percent.
    pub throttle_position_pct: f32,

    /// Wheel speeds, m/s, in the order front left, front right, rear left, rear right.
    pub wheel_speeds_mps: [f32; 4],

    /// Body rotation rate (x, y, z), rad/s.
    pub angular_velocity_radps: [f64; 3],
    /// Specific force (x, y, z), m/s^2, including the reaction to gravity.
    pub linear_acceleration_mps2: [f64; 3],
    /// Attitude relative to east-north-up as a quaternion (x, y, z, w).
    pub orientation: [f64; 4],

    /// Latitude, degrees.
    pub latitude_deg: f64,
    /// Longitude, degrees.
    pub longitude_deg: f64,
    /// Altitude above the ellipsoid, m.
    pub altitude_m: f64,
    /// GNSS solution quality.
    pub fix_type: FixType,
    /// Satellites used in the solution.
    pub satellites_used: u8,
    /// Horizontal dilution of precision.
    pub hdop: f32,

    /// Battery pack voltage, V.
    pub battery_voltage_v: f32,
    /// Battery pack current, A, positive while discharging.
    pub battery_current_a: f32,
    /// Battery state of charge, percent.
    pub state_of_charge_pct: f32,
    /// Temperature of each battery cell module, degrees Celsius.
    pub cell_temps_c: Vec<f32>,

    /// Accelerator pedal, percent.
    pub throttle_pct: f32,
    /// Brake pedal, percent.
    pub brake_pct: f32,
    /// Steering wheel angle, degrees, positive left.
    pub steering_angle_deg: f32,
    /// Engaged gear.
    pub gear: Gear,
    /// Who is driving.
    pub mode: Mode,

    /// The diagnostic event of the current 10 s period.
    pub diagnostic: Diagnostic,
}

impl VehicleState {
    /// The vehicle `t_secs` seconds into the drive.
    pub fn at(t_secs: f64) -> Self {
        let t = if t_secs.is_finite() {
            t_secs.max(0.0)
        } else {
            0.0
        };
        let omega = TAU / SPEED_PERIOD_SECS;
        // Speed swings from 0 (at t = 0, 90, 180, ...) to the top speed and back.
        let speed = TOP_SPEED_MPS / 2.0 * (1.0 - (omega * t).cos());
        let accel = TOP_SPEED_MPS / 2.0 * omega * (omega * t).sin();
        // Distance is the integral of the speed; the car drives counter-clockwise round the track.
        let distance = TOP_SPEED_MPS / 2.0 * (t - (omega * t).sin() / omega);
        let track_angle = distance / TRACK_RADIUS_M;
        let yaw_rate = speed / TRACK_RADIUS_M;
        let heading = track_angle + PI / 2.0;

        let mode = match (t / 30.0) as u64 % 3 {
            0 => Mode::Manual,
            1 => Mode::Cruise {
                // Adaptive cruise behind a lead car: the driver nudges the set speed in 5 km/h
                // steps (30 km/h at least) to follow it.
                set_speed_mps: ((speed * 3.6 / 5.0).round().max(6.0) * 5.0 / 3.6) as f32,
            },
            _ => Mode::Autonomous {
                level: 2 + ((t / 90.0) as u64 % 2) as u8,
            },
        };
        let feet_on_pedals = mode == Mode::Manual && t >= PARKED_SECS;
        let throttle_pct = if feet_on_pedals && accel > -0.2 {
            (12.0 + 40.0 * accel + 0.6 * speed).clamp(0.0, 100.0)
        } else {
            0.0
        };
        let brake_pct = if feet_on_pedals && accel <= -0.2 {
            (-accel * 30.0).clamp(0.0, 100.0)
        } else {
            0.0
        };
        // What the engine needs, whoever asks for it: the ECU holds the throttle under automation.
        let throttle_position_pct = if accel > -0.2 {
            (4.0 + 40.0 * accel + 0.6 * speed).clamp(0.0, 100.0)
        } else {
            4.0
        };

        let (gear, ratio) = if t < PARKED_SECS {
            (Gear::Park, None)
        } else if speed < 0.05 {
            (Gear::Neutral, None)
        } else {
            GEARS
                .iter()
                .find(|(_, up_to_mps, _)| speed < *up_to_mps)
                .map_or((Gear::Sixth, None), |&(gear, _, ratio)| (gear, Some(ratio)))
        };
        let wheel_rpm = speed / TYRE_RADIUS_M * 60.0 / TAU;
        let ripple = 12.0 * (t * 13.0).sin();
        let rpm = ratio.map_or(IDLE_RPM, |r| {
            (wheel_rpm * FINAL_DRIVE_RATIO * r).max(IDLE_RPM)
        }) + ripple;
        let coolant = 20.0
            + 70.0 * (1.0 - (-t / 300.0).exp())
            + 1.5 * (t / 45.0).sin() * (t / 600.0).min(1.0);

        // Inner (left) wheels are slower than the outer ones on a left-hand circle.
        let half_track = yaw_rate * TRACK_WIDTH_M / 2.0;
        let side = [-half_track, half_track, -half_track, half_track];
        let wheel_speeds_mps =
            std::array::from_fn(|i| ((speed + side[i]).max(0.0) * WHEEL_SCALE[i]) as f32);

        // Constant lock for the circle plus the driver's small corrections.
        let steering_angle_deg = ((WHEELBASE_M / TRACK_RADIUS_M).atan() * STEERING_RATIO)
            .to_degrees()
            + 4.0 * (TAU * t / 7.0).sin() * speed / TOP_SPEED_MPS;

        let (sin_half, cos_half) = (heading / 2.0).sin_cos();
        let north_m = TRACK_RADIUS_M * track_angle.sin();
        let east_m = TRACK_RADIUS_M * track_angle.cos();
        let under_bridge = (100.0..106.0).contains(&(t % 120.0));
        let (fix_type, satellites_used, hdop) = if t < 5.0 {
            (FixType::NoFix, 2, 99.99) // cold start
        } else if under_bridge {
            (FixType::NoFix, 3, 99.99)
        } else if t < 15.0 {
            (FixType::Fix3d, 8, 1.4)
        } else if t < 30.0 {
            (FixType::RtkFloat, 12, 0.9)
        } else {
            let satellites = 14 + ((t / 17.0) as u64 % 4) as u8;
            (FixType::RtkFixed, satellites, 0.7 + 0.05 * (t / 11.0).sin())
        };

        let battery_current_a = 8.0
            + if accel > 0.0 {
                50.0 * accel
            } else {
                80.0 * accel
            };
        let state_of_charge_pct = (85.0 - 0.004 * t).clamp(5.0, 100.0);
        let battery_voltage_v =
            48.0 + 0.08 * (state_of_charge_pct - 50.0) - 0.03 * battery_current_a;
        let warm_up = 13.0 * (1.0 - (-t / 900.0).exp());
        let cell_temps_c: Vec<f32> = (0..BATTERY_CELLS)
            .map(|i| (22.0 + warm_up + 0.25 * i as f64 + 0.1 * (t / 10.0 + i as f64).sin()) as f32)
            .collect();

        let mut state = Self {
            t_secs: t,
            speed_mps: speed,
            rpm: rpm as f32,
            coolant_temp_c: coolant as f32,
            throttle_position_pct: throttle_position_pct as f32,
            wheel_speeds_mps,
            angular_velocity_radps: [0.0, 0.0, yaw_rate],
            linear_acceleration_mps2: [accel, speed * yaw_rate, GRAVITY_MPS2],
            orientation: [0.0, 0.0, sin_half, cos_half],
            latitude_deg: TRACK_CENTRE_DEG.0 + (north_m / EARTH_RADIUS_M).to_degrees(),
            longitude_deg: TRACK_CENTRE_DEG.1
                + (east_m / (EARTH_RADIUS_M * TRACK_CENTRE_DEG.0.to_radians().cos())).to_degrees(),
            altitude_m: TRACK_ALTITUDE_M + 2.0 * track_angle.sin(),
            fix_type,
            satellites_used,
            hdop: hdop as f32,
            battery_voltage_v: battery_voltage_v as f32,
            battery_current_a: battery_current_a as f32,
            state_of_charge_pct: state_of_charge_pct as f32,
            cell_temps_c,
            throttle_pct: throttle_pct as f32,
            brake_pct: brake_pct as f32,
            steering_angle_deg: steering_angle_deg as f32,
            gear,
            mode,
            diagnostic: Diagnostic {
                severity: Severity::Debug,
                source: "",
                message: String::new(),
                code: 0,
            },
        };
        state.diagnostic = state.diagnostic_event();
        state
    }

    /// The event raised in the current 10 s period, phrased from the live values.
    fn diagnostic_event(&self) -> Diagnostic {
        let (severity, source, code, message) = match (self.t_secs / 10.0) as u64 % 6 {
            0 => (
                Severity::Info,
                "engine",
                0x0100,
                format!("coolant at {:.1} C", self.coolant_temp_c),
            ),
            1 => (
                Severity::Debug,
                "gnss",
                0,
                format!(
                    "{:?} with {} satellites, hdop {:.2}",
                    self.fix_type, self.satellites_used, self.hdop
                ),
            ),
            2 => {
                let mode = match self.mode {
                    Mode::Manual => "manual".to_owned(),
                    Mode::Cruise { set_speed_mps } => {
                        format!("cruise at {:.0} km/h", set_speed_mps * 3.6)
                    }
                    Mode::Autonomous { level } => format!("autonomous, level {level}"),
                };
                let message = format!("{mode}, gear {:?}", self.gear);
                (Severity::Info, "driver", 0x0300, message)
            }
            3 => {
                let (min, max) = self
                    .cell_temps_c
                    .iter()
                    .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &c| {
                        (lo.min(c), hi.max(c))
                    });
                (
                    Severity::Warning,
                    "bms",
                    0x0201,
                    format!("cell temperature spread {:.1} C", max - min),
                )
            }
            4 => (
                Severity::Info,
                "abs",
                0,
                format!("vehicle speed {:.1} m/s", self.speed_mps),
            ),
            _ => (
                Severity::Error,
                "tpms",
                0x0512,
                "rear left pressure sensor timeout".to_owned(),
            ),
        };
        Diagnostic {
            severity,
            source,
            message,
            code,
        }
    }

    /// Serializes the message registered as `registry_name` from this state, with sequence
    /// number `seq`, as a single-segment Cap'n Proto message with stream framing (what
    /// `capnp::serialize::read_message` reads).
    pub fn encode(&self, registry_name: &str, seq: u64) -> Result<Vec<u8>, Error> {
        let mut message = Builder::new_default();
        match registry_name {
            "EngineRpm" => {
                let mut m = message.init_root::<engine_rpm_capnp::engine_rpm::Builder>();
                self.header(m.reborrow().init_header(), seq, "engine");
                m.set_rpm(self.rpm);
                m.set_coolant_temp_c(self.coolant_temp_c);
                m.set_throttle_position_pct(self.throttle_position_pct);
            }
            "WheelSpeeds" => {
                let mut m = message.init_root::<wheel_speeds_capnp::wheel_speeds::Builder>();
                self.header(m.reborrow().init_header(), seq, "chassis");
                let [fl, fr, rl, rr] = self.wheel_speeds_mps;
                m.set_front_left(fl);
                m.set_front_right(fr);
                m.set_rear_left(rl);
                m.set_rear_right(rr);
            }
            "Imu" => {
                let mut m = message.init_root::<imu_capnp::imu::Builder>();
                self.header(m.reborrow().init_header(), seq, "imu_link");
                let [x, y, z] = self.angular_velocity_radps;
                let mut v = m.reborrow().init_angular_velocity();
                v.set_x(x);
                v.set_y(y);
                v.set_z(z);
                let [x, y, z] = self.linear_acceleration_mps2;
                let mut v = m.reborrow().init_linear_acceleration();
                v.set_x(x);
                v.set_y(y);
                v.set_z(z);
                let [x, y, z, w] = self.orientation;
                let mut q = m.init_orientation();
                q.set_x(x);
                q.set_y(y);
                q.set_z(z);
                q.set_w(w);
            }
            "GnssFix" => {
                let mut m = message.init_root::<gnss_fix::Builder>();
                self.header(m.reborrow().init_header(), seq, "gnss_antenna");
                m.set_latitude_deg(self.latitude_deg);
                m.set_longitude_deg(self.longitude_deg);
                m.set_altitude_m(self.altitude_m);
                m.set_fix_type(self.fix_type);
                m.set_satellites_used(self.satellites_used);
                m.set_hdop(self.hdop);
            }
            "Battery" => {
                let mut m = message.init_root::<battery_capnp::battery::Builder>();
                self.header(m.reborrow().init_header(), seq, "battery_pack");
                m.set_voltage_v(self.battery_voltage_v);
                m.set_current_a(self.battery_current_a);
                m.set_state_of_charge_pct(self.state_of_charge_pct);
                m.set_cell_temps_c(self.cell_temps_c.as_slice())?;
            }
            "DriverInputs" => {
                let mut m = message.init_root::<driver_inputs::Builder>();
                self.header(m.reborrow().init_header(), seq, "cabin");
                m.set_throttle_pct(self.throttle_pct);
                m.set_brake_pct(self.brake_pct);
                m.set_steering_angle_deg(self.steering_angle_deg);
                m.set_gear(self.gear);
                let mut mode = m.init_mode();
                match self.mode {
                    Mode::Manual => mode.set_manual(()),
                    Mode::Cruise { set_speed_mps } => mode.set_cruise(set_speed_mps),
                    Mode::Autonomous { level } => mode.set_autonomous(level),
                }
            }
            "DiagnosticLog" => {
                let mut m = message.init_root::<diagnostic_log::Builder>();
                self.header(m.reborrow().init_header(), seq, "vehicle");
                m.set_severity(self.diagnostic.severity);
                m.set_source(self.diagnostic.source);
                m.set_message(self.diagnostic.message.as_str());
                m.set_code(self.diagnostic.code);
            }
            _ => {
                return Err(Error::UnknownSchema {
                    registry_name: registry_name.to_owned(),
                });
            }
        }
        let mut bytes = Vec::new();
        capnp::serialize::write_message(&mut bytes, &message)?;
        Ok(bytes)
    }

    fn header(&self, mut header: header::Builder<'_>, seq: u64, frame_id: &str) {
        header.set_seq(seq);
        // `t_secs` is finite and >= 0 (see `at`), and `as` saturates beyond u64.
        header.set_stamp_ns((self.t_secs * 1e9).round() as u64);
        header.set_frame_id(frame_id);
    }
}

/// The message registered as `registry_name` at `t_secs` into the simulated drive, with sequence
/// number `seq`: [`VehicleState::at`] then [`VehicleState::encode`].
pub fn encode(registry_name: &str, t_secs: f64, seq: u64) -> Result<Vec<u8>, Error> {
    VehicleState::at(t_secs).encode(registry_name, seq)
}
