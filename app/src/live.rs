//! Live capture: zenoh samples, kept raw in a [`CaptureStore`] and decoded as they arrive into
//! the same columns the plots read. All of it runs on one worker thread (`worker`); the app
//! takes the [`LiveEvent`]s in `Scope::logic` (which eframe runs even while the window is
//! hidden), appends the columns they carry, and reads [`LiveStats`]. The events go through a
//! bounded channel, and the worker never queues more decoded messages than the ring holds, so
//! an app that falls behind costs no more memory than the capture's cap allows.
//!
//! [`CaptureStore`]: capture::CaptureStore

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, bounded};

use crate::data::column_builder::Columns;
use crate::data::source::TopicInfo;
use crate::data::topic_data::Latency;
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
    /// Topic `topic`'s messages decoded since its last piece, to append to its columns.
    Columns {
        /// Topic id.
        topic: usize,
        /// The messages, as columns.
        columns: Columns,
        /// Latency over the topic's recent messages.
        latency: Option<Latency>,
        /// Messages decoded before these that the ring evicted before they could be sent
        /// (received, so counted, but no longer held).
        skipped: u64,
    },
    /// The capture could not start or stopped on an error.
    Failed(Error),
}

/// A running capture; dropping it stops the worker and closes the session.
pub struct LiveCapture {
    shared: Arc<LiveShared>,
    events: Receiver<LiveEvent>,
    /// Decoded messages in `events` (the worker adds what it sends, [`LiveCapture::try_event`]
    /// subtracts what it takes).
    queued: Arc<AtomicU64>,
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
        let (tx, events) = bounded(worker::EVENTS_CAP);
        let queued = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let worker = {
            let (shared, stop, options) = (Arc::clone(&shared), Arc::clone(&stop), options.clone());
            let queued = Arc::clone(&queued);
            let spawned = std::thread::Builder::new()
                .name("scope-live".into())
                .spawn(move || {
                    let mut outbox = worker::Outbox {
                        tx: &tx,
                        queued: &queued,
                        waiting: VecDeque::new(),
                    };
                    let result =
                        worker::run(&options, &shared, &mut outbox, &stop, repaint.as_ref());
                    if let Err(e) = result {
                        // Nobody to tell when the capture was dropped meanwhile.
                        tx.send(LiveEvent::Failed(e)).ok();
                        repaint();
                    }
                });
            match spawned {
                Ok(handle) => Some(handle),
                Err(source) => {
                    let error = Error::Thread {
                        name: "scope-live",
                        source,
                    };
                    eprintln!("scope: {}", error.report());
                    None
                }
            }
        };
        LiveCapture {
            shared,
            events,
            queued,
            stop,
            worker,
            options,
        }
    }

    /// The next event, if any.
    pub fn try_event(&self) -> Option<LiveEvent> {
        let event = self.events.try_recv().ok()?;
        if let LiveEvent::Columns { columns, .. } = &event {
            self.queued
                .fetch_sub(columns.len() as u64, Ordering::Relaxed);
        }
        Some(event)
    }

    /// Decoded messages the worker has sent and the app not yet taken. The worker keeps this
    /// within what the ring holds (plus one piece), however long the app takes nothing.
    pub fn queued_messages(&self) -> u64 {
        self.queued.load(Ordering::Relaxed)
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
