//! The Cursors tab: where cursors A and B are, what every plotted signal reads at each (and
//! how: an exact sample, interpolated on the line, or held by a step), B - A, and the
//! statistics of the samples between them, exactly (from the samples, not the plots).

use egui::RichText;

use crate::data::cursors::{Cursors, Delta, Reading, Which, delta, read_at};
use crate::data::layout::{Layout, SignalRef};
use crate::data::range_stats::{Measured, RangeIndexes, RangeStats};
use crate::recording::Recording;
use crate::ui::action::Action;
use crate::ui::format::{format_sample, format_value};
use crate::ui::plots::PlotView;
use crate::ui::theme;

/// `ns` after the recording's start as seconds, every digit exact: `12.000345678 s`,
/// `-0.5 s`; trailing zeros after the milliseconds are left out.
pub fn format_offset(ns: i128) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    let (s, frac) = (a / 1_000_000_000, a % 1_000_000_000);
    let mut digits = format!("{frac:09}");
    while digits.len() > 3 && digits.ends_with('0') {
        digits.pop();
    }
    format!("{sign}{s}.{digits} s")
}

/// The tab. Returns what its buttons ask for.
pub fn cursor_panel_ui(
    ui: &mut egui::Ui,
    rec: &Recording,
    layout: &Layout,
    cursors: &Cursors,
    view: &mut PlotView,
    indexes: &mut RangeIndexes<SignalRef>,
) -> Option<Action> {
    let mut action = None;
    // Long values (a 64-bit integer, a signal's path) wrap inside the panel: text wider than
    // a resizable panel widens it, and the plots beside it would shrink under the cursors.
    ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Wrap);
    let value_width = (ui.available_width() - 80.0).max(60.0);
    let t0 = rec.t0_ns();
    let offset = |t: u64| format_offset(i128::from(t) - i128::from(t0));
    ui.horizontal_wrapped(|ui| {
        for which in [Which::A, Which::B] {
            if ui
                .button(format!("{} at playhead", which.name()))
                .on_hover_text(format!(
                    "Put cursor {} at the playhead (key {})",
                    which.name(),
                    which.name()
                ))
                .clicked()
            {
                action = Some(Action::CursorAtPlayhead(which));
            }
        }
        if ui
            .add_enabled(cursors.any(), egui::Button::new("Clear"))
            .on_hover_text("Remove both cursors (key X)")
            .clicked()
        {
            action = Some(Action::ClearCursors);
        }
    });
    if !cursors.any() {
        ui.label("No cursor placed. Shift+click in a plot, or press A or B, to place one.");
        return action;
    }
    egui::Grid::new("scope-cursor-times")
        .num_columns(2)
        .max_col_width(value_width)
        .show(ui, |ui| {
            for (which, color) in [(Which::A, theme::CURSOR_A), (Which::B, theme::CURSOR_B)] {
                ui.label(RichText::new(which.name()).color(color).strong());
                ui.monospace(
                    cursors
                        .at(which)
                        .map_or_else(|| "not placed".into(), offset),
                );
                ui.end_row();
            }
            if let Some(d) = cursors.delta_ns() {
                ui.label("B - A");
                ui.monospace(format_offset(d));
                ui.end_row();
            }
        });
    indexes.retain(|k| layout.signals().any(|s| s == k));
    let mut summarising = false;
    egui::ScrollArea::vertical()
        .id_salt("scope-cursor-signals")
        .show(ui, |ui| {
            for (pi, plot) in layout.plots.iter().enumerate() {
                for (si, signal) in plot.signals.iter().enumerate() {
                    ui.separator();
                    ui.label(
                        RichText::new(signal.label())
                            .color(theme::signal_color(si))
                            .strong(),
                    )
                    .on_hover_text(format!("Plot {}", pi + 1));
                    summarising |= signal_ui(
                        ui,
                        (pi, si),
                        (rec, signal, cursors),
                        view,
                        indexes,
                        &offset,
                        value_width,
                    );
                }
            }
        });
    if summarising {
        ui.ctx().request_repaint();
    }
    action
}

