//! Issue 22: rosbag2 bags written with `compression_mode: file` (`ros2 bag record
//! --compression-mode file`: each file compressed whole, `NAME.db3.zstd`) read like any other,
//! from a copy decompressed into the temporary directory, and `bag verify` checks what they
//! hold. A file that does not decompress is said to be so, and the rest of the bag still reads.

use std::io::Write;
use std::path::{Path, PathBuf};

use bag::{BagReader, BagWriter, ChannelSpec, PartStatus, ReadFilter, WriteOptions};

const MESSAGES: i64 = 50;
const T0_NS: i64 = 1_700_000_000_000_000_000;

/// Message `i`'s CDR payload: a std_msgs/msg/Float64 of `i / 4`.
fn payload(i: i64) -> Vec<u8> {
    let mut p = vec![0u8, 1, 0, 0];
    p.extend((i as f64 / 4.0).to_le_bytes());
    p
}

/// A rosbag2 SQLite file of [`MESSAGES`] messages on `/speed`, as rosbag2 (Iron and later)
/// writes it.
fn write_db3(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(bag::sqlite_part::ROSBAG2_TABLES)
        .unwrap();
    conn.execute_batch(
        "INSERT INTO schema VALUES (4, 'jazzy');
         INSERT INTO topics VALUES (1, '/speed', 'std_msgs/msg/Float64', 'cdr', '', '');
         INSERT INTO message_definitions
           VALUES (1, 'std_msgs/msg/Float64', 'ros2msg', 'float64 data', '');",
    )
    .unwrap();
    for i in 0..MESSAGES {
        conn.execute(
            "INSERT INTO messages (topic_id, timestamp, data) VALUES (1, ?1, ?2)",
            rusqlite::params![T0_NS + i * 10_000_000, payload(i)],
        )
        .unwrap();
    }
}

fn compress(format: &str, data: &[u8]) -> Vec<u8> {
    match format {
        "lz4" => {
            let mut w = lz4_flex::frame::FrameEncoder::new(Vec::new());
            w.write_all(data).unwrap();
            w.finish().unwrap()
        }
        _ => zstd::encode_all(data, 3).unwrap(),
    }
}

/// A rosbag2 directory whose one file is stored compressed whole with `format`, as rosbag2
/// writes it: `NAME.db3.FORMAT` listed in `metadata.yaml`, the uncompressed file gone.
fn compressed_bag(root: &Path, format: &str) -> (PathBuf, String) {
    let dir = root.join(format!("bag_{format}"));
    std::fs::create_dir(&dir).unwrap();
    let plain = dir.join("bag_0.db3");
    write_db3(&plain);
    let name = format!("bag_0.db3.{format}");
    std::fs::write(
        dir.join(&name),
        compress(format, &std::fs::read(&plain).unwrap()),
    )
    .unwrap();
    std::fs::remove_file(&plain).unwrap();
    let end = T0_NS + (MESSAGES - 1) * 10_000_000;
    std::fs::write(
        dir.join("metadata.yaml"),
        format!(
            "rosbag2_bagfile_information:\n  version: 8\n  storage_identifier: sqlite3\n  \
             duration:\n    nanoseconds: {}\n  starting_time:\n    \
             nanoseconds_since_epoch: {T0_NS}\n  message_count: {MESSAGES}\n  \
             topics_with_message_count:\n    - topic_metadata:\n        name: /speed\n        \
             type: std_msgs/msg/Float64\n        serialization_format: cdr\n        \
             offered_qos_profiles: ''\n      message_count: {MESSAGES}\n  \
             compression_format: {format}\n  compression_mode: FILE\n  \
             relative_file_paths:\n    - {name}\n  files:\n    - path: {name}\n      \
             starting_time:\n        nanoseconds_since_epoch: {T0_NS}\n      duration:\n        \
             nanoseconds: {}\n      message_count: {MESSAGES}\n",
            end - T0_NS,
            end - T0_NS,
        ),
    )
    .unwrap();
    (dir, name)
}

/// Every message of `reader`: (log time, payload).
fn all_messages(reader: &BagReader) -> Vec<(u64, Vec<u8>)> {
    let mut cursor = reader.messages(&ReadFilter::all()).unwrap();
    let mut out = Vec::new();
    while let Some(m) = cursor.next_message() {
        out.push((m.log_time_ns, m.data.to_vec()));
    }
    assert!(cursor.issues().is_empty(), "{:?}", cursor.issues());
    out
}

