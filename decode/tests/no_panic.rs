//! No input makes decoding panic: arbitrary bytes, valid messages with random damage, and
//! random Cap'n Proto bodies behind a valid segment table, into every compiled plan (Cap'n Proto,
//! ROS 2 CDR, ROS 1, protobuf, JSON).

#[allow(clippy::all, unused, unsafe_code)]
#[path = "gen/telemetry_capnp.rs"]
mod telemetry_capnp;

use decode::{Plan, Row, SchemaSource, compile};
use proptest::prelude::*;

const TEST_CGR: &[u8] = include_bytes!("fixtures/capnp-test.cgr");
const TELEMETRY_CGR: &[u8] = include_bytes!("fixtures/telemetry.cgr");
/// `redline.test.AllTypes` (../shared/oracles/protobuf-mcap/proto): its FileDescriptorSet and
/// one message, as the protobuf-mcap oracle recording carries them.
const PROTOBUF_FDS: &[u8] = include_bytes!("fixtures/protobuf-alltypes.fds");
const PROTOBUF_MSG: &[u8] = include_bytes!("fixtures/protobuf-alltypes.bin");
/// `redline_msgs/AllTypes` (ROS 1) definition and one message, from the ros1 oracle's MCAP.
const ROS1_DEF: &str = include_str!("fixtures/ros1-alltypes.msg");
const ROS1_MSG: &[u8] = include_bytes!("fixtures/ros1-alltypes.bin");

const ROS_DEFS: &[(&str, &str)] = &[
    (
        "sensor_msgs/msg/Imu",
        "std_msgs/Header header\ngeometry_msgs/Quaternion orientation\nfloat64[9] orientation_covariance\ngeometry_msgs/Vector3 angular_velocity\nfloat64[9] angular_velocity_covariance\ngeometry_msgs/Vector3 linear_acceleration\nfloat64[9] linear_acceleration_covariance\n===\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n===\nMSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w\n===\nMSG: geometry_msgs/Vector3\nfloat64 x\nfloat64 y\nfloat64 z\n",
    ),
    (
        "demo/msg/All",
        "bool a\nbyte b\nchar c\nint8 d\nuint8 e\nint16 f\nuint16 g\nint32 h\nuint32 i\nint64 j\nuint64 k\nfloat32 l\nfloat64 m\nstring n\nwstring o\nstring<=3 p\nint16[3] q\nuint64[] r\nbool[<=2] s\nstring[] t\nwstring[2] u\nInner[] v\nInner[2] w\ntime x\nduration[] y\n===\nMSG: demo/Inner\nInner2 z\nfloat32[] zz\n===\nMSG: demo/Inner2\n",
    ),
    ("demo/msg/Empty", ""),
    // Named without a definition (rosbag2 SQLite before Iron): the built-in standard one.
    ("nav_msgs/msg/Odometry", ""),
];

fn plans() -> Vec<Plan> {
    let mut out = Vec::new();
    for name in [
        "TestAllTypes",
        "TestLists",
        "TestUnion",
        "TestDefaults",
        "TestGroups",
        "TestUnnamedUnion",
        "TestListDefaults",
        "TestInterleavedGroups",
        "TestUnionDefaults",
    ] {
        out.push(
            compile(&SchemaSource {
                message_encoding: "capnproto",
                schema_encoding: "capnproto",
                schema_name: name,
                schema_data: TEST_CGR,
            })
            .expect(name),
        );
    }
    out.push(
        compile(&SchemaSource {
            message_encoding: "capnproto",
            schema_encoding: "capnproto",
            schema_name: "telemetry.capnp:Imu",
            schema_data: TELEMETRY_CGR,
        })
        .expect("imu"),
    );
    for (name, def) in ROS_DEFS {
        out.push(
            compile(&SchemaSource {
                message_encoding: "cdr",
                schema_encoding: "ros2msg",
                schema_name: name,
                schema_data: def.as_bytes(),
            })
            .expect(name),
        );
    }
    for (name, def) in ROS_DEFS
        .iter()
        .copied()
        .chain([("redline_msgs/AllTypes", ROS1_DEF)])
    {
        out.push(
            compile(&SchemaSource {
                message_encoding: "ros1",
                schema_encoding: "ros1msg",
                schema_name: name,
                schema_data: def.as_bytes(),
            })
            .expect(name),
        );
    }
    out.push(
        compile(&SchemaSource {
            message_encoding: "protobuf",
            schema_encoding: "protobuf",
            schema_name: "redline.test.AllTypes",
            schema_data: PROTOBUF_FDS,
        })
        .expect("protobuf"),
    );
    out.push(
        compile(&SchemaSource {
            message_encoding: "json",
            schema_encoding: "",
            schema_name: "",
            schema_data: b"",
        })
        .expect("json"),
    );
    out
}

fn seeds() -> Vec<Vec<u8>> {
    let mut m = capnp::message::Builder::new_default();
    {
        let mut i = m.init_root::<telemetry_capnp::imu::Builder<'_>>();
        i.reborrow().init_header().set_frame_id("x");
        i.reborrow().init_status().init_saturated().set_y(1.0);
        i.init_samples(4).set(3, 2.0);
    }
    let mut seeds = vec![capnp::serialize::write_message_to_words(&m)];
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/oracles/capnproto/capnp/testdata");
    for f in ["binary", "segmented", "lists.binary"] {
        if let Ok(b) = std::fs::read(dir.join(f)) {
            seeds.push(b);
        }
    }
    let mut cdr = vec![0, 1, 0, 0];
    cdr.extend((0..200u8).map(|i| if i % 8 == 0 { 2 } else { i }));
    seeds.push(cdr);
    seeds.push(br#"{"a": [1, {"b": [true, 2.5]}], "c": {"d": -1}}"#.to_vec());
    seeds.push(PROTOBUF_MSG.to_vec());
    seeds.push(ROS1_MSG.to_vec());
    seeds
}

fn run_all(plans: &mut [Plan], bytes: &[u8]) {
    let mut row = Row::new();
    for p in plans.iter_mut() {
        let _ = p.decode(bytes, &mut row);
        let _ = p.decode_tree(bytes);
        let _ = row.present().count();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let mut plans = plans();
        run_all(&mut plans, &bytes);
    }

    #[test]
    fn damaged_valid_messages(seed in any::<prop::sample::Index>(), edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..12), cut in any::<prop::sample::Index>()) {
        let seeds = seeds();
        let mut bytes = seeds[seed.index(seeds.len())].clone();
        for (at, v) in edits {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        let keep = bytes.len() - cut.index(bytes.len() / 4 + 1);
        bytes.truncate(keep);
        let mut plans = plans();
        run_all(&mut plans, &bytes);
    }

    #[test]
    fn random_capnp_bodies(words in proptest::collection::vec(any::<u64>(), 1..80)) {
        let mut bytes = vec![0u8, 0, 0, 0];
        bytes.extend((words.len() as u32).to_le_bytes());
        for w in &words {
            bytes.extend(w.to_le_bytes());
        }
        let mut plans = plans();
        run_all(&mut plans, &bytes);
    }
}
