//! `bag verify` on a bag directory also checks `metadata.yaml` against the parts.

use std::path::Path;

use bag::verify::verify_path;
use bag::{BagWriter, ChannelSpec, Compression, WriteOptions};

fn write_bag(dir: &Path) {
    let options = WriteOptions::new()
        .compression(Compression::None)
        .part_max_duration_ns(Some(100));
    let mut w = BagWriter::create(dir, options).unwrap();
    let a = w.add_channel(ChannelSpec::capnp(
        "car/a",
        "EngineRpm",
        "e.capnp:E",
        vec![1, 2],
    ));
    let b = w.add_channel(ChannelSpec::capnp("car/b", "Imu", "i.capnp:I", vec![3]));
    for i in 0..300u64 {
        w.write(if i % 3 == 0 { b } else { a }, i, None, &[i as u8; 16])
            .unwrap();
    }
    w.close().unwrap();
}

fn edit_index(dir: &Path, from: &str, to: &str) {
    let path = dir.join("metadata.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{from:?} not in {text}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn an_index_that_matches_its_parts_is_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ok");
    write_bag(&dir);
    let report = verify_path(&dir).unwrap();
    assert_eq!(report.parts.len(), 3);
    assert!(report.is_valid(), "{:#?}", report.findings);
    assert_eq!(report.findings.len(), 0, "{:#?}", report.findings);
}

#[test]
fn wrong_counts_missing_parts_and_wrong_states_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bad");
    write_bag(&dir);
    edit_index(&dir, "message_count: 300", "message_count: 301");
    edit_index(&dir, "message_count: 200", "message_count: 199");
    std::fs::remove_file(dir.join("bad_2.mcap")).unwrap();
    let report = verify_path(&dir).unwrap();
    let lines: Vec<String> = report.findings.iter().map(ToString::to_string).collect();
    let all = lines.join("\n");
    assert!(
        all.contains(
            "metadata.yaml:0: error: relative_file_paths: expected part bad_2.mcap on disk"
        ),
        "{all}"
    );
    assert!(
        all.contains("topics_with_message_count: expected car/a: 199 messages, found 133"),
        "{all}"
    );
    assert!(!report.is_valid());

    // A part the index calls complete that does not end cleanly.
    let dir2 = tmp.path().join("torn");
    write_bag(&dir2);
    let part = dir2.join("torn_0.mcap");
    let bytes = std::fs::read(&part).unwrap();
    std::fs::write(&part, &bytes[..bytes.len() - 40]).unwrap();
    let report = verify_path(&dir2).unwrap();
    let all: Vec<String> = report.findings.iter().map(ToString::to_string).collect();
    assert!(
        all.iter()
            .any(|l| l.contains("files.state") && l.contains("torn_0.mcap complete")),
        "{all:#?}"
    );
}

#[test]
fn an_unparseable_index_is_a_finding() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("yaml");
    write_bag(&dir);
    std::fs::write(
        dir.join("metadata.yaml"),
        "rosbag2_bagfile_information: [not, a, map",
    )
    .unwrap();
    let report = verify_path(&dir).unwrap();
    assert!(
        report.findings.iter().any(|f| f.record == "index"),
        "{:#?}",
        report.findings
    );
    assert!(!report.is_valid());
}
