//! Live capture over zenoh, on loopback only: two sessions in this process linked over
//! tcp/127.0.0.1, a publisher on one and the recorder on the other.

#![cfg(feature = "live")]

use std::sync::Arc;
use std::time::Duration;

mod common;
use common::{free_port, wait_until};

use bag::live::sim::Simulator;
use bag::live::{
    LiveMessage, LivePublisher, Recorder, SessionOptions, Subscription, advertise, capnp_encoding,
};
use bag::{BagReader, BagWriter, DropQueue, ReadFilter, WriteOptions};
use zenoh::{Session, Wait};

/// A listening session and a session connected to it.
fn linked_sessions() -> (Session, Session) {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let listener = SessionOptions::listening(&endpoint)
        .open()
        .expect("listening session");
    let connector = SessionOptions::connecting(&endpoint)
        .open()
        .expect("connecting session");
    (listener, connector)
}

fn rpm_message(seq: u64) -> Vec<u8> {
    schemas::sample::encode("EngineRpm", seq as f64 * 0.02, seq).expect("encode")
}

#[test]
fn published_messages_are_recorded_byte_exact_with_advertisements_and_unstamped_counted() {
    let (publisher_side, recorder_side) = linked_sessions();
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("capture");

    let queue = Arc::new(DropQueue::<LiveMessage>::new(usize::MAX, 64 << 20));
    let subscription =
        Subscription::start(&recorder_side, &["car/**".to_string()], Arc::clone(&queue))
            .expect("subscribe");
    let rpm = LivePublisher::capnp(&publisher_side, "car/engine", "EngineRpm").expect("publisher");
    let battery = LivePublisher::capnp(&publisher_side, "car/battery", "Battery")
        .expect("publisher")
        .without_timestamps();
    let _silent = advertise(&publisher_side, "Imu", "car/imu/rear").expect("token");
    let _elsewhere = advertise(&publisher_side, "Imu", "boat/imu").expect("token");
    wait_until("the subscriber to be seen", Duration::from_secs(10), || {
        rpm.has_subscribers() && battery.has_subscribers()
    });

    let n = 2_000u64;
    let mut sent = Vec::new();
    for seq in 0..n {
        let bytes = rpm_message(seq);
        rpm.put(bytes.clone()).expect("put");
        sent.push(bytes);
    }
    let battery_bytes = schemas::sample::encode("Battery", 1.0, 0).expect("encode");
    for _ in 0..3 {
        battery.put(battery_bytes.clone()).expect("put");
    }
    wait_until("every sample", Duration::from_secs(20), || {
        subscription.received() == n + 3
    });
    wait_until("the advertisements", Duration::from_secs(10), || {
        subscription.advertisements().snapshot().len() == 3
    });

    let writer = BagWriter::create(&out, WriteOptions::new()).expect("writer");
    let mut recorder = Recorder::new(writer, Arc::clone(subscription.topics()));
    while recorder.stats().messages < n + 3 {
        recorder
            .pump(&queue, Duration::from_millis(100))
            .expect("pump");
    }
    let advertised = subscription.advertisements().snapshot();
    let summary = recorder.finish(&advertised).expect("close");
    assert_eq!(summary.message_count, n + 3);
    assert_eq!(summary.dropped_messages, 0);
    assert_eq!(summary.unstamped_messages, 3);
    let silent: Vec<&str> = summary
        .advertised_never_published
        .iter()
        .map(|a| a.topic.as_str())
        .collect();
    assert_eq!(silent, ["car/imu/rear"], "boat/imu is outside car/**");

    let reader = BagReader::open(&out).expect("reopen");
    assert_eq!(reader.dropped_messages(), Some(0));
    assert_eq!(reader.unstamped_messages(), Some(3));
    let mut cursor = reader
        .messages(&ReadFilter::all().topics(["car/engine".to_string()]))
        .expect("read");
    let mut got = Vec::new();
    while let Some(m) = cursor.next_message() {
        assert_eq!(m.channel.spec.type_name(), "EngineRpm");
        assert!(m.publish_time_ns <= m.log_time_ns + 1_000_000_000);
        got.push(m.data.to_vec());
    }
    assert_eq!(got, sent, "bytes and order");
    drop(subscription);
    publisher_side.close().wait().expect("close");
    recorder_side.close().wait().expect("close");
}

