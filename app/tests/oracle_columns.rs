//! The scope's loader against the oracles written by the reference libraries (issue 22's
//! `protobuf-mcap`, `ros1` and `rosbag2-sqlite3`): every recording opened as `scope PATH` opens
//! it, every topic loaded into columns, and each message's every numeric leaf read back from the
//! columns exactly as `expected.json` lists it; a leaf a message does not carry (a oneof member
//! not set) is absent there. This is the path the app plots from: the decode shortcut writing
//! straight into columns, constant columns stored once, 64-bit integers exact.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use common::oracle_dir;
use scope::data::loader::{LoadEvent, Loader};
use scope::data::series::is_absent;
use scope::data::source::{DataSource, RecordingSource};
use scope::data::topic_data::TopicData;
use serde_json::Value;

/// Every topic of the recording at `path`, loaded, by name.
fn load(path: &Path) -> HashMap<String, Arc<TopicData>> {
    let source: Arc<dyn DataSource> = Arc::new(RecordingSource::open(path).expect("open"));
    let loader = Loader::start(Arc::clone(&source), Arc::new(|| {}));
    let mut topics = HashMap::new();
    while let Some(event) = loader.wait_event() {
        match event {
            LoadEvent::Topic { topic, data } => {
                let name = source.summary().topics[topic].topic.clone();
                let data = data.unwrap_or_else(|e| panic!("{name} did not load: {e}"));
                topics.insert(name, data);
            }
            LoadEvent::Finished { .. } => break,
        }
    }
    topics
}

/// Whether column value `got` (with its exact integer `exact`) is the `expected.json` value.
fn same(want: &Value, got: f64, exact: Option<i128>) -> bool {
    match want {
        Value::String(s) => match s.as_str() {
            "NaN" => got.is_nan() && !is_absent(got),
            "inf" => got == f64::INFINITY,
            "-inf" => got == f64::NEG_INFINITY,
            _ => false,
        },
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                exact == Some(i128::from(i))
            } else if let Some(u) = n.as_u64() {
                exact == Some(i128::from(u))
            } else {
                n.as_f64()
                    .is_some_and(|w| w.to_bits() == got.to_bits() || (w == 0.0 && got == 0.0))
            }
        }
        Value::Bool(b) => exact == Some(i128::from(*b)),
        _ => false,
    }
}

/// Checks every message of `file` (an `expected.json` entry) against the columns of the
/// recording at `path`; returns the leaves compared.
fn columns_match(path: &Path, name: &str, file: &Value) -> usize {
    let topics = load(path);
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut checked = 0;
    let messages = file["messages"].as_array().expect("messages");
    for m in messages {
        let topic = m["topic"].as_str().expect("topic");
        let data = topics
            .get(topic)
            .unwrap_or_else(|| panic!("{name}: {topic} not loaded"));
        let k = *seen
            .entry(topic.to_string())
            .and_modify(|k| *k += 1)
            .or_insert(0);
        let log_time = match &m["log_time"] {
            Value::String(s) => s.parse::<u64>().ok(),
            v => v.as_u64(),
        }
        .expect("a log time");
        assert_eq!(data.times_ns.get(k), Some(&log_time), "{name} {topic} #{k}");
        let fields = m["fields"].as_object().expect("fields");
        for column in &data.fields {
            let got = column.series.value(k).expect("as long as the topic");
            match fields.get(&column.path) {
                Some(want) => {
                    let exact = column.series.exact(k);
                    assert!(
                        same(want, got, exact),
                        "{name} {topic} #{k} {}: expected {want}, got {got} ({exact:?})",
                        column.path
                    );
                    checked += 1;
                }
                None => assert!(
                    is_absent(got),
                    "{name} {topic} #{k} {}: not in the message, got {got}",
                    column.path
                ),
            }
        }
        for path in fields.keys() {
            assert!(
                data.field(path).is_some(),
                "{name} {topic} #{k}: no column for {path}"
            );
        }
    }
    for (topic, data) in &topics {
        let listed = seen.get(topic).map_or(0, |k| k + 1);
        assert_eq!(data.times_ns.len(), listed, "{name} {topic}: messages");
    }
    checked
}

fn every_file(set: &str) {
    let Some(root) = oracle_dir(set) else {
        return;
    };
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("expected.json")).expect("read"))
            .expect("json");
    let files = expected["files"].as_object().expect("files");
    assert!(!files.is_empty());
    for (name, file) in files {
        let checked = columns_match(&root.join(name), name, file);
        assert!(checked > 0, "{name}: nothing compared");
        eprintln!("{set}/{name}: {checked} leaves equal");
    }
}

#[test]
fn rosbag2_sqlite_recordings_load_every_leaf_exactly() {
    every_file("rosbag2-sqlite3");
}

#[test]
fn ros1_recordings_load_every_leaf_exactly() {
    every_file("ros1");
}

#[test]
fn protobuf_recordings_load_every_leaf_exactly() {
    every_file("protobuf-mcap");
}

/// A rosbag2 SQLite file stores no per-topic counts: the scope opens it without a counting pass
/// (its topics say so, `None`), and loading counts them: afterwards each topic's count is the
/// messages `expected.json` lists for it, and what `bag info` counts (`BagReader::open`).
#[test]
fn rosbag2_sqlite_topics_are_counted_by_loading_them() {
    let Some(root) = oracle_dir("rosbag2-sqlite3") else {
        return;
    };
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("expected.json")).expect("read"))
            .expect("json");
    for (name, file) in expected["files"].as_object().expect("files") {
        let path = root.join(name);
        let source = RecordingSource::open(&path).expect("open");
        assert!(
            source
                .summary()
                .topics
                .iter()
                .all(|t| t.message_count.is_none()),
            "{name}: counted at open"
        );
        let mut listed: HashMap<String, u64> = HashMap::new();
        for m in file["messages"].as_array().expect("messages") {
            *listed
                .entry(m["topic"].as_str().expect("topic").to_string())
                .or_insert(0) += 1;
        }
        let counted = bag::BagReader::open(&path).expect("open counted");
        let recording = common::load_recording(&path);
        for topic in &recording.summary().topics {
            let want = listed.get(&topic.topic).copied().unwrap_or(0);
            assert_eq!(topic.message_count, Some(want), "{name} {}", topic.topic);
            let by_bag: u64 = counted
                .channels()
                .iter()
                .filter(|c| c.spec.topic == topic.topic)
                .map(|c| c.message_count.expect("counted"))
                .sum();
            assert_eq!(by_bag, want, "{name} {}", topic.topic);
        }
    }
}
