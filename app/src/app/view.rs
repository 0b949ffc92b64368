//! What the plots show: the layout (the default one, a signal added), the playhead stepped
//! from message to message, and the visible time window zoomed around it.

use decode::LeafKind;

use crate::app::Scope;
use crate::data::layout::{Layout, PlotSpec, SignalRef};
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
    /// Plots the first float fields of the first topics (outside headers).
    pub fn apply_default_layout(&mut self) {
        let Some(rec) = &self.recording else {
            return;
        };
        let mut layout = Layout::default();
        for (i, topic) in rec.summary().topics.iter().enumerate() {
            if layout.plots.len() >= 4 {
                break;
            }
            let Some(data) = rec.data(i) else {
                continue;
            };
            let signals: Vec<SignalRef> = data
                .fields
                .iter()
                .filter(|f| f.kind == LeafKind::Float && !f.path.starts_with("header"))
                .take(2)
                .map(|f| SignalRef {
                    topic: topic.topic.clone(),
                    path: f.path.clone(),
                })
                .collect();
            if !signals.is_empty() {
                layout.plots.push(PlotSpec { signals });
            }
        }
        if layout.plots.is_empty() {
            // Nothing float: take any numeric leaf.
            for (i, topic) in rec.summary().topics.iter().enumerate() {
                if let Some(f) = rec.data(i).and_then(|d| d.fields.first()) {
                    layout.add(
                        None,
                        SignalRef {
                            topic: topic.topic.clone(),
                            path: f.path.clone(),
                        },
                    );
                }
                if layout.plots.len() >= 4 {
                    break;
                }
            }
        }
        self.persisted.layout = layout;
    }

    /// Adds a signal to the focused plot (a new plot when none is focused).
    pub fn add_signal(&mut self, signal: SignalRef) {
        let target = self
            .focused_plot
            .or_else(|| self.persisted.layout.plots.len().checked_sub(1));
        self.persisted.layout.add(target, signal);
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
