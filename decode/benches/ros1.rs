//! ROS 1: run-time decoding from the message definition vs a static, hand-written decode of the
//! same struct (what generated code does: little-endian reads at known offsets, no alignment)
//! reading the same fields into an array. `ros1_imu/{runtime,static}`,
//! `ros1_joint_state/{runtime,static}` (6 joints).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use decode::{Row, SchemaSource, compile};

const HEADER: &str = "\n================================================================================\nMSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n";
const IMU: &str = "Header header\ngeometry_msgs/Quaternion orientation\nfloat64[9] orientation_covariance\ngeometry_msgs/Vector3 angular_velocity\nfloat64[9] angular_velocity_covariance\ngeometry_msgs/Vector3 linear_acceleration\nfloat64[9] linear_acceleration_covariance\n================================================================================\nMSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w\n================================================================================\nMSG: geometry_msgs/Vector3\nfloat64 x\nfloat64 y\nfloat64 z";
const JOINT_STATE: &str =
    "Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort";

#[derive(Default)]
struct Header {
    seq: u32,
    secs: u32,
    nsecs: u32,
    // Read as generated code reads it; strings are not numeric leaves.
    #[allow(dead_code)]
    frame_id: String,
}

#[derive(Default)]
struct Imu {
    header: Header,
    orientation: [f64; 4],
    orientation_covariance: [f64; 9],
    angular_velocity: [f64; 3],
    angular_velocity_covariance: [f64; 9],
    linear_acceleration: [f64; 3],
    linear_acceleration_covariance: [f64; 9],
}

#[derive(Default)]
struct JointState {
    header: Header,
    #[allow(dead_code)]
    name: Vec<String>,
    position: Vec<f64>,
    velocity: Vec<f64>,
    effort: Vec<f64>,
}

/// A static reader, as generated ROS 1 code reads: bounds-checked little-endian fields.
struct Rd<'a>(&'a [u8]);

impl Rd<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    fn f64(&mut self) -> Option<f64> {
        self.take().map(f64::from_le_bytes)
    }
    fn string(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        if n > self.0.len() {
            return None;
        }
        let (s, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(String::from_utf8_lossy(s).into_owned())
    }
    fn f64s<const N: usize>(&mut self) -> Option<[f64; N]> {
        let mut out = [0.0; N];
        for v in &mut out {
            *v = self.f64()?;
        }
        Some(out)
    }
    fn f64_seq(&mut self) -> Option<Vec<f64>> {
        let n = self.u32()? as usize;
        if n.checked_mul(8)? > self.0.len() {
            return None;
        }
        (0..n).map(|_| self.f64()).collect()
    }
    fn header(&mut self) -> Option<Header> {
        Some(Header {
            seq: self.u32()?,
            secs: self.u32()?,
            nsecs: self.u32()?,
            frame_id: self.string()?,
        })
    }
}

fn read_imu(b: &[u8]) -> Option<Imu> {
    let mut r = Rd(b);
    Some(Imu {
        header: r.header()?,
        orientation: r.f64s()?,
        orientation_covariance: r.f64s()?,
        angular_velocity: r.f64s()?,
        angular_velocity_covariance: r.f64s()?,
        linear_acceleration: r.f64s()?,
        linear_acceleration_covariance: r.f64s()?,
    })
}

fn read_joints(b: &[u8]) -> Option<JointState> {
    let mut r = Rd(b);
    let header = r.header()?;
    let n = r.u32()? as usize;
    if n.checked_mul(4)? > r.0.len() {
        return None;
    }
    let name = (0..n).map(|_| r.string()).collect::<Option<_>>()?;
    Some(JointState {
        header,
        name,
        position: r.f64_seq()?,
        velocity: r.f64_seq()?,
        effort: r.f64_seq()?,
    })
}

