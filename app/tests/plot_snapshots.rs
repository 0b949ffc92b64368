//! Image snapshots of the plots on the cases of issue 20 ("plots that never lie"): a sparse
//! spike, a silence, infinities and NaN, huge and tiny values, a u64 past 2^53, a long legend
//! in an 800 x 600 window, a sub-second and a three-hour axis, a missing part; and the checks behind them
//! (values in the legend, one x mapping for all plots, plots inside their panel).
//!
//! Rendered as `tests/snapshots.rs` renders (egui_kittest through wgpu on a software
//! rasterizer). Regenerate with `UPDATE_SNAPSHOTS=1 cargo test -p scope --test
//! plot_snapshots` and look at the images before committing them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bag::WriteOptions;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scope::Scope;
use scope::data::cursors::Cursors;
use scope::data::layout::{Layout, PlotSpec};
use scope::recording::Recording;
use scope::ui::plots::{PlotView, plot_stack_ui};
use scope::ui::side_panel::RightPanel;
use scope::ui::time_axis::Clock;

mod common;
use common::{V, cdr_bag, load_recording, signal};

/// 2026-06-01T08:00:00Z: fixed, so wall-clock labels are too.
const T0: u64 = 1_780_300_800_000_000_000;

/// A bag with one topic per entry of `topics` (name, samples as (ns after [`T0`], value)),
/// each message a ROS 2 CDR message of one field, `value`.
fn bag(dir: &Path, topics: &[(&str, Vec<(u64, V)>)]) -> PathBuf {
    cdr_bag(dir, T0, topics, WriteOptions::new())
}

/// [`bag`] written with `options` (to split it into parts, say).
fn bag_with(dir: &Path, topics: &[(&str, Vec<(u64, V)>)], options: WriteOptions) -> PathBuf {
    cdr_bag(dir, T0, topics, options)
}

fn loaded(path: &Path) -> Recording {
    let mut recording = load_recording(path);
    recording.load_time = None;
    recording
}

/// What a plot-stack snapshot needs.
struct Stack {
    recording: Recording,
    layout: Layout,
    view: PlotView,
    playhead_ns: u64,
}

/// Renders the plot stack of `topics` (one plot per inner list) at `size`, snapshots it as
/// `name`, and returns the state for checks.
fn stack_snapshot(
    name: &str,
    size: egui::Vec2,
    dir: &Path,
    topics: &[(&str, Vec<(u64, V)>)],
    plots: &[&[&str]],
    playhead_ns: u64,
    clock: Clock,
) -> Harness<'static, Stack> {
    let recording = loaded(&bag(dir, topics));
    stack_snapshot_of(name, size, recording, plots, playhead_ns, clock)
}

/// [`stack_snapshot`] of a recording already loaded.
fn stack_snapshot_of(
    name: &str,
    size: egui::Vec2,
    recording: Recording,
    plots: &[&[&str]],
    playhead_ns: u64,
    clock: Clock,
) -> Harness<'static, Stack> {
    let layout = Layout {
        plots: plots
            .iter()
            .map(|p| PlotSpec {
                signals: p.iter().map(|t| signal(t)).collect(),
                ..PlotSpec::default()
            })
            .collect(),
        ..Layout::default()
    };
    let mut view = PlotView::default();
    view.clock = clock;
    let mut harness = Harness::builder().with_size(size).wgpu().build_ui_state(
        |ui, s: &mut Stack| {
            egui::CentralPanel::default().show(ui, |ui| {
                plot_stack_ui(
                    ui,
                    &s.recording,
                    &s.layout,
                    &mut s.view,
                    s.playhead_ns,
                    None,
                    &Cursors::default(),
                );
            });
        },
        Stack {
            recording,
            layout,
            view,
            playhead_ns,
        },
    );
    harness.run_steps(4);
    harness.snapshot(name);
    harness
}

fn ms(x: u64) -> u64 {
    x * 1_000_000
}

#[test]
fn a_sparse_spike_is_three_points_and_a_flat_line_not_a_triangle() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spike = vec![
        (0, V::F(0.0)),
        (ms(1), V::F(10.0)),
        (ms(2), V::F(0.0)),
        (ms(10_000), V::F(0.0)),
    ];
    stack_snapshot(
        "plot_sparse_spike",
        egui::vec2(700.0, 300.0),
        dir.path(),
        &[("spike", spike)],
        &[&["spike"]],
        T0 + ms(5_000),
        Clock::Relative,
    );
}

