//! An XY plot in the stack: each y signal against the x signal over the time plots' visible
//! window ([`crate::data::xy::align`]), the path coloured from dark (early) to bright (late),
//! the stretch between the cursors drawn over it, the playhead's pair marked.

use std::collections::HashMap;

use egui::{Color32, RichText};
use egui_plot::{Line, MarkerShape, Plot, PlotPoints, Points};

use crate::data::cursors::Cursors;
use crate::data::layout::{PlotSpec, SignalRef};
use crate::data::xy::{Column, XyPath, align};
use crate::recording::Recording;
use crate::ui::theme;

/// Pieces of a path, each one colour of the time gradient.
const GRADIENT_STEPS: usize = 12;

/// What a path was aligned for: the signals, the window, and how many samples each had.
type PathKey = (SignalRef, SignalRef, u64, u64, usize, usize);

/// Aligned paths, kept while their signals, window and data stay the same.
#[derive(Debug, Default)]
pub struct XyCache {
    paths: HashMap<PathKey, XyPath>,
}

impl XyCache {
    /// Forgets every path (another recording).
    pub fn clear(&mut self) {
        self.paths.clear();
    }
}

/// What the user did in an XY plot's legend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XyAction {
    /// Back to a time plot.
    TimePlot,
    /// Equal axes on or off.
    EqualAxes(bool),
}

/// A column of `signal`, when it is loaded.
fn column<'a>(recording: &'a Recording, signal: &SignalRef) -> Option<Column<'a>> {
    let (_, data) = recording.signal_data(signal)?;
    let field = data.field(&signal.path)?;
    Some(Column {
        times: &data.times_ns,
        series: &field.series,
    })
}

/// The value of `signal` at `t_ns` (its last sample at or before).
fn held(recording: &Recording, signal: &SignalRef, t_ns: u64) -> Option<f64> {
    let (_, data) = recording.signal_data(signal)?;
    let i = data.index_at(t_ns)?;
    data.field(&signal.path)?.series.value(i)
}

/// Colour `k` of `n` along the path: dark blue to bright yellow.
fn gradient(k: usize, n: usize) -> Color32 {
    let f = if n > 1 {
        k as f32 / (n - 1) as f32
    } else {
        1.0
    };
    let lerp = |a: f32, b: f32| (a + (b - a) * f) as u8;
    Color32::from_rgb(lerp(40.0, 250.0), lerp(70.0, 220.0), lerp(200.0, 60.0))
}

