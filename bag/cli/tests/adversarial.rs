//! Issue 24's adversarial table: every hostile input against every read subcommand.
//!
//! Each row builds one input (a bag, a file, a FIFO, ...) in a fresh directory, next to a
//! sibling file, and names the exact exit code each subcommand must give. Each command runs as
//! a child process under a time limit and an address-space limit (`common::bag`), and must:
//! exit by itself (no hang, no signal), print no panic, give exactly the expected code, and
//! change no byte of the directory that holds the input (the input itself included: these
//! commands only read). `export` writes into a separate directory made for it.
//!
//! After the commands, the library reads the same input in-process the way the scope's loader
//! does (`BagReader::open`, then every message), on a thread with the same time limit; what it
//! must find follows from `cat`'s expected code, since `cat` is a thin layer over it: 0 opens
//! with no known loss, 3 opens with loss or read issues, 1 refuses to open.
//!
//! The rows live in `support/hostile_inputs.rs`, shared with the app's test of the scope's own
//! loader on the same inputs (`app/tests/hostile_inputs.rs`); add a case there.

mod common;
// It brings its own copy of `support/recordings.rs` (so the app's test can use it alone), which
// `common` also includes here.
#[allow(clippy::duplicate_mod)]
#[path = "support/hostile_inputs.rs"]
mod hostile_inputs;

use std::path::Path;

use common::Run;
use hostile_inputs::{COMMANDS, Code, DAMAGE, NOT_A_RECORDING, cases, snapshot};

// ---- the run --------------------------------------------------------------------------------

fn run_command(command: &str, input: &Path, export_to: &Path) -> Run {
    let input = input.as_os_str();
    match command {
        "export" => common::bag(&[
            "export".as_ref(),
            input,
            "-o".as_ref(),
            export_to.as_os_str(),
        ]),
        "play" => common::bag(&[
            "play".as_ref(),
            input,
            "--rate".as_ref(),
            "1000".as_ref(),
            "--wait".as_ref(),
            "0".as_ref(),
        ]),
        _ => common::bag(&[command.as_ref(), input]),
    }
}

/// What the library finds when it opens `input` and reads every message (on a thread: `None`
/// if that takes longer than the time limit).
fn library_read(input: &Path) -> Option<Result<bool, String>> {
    let input = input.to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let found = bag::BagReader::open(&input)
            .map_err(|e| e.detail())
            .and_then(|reader| {
                let mut cursor = reader
                    .messages(&bag::ReadFilter::all())
                    .map_err(|e| e.detail())?;
                while cursor.next_message().is_some() {}
                Ok(!reader.known_loss().is_empty() || !cursor.issues().is_empty())
            });
        tx.send(found).ok();
    });
    rx.recv_timeout(common::TIME_LIMIT).ok()
}

/// Why the library's read of `input` disagrees with `cat`'s expected code, if it does.
fn library_read_problem(input: &Path, cat: Code) -> Option<String> {
    let Code::Exit(code) = cat;
    match (library_read(input), code) {
        (None, _) => Some("still running after the time limit".into()),
        (Some(Ok(false)), 0) | (Some(Ok(true)), DAMAGE) | (Some(Err(_)), NOT_A_RECORDING) => None,
        (Some(found), code) => Some(format!("found {found:?}, cat is expected to exit {code}")),
    }
}

#[test]
fn every_read_command_on_every_hostile_input() {
    let mut failures = Vec::new();
    for case in cases() {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("work");
        std::fs::create_dir(&work).unwrap();
        std::fs::write(work.join("sibling.txt"), b"must not change\n").unwrap();
        let input = (case.build)(&work);
        let before = snapshot(&work);
        for command in COMMANDS {
            let export_to = tmp.path().join(format!("export-{command}"));
            let run = run_command(command, &input, &export_to);
            let label = format!("{} / {command}", case.name);
            let sane = run.timed_out
                || run.signal.is_some()
                || run.stderr.contains("panicked")
                || run.stderr.contains("memory allocation of");
            if sane {
                failures.push(format!("{label}: not sane: {run:#?}"));
            }
            match case.expect.code(command) {
                Code::Exit(code) if run.code != Some(code) => failures.push(format!(
                    "{label}: exit {:?}, expected {code}\nstderr: {}",
                    run.code, run.stderr
                )),
                _ => {}
            }
            if run.code == Some(3) && run.stderr.trim().is_empty() {
                failures.push(format!("{label}: exit 3 without a reason on stderr"));
            }
            let after = snapshot(&work);
            if after != before {
                failures.push(format!(
                    "{label}: changed the input's directory\nbefore: {before:#?}\nafter: {after:#?}"
                ));
            }
        }
        if let Some(problem) = library_read_problem(&input, case.expect.cat) {
            failures.push(format!("{} / library read: {problem}", case.name));
        }
        if snapshot(&work) != before {
            failures.push(format!(
                "{} / library read: changed the input's directory",
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
