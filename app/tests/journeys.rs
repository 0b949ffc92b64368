//! GUI journeys, driven by widget label through egui_kittest, with the file dialog injected.

use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;
use common::{
    T0, dialog_returning, harness, loaded, open_with_dialog, oracle_dir, parts_of, step_until,
    write_bag,
};

use bag::{BagReader, BagWriter, ChannelSpec, ReadFilter, WriteOptions};
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scope::Scope;
use scope::data::layout::SignalRef;
use scope::ui::format::format_value;

#[test]
fn open_a_bag_through_the_dialog_and_see_its_topics() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_bag(dir.path(), 3.0, 10.0, 0);
    let h = open_with_dialog(bag.clone());
    h.get_by_role_and_label(Role::Button, "car/engine");
    h.get_by_role_and_label(Role::Button, "car/imu");
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
    // Opening through the dialog remembers the file.
    assert_eq!(
        h.state().persisted.recent.first(),
        Some(&bag.display().to_string())
    );
}

#[test]
fn add_a_field_scrub_and_read_the_value_at_the_playhead() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_bag(dir.path(), 3.0, 10.0, 0);
    let mut h = open_with_dialog(bag);
    h.get_by_role_and_label(Role::Button, "car/engine").click();
    h.run_steps(3);
    h.get_by_label("rpm").click();
    h.run_steps(3);
    assert_eq!(
        h.state().layout().plots.first().map(|p| p.signals.clone()),
        Some(vec![SignalRef {
            topic: "car/engine".into(),
            path: "rpm".into()
        }])
    );
    // Scrub to 1.234 s: the legend shows the last message at or before it (1.22 s, the 62nd).
    h.state_mut().playback.playhead_ns = T0 + 1_234_000_000;
    h.run_steps(3);
    let bytes = schemas::sample::encode("EngineRpm", 1.22, 61).expect("encode");
    let reader =
        capnp::serialize::read_message_from_flat_slice(&mut bytes.as_slice(), Default::default())
            .expect("read");
    let rpm = reader
        .get_root::<schemas::engine_rpm_capnp::engine_rpm::Reader>()
        .expect("root")
        .get_rpm();
    let expected = format!("car/engine/rpm = {}", format_value(f64::from(rpm)));
    h.get_by_label(&expected);
    // Points were handed to the plot, and no more than the pixel budget allows.
    assert!(h.state().points_last_frame() > 0);
    assert!(h.state().points_last_frame() < 4 * 1280);
    // Remove it again.
    h.get_by_label("x").click();
    h.run_steps(2);
    assert_eq!(
        h.state().layout().plots.first().map(|p| p.signals.len()),
        Some(0)
    );
}

#[test]
fn health_panel_shows_the_drop_count_from_metadata() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_bag(dir.path(), 1.0, 10.0, 42);
    let meta = std::fs::read_to_string(bag.join("metadata.yaml")).expect("metadata");
    assert!(meta.contains("dropped_messages: 42"), "{meta}");
    let h = open_with_dialog(bag);
    h.get_by_label("Dropped messages: 42");
    h.get_by_label_contains("This recording has gaps.");
    h.get_by_label_contains("car/camera (DiagnosticLog)");
}

#[test]
fn a_silence_inside_a_topic_is_flagged_in_tree_health_and_timeline() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("silent");
    let mut w = BagWriter::create(&path, WriteOptions::new()).expect("create bag");
    let info = schemas::by_name("EngineRpm").expect("registered");
    let engine = w.add_channel(ChannelSpec::capnp(
        "car/engine",
        info.registry_name,
        info.capnp_name,
        info.descriptor,
    ));
    // 50 Hz for 4 s, nothing from 1.5 s to 2.0 s (24 messages lost, uncounted).
    for seq in (0..200u64).filter(|s| !(76..100).contains(s)) {
        let t = seq as f64 * 0.02;
        let log = T0 + (t * 1e9) as u64;
        let bytes = schemas::sample::encode("EngineRpm", t, seq).expect("encode");
        w.write(engine, log, Some(log), &bytes).expect("write");
    }
    w.close().expect("close");
    let mut h = open_with_dialog(path);
    h.get_by_label("1 gap");
    h.get_by_label("Gaps inside topics: 1");
    h.get_by_label("  car/engine: 1 gap, longest 0.500 s at t = 1.500 s");
    h.get_by_label_contains("Red ticks under the bar");
    // A steady topic has none.
    let dir2 = tempfile::tempdir().expect("tempdir");
    let steady = write_bag(dir2.path(), 3.0, 10.0, 0);
    h.state_mut().open(steady);
    step_until(&mut h, "the steady bag to load", |s| {
        loaded(s) && s.recording().is_some_and(|r| r.summary().topics.len() == 2)
    });
    h.get_by_label("Gaps inside topics: none");
    assert!(h.query_by_label("1 gap").is_none());
}

