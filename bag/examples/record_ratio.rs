//! The record-rate ratio of `benches/live.rs` on a noisy machine: bursts to a bare subscriber
//! and to the recorder alternate, so both see the same load, and the medians are compared.
//! `cargo run --release -p bag --features live --example record_ratio [ROUNDS] [COMPRESSION]
//! [PAYLOAD] [LEVEL]` (compression zstd, as `bag record` writes, lz4 or none; the zstd level of
//! `bag record` unless given). Payloads:
//! - `waves` (the default): 200 bytes, 25 f64 fields each a slow wave of its own, different in
//!   every message; their mantissas look random, so zstd saves only about 13%, the hard case;
//! - `imu`: the simulator's Cap'n Proto `Imu` messages (168 bytes), which zstd shrinks about
//!   3.3 times, like the demo recording;
//! - `constant`: 200 equal bytes, which compress to almost nothing.
//!
//! Each round publishes 50,000 messages of 200 bytes as fast as a blocking publisher can, once
//! to a subscriber whose callback only counts and once to our [`Subscription`] drained by a
//! [`Recorder`] at `bag record`'s settings; a recorder round that drops anything fails. A third
//! round drains the queue eagerly, waking on every message as the recorder did before it let
//! batches gather, to show what gathering is worth.

use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bag::live::{
    LiveMessage, LivePublisher, RECORD_COMPRESSION_LEVEL, Recorder, SessionOptions, Subscription,
};
use bag::{BagWriter, DropQueue, WriteOptions};
use zenoh::Wait;

const BURST: u64 = 50_000;
const PAYLOAD: usize = 200;

fn wait_for(mut done: impl FnMut() -> bool) -> anyhow::Result<()> {
    let start = Instant::now();
    while !done() {
        anyhow::ensure!(start.elapsed() < Duration::from_secs(120), "stalled");
        std::hint::spin_loop();
    }
    Ok(())
}

/// Publishes a burst on another thread while `drain` feeds `recorder` until it has written the
/// whole burst; returns how long that took.
fn publish_and_drain(
    publisher: &LivePublisher,
    payloads: &[Vec<u8>],
    recorder: &mut Recorder,
    mut drain: impl FnMut(&mut Recorder) -> anyhow::Result<()>,
) -> anyhow::Result<Duration> {
    let start = Instant::now();
    let target = recorder.stats().messages + BURST;
    std::thread::scope(|s| -> anyhow::Result<()> {
        let publishing = s.spawn(|| -> anyhow::Result<()> {
            for payload in payloads {
                publisher.put(payload.clone())?;
            }
            Ok(())
        });
        while recorder.stats().messages < target {
            drain(recorder)?;
        }
        publishing
            .join()
            .map_err(|_| anyhow::anyhow!("publisher panicked"))?
    })?;
    Ok(start.elapsed())
}

