//! ROS 1 recordings written by the reference libraries (`../shared/oracles/ros1`: two `.bag`
//! files and ROS 1 in MCAP) through `bag cat --json`: every message, its topic and log time, and
//! every numeric leaf exactly as `expected.json` lists them. Under `CI=true` missing data is a
//! failure; elsewhere this test says it skipped.

#[path = "../../tests/common.rs"]
mod common;

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

/// Whether `got` (from `bag cat --json`) is exactly the `expected.json` value.
fn same(expected: &Value, got: &Value) -> bool {
    match (expected, got) {
        (Value::String(e), Value::String(g)) => e == g,
        (Value::Number(e), Value::Number(g)) => {
            if let (Some(a), Some(b)) = (e.as_i64(), g.as_i64()) {
                a == b
            } else if let (Some(a), Some(b)) = (e.as_u64(), g.as_u64()) {
                a == b
            } else {
                e.as_f64().map(f64::to_bits) == g.as_f64().map(f64::to_bits)
                    || e.as_f64() == g.as_f64()
            }
        }
        (Value::Bool(e), Value::Number(g)) => g.as_u64() == Some(u64::from(*e)),
        _ => false,
    }
}

#[test]
fn bag_cat_reads_every_ros1_message_and_leaf_exactly() {
    let Some(root) = common::oracle_dir("ros1") else {
        return;
    };
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("expected.json")).unwrap())
            .unwrap();
    let files = expected["files"].as_object().unwrap();
    assert_eq!(files.len(), 3);
    let mut leaves = 0;
    for (name, file) in files {
        // What kind of file it is, the same in text and JSON.
        let info = Command::new(env!("CARGO_BIN_EXE_bag"))
            .args(["info", "--json"])
            .arg(root.join(name))
            .output()
            .unwrap();
        let info: Value = serde_json::from_slice(&info.stdout).unwrap();
        let kind = if name.ends_with(".bag") {
            "ros1 bag file"
        } else {
            "mcap file"
        };
        assert_eq!(info["kind"], kind, "{name}");
        let out = Command::new(env!("CARGO_BIN_EXE_bag"))
            .args(["cat", "--json", "--no-data"])
            .arg(root.join(name))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: BTreeMap<(String, u64), Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let m: Value = serde_json::from_str(l).unwrap();
                let key = (
                    m["topic"].as_str().unwrap().to_owned(),
                    m["log_time"].as_u64().unwrap(),
                );
                (key, m)
            })
            .collect();
        let messages = file["messages"].as_array().unwrap();
        assert_eq!(got.len(), messages.len(), "{name}: message count");
        assert_eq!(
            file["message_count"].as_u64(),
            Some(messages.len() as u64),
            "{name}"
        );
        for m in messages {
            let key = (
                m["topic"].as_str().unwrap().to_owned(),
                m["log_time"].as_u64().unwrap(),
            );
            let found = got
                .get(&key)
                .unwrap_or_else(|| panic!("{name}: no message {key:?}"));
            for (path, value) in m["fields"].as_object().unwrap() {
                let v = &found["fields"][path];
                assert!(
                    same(value, v),
                    "{name} {key:?} {path}: expected {value}, got {v}"
                );
                leaves += 1;
            }
        }
    }
    assert!(leaves > 1000, "{leaves} leaves compared");
    println!("{leaves} leaves compared");
}