#[test]
fn a_torn_bag_opens_and_scrubs_through_every_recovered_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_bag(dir.path(), 4.0, 1.5, 0);
    let parts = parts_of(&bag);
    assert!(parts.len() >= 3, "{parts:?}");
    let last = parts.last().expect("a part");
    let len = std::fs::metadata(last).expect("meta").len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(last)
        .and_then(|f| f.set_len(len * 2 / 3))
        .expect("tear");
    // What the library recovers is the truth the app must show.
    let reader = BagReader::open(&bag).expect("open torn");
    let mut cursor = reader
        .messages(&ReadFilter::all().topics(["car/engine"]))
        .expect("cursor");
    let mut expected = Vec::new();
    while let Some(m) = cursor.next_message() {
        expected.push(m.log_time_ns);
    }
    assert!(reader.parts().iter().any(|p| p.status.label() == "torn"));

    let mut h = open_with_dialog(bag);
    // Flagged twice: the part in the health panel, the topic in the tree.
    assert!(h.get_all_by_label("torn").count() >= 2);
    h.state_mut().layout_mut().add(
        None,
        SignalRef {
            topic: "car/engine".into(),
            path: "rpm".into(),
        },
    );
    h.state_mut().playback.playhead_ns = 0;
    h.run_steps(2);
    let mut seen = Vec::new();
    for _ in 0..expected.len() {
        h.get_by_label("Step forward >|").click();
        h.run_steps(1);
        seen.push(h.state().playback.playhead_ns);
        h.get_by_label_contains("car/engine/rpm = ");
    }
    assert_eq!(seen, expected);
}

#[test]
fn a_bag_with_a_garbage_part_and_a_missing_part_still_opens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_bag(dir.path(), 4.0, 1.0, 0);
    let parts = parts_of(&bag);
    assert!(parts.len() >= 3, "{parts:?}");
    std::fs::write(&parts[1], b"this is not an mcap file at all").expect("garbage");
    std::fs::remove_file(&parts[2]).expect("remove");
    let h = open_with_dialog(bag);
    h.get_by_label("garbage");
    h.get_by_label("missing");
    h.get_by_role_and_label(Role::Button, "car/engine");
    let rec = h.state().recording().expect("open");
    let engine = rec.topic_index("car/engine").expect("topic");
    assert!(rec.data(engine).is_some_and(|d| !d.times_ns.is_empty()));
}

#[test]
fn bad_input_is_an_error_on_screen_not_a_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let garbage = dir.path().join("junk.mcap");
    std::fs::write(&garbage, b"junk").expect("write");
    let missing = dir.path().join("does-not-exist");
    for path in [missing.clone(), garbage] {
        let mut h = harness(Scope::new(dialog_returning(path.clone())));
        h.state_mut().open(path.clone());
        step_until(&mut h, "the error", |s| !s.is_opening());
        h.get_by_label_contains("Error:");
        if path == missing {
            // The cause is shown, down to the OS error.
            h.get_by_label_contains("os error");
        }
        assert!(h.state().recording().is_none() || h.state().error.is_some());
    }
    // An empty bag opens.
    let empty = dir.path().join("empty");
    BagWriter::create(&empty, WriteOptions::new())
        .expect("create")
        .close()
        .expect("close");
    let mut h = harness(Scope::new(dialog_returning(empty.clone())));
    h.state_mut().open(empty);
    step_until(&mut h, "the empty bag", loaded);
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
}

