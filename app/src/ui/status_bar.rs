//! The live capture's status bar: the link, the rate, how full the ring is, what was lost,
//! following, and the save in progress or the last one's result.

use crate::recording::Recording;
use crate::ui::format::format_bytes;
use crate::ui::theme;

/// The status bar of the live capture `rec`. `follow` is the Follow checkbox; `saving` the
/// running save's progress (messages written, total), else `notice` the last thing that finished.
pub fn status_bar_ui(
    ui: &mut egui::Ui,
    rec: &Recording,
    follow: &mut bool,
    saving: Option<(u64, u64)>,
    notice: Option<&str>,
) {
    let stats = rec.live_stats();
    ui.horizontal(|ui| {
        let (dot, text) = if !stats.connected {
            (theme::LINK_WAITING, "connecting".to_owned())
        } else if rec.capture().is_some_and(|c| c.options().simulate) {
            (theme::LINK_UP, "in-process".to_owned())
        } else {
            let color = if stats.links > 0 {
                theme::LINK_UP
            } else {
                theme::LINK_WAITING
            };
            (color, format!("{} links", stats.links))
        };
        let (rect, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
        ui.painter().circle_filled(rect.center(), 4.5, dot);
        ui.label(text);
        ui.separator();
        ui.label(format!("{:.0} msg/s", stats.rate_per_s));
        ui.separator();
        let fill = stats.held_bytes as f64 / stats.cap_bytes.max(1) as f64;
        ui.label(format!(
            "buffer {} / {} ({:.1}%)",
            format_bytes(stats.held_bytes as u64),
            format_bytes(stats.cap_bytes as u64),
            fill * 100.0
        ));
        ui.separator();
        if rec.capture().is_some_and(|c| c.options().spill) {
            ui.label(format!(
                "evicted {} (spilled {})",
                stats.evicted, stats.spilled
            ));
        } else {
            ui.label(format!("evicted {}", stats.evicted));
        }
        ui.separator();
        ui.label(format!("transport drops {}", stats.transport_dropped));
        ui.separator();
        ui.checkbox(follow, "Follow")
            .on_hover_text("Keep the newest data in view (space toggles)");
        if let Some((done, total)) = saving {
            ui.separator();
            ui.add(
                egui::ProgressBar::new(done as f32 / total.max(1) as f32)
                    .desired_width(140.0)
                    .text(format!("Saving {done}/{}", total.max(1))),
            );
        } else if let Some(notice) = notice {
            ui.separator();
            ui.label(notice);
        }
    });
}
