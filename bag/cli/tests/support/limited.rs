//! A child process under a time limit and an address-space limit (`prlimit`), with everything
//! it printed: how the hostile-input tests see a hang, an abort on a huge allocation or a panic
//! as such. Shared by the `bag` CLI tests (`common.rs`) and the scope's hostile-input test.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a child process ended.
#[derive(Debug)]
pub struct Run {
    /// Exit code, when it exited (not killed by a signal, not timed out).
    pub code: Option<i32>,
    /// The signal that ended it, if one did (an abort on a failed allocation is SIGABRT).
    pub signal: Option<i32>,
    /// True when it was still running at the time limit and was killed.
    pub timed_out: bool,
    /// Everything it wrote to stdout.
    pub stdout: String,
    /// Everything it wrote to stderr.
    pub stderr: String,
}

impl Run {
    /// Panics with the whole story unless it exited by itself, without a panic, with `code`.
    pub fn assert_code(&self, code: i32, what: &str) {
        self.assert_sane(what);
        assert_eq!(self.code, Some(code), "{what}: exit code\n{self:#?}");
    }

    /// Panics unless it exited by itself (no hang, no signal) without a panic message.
    pub fn assert_sane(&self, what: &str) {
        assert!(
            !self.timed_out,
            "{what}: still running after the time limit\n{self:#?}"
        );
        assert_eq!(self.signal, None, "{what}: killed by a signal\n{self:#?}");
        assert!(
            !self.stderr.contains("panicked"),
            "{what}: panicked\n{self:#?}"
        );
        assert!(
            !self.stderr.contains("memory allocation of"),
            "{what}: a failed allocation\n{self:#?}"
        );
    }
}

/// Runs `command` (its program and arguments; environment included) with stdin closed, under
/// `prlimit --as=memory_limit_bytes`, killing it at `time_limit`.
pub fn run_limited(command: &Command, time_limit: Duration, memory_limit_bytes: u64) -> Run {
    let mut child = Command::new("prlimit");
    child
        .arg(format!("--as={memory_limit_bytes}"))
        .arg("--")
        .arg(command.get_program())
        .args(command.get_args());
    if let Some(dir) = command.get_current_dir() {
        child.current_dir(dir);
    }
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => child.env(key, value),
            None => child.env_remove(key),
        };
    }
    let mut child = child
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("prlimit (util-linux) runs: the hostile-input tests need it");
    let pipe = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut r) = r {
                r.read_to_end(&mut text).ok();
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = pipe(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = pipe(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the child") {
            break status;
        }
        if started.elapsed() > time_limit {
            timed_out = true;
            // prlimit execs the program in place: this pid is the program's.
            child.kill().ok();
            break child
                .wait()
                .expect("waiting for the child after killing it");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    use std::os::unix::process::ExitStatusExt;
    Run {
        code: if timed_out { None } else { status.code() },
        signal: if timed_out { None } else { status.signal() },
        timed_out,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}
