//! The simulated vehicle: our schemas published at realistic rates, with the flaws a real
//! network has (a topic advertised but never published, a publisher without timestamps). It
//! drives the scope's demo and `bag sim`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use zenoh::Session;
use zenoh::liveliness::LivelinessToken;

use super::{LiveError, LivePublisher, advertise};

/// A simulated topic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimTopic {
    /// Zenoh key.
    pub topic: &'static str,
    /// Registry schema name.
    pub schema: &'static str,
    /// Messages per second.
    pub rate_hz: f64,
    /// False for the one publisher that sends no timestamps.
    pub stamped: bool,
}

/// What the simulator publishes.
pub const TOPICS: &[SimTopic] = &[
    SimTopic::stamped("car/imu", "Imu", 200.0),
    SimTopic::stamped("car/wheels", "WheelSpeeds", 100.0),
    SimTopic::stamped("car/engine", "EngineRpm", 50.0),
    SimTopic::stamped("car/driver", "DriverInputs", 50.0),
    SimTopic::stamped("car/gnss", "GnssFix", 10.0),
    SimTopic {
        topic: "car/battery",
        schema: "Battery",
        rate_hz: 2.0,
        stamped: false,
    },
    SimTopic::stamped("car/diagnostics", "DiagnosticLog", 0.5),
];

/// A topic the simulator advertises and never publishes on (a camera that never came up).
pub const SILENT_TOPIC: (&str, &str) = ("car/camera/front", "DiagnosticLog");

impl SimTopic {
    const fn stamped(topic: &'static str, schema: &'static str, rate_hz: f64) -> Self {
        SimTopic {
            topic,
            schema,
            rate_hz,
            stamped: true,
        }
    }
}

/// A running simulator; dropping it stops it.
pub struct Simulator {
    stop: Arc<AtomicBool>,
    published: Arc<AtomicU64>,
    thread: Option<JoinHandle<Result<(), LiveError>>>,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("published", &self.published())
            .finish_non_exhaustive()
    }
}

impl Simulator {
    /// Declares the publishers and tokens on `session` and starts publishing on a thread.
    pub fn start(session: &Session) -> Result<Self, LiveError> {
        let mut publishers = Vec::new();
        for t in TOPICS {
            let publisher = LivePublisher::capnp(session, t.topic, t.schema)?;
            publishers.push(if t.stamped {
                publisher
            } else {
                publisher.without_timestamps()
            });
        }
        let silent = advertise(session, SILENT_TOPIC.1, SILENT_TOPIC.0)?;
        let stop = Arc::new(AtomicBool::new(false));
        let published = Arc::new(AtomicU64::new(0));
        let thread = {
            let (stop, published) = (Arc::clone(&stop), Arc::clone(&published));
            std::thread::Builder::new()
                .name("simulator".into())
                .spawn(move || run(&publishers, silent, &stop, &published))
                .map_err(|e| LiveError::Declare {
                    what: "simulator thread".into(),
                    reason: e.to_string(),
                })?
        };
        Ok(Simulator {
            stop,
            published,
            thread: Some(thread),
        })
    }

    /// Messages published so far.
    pub fn published(&self) -> u64 {
        self.published.load(Ordering::Relaxed)
    }

    /// Stops publishing and says whether every put went out.
    pub fn stop(mut self) -> Result<(), LiveError> {
        self.stop_thread()
    }

    fn stop_thread(&mut self) -> Result<(), LiveError> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            None => Ok(()),
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(LiveError::Declare {
                what: "simulator".into(),
                reason: "its thread panicked".into(),
            }),
        }
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        let _ = self.stop_thread();
    }
}

fn run(
    publishers: &[LivePublisher],
    _silent: LivelinessToken,
    stop: &AtomicBool,
    published: &AtomicU64,
) -> Result<(), LiveError> {
    let start = Instant::now();
    let mut seq = vec![0u64; TOPICS.len()];
    while !stop.load(Ordering::Relaxed) {
        // The topic due first: message `seq` of a topic is due at `seq / rate` seconds.
        let due = TOPICS
            .iter()
            .zip(&seq)
            .map(|(t, &n)| n as f64 / t.rate_hz)
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let Some((i, at)) = due else {
            return Ok(());
        };
        let wait = Duration::from_secs_f64(at).saturating_sub(start.elapsed());
        if !wait.is_zero() {
            std::thread::sleep(wait.min(Duration::from_millis(50)));
            continue;
        }
        let (Some(topic), Some(publisher), Some(n)) =
            (TOPICS.get(i), publishers.get(i), seq.get_mut(i))
        else {
            return Ok(());
        };
        let bytes =
            schemas::sample::encode(topic.schema, at, *n).map_err(|e| LiveError::Declare {
                what: format!("encoding {} #{n}", topic.schema),
                reason: e.to_string(),
            })?;
        publisher.put(bytes)?;
        published.fetch_add(1, Ordering::Relaxed);
        *n += 1;
    }
    Ok(())
}
