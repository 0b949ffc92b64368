//! The highest rate `bag record` keeps up with without dropping anything, as a share of what a
//! bare zenoh subscriber receives in the same run (issue 6 asks for >= 0.8).
//!
//! `cargo run --release -p bag-cli --example zero_drop_rate [SWEEPS] [PAYLOAD]
//! [SECONDS] [SETTINGS]`: 3 sweeps of `waves` payloads in 45-second steps, recorded as `bag
//! record` records (zstd at its level), unless given. Payloads are `waves`, `imu` or
//! `constant`, described in [`support::payloads`]. SETTINGS is a comma-separated list of zstd
//! levels, `zstd` (`bag record`'s level), `lz4` or `none`, such as `-1,-4,none`.
//!
//! Each step of a sweep, on TCP loopback:
//! 1. A blocking publisher sends as fast as it can for SECONDS to a subscriber whose callback
//!    only counts. What that subscriber receives per second is the link's rate, measured
//!    afresh each step so that both sides see the same load on a shared machine.
//! 2. For each setting, the publisher is paced at a share of that rate, SECONDS long, into our
//!    [`Subscription`] and a [`DropQueue`] of `bag record`'s size, drained on its own thread
//!    by a [`Recorder`] the way `bag record` drains it, into a fresh bag. The step passes
//!    when every message was written and none dropped.
//!
//! The share is found by bisection: 50% first, then halfway between the highest share that
//! passed (at first none) and the lowest that dropped (at first 100%), six steps in all. A
//! sweep's result is the highest rate the publisher really achieved in a step that passed,
//! over the link's rate of that step. (With a recorder attached, the publisher may not reach
//! the pace asked of it: the recorder's work slows the whole pipeline.) Since a maximum over
//! noisy steps flatters, the median achieved in the steps that fell behind their pace (without
//! a drop) is printed too.
//!
//! Steps are long for two reasons. The queue holds about a second at these rates, so in a
//! 45-second step a recorder slower than its publisher by more than 2% cannot hide behind it,
//! while the rare stalls a real recording also meets are in the step. And the kernel writes
//! dirty pages back after 30 seconds unless asked earlier: in a shorter step, a writer that
//! leaves this to the kernel would never pay for its disk. A default run takes about 30
//! minutes, and a step's bag, deleted after it, can take 25 GB in the temporary directory
//! (`TMPDIR`) at 2 million messages a second.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bag::live::{
    LiveMessage, LivePublisher, RECORD_COMPRESSION_LEVEL, RECORD_QUEUE_MIB, Recorder, Subscription,
};
use bag::{BagWriter, DropQueue, WriteOptions};
use support::{median, wait_for};
use zenoh::Session;

const QUEUE_BYTES: usize = RECORD_QUEUE_MIB << 20;
const FIRST_SHARE: f64 = 0.50;
/// Steps of the bisection per sweep: the last is within 1/64 of the highest share that
/// passes.
const STEPS: usize = 6;
const PACE_EVERY: u64 = 32;
/// A step whose publisher achieved less than this share of its pace fell behind: the
/// pipeline, recorder attached, went no faster.
const SATURATED: f64 = 0.98;

/// Publishes as fast as the publisher can for `seconds` to the counting subscriber; returns
/// what it received per second.
fn bare_rate(
    publisher: &LivePublisher,
    received: &AtomicU64,
    payloads: &[Vec<u8>],
    seconds: f64,
) -> anyhow::Result<f64> {
    let before = received.load(Ordering::Relaxed);
    let start = Instant::now();
    let mut sent = 0u64;
    for payload in payloads.iter().cycle() {
        publisher.put(payload.clone())?;
        sent += 1;
        if sent.is_multiple_of(1024) && start.elapsed().as_secs_f64() >= seconds {
            break;
        }
    }
    wait_for(|| received.load(Ordering::Relaxed) - before >= sent)?;
    Ok(sent as f64 / start.elapsed().as_secs_f64())
}

