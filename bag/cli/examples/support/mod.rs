//! What the record-rate examples share: the loopback sessions, the payloads and the medians,
//! and `bag`'s allocator, so that both sides are measured as `bag record` runs.

use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bag::live::SessionOptions;
use zenoh::pubsub::Subscriber;
use zenoh::{Session, Wait};

/// mimalloc, as in `bag` (see bag/cli/src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Messages per payload set; longer runs cycle through them.
pub const PAYLOADS: u64 = 50_000;
const PAYLOAD: usize = 200;

/// A publishing and a subscribing session, joined by TCP on loopback.
pub fn loopback_sessions() -> anyhow::Result<(Session, Session)> {
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let publisher_side = SessionOptions::listening(&endpoint).open()?;
    let subscriber_side = SessionOptions::connecting(&endpoint).open()?;
    Ok((publisher_side, subscriber_side))
}

/// The baseline: a subscriber on `key` whose callback only counts. Keep the subscriber.
pub fn counting_subscriber(
    session: &Session,
    key: &str,
) -> anyhow::Result<(Arc<AtomicU64>, Subscriber<()>)> {
    let received = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&received);
    let subscriber = session
        .declare_subscriber(key.to_string())
        .callback(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        })
        .wait()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((received, subscriber))
}

/// The payloads of `kind` (`None` means `waves`):
/// - `waves`: 200 bytes, 25 f64 fields each a slow wave of its own, different in every
///   message; their mantissas look random, so zstd saves only about 13%, the hard case;
/// - `imu`: the simulator's Cap'n Proto `Imu` messages (168 bytes), which zstd shrinks about
///   3.3 times, like the demo recording;
/// - `constant`: 200 equal bytes, which compress to almost nothing.
pub fn payloads(kind: Option<&str>) -> anyhow::Result<Vec<Vec<u8>>> {
    Ok(match kind {
        None | Some("waves") => (0..PAYLOADS).map(waves).collect(),
        Some("imu") => (0..PAYLOADS)
            .map(|i| schemas::sample::encode("Imu", i as f64 / 200.0, i))
            .collect::<Result<_, _>>()?,
        Some("constant") => vec![vec![0x5a; PAYLOAD]; PAYLOADS as usize],
        Some(other) => anyhow::bail!("payload {other:?}: expected waves, imu or constant"),
    })
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

/// Spins until `done`, failing after two minutes.
pub fn wait_for(mut done: impl FnMut() -> bool) -> anyhow::Result<()> {
    let start = Instant::now();
    while !done() {
        anyhow::ensure!(start.elapsed() < Duration::from_secs(120), "stalled");
        std::hint::spin_loop();
    }
    Ok(())
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}
