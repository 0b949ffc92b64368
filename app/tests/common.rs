//! Helpers shared by the app's tests: a bag to open, the app in a kittest harness as eframe
//! runs it, injected file dialogs, and (from the bag library's tests) ports, polling and the
//! oracle data. Not every test uses every helper.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bag::{BagWriter, ChannelId, ChannelSpec, SchemaSpec, WriteOptions};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scope::Scope;
use scope::app::open::PickPath;

#[path = "../../bag/tests/common.rs"]
mod bag_common;
// Not every test file uses every helper.
#[allow(unused_imports)]
pub use bag_common::{free_port, oracle_dir, python_can_import, run_python_peer, wait_until};

/// The log time the test bags start at.
pub const T0: u64 = 1_700_000_000_000_000_000;

/// Writes a bag with an engine topic (50 Hz) and an IMU topic (100 Hz) for `secs` seconds,
/// rolling parts every `part_secs`.
pub fn write_bag(dir: &Path, secs: f64, part_secs: f64, dropped: u64) -> PathBuf {
    let path = dir.join("drive");
    let options = WriteOptions::new().part_max_duration_ns(Some((part_secs * 1e9) as u64));
    let mut w = BagWriter::create(&path, options).expect("create bag");
    let engine = add_registry_channel(&mut w, "car/engine", "EngineRpm");
    let imu = add_registry_channel(&mut w, "car/imu", "Imu");
    let mut t = 0.0;
    let mut seq = 0u64;
    while t < secs {
        let log = T0 + (t * 1e9) as u64;
        if seq.is_multiple_of(2) {
            let bytes = schemas::sample::encode("EngineRpm", t, seq / 2).expect("encode");
            w.write(engine, log, Some(log - 1_000_000), &bytes)
                .expect("write");
        }
        let bytes = schemas::sample::encode("Imu", t, seq).expect("encode");
        w.write(imu, log + 1, Some(log - 2_000_000), &bytes)
            .expect("write");
        seq += 1;
        t += 0.01;
    }
    w.add_dropped(dropped);
    w.advertise("car/camera", "DiagnosticLog");
    w.close().expect("close");
    path
}

/// Adds a channel for `topic` with the registry schema `name` (e.g. `EngineRpm`).
pub fn add_registry_channel(w: &mut BagWriter, topic: &str, name: &str) -> ChannelId {
    let info = schemas::by_name(name).expect("registered");
    w.add_channel(ChannelSpec::capnp(
        topic,
        info.registry_name,
        info.capnp_name,
        info.descriptor,
    ))
}

/// Writes a bag with an engine topic (50 Hz) and an IMU topic (100 Hz) for `secs` seconds,
/// in one part, with nothing lost.
pub fn write_plain_bag(dir: &Path, secs: f64) -> PathBuf {
    let path = dir.join("drive");
    let mut w = BagWriter::create(&path, WriteOptions::new()).expect("create bag");
    let engine = add_registry_channel(&mut w, "car/engine", "EngineRpm");
    let imu = add_registry_channel(&mut w, "car/imu", "Imu");
    let mut seq = 0u64;
    while (seq as f64) * 0.01 < secs {
        let t = seq as f64 * 0.01;
        let log = T0 + seq * 10_000_000;
        if seq.is_multiple_of(2) {
            let bytes = schemas::sample::encode("EngineRpm", t, seq / 2).expect("encode");
            w.write(engine, log, Some(log - 1_000_000), &bytes)
                .expect("write");
        }
        let bytes = schemas::sample::encode("Imu", t, seq).expect("encode");
        w.write(imu, log + 1, Some(log - 2_000_000), &bytes)
            .expect("write");
        seq += 1;
    }
    w.close().expect("close");
    path
}