/// Publishes `count` messages, the i-th not before `i / rate` seconds after the first; returns
/// the rate achieved. The clock is read once every [`PACE_EVERY`] messages, so that pacing
/// costs the publisher next to nothing.
fn publish_paced(
    publisher: &LivePublisher,
    payloads: &[Vec<u8>],
    rate: f64,
    count: u64,
) -> anyhow::Result<f64> {
    let start = Instant::now();
    for (i, payload) in (0..count).zip(payloads.iter().cycle()) {
        if i.is_multiple_of(PACE_EVERY) {
            let due = start + Duration::from_secs_f64(i as f64 / rate);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        publisher.put(payload.clone())?;
    }
    Ok(count as f64 / start.elapsed().as_secs_f64())
}

/// How a step's bag is compressed: `zstd` (at `bag record`'s level), a zstd level (`-4`),
/// `lz4` or `none`.
#[derive(Clone, Copy)]
struct Setting {
    compression: bag::Compression,
    level: i32,
}

impl Setting {
    fn parse(text: &str) -> anyhow::Result<Self> {
        let level = RECORD_COMPRESSION_LEVEL;
        Ok(match text.parse::<i32>() {
            Ok(level) => Setting {
                compression: bag::Compression::Zstd,
                level,
            },
            Err(_) => Setting {
                compression: text.parse().map_err(|e: String| anyhow::anyhow!(e))?,
                level,
            },
        })
    }
}

impl std::fmt::Debug for Setting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.compression {
            bag::Compression::Zstd => write!(f, "zstd {}", self.level),
            other => write!(f, "{other:?}"),
        }
    }
}

struct Step {
    achieved: f64,
    dropped: u64,
    bytes_per_message: f64,
}

/// One step: a fresh subscription, queue, recorder and bag, and `rate * seconds` paced
/// messages.
fn record_step(
    publisher: &LivePublisher,
    subscriber_side: &Session,
    payloads: &[Vec<u8>],
    rate: f64,
    seconds: f64,
    setting: Setting,
) -> anyhow::Result<Step> {
    let dir = tempfile::tempdir()?;
    let queue = Arc::new(DropQueue::<LiveMessage>::new(usize::MAX, QUEUE_BYTES));
    let subscription = Subscription::start(
        subscriber_side,
        &[publisher.key().to_string()],
        Arc::clone(&queue),
    )?;
    let options = WriteOptions::new()
        .compression(setting.compression)
        .compression_level(setting.level);
    let writer = BagWriter::create(dir.path().join("bag"), options)?;
    let mut recorder = Recorder::new(writer, Arc::clone(subscription.topics()));
    wait_for(|| publisher.has_subscribers())?;

    let count = (rate * seconds) as u64;
    let deadline = Instant::now() + Duration::from_secs_f64(seconds * 10.0 + 30.0);
    let (achieved, recorder) = std::thread::scope(|s| -> anyhow::Result<_> {
        let recording = std::thread::Builder::new()
            .name("recorder".into())
            .spawn_scoped(s, || -> anyhow::Result<Recorder> {
                while recorder.stats().messages + queue.dropped() < count {
                    anyhow::ensure!(Instant::now() < deadline, "the recorder stalled");
                    recorder.pump(&queue, Duration::from_millis(100))?;
                }
                Ok(recorder)
            })?;
        let achieved = publish_paced(publisher, payloads, rate, count)?;
        let recorder = recording
            .join()
            .map_err(|_| anyhow::anyhow!("the recorder panicked"))??;
        Ok((achieved, recorder))
    })?;
    drop(subscription);
    let dropped = queue.dropped();
    let summary = recorder.finish(&[])?;
    let mut bytes = 0;
    for entry in std::fs::read_dir(&summary.dir)? {
        bytes += entry?.metadata()?.len();
    }
    Ok(Step {
        achieved,
        dropped,
        bytes_per_message: bytes as f64 / summary.message_count.max(1) as f64,
    })
}

