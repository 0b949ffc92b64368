//! Verify against hand-built MCAP parts, clean and deliberately damaged.
//!
//! The builder below writes MCAP bytes directly from the spec (no `mcap` crate), so a damaged file
//! is exactly the damage the test names. Files written by the `mcap` crate are checked as well.

use std::collections::BTreeMap;

use bag::verify::{Finding, Report, Severity, verify_bytes};

const MAGIC: &[u8] = b"\x89MCAP0\r\n";

// ---- a tiny MCAP writer, test-only ---------------------------------------------------------

fn record(out: &mut Vec<u8>, opcode: u8, body: &[u8]) -> u64 {
    let at = out.len() as u64;
    out.push(opcode);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
    at
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn schema_body(id: u16, name: &str) -> Vec<u8> {
    let mut b = id.to_le_bytes().to_vec();
    put_str(&mut b, name);
    put_str(&mut b, "capnproto");
    b.extend_from_slice(&3u32.to_le_bytes());
    b.extend_from_slice(&[1, 2, 3]);
    b
}

fn channel_body(id: u16, schema_id: u16, topic: &str) -> Vec<u8> {
    let mut b = id.to_le_bytes().to_vec();
    b.extend_from_slice(&schema_id.to_le_bytes());
    put_str(&mut b, topic);
    put_str(&mut b, "capnproto");
    let mut map = Vec::new();
    put_str(&mut map, "redline/schema");
    put_str(&mut map, "EngineRpm");
    b.extend_from_slice(&(map.len() as u32).to_le_bytes());
    b.extend_from_slice(&map);
    b
}

fn message_body(channel: u16, sequence: u32, log_time: u64, data: &[u8]) -> Vec<u8> {
    let mut b = channel.to_le_bytes().to_vec();
    b.extend_from_slice(&sequence.to_le_bytes());
    b.extend_from_slice(&log_time.to_le_bytes());
    b.extend_from_slice(&log_time.to_le_bytes());
    b.extend_from_slice(data);
    b
}

fn u16_u64_map(entries: &[(u16, u64)]) -> Vec<u8> {
    let mut map = Vec::new();
    for (k, v) in entries {
        map.extend_from_slice(&k.to_le_bytes());
        map.extend_from_slice(&v.to_le_bytes());
    }
    let mut b = (map.len() as u32).to_le_bytes().to_vec();
    b.extend_from_slice(&map);
    b
}

/// What to put in a part.
#[derive(Clone)]
struct Part {
    schemas: Vec<(u16, &'static str)>,
    channels: Vec<(u16, u16, &'static str)>,
    /// `(channel, log_time)`; payload is derived from the index.
    messages: Vec<(u16, u64)>,
    messages_per_chunk: usize,
    compression: &'static str,
    /// Summary records a buggy part roll might add: ids the data section never held.
    extra_summary_schemas: Vec<(u16, &'static str)>,
    extra_summary_channels: Vec<(u16, u16, &'static str)>,
}

impl Default for Part {
    fn default() -> Self {
        Part {
            schemas: vec![(1, "engine_rpm.capnp:EngineRpm")],
            channels: vec![(1, 1, "vehicle/engine/rpm"), (2, 1, "vehicle/engine/rpm2")],
            messages: (0..12).map(|i| (1 + (i % 2) as u16, 1_000 + i)).collect(),
            messages_per_chunk: 5,
            compression: "",
            extra_summary_schemas: Vec::new(),
            extra_summary_channels: Vec::new(),
        }
    }
}

/// Where the builder put things, for targeted damage.
#[derive(Debug, Default)]
struct Layout {
    chunks: Vec<u64>,
    /// `(offset, channel)` of each MessageIndex record.
    message_indexes: Vec<(u64, u16)>,
    data_end: u64,
    summary_start: u64,
    chunk_indexes: Vec<u64>,
    statistics: u64,
    summary_offsets: Vec<u64>,
    footer: u64,
}

struct Built {
    bytes: Vec<u8>,
    layout: Layout,
}

impl Built {
    /// Recomputes DataEnd and Footer CRCs after a mutation, so only the intended damage remains.
    fn refresh_crcs(&mut self) {
        let de = self.layout.data_end as usize;
        let crc = crc32fast::hash(&self.bytes[..de]);
        self.bytes[de + 9..de + 13].copy_from_slice(&crc.to_le_bytes());
        let footer = self.layout.footer as usize;
        let crc = crc32fast::hash(&self.bytes[de + 13..footer + 9 + 16]);
        self.bytes[footer + 9 + 16..footer + 9 + 20].copy_from_slice(&crc.to_le_bytes());
    }

    fn put_u64(&mut self, at: u64, value: u64) {
        let at = at as usize;
        self.bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
    }

    fn get_u64(&self, at: u64) -> u64 {
        let at = at as usize;
        u64::from_le_bytes(self.bytes[at..at + 8].try_into().unwrap())
    }
}

fn build(part: &Part) -> Built {
    let mut out = MAGIC.to_vec();
    let mut layout = Layout::default();
    let mut header = Vec::new();
    put_str(&mut header, "");
    put_str(&mut header, "verify-test");
    record(&mut out, 0x01, &header);

    struct ChunkIdx {
        start: u64,
        end: u64,
        offset: u64,
        length: u64,
        mi_offsets: Vec<(u16, u64)>,
        mi_length: u64,
        compressed: u64,
        uncompressed: u64,
    }
    let mut chunk_indexes = Vec::new();
    let mut counts: BTreeMap<u16, u64> = BTreeMap::new();
    let batches: Vec<&[(u16, u64)]> = part
        .messages
        .chunks(part.messages_per_chunk.max(1))
        .collect();
    let mut sequence = 0u32;
    for (n, batch) in batches.iter().enumerate() {
        let mut records = Vec::new();
        if n == 0 {
            for (id, name) in &part.schemas {
                record(&mut records, 0x03, &schema_body(*id, name));
            }
            for (id, schema, topic) in &part.channels {
                record(&mut records, 0x04, &channel_body(*id, *schema, topic));
            }
        }
        let mut index: BTreeMap<u16, Vec<(u64, u64)>> = BTreeMap::new();
        for (channel, log_time) in batch.iter() {
            let at = record(
                &mut records,
                0x05,
                &message_body(*channel, sequence, *log_time, &sequence.to_le_bytes()),
            );
            sequence += 1;
            index.entry(*channel).or_default().push((*log_time, at));
            *counts.entry(*channel).or_default() += 1;
        }
        let compressed = match part.compression {
            "" => records.clone(),
            "zstd" => zstd::encode_all(records.as_slice(), 3).unwrap(),
            other => panic!("builder compression {other}"),
        };
        let start = batch.iter().map(|m| m.1).min().unwrap_or(0);
        let end = batch.iter().map(|m| m.1).max().unwrap_or(0);
        let mut body = Vec::new();
        body.extend_from_slice(&start.to_le_bytes());
        body.extend_from_slice(&end.to_le_bytes());
        body.extend_from_slice(&(records.len() as u64).to_le_bytes());
        body.extend_from_slice(&crc32fast::hash(&records).to_le_bytes());
        put_str(&mut body, part.compression);
        body.extend_from_slice(&(compressed.len() as u64).to_le_bytes());
        body.extend_from_slice(&compressed);
        let offset = record(&mut out, 0x06, &body);
        layout.chunks.push(offset);
        let length = out.len() as u64 - offset;
        let mi_start = out.len() as u64;
        let mut mi_offsets = Vec::new();
        for (channel, entries) in &index {
            let mut b = channel.to_le_bytes().to_vec();
            b.extend_from_slice(&((entries.len() * 16) as u32).to_le_bytes());
            for (t, o) in entries {
                b.extend_from_slice(&t.to_le_bytes());
                b.extend_from_slice(&o.to_le_bytes());
            }
            let at = record(&mut out, 0x07, &b);
            mi_offsets.push((*channel, at));
            layout.message_indexes.push((at, *channel));
        }
        chunk_indexes.push(ChunkIdx {
            start,
            end,
            offset,
            length,
            mi_offsets,
            mi_length: out.len() as u64 - mi_start,
            compressed: compressed.len() as u64,
            uncompressed: records.len() as u64,
        });
    }
    let data_crc = crc32fast::hash(&out);
    layout.data_end = record(&mut out, 0x0F, &data_crc.to_le_bytes());
    let summary_start = out.len() as u64;
    layout.summary_start = summary_start;

    let mut groups = Vec::new();
    let group_start = out.len() as u64;
    for (id, name) in part.schemas.iter().chain(&part.extra_summary_schemas) {
        record(&mut out, 0x03, &schema_body(*id, name));
    }
    groups.push((0x03u8, group_start, out.len() as u64 - group_start));
    let group_start = out.len() as u64;
    for (id, schema, topic) in part.channels.iter().chain(&part.extra_summary_channels) {
        record(&mut out, 0x04, &channel_body(*id, *schema, topic));
    }
    groups.push((0x04, group_start, out.len() as u64 - group_start));
    let group_start = out.len() as u64;
    for ci in &chunk_indexes {
        let mut b = Vec::new();
        for v in [ci.start, ci.end, ci.offset, ci.length] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&u16_u64_map(&ci.mi_offsets));
        b.extend_from_slice(&ci.mi_length.to_le_bytes());
        put_str(&mut b, part.compression);
        b.extend_from_slice(&ci.compressed.to_le_bytes());
        b.extend_from_slice(&ci.uncompressed.to_le_bytes());
        layout.chunk_indexes.push(record(&mut out, 0x08, &b));
    }
    groups.push((0x08, group_start, out.len() as u64 - group_start));
    let group_start = out.len() as u64;
    let mut stats = Vec::new();
    stats.extend_from_slice(&(part.messages.len() as u64).to_le_bytes());
    stats.extend_from_slice(&(part.schemas.len() as u16).to_le_bytes());
    stats.extend_from_slice(&(part.channels.len() as u32).to_le_bytes());
    stats.extend_from_slice(&0u32.to_le_bytes()); // attachments
    stats.extend_from_slice(&0u32.to_le_bytes()); // metadata
    stats.extend_from_slice(&(chunk_indexes.len() as u32).to_le_bytes());
    let start = part.messages.iter().map(|m| m.1).min().unwrap_or(0);
    let end = part.messages.iter().map(|m| m.1).max().unwrap_or(0);
    stats.extend_from_slice(&start.to_le_bytes());
    stats.extend_from_slice(&end.to_le_bytes());
    let counts: Vec<(u16, u64)> = counts.into_iter().collect();
    stats.extend_from_slice(&u16_u64_map(&counts));
    layout.statistics = record(&mut out, 0x0B, &stats);
    groups.push((0x0B, group_start, out.len() as u64 - group_start));

    let summary_offset_start = out.len() as u64;
    for (opcode, start, length) in groups {
        let mut b = vec![opcode];
        b.extend_from_slice(&start.to_le_bytes());
        b.extend_from_slice(&length.to_le_bytes());
        layout.summary_offsets.push(record(&mut out, 0x0E, &b));
    }
    layout.footer = out.len() as u64;
    let mut footer = Vec::new();
    footer.push(0x02);
    footer.extend_from_slice(&20u64.to_le_bytes());
    footer.extend_from_slice(&summary_start.to_le_bytes());
    footer.extend_from_slice(&summary_offset_start.to_le_bytes());
    out.extend_from_slice(&footer);
    let crc = crc32fast::hash(&out[summary_start as usize..]);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(MAGIC);
    Built { bytes: out, layout }
}

// ---- helpers -------------------------------------------------------------------------------

fn errors(report: &Report) -> Vec<&Finding> {
    report.errors().collect()
}

fn dump(report: &Report) -> String {
    report
        .findings
        .iter()
        .map(|f| f.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Exactly one error, on `record`, whose text mentions each of `words`.
fn assert_single_error(report: &Report, record: &str, words: &[&str]) {
    let errors = errors(report);
    assert_eq!(
        errors.len(),
        1,
        "expected one error, got:\n{}",
        dump(report)
    );
    let line = errors[0].to_string();
    assert_eq!(errors[0].record, record, "{line}");
    for word in words {
        assert!(line.contains(word), "{line:?} should mention {word:?}");
    }
}

// ---- clean files ---------------------------------------------------------------------------

#[test]
fn hand_built_part_is_clean() {
    for compression in ["", "zstd"] {
        let built = build(&Part {
            compression,
            ..Part::default()
        });
        let report = verify_bytes("clean.mcap", &built.bytes);
        assert!(report.findings.is_empty(), "{}", dump(&report));
        assert!(report.is_valid() && report.finished);
        assert_eq!(report.message_count, 12);
        assert_eq!(report.chunk_count, 3);
        assert_eq!((report.schema_count, report.channel_count), (1, 2));
        let topics = report.topics();
        assert_eq!(topics.len(), 2);
        assert_eq!(topics[0].topic, "vehicle/engine/rpm");
        assert_eq!(topics[0].message_count, 6);
        let range = topics[0].log_time_range_ns.unwrap();
        assert_eq!((range.start_ns, range.end_ns), (1_000, 1_010));
        assert_eq!(
            report.channels[0].schema_name.as_deref(),
            Some("engine_rpm.capnp:EngineRpm")
        );
    }
}

fn mcap_crate_file(compression: Option<mcap::Compression>) -> Vec<u8> {
    let mut cursor = std::io::Cursor::new(Vec::new());
    {
        let mut writer = mcap::WriteOptions::new()
            .compression(compression)
            .chunk_size(Some(4096))
            .create(&mut cursor)
            .unwrap();
        let schema = writer
            .add_schema("engine_rpm.capnp:EngineRpm", "capnproto", b"\x00\x01")
            .unwrap();
        let rpm = writer
            .add_channel(schema, "vehicle/engine/rpm", "capnproto", &BTreeMap::new())
            .unwrap();
        let raw = writer
            .add_channel(
                0,
                "vehicle/raw",
                "application/octet-stream",
                &BTreeMap::new(),
            )
            .unwrap();
        for i in 0..2_000u64 {
            let channel = if i % 3 == 0 { raw } else { rpm };
            let header = mcap::records::MessageHeader {
                channel_id: channel,
                sequence: i as u32,
                log_time: 1_000_000 + i * 1_000,
                publish_time: 1_000_000 + i * 1_000 - 5,
            };
            writer
                .write_to_known_channel(&header, &i.to_le_bytes().repeat(4))
                .unwrap();
        }
        writer
            .attach(&mcap::Attachment {
                log_time: 7,
                create_time: 8,
                name: "calibration.yaml".into(),
                media_type: "text/yaml".into(),
                data: std::borrow::Cow::Borrowed(b"gain: 2\n"),
            })
            .unwrap();
        writer
            .write_metadata(&mcap::records::Metadata {
                name: "vehicle".into(),
                metadata: BTreeMap::from([("vin".to_owned(), "X1".to_owned())]),
            })
            .unwrap();
        writer.finish().unwrap();
    }
    cursor.into_inner()
}

#[test]
fn mcap_crate_files_are_clean() {
    for compression in [
        None,
        Some(mcap::Compression::Zstd),
        Some(mcap::Compression::Lz4),
    ] {
        let bytes = mcap_crate_file(compression);
        let report = verify_bytes("mcap-crate.mcap", &bytes);
        assert!(
            report.findings.is_empty(),
            "{compression:?}:\n{}",
            dump(&report)
        );
        assert_eq!(report.message_count, 2_000);
        assert_eq!((report.attachment_count, report.metadata_count), (1, 1));
        assert!(report.chunk_count > 1, "several chunks");
    }
}

// ---- the bug this module exists for --------------------------------------------------------

#[test]
fn summary_listing_ids_the_data_section_never_held_is_named() {
    let built = build(&Part {
        extra_summary_schemas: vec![(9, "ghost.capnp:Ghost")],
        extra_summary_channels: vec![(7, 9, "vehicle/ghost")],
        ..Part::default()
    });
    let report = verify_bytes("roll_3.mcap", &built.bytes);
    assert!(!report.is_valid());
    let errors = errors(&report);
    assert_eq!(errors.len(), 2, "{}", dump(&report));
    let schema = errors
        .iter()
        .find(|f| f.record == "Schema")
        .expect("schema finding");
    assert!(schema.found.contains("schema 9"), "{schema}");
    assert!(schema.expected.contains("data section"), "{schema}");
    let channel = errors
        .iter()
        .find(|f| f.record == "Channel")
        .expect("channel finding");
    assert!(channel.found.contains("channel 7"), "{channel}");
    assert!(channel.found.contains("vehicle/ghost"), "{channel}");
    // Both findings point into the summary section and name the part.
    for f in &errors {
        assert!(f.offset >= built.layout.summary_start, "{f}");
        assert!(f.to_string().starts_with("roll_3.mcap:"), "{f}");
    }
}

#[test]
fn summary_copy_differing_from_data_section_is_an_error() {
    let mut built = build(&Part::default());
    // Rename the summary copy of channel 1's topic: "vehicle/engine/rpm" -> "vehicle/engine/rpX".
    let summary = built.layout.summary_start as usize;
    let at = summary
        + built.bytes[summary..]
            .windows(18)
            .position(|w| w == b"vehicle/engine/rpm")
            .unwrap();
    built.bytes[at + 17] = b'X';
    built.refresh_crcs();
    let report = verify_bytes("p.mcap", &built.bytes);
    assert_single_error(&report, "Channel", &["channel 1", "identical", "rpX"]);
}

// ---- damage --------------------------------------------------------------------------------

#[test]
fn bad_chunk_crc() {
    let mut built = build(&Part::default());
    // Flip one payload byte of the last message in the first (uncompressed) chunk.
    let chunk = built.layout.chunks[0] as usize;
    let payload = built.layout.message_indexes[0].0 as usize - 1;
    assert!(payload > chunk);
    built.bytes[payload] ^= 0x40;
    built.refresh_crcs();
    let report = verify_bytes("p.mcap", &built.bytes);
    assert_single_error(&report, "Chunk", &["uncompressed_crc"]);
    assert_eq!(errors(&report)[0].offset, chunk as u64);
}

#[test]
fn bad_data_section_and_summary_crcs() {
    let mut built = build(&Part::default());
    let de = built.layout.data_end as usize;
    built.bytes[de + 9] ^= 1;
    let report = verify_bytes("p.mcap", &built.bytes);
    assert_single_error(&report, "DataEnd", &["data_section_crc"]);

    let mut built = build(&Part::default());
    let footer = built.layout.footer as usize;
    built.bytes[footer + 9 + 16] ^= 1;
    let report = verify_bytes("p.mcap", &built.bytes);
    assert_single_error(&report, "Footer", &["summary_crc"]);
}

#[test]
fn truncated_file_is_reported_at_every_length() {
    let built = build(&Part::default());
    for len in (1..built.bytes.len())
        .step_by(7)
        .chain([built.bytes.len() - 1])
    {
        let report = verify_bytes("torn.mcap", &built.bytes[..len]);
        assert!(!report.is_valid(), "truncated to {len} verified clean");
        assert!(!report.finished, "truncated to {len} reported finished");
    }
    // A part torn inside its second chunk: the damage is located at that chunk.
    let cut = built.layout.chunks[1] as usize + 20;
    let report = verify_bytes("torn.mcap", &built.bytes[..cut]);
    let text = dump(&report);
    assert!(
        report
            .errors()
            .any(|f| f.record == "Chunk" && f.offset == built.layout.chunks[1]),
        "{text}"
    );
    assert!(
        report
            .errors()
            .any(|f| f.record == "file" && f.expected.contains("magic")),
        "{text}"
    );
    assert!(report.errors().any(|f| f.record == "Footer"), "{text}");
    assert!(report.errors().any(|f| f.record == "DataEnd"), "{text}");
    // What came before the tear is still counted.
    assert_eq!(report.message_count, 5);
}

#[test]
fn wrong_chunk_index_offset() {
    let mut built = build(&Part::default());
    let index = built.layout.chunk_indexes[1];
    // chunk_start_offset is the third u64 of the body.
    let field = index + 9 + 16;
    let offset = built.get_u64(field);
    built.put_u64(field, offset + 1);
    built.refresh_crcs();
    let report = verify_bytes("p.mcap", &built.bytes);
    let text = dump(&report);
    assert!(
        report.errors().any(|f| f.record == "ChunkIndex"
            && f.offset == index
            && f.expected
                .contains(&format!("chunk_start_offset {}", offset + 1))),
        "{text}"
    );
    // ...and the chunk it should have indexed is reported as unindexed.
    assert!(
        report.errors().any(|f| f.record == "Chunk"
            && f.offset == offset
            && f.expected.contains("ChunkIndex")),
        "{text}"
    );
}

#[test]
fn chunk_index_with_wrong_length_and_message_index_offset() {
    let mut built = build(&Part::default());
    let index = built.layout.chunk_indexes[0];
    let length_field = index + 9 + 24;
    let length = built.get_u64(length_field);
    built.put_u64(length_field, length + 3);
    built.refresh_crcs();
    let report = verify_bytes("p.mcap", &built.bytes);
    assert_single_error(
        &report,
        "ChunkIndex",
        &["chunk_length", &length.to_string()],
    );

    let mut built = build(&Part::default());
    let index = built.layout.chunk_indexes[0];
    // First message_index_offsets entry: u32 map length, then u16 channel, then u64 offset.
    let entry_offset = index + 9 + 32 + 4 + 2;
    let mi = built.get_u64(entry_offset);
    built.put_u64(entry_offset, mi + 1);
    built.refresh_crcs();
    let report = verify_bytes("p.mcap", &built.bytes);
    assert_single_error(
        &report,
        "ChunkIndex",
        &["MessageIndex", &(mi + 1).to_string()],
    );
}

#[test]
fn statistics_count_off() {
    let mut built = build(&Part::default());
    let field = built.layout.statistics + 9;
    built.put_u64(field, 13);
    built.refresh_crcs();
    let report = verify_bytes("p.mcap", &built.bytes);
    assert_single_error(&report, "Statistics", &["message_count 12", "found 13"]);

    // channel_message_counts: the last u64 of the record is channel 2's count.
    let mut built = build(&Part::default());
    let footer_of_stats = built.layout.summary_offsets[0] - 8;
    built.put_u64(footer_of_stats, 99);
    built.refresh_crcs();
    let report = verify_bytes("p.mcap", &built.bytes);
    assert_single_error(
        &report,
        "Statistics",
        &["channel_message_counts[2] 6", "found 99"],
    );
}

#[test]
fn message_index_pointing_at_wrong_message() {
    let mut built = build(&Part::default());
    // First chunk, channel 1's index: point its first entry at channel 2's first message.
    let (mi_ch1, ch1) = built.layout.message_indexes[0];
    let (mi_ch2, ch2) = built.layout.message_indexes[1];
    assert_eq!((ch1, ch2), (1, 2));
    let entries = |mi: u64| mi + 9 + 2 + 4;
    let ch2_offset = built.get_u64(entries(mi_ch2) + 8);
    built.put_u64(entries(mi_ch1) + 8, ch2_offset);
    built.refresh_crcs();
    let report = verify_bytes("p.mcap", &built.bytes);
    assert_single_error(&report, "MessageIndex", &["channel 1", "is on channel 2"]);
    assert_eq!(errors(&report)[0].offset, mi_ch1);

    // Right message, wrong log time.
    let mut built = build(&Part::default());
    let (mi, _) = built.layout.message_indexes[0];
    let time = built.get_u64(entries(mi));
    built.put_u64(entries(mi), time + 100);
    built.refresh_crcs();
    let report = verify_bytes("p.mcap", &built.bytes);
    assert_single_error(&report, "MessageIndex", &["log_time"]);
}

#[test]
fn summary_offset_pointing_at_wrong_group() {
    let mut built = build(&Part::default());
    // The Channel group's SummaryOffset: group_start is at body offset 1.
    let so = built.layout.summary_offsets[1];
    let start = built.get_u64(so + 9 + 1);
    built.put_u64(so + 9 + 1, start - 1);
    built.refresh_crcs();
    let report = verify_bytes("p.mcap", &built.bytes);
    assert_single_error(&report, "SummaryOffset", &["group_start"]);
}

#[test]
fn channel_used_before_definition() {
    let built = build(&Part {
        channels: vec![(1, 1, "a")],
        messages: vec![(1, 1), (2, 2)],
        ..Part::default()
    });
    let report = verify_bytes("p.mcap", &built.bytes);
    let text = dump(&report);
    assert!(
        report
            .errors()
            .any(|f| f.record == "Message" && f.expected.contains("channel 2 defined before")),
        "{text}"
    );
}

#[test]
fn channel_with_undefined_schema() {
    let built = build(&Part {
        channels: vec![(1, 5, "a"), (2, 0, "schemaless")],
        messages: vec![(1, 1), (2, 2)],
        ..Part::default()
    });
    let report = verify_bytes("p.mcap", &built.bytes);
    assert!(
        report
            .errors()
            .any(|f| f.record == "Channel"
                && f.expected.contains("schema 5 defined before channel 1")),
        "{}",
        dump(&report)
    );
    // Schema 0 (no schema) is allowed.
    assert!(
        !report.errors().any(|f| f.expected.contains("channel 2")),
        "{}",
        dump(&report)
    );
}

#[test]
fn log_time_disorder_in_a_chunk_is_only_a_warning() {
    let built = build(&Part {
        messages: vec![(1, 10), (2, 5), (1, 20), (2, 15)],
        messages_per_chunk: 10,
        ..Part::default()
    });
    let report = verify_bytes("p.mcap", &built.bytes);
    assert!(report.is_valid(), "{}", dump(&report));
    assert_eq!(report.warning_count, 1, "{}", dump(&report));
    let warning = report.warnings().next().unwrap();
    assert_eq!(
        (warning.severity, warning.record),
        (Severity::Warning, "Chunk")
    );
}

#[test]
fn garbage_and_empty_files_are_single_findings() {
    let report = verify_bytes("empty.mcap", &[]);
    assert_single_error(&report, "file", &["empty"]);

    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let report = verify_bytes("garbage.mcap", &garbage);
    assert_single_error(&report, "file", &["not an MCAP file"]);

    let report = verify_bytes("short.mcap", b"\x89MC");
    assert_single_error(&report, "file", &["magic"]);

    // Only the two magics.
    let report = verify_bytes("magic.mcap", &[MAGIC, MAGIC].concat());
    assert!(!report.is_valid());
    assert!(
        report.errors().any(|f| f.record == "Footer"),
        "{}",
        dump(&report)
    );
}

#[test]
fn unknown_compression_and_impossible_sizes() {
    let built = build(&Part {
        compression: "zstd",
        ..Part::default()
    });
    let chunk = built.layout.chunks[0] as usize;
    // compression string follows 8+8+8+4 bytes of body: length 4, then "zstd".
    let at = chunk + 9 + 28 + 4;
    let mut bytes = built.bytes.clone();
    bytes[at..at + 4].copy_from_slice(b"brot");
    let report = verify_bytes("p.mcap", &bytes);
    assert!(
        report
            .errors()
            .any(|f| f.record == "Chunk" && f.found.contains("brot")),
        "{}",
        dump(&report)
    );

    // Declared uncompressed size far beyond anything the compressed bytes could hold.
    let mut bytes = built.bytes.clone();
    let size_at = chunk + 9 + 16;
    bytes[size_at..size_at + 8].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
    let report = verify_bytes("p.mcap", &bytes);
    assert!(
        report
            .errors()
            .any(|f| f.record == "Chunk" && f.expected.contains("uncompressed_size")),
        "{}",
        dump(&report)
    );
}

#[test]
fn record_length_beyond_file() {
    let mut built = build(&Part::default());
    let chunk = built.layout.chunks[1];
    built.put_u64(chunk + 1, 1 << 40);
    let report = verify_bytes("p.mcap", &built.bytes);
    assert!(
        report.errors().any(|f| f.record == "Chunk"
            && f.offset == chunk
            && f.found == format!("length {}", 1u64 << 40)),
        "{}",
        dump(&report)
    );
}

#[test]
fn json_shape() {
    let built = build(&Part {
        extra_summary_channels: vec![(7, 1, "ghost")],
        ..Part::default()
    });
    let report = verify_bytes("p.mcap", &built.bytes);
    let json = serde_json::to_value(&report).unwrap();
    let finding = &json["findings"][0];
    assert_eq!(finding["severity"], "error");
    assert_eq!(finding["record"], "Channel");
    assert_eq!(finding["part"], "p.mcap");
    assert!(finding["offset"].is_u64());
    assert!(finding.get("offset_in_chunk").is_none());
    assert_eq!(json["message_count"], 12);
    assert_eq!(json["channels"][0]["topic"], "vehicle/engine/rpm");
}

#[test]
fn findings_beyond_the_limit_are_counted_not_listed() {
    let mut built = build(&Part {
        messages: (0..50).map(|i| (1, i)).collect(),
        messages_per_chunk: 1,
        ..Part::default()
    });
    // Break every chunk index (50 findings, plus the 50 chunks left unindexed).
    for index in built.layout.chunk_indexes.clone() {
        let field = index + 9 + 16;
        let offset = built.get_u64(field);
        built.put_u64(field, offset + 1);
    }
    built.refresh_crcs();
    let options = bag::verify::VerifyOptions::new().max_listed_findings(10);
    let report = bag::verify::verify_bytes_with("p.mcap", &built.bytes, &options);
    assert_eq!(report.findings.len(), 10);
    assert_eq!(report.error_count, 100);
    assert_eq!(report.unlisted_findings, 90);
}

// ---- files and directories -----------------------------------------------------------------

#[test]
fn verify_path_handles_files_directories_and_missing_paths() {
    let dir = tempfile::tempdir().unwrap();
    let clean = build(&Part::default()).bytes;
    std::fs::write(dir.path().join("rec_10.mcap"), &clean).unwrap();
    std::fs::write(dir.path().join("rec_2.mcap"), &clean[..clean.len() / 2]).unwrap();
    std::fs::write(dir.path().join("rec_0.mcap"), &clean).unwrap();

    let bag = bag::verify::verify_path(dir.path()).unwrap();
    let parts: Vec<&str> = bag.parts.iter().map(|p| p.part.as_str()).collect();
    assert_eq!(parts, ["rec_0.mcap", "rec_2.mcap", "rec_10.mcap"]);
    assert!(!bag.is_valid());
    assert!(bag.parts[0].is_valid() && !bag.parts[1].is_valid() && bag.parts[2].is_valid());
    assert!(bag.findings().all(|f| f.part == "rec_2.mcap"));

    let single = bag::verify::verify_path(&dir.path().join("rec_0.mcap")).unwrap();
    assert!(single.is_valid());
    assert_eq!(single.parts.len(), 1);

    let empty = tempfile::tempdir().unwrap();
    let bag = bag::verify::verify_path(empty.path()).unwrap();
    assert!(!bag.is_valid());
    assert_eq!(bag.findings[0].record, "bag");

    let missing = dir.path().join("nope");
    assert!(bag::verify::verify_path(&missing).is_err());
    assert!(bag::verify::verify_file(&missing).is_err());
}
