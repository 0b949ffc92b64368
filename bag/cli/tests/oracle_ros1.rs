//! ROS 1 recordings written by the reference libraries (`../shared/oracles/ros1`: two `.bag`
//! files and ROS 1 in MCAP) through `bag cat --json`: every message, its topic and log time, and
//! every numeric leaf exactly as `expected.json` lists them; and `bag export` of a `.bag`, which
//! must keep every message byte for byte as ROS 1. Under `CI=true` missing data is a
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
        let info: Value = serde_json::from_slice(&bag_stdout(&[
            "info".as_ref(),
            "--json".as_ref(),
            root.join(name).as_os_str(),
        ]))
        .unwrap();
        let kind = if name.ends_with(".bag") {
            "ros1 bag file"
        } else {
            "mcap file"
        };
        assert_eq!(info["kind"], kind, "{name}");
        let path = root.join(name);
        let out = bag_stdout(&[
            "cat".as_ref(),
            "--json".as_ref(),
            "--no-data".as_ref(),
            path.as_os_str(),
        ]);
        let got: BTreeMap<(String, u64), Value> = String::from_utf8(out)
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

/// `bag` with `args`, its stdout when it exits 0.
fn bag_stdout(args: &[&std::ffi::OsStr]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_bag"))
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "bag {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn export_of_a_ros1_bag_keeps_every_message_byte_for_byte_and_stays_ros1() {
    let Some(root) = common::oracle_dir("ros1") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    for name in ["ros1_bz2.bag", "ros1_uncompressed.bag"] {
        let source = root.join(name);
        let out = tmp.path().join(name.replace('.', "_"));
        bag_stdout(&[
            "export".as_ref(),
            source.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        // Every message, its times, sequence and bytes (`data_b64`), in the same order.
        let cat = |path: &std::path::Path| {
            bag_stdout(&["cat".as_ref(), "--json".as_ref(), path.as_os_str()])
        };
        let (before, after) = (cat(&source), cat(&out));
        assert!(before.len() > 1000, "{name}");
        assert!(before == after, "{name}: bag cat differs after export");
        // Channels stay ros1 / ros1msg with their md5sum; the export verifies clean.
        let channels = |path: &std::path::Path| -> Value {
            let info: Value = serde_json::from_slice(&bag_stdout(&[
                "info".as_ref(),
                "--json".as_ref(),
                path.as_os_str(),
            ]))
            .unwrap();
            info["channels"].clone()
        };
        let exported = channels(&out);
        assert_eq!(channels(&source), exported, "{name}");
        for channel in exported.as_array().unwrap() {
            assert_eq!(channel["message_encoding"], "ros1", "{name}: {channel}");
            assert_eq!(channel["schema_encoding"], "ros1msg", "{name}: {channel}");
            assert!(
                channel["metadata"]["md5sum"].is_string(),
                "{name}: {channel}"
            );
        }
        bag_stdout(&["verify".as_ref(), out.as_os_str()]);
    }
}
