//! Round trip, rolling, merged order, seeking, damaged parts and the index.

use std::collections::BTreeMap;
use std::path::Path;

use bag::{
    BagReader, BagWriter, ChannelSpec, Compression, PartStatus, ReadFilter, SchemaSpec,
    WriteOptions,
};

fn channel(topic: &str, schema_data: &[u8]) -> ChannelSpec {
    let mut metadata = BTreeMap::new();
    metadata.insert("redline/schema".to_string(), "EngineRpm".to_string());
    metadata.insert("note".to_string(), topic.to_uppercase());
    ChannelSpec {
        topic: topic.into(),
        message_encoding: "capnproto".into(),
        schema: Some(SchemaSpec {
            name: "engine_rpm.capnp:EngineRpm".into(),
            encoding: "capnproto".into(),
            data: schema_data.to_vec(),
        }),
        metadata,
    }
}

fn payload(i: u64) -> Vec<u8> {
    let len = (i % 97) as usize;
    (0..len).map(|k| (i as usize * 31 + k) as u8).collect()
}

fn read_all(path: &Path) -> (BagReader, Vec<bag::Message>) {
    let reader = BagReader::open(path).expect("opens");
    let messages: Vec<bag::Message> = reader
        .messages(&ReadFilter::all())
        .expect("reads")
        .collect();
    (reader, messages)
}

#[test]
fn round_trip_keeps_bytes_times_sequence_and_schema() {
    for compression in [Compression::Zstd, Compression::Lz4, Compression::None] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("drive");
        let schema_bytes: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
        let mut w = BagWriter::create(&path, WriteOptions::new().compression(compression)).unwrap();
        let a = w.add_channel(channel("car/a", &schema_bytes));
        let b = w.add_channel(channel("car/b", b"other schema"));
        for i in 0..1000u64 {
            let ch = if i.is_multiple_of(3) { b } else { a };
            let publish = if i.is_multiple_of(10) {
                None
            } else {
                Some(i * 1000 - 7)
            };
            w.write(ch, 1_000_000 + i * 1000, publish, &payload(i))
                .unwrap();
        }
        let summary = w.close().unwrap();
        assert_eq!(summary.message_count, 1000);
        assert_eq!(summary.unstamped_messages, 100);

        let (reader, messages) = read_all(&path);
        assert_eq!(messages.len(), 1000);
        let mut seq = [0u32; 2];
        for (i, m) in messages.iter().enumerate() {
            let i = i as u64;
            assert_eq!(m.log_time_ns, 1_000_000 + i * 1000);
            let expected_publish = if i.is_multiple_of(10) {
                m.log_time_ns
            } else {
                i * 1000 - 7
            };
            assert_eq!(m.publish_time_ns, expected_publish);
            assert_eq!(m.data, payload(i));
            let spec = &reader.channels()[m.channel].spec;
            let k = usize::from(spec.topic == "car/b");
            seq[k] += 1;
            assert_eq!(m.sequence, seq[k], "per-channel sequence from 1");
        }
        let a_spec = reader
            .channels()
            .iter()
            .find(|c| c.spec.topic == "car/a")
            .unwrap();
        assert_eq!(a_spec.spec, channel("car/a", &schema_bytes));
        assert_eq!(a_spec.message_count, Some(666));
        let meta = reader.metadata().expect("index");
        assert_eq!(meta.rosbag2_bagfile_information.message_count, 1000);
        assert_eq!(reader.unstamped_messages(), Some(100));
        assert_eq!(
            reader.parts()[0]
                .compression
                .iter()
                .next()
                .map(String::as_str),
            Some(compression.mcap_name())
        );
    }
}

