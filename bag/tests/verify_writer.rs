//! Our own writer's bags verify clean: every part of a rolled recording, every compression,
//! channels added mid-recording (the part roll is where the predecessor's summary listed ids the
//! data section never held).

use bag::verify::verify_path;
use bag::{BagWriter, ChannelSpec, Compression, WriteOptions};

fn write_rolled_bag(dir: &std::path::Path, compression: Compression) -> u64 {
    let options = WriteOptions::new()
        .compression(compression)
        .chunk_size_bytes(2 * 1024)
        .part_max_bytes(Some(16 * 1024));
    let mut writer = BagWriter::create(dir, options).expect("create bag");
    let rpm = writer.add_channel(ChannelSpec::capnp(
        "vehicle/engine/rpm",
        "EngineRpm",
        "engine_rpm.capnp:EngineRpm",
        vec![1, 2, 3, 4],
    ));
    let raw = writer.add_channel(ChannelSpec {
        topic: "vehicle/raw".into(),
        message_encoding: "application/octet-stream".into(),
        schema: None,
        metadata: Default::default(),
    });
    let mut written = 0u64;
    let mut late = None;
    for i in 0..3_000u64 {
        let t = 1_000_000_000 + i * 1_000_000;
        // A channel that first appears after several rolls, and a channel that stops.
        if i == 1_500 {
            late = Some(writer.add_channel(ChannelSpec::capnp(
                "vehicle/brake/pressure",
                "BrakePressure",
                "brake.capnp:BrakePressure",
                vec![9, 9],
            )));
        }
        let payload = (i * 2_654_435_761).to_le_bytes().repeat(6);
        let channel = match (i % 3, late) {
            (0, _) if i < 2_000 => raw,
            (1, Some(late)) => late,
            _ => rpm,
        };
        writer
            .write(channel, t, Some(t - 10), &payload)
            .expect("write");
        written += 1;
    }
    writer.close().expect("close");
    written
}

#[test]
fn rolled_bags_from_our_writer_verify_clean() {
    for compression in [Compression::Zstd, Compression::Lz4, Compression::None] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("drive");
        let written = write_rolled_bag(&path, compression);
        let report = verify_path(&path).expect("verify");
        let findings: Vec<String> = report.findings().map(|f| f.to_string()).collect();
        assert!(
            report.parts.len() > 2,
            "{compression:?}: expected several parts, got {}",
            report.parts.len()
        );
        assert_eq!(
            report.error_count(),
            0,
            "{compression:?}:\n{}",
            findings.join("\n")
        );
        eprintln!(
            "{compression:?}: {} parts, {} warnings",
            report.parts.len(),
            report.warning_count()
        );
        for line in &findings {
            eprintln!("  {line}");
        }
        let counted: u64 = report.parts.iter().map(|p| p.message_count).sum();
        assert_eq!(counted, written, "{compression:?}");
        assert!(report.parts.iter().all(|p| p.finished), "{compression:?}");
    }
}