/// The `.mcap` parts of a bag directory, in name order.
pub fn parts_of(bag: &Path) -> Vec<PathBuf> {
    let mut parts: Vec<PathBuf> = std::fs::read_dir(bag)
        .expect("read bag dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "mcap"))
        .collect();
    parts.sort();
    parts
}

/// A file dialog that always picks `path`.
pub fn dialog_returning(path: PathBuf) -> PickPath {
    Arc::new(move |_| Some(path.clone()))
}

/// The app in a 1280 x 800 harness, each frame running `logic` then `ui` as eframe does.
pub fn harness(scope: Scope) -> Harness<'static, Scope> {
    harness_sized(scope, egui::vec2(1280.0, 800.0))
}

/// Steps frames until `done` holds (background threads deliver between frames).
pub fn step_until(h: &mut Harness<'_, Scope>, what: &str, done: impl Fn(&Scope) -> bool) {
    let start = Instant::now();
    while !done(h.state()) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    h.run_steps(3);
}

/// The recording is open and every topic loaded.
pub fn loaded(s: &Scope) -> bool {
    s.recording().is_some_and(|r| r.loaded()) && !s.is_opening()
}

/// The app, with `path` opened through File > Open Folder and loaded.
pub fn open_with_dialog(path: PathBuf) -> Harness<'static, Scope> {
    let mut h = harness(Scope::new(dialog_returning(path)));
    h.run_steps(2);
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Open Folder...").click();
    h.run_steps(2);
    step_until(&mut h, "the recording to load", loaded);
    h
}

/// A harness of `size`, each frame running `logic` then `ui` as eframe does.
pub fn harness_sized(scope: Scope, size: egui::Vec2) -> Harness<'static, Scope> {
    Harness::builder().with_size(size).build_ui_state(
        |ui, scope: &mut Scope| {
            scope.logic(ui.ctx());
            scope.ui(ui);
        },
        scope,
    )
}

/// A topic whose schema is garbage, a topic with valid schema but garbage messages, an engine
/// topic, and a DiagnosticLog topic with a message every 100 ms.
pub fn mixed_bag(dir: &Path) -> PathBuf {
    let path = dir.join("mixed");
    let mut w = BagWriter::create(&path, WriteOptions::new()).expect("create bag");
    let engine_info = schemas::by_name("EngineRpm").expect("registered");
    let log_info = schemas::by_name("DiagnosticLog").expect("registered");
    let bad_schema = w.add_channel(ChannelSpec::capnp(
        "bad/schema",
        "redline/BadSchema",
        "BadSchema",
        b"this is not a capnp descriptor".to_vec(),
    ));
    let bad_bytes = w.add_channel(ChannelSpec::capnp(
        "bad/bytes",
        engine_info.registry_name,
        engine_info.capnp_name,
        engine_info.descriptor,
    ));
    let log = w.add_channel(ChannelSpec::capnp(
        "car/log",
        log_info.registry_name,
        log_info.capnp_name,
        log_info.descriptor,
    ));
    for seq in 0..20u64 {
        let t = T0 + seq * 100_000_000;
        w.write(bad_schema, t, None, b"\x01\x02\x03ABCDEF")
            .expect("write");
        w.write(bad_bytes, t + 1, None, b"\xffnot capnp at all")
            .expect("write");
        let bytes =
            schemas::sample::encode("DiagnosticLog", seq as f64 * 0.1, seq).expect("encode");
        w.write(log, t + 2, None, &bytes).expect("write");
    }
    w.close().expect("close");
    path
}

/// A value of one message: ROS 2 `float64` or `uint64`.
#[derive(Clone, Copy)]
pub enum V {
    F(f64),
    U(u64),
}