#[test]
fn rolling_splits_parts_and_reads_back_merged_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("roll");
    let options = WriteOptions::new()
        .chunk_size_bytes(8 * 1024)
        .part_max_bytes(Some(32 * 1024))
        .compression(Compression::None);
    let mut w = BagWriter::create(&path, options).unwrap();
    let a = w.add_channel(channel("a", b"s"));
    let b = w.add_channel(channel("b", b"s"));
    for i in 0..5000u64 {
        w.write(
            if i.is_multiple_of(2) { a } else { b },
            i * 10,
            Some(i),
            &payload(i),
        )
        .unwrap();
    }
    let summary = w.close().unwrap();
    assert!(summary.parts.len() >= 4, "{} parts", summary.parts.len());
    for (k, part) in summary.parts.iter().enumerate() {
        assert_eq!(part.path, format!("roll_{k}.mcap"));
        assert!(path.join(&part.path).exists());
    }
    let (reader, messages) = read_all(&path);
    assert!(
        reader
            .parts()
            .iter()
            .all(|p| p.status == PartStatus::Complete)
    );
    assert_eq!(messages.len(), 5000);
    assert!(
        messages
            .windows(2)
            .all(|w| w[0].log_time_ns <= w[1].log_time_ns)
    );
    assert!(
        messages
            .iter()
            .enumerate()
            .all(|(i, m)| m.data == payload(i as u64))
    );
    let meta = reader.metadata().unwrap();
    assert_eq!(
        meta.rosbag2_bagfile_information.files.len(),
        summary.parts.len()
    );
    assert_eq!(
        meta.rosbag2_bagfile_information
            .files
            .iter()
            .map(|f| f.message_count)
            .sum::<u64>(),
        5000
    );
}

#[test]
fn rolling_by_duration() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dur");
    let mut w =
        BagWriter::create(&path, WriteOptions::new().part_max_duration_ns(Some(1_000))).unwrap();
    let a = w.add_channel(channel("a", b"s"));
    for i in 0..50u64 {
        w.write(a, i * 100, Some(i * 100), b"x").unwrap();
    }
    let summary = w.close().unwrap();
    assert_eq!(summary.parts.len(), 5);
    assert!(summary.parts.iter().all(|p| p.message_count == 10));
}

#[test]
fn filters_by_topic_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let mut w = BagWriter::create(&path, WriteOptions::new().chunk_size_bytes(1024)).unwrap();
    let a = w.add_channel(channel("a", b"s"));
    let b = w.add_channel(channel("b", b"s"));
    for i in 0..1000u64 {
        w.write(
            if i.is_multiple_of(2) { a } else { b },
            i,
            None,
            &payload(i),
        )
        .unwrap();
    }
    w.close().unwrap();
    let reader = BagReader::open(&path).unwrap();
    let got: Vec<_> = reader
        .messages(&ReadFilter::all().topics(["b"]).start_ns(100).end_ns(200))
        .unwrap()
        .collect();
    assert_eq!(got.len(), 50);
    assert!(
        got.iter()
            .all(|m| !m.log_time_ns.is_multiple_of(2) && (100..200).contains(&m.log_time_ns))
    );
}

/// Overwrites the compressed bytes of every chunk that ends before `before_ns`.
fn corrupt_chunks_before(part: &Path, before_ns: u64) -> usize {
    let bytes = std::fs::read(part).unwrap();
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    let mut bytes = bytes;
    let mut corrupted = 0;
    for index in &summary.chunk_indexes {
        if index.message_end_time < before_ns {
            let start = index.compressed_data_offset().unwrap() as usize;
            for b in &mut bytes[start..start + index.compressed_size as usize] {
                *b = 0xAA;
            }
            corrupted += 1;
        }
    }
    std::fs::write(part, bytes).unwrap();
    corrupted
}

