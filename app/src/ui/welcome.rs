//! What the window shows with nothing open.

/// The name, and how to open something (or that something is being opened).
pub fn welcome_ui(ui: &mut egui::Ui, opening: Option<&str>) {
    ui.vertical_centered(|ui| {
        ui.add_space(80.0);
        ui.heading("Redline Scope");
        if let Some(opening) = opening {
            ui.spinner();
            ui.label(opening);
        } else {
            ui.label(
                "File > Open (Ctrl+O a file, Ctrl+Shift+O a folder), or drop a bag directory \
                 or .mcap file here; File > Connect to capture live zenoh data.",
            );
            ui.label("F1 lists every control.");
        }
    });
}
