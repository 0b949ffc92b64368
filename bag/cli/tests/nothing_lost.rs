//! Issue 24, "Nothing lost, nothing hidden": the index side. No tool touches a file outside the
//! bag, loses an index or a drop count, or calls a recording with known loss clean.

use std::path::Path;
use std::process::{Command, Output};

use bag::metadata::{METADATA_FILE, Metadata, PartRecord};
use bag::{BagWriter, ChannelSpec, Compression, WriteOptions};

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