/// Draws XY plot `pi` of `plot` (whose x signal is `x`) over the log times `window_ns`;
/// returns what its legend asked for.
#[allow(clippy::too_many_arguments)]
pub fn xy_plot_ui(
    ui: &mut egui::Ui,
    recording: &Recording,
    (pi, plot, x): (usize, &PlotSpec, &SignalRef),
    cache: &mut XyCache,
    window_ns: (u64, u64),
    (width, height): (f32, f32),
    playhead_ns: u64,
    cursors: &Cursors,
) -> Option<XyAction> {
    let mut action = None;
    let x_column = column(recording, x);
    let mut keys: Vec<(usize, PathKey)> = Vec::new();
    for (si, y) in plot.signals.iter().enumerate() {
        let (Some(xc), Some(yc)) = (x_column, column(recording, y)) else {
            continue;
        };
        let key = (
            x.clone(),
            y.clone(),
            window_ns.0,
            window_ns.1,
            xc.times.len(),
            yc.times.len(),
        );
        if !cache.paths.contains_key(&key) {
            // Zooming and panning make new windows: keep only a few paths.
            if cache.paths.len() >= 16 {
                cache.paths.clear();
            }
            cache.paths.insert(key.clone(), align(xc, yc, window_ns));
        }
        keys.push((si, key));
    }
    let paths: Vec<(usize, &XyPath)> = keys
        .iter()
        .filter_map(|(si, key)| Some((*si, cache.paths.get(key)?)))
        .collect();
    ui.horizontal_wrapped(|ui| {
        ui.set_max_width(width);
        ui.label(RichText::new(format!("Plot {} (XY)", pi + 1)).strong());
        if ui
            .small_button("Time plot")
            .on_hover_text("Plot these signals against time again")
            .clicked()
        {
            action = Some(XyAction::TimePlot);
        }
        let mut equal = plot.equal_axes;
        if ui
            .checkbox(&mut equal, "Equal axes")
            .on_hover_text("One unit is as long on both axes (a map)")
            .changed()
        {
            action = Some(XyAction::EqualAxes(equal));
        }
        ui.label(format!("x: {}", x.label()));
        for (si, y) in plot.signals.iter().enumerate() {
            ui.label(RichText::new(format!("y: {}", y.label())).color(theme::signal_color(si)));
        }
    });
    for (si, path) in &paths {
        let (lead, other) = if path.by_x {
            (x.label(), plot.signals.get(*si).map(SignalRef::label))
        } else {
            (
                plot.signals
                    .get(*si)
                    .map(SignalRef::label)
                    .unwrap_or_default(),
                Some(x.label()),
            )
        };
        let mut note = format!(
            "Each sample of {lead} with the last value of {} at its time",
            other.unwrap_or_default()
        );
        if path.stride > 1 {
            note.push_str(&format!(
                " (every {}th pair of {})",
                path.stride,
                path.points.len() * path.stride
            ));
        }
        ui.label(RichText::new(note).small().weak());
    }
    let mut widget = Plot::new(("scope-xy", pi))
        .width(width)
        .height(height)
        .allow_double_click_reset(true)
        .allow_boxed_zoom(false)
        .show_x(true)
        .show_y(true);
    if plot.equal_axes {
        widget = widget.data_aspect(1.0);
    }
    let cursor_range = match (cursors.a_ns, cursors.b_ns) {
        (Some(a), Some(b)) => Some((a.min(b), a.max(b))),
        _ => None,
    };
    widget.show(ui, |plot_ui| {
        for (si, path) in &paths {
            for (ri, run) in path.runs.iter().enumerate() {
                let Some(points) = path.points.get(run.clone()) else {
                    continue;
                };
                // The run in pieces of the time gradient, each overlapping the next by a point.
                let piece = points.len().div_ceil(GRADIENT_STEPS).max(1);
                let mut start = 0;
                while start < points.len() {
                    let end = (start + piece + 1).min(points.len());
                    let k = ((run.start + start) * GRADIENT_STEPS) / path.points.len().max(1);
                    let slice = points.get(start..end).unwrap_or(&[]);
                    plot_ui.line(
                        Line::new(
                            format!("xy {si}"),
                            PlotPoints::Owned(slice.iter().map(|p| (*p).into()).collect()),
                        )
                        .id(("scope-xy-run", pi, si, ri, start))
                        .color(gradient(k, GRADIENT_STEPS))
                        .width(1.5)
                        .allow_hover(false),
                    );
                    start += piece;
                }
                if points.len() == 1 {
                    plot_ui.points(
                        Points::new(
                            format!("xy {si}"),
                            PlotPoints::Owned(vec![points[0].into()]),
                        )
                        .id(("scope-xy-dot", pi, si, ri))
                        .radius(2.5)
                        .color(gradient(GRADIENT_STEPS, GRADIENT_STEPS)),
                    );
                }
            }
            // The stretch between the cursors, over the path.
            if let Some((a, b)) = cursor_range {
                for (ri, run) in path.runs.iter().enumerate() {
                    let (Some(points), Some(times)) =
                        (path.points.get(run.clone()), path.times.get(run.clone()))
                    else {
                        continue;
                    };
                    let inside: Vec<[f64; 2]> = points
                        .iter()
                        .zip(times)
                        .filter(|(_, t)| (a..=b).contains(*t))
                        .map(|(p, _)| *p)
                        .collect();
                    if !inside.is_empty() {
                        plot_ui.line(
                            Line::new(
                                "cursor range",
                                PlotPoints::Owned(inside.into_iter().map(Into::into).collect()),
                            )
                            .id(("scope-xy-range", pi, si, ri))
                            .color(theme::CURSOR_A)
                            .width(3.0)
                            .allow_hover(false),
                        );
                    }
                }
            }
            // The pair at the playhead.
            if let (Some(y), Some(xv)) = (plot.signals.get(*si), held(recording, x, playhead_ns))
                && let Some(yv) = held(recording, y, playhead_ns)
                && xv.is_finite()
                && yv.is_finite()
            {
                plot_ui.points(
                    Points::new("playhead", PlotPoints::Owned(vec![[xv, yv].into()]))
                        .id(("scope-xy-playhead", pi, si))
                        .shape(MarkerShape::Circle)
                        .radius(5.0)
                        .color(theme::PLAYHEAD),
                );
            }
        }
    });
    action
}
