//! Benchmarks: frame cost against samples in view, memory per sample, loader throughput.
//!
//! `cargo bench -p scope`; groups are `frame/<mode>/<samples>`, `cursors/<what>/<samples>`,
//! `load/<mode>/<messages>` and `load_ros2/<mode>/<messages>`. Memory per sample is printed
//! (criterion measures time only). `SCOPE_BENCH=frame`, `cursors`, `load` or `ros2` runs that
//! group alone (the loading group's set-up writes and reads a 600 s bag; `ros2`'s writes a
//! ROS 2 recording of 1.1M messages).

use std::hint::black_box;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use egui_plot::{Line, Plot, PlotPoint, PlotPoints, Points};
use mcap::sans_io::indexed_reader::{IndexedReadEvent, IndexedReader};
use scope::data::envelope::{Draw, Trace, Window, trace};
use scope::data::loader::{LoadEvent, Loader};
use scope::data::range_stats::{RangeIndex, scan_range};
use scope::data::series::{Series, SeriesBuilder};
use scope::data::source::{DataSource, RecordingSource};
use scope::data::topic_data::{gap_threshold, time_levels};
use scope::demo::{DemoOptions, write_demo};

const WIDTH_PX: usize = 1200;

/// A topic of `n` samples at 1 MHz with what real data has: a silence of 50 periods after
/// every 9,973rd sample (gaps by the Health panel's rule) and a burst of 64 samples within a
/// microsecond every 100,003 samples; its values a sine with noise, with some absent.
fn gappy(n: usize) -> (Vec<u64>, Series) {
    let mut t = 0u64;
    let times: Vec<u64> = (0..n)
        .map(|i| {
            t += if i % 9_973 == 9_972 {
                50_000
            } else if i % 100_003 < 64 {
                10
            } else {
                1_000
            };
            t
        })
        .collect();
    let mut b = SeriesBuilder::default();
    for i in 0..n {
        let x = i as f64 / n as f64;
        b.push(if i % 50_021 == 7 {
            f64::NAN
        } else {
            (x * 50.0).sin() * 100.0 + (i % 7) as f64
        });
    }
    (times, b.finish())
}

/// A second topic over the same span, `m` samples at irregular times.
fn second_topic(m: usize, span_ns: u64) -> (Vec<u64>, Series) {
    let m = m.max(4);
    let times: Vec<u64> = (0..m as u64)
        .map(|i| i * span_ns / m as u64 + (i * 7_919) % 1_000)
        .collect();
    let mut b = SeriesBuilder::default();
    for i in 0..m {
        b.push(((i * 31) % 17) as f64);
    }
    (times, b.finish())
}

/// Samples of the slow topic drawn beside the dense one: fewer than the plot has pixel
/// columns at every size, so it draws as steps and lone points, as a slow topic does.
const SLOW_SAMPLES: usize = 500;

/// One full egui frame: a plot of the given traces (lines and points), run and tessellated.
fn frame(ctx: &egui::Context, traces: &[&Trace<PlotPoint>]) -> usize {
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(WIDTH_PX as f32 + 80.0, 400.0),
        )),
        ..Default::default()
    };
    let out = ctx.run_ui(input, |ui| {
        egui::CentralPanel::default().show(ui, |ui| {
            Plot::new("bench").show(ui, |p| {
                for (si, t) in traces.iter().enumerate() {
                    for (ri, run) in t.lines().enumerate() {
                        p.line(
                            Line::new("signal", PlotPoints::Borrowed(run))
                                .id(("run", si, ri))
                                .allow_band(false),
                        );
                    }
                    if !t.dots.is_empty() {
                        p.points(
                            Points::new("signal", PlotPoints::Borrowed(t.dots.as_slice()))
                                .id(("dots", si)),
                        );
                    }
                }
            });
        });
    });
    ctx.tessellate(out.shapes, out.pixels_per_point).len()
}

