//! The scope's loader on foreign containers against the same messages in MCAP, in the same run
//! (issue 22: a ROS 1 `.bag` and a rosbag2 `.db3` load at least 0.7x as fast as MCAP).
//!
//! `cargo bench -p scope --bench formats`. Groups `load_format/<container>/<messages>`:
//! - `mcap_cdr` vs `db3`: the same CDR messages, in a bag of zstd MCAP parts and in a rosbag2
//!   SQLite file (as `ros2 bag record` writes them: uncompressed rows);
//! - `mcap_ros1` vs `ros1_bag`: the same ROS 1 messages, in MCAP and in an uncompressed `.bag`.
//!
//! Each iteration opens the recording anew and decodes every field of every message into
//! columns, as opening a file in the scope does.
//!
//! Measured (2 cores, medians, each pair one run): a ROS 1 record header walked once per
//! record instead of once per field read: `ros1_bag` vs `mcap_ros1` 103.0 vs 39.8 ms (0.39x)
//! before, 66.7 vs 33.2 ms (0.50x) and 66.6 vs 35.9 ms (0.54x) after.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bag::{BagWriter, ChannelSpec, SchemaSpec, WriteOptions};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use scope::data::loader::{LoadEvent, Loader};
use scope::data::source::{DataSource, RecordingSource};

const MESSAGES: u64 = 400_000;
const TOPICS: u64 = 4;
const T0_NS: u64 = 1_700_000_000_000_000_000;
/// Three fields, the same in both definitions.
const DEFINITION: &str = "float64 x\nfloat64 y\nint32 n\n";
const TYPE_ROS2: &str = "bench_msgs/msg/Sample";
const TYPE_ROS1: &str = "bench_msgs/Sample";

/// Message `i`: (topic index, log time, x, y, n).
fn sample(i: u64) -> (u64, u64, f64, f64, i32) {
    let x = (i as f64 * 0.001).sin();
    (i % TOPICS, T0_NS + i * 250_000, x, x * 2.0, i as i32)
}

fn topic(k: u64) -> String {
    format!("/sensor_{k}")
}

fn ros1_payload(x: f64, y: f64, n: i32) -> Vec<u8> {
    let mut p = Vec::with_capacity(20);
    p.extend(x.to_le_bytes());
    p.extend(y.to_le_bytes());
    p.extend(n.to_le_bytes());
    p
}

/// CDR: encapsulation header (little endian), then the fields at their alignment (offsets from
/// after the header: x at 0, y at 8, n at 16).
fn cdr_payload(x: f64, y: f64, n: i32) -> Vec<u8> {
    let mut p = vec![0u8, 1, 0, 0];
    p.extend(ros1_payload(x, y, n));
    p
}

/// A bag of our own (zstd MCAP parts) holding every message with `encoding`.
fn write_mcap(dir: &Path, ros1: bool) -> PathBuf {
    let path = dir.join(if ros1 { "mcap_ros1" } else { "mcap_cdr" });
    let mut w = BagWriter::create(&path, WriteOptions::new()).expect("create bag");
    let channels: Vec<_> = (0..TOPICS)
        .map(|k| {
            w.add_channel(ChannelSpec {
                topic: topic(k),
                message_encoding: if ros1 { "ros1" } else { "cdr" }.into(),
                schema: Some(SchemaSpec {
                    name: if ros1 { TYPE_ROS1 } else { TYPE_ROS2 }.into(),
                    encoding: if ros1 { "ros1msg" } else { "ros2msg" }.into(),
                    data: DEFINITION.as_bytes().to_vec(),
                }),
                metadata: Default::default(),
            })
        })
        .collect();
    for i in 0..MESSAGES {
        let (k, t, x, y, n) = sample(i);
        let payload = if ros1 {
            ros1_payload(x, y, n)
        } else {
            cdr_payload(x, y, n)
        };
        w.write(channels[k as usize], t, Some(t), &payload)
            .expect("write");
    }
    w.close().expect("close");
    path
}

