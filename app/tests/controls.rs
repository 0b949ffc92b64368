//! Journeys through the controls, driven by label and key: the shortcuts, the help overlay
//! that lists every control, and where a clicked field goes.

mod common;

use std::sync::{Arc, Mutex};

use common::{harness, loaded, step_until, write_plain_bag};
use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;
use scope::Scope;
use scope::app::open::PickKind;
use scope::data::layout::SignalRef;

/// A dialog that picks `path` and remembers what it was asked for.
fn recording_dialog(path: std::path::PathBuf) -> (Scope, Arc<Mutex<Vec<PickKind>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&asked);
    let scope = Scope::new(Arc::new(move |kind| {
        log.lock().expect("lock").push(kind);
        Some(path.clone())
    }));
    (scope, asked)
}

#[test]
fn ctrl_o_and_ctrl_shift_o_open_through_the_dialog_for_a_file_and_a_folder() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_plain_bag(dir.path(), 1.0);
    let (scope, asked) = recording_dialog(bag);
    let mut h = harness(scope);
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::O);
    step_until(&mut h, "the recording to load", loaded);
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::O);
    step_until(&mut h, "the folder to load", |s| {
        loaded(s) && asked.lock().is_ok_and(|a| a.len() == 2)
    });
    assert_eq!(
        *asked.lock().expect("lock"),
        vec![PickKind::File, PickKind::Folder]
    );
    h.get_by_role_and_label(Role::Button, "car/engine");
}

#[test]
fn ctrl_s_saves_the_live_capture_and_says_why_not_on_a_recording() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_plain_bag(dir.path(), 1.0);
    let (mut scope, asked) = recording_dialog(dir.path().join("capture"));
    scope.open(bag);
    let mut h = harness(scope);
    step_until(&mut h, "the recording to load", loaded);
    h.key_press_modifiers(Modifiers::COMMAND, Key::S);
    h.run_steps(2);
    h.get_by_label_contains("nothing is being captured");
    assert!(
        asked.lock().expect("lock").is_empty(),
        "no dialog for nothing"
    );
    h.get_by_label("Dismiss").click();
    h.state_mut().open_demo();
    step_until(&mut h, "live data", |s| {
        s.recording()
            .is_some_and(|r| r.summary().health.message_count > 100)
    });
    h.key_press_modifiers(Modifiers::COMMAND, Key::S);
    step_until(&mut h, "the save", |s| {
        s.notice.is_some() || s.error.is_some()
    });
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
    assert_eq!(*asked.lock().expect("lock"), vec![PickKind::SaveBag]);
    h.get_by_label_contains("Saved ");
}

#[test]
fn ctrl_q_asks_the_window_to_close() {
    let mut h = harness(Scope::new(Arc::new(|_| None)));
    h.run_steps(2);
    // One frame for the press alone (the harness runs a frame per queued event, and only the
    // last frame's output is kept).
    h.event(egui::Event::Key {
        key: Key::Q,
        pressed: true,
        modifiers: Modifiers::COMMAND,
        repeat: false,
        physical_key: None,
    });
    h.step();
    let asked_to_close = h.output().viewport_output.values().any(|v| {
        v.commands
            .iter()
            .any(|c| matches!(c, egui::ViewportCommand::Close))
    });
    assert!(asked_to_close);
}

#[test]
fn f1_and_question_mark_show_every_control_and_escape_hides_them() {
    let mut h = harness(Scope::new(Arc::new(|_| None)));
    h.run_steps(2);
    // The welcome screen says where to look.
    h.get_by_label("F1 lists every control.");
    assert!(h.query_by_label("Controls").is_none());
    h.key_press(Key::F1);
    h.run_steps(3);
    h.get_by_label("Controls");
    for (key, what) in scope::ui::help::KEYS.iter().chain(scope::ui::help::MOUSE) {
        h.get_by_label(key);
        assert!(h.get_all_by_label(what).count() >= 1, "{what}");
    }
    h.key_press(Key::Escape);
    h.run_steps(3);
    assert!(h.query_by_label("Ctrl+Shift+O").is_none());
    h.key_press(Key::Questionmark);
    h.run_steps(3);
    h.get_by_label("Ctrl+Shift+O");
    // And from the menu.
    h.key_press(Key::F1);
    h.run_steps(3);
    assert!(h.query_by_label("Ctrl+Shift+O").is_none());
    h.get_by_label("Help").click();
    h.run_steps(2);
    h.get_by_label("Controls").click();
    h.run_steps(3);
    h.get_by_label("Ctrl+Shift+O");
}

#[test]
fn a_field_clicked_with_no_plot_focused_goes_to_a_new_plot_then_beside_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_plain_bag(dir.path(), 2.0);
    let mut scope = Scope::new(Arc::new(|_| None));
    scope.open_with_default_layout(bag);
    let mut h = harness(scope);
    step_until(&mut h, "the recording to load", loaded);
    let before = h.state().layout().plots.len();
    assert!(before >= 2, "{:?}", h.state().layout());
    let field = |path: &str| SignalRef {
        topic: "car/engine".into(),
        path: path.into(),
    };
    h.get_by_role_and_label(Role::Button, "car/engine").click();
    h.run_steps(3);
    h.get_by_label("rpm").click();
    h.run_steps(3);
    let plots = &h.state().layout().plots;
    assert_eq!(plots.len(), before + 1, "{plots:?}");
    assert_eq!(
        plots.last().map(|p| p.signals.clone()),
        Some(vec![field("rpm")])
    );
    // The new plot is focused now: the next click adds beside it.
    h.get_by_label("coolantTempC").click();
    h.run_steps(3);
    let plots = &h.state().layout().plots;
    assert_eq!(plots.len(), before + 1);
    assert_eq!(
        plots.last().map(|p| p.signals.clone()),
        Some(vec![field("rpm"), field("coolantTempC")])
    );
    // Escape unfocuses: the next click makes a new plot again.
    h.key_press(Key::Escape);
    h.run_steps(2);
    h.get_by_label("throttlePositionPct").click();
    h.run_steps(3);
    assert_eq!(h.state().layout().plots.len(), before + 2);
}
