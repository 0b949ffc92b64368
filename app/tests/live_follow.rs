//! Zooming while following a live capture (issue 20, item 6): the wheel over a plot zooms
//! time, which pauses following and says so in the status bar; Play does nothing live (it is
//! disabled: the plots follow the newest data instead).

use std::sync::Arc;
use std::time::{Duration, Instant};

use egui::{Event, Modifiers, MouseWheelSource, MouseWheelUnit, TouchPhase};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scope::Scope;

#[test]
fn a_wheel_zoom_while_following_pauses_following_and_says_so() {
    let mut scope = Scope::new(Arc::new(|_| None));
    scope.open_demo();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_ui_state(
            |ui, scope: &mut Scope| {
                scope.logic(ui.ctx());
                scope.ui(ui);
            },
            scope,
        );
    let start = Instant::now();
    let enough = |s: &Scope| {
        s.recording()
            .is_some_and(|r| r.summary().health.message_count > 500 && !s.layout().plots.is_empty())
    };
    while !enough(h.state()) {
        assert!(start.elapsed() < Duration::from_secs(60), "no live data");
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(h.state().follow);
    // Play is disabled live: clicking it starts nothing.
    h.get_by_label("Play").click();
    h.run_steps(2);
    assert!(!h.state().playback.playing);
    assert!(h.state().follow);
    // The wheel over the first plot (the middle of the central panel, near its top).
    h.hover_at(egui::pos2(600.0, 140.0));
    h.run_steps(2);
    h.event(Event::MouseWheel {
        unit: MouseWheelUnit::Point,
        delta: egui::vec2(0.0, 150.0),
        phase: TouchPhase::Move,
        source: MouseWheelSource::Unknown,
        modifiers: Modifiers::NONE,
    });
    for _ in 0..30 {
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!h.state().follow, "a zoom while following pauses it");
    assert!(
        h.state()
            .notice
            .as_deref()
            .is_some_and(|n| n.starts_with("Following paused")),
        "{:?}",
        h.state().notice
    );
    h.get_by_label_contains("Following paused");
}
