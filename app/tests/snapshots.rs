//! Image snapshots of the panels that say whether a recording can be trusted: the health panel,
//! the timeline (a torn part hatched, a silence ticked) and the topic tree with its badges.
//!
//! Rendered by egui_kittest through wgpu, on a software rasterizer (Mesa llvmpipe through GL, or
//! lavapipe). The PNGs live in `app/tests/snapshots/`; after a deliberate change to what these
//! panels draw, regenerate them with `UPDATE_SNAPSHOTS=1 cargo test -p scope --test snapshots`
//! and look at the new images before committing them. A failing comparison writes
//! `NAME.new.png` and `NAME.diff.png` beside the committed one.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;
use common::add_registry_channel;

use bag::{BagWriter, WriteOptions};
use egui_kittest::Harness;
use scope::data::source::RecordingSource;
use scope::recording::Recording;
use scope::ui::health::health_ui;
use scope::ui::timeline::{Playback, timeline_ui};
use scope::ui::tree::topic_tree_ui;

/// 2026-06-01T08:00:00Z, as the demo: fixed, so the UTC labels are too.
const T0: u64 = 1_780_300_800_000_000_000;

/// Six seconds of engine (50 Hz) and IMU (100 Hz) in three parts, with what a real recording
/// suffers: 12 dropped messages in the index, a topic advertised but never published, IMU
/// silent for 0.4 s, the engine publishing without timestamps in its last second, and the
/// last part torn. Chunks close by size only (16 KiB), so the picture does not depend on how
/// fast the machine writes.
fn flawed_bag(dir: &Path) -> PathBuf {
    let path = dir.join("drive");
    let options = WriteOptions::new()
        .chunk_max_age(None)
        .chunk_size_bytes(16 << 10)
        .part_max_duration_ns(Some(2_000_000_000));
    let mut w = BagWriter::create(&path, options).expect("create bag");
    let engine = add_registry_channel(&mut w, "car/engine", "EngineRpm");
    let imu = add_registry_channel(&mut w, "car/imu", "Imu");
    for seq in 0..600u64 {
        let t = seq as f64 * 0.01;
        let log = T0 + seq * 10_000_000;
        if seq % 2 == 0 {
            let bytes = schemas::sample::encode("EngineRpm", t, seq / 2).expect("encode");
            let publish = (t < 5.0).then(|| log - 1_500_000);
            w.write(engine, log, publish, &bytes).expect("write");
        }
        if !(300..340).contains(&seq) {
            let bytes = schemas::sample::encode("Imu", t, seq).expect("encode");
            w.write(imu, log + 1, Some(log - 400_000), &bytes)
                .expect("write");
        }
    }
    w.add_dropped(12);
    w.advertise("car/camera", "DiagnosticLog");
    w.close().expect("close");
    let last = path.join("drive_2.mcap");
    let len = std::fs::metadata(&last).expect("last part").len();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&last)
        .expect("open last part");
    file.set_len(len * 6 / 10).expect("tear");
    path
}

fn loaded(path: &Path) -> Recording {
    let source = RecordingSource::open(path).expect("open");
    let mut recording = Recording::start(Arc::new(source), Arc::new(|| {}));
    let start = Instant::now();
    while !recording.loaded() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "loading timed out"
        );
        recording.poll(Duration::from_millis(20));
    }
    // How long decoding took differs from run to run.
    recording.load_time = None;
    recording
}

fn snapshot(name: &str, size: egui::Vec2, mut ui: impl FnMut(&mut egui::Ui)) {
    let mut harness = Harness::builder()
        .with_size(size)
        .wgpu()
        .build_ui(|u| ui(u));
    harness.run();
    harness.snapshot(name);
}

#[test]
fn health_panel_of_a_flawed_recording() {
    let dir = tempfile::tempdir().expect("tempdir");
    let recording = loaded(&flawed_bag(dir.path()));
    snapshot("health_panel", egui::vec2(460.0, 440.0), |ui| {
        health_ui(ui, &recording);
    });
}

#[test]
fn timeline_with_a_torn_part_and_a_silence() {
    let dir = tempfile::tempdir().expect("tempdir");
    let recording = loaded(&flawed_bag(dir.path()));
    let mut playback = Playback {
        playhead_ns: T0 + 2_500_000_000,
        ..Playback::default()
    };
    snapshot("timeline", egui::vec2(900.0, 100.0), |ui| {
        timeline_ui(ui, &recording, &mut playback);
    });
}

#[test]
fn topic_tree_with_badges() {
    let dir = tempfile::tempdir().expect("tempdir");
    let recording = loaded(&flawed_bag(dir.path()));
    let mut filter = String::new();
    snapshot("topic_tree", egui::vec2(420.0, 200.0), |ui| {
        topic_tree_ui(ui, &recording, &mut filter, &[]);
    });
}
