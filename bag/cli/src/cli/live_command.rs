//! What the live commands (`record`, `play`, `sim`) share: opening the session their zenoh flags
//! ([`ZenohArgs`], defined in `bag::live` and shared with the scope) describe, a `--duration`
//! deadline, and stopping on Ctrl-C.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bag::live::{Session, ZenohArgs};

/// Opens the session `args` describe, warning when they name no network to reach.
pub fn open(args: &ZenohArgs) -> anyhow::Result<Session> {
    if !args.names_a_network() {
        eprintln!(
            "warning: no --connect, --listen, --zenoh-config or --scouting: only peers that \
             find this one can be reached"
        );
    }
    Ok(args.options().open()?)
}

/// When a `--duration SECONDS` that starts now ends.
pub fn deadline_after(secs: f64) -> anyhow::Result<Instant> {
    anyhow::ensure!(
        secs.is_finite() && secs >= 0.0,
        "--duration must be a number of seconds, not {secs}"
    );
    Duration::try_from_secs_f64(secs)
        .ok()
        .and_then(|d| Instant::now().checked_add(d))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "--duration {secs:e}: too long to wait for; leave it out to run until Ctrl-C"
            )
        })
}

/// A flag that Ctrl-C (or SIGTERM) sets. A second one exits at once (status 130): a recorder
/// then leaves its last part torn, which `bag reindex` repairs.
pub fn stop_on_ctrl_c() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    })?;
    Ok(stop)
}
