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