#[test]
fn a_stalled_writer_never_blocks_the_callback_and_counts_every_drop() {
    let (publisher_side, recorder_side) = linked_sessions();
    let capacity = 100;
    let queue = Arc::new(DropQueue::<LiveMessage>::new(capacity, usize::MAX));
    let subscription =
        Subscription::start(&recorder_side, &["load/**".to_string()], Arc::clone(&queue))
            .expect("subscribe");
    let publisher =
        LivePublisher::with_encoding(&publisher_side, "load/x", "application/octet-stream")
            .expect("publisher");
    wait_until("the subscriber to be seen", Duration::from_secs(10), || {
        publisher.has_subscribers()
    });

    // Nothing consumes while publishing. Puts block on congestion, so had the callback
    // blocked on the full queue, these puts would stall and the wait below would time out.
    let n = 20_000u64;
    for i in 0..n {
        let mut payload = vec![0u8; 200];
        payload[..8].copy_from_slice(&i.to_le_bytes());
        publisher.put(payload).expect("put");
    }
    wait_until(
        "every sample at the callback",
        Duration::from_secs(30),
        || subscription.received() == n,
    );
    assert_eq!(queue.len(), capacity);
    assert_eq!(queue.dropped(), n - capacity as u64);

    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("lossy");
    let writer = BagWriter::create(&out, WriteOptions::new()).expect("writer");
    let mut recorder = Recorder::new(writer, Arc::clone(subscription.topics()));
    recorder.pump(&queue, Duration::ZERO).expect("pump");
    let summary = recorder.finish(&[]).expect("close");
    assert_eq!(summary.message_count + summary.dropped_messages, n);
    assert_eq!(summary.dropped_messages, n - capacity as u64);

    // What survived is the newest, in order.
    let reader = BagReader::open(&out).expect("reopen");
    let mut cursor = reader.messages(&ReadFilter::all()).expect("read");
    let mut expected = n - capacity as u64;
    while let Some(m) = cursor.next_message() {
        let mut first = [0u8; 8];
        first.copy_from_slice(&m.data[..8]);
        assert_eq!(u64::from_le_bytes(first), expected);
        expected += 1;
    }
    assert_eq!(expected, n);
    assert_eq!(reader.dropped_messages(), Some(n - capacity as u64));
}

#[test]
fn a_sample_that_several_key_expressions_match_is_queued_once() {
    let (publisher_side, recorder_side) = linked_sessions();
    let queue = Arc::new(DropQueue::<LiveMessage>::new(usize::MAX, 64 << 20));
    let exprs = ["car/**", "car/engine", "boat/**", "*/engine"].map(String::from);
    let subscription =
        Subscription::start(&recorder_side, &exprs, Arc::clone(&queue)).expect("subscribe");
    let engine = LivePublisher::capnp(&publisher_side, "car/engine", "EngineRpm").expect("pub");
    let boat = LivePublisher::capnp(&publisher_side, "boat/engine", "EngineRpm").expect("pub");
    wait_until(
        "the subscribers to be seen",
        Duration::from_secs(10),
        || engine.has_subscribers() && boat.has_subscribers(),
    );
    let n = 200u64;
    for seq in 0..n {
        engine.put(rpm_message(seq)).expect("put");
        boat.put(rpm_message(seq)).expect("put");
    }
    wait_until("every sample", Duration::from_secs(20), || {
        subscription.received() >= 2 * n
    });
    // Copies, were there any, come with the originals; give stragglers a moment.
    std::thread::sleep(Duration::from_millis(300));
    let mut queued = Vec::new();
    queue.drain_into(&mut queued);
    let topics = subscription.topics();
    let count = |key: &str| {
        queued
            .iter()
            .filter(|m| topics.get(m.topic).is_some_and(|t| t.key == key))
            .count() as u64
    };
    assert_eq!((count("car/engine"), count("boat/engine")), (n, n));
    assert_eq!(subscription.received(), 2 * n);
    drop(subscription);
    publisher_side.close().wait().expect("close");
    recorder_side.close().wait().expect("close");
}

