//! `bag info --json` against the statistics of the MCAP conformance suite.
//!
//! The data lives in `../shared/oracles` beside the repository. Under `CI=true` its absence is a
//! failure; elsewhere this test says it skipped.

#[path = "../../tests/common.rs"]
mod common;
use common::conformance_json::{field, num};
use common::{files_named, oracle_dir};

#[test]
fn bag_info_json_matches_the_statistics_of_every_conformance_file_that_has_them() {
    let Some(root) = oracle_dir("foxglove-mcap/conformance/data") else {
        return;
    };
    let files = files_named(&root, &|p| p.extension().is_some_and(|e| e == "mcap"));
    let mut with_stats = 0;
    for file in files {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(file.with_extension("json")).unwrap())
                .unwrap();
        let Some(stats) = json["records"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["type"] == "Statistics")
        else {
            continue;
        };
        with_stats += 1;
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_bag"))
            .args(["info", "--json"])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{file:?}");
        let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let f = &stats["fields"];
        let count = num(field(f, "message_count"));
        assert_eq!(info["message_count"], count, "{file:?}");
        if count > 0 {
            assert_eq!(
                info["start_ns"],
                num(field(f, "message_start_time")),
                "{file:?}"
            );
            assert_eq!(
                info["end_ns"],
                num(field(f, "message_end_time")),
                "{file:?}"
            );
        }
        let per_channel: Vec<u64> = field(f, "channel_message_counts")
            .as_object()
            .unwrap()
            .values()
            .map(|n| n.as_str().unwrap().parse().unwrap())
            .filter(|n| *n > 0)
            .collect();
        let mut reported: Vec<u64> = info["channels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["message_count"].as_u64().unwrap())
            .filter(|n| *n > 0)
            .collect();
        let mut per_channel = per_channel;
        per_channel.sort_unstable();
        reported.sort_unstable();
        assert_eq!(reported, per_channel, "{file:?}");
    }
    assert!(with_stats > 100, "{with_stats} files with statistics");
}
