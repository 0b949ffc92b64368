//! Issue 24 item 15: one rule for the commands that read a recording (`cat`, `verify`,
//! `play`): exit 3 whenever it has known loss or damage (messages the recorder dropped, a torn
//! part, a skipped part), with a one-line reason on stderr.

mod common;

use common::{Run, bag, part_paths, small_bag};

fn play(dir: &std::path::Path) -> Run {
    // No peer is needed: play publishes into its own session, at 1000x, without waiting.
    bag(&[
        "play".as_ref(),
        dir.as_os_str(),
        "--rate".as_ref(),
        "1000".as_ref(),
        "--wait".as_ref(),
        "0".as_ref(),
    ])
}

#[test]
fn a_bag_with_dropped_messages_exits_3_with_the_count() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    small_bag(&dir, 2, 1234);
    for run in [
        bag(&["cat".as_ref(), dir.as_os_str()]),
        bag(&["verify".as_ref(), dir.as_os_str()]),
        play(&dir),
    ] {
        run.assert_code(3, "a read command");
        assert!(run.stderr.contains("1234"), "{run:#?}");
    }
}

#[test]
fn a_clean_bag_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    small_bag(&dir, 2, 0);
    bag(&["cat".as_ref(), dir.as_os_str()]).assert_code(0, "cat");
    bag(&["verify".as_ref(), dir.as_os_str()]).assert_code(0, "verify");
    let run = play(&dir);
    run.assert_code(0, "play");
    assert!(run.stdout.contains("published 20 messages"), "{run:#?}");
}

#[test]
fn play_says_a_recording_is_torn_and_exits_3() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    small_bag(&dir, 2, 0);
    let last = part_paths(&dir).pop().unwrap();
    let bytes = std::fs::read(&last).unwrap();
    std::fs::write(&last, &bytes[..bytes.len() / 2]).unwrap();
    let run = play(&dir);
    run.assert_code(3, "play");
    let name = last.file_name().unwrap().to_str().unwrap();
    assert!(run.stderr.contains(&format!("{name} is torn")), "{run:#?}");
    let run = bag(&["verify".as_ref(), dir.as_os_str()]);
    run.assert_code(3, "verify");
    assert!(run.stderr.contains("first: "), "{run:#?}");
}
