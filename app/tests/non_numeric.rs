//! Journeys through data that is not numbers: the inspector's raw view of a message that does
//! not decode (with the decode error, never "Not decoded yet" forever), and the log view of
//! text topics.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{T0, dialog_returning, harness, loaded, mixed_bag, step_until};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scope::Scope;

fn open_mixed(dir: &Path) -> Harness<'static, Scope> {
    let bag = mixed_bag(dir);
    let mut h = harness(Scope::new(dialog_returning(bag)));
    h.run_steps(2);
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Open Folder...").click();
    step_until(&mut h, "the recording to load", loaded);
    h
}

fn choose_inspector_topic(h: &mut Harness<'_, Scope>, topic: &str) {
    h.get_by_label("Inspector").click();
    h.run_steps(2);
    h.get_by_label("Topic").click();
    h.run_steps(2);
    // The topic tree has a button of the same name: the combo box's entry is drawn last.
    h.get_all_by_label(topic)
        .last()
        .expect("a combo box entry")
        .click();
    h.run_steps(2);
}

fn step_until_found(
    h: &mut Harness<'_, Scope>,
    what: &str,
    found: impl Fn(&Harness<'_, Scope>) -> bool,
) {
    let start = Instant::now();
    while !found(h) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "never showed {what}: {:#?}",
            h.root()
        );
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_topic_whose_schema_fails_shows_its_error_and_a_raw_view_of_its_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut h = open_mixed(dir.path());
    choose_inspector_topic(&mut h, "bad/schema");
    h.get_by_label_contains("This topic cannot be decoded: cannot decode");
    step_until_found(&mut h, "the raw view", |h| {
        h.query_by_label_contains("length 9 bytes, logged at")
            .is_some()
    });
    h.get_by_label_contains("01 02 03 41 42 43 44 45  ...ABCDE");
    assert!(h.query_by_label_contains("Not decoded yet").is_none());
}

#[test]
fn a_message_that_does_not_decode_shows_the_decode_error_and_its_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut h = open_mixed(dir.path());
    // Half a second in: the playhead starts on the recording's first message, before this
    // topic's first.
    h.state_mut().playback.playhead_ns = T0 + 500_000_000;
    choose_inspector_topic(&mut h, "bad/bytes");
    step_until_found(&mut h, "the raw view", |h| {
        h.query_by_label_contains("length 17 bytes").is_some()
    });
    h.get_by_label("Raw message");
    h.get_by_label_contains("ff 6e 6f 74");
}

#[test]
fn the_log_view_follows_the_playhead_filters_and_seeks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut h = open_mixed(dir.path());
    // One second in: the first 11 diagnostics (every 100 ms from T0 + 2 ns) are at or before.
    h.state_mut().playback.playhead_ns = T0 + 1_000_000_002;
    h.get_by_label("Log").click();
    step_until_found(&mut h, "the log lines", |h| {
        h.query_by_label("11 shown of 20 matching; 20 lines")
            .is_some()
    });
    // The text topic was chosen by itself, and each line reads as text.
    assert_eq!(
        h.state().log_view.topic,
        h.state().recording().and_then(|r| r.topic_index("car/log"))
    );
    assert_eq!(
        h.get_all_by_label_contains("info  engine  coolant at ")
            .count(),
        11
    );
    // The playhead moves: so do the lines.
    h.state_mut().playback.playhead_ns = T0 + 1_500_000_002;
    h.run_steps(3);
    h.get_by_label("16 shown of 20 matching; 20 lines");
    // A filter that matches nothing.
    h.get_by_label("Filter lines").click();
    h.run_steps(2);
    h.get_by_label("Filter lines").type_text("gnss");
    h.run_steps(3);
    h.get_by_label("0 shown of 0 matching; 20 lines");
    h.state_mut().log_view.filter = "ENGINE".into();
    h.run_steps(3);
    h.get_by_label("16 shown of 20 matching; 20 lines");
    // Not following: every line; a click on one moves the playhead to it.
    h.get_by_label("Follow playhead").click();
    h.run_steps(3);
    h.get_by_label("20 shown of 20 matching; 20 lines");
    let first = h
        .get_all_by_label_contains("info  engine  coolant at ")
        .next()
        .expect("a line");
    first.click();
    h.run_steps(2);
    assert_eq!(h.state().playback.playhead_ns, T0 + 2);
}

#[test]
fn the_log_view_of_a_live_capture_takes_in_new_messages() {
    let mut scope = Scope::new(dialog_returning(std::path::PathBuf::new()));
    scope.open_demo();
    let mut h = harness(scope);
    step_until(&mut h, "live data", |s| {
        s.recording()
            .is_some_and(|r| r.topic_index("car/diagnostics").is_some())
    });
    h.get_by_label("Log").click();
    let count = |s: &Scope| s.log_view.lines.as_ref().map_or(0, |l| l.lines.len());
    step_until(&mut h, "a first diagnostic line", |s| count(s) >= 1);
    let first = count(h.state());
    step_until(&mut h, "a newer diagnostic line", |s| count(s) > first);
    let lines = h.state().log_view.lines.as_ref().expect("lines");
    // In time order, each message once.
    assert!(
        lines.lines.windows(2).all(|w| w[0].t_ns < w[1].t_ns),
        "{lines:?}"
    );
}
