//! Journeys: opening and saving never fail silently. When the desktop file dialog gives no
//! path back (no xdg portal, or closed), an in-app path entry appears; what then fails is
//! shown with its cause.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{harness, loaded, step_until, write_plain_bag};
use egui_kittest::kittest::Queryable;
use scope::Scope;

/// A scope whose file dialog never gives a path back, as on a desktop without a portal.
fn without_a_dialog() -> Scope {
    Scope::new(Arc::new(|_| None))
}

fn type_into_path(h: &mut egui_kittest::Harness<'_, Scope>, text: &str) {
    h.get_by_label("Path").click();
    h.run_steps(2);
    h.get_by_label("Path").type_text(text);
    h.run_steps(2);
}

#[test]
fn with_no_file_dialog_open_folder_offers_a_path_entry_that_opens_the_bag() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_plain_bag(dir.path(), 1.0);
    let mut h = harness(without_a_dialog());
    h.run_steps(2);
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Open Folder...").click();
    step_until(&mut h, "the path entry", |s| s.path_entry.is_some());
    h.get_by_label_contains("no desktop file dialog");
    type_into_path(&mut h, &bag.display().to_string());
    h.get_by_label("Open").click();
    step_until(&mut h, "the bag to load", loaded);
    assert!(h.state().path_entry.is_none());
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
    h.get_by_role_and_label(egui::accesskit::Role::Button, "car/engine");
}

#[test]
fn a_typed_path_that_does_not_exist_is_an_error_with_its_cause_and_cancel_closes_the_entry() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("no-such-bag");
    let mut h = harness(without_a_dialog());
    h.run_steps(2);
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Open Path...").click();
    step_until(&mut h, "the path entry", |s| s.path_entry.is_some());
    type_into_path(&mut h, &missing.display().to_string());
    h.key_press(egui::Key::Enter);
    step_until(&mut h, "the error", |s| {
        !s.is_opening() && s.error.is_some()
    });
    h.get_by_label_contains("Error: cannot open");
    h.get_by_label_contains("os error");
    // Cancel closes an entry without doing anything.
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Open File...").click();
    step_until(&mut h, "the path entry", |s| s.path_entry.is_some());
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    assert!(h.state().path_entry.is_none());
    assert!(h.query_by_label("Path").is_none());
}

#[test]
fn with_no_file_dialog_save_recording_offers_a_path_entry_that_saves_the_capture() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("typed-capture");
    let mut scope = without_a_dialog();
    scope.open_demo();
    let mut h = harness(scope);
    step_until(&mut h, "live data", |s| {
        s.recording()
            .is_some_and(|r| r.summary().health.message_count > 200)
    });
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Save Recording...").click();
    step_until(&mut h, "the path entry", |s| s.path_entry.is_some());
    type_into_path(&mut h, &out.display().to_string());
    h.get_by_label("Save").click();
    let start = Instant::now();
    while h.state().notice.is_none() {
        assert!(h.state().error.is_none(), "{:?}", h.state().error);
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "save did not finish"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    let notice = h.state().notice.clone().unwrap_or_default();
    assert!(notice.starts_with("Saved "), "{notice}");
    assert!(bag::BagReader::open(&out).is_ok_and(|r| r.message_count() > 200));
}

#[test]
fn save_recording_into_a_place_that_cannot_be_written_shows_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A file where the bag directory would go.
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, b"x").expect("write");
    let mut scope = without_a_dialog();
    scope.open_demo();
    let mut h = harness(scope);
    step_until(&mut h, "live data", |s| {
        s.recording()
            .is_some_and(|r| r.summary().health.message_count > 50)
    });
    h.state_mut().save_recording_to(blocker.join("bag"));
    step_until(&mut h, "the save to fail", |s| !s.is_saving());
    h.get_by_label_contains("Error: saving to");
    let error = h
        .state()
        .error
        .as_ref()
        .map(|e| e.report())
        .unwrap_or_default();
    assert!(
        error.contains("Not a directory") || error.contains("os error"),
        "{error}"
    );
}

#[test]
fn a_file_dialog_that_panics_is_an_error_not_opening_forever() {
    let scope = Scope::new(Arc::new(|_| panic!("no display to show a dialog on")));
    let mut h = harness(scope);
    h.run_steps(2);
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Open File...").click();
    step_until(&mut h, "the error", |s| s.error.is_some());
    assert!(!h.state().is_opening());
    h.get_by_label_contains("Error: the scope-dialog thread failed");
    assert!(h.query_by_label("Opening...").is_none());
}
