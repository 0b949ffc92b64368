//! The mouse wheel over the plots, as PlotJuggler has it (issue 20, item 6): the wheel zooms
//! time around the pointer, Shift + wheel pans time; neither touches Y's autoscale. And the
//! hover over a plot (item 2): the nearest sample's value and time.

use std::path::Path;

use bag::WriteOptions;
use egui::{Event, Modifiers, MouseWheelSource, MouseWheelUnit, TouchPhase};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scope::data::cursors::Cursors;
use scope::data::layout::{Layout, PlotSpec, SignalRef};
use scope::recording::Recording;
use scope::ui::plots::{PlotView, plot_stack_ui};

mod common;
use common::{V, cdr_bag, load_recording};

const T0: u64 = 1_780_300_800_000_000_000;

/// Ten seconds of a 100 Hz `float64` sine on `sine`.
fn recording(dir: &Path) -> Recording {
    let samples: Vec<(u64, V)> = (0..1_000u64)
        .map(|i| (i * 10_000_000, V::F((i as f64 * 0.05).sin())))
        .collect();
    load_recording(&cdr_bag(dir, T0, &[("sine", samples)], WriteOptions::new()))
}

struct State {
    recording: Recording,
    layout: Layout,
    view: PlotView,
}

fn wheel(delta_y: f32, modifiers: Modifiers) -> Event {
    Event::MouseWheel {
        unit: MouseWheelUnit::Point,
        delta: egui::vec2(0.0, delta_y),
        phase: TouchPhase::Move,
        source: MouseWheelSource::Unknown,
        modifiers,
    }
}

fn range(h: &Harness<'_, State>) -> (f64, f64) {
    h.state().view.x_range_s.expect("a window")
}

#[test]
fn the_wheel_zooms_time_around_the_pointer_and_shift_pans_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = State {
        recording: recording(dir.path()),
        layout: Layout {
            plots: vec![PlotSpec::of(vec![SignalRef {
                topic: "sine".into(),
                path: "value".into(),
            }])],
            ..Layout::default()
        },
        view: PlotView::default(),
    };
    let mut h = Harness::builder()
        .with_size(egui::vec2(900.0, 400.0))
        .build_ui_state(
            |ui, s: &mut State| {
                egui::CentralPanel::default().show(ui, |ui| {
                    plot_stack_ui(
                        ui,
                        &s.recording,
                        &s.layout,
                        &mut s.view,
                        T0,
                        None,
                        &Cursors::default(),
                    );
                });
            },
            state,
        );
    h.run_steps(3);
    let before = range(&h);
    let frame = h.state().view.frames[0];
    // The pointer three quarters of the way along the plot.
    let pointer = egui::pos2(frame.left() + 0.75 * frame.width(), frame.center().y);
    let t_at = |r: (f64, f64)| r.0 + 0.75 * (r.1 - r.0);
    h.hover_at(pointer);
    h.run_steps(40);
    // The hover names the nearest sample to the pointer's time: its value and its time.
    let i = (t_at(range(&h)) * 100.0).round();
    let want = format!("sine/value: {} at {:.9} s", (i * 0.05).sin(), i / 100.0);
    assert!(
        h.get_all_by_label_contains(&want).next().is_some(),
        "no hover saying {want}"
    );
    h.event(wheel(120.0, Modifiers::NONE));
    h.run_steps(60);
    let zoomed = range(&h);
    let (w0, w1) = (before.1 - before.0, zoomed.1 - zoomed.0);
    assert!(w1 < 0.8 * w0, "time zoomed in: {before:?} -> {zoomed:?}");
    assert!(
        (t_at(zoomed) - t_at(before)).abs() < 0.01 * w0,
        "around the pointer: {before:?} -> {zoomed:?}"
    );
    // Shift + wheel pans time, keeping the width.
    // Shift held while the wheel's smooth scroll plays out, as a hand holds it.
    h.event(Event::ModifiersChanged(Modifiers::SHIFT));
    h.event(wheel(120.0, Modifiers::SHIFT));
    h.run_steps(60);
    h.event(Event::ModifiersChanged(Modifiers::NONE));
    h.run_steps(2);
    let panned = range(&h);
    assert!(
        ((panned.1 - panned.0) - w1).abs() < 1e-6 * w1,
        "{zoomed:?} -> {panned:?}"
    );
    assert!(
        (panned.0 - zoomed.0).abs() > 0.01 * w1,
        "{zoomed:?} -> {panned:?}"
    );
}
