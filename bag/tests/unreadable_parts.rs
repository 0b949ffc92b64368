//! Issue 24 item 16 in the library: a part that becomes unreadable after the recording was
//! opened is an issue of that part when messages are read; the other parts still read.

use bag::{BagReader, BagWriter, ChannelSpec, ReadFilter, WriteOptions};

#[test]
fn a_part_gone_after_opening_is_an_issue_and_the_rest_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    let options = WriteOptions::new().part_max_duration_ns(Some(1_000_000_000));
    let mut w = BagWriter::create(&dir, options).unwrap();
    let ch = w.add_channel(ChannelSpec {
        topic: "a".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: Default::default(),
    });
    for i in 0..30u64 {
        w.write(ch, 1_000_000_000 + i * 100_000_000, None, b"{}")
            .unwrap();
    }
    w.close().unwrap();
    let reader = BagReader::open(&dir).unwrap();
    assert_eq!(reader.parts().len(), 3);
    let middle = &reader.parts()[1].path;
    std::fs::remove_file(middle).unwrap();
    std::fs::create_dir(middle).unwrap();

    let mut cursor = reader.messages(&ReadFilter::all()).unwrap();
    let mut count = 0;
    while cursor.next_message().is_some() {
        count += 1;
    }
    assert_eq!(count, 20);
    assert_eq!(cursor.issues().len(), 1, "{:?}", cursor.issues());
    assert_eq!(cursor.issues()[0].part, reader.parts()[1].name);
}

/// A rosbag2 bag written with `compression_mode: file` (each file compressed whole, as
/// `ros2 bag record --compression-mode file` does) is not read compressed; its parts say so
/// and how to read them, instead of calling them files without the MCAP magic.
#[test]
fn a_file_compressed_whole_says_it_is_compressed_and_how_to_read_it() {
    let tmp = tempfile::tempdir().unwrap();
    for (format, frame) in [
        (
            "zstd",
            zstd::encode_all(&b"SQLite format 3\0 and the rest"[..], 3).unwrap(),
        ),
        // An LZ4 frame's magic and a header; the rest does not matter here.
        (
            "lz4",
            vec![0x04, 0x22, 0x4d, 0x18, 0x64, 0x40, 0xa7, 0, 0, 0, 0],
        ),
    ] {
        let dir = tmp.path().join(format);
        std::fs::create_dir(&dir).unwrap();
        let file = format!("rec_0.db3.{format}");
        std::fs::write(dir.join(&file), &frame).unwrap();
        // A compressed copy the index does not list is no part: not read, not a finding.
        std::fs::write(dir.join(format!("stray.mcap.{format}")), &frame).unwrap();
        std::fs::write(
            dir.join("metadata.yaml"),
            format!(
                "rosbag2_bagfile_information:\n  version: 8\n  storage_identifier: sqlite3\n  \
                 compression_format: {format}\n  compression_mode: file\n  \
                 relative_file_paths:\n  - {file}\n  message_count: 3\n  \
                 topics_with_message_count: []\n"
            ),
        )
        .unwrap();
        let reader = BagReader::open(&dir).unwrap();
        let [part] = reader.parts() else {
            panic!("{format}: {:?}", reader.parts());
        };
        assert_eq!(part.name, file);
        let bag::PartStatus::Garbage { what } = &part.status else {
            panic!("{format}: {:?}", part.status);
        };
        assert!(
            what.contains(&format!("is a {format}-compressed file"))
                && what.contains(&format!("`{format} -d`")),
            "{what}"
        );
        // verify names the part as not checked, rather than finding no parts at all.
        let report = bag::verify::verify_path(&dir).unwrap();
        assert!(!report.is_valid());
        let findings: Vec<String> = report
            .findings
            .iter()
            .map(|f| format!("{}: {} / {}", f.part, f.expected, f.found))
            .collect();
        assert!(
            findings.iter().any(|f| f.starts_with(&format!("{file}: "))
                && f.contains(&format!("compressed whole with {format}"))
                && f.contains("not checked")),
            "{findings:?}"
        );
        assert!(
            !findings.iter().any(|f| f.contains("*.mcap part")),
            "{findings:?}"
        );
        assert!(
            !findings.iter().any(|f| f.contains("stray")),
            "{findings:?}"
        );
        // The file alone: named as not checked, not as a file without the MCAP magic.
        let alone = bag::verify::verify_path(&dir.join(&file)).unwrap();
        assert!(!alone.is_valid());
        assert!(
            alone
                .findings
                .iter()
                .any(|f| f.found.contains(&format!("compressed whole with {format}"))),
            "{:?}",
            alone.findings
        );
        assert!(alone.parts.is_empty(), "{:?}", alone.parts);
    }
}
