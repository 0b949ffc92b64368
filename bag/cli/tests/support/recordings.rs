//! Small recordings and special files for the tests that feed `bag` hostile input, shared by
//! the `bag` tool's tests (through `common.rs`) and the app's (through `hostile_inputs.rs`).
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use bag::{BagWriter, ChannelSpec, Compression, WriteOptions};

/// Log time of the first message of [`small_bag`].
pub const T0_NS: u64 = 1_764_676_800_000_000_000;

/// A bag of `parts` parts, each of 10 JSON messages 0.1 s apart on `car/speed`, the recorder's
/// drop count set to `dropped`.
pub fn small_bag(dir: &Path, parts: u64, dropped: u64) {
    let options = WriteOptions::new()
        .compression(Compression::Zstd)
        .part_max_duration_ns(Some(1_000_000_000));
    let mut w = BagWriter::create(dir, options).expect("create bag");
    let ch = w.add_channel(ChannelSpec {
        topic: "car/speed".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: Default::default(),
    });
    for i in 0..parts * 10 {
        let t = T0_NS + i * 100_000_000;
        let payload = format!("{{\"kph\": {i}}}");
        w.write(ch, t, Some(t), payload.as_bytes()).expect("write");
    }
    w.add_dropped(dropped);
    w.close().expect("close");
}

/// Makes a FIFO at `path`.
pub fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo {path:?}");
}

/// The parts of a bag directory, sorted by name.
pub fn part_paths(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut parts: Vec<_> = std::fs::read_dir(dir)
        .expect("list bag")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "mcap"))
        .collect();
    parts.sort();
    parts
}
