//! Issue 23, item 5: File > Save Layout and Open Layout (and Recent Layouts) through the
//! injected file dialog: the plots, the cursors and the time axis come back; on a recording
//! that lacks some of the layout's fields the rest is shown and the missing ones are named.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bag::WriteOptions;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scope::Scope;
use scope::app::open::PickKind;
use scope::data::layout::{Layout, PlotSpec};

mod common;
use common::{T0, V, cdr_bag, harness, loaded, signal, step_until};

const MS: u64 = 1_000_000;

/// A bag of `ramp` (and `count` when `with_count`) in its own directory under `dir`.
fn bag(dir: &Path, with_count: bool) -> PathBuf {
    let ramp: Vec<(u64, V)> = (0..=100u64)
        .map(|i| (i * 10 * MS, V::F(i as f64)))
        .collect();
    let count: Vec<(u64, V)> = (0..=100u64).map(|i| (i * 10 * MS, V::U(i))).collect();
    let mut topics = vec![("ramp", ramp)];
    if with_count {
        topics.push(("count", count));
    }
    std::fs::create_dir_all(dir).expect("dir");
    cdr_bag(dir, T0, &topics, WriteOptions::new())
}

fn menu(h: &mut Harness<'_, Scope>, item: &str) {
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label(item).click();
    h.run_steps(2);
}

#[test]
fn a_saved_layout_comes_back_and_on_another_recording_says_what_it_lacks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = bag(&dir.path().join("first"), true);
    let second = bag(&dir.path().join("second"), false);
    let layout_path = dir.path().join("my layout.yaml");
    let (bag_path, file) = (first.clone(), layout_path.clone());
    let mut h = harness(Scope::new(Arc::new(move |kind| match kind {
        PickKind::SaveLayout | PickKind::OpenLayout => Some(file.clone()),
        _ => Some(bag_path.clone()),
    })));
    h.run_steps(2);
    menu(&mut h, "Open Folder...");
    step_until(&mut h, "the first recording to load", loaded);
    *h.state_mut().layout_mut() = Layout {
        plots: vec![
            PlotSpec {
                signals: vec![signal("ramp"), signal("count")],
                ..PlotSpec::default()
            },
            PlotSpec {
                signals: vec![signal("count")],
                ..PlotSpec::default()
            },
        ],
        ..Layout::default()
    };
    h.run_steps(2);
    h.get_by_label("UTC").click();
    h.state_mut().playback.playhead_ns = T0 + 100 * MS;
    h.key_press(egui::Key::A);
    h.run_steps(2);

    menu(&mut h, "Save Layout...");
    step_until(&mut h, "the layout to be written", |s| {
        !s.is_opening() && !s.persisted.recent_layouts.is_empty()
    });
    let text = std::fs::read_to_string(&layout_path).expect("the layout file");
    for expected in [
        "version: 1",
        "time_axis: utc",
        "a_from_start_ns: 100000000",
        "topic: count",
    ] {
        assert!(text.contains(expected), "{expected:?} in\n{text}");
    }
    let saved = h.state().layout().clone();

    // Gone from the screen, then back from the file.
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Clear plots").click();
    h.key_press(egui::Key::X);
    h.run_steps(2);
    assert!(h.state().layout().plots.is_empty());
    menu(&mut h, "Open Layout...");
    step_until(&mut h, "the layout to be read", |s| {
        !s.is_opening() && !s.layout().plots.is_empty()
    });
    assert_eq!(h.state().layout(), &saved);
    assert_eq!(h.state().cursors.a_ns, Some(T0 + 100 * MS));
    assert!(h.state().error.is_none(), "{:?}", h.state().error);

    // Another recording, without `count`: the rest is shown and the missing field named.
    h.state_mut().open(second);
    step_until(&mut h, "the second recording to load", loaded);
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Recent Layouts").hover();
    h.run_steps(2);
    h.get_by_label(&layout_path.display().to_string()).click();
    step_until(&mut h, "the layout to be applied", |s| {
        !s.is_opening() && s.error.is_some()
    });
    let error = h.state().error.as_ref().map(|e| e.report());
    assert!(
        error
            .as_deref()
            .is_some_and(|e| e.contains("names a field this recording does not have")),
        "{error:?}"
    );
    assert_eq!(
        h.state().layout().plots,
        vec![PlotSpec::of(vec![signal("ramp")])]
    );
    h.run_steps(2);
    h.get_by_label_contains("names a field this recording does not have");
    h.get_by_label_contains("count/value");
}

#[test]
fn a_file_that_is_not_a_layout_is_an_error_on_screen_and_changes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = bag(&dir.path().join("first"), true);
    let not_layout = dir.path().join("notes.yaml");
    std::fs::write(&not_layout, "shopping:\n- milk\n").expect("write");
    let mut h = harness(Scope::new(Arc::new(|_| None)));
    h.state_mut().open(first);
    step_until(&mut h, "the recording to load", loaded);
    let before = h.state().layout().clone();
    h.state_mut().open_layout_from(not_layout);
    step_until(&mut h, "the error", |s| {
        !s.is_opening() && s.error.is_some()
    });
    h.get_by_label_contains("is not a layout file this version reads");
    assert_eq!(h.state().layout(), &before);
}