#[test]
fn a_rosbag2_bag_plots_its_fields() {
    let Some(oracles) = oracle_dir("rosbag2") else {
        return;
    };
    let bag = oracles.join("rosbag2_tests/resources/mcap/cdr_test");
    let mut h = open_with_dialog(bag);
    h.get_by_role_and_label(Role::Button, "/test_topic");
    h.state_mut().apply_default_layout();
    let t1 = h.state().recording().map_or(0, |r| r.t1_ns());
    h.state_mut().playback.playhead_ns = t1;
    h.run_steps(4);
    assert!(!h.state().layout().plots.is_empty());
    assert!(h.state().points_last_frame() > 0);
    let legends = h.get_all_by_label_contains(" = ").count();
    assert!(legends > 0);
}

/// Opens File > Open Recent.
fn show_recent_files(h: &mut Harness<'_, Scope>) {
    h.run_steps(2);
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Open Recent").hover();
    h.run_steps(2);
}

#[test]
fn open_recent_reopens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_bag(dir.path(), 1.0, 10.0, 0);
    let mut scope = Scope::new(Arc::new(|_| None));
    scope.persisted.recent = vec![bag.display().to_string()];
    let mut h = harness(scope);
    show_recent_files(&mut h);
    h.get_by_label(&bag.display().to_string()).click();
    h.run_steps(2);
    step_until(&mut h, "the recent recording", loaded);
    h.get_by_role_and_label(Role::Button, "car/engine");
}

fn engine_rpm_at(t_secs: f64, seq: u64) -> f64 {
    let bytes = schemas::sample::encode("EngineRpm", t_secs, seq).expect("encode");
    let reader =
        capnp::serialize::read_message_from_flat_slice(&mut bytes.as_slice(), Default::default())
            .expect("read");
    f64::from(
        reader
            .get_root::<schemas::engine_rpm_capnp::engine_rpm::Reader>()
            .expect("root")
            .get_rpm(),
    )
}

fn plot_rpm(h: &mut Harness<'_, Scope>) {
    h.state_mut().layout_mut().add(
        None,
        SignalRef {
            topic: "car/engine".into(),
            path: "rpm".into(),
        },
    );
    h.run_steps(2);
}

/// Presses at `from`, moves to `to` in a few frames, and releases there.
fn drag_and_drop(h: &mut Harness<'_, Scope>, from: egui::Pos2, to: egui::Pos2) {
    h.hover_at(from);
    h.step();
    h.drag_at(from);
    h.step();
    for k in 1..=4 {
        h.hover_at(from + (to - from) * (k as f32 / 4.0));
        h.step();
    }
    h.drop_at(to);
}

#[test]
fn drag_the_timeline_to_scrub() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_bag(dir.path(), 3.0, 10.0, 0);
    let mut h = open_with_dialog(bag);
    plot_rpm(&mut h);
    let rect = h.get_by_label("Timeline").rect();
    let (t0, t1) = {
        let rec = h.state().recording().expect("open");
        (rec.t0_ns(), rec.t1_ns())
    };
    let start = egui::pos2(rect.left() + 5.0, rect.center().y);
    let end = egui::pos2(rect.left() + rect.width() * 0.5, rect.center().y);
    drag_and_drop(&mut h, start, end);
    h.run_steps(2);
    let expected = t0 as f64 + 0.5 * (t1 - t0) as f64;
    let got = h.state().playback.playhead_ns as f64;
    assert!(
        (got - expected).abs() < 0.02 * (t1 - t0) as f64,
        "playhead {got} expected about {expected}"
    );
    h.get_by_label_contains("car/engine/rpm = ");
}

