//! Live capture: zenoh samples, kept raw in a [`CaptureStore`] and decoded as they arrive into
//! the same columns the plots read. All of it runs on one worker thread (`worker`); the UI
//! only drains [`LiveEvent`]s and reads [`LiveStats`].
//!
//! [`CaptureStore`]: capture::CaptureStore

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, unbounded};

use crate::data::source::TopicInfo;
use crate::data::topic_data::Batch;
use crate::error::Error;

pub mod capture;
pub mod options;
pub mod save;
pub mod shared;
pub mod spill;
mod worker;

pub use options::LiveOptions;
pub use shared::{LiveShared, LiveStats};

/// What the capture worker reports to the UI.
#[derive(Debug)]
pub enum LiveEvent {
    /// A new topic; topics arrive in id order.
    Topic(TopicInfo),
    /// New decoded messages of topic `topic`.
    Batch {
        /// Topic id.
        topic: usize,
        /// The messages.
        batch: Batch,
    },
    /// The capture could not start or stopped on an error.
    Failed(Error),
}

/// A running capture; dropping it stops the worker and closes the session.
pub struct LiveCapture {
    shared: Arc<LiveShared>,
    events: Receiver<LiveEvent>,
    stop: Arc<AtomicBool>,
    worker: Option<JoinHandle<()>>,
    options: LiveOptions,
}

impl std::fmt::Debug for LiveCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveCapture")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl LiveCapture {
    /// Starts capturing on a worker thread (the session is opened there, so a slow network
    /// never holds up the caller); `repaint` is called when there is something new.
    pub fn start(options: LiveOptions, repaint: Arc<dyn Fn() + Send + Sync>) -> Self {
        let shared = Arc::new(LiveShared::new(&options));
        let (tx, events) = unbounded();
        let stop = Arc::new(AtomicBool::new(false));
        let worker = {
            let (shared, stop, options) = (Arc::clone(&shared), Arc::clone(&stop), options.clone());
            let spawned = std::thread::Builder::new()
                .name("scope-live".into())
                .spawn(move || {
                    if let Err(e) = worker::run(&options, &shared, &tx, &stop, repaint.as_ref()) {
                        let _ = tx.send(LiveEvent::Failed(e));
                        repaint();
                    }
                });
            match spawned {
                Ok(handle) => Some(handle),
                Err(e) => {
                    eprintln!("scope: cannot start the capture thread: {e}");
                    None
                }
            }
        };
        LiveCapture {
            shared,
            events,
            stop,
            worker,
            options,
        }
    }

    /// The next event, if any.
    pub fn try_event(&self) -> Option<LiveEvent> {
        self.events.try_recv().ok()
    }

    /// What the UI, the inspector and Save Recording share with the worker.
    pub fn shared(&self) -> &Arc<LiveShared> {
        &self.shared
    }

    /// What was asked for.
    pub fn options(&self) -> &LiveOptions {
        &self.options
    }
}

impl Drop for LiveCapture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // The worker notices within one queue wait; joining would hold up the UI thread
        // while zenoh closes, so it is left to finish on its own.
        drop(self.worker.take());
    }
}
