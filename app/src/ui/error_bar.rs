//! The error bar: the last error, with its causes, until dismissed.

use crate::error::Error;
use crate::ui::action::Action;
use crate::ui::theme;

/// The bar showing `error`.
pub fn error_bar_ui(ui: &mut egui::Ui, error: &Error, actions: &mut Vec<Action>) {
    ui.horizontal(|ui| {
        ui.colored_label(theme::ERROR, format!("Error: {}", error.report()));
        if ui.small_button("Dismiss").clicked() {
            actions.push(Action::DismissError);
        }
    });
}
