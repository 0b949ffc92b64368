//! The stack of plots: a shared, linked time axis; each signal drawn as a min/max envelope of
//! the visible window, taken from its pyramid, and handed to egui_plot borrowed.

use std::collections::HashMap;

use decode::LeafKind;
use egui::{Id, RichText, Sense};
use egui_plot::{Line, Plot, PlotPoint, PlotPoints, Points, VLine};

use crate::data::envelope::{Draw, Point, Trace, Window, trace};
use crate::data::layout::{Layout, SignalRef};
use crate::data::series;
use crate::data::topic_data::gap_threshold;
use crate::recording::{Recording, TopicState};
use crate::ui::action::Action;
use crate::ui::format::format_value;
use crate::ui::theme;

impl Point for PlotPoint {
    #[inline]
    fn new(x: f64, y: f64) -> Self {
        PlotPoint::new(x, y)
    }
}

/// What the plots need to remember between frames (not persisted).
#[derive(Debug, Default)]
pub struct PlotView {
    /// The visible time window, s since the recording's start (`None`: the whole recording).
    pub x_range_s: Option<(f64, f64)>,
    /// Set to make every plot show this window on the next frame.
    pub pending_x_range_s: Option<(f64, f64)>,
    /// Plot area width in pixels, from the last frame.
    pub width_px: usize,
    /// How each signal is drawn, where the user chose (else by its kind, [`default_draw`]).
    pub draw: HashMap<SignalRef, Draw>,
    /// What each plot's signals draw, and what it was computed for.
    cache: Vec<Vec<Trace<PlotPoint>>>,
    cache_key: Option<(u64, u64, usize, usize, u64)>,
    /// Points handed to egui_plot in the last frame (for benchmarks and tests).
    pub points_last_frame: usize,
}

impl PlotView {
    /// Forgets cached points (a new recording).
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Recomputes the visible points when the window, width, layout or data changed.
    pub fn update_points(&mut self, recording: &Recording, layout: &Layout) {
        let (t0, t1) = (recording.t0_ns(), recording.t1_ns());
        let full = (0.0, ((t1.saturating_sub(t0)) as f64 / 1e9).max(1e-3));
        let (x0, x1) = self.x_range_s.unwrap_or(full);
        let loaded = recording
            .topics
            .iter()
            .filter(|t| matches!(t, TopicState::Loaded(_)))
            .count();
        let mut layout_hash = layout.plots.len();
        for (i, s) in layout.signals().enumerate() {
            layout_hash = layout_hash
                .wrapping_mul(31)
                .wrapping_add(s.path.len() + s.topic.len() * 7 + i);
        }
        let key = (
            x0.to_bits(),
            x1.to_bits(),
            self.width_px.max(1) * 1000 + loaded,
            layout_hash.wrapping_add(self.draw_hash(layout)),
            recording.generation(),
        );
        if self.cache_key == Some(key) && self.cache.len() == layout.plots.len() {
            return;
        }
        self.cache_key = Some(key);
        self.cache.resize_with(layout.plots.len(), Vec::new);
        let Some(window) = Window::new(t0, (x0, x1), self.width_px.max(1)) else {
            self.cache.iter_mut().flatten().for_each(Trace::clear);
            return;
        };
        for (plot, lines) in layout.plots.iter().zip(self.cache.iter_mut()) {
            lines.resize_with(plot.signals.len(), Trace::default);
            for (signal, out) in plot.signals.iter().zip(lines.iter_mut()) {
                out.clear();
                let Some(data) = recording
                    .topic_index(&signal.topic)
                    .and_then(|i| recording.data(i))
                else {
                    continue;
                };
                let Some(field) = data.field(&signal.path) else {
                    continue;
                };
                let draw = self
                    .draw
                    .get(signal)
                    .copied()
                    .unwrap_or_else(|| default_draw(field.kind));
                trace(
                    &data.times_ns,
                    &data.time_levels,
                    &field.series,
                    gap_threshold(&data.times_ns),
                    &window,
                    draw,
                    out,
                );
            }
        }
    }

    /// A hash of the chosen draw modes of `layout`'s signals (they change what is drawn).
    fn draw_hash(&self, layout: &Layout) -> usize {
        layout
            .signals()
            .enumerate()
            .filter(|(_, s)| self.draw.get(s) == Some(&Draw::Step))
            .fold(17, |h, (i, _)| h.wrapping_mul(31).wrapping_add(i + 1))
    }
}

/// How a leaf is drawn unless the user chose: floats joined by lines; booleans, enums and
/// integers held until the next sample.
pub fn default_draw(kind: LeafKind) -> Draw {
    match kind {
        LeafKind::Float | LeafKind::TimeNs | LeafKind::DurationNs => Draw::Linear,
        LeafKind::Bool | LeafKind::Int | LeafKind::UInt | LeafKind::Enum | LeafKind::Which => {
            Draw::Step
        }
    }
}

/// The value of `signal` at the playhead: the last sample at or before it.
pub fn value_at(recording: &Recording, signal: &SignalRef, t_ns: u64) -> Option<f64> {
    let data = recording.data(recording.topic_index(&signal.topic)?)?;
    let i = data.index_at(t_ns)?;
    data.field(&signal.path)?.series.value(i)
}

