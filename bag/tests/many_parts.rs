//! Issue 24 item 14: an index listing tens of thousands of parts opens correctly: every listed
//! part is accounted for once, in order, missing ones as missing. (Its speed, linear in the
//! number of parts, is the criterion bench `info/listed_parts/*` in `benches/bag.rs`.)

use bag::{BagReader, BagWriter, ChannelSpec, Metadata, PartStatus, WriteOptions};

#[test]
fn an_index_listing_60000_parts_accounts_for_each_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    let mut w = BagWriter::create(
        &dir,
        WriteOptions::new().part_max_duration_ns(Some(1_000_000_000)),
    )
    .unwrap();
    let ch = w.add_channel(ChannelSpec {
        topic: "a".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: Default::default(),
    });
    for i in 0..20u64 {
        w.write(ch, 1_000_000_000 + i * 100_000_000, None, b"{}")
            .unwrap();
    }
    w.close().unwrap();
    let index = dir.join("metadata.yaml");
    let mut m = Metadata::load(&index).unwrap();
    let paths = &mut m.rosbag2_bagfile_information.relative_file_paths;
    let on_disk = paths.clone();
    assert_eq!(on_disk.len(), 2);
    for i in 0..60_000 {
        paths.push(format!("gone_{i}.mcap"));
    }
    // Listed twice: still one part.
    paths.extend(on_disk.iter().cloned());
    m.store_atomically(&dir).unwrap();
    std::fs::copy(dir.join(&on_disk[0]), dir.join("unlisted.mcap")).unwrap();

    let reader = BagReader::open(&dir).unwrap();
    let parts = reader.parts();
    assert_eq!(parts.len(), 60_003);
    assert_eq!(parts[0].name, on_disk[0]);
    assert_eq!(parts[1].name, on_disk[1]);
    assert_eq!(parts[2].name, "gone_0.mcap");
    assert_eq!(parts[60_001].name, "gone_59999.mcap");
    assert_eq!(parts[60_002].name, "unlisted.mcap");
    assert!(!parts[60_002].listed_in_index);
    let missing = parts
        .iter()
        .filter(|p| p.status == PartStatus::Missing)
        .count();
    assert_eq!(missing, 60_000);
    assert_eq!(reader.message_count(), 30);
    assert_eq!(reader.known_loss().len(), 60_000);
}
