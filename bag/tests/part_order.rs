//! A bag directory without `metadata.yaml` is put in order by one rule, the number its part names
//! end with, for the reader and for `bag verify` alike.

use std::path::Path;

use bag::{BagReader, BagWriter, ChannelSpec, WriteOptions};

/// Writes a one-message part into `dir` under `name`.
fn write_part(dir: &Path, name: &str, log_time_ns: u64) {
    let scratch = tempfile::tempdir().expect("tempdir");
    let bag_dir = scratch.path().join("scratch");
    let mut writer = BagWriter::create(&bag_dir, WriteOptions::new()).expect("create");
    let channel = writer.add_channel(ChannelSpec {
        topic: "car/engine/rpm".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: Default::default(),
    });
    writer
        .write(channel, log_time_ns, None, br#"{"rpm": 800}"#)
        .expect("write");
    writer.close().expect("close");
    std::fs::copy(bag_dir.join("scratch_0.mcap"), dir.join(name)).expect("copy");
}

#[test]
fn parts_without_an_index_are_ordered_by_their_trailing_number_for_reader_and_verify() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Written out of order, and named so that neither the directory listing nor a plain string
    // sort gives the numeric order.
    for (name, t) in [
        ("run10.mcap", 10),
        ("run2.mcap", 2),
        ("run1.mcap", 1),
        ("drive_10.mcap", 110),
        ("drive_9.mcap", 109),
    ] {
        write_part(dir.path(), name, t);
    }
    let expected = [
        "drive_9.mcap",
        "drive_10.mcap",
        "run1.mcap",
        "run2.mcap",
        "run10.mcap",
    ];

    let reader = BagReader::open(dir.path()).expect("open");
    let read: Vec<&str> = reader.parts().iter().map(|p| p.name.as_str()).collect();
    assert_eq!(read, expected, "reader");

    let report = bag::verify::verify_path(dir.path()).expect("verify");
    let verified: Vec<&str> = report.parts.iter().map(|p| p.part.as_str()).collect();
    assert_eq!(verified, expected, "verify");
}
