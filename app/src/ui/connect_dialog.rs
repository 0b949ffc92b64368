//! File > Connect: where to capture live data from, and how much of it to keep.

use crate::live::LiveOptions;

/// The connect dialog's fields.
#[derive(Debug, Clone)]
pub struct ConnectForm {
    /// Shown.
    pub open: bool,
    /// Endpoint to connect to.
    pub endpoint: String,
    /// Key expression to capture.
    pub key_expr: String,
    /// Capture cap, MiB.
    pub cap_mib: u32,
    /// Keep what the cap evicts in a temporary bag on disk.
    pub spill: bool,
}

impl Default for ConnectForm {
    fn default() -> Self {
        Self {
            open: false,
            endpoint: "tcp/127.0.0.1:7447".into(),
            key_expr: "**".into(),
            cap_mib: 1024,
            spill: false,
        }
    }
}

impl ConnectForm {
    /// The capture the form describes.
    pub fn options(&self) -> LiveOptions {
        let mut options = LiveOptions::connect(self.endpoint.trim(), self.key_expr.trim());
        options.cap_bytes = (self.cap_mib as usize) << 20;
        options.spill = self.spill;
        options
    }
}

/// The dialog, while `form.open`. Returns the capture to start when Connect is pressed (and
/// closes the dialog).
pub fn connect_dialog_ui(ctx: &egui::Context, form: &mut ConnectForm) -> Option<LiveOptions> {
    if !form.open {
        return None;
    }
    let mut open = true;
    let mut connect = false;
    egui::Window::new("Connect")
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .show(ctx, |ui| {
            egui::Grid::new("connect-grid")
                .num_columns(2)
                .show(ui, |ui| {
                    ui.label("Endpoint");
                    ui.text_edit_singleline(&mut form.endpoint)
                        .on_hover_text("A zenoh endpoint: tcp/HOST:PORT, udp/HOST:PORT");
                    ui.end_row();
                    ui.label("Key expression");
                    ui.text_edit_singleline(&mut form.key_expr)
                        .on_hover_text("What to capture, e.g. car/** (** is everything)");
                    ui.end_row();
                    ui.label("Capture cap (MiB)");
                    ui.add(egui::DragValue::new(&mut form.cap_mib).range(16..=65_536));
                    ui.end_row();
                    ui.label("");
                    ui.checkbox(&mut form.spill, "Spill evicted messages to disk")
                        .on_hover_text(
                            "Keep what the cap evicts in a temporary bag, so Save Recording \
                             includes it",
                        );
                    ui.end_row();
                });
            connect = ui.button("Connect").clicked();
        });
    form.open = open && !connect;
    connect.then(|| form.options())
}
