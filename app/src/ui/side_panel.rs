//! The panel on the right: Health, the Inspector or the Log, chosen by tabs.

use crate::data::inspector::Inspector;
use crate::data::layout::Layout;
use crate::recording::Recording;
use crate::ui::action::Action;
use crate::ui::health::health_ui;
use crate::ui::inspector::inspector_ui;
use crate::ui::log_view::{LogView, log_view_ui};

/// Which panel is on the right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RightPanel {
    /// Health.
    Health,
    /// Inspector.
    Inspector,
    /// The log view of a text topic.
    Log,
}

/// The tabs and the chosen panel. The inspector starts on the first plotted signal's topic.
pub fn side_panel_ui(
    ui: &mut egui::Ui,
    rec: &Recording,
    right: &mut RightPanel,
    inspector: Option<&mut Inspector>,
    layout: &Layout,
    log: &mut LogView,
    playhead_ns: u64,
) -> Option<Action> {
    ui.horizontal(|ui| {
        ui.selectable_value(right, RightPanel::Health, "Health");
        ui.selectable_value(right, RightPanel::Inspector, "Inspector");
        ui.selectable_value(right, RightPanel::Log, "Log");
    });
    ui.separator();
    match right {
        RightPanel::Health => {
            health_ui(ui, rec);
            None
        }
        RightPanel::Inspector => {
            let inspector = inspector?;
            if inspector.topic.is_none() {
                inspector.topic = layout
                    .signals()
                    .next()
                    .and_then(|s| rec.topic_index(&s.topic));
            }
            inspector_ui(ui, rec, inspector, playhead_ns)
        }
        RightPanel::Log => log_view_ui(ui, rec, log, playhead_ns),
    }
}
