//! Issue 24 item 12 through the library, as the scope's loader opens recordings: a FIFO is
//! refused at once (never waited on), a FIFO part is skipped and reported, symbolic links to
//! parts are followed. Each open runs on a thread with a deadline, so a regression fails
//! instead of hanging the test run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use bag::{BagReader, BagWriter, ChannelSpec, PartStatus, ReadFilter, WriteOptions};

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo {path:?}");
}

/// Opens `path` and reads every message on another thread; `None` if that takes over 20 s.
fn open_and_read(path: PathBuf) -> Option<Result<(BagReader, usize), String>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let result = BagReader::open(&path)
            .map_err(|e| e.detail())
            .and_then(|reader| {
                let count = reader
                    .messages(&ReadFilter::all())
                    .map_err(|e| e.detail())?
                    .count();
                Ok((reader, count))
            });
        tx.send(result).ok();
    });
    rx.recv_timeout(Duration::from_secs(20)).ok()
}

fn bag_of_two_parts(dir: &Path) {
    let options = WriteOptions::new().part_max_duration_ns(Some(1_000_000_000));
    let mut w = BagWriter::create(dir, options).unwrap();
    let ch = w.add_channel(ChannelSpec {
        topic: "a".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: Default::default(),
    });
    for i in 0..20u64 {
        w.write(ch, 1_000_000_000 + i * 100_000_000, None, b"{}")
            .unwrap();
    }
    w.close().unwrap();
}

#[test]
fn a_fifo_is_refused_at_once_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("drive.mcap");
    mkfifo(&fifo);
    let Some(result) = open_and_read(fifo) else {
        panic!("opening a FIFO is still waiting after 20 s");
    };
    let Err(error) = result else {
        panic!("a FIFO opened as a recording");
    };
    assert!(error.contains("FIFO"), "{error}");
}

#[test]
fn a_fifo_in_place_of_a_part_is_skipped_and_the_rest_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    bag_of_two_parts(&dir);
    let second = dir.join("drive_1.mcap");
    std::fs::remove_file(&second).unwrap();
    mkfifo(&second);
    let Some(result) = open_and_read(dir) else {
        panic!("opening a bag with a FIFO part is still waiting after 20 s");
    };
    let (reader, count) = result.unwrap();
    assert_eq!(count, 10);
    let skipped = reader.parts().get(1).unwrap();
    assert!(
        matches!(&skipped.status, PartStatus::Garbage { what } if what.contains("FIFO")),
        "{:?}",
        skipped.status
    );
    assert_eq!(reader.known_loss().len(), 1, "{:?}", reader.known_loss());
}

#[test]
fn symlinked_parts_are_read_through_their_links() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    bag_of_two_parts(&dir);
    let links = tmp.path().join("links");
    std::fs::create_dir(&links).unwrap();
    for name in ["drive_0.mcap", "drive_1.mcap"] {
        std::os::unix::fs::symlink(dir.join(name), links.join(name)).unwrap();
    }
    let (reader, count) = open_and_read(links).unwrap().unwrap();
    assert_eq!(count, 20);
    assert_eq!(reader.parts().len(), 2);
    assert!(reader.known_loss().is_empty(), "{:?}", reader.known_loss());
}
