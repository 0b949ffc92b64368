//! `bag export` of rosbag2's own CDR bags (MCAP storage, and SQLite storage converted to MCAP)
//! is read by the `rosbags` Python library as the source is (issue 21, section 3; issue 22): same
//! messages per topic, same type hashes, every message deserialized where rosbags parses the
//! schemas.
//!
//! Needs `../shared/oracles` and python3 with `rosbags==0.11.9`; without them the test says
//! "skipped", and fails under `CI=true` (`.ci/run` installs rosbags).

use std::process::Command;

#[path = "../../tests/common.rs"]
mod common;
use common::{oracle_dir, rosbags_read};

#[test]
fn rosbags_reads_bag_export_of_rosbag2_bags_as_it_reads_the_source() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mcap = "rosbag2/rosbag2_tests/resources/mcap";
    for (oracle, name, deserializes) in [
        (mcap, "cdr_test", true),
        // rosbags cannot parse rosbag2's service event definitions: counted, not deserialized.
        (mcap, "bag_with_topics_and_service_events", false),
        ("rosbag2-sqlite3", "imu_joint_string", true),
        ("rosbag2-sqlite3", "split_two", true),
    ] {
        let Some(oracles) = oracle_dir(oracle) else {
            return;
        };
        let source = oracles.join(name);
        let out = tmp.path().join(name);
        let run = Command::new(env!("CARGO_BIN_EXE_bag"))
            .arg("export")
            .arg(&source)
            .arg("-o")
            .arg(&out)
            .output()
            .expect("running bag");
        assert_eq!(
            run.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let Some(exported) = rosbags_read(&out) else {
            return;
        };
        let Some(original) = rosbags_read(&source) else {
            return;
        };
        assert_eq!(exported["topics"], original["topics"], "{name}: per topic");
        assert_eq!(
            exported["message_count"], original["message_count"],
            "{name}"
        );
        let total = original["message_count"].as_u64().expect("a count");
        let parts = exported["files"].as_object().expect("files");
        let per_part: u64 = parts.values().filter_map(|v| v.as_u64()).sum();
        assert_eq!(per_part, total, "{name}: every part read on its own");
        // The source's distribution ('' or absent: unknown) and the hash of every topic the
        // export holds.
        assert_eq!(
            exported["ros_distro"].as_str().unwrap_or(""),
            original["ros_distro"].as_str().unwrap_or(""),
            "{name}"
        );
        let hashes = exported["type_description_hashes"]
            .as_object()
            .expect("hashes");
        for (topic, hash) in hashes {
            assert_eq!(
                Some(hash),
                original["type_description_hashes"].get(topic),
                "{name}: {topic}"
            );
        }
        if deserializes {
            assert_eq!(exported["deserialized"].as_u64(), Some(total), "{name}");
        }
    }
}
