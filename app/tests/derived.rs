//! Issue 23, item 3: derived signals. Defined in the editor (from the tree's button or a
//! field's menu), evaluated in the background into a column that plots and shows its value
//! at the playhead like any other, listed under "Derived", edited and removed from there,
//! kept in layout files; and a snapshot of one plotted beside its input.

use std::path::Path;
use std::sync::Arc;

use bag::WriteOptions;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scope::Scope;
use scope::data::cursors::Cursors;
use scope::data::derived::{DERIVED_TOPIC, DerivedSpec, Transform};
use scope::data::layout::{Layout, PlotSpec, SignalRef};
use scope::recording::TopicState;

mod common;
use common::{
    T0, V, cdr_bag, harness, load_recording, loaded, signal, snapshot_plot_stack, step_until,
};

const MS: u64 = 1_000_000;

/// `a` = i at 100 Hz for 2 s; `b` = 1000 at 10 Hz.
fn two_rates(dir: &Path) -> std::path::PathBuf {
    let a = (0..=200u64)
        .map(|i| (i * 10 * MS, V::F(i as f64)))
        .collect();
    let b = (0..=20u64).map(|i| (i * 100 * MS, V::F(1000.0))).collect();
    cdr_bag(dir, T0, &[("a", a), ("b", b)], WriteOptions::new())
}

fn derived(name: &str) -> SignalRef {
    SignalRef {
        topic: DERIVED_TOPIC.into(),
        path: name.into(),
    }
}

/// The derived signal `name` has its column.
fn evaluated(name: &'static str) -> impl Fn(&Scope) -> bool {
    move |s| {
        s.recording()
            .and_then(|r| r.signal_state(&derived(name)))
            .is_some_and(|(_, state)| matches!(state, TopicState::Loaded(_)))
    }
}

fn open_two_rates(dir: &Path) -> Harness<'static, Scope> {
    let mut h = harness(Scope::new(Arc::new(|_| None)));
    h.state_mut().open(two_rates(dir));
    step_until(&mut h, "the recording to load", loaded);
    *h.state_mut().layout_mut() = Layout::default();
    h.run_steps(2);
    h
}

#[test]
fn a_derived_signal_is_defined_plotted_edited_and_removed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut h = open_two_rates(dir.path());
    h.get_by_label("New derived signal...").click();
    h.run_steps(4);
    assert!(h.state().derived_form.open, "the editor is open");
    // The name offered is replaced: select it all, then type.
    h.get_by_label("Name").focus();
    h.run_steps(1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_label("Name").type_text("sum");
    h.run_steps(1);
    assert_eq!(h.state().derived_form.name, "sum");
    let expression = h.get_by_label("Expression");
    expression.focus();
    expression.type_text("{a/value} + {b/value} / 10");
    h.run_steps(2);
    h.get_by_label("Add").click();
    step_until(&mut h, "the derived signal", evaluated("sum"));
    // Plotted at once, and its value at the playhead is a's sample plus b's held one / 10.
    assert_eq!(h.state().layout().plots[0].signals, vec![derived("sum")]);
    h.state_mut().playback.playhead_ns = T0 + 1234 * MS;
    h.run_steps(2);
    // a = 123 at 1.23 s; b = 1000 held from 1.2 s.
    h.get_by_label("Derived/sum = 223");
    h.get_by_label_contains("201 samples");

    // Edit: the derivative of the same sum, per second (a climbs 1 per 10 ms).
    h.get_by_label("sum").click_secondary();
    h.run_steps(2);
    h.get_by_label("Edit...").click();
    h.run_steps(4);
    h.get_by_label("Then").click();
    h.run_steps(2);
    h.get_by_label("derivative (per s)").click();
    h.run_steps(2);
    h.get_by_label("Save").click();
    h.run_steps(2);
    assert_eq!(
        h.state().layout().derived[0].transform,
        Transform::Derivative
    );
    step_until(&mut h, "the derivative", |s| {
        s.recording()
            .and_then(|r| scope::ui::plots::value_at(r, &derived("sum"), T0 + 1234 * MS))
            .is_some_and(|v| (v - 100.0).abs() < 1e-9)
    });

    // A broken one says why in the legend, and the rest goes on.
    h.get_by_label("sum").click_secondary();
    h.run_steps(2);
    h.get_by_label("Edit...").click();
    h.run_steps(4);
    let expression = h.get_by_label("Expression");
    expression.focus();
    expression.type_text(" + {c/value}");
    h.run_steps(2);
    h.get_by_label("Save").click();
    step_until(&mut h, "the error", |s| {
        s.recording()
            .and_then(|r| r.signal_state(&derived("sum")))
            .is_some_and(|(_, state)| matches!(state, TopicState::Failed(_)))
    });
    h.get_by_label("Derived/sum (no signal c/value in this recording)");

    // Removed: gone from the tree and the plots.
    h.get_by_label("sum").click_secondary();
    h.run_steps(2);
    h.get_by_label("Remove").click();
    h.run_steps(3);
    assert!(h.state().layout().derived.is_empty());
    assert!(h.state().layout().plots.is_empty());
}

