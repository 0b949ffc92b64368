//! The stack of plots: a shared, linked time axis; each signal drawn as a min/max envelope of
//! the visible window, taken from its pyramid, and handed to egui_plot borrowed.

use std::collections::HashMap;

use decode::LeafKind;
use egui::{Id, RichText, Sense};
use egui_plot::{AxisHints, GridMark, Line, Plot, PlotPoint, PlotPoints, Points, VLine};

use crate::data::cursors::{Cursors, Which};
use crate::data::envelope::{Draw, Point, Trace, Window, trace};
use crate::data::layout::{Layout, SignalRef};
use crate::data::series;
use crate::data::topic_data::gap_threshold;
use crate::error::Error;
use crate::recording::{Recording, SECOND_PREFIX, TopicState};
use crate::ui::action::Action;
use crate::ui::format::{elide, format_sample, format_utc};
use crate::ui::theme;
use crate::ui::time_axis::{Clock, Labels, TICK_FONT, ticks};
use crate::ui::xy_plot::{XyAction, XyCache, xy_plot_ui};

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
    /// Each topic's gap threshold, and the length of its time column it was computed for.
    gaps: HashMap<usize, (GapKey, Option<u64>)>,
    /// What each plot's signals draw, and what it was computed for.
    cache: Vec<Vec<Trace<PlotPoint>>>,
    cache_key: Option<(u64, u64, usize, usize, u64)>,
    /// Points handed to egui_plot in the last frame (for benchmarks and tests).
    pub points_last_frame: usize,
    /// What the time axis counts.
    pub clock: Clock,
    /// Each plot's frame (the area inside its axes) in the last frame: one x mapping for all.
    pub frames: Vec<egui::Rect>,
    /// The user zoomed or panned time with the wheel in the last frame.
    pub user_moved: bool,
    /// XY plots' aligned paths.
    pub xy: XyCache,
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
                let Some((topic, data)) = recording.signal_data(signal) else {
                    continue;
                };
                let Some(field) = data.field(&signal.path) else {
                    continue;
                };
                let draw = draw_for(&self.draw, signal, field.kind);
                trace(
                    &data.times_ns,
                    &data.time_levels,
                    &field.series,
                    gap_of(&mut self.gaps, topic, &data.times_ns),
                    &window,
                    draw,
                    out,
                );
            }
        }
    }

    /// The gap threshold of topic `topic` whose time column is `times` (the plots' rule for
    /// where a line breaks), computed once per column.
    pub fn gap(&mut self, topic: usize, times: &[u64]) -> Option<u64> {
        gap_of(&mut self.gaps, topic, times)
    }

    /// How `signal`, a leaf of kind `kind`, is drawn: as the user chose, else by its kind.
    pub fn draw_of(&self, signal: &SignalRef, kind: LeafKind) -> Draw {
        draw_for(&self.draw, signal, kind)
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

/// The gap threshold of topic `topic` (the Health panel's rule), computed once per time
/// column (known by its length and ends): it samples up to 4,096 intervals, which at a
/// hundred million messages are that many cache misses, too many to pay every frame.
fn gap_of(
    cache: &mut HashMap<usize, (GapKey, Option<u64>)>,
    topic: usize,
    times: &[u64],
) -> Option<u64> {
    let key = (times.len(), times.first().copied(), times.last().copied());
    match cache.get(&topic) {
        Some(&(k, gap)) if k == key => gap,
        _ => {
            let gap = gap_threshold(times);
            cache.insert(topic, (key, gap));
            gap
        }
    }
}

/// What a cached gap threshold was computed for: a time column's length, first and last.
type GapKey = (usize, Option<u64>, Option<u64>);

/// How `signal` is drawn: as `chosen` says, else by its kind.
fn draw_for(chosen: &HashMap<SignalRef, Draw>, signal: &SignalRef, kind: LeafKind) -> Draw {
    chosen
        .get(signal)
        .copied()
        .unwrap_or_else(|| default_draw(kind))
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
    let (_, data) = recording.signal_data(signal)?;
    let i = data.index_at(t_ns)?;
    data.field(&signal.path)?.series.value(i)
}

/// The value of `signal` at the playhead as the legend writes it: 64-bit integers exact,
/// floats in their shortest round-trip digits; `None` before its first sample.
pub fn value_text_at(recording: &Recording, signal: &SignalRef, t_ns: u64) -> Option<String> {
    let (_, data) = recording.signal_data(signal)?;
    let i = data.index_at(t_ns)?;
    let field = data.field(&signal.path)?;
    format_sample(&field.series, field.kind, i)
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
    /// Shift + click or drag put a cursor here (ns).
    pub cursor: Option<(Which, u64)>,
    /// Plot `.0`'s signal `.1` becomes its x axis (an XY plot).
    pub make_xy: Option<(usize, usize)>,
    /// What XY plot `.0`'s legend asked for.
    pub xy: Option<(usize, XyAction)>,
}

impl PlotActions {
    /// As [`Action`]s, in the order they apply: seek and focus, then changes to the layout.
    pub fn into_actions(self) -> impl Iterator<Item = Action> {
        [
            self.seek_ns.map(Action::Seek),
            self.cursor.map(|(which, t)| Action::PlaceCursor(which, t)),
            self.focused.map(Action::Focus),
            self.dropped
                .map(|(plot, signal)| Action::DropSignal { plot, signal }),
            self.remove_signal
                .map(|(plot, signal)| Action::RemoveSignal { plot, signal }),
            self.remove_plot.map(Action::RemovePlot),
            self.make_xy
                .map(|(plot, signal)| Action::MakeXy { plot, signal }),
            self.xy.map(|(plot, xy)| Action::Xy { plot, xy }),
        ]
        .into_iter()
        .flatten()
    }
}

/// Width of every plot's y axis, points: one width, so all plots share one x mapping.
pub const Y_AXIS_PX: f32 = 64.0;

/// How the pointer moves the plots, as the help on the plots says it.
pub const CONTROLS: &str = "Wheel: zoom time around the pointer (Y follows what is visible)\n\
Shift + wheel: pan time\n\
Ctrl + wheel: zoom Y (Y autoscale off until a double-click)\n\
Drag: pan time · Double-click: reset · Click: move the playhead\n\
Shift + click: put a cursor there (A, then B, then the nearer one) · Shift + drag: move the nearer cursor\n\
Right-click a legend entry: draw as lines or steps; or use it as the X axis (an XY plot)";

/// A y tick label of at most eight characters, so every plot's y axis has the same width.
pub fn y_tick_text(v: f64, step: f64) -> String {
    if v.abs() < step.abs() / 2.0 || v == 0.0 {
        return "0".to_owned();
    }
    let a = v.abs();
    if (1e-3..1e6).contains(&a) {
        let d = ((-step.abs().log10()).ceil().max(0.0) as usize).min(6);
        let text = format!("{v:.d$}");
        if text.chars().count() <= 8 {
            return text;
        }
    }
    format!("{v:.1e}")
}

/// Pixels between y labels, at least: egui_plot fades a y label out below 30 px of spacing
/// and hides it below 20 (`AxisHints::label_spacing`), which would leave an axis with no
/// labels at all.
const Y_LABEL_SPACING_PX: f64 = 32.0;

/// egui_plot's least spacing of grid lines, px (its default, set here because [`y_step`]
/// depends on it).
const GRID_MIN_PX: f32 = 8.0;

/// The smallest 1, 2 or 5 times a power of ten at least `min_step` (a y grid step).
pub fn step_125(min_step: f64) -> f64 {
    if !(min_step.is_finite() && min_step > 0.0) {
        return 1.0;
    }
    let decade = 10f64.powf(min_step.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&s| s >= min_step)
        .unwrap_or(10.0 * decade)
}

/// Pixels between y labels at the least, where the spacing above leaves fewer than two
/// labels on a short plot: egui_plot draws them, a little faded.
const Y_LABEL_SPACING_TIGHT_PX: f64 = 24.0;

/// The y grid step for a plot showing `lo..hi` at `units_per_px`: labels at least
/// [`Y_LABEL_SPACING_PX`] apart (so every one of them is drawn), and at most about eight. Where
/// that leaves fewer than two labels inside the range (a short plot: -100, 0 and 100 on one
/// showing -98..98), the next smaller step, if its labels are still
/// [`Y_LABEL_SPACING_TIGHT_PX`] apart: one label says nothing of the scale.
pub fn y_step(lo: f64, hi: f64, units_per_px: f64) -> f64 {
    let step = step_125((units_per_px * Y_LABEL_SPACING_PX).max((hi - lo) / 8.0));
    let labels = |s: f64| (hi / s).floor() - (lo / s).ceil() + 1.0;
    // The 1-2-5 step below: 100 -> 50, 50 -> 20, 20 -> 10.
    let decade = 10f64.powf(step.log10().floor());
    let smaller = match (step / decade).round() as u32 {
        1 => decade * 0.5,
        2 => decade,
        _ => decade * 2.0,
    };
    if labels(step) < 2.0 && smaller / units_per_px >= Y_LABEL_SPACING_TIGHT_PX {
        smaller
    } else {
        step
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
    cursors: &Cursors,
) -> PlotActions {
    let mut actions = PlotActions::default();
    // Shift turns a click or a drag into placing a cursor (so a drag does not pan).
    let shift = ui.input(|i| i.modifiers.shift);
    let x_of = |t_ns: u64| (i128::from(t_ns) - i128::from(recording.t0_ns())) as f64 / 1e9;
    // The panel's width, taken before anything is laid out: a row wider than the panel
    // widens the panel's layout region, and the plots must not follow it.
    let width = ui.available_width();
    let t0 = recording.t0_ns();
    let playhead_s = (i128::from(playhead_ns) - i128::from(t0)) as f64 / 1e9;
    view.update_points(recording, layout);
    let count = layout.plots.len();
    if count == 0 {
        ui.add_space(20.0);
        ui.vertical_centered(|ui| {
            ui.label("Click a field in the topic tree, or drag it here, to plot it.");
        });
    } else {
        ui.horizontal_wrapped(|ui| {
            ui.set_max_width(width);
            ui.label("Time axis:");
            ui.selectable_value(&mut view.clock, Clock::Relative, Clock::Relative.name());
            ui.selectable_value(&mut view.clock, Clock::Utc, Clock::Utc.name());
            match Clock::local() {
                Some(local) => {
                    ui.selectable_value(&mut view.clock, local, local.name());
                }
                None => {
                    ui.add_enabled(false, egui::Button::new("local time"))
                        .on_disabled_hover_text(
                            "This machine's UTC offset cannot be read safely here; UTC is exact.",
                        );
                }
            }
            ui.label(RichText::new("Controls (?)").weak())
                .on_hover_text(CONTROLS);
            // A clock names the first recording's times: the second's samples are drawn
            // moved, so its clock times are not the ones it recorded.
            if view.clock != Clock::Relative
                && let Some(second) = recording.second()
            {
                let shift_s = recording.second_shift_ns() as f64 / 1e9;
                ui.label(
                    RichText::new(format!(
                        "{SECOND_PREFIX} drawn {shift_s:+.3} s from its clock"
                    ))
                    .small()
                    .color(theme::WARNING),
                )
                .on_hover_text(format!(
                    "The clock is {}'s. {}'s samples are drawn {shift_s:+.9} s from the times \
                     it recorded (its start aligned with the first's, plus the offset).",
                    recording.summary().name,
                    second.summary().name
                ));
            }
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
    let mut zoomed = false;
    view.frames.clear();
    let clock = view.clock;
    let axis_width = view.width_px.max(1) as f64;
    let span_ns = recording.t1_ns().saturating_sub(t0);
    let window_ns = view
        .x_range_s
        .map_or((t0, t0.saturating_add(span_ns)), |(a, b)| {
            let at = |s: f64| (t0 as f64 + s * 1e9).max(0.0) as u64;
            (at(a), at(b))
        });
    for (pi, plot) in layout.plots.iter().enumerate() {
        if let Some(x) = &plot.x {
            let asked = xy_plot_ui(
                ui,
                recording,
                (pi, plot, x),
                &mut view.xy,
                window_ns,
                (width, plot_h),
                playhead_ns,
                cursors,
            );
            if let Some(xy) = asked {
                actions.xy = Some((pi, xy));
            }
            ui.add_space(4.0);
            continue;
        }
        let lines = view.cache.get(pi);
        // The legend wraps, and each entry is cut to the panel, so it never widens the plot.
        ui.horizontal_wrapped(|ui| {
            ui.set_max_width(width);
            let marker = if focused == Some(pi) { ">" } else { " " };
            ui.label(RichText::new(format!("{marker} Plot {}", pi + 1)).strong());
            if ui
                .small_button("Remove plot")
                .on_hover_text("Remove this plot and its signals")
                .clicked()
            {
                actions.remove_plot = Some(pi);
            }
            let max_chars = ((width - 60.0) / 7.5).max(12.0) as usize;
            for (si, signal) in plot.signals.iter().enumerate() {
                let color = theme::signal_color(si);
                let text = match recording.signal_state(signal).map(|(_, s)| s) {
                    None => format!("{} (not in this recording)", signal.label()),
                    Some(TopicState::Loading) => format!("{} (loading...)", signal.label()),
                    Some(TopicState::Failed(e)) => match &**e {
                        Error::Derived { source, .. } => format!("{} ({source})", signal.label()),
                        _ => format!("{} (decode failed)", signal.label()),
                    },
                    Some(TopicState::Loaded(_)) => format!(
                        "{} = {}",
                        signal.label(),
                        value_text_at(recording, signal, playhead_ns)
                            .unwrap_or_else(|| "n/a".to_owned())
                    ),
                };
                let (swatch, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), Sense::hover());
                ui.painter().rect_filled(swatch, 2.0, color);
                let shown = elide(&text, max_chars);
                let label = ui.add(egui::Label::new(shown.clone()).sense(Sense::click()));
                let label = if shown == text {
                    label
                } else {
                    label.on_hover_text(&text)
                };
                label.context_menu(|ui| {
                    let kind = recording
                        .signal_data(signal)
                        .and_then(|(_, d)| d.field(&signal.path))
                        .map(|f| f.kind);
                    let current = view
                        .draw
                        .get(signal)
                        .copied()
                        .or(kind.map(default_draw))
                        .unwrap_or_default();
                    let mut chosen = current;
                    ui.radio_value(&mut chosen, Draw::Linear, "Lines (linear between samples)");
                    ui.radio_value(
                        &mut chosen,
                        Draw::Step,
                        "Steps (hold until the next sample)",
                    );
                    if chosen != current {
                        view.draw.insert(signal.clone(), chosen);
                        ui.close();
                    }
                    if plot.signals.len() >= 2 {
                        ui.separator();
                        if ui
                            .button("Use as X (XY plot)")
                            .on_hover_text("Plot the other signals of this plot against this one")
                            .clicked()
                        {
                            actions.make_xy = Some((pi, si));
                            ui.close();
                        }
                    }
                });
                if ui
                    .small_button("x")
                    .on_hover_text(format!("Remove {}", signal.label()))
                    .clicked()
                {
                    actions.remove_signal = Some((pi, si));
                }
            }
        });
        let x_axis = AxisHints::new_x()
            .formatter(move |mark, range| {
                let (x0, x1) = (*range.start(), *range.end());
                let (step, marks) = ticks(x0, x1, axis_width);
                Labels::new(clock, t0, step, &marks, x1 - x0, axis_width).label(mark.value)
            })
            .label_spacing(20.0..=24.0)
            .tick_label_font(egui::FontId::proportional(TICK_FONT));
        let y_axis = AxisHints::new_y()
            .formatter(|mark, _| y_tick_text(mark.value, mark.step_size))
            .min_thickness(Y_AXIS_PX)
            .tick_label_font(egui::FontId::proportional(TICK_FONT));
        let mut plot_widget = Plot::new(("scope-plot", pi));
        if let Some((lo, hi)) = lines.and_then(|l| flat_huge(l)) {
            plot_widget = plot_widget.include_y(lo).include_y(hi);
        }
        if lines.is_some_and(|l| near_f64_max(l)) {
            // egui_plot's 5% margin would take the y bounds past f64::MAX (to infinity): no
            // labels, and the largest values off the plot. No margin in y then.
            plot_widget = plot_widget.set_margin_fraction(egui::vec2(0.05, 0.0));
        }
        let response = plot_widget
            .width(width)
            .height(plot_h)
            .link_axis(group, [true, false])
            .link_cursor(group, [true, false])
            .allow_double_click_reset(true)
            .allow_scroll(false)
            .allow_zoom(false)
            .allow_boxed_zoom(false)
            .allow_drag([!shift, false])
            .show_x(false)
            .show_y(false)
            .auto_bounds([false, true])
            .default_x_bounds(
                view.x_range_s.map_or(0.0, |r| r.0),
                view.x_range_s
                    .map_or((recording.t1_ns().saturating_sub(t0)) as f64 / 1e9, |r| r.1),
            )
            .grid_spacing(GRID_MIN_PX..=300.0)
            .y_grid_spacer(|input| {
                let (lo, hi) = input.bounds;
                // egui_plot's base step is the data span of its minimum grid spacing.
                let step = y_step(lo, hi, input.base_step_size / f64::from(GRID_MIN_PX));
                let first = (lo / step).ceil();
                let count = ((hi / step).floor() - first + 1.0).clamp(0.0, 64.0) as usize;
                (0..count)
                    .map(|k| GridMark {
                        value: (first + k as f64) * step,
                        step_size: step,
                    })
                    .collect()
            })
            .custom_x_axes(vec![x_axis])
            .custom_y_axes(vec![y_axis])
            .x_grid_spacer(move |input| {
                let (step, marks) = ticks(input.bounds.0, input.bounds.1, axis_width);
                marks
                    .into_iter()
                    .map(|value| GridMark {
                        value,
                        step_size: step,
                    })
                    .collect()
            })
            .show(ui, |plot_ui| {
                if let Some((a, b)) = pending {
                    plot_ui.set_plot_bounds_x(a..=b);
                    plot_ui.set_auto_bounds([false, true]);
                }
                zoomed |= wheel(plot_ui);
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
                                .width(1.5)
                                // egui_plot's band mode fills between pixel columns' extents,
                                // interpolating across columns with no sample: the wedges of
                                // issue 20. The trace already holds at most a few vertices a
                                // column, so the plain polyline costs little.
                                .allow_band(false)
                                .allow_hover(false),
                        );
                    }
                    if !traced.dots.is_empty() {
                        plot_ui.points(
                            Points::new(label, PlotPoints::Borrowed(traced.dots.as_slice()))
                                .id(("scope-dots", pi, si))
                                .color(color)
                                .radius(2.5)
                                .allow_hover(false),
                        );
                    }
                }
                plot_ui.vline(
                    VLine::new("playhead", playhead_s)
                        .color(theme::PLAYHEAD)
                        .width(1.5)
                        .allow_hover(false),
                );
                for (which, color) in [(Which::A, theme::CURSOR_A), (Which::B, theme::CURSOR_B)] {
                    if let Some(t) = cursors.at(which) {
                        plot_ui.vline(
                            VLine::new(format!("cursor {}", which.name()), x_of(t))
                                .color(color)
                                .width(1.0)
                                .allow_hover(false),
                        );
                    }
                }
            });
        cursors_ui(ui, &response.transform, cursors, x_of);
        if let Some(traces) = lines {
            marks_ui(ui, &response.transform, traces);
        }
        base_ui(ui, &response.transform, clock, t0, axis_width);
        let bounds = response.transform.bounds();
        let frame = response.transform.frame();
        view.frames.push(*frame);
        if new_range.is_none() {
            new_range = Some((bounds.min()[0], bounds.max()[0]));
            new_width = Some(frame.width().max(1.0) as usize);
        }
        let r = &response.response;
        if r.hovered()
            && let Some(pos) = r.hover_pos()
        {
            let x = response.transform.value_from_position(pos).x;
            let px_s = 1.0 / response.transform.dpos_dvalue_x().abs().max(1e-300);
            let text = hover_text(recording, plot, lines, x, px_s, clock);
            r.clone().on_hover_text_at_pointer(text);
        }
        if let Some(pos) = r.interact_pointer_pos() {
            let x = response.transform.value_from_position(pos).x;
            let t_ns = (t0 as f64 + x * 1e9).max(0.0) as u64;
            if shift && (r.clicked() || r.dragged()) {
                actions.cursor = Some((cursors.for_click(t_ns), t_ns));
            } else if r.clicked() {
                actions.seek_ns = Some(t_ns);
                actions.focused = Some(pi);
            }
        }
        if let Some(payload) = r.dnd_release_payload::<SignalRef>() {
            actions.dropped = Some((Some(pi), (*payload).clone()));
        }
        ui.add_space(4.0);
    }
    view.user_moved = zoomed;
    // A drop zone for a new plot.
    let (rect, resp) = ui.allocate_exact_size(egui::vec2(width, drop_zone_h), Sense::hover());
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

/// A y range for a plot whose visible values are all one huge value (a 64-bit counter near
/// `u64::MAX`, whose `f64`s all round to 2^64): egui_plot widens a flat plot by half its
/// width in y, which at such magnitudes adds nothing, and the plot's transform then divides
/// by zero. `None` for any other plot.
fn flat_huge(traces: &[Trace<PlotPoint>]) -> Option<(f64, f64)> {
    let mut ys = traces
        .iter()
        .flat_map(|t| t.points.iter().chain(&t.dots))
        .map(|p| p.y)
        .filter(|y| y.is_finite());
    let first = ys.next()?;
    if first.abs() < 1e15 || ys.any(|y| y != first) {
        return None;
    }
    let pad = first.abs() * 1e-9;
    Some((first - pad, first + pad))
}

/// Whether a visible finite value is so large (beyond a quarter of `f64::MAX` in magnitude)
/// that widening the y range by a margin would overflow to infinity.
fn near_f64_max(traces: &[Trace<PlotPoint>]) -> bool {
    traces
        .iter()
        .flat_map(|t| t.points.iter().chain(&t.dots))
        .any(|p| p.y.is_finite() && p.y.abs() > f64::MAX / 4.0)
}

/// The range between the cursors shaded, and each cursor's letter at the top of the plot.
fn cursors_ui(
    ui: &egui::Ui,
    transform: &egui_plot::PlotTransform,
    cursors: &Cursors,
    x_of: impl Fn(u64) -> f64,
) {
    let frame = *transform.frame();
    let px = |t: u64| transform.position_from_point_x(x_of(t));
    let painter = ui.painter().with_clip_rect(frame);
    if let (Some(a), Some(b)) = (cursors.a_ns, cursors.b_ns) {
        let (l, r) = (px(a.min(b)), px(a.max(b)));
        let band = egui::Rect::from_x_y_ranges(l..=r, frame.y_range());
        painter.rect_filled(band, 0.0, theme::CURSOR_RANGE);
    }
    for (which, color) in [(Which::A, theme::CURSOR_A), (Which::B, theme::CURSOR_B)] {
        if let Some(t) = cursors.at(which) {
            painter.text(
                egui::pos2(px(t) + 3.0, frame.top() + 2.0),
                egui::Align2::LEFT_TOP,
                which.name(),
                egui::FontId::monospace(11.0),
                color,
            );
        }
    }
}

/// The mouse wheel over a plot, as PlotJuggler has it: zooms time around the pointer with Y
/// autoscaled to what is visible; with Shift it pans time; with Ctrl (or a pinch) it zooms
/// Y. Returns whether the time window moved.
fn wheel(plot_ui: &mut egui_plot::PlotUi<'_>) -> bool {
    if !plot_ui.response().hovered() {
        return false;
    }
    let (scroll, zoom, shift) = plot_ui
        .ctx()
        .input(|i| (i.smooth_scroll_delta, i.zoom_delta(), i.modifiers.shift));
    if zoom != 1.0 {
        plot_ui.zoom_bounds_around_hovered(egui::vec2(1.0, zoom));
        plot_ui.set_auto_bounds([false, false]);
        return false;
    }
    let delta = scroll.x + scroll.y;
    if delta == 0.0 {
        return false;
    }
    if shift {
        // Content follows the wheel, as a drag would move it: the window moves the other way.
        let per_point = plot_ui.transform().dvalue_dpos()[0];
        plot_ui.translate_bounds(egui::vec2((-f64::from(delta) * per_point) as f32, 0.0));
    } else {
        plot_ui.zoom_bounds_around_hovered(egui::vec2((delta * 0.004).exp(), 1.0));
    }
    plot_ui.set_auto_bounds([false, true]);
    true
}

/// The base the x tick labels count from, when they are offsets, at the axis' left end.
fn base_ui(
    ui: &egui::Ui,
    transform: &egui_plot::PlotTransform,
    clock: Clock,
    t0_ns: u64,
    width: f64,
) {
    let bounds = transform.bounds();
    let (x0, x1) = (bounds.min()[0], bounds.max()[0]);
    let (step, marks) = ticks(x0, x1, width);
    if let Some(base) = Labels::new(clock, t0_ns, step, &marks, x1 - x0, width).base_text() {
        let frame = transform.frame();
        ui.painter().text(
            frame.left_bottom() + egui::vec2(2.0, -2.0),
            egui::Align2::LEFT_BOTTOM,
            base,
            egui::FontId::proportional(TICK_FONT),
            ui.visuals().weak_text_color(),
        );
    }
}

/// Time as the hover shows it: to the nanosecond.
fn hover_time(t_ns: u64, t0_ns: u64, clock: Clock) -> String {
    let s = (i128::from(t_ns) - i128::from(t0_ns)) as f64 / 1e9;
    match clock {
        Clock::Relative => format!("{s:.9} s"),
        Clock::Utc | Clock::Local(_) => format!("{} ({s:.9} s)", format_utc(t_ns)),
    }
}

/// What the hover over a plot says: the time under the pointer, and per signal the sample
/// nearest to it (time and value) and any non-finite sample within a few pixels.
fn hover_text(
    recording: &Recording,
    plot: &crate::data::layout::PlotSpec,
    traces: Option<&Vec<Trace<PlotPoint>>>,
    x: f64,
    px_s: f64,
    clock: Clock,
) -> String {
    let t0 = recording.t0_ns();
    let t_ns = (t0 as f64 + x * 1e9).max(0.0) as u64;
    let mut text = format!("t = {}", hover_time(t_ns, t0, clock));
    for (si, signal) in plot.signals.iter().enumerate() {
        let Some((_, data)) = recording.signal_data(signal) else {
            continue;
        };
        let Some(field) = data.field(&signal.path) else {
            continue;
        };
        let k = data.times_ns.partition_point(|&t| t < t_ns);
        let nearest = [k.checked_sub(1), Some(k)]
            .into_iter()
            .flatten()
            .filter_map(|i| Some((i, *data.times_ns.get(i)?)))
            .min_by_key(|&(_, t)| t.abs_diff(t_ns));
        if let Some((i, t)) = nearest
            && let Some(value) = format_sample(&field.series, field.kind, i)
        {
            text.push_str(&format!(
                "\n{}: {value} at {}",
                signal.label(),
                hover_time(t, t0, clock)
            ));
        }
        let near_marks = traces
            .and_then(|t| t.get(si))
            .into_iter()
            .flat_map(|t| t.marks.iter())
            .filter(|m| (m.x - x).abs() <= 6.0 * px_s);
        for m in near_marks {
            text.push_str(&format!(
                "\n{}: {} at {} (not drawn: off the scale)",
                signal.label(),
                mark_text(m.flags),
                hover_time(m.t_ns.0, t0, clock)
            ));
        }
    }
    text
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A short plot gets two labels where they fit 24 px apart, not one.
    #[test]
    fn a_short_plot_gets_two_y_labels_where_they_fit() {
        // -98..98 on 110 px: 32 px apart is a step of 100, of which only 0 is inside.
        let (lo, hi, px) = (-98.0, 98.0, 110.0);
        let step = y_step(lo, hi, (hi - lo) / px);
        assert_eq!(step, 50.0);
        assert!(step / (hi - lo) * px >= 24.0);
        // Where even that does not fit, the step that keeps labels apart stays.
        assert_eq!(y_step(-98.0, 98.0, 196.0 / 40.0), 200.0);
        // The next smaller step of 1, 2 and 5 is 0.5, 1 and 2.
        for (lo, hi, px, want) in [(-1.9, 1.9, 100.0, 1.0), (-0.95, 0.95, 100.0, 0.5)] {
            assert_eq!(y_step(lo, hi, (hi - lo) / px), want, "{lo}..{hi}");
        }
    }

    /// The y margin goes where it would overflow: values near f64::MAX (a protobuf all-types
    /// message holds it), not 1e306 (which the margin takes to 1.05e306).
    #[test]
    fn no_y_margin_only_near_f64_max() {
        let trace = |ys: &[f64]| {
            let mut t = Trace::<PlotPoint>::default();
            t.dots = ys.iter().map(|&y| PlotPoint::new(0.0, y)).collect();
            t
        };
        assert!(near_f64_max(&[trace(&[0.0, f64::MAX])]));
        assert!(near_f64_max(&[trace(&[]), trace(&[-f64::MAX / 2.0])]));
        assert!(!near_f64_max(&[trace(&[1e306, -1e306, f64::INFINITY])]));
        assert!(!near_f64_max(&[trace(&[f64::NAN, 5e-324])]));
    }

    /// Every y label is drawn (at least 32 px apart) and there are not too many of them.
    #[test]
    fn y_steps_leave_room_for_every_label() {
        // (lo, hi, plot height px)
        let cases = [
            (-5.8, 11.8, 150.0),
            (-1.1, 1.1, 150.0),
            (0.0, 10.5, 150.0),
            (-6.2e-10, -0.9e-10, 120.0),
            (1e306, 6e306, 120.0),
            (0.0, 1.0, 900.0),
            (41.0, 41.000_001, 60.0),
        ];
        for (lo, hi, px) in cases {
            let step = y_step(lo, hi, (hi - lo) / px);
            let spacing_px = step / (hi - lo) * px;
            assert!(
                spacing_px >= Y_LABEL_SPACING_PX,
                "{lo}..{hi} at {px} px: step {step}"
            );
            assert!(
                (hi - lo) / step <= 8.0,
                "{lo}..{hi} at {px} px: step {step}"
            );
            let mantissa = step / 10f64.powf(step.log10().floor());
            assert!(
                [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-9),
                "{step}"
            );
        }
        assert_eq!(y_step(-5.8, 11.8, 17.6 / 150.0), 5.0);
    }
}
