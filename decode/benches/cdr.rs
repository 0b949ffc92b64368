//! ROS 2 CDR: run-time decoding from `.msg` text vs a static serde decode (the `cdr` crate with
//! derived structs) reading the same fields. `cdr_imu/{runtime,serde}/1`,
//! `cdr_joint_state/{runtime,serde}/6`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use decode::{Row, SchemaSource, compile};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Default)]
struct Time {
    sec: i32,
    nanosec: u32,
}

#[derive(Serialize, Deserialize, Default)]
struct Header {
    stamp: Time,
    frame_id: String,
}

#[derive(Serialize, Deserialize, Default)]
struct Vector3 {
    x: f64,
    y: f64,
    z: f64,
}

#[derive(Serialize, Deserialize, Default)]
struct Quaternion {
    x: f64,
    y: f64,
    z: f64,
    w: f64,
}

#[derive(Serialize, Deserialize, Default)]
struct Imu {
    header: Header,
    orientation: Quaternion,
    orientation_covariance: [f64; 9],
    angular_velocity: Vector3,
    angular_velocity_covariance: [f64; 9],
    linear_acceleration: Vector3,
    linear_acceleration_covariance: [f64; 9],
}

#[derive(Serialize, Deserialize, Default)]
struct JointState {
    header: Header,
    name: Vec<String>,
    position: Vec<f64>,
    velocity: Vec<f64>,
    effort: Vec<f64>,
}

const HEADER: &str = "\n================================================================================\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n";
const IMU: &str = "std_msgs/Header header\ngeometry_msgs/Quaternion orientation\nfloat64[9] orientation_covariance\ngeometry_msgs/Vector3 angular_velocity\nfloat64[9] angular_velocity_covariance\ngeometry_msgs/Vector3 linear_acceleration\nfloat64[9] linear_acceleration_covariance\n================================================================================\nMSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w\n================================================================================\nMSG: geometry_msgs/Vector3\nfloat64 x\nfloat64 y\nfloat64 z";
const JOINT_STATE: &str = "std_msgs/Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort";

fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    cdr::serialize::<_, _, cdr::CdrLe>(v, cdr::Infinite).expect("serialize")
}

fn imu_fields(m: &Imu, out: &mut [f64; 64]) -> usize {
    let fixed = [
        f64::from(m.header.stamp.sec),
        f64::from(m.header.stamp.nanosec),
        f64::from(m.header.stamp.sec) * 1e9 + f64::from(m.header.stamp.nanosec),
        m.orientation.x,
        m.orientation.y,
        m.orientation.z,
        m.orientation.w,
        m.angular_velocity.x,
        m.angular_velocity.y,
        m.angular_velocity.z,
        m.linear_acceleration.x,
        m.linear_acceleration.y,
        m.linear_acceleration.z,
    ];
    out[..13].copy_from_slice(&fixed);
    out[13..22].copy_from_slice(&m.orientation_covariance);
    out[22..31].copy_from_slice(&m.angular_velocity_covariance);
    out[31..40].copy_from_slice(&m.linear_acceleration_covariance);
    40
}

fn joint_fields(m: &JointState, out: &mut [f64; 64]) -> usize {
    out[0] = f64::from(m.header.stamp.sec);
    out[1] = f64::from(m.header.stamp.nanosec);
    out[2] = f64::from(m.header.stamp.sec) * 1e9 + f64::from(m.header.stamp.nanosec);
    let mut n = 3;
    for v in m.position.iter().chain(&m.velocity).chain(&m.effort) {
        out[n] = *v;
        n += 1;
    }
    n
}

fn bench(c: &mut Criterion) {
    let imu = Imu {
        header: Header {
            stamp: Time {
                sec: 1_700_000_000,
                nanosec: 5,
            },
            frame_id: "imu_link".into(),
        },
        orientation: Quaternion {
            w: 1.0,
            ..Quaternion::default()
        },
        orientation_covariance: [0.01; 9],
        angular_velocity: Vector3 {
            x: 0.1,
            y: -0.2,
            z: 0.3,
        },
        angular_velocity_covariance: [0.02; 9],
        linear_acceleration: Vector3 {
            x: 0.0,
            y: 0.1,
            z: 9.81,
        },
        linear_acceleration_covariance: [0.03; 9],
    };
    let joints = JointState {
        header: Header {
            stamp: Time {
                sec: 1_700_000_000,
                nanosec: 5,
            },
            frame_id: "base".into(),
        },
        name: (1..=6).map(|i| format!("joint_{i}")).collect(),
        position: (0..6).map(f64::from).collect(),
        velocity: (0..6).map(|i| f64::from(i) * 0.5).collect(),
        effort: (0..6).map(|i| f64::from(i) * -1.5).collect(),
    };
    let cases: [(&str, String, Vec<u8>, usize); 2] = [
        ("cdr_imu", format!("{IMU}{HEADER}"), encode(&imu), 1),
        (
            "cdr_joint_state",
            format!("{JOINT_STATE}{HEADER}"),
            encode(&joints),
            6,
        ),
    ];
    for (group, def, bytes, size) in cases {
        let mut plan = compile(&SchemaSource {
            message_encoding: "cdr",
            schema_encoding: "ros2msg",
            schema_name: if group == "cdr_imu" {
                "sensor_msgs/msg/Imu"
            } else {
                "sensor_msgs/msg/JointState"
            },
            schema_data: def.as_bytes(),
        })
        .expect("compile");
        let mut row = Row::new();
        plan.decode(&bytes, &mut row).expect("decode");
        let mut out = [0.0; 64];
        let n = if group == "cdr_imu" {
            imu_fields(&cdr::deserialize::<Imu>(&bytes).expect("serde"), &mut out)
        } else {
            joint_fields(
                &cdr::deserialize::<JointState>(&bytes).expect("serde"),
                &mut out,
            )
        };
        assert_eq!(n, row.present_count(), "{group}: both read the same leaves");
        let mut g = c.benchmark_group(group);
        g.bench_with_input(BenchmarkId::new("runtime", size), &bytes, |b, bytes| {
            b.iter(|| {
                plan.decode(black_box(bytes), &mut row).expect("decode");
                black_box(row.get(0))
            })
        });
        g.bench_with_input(BenchmarkId::new("serde", size), &bytes, |b, bytes| {
            b.iter(|| {
                let n = if group == "cdr_imu" {
                    imu_fields(
                        &cdr::deserialize::<Imu>(black_box(bytes)).expect("serde"),
                        &mut out,
                    )
                } else {
                    joint_fields(
                        &cdr::deserialize::<JointState>(black_box(bytes)).expect("serde"),
                        &mut out,
                    )
                };
                black_box(n)
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
