//! Issue 24 item 7: a recorder bounds the topics it accepts and counts what it refuses.
#![cfg(feature = "live")]

use std::sync::Arc;

use bag::live::{LiveMessage, Recorder, TopicTable};
use bag::{BagReader, BagWriter, WriteOptions};
use zenoh::bytes::Encoding;

#[test]
fn topics_beyond_the_limit_are_refused_and_counted_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("flood");
    let topics = Arc::new(TopicTable::default());
    let writer = BagWriter::create(&dir, WriteOptions::new()).unwrap();
    let mut recorder = Recorder::new(writer, Arc::clone(&topics)).max_topics(3);
    for i in 0..10u64 {
        // Five distinct keys, two messages each.
        let topic = topics.intern(&format!("peer/key/{}", i % 5), &Encoding::APPLICATION_JSON);
        recorder
            .write(&LiveMessage {
                topic,
                log_time_ns: i,
                publish_time_ns: Some(i),
                data: b"{}".to_vec(),
            })
            .unwrap();
    }
    assert_eq!(recorder.stats().messages, 6);
    assert_eq!(recorder.stats().refused, 4);
    let summary = recorder.finish(&[]).unwrap();
    assert_eq!(summary.message_count, 6);
    assert_eq!(summary.dropped_messages, 4);

    let reader = BagReader::open(&dir).unwrap();
    assert_eq!(reader.dropped_messages(), Some(4));
    let reasons = &reader
        .metadata()
        .unwrap()
        .redline
        .as_ref()
        .unwrap()
        .dropped_by_reason;
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(
        reasons
            .iter()
            .all(|(r, n)| r.contains("limit of 3 topics") && *n == 4),
        "{reasons:?}"
    );
}

// Item 13: a recorder far behind stops within its budget and counts what it did not write; a
// recorder with time to spare writes everything.
#[test]
fn a_recorder_far_behind_stops_at_once_and_counts_the_rest_as_dropped() {
    use std::time::Duration;
    for (budget, n) in [
        (Duration::ZERO, 200_000u64),
        (Duration::from_secs(600), 1_000),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("behind");
        let topics = Arc::new(TopicTable::default());
        let queue = bag::DropQueue::new(usize::MAX, usize::MAX);
        let topic = topics.intern("car/camera", &Encoding::APPLICATION_OCTET_STREAM);
        for i in 0..n {
            let message = LiveMessage {
                topic,
                log_time_ns: i,
                publish_time_ns: Some(i),
                data: vec![7u8; 512],
            };
            let bytes = message.queue_bytes();
            queue.push(message, bytes);
        }
        let writer = BagWriter::create(&dir, WriteOptions::new()).unwrap();
        let mut recorder = Recorder::new(writer, Arc::clone(&topics));
        let abandoned = recorder.stop_within(&queue, budget).unwrap();
        let written = recorder.stats().messages;
        assert_eq!(written + abandoned, n, "every message written or counted");
        let expected_abandoned = if budget.is_zero() { n } else { 0 };
        assert_eq!(abandoned, expected_abandoned);
        let summary = recorder.finish(&[]).unwrap();
        assert_eq!(summary.message_count, written);
        assert_eq!(summary.dropped_messages, abandoned);
        let reader = BagReader::open(&dir).unwrap();
        assert_eq!(reader.message_count(), written);
        assert_eq!(reader.dropped_messages(), Some(abandoned));
    }
}
