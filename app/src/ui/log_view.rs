//! The log view: a text topic (log messages, strings, DiagnosticLog, rosout) as lines, up to
//! the playhead while following it, filtered by what is typed. The lines are read by the
//! log worker ([`LogLines`]); choosing a topic asks the app to start one.

use egui::RichText;

use crate::data::log_lines::{LogLines, MAX_LINES, looks_like_text};
use crate::recording::Recording;
use crate::ui::action::Action;
use crate::ui::format::format_relative;
use crate::ui::theme;

/// The log view's state (the lines live in [`LogView::lines`], filled by their worker).
#[derive(Debug)]
pub struct LogView {
    /// The topic chosen.
    pub topic: Option<usize>,
    /// Only lines containing this (any case) are shown.
    pub filter: String,
    /// Show lines up to the playhead only, the newest at the bottom.
    pub follow_playhead: bool,
    /// The chosen topic's lines, once its worker is started.
    pub lines: Option<LogLines>,
    /// Indexes of the lines matching `filter`, and what they were computed for.
    matches: Vec<usize>,
    matches_key: Option<(String, usize, usize)>,
}

impl Default for LogView {
    fn default() -> Self {
        Self {
            topic: None,
            filter: String::new(),
            follow_playhead: true,
            lines: None,
            matches: Vec::new(),
            matches_key: None,
        }
    }
}

impl LogView {
    /// Forgets the topic and its lines (a new recording).
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    fn update_matches(&mut self) {
        let Some(lines) = &self.lines else {
            self.matches.clear();
            return;
        };
        let key = (self.filter.clone(), lines.topic, lines.lines.len());
        if self.matches_key.as_ref() == Some(&key) {
            return;
        }
        let needle = self.filter.to_lowercase();
        self.matches = lines
            .lines
            .iter()
            .enumerate()
            .filter(|(_, l)| needle.is_empty() || l.text.to_lowercase().contains(&needle))
            .map(|(i, _)| i)
            .collect();
        self.matches_key = Some(key);
    }
}

/// The log view. Returns a topic whose lines are to be read, or a line's time to seek to.
pub fn log_view_ui(
    ui: &mut egui::Ui,
    recording: &Recording,
    view: &mut LogView,
    playhead_ns: u64,
) -> Option<Action> {
    let topics = &recording.summary().topics;
    if view.topic.is_none() {
        view.topic = topics.iter().position(looks_like_text);
    }
    let current = view
        .topic
        .and_then(|i| topics.get(i))
        .map_or("choose a topic", |t| t.topic.as_str());
    egui::ComboBox::from_label("Log topic")
        .selected_text(current)
        .show_ui(ui, |ui| {
            for (i, t) in topics.iter().enumerate() {
                ui.selectable_value(&mut view.topic, Some(i), &t.topic);
            }
        });
    let topic = view.topic?;
    if view.lines.as_ref().is_none_or(|l| l.topic != topic) {
        ui.spinner();
        return Some(Action::ShowLog(topic));
    }
    ui.horizontal(|ui| {
        let label = ui.label("Filter lines");
        ui.add(egui::TextEdit::singleline(&mut view.filter).hint_text("text in the line"))
            .labelled_by(label.id);
    });
    ui.checkbox(&mut view.follow_playhead, "Follow playhead");
    view.update_matches();
    let lines = view.lines.as_ref()?;
    let shown_end = if view.follow_playhead {
        view.matches.partition_point(|&i| {
            lines
                .lines
                .get(i)
                .is_some_and(|line| line.t_ns <= playhead_ns)
        })
    } else {
        view.matches.len()
    };
    let status = if !lines.done {
        format!("reading... {} lines", lines.lines.len())
    } else if lines.cut {
        format!("the first {MAX_LINES} lines only")
    } else {
        format!("{} lines", lines.lines.len())
    };
    ui.label(
        RichText::new(format!(
            "{shown_end} shown of {} matching; {status}",
            view.matches.len()
        ))
        .small()
        .weak(),
    );
    if let Some(e) = &lines.error {
        ui.colored_label(theme::ERROR, e.report());
    }
    let mut seek = None;
    let t0 = recording.t0_ns();
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace);
    egui::ScrollArea::both()
        .auto_shrink([false, false])
        .stick_to_bottom(view.follow_playhead)
        .show_rows(ui, row_height, shown_end, |ui, rows| {
            for &i in view.matches.get(rows).unwrap_or(&[]) {
                let Some(line) = lines.lines.get(i) else {
                    continue;
                };
                let text = format!("{}  {}", format_relative(line.t_ns, t0), line.text);
                let response = ui
                    .add(
                        egui::Label::new(RichText::new(text).monospace())
                            .extend()
                            .sense(egui::Sense::click()),
                    )
                    .on_hover_text("Click: move the playhead here");
                if response.clicked() {
                    seek = Some(line.t_ns);
                }
            }
        });
    seek.map(Action::Seek)
}