/// A rosbag2 SQLite file as rosbag2 writes it (one transaction; rows in time order).
fn write_db3(dir: &Path) -> PathBuf {
    let path = dir.join("db3");
    std::fs::create_dir(&path).expect("dir");
    let mut conn = rusqlite::Connection::open(path.join("db3_0.db3")).expect("create");
    conn.execute_batch(bag::sqlite_part::ROSBAG2_TABLES)
        .expect("tables");
    let tx = conn.transaction().expect("transaction");
    tx.execute(
        "INSERT INTO message_definitions VALUES (1, ?1, 'ros2msg', ?2, '')",
        [TYPE_ROS2, DEFINITION],
    )
    .expect("definition");
    for k in 0..TOPICS {
        tx.execute(
            "INSERT INTO topics VALUES (?1, ?2, ?3, 'cdr', '', '')",
            rusqlite::params![k as i64 + 1, topic(k), TYPE_ROS2],
        )
        .expect("topic");
    }
    {
        let mut insert = tx
            .prepare("INSERT INTO messages (topic_id, timestamp, data) VALUES (?1, ?2, ?3)")
            .expect("prepare");
        for i in 0..MESSAGES {
            let (k, t, x, y, n) = sample(i);
            insert
                .execute(rusqlite::params![
                    k as i64 + 1,
                    t as i64,
                    cdr_payload(x, y, n)
                ])
                .expect("insert");
        }
    }
    tx.commit().expect("commit");
    path
}

fn ros1_field(name: &str, value: &[u8]) -> Vec<u8> {
    let mut f = ((name.len() + 1 + value.len()) as u32)
        .to_le_bytes()
        .to_vec();
    f.extend(name.as_bytes());
    f.push(b'=');
    f.extend(value);
    f
}

fn ros1_record(header: &[Vec<u8>], data: &[u8]) -> Vec<u8> {
    let header = header.concat();
    let mut r = (header.len() as u32).to_le_bytes().to_vec();
    r.extend(header);
    r.extend((data.len() as u32).to_le_bytes());
    r.extend(data);
    r
}

fn ros1_time(t: u64) -> Vec<u8> {
    let mut time = ((t / 1_000_000_000) as u32).to_le_bytes().to_vec();
    time.extend(((t % 1_000_000_000) as u32).to_le_bytes());
    time
}

