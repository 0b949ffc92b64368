//! The help overlay (F1, `?`, Help > Controls): every control of the app in one list. The
//! keys are the ones [`crate::ui::input`] reads; the mouse rows say what the panels do with
//! a click, a drag or the wheel (for the plots, what [`crate::ui::plots::CONTROLS`] says on
//! hover; a test holds the two to the same words).

/// Keys, as `(key, what it does)`.
pub const KEYS: &[(&str, &str)] = &[
    ("Ctrl+O", "Open a file (.mcap)"),
    ("Ctrl+Shift+O", "Open a folder (a bag or rosbag2 directory)"),
    ("Ctrl+S", "Save Recording: write the live capture as a bag"),
    ("Ctrl+Q", "Quit"),
    ("F1 or ?", "Show or hide this list"),
    ("Escape", "Close this list; else unfocus the focused plot"),
    (
        "Space",
        "Play or pause a recording; follow a live capture, or stop",
    ),
    (
        "Left / Right",
        "Step the playhead to the previous / next message of the plotted topics",
    ),
    ("+ / -", "Zoom time in / out around the playhead"),
    ("Home", "Show the whole recording"),
    (
        "A / B",
        "Put cursor A / B at the playhead (values, B - A and range statistics: Cursors tab)",
    ),
    ("X", "Remove both cursors"),
];

/// Mouse, as `(where and what, what it does)`.
pub const MOUSE: &[(&str, &str)] = &[
    (
        "Click a field in the tree",
        "Add it to the focused plot (marked >), or to a new plot when none is focused",
    ),
    (
        "Drag a field",
        "Onto a plot to add it there; onto the drop zone for a new plot",
    ),
    (
        "Click in a plot",
        "Move the playhead there and focus the plot",
    ),
    ("Drag in a plot", "Pan time"),
    (
        "Shift+click in a plot",
        "Put a cursor there (A, then B, then the nearer one)",
    ),
    ("Shift+drag in a plot", "Move the nearer cursor"),
    (
        "Wheel in a plot",
        "Zoom time around the pointer (Y follows what is visible)",
    ),
    ("Shift+wheel in a plot", "Pan time"),
    (
        "Ctrl+wheel in a plot",
        "Zoom Y (Y autoscale off until a double-click)",
    ),
    ("Double-click a plot", "Show the whole recording"),
    (
        "Right-click a legend entry",
        "Draw as lines or steps; or use it as the X axis (an XY plot)",
    ),
    ("Drag the timeline", "Scrub the playhead"),
    ("Drop a file or folder", "Open it"),
];

/// The overlay, while `open`; its close button clears `open`.
pub fn help_ui(ctx: &egui::Context, open: &mut bool) {
    egui::Window::new("Controls")
        .open(open)
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, egui::vec2(0.0, 0.0))
        .show(ctx, |ui| {
            controls_ui(ui, "Keys", "keys", KEYS);
            ui.add_space(8.0);
            controls_ui(ui, "Mouse", "mouse", MOUSE);
        });
}

fn controls_ui(ui: &mut egui::Ui, heading: &str, id: &str, rows: &[(&str, &str)]) {
    ui.strong(heading);
    egui::Grid::new(("scope-help", id))
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            for (control, what) in rows {
                ui.monospace(*control);
                ui.label(*what);
                ui.end_row();
            }
        });
}

#[cfg(test)]
mod tests {
    use super::MOUSE;
    use crate::ui::plots::CONTROLS;

    #[test]
    fn the_help_says_what_the_plots_hover_text_says_about_the_wheel_and_legend() {
        let hover = CONTROLS.to_lowercase();
        let rows: Vec<_> = MOUSE
            .iter()
            .filter(|(control, _)| {
                let control = control.to_lowercase();
                control.contains("wheel") || control.contains("legend")
            })
            .collect();
        assert_eq!(rows.len(), 4);
        for (control, what) in rows {
            assert!(
                hover.contains(&what.to_lowercase()),
                "{control}: {what:?} is not in the plots' hover text {CONTROLS:?}"
            );
        }
    }
}
