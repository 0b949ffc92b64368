//! ROS tools read our bags (issue 21, section 3): parts of ROS 2 CDR channels say MCAP profile
//! `ros2`, parts holding anything else never do, `metadata.yaml` has every key rosbag2 writes for
//! the version it claims, and `bag export` keeps the source's ROS distribution and type hashes.
//!
//! The read-back by the `rosbags` Python library (`bag/tests/peers/rosbags_reader.py`) needs
//! python3 with `rosbags==0.11.9`: without it those tests say "skipped", and fail under
//! `CI=true` (`.ci/run` installs it). The rest needs nothing outside the workspace.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bag::export::{ExportOptions, export};
use bag::metadata::METADATA_FILE;
use bag::{
    BagReader, BagWriter, ChannelSpec, Profile, ReadFilter, SchemaSpec, WriteOptions, verify,
};

mod common;
use common::{oracle_dir, rosbags_read};

/// A ROS 2 channel: CDR with a `ros2msg` schema.
fn ros2_channel(topic: &str, type_name: &str, definition: &str) -> ChannelSpec {
    ChannelSpec {
        topic: topic.into(),
        message_encoding: "cdr".into(),
        schema: Some(SchemaSpec {
            name: type_name.into(),
            encoding: "ros2msg".into(),
            data: definition.as_bytes().to_vec(),
        }),
        metadata: BTreeMap::new(),
    }
}

/// `std_msgs/msg/String` in CDR (little endian): encapsulation, length with the NUL, bytes, NUL.
fn cdr_string(text: &str) -> Vec<u8> {
    let mut out = vec![0, 1, 0, 0];
    let len = u32::try_from(text.len() + 1).expect("short text");
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out.push(0);
    out
}

/// `geometry_msgs/msg/Vector3` in CDR: encapsulation, then three float64 (aligned to 8 counting
/// from after the encapsulation, so no padding).
fn cdr_vector3(x: f64, y: f64, z: f64) -> Vec<u8> {
    let mut out = vec![0, 1, 0, 0];
    for v in [x, y, z] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

fn string_channel(topic: &str) -> ChannelSpec {
    ros2_channel(topic, "std_msgs/msg/String", "string data\n")
}

fn vector3_channel(topic: &str) -> ChannelSpec {
    ros2_channel(
        topic,
        "geometry_msgs/msg/Vector3",
        "float64 x\nfloat64 y\nfloat64 z\n",
    )
}

/// The part files of a bag, in order, as its index lists them.
fn part_paths(bag: &Path) -> Vec<PathBuf> {
    let reader = BagReader::open(bag).expect("open bag");
    reader.parts().iter().map(|p| bag.join(&p.name)).collect()
}

/// The header profile of a part file, as `bag verify` reads it.
fn profile_of(part: &Path) -> String {
    let report = verify::verify_file(part).expect("verify part");
    assert_eq!(report.error_count, 0, "{part:?} verifies clean");
    report.profile.expect("a header")
}

/// The message encodings of the channels a part holds.
fn encodings_of(part: &Path) -> Vec<String> {
    let bytes = std::fs::read(part).expect("read part");
    let summary = mcap::Summary::read(&bytes)
        .expect("summary parses")
        .expect("a summary");
    let mut encodings: Vec<String> = summary
        .channels
        .values()
        .map(|c| c.message_encoding.clone())
        .collect();
    encodings.sort();
    encodings.dedup();
    encodings
}

/// Message counts per topic and per part, as our reader sees the bag.
fn our_counts(bag: &Path) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
    let reader = BagReader::open(bag).expect("open bag");
    let mut topics = BTreeMap::new();
    let mut cursor = reader.messages(&ReadFilter::all()).expect("read");
    while let Some(m) = cursor.next_message() {
        *topics.entry(m.channel.spec.topic.clone()).or_insert(0) += 1;
    }
    assert!(cursor.issues().is_empty(), "{:?}", cursor.issues());
    let parts = reader
        .parts()
        .iter()
        .map(|p| (p.name.clone(), p.message_count))
        .collect();
    (topics, parts)
}

