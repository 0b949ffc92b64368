//! Issue 24, "Nothing lost, nothing hidden": the index side. No tool touches a file outside the
//! bag, loses an index or a drop count, or calls a recording with known loss clean.

use std::path::Path;
use std::process::{Command, Output};

use bag::metadata::{METADATA_FILE, Metadata, PartRecord};
use bag::{BagWriter, ChannelSpec, Compression, WriteOptions};

#[path = "support/recordings.rs"]
mod recordings;

fn bag(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bag"))
        .args(args)
        .output()
        .expect("runs")
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

fn all_output(out: &Output) -> String {
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

const T0: u64 = 1_764_676_800_000_000_000;

/// A two-part bag of 200 EngineRpm messages, 10 Hz for 20 s, with `dropped` drops.
fn drive(dir: &Path, dropped: u64) {
    let info = schemas::by_name("EngineRpm").unwrap();
    let options = WriteOptions::new()
        .compression(Compression::Zstd)
        .part_max_duration_ns(Some(10_000_000_000));
    let mut w = BagWriter::create(dir, options).unwrap();
    let ch = w.add_channel(ChannelSpec::capnp(
        "car/engine",
        info.registry_name,
        info.capnp_name,
        info.descriptor,
    ));
    for i in 0..200u64 {
        let bytes = schemas::sample::encode("EngineRpm", i as f64 / 10.0, i).unwrap();
        w.write(ch, T0 + i * 100_000_000, Some(T0 + i * 100_000_000), &bytes)
            .unwrap();
    }
    w.add_dropped(dropped);
    w.close().unwrap();
}

/// Every file under `dir` (recursively) with its bytes.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn index_text(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(METADATA_FILE)).unwrap()
}

// Item 8: part names from metadata.yaml are plain file names inside the bag.
#[test]
fn part_names_that_leave_the_bag_are_refused_and_nothing_outside_is_touched() {
    let tmp = tempfile::tempdir().unwrap();
    let bags = tmp.path().join("bags");
    let dir = bags.join("drive");
    drive(&dir, 0);
    // Outside the bag: torn copies of a real part, which reindex would "repair" in place.
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let part = std::fs::read(dir.join("drive_1.mcap")).unwrap();
    let torn = &part[..part.len() * 2 / 3];
    std::fs::write(bags.join("outside.mcap"), torn).unwrap();
    let absolute = outside.join("abs.mcap");
    std::fs::write(&absolute, torn).unwrap();

    let mut m = Metadata::parse(&index_text(&dir)).unwrap();
    let hostile = [
        "../outside.mcap".to_string(),
        absolute.display().to_string(),
    ];
    for name in &hostile {
        m.rosbag2_bagfile_information
            .relative_file_paths
            .push(name.clone());
        m.redline.as_mut().unwrap().parts.push(PartRecord {
            path: name.clone(),
            ..PartRecord::default()
        });
    }
    std::fs::write(dir.join(METADATA_FILE), m.to_yaml()).unwrap();

    let before = snapshot(tmp.path().join("outside").as_path());
    let outside_before = std::fs::read(bags.join("outside.mcap")).unwrap();

    let info = bag(&["info", dir.to_str().unwrap()]);
    assert_eq!(info.status.code(), Some(3), "{}", all_output(&info));
    for name in &hostile {
        assert!(
            all_output(&info).contains(name.as_str()),
            "{}",
            all_output(&info)
        );
    }
    assert!(
        text(&info.stdout).contains("messages:    200"),
        "only the bag's own parts are read: {}",
        all_output(&info)
    );

    let cat = bag(&["cat", dir.to_str().unwrap()]);
    assert_eq!(
        text(&cat.stdout).lines().count(),
        200,
        "{}",
        text(&cat.stderr)
    );

    let reindex = bag(&["reindex", dir.to_str().unwrap()]);
    assert_eq!(reindex.status.code(), Some(3), "{}", all_output(&reindex));
    for name in &hostile {
        assert!(
            all_output(&reindex).contains(name.as_str()),
            "{}",
            all_output(&reindex)
        );
    }
    assert_eq!(
        snapshot(&outside),
        before,
        "nothing outside the bag changed"
    );
    assert_eq!(
        std::fs::read(bags.join("outside.mcap")).unwrap(),
        outside_before
    );
    assert!(!bags.join("outside.mcap.torn").exists());
    let listing: Vec<_> = std::fs::read_dir(&bags).unwrap().collect();
    assert_eq!(listing.len(), 2, "only drive/ and outside.mcap in bags/");
    let new_index = index_text(&dir);
    assert!(!new_index.contains("- ../outside.mcap\n"), "{new_index}");
}

/// The redline section of the index in `dir`, as parsed.
fn redline(dir: &Path) -> bag::metadata::RedlineSection {
    Metadata::parse(&index_text(dir))
        .unwrap()
        .redline
        .expect("our section")
}

// Item 2: an index that does not parse is damage; what can be read of it is salvaged, and
// reindex keeps the old one beside the new one.
#[test]
fn a_damaged_index_is_reported_salvaged_and_kept_by_reindex() {
    type Breakage = (&'static str, fn(&str) -> String);
    let breakages: [Breakage; 2] = [
        ("a value of the wrong type", |t| {
            t.replacen("version: 8", "version: 8x", 1)
        }),
        ("broken YAML", |t| {
            t.replacen(
                "rosbag2_bagfile_information:",
                "rosbag2_bagfile_information: {",
                1,
            )
        }),
    ];
    for (what, break_it) in breakages {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("drive");
        drive(&dir, 1234);
        let damaged = break_it(&index_text(&dir));
        assert!(Metadata::parse(&damaged).is_err(), "{what}");
        std::fs::write(dir.join(METADATA_FILE), &damaged).unwrap();

        let info = bag(&["info", dir.to_str().unwrap()]);
        assert_eq!(info.status.code(), Some(3), "{what}: {}", all_output(&info));
        let stderr = text(&info.stderr);
        assert_eq!(stderr.lines().count(), 1, "{what}: one line: {stderr}");
        assert!(stderr.contains(METADATA_FILE), "{what}: {stderr}");
        assert!(
            text(&info.stdout).contains("dropped:     1234"),
            "{what}: the count is salvaged: {}",
            all_output(&info)
        );

        let reindex = bag(&["reindex", dir.to_str().unwrap()]);
        assert_eq!(
            reindex.status.code(),
            Some(3),
            "{what}: {}",
            all_output(&reindex)
        );
        assert!(
            !all_output(&reindex).contains("there was no readable index"),
            "{what}: {}",
            all_output(&reindex)
        );
        let backup = dir.join(format!("{METADATA_FILE}.bak-1"));
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), damaged, "{what}");
        assert_eq!(redline(&dir).dropped_messages, Some(1234), "{what}");

        // A second reindex keeps the first backup and adds one.
        let first_rebuild = index_text(&dir);
        let again = bag(&["reindex", dir.to_str().unwrap()]);
        assert_eq!(again.status.code(), Some(3), "{}", all_output(&again));
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), damaged, "{what}");
        let second = dir.join(format!("{METADATA_FILE}.bak-2"));
        assert_eq!(
            std::fs::read_to_string(second).unwrap(),
            first_rebuild,
            "{what}"
        );
        assert_eq!(redline(&dir).dropped_messages, Some(1234), "{what}");
    }
}