fn frames(c: &mut Criterion) {
    if !runs("frame") {
        return;
    }
    let ctx = egui::Context::default();
    let mut group = c.benchmark_group("frame");
    group.sample_size(20);
    for n in [10_000usize, 100_000_000] {
        let (times, series) = gappy(n);
        let span_ns = times.last().copied().unwrap_or(1);
        let levels = time_levels(&times);
        let gap = gap_threshold(&times);
        let window = Window::new(0, (0.0, span_ns as f64 / 1e9), WIDTH_PX).expect("window");
        // Beside the dense topic: `envelope` a slow topic (the same drawing at both sizes,
        // so the ratio is the cost of the samples alone); `envelope_thinned` a topic of one
        // sample in 1,000 of the dense one's count (10 samples at 10k, 100,000 filling every
        // column at 100M: more to draw at the larger size).
        for (name, m) in [("envelope", SLOW_SAMPLES), ("envelope_thinned", n / 1_000)] {
            let (other_times, other_series) = second_topic(m, span_ns);
            let other_levels = time_levels(&other_times);
            let other_gap = gap_threshold(&other_times);
            let (mut dense, mut other) = (Trace::default(), Trace::default());
            group.bench_function(format!("{name}/{n}"), |b| {
                b.iter(|| {
                    // Worst case: the window moved, so both traces are recomputed every frame.
                    trace(
                        &times,
                        &levels,
                        &series,
                        gap,
                        &window,
                        Draw::Linear,
                        &mut dense,
                    );
                    trace(
                        &other_times,
                        &other_levels,
                        &other_series,
                        other_gap,
                        &window,
                        Draw::Step,
                        &mut other,
                    );
                    black_box(frame(&ctx, &[&dense, &other]))
                });
            });
        }
    }
    for n in [1_000_000usize, 10_000_000] {
        let (times, series) = gappy(n);
        let all: Vec<PlotPoint> = times
            .iter()
            .enumerate()
            .map(|(i, &t)| PlotPoint::new(t as f64 / 1e9, series.value(i).unwrap_or(f64::NAN)))
            .collect();
        let mut one = Trace::default();
        one.points = all;
        one.runs.push(0..one.points.len());
        group.bench_function(format!("egui_plot_all/{n}"), |b| {
            b.iter(|| black_box(frame(&ctx, &[&one])));
        });
    }
    group.finish();
}

fn demo_bag(secs: f64) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("drive");
    write_demo(
        &path,
        DemoOptions {
            duration_secs: secs,
            part_secs: secs / 2.0,
            tear_fraction: 0.0,
            ..DemoOptions::default()
        },
    )
    .expect("demo");
    (dir, path)
}

