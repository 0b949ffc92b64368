//! Issue 23, item 6: two recordings side by side. A second recording opened beside the first
//! (File > Compare With) lists its topics under its own name as `B:topic`, its columns aligned
//! by recording start (or a chosen offset), so that plots, values at the playhead, derived
//! signals and the health panel take both; and a snapshot of two runs overlaid.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bag::WriteOptions;
use egui_kittest::kittest::Queryable;
use scope::Scope;
use scope::data::cursors::Cursors;
use scope::data::derived::{DERIVED_TOPIC, DerivedSpec, Transform};
use scope::data::layout::{Layout, PlotSpec, SignalRef};
use scope::data::source::RecordingSource;
use scope::recording::Recording;
use scope::ui::plots::value_at;

mod common;
use common::{
    T0, V, cdr_bag, dialog_returning, harness, load_recording, loaded, signal, snapshot_plot_stack,
    step_until,
};

const MS: u64 = 1_000_000;
const HOUR: u64 = 3_600_000 * MS;
/// A millisecond, as an offset.
const MS_I: i64 = 1_000_000;

/// Run A: `speed` = i at 10 Hz for 2 s from `T0`. Run B, an hour later: `wheel` = 10 i, and
/// for 3 s.
fn two_runs(dir: &Path) -> (PathBuf, PathBuf) {
    let a = (0..=20u64)
        .map(|i| (i * 100 * MS, V::F(i as f64)))
        .collect();
    let b = (0..=30u64)
        .map(|i| (i * 100 * MS, V::F(10.0 * i as f64)))
        .collect();
    let run_a = cdr_bag(&dir.join("a"), T0, &[("speed", a)], WriteOptions::new());
    let run_b = cdr_bag(
        &dir.join("b"),
        T0 + HOUR,
        &[("wheel", b)],
        WriteOptions::new(),
    );
    (run_a, run_b)
}

fn wheel() -> SignalRef {
    SignalRef {
        topic: "B:wheel".into(),
        path: "value".into(),
    }
}

/// `a` with `b` opened beside it, both loaded.
fn compared(a: &Path, b: &Path) -> Recording {
    let mut recording = load_recording(a);
    let source = RecordingSource::open(b).expect("open b");
    recording.open_second(Arc::new(source), Arc::new(|| {}));
    poll_until(&mut recording, |r| {
        r.second().is_some_and(Recording::loaded)
    });
    recording
}

fn poll_until(recording: &mut Recording, done: impl Fn(&Recording) -> bool) {
    let start = Instant::now();
    while !done(recording) {
        assert!(start.elapsed() < Duration::from_secs(60), "timed out");
        recording.poll(Duration::from_millis(20));
        std::thread::sleep(Duration::from_millis(2));
    }
    recording.poll(Duration::from_millis(20));
}

#[test]
fn a_second_recording_is_opened_from_the_menu_and_plotted_beside_the_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = two_runs(dir.path());
    let mut h = harness(Scope::new(dialog_returning(b)));
    h.state_mut().open(a);
    step_until(&mut h, "the first recording", loaded);
    *h.state_mut().layout_mut() = Layout::default();
    h.run_steps(2);
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Compare With").click();
    h.run_steps(2);
    h.get_by_label("Folder...").click();
    step_until(&mut h, "the second recording", |s| {
        s.recording()
            .and_then(Recording::second)
            .is_some_and(Recording::loaded)
    });
    // Listed under its own name, and its health below the first's.
    assert!(
        h.get_all_by_label("B: case").count() >= 2,
        "tree and health"
    );
    h.get_by_label("wheel").click();
    h.run_steps(2);
    h.get_by_label("value").click();
    h.run_steps(2);
    assert_eq!(h.state().layout().plots[0].signals, vec![wheel()]);
    // Aligned by start: 1.234 s into A is 1.234 s into B, where wheel holds 10 x 12.
    h.state_mut().playback.playhead_ns = T0 + 1234 * MS;
    h.run_steps(2);
    h.get_by_label("B:wheel/value = 120");
    // On a clock axis, the clock is A's: B's samples are said to be drawn an hour early.
    h.get_by_label("UTC").click();
    h.run_steps(2);
    h.get_by_label("B: drawn -3600.000 s from its clock");
    h.get_by_label("relative s").click();
    h.run_steps(2);
    assert!(h.query_by_label_contains("from its clock").is_none());

    // Closed: its topics leave the tree, its signal says it is not there.
    h.get_by_label("Close").click();
    h.run_steps(3);
    assert!(h.state().recording().and_then(Recording::second).is_none());
    h.get_by_label_contains("B:wheel/value (not in this recording)");
}

#[test]
fn compare_with_nothing_open_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, b) = two_runs(dir.path());
    let mut h = harness(Scope::new(Arc::new(|_| None)));
    h.state_mut().open_second(b);
    step_until(&mut h, "the error", |s| s.error.is_some());
    let error = h.state().error.as_ref().map(ToString::to_string);
    assert!(
        error
            .as_deref()
            .is_some_and(|e| e.contains("open a recording first")),
        "{error:?}"
    );
}

