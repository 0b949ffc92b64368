//! Following a live capture: the playhead sits on the newest message and the plots show the
//! last [`FOLLOW_WINDOW_S`]; scrubbing, stepping, zooming or panning stops it, so the view
//! stays where the user put it.

use std::time::Duration;

use crate::app::Scope;

/// What the status bar says when a zoom or pan paused following.
pub const FOLLOW_PAUSED: &str =
    "Following paused: you zoomed or panned. Tick \"Follow\" to go back to the newest data.";

/// Seconds of newest data shown while following a live capture.
pub const FOLLOW_WINDOW_S: f64 = 10.0;

impl Scope {
    /// Part of `logic`: moves the playhead and the plots' window to the newest data while
    /// following, and keeps a live capture's frames coming.
    pub(super) fn follow_newest(&mut self, ctx: &egui::Context) {
        self.follow_range = None;
        let Some(rec) = self.recording.as_ref().filter(|r| r.capture().is_some()) else {
            return;
        };
        if self.follow {
            let t1 = rec.t1_ns();
            self.playback.playhead_ns = t1;
            let end = (t1.saturating_sub(rec.t0_ns())) as f64 / 1e9;
            let range = ((end - FOLLOW_WINDOW_S).max(0.0), end.max(1e-3));
            self.view.pending_x_range_s = Some(range);
            self.follow_range = Some(range);
        }
        ctx.request_repaint_after(Duration::from_millis(100));
    }

    /// After a frame drawn while following: stops following when the user moved the playhead
    /// or the plots' window away from the newest data.
    pub(super) fn stop_following_on_user_move(&mut self, ctx: &egui::Context) {
        let Some(rec) = &self.recording else {
            return;
        };
        // Only a frame that started out following can be moved away from the newest data.
        if !self.follow || self.follow_range.is_none() || rec.capture().is_none() {
            return;
        }
        if self.playback.playhead_ns != rec.t1_ns() {
            self.follow = false;
            return;
        }
        let (scrolled, dragged) = ctx.input(|i| {
            (
                i.smooth_scroll_delta != egui::Vec2::ZERO || i.zoom_delta() != 1.0,
                i.pointer.is_decidedly_dragging(),
            )
        });
        if let (true, Some(want), Some(got)) =
            (scrolled || dragged, self.follow_range, self.view.x_range_s)
        {
            let tolerance = (want.1 - want.0).abs() * 1e-3;
            if (want.0 - got.0).abs() > tolerance || (want.1 - got.1).abs() > tolerance {
                self.follow = false;
                self.notice = Some(FOLLOW_PAUSED.to_owned());
            }
        }
    }
}
