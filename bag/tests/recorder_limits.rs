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
