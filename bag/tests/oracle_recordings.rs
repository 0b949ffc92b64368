//! Recordings written by other libraries: rosbag2's test bags and the MCAP conformance suite.
//!
//! The data lives in `../shared/oracles` beside the repository. Under `CI=true` its absence is a
//! failure; elsewhere these tests say they skipped.

use std::collections::BTreeMap;
use std::path::Path;

mod common;
use common::conformance_json::{field, num};
use common::{files_named, oracle_dir};

use bag::{BagReader, PartStatus, ReadFilter, RecordingKind};

/// Counts messages with the mcap crate's streaming reader, as an independent reference.
fn mcap_crate_count(path: &Path) -> u64 {
    let bytes = std::fs::read(path).unwrap();
    let mut n = 0;
    for message in mcap::MessageStream::new(&bytes).unwrap() {
        message.unwrap_or_else(|e| panic!("{path:?}: {e}"));
        n += 1;
    }
    n
}

#[test]
fn every_rosbag2_bag_opens_with_its_declared_counts() {
    let Some(root) = oracle_dir("rosbag2") else {
        return;
    };
    let indexes = files_named(&root, &|p| p.ends_with("metadata.yaml"));
    assert!(indexes.len() >= 10, "found {} rosbag2 bags", indexes.len());
    for index in indexes {
        let dir = index.parent().unwrap();
        let reader = BagReader::open(dir).unwrap_or_else(|e| panic!("{dir:?}: {e}"));
        assert_eq!(reader.kind(), RecordingKind::Rosbag2, "{dir:?}");
        let declared = reader
            .metadata()
            .unwrap()
            .rosbag2_bagfile_information
            .clone();
        assert!(
            reader
                .parts()
                .iter()
                .all(|p| p.status == PartStatus::Complete),
            "{dir:?}"
        );
        assert_eq!(reader.message_count(), declared.message_count, "{dir:?}");
        let mut per_topic: BTreeMap<&str, u64> = BTreeMap::new();
        for c in reader.channels() {
            *per_topic.entry(c.spec.topic.as_str()).or_insert(0) +=
                c.message_count.expect("counted");
        }
        for t in &declared.topics_with_message_count {
            let got = per_topic
                .get(t.topic_metadata.name.as_str())
                .copied()
                .unwrap_or(0);
            assert_eq!(
                got, t.message_count,
                "{dir:?} topic {}",
                t.topic_metadata.name
            );
        }
        let read: Vec<_> = reader.messages(&ReadFilter::all()).unwrap().collect();
        assert_eq!(read.len() as u64, declared.message_count, "{dir:?}");
        assert!(
            read.windows(2)
                .all(|w| w[0].log_time_ns <= w[1].log_time_ns),
            "{dir:?}"
        );
    }
}

#[test]
fn rosbag2_parts_without_an_index_are_discovered() {
    let Some(root) = oracle_dir("rosbag2") else {
        return;
    };
    let dir = root.join("rosbag2_py/test/resources/mcap/reindex_test_bags/multiple_files");
    let reader = BagReader::open(&dir).unwrap();
    assert_eq!(reader.kind(), RecordingKind::UnindexedDirectory);
    assert!(reader.notes().iter().any(|n| n.contains("discovered")));
    assert_eq!(reader.parts().len(), 3);
    let expected: u64 = reader
        .parts()
        .iter()
        .map(|p| mcap_crate_count(&p.path))
        .sum();
    assert!(expected > 0);
    assert_eq!(
        reader.messages(&ReadFilter::all()).unwrap().count() as u64,
        expected
    );

    let singles = files_named(&root.join("rosbag2_cpp"), &|p| {
        p.extension().is_some_and(|e| e == "mcap")
    });
    assert_eq!(singles.len(), 3);
    for file in singles {
        let reader = BagReader::open(&file).unwrap();
        assert_eq!(reader.kind(), RecordingKind::McapFile);
        let n = reader.messages(&ReadFilter::all()).unwrap().count() as u64;
        assert_eq!(n, mcap_crate_count(&file), "{file:?}");
        assert_eq!(n, reader.message_count(), "{file:?}");
    }
}

/// One expected message: (log_time, topic, sequence, publish_time, data).
type Expected = (u64, String, u32, u64, Vec<u8>);

fn expected_messages(json: &serde_json::Value) -> Vec<Expected> {
    let records = json["records"].as_array().unwrap();
    let mut topics = BTreeMap::new();
    for r in records.iter().filter(|r| r["type"] == "Channel") {
        topics.insert(
            num(field(&r["fields"], "id")),
            field(&r["fields"], "topic").as_str().unwrap().to_string(),
        );
    }
    let mut out: Vec<Expected> = records
        .iter()
        .filter(|r| r["type"] == "Message")
        .map(|r| {
            let f = &r["fields"];
            let data = field(f, "data")
                .as_array()
                .unwrap()
                .iter()
                .map(|b| num(b) as u8)
                .collect();
            (
                num(field(f, "log_time")),
                topics[&num(field(f, "channel_id"))].clone(),
                num(field(f, "sequence")) as u32,
                num(field(f, "publish_time")),
                data,
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_conformance_file_reads_with_the_expected_messages() {
    let Some(root) = oracle_dir("foxglove-mcap/conformance/data") else {
        return;
    };
    let files = files_named(&root, &|p| p.extension().is_some_and(|e| e == "mcap"));
    assert_eq!(files.len(), 416);
    for file in files {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(file.with_extension("json")).unwrap())
                .unwrap();
        let expected = expected_messages(&json);
        let reader = BagReader::open(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        assert_eq!(reader.parts()[0].status, PartStatus::Complete, "{file:?}");
        let mut cursor = reader.messages(&ReadFilter::all()).unwrap();
        let mut got: Vec<Expected> = Vec::new();
        while let Some(m) = cursor.next_message() {
            got.push((
                m.log_time_ns,
                m.channel.spec.topic.clone(),
                m.sequence,
                m.publish_time_ns,
                m.data.to_vec(),
            ));
        }
        assert!(
            cursor.issues().is_empty(),
            "{file:?}: {:?}",
            cursor.issues()
        );
        assert!(
            got.windows(2).all(|w| w[0].0 <= w[1].0),
            "{file:?} not in log-time order"
        );
        got.sort();
        assert_eq!(got, expected, "{file:?}");
        assert_eq!(reader.message_count(), expected.len() as u64, "{file:?}");
    }
}
