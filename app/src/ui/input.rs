//! Keys and dropped files, as [`Action`]s. Nothing is read while a text field has the
//! keyboard.

use std::path::PathBuf;

use egui::Key;

use crate::ui::action::Action;
use crate::ui::timeline::Step;

/// What this frame's keys and dropped files ask for; `live` when a live capture is shown,
/// `open` when anything is.
///
/// Space plays or pauses a recording and toggles following a live capture; left and right
/// step; `+`, `-` zoom around the playhead and Home shows everything. Moving the view of a live
/// capture stops following it.
pub fn input_actions(ctx: &egui::Context, live: bool, open: bool) -> Vec<Action> {
    let mut actions = Vec::new();
    let dropped: Option<PathBuf> =
        ctx.input(|i| i.raw.dropped_files.first().map(|f| f.path().to_path_buf()));
    if let Some(path) = dropped {
        actions.push(Action::Open(path));
    }
    if ctx.egui_wants_keyboard_input() {
        return actions;
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
