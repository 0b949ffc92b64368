//! The panel on the right: Health, the Inspector, the Log or the Cursors, chosen by tabs.

use crate::data::cursors::Cursors;
use crate::data::inspector::Inspector;
use crate::data::layout::{Layout, SignalRef};
use crate::data::range_stats::RangeIndexes;
use crate::recording::Recording;
use crate::ui::action::Action;
use crate::ui::cursors::cursor_panel_ui;
use crate::ui::health::health_ui;
use crate::ui::inspector::inspector_ui;
use crate::ui::log_view::{LogView, log_view_ui};
use crate::ui::plots::PlotView;

/// Which panel is on the right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RightPanel {
    /// Health.
    Health,
    /// Inspector.
    Inspector,
    /// The log view of a text topic.
    Log,
    /// The cursors' readings and range statistics.
    Cursors,
}

/// What the tabs keep between frames: the inspector, the log view, and what the Cursors tab
/// reads and keeps (the cursors, the plots' draw modes and gap thresholds, since readings
/// follow what the plots draw, and the range summaries).
pub struct SideState<'a> {
    /// The inspector (`None` while nothing is open).
    pub inspector: Option<&'a mut Inspector>,
    /// The log view.
    pub log: &'a mut LogView,
    /// Where the cursors are.
    pub cursors: &'a Cursors,
    /// The plots' state.
    pub view: &'a mut PlotView,
    /// Range summaries of the plotted signals.
    pub indexes: &'a mut RangeIndexes<SignalRef>,
}

/// The tabs and the chosen panel. The inspector starts on the first plotted signal's topic.
pub fn side_panel_ui(
    ui: &mut egui::Ui,
    rec: &Recording,
    right: &mut RightPanel,
    layout: &Layout,
    state: SideState<'_>,
    playhead_ns: u64,
) -> Option<Action> {
    ui.horizontal(|ui| {
        ui.selectable_value(right, RightPanel::Health, "Health");
        ui.selectable_value(right, RightPanel::Inspector, "Inspector");
        ui.selectable_value(right, RightPanel::Log, "Log");
        ui.selectable_value(right, RightPanel::Cursors, "Cursors");
    });
    ui.separator();
    match right {
        RightPanel::Health => {
            health_ui(ui, rec);
            None
        }
        RightPanel::Inspector => {
            let inspector = state.inspector?;
            if inspector.topic.is_none() {
                inspector.topic = layout
                    .signals()
                    .next()
                    .and_then(|s| rec.topic_index(&s.topic));
            }
            inspector_ui(ui, rec, inspector, playhead_ns)
        }
        RightPanel::Log => log_view_ui(ui, rec, state.log, playhead_ns),
        RightPanel::Cursors => {
            cursor_panel_ui(ui, rec, layout, state.cursors, state.view, state.indexes)
        }
    }
}
