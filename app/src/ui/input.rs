//! Keys and dropped files, as [`Action`]s. Nothing is read while a text field has the
//! keyboard.

use std::path::PathBuf;

use egui::{Key, KeyboardShortcut, Modifiers};

use crate::data::cursors::Which;
use crate::ui::action::Action;
use crate::ui::timeline::Step;

/// Ctrl+O (Cmd+O on a Mac): File > Open File.
pub const OPEN_FILE: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::O);

/// Ctrl+Shift+O: File > Open Folder (a bag or rosbag2 directory).
pub const OPEN_FOLDER: KeyboardShortcut = KeyboardShortcut::new(
    Modifiers {
        shift: true,
        ..Modifiers::COMMAND
    },
    Key::O,
);

/// Ctrl+S: File > Save Recording.
pub const SAVE_RECORDING: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::S);

/// Ctrl+Q: quit.
pub const QUIT: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::Q);

/// What this frame's keys and dropped files ask for; `live` when a live capture is shown,
/// `open` when anything is.
///
/// The shortcuts ([`OPEN_FILE`], [`OPEN_FOLDER`], [`SAVE_RECORDING`], [`QUIT`]) and F1 (help)
/// work even while a text field has the keyboard. Otherwise: Space plays or pauses a recording
/// and toggles following a live capture; left and right step; `+`, `-` zoom around the
/// playhead and Home shows everything; `A` and `B` put a cursor at the playhead and `X`
/// removes both; `?` shows the help; Escape closes the help, or else unfocuses the focused
/// plot. Moving the view of a live capture stops following it. Every
/// control is listed in [`crate::ui::help`].
pub fn input_actions(ctx: &egui::Context, live: bool, open: bool) -> Vec<Action> {
    let mut actions = Vec::new();
    let dropped: Option<PathBuf> =
        ctx.input(|i| i.raw.dropped_files.first().map(|f| f.path().to_path_buf()));
    if let Some(path) = dropped {
        actions.push(Action::Open(path));
    }
    // Ctrl+Shift+O before Ctrl+O: a shortcut without Shift also matches with it.
    let shortcuts = [
        (OPEN_FOLDER, Action::PickFolder),
        (OPEN_FILE, Action::PickFile),
        (SAVE_RECORDING, Action::SaveRecording),
        (QUIT, Action::Quit),
    ];
    for (shortcut, action) in shortcuts {
        if ctx.input_mut(|i| i.consume_shortcut(&shortcut)) {
            actions.push(action);
        }
    }
    if ctx.input(|i| i.key_pressed(Key::F1)) {
        actions.push(Action::ToggleHelp);
    }
    if ctx.egui_wants_keyboard_input() {
        return actions;
    }
    let (question, escape) =
        ctx.input(|i| (i.key_pressed(Key::Questionmark), i.key_pressed(Key::Escape)));
    if question {
        actions.push(Action::ToggleHelp);
    }
    if escape {
        actions.push(Action::Escape);
    }
    let (space, left, right, plus, minus, home) = ctx.input(|i| {
        (
            i.key_pressed(Key::Space),
            i.key_pressed(Key::ArrowLeft),
            i.key_pressed(Key::ArrowRight),
            i.key_pressed(Key::Plus) || i.key_pressed(Key::Equals),
            i.key_pressed(Key::Minus),
            i.key_pressed(Key::Home),
        )
    });
    if space && live {
        actions.push(Action::ToggleFollowing);
    } else if space {
        actions.push(Action::TogglePlaying);
    }
    if live && (left || right || plus || minus) {
        actions.push(Action::StopFollowing);
    }
    if left {
        actions.push(Action::Step(Step::Back));
    }
    if right {
        actions.push(Action::Step(Step::Forward));
    }
    if open {
        let (a, b, x) = ctx.input(|i| {
            (
                i.key_pressed(Key::A),
                i.key_pressed(Key::B),
                i.key_pressed(Key::X),
            )
        });
        if a {
            actions.push(Action::CursorAtPlayhead(Which::A));
        }
        if b {
            actions.push(Action::CursorAtPlayhead(Which::B));
        }
        if x {
            actions.push(Action::ClearCursors);
        }
        if plus {
            actions.push(Action::ZoomIn);
        }
        if minus {
            actions.push(Action::ZoomOut);
        }
        if home {
            actions.push(Action::ResetView);
        }
    }
    actions
}
