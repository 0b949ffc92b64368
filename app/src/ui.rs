//! The UI panels, each a `_ui` function that draws from the app's state and returns what the
//! user asked for: the topic tree, the plots, the timeline, the health panel, the inspector,
//! with the colours they share ([`theme`]) and how values and times are written ([`format`]).

pub mod format;
pub mod health;
pub mod inspector;
pub mod plots;
pub mod theme;
pub mod timeline;
pub mod tree;
