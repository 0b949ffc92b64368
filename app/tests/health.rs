//! The health panel says only what the recording holds: latency where a publish time is
//! known and differs from the log time, never 0 for "unknown" nor log time minus 0.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bag::{BagWriter, ChannelSpec, WriteOptions};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scope::data::source::RecordingSource;
use scope::recording::Recording;
use scope::ui::health::health_ui;

const T0: u64 = 1_700_000_000_000_000_000;

fn loaded(path: &std::path::Path) -> Recording {
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
    recording
}

#[test]
fn latency_is_listed_only_for_topics_with_a_publish_time_of_their_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bag");
    let mut w = BagWriter::create(&path, WriteOptions::new()).expect("create");
    let info = schemas::by_name("EngineRpm").expect("registered");
    let mut add = |topic: &str| {
        w.add_channel(ChannelSpec::capnp(
            topic,
            info.registry_name,
            info.capnp_name,
            info.descriptor,
        ))
    };
    let (stamped, zero, unstamped) = (add("stamped"), add("zero"), add("unstamped"));
    for seq in 0..100u64 {
        let log = T0 + seq * 10_000_000;
        let bytes = schemas::sample::encode("EngineRpm", seq as f64 * 0.01, seq).expect("encode");
        w.write(stamped, log, Some(log - 1_500_000), &bytes)
            .expect("write");
        // A format without publish times writes 0.
        w.write(zero, log + 1, Some(0), &bytes).expect("write");
        // Arrived without one: stored with its log time.
        w.write(unstamped, log + 2, None, &bytes).expect("write");
    }
    w.close().expect("close");
    let recording = loaded(&path);
    let mut h = Harness::builder()
        .with_size(egui::vec2(460.0, 700.0))
        .build_ui(|ui| health_ui(ui, &recording));
    h.run();
    h.get_by_label("Publish-to-log latency (ms)");
    assert_eq!(
        h.get_all_by_label("1.500").count(),
        3,
        "p50, p99 and max of `stamped`"
    );
    assert!(h.query_by_label("zero").is_none());
    assert!(h.query_by_label("unstamped").is_none());
    assert!(h.query_by_label("0.000").is_none());
    assert!(h.query_by_label_contains("9223372").is_none());
    assert!(h.query_by_label_contains("1700000000").is_none());
    h.get_by_label("2 topics without a publish time: not listed");
    h.get_by_label("No known loss or damage");
}

#[test]
fn with_no_publish_time_anywhere_latency_is_unknown_not_zero() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bag");
    let mut w = BagWriter::create(&path, WriteOptions::new()).expect("create");
    let info = schemas::by_name("EngineRpm").expect("registered");
    let engine = w.add_channel(ChannelSpec::capnp(
        "car/engine",
        info.registry_name,
        info.capnp_name,
        info.descriptor,
    ));
    for seq in 0..50u64 {
        let log = T0 + seq * 20_000_000;
        let bytes = schemas::sample::encode("EngineRpm", seq as f64 * 0.02, seq).expect("encode");
        w.write(engine, log, Some(0), &bytes).expect("write");
    }
    w.close().expect("close");
    let recording = loaded(&path);
    let mut h = Harness::builder()
        .with_size(egui::vec2(460.0, 700.0))
        .build_ui(|ui| health_ui(ui, &recording));
    h.run();
    h.get_by_label("Publish-to-log latency: unknown");
    assert!(h.query_by_label("car/engine").is_none());
    assert!(h.query_by_label("0.000").is_none());
}

#[test]
fn a_torn_part_lists_the_topics_recovered_from_it_and_says_what_is_unknown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bag");
    let options = WriteOptions::new().part_max_duration_ns(Some(1_000_000_000));
    let mut w = BagWriter::create(&path, options).expect("create");
    let info = schemas::by_name("EngineRpm").expect("registered");
    let mut add = |topic: &str| {
        w.add_channel(ChannelSpec::capnp(
            topic,
            info.registry_name,
            info.capnp_name,
            info.descriptor,
        ))
    };
    let (engine, early) = (add("car/engine"), add("car/early"));
    for seq in 0..300u64 {
        let log = T0 + seq * 10_000_000;
        let bytes = schemas::sample::encode("EngineRpm", seq as f64 * 0.01, seq).expect("encode");
        w.write(engine, log, Some(log - 1_000_000), &bytes)
            .expect("write");
        // Only in the first second: nothing of it is in the last part.
        if seq < 100 {
            w.write(early, log + 1, Some(log), &bytes).expect("write");
        }
    }
    w.close().expect("close");
    let last = path.join("bag_2.mcap");
    let len = std::fs::metadata(&last).expect("last part").len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&last)
        .and_then(|f| f.set_len(len * 2 / 3))
        .expect("tear");
    let recording = loaded(&path);
    let engine_torn = recording
        .topic_index("car/engine")
        .and_then(|i| recording.data(i))
        .map_or(0, |d| d.torn_messages);
    assert!(engine_torn > 0);
    let mut h = Harness::builder()
        .with_size(egui::vec2(460.0, 900.0))
        .build_ui(|ui| health_ui(ui, &recording));
    h.run();
    h.get_by_label("Recovered from the torn part:");
    h.get_by_label(&format!("  car/engine: {engine_torn} messages"));
    assert!(h.query_by_label_contains("car/early: ").is_none());
    h.get_by_label_contains("how many, and of which topics, the recording does not say");
}

#[test]
fn loss_recorded_in_the_index_and_an_unreadable_index_are_shown_and_unknown_drops_are_not_0() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bag");
    let mut w = BagWriter::create(&path, WriteOptions::new()).expect("create");
    let ch = w.add_channel(ChannelSpec {
        topic: "car/speed".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: Default::default(),
    });
    for seq in 0..10u64 {
        w.write(ch, T0 + seq * 1_000_000, None, br#"{"v": 1.0}"#)
            .expect("write");
    }
    let mut loss = bag::metadata::LossRecord::new(
        bag::metadata::LossKind::TornTail,
        Some("drive_0.mcap".into()),
        "cut by reindex",
    );
    loss.messages = Some(7);
    w.record_loss(loss).expect("record loss");
    w.mark_drop_count_unknown().expect("mark unknown");
    w.close().expect("close");

    let recording = loaded(&path);
    let mut h = Harness::builder()
        .with_size(egui::vec2(460.0, 700.0))
        .build_ui(|ui| health_ui(ui, &recording));
    h.run();
    h.get_by_label("Recorded loss");
    h.get_by_label("Known loss: 1 reason, listed below");
    assert!(h.query_by_label_contains("No known").is_none());
    h.get_by_label_contains("a torn part was cut (drive_0.mcap), 7 messages");
    h.get_by_label("Dropped messages: unknown");
    assert!(h.query_by_label("Dropped messages: 0").is_none());
    drop(h);

    // The same bag with an index that does not parse: said, and the counts are unknown.
    std::fs::write(
        path.join("metadata.yaml"),
        b"rosbag2_bagfile_information: [",
    )
    .expect("write");
    let recording = loaded(&path);
    let mut h = Harness::builder()
        .with_size(egui::vec2(460.0, 700.0))
        .build_ui(|ui| health_ui(ui, &recording));
    h.run();
    h.get_by_label("Recorded loss");
    h.get_by_label_contains("metadata.yaml cannot be read");
    h.get_by_label("Dropped messages: unknown");
}