#[test]
fn seeking_skips_earlier_chunks_without_decompressing_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seek");
    let mut w = BagWriter::create(&path, WriteOptions::new().chunk_size_bytes(4096)).unwrap();
    let a = w.add_channel(channel("a", b"s"));
    for i in 0..20_000u64 {
        w.write(a, i * 1_000, None, &payload(i)).unwrap();
    }
    w.close().unwrap();
    let start = 15_000 * 1_000;
    // Chunks before the start are destroyed: if the reader touched one, it would fail.
    let corrupted = corrupt_chunks_before(&path.join("seek_0.mcap"), start);
    assert!(corrupted > 10, "{corrupted} chunks corrupted");
    let reader = BagReader::open(&path).unwrap();
    let mut cursor = reader.messages(&ReadFilter::all().start_ns(start)).unwrap();
    let mut n = 0u64;
    while let Some(m) = cursor.next_message() {
        assert_eq!(m.log_time_ns, start + n * 1_000);
        assert_eq!(m.data, payload(15_000 + n).as_slice());
        n += 1;
    }
    assert!(cursor.issues().is_empty(), "{:?}", cursor.issues());
    assert_eq!(n, 5_000);
    // Reading from the beginning does hit the damage, and says so instead of going quiet:
    // one issue per destroyed chunk, each costing only its own messages (issue 21), so the
    // intact chunks after them all read.
    let mut all = reader.messages(&ReadFilter::all()).unwrap();
    let mut read = 0u64;
    while all.next_message().is_some() {
        read += 1;
    }
    assert_eq!(all.issues().len(), corrupted, "{:?}", all.issues());
    let lost: u64 = all
        .issues()
        .iter()
        .map(|i| i.skipped.as_ref().and_then(|s| s.lost_messages).unwrap())
        .sum();
    assert!(read >= 5_000, "{read} read");
    assert_eq!(read + lost, 20_000);
    let issue = &all.issues()[0];
    assert!(issue.part.contains("seek_0.mcap"));
    // The issue keeps the error and its cause: the first chunk, whose zstd frames are garbage.
    let first_chunk = mcap::Summary::read(&std::fs::read(path.join("seek_0.mcap")).unwrap())
        .unwrap()
        .unwrap()
        .chunk_indexes[0]
        .chunk_start_offset;
    match issue.error.as_ref() {
        bag::BagError::Damaged { offset, source, .. } => {
            assert_eq!(*offset, first_chunk);
            assert!(
                matches!(source, bag::FormatError::BadZstdFrames { .. }),
                "{source:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(
        issue.to_string().contains("malformed zstd frames"),
        "{issue}"
    );
}

#[test]
fn missing_and_garbage_parts_are_reported_and_the_rest_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed");
    let options = WriteOptions::new()
        .part_max_bytes(Some(1))
        .compression(Compression::None);
    let mut w = BagWriter::create(&path, options).unwrap();
    let a = w.add_channel(channel("a", b"s"));
    for i in 0..3u64 {
        w.write(a, i, None, &payload(i)).unwrap();
        w.flush().unwrap();
    }
    let summary = w.close().unwrap();
    assert_eq!(summary.parts.len(), 3);
    std::fs::remove_file(path.join("mixed_0.mcap")).unwrap();
    std::fs::write(
        path.join("mixed_1.mcap"),
        b"this is not an mcap file at all",
    )
    .unwrap();

    let (reader, messages) = read_all(&path);
    let states: Vec<&str> = reader.parts().iter().map(|p| p.status.label()).collect();
    assert_eq!(states, ["missing", "garbage", "complete"]);
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].data, payload(2));
}

#[test]
fn index_records_drops_unstamped_and_never_published_topics() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("idx");
    let mut w = BagWriter::create(&path, WriteOptions::new()).unwrap();
    let a = w.add_channel(channel("car/a", b"s"));
    w.advertise("car/a", "EngineRpm");
    w.advertise("car/horn", "Horn");
    w.write(a, 5, None, b"1").unwrap();
    w.write(a, 6, Some(2), b"2").unwrap();
    w.add_dropped(7);
    w.close().unwrap();
    let reader = BagReader::open(&path).unwrap();
    assert_eq!(reader.dropped_messages(), Some(7));
    assert_eq!(reader.unstamped_messages(), Some(1));
    let never: Vec<_> = reader
        .advertised_never_published()
        .iter()
        .map(|a| a.topic.as_str())
        .collect();
    assert_eq!(never, ["car/horn"]);
    let text = std::fs::read_to_string(path.join("metadata.yaml")).unwrap();
    assert!(text.contains("rosbag2_bagfile_information:") && text.contains("version: 8"));
    assert!(text.contains("dropped_messages: 7"), "{text}");
}

