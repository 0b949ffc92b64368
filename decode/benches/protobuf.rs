//! Protobuf: run-time decoding from the recording's FileDescriptorSet vs prost-generated code
//! (`#[derive(prost::Message)]` structs for the same `.proto`) reading the same fields into an
//! array. `pb_all_types/{runtime,prost}` (every scalar type, nested and repeated messages, packed
//! and unpacked repeated, a map, a oneof, strings), `pb_vec3/{runtime,prost}` (three doubles).

use std::collections::HashMap;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use decode::{Row, SchemaSource, compile};
use prost::Message;

/// `redline.test.AllTypes` from ../shared/oracles/protobuf-mcap/proto/redline/test/all_types.proto
/// (the FileDescriptorSet and one message, as the oracle recording carries them).
const FDS: &[u8] = include_bytes!("../tests/fixtures/protobuf-alltypes.fds");
const ALL_TYPES_MSG: &[u8] = include_bytes!("../tests/fixtures/protobuf-alltypes.bin");

#[derive(Clone, PartialEq, Message)]
struct Timestamp {
    #[prost(int64, tag = "1")]
    seconds: i64,
    #[prost(int32, tag = "2")]
    nanos: i32,
}

#[derive(Clone, PartialEq, Message)]
struct Vec3 {
    #[prost(double, tag = "1")]
    x: f64,
    #[prost(double, tag = "2")]
    y: f64,
    #[prost(double, tag = "3")]
    z: f64,
}

#[derive(Clone, PartialEq, Message)]
struct Sample {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(float, tag = "2")]
    value: f32,
    #[prost(message, optional, tag = "3")]
    offset: Option<Vec3>,
    #[prost(int32, repeated, tag = "4")]
    codes: Vec<i32>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Command {
    #[prost(double, tag = "27")]
    SetSpeed(f64),
    #[prost(int32, tag = "28")]
    SetGear(i32),
    #[prost(message, tag = "29")]
    SetTarget(Vec3),
    #[prost(string, tag = "30")]
    Note(String),
}

#[derive(Clone, PartialEq, Message)]
struct AllTypes {
    #[prost(message, optional, tag = "1")]
    stamp: Option<Timestamp>,
    #[prost(double, tag = "2")]
    f_double: f64,
    #[prost(float, tag = "3")]
    f_float: f32,
    #[prost(int32, tag = "4")]
    f_int32: i32,
    #[prost(int64, tag = "5")]
    f_int64: i64,
    #[prost(uint32, tag = "6")]
    f_uint32: u32,
    #[prost(uint64, tag = "7")]
    f_uint64: u64,
    #[prost(sint32, tag = "8")]
    f_sint32: i32,
    #[prost(sint64, tag = "9")]
    f_sint64: i64,
    #[prost(fixed32, tag = "10")]
    f_fixed32: u32,
    #[prost(fixed64, tag = "11")]
    f_fixed64: u64,
    #[prost(sfixed32, tag = "12")]
    f_sfixed32: i32,
    #[prost(sfixed64, tag = "13")]
    f_sfixed64: i64,
    #[prost(bool, tag = "14")]
    f_bool: bool,
    // An enum is an int32 on the wire (prost's generated code stores it as i32 too).
    #[prost(int32, tag = "15")]
    mode: i32,
    #[prost(string, tag = "16")]
    label: String,
    #[prost(bytes = "vec", tag = "17")]
    blob: Vec<u8>,
    #[prost(message, optional, tag = "18")]
    position: Option<Vec3>,
    #[prost(double, repeated, tag = "19")]
    packed_doubles: Vec<f64>,
    #[prost(sint32, repeated, tag = "20")]
    packed_sint32: Vec<i32>,
    #[prost(int64, repeated, packed = "false", tag = "21")]
    unpacked_int64: Vec<i64>,
    #[prost(float, repeated, packed = "false", tag = "22")]
    unpacked_floats: Vec<f32>,
    #[prost(bool, repeated, tag = "23")]
    packed_bools: Vec<bool>,
    #[prost(int32, repeated, tag = "24")]
    modes: Vec<i32>,
    #[prost(message, repeated, tag = "25")]
    samples: Vec<Sample>,
    #[prost(map = "string, double", tag = "26")]
    gains: HashMap<String, f64>,
    #[prost(oneof = "Command", tags = "27, 28, 29, 30")]
    command: Option<Command>,
    #[prost(double, optional, tag = "31")]
    opt_double: Option<f64>,
    #[prost(int32, optional, tag = "32")]
    opt_int32: Option<i32>,
    #[prost(string, repeated, tag = "33")]
    tags: Vec<String>,
    #[prost(uint64, repeated, tag = "34")]
    packed_uint64: Vec<u64>,
    #[prost(fixed32, repeated, tag = "35")]
    packed_fixed32: Vec<u32>,
}

