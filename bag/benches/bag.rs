//! Bag write, read and info speed, each against a baseline measured in the same run.
//!
//! - `write/*`: BagWriter vs a bare `mcap::Writer` with the same compression and chunk size.
//! - `read/*`: BagReader's merged cursor vs mcap's `sans_io::IndexedReader` on the same file.
//! - `info/*`: opening a recording (summaries and index only) at 2 MB and 2 GB.
//! - `info/listed_parts/*`: opening a bag whose index lists 6,000 and 60,000 parts (all but one
//!   missing): linear, so the second takes about ten times the first (issue 24 item 14: it
//!   took 9.6 s at 60,000 when each name was looked up in a list).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom};
use std::path::Path;

use bag::{BagReader, BagWriter, ChannelSpec, Compression, ReadFilter, WriteOptions};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

const MESSAGES: u64 = 100_000;
const PAYLOAD: usize = 238;
const CHUNK: u64 = 4 * 1024 * 1024;

fn payload(i: u64) -> Vec<u8> {
    (0..PAYLOAD)
        .map(|k| ((i as usize * 7 + k / 8) % 251) as u8)
        .collect()
}

fn spec() -> ChannelSpec {
    ChannelSpec::capnp("car/imu", "Imu", "imu.capnp:Imu", vec![1u8; 600])
}

fn write_bag(dir: &Path, n: u64, compression: Compression, payload_len: usize) {
    let mut w = BagWriter::create(
        dir,
        WriteOptions::new()
            .compression(compression)
            .chunk_size_bytes(CHUNK),
    )
    .unwrap();
    let ch = w.add_channel(spec());
    let data = vec![0x5Au8; payload_len];
    for i in 0..n {
        w.write(ch, i * 1_000, Some(i * 1_000), &data).unwrap();
    }
    w.close().unwrap();
}