/// Single-threaded mcap IndexedReader iteration over every part (or the one file), no
/// decoding.
fn mcap_iterate(bag: &std::path::Path) -> usize {
    let mut count = 0;
    let mut parts: Vec<_> = if bag.is_file() {
        vec![bag.to_path_buf()]
    } else {
        std::fs::read_dir(bag)
            .expect("dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "mcap"))
            .collect()
    };
    parts.sort();
    for part in parts {
        let bytes = std::fs::read(&part).expect("read");
        let summary = mcap::Summary::read(&bytes)
            .expect("summary")
            .expect("has summary");
        let mut reader = IndexedReader::new(&summary).expect("reader");
        let mut file = std::fs::File::open(&part).expect("open");
        let mut chunk = Vec::new();
        while let Some(event) = reader.next_event() {
            match event.expect("event") {
                IndexedReadEvent::ReadChunkRequest { offset, length } => {
                    chunk.resize(length, 0);
                    file.seek(SeekFrom::Start(offset)).expect("seek");
                    file.read_exact(&mut chunk).expect("read");
                    reader
                        .insert_chunk_record_data(offset, &chunk)
                        .expect("insert");
                }
                IndexedReadEvent::Message { data, .. } => {
                    count += 1;
                    black_box(data);
                }
            }
        }
    }
    count
}

fn load(source: Arc<dyn DataSource>) -> usize {
    let loader = Loader::start(source, Arc::new(|| {}));
    let mut samples = 0;
    while let Some(event) = loader.wait_event() {
        match event {
            LoadEvent::Topic { data: Ok(d), .. } => samples += d.sample_count(),
            LoadEvent::Topic { .. } => {}
            LoadEvent::Finished { .. } => break,
        }
    }
    samples
}

/// Loads the recording at `path` and prints the memory per numeric sample after loading, per
/// topic and in all (criterion measures time only).
fn print_memory(path: &std::path::Path) {
    let source: Arc<dyn DataSource> = Arc::new(RecordingSource::open(path).expect("open"));
    let loader = Loader::start(Arc::clone(&source), Arc::new(|| {}));
    let (mut bytes, mut samples) = (0usize, 0usize);
    while let Some(event) = loader.wait_event() {
        match event {
            LoadEvent::Topic { topic, data: Ok(d) } => {
                let name = &source.summary().topics[topic].topic;
                eprintln!(
                    "memory/{name}: {} fields x {} messages: {:.2} bytes per numeric sample",
                    d.fields.len(),
                    d.times_ns.len(),
                    d.heap_bytes() as f64 / d.sample_count().max(1) as f64
                );
                bytes += d.heap_bytes();
                samples += d.sample_count();
            }
            LoadEvent::Topic {
                topic,
                data: Err(e),
            } => {
                eprintln!("memory/{topic}: not loaded: {e}");
            }
            LoadEvent::Finished { .. } => break,
        }
    }
    eprintln!(
        "memory/all: {samples} numeric samples: {:.2} bytes each",
        bytes as f64 / samples.max(1) as f64
    );
}

/// Whether `SCOPE_BENCH` leaves group `name` to run (unset: every group).
fn runs(name: &str) -> bool {
    std::env::var("SCOPE_BENCH").map_or(true, |v| v == name)
}

/// The cursors' range statistics on a column of 100M samples (issue 23: dragging a cursor
/// redraws within a frame): one query per iteration, its range moved each time as a drag
/// moves it, against the O(samples) scan it replaces on a range of 1M.
fn cursors(c: &mut Criterion) {
    if !runs("cursors") {
        return;
    }
    let mut group = c.benchmark_group("cursors");
    group.sample_size(20);
    let n = 100_000_000usize;
    let (times, series) = gappy(n);
    let start = std::time::Instant::now();
    let index = RangeIndex::build(&times, &series);
    eprintln!(
        "cursors: summary of {n} samples built in {:.2} s, {:.3} bytes per sample",
        start.elapsed().as_secs_f64(),
        index.heap_bytes() as f64 / n as f64
    );
    let span = times.last().copied().unwrap_or(1);
    let mut k = 0u64;
    group.bench_function(format!("range_stats_query/{n}"), |b| {
        b.iter(|| {
            // A drag across the recording: A fixed near the start, B moving.
            k = (k + 7_919) % 10_000;
            let t_b = span / 10 + (span / 12_000) * k;
            black_box(index.query(&times, &series, span / 20, t_b))
        });
    });
    let one_m = times.get(1_000_000).copied().unwrap_or(span);
    group.bench_function("range_stats_scan/1000000", |b| {
        b.iter(|| black_box(scan_range(&times, &series, 0, one_m)));
    });
    group.finish();
}

fn loading(c: &mut Criterion) {
    if !runs("load") {
        return;
    }
    let (_dir, bag) = demo_bag(600.0);
    let messages = mcap_iterate(&bag);
    print_memory(&bag);
    let mut group = c.benchmark_group("load");
    group.sample_size(10);
    group.bench_function(format!("mcap_indexed_iterate/{messages}"), |b| {
        b.iter(|| black_box(mcap_iterate(&bag)));
    });
    // Opened anew each time, as the baseline reads each part anew: nothing read by an earlier
    // load (part summaries) is reused.
    group.bench_function(format!("scope_loader_decode/{messages}"), |b| {
        b.iter(|| {
            let source: Arc<dyn DataSource> = Arc::new(RecordingSource::open(&bag).expect("open"));
            black_box(load(source))
        });
    });
    group.finish();
}

/// ROS 2 message definitions as rosbag2 and the Python writer store them (`ros2msg`: the
/// type, then each dependency after a line of `=`).
const IMU_MSG: &str = "std_msgs/Header header\ngeometry_msgs/Quaternion orientation\n\
float64[9] orientation_covariance\ngeometry_msgs/Vector3 angular_velocity\n\
float64[9] angular_velocity_covariance\ngeometry_msgs/Vector3 linear_acceleration\n\
float64[9] linear_acceleration_covariance\n\
================================================================================\n\
MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n\
================================================================================\n\
MSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w\n\
================================================================================\n\
MSG: geometry_msgs/Vector3\nfloat64 x\nfloat64 y\nfloat64 z\n";
const JOINT_STATE_MSG: &str = "std_msgs/Header header\nstring[] name\nfloat64[] position\n\
float64[] velocity\nfloat64[] effort\n\
================================================================================\n\
MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n";

/// Little-endian CDR, values aligned to their size from the end of the 4-byte header.
struct Cdr(Vec<u8>);

impl Cdr {
    fn new() -> Self {
        Cdr(vec![0, 1, 0, 0])
    }

    fn put<const N: usize>(&mut self, b: [u8; N]) {
        while !(self.0.len() - 4).is_multiple_of(N) {
            self.0.push(0);
        }
        self.0.extend(b);
    }

    fn string(&mut self, s: &str) {
        self.put((s.len() as u32 + 1).to_le_bytes());
        self.0.extend(s.as_bytes());
        self.0.push(0);
    }

    fn header(&mut self, t_ns: u64, frame: &str) {
        self.put(((t_ns / 1_000_000_000) as i32).to_le_bytes());
        self.put(((t_ns % 1_000_000_000) as u32).to_le_bytes());
        self.string(frame);
    }

    fn f64s(&mut self, values: impl IntoIterator<Item = f64>) {
        for v in values {
            self.put(v.to_le_bytes());
        }
    }
}

/// Issue 21's workload: 1,000,000 `sensor_msgs/msg/Imu` at 1 kHz and 100,000
/// `sensor_msgs/msg/JointState` (6 joints) at 100 Hz, CDR, in 4 MiB zstd chunks, one MCAP file
/// with profile `ros2`, as the Python writer and rosbag2 write them.
fn ros2_recording(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("ros2.mcap");
    let file = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    let mut w = mcap::WriteOptions::new()
        .profile("ros2")
        .compression(Some(mcap::Compression::Zstd))
        .chunk_size(Some(4 << 20))
        .create(file)
        .expect("writer");
    let imu_schema = w
        .add_schema("sensor_msgs/msg/Imu", "ros2msg", IMU_MSG.as_bytes())
        .expect("schema");
    let js_schema = w
        .add_schema(
            "sensor_msgs/msg/JointState",
            "ros2msg",
            JOINT_STATE_MSG.as_bytes(),
        )
        .expect("schema");
    let imu = w
        .add_channel(imu_schema, "/imu", "cdr", &Default::default())
        .expect("channel");
    let joints = w
        .add_channel(js_schema, "/joint_states", "cdr", &Default::default())
        .expect("channel");
    let t0 = 1_700_000_000_000_000_000u64;
    let names = ["hip", "knee", "ankle", "shoulder", "elbow", "wrist"];
    for i in 0..1_000_000u64 {
        let t = t0 + i * 1_000_000;
        let x = i as f64 * 1e-3;
        let mut m = Cdr::new();
        m.header(t, "imu_link");
        m.f64s([x.sin() * 0.1, x.cos() * 0.1, 0.0, 1.0]);
        m.f64s([0.01, 0.0, 0.0, 0.0, 0.01, 0.0, 0.0, 0.0, 0.01]);
        m.f64s([(x * 3.0).sin(), (x * 5.0).cos(), (x * 0.5).sin() * 0.2]);
        m.f64s([0.001, 0.0, 0.0, 0.0, 0.001, 0.0, 0.0, 0.0, 0.001]);
        m.f64s([
            (x * 7.0).sin() * 2.0,
            (x * 11.0).cos() * 2.0,
            9.81 + (x * 13.0).sin() * 0.05,
        ]);
        m.f64s([0.05, 0.0, 0.0, 0.0, 0.05, 0.0, 0.0, 0.0, 0.05]);
        let header = |channel_id, sequence| mcap::records::MessageHeader {
            channel_id,
            sequence,
            log_time: t,
            publish_time: t,
        };
        w.write_to_known_channel(&header(imu, i as u32), &m.0)
            .expect("write");
        if i % 10 == 0 {
            let mut m = Cdr::new();
            m.header(t, "base_link");
            m.put(6u32.to_le_bytes());
            for n in names {
                m.string(n);
            }
            for k in 0..3 {
                m.put(6u32.to_le_bytes());
                m.f64s((0..6).map(|j| (x * (k + 1) as f64 + j as f64).sin()));
            }
            w.write_to_known_channel(&header(joints, (i / 10) as u32), &m.0)
                .expect("write");
        }
    }
    w.finish().expect("finish");
    path
}

/// Issue 21 section 6: the loader (open, decode every numeric field into columns, all cores)
/// against single-threaded IndexedReader iteration of the same ROS 2 file, and the memory per
/// numeric sample after loading.
fn loading_ros2(c: &mut Criterion) {
    if !runs("ros2") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ros2_recording(dir.path());
    let messages = mcap_iterate(&path);
    assert_eq!(messages, 1_100_000);
    print_memory(&path);
    let mut group = c.benchmark_group("load_ros2");
    group.sample_size(10);
    group.bench_function(format!("mcap_indexed_iterate/{messages}"), |b| {
        b.iter(|| black_box(mcap_iterate(&path)));
    });
    group.bench_function(format!("scope_loader_decode/{messages}"), |b| {
        b.iter(|| {
            let source: Arc<dyn DataSource> = Arc::new(RecordingSource::open(&path).expect("open"));
            black_box(load(source))
        });
    });
    group.finish();
}

criterion_group!(benches, frames, cursors, loading, loading_ros2);
criterion_main!(benches);
