//! `bag sim`: the simulated vehicle, published on a zenoh network.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bag::live::ZenohArgs;
use bag::live::sim::Simulator;
use clap::Args;
use schemas::vehicle::{SILENT_TOPIC, TOPICS};

use super::Outcome;
use super::live_command::{self, deadline_after, stop_on_ctrl_c};
use super::progress::Status;

#[derive(Debug, Args)]
pub struct SimArgs {
    #[command(flatten)]
    zenoh: ZenohArgs,
    /// Stop by itself after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    duration: Option<f64>,
}

pub fn run(args: &SimArgs) -> anyhow::Result<Outcome> {
    let deadline = args.duration.map(deadline_after).transpose()?;
    let stop = stop_on_ctrl_c()?;
    let session = live_command::open(&args.zenoh)?;
    let simulator = Simulator::start(&session)?;
    eprintln!(
        "simulating a vehicle ({}); Ctrl-C stops",
        args.zenoh.options().describe()
    );
    for t in TOPICS {
        let stamp = if t.stamped { "" } else { "  (no timestamps)" };
        eprintln!(
            "  {:<18} {:<14} {:>6} Hz{stamp}",
            t.topic, t.schema, t.rate_hz
        );
    }
    eprintln!(
        "  {:<18} {:<14} advertised, never published",
        SILENT_TOPIC.topic, SILENT_TOPIC.schema
    );
    let status = Status::new();
    while !stop.load(Ordering::SeqCst) && deadline.is_none_or(|d| Instant::now() < d) {
        std::thread::sleep(Duration::from_millis(100));
        status.set(format!("{} messages published", simulator.published()));
    }
    status.finish();
    let published = simulator.published();
    simulator.stop()?;
    if let Err(e) = bag::live::close(session) {
        eprintln!("warning: {e}");
    }
    outln!("published {published} messages");
    Ok(Outcome::Clean)
}