/// Writes a bag of two ROS 2 topics at 10 ms, rolling parts every `part_ns`, asking for `profile`.
fn write_ros2_bag(dir: &Path, profile: Profile, messages: u64, part_ns: u64) -> PathBuf {
    let out = dir.join("ros2_bag");
    let mut writer = BagWriter::create(
        &out,
        WriteOptions::new()
            .profile(profile)
            .part_max_duration_ns(Some(part_ns)),
    )
    .expect("create");
    let chatter = writer.add_channel(string_channel("/chatter"));
    let velocity = writer.add_channel(vector3_channel("/velocity"));
    let t0 = 1_700_000_000_000_000_000u64;
    for i in 0..messages {
        let t = t0 + i * 10_000_000;
        if i % 3 == 0 {
            let data = cdr_vector3(i as f64, -(i as f64), 0.5);
            writer.write(velocity, t, Some(t), &data).expect("write");
        } else {
            let data = cdr_string(&format!("hello {i}"));
            writer.write(chatter, t, Some(t), &data).expect("write");
        }
    }
    writer.close().expect("close");
    out
}

fn counts(value: &serde_json::Value) -> BTreeMap<String, u64> {
    value
        .as_object()
        .expect("an object of counts")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().expect("a count")))
        .collect()
}

/// rosbags read every message of `bag`, with the counts per topic and per part that our reader
/// finds, and deserialized each one when `deserialize` (its schemas parse in rosbags).
fn assert_rosbags_agree(bag: &Path, deserialize: bool) -> Option<serde_json::Value> {
    let read = rosbags_read(bag)?;
    let (topics, parts) = our_counts(bag);
    let total: u64 = topics.values().sum();
    assert!(total > 0, "the bag has messages");
    assert_eq!(counts(&read["topics"]), topics, "per topic");
    assert_eq!(counts(&read["files"]), parts, "per part");
    assert_eq!(read["message_count"].as_u64(), Some(total), "index total");
    if deserialize {
        assert_eq!(
            read["deserialized"].as_u64(),
            Some(total),
            "every message deserialized: {}",
            read["deserialize_error"]
        );
    }
    Some(read)
}

fn index(bag: &Path) -> serde_yaml_ng::Value {
    let text = std::fs::read_to_string(bag.join(METADATA_FILE)).expect("index");
    serde_yaml_ng::from_str(&text).expect("index parses")
}

#[test]
fn ros2_cdr_bag_parts_say_ros2_and_rosbags_reads_every_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 300 messages at 10 ms, a part per second: 3 parts.
    let bag = write_ros2_bag(dir.path(), Profile::Ros2, 300, 1_000_000_000);
    let parts = part_paths(&bag);
    assert_eq!(parts.len(), 3);
    for part in &parts {
        assert_eq!(profile_of(part), "ros2", "{part:?}");
    }
    let info = &index(&bag)["rosbag2_bagfile_information"];
    assert_eq!(info["version"].as_u64(), Some(8));
    // rosbag2 reads these unconditionally for version 8.
    assert_eq!(info["ros_distro"].as_str(), Some(""));
    for key in [
        "custom_data",
        "files",
        "relative_file_paths",
        "compression_mode",
    ] {
        assert!(info.get(key).is_some(), "{key} is written");
    }
    if let Some(read) = assert_rosbags_agree(&bag, true) {
        assert_eq!(read["ros_distro"].as_str(), Some(""));
    }
}

#[test]
fn without_asking_parts_say_no_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bag = write_ros2_bag(dir.path(), Profile::Unnamed, 50, 1_000_000_000);
    for part in part_paths(&bag) {
        assert_eq!(profile_of(&part), "", "{part:?}");
    }
}

#[test]
fn a_channel_outside_the_ros2_profile_starts_a_part_that_says_no_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("mixed");
    let mut writer =
        BagWriter::create(&out, WriteOptions::new().profile(Profile::Ros2)).expect("create");
    let chatter = writer.add_channel(string_channel("/chatter"));
    let t0 = 1_700_000_000_000_000_000u64;
    for i in 0..10u64 {
        let t = t0 + i;
        writer
            .write(chatter, t, Some(t), &cdr_string("before"))
            .expect("write");
    }
    // Arrives after part 0's header said ros2.
    let json = writer.add_channel(ChannelSpec {
        topic: "car/status".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: BTreeMap::new(),
    });
    for i in 10..20u64 {
        let t = t0 + i;
        writer
            .write(json, t, Some(t), b"{\"ok\":true}")
            .expect("write");
        writer
            .write(chatter, t, Some(t), &cdr_string("after"))
            .expect("write");
    }
    writer.close().expect("close");

    let parts = part_paths(&out);
    assert_eq!(parts.len(), 2, "the JSON channel opened a new part");
    assert_eq!(profile_of(&parts[0]), "ros2");
    assert_eq!(encodings_of(&parts[0]), ["cdr"]);
    assert_eq!(profile_of(&parts[1]), "", "it holds JSON");
    assert_eq!(encodings_of(&parts[1]), ["cdr", "json"]);
    let (topics, _) = our_counts(&out);
    assert_eq!(topics["/chatter"], 20);
    assert_eq!(topics["car/status"], 10);
}