/// Message `i` of a stream of 25 f64 fields, each a slow wave of its own.
fn waves(i: u64) -> Vec<u8> {
    (0..PAYLOAD / 8)
        .flat_map(|k| {
            let x = (i as f64 * 1e-3 * (k as f64 + 1.0)).sin() * 9.81;
            x.to_le_bytes()
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() -> anyhow::Result<()> {
    let rounds: usize = std::env::args().nth(1).map_or(Ok(25), |a| a.parse())?;
    let compression: bag::Compression = std::env::args()
        .nth(2)
        .map_or(Ok(bag::Compression::Zstd), |a| a.parse())
        .map_err(|e: String| anyhow::anyhow!(e))?;
    let level: i32 = std::env::args()
        .nth(4)
        .map_or(Ok(RECORD_COMPRESSION_LEVEL), |a| a.parse())?;
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let publisher_side = SessionOptions::listening(&endpoint).open()?;
    let subscriber_side = SessionOptions::connecting(&endpoint).open()?;
    let payloads: Vec<Vec<u8>> = match std::env::args().nth(3).as_deref() {
        None | Some("waves") => (0..BURST).map(waves).collect(),
        Some("imu") => (0..BURST)
            .map(|i| schemas::sample::encode("Imu", i as f64 / 200.0, i))
            .collect::<Result<_, _>>()?,
        Some("constant") => vec![vec![0x5a; PAYLOAD]; BURST as usize],
        Some(other) => anyhow::bail!("payload {other:?}: expected waves, imu or constant"),
    };

    let count = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&count);
    let _bare_sub = subscriber_side
        .declare_subscriber("bench/bare")
        .callback(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        })
        .wait()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let bare = LivePublisher::with_encoding(&publisher_side, "bench/bare", "zenoh/bytes")?;

    let dir = tempfile::tempdir()?;
    let queue = Arc::new(DropQueue::<LiveMessage>::new(usize::MAX, 16 << 20));
    let subscription = Subscription::start(
        &subscriber_side,
        &["bench/rec".to_string()],
        Arc::clone(&queue),
    )?;
    let options = WriteOptions::new()
        .compression(compression)
        .compression_level(level);
    let writer = BagWriter::create(dir.path().join("bag"), options)?;
    let mut recorder = Recorder::new(writer, Arc::clone(subscription.topics()));
    let rec = LivePublisher::with_encoding(&publisher_side, "bench/rec", "zenoh/bytes")?;
    wait_for(|| bare.has_subscribers() && rec.has_subscribers())?;

    let (mut bare_ms, mut record_ms, mut eager_ms) = (Vec::new(), Vec::new(), Vec::new());
    let mut eager_batch = Vec::new();
    for round in 0..=rounds {
        let start = Instant::now();
        let target = count.load(Ordering::Relaxed) + BURST;
        for payload in &payloads {
            bare.put(payload.clone())?;
        }
        wait_for(|| count.load(Ordering::Relaxed) >= target)?;
        let bare_took = start.elapsed();

        let record_took = publish_and_drain(&rec, &payloads, &mut recorder, |recorder| {
            recorder.pump(&queue, Duration::from_millis(10))?;
            Ok(())
        })?;
        let eager_took = publish_and_drain(&rec, &payloads, &mut recorder, |recorder| {
            eager_batch.extend(queue.pop_timeout(Duration::from_millis(10)));
            queue.drain_into(&mut eager_batch);
            for message in eager_batch.drain(..) {
                recorder.write(&message)?;
            }
            recorder.set_dropped(queue.dropped());
            Ok(())
        })?;
        anyhow::ensure!(
            recorder.stats().dropped == 0,
            "the recorder dropped messages"
        );
        // Round 0 warms up.
        if round > 0 {
            bare_ms.push(bare_took.as_secs_f64() * 1e3);
            record_ms.push(record_took.as_secs_f64() * 1e3);
            eager_ms.push(eager_took.as_secs_f64() * 1e3);
        }
    }
    drop(subscription);
    let summary = recorder.finish(&[])?;
    let mut bag_bytes = 0;
    for entry in std::fs::read_dir(&summary.dir)? {
        bag_bytes += entry?.metadata()?.len();
    }
    let recorded_per_message = bag_bytes as f64 / summary.message_count.max(1) as f64;
    let ratios: Vec<f64> = bare_ms.iter().zip(&record_ms).map(|(b, r)| b / r).collect();
    let eager_ratios: Vec<f64> = bare_ms.iter().zip(&eager_ms).map(|(b, r)| b / r).collect();
    let (b, r, e) = (median(bare_ms), median(record_ms), median(eager_ms));
    let kind = std::env::args().nth(3).unwrap_or_else(|| "waves".into());
    let size = payloads.first().map_or(0, Vec::len);
    println!(
        "{rounds} rounds of {BURST} x {size} B ({kind}), {compression:?} chunks (level {level}), medians:"
    );
    println!("  bag on disk: {recorded_per_message:.0} bytes per message");
    println!(
        "  bare subscriber: {b:.1} ms ({:.0} msg/s)",
        BURST as f64 / b * 1e3
    );
    println!(
        "  recorder:        {r:.1} ms ({:.0} msg/s)",
        BURST as f64 / r * 1e3
    );
    println!(
        "  eager recorder:  {e:.1} ms ({:.0} msg/s)",
        BURST as f64 / e * 1e3
    );
    println!(
        "  record rate / bare rate: {:.3} (median of per-round ratios {:.3})",
        b / r,
        median(ratios)
    );
    println!(
        "  eager record rate / bare rate: {:.3} (median of per-round ratios {:.3})",
        b / e,
        median(eager_ratios)
    );
    Ok(())
}
