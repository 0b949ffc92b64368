//! The data layer: recordings and live captures seen as [`source::DataSource`]s, their
//! messages decoded into columns ([`topic_data::TopicData`]) with min/max pyramids
//! ([`series`]), decimated for drawing ([`envelope`]), the plot layout, and the workers that
//! load ([`loader`]) and inspect ([`inspector`]) them off the UI thread.
//!
//! Nothing here draws: no egui, so every piece can be tested and benchmarked headless. The
//! live capture ([`crate::live`]) and the UI ([`crate::ui`]) sit on top of it.

pub mod column_builder;
pub mod cursors;
pub mod default_layout;
pub mod derived;
pub mod derived_jobs;
pub mod envelope;
pub mod expression;
pub mod inspector;
pub mod layout;
pub mod layout_file;
pub mod loader;
pub mod log_lines;
pub mod range_stats;
pub mod series;
pub mod signal_export;
pub mod source;
pub mod topic_data;
pub mod xy;