fn expected() -> Vec<(u64, Vec<u8>)> {
    (0..MESSAGES)
        .map(|i| ((T0_NS + i * 10_000_000) as u64, payload(i)))
        .collect()
}

/// Decompressed copies in the temporary directory.
fn copies() -> usize {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("redline-decompressed-")
        })
        .count()
}

/// One test, so that no other test of this file makes or removes copies while the count of
/// copies left behind is taken.
#[test]
fn a_bag_compressed_file_by_file_reads_and_verifies_and_leaves_no_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let mut before = None;
    for format in ["zstd", "lz4"] {
        let (dir, name) = compressed_bag(tmp.path(), format);
        // Counted after one open, which removes what killed processes left behind.
        drop(BagReader::open(&dir).unwrap());
        let before = *before.get_or_insert_with(copies);
        let stored = std::fs::metadata(dir.join(&name)).unwrap().len();
        {
            let reader = BagReader::open(&dir).unwrap();
            let [part] = reader.parts() else {
                panic!("{format}: {:?}", reader.parts());
            };
            assert_eq!(part.name, name);
            assert_eq!(part.path, dir.join(&name), "named by its own path");
            assert_eq!(part.status, PartStatus::Complete, "{format}");
            assert!(part.is_sqlite());
            assert_eq!(part.stored_compressed(), Some((format, stored)));
            assert_eq!(part.message_count, MESSAGES as u64);
            assert_eq!(all_messages(&reader), expected(), "{format}");
            assert!(reader.known_loss().is_empty(), "{:?}", reader.known_loss());
            assert_eq!(copies(), before + 1, "{format}: one copy while it is open");
        }
        assert_eq!(copies(), before, "{format}: the copy outlived the reader");

        // verify checks what the file holds, against metadata.yaml.
        let report = bag::verify::verify_path(&dir).unwrap();
        assert!(
            report.is_valid(),
            "{format}: {:?}",
            report.findings().collect::<Vec<_>>()
        );
        let [checked] = report.parts.as_slice() else {
            panic!("{format}: {:?}", report.parts);
        };
        assert_eq!(checked.part, name);
        assert_eq!(checked.message_count, MESSAGES as u64);
        let alone = bag::verify::verify_path(&dir.join(&name)).unwrap();
        assert!(
            alone.is_valid(),
            "{format}: {:?}",
            alone.findings().collect::<Vec<_>>()
        );
        assert_eq!(alone.parts.len(), 1);

        // metadata.yaml's count is checked against the decompressed file: a wrong one is found.
        let index = std::fs::read_to_string(dir.join("metadata.yaml")).unwrap();
        std::fs::write(
            dir.join("metadata.yaml"),
            index.replace(
                &format!("      message_count: {MESSAGES}\n"),
                "      message_count: 7\n",
            ),
        )
        .unwrap();
        let report = bag::verify::verify_path(&dir).unwrap();
        assert!(!report.is_valid(), "{format}: a wrong count passed");
        std::fs::write(dir.join("metadata.yaml"), index).unwrap();

        // Cut in half, the file does not decompress: the part says so, and verify too.
        let whole = std::fs::read(dir.join(&name)).unwrap();
        std::fs::write(dir.join(&name), &whole[..whole.len() / 2]).unwrap();
        let reader = BagReader::open(&dir).unwrap();
        let PartStatus::Garbage { what } = &reader.parts()[0].status else {
            panic!("{format}: {:?}", reader.parts()[0].status);
        };
        assert!(what.starts_with("cannot be decompressed"), "{what}");
        assert!(all_messages(&reader).is_empty());
        let report = bag::verify::verify_path(&dir).unwrap();
        assert!(!report.is_valid());
        assert!(
            report
                .findings()
                .any(|f| f.part == name && f.found.starts_with("cannot be decompressed")),
            "{:?}",
            report.findings().collect::<Vec<_>>()
        );
        drop(reader);
        assert_eq!(copies(), before, "{format}: a failed copy was left behind");
        std::fs::write(dir.join(&name), &whole).unwrap();

        // The index lists the compressed file and its decompressed twin lies beside it (rosbag2
        // decompresses beside the original to read it; `zstd -d` keeps the original): the twin
        // is not another part, so no message is read or counted twice.
        write_db3(&dir.join("bag_0.db3"));
        {
            let reader = BagReader::open(&dir).unwrap();
            let [part] = reader.parts() else {
                panic!("{format} listed + twin: {:?}", reader.parts());
            };
            assert_eq!(part.name, name);
            assert_eq!(all_messages(&reader), expected(), "{format} listed + twin");
            assert!(
                reader
                    .notes()
                    .iter()
                    .any(|n| n.starts_with("bag_0.db3 is the decompressed copy of the listed part")),
                "{:?}",
                reader.notes()
            );
            let report = bag::verify::verify_path(&dir).unwrap();
            assert!(
                report.is_valid(),
                "{format} listed + twin: {:?}",
                report.findings().collect::<Vec<_>>()
            );
            assert_eq!(report.parts.len(), 1, "{:?}", report.parts);
        }
        std::fs::remove_file(dir.join("bag_0.db3")).unwrap();

        // Without metadata.yaml the compressed file is found on disk, as a `.db3` would be;
        // with its decompressed twin beside it (`zstd -d` keeps the original), only the twin
        // is read, so no message comes twice.
        std::fs::remove_file(dir.join("metadata.yaml")).unwrap();
        // reindex refuses it as it refuses a listed one (an index of MCAP storage over
        // compressed files would mislead rosbag2), and writes nothing.
        let error = bag::reindex::reindex(&dir).unwrap_err();
        assert!(
            matches!(error, bag::BagError::ForeignStorage { .. }),
            "{format}: {error}"
        );
        assert!(
            !dir.join("metadata.yaml").exists(),
            "{format}: an index was written"
        );
        for twin in [false, true] {
            if twin {
                let copy = dir.join("bag_0.db3");
                write_db3(&copy);
            }
            let reader = BagReader::open(&dir).unwrap();
            let [part] = reader.parts() else {
                panic!("{format} twin {twin}: {:?}", reader.parts());
            };
            let want = if twin { "bag_0.db3" } else { name.as_str() };
            assert_eq!(part.name, want);
            assert_eq!(part.status, PartStatus::Complete);
            assert_eq!(all_messages(&reader), expected(), "{format} twin {twin}");
            let report = bag::verify::verify_path(&dir).unwrap();
            let [checked] = report.parts.as_slice() else {
                panic!("{format} twin {twin}: {:?}", report.parts);
            };
            assert_eq!(checked.part, want);
            assert_eq!(checked.message_count, MESSAGES as u64);
        }
    }

    // An MCAP file compressed whole (rosbag2's MCAP storage with `compression_mode: file`),
    // opened alone.
    let plain = tmp.path().join("ours");
    let mut w = BagWriter::create(&plain, WriteOptions::new()).unwrap();
    let ch = w.add_channel(ChannelSpec {
        topic: "/speed".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: Default::default(),
    });
    for i in 0..MESSAGES as u64 {
        w.write(
            ch,
            T0_NS as u64 + i,
            None,
            format!("{{\"v\":{i}}}").as_bytes(),
        )
        .unwrap();
    }
    w.close().unwrap();
    let part = BagReader::open(&plain).unwrap().parts()[0].path.clone();
    let file = tmp.path().join("ours_0.mcap.zstd");
    std::fs::write(&file, compress("zstd", &std::fs::read(&part).unwrap())).unwrap();
    let before = before.unwrap_or_default();
    let reader = BagReader::open(&file).unwrap();
    assert_eq!(reader.parts()[0].status, PartStatus::Complete);
    assert_eq!(all_messages(&reader).len(), MESSAGES as usize);
    let report = bag::verify::verify_path(&file).unwrap();
    assert!(
        report.is_valid(),
        "{:?}",
        report.findings().collect::<Vec<_>>()
    );
    drop(reader);
    assert_eq!(copies(), before, "a copy outlived its reader");

    // In a directory of its own without an index, reindex refuses it (it would write an index
    // of MCAP storage over a compressed file) and changes nothing.
    let alone = tmp.path().join("alone");
    std::fs::create_dir(&alone).unwrap();
    let stored = std::fs::read(&file).unwrap();
    std::fs::write(alone.join("ours_0.mcap.zstd"), &stored).unwrap();
    let error = bag::reindex::reindex(&alone).unwrap_err();
    assert!(
        matches!(error, bag::BagError::ForeignStorage { .. }),
        "{error}"
    );
    assert!(
        !alone.join("metadata.yaml").exists(),
        "an index was written"
    );
    assert_eq!(
        std::fs::read(alone.join("ours_0.mcap.zstd")).unwrap(),
        stored
    );
}