#[test]
fn a_silence_breaks_the_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sine: Vec<(u64, V)> = (0..700u64)
        .filter(|i| !(200..500).contains(i))
        .map(|i| (ms(i * 10), V::F((i as f64 * 0.05).sin())))
        .collect();
    stack_snapshot(
        "plot_silence",
        egui::vec2(700.0, 300.0),
        dir.path(),
        &[("sine", sine)],
        &[&["sine"]],
        T0 + ms(1_000),
        Clock::Relative,
    );
}

/// A bag of three one-second parts whose middle part is gone: the line stops at the end of the
/// first part and starts again at the second, with nothing drawn across the hole.
#[test]
fn a_missing_part_leaves_a_hole_not_a_band() {
    let dir = tempfile::tempdir().expect("tempdir");
    let noisy: Vec<(u64, V)> = (0..3_000u64)
        .map(|i| (ms(i), V::F((i as f64 * 0.3).sin() * 5.0 + (i % 7) as f64)))
        .collect();
    let path = bag_with(
        dir.path(),
        &[("noisy", noisy)],
        WriteOptions::new().part_max_duration_ns(Some(1_000_000_000)),
    );
    let mut parts: Vec<PathBuf> = std::fs::read_dir(&path)
        .expect("list bag")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "mcap"))
        .collect();
    parts.sort();
    assert_eq!(parts.len(), 3, "{parts:?}");
    std::fs::remove_file(&parts[1]).expect("remove the middle part");
    let recording = loaded(&path);
    assert!(
        recording
            .summary()
            .health
            .parts
            .iter()
            .any(|p| p.state == "missing"),
        "the hole is a missing part"
    );
    stack_snapshot_of(
        "plot_missing_part",
        egui::vec2(700.0, 300.0),
        recording,
        &[&["noisy"]],
        T0 + ms(500),
        Clock::Relative,
    );
}

#[test]
fn infinities_and_nan_are_marked_and_do_not_blank_the_plot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let values: Vec<(u64, V)> = (0..100u64)
        .map(|i| {
            let v = match i {
                30 => f64::INFINITY,
                50 => f64::NEG_INFINITY,
                70 => f64::NAN,
                _ => (i % 10) as f64 * 0.1,
            };
            (ms(i * 10), V::F(v))
        })
        .collect();
    let h = stack_snapshot(
        "plot_inf_nan",
        egui::vec2(700.0, 300.0),
        dir.path(),
        &[("odd", values)],
        &[&["odd"]],
        T0 + ms(300),
        Clock::Relative,
    );
    // The legend at the +inf sample says so.
    h.get_by_label("odd/value = inf");
}

#[test]
fn huge_and_tiny_values_read_short_and_share_one_x_mapping() {
    let dir = tempfile::tempdir().expect("tempdir");
    let huge: Vec<(u64, V)> = (0..50u64)
        .map(|i| (ms(i * 20), V::F(1e306 * (1.0 + i as f64 / 10.0))))
        .collect();
    let tiny: Vec<(u64, V)> = (0..50u64)
        .map(|i| (ms(i * 20), V::F(-1.25e-10 * (1.0 + (i % 5) as f64))))
        .collect();
    let h = stack_snapshot(
        "plot_huge_tiny",
        egui::vec2(700.0, 420.0),
        dir.path(),
        &[("huge", huge), ("tiny", tiny)],
        &[&["huge"], &["tiny"]],
        T0,
        Clock::Relative,
    );
    h.get_by_label("huge/value = 1e306");
    h.get_by_label("tiny/value = -1.25e-10");
    let frames = &h.state().view.frames;
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[0].x_range(), frames[1].x_range(), "{frames:?}");
}

#[test]
fn a_u64_past_2_to_the_53_is_shown_exactly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let counts = vec![
        (0, V::U(1)),
        (ms(100), V::U(12_345_678_901_234_567_890)),
        (ms(200), V::U(u64::MAX)),
        (ms(300), V::U(u64::MAX - 1)),
    ];
    let h = stack_snapshot(
        "plot_u64",
        egui::vec2(700.0, 300.0),
        dir.path(),
        &[("count", counts)],
        &[&["count"]],
        T0 + ms(150),
        Clock::Relative,
    );
    h.get_by_label("count/value = 12345678901234567890");
}