#[test]
fn a_field_menu_starts_a_derived_signal_of_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut h = open_two_rates(dir.path());
    h.get_by_label("a").click();
    h.run_steps(2);
    h.get_by_label("value").click_secondary();
    h.run_steps(2);
    h.get_by_label("Derive a signal from this...").click();
    h.run_steps(4);
    assert_eq!(h.state().derived_form.expression, "{a/value}");
    assert_eq!(h.state().derived_form.name, "value");
    h.get_by_label("Add").click();
    step_until(&mut h, "the derived signal", evaluated("value"));
}

#[test]
fn derived_signals_travel_in_layout_files_and_follow_a_new_recording() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut h = open_two_rates(dir.path());
    let spec = DerivedSpec {
        name: "smooth".into(),
        expression: "{a/value} * 2".into(),
        transform: Transform::MovingAverage { window_ms: 50 },
    };
    h.state_mut().layout_mut().define(None, spec.clone());
    h.state_mut().layout_mut().add(None, derived("smooth"));
    step_until(&mut h, "the derived signal", evaluated("smooth"));
    let file = dir.path().join("layout.yaml");
    h.state_mut().save_layout_to(file.clone());
    let written = file.clone();
    step_until(&mut h, "the layout file", move |_| written.exists());
    let text = std::fs::read_to_string(&file).expect("layout file");
    assert!(text.contains("op: moving_average"), "{text}");
    assert!(text.contains("expression: '{a/value} * 2'"), "{text}");

    // Another recording of the same kind: the definition is evaluated on its data.
    let other = tempfile::tempdir().expect("tempdir");
    let mut h2 = harness(Scope::new(Arc::new(|_| None)));
    h2.state_mut().open(two_rates(other.path()));
    step_until(&mut h2, "the recording to load", loaded);
    h2.state_mut().open_layout_from(file.clone());
    step_until(&mut h2, "the derived signal", evaluated("smooth"));
    assert_eq!(h2.state().layout().derived, vec![spec]);
    // The mean of 2i over the samples in (t - 50 ms, t]: at 1 s, i = 96..=100.
    let v = h2
        .state()
        .recording()
        .and_then(|r| scope::ui::plots::value_at(r, &derived("smooth"), T0 + 1000 * MS));
    assert_eq!(v, Some(2.0 * 98.0));
}

/// A derived signal drawn beside its input: `a`'s running sum of b-scaled values.
#[test]
fn snapshot_of_a_derived_signal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut recording = load_recording(&two_rates(dir.path()));
    let specs = vec![DerivedSpec {
        name: "a_integral".into(),
        expression: "{a/value} - {b/value} / 10".into(),
        transform: Transform::Integral,
    }];
    let repaint: Arc<dyn Fn() + Send + Sync> = Arc::new(|| {});
    let start = std::time::Instant::now();
    while recording.signal_data(&derived("a_integral")).is_none() {
        assert!(start.elapsed() < std::time::Duration::from_secs(60));
        recording.update_derived(&specs, &repaint);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let layout = Layout {
        plots: vec![
            PlotSpec::of(vec![signal("a"), signal("b")]),
            PlotSpec::of(vec![derived("a_integral")]),
        ],
        derived: specs,
    };
    snapshot_plot_stack(
        "derived_integral",
        recording,
        layout,
        Cursors::default(),
        T0 + 1500 * MS,
        egui::vec2(640.0, 480.0),
    );
}
