//! Issue 24 item 18: hints and figures that tell the truth. No "`bag reindex` makes it whole"
//! for a single file (reindex refuses files; the hint says to move it into a directory, and
//! doing that works); counts near `u64::MAX` in an index do not wrap into nonsense percentages
//! (or an overflow panic).

mod common;

use common::{bag, part_paths, small_bag};

#[test]
fn a_torn_single_file_gets_no_reindex_hint() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    small_bag(&dir, 1, 0);
    let part = part_paths(&dir).pop().unwrap();
    let bytes = std::fs::read(&part).unwrap();
    let file = tmp.path().join("torn.mcap");
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();

    for command in ["info", "cat"] {
        let run = bag(&[command.as_ref(), file.as_os_str()]);
        run.assert_code(3, command);
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(said.contains("torn"), "{command}: {run:#?}");
        assert!(
            !said.contains("`bag reindex` makes it whole"),
            "{command}: {run:#?}"
        );
    }
    // The hint a single file gets instead is followed as written, and works.
    let info = bag(&["info".as_ref(), file.as_os_str()]);
    assert!(
        info.stderr
            .contains("move it into a directory of its own and run `bag reindex` on that"),
        "{info:#?}"
    );
    let own = tmp.path().join("own");
    std::fs::create_dir(&own).unwrap();
    std::fs::rename(&file, own.join("torn.mcap")).unwrap();
    // 3: the cut tail is known loss, and the new index records it.
    bag(&["reindex".as_ref(), own.as_os_str()]).assert_code(3, "reindex of the moved file");
    let after = bag(&["info".as_ref(), own.as_os_str()]);
    assert!(after.stdout.contains("10 msgs"), "{after:#?}");
    assert!(!after.stdout.contains("[torn"), "{after:#?}");
    // Every reader of the repaired bag still says what was cut.
    for command in ["verify", "cat", "info"] {
        let run = bag(&[command.as_ref(), own.as_os_str()]);
        run.assert_code(3, command);
        assert!(
            format!("{}{}", run.stdout, run.stderr).contains("a torn part was cut"),
            "{command}: {run:#?}"
        );
    }
    // The same torn part in a bag directory, where reindex works, keeps the hint.
    std::fs::write(&part, &bytes[..bytes.len() / 2]).unwrap();
    let info = bag(&["info".as_ref(), dir.as_os_str()]);
    assert!(
        info.stdout.contains("`bag reindex` makes it whole"),
        "{info:#?}"
    );
}

#[test]
fn a_drop_count_near_u64_max_gives_a_sane_percentage() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    small_bag(&dir, 1, 1);
    let mut m = bag::Metadata::load(&dir.join("metadata.yaml")).unwrap();
    m.redline.as_mut().unwrap().dropped_messages = Some(u64::MAX);
    m.store_atomically(&dir).unwrap();

    let info = bag(&["info".as_ref(), dir.as_os_str()]);
    info.assert_code(3, "info");
    assert!(
        info.stdout
            .contains(&format!("dropped:     {} (100.00%)", u64::MAX)),
        "{info:#?}"
    );
    // u64::MAX dropped plus 10 recorded, exactly.
    assert!(
        info.stdout.contains("18446744073709551625 published"),
        "{info:#?}"
    );
    for command in ["cat", "verify"] {
        let run = bag(&[command.as_ref(), dir.as_os_str()]);
        run.assert_code(3, command);
        assert!(
            run.stderr.contains(&u64::MAX.to_string()),
            "{command}: {run:#?}"
        );
    }
}