fn main() -> anyhow::Result<()> {
    let sweeps: usize = std::env::args().nth(1).map_or(Ok(3), |a| a.parse())?;
    let kind = std::env::args().nth(2);
    let seconds: f64 = std::env::args().nth(3).map_or(Ok(45.0), |a| a.parse())?;
    let settings: Vec<Setting> = match std::env::args().nth(4) {
        None => vec![Setting::parse("zstd")?],
        Some(list) => list
            .split(',')
            .map(Setting::parse)
            .collect::<Result<_, _>>()?,
    };
    let payloads = support::payloads(kind.as_deref())?;
    let (publisher_side, subscriber_side) = support::loopback_sessions()?;

    let (received, _bare_sub) = support::counting_subscriber(&subscriber_side, "bench/bare")?;
    let bare = LivePublisher::with_encoding(&publisher_side, "bench/bare", "zenoh/bytes")?;
    let rec = LivePublisher::with_encoding(&publisher_side, "bench/rec", "zenoh/bytes")?;
    wait_for(|| bare.has_subscribers())?;
    // Warm up both paths.
    bare_rate(&bare, &received, &payloads, 0.5)?;
    record_step(&rec, &subscriber_side, &payloads, 1e5, 0.5, settings[0])?;

    let size = payloads.first().map_or(0, Vec::len);
    println!(
        "{sweeps} sweeps of {seconds} s steps, {size} B ({}), compression {settings:?}, \
         {} MiB queue",
        kind.as_deref().unwrap_or("waves"),
        QUEUE_BYTES >> 20
    );
    // Per setting, the highest zero-drop ratio of each sweep, and the ratios of the steps
    // whose pace the publisher could not keep although nothing dropped.
    let mut results = vec![Vec::new(); settings.len()];
    let mut saturated = vec![Vec::new(); settings.len()];
    for sweep in 1..=sweeps {
        println!("sweep {sweep}:");
        let mut best = vec![0.0; settings.len()];
        // Per setting, the shares known to pass and to drop.
        let mut bounds = vec![(0.0, 1.0); settings.len()];
        let mut share = vec![FIRST_SHARE; settings.len()];
        for step_index in 0..STEPS {
            // The link's rate just before, so both see the same load.
            let link = bare_rate(&bare, &received, &payloads, seconds)?;
            println!("  bare subscriber receives {link:.0} msg/s; recorder paced at:");
            // Each step starts with another setting, so that none always runs right after the
            // bare subscriber, or on the pages the previous step's bag gave back.
            for i in (0..settings.len()).map(|k| (k + step_index) % settings.len()) {
                let setting = settings[i];
                let step = record_step(
                    &rec,
                    &subscriber_side,
                    &payloads,
                    share[i] * link,
                    seconds,
                    setting,
                )?;
                let ratio = step.achieved / link;
                println!(
                    "    {:.1}% with {setting:?}: achieved {ratio:.3} of bare, dropped {}, \
                     {:.0} B/msg on disk",
                    share[i] * 100.0,
                    step.dropped,
                    step.bytes_per_message
                );
                if step.dropped > 0 {
                    bounds[i].1 = share[i];
                } else {
                    bounds[i].0 = share[i];
                    best[i] = f64::max(best[i], ratio);
                    if ratio < share[i] * SATURATED {
                        saturated[i].push(ratio);
                    }
                }
                share[i] = (bounds[i].0 + bounds[i].1) / 2.0;
            }
        }
        for (ratios, best) in results.iter_mut().zip(best) {
            ratios.push(best);
        }
    }
    println!("zero-drop record rate / bare rate:");
    for ((setting, ratios), held_back) in settings.iter().zip(results).zip(saturated) {
        println!(
            "  {setting:?}: highest {:.3} (median of the sweeps {ratios:.3?}); {} in the {} \
             steps where the publisher fell behind its pace without a drop",
            median(ratios.clone()),
            if held_back.is_empty() {
                "none".to_string()
            } else {
                format!("median {:.3}", median(held_back.clone()))
            },
            held_back.len()
        );
    }
    Ok(())
}
