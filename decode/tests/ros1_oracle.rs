//! Every message of the ROS 1 oracles (`../shared/oracles/ros1`: `.bag` files written by
//! rosbags, and ROS 1 in MCAP written by mcap-ros1-support) decodes from the message
//! definition the recording carries, and every numeric leaf equals `expected.json` exactly.
//! The `rosbag` crate reads the `.bag` container here; the decode crate itself does no file I/O.

mod common;
use common::{expected, oracles};

use std::collections::HashMap;

use decode::{Plan, Row, Scalar, SchemaSource, compile};
use rosbag::{ChunkRecord, IndexRecord, MessageRecord, RosBag};

#[test]
fn ros1_in_mcap_matches_expected() {
    let Some(dir) = oracles::oracle_dir("ros1") else {
        return;
    };
    let want = expected::load(&dir);
    let c = expected::check_mcap(&dir, "ros1_in_mcap_zstd.mcap", &want);
    eprintln!("ros1_in_mcap_zstd.mcap: {c:?}");
    assert_eq!(c.leaves, 1244, "CHECKS.txt counts 1244 leaves");
}

/// One `.bag` file: connections (message definitions) from the index section, messages from
/// the chunks, each compared with `expected.json` by (topic, time).
fn check_bag(dir: &std::path::Path, name: &str, want: &serde_json::Value) -> expected::Checked {
    let file = &want["files"][name];
    let by_key: HashMap<(String, u64), &serde_json::Value> = file["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            let topic = m["topic"].as_str().expect("topic").to_owned();
            ((topic, m["log_time"].as_u64().expect("log_time")), m)
        })
        .collect();
    let bag = RosBag::new(dir.join(name)).expect("open bag");
    let mut plans: HashMap<u32, (String, Plan)> = HashMap::new();
    for rec in bag.index_records() {
        if let IndexRecord::Connection(c) = rec.expect("index record") {
            let plan = compile(&SchemaSource {
                message_encoding: "ros1",
                schema_encoding: "ros1msg",
                schema_name: c.tp,
                schema_data: c.message_definition.as_bytes(),
            })
            .unwrap_or_else(|e| panic!("{name} {}: {e}", c.topic));
            assert_eq!(file["topics"][c.topic]["schema"].as_str(), Some(c.tp));
            plans.insert(c.id, (c.topic.to_owned(), plan));
        }
    }
    let mut row = Row::new();
    let mut total = expected::Checked::default();
    for rec in bag.chunk_records() {
        let ChunkRecord::Chunk(chunk) = rec.expect("chunk record") else {
            continue;
        };
        for msg in chunk.messages() {
            let MessageRecord::MessageData(m) = msg.expect("message record") else {
                continue;
            };
            let (topic, plan) = plans.get_mut(&m.conn_id).expect("connection");
            let what = format!("{name} {topic} @{}", m.time);
            let w = by_key
                .get(&(topic.clone(), m.time))
                .unwrap_or_else(|| panic!("{what}: not in expected.json"));
            plan.decode(m.data, &mut row)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let tree = plan
                .decode_tree(m.data)
                .unwrap_or_else(|e| panic!("{what}: tree: {e}"));
            let c = expected::check_message(plan, &row, &tree, w, &what);
            total.messages += c.messages;
            total.leaves += c.leaves;
            total.non_numeric += c.non_numeric;
        }
    }
    assert_eq!(
        total.messages as u64,
        file["message_count"].as_u64().expect("count"),
        "{name}: every message decoded"
    );
    total
}

#[test]
fn ros1_bags_match_expected() {
    let Some(dir) = oracles::oracle_dir("ros1") else {
        return;
    };
    let want = expected::load(&dir);
    for (name, leaves) in [("ros1_uncompressed.bag", 2482), ("ros1_bz2.bag", 1023)] {
        let c = check_bag(&dir, name, &want);
        eprintln!("{name}: {c:?}");
        assert_eq!(c.leaves, leaves, "{name}: CHECKS.txt's count");
    }
}

/// ROS 1 builtins: `byte` is int8 and `char` uint8 (unlike ROS 2), `time` yields its parts and
/// nanoseconds, `duration` only its parts; no alignment; a payload longer than its schema is
/// an error, not values read with the wrong schema.
#[test]
fn ros1_builtins_and_layout() {
    use Scalar::{Int, UInt};
    let text = "byte b\nchar c\ntime t\nduration d\nuint8 u\nfloat64 x\nstring s\nint16[] v\n";
    let mut plan = compile(&SchemaSource {
        message_encoding: "ros1",
        schema_encoding: "ros1msg",
        schema_name: "demo/Builtins",
        schema_data: text.as_bytes(),
    })
    .expect("compiles");
    let mut msg = vec![0xff, 0xff];
    msg.extend_from_slice(&4_000_000_000u32.to_le_bytes());
    msg.extend_from_slice(&5u32.to_le_bytes());
    msg.extend_from_slice(&(-3i32).to_le_bytes());
    msg.extend_from_slice(&500_000_000i32.to_le_bytes());
    msg.push(7);
    msg.extend_from_slice(&1.5f64.to_le_bytes()); // unaligned: offset 19
    msg.extend_from_slice(&2u32.to_le_bytes());
    msg.extend_from_slice(b"hi");
    msg.extend_from_slice(&1u32.to_le_bytes());
    msg.extend_from_slice(&(-2i16).to_le_bytes());
    let mut row = Row::new();
    plan.decode(&msg, &mut row).expect("decodes");
    let get = |p: &str| plan.slot(p).and_then(|s| row.get(s));
    assert_eq!(get("b"), Some(Int(-1)));
    assert_eq!(get("c"), Some(UInt(255)));
    assert_eq!(get("t.secs"), Some(UInt(4_000_000_000)));
    assert_eq!(get("t.nsecs"), Some(UInt(5)));
    assert_eq!(get("t"), Some(Int(4_000_000_000_000_000_005)));
    assert_eq!(get("d.secs"), Some(Int(-3)));
    assert_eq!(get("d.nsecs"), Some(Int(500_000_000)));
    assert_eq!(get("d"), None, "a duration yields only its parts");
    assert_eq!(get("u"), Some(UInt(7)));
    assert_eq!(get("x"), Some(Scalar::Float(1.5)));
    assert_eq!(get("v[0]"), Some(Int(-2)));
    assert_eq!(get("s"), None, "strings are tree only");
    let tree = plan.decode_tree(&msg).expect("tree");
    assert_eq!(tree.at("s"), Some(&decode::Value::Text("hi".into())));
    let mut long = msg.clone();
    long.push(0);
    assert!(plan.decode(&long, &mut row).is_err(), "trailing byte");
    assert!(
        plan.decode(&msg[..msg.len() - 1], &mut row).is_err(),
        "cut short"
    );
}
