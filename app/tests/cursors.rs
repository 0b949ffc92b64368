//! Issue 23, item 1: two cursors shared by every plot, placed by keys, Shift+click and
//! Shift+drag; the Cursors tab reads every plotted signal at each (exact, interpolated or
//! held), B - A (64-bit integers exactly) and the statistics of the samples between them.

use std::path::{Path, PathBuf};

use bag::WriteOptions;
use egui::{Event, Modifiers, PointerButton};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scope::Scope;
use scope::data::cursors::{Cursors, Which};
use scope::data::layout::{Layout, PlotSpec, SignalRef};
use scope::data::range_stats::RangeIndexes;
use scope::ui::cursors::cursor_panel_ui;
use scope::ui::plots::{PlotView, plot_stack_ui};
use scope::ui::side_panel::RightPanel;

mod common;
use common::{T0, V, cdr_bag, open_with_dialog, signal};

const MS: u64 = 1_000_000;

/// `ramp` = i at i ms (i = 0..=1000, floats); `count` = u64::MAX - 1000 + i at 10 i ms
/// (64-bit integers past 2^53, drawn as steps).
fn ramp_bag(dir: &Path) -> PathBuf {
    let ramp = (0..=1000u64).map(|i| (i * MS, V::F(i as f64))).collect();
    let count = (0..=100u64)
        .map(|i| (i * 10 * MS, V::U(u64::MAX - 1000 + i)))
        .collect();
    cdr_bag(
        dir,
        T0,
        &[("ramp", ramp), ("count", count)],
        WriteOptions::new(),
    )
}

/// `ramp` in one plot, `count` in another.
fn ramp_layout() -> Layout {
    Layout {
        plots: vec![
            PlotSpec::of(vec![signal("ramp")]),
            PlotSpec::of(vec![signal("count")]),
        ],
        ..Layout::default()
    }
}

fn open_ramp(dir: &Path) -> Harness<'static, Scope> {
    let mut h = open_with_dialog(ramp_bag(dir));
    *h.state_mut().layout_mut() = ramp_layout();
    h.run_steps(3);
    h
}

#[test]
fn keys_place_cursors_and_the_cursors_tab_reads_values_deltas_and_statistics() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut h = open_ramp(dir.path());
    h.state_mut().playback.playhead_ns = T0 + 100 * MS;
    h.key_press(egui::Key::A);
    h.run_steps(2);
    assert_eq!(h.state().cursors.a_ns, Some(T0 + 100 * MS));
    assert_eq!(h.state().right, RightPanel::Cursors);
    // Half way between two ramp samples, and between two `count` samples.
    h.state_mut().playback.playhead_ns = T0 + 600 * MS + MS / 2;
    h.key_press(egui::Key::B);
    h.run_steps(3);
    assert_eq!(h.state().cursors.b_ns, Some(T0 + 600 * MS + MS / 2));
    h.get_by_label("0.100 s");
    h.get_by_label("0.6005 s");
    h.get_by_label("0.5005 s"); // B - A
    // ramp: exact at A, on the line at B; the range holds samples 100..=600.
    h.get_by_label("100 (exact)");
    h.get_by_label("600.5 (interpolated)");
    h.get_by_label("500.5");
    h.get_by_label("501 samples");
    h.get_by_label("100 at 0.100 s");
    h.get_by_label("600 at 0.600 s");
    h.get_by_label("350");
    // Population standard deviation of 501 consecutive integers: sqrt((501^2 - 1) / 12).
    let std = ((501.0f64 * 501.0 - 1.0) / 12.0).sqrt();
    let shown = h
        .get_all_by_label_contains("144.62")
        .next()
        .expect("the standard deviation")
        .value()
        .unwrap_or_default();
    let value: f64 = shown.parse().expect("a number");
    assert!((value - std).abs() < 1e-9, "{shown} vs {std}");
    // The trapezoid integral of the ramp from 0.1 s to 0.6 s: 1000 (0.6^2 - 0.1^2) / 2.
    let integral = h
        .get_all_by_label_contains("x s over 0.500 s")
        .next()
        .expect("ramp's integral (listed first)")
        .value()
        .unwrap_or_default();
    let value: f64 = integral
        .split(' ')
        .next()
        .and_then(|v| v.parse().ok())
        .expect("a number");
    assert!((value - 175.0).abs() < 1e-9, "{integral}");
    // count: exact 64-bit integers at A and held at B, B - A exactly.
    h.get_by_label("18446744073709550625 (exact)");
    h.get_by_label("18446744073709550675 (held)");
    h.get_by_label("50");
    h.get_by_label("51 samples");
    // X removes both.
    h.key_press(egui::Key::X);
    h.run_steps(2);
    assert_eq!(h.state().cursors.a_ns, None);
    assert_eq!(h.state().cursors.b_ns, None);
}

