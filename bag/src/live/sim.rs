//! The simulated vehicle: our schemas published at realistic rates, with the flaws a real
//! network has (a topic advertised but never published, a publisher without timestamps). It
//! drives the scope's live demo and `bag sim`. Its topics, rates and silent topic are
//! [`schemas::vehicle`]'s, which the scope's demo recording is written from too.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use schemas::vehicle::{SILENT_TOPIC, Schedule, TOPICS};
use zenoh::Session;
use zenoh::liveliness::LivelinessToken;

use super::{LiveError, LivePublisher, advertise};

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
        let silent = advertise(session, SILENT_TOPIC.schema, SILENT_TOPIC.topic)?;
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
        self.stop_thread().ok();
    }
}

fn run(
    publishers: &[LivePublisher],
    _silent: LivelinessToken,
    stop: &AtomicBool,
    published: &AtomicU64,
) -> Result<(), LiveError> {
    let start = Instant::now();
    let mut schedule = Schedule::new();
    let mut next = schedule.next();
    while !stop.load(Ordering::Relaxed) {
        let Some(due) = next else {
            return Ok(());
        };
        let wait = Duration::from_secs_f64(due.t_secs).saturating_sub(start.elapsed());
        if !wait.is_zero() {
            std::thread::sleep(wait.min(Duration::from_millis(50)));
            continue;
        }
        let Some(publisher) = publishers.get(due.index) else {
            return Ok(());
        };
        let schema = due.topic.schema;
        let bytes = schemas::sample::encode(schema, due.t_secs, due.seq).map_err(|e| {
            LiveError::Declare {
                what: format!("encoding {schema} #{}", due.seq),
                reason: e.to_string(),
            }
        })?;
        publisher.put(bytes)?;
        published.fetch_add(1, Ordering::Relaxed);
        next = schedule.next();
    }
    Ok(())
}