#[test]
fn keys_step_and_play() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_bag(dir.path(), 1.0, 10.0, 0);
    let mut h = open_with_dialog(bag);
    plot_rpm(&mut h);
    let t0 = h.state().playback.playhead_ns;
    h.key_press(egui::Key::ArrowRight);
    h.run_steps(2);
    // The first engine message is at t0; the next one 20 ms later.
    assert_eq!(h.state().playback.playhead_ns, t0 + 20_000_000);
    h.key_press(egui::Key::ArrowLeft);
    h.run_steps(2);
    assert_eq!(h.state().playback.playhead_ns, t0);
    h.key_press(egui::Key::Space);
    h.step();
    assert!(h.state().playback.playing);
    h.get_by_label("Pause").click();
    h.step();
    assert!(!h.state().playback.playing);
}

#[test]
fn inspector_shows_the_message_at_the_playhead() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_bag(dir.path(), 3.0, 10.0, 0);
    let mut h = open_with_dialog(bag);
    plot_rpm(&mut h);
    h.state_mut().playback.playhead_ns = T0 + 1_234_000_000;
    h.get_by_label("Inspector").click();
    h.run_steps(2);
    let start = Instant::now();
    while h.query_by_label_contains("message 62 of ").is_none() || h.query_by_label("rpm").is_none()
    {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "inspector never showed: {:#?}",
            h.root()
        );
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    let expected = format_value(engine_rpm_at(1.22, 61));
    // The legend shows it as "car/engine/rpm = X", the inspector as its own value label.
    assert!(
        h.get_all_by_label(&expected).count() >= 1,
        "no inspector value {expected}"
    );
}

/// eframe's storage, kept in memory.
#[derive(Default)]
struct MemoryStorage(std::collections::HashMap<String, String>);

impl eframe::Storage for MemoryStorage {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), value);
    }
    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }
    fn flush(&mut self) {}
}

#[test]
fn the_layout_and_recent_files_survive_a_restart_and_carry_to_another_recording() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir(&a).expect("mkdir");
    std::fs::create_dir(&b).expect("mkdir");
    let (first, second) = (write_bag(&a, 2.0, 10.0, 0), write_bag(&b, 2.0, 10.0, 0));
    let rpm = SignalRef {
        topic: "car/engine".into(),
        path: "rpm".into(),
    };

    let mut h = open_with_dialog(first.clone());
    h.get_by_role_and_label(Role::Button, "car/engine").click();
    h.run_steps(3);
    h.get_by_label("rpm").click();
    h.run_steps(3);
    let mut storage = MemoryStorage::default();
    eframe::App::save(h.state_mut(), &mut storage);
    drop(h);

    // A new run, restored from what was saved, opens a different recording with the same topics.
    let mut scope = Scope::new(dialog_returning(second));
    scope.persisted = scope::app::restore(Some(&storage));
    let mut h = harness(scope);
    show_recent_files(&mut h);
    h.get_by_label(&first.display().to_string());
    h.get_by_label("Open Folder...").click();
    h.run_steps(2);
    step_until(&mut h, "the second recording to load", loaded);
    assert_eq!(
        h.state().layout().plots.first().map(|p| p.signals.clone()),
        Some(vec![rpm])
    );
    assert!(
        h.state().points_last_frame() > 0,
        "the restored plot is drawn"
    );
    h.get_by_label(&format!(
        "car/engine/rpm = {}",
        format_value(engine_rpm_at(0.0, 0))
    ));
}

#[test]
fn drag_a_field_from_the_tree_onto_a_plot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_bag(dir.path(), 2.0, 10.0, 0);
    let mut h = open_with_dialog(bag);
    plot_rpm(&mut h);
    h.get_by_role_and_label(Role::Button, "car/engine").click();
    h.run_steps(3);
    let from = h.get_by_label("coolantTempC").rect().center();
    // Into the plot, below its legend.
    let legend = h.get_by_label_contains("car/engine/rpm = ").rect();
    let to = egui::pos2(legend.center().x, legend.bottom() + 60.0);
    drag_and_drop(&mut h, from, to);
    h.run_steps(3);
    let plotted = |path: &str| SignalRef {
        topic: "car/engine".into(),
        path: path.into(),
    };
    assert_eq!(
        h.state().layout().plots.first().map(|p| p.signals.clone()),
        Some(vec![plotted("rpm"), plotted("coolantTempC")])
    );
    h.get_by_label_contains("car/engine/coolantTempC = ");
}
