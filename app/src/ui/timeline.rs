//! The timeline: a bar spanning the recording with the playhead, parts drawn by state (torn
//! parts hatched, gaps between parts dark), silences inside topics as red ticks, play/pause,
//! speed and step.

use egui::{Rect, Sense, Stroke, pos2, vec2};

use crate::recording::Recording;
use crate::ui::format::{format_relative, format_utc};
use crate::ui::theme;

/// Playback state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Playback {
    /// Where the playhead is, ns since the epoch.
    pub playhead_ns: u64,
    /// Playing or paused.
    pub playing: bool,
    /// Playback speed, 0.1 to 10.
    pub speed: f64,
}

impl Default for Playback {
    fn default() -> Self {
        Self {
            playhead_ns: 0,
            playing: false,
            speed: 1.0,
        }
    }
}

/// What the user asked the timeline for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// To the previous message of a plotted topic.
    Back,
    /// To the next message of a plotted topic.
    Forward,
}

/// Gaps between parts longer than this are drawn.
const GAP_NS: u64 = 1_000_000_000;

/// The timeline bar and its controls. Returns a step request, which the caller resolves
/// against the plotted topics.
pub fn timeline_ui(
    ui: &mut egui::Ui,
    recording: &Recording,
    playback: &mut Playback,
) -> Option<Step> {
    let (t0, t1) = (recording.t0_ns(), recording.t1_ns());
    let mut step = None;
    // Wrapped: in a narrow window the clock goes to a second row rather than past the edge.
    ui.horizontal_wrapped(|ui| {
        if ui
            .button("|< Step back")
            .on_hover_text("Previous message (left arrow)")
            .clicked()
        {
            step = Some(Step::Back);
        }
        // A live capture plays by itself: the plots follow the newest data (the status bar's
        // Follow), so Play would do nothing there.
        let live = recording.capture().is_some();
        let play_label = if playback.playing && !live {
            "Pause"
        } else {
            "Play"
        };
        if ui
            .add_enabled(!live, egui::Button::new(play_label))
            .on_hover_text("Play or pause (space)")
            .on_disabled_hover_text(
                "Live capture: the plots follow the newest data; pause or resume that with Follow in the status bar.",
            )
            .clicked()
        {
            playback.playing = !playback.playing;
        }
        if ui
            .button("Step forward >|")
            .on_hover_text("Next message (right arrow)")
            .clicked()
        {
            step = Some(Step::Forward);
        }
        ui.add(
            egui::Slider::new(&mut playback.speed, 0.1..=10.0)
                .logarithmic(true)
                .text("Speed")
                .suffix("x"),
        );
        ui.separator();
        if recording.has_time() {
            ui.monospace(format!("t = {}", format_relative(playback.playhead_ns, t0)));
            ui.separator();
            // Whole on one row (the row wraps before it, never inside it).
            ui.add(
                egui::Label::new(egui::RichText::new(format_utc(playback.playhead_ns)).monospace())
                    .wrap_mode(egui::TextWrapMode::Extend),
            );
        } else {
            // No message, so no time: not 0 s at 1970-01-01.
            ui.monospace("t = -");
        }
    });
    let height = 26.0;
    let (rect, response) =
        ui.allocate_exact_size(vec2(ui.available_width(), height), Sense::click_and_drag());
    let response = response.on_hover_text("Drag to scrub");
    response
        .widget_info(|| egui::WidgetInfo::labeled(egui::accesskit::Role::Slider, true, "Timeline"));
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 3.0, ui.visuals().extreme_bg_color);
    let span = t1.saturating_sub(t0).max(1) as f32;
    let x_of = |t: u64| rect.left() + rect.width() * (t.saturating_sub(t0) as f32 / span).min(1.0);
    let mut parts: Vec<(u64, u64, &str)> = recording
        .summary()
        .health
        .parts
        .iter()
        .filter_map(|p| p.time_range_ns.map(|(a, b)| (a, b, p.state)))
        .collect();
    parts.sort_by_key(|p| p.0);
    for &(a, b, state) in &parts {
        let r = Rect::from_min_max(
            pos2(x_of(a), rect.top() + 4.0),
            pos2(x_of(b).max(x_of(a) + 1.0), rect.bottom() - 4.0),
        );
        let color = if state == "torn" {
            theme::TORN_PART
        } else {
            theme::PART
        };
        painter.rect_filled(r, 2.0, color);
        if state == "torn" {
            // Hatch the torn part so it reads without colour.
            let mut x = r.left();
            while x < r.right() {
                painter.line_segment(
                    [pos2(x, r.bottom()), pos2((x + 8.0).min(r.right()), r.top())],
                    Stroke::new(1.0, theme::TORN_HATCH),
                );
                x += 6.0;
            }
        }
    }
    for pair in parts.windows(2) {
        if let [(_, end, _), (start, _, _)] = pair
            && start.saturating_sub(*end) > GAP_NS
        {
            let r = Rect::from_min_max(
                pos2(x_of(*end), rect.top()),
                pos2(x_of(*start), rect.bottom()),
            );
            painter.rect_filled(r, 0.0, theme::PART_GAP);
        }
    }
    // Silences inside topics: red ticks along the bottom edge, at least a pixel wide.
    let topic_gaps = (0..recording.summary().topics.len())
        .filter_map(|i| recording.data(i))
        .flat_map(|d| d.gaps.iter());
    let mut gap_count = 0usize;
    for gap in topic_gaps {
        gap_count += 1;
        let left = x_of(gap.from_ns);
        let r = Rect::from_min_max(
            pos2(left, rect.bottom() - 5.0),
            pos2(x_of(gap.to_ns).max(left + 2.0), rect.bottom()),
        );
        painter.rect_filled(r, 0.0, theme::SILENCE);
    }
    let px = x_of(playback.playhead_ns);
    painter.line_segment(
        [pos2(px, rect.top()), pos2(px, rect.bottom())],
        Stroke::new(2.0, theme::PLAYHEAD),
    );
    if (response.dragged() || response.clicked())
        && let Some(pos) = response.interact_pointer_pos()
    {
        let f = ((pos.x - rect.left()) / rect.width()).clamp(0.0, 1.0);
        playback.playhead_ns = t0 + (f64::from(f) * t1.saturating_sub(t0) as f64) as u64;
    }
    let torn = recording
        .summary()
        .health
        .parts
        .iter()
        .any(|p| p.state == "torn");
    if torn {
        ui.small("Hatched: a torn part (the writer stopped; every message that reached the disk is shown). Dark red: a gap between parts.");
    }
    if gap_count > 0 {
        ui.small("Red ticks under the bar: a topic fell silent (see Health).");
    }
    step
}

/// Advances the playhead while playing; stops at the end.
pub fn advance(playback: &mut Playback, dt_secs: f64, t1_ns: u64) {
    if !playback.playing {
        return;
    }
    let delta = (dt_secs * playback.speed * 1e9).max(0.0) as u64;
    playback.playhead_ns = playback.playhead_ns.saturating_add(delta);
    if playback.playhead_ns >= t1_ns {
        playback.playhead_ns = t1_ns;
        playback.playing = false;
    }
}
