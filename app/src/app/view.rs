//! What the plots show: the layout (the default one, a signal added), the playhead stepped
//! from message to message, and the visible time window zoomed around it.

use crate::app::Scope;
use crate::data::default_layout::{
    FieldStats, TopicCandidate, choose_default_layout, constant_fields_layout, in_order_of_interest,
};
use crate::data::derived::DERIVED_TOPIC;
use crate::data::layout::SignalRef;
use crate::data::log_lines::looks_like_text;
use crate::ui::side_panel::RightPanel;
use crate::ui::timeline::Step;

/// How a key changes the visible time window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Zoom {
    /// Half as wide, around the playhead.
    In,
    /// Twice as wide, around the playhead.
    Out,
    /// The whole recording.
    All,
}

impl Scope {
    /// Lays out the default plots for what is loaded (see [`choose_default_layout`]).
    pub fn apply_default_layout(&mut self) {
        let Some(rec) = &self.recording else {
            return;
        };
        let candidates: Vec<TopicCandidate> = rec
            .summary()
            .topics
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                let data = rec.data(i)?;
                Some(TopicCandidate {
                    topic: t.topic.clone(),
                    message_count: data.times_ns.len() as u64,
                    text_like: looks_like_text(t),
                    fields: FieldStats::of_topic(data),
                })
            })
            .collect();
        let topics = in_order_of_interest(candidates);
        let mut layout = choose_default_layout(&topics);
        if layout.plots.is_empty() {
            // Nothing numeric varies: a recording of text is read in the log view; anything
            // else shows its constants rather than an empty plot area.
            if rec.summary().topics.iter().any(looks_like_text) {
                self.right = RightPanel::Log;
            } else {
                layout = constant_fields_layout(&topics);
            }
        }
        // The derived signals the user defined stay defined.
        layout.derived = std::mem::take(&mut self.persisted.layout.derived);
        self.persisted.layout = layout;
        self.focused_plot = None;
        self.reset_view = true;
    }

    /// Once a recording is loaded (a live capture: once a few topics have data): keeps what
    /// of the layout applies to it, and chooses the default layout when nothing does and the
    /// layout was not empty by the user's choice (it held plots for another recording, or a
    /// default layout was asked for: `scope PATH`, the demos, a screenshot).
    pub(super) fn settle_layout(&mut self) {
        let Some(rec) = &self.recording else {
            return;
        };
        let had_plots = !self.persisted.layout.plots.is_empty();
        let derived = self.persisted.layout.derived.clone();
        // A derived signal is kept while it is defined and this recording has what it reads
        // (one that does not parse is kept: its legend says why).
        let present = |s: &SignalRef| {
            if s.topic == DERIVED_TOPIC {
                return derived
                    .iter()
                    .find(|d| d.name == s.path)
                    .is_some_and(|d| rec.has_inputs_of(d, &derived));
            }
            rec.signal_data(s)
                .is_some_and(|(_, d)| d.field(&s.path).is_some())
        };
        // Each once, in layout order (a signal may be in several plots).
        let mut missing: Vec<String> = Vec::new();
        for label in self
            .persisted
            .layout
            .signals()
            .filter(|s| !present(s))
            .map(SignalRef::label)
        {
            if !missing.contains(&label) {
                missing.push(label);
            }
        }
        self.persisted.layout.retain_present(present);
        if self.persisted.layout.plots.is_empty() && (had_plots || self.default_layout) {
            self.apply_default_layout();
        }
        self.default_layout = false;
        self.layout_settled = true;
        if self.focused_plot >= Some(self.persisted.layout.plots.len()) {
            self.focused_plot = None;
        }
        self.reset_view = true;
        self.settle_layout_file(missing);
    }

    /// Part of `logic`: a recording just opened shows its whole time range, whatever the
    /// plots showed before (their windows live in egui's memory, by plot id). Waits for a
    /// frame with plots, since only a drawn plot takes a new window.
    pub(super) fn reset_view_once_plotted(&mut self) {
        if !self.reset_view || self.persisted.layout.plots.is_empty() || self.is_live() {
            return;
        }
        let Some(rec) = &self.recording else {
            return;
        };
        let span_s = (rec.t1_ns().saturating_sub(rec.t0_ns())) as f64 / 1e9;
        self.view.pending_x_range_s = Some((0.0, span_s.max(1e-3)));
        self.reset_view = false;
    }

    /// The time window the plots showed in the last frame, s since the recording's start.
    pub fn visible_range_s(&self) -> Option<(f64, f64)> {
        self.view.x_range_s
    }

    /// Adds a signal to the focused plot, or to a new plot when none is focused; the new
    /// plot is focused then, so the next click adds beside it.
    pub fn add_signal(&mut self, signal: SignalRef) {
        self.persisted.layout.add(self.focused_plot, signal);
        if self.focused_plot.is_none() {
            self.focused_plot = self.persisted.layout.plots.len().checked_sub(1);
        }
    }

    /// Moves the playhead to the next or previous message of the plotted topics (all topics
    /// when nothing is plotted).
    pub fn step(&mut self, step: Step) {
        let Some(rec) = &self.recording else {
            return;
        };
        let mut topics: Vec<usize> = self
            .persisted
            .layout
            .signals()
            .filter_map(|s| rec.topic_index(&s.topic))
            .collect();
        if topics.is_empty() {
            topics = (0..rec.topics.len()).collect();
        }
        let t = self.playback.playhead_ns;
        let mut best: Option<u64> = None;
        for i in topics {
            let Some(data) = rec.data(i) else {
                continue;
            };
            let candidate = match step {
                Step::Forward => {
                    let k = data.times_ns.partition_point(|&x| x <= t);
                    data.times_ns.get(k).copied()
                }
                Step::Back => {
                    let k = data.times_ns.partition_point(|&x| x < t);
                    k.checked_sub(1).and_then(|k| data.times_ns.get(k).copied())
                }
            };
            if let Some(c) = candidate {
                best = Some(match (best, step) {
                    (None, _) => c,
                    (Some(b), Step::Forward) => b.min(c),
                    (Some(b), Step::Back) => b.max(c),
                });
            }
        }
        if let Some(b) = best {
            self.playback.playhead_ns = b;
        }
    }

    /// Changes the visible time window (taking effect in the next plot pass).
    pub(super) fn zoom(&mut self, zoom: Zoom) {
        let Some(rec) = &self.recording else {
            return;
        };
        let full = (0.0, (rec.t1_ns().saturating_sub(rec.t0_ns())) as f64 / 1e9);
        let (a, b) = self.view.x_range_s.unwrap_or(full);
        let center = (self.playback.playhead_ns as f64 - rec.t0_ns() as f64) / 1e9;
        self.view.pending_x_range_s = Some(match zoom {
            Zoom::In => {
                let half = (b - a) / 4.0;
                (center - half, center + half)
            }
            Zoom::Out => {
                let half = b - a;
                (center - half, center + half)
            }
            Zoom::All => full,
        });
    }
}