/// The simulator publishes the table of `schemas::vehicle`, which the scope's demo recording is
/// written from too: its topics with their schemas, unstamped where the table says so, and the
/// silent topic advertised.
#[test]
fn the_simulator_publishes_the_simulated_vehicles_table() {
    use schemas::vehicle::{SILENT_TOPIC, TOPICS};

    let session = SessionOptions::in_process().open().expect("session");
    let queue = Arc::new(DropQueue::<LiveMessage>::new(usize::MAX, 64 << 20));
    let subscription = Subscription::start(&session, &["car/**".to_string()], Arc::clone(&queue))
        .expect("subscribe");
    let simulator = Simulator::start(&session).expect("simulator");
    // Every topic's first message is due at the start; the advertisements come with them.
    wait_until("every topic and token", Duration::from_secs(20), || {
        subscription.topics().len() == TOPICS.len()
            && subscription.advertisements().snapshot().len() == TOPICS.len() + 1
    });
    simulator.stop().expect("stop");

    let mut topics: Vec<(String, String)> = subscription
        .topics()
        .since(0)
        .into_iter()
        .map(|t| (t.key, t.encoding))
        .collect();
    topics.sort();
    let mut expected: Vec<(String, String)> = TOPICS
        .iter()
        .map(|t| (t.topic.to_string(), capnp_encoding(t.schema)))
        .collect();
    expected.sort();
    assert_eq!(topics, expected);

    let mut advertised: Vec<(String, String)> = subscription
        .advertisements()
        .snapshot()
        .into_iter()
        .map(|a| (a.topic, a.schema))
        .collect();
    advertised.sort();
    let mut expected: Vec<(String, String)> = TOPICS
        .iter()
        .map(|t| (t.topic, t.schema))
        .chain([(SILENT_TOPIC.topic, SILENT_TOPIC.schema)])
        .map(|(topic, schema)| (topic.to_string(), schema.to_string()))
        .collect();
    expected.sort();
    assert_eq!(advertised, expected);

    let mut messages = Vec::new();
    queue.drain_into(&mut messages);
    assert!(messages.iter().any(|m| m.publish_time_ns.is_none()));
    for message in &messages {
        let topic = subscription
            .topics()
            .get(message.topic)
            .expect("known topic");
        let row = TOPICS
            .iter()
            .find(|t| t.topic == topic.key)
            .expect("a table topic");
        assert_eq!(
            message.publish_time_ns.is_some(),
            row.stamped,
            "{}",
            topic.key
        );
    }
    drop(subscription);
    bag::live::close(session).expect("close");
}

#[test]
fn a_peer_publishing_on_thousands_of_keys_without_schemas_is_recorded_without_waiting_on_each() {
    let (publisher_side, recorder_side) = linked_sessions();
    let dir = tempfile::tempdir().expect("tempdir");
    let queue = Arc::new(DropQueue::<LiveMessage>::new(usize::MAX, 64 << 20));
    let subscription =
        Subscription::start(&recorder_side, &["many/**".to_string()], Arc::clone(&queue))
            .expect("subscribe");
    let probe = publisher_side
        .declare_publisher("many/probe")
        .wait()
        .expect("publisher");
    wait_until("the subscriber to be seen", Duration::from_secs(10), || {
        probe.matching_status().wait().is_ok_and(|m| m.matching())
    });
    let keys = 3_000u64;
    for k in 0..keys {
        publisher_side
            .put(format!("many/k{k}"), vec![k as u8])
            .encoding("application/cdr")
            .wait()
            .expect("put");
    }
    wait_until("every sample", Duration::from_secs(20), || {
        subscription.received() == keys
    });
    let started = std::time::Instant::now();
    let writer = BagWriter::create(dir.path().join("many"), WriteOptions::new()).expect("writer");
    let mut recorder = Recorder::new(writer, Arc::clone(subscription.topics()));
    while recorder.stats().messages < keys {
        recorder
            .pump(&queue, Duration::from_millis(100))
            .expect("pump");
    }
    // Every key was asked for its schema when its sample arrived, and nobody answers: one
    // key after another waiting out SCHEMA_WAIT would take 50 minutes; the queries run
    // side by side, so the recorder waits about once.
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(60), "{waited:?}");
    let summary = recorder.finish(&[]).expect("close");
    assert_eq!(summary.message_count, keys);
    let reader = BagReader::open(dir.path().join("many")).expect("reopen");
    assert_eq!(reader.channels().len(), keys as usize);
    assert!(reader.channels().iter().all(|c| c.spec.schema.is_none()));
    eprintln!("{keys} keys recorded in {waited:?}");
}