#[test]
fn a_second_recording_that_cannot_be_read_leaves_the_first_as_it_was() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, _) = two_runs(dir.path());
    let garbage = dir.path().join("garbage.mcap");
    std::fs::write(&garbage, b"not a recording at all").expect("write");
    let mut h = harness(Scope::new(Arc::new(|_| None)));
    h.state_mut().open(a);
    step_until(&mut h, "the first recording", loaded);
    for bad in [garbage, dir.path().join("missing")] {
        h.state_mut().error = None;
        h.state_mut().open_second(bad.clone());
        step_until(&mut h, "the error", |s| s.error.is_some());
        let error = h.state().error.as_ref().map(|e| e.report());
        assert!(
            error
                .as_deref()
                .is_some_and(|e| e.contains(&*bad.to_string_lossy())),
            "{error:?} names {bad:?}"
        );
        let rec = h.state().recording().expect("the first stays open");
        assert!(rec.second().is_none());
        assert_eq!(value_at(rec, &signal("speed"), T0 + 1234 * MS), Some(12.0));
    }
}

#[test]
fn a_second_recording_waiting_for_a_first_that_fails_does_not_join_the_next() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = two_runs(dir.path());
    // The first recording's dialog answers only once the second is open and waiting for it:
    // then it gives a path that fails.
    let answer = Arc::new(AtomicBool::new(false));
    let missing = dir.path().join("missing");
    let dialog: scope::app::open::PickPath = {
        let answer = Arc::clone(&answer);
        Arc::new(move |_| {
            let start = Instant::now();
            while !answer.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(60) {
                std::thread::sleep(Duration::from_millis(2));
            }
            Some(missing.clone())
        })
    };
    let mut h = harness(Scope::new(dialog));
    h.state_mut().pick(scope::app::open::PickKind::Folder);
    h.state_mut().open_second(b);
    // Opened, and held for the first (nothing shows it yet).
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(500) {
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(h.state().recording().is_none() && h.state().error.is_none());
    answer.store(true, Ordering::SeqCst);
    step_until(&mut h, "the first to fail", |s| {
        !s.is_opening() && s.error.is_some()
    });
    assert!(h.state().recording().is_none());
    h.state_mut().open(a);
    step_until(&mut h, "the recording", loaded);
    assert!(h.state().recording().and_then(Recording::second).is_none());
}

#[test]
fn the_offset_moves_the_second_recording_and_its_range_widens_the_axis() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = two_runs(dir.path());
    let mut recording = compared(&a, &b);
    // Aligned by start: B's 3 s end past A's 2 s one on the shared axis.
    assert_eq!(recording.t0_ns(), T0);
    assert_eq!(recording.t1_ns(), T0 + 3000 * MS);
    assert_eq!(
        value_at(&recording, &signal("speed"), T0 + 1234 * MS),
        Some(12.0)
    );
    assert_eq!(value_at(&recording, &wheel(), T0 + 1234 * MS), Some(120.0));
    // B drawn 0.5 s later: at A's 1.234 s, B is at its 0.734 s.
    recording.set_second_offset_ns(500 * MS_I);
    recording.poll(Duration::from_millis(1));
    assert_eq!(value_at(&recording, &wheel(), T0 + 1234 * MS), Some(70.0));
    assert_eq!(recording.t1_ns(), T0 + 3500 * MS);
    // And 0.5 s earlier than A: the axis starts with B.
    let before = recording.generation();
    recording.set_second_offset_ns(-500 * MS_I);
    assert!(recording.generation() > before, "plots are told");
    assert_eq!(recording.t0_ns(), T0 - 500 * MS);
    assert_eq!(value_at(&recording, &wheel(), T0 + 1234 * MS), Some(170.0));
    // A's own columns never move.
    assert_eq!(
        value_at(&recording, &signal("speed"), T0 + 1234 * MS),
        Some(12.0)
    );
}

#[test]
fn a_derived_signal_reads_both_recordings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = two_runs(dir.path());
    let mut recording = compared(&a, &b);
    let specs = vec![DerivedSpec {
        name: "diff".into(),
        expression: "{B:wheel/value} - {speed/value}".into(),
        transform: Transform::None,
    }];
    let diff = SignalRef {
        topic: DERIVED_TOPIC.into(),
        path: "diff".into(),
    };
    let repaint: Arc<dyn Fn() + Send + Sync> = Arc::new(|| {});
    let start = Instant::now();
    while recording.signal_data(&diff).is_none() {
        assert!(start.elapsed() < Duration::from_secs(60), "timed out");
        recording.update_derived(&specs, &repaint);
        std::thread::sleep(Duration::from_millis(5));
    }
    // 120 - 12 at 1.234 s.
    assert_eq!(value_at(&recording, &diff, T0 + 1234 * MS), Some(108.0));
    // Moved, the second recording's input is read again where it now is.
    recording.set_second_offset_ns(500 * MS_I);
    let start = Instant::now();
    while value_at(&recording, &diff, T0 + 1234 * MS) != Some(70.0 - 12.0) {
        assert!(start.elapsed() < Duration::from_secs(60), "timed out");
        recording.update_derived(&specs, &repaint);
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Two runs overlaid in one plot, B half a second later.
#[test]
fn snapshot_of_two_recordings_overlaid() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = two_runs(dir.path());
    let mut recording = compared(&a, &b);
    recording.set_second_offset_ns(500 * MS_I);
    recording.poll(Duration::from_millis(1));
    let layout = Layout {
        plots: vec![PlotSpec::of(vec![signal("speed"), wheel()])],
        ..Layout::default()
    };
    snapshot_plot_stack(
        "two_recordings_overlaid",
        recording,
        layout,
        Cursors::default(),
        T0 + 1500 * MS,
        egui::vec2(640.0, 360.0),
    );
}
