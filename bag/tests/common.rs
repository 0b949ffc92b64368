//! Helpers shared by the tests of the `bag` library, the `bag` tool and the app (the others pull
//! this file in with `#[path]`), in the manner of the mcap crate's `tests/common`. Not every test
//! uses every helper.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The oracle folder `sub` of `../shared/oracles` beside the workspace, or `None` (saying
/// "skipped") when it is not there. Under `CI=true` a missing folder is a failure, not a skip.
pub fn oracle_dir(sub: &str) -> Option<PathBuf> {
    let dir = workspace_root().join("../shared/oracles").join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "oracle data {} is missing (required under CI=true)",
        dir.display()
    );
    eprintln!("skipped: oracle data {} not found", dir.display());
    None
}

/// The workspace's root directory (the one holding `Cargo.lock`), whichever crate includes this.
fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .find(|p| p.join("Cargo.lock").is_file())
        .unwrap_or(manifest)
        .to_path_buf()
}

/// Whether `python3` can `import modules` (a test peer from another implementation). When it
/// cannot, says "skipped" naming the `pip` packages to install; under `CI=true` (whose `.ci/run`
/// installs them) that is a failure.
pub fn python_can_import(modules: &str, pip_packages: &str) -> bool {
    let usable = std::process::Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !usable {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but python3 cannot import {modules} (pip install {pip_packages})"
        );
        eprintln!("skipped: python3 cannot import {modules} (pip install {pip_packages})");
    }
    usable
}

/// What `python3 bag/tests/peers/SCRIPT ARG` printed; panics with all it printed unless it
/// exits 0.
pub fn run_python_peer(script: &str, arg: &Path) -> String {
    let script = workspace_root().join("bag/tests/peers").join(script);
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg(arg)
        .output()
        .expect("running python3");
    assert!(
        out.status.success(),
        "{} {arg:?} failed:\n{}{}",
        script.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 from a Python peer")
}

/// What `rosbags_reader.py` printed for `bag`, or `None` (saying "skipped") when this machine
/// has no python3 with rosbags; under `CI=true` that is a failure.
pub fn rosbags_read(bag: &Path) -> Option<serde_json::Value> {
    if !python_can_import("rosbags.rosbag2, rosbags.highlevel", "rosbags==0.11.9") {
        return None;
    }
    let text = run_python_peer("rosbags_reader.py", bag);
    eprintln!("rosbags read {}: {text}", bag.display());
    Some(serde_json::from_str(&text).expect("JSON from rosbags_reader.py"))
}

/// Every file under `root` (recursively, in name order) for which `pred` holds.
pub fn files_named(root: &Path, pred: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect_files(root, pred, &mut out);
    out
}

fn collect_files(root: &Path, pred: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_files(&p, pred, out);
        } else if pred(&p) {
            out.push(p);
        }
    }
}

/// A TCP port on loopback that nothing listened on a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Polls `done` every 10 ms until it holds; fails the test, naming `what`, after `timeout`.
pub fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The MCAP conformance suite's expected-records JSON (`*.json` beside each `.mcap`).
pub mod conformance_json {
    /// The value of the field `name` in a record's `fields` list of `[name, value]` pairs.
    pub fn field<'a>(fields: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
        fields
            .as_array()
            .expect("fields is a list")
            .iter()
            .find(|f| f[0] == name)
            .map(|f| &f[1])
            .unwrap_or_else(|| panic!("no field {name}"))
    }

    /// A number, which the suite writes as a decimal string.
    pub fn num(v: &serde_json::Value) -> u64 {
        v.as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{v} is not a decimal string"))
    }
}
