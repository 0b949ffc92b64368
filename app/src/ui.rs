//! The UI: panels, each a `_ui` function that draws from the app's state and returns what the
//! user asked for as [`action::Action`]s (or, for state only the panel owns, such as a filter
//! text or the timeline's speed, changes it in place). The topic tree, the plots, the
//! timeline, the health panel, the inspector, the cursors' readings, the menu bar, the live status bar, the connect
//! dialog, the derived-signal editor, the error bar; the colours they share ([`theme`]) and how values and times are
//! written ([`format`](mod@format)).
//!
//! Panels read the data layer and the live capture; nothing here starts work or waits on it.

pub mod action;
pub mod connect_dialog;
pub mod cursors;
pub mod derived_dialog;
pub mod error_bar;
pub mod format;
pub mod health;
pub mod help;
pub mod input;
pub mod inspector;
pub mod log_view;
pub mod menu;
pub mod path_entry;
pub mod plots;
pub mod side_panel;
pub mod status_bar;
pub mod theme;
pub mod time_axis;
pub mod timeline;
pub mod tree;
pub mod welcome;
pub mod xy_plot;