/// What the user did in the plot stack.
#[derive(Debug, Default)]
pub struct PlotActions {
    /// A click in a plot moved the playhead here (ns).
    pub seek_ns: Option<u64>,
    /// A signal dropped onto plot `.0` (`None`: a new plot).
    pub dropped: Option<(Option<usize>, SignalRef)>,
    /// Plot `.0`'s signal `.1` is to be removed.
    pub remove_signal: Option<(usize, usize)>,
    /// Plot `.0` is to be removed.
    pub remove_plot: Option<usize>,
    /// The plot that was clicked last (where a tree click adds).
    pub focused: Option<usize>,
}

impl PlotActions {
    /// As [`Action`]s, in the order they apply: seek and focus, then changes to the layout.
    pub fn into_actions(self) -> impl Iterator<Item = Action> {
        [
            self.seek_ns.map(Action::Seek),
            self.focused.map(Action::Focus),
            self.dropped
                .map(|(plot, signal)| Action::DropSignal { plot, signal }),
            self.remove_signal
                .map(|(plot, signal)| Action::RemoveSignal { plot, signal }),
            self.remove_plot.map(Action::RemovePlot),
        ]
        .into_iter()
        .flatten()
    }
}

/// The stack of plots with their legends.
pub fn plot_stack_ui(
    ui: &mut egui::Ui,
    recording: &Recording,
    layout: &Layout,
    view: &mut PlotView,
    playhead_ns: u64,
    focused: Option<usize>,
) -> PlotActions {
    let mut actions = PlotActions::default();
    let t0 = recording.t0_ns();
    let playhead_s = (playhead_ns as f64 - t0 as f64) / 1e9;
    view.update_points(recording, layout);
    let count = layout.plots.len();
    if count == 0 {
        ui.add_space(20.0);
        ui.vertical_centered(|ui| {
            ui.label("Click a field in the topic tree, or drag it here, to plot it.");
        });
    }
    let drop_zone_h = 28.0;
    let legend_h = 22.0;
    let avail = ui.available_height() - drop_zone_h - 8.0;
    let plot_h = if count > 0 {
        (avail / count as f32 - legend_h - 6.0).max(60.0)
    } else {
        0.0
    };
    let group = Id::unique("scope-time-axis");
    let pending = view.pending_x_range_s.take();
    let mut new_range: Option<(f64, f64)> = None;
    let mut new_width: Option<usize> = None;
    let mut points_total = 0usize;
    for (pi, plot) in layout.plots.iter().enumerate() {
        let lines = view.cache.get(pi);
        ui.horizontal(|ui| {
            let marker = if focused == Some(pi) { ">" } else { " " };
            ui.label(RichText::new(format!("{marker} Plot {}", pi + 1)).strong());
            for (si, signal) in plot.signals.iter().enumerate() {
                let color = theme::signal_color(si);
                let text = match recording
                    .topic_index(&signal.topic)
                    .map(|i| recording.topics.get(i))
                {
                    None | Some(None) => format!("{} (not in this recording)", signal.label()),
                    Some(Some(TopicState::Loading)) => format!("{} (loading...)", signal.label()),
                    Some(Some(TopicState::Failed(_))) => {
                        format!("{} (decode failed)", signal.label())
                    }
                    Some(Some(TopicState::Loaded(_))) => {
                        let v = value_at(recording, signal, playhead_ns);
                        format!(
                            "{} = {}",
                            signal.label(),
                            v.map_or_else(|| "n/a".to_owned(), format_value)
                        )
                    }
                };
                let (swatch, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), Sense::hover());
                ui.painter().rect_filled(swatch, 2.0, color);
                ui.label(text);
                if ui
                    .small_button("x")
                    .on_hover_text(format!("Remove {}", signal.label()))
                    .clicked()
                {
                    actions.remove_signal = Some((pi, si));
                }
            }
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if ui
                    .small_button("Remove plot")
                    .on_hover_text("Remove this plot and its signals")
                    .clicked()
                {
                    actions.remove_plot = Some(pi);
                }
            });
        });
        let response = Plot::new(("scope-plot", pi))
            .height(plot_h)
            .link_axis(group, [true, false])
            .link_cursor(group, [true, false])
            .allow_double_click_reset(true)
            .auto_bounds([false, true])
            .default_x_bounds(
                view.x_range_s.map_or(0.0, |r| r.0),
                view.x_range_s
                    .map_or((recording.t1_ns().saturating_sub(t0)) as f64 / 1e9, |r| r.1),
            )
            .x_axis_formatter(|mark, _| format!("{:.1} s", mark.value))
            .show(ui, |plot_ui| {
                if let Some((a, b)) = pending {
                    plot_ui.set_plot_bounds_x(a..=b);
                    plot_ui.set_auto_bounds([false, true]);
                }
                for (si, signal) in plot.signals.iter().enumerate() {
                    let Some(traced) = lines.and_then(|l| l.get(si)) else {
                        continue;
                    };
                    points_total += traced.len();
                    let color = theme::signal_color(si);
                    let label = signal.label();
                    for (ri, run) in traced.lines().enumerate() {
                        plot_ui.line(
                            Line::new(label.clone(), PlotPoints::Borrowed(run))
                                .id(("scope-run", pi, si, ri))
                                .color(color)
                                .width(1.5),
                        );
                    }
                    if !traced.dots.is_empty() {
                        plot_ui.points(
                            Points::new(label, PlotPoints::Borrowed(traced.dots.as_slice()))
                                .id(("scope-dots", pi, si))
                                .color(color)
                                .radius(2.5),
                        );
                    }
                }
                plot_ui.vline(
                    VLine::new("playhead", playhead_s)
                        .color(theme::PLAYHEAD)
                        .width(1.5),
                );
            });
        if let Some(traces) = lines {
            marks_ui(ui, &response.transform, traces);
        }
        let bounds = response.transform.bounds();
        let frame = response.transform.frame();
        if pi == 0 {
            new_range = Some((bounds.min()[0], bounds.max()[0]));
            new_width = Some(frame.width().max(1.0) as usize);
        }
        let r = &response.response;
        if r.clicked()
            && let Some(pos) = r.interact_pointer_pos()
        {
            let x = response.transform.value_from_position(pos).x;
            actions.seek_ns = Some((t0 as f64 + x * 1e9).max(0.0) as u64);
            actions.focused = Some(pi);
        }
        if let Some(payload) = r.dnd_release_payload::<SignalRef>() {
            actions.dropped = Some((Some(pi), (*payload).clone()));
        }
        ui.add_space(4.0);
    }
    // A drop zone for a new plot.
    let (rect, resp) = ui.allocate_exact_size(
        egui::vec2(ui.available_width(), drop_zone_h),
        Sense::hover(),
    );
    let hovering = resp.dnd_hover_payload::<SignalRef>().is_some();
    let stroke_color = if hovering {
        ui.visuals().selection.stroke.color
    } else {
        ui.visuals().weak_text_color()
    };
    ui.painter().rect_stroke(
        rect,
        4.0,
        egui::Stroke::new(1.0, stroke_color),
        egui::StrokeKind::Inside,
    );
    ui.painter().text(
        rect.center(),
        egui::Align2::CENTER_CENTER,
        "Drop a field here for a new plot",
        egui::FontId::proportional(12.0),
        ui.visuals().weak_text_color(),
    );
    if let Some(payload) = resp.dnd_release_payload::<SignalRef>() {
        actions.dropped = Some((None, (*payload).clone()));
    }
    view.points_last_frame = points_total;
    if let Some(r) = new_range {
        let changed = view.x_range_s != Some(r) || new_width != Some(view.width_px);
        view.x_range_s = Some(r);
        if let Some(w) = new_width {
            view.width_px = w;
        }
        if changed {
            // Points were decimated for last frame's window: once more with the new one.
            ui.ctx().request_repaint();
        }
    }
    actions
}

