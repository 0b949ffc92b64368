//! `cargo +nightly fuzz run decode_ros1`: ROS 1 decoding must never panic, whatever the bytes.
//!
//! Seed the corpus with a real message for depth, e.g.
//! `mkdir -p corpus/decode_ros1 && cp ../decode/tests/fixtures/ros1-alltypes.bin corpus/decode_ros1/`.

#![no_main]

use decode::{Plan, Row, SchemaSource, compile};
use libfuzzer_sys::fuzz_target;

/// `redline_msgs/AllTypes` (every ROS 1 primitive, time, duration, fixed and variable arrays,
/// arrays of messages, string[], constants), as a recording carries it.
const ALL_TYPES: &str = include_str!("../../decode/tests/fixtures/ros1-alltypes.msg");
const EMPTY: &str = "";
const NESTED: &str = "Inner[] v\nInner[2] w\nduration[] d\n===\nMSG: demo/Inner\nInner2 z\nfloat32[] zz\nchar c\n===\nMSG: demo/Inner2\n";

fn plans() -> Vec<Plan> {
    [
        ("redline_msgs/AllTypes", ALL_TYPES),
        ("demo/Empty", EMPTY),
        ("demo/Nested", NESTED),
    ]
    .into_iter()
    .filter_map(|(name, def)| {
        compile(&SchemaSource {
            message_encoding: "ros1",
            schema_encoding: "ros1msg",
            schema_name: name,
            schema_data: def.as_bytes(),
        })
        .ok()
    })
    .collect()
}

fuzz_target!(|data: &[u8]| {
    let mut row = Row::new();
    for mut plan in plans() {
        let _ = plan.decode(data, &mut row);
        let _ = plan.decode_tree(data);
    }
});
