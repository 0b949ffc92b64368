//! The menu bar: File and View, then what is open and how far it has loaded.

use std::path::PathBuf;

use egui::RichText;

use crate::recording::Recording;
use crate::ui::action::Action;
use crate::ui::input::{OPEN_FILE, OPEN_FOLDER, QUIT, SAVE_RECORDING};
use crate::ui::path_entry::PickKind;

/// What the menu bar shows besides its menus.
#[derive(Debug, Clone, Copy)]
pub struct MenuState<'a> {
    /// The open recording or capture.
    pub recording: Option<&'a Recording>,
    /// Recent recordings, most recent first.
    pub recent: &'a [String],
    /// Recent layout files, most recent first.
    pub recent_layouts: &'a [String],
    /// An export runs: how far it has got (0 to 1).
    pub exporting: Option<f32>,
    /// A Save Recording is running (another cannot start).
    pub saving: bool,
    /// A recording is being opened: what to say about it ("Opening...", and what it does).
    pub opening: Option<&'a str>,
}

/// The menu bar.
pub fn menu_bar_ui(ui: &mut egui::Ui, state: MenuState<'_>, actions: &mut Vec<Action>) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| file_menu_ui(ui, state, actions));
        ui.menu_button("View", |ui| view_menu_ui(ui, actions));
        ui.menu_button("Help", |ui| {
            let clicked = ui.button("Controls").on_hover_text("F1 or ?").clicked();
            choose(ui, clicked, Action::ToggleHelp, actions);
        });
        ui.separator();
        if let Some(rec) = state.recording {
            loaded_ui(ui, rec, actions);
        }
        if let Some(opening) = state.opening {
            ui.spinner();
            ui.label(opening);
        }
        if let Some(done) = state.exporting {
            ui.add(
                egui::ProgressBar::new(done)
                    .desired_width(140.0)
                    .text(format!("Exporting {:.0}%", done * 100.0)),
            );
        }
    });
}

/// Adds `action` and closes the menu when `clicked`.
fn choose(ui: &mut egui::Ui, clicked: bool, action: Action, actions: &mut Vec<Action>) {
    if clicked {
        actions.push(action);
        ui.close();
    }
}

/// A menu button with its shortcut written beside it (not inside: the button keeps its label).
fn item_ui(
    ui: &mut egui::Ui,
    text: &str,
    shortcut: &egui::KeyboardShortcut,
    enabled: bool,
) -> bool {
    let shortcut = ui.ctx().format_shortcut(shortcut);
    ui.horizontal(|ui| {
        let clicked = ui.add_enabled(enabled, egui::Button::new(text)).clicked();
        ui.label(RichText::new(shortcut).weak());
        clicked
    })
    .inner
}