/// Non-finite samples, as marks on the plot's edge (they have no place on its scale): `+inf`
/// a triangle on the top edge, `-inf` one on the bottom edge, NaN a ring on the bottom edge.
fn marks_ui(ui: &egui::Ui, transform: &egui_plot::PlotTransform, traces: &[Trace<PlotPoint>]) {
    let frame = *transform.frame();
    let painter = ui.painter_at(frame);
    for (si, traced) in traces.iter().enumerate() {
        let color = theme::signal_color(si);
        for mark in &traced.marks {
            let x = transform.position_from_point_x(mark.x);
            if x < frame.left() || x > frame.right() {
                continue;
            }
            let s = 5.0;
            if mark.flags & series::POS_INF != 0 {
                let top = frame.top() + 1.0;
                painter.add(egui::Shape::convex_polygon(
                    vec![
                        egui::pos2(x, top),
                        egui::pos2(x + s, top + s * 1.6),
                        egui::pos2(x - s, top + s * 1.6),
                    ],
                    color,
                    egui::Stroke::NONE,
                ));
            }
            if mark.flags & series::NEG_INF != 0 {
                let bottom = frame.bottom() - 1.0;
                painter.add(egui::Shape::convex_polygon(
                    vec![
                        egui::pos2(x, bottom),
                        egui::pos2(x - s, bottom - s * 1.6),
                        egui::pos2(x + s, bottom - s * 1.6),
                    ],
                    color,
                    egui::Stroke::NONE,
                ));
            }
            if mark.flags & series::NAN != 0 {
                painter.circle_stroke(
                    egui::pos2(x, frame.bottom() - s - 12.0),
                    s * 0.8,
                    egui::Stroke::new(1.5, color),
                );
            }
        }
    }
}

/// What a mark stands for, as its hover text says it.
pub fn mark_text(flags: u8) -> String {
    let mut what = Vec::new();
    if flags & series::POS_INF != 0 {
        what.push("+inf");
    }
    if flags & series::NEG_INF != 0 {
        what.push("-inf");
    }
    if flags & series::NAN != 0 {
        what.push("NaN");
    }
    what.join(", ")
}
