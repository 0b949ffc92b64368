//! Issue 24 item 11: `bag verify` streams a part with memory bounded by its largest record, not
//! by the part: a 200 MiB part verifies in a 120 MiB address space. `/dev/zero`, which never
//! ends, is refused as not a regular file rather than read.

mod common;

use bag::{BagWriter, ChannelSpec, Compression, WriteOptions};
use common::{TIME_LIMIT, bag, bag_limited};

const MIB: u64 = 1024 * 1024;

#[test]
fn a_200_mib_part_verifies_in_a_120_mib_address_space() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("big");
    let options = WriteOptions::new()
        .compression(Compression::None)
        .chunk_size_bytes(4 * MIB);
    let mut w = BagWriter::create(&dir, options).unwrap();
    let ch = w.add_channel(ChannelSpec {
        topic: "camera".into(),
        message_encoding: "raw".into(),
        schema: None,
        metadata: Default::default(),
    });
    let payload: Vec<u8> = (0..MIB).map(|i| (i % 251) as u8).collect();
    for i in 0..200u64 {
        w.write(ch, 1_000_000_000 + i * 1_000_000, Some(1), &payload)
            .unwrap();
    }
    w.close().unwrap();
    let part = dir.join("big_0.mcap");
    let size = std::fs::metadata(&part).unwrap().len();
    assert!(size > 200 * MIB, "the part is {size} bytes");

    let run = bag_limited(
        &["verify".as_ref(), part.as_os_str()],
        TIME_LIMIT * 6,
        120 * MIB,
    );
    run.assert_code(0, "verify of the part");
    assert!(run.stdout.contains("200 messages"), "{run:#?}");
    let run = bag_limited(
        &["verify".as_ref(), dir.as_os_str()],
        TIME_LIMIT * 6,
        120 * MIB,
    );
    run.assert_code(0, "verify of the bag");
}

#[test]
fn dev_zero_is_refused_not_read() {
    let run = bag(&["verify", "/dev/zero"]);
    run.assert_code(1, "verify /dev/zero");
    assert!(run.stderr.contains("character device"), "{run:#?}");
}