#[test]
fn writer_refuses_a_non_empty_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("precious.txt"), b"keep me").unwrap();
    let err = BagWriter::create(dir.path(), WriteOptions::new())
        .err()
        .expect("refused");
    assert!(err.to_string().contains("not empty"), "{err}");
    assert_eq!(
        std::fs::read(dir.path().join("precious.txt")).unwrap(),
        b"keep me"
    );
}

#[test]
fn empty_bag_opens_with_zero_messages() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty");
    BagWriter::create(&path, WriteOptions::new())
        .unwrap()
        .close()
        .unwrap();
    let (reader, messages) = read_all(&path);
    assert!(messages.is_empty());
    assert_eq!(reader.parts()[0].status, PartStatus::Complete);
    assert_eq!(reader.time_range_ns(), None);
}

#[test]
fn bad_paths_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = BagReader::open(dir.path().join("nope")).err().unwrap();
    assert!(missing.to_string().contains("nope"), "{missing}");
    let empty_dir = BagReader::open(dir.path()).err().unwrap();
    assert!(
        empty_dir.to_string().contains("no .mcap or .db3 files"),
        "{empty_dir}"
    );
    let garbage = dir.path().join("g.mcap");
    std::fs::write(&garbage, vec![7u8; 100]).unwrap();
    let err = BagReader::open(&garbage).err().unwrap();
    assert!(err.to_string().contains("not a recording"), "{err}");
}

#[test]
fn torn_tail_recovers_every_message_of_closed_chunks_and_reindex_repairs_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("torn");
    let mut w = BagWriter::create(&path, WriteOptions::new().chunk_max_age(None)).unwrap();
    let a = w.add_channel(channel("a", b"s"));
    for i in 0..300u64 {
        w.write(a, i, None, &payload(i)).unwrap();
        if i % 100 == 99 {
            w.flush().unwrap();
        }
    }
    w.add_dropped(4);
    // Simulate a crash: the part file is cut, the footer never written.
    let part = path.join("torn_0.mcap");
    let summary = w.close().unwrap();
    assert_eq!(summary.message_count, 300);
    let bytes = std::fs::read(&part).unwrap();
    let data_end = {
        let s = mcap::Summary::read(&bytes).unwrap().unwrap();
        let last = s.chunk_indexes.last().unwrap();
        (last.chunk_start_offset + last.chunk_length) as usize
    };
    std::fs::write(&part, &bytes[..data_end - 10]).unwrap();

    let (reader, messages) = read_all(&path);
    let PartStatus::Torn { damage } = &reader.parts()[0].status else {
        panic!("expected torn, got {:?}", reader.parts()[0].status);
    };
    assert!(damage.offset > 0);
    assert!(messages.len() >= 200, "recovered {}", messages.len());
    assert!(
        messages
            .iter()
            .enumerate()
            .all(|(i, m)| m.data == payload(i as u64))
    );

    let report = bag::reindex::reindex(&path).unwrap();
    assert_eq!(report.repaired.len(), 1);
    assert!(report.kept_from_previous_index);
    let (reader, again) = read_all(&path);
    assert_eq!(reader.parts()[0].status, PartStatus::Complete);
    assert_eq!(again, messages);
    assert_eq!(
        reader.dropped_messages(),
        Some(4),
        "reindex keeps the drop count"
    );
    assert!(path.join("torn_0.mcap.torn").exists());
}
