//! Image snapshots of the panels added for issue 20: the path entry shown when no file dialog
//! answers, the help overlay, the inspector's raw view of an undecodable message, and the log
//! view. Rendered as `snapshots.rs` does (wgpu on a software rasterizer); regenerate with
//! `UPDATE_SNAPSHOTS=1 cargo test -p scope --test panel_snapshots` and look at the PNGs.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scope::data::inspector::Inspector;
use scope::data::log_lines::LogLines;
use scope::data::source::RecordingSource;
use scope::recording::Recording;
use scope::ui::action::Action;
use scope::ui::inspector::inspector_ui;
use scope::ui::log_view::{LogView, log_view_ui};
use scope::ui::path_entry::{PathEntry, PickKind, path_entry_ui};

fn snapshot_ctx(name: &str, size: egui::Vec2, mut ui: impl FnMut(&egui::Context)) {
    let mut harness = Harness::builder()
        .with_size(size)
        .wgpu()
        .build_ui(|u| ui(u.ctx()));
    harness.run();
    harness.snapshot(name);
}

#[test]
fn path_entry_after_an_empty_file_dialog() {
    let mut entry = PathEntry::after_empty_dialog(PickKind::Folder);
    entry.text = "/data/drives/2026-06-01".into();
    snapshot_ctx("path_entry", egui::vec2(560.0, 240.0), |ctx| {
        path_entry_ui(ctx, &mut entry);
    });
}

#[test]
fn help_overlay_lists_every_control() {
    let mut open = true;
    snapshot_ctx("help_overlay", egui::vec2(720.0, 560.0), |ctx| {
        scope::ui::help::help_ui(ctx, &mut open);
    });
}

/// The mixed bag of `common`, loaded.
fn loaded_mixed(dir: &std::path::Path) -> Recording {
    let source = RecordingSource::open(&common::mixed_bag(dir)).expect("open");
    let mut recording = Recording::start(Arc::new(source), Arc::new(|| {}));
    let start = Instant::now();
    while !recording.loaded() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "loading timed out"
        );
        recording.poll(Duration::from_millis(20));
    }
    recording.load_time = None;
    recording
}

#[test]
fn inspector_raw_view_of_a_message_that_does_not_decode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let recording = loaded_mixed(dir.path());
    let topic = recording.topic_index("bad/bytes").expect("topic");
    let mut inspector = Inspector::start(Arc::clone(&recording.source), Arc::new(|| {}));
    inspector.topic = Some(topic);
    let playhead_ns = common::T0 + 500_000_000;
    let mut harness = Harness::builder()
        .with_size(egui::vec2(420.0, 360.0))
        .wgpu()
        .build_ui(|ui| {
            inspector.poll();
            if let Some(Action::Inspect { topic, t_ns }) =
                inspector_ui(ui, &recording, &mut inspector, playhead_ns)
                && let Some(info) = recording.summary().topics.get(topic)
            {
                inspector.request(topic, t_ns, info);
            }
        });
    let start = Instant::now();
    while harness.query_by_label_contains("length 17 bytes").is_none() {
        assert!(start.elapsed() < Duration::from_secs(30), "no raw view");
        harness.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    harness.run();
    harness.snapshot("inspector_raw_view");
}

#[test]
fn log_view_following_the_playhead() {
    let dir = tempfile::tempdir().expect("tempdir");
    let recording = loaded_mixed(dir.path());
    let mut view = LogView::default();
    let playhead_ns = common::T0 + 1_000_000_002;
    let mut harness = Harness::builder()
        .with_size(egui::vec2(520.0, 300.0))
        .wgpu()
        .build_ui(|ui| {
            if let Some(lines) = &mut view.lines {
                lines.poll();
            }
            if let Some(Action::ShowLog(topic)) =
                log_view_ui(ui, &recording, &mut view, playhead_ns)
                && let Some(info) = recording.summary().topics.get(topic)
            {
                view.lines = Some(LogLines::start(
                    Arc::clone(&recording.source),
                    topic,
                    info.clone(),
                    Arc::new(|| {}),
                ));
            }
        });
    let start = Instant::now();
    while harness
        .query_by_label("11 shown of 20 matching; 20 lines")
        .is_none()
    {
        assert!(start.elapsed() < Duration::from_secs(30), "no log lines");
        harness.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    harness.run();
    harness.snapshot("log_view");
}