#[test]
fn a_sub_second_axis_has_distinct_labels() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fast: Vec<(u64, V)> = (0..400u64)
        .map(|i| (ms(i), V::F((i as f64 * 0.03).cos())))
        .collect();
    stack_snapshot(
        "plot_axis_sub_second",
        egui::vec2(700.0, 260.0),
        dir.path(),
        &[("fast", fast)],
        &[&["fast"]],
        T0 + ms(200),
        Clock::Relative,
    );
}

#[test]
fn a_three_hour_axis_reads_by_the_clock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let slow: Vec<(u64, V)> = (0..=1_080u64)
        .map(|i| (ms(i * 10_000), V::F((i as f64 * 0.01).sin() * 40.0 + 20.0)))
        .collect();
    stack_snapshot(
        "plot_axis_three_hours",
        egui::vec2(700.0, 260.0),
        dir.path(),
        &[("slow", slow)],
        &[&["slow"]],
        T0 + ms(5_400_000),
        Clock::Utc,
    );
}

#[test]
fn a_long_legend_in_an_800_px_window_stays_inside_the_plots_panel() {
    let dir = tempfile::tempdir().expect("tempdir");
    let long = "vehicle/powertrain/engine_control_unit/cylinder_bank_left/exhaust_gas_temperature";
    let other = "vehicle/chassis/suspension/front_left/damper_position_filtered";
    let samples = |k: f64| -> Vec<(u64, V)> {
        (0..300u64)
            .map(|i| (ms(i * 10), V::F((i as f64 * 0.02 * k).sin() * k)))
            .collect()
    };
    let path = bag(dir.path(), &[(long, samples(1.0)), (other, samples(3.0))]);
    let mut scope = Scope::new(Arc::new(|_| None));
    scope.open(path);
    let mut h = Harness::builder()
        .with_size(egui::vec2(800.0, 600.0))
        .wgpu()
        .build_ui_state(
            |ui, scope: &mut Scope| {
                scope.logic(ui.ctx());
                scope.ui(ui);
            },
            scope,
        );
    let start = Instant::now();
    while !h.state().recording().is_some_and(Recording::loaded) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "loading timed out"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    // The health panel says how long decoding took, which differs from run to run.
    h.state_mut().right = RightPanel::Inspector;
    *h.state_mut().layout_mut() = Layout {
        plots: vec![
            PlotSpec {
                signals: vec![signal(long), signal(other)],
                ..PlotSpec::default()
            },
            PlotSpec {
                signals: vec![signal(other)],
                ..PlotSpec::default()
            },
        ],
        ..Layout::default()
    };
    for _ in 0..20 {
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    h.snapshot("plot_long_legend_800");
    // "Remove plot" is there to click, and the plots end where their panel ends.
    h.get_all_by_label("Remove plot")
        .next()
        .expect("Remove plot");
}

/// The plots never grow past the width they are given, whatever their legend holds.
#[test]
fn plots_keep_to_the_width_they_are_given() {
    let dir = tempfile::tempdir().expect("tempdir");
    let long = "a/very/long/topic/name/that/goes/on/and/on/well/past/the/panel/edge/and/further";
    let samples: Vec<(u64, V)> = (0..100u64).map(|i| (ms(i), V::F(i as f64))).collect();
    let recording = loaded(&bag(dir.path(), &[(long, samples)]));
    let layout = Layout {
        plots: vec![PlotSpec {
            signals: vec![signal(long), signal(long)],
            ..PlotSpec::default()
        }],
        ..Layout::default()
    };
    let mut view = PlotView::default();
    let mut h = Harness::builder()
        .with_size(egui::vec2(900.0, 400.0))
        .build_ui(move |ui| {
            egui::Panel::right("side")
                .exact_size(500.0)
                .show(ui, |_| {});
            egui::CentralPanel::default().show(ui, |ui| {
                let panel = ui.max_rect();
                plot_stack_ui(
                    ui,
                    &recording,
                    &layout,
                    &mut view,
                    T0,
                    None,
                    &Cursors::default(),
                );
                for f in &view.frames {
                    assert!(f.right() <= panel.right() + 0.5, "{f:?} past {panel:?}");
                }
            });
        });
    h.run_steps(3);
}
