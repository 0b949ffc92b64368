//! `bag record`: zenoh samples into a bag until Ctrl-C.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Context;
use bag::live::{RECORD_COMPRESSION_LEVEL, RECORD_QUEUE_MIB, Recorder, Subscription, ZenohArgs};
use bag::{BagWriter, Compression, DropQueue, WriteOptions};
use clap::Args;

use super::Outcome;
use super::live_command::{self, deadline_after, stop_on_ctrl_c};
use super::progress::Status;

/// How long a stopping recorder keeps writing what is still queued.
const STOP_BUDGET: Duration = Duration::from_secs(1);

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The bag directory to create (must not exist or be empty).
    #[arg(short, long)]
    out: PathBuf,
    /// Zenoh key expressions to record, e.g. car/** (default: everything).
    #[arg(value_name = "KEYEXPR", default_value = "**")]
    key_exprs: Vec<String>,
    #[command(flatten)]
    zenoh: ZenohArgs,
    /// Chunk compression: zstd, lz4 or none.
    #[arg(long, default_value = "zstd")]
    compression: Compression,
    /// zstd level, from -7 (fastest, largest) to 19 (slowest, smallest); 0 is zstd's own
    /// default, 3. The default, -1, keeps up with more traffic than 1 for files about 3%
    /// larger.
    #[arg(
        long,
        value_name = "LEVEL",
        default_value_t = RECORD_COMPRESSION_LEVEL,
        allow_negative_numbers = true,
        value_parser = clap::value_parser!(i32).range(-7..=19)
    )]
    compression_level: i32,
    /// Start a new part after this many MiB.
    #[arg(long, value_name = "MIB", default_value_t = 512)]
    split_size: u64,
    /// Also start a new part after this many seconds of log time.
    #[arg(long, value_name = "SECONDS")]
    split_duration: Option<f64>,
    /// Memory for samples waiting to be written, MiB. When the disk falls behind this long,
    /// the oldest waiting samples are dropped and counted as `dropped_messages`.
    #[arg(long, value_name = "MIB", default_value_t = RECORD_QUEUE_MIB)]
    queue_size: usize,
    /// Accept at most this many distinct topics; messages on further topics are not recorded
    /// and are counted as dropped, with the reason, in the index.
    #[arg(long, value_name = "N", default_value_t = bag::live::DEFAULT_MAX_TOPICS)]
    max_topics: usize,
    /// Stop by itself after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    duration: Option<f64>,
}

pub fn run(args: &RecordArgs) -> anyhow::Result<Outcome> {
    let mut options = WriteOptions::new()
        .compression(args.compression)
        .compression_level(args.compression_level)
        .part_max_bytes(Some(args.split_size.max(1) << 20));
    if let Some(secs) = args.split_duration {
        anyhow::ensure!(secs > 0.0, "--split-duration must be positive");
        options = options.part_max_duration_ns(Some((secs * 1e9) as u64));
    }
    let deadline = args.duration.map(deadline_after).transpose()?;
    let stop = stop_on_ctrl_c()?;
    // The session and the subscription first: bad flags or key expressions must not leave a
    // bag behind. What arrives before the writer exists waits in the queue.
    let session = live_command::open(&args.zenoh)?;
    let queue = Arc::new(DropQueue::new(usize::MAX, args.queue_size.max(1) << 20));
    let subscription = Subscription::start(&session, &args.key_exprs, Arc::clone(&queue))?;
    let writer = BagWriter::create(&args.out, options)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let mut recorder =
        Recorder::new(writer, Arc::clone(subscription.topics())).max_topics(args.max_topics);
    eprintln!(
        "recording {} into {} ({}); Ctrl-C stops",
        args.key_exprs.join(" "),
        args.out.display(),
        args.zenoh.options().describe()
    );

    let status = Status::new();
    let started = Instant::now();
    let (mut last_tick, mut last_count) = (Instant::now(), 0);
    while !stop.load(Ordering::SeqCst) && deadline.is_none_or(|d| Instant::now() < d) {
        recorder.pump(&queue, Duration::from_millis(100))?;
        if last_tick.elapsed() >= Duration::from_millis(500) {
            let stats = recorder.stats();
            let rate = (stats.messages - last_count) as f64 / last_tick.elapsed().as_secs_f64();
            let links = bag::live::link_count(&session);
            status.set(format!(
                "{:.0} s  {links} links  {} messages  {rate:.0}/s  {:.1} MiB  {} topics  {} dropped",
                started.elapsed().as_secs_f64(),
                stats.messages,
                stats.payload_bytes as f64 / (1 << 20) as f64,
                subscription.topics().len(),
                stats.dropped,
            ));
            (last_tick, last_count) = (Instant::now(), stats.messages);
            recorder.advertise(&subscription.advertisements().snapshot())?;
        }
    }
    status.finish();

    // Stop the flow first, so nothing that arrives while closing counts as dropped.
    let advertised = subscription.advertisements().snapshot();
    drop(subscription);
    // What is still queued gets a second to reach the disk; a recorder far behind stops
    // anyway and counts the rest as dropped, rather than writing its backlog for minutes.
    let abandoned = recorder.stop_within(&queue, STOP_BUDGET)?;
    if abandoned > 0 {
        eprintln!(
            "warning: stopped while {abandoned} messages were still waiting to be written: \
             counted as dropped"
        );
    }
    let refused = recorder.stats().refused;
    let summary = recorder.finish(&advertised)?;
    if let Err(e) = bag::live::close(session) {
        eprintln!("warning: {e}");
    }

    outln!(
        "recorded {} messages ({:.1} MiB on disk) in {} parts to {}",
        summary.message_count,
        bytes_on_disk(&summary) as f64 / (1 << 20) as f64,
        summary.parts.len(),
        summary.dir.display()
    );
    let mut lossy = false;
    // Refused messages (too large, topic limit) are in the drop count too, for another reason.
    let fell_behind = summary.dropped_messages.saturating_sub(refused);
    if fell_behind > 0 {
        lossy = true;
        eprintln!(
            "warning: {fell_behind} messages were dropped because the disk fell behind: the \
             recording has gaps (try --queue-size, --compression lz4 or a faster disk)"
        );
    }
    if refused > 0 {
        lossy = true;
        eprintln!(
            "warning: {refused} messages were refused (larger than a chunk may be, or on a topic \
             beyond --max-topics); `bag info` lists the reasons"
        );
    }
    if summary.unstamped_messages > 0 {
        eprintln!(
            "note: {} messages came without a publisher timestamp; their publish time is their \
             arrival time",
            summary.unstamped_messages
        );
    }
    for a in &summary.advertised_never_published {
        eprintln!(
            "warning: {} ({}) was advertised but never published",
            a.topic, a.schema
        );
    }
    if summary.message_count == 0 {
        eprintln!(
            "warning: nothing was received on {}",
            args.key_exprs.join(" ")
        );
    }
    Ok(if lossy {
        Outcome::Damaged
    } else {
        Outcome::Clean
    })
}

fn bytes_on_disk(summary: &bag::BagSummary) -> u64 {
    summary
        .parts
        .iter()
        .map(|p| std::fs::metadata(summary.dir.join(&p.path)).map_or(0, |m| m.len()))
        .sum()
}
