//! The record-rate ratio of `benches/live.rs` on a noisy machine: bursts to a bare subscriber
//! and to the recorder alternate, so both see the same load, and the medians are compared.
//! `cargo run --release -p bag-cli --example record_ratio [ROUNDS] [COMPRESSION]
//! [PAYLOAD] [LEVEL]` (compression zstd, as `bag record` writes, lz4 or none; the zstd level of
//! `bag record` unless given; payloads `waves`, the default, `imu` or `constant`, described in
//! [`support::payloads`]).
//!
//! Each round publishes 50,000 messages of 200 bytes as fast as a blocking publisher can, once
//! to a subscriber whose callback only counts and once to our [`Subscription`] drained by a
//! [`Recorder`] at `bag record`'s settings; a recorder round that drops anything fails. A third
//! round drains the queue eagerly, waking on every message as the recorder did before it let
//! batches gather, to show what gathering is worth.

mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bag::live::{LiveMessage, LivePublisher, RECORD_COMPRESSION_LEVEL, Recorder, Subscription};
use bag::{BagWriter, DropQueue, WriteOptions};

use support::{median, wait_for};

const BURST: u64 = support::PAYLOADS;

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

fn main() -> anyhow::Result<()> {
    let rounds: usize = std::env::args().nth(1).map_or(Ok(25), |a| a.parse())?;
    let compression: bag::Compression = std::env::args()
        .nth(2)
        .map_or(Ok(bag::Compression::Zstd), |a| a.parse())
        .map_err(|e: String| anyhow::anyhow!(e))?;
    let level: i32 = std::env::args()
        .nth(4)
        .map_or(Ok(RECORD_COMPRESSION_LEVEL), |a| a.parse())?;
    let (publisher_side, subscriber_side) = support::loopback_sessions()?;
    let payloads = support::payloads(std::env::args().nth(3).as_deref())?;

    let (count, _bare_sub) = support::counting_subscriber(&subscriber_side, "bench/bare")?;
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