fn header_fields(h: &Header, out: &mut Vec<f64>) {
    out.extend([
        f64::from(h.seq),
        f64::from(h.secs),
        f64::from(h.nsecs),
        f64::from(h.secs) * 1e9 + f64::from(h.nsecs),
    ]);
}

fn imu_fields(m: &Imu, out: &mut Vec<f64>) -> usize {
    out.clear();
    header_fields(&m.header, out);
    out.extend(m.orientation);
    out.extend(m.orientation_covariance);
    out.extend(m.angular_velocity);
    out.extend(m.angular_velocity_covariance);
    out.extend(m.linear_acceleration);
    out.extend(m.linear_acceleration_covariance);
    out.len()
}

fn joint_fields(m: &JointState, out: &mut Vec<f64>) -> usize {
    out.clear();
    header_fields(&m.header, out);
    out.extend(&m.position);
    out.extend(&m.velocity);
    out.extend(&m.effort);
    out.len()
}

fn write_header(out: &mut Vec<u8>, frame: &str) {
    out.extend(7u32.to_le_bytes());
    out.extend(1_700_000_000u32.to_le_bytes());
    out.extend(5u32.to_le_bytes());
    write_string(out, frame);
}

fn write_string(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u32).to_le_bytes());
    out.extend(s.as_bytes());
}

fn write_f64s(out: &mut Vec<u8>, vs: impl IntoIterator<Item = f64>) {
    for v in vs {
        out.extend(v.to_le_bytes());
    }
}

fn bench(c: &mut Criterion) {
    let mut imu = Vec::new();
    write_header(&mut imu, "imu_link");
    write_f64s(&mut imu, [0.0, 0.0, 0.0, 1.0]);
    write_f64s(&mut imu, [0.01; 9]);
    write_f64s(&mut imu, [0.1, -0.2, 0.3]);
    write_f64s(&mut imu, [0.02; 9]);
    write_f64s(&mut imu, [0.0, 0.1, 9.81]);
    write_f64s(&mut imu, [0.03; 9]);
    let mut joints = Vec::new();
    write_header(&mut joints, "base");
    joints.extend(6u32.to_le_bytes());
    for i in 1..=6 {
        write_string(&mut joints, &format!("joint_{i}"));
    }
    for scale in [1.0, 0.5, -1.5] {
        joints.extend(6u32.to_le_bytes());
        write_f64s(&mut joints, (0..6).map(|i| f64::from(i) * scale));
    }
    let mut out = Vec::with_capacity(64);
    for (group, name, def, bytes) in [
        ("ros1_imu", "sensor_msgs/Imu", format!("{IMU}{HEADER}"), imu),
        (
            "ros1_joint_state",
            "sensor_msgs/JointState",
            format!("{JOINT_STATE}{HEADER}"),
            joints,
        ),
    ] {
        let mut plan = compile(&SchemaSource {
            message_encoding: "ros1",
            schema_encoding: "ros1msg",
            schema_name: name,
            schema_data: def.as_bytes(),
        })
        .expect("compile");
        let mut row = Row::new();
        plan.decode(&bytes, &mut row).expect("decode");
        let is_imu = group == "ros1_imu";
        let n = if is_imu {
            imu_fields(&read_imu(&bytes).expect("static"), &mut out)
        } else {
            joint_fields(&read_joints(&bytes).expect("static"), &mut out)
        };
        assert_eq!(n, row.present_count(), "{group}: both read the same leaves");
        let mut g = c.benchmark_group(group);
        g.bench_function("runtime", |b| {
            b.iter(|| {
                plan.decode(black_box(&bytes), &mut row).expect("decode");
                black_box(row.get(0))
            })
        });
        g.bench_function("static", |b| {
            b.iter(|| {
                let n = if is_imu {
                    imu_fields(&read_imu(black_box(&bytes)).expect("static"), &mut out)
                } else {
                    joint_fields(&read_joints(black_box(&bytes)).expect("static"), &mut out)
                };
                black_box(n)
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