#[test]
fn a_first_channel_outside_the_ros2_profile_restarts_the_empty_part() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("json_first");
    let mut writer =
        BagWriter::create(&out, WriteOptions::new().profile(Profile::Ros2)).expect("create");
    let json = writer.add_channel(ChannelSpec {
        topic: "car/status".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: BTreeMap::new(),
    });
    writer.write(json, 5, Some(5), b"{}").expect("write");
    writer.close().expect("close");
    let parts = part_paths(&out);
    assert_eq!(parts.len(), 1, "no empty ros2 part left behind");
    assert_eq!(profile_of(&parts[0]), "");
    assert_eq!(our_counts(&out).0["car/status"], 1);
}

/// The rosbag2 oracle `name`, copied into `dir` with `ros_distro` set to `distro`.
fn oracle_copy(dir: &Path, name: &str, distro: &str) -> Option<PathBuf> {
    let source = oracle_dir("rosbag2/rosbag2_tests/resources/mcap")?.join(name);
    let copy = dir.join(name);
    std::fs::create_dir_all(&copy).expect("mkdir");
    for entry in std::fs::read_dir(&source).expect("oracle dir") {
        let path = entry.expect("entry").path();
        let to = copy.join(path.file_name().expect("a name"));
        std::fs::copy(&path, &to).expect("copy");
    }
    let index_path = copy.join(METADATA_FILE);
    let text = std::fs::read_to_string(&index_path).expect("index");
    let text = text.replace("  ros_distro: \"\"", &format!("  ros_distro: {distro}"));
    assert!(text.contains(&format!("ros_distro: {distro}")), "{text}");
    std::fs::write(&index_path, text).expect("write index");
    Some(copy)
}

#[test]
fn export_of_a_rosbag2_bag_keeps_profile_distro_and_type_hashes_and_rosbags_reads_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(source_dir) = oracle_copy(dir.path(), "bag_with_topics_and_service_events", "jazzy")
    else {
        return;
    };
    let source = BagReader::open(&source_dir).expect("open oracle");
    let out = dir.path().join("exported");
    export(&source, &out, &ExportOptions::default(), |_| {}).expect("export");

    for part in part_paths(&out) {
        assert_eq!(profile_of(&part), "ros2", "{part:?}");
    }
    let old = &index(&source_dir)["rosbag2_bagfile_information"];
    let new = &index(&out)["rosbag2_bagfile_information"];
    assert_eq!(new["ros_distro"].as_str(), Some("jazzy"));
    let hashes = |info: &serde_yaml_ng::Value| -> BTreeMap<String, String> {
        info["topics_with_message_count"]
            .as_sequence()
            .expect("topics")
            .iter()
            .map(|t| {
                let m = &t["topic_metadata"];
                (
                    m["name"].as_str().expect("name").to_string(),
                    m["type_description_hash"]
                        .as_str()
                        .expect("hash")
                        .to_string(),
                )
            })
            .collect()
    };
    let mut expected = hashes(old);
    // The source lists a topic with no messages; an export lists what it holds.
    expected.retain(|topic, _| topic != "/events/write_split");
    assert_eq!(hashes(new), expected);
    assert!(expected.values().all(|h| h.starts_with("RIHS01_")));

    // rosbags cannot parse rosbag2's service event definitions, so this bag is counted, not
    // deserialized; the topic-only export below is deserialized too.
    if let Some(read) = assert_rosbags_agree(&out, false) {
        assert_eq!(read["ros_distro"].as_str(), Some("jazzy"));
        let read_hashes: BTreeMap<String, String> = read["type_description_hashes"]
            .as_object()
            .expect("hashes")
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().expect("a hash").to_string()))
            .collect();
        assert_eq!(read_hashes, expected);
    }

    let topics_only = dir.path().join("topics_only");
    let options = ExportOptions {
        filter: ReadFilter::all().topics(["/test_topic1", "/test_topic2"]),
        ..ExportOptions::default()
    };
    export(&source, &topics_only, &options, |_| {}).expect("export topics");
    assert_rosbags_agree(&topics_only, true);
}

#[test]
fn export_of_our_rosbag2_cdr_bag_is_read_by_rosbags() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(source_dir) =
        oracle_dir("rosbag2/rosbag2_tests/resources/mcap").map(|d| d.join("cdr_test"))
    else {
        return;
    };
    let source = BagReader::open(&source_dir).expect("open oracle");
    let out = dir.path().join("exported");
    export(&source, &out, &ExportOptions::default(), |_| {}).expect("export");
    for part in part_paths(&out) {
        assert_eq!(profile_of(&part), "ros2", "{part:?}");
    }
    // The source (version 7) has no ros_distro: the export says '' for version 8.
    assert_eq!(
        index(&out)["rosbag2_bagfile_information"]["ros_distro"].as_str(),
        Some("")
    );
    assert_rosbags_agree(&out, true);
}

