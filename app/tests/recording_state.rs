//! Journeys: what one recording leaves behind must not leak into the next. Opening shows the
//! new recording's whole range, a saved layout keeps only what applies, and a recording with
//! nothing applicable (also `scope PATH`) gets the default layout.

mod common;

use common::{dialog_returning, harness, loaded, step_until, write_plain_bag};
use egui_kittest::kittest::Queryable;
use scope::Scope;
use scope::data::derived::{DerivedSpec, Transform};
use scope::data::layout::{Layout, SignalRef};

fn signal(topic: &str, path: &str) -> SignalRef {
    SignalRef {
        topic: topic.into(),
        path: path.into(),
    }
}

fn assert_whole_range(scope: &Scope) {
    let rec = scope.recording().expect("open");
    let span_s = (rec.t1_ns() - rec.t0_ns()) as f64 / 1e9;
    let (a, b) = scope.visible_range_s().expect("plots drawn");
    assert!(
        a.abs() < 1e-6 && (b - span_s).abs() < 1e-6,
        "visible {a}..{b} s, expected 0..{span_s} s"
    );
}

#[test]
fn after_the_live_demo_opening_a_file_shows_its_whole_range_and_its_own_fields() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_plain_bag(dir.path(), 6.0);
    let mut scope = Scope::new(dialog_returning(bag));
    scope.open_demo();
    let mut h = harness(scope);
    // Two seconds of the demo, followed: its window is the last seconds of the demo's clock.
    step_until(&mut h, "the demo to plot two seconds", |s| {
        !s.layout().plots.is_empty()
            && s.recording()
                .is_some_and(|r| r.t1_ns().saturating_sub(r.t0_ns()) > 2_000_000_000)
    });
    let demo_window = h.state().visible_range_s().expect("demo plotted");
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Open Folder...").click();
    h.run_steps(2);
    step_until(&mut h, "the file to load", |s| {
        loaded(s) && s.recording().is_some_and(|r| r.capture().is_none())
    });
    assert_whole_range(h.state());
    assert_ne!(h.state().visible_range_s(), Some(demo_window));
    // The demo's plots did not apply: the file's default layout replaced them.
    assert!(h.query_by_label_contains("not in this recording").is_none());
    let layout = h.state().layout();
    assert!(!layout.plots.is_empty());
    assert!(
        layout.signals().all(|s| s.topic.starts_with("car/")),
        "{layout:?}"
    );
    h.get_by_label_contains("car/engine/rpm = ");
}

#[test]
fn a_saved_layout_keeps_only_the_fields_this_recording_has() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_plain_bag(dir.path(), 2.0);
    let mut scope = Scope::new(dialog_returning(bag));
    let mut saved = Layout::default();
    saved.add(None, signal("car/engine", "rpm"));
    saved.add(Some(0), signal("car/engine", "noSuchField"));
    saved.add(None, signal("gone/topic", "x"));
    scope.persisted.layout = saved;
    let mut h = harness(scope);
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Open Folder...").click();
    step_until(&mut h, "the recording to load", loaded);
    assert_eq!(
        h.state()
            .layout()
            .plots
            .iter()
            .map(|p| p.signals.clone())
            .collect::<Vec<_>>(),
        vec![vec![signal("car/engine", "rpm")]]
    );
    assert!(h.query_by_label_contains("not in this recording").is_none());
    assert_whole_range(h.state());
}

#[test]
fn a_saved_derived_signal_over_fields_this_recording_lacks_is_not_plotted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_plain_bag(dir.path(), 2.0);
    let mut scope = Scope::new(dialog_returning(bag));
    let derived = |name: &str, expression: &str| DerivedSpec {
        name: name.into(),
        expression: expression.into(),
        transform: Transform::None,
    };
    let mut saved = Layout {
        derived: vec![
            derived("ok", "{car/engine/rpm} + 1"),
            derived("gap", "{B:car/engine/rpm} - {car/engine/rpm}"),
            derived("twice_gap", "{Derived/gap} * 2"),
            derived("gone", "{gone/topic/x} * 2"),
        ],
        ..Layout::default()
    };
    for signal in saved
        .derived
        .iter()
        .map(DerivedSpec::signal)
        .collect::<Vec<_>>()
    {
        saved.add(None, signal);
    }
    scope.persisted.layout = saved;
    let mut h = harness(scope);
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Open Folder...").click();
    step_until(&mut h, "the recording to load", loaded);
    // Only the one whose inputs are here: "gap" reads a second recording that is not open,
    // "twice_gap" reads "gap", "gone" a topic this recording lacks.
    let plotted: Vec<Vec<SignalRef>> = h
        .state()
        .layout()
        .plots
        .iter()
        .map(|p| p.signals.clone())
        .collect();
    assert_eq!(plotted, vec![vec![signal("Derived", "ok")]]);
    // The definitions stay, to edit or to use on another recording.
    assert_eq!(h.state().layout().derived.len(), 4);
}

