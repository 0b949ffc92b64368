//! The in-app path entry: where a path is typed when the desktop file dialog gave none back
//! (it was closed, or no desktop portal is there to show one), and File > Open Path. Opening
//! and saving never end in silence: either a path is typed, or the user says Cancel.

use std::path::PathBuf;

use crate::ui::action::Action;

/// What a path is asked for: by the desktop dialog, or typed here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickKind {
    /// A single `.mcap` file.
    File,
    /// A bag or rosbag2 directory.
    Folder,
    /// A new bag directory to save the live capture into.
    SaveBag,
    /// A layout file to write (File > Save Layout).
    SaveLayout,
    /// A layout file to read (File > Open Layout).
    OpenLayout,
    /// A CSV file to export the plotted signals to (File > Export Signals).
    ExportCsv,
    /// A second recording's `.mcap` file (File > Compare With > File).
    SecondFile,
    /// A second recording's directory (File > Compare With > Folder).
    SecondFolder,
}

/// The path entry's state, while it is shown.
#[derive(Debug, Clone)]
pub struct PathEntry {
    /// What the path is for.
    pub kind: PickKind,
    /// What is typed so far.
    pub text: String,
    /// Why it is shown (the dialog gave nothing back, or the user asked).
    pub reason: String,
}

impl PathEntry {
    /// A path entry for `kind`, saying `reason`.
    pub fn new(kind: PickKind, reason: impl Into<String>) -> Self {
        Self {
            kind,
            text: String::new(),
            reason: reason.into(),
        }
    }

    /// Shown after the desktop dialog for `kind` gave no path back.
    pub fn after_empty_dialog(kind: PickKind) -> Self {
        Self::new(
            kind,
            "The file dialog gave no path back: it was closed, or no desktop file dialog \
             (xdg portal) is available. Type the path instead:",
        )
    }

    /// The window's title and its confirm button.
    fn words(&self) -> (&'static str, &'static str) {
        match self.kind {
            PickKind::File => ("Open File", "Open"),
            PickKind::Folder => ("Open Folder", "Open"),
            PickKind::SaveBag => ("Save Recording", "Save"),
            PickKind::SaveLayout => ("Save Layout", "Save"),
            PickKind::OpenLayout => ("Open Layout", "Open"),
            PickKind::ExportCsv => ("Export Signals", "Export"),
            PickKind::SecondFile | PickKind::SecondFolder => ("Compare With", "Open"),
        }
    }
}

/// What the path entry asks for once confirmed or cancelled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathEntryOutcome {
    /// Still being typed.
    Open,
    /// Cancelled: close it.
    Cancelled,
    /// Confirmed: do this.
    Chosen(PathBuf),
}

/// The window. Enter or the confirm button take the path; Cancel or the window's cross close it.
pub fn path_entry_ui(ctx: &egui::Context, entry: &mut PathEntry) -> PathEntryOutcome {
    let (title, confirm) = entry.words();
    let mut open = true;
    let mut outcome = PathEntryOutcome::Open;
    egui::Window::new(title)
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_TOP, egui::vec2(0.0, 80.0))
        .show(ctx, |ui| {
            ui.set_max_width(460.0);
            ui.label(&entry.reason);
            let typed = ui.horizontal(|ui| {
                let label = ui.label("Path");
                let edit = egui::TextEdit::singleline(&mut entry.text)
                    .hint_text(match entry.kind {
                        PickKind::File | PickKind::SecondFile => "/path/to/recording.mcap",
                        PickKind::Folder | PickKind::SecondFolder => "/path/to/bag",
                        PickKind::SaveBag => "/path/to/new-bag",
                        PickKind::SaveLayout | PickKind::OpenLayout => "/path/to/layout.yaml",
                        PickKind::ExportCsv => "/path/to/signals.csv",
                    })
                    .desired_width(360.0);
                let response = ui.add(edit).labelled_by(label.id);
                response.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter))
            });
            let path = entry.text.trim();
            ui.horizontal(|ui| {
                let chosen = ui
                    .add_enabled(!path.is_empty(), egui::Button::new(confirm))
                    .clicked();
                if (chosen || typed.inner) && !path.is_empty() {
                    outcome = PathEntryOutcome::Chosen(PathBuf::from(path));
                }
                if ui.button("Cancel").clicked() {
                    outcome = PathEntryOutcome::Cancelled;
                }
            });
        });
    if !open {
        outcome = PathEntryOutcome::Cancelled;
    }
    outcome
}

impl PathEntryOutcome {
    /// The action a confirmed entry for `kind` asks for.
    pub fn into_action(self, kind: PickKind) -> Option<Action> {
        match self {
            PathEntryOutcome::Open => None,
            PathEntryOutcome::Cancelled => Some(Action::ClosePathEntry),
            PathEntryOutcome::Chosen(path) => Some(match kind {
                PickKind::File | PickKind::Folder => Action::Open(path),
                PickKind::SaveBag => Action::SaveRecordingTo(path),
                PickKind::SaveLayout => Action::SaveLayoutTo(path),
                PickKind::OpenLayout => Action::OpenLayoutFrom(path),
                PickKind::ExportCsv => Action::ExportSignalsTo(path),
                PickKind::SecondFile | PickKind::SecondFolder => Action::OpenSecond(path),
            }),
        }
    }
}
