//! Recordings written by the reference libraries through `bag cat --json`: every message, its
//! topic and log time, and every numeric leaf exactly as each oracle's `expected.json` lists them
//! (`../shared/oracles/ros1`: two `.bag` files and ROS 1 in MCAP; `rosbag2-sqlite3`: rosbag2
//! directories of `.db3` files); and `bag export` of each, which must keep every message byte for
//! byte in its own encoding. Under `CI=true` missing data is a failure; elsewhere this test says
//! it skipped.

#[path = "../../tests/common.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::Path;
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
    let expected = expected(&root);
    let files = expected["files"].as_object().unwrap();
    assert_eq!(files.len(), 3);
    let mut leaves = 0;
    for (name, file) in files {
        let kind = if name.ends_with(".bag") {
            "ros1 bag file"
        } else {
            "mcap file"
        };
        leaves += cat_matches(&root.join(name), kind, file);
    }
    assert!(leaves > 1000, "{leaves} leaves compared");
    println!("{leaves} leaves compared");
}

#[test]
fn bag_cat_reads_every_rosbag2_sqlite_message_and_leaf_exactly() {
    let Some(root) = common::oracle_dir("rosbag2-sqlite3") else {
        return;
    };
    let expected = expected(&root);
    let files = expected["files"].as_object().unwrap();
    assert_eq!(files.len(), 2);
    let mut leaves = 0;
    for (name, file) in files {
        leaves += cat_matches(&root.join(name), "rosbag2", file);
        // Parts and per-topic counts as the writer made them, from SQLite without reading blobs.
        let info: Value = serde_json::from_slice(&bag_stdout(&[
            "info".as_ref(),
            "--json".as_ref(),
            root.join(name).as_os_str(),
        ]))
        .unwrap();
        let mut parts: BTreeMap<String, u64> = BTreeMap::new();
        for m in file["messages"].as_array().unwrap() {
            *parts
                .entry(m["part"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
        let got: BTreeMap<String, u64> = info["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                assert_eq!(p["state"], "complete", "{name}: {p}");
                (
                    p["name"].as_str().unwrap().to_owned(),
                    p["message_count"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, parts, "{name}: messages per part");
        for (topic, count) in file["per_topic"].as_object().unwrap() {
            let channel = info["channels"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["topic"] == *topic)
                .unwrap_or_else(|| panic!("{name}: no channel {topic}"));
            assert_eq!(channel["message_count"], *count, "{name} {topic}");
            assert_eq!(channel["schema_encoding"], "ros2msg", "{name} {topic}");
        }
    }
    assert!(leaves > 2000, "{leaves} leaves compared");
    println!("{leaves} leaves compared");
}

/// The oracle split bag stored as `ros2 bag record --compression-mode file` stores it: each
/// `.db3` zstd-compressed whole (`NAME.db3.zstd`), listed so in `metadata.yaml`. Every message
/// and leaf reads exactly, verify checks the files against the index, export writes them all,
/// and reindex refuses it, changing nothing.
#[test]
fn a_sqlite_bag_compressed_file_by_file_reads_every_leaf_exactly() {
    let Some(root) = common::oracle_dir("rosbag2-sqlite3") else {
        return;
    };
    let expected = expected(&root);
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("split_two");
    copy_dir(&root.join("split_two"), &bag);
    let mut index = std::fs::read_to_string(bag.join("metadata.yaml")).unwrap();
    for part in ["split_two_0.db3", "split_two_1.db3"] {
        let plain = bag.join(part);
        let packed = zstd::encode_all(&std::fs::read(&plain).unwrap()[..], 3).unwrap();
        std::fs::write(bag.join(format!("{part}.zstd")), packed).unwrap();
        std::fs::remove_file(&plain).unwrap();
        index = index.replace(&format!("{part}\n"), &format!("{part}.zstd\n"));
    }
    index = index
        .replace("compression_format: ''", "compression_format: zstd")
        .replace("compression_mode: ''", "compression_mode: FILE");
    assert_eq!(index.matches(".db3.zstd").count(), 4, "{index}");
    std::fs::write(bag.join("metadata.yaml"), &index).unwrap();
    let before = listing(&bag);

    let leaves = cat_matches(&bag, "rosbag2", &expected["files"]["split_two"]);
    let plain = cat_matches(
        &root.join("split_two"),
        "rosbag2",
        &expected["files"]["split_two"],
    );
    assert!(
        leaves > 500 && leaves == plain,
        "{leaves} leaves compared, {plain} uncompressed"
    );
    let (code, report) = verify(&bag);
    assert_eq!(code, Some(0), "{report}");
    assert!(
        report.contains("split_two_1.db3.zstd: 17 messages"),
        "{report}"
    );
    let export = tmp.path().join("export");
    bag_stdout(&[
        "export".as_ref(),
        bag.as_os_str(),
        "-o".as_ref(),
        export.as_os_str(),
    ]);
    let info: Value = serde_json::from_slice(&bag_stdout(&[
        "info".as_ref(),
        "--json".as_ref(),
        export.as_os_str(),
    ]))
    .unwrap();
    assert_eq!(info["message_count"], 34, "{info}");
    let out = Command::new(env!("CARGO_BIN_EXE_bag"))
        .args(["reindex".as_ref(), bag.as_os_str()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("compression_mode: file"),
        "{out:?}"
    );
    assert_eq!(listing(&bag), before, "a tool changed the bag");
}

/// Every file of `dir` with its bytes.
fn listing(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// A rosbag2 SQLite bag as Foxy, Galactic and Humble wrote them, without a
/// `message_definitions` table (the oracle's own file with the table dropped): every message
/// and leaf still reads exactly, from the ROS 2 standard definitions built in; a type that is
/// not one of them says so for every message, instead of decoding to nothing.
#[test]
fn a_sqlite_bag_without_definitions_reads_from_the_standard_types_built_in() {
    let Some(root) = common::oracle_dir("rosbag2-sqlite3") else {
        return;
    };
    let expected = expected(&root);
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("imu_joint_string");
    copy_dir(&root.join("imu_joint_string"), &bag);
    let db = bag.join("imu_joint_string.db3");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("DROP TABLE message_definitions;")
        .unwrap();
    let leaves = cat_matches(&bag, "rosbag2", &expected["files"]["imu_joint_string"]);
    assert!(leaves > 1000, "{leaves} leaves compared");
    let info = String::from_utf8(bag_stdout(&["info".as_ref(), bag.as_os_str()])).unwrap();
    assert!(
        info.contains(
            "note: the recording holds no complete definition of sensor_msgs/msg/Imu, \
             sensor_msgs/msg/JointState, std_msgs/msg/String: decoded with the ROS 2 Humble \
             standard definitions built in"
        ),
        "{info}"
    );

    // Exported, the bag carries the definitions, so that other tools can read it.
    let export = tmp.path().join("export");
    let out = Command::new(env!("CARGO_BIN_EXE_bag"))
        .args([
            "export".as_ref(),
            bag.as_os_str(),
            "--out".as_ref(),
            export.as_os_str(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("holds no definition of") && stderr.contains("sensor_msgs/msg/Imu"),
        "{stderr}"
    );
    let mut schemas = 0;
    for entry in std::fs::read_dir(&export).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "mcap") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
        for channel in summary.channels.values() {
            let schema = channel.schema.as_ref().unwrap();
            let text = std::str::from_utf8(&schema.data).unwrap();
            assert_eq!(schema.encoding, "ros2msg");
            assert_eq!(
                Some(text),
                decode::standard_definition(&schema.name).as_deref(),
                "{}",
                schema.name
            );
            schemas += 1;
        }
    }
    assert_eq!(schemas, 3, "the export's channels");
    let leaves = cat_matches(&export, "bag", &expected["files"]["imu_joint_string"]);
    assert!(leaves > 1000, "{leaves} leaves compared in the export");

    // A type no standard package defines, named and not defined.
    conn.execute_batch(
        "UPDATE topics SET type = 'my_robot_msgs/msg/MotorState' WHERE name = '/imu';",
    )
    .unwrap();
    drop(conn);
    let out = String::from_utf8(bag_stdout(&[
        "cat".as_ref(),
        "--json".as_ref(),
        "--no-data".as_ref(),
        bag.as_os_str(),
    ]))
    .unwrap();
    let imu: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|m| m["topic"] == "/imu")
        .collect();
    assert!(!imu.is_empty());
    let info = String::from_utf8(bag_stdout(&["info".as_ref(), bag.as_os_str()])).unwrap();
    assert!(
        info.contains(
            "note: the recording holds no definition of my_robot_msgs/msg/MotorState, and none \
             is built in"
        ),
        "{info}"
    );
    for m in &imu {
        let error = m["decode_error"].as_str().unwrap_or_else(|| panic!("{m}"));
        assert!(
            error.contains("MotorState") && error.contains("holds no definition of this type"),
            "{error}"
        );
        assert!(m.get("fields").is_none(), "{m}");
    }
}

fn expected(root: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root.join("expected.json")).unwrap()).unwrap()
}

/// Checks `bag info --json`'s kind and that `bag cat --json` of `path` gives every message of
/// `file` (an `expected.json` entry) with every leaf exactly; returns the leaves compared.
fn cat_matches(path: &Path, kind: &str, file: &Value) -> usize {
    let name = path.display();
    let info: Value = serde_json::from_slice(&bag_stdout(&[
        "info".as_ref(),
        "--json".as_ref(),
        path.as_os_str(),
    ]))
    .unwrap();
    assert_eq!(info["kind"], kind, "{name}");
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
    let mut leaves = 0;
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
    leaves
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
fn export_keeps_every_message_byte_for_byte_in_its_own_encoding() {
    let tmp = tempfile::tempdir().unwrap();
    for (oracle, name, encoding, schema_encoding) in [
        ("ros1", "ros1_bz2.bag", "ros1", "ros1msg"),
        ("ros1", "ros1_uncompressed.bag", "ros1", "ros1msg"),
        ("rosbag2-sqlite3", "imu_joint_string", "cdr", "ros2msg"),
        ("rosbag2-sqlite3", "split_two", "cdr", "ros2msg"),
    ] {
        let Some(root) = common::oracle_dir(oracle) else {
            return;
        };
        let source = root.join(name);
        let out = tmp.path().join(name.replace('.', "_"));
        bag_stdout(&[
            "export".as_ref(),
            source.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        // Every message, its times, sequence and bytes (`data_b64`), in the same order.
        let cat = |path: &Path| bag_stdout(&["cat".as_ref(), "--json".as_ref(), path.as_os_str()]);
        let (before, after) = (cat(&source), cat(&out));
        assert!(before.len() > 1000, "{name}");
        assert!(before == after, "{name}: bag cat differs after export");
        // Channels keep their encodings and metadata (ROS 1's md5sum, rosbag2's QoS and type
        // hash); the export verifies clean.
        let channels = |path: &Path| -> Value {
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
            assert_eq!(channel["message_encoding"], encoding, "{name}: {channel}");
            assert_eq!(
                channel["schema_encoding"], schema_encoding,
                "{name}: {channel}"
            );
            let key = if encoding == "ros1" {
                "md5sum"
            } else {
                "topic_type_hash"
            };
            assert!(channel["metadata"][key].is_string(), "{name}: {channel}");
        }
        bag_stdout(&["verify".as_ref(), out.as_os_str()]);
    }
}

#[test]
fn csv_export_of_chosen_fields_holds_every_value_exactly() {
    let Some(root) = common::oracle_dir("rosbag2-sqlite3") else {
        return;
    };
    let expected = expected(&root);
    let file = &expected["files"]["split_two"];
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("fields.csv");
    let fields = [
        ("/imu", "linear_acceleration.x"),
        ("/imu", "header.stamp"),
        ("/joint_states", "position[0]"),
    ];
    let list: Vec<String> = fields.iter().map(|(t, f)| format!("{t}/{f}")).collect();
    bag_stdout(&[
        "export".as_ref(),
        root.join("split_two").as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
        "--format".as_ref(),
        "csv".as_ref(),
        "--fill".as_ref(),
        "empty".as_ref(),
        "--fields".as_ref(),
        list.join(",").as_ref(),
    ]);
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(format!("time_ns,time_s,{}", list.join(",")).as_str())
    );
    let by_key: BTreeMap<(String, u64), &Value> = file["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let key = (
                m["topic"].as_str().unwrap().to_owned(),
                m["log_time"].as_u64().unwrap(),
            );
            (key, m)
        })
        .collect();
    let (mut rows, mut values) = (0, 0);
    for line in lines {
        rows += 1;
        let cells: Vec<&str> = line.split(',').collect();
        let t: u64 = cells[0].parse().unwrap();
        for ((topic, field), cell) in fields.iter().zip(&cells[2..]) {
            let Some(m) = by_key.get(&(topic.to_string(), t)) else {
                assert!(cell.is_empty(), "{line}: {topic} has no message at {t}");
                continue;
            };
            let want = &m["fields"][*field];
            // Read back as `bag cat --json` numbers are, so both sides parse alike.
            let got = serde_json::from_str::<Value>(cell)
                .unwrap_or_else(|_| Value::String((*cell).to_owned()));
            let same = same(want, &got);
            assert!(same, "{line}: {topic}/{field} expected {want}, got {cell}");
            values += 1;
        }
    }
    // One row per message of the two topics (no two share a time), every value as written.
    let per_topic = &file["per_topic"];
    let messages =
        per_topic["/imu"].as_u64().unwrap() + per_topic["/joint_states"].as_u64().unwrap();
    assert_eq!(rows, messages);
    assert_eq!(
        values,
        2 * per_topic["/imu"].as_u64().unwrap() + per_topic["/joint_states"].as_u64().unwrap()
    );
}

/// `bag verify PATH`: (exit code, stdout).
fn verify(path: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bag"))
        .arg("verify")
        .arg(path)
        .output()
        .expect("run bag");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Copies directory `from` to `to`, writable.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        std::fs::write(&target, std::fs::read(entry.path()).unwrap()).unwrap();
    }
}

/// Byte offsets of the top-level chunk records (op 0x05) of a ROS 1 bag, and where each one's
/// data starts.
fn ros1_chunks(bytes: &[u8]) -> Vec<(usize, usize)> {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let mut chunks = Vec::new();
    let mut at = 13;
    while at < bytes.len() {
        let header_len = u32_at(at);
        let header = &bytes[at + 4..at + 4 + header_len];
        let data_at = at + 8 + header_len;
        if header.windows(4).any(|w| w == b"op=\x05") {
            chunks.push((at, data_at));
        }
        at = data_at + u32_at(at + 4 + header_len);
    }
    chunks
}

#[test]
fn verify_checks_a_ros1_bags_index_against_its_chunks() {
    let Some(root) = common::oracle_dir("ros1") else {
        return;
    };
    for name in ["ros1_uncompressed.bag", "ros1_bz2.bag"] {
        let (code, stdout) = verify(&root.join(name));
        assert_eq!(code, Some(0), "{name}: {stdout}");
        assert!(
            stdout.starts_with("checked: a ROS 1 bag: its index section"),
            "{stdout}"
        );
        assert!(stdout.contains(": valid"), "{stdout}");
    }
    let bytes = std::fs::read(root.join("ros1_uncompressed.bag")).unwrap();
    let chunks = ros1_chunks(&bytes);
    assert_eq!(chunks.len(), 7);
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("damaged.bag");

    // The third chunk's first record claims more than the chunk holds: that chunk is lost,
    // with the 17 messages its chunk info lists, and only it.
    let (chunk_at, data_at) = chunks[2];
    let mut damaged = bytes.clone();
    damaged[data_at..data_at + 4].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    std::fs::write(&path, &damaged).unwrap();
    let (code, stdout) = verify(&path);
    assert_eq!(code, Some(3), "{stdout}");
    assert!(
        stdout.contains(&format!("damaged.bag:{chunk_at}: error: Chunk:")),
        "{stdout}"
    );
    assert!(stdout.contains("17 messages lost"), "{stdout}");
    assert!(
        stdout.contains("damaged.bag: 76 messages, 7 chunks, 1 errors"),
        "{stdout}"
    );

    // The bag header says the index is elsewhere: no index describes the file; the chunks are
    // scanned and all 93 messages found.
    let mut unindexed = bytes.clone();
    let at = unindexed
        .windows(10)
        .position(|w| w == b"index_pos=")
        .unwrap()
        + 10;
    unindexed[at..at + 8].copy_from_slice(&0u64.to_le_bytes());
    std::fs::write(&path, &unindexed).unwrap();
    let (code, stdout) = verify(&path);
    assert_eq!(code, Some(3), "{stdout}");
    assert!(
        stdout.contains("error: BagHeader: expected an index section"),
        "{stdout}"
    );
    assert!(stdout.contains("damaged.bag: 93 messages"), "{stdout}");
}

#[test]
fn verify_checks_a_sqlite_rosbag2s_files_and_its_metadata_against_them() {
    let Some(root) = common::oracle_dir("rosbag2-sqlite3") else {
        return;
    };
    for name in ["split_two", "imu_joint_string"] {
        let (code, stdout) = verify(&root.join(name));
        assert_eq!(code, Some(0), "{name}: {stdout}");
        assert!(
            stdout.starts_with("checked: a rosbag2 SQLite bag"),
            "{stdout}"
        );
    }
    let tmp = tempfile::tempdir().unwrap();

    // A file metadata.yaml lists is gone.
    let missing = tmp.path().join("missing");
    copy_dir(&root.join("split_two"), &missing);
    std::fs::remove_file(missing.join("split_two_1.db3")).unwrap();
    let (code, stdout) = verify(&missing);
    assert_eq!(code, Some(3), "{stdout}");
    assert!(
        stdout.contains("expected part split_two_1.db3 on disk, found no such file"),
        "{stdout}"
    );
    assert!(
        stdout.contains("expected 34 messages in all parts, found 17"),
        "{stdout}"
    );

    // A b-tree page of the second file is corrupt: SQLite's check says so, and its messages
    // are missing against metadata.yaml.
    let corrupt = tmp.path().join("corrupt");
    copy_dir(&root.join("split_two"), &corrupt);
    let file = corrupt.join("split_two_1.db3");
    let mut bytes = std::fs::read(&file).unwrap();
    let page = 4096 * 7;
    bytes[page..page + 8].copy_from_slice(&[0x0d, 0xff, 0xff, 0x00, 0x50, 0xff, 0xff, 0x00]);
    std::fs::write(&file, bytes).unwrap();
    let (code, stdout) = verify(&corrupt);
    assert_eq!(code, Some(3), "{stdout}");
    assert!(
        stdout.contains(
            "split_two_1.db3:0: error: file: expected a SQLite database whose pages check out"
        ),
        "{stdout}"
    );
}