#[test]
fn scope_path_opens_with_the_default_layout_not_an_empty_plot_area() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_plain_bag(dir.path(), 3.0);
    let mut scope = Scope::new(dialog_returning(bag.clone()));
    // As `main` does for `scope PATH`.
    scope.open_with_default_layout(bag);
    let mut h = harness(scope);
    step_until(&mut h, "the recording to load", loaded);
    let layout = h.state().layout().clone();
    assert!(
        !layout.plots.is_empty() && layout.plots.len() <= 4,
        "{layout:?}"
    );
    for plot in &layout.plots {
        // One topic per plot, never a header field, never rpm beside degrees C.
        let topics: Vec<&str> = plot.signals.iter().map(|s| s.topic.as_str()).collect();
        assert!(topics.windows(2).all(|w| w[0] == w[1]), "{plot:?}");
        assert!(plot.signals.iter().all(|s| !s.path.starts_with("header")));
        let has = |p: &str| plot.signals.iter().any(|s| s.path == p);
        assert!(!(has("rpm") && has("coolantTempC")), "{plot:?}");
    }
    assert!(
        h.query_by_label("Click a field in the topic tree, or drag it here, to plot it.")
            .is_none()
    );
    assert!(h.state().points_last_frame() > 0);
    assert_whole_range(h.state());
}

#[test]
fn a_recording_of_text_opens_on_the_log_view_instead_of_an_empty_plot_area() {
    let Some(bag) = common::oracle("rosbag2/rosbag2_py/test/resources/mcap/talker") else {
        return;
    };
    let mut scope = Scope::new(dialog_returning(bag.clone()));
    scope.open_with_default_layout(bag);
    let mut h = harness(scope);
    step_until(&mut h, "the recording to load", loaded);
    // /rosout's numbers are a clock, a constant level and a constant line number: nothing to
    // plot. Its text is what it holds.
    assert!(
        h.state().layout().plots.is_empty(),
        "{:?}",
        h.state().layout()
    );
    assert_eq!(h.state().right, scope::ui::side_panel::RightPanel::Log);
    step_until(&mut h, "the log lines", |s| {
        s.log_view.lines.as_ref().is_some_and(|l| l.done)
    });
    let lines = h
        .state()
        .log_view
        .lines
        .as_ref()
        .map_or(0, |l| l.lines.len());
    assert_eq!(lines, 10, "every /rosout message is a line");
}

#[test]
fn a_recording_without_messages_shows_no_time_rather_than_the_epoch() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = dir.path().join("empty");
    bag::BagWriter::create(&bag, bag::WriteOptions::new())
        .expect("create")
        .close()
        .expect("close");
    let h = common::open_with_dialog(bag);
    assert!(!h.state().recording().expect("open").has_time());
    h.get_by_label("t = -");
    assert!(h.query_by_label_contains("1970").is_none());
    assert!(h.query_by_label_contains("t = 0.000 s").is_none());
}

/// A rosbag2 SQLite bag from before Iron names its types without defining them: the Health
/// panel says which types decode with the definitions built in and which have none, and the
/// standard ones plot.
#[test]
fn a_bag_without_definitions_says_which_types_use_the_definitions_built_in() {
    let Some(oracle) = common::oracle("rosbag2-sqlite3/imu_joint_string") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = dir.path().join("humble");
    std::fs::create_dir(&bag).expect("mkdir");
    for entry in std::fs::read_dir(&oracle).expect("oracle") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), bag.join(entry.file_name())).expect("copy");
    }
    let conn = rusqlite::Connection::open(bag.join("imu_joint_string.db3")).expect("db3");
    conn.execute_batch(
        "DROP TABLE message_definitions;
         UPDATE topics SET type = 'my_robot_msgs/msg/MotorState' WHERE name = '/joint_states';",
    )
    .expect("make it a bag from before Iron");
    drop(conn);
    let mut scope = Scope::new(dialog_returning(bag.clone()));
    scope.open_with_default_layout(bag);
    let mut h = harness(scope);
    step_until(&mut h, "the recording to load", loaded);
    let definitions = h.state().recording().expect("open").definitions().clone();
    assert_eq!(
        definitions.built_in,
        ["sensor_msgs/msg/Imu", "std_msgs/msg/String"]
    );
    assert_eq!(definitions.missing, ["my_robot_msgs/msg/MotorState"]);
    // What the topic tree's hover names, per topic.
    let topics = &h.state().recording().expect("open").summary().topics;
    let of = |name: &str| {
        let i = topics.iter().position(|t| t.topic == name).expect(name);
        definitions.by_topic[i].clone()
    };
    assert!(
        of("/imu").contains(&"sensor_msgs/Imu".to_owned()),
        "{:?}",
        of("/imu")
    );
    assert!(of("/joint_states").is_empty());
    h.get_by_label("Definitions built in: 2 types");
    h.get_by_label("No definition: 1 type");
    assert!(
        !h.state().layout().plots.is_empty(),
        "{:?}",
        h.state().layout()
    );
    assert!(h.state().points_last_frame() > 0, "the Imu's fields plot");
}