// Item 4: a drop count nobody knows stays unknown through export and reindex.
#[test]
fn an_unknown_drop_count_stays_unknown_through_export_and_reindex() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    drive(&dir, 0);
    // A single .mcap file has no drop count.
    let single = dir.join("drive_0.mcap");
    let out = tmp.path().join("cut");
    let export = bag(&[
        "export",
        single.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(export.status.success(), "{}", all_output(&export));
    assert!(
        index_text(&out).contains("dropped_messages: null"),
        "{}",
        index_text(&out)
    );
    assert_eq!(redline(&out).dropped_messages, None);
    assert_eq!(bag::BagReader::open(&out).unwrap().dropped_messages(), None);
    let info = bag(&["info", out.to_str().unwrap()]);
    assert!(
        text(&info.stdout).contains("dropped:     unknown"),
        "{}",
        all_output(&info)
    );

    // Reindex of that export, and of a bag whose index is gone: still unknown.
    let reindex = bag(&["reindex", out.to_str().unwrap()]);
    assert!(reindex.status.code().is_some(), "{}", all_output(&reindex));
    assert_eq!(redline(&out).dropped_messages, None);
    std::fs::remove_file(dir.join(METADATA_FILE)).unwrap();
    let reindex = bag(&["reindex", dir.to_str().unwrap()]);
    assert_eq!(reindex.status.code(), Some(3), "{}", all_output(&reindex));
    assert_eq!(redline(&dir).dropped_messages, None);
    assert!(!index_text(&dir).contains("dropped_messages: 0"));
}

/// `dir` copied into `to` (files only, one level).
fn copy_dir(dir: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

// Item 5: reindex of a rosbag2 directory keeps every field of the foreign index it does not own.
#[test]
fn reindex_of_a_rosbag2_directory_keeps_the_fields_it_does_not_own() {
    let oracle = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/oracles/rosbag2/rosbag2_tests/resources/mcap")
        .join("bag_with_topics_and_service_events");
    assert!(oracle.is_dir(), "oracle at {oracle:?}");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rosbag");
    copy_dir(&oracle, &dir);
    // Fields this tool has never heard of, as a newer rosbag2 may write.
    let original = index_text(&dir)
        .replacen(
            "  version: 8\n",
            "  version: 8\n  future_field:\n    answer: 42\n",
            1,
        )
        .replacen(
            "        name: /test_topic1\n",
            "        name: /test_topic1\n        future_topic_field: kept\n",
            1,
        );
    std::fs::write(dir.join(METADATA_FILE), &original).unwrap();
    let old: serde_yaml_ng::Value = serde_yaml_ng::from_str(&original).unwrap();

    let reindex = bag(&["reindex", dir.to_str().unwrap()]);
    assert!(
        !all_output(&reindex).contains("no readable index")
            && !all_output(&reindex).contains("there was no index"),
        "{}",
        all_output(&reindex)
    );
    assert_eq!(reindex.status.code(), Some(0), "{}", all_output(&reindex));
    let new: serde_yaml_ng::Value = serde_yaml_ng::from_str(&index_text(&dir)).unwrap();
    let (old, new) = (
        &old["rosbag2_bagfile_information"],
        &new["rosbag2_bagfile_information"],
    );
    for key in [
        "version",
        "future_field",
        "ros_distro",
        "custom_data",
        "storage_identifier",
    ] {
        assert_eq!(new[key], old[key], "{key}");
    }
    let topics = |info: &serde_yaml_ng::Value| {
        let mut t: Vec<serde_yaml_ng::Value> = info["topics_with_message_count"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|t| t["topic_metadata"].clone())
            .collect();
        t.sort_by_key(|t| t["name"].as_str().unwrap().to_string());
        t
    };
    assert_eq!(topics(new), topics(old), "every topic with every field");
    assert_eq!(new["message_count"], old["message_count"]);
    assert!(dir.join(format!("{METADATA_FILE}.bak-1")).exists());
}

// Item 3: after reindex, the index still says what was lost and where, and info exits 3.
#[test]
fn reindex_keeps_the_record_of_a_missing_part_a_torn_tail_and_an_export_cut_short() {
    use bag::metadata::LossKind;
    let tmp = tempfile::tempdir().unwrap();

    // A listed part that is gone.
    let dir = tmp.path().join("a").join("drive");
    drive(&dir, 0);
    std::fs::remove_file(dir.join("drive_0.mcap")).unwrap();
    let reindex = bag(&["reindex", dir.to_str().unwrap()]);
    assert_eq!(reindex.status.code(), Some(3), "{}", all_output(&reindex));
    let loss = redline(&dir).loss;
    assert_eq!(loss.len(), 1, "{loss:?}");
    assert_eq!(loss[0].kind, LossKind::MissingPart);
    assert_eq!(loss[0].part.as_deref(), Some("drive_0.mcap"));
    assert_eq!(loss[0].messages, Some(100));
    let info = bag(&["info", dir.to_str().unwrap()]);
    assert_eq!(info.status.code(), Some(3), "{}", all_output(&info));
    assert!(
        text(&info.stdout).contains("drive_0.mcap"),
        "{}",
        all_output(&info)
    );
    // A second reindex neither erases nor repeats it.
    bag(&["reindex", dir.to_str().unwrap()]);
    assert_eq!(redline(&dir).loss, loss);

    // A torn tail.
    let dir = tmp.path().join("b").join("drive");
    drive(&dir, 0);
    let part = dir.join("drive_1.mcap");
    let bytes = std::fs::read(&part).unwrap();
    std::fs::write(&part, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let size = (bytes.len() * 2 / 3) as u64;
    bag(&["reindex", dir.to_str().unwrap()]);
    let loss = redline(&dir).loss;
    assert_eq!(loss.len(), 1, "{loss:?}");
    assert_eq!(loss[0].kind, LossKind::TornTail);
    assert_eq!(loss[0].end_byte, Some(size));
    assert!(loss[0].start_byte.is_some_and(|b| b > 0 && b < size));
    let info = bag(&["info", dir.to_str().unwrap()]);
    assert_eq!(info.status.code(), Some(3), "{}", all_output(&info));

    // An export whose writer died part way through its range.
    let dir = tmp.path().join("cut");
    let range = bag::metadata::SourceRecord {
        path: "somewhere".into(),
        start_ns: T0,
        end_ns: T0 + 20_000_000_000,
        topics: Vec::new(),
    };
    let mut w = BagWriter::create(&dir, WriteOptions::new().source(range)).unwrap();
    let ch = w.add_channel(ChannelSpec {
        topic: "t".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: Default::default(),
    });
    for i in 0..50u64 {
        w.write(ch, T0 + i * 100_000_000, Some(T0), b"{}").unwrap();
    }
    w.flush().unwrap();
    std::mem::forget(w); // killed: no close, no summary
    // The kernel drops a killed writer's lock; the leaked handle here still holds it, so take
    // the lock file away as the kernel would have let it go.
    std::fs::remove_file(dir.join(bag::writer_lock::WRITER_LOCK_FILE)).unwrap();
    bag(&["reindex", dir.to_str().unwrap()]);
    let loss = redline(&dir).loss;
    let cut = loss
        .iter()
        .find(|l| l.kind == LossKind::ExportCutShort)
        .unwrap_or_else(|| panic!("{loss:?}"));
    assert_eq!(cut.start_ns, Some(T0 + 49 * 100_000_000 + 1));
    assert_eq!(cut.end_ns, Some(T0 + 20_000_000_000));
    let info = bag(&["info", dir.to_str().unwrap()]);
    assert_eq!(info.status.code(), Some(3), "{}", all_output(&info));
}

// Item 1: a bag being written is left alone by reindex and export, and info says so.
#[test]
fn reindex_and_export_refuse_a_bag_being_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    let mut w = BagWriter::create(&dir, WriteOptions::new()).unwrap();
    let ch = w.add_channel(ChannelSpec {
        topic: "t".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: Default::default(),
    });
    for i in 0..100u64 {
        w.write(ch, T0 + i, Some(T0 + i), b"{}").unwrap();
    }
    w.flush().unwrap();
    let before = snapshot(&dir);

    let reindex = bag(&["reindex", dir.to_str().unwrap()]);
    assert_eq!(reindex.status.code(), Some(1), "{}", all_output(&reindex));
    assert!(
        text(&reindex.stderr).contains("is being written"),
        "{}",
        all_output(&reindex)
    );
    let out = tmp.path().join("cut");
    let export = bag(&["export", dir.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(export.status.code(), Some(1), "{}", all_output(&export));
    assert!(
        text(&export.stderr).contains("is being written"),
        "{}",
        all_output(&export)
    );
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none());
    assert_eq!(snapshot(&dir), before, "nothing in the bag was touched");
    let info = bag(&["info", dir.to_str().unwrap()]);
    assert!(
        text(&info.stdout).contains("being written now"),
        "{}",
        all_output(&info)
    );

    // Once closed, the bag is anybody's.
    for i in 100..200u64 {
        w.write(ch, T0 + i, Some(T0 + i), b"{}").unwrap();
    }
    w.close().unwrap();
    assert!(!dir.join(bag::writer_lock::WRITER_LOCK_FILE).exists());
    let reindex = bag(&["reindex", dir.to_str().unwrap()]);
    assert_eq!(reindex.status.code(), Some(0), "{}", all_output(&reindex));
    assert_eq!(bag::BagReader::open(&dir).unwrap().message_count(), 200);
}

/// Zeroes the uncompressed CRC of every whole chunk in an MCAP file's bytes (0 means "not
/// checked"), so that a test can change a record inside a chunk.
fn unchecked_chunks(bytes: &mut [u8]) {
    let mut at = 8;
    while at + 9 <= bytes.len() {
        let opcode = bytes[at];
        let len = u64::from_le_bytes(bytes[at + 1..at + 9].try_into().unwrap()) as usize;
        let body = at + 9;
        if body + len > bytes.len() {
            break;
        }
        if opcode == 0x06 {
            bytes[body + 24..body + 28].fill(0);
        }
        at = body + len;
    }
}

// Item 17: one message on a channel the torn part never defined does not block reindex: what
// is attributable is kept, the rest is reported and recorded.
#[test]
fn reindex_keeps_what_is_attributable_in_a_torn_part_and_records_the_rest() {
    use bag::metadata::LossKind;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    let mut w =
        BagWriter::create(&dir, WriteOptions::new().compression(Compression::None)).unwrap();
    let ch = w.add_channel(ChannelSpec {
        topic: "t".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: Default::default(),
    });
    for i in 0..100u64 {
        w.write(
            ch,
            T0 + i,
            Some(T0 + i),
            format!("{{\"i\":{i:03}}}").as_bytes(),
        )
        .unwrap();
        if i % 10 == 9 {
            w.flush().unwrap();
        }
    }
    w.close().unwrap();
    let part = dir.join("drive_0.mcap");
    let mut bytes = std::fs::read(&part).unwrap();
    // Message 42 now names channel 99, which nothing defines.
    let data = b"{\"i\":042}";
    let at = bytes.windows(data.len()).position(|w| w == data).unwrap();
    bytes[at - 22..at - 20].copy_from_slice(&99u16.to_le_bytes());
    unchecked_chunks(&mut bytes);
    // Torn: cut inside the last chunk.
    let cut = bytes.len() - 600;
    std::fs::write(&part, &bytes[..cut]).unwrap();

    let reindex = bag(&["reindex", dir.to_str().unwrap()]);
    assert_eq!(reindex.status.code(), Some(3), "{}", all_output(&reindex));
    let reader = bag::BagReader::open(&dir).unwrap();
    assert!(
        reader
            .parts()
            .iter()
            .all(|p| p.status == bag::PartStatus::Complete)
    );
    let kept = reader.message_count();
    assert!(kept >= 80, "{kept}");
    let loss = redline(&dir).loss;
    let unattributed = loss
        .iter()
        .find(|l| l.kind == LossKind::UnattributedMessages)
        .unwrap_or_else(|| panic!("{loss:?}"));
    assert_eq!(unattributed.messages, Some(1));
    assert!(
        all_output(&reindex).contains("99"),
        "{}",
        all_output(&reindex)
    );
}

// Item 3: an export of a damaged source carries the damage into its own index.
#[test]
fn an_export_of_a_torn_source_records_the_tear() {
    use bag::metadata::LossKind;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    drive(&dir, 0);
    let part = dir.join("drive_1.mcap");
    let bytes = std::fs::read(&part).unwrap();
    std::fs::write(&part, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let out = tmp.path().join("cut");
    let export = bag(&["export", dir.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(export.status.code(), Some(3), "{}", all_output(&export));
    let loss = redline(&out).loss;
    assert!(
        loss.iter()
            .any(|l| l.kind == LossKind::TornTail && l.part.as_deref() == Some("drive_1.mcap")),
        "{loss:?}"
    );
    let info = bag(&["info", out.to_str().unwrap()]);
    assert_eq!(info.status.code(), Some(3), "{}", all_output(&info));
    // A range wholly before the tear is clean.
    let early = tmp.path().join("early");
    let export = bag(&[
        "export",
        dir.to_str().unwrap(),
        "-o",
        early.to_str().unwrap(),
        "--end",
        "5",
    ]);
    assert!(redline(&early).loss.is_empty(), "{}", all_output(&export));
}

// Item 18 (info's part): no hint that cannot work, no overflow on absurd counts.
#[test]
fn info_gives_hints_that_work_and_survives_absurd_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    drive(&dir, 0);
    let single = tmp.path().join("single.mcap");
    let bytes = std::fs::read(dir.join("drive_1.mcap")).unwrap();
    std::fs::write(&single, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let info = bag(&["info", single.to_str().unwrap()]);
    assert_eq!(info.status.code(), Some(3), "{}", all_output(&info));
    assert!(
        all_output(&info).contains("directory of its own"),
        "{}",
        all_output(&info)
    );

    let mut m = Metadata::parse(&index_text(&dir)).unwrap();
    m.redline.as_mut().unwrap().dropped_messages = Some(u64::MAX - 5);
    std::fs::write(dir.join(METADATA_FILE), m.to_yaml()).unwrap();
    let info = bag(&["info", dir.to_str().unwrap()]);
    assert_eq!(info.status.code(), Some(3), "{}", all_output(&info));
    assert!(
        text(&info.stdout).contains("(100.00%)"),
        "{}",
        all_output(&info)
    );
}

#[test]
fn reindex_leaves_a_sqlite_rosbag2_bag_as_it_is_and_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rosbag2");
    recordings::small_db3_bag(&dir, 2);
    let listing = |dir: &Path| {
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    };
    let before = listing(&dir);
    let out = bag(&["reindex", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("rosbag2 SQLite files") && err.contains("changed nothing"),
        "{err}"
    );
    // Not a byte changed, no backup made: metadata.yaml still names the SQLite storage.
    assert_eq!(listing(&dir), before);
}
