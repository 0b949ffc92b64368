//! `verify/zstd/<size>`: verifying a ~100 MB zstd part, against `read/zstd/<size>`: reading every
//! message of the same file with the `mcap` crate's `MessageStream` (the baseline until
//! `BagReader` has a bench of its own). Both start from the file on disk (page cache).
//!
//! `cargo bench -p bag --bench verify`; the goal is verify <= 2x read.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const TARGET_BYTES: u64 = 100_000_000;
const CHANNELS: u16 = 24;

/// Writes a telemetry-like part: many topics, ~100-byte payloads that compress about 2:1.
fn write_part(path: &Path) -> u64 {
    let file = std::io::BufWriter::new(std::fs::File::create(path).expect("create bench file"));
    let mut writer = mcap::WriteOptions::new()
        .compression(Some(mcap::Compression::Zstd))
        .profile("")
        .create(file)
        .expect("mcap writer");
    let schema = writer
        .add_schema("engine_rpm.capnp:EngineRpm", "capnproto", &[0u8; 2048])
        .expect("schema");
    let channels: Vec<u16> = (0..CHANNELS)
        .map(|i| {
            let metadata = BTreeMap::from([("redline/schema".to_owned(), "EngineRpm".to_owned())]);
            writer
                .add_channel(
                    schema,
                    &format!("vehicle/signal_{i}"),
                    "capnproto",
                    &metadata,
                )
                .expect("channel")
        })
        .collect();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut payload = [0u8; 96];
    let mut messages = 0u64;
    let mut written = 0u64;
    // Raw bytes compress about 1.6:1 with these payloads.
    while written < TARGET_BYTES * 8 / 5 {
        for (n, chunk) in payload.chunks_mut(8).enumerate() {
            // Half noise, half slowly varying values, like sensor readings.
            let value = if n % 2 == 0 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            } else {
                messages / 16 + n as u64
            };
            chunk.copy_from_slice(&value.to_le_bytes());
        }
        let channel = channels[(messages % u64::from(CHANNELS)) as usize];
        let time = 1_700_000_000_000_000_000 + messages * 50_000;
        let header = mcap::records::MessageHeader {
            channel_id: channel,
            sequence: messages as u32,
            log_time: time,
            publish_time: time - 1_000,
        };
        writer
            .write_to_known_channel(&header, &payload)
            .expect("write");
        messages += 1;
        written += payload.len() as u64 + 31;
    }
    writer.finish().expect("finish");
    drop(writer);
    std::fs::metadata(path).expect("bench file").len()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bench.mcap");
    let size = write_part(&path);
    let label = format!("{}MB", size / 1_000_000);

    let report = bag::verify::verify_file(&path).expect("verify");
    assert!(report.is_valid(), "bench file verifies clean");
    let messages = report.message_count;

    let mut verify = c.benchmark_group("verify");
    verify
        .sample_size(10)
        .measurement_time(Duration::from_secs(30))
        .throughput(Throughput::Bytes(size));
    verify.bench_function(format!("zstd/{label}"), |b| {
        b.iter(|| {
            let report = bag::verify::verify_file(black_box(&path)).expect("verify");
            assert_eq!(report.message_count, messages);
        })
    });
    verify.finish();

    let mut read = c.benchmark_group("read");
    read.sample_size(10)
        .measurement_time(Duration::from_secs(30))
        .throughput(Throughput::Bytes(size));
    read.bench_function(format!("zstd/{label}"), |b| {
        b.iter(|| {
            let bytes = std::fs::read(black_box(&path)).expect("read");
            let mut count = 0u64;
            for message in mcap::MessageStream::new(&bytes).expect("stream") {
                black_box(message.expect("message"));
                count += 1;
            }
            assert_eq!(count, messages);
        })
    });
    read.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
