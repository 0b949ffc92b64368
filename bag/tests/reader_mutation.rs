//! BagReader on damaged parts: truncations, bit flips and corrupted lengths never panic, and a
//! cut-off part never yields a message that was not written.

use std::collections::BTreeSet;

use bag::{BagReader, BagWriter, ChannelSpec, Compression, ReadFilter, WriteOptions};
use proptest::prelude::*;

/// A small valid part (several chunks) and the messages in it.
fn original(compression: Compression) -> (Vec<u8>, BTreeSet<(u64, Vec<u8>)>) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("m");
    let options = WriteOptions::new()
        .compression(compression)
        .chunk_size_bytes(2_000);
    let mut w = BagWriter::create(&dir, options).unwrap();
    let ch = w.add_channel(ChannelSpec::capnp(
        "t",
        "EngineRpm",
        "e.capnp:E",
        vec![9; 40],
    ));
    let mut messages = BTreeSet::new();
    for i in 0..200u64 {
        let data: Vec<u8> = (0..(i % 50) as u8).map(|k| k ^ i as u8).collect();
        w.write(ch, i * 10, None, &data).unwrap();
        messages.insert((i * 10, data));
    }
    w.close().unwrap();
    (std::fs::read(dir.join("m_0.mcap")).unwrap(), messages)
}

fn read_back(bytes: &[u8]) -> Vec<(u64, Vec<u8>)> {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("x.mcap");
    std::fs::write(&path, bytes).unwrap();
    let Ok(reader) = BagReader::open(&path) else {
        return Vec::new();
    };
    let _ = (
        reader.message_count(),
        reader.time_range_ns(),
        reader.channels().len(),
    );
    let Ok(mut cursor) = reader.messages(&ReadFilter::all()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    while let Some(m) = cursor.next_message() {
        out.push((m.log_time_ns, m.data.to_vec()));
    }
    out
}

fn compression() -> impl Strategy<Value = Compression> {
    prop_oneof![
        Just(Compression::Zstd),
        Just(Compression::Lz4),
        Just(Compression::None)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_truncated_part_yields_only_messages_that_were_written(c in compression(), cut in 0.0f64..1.0) {
        let (bytes, written) = original(c);
        let keep = (bytes.len() as f64 * cut) as usize;
        for m in read_back(&bytes[..keep]) {
            prop_assert!(written.contains(&m), "invented message at {}", m.0);
        }
    }

    #[test]
    fn bit_flips_and_corrupted_lengths_never_panic(
        c in compression(),
        flips in proptest::collection::vec((0.0f64..1.0, 0u8..8), 1..8),
        length_at in 0.0f64..1.0,
        length in any::<u64>(),
    ) {
        let (mut bytes, _) = original(c);
        let n = bytes.len();
        for (at, bit) in flips {
            let i = ((n as f64 * at) as usize).min(n - 1);
            bytes[i] ^= 1 << bit;
        }
        read_back(&bytes);
        let i = ((n as f64 * length_at) as usize).min(n.saturating_sub(8));
        bytes[i..i + 8].copy_from_slice(&length.to_le_bytes());
        read_back(&bytes);
    }
}
