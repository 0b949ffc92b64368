//! Live capture on loopback: publish known messages, capture them, Save Recording, reopen.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;
use common::{dialog_returning, free_port, harness, wait_until};

use bag::live::{LivePublisher, SessionOptions};
use bag::{BagReader, ReadFilter};
use egui_kittest::kittest::Queryable;
use scope::Scope;
use scope::data::source::{DataSource, RecordingSource};
use scope::data::topic_data::TopicData;
use scope::live::save::{SaveProgress, save_capture};
use scope::live::{LiveCapture, LiveEvent, LiveOptions};
use scope::recording::Recording;

/// A publisher session listening on loopback, and capture options that connect to it.
fn publisher_and_capture_options(cap_bytes: usize) -> (bag::live::Session, LiveOptions) {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let session = SessionOptions::listening(&endpoint)
        .open()
        .expect("publisher session");
    let mut options = LiveOptions::connect(&endpoint, "car/**");
    options.cap_bytes = cap_bytes;
    (session, options)
}

fn engine_bytes(seq: u64) -> Vec<u8> {
    schemas::sample::encode("EngineRpm", seq as f64 * 0.02, seq).expect("encode")
}

/// Publishes `n` EngineRpm messages once the capture is subscribed; returns their bytes.
fn publish_engine(session: &bag::live::Session, n: u64) -> Vec<Vec<u8>> {
    let publisher = LivePublisher::capnp(session, "car/engine", "EngineRpm").expect("publisher");
    wait_until("the capture to subscribe", Duration::from_secs(20), || {
        publisher.has_subscribers()
    });
    (0..n)
        .map(|seq| {
            let bytes = engine_bytes(seq);
            publisher.put(bytes.clone()).expect("put");
            bytes
        })
        .collect()
}

/// The live columns of topic 0, built from the capture's events as the app builds them.
fn live_columns(capture: &LiveCapture, n: u64) -> TopicData {
    let mut data = TopicData::default();
    wait_until("the decoded columns", Duration::from_secs(20), || {
        while let Some(event) = capture.try_event() {
            match event {
                LiveEvent::Columns {
                    topic: 0, columns, ..
                } => data.append(&columns),
                LiveEvent::Failed(e) => panic!("capture failed: {e}"),
                _ => {}
            }
        }
        data.times_ns.len() as u64 == n
    });
    data
}

fn read_all(bag: &Path) -> Vec<Vec<u8>> {
    let reader = BagReader::open(bag).expect("reopen");
    let mut cursor = reader.messages(&ReadFilter::all()).expect("read");
    let mut out = Vec::new();
    while let Some(m) = cursor.next_message() {
        out.push(m.data.to_vec());
    }
    out
}