#[test]
fn export_of_a_capnp_bag_says_no_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    let source_dir = dir.path().join("capnp");
    let mut writer = BagWriter::create(&source_dir, WriteOptions::new()).expect("create");
    let info = schemas::by_name("EngineRpm").expect("registry type");
    let channel = writer.add_channel(ChannelSpec::capnp(
        "car/engine",
        info.registry_name,
        info.capnp_name,
        info.descriptor,
    ));
    writer.write(channel, 1, Some(1), b"x").expect("write");
    writer.close().expect("close");
    let source = BagReader::open(&source_dir).expect("open");
    let out = dir.path().join("exported");
    export(&source, &out, &ExportOptions::default(), |_| {}).expect("export");
    for part in part_paths(&out) {
        assert_eq!(profile_of(&part), "");
    }
}

/// Cuts the last chunk of `part` short, as a killed writer leaves it.
fn tear(part: &Path) {
    let bytes = std::fs::read(part).expect("read part");
    let summary = mcap::Summary::read(&bytes)
        .expect("summary parses")
        .expect("a summary");
    let last = summary.chunk_indexes.last().expect("a chunk");
    let end = usize::try_from(last.chunk_start_offset + last.chunk_length).expect("fits");
    std::fs::write(part, &bytes[..end - 10]).expect("write torn part");
}

#[test]
fn reindex_keeps_ros2_on_a_repaired_part_and_rosbags_reads_the_bag() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("torn_ros2");
    let mut writer =
        BagWriter::create(&out, WriteOptions::new().profile(Profile::Ros2)).expect("create");
    let chatter = writer.add_channel(string_channel("/chatter"));
    for i in 0..300u64 {
        let t = 1_700_000_000_000_000_000 + i;
        writer
            .write(chatter, t, Some(t), &cdr_string(&format!("m{i}")))
            .expect("write");
        if i % 100 == 99 {
            writer.flush().expect("flush");
        }
    }
    writer.close().expect("close");
    let part = part_paths(&out).remove(0);
    tear(&part);
    let report = bag::reindex::reindex(&out).expect("reindex");
    assert_eq!(report.repaired.len(), 1);
    assert_eq!(profile_of(&part), "ros2", "the repair keeps the profile");
    assert_rosbags_agree(&out, true);
}

#[test]
fn reindex_of_a_part_that_says_ros2_but_holds_json_writes_no_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("torn_json");
    let mut writer = BagWriter::create(&out, WriteOptions::new()).expect("create");
    let json = writer.add_channel(ChannelSpec {
        topic: "car/status".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: BTreeMap::new(),
    });
    for i in 0..300u64 {
        writer.write(json, i, Some(i), b"{}").expect("write");
        if i % 100 == 99 {
            writer.flush().expect("flush");
        }
    }
    writer.close().expect("close");
    let part = part_paths(&out).remove(0);
    tear(&part);
    // A part from another writer whose header claims `ros2` for a JSON channel.
    let mut bytes = std::fs::read(&part).expect("read");
    let magic_and_prefix = 8 + 9;
    assert_eq!(
        &bytes[magic_and_prefix..magic_and_prefix + 4],
        &[0, 0, 0, 0]
    );
    let mut claimed = bytes[..magic_and_prefix].to_vec();
    let body_len = u64::from_le_bytes(bytes[9..17].try_into().expect("8 bytes")) + 4;
    claimed[9..17].copy_from_slice(&body_len.to_le_bytes());
    claimed.extend_from_slice(&4u32.to_le_bytes());
    claimed.extend_from_slice(b"ros2");
    claimed.extend_from_slice(&bytes[magic_and_prefix + 4..]);
    bytes = claimed;
    std::fs::write(&part, &bytes).expect("write");
    assert_eq!(profile_of_torn(&part), "ros2");

    let report = bag::reindex::reindex(&out).expect("reindex");
    assert_eq!(report.repaired.len(), 1);
    assert_eq!(
        profile_of(&part),
        "",
        "JSON never sits in a part that says ros2"
    );
    assert_eq!(our_counts(&out).0["car/status"], report.repaired[0].1);
}

/// The header profile of a part that may be torn.
fn profile_of_torn(part: &Path) -> String {
    let report = verify::verify_file(part).expect("verify part");
    report.profile.expect("a header")
}
