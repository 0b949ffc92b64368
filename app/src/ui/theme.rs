//! The app's named colours. Every colour a panel paints comes from here, named for what it
//! means, so one meaning has one colour everywhere: the playhead in the plots and on the
//! timeline, a torn part on the timeline and in the tree, an error in the error bar and the
//! inspector.

use egui::Color32;

/// Line colours, cycled per signal within a plot.
pub const PALETTE: [Color32; 8] = [
    Color32::from_rgb(0x4e, 0x9a, 0xf1),
    Color32::from_rgb(0xf1, 0x8f, 0x3b),
    Color32::from_rgb(0x59, 0xc2, 0x6b),
    Color32::from_rgb(0xe1, 0x57, 0x59),
    Color32::from_rgb(0xb0, 0x7a, 0xe1),
    Color32::from_rgb(0xed, 0xc9, 0x48),
    Color32::from_rgb(0x76, 0xb7, 0xb2),
    Color32::from_rgb(0xff, 0x9d, 0xa7),
];

/// The colour of the `index`th signal of a plot.
pub fn signal_color(index: usize) -> Color32 {
    PALETTE
        .get(index % PALETTE.len())
        .copied()
        .unwrap_or(Color32::GRAY)
}

/// The playhead, in the plots and on the timeline.
pub const PLAYHEAD: Color32 = Color32::from_rgb(0xff, 0x40, 0x40);

/// The error bar's message.
pub const ERROR: Color32 = Color32::from_rgb(0xf0, 0x60, 0x60);

/// A message that did not decode: the tree's badge, the inspector's text.
pub const DECODE_ERROR: Color32 = Color32::from_rgb(0xf0, 0x80, 0x80);

/// Something that makes a recording less trustworthy: drops, damaged parts, silences, read
/// problems (health panel); a torn topic (tree badge).
pub const WARNING: Color32 = Color32::from_rgb(0xf0, 0xa0, 0x40);

/// The tree's badge of a topic with gaps.
pub const GAP_BADGE: Color32 = Color32::from_rgb(0xf0, 0x90, 0x90);

/// The tree's badge of a topic advertised but never published.
pub const NEVER_PUBLISHED_BADGE: Color32 = Color32::from_rgb(0xc0, 0xc0, 0xf0);

/// The tree's badge of a topic without messages.
pub const EMPTY_BADGE: Color32 = Color32::LIGHT_GRAY;

/// Text on a badge.
pub const BADGE_TEXT: Color32 = Color32::BLACK;

/// A complete part on the timeline.
pub const PART: Color32 = Color32::from_rgb(0x3a, 0x5a, 0x80);

/// A torn part on the timeline.
pub const TORN_PART: Color32 = Color32::from_rgb(0xc0, 0x70, 0x20);

/// The hatching over a torn part, so it reads without colour.
pub const TORN_HATCH: Color32 = Color32::from_rgb(0x60, 0x30, 0x00);

/// A stretch between parts with no part covering it.
pub const PART_GAP: Color32 = Color32::from_rgb(0x80, 0x20, 0x20);

/// The ticks under the timeline where a topic fell silent.
pub const SILENCE: Color32 = Color32::from_rgb(0xff, 0x50, 0x50);

/// The status bar's dot: connected with peers (or in-process).
pub const LINK_UP: Color32 = Color32::from_rgb(0x59, 0xc2, 0x6b);

/// The status bar's dot: connecting, or no peer yet.
pub const LINK_WAITING: Color32 = Color32::from_rgb(0xe0, 0xa0, 0x30);

/// Cursor A's line and label.
pub const CURSOR_A: Color32 = Color32::from_rgb(0x40, 0xd0, 0xe0);

/// Cursor B's line and label.
pub const CURSOR_B: Color32 = Color32::from_rgb(0xe0, 0x80, 0xf0);

/// The shade between the cursors (the range the statistics are of).
pub const CURSOR_RANGE: Color32 = Color32::from_rgba_premultiplied(0x18, 0x20, 0x28, 0x30);