/// Every numeric leaf the run-time plan yields, in a flat array; returns how many.
fn all_types_fields(m: &AllTypes, out: &mut Vec<f64>) -> usize {
    out.clear();
    if let Some(t) = &m.stamp {
        out.extend([
            t.seconds as f64,
            f64::from(t.nanos),
            t.seconds as f64 * 1e9 + f64::from(t.nanos),
        ]);
    }
    out.extend([
        m.f_double,
        f64::from(m.f_float),
        f64::from(m.f_int32),
        m.f_int64 as f64,
        f64::from(m.f_uint32),
        m.f_uint64 as f64,
        f64::from(m.f_sint32),
        m.f_sint64 as f64,
        f64::from(m.f_fixed32),
        m.f_fixed64 as f64,
        f64::from(m.f_sfixed32),
        m.f_sfixed64 as f64,
        f64::from(u8::from(m.f_bool)),
        f64::from(m.mode),
    ]);
    let vec3 = |v: &Vec3, out: &mut Vec<f64>| out.extend([v.x, v.y, v.z]);
    if let Some(p) = &m.position {
        vec3(p, out);
    }
    out.extend(&m.packed_doubles);
    out.extend(m.packed_sint32.iter().map(|&v| f64::from(v)));
    out.extend(m.unpacked_int64.iter().map(|&v| v as f64));
    out.extend(m.unpacked_floats.iter().map(|&v| f64::from(v)));
    out.extend(m.packed_bools.iter().map(|&v| f64::from(u8::from(v))));
    out.extend(m.modes.iter().map(|&v| f64::from(v)));
    for s in &m.samples {
        out.push(f64::from(s.value));
        if let Some(o) = &s.offset {
            vec3(o, out);
        }
        out.extend(s.codes.iter().map(|&v| f64::from(v)));
    }
    match &m.command {
        Some(Command::SetSpeed(v)) => out.extend([*v, 27.0]),
        Some(Command::SetGear(v)) => out.extend([f64::from(*v), 28.0]),
        Some(Command::SetTarget(v)) => {
            vec3(v, out);
            out.push(29.0);
        }
        Some(Command::Note(_)) => out.push(30.0),
        None => {}
    }
    out.extend(m.opt_double);
    out.extend(m.opt_int32.map(f64::from));
    out.extend(m.packed_uint64.iter().map(|&v| v as f64));
    out.extend(m.packed_fixed32.iter().map(|&v| f64::from(v)));
    out.len()
}

fn vec3_fields(m: &Vec3, out: &mut Vec<f64>) -> usize {
    out.clear();
    out.extend([m.x, m.y, m.z]);
    out.len()
}

fn bench(c: &mut Criterion) {
    let vec3 = Vec3 {
        x: 1.5,
        y: -2.25,
        z: 9.81,
    }
    .encode_to_vec();
    let mut out = Vec::with_capacity(1024);
    for (group, name, bytes) in [
        ("pb_all_types", "redline.test.AllTypes", ALL_TYPES_MSG),
        ("pb_vec3", "redline.test.Vec3", &vec3[..]),
    ] {
        let mut plan = compile(&SchemaSource {
            message_encoding: "protobuf",
            schema_encoding: "protobuf",
            schema_name: name,
            schema_data: FDS,
        })
        .expect("compile");
        let mut row = Row::new();
        plan.decode(bytes, &mut row).expect("decode");
        let n = if group == "pb_vec3" {
            vec3_fields(&Vec3::decode(bytes).expect("prost"), &mut out)
        } else {
            all_types_fields(&AllTypes::decode(bytes).expect("prost"), &mut out)
        };
        assert_eq!(n, row.present_count(), "{group}: both read the same leaves");
        let mut g = c.benchmark_group(group);
        g.bench_function("runtime", |b| {
            b.iter(|| {
                plan.decode(black_box(bytes), &mut row).expect("decode");
                black_box(row.get(0))
            })
        });
        g.bench_function("prost", |b| {
            b.iter(|| {
                let n = if group == "pb_vec3" {
                    vec3_fields(&Vec3::decode(black_box(bytes)).expect("prost"), &mut out)
                } else {
                    all_types_fields(
                        &AllTypes::decode(black_box(bytes)).expect("prost"),
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