#[test]
fn published_messages_are_captured_saved_and_reopen_with_identical_signals() {
    let (session, options) = publisher_and_capture_options(64 << 20);
    let capture = LiveCapture::start(options, Arc::new(|| {}));
    let n = 1_500;
    let sent = publish_engine(&session, n);
    let live = live_columns(&capture, n);
    let stats = capture.shared().stats();
    assert_eq!(
        (stats.received, stats.evicted, stats.transport_dropped),
        (n, 0, 0)
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("saved");
    let summary = save_capture(capture.shared(), &out, &SaveProgress::default()).expect("save");
    assert_eq!(summary.message_count, n);
    assert_eq!(summary.dropped_messages, 0);
    assert_eq!(read_all(&out), sent, "exact bytes, in order");

    // The saved bag decodes to the same columns the capture plotted.
    let source = RecordingSource::open(&out).expect("open saved");
    assert_eq!(source.summary().topics[0].topic, "car/engine");
    let mut recording = Recording::start(Arc::new(source), Arc::new(|| {}));
    wait_until("the saved bag to load", Duration::from_secs(30), || {
        recording.poll(Duration::from_millis(50));
        recording.loaded()
    });
    let saved = recording.data(0).expect("the engine topic loads");
    assert_eq!(saved.times_ns, live.times_ns);
    for field in &live.fields {
        let other = saved.field(&field.path).expect("same leaves");
        for i in 0..n as usize {
            let (a, b) = (field.series.value(i), other.series.value(i));
            assert!(
                a == b || a.zip(b).is_some_and(|(a, b)| a.is_nan() && b.is_nan()),
                "{} #{i}: {a:?} vs {b:?}",
                field.path
            );
        }
    }
    let rpm = live.field("rpm").expect("rpm");
    let expected = scope_value_of_rpm(&sent[7]);
    assert_eq!(rpm.series.value(7), Some(expected));
}

/// rpm as the decode crate reads it from the recording's own schema.
fn scope_value_of_rpm(bytes: &[u8]) -> f64 {
    let info = schemas::by_name("EngineRpm").expect("registered");
    let mut plan = decode::compile(&decode::SchemaSource {
        message_encoding: "capnproto",
        schema_encoding: "capnproto",
        schema_name: info.capnp_name,
        schema_data: info.descriptor,
    })
    .expect("compile");
    plan.decode_fields(bytes)
        .expect("decode")
        .into_iter()
        .find(|(p, _)| p == "rpm")
        .map(|(_, v)| v.as_f64())
        .expect("rpm")
}

#[test]
fn a_small_cap_evicts_and_the_saved_index_counts_exactly_what_was_evicted() {
    // Room for about 100 of these messages.
    let per_message = engine_bytes(0).len() + scope::live::capture::RECORD_BYTES;
    let (session, options) = publisher_and_capture_options(per_message * 100);
    let capture = LiveCapture::start(options, Arc::new(|| {}));
    // One message on an advertised topic, which the cap evicts: it did publish. And a topic
    // advertised that never publishes.
    let config = LivePublisher::capnp(&session, "car/config", "EngineRpm").expect("publisher");
    let _silent = LivePublisher::capnp(&session, "car/silent", "EngineRpm").expect("publisher");
    wait_until("the capture to subscribe", Duration::from_secs(20), || {
        config.has_subscribers()
    });
    let mut sent = vec![engine_bytes(7)];
    config.put(sent[0].clone()).expect("put");
    wait_until("the config message", Duration::from_secs(20), || {
        capture.shared().store().end_seq() == 1
    });
    let n = 1_000;
    sent.extend(publish_engine(&session, n));
    let total = n + 1;
    wait_until(
        "every sample and both advertisements",
        Duration::from_secs(20),
        || {
            let stats = capture.shared().stats();
            stats.received == total
                && capture.shared().store().end_seq() == total
                && stats.advertised.len() == 3
        },
    );
    let evicted = capture.shared().store().evicted();
    assert!(evicted >= 850, "evicted {evicted}");

    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("saved");
    let summary = save_capture(capture.shared(), &out, &SaveProgress::default()).expect("save");
    assert_eq!(summary.dropped_messages, evicted);
    assert_eq!(
        summary.message_count + summary.dropped_messages,
        total,
        "published = saved + dropped"
    );
    let never: Vec<&str> = summary
        .advertised_never_published
        .iter()
        .map(|a| a.topic.as_str())
        .collect();
    assert_eq!(
        never,
        ["car/silent"],
        "car/config published, then was evicted"
    );
    let saved = read_all(&out);
    assert_eq!(
        saved.as_slice(),
        &sent[evicted as usize..],
        "the newest survive"
    );
    let reader = BagReader::open(&out).expect("reopen");
    assert_eq!(reader.dropped_messages(), Some(evicted));
}

#[test]
fn with_spill_to_disk_the_saved_capture_keeps_what_the_cap_evicted() {
    let per_message = engine_bytes(0).len() + scope::live::capture::RECORD_BYTES;
    let (session, mut options) = publisher_and_capture_options(per_message * 100);
    options.spill = true;
    let capture = LiveCapture::start(options, Arc::new(|| {}));
    let n = 1_000;
    let sent = publish_engine(&session, n);
    wait_until("every sample", Duration::from_secs(20), || {
        capture.shared().store().end_seq() == n
    });
    let evicted = capture.shared().store().evicted();
    assert!(evicted >= 850, "evicted {evicted}");
    let spill_dir = capture
        .shared()
        .spill()
        .as_ref()
        .map(|s| s.dir().to_path_buf())
        .expect("spilling");

    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("saved");
    let summary = save_capture(capture.shared(), &out, &SaveProgress::default()).expect("save");
    assert_eq!(summary.dropped_messages, 0, "nothing was truly lost");
    assert_eq!(summary.message_count, n);
    assert_eq!(
        read_all(&out),
        sent,
        "spilled then held, byte for byte, in order"
    );
    drop(capture);
    let start = Instant::now();
    while spill_dir.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the spill bag was not removed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn with_spill_to_disk_a_save_while_the_ring_turns_over_loses_nothing() {
    let per_message = engine_bytes(0).len() + scope::live::capture::RECORD_BYTES;
    let (session, mut options) = publisher_and_capture_options(per_message * 100);
    options.spill = true;
    let capture = LiveCapture::start(options, Arc::new(|| {}));
    let first = 1_000;
    let mut sent = publish_engine(&session, first);
    wait_until("the first messages", Duration::from_secs(20), || {
        capture.shared().store().end_seq() == first
    });
    // The save starts while these stream in: copying the spilled messages first, it falls
    // behind a ring of 100 that turns over every millisecond or so.
    let more: Vec<Vec<u8>> = (first..first + 20_000).map(engine_bytes).collect();
    sent.extend(more.iter().cloned());
    let publisher = LivePublisher::capnp(&session, "car/engine", "EngineRpm").expect("publisher");
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("saved");
    let summary = std::thread::scope(|s| {
        s.spawn(|| {
            for bytes in &more {
                publisher.put(bytes.clone()).expect("put");
            }
        });
        while capture.shared().store().end_seq() < first + 100 {
            std::thread::yield_now();
        }
        save_capture(capture.shared(), &out, &SaveProgress::default()).expect("save")
    });
    assert_eq!(summary.dropped_messages, 0, "nothing was truly lost");
    let saved = read_all(&out);
    assert_eq!(saved.len() as u64, summary.message_count);
    assert!(saved.len() as u64 > first, "saved {}", saved.len());
    assert!(
        saved == sent[..saved.len()],
        "the saved bag is the capture up to the save, without a gap"
    );
}

#[test]
fn file_save_recording_writes_the_live_demo_as_a_bag() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("demo-capture");
    let mut scope = Scope::new(dialog_returning(out.clone()));
    scope.open_demo();
    let mut h = harness(scope);
    let start = Instant::now();
    let enough = |s: &Scope| {
        s.recording()
            .is_some_and(|r| r.summary().health.message_count > 500 && !s.layout().plots.is_empty())
    };
    while !enough(h.state()) {
        assert!(start.elapsed() < Duration::from_secs(60), "no live data");
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    // Following: the playhead sits on the newest message, and the status bar says so.
    assert!(h.state().follow);
    let newest = h.state().recording().map(|r| r.t1_ns());
    assert_eq!(Some(h.state().playback.playhead_ns), newest);
    h.get_by_label_contains("msg/s");
    h.get_by_label_contains("evicted 0");
    // Space pauses following; the view then stays where it is while data keeps coming.
    h.key_press(egui::Key::Space);
    h.run_steps(2);
    assert!(!h.state().follow);
    let paused_at = h.state().playback.playhead_ns;
    std::thread::sleep(Duration::from_millis(300));
    h.run_steps(3);
    assert_eq!(h.state().playback.playhead_ns, paused_at);
    assert!(h.state().recording().is_some_and(|r| r.t1_ns() > paused_at));
    h.get_by_label("Follow").click();
    h.run_steps(2);
    assert!(h.state().follow);
    // The simulator's silent camera shows in the health panel.
    h.get_by_label_contains("car/camera/front (DiagnosticLog)");
    // The inspector decodes the newest message of a live topic.
    h.get_by_label("Inspector").click();
    let start = Instant::now();
    while h.query_by_label("message").is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "inspector shows nothing"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.get_by_label("Health").click();
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Save Recording...").click();
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
    let reader = BagReader::open(&out).expect("the saved bag opens");
    assert!(reader.message_count() > 500);
    let topics: Vec<&str> = reader
        .channels()
        .iter()
        .map(|c| c.spec.topic.as_str())
        .collect();
    assert!(
        topics.contains(&"car/imu") && topics.contains(&"car/engine"),
        "{topics:?}"
    );
    let silent: Vec<&str> = reader
        .advertised_never_published()
        .iter()
        .map(|a| a.topic.as_str())
        .collect();
    assert_eq!(silent, ["car/camera/front"]);
    assert!(
        reader.unstamped_messages().is_some_and(|u| u > 0),
        "the battery is unstamped"
    );
}

/// The decoded messages a scope holds for its live capture: in its columns, and sent by the
/// worker but not yet taken.
fn decoded_held(scope: &Scope) -> (u64, u64) {
    let Some(rec) = scope.recording() else {
        return (0, 0);
    };
    let in_columns = (0..rec.topics.len())
        .filter_map(|i| rec.data(i))
        .map(|d| d.times_ns.len() as u64)
        .sum();
    let queued = rec.capture().map_or(0, |c| c.queued_messages());
    (in_columns, queued)
}

#[test]
fn with_only_logic_running_as_for_a_hidden_window_the_decoded_capture_stays_bounded() {
    // A ring with room for about 100 messages, and 30,000 published while no ui pass runs:
    // eframe runs only `logic` while the window is minimised.
    let ring = 100u64;
    let per_message = engine_bytes(0).len() + scope::live::capture::RECORD_BYTES;
    let (session, options) = publisher_and_capture_options(per_message * ring as usize);
    let mut app = Scope::new(Arc::new(|_| None));
    app.start_live(options);
    let ctx = egui::Context::default();
    app.logic(&ctx);
    // Columns keep up to DEAD_PREFIX_MIN evicted messages (or as many as are alive) before
    // dropping them, and the worker queues at most what the ring holds plus one piece; both
    // may lag the ring by one flush.
    let bound = 4 * ring + 2 * scope::recording::DEAD_PREFIX_MIN as u64;
    let n = 30_000u64;
    let mut worst = 0u64;
    let mut check = |app: &Scope| {
        let (in_columns, queued) = decoded_held(app);
        worst = worst.max(in_columns + queued);
        assert!(
            in_columns + queued <= bound,
            "{in_columns} messages in the columns and {queued} queued, over {bound}"
        );
    };
    std::thread::scope(|s| {
        let publisher = s.spawn(|| publish_engine(&session, n));
        while !publisher.is_finished() {
            app.logic(&ctx);
            check(&app);
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    let start = Instant::now();
    while app
        .recording()
        .is_none_or(|r| r.summary().health.message_count < n)
    {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "logic took in {:?} of {n} messages",
            app.recording().map(|r| r.summary().health.message_count)
        );
        app.logic(&ctx);
        check(&app);
        std::thread::sleep(Duration::from_millis(5));
    }
    // Every message was taken in by logic alone, the newest are in the columns, and the ring
    // evicted the rest.
    let rec = app.recording().expect("capturing");
    assert_eq!(rec.summary().health.message_count, n);
    let store = rec.capture().expect("live").shared().store();
    assert_eq!(
        rec.t1_ns(),
        rec.data(0)
            .and_then(|d| d.times_ns.last().copied())
            .unwrap_or(0)
    );
    assert!(store.evicted() >= n - ring, "evicted {}", store.evicted());
    assert!(worst > 0);
}

#[test]
fn a_capture_whose_events_nobody_takes_queues_no_more_than_its_ring_holds() {
    let ring = 100u64;
    let per_message = engine_bytes(0).len() + scope::live::capture::RECORD_BYTES;
    let (session, options) = publisher_and_capture_options(per_message * ring as usize);
    let capture = LiveCapture::start(options, Arc::new(|| {}));
    let n = 30_000u64;
    publish_engine(&session, n);
    wait_until("every sample in the ring", Duration::from_secs(30), || {
        capture.shared().store().end_seq() == n
    });
    // A few flushes of the worker with nobody taking anything.
    std::thread::sleep(Duration::from_millis(300));
    let queued = capture.queued_messages();
    assert!(queued <= 2 * ring, "{queued} decoded messages queued");
    // Once taken, every message is accounted for: sent as columns, or counted as evicted
    // before it could be.
    let (mut sent, mut skipped) = (0u64, 0u64);
    wait_until(
        "every message accounted for",
        Duration::from_secs(20),
        || {
            while let Some(event) = capture.try_event() {
                match event {
                    LiveEvent::Columns {
                        columns,
                        skipped: s,
                        ..
                    } => {
                        sent += columns.len() as u64;
                        skipped += s;
                    }
                    LiveEvent::Failed(e) => panic!("capture failed: {e}"),
                    LiveEvent::Topic(_) => {}
                }
            }
            sent + skipped == n
        },
    );
    assert!(sent <= 3 * ring, "sent {sent}");
    assert_eq!(capture.queued_messages(), 0);
}

#[test]
fn a_ros2_topic_whose_publisher_serves_its_schema_is_decoded_live_and_saved_with_it() {
    let (session, options) = publisher_and_capture_options(64 << 20);
    let schema = bag::live::TopicSchema {
        schema: bag::SchemaSpec {
            name: "demo/msg/Sample".into(),
            encoding: "ros2msg".into(),
            data: b"float64 x\nint32 n\n".to_vec(),
        },
        metadata: Default::default(),
    };
    // As `bag play` publishes a ROS 2 channel of a recording.
    let _serving = bag::live::serve_schema(&session, "car/sample", &schema).expect("queryable");
    let publisher =
        LivePublisher::with_encoding(&session, "car/sample", "application/cdr;demo/msg/Sample")
            .expect("publisher");
    let capture = LiveCapture::start(options, Arc::new(|| {}));
    wait_until("the capture to subscribe", Duration::from_secs(20), || {
        publisher.has_subscribers()
    });
    let n = 200;
    for i in 0..n {
        let mut bytes = vec![0, 1, 0, 0];
        bytes.extend_from_slice(&(i as f64 * 0.25).to_le_bytes());
        bytes.extend_from_slice(&(-(i as i32)).to_le_bytes());
        publisher.put(bytes).expect("put");
    }
    let live = live_columns(&capture, n);
    let x = live.field("x").expect("x decoded from the served schema");
    let count = live.field("n").expect("n");
    assert_eq!(
        (x.series.value(9), count.series.value(9)),
        (Some(2.25), Some(-9.0))
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("saved");
    save_capture(capture.shared(), &out, &SaveProgress::default()).expect("save");
    let reader = BagReader::open(&out).expect("open saved");
    let channel = &reader.channels()[0];
    assert_eq!(channel.spec.message_encoding, "cdr");
    assert_eq!(channel.spec.schema.as_ref(), Some(&schema.schema));
}