fn file_menu_ui(ui: &mut egui::Ui, state: MenuState<'_>, actions: &mut Vec<Action>) {
    let clicked = item_ui(ui, "Open File...", &OPEN_FILE, true);
    choose(ui, clicked, Action::PickFile, actions);
    let clicked = item_ui(ui, "Open Folder...", &OPEN_FOLDER, true);
    choose(ui, clicked, Action::PickFolder, actions);
    let clicked = ui.button("Open Path...").clicked();
    choose(ui, clicked, Action::ShowPathEntry, actions);
    ui.add_enabled_ui(state.recording.is_some(), |ui| {
        ui.menu_button("Compare With", |ui| {
            let clicked = ui
                .button("File...")
                .on_hover_text("Open an .mcap file beside this recording, its topics as B:/topic")
                .clicked();
            choose(
                ui,
                clicked,
                Action::PickSecond(PickKind::SecondFile),
                actions,
            );
            let clicked = ui
                .button("Folder...")
                .on_hover_text("Open a bag or rosbag2 directory beside this recording")
                .clicked();
            choose(
                ui,
                clicked,
                Action::PickSecond(PickKind::SecondFolder),
                actions,
            );
            let clicked = ui.button("Path...").clicked();
            choose(ui, clicked, Action::ShowSecondPathEntry, actions);
        });
    });
    ui.menu_button("Open Recent", |ui| {
        if state.recent.is_empty() {
            ui.label("No recent recordings");
        }
        let mut chosen = None;
        for path in state.recent {
            if ui.button(path).clicked() {
                chosen = Some(PathBuf::from(path));
            }
        }
        if let Some(path) = chosen {
            choose(ui, true, Action::Open(path), actions);
        }
    });
    ui.separator();
    let clicked = ui
        .add_enabled(
            state.recording.is_some() && state.exporting.is_none(),
            egui::Button::new("Export Signals..."),
        )
        .on_hover_text(
            "The plotted signals between the cursors (the whole recording unless both are \
             placed), on one time column, each signal's last value held: CSV, or Parquet when \
             the file name ends in .parquet",
        )
        .clicked();
    choose(ui, clicked, Action::ExportSignals, actions);
    ui.separator();
    let clicked = ui.button("Save Layout...").clicked();
    choose(ui, clicked, Action::SaveLayout, actions);
    let clicked = ui.button("Open Layout...").clicked();
    choose(ui, clicked, Action::OpenLayout, actions);
    ui.menu_button("Recent Layouts", |ui| {
        if state.recent_layouts.is_empty() {
            ui.label("No recent layouts");
        }
        let mut chosen = None;
        for path in state.recent_layouts {
            if ui.button(path).clicked() {
                chosen = Some(PathBuf::from(path));
            }
        }
        if let Some(path) = chosen {
            choose(ui, true, Action::OpenLayoutFrom(path), actions);
        }
    });
    ui.separator();
    let clicked = ui.button("Connect...").clicked();
    choose(ui, clicked, Action::ShowConnectDialog, actions);
    let live = state.recording.is_some_and(|r| r.capture().is_some());
    let clicked = item_ui(
        ui,
        "Save Recording...",
        &SAVE_RECORDING,
        live && !state.saving,
    );
    choose(ui, clicked, Action::SaveRecording, actions);
    ui.separator();
    let clicked = ui.button("Live Demo").clicked();
    choose(ui, clicked, Action::LiveDemo, actions);
    let clicked = ui.button("Demo Recording").clicked();
    choose(ui, clicked, Action::DemoRecording, actions);
    let clicked = ui.button("Close").clicked();
    choose(ui, clicked, Action::Close, actions);
    ui.separator();
    let clicked = item_ui(ui, "Quit", &QUIT, true);
    choose(ui, clicked, Action::Quit, actions);
}

fn view_menu_ui(ui: &mut egui::Ui, actions: &mut Vec<Action>) {
    let clicked = ui.button("Reset view").clicked();
    choose(ui, clicked, Action::ResetView, actions);
    let clicked = ui.button("Default layout").clicked();
    choose(ui, clicked, Action::DefaultLayout, actions);
    let clicked = ui.button("Clear plots").clicked();
    choose(ui, clicked, Action::ClearPlots, actions);
}

/// The recording's name, then its size once loaded, or its progress and Cancel.
fn loaded_ui(ui: &mut egui::Ui, rec: &Recording, actions: &mut Vec<Action>) {
    ui.label(RichText::new(&rec.summary().name).strong());
    if rec.loaded() {
        let samples: usize = (0..rec.topics.len())
            .filter_map(|i| rec.data(i))
            .map(|d| d.sample_count())
            .sum();
        ui.label(
            RichText::new(format!(
                "{} messages, {samples} samples",
                rec.summary().health.message_count
            ))
            .weak(),
        );
    } else {
        ui.add(
            egui::ProgressBar::new(rec.progress())
                .desired_width(160.0)
                .show_percentage()
                .text(format!("Loading {:.0}%", rec.progress() * 100.0)),
        );
        if ui.button("Cancel").clicked() {
            actions.push(Action::Close);
        }
    }
}
