//! Small recordings and special files for the tests that feed `bag` hostile input, shared by
//! the `bag` tool's tests (through `common.rs`) and the app's (through `hostile_inputs.rs`).
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use bag::{BagWriter, ChannelSpec, Compression, WriteOptions};

/// Log time of the first message of [`small_bag`].
pub const T0_NS: u64 = 1_764_676_800_000_000_000;

/// A bag of `parts` parts, each of 10 JSON messages 0.1 s apart on `car/speed`, the recorder's
/// drop count set to `dropped`.
pub fn small_bag(dir: &Path, parts: u64, dropped: u64) {
    let options = WriteOptions::new()
        .compression(Compression::Zstd)
        .part_max_duration_ns(Some(1_000_000_000));
    let mut w = BagWriter::create(dir, options).expect("create bag");
    let ch = w.add_channel(ChannelSpec {
        topic: "car/speed".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: Default::default(),
    });
    for i in 0..parts * 10 {
        let t = T0_NS + i * 100_000_000;
        let payload = format!("{{\"kph\": {i}}}");
        w.write(ch, t, Some(t), payload.as_bytes()).expect("write");
    }
    w.add_dropped(dropped);
    w.close().expect("close");
}

/// A rosbag2 directory with SQLite storage as rosbag2 writes it (schema version 4 tables,
/// `metadata.yaml` version 5): `parts` files `rosbag2_<i>.db3`, each of 10 CDR
/// `std_msgs/msg/Int32` messages 0.1 s apart on `/count` (`data` = the message's number).
pub fn small_db3_bag(dir: &Path, parts: u64) {
    std::fs::create_dir_all(dir).expect("create dir");
    let mut files = String::new();
    for part in 0..parts {
        let name = format!("rosbag2_{part}.db3");
        files.push_str(&format!("  - {name}\n"));
        let conn = rusqlite::Connection::open(dir.join(&name)).expect("create db3");
        conn.execute_batch(bag::sqlite_part::ROSBAG2_TABLES)
            .expect("tables");
        conn.execute_batch(
            "INSERT INTO schema VALUES (4, 'jazzy');
             INSERT INTO topics VALUES (1, '/count', 'std_msgs/msg/Int32', 'cdr', '', '');
             INSERT INTO message_definitions VALUES (1, 'std_msgs/msg/Int32', 'ros2msg',
               'int32 data', '');",
        )
        .expect("create tables");
        for i in part * 10..(part + 1) * 10 {
            let mut cdr = vec![0u8, 1, 0, 0];
            cdr.extend((i as i32).to_le_bytes());
            let t = (T0_NS + i * 100_000_000) as i64;
            conn.execute(
                "INSERT INTO messages (topic_id, timestamp, data) VALUES (1, ?1, ?2)",
                rusqlite::params![t, cdr],
            )
            .expect("insert");
        }
    }
    let yaml = format!(
        "rosbag2_bagfile_information:\n  version: 5\n  storage_identifier: sqlite3\n  \
         relative_file_paths:\n{files}  message_count: {}\n  topics_with_message_count:\n  \
         - message_count: {}\n    topic_metadata:\n      name: /count\n      type: \
         std_msgs/msg/Int32\n      serialization_format: cdr\n      offered_qos_profiles: ''\n",
        parts * 10,
        parts * 10
    );
    std::fs::write(dir.join("metadata.yaml"), yaml).expect("write metadata.yaml");
}

/// Makes a FIFO at `path`.
pub fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo {path:?}");
}

/// The parts of a bag directory, sorted by name.
pub fn part_paths(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut parts: Vec<_> = std::fs::read_dir(dir)
        .expect("list bag")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "mcap"))
        .collect();
    parts.sort();
    parts
}
