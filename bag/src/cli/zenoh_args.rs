//! The zenoh flags every live command shares, and stopping on Ctrl-C.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bag::live::{Mode, SessionOptions};
use clap::Args;

/// How to reach the zenoh network.
#[derive(Debug, Args)]
pub struct ZenohArgs {
    /// Connect to this zenoh endpoint, e.g. tcp/192.168.1.10:7447 (repeatable).
    #[arg(long, value_name = "ENDPOINT")]
    pub connect: Vec<String>,
    /// Listen on this endpoint, e.g. tcp/0.0.0.0:7447 (repeatable).
    #[arg(long, value_name = "ENDPOINT")]
    pub listen: Vec<String>,
    /// Session mode: peer (default) or client.
    #[arg(long, value_name = "MODE")]
    pub mode: Option<Mode>,
    /// A zenoh configuration file (json5). --connect, --listen and --mode override it.
    #[arg(long, value_name = "FILE")]
    pub zenoh_config: Option<PathBuf>,
    /// Find peers by UDP multicast scouting (off unless asked, here or in --zenoh-config).
    #[arg(long)]
    pub scouting: bool,
}

impl ZenohArgs {
    pub fn options(&self) -> SessionOptions {
        SessionOptions {
            connect: self.connect.clone(),
            listen: self.listen.clone(),
            mode: self.mode,
            config_file: self.zenoh_config.clone(),
            multicast_scouting: self.scouting,
            in_process: false,
        }
    }

    /// Opens the session, warning when it can reach nothing.
    pub fn open(&self) -> anyhow::Result<bag::live::Session> {
        let options = self.options();
        if options.connect.is_empty()
            && options.listen.is_empty()
            && options.config_file.is_none()
            && !options.multicast_scouting
        {
            eprintln!(
                "warning: no --connect, --listen, --zenoh-config or --scouting: only peers that \
                 find this one can be reached"
            );
        }
        Ok(options.open()?)
    }
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

/// A flag that Ctrl-C (or SIGTERM) sets.
pub fn stop_on_ctrl_c() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))?;
    Ok(stop)
}