/// Shift + press and release at `pos` (a click), a frame each.
fn shift_click(h: &mut Harness<'_, Scope>, pos: egui::Pos2) {
    h.event(Event::ModifiersChanged(Modifiers::SHIFT));
    h.event(Event::PointerMoved(pos));
    h.step();
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos,
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::SHIFT,
        });
        h.step();
    }
    h.event(Event::ModifiersChanged(Modifiers::NONE));
    h.run_steps(2);
}

#[test]
fn shift_click_places_a_then_b_and_shift_drag_moves_the_nearer_without_panning() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut h = open_ramp(dir.path());
    let frame = h.state().plot_frames()[0];
    let at = |f: f32| egui::pos2(frame.left() + frame.width() * f, frame.center().y);
    let playhead = h.state().playback.playhead_ns;
    shift_click(&mut h, at(0.2));
    shift_click(&mut h, at(0.7));
    let (a, b) = (h.state().cursors.a_ns, h.state().cursors.b_ns);
    let (Some(a), Some(b)) = (a, b) else {
        panic!("cursors {a:?} {b:?}");
    };
    // The view shows the whole second: 20% and 70% of it, within a pixel.
    let px_ns = 1_000 * MS / frame.width() as u64;
    assert!(a.abs_diff(T0 + 200 * MS) <= 2 * px_ns, "A at {}", a - T0);
    assert!(b.abs_diff(T0 + 700 * MS) <= 2 * px_ns, "B at {}", b - T0);
    // A Shift+click does not move the playhead.
    assert_eq!(h.state().playback.playhead_ns, playhead);
    // Shift+drag from near B moves B; the view does not pan.
    let before = h.state().plot_frames()[0];
    h.event(Event::ModifiersChanged(Modifiers::SHIFT));
    h.hover_at(at(0.69));
    h.step();
    h.drag_at(at(0.69));
    h.step();
    for f in [0.75, 0.8, 0.85, 0.9] {
        h.hover_at(at(f));
        h.step();
    }
    h.drop_at(at(0.9));
    h.step();
    h.event(Event::ModifiersChanged(Modifiers::NONE));
    h.run_steps(2);
    let cursors = h.state().cursors;
    assert_eq!(cursors.a_ns, Some(a), "A stays");
    let b = cursors.b_ns.expect("B");
    assert!(b.abs_diff(T0 + 900 * MS) <= 2 * px_ns, "B at {}", b - T0);
    assert_eq!(h.state().plot_frames()[0], before);
    let range = h.state().recording().map(|r| (r.t0_ns(), r.t1_ns()));
    assert_eq!(range, Some((T0, T0 + 1_000 * MS)));
}

/// What the snapshot draws: the plot stack and the Cursors tab beside it.
struct Shown {
    recording: scope::recording::Recording,
    layout: Layout,
    view: PlotView,
    cursors: Cursors,
    indexes: RangeIndexes<SignalRef>,
}

/// Both cursors placed: the shaded range and the letters in both plots, and the Cursors tab.
/// Drawn from a recording loaded before the first frame (the whole app's panel widths depend
/// on when loading ends). Regenerate with `UPDATE_SNAPSHOTS=1` and look at the image.
#[test]
fn cursors_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cursors = Cursors::default();
    cursors.place(Which::A, T0 + 250 * MS);
    cursors.place(Which::B, T0 + 750 * MS + MS / 2);
    let shown = Shown {
        recording: common::load_recording(&ramp_bag(dir.path())),
        layout: ramp_layout(),
        view: PlotView::default(),
        cursors,
        indexes: RangeIndexes::default(),
    };
    let mut h = Harness::builder()
        .with_size(egui::vec2(1000.0, 640.0))
        .wgpu()
        .build_ui_state(
            |ui, s: &mut Shown| {
                egui::Panel::right("cursors")
                    .exact_size(320.0)
                    .show(ui, |ui| {
                        cursor_panel_ui(
                            ui,
                            &s.recording,
                            &s.layout,
                            &s.cursors,
                            &mut s.view,
                            &mut s.indexes,
                        );
                    });
                egui::CentralPanel::default().show(ui, |ui| {
                    plot_stack_ui(
                        ui,
                        &s.recording,
                        &s.layout,
                        &mut s.view,
                        T0 + 500 * MS,
                        None,
                        &s.cursors,
                    );
                });
            },
            shown,
        );
    h.run_steps(6);
    h.snapshot("cursors");
}
