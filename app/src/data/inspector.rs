//! The inspector's worker: reads and decodes the whole message of a chosen topic at a given
//! time, off the UI thread; the panel (`ui::inspector`) only sends requests and shows results.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crossbeam_channel::{Receiver, Sender, TrySendError, bounded};
use decode::{Plan, Value};

use crate::data::column_builder::compile_plan;
use crate::data::source::{DataSource, TimeWindow, TopicInfo};
use crate::error::Error;

/// Bytes of an undecodable message kept for the raw view (the length is always known).
pub const RAW_KEPT_MAX: usize = 4096;

/// A message's bytes as read, for the raw view of a message that does not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawBytes {
    /// The first [`RAW_KEPT_MAX`] bytes.
    pub head: Vec<u8>,
    /// The message's whole length.
    pub len: usize,
}

impl RawBytes {
    /// Keeps the head of `data`.
    pub fn of(data: &[u8]) -> Self {
        Self {
            head: data.get(..RAW_KEPT_MAX).unwrap_or(data).to_vec(),
            len: data.len(),
        }
    }
}

/// A decoded message.
#[derive(Debug, Clone)]
pub struct Inspected {
    /// Topic index.
    pub topic: usize,
    /// Its log time.
    pub log_time_ns: u64,
    /// The tree, or why there is none.
    pub value: Result<Value, Arc<Error>>,
    /// The message's bytes when it did not decode (`None` when it did, or none was read).
    pub raw: Option<RawBytes>,
}

/// The inspector's state and its worker.
pub struct Inspector {
    /// The topic shown.
    pub topic: Option<usize>,
    requests: Sender<Request>,
    results: Receiver<Inspected>,
    requested: Option<(usize, u64)>,
    /// The last message decoded.
    pub shown: Option<Inspected>,
}

impl std::fmt::Debug for Inspector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inspector")
            .field("topic", &self.topic)
            .finish()
    }
}

impl Inspector {
    /// Starts the worker for `source`. It ends when the inspector is dropped.
    pub fn start(source: Arc<dyn DataSource>, repaint: Arc<dyn Fn() + Send + Sync>) -> Self {
        let (req_tx, req_rx) = bounded::<Request>(4);
        let (res_tx, res_rx) = bounded::<Inspected>(4);
        let spawned = std::thread::Builder::new()
            .name("scope-inspector".into())
            .spawn(move || {
                let mut plans: HashMap<usize, Result<Plan, Arc<Error>>> = HashMap::new();
                let never = AtomicBool::new(false);
                while let Ok(mut req) = req_rx.recv() {
                    // Only the newest request matters.
                    while let Ok(newer) = req_rx.try_recv() {
                        req = newer;
                    }
                    let Request { topic, t_ns, info } = req;
                    let plan = plans
                        .entry(topic)
                        .or_insert_with(|| compile_plan(&info).map_err(Arc::new));
                    type Found = (u64, Result<Value, Arc<Error>>, Option<RawBytes>);
                    let mut found: Option<Found> = None;
                    let streamed =
                        source.stream(&[topic], TimeWindow::starting_at(t_ns), &never, &mut |m| {
                            let value = match plan {
                                Ok(p) => p
                                    .decode_tree(m.data)
                                    .map_err(|e| Arc::new(Error::Decode(e))),
                                Err(e) => Err(Arc::clone(e)),
                            };
                            let raw = value.is_err().then(|| RawBytes::of(m.data));
                            found = Some((m.log_time_ns, value, raw));
                            false
                        });
                    let result = match (found, streamed) {
                        (Some((t, value, raw)), _) => Inspected {
                            topic,
                            log_time_ns: t,
                            value,
                            raw,
                        },
                        (None, Err(e)) => Inspected {
                            topic,
                            log_time_ns: t_ns,
                            value: Err(Arc::new(e)),
                            raw: None,
                        },
                        (None, Ok(_)) => Inspected {
                            topic,
                            log_time_ns: t_ns,
                            value: Err(Arc::new(Error::NoMessage)),
                            raw: None,
                        },
                    };
                    if res_tx.send(result).is_err() {
                        break;
                    }
                    repaint();
                }
            });
        if let Err(source) = spawned {
            // The panel then only ever shows its spinner; the reason goes to stderr.
            let error = Error::Thread {
                name: "scope-inspector",
                source,
            };
            eprintln!("scope: {}", error.report());
        }
        Self {
            topic: None,
            requests: req_tx,
            results: res_rx,
            requested: None,
            shown: None,
        }
    }

    /// Asks for the message of the chosen topic at the playhead (exact log time `t_ns`).
    pub fn request(&mut self, topic: usize, t_ns: u64, info: &TopicInfo) {
        if self.requested == Some((topic, t_ns)) {
            return;
        }
        let request = Request {
            topic,
            t_ns,
            info: info.clone(),
        };
        match self.requests.try_send(request) {
            Ok(()) => self.requested = Some((topic, t_ns)),
            // Busy: ask again next frame.
            Err(TrySendError::Full(_)) => {}
            Err(TrySendError::Disconnected(_)) => self.requested = Some((topic, t_ns)),
        }
    }

    /// Takes in decoded messages.
    pub fn poll(&mut self) {
        while let Ok(r) = self.results.try_recv() {
            self.shown = Some(r);
        }
    }
}

/// What the UI asks the inspector thread for: the message of `topic` at `t_ns`. The topic's
/// description travels with it, since a live capture's topics appear after the thread starts.
struct Request {
    topic: usize,
    t_ns: u64,
    info: TopicInfo,
}
