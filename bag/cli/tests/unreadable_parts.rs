//! Issue 24 item 16: one part that cannot be read (a directory where a part should be, a
//! symbolic link loop) is reported and skipped; the rest of the recording reads, and the
//! command exits 3. (Tests may run as root, for whom permissions deny nothing, so the
//! unreadable parts here are ones no user can read.)

mod common;

use common::{bag, part_paths, small_bag};

#[test]
fn a_directory_where_a_listed_part_should_be_is_skipped_and_the_rest_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    small_bag(&dir, 3, 0);
    let middle = part_paths(&dir).remove(1);
    std::fs::remove_file(&middle).unwrap();
    std::fs::create_dir(&middle).unwrap();
    let name = middle.file_name().unwrap().to_str().unwrap().to_owned();

    let cat = bag(&["cat".as_ref(), dir.as_os_str()]);
    cat.assert_code(3, "cat");
    assert_eq!(cat.stdout.lines().count(), 20, "{cat:#?}");
    assert!(
        cat.stderr.contains(&name) && cat.stderr.contains("a directory"),
        "{cat:#?}"
    );
    let info = bag(&["info".as_ref(), dir.as_os_str()]);
    info.assert_code(3, "info");
    assert!(info.stdout.contains("messages:    20"), "{info:#?}");
    bag(&["verify".as_ref(), dir.as_os_str()]).assert_code(3, "verify");
}

#[test]
fn a_symlink_loop_as_a_part_is_skipped_and_the_rest_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    small_bag(&dir, 2, 0);
    let looped = dir.join("drive_9.mcap");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();

    let cat = bag(&["cat".as_ref(), dir.as_os_str()]);
    cat.assert_code(3, "cat");
    assert_eq!(cat.stdout.lines().count(), 20, "{cat:#?}");
    assert!(cat.stderr.contains("drive_9.mcap"), "{cat:#?}");
    bag(&["info".as_ref(), dir.as_os_str()]).assert_code(3, "info");
    bag(&["verify".as_ref(), dir.as_os_str()]).assert_code(3, "verify");
}
