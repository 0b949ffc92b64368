//! The scope's loader on issue 24's hostile inputs: the table the `bag` tool's adversarial test
//! runs every subcommand on (`bag/cli/tests/support/hostile_inputs.rs`), here opened and loaded
//! the way `scope PATH` does it (`RecordingSource::open`, then the loader to the end).
//!
//! Each input is loaded in a child process (this test binary, re-run for the ignored test
//! [`load_one_hostile_input`]) under a time limit and an address-space limit (`prlimit`), so a
//! hang, an abort on a huge allocation or a panic is seen as such. What the scope must make of
//! each input follows from `bag cat`'s expected code on it: 1 refuses to open with a message,
//! 3 opens and the Health panel lists known loss (or the loader reports read problems), 0 opens
//! with nothing known lost. No byte of the directory holding the input may change.

#[path = "../../bag/cli/tests/support/hostile_inputs.rs"]
mod hostile_inputs;
#[allow(dead_code)] // its panicking assertions serve the bag tests; here `problem` words them
#[path = "../../bag/cli/tests/support/limited.rs"]
mod limited;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use hostile_inputs::{Code, DAMAGE, NOT_A_RECORDING, cases, snapshot};
use limited::{Run, run_limited};
use scope::data::source::RecordingSource;
use scope::recording::Recording;

/// Names the input the child loads.
const CHILD_INPUT: &str = "SCOPE_HOSTILE_INPUT";

/// How long one load may take on a small input before it counts as a hang.
const TIME_LIMIT: Duration = Duration::from_secs(30);

/// The child's address space: far below what the hostile inputs claim (3 and 12 GiB), above
/// what the test binary needs with its loader threads and their malloc arenas.
const MEMORY_LIMIT_BYTES: u64 = 2 << 30;

/// What the child prints before its outcome.
const OUTCOME: &str = "OUTCOME ";

/// The child: loads the input named by [`CHILD_INPUT`] as the scope does and prints one line,
/// `OUTCOME refused: ...`, `OUTCOME loss: ...` or `OUTCOME clean`.
#[test]
#[ignore = "run by every_hostile_input_through_the_scope_loader, in a child process under limits"]
fn load_one_hostile_input() {
    let path = std::env::var_os(CHILD_INPUT).expect("the parent test names the input");
    let outcome = match RecordingSource::open(Path::new(&path)) {
        Err(e) => format!("refused: {}", e.report()),
        Ok(source) => {
            let mut recording = Recording::start(Arc::new(source), Arc::new(|| {}));
            while !recording.loaded() {
                recording.poll(Duration::from_millis(20));
            }
            let mut reasons = recording.summary().health.known_loss();
            reasons.extend(recording.issues.iter().cloned());
            if reasons.is_empty() {
                "clean".to_owned()
            } else {
                format!("loss: {}", reasons.join("; "))
            }
        }
    };
    println!("{OUTCOME}{outcome}");
}

/// Loads `input` in a child: this test binary, re-run for [`load_one_hostile_input`] alone.
fn load_in_child(input: &Path) -> Run {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut command = Command::new(exe);
    command
        .args([
            "load_one_hostile_input",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env(CHILD_INPUT, input);
    run_limited(&command, TIME_LIMIT, MEMORY_LIMIT_BYTES)
}

/// Why the child's load of a case disagrees with `cat`'s expected code, if it does.
fn problem(child: &Run, cat: Code) -> Option<String> {
    if child.timed_out {
        return Some(format!("still loading after {TIME_LIMIT:?}"));
    }
    if child.code != Some(0) {
        return Some(format!("the load did not end well: {child:#?}"));
    }
    let Some(outcome) = child
        .stdout
        .lines()
        .find_map(|line| line.strip_prefix(OUTCOME))
    else {
        return Some(format!("no outcome printed; stderr: {}", child.stderr));
    };
    let Code::Exit(code) = cat;
    let agrees = match code {
        0 => outcome == "clean",
        DAMAGE => outcome.starts_with("loss: "),
        NOT_A_RECORDING => outcome.starts_with("refused: "),
        _ => false,
    };
    (!agrees).then(|| format!("{outcome:?}, but `bag cat` exits {code} on it"))
}

#[test]
fn every_hostile_input_through_the_scope_loader() {
    let mut failures = Vec::new();
    for case in cases() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let work = tmp.path().join("work");
        std::fs::create_dir(&work).expect("work dir");
        std::fs::write(work.join("sibling.txt"), b"must not change\n").expect("sibling");
        let input = (case.build)(&work);
        let before = snapshot(&work);
        let child = load_in_child(&input);
        // The table, for `--nocapture`.
        let outcome = child.stdout.lines().find_map(|l| l.strip_prefix(OUTCOME));
        println!("{:<40} {}", case.name, outcome.unwrap_or("(none)"));
        if let Some(p) = problem(&child, case.expect.cat) {
            failures.push(format!("{}: {p}", case.name));
        }
        if snapshot(&work) != before {
            failures.push(format!(
                "{}: the load changed the input's directory",
                case.name
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
