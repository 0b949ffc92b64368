//! Shared helpers for the CLI tests that feed `bag` hostile input: run the binary as a child
//! process with a time limit and an address-space limit, and build small recordings.
//!
//! Pulled into each test file with `mod common;` (as foxglove/mcap's `tests/common.rs` is).
#![allow(dead_code)]

use std::ffi::OsStr;
use std::process::Command;
use std::time::Duration;

/// How long a read subcommand may take on a small input before it counts as a hang.
pub const TIME_LIMIT: Duration = Duration::from_secs(20);

/// The address space a read subcommand may use on a small input: far below what any hostile
/// input here claims (GiBs), well above what the binary needs to start (about 50 MB).
pub const MEMORY_LIMIT_BYTES: u64 = 400 * 1024 * 1024;

#[path = "support/limited.rs"]
mod limited;
pub use limited::Run;

/// Runs `bag args...` with stdin closed, under `prlimit --as=memory_limit_bytes`, killing it
/// at `time_limit`.
pub fn bag_limited<S: AsRef<OsStr>>(
    args: &[S],
    time_limit: Duration,
    memory_limit_bytes: u64,
) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_bag"));
    command.args(args);
    limited::run_limited(&command, time_limit, memory_limit_bytes)
}

/// [`bag_limited`] with [`TIME_LIMIT`] and [`MEMORY_LIMIT_BYTES`].
pub fn bag<S: AsRef<OsStr>>(args: &[S]) -> Run {
    bag_limited(args, TIME_LIMIT, MEMORY_LIMIT_BYTES)
}

#[path = "support/recordings.rs"]
mod recordings;
#[allow(unused_imports)] // not every test uses every one
pub use recordings::{T0_NS, mkfifo, part_paths, small_bag};