/// A bag with one topic per entry of `topics` (name, samples as (ns after `t0`, value)),
/// each message a ROS 2 CDR message of one field, `value`, written with `options`.
pub fn cdr_bag(
    dir: &Path,
    t0: u64,
    topics: &[(&str, Vec<(u64, V)>)],
    options: WriteOptions,
) -> PathBuf {
    let path = dir.join("case");
    let mut w = BagWriter::create(&path, options).expect("create bag");
    let mut channels = Vec::new();
    for (topic, samples) in topics {
        let (name, field) = match samples.first() {
            Some((_, V::U(_))) => ("redline_test/msg/Count", "uint64 value\n"),
            _ => ("redline_test/msg/Float", "float64 value\n"),
        };
        channels.push(w.add_channel(ChannelSpec {
            topic: (*topic).to_owned(),
            message_encoding: "cdr".into(),
            schema: Some(SchemaSpec {
                name: name.into(),
                encoding: "ros2msg".into(),
                data: field.as_bytes().to_vec(),
            }),
            metadata: Default::default(),
        }));
    }
    let mut all: Vec<(u64, usize, V)> = topics
        .iter()
        .enumerate()
        .flat_map(|(k, (_, s))| s.iter().map(move |&(t, v)| (t, k, v)))
        .collect();
    all.sort_by_key(|&(t, k, _)| (t, k));
    for (t, k, v) in all {
        // CDR little endian: the encapsulation header, then the field.
        let mut bytes = vec![0u8, 1, 0, 0];
        match v {
            V::F(x) => bytes.extend_from_slice(&x.to_le_bytes()),
            V::U(x) => bytes.extend_from_slice(&x.to_le_bytes()),
        }
        w.write(channels[k], t0 + t, Some(t0 + t), &bytes)
            .expect("write");
    }
    w.close().expect("close");
    path
}

/// The recording at `path`, opened and loaded (every topic decoded) without the app.
pub fn load_recording(path: &Path) -> scope::recording::Recording {
    let source = scope::data::source::RecordingSource::open(path).expect("open");
    let mut recording = scope::recording::Recording::start(Arc::new(source), Arc::new(|| {}));
    let start = Instant::now();
    while !recording.loaded() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "loading timed out"
        );
        recording.poll(Duration::from_millis(20));
    }
    recording
}

/// The `value` field of `topic` (what [`cdr_bag`] writes), as a plotted signal.
pub fn signal(topic: &str) -> scope::data::layout::SignalRef {
    scope::data::layout::SignalRef {
        topic: topic.into(),
        path: "value".into(),
    }
}

/// `layout` over `recording` as the plots panel draws it (`plot_stack_ui` alone, the playhead
/// at `playhead_ns`, `cursors` placed), in a wgpu harness of `size`, compared with snapshot
/// `name` once six frames are in.
pub fn snapshot_plot_stack(
    name: &str,
    recording: scope::recording::Recording,
    layout: scope::data::layout::Layout,
    cursors: scope::data::cursors::Cursors,
    playhead_ns: u64,
    size: egui::Vec2,
) {
    struct Shown {
        recording: scope::recording::Recording,
        layout: scope::data::layout::Layout,
        view: scope::ui::plots::PlotView,
        cursors: scope::data::cursors::Cursors,
    }
    let shown = Shown {
        recording,
        layout,
        view: scope::ui::plots::PlotView::default(),
        cursors,
    };
    let mut h = Harness::builder().with_size(size).wgpu().build_ui_state(
        move |ui, s: &mut Shown| {
            egui::CentralPanel::default().show(ui, |ui| {
                scope::ui::plots::plot_stack_ui(
                    ui,
                    &s.recording,
                    &s.layout,
                    &mut s.view,
                    playhead_ns,
                    None,
                    &s.cursors,
                );
            });
        },
        shown,
    );
    h.run_steps(6);
    h.snapshot(name);
}

/// `../shared/oracles/<relative>`, or `None` (with "skipping" said) when it is missing; under
/// `CI=true` a missing oracle fails instead.
pub fn oracle(relative: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/oracles")
        .join(relative);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "the oracle {} is missing under CI",
        path.display()
    );
    eprintln!("skipping: {} not found", path.display());
    None
}