/// One signal's readings and statistics; true while its summary is being built.
fn signal_ui(
    ui: &mut egui::Ui,
    // Where it is in the layout: a signal may be in several plots.
    place: (usize, usize),
    (rec, signal, cursors): (&Recording, &SignalRef, &Cursors),
    view: &mut PlotView,
    indexes: &mut RangeIndexes<SignalRef>,
    offset: &dyn Fn(u64) -> String,
    value_width: f32,
) -> bool {
    let Some((topic, data)) = rec.signal_data(signal) else {
        ui.weak("not loaded");
        return false;
    };
    let Some(field) = data.field(&signal.path) else {
        ui.weak("not in this recording");
        return false;
    };
    let (times, series, kind) = (&data.times_ns, &field.series, field.kind);
    let draw = view.draw_of(signal, kind);
    let gap = view.gap(topic, times);
    let read = |t: Option<u64>| t.map(|t| read_at(times, series, draw, gap, t));
    let (at_a, at_b) = (read(cursors.a_ns), read(cursors.b_ns));
    let reading_text = |r: Reading| {
        let value = match r {
            Reading::Exact(i) | Reading::Held(i) => format_sample(series, kind, i),
            Reading::Interpolated(_, v) => Some(format_value(v)),
            Reading::None(_) => None,
        };
        match value {
            Some(v) => format!("{v} ({})", r.how()),
            None => format!("no value ({})", r.how()),
        }
    };
    let mut summarising = false;
    egui::Grid::new(("scope-cursor-signal", place))
        .num_columns(2)
        .max_col_width(value_width)
        .striped(true)
        .show(ui, |ui| {
            for (name, reading) in [("at A", at_a), ("at B", at_b)] {
                if let Some(r) = reading {
                    ui.label(name);
                    ui.monospace(reading_text(r));
                    ui.end_row();
                }
            }
            let (Some(a), Some(b), Some(ra), Some(rb)) = (cursors.a_ns, cursors.b_ns, at_a, at_b)
            else {
                return;
            };
            let integer = !matches!(kind, decode::LeafKind::Float);
            ui.label("B - A");
            ui.monospace(match delta(series, integer, ra, rb) {
                Delta::Exact(d) => d.to_string(),
                Delta::Float(d) => format_value(d),
                Delta::Overflow => "beyond f64".to_owned(),
                Delta::None => "none".to_owned(),
            });
            ui.end_row();
            match indexes.measure(signal, times, series, a, b) {
                Measured::Ready(stats) => stats_rows(ui, &stats, series, kind, offset),
                Measured::Summarising { done, of } => {
                    summarising = true;
                    ui.label("statistics");
                    ui.weak(format!(
                        "summarising {:.0}% of {of} samples...",
                        done as f64 * 100.0 / of.max(1) as f64
                    ));
                    ui.end_row();
                }
            }
        });
    summarising
}

/// The statistics of the range, a row each.
fn stats_rows(
    ui: &mut egui::Ui,
    stats: &RangeStats,
    series: &crate::data::series::Series,
    kind: decode::LeafKind,
    offset: &dyn Fn(u64) -> String,
) {
    let mut row = |name: &str, text: String| {
        ui.label(name);
        ui.monospace(text);
        ui.end_row();
    };
    let mut count = format!("{} samples", stats.count());
    let skipped = stats.non_finite();
    if skipped > 0 || stats.absent > 0 {
        count.push_str(&format!(
            " ({} finite; {skipped} non-finite and {} absent left out)",
            stats.finite, stats.absent
        ));
    }
    row("count", count);
    for (name, extreme) in [("min", stats.min), ("max", stats.max)] {
        let text = extreme.map_or_else(
            || "none".to_owned(),
            |e| {
                let value = format_sample(series, kind, e.index).unwrap_or_default();
                format!("{value} at {}", offset(e.t_ns))
            },
        );
        row(name, text);
    }
    let value = |v: Option<f64>| v.map_or_else(|| "none".to_owned(), format_value);
    row("mean", value(stats.mean));
    row("std dev", value(stats.std));
    row("RMS", value(stats.rms));
    let integral = match stats.integral {
        Some(v) if v.is_infinite() => "beyond f64".to_owned(),
        Some(v) => format!(
            "{} x s over {}",
            format_value(v),
            format_offset(i128::from(stats.integrated_ns))
        ),
        None => "none (no two joined samples)".to_owned(),
    };
    row("integral", integral);
}

#[cfg(test)]
mod tests {
    use super::format_offset;

    #[test]
    fn offsets_keep_every_nanosecond() {
        assert_eq!(format_offset(0), "0.000 s");
        assert_eq!(format_offset(12_000_345_678), "12.000345678 s");
        assert_eq!(format_offset(1_500_000_000), "1.500 s");
        assert_eq!(format_offset(-500_000_000), "-0.500 s");
        assert_eq!(
            format_offset(i128::from(u64::MAX)),
            "18446744073.709551615 s"
        );
    }
}
