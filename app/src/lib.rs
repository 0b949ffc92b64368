//! Redline Scope: open a recording, plot any numeric field against time, scrub and play back,
//! and judge whether the recording can be trusted.
//!
//! Data flows one way, and the UI thread never reads files or decodes:
//!
//! ```text
//! path ─▶ open (worker) ─▶ RecordingSource (DataSource: topics + health at once)
//!                              └─▶ Loader (rayon across time windows, a ColumnBuilder per topic
//!                                  and window) ─▶ TopicData columns + pyramids
//!                                                  └─▶ plots, timeline, tree
//! zenoh ─▶ Subscription ─▶ LiveCapture worker ─▶ CaptureStore (raw ring, bounded by bytes)
//!                               │                        └─▶ File > Save Recording
//!                               └─▶ a ColumnBuilder per topic ─▶ column pieces (bounded channel)
//!                                       ─▶ appended to the same columns in Scope::logic
//! ```
//!
//! The app is [`Scope`]. `scope.logic(ctx)` does its background work (eframe calls it also
//! while the window is hidden) and `scope.ui(ui)` draws one frame, so it runs in eframe and in
//! an egui_kittest harness alike. The file dialog is injected ([`app::open::PickPath`]).
//!
//! Modules depend one way: [`error`] <- [`data`] (no egui) <- [`live`] <- [`recording`] <-
//! [`ui`] <- [`app`].
//!
//! ```
//! use scope::data::envelope::{Draw, Trace, Window, trace};
//! use scope::data::series::SeriesBuilder;
//! use scope::data::topic_data::time_levels;
//!
//! // A million samples over one second reduce to at most four vertices (first, min, max,
//! // last) per pixel column of an 800 px plot.
//! let times: Vec<u64> = (0..1_000_000u64).map(|i| i * 1_000).collect();
//! let mut column = SeriesBuilder::default();
//! for i in 0..1_000_000 {
//!     column.push((i % 1000) as f64);
//! }
//! let series = column.finish();
//! let window = Window::new(0, (0.0, 1.0), 800).expect("a window");
//! let mut drawn: Trace<[f64; 2]> = Trace::default();
//! trace(&times, &time_levels(&times), &series, None, &window, Draw::Linear, &mut drawn);
//! assert!(!drawn.is_empty() && drawn.len() <= 4 * 800);
//! ```

pub mod app;
pub mod cli;
pub mod data;
pub mod demo;
pub mod error;
pub mod live;
pub mod recording;
pub mod ui;

pub use app::{Scope, icon};
pub use data::source::{DataSource, RecordingSource};
pub use error::Error;