fn bench_write(c: &mut Criterion) {
    let payloads: Vec<Vec<u8>> = (0..MESSAGES).map(payload).collect();
    let mut group = c.benchmark_group("write");
    group.sample_size(10);
    group.throughput(Throughput::Elements(MESSAGES));
    for (name, compression, mcap_compression) in [
        ("zstd", Compression::Zstd, Some(mcap::Compression::Zstd)),
        ("lz4", Compression::Lz4, Some(mcap::Compression::Lz4)),
    ] {
        group.bench_function(format!("bag/{name}/100k"), |b| {
            b.iter_batched(
                || tempfile::tempdir().unwrap(),
                |tmp| {
                    let mut w = BagWriter::create(
                        tmp.path().join("b"),
                        WriteOptions::new()
                            .compression(compression)
                            .chunk_size_bytes(CHUNK),
                    )
                    .unwrap();
                    let ch = w.add_channel(spec());
                    for (i, p) in payloads.iter().enumerate() {
                        w.write(ch, i as u64 * 1_000, Some(i as u64), p).unwrap();
                    }
                    w.close().unwrap();
                    tmp
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_function(format!("mcap/{name}/100k"), |b| {
            b.iter_batched(
                || tempfile::tempdir().unwrap(),
                |tmp| {
                    let file = File::create(tmp.path().join("m.mcap")).unwrap();
                    let mut w = mcap::WriteOptions::new()
                        .compression(mcap_compression)
                        .chunk_size(Some(CHUNK))
                        .compression_threads(0)
                        .create(BufWriter::new(file))
                        .unwrap();
                    let s = spec();
                    let schema = s.schema.unwrap();
                    let sid = w
                        .add_schema(&schema.name, &schema.encoding, &schema.data)
                        .unwrap();
                    let cid = w
                        .add_channel(sid, &s.topic, &s.message_encoding, &BTreeMap::new())
                        .unwrap();
                    for (i, p) in payloads.iter().enumerate() {
                        let header = mcap::records::MessageHeader {
                            channel_id: cid,
                            sequence: i as u32,
                            log_time: i as u64 * 1_000,
                            publish_time: i as u64,
                        };
                        w.write_to_known_channel(&header, p).unwrap();
                    }
                    w.finish().unwrap();
                    tmp
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

fn bench_read(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    write_bag(&dir, MESSAGES * 5, Compression::Zstd, PAYLOAD);
    let part = dir.join("r_0.mcap");
    let mut group = c.benchmark_group("read");
    group.sample_size(10);
    group.throughput(Throughput::Elements(MESSAGES * 5));
    group.bench_function("bag/zstd/500k", |b| {
        b.iter(|| {
            let reader = BagReader::open(&dir).unwrap();
            let mut cursor = reader.messages(&ReadFilter::all()).unwrap();
            let mut bytes = 0usize;
            while let Some(m) = cursor.next_message() {
                bytes += m.data.len();
            }
            bytes
        })
    });
    group.bench_function("mcap_indexed/zstd/500k", |b| {
        b.iter(|| {
            let mut file = File::open(&part).unwrap();
            let size = file.metadata().unwrap().len();
            let summary = {
                let mut r = mcap::sans_io::summary_reader::SummaryReader::new_with_options(
                    mcap::sans_io::summary_reader::SummaryReaderOptions::default()
                        .with_file_size(size),
                );
                while let Some(event) = r.next_event() {
                    match event.unwrap() {
                        mcap::sans_io::summary_reader::SummaryReadEvent::ReadRequest(n) => {
                            let got = file.read(r.insert(n)).unwrap();
                            r.notify_read(got);
                        }
                        mcap::sans_io::summary_reader::SummaryReadEvent::SeekRequest(to) => {
                            let pos = file.seek(to).unwrap();
                            r.notify_seeked(pos);
                        }
                    }
                }
                r.finish().unwrap()
            };
            let mut reader = mcap::sans_io::indexed_reader::IndexedReader::new(&summary).unwrap();
            let mut buf = Vec::new();
            let mut bytes = 0usize;
            while let Some(event) = reader.next_event() {
                match event.unwrap() {
                    mcap::sans_io::indexed_reader::IndexedReadEvent::ReadChunkRequest {
                        offset,
                        length,
                    } => {
                        file.seek(SeekFrom::Start(offset)).unwrap();
                        buf.resize(length, 0);
                        file.read_exact(&mut buf).unwrap();
                        reader.insert_chunk_record_data(offset, &buf).unwrap();
                    }
                    mcap::sans_io::indexed_reader::IndexedReadEvent::Message { data, .. } => {
                        bytes += data.len();
                    }
                }
            }
            bytes
        })
    });
    group.finish();
}

fn bench_info(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let small = tmp.path().join("small");
    let large = tmp.path().join("large");
    // 4 KiB payloads, uncompressed: about 2 MB and 2 GB on disk.
    write_bag(&small, 500, Compression::None, 4096);
    write_bag(&large, 500_000, Compression::None, 4096);
    let mut group = c.benchmark_group("info");
    group.sample_size(20);
    for (name, dir) in [("2MB", &small), ("2GB", &large)] {
        group.bench_function(format!("open/none/{name}"), |b| {
            b.iter(|| {
                let r = BagReader::open(dir).unwrap();
                (r.message_count(), r.time_range_ns(), r.channels().len())
            })
        });
    }
    group.finish();
}

fn bench_listed_parts(c: &mut Criterion) {
    let mut group = c.benchmark_group("info");
    group.sample_size(10);
    for listed in [6_000usize, 60_000] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("bag");
        write_bag(&dir, 1_000, Compression::Zstd, PAYLOAD);
        let mut m = bag::Metadata::load(&dir.join("metadata.yaml")).unwrap();
        let paths = &mut m.rosbag2_bagfile_information.relative_file_paths;
        paths.extend((1..listed).map(|i| format!("gone_{i}.mcap")));
        m.store_atomically(&dir).unwrap();
        group.bench_function(format!("listed_parts/{listed}"), |b| {
            b.iter(|| BagReader::open(&dir).unwrap().parts().len())
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    bench_write,
    bench_read,
    bench_info,
    bench_listed_parts
);
criterion_main!(benches);
