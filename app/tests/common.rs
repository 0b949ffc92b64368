//! Helpers shared by the journey files written after `journeys.rs`: bags built in memory with
//! our own writer, a harness that runs frames as eframe does, and waiting on background work.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bag::{BagWriter, ChannelSpec, WriteOptions};
use egui_kittest::Harness;
use scope::Scope;
use scope::app::open::PickPath;

/// 2023-11-14T22:13:20Z.
pub const T0: u64 = 1_700_000_000_000_000_000;

/// Writes a bag with an engine topic (50 Hz) and an IMU topic (100 Hz) for `secs` seconds.
pub fn write_bag(dir: &Path, secs: f64) -> PathBuf {
    let path = dir.join("drive");
    let mut w = BagWriter::create(&path, WriteOptions::new()).expect("create bag");
    let mut add = |topic: &str, name: &str| {
        let info = schemas::by_name(name).expect("registered");
        w.add_channel(ChannelSpec::capnp(
            topic,
            info.registry_name,
            info.capnp_name,
            info.descriptor,
        ))
    };
    let engine = add("car/engine", "EngineRpm");
    let imu = add("car/imu", "Imu");
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

/// A file dialog that always picks `path`.
pub fn dialog_returning(path: PathBuf) -> PickPath {
    Arc::new(move |_| Some(path.clone()))
}

/// A 1280 x 800 harness running the app's logic, then its ui, each frame.
pub fn harness(scope: Scope) -> Harness<'static, Scope> {
    harness_sized(scope, egui::vec2(1280.0, 800.0))
}

/// A harness of `size` running the app's logic, then its ui, each frame.
pub fn harness_sized(scope: Scope, size: egui::Vec2) -> Harness<'static, Scope> {
    Harness::builder().with_size(size).build_ui_state(
        |ui, scope: &mut Scope| {
            scope.logic(ui.ctx());
            scope.ui(ui);
        },
        scope,
    )
}

/// Steps frames until `done` holds (background threads deliver between frames).
pub fn wait_until(h: &mut Harness<'_, Scope>, what: &str, done: impl Fn(&Scope) -> bool) {
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

/// True once a recording is open, loaded, and nothing else is being opened.
pub fn loaded(s: &Scope) -> bool {
    s.recording().is_some_and(|r| r.loaded()) && !s.is_opening()
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
