//! A damaged chunk costs only its own messages (issue 21 section 2), on the reader's paths the
//! CLI damage table does not reach: chunks that overlap in time (merged by the mcap crate's
//! reader, which checks no CRC) and a part without any index (the loss is unknown, never 0).

use std::collections::BTreeMap;

use bag::{BagReader, ChunkDamage, ReadFilter};

const MESSAGES: u64 = 60;

/// An uncompressed file of the mcap crate's writer, small chunks, 60 messages; with
/// `overlapping`, log times go back and forth so that the chunks overlap in time.
fn file(overlapping: bool, indexes: bool) -> Vec<u8> {
    let mut cursor = std::io::Cursor::new(Vec::new());
    {
        let mut w = mcap::WriteOptions::new()
            .compression(None)
            .chunk_size(Some(300))
            .emit_message_indexes(indexes)
            .emit_chunk_indexes(indexes)
            .emit_summary_records(indexes)
            .emit_summary_offsets(indexes)
            .create(&mut cursor)
            .unwrap();
        let ch = w.add_channel(0, "/a", "json", &BTreeMap::new()).unwrap();
        for i in 0..MESSAGES {
            // Overlapping: each chunk of about 6 messages spans times of the next ones too.
            let t = if overlapping && i % 2 == 1 {
                1_000 + i * 10 + 45
            } else {
                1_000 + i * 10
            };
            let header = mcap::records::MessageHeader {
                channel_id: ch,
                sequence: i as u32,
                log_time: t,
                publish_time: t,
            };
            w.write_to_known_channel(
                &header,
                format!("{{\"v\": {i}, \"pad\": \"xxxxxxxxxx\"}}").as_bytes(),
            )
            .unwrap();
        }
        w.finish().unwrap();
    }
    cursor.into_inner()
}

/// Flips a payload byte of the third chunk; returns its byte range and message count.
fn damage_third_chunk(bytes: &mut [u8]) -> (u64, u64, u64) {
    let mut at = 8;
    let mut chunks = Vec::new();
    while at + 9 <= bytes.len() - 8 {
        let len = u64::from_le_bytes(bytes[at + 1..at + 9].try_into().unwrap()) as usize;
        if bytes[at] == 0x06 {
            chunks.push((at, 9 + len));
        }
        if bytes[at] == 0x02 {
            break;
        }
        at += 9 + len;
    }
    assert!(chunks.len() >= 5, "{} chunks", chunks.len());
    let (at, len) = chunks[2];
    // Its messages, counted from its records (uncompressed: they follow the header).
    let body = &bytes[at + 9..at + len];
    let name_len = u32::from_le_bytes(body[28..32].try_into().unwrap()) as usize;
    let records = &body[32 + name_len + 8..];
    let (mut pos, mut n) = (0, 0);
    while pos + 9 <= records.len() {
        n += u64::from(records[pos] == 0x05);
        pos += 9 + u64::from_le_bytes(records[pos + 1..pos + 9].try_into().unwrap()) as usize;
    }
    bytes[at + len - 3] ^= 0x55;
    (at as u64, (at + len) as u64, n)
}

/// Messages read and the chunks reported skipped (at open or while reading).
fn read(path: &std::path::Path) -> (u64, Vec<ChunkDamage>) {
    let reader = BagReader::open(path).unwrap();
    let mut cursor = reader.messages(&ReadFilter::all()).unwrap();
    let mut n = 0;
    while cursor.next_message().is_some() {
        n += 1;
    }
    let mut chunks: Vec<ChunkDamage> = reader
        .parts()
        .iter()
        .flat_map(|p| p.damaged_chunks.clone())
        .collect();
    chunks.extend(cursor.issues().iter().filter_map(|i| i.skipped.clone()));
    chunks.dedup();
    assert!(!reader.known_loss().is_empty() || !cursor.issues().is_empty());
    // The check `bag info` can use, without reading messages, finds the same.
    assert_eq!(reader.damaged_chunks().unwrap(), chunks);
    (n, chunks)
}

#[test]
fn a_damaged_chunk_among_overlapping_chunks_costs_only_itself() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("overlap.mcap");
    let mut bytes = file(true, true);
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    let overlap = summary
        .chunk_indexes
        .windows(2)
        .any(|w| w[1].message_start_time < w[0].message_end_time);
    assert!(overlap, "the chunks must overlap in time for this test");
    let (offset, end, n) = damage_third_chunk(&mut bytes);
    std::fs::write(&path, &bytes).unwrap();
    let (read, chunks) = read(&path);
    let expected = ChunkDamage {
        part: "overlap.mcap".into(),
        offset,
        end,
        lost_messages: Some(n),
    };
    assert_eq!(chunks, [expected]);
    assert_eq!(read, MESSAGES - n);
}

#[test]
fn a_damaged_chunk_without_any_index_costs_an_unknown_number_not_zero() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bare.mcap");
    let mut bytes = file(false, false);
    let (offset, end, n) = damage_third_chunk(&mut bytes);
    std::fs::write(&path, &bytes).unwrap();
    let (read, chunks) = read(&path);
    let expected = ChunkDamage {
        part: "bare.mcap".into(),
        offset,
        end,
        lost_messages: None,
    };
    assert_eq!(chunks, [expected]);
    assert_eq!(read, MESSAGES - n);
    // verify says the same.
    let report = bag::verify::verify_bytes("bare.mcap", &bytes);
    assert_eq!(report.damaged_chunks, chunks);
}
