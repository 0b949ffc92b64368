//! Issue 24 items 6 and 7: the writer never writes what its reader refuses, and a flood of
//! topics does not end a recording.

use bag::format::MAX_RECORD_BYTES;
use bag::{BagReader, BagWriter, ChannelSpec, Compression, ReadFilter, WriteOptions};

fn json_channel(topic: &str) -> ChannelSpec {
    ChannelSpec {
        topic: topic.into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: Default::default(),
    }
}

// Item 6: a 4 MiB message then one just under the reader's limit go into separate chunks; one
// over the limit is refused and counted as dropped with the reason.
#[test]
fn no_chunk_is_larger_than_the_reader_takes_and_oversized_messages_are_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("big");
    let mut w =
        BagWriter::create(&dir, WriteOptions::new().compression(Compression::None)).unwrap();
    let ch = w.add_channel(json_channel("camera"));
    let small = vec![1u8; (4 << 20) - 1024]; // leaves the chunk open
    let large = vec![2u8; MAX_RECORD_BYTES - (2 << 20)];
    w.write(ch, 1, Some(1), &small).unwrap();
    w.write(ch, 2, Some(2), &large).unwrap();
    drop(large);
    let huge = vec![3u8; MAX_RECORD_BYTES + 1];
    let refused = w.write(ch, 3, Some(3), &huge);
    assert!(
        matches!(refused, Err(bag::BagError::MessageTooLarge { .. })),
        "{refused:?}"
    );
    drop(huge);
    w.write(ch, 4, Some(4), b"{}").unwrap();
    let summary = w.close().unwrap();
    assert_eq!(summary.message_count, 3);
    assert_eq!(summary.dropped_messages, 1);

    let reader = BagReader::open(&dir).unwrap();
    let mut cursor = reader.messages(&ReadFilter::all()).unwrap();
    let mut sizes = Vec::new();
    while let Some(m) = cursor.next_message() {
        sizes.push(m.data.len());
    }
    assert!(cursor.issues().is_empty(), "{:?}", cursor.issues());
    assert_eq!(sizes, [(4 << 20) - 1024, MAX_RECORD_BYTES - (2 << 20), 2]);
    assert_eq!(reader.dropped_messages(), Some(1));
    let reasons = &reader
        .metadata()
        .unwrap()
        .redline
        .as_ref()
        .unwrap()
        .dropped_by_reason;
    assert_eq!(reasons.values().sum::<u64>(), 1);
    assert!(
        reasons.keys().all(|r| r.contains("larger than a chunk")),
        "{reasons:?}"
    );
}

// Item 7: more channels than one MCAP part can number roll to a new part instead of ending the
// recording.
#[test]
fn more_than_65536_topics_roll_to_a_new_part() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("flood");
    let mut w =
        BagWriter::create(&dir, WriteOptions::new().compression(Compression::None)).unwrap();
    let n = 65_536 + 10;
    for i in 0..n as u64 {
        let ch = w.add_channel(json_channel(&format!("peer/key/{i}")));
        w.write(ch, i, Some(i), b"{}").unwrap();
    }
    let summary = w.close().unwrap();
    assert_eq!(summary.parts.len(), 2, "{:?}", summary.parts);
    assert_eq!(summary.message_count, n as u64);
    let reader = BagReader::open(&dir).unwrap();
    assert_eq!(reader.message_count(), n as u64);
    assert!(
        reader
            .parts()
            .iter()
            .all(|p| p.status == bag::PartStatus::Complete)
    );
}