/// A ROS 1 bag (format 2.0) of uncompressed chunks of about 768 KiB, as `rosbag record`
/// writes them: each chunk followed by its index data records, the connections and chunk
/// infos in the index section at the end, and the bag header (padded to 4 KiB) pointing there.
fn write_ros1_bag(dir: &Path) -> PathBuf {
    let path = dir.join("drive.bag");
    let connection = |k: u64| {
        ros1_record(
            &[
                ros1_field("op", &[0x07]),
                ros1_field("conn", &(k as u32).to_le_bytes()),
                ros1_field("topic", topic(k).as_bytes()),
            ],
            &[
                ros1_field("topic", topic(k).as_bytes()),
                ros1_field("type", TYPE_ROS1.as_bytes()),
                ros1_field("md5sum", b"0123456789abcdef0123456789abcdef"),
                ros1_field("message_definition", DEFINITION.as_bytes()),
            ]
            .concat(),
        )
    };
    let header_record = |index_pos: u64, chunks: u32| {
        let header = [
            ros1_field("op", &[0x03]),
            ros1_field("index_pos", &index_pos.to_le_bytes()),
            ros1_field("conn_count", &(TOPICS as u32).to_le_bytes()),
            ros1_field("chunk_count", &chunks.to_le_bytes()),
        ]
        .concat();
        ros1_record(
            std::slice::from_ref(&header),
            &vec![b' '; 4096 - 8 - header.len()],
        )
    };
    let mut bag = b"#ROSBAG V2.0\n".to_vec();
    bag.extend(header_record(0, 0));
    // Per chunk: (position, first and last time, per connection (time, offset in the chunk)).
    type Entries = Vec<Vec<(u64, u32)>>;
    let mut infos: Vec<(u64, u64, u64, Entries)> = Vec::new();
    let mut chunk: Vec<u8> = (0..TOPICS).flat_map(connection).collect();
    let mut entries: Entries = vec![Vec::new(); TOPICS as usize];
    let flush = |bag: &mut Vec<u8>, chunk: &mut Vec<u8>, entries: &mut Entries| {
        let position = bag.len() as u64;
        bag.extend(ros1_record(
            &[
                ros1_field("op", &[0x05]),
                ros1_field("compression", b"none"),
                ros1_field("size", &(chunk.len() as u32).to_le_bytes()),
            ],
            chunk,
        ));
        for (k, list) in entries.iter().enumerate().filter(|(_, l)| !l.is_empty()) {
            let data: Vec<u8> = list
                .iter()
                .flat_map(|&(t, offset)| [ros1_time(t), offset.to_le_bytes().to_vec()].concat())
                .collect();
            bag.extend(ros1_record(
                &[
                    ros1_field("op", &[0x04]),
                    ros1_field("ver", &1u32.to_le_bytes()),
                    ros1_field("conn", &(k as u32).to_le_bytes()),
                    ros1_field("count", &(list.len() as u32).to_le_bytes()),
                ],
                &data,
            ));
        }
        let times = entries.iter().flatten().map(|e| e.0);
        let (first, last) = (times.clone().min().unwrap_or(0), times.max().unwrap_or(0));
        chunk.clear();
        (
            position,
            first,
            last,
            std::mem::replace(entries, vec![Vec::new(); TOPICS as usize]),
        )
    };
    for i in 0..MESSAGES {
        let (k, t, x, y, n) = sample(i);
        if let Some(list) = entries.get_mut(k as usize) {
            list.push((t, chunk.len() as u32));
        }
        chunk.extend(ros1_record(
            &[
                ros1_field("op", &[0x02]),
                ros1_field("conn", &(k as u32).to_le_bytes()),
                ros1_field("time", &ros1_time(t)),
            ],
            &ros1_payload(x, y, n),
        ));
        if chunk.len() >= 768 * 1024 {
            infos.push(flush(&mut bag, &mut chunk, &mut entries));
        }
    }
    if !chunk.is_empty() {
        infos.push(flush(&mut bag, &mut chunk, &mut entries));
    }
    let index_pos = bag.len() as u64;
    for k in 0..TOPICS {
        bag.extend(connection(k));
    }
    for (position, first, last, per_connection) in &infos {
        let counts: Vec<u8> = per_connection
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.is_empty())
            .flat_map(|(k, l)| [(k as u32).to_le_bytes(), (l.len() as u32).to_le_bytes()].concat())
            .collect();
        bag.extend(ros1_record(
            &[
                ros1_field("op", &[0x06]),
                ros1_field("ver", &1u32.to_le_bytes()),
                ros1_field("chunk_pos", &position.to_le_bytes()),
                ros1_field("start_time", &ros1_time(*first)),
                ros1_field("end_time", &ros1_time(*last)),
                ros1_field("count", &((counts.len() / 8) as u32).to_le_bytes()),
            ],
            &counts,
        ));
    }
    let header = header_record(index_pos, infos.len() as u32);
    bag.splice(13..13 + header.len(), header);
    std::fs::write(&path, bag).expect("write bag");
    path
}

/// Opens `path` and loads every topic; the numeric samples decoded.
fn load(path: &Path) -> usize {
    let source: Arc<dyn DataSource> = Arc::new(RecordingSource::open(path).expect("open"));
    let loader = Loader::start(source, Arc::new(|| {}));
    let mut samples = 0;
    while let Some(event) = loader.wait_event() {
        match event {
            LoadEvent::Topic { data: Ok(d), .. } => samples += d.sample_count(),
            LoadEvent::Topic { data: Err(e), .. } => panic!("a topic failed to load: {e}"),
            LoadEvent::Finished { .. } => break,
        }
    }
    samples
}

fn load_format(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let recordings = [
        ("mcap_cdr", write_mcap(dir.path(), false)),
        ("db3", write_db3(dir.path())),
        ("mcap_ros1", write_mcap(dir.path(), true)),
        ("ros1_bag", write_ros1_bag(dir.path())),
    ];
    // Every container yields every sample (x, y, n and nothing else) before anything is timed.
    for (name, path) in &recordings {
        assert_eq!(load(path), MESSAGES as usize * 3, "{name}");
    }
    // The ROS 1 bag opens from its index section, as a bag `rosbag record` closed does.
    let ros1 = bag::BagReader::open(&recordings[3].1).expect("open");
    assert!(!ros1.parts()[0].counted_by_scan, "the .bag was scanned");
    let mut group = c.benchmark_group("load_format");
    group.sample_size(10);
    group.throughput(Throughput::Elements(MESSAGES));
    for (name, path) in &recordings {
        group.bench_function(format!("{name}/{MESSAGES}"), |b| {
            b.iter(|| black_box(load(path)));
        });
    }
    group.finish();
}

criterion_group!(benches, load_format);
criterion_main!(benches);
