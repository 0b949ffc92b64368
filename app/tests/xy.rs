//! Issue 23, item 2: XY plots. A legend entry's menu makes a plot of the other signals
//! against it; the path follows the faster signal's samples with the slower one held (the
//! plot says which), "Equal axes" keeps units square, "Time plot" goes back. And a snapshot
//! of a circle drawn from two signals at different rates, with the cursor range over it.

use std::path::Path;
use std::sync::Arc;

use bag::WriteOptions;
use egui_kittest::kittest::Queryable;
use scope::Scope;
use scope::data::cursors::{Cursors, Which};
use scope::data::layout::{Layout, PlotSpec};

mod common;
use common::{
    T0, V, cdr_bag, harness, load_recording, loaded, signal, snapshot_plot_stack, step_until,
};

const MS: u64 = 1_000_000;

/// `east` = cos at 50 Hz and `north` = sin at 20 Hz, once round a circle in 2 s.
fn circle(dir: &Path) -> std::path::PathBuf {
    let angle = |t_ms: u64| t_ms as f64 / 2000.0 * std::f64::consts::TAU;
    let east = (0..=100u64)
        .map(|i| (i * 20 * MS, V::F(angle(i * 20).cos())))
        .collect();
    let north = (0..=40u64)
        .map(|i| (i * 50 * MS, V::F(angle(i * 50).sin())))
        .collect();
    cdr_bag(
        dir,
        T0,
        &[("east", east), ("north", north)],
        WriteOptions::new(),
    )
}

#[test]
fn a_legend_entry_becomes_the_x_axis_and_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut h = harness(Scope::new(Arc::new(|_| None)));
    h.state_mut().open(circle(dir.path()));
    step_until(&mut h, "the recording to load", loaded);
    *h.state_mut().layout_mut() = Layout {
        plots: vec![PlotSpec::of(vec![signal("east"), signal("north")])],
        ..Layout::default()
    };
    h.run_steps(3);
    h.get_by_label_contains("east/value = ").click_secondary();
    h.run_steps(2);
    h.get_by_label("Use as X (XY plot)").click();
    h.run_steps(3);
    let plot = h.state().layout().plots[0].clone();
    assert_eq!(plot.x, Some(signal("east")));
    assert_eq!(plot.signals, vec![signal("north")]);
    h.get_by_label("Plot 1 (XY)");
    // east has more samples: it leads, north is held.
    h.get_by_label("Each sample of east/value with the last value of north/value at its time");
    h.get_by_label("Equal axes").click();
    h.run_steps(2);
    assert!(h.state().layout().plots[0].equal_axes);
    h.get_by_label("Time plot").click();
    h.run_steps(2);
    assert_eq!(
        h.state().layout().plots[0],
        PlotSpec::of(vec![signal("east"), signal("north")])
    );
}

#[test]
fn xy_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cursors = Cursors::default();
    cursors.place(Which::A, T0 + 500 * MS);
    cursors.place(Which::B, T0 + 1000 * MS);
    let layout = Layout {
        plots: vec![PlotSpec {
            signals: vec![signal("north")],
            x: Some(signal("east")),
            equal_axes: true,
        }],
        ..Layout::default()
    };
    snapshot_plot_stack(
        "xy_circle",
        load_recording(&circle(dir.path())),
        layout,
        cursors,
        T0 + 1500 * MS,
        egui::vec2(640.0, 560.0),
    );
}
