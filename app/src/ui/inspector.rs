//! The inspector panel: the whole decoded message of a chosen topic at the playhead, as a
//! tree. The message is read and decoded by the inspector's worker ([`Inspector`]).

use decode::Value;

use crate::data::inspector::Inspector;
use crate::recording::Recording;
use crate::ui::action::Action;
use crate::ui::format::{format_relative, format_value};
use crate::ui::theme;

fn value_ui(ui: &mut egui::Ui, name: &str, value: &Value, depth: usize) {
    let scalar = |ui: &mut egui::Ui, text: String| {
        ui.horizontal(|ui| {
            ui.label(egui::RichText::new(name).weak());
            ui.monospace(text);
        });
    };
    match value {
        Value::Null => scalar(ui, "null".into()),
        Value::Void => scalar(ui, "void".into()),
        Value::Bool(b) => scalar(ui, b.to_string()),
        Value::Int(v) => scalar(ui, v.to_string()),
        Value::UInt(v) => scalar(ui, v.to_string()),
        Value::Float(v) => scalar(ui, format_value(*v)),
        Value::Text(s) => scalar(ui, format!("{s:?}")),
        Value::Data(d) => scalar(ui, format!("{} bytes", d.len())),
        Value::Enum { value, name: n } => {
            scalar(
                ui,
                n.as_ref()
                    .map_or_else(|| value.to_string(), |n| format!("{n} ({value})")),
            );
        }
        Value::Opaque(what) => scalar(ui, (*what).to_owned()),
        Value::Struct(fields) => {
            egui::CollapsingHeader::new(name)
                .id_salt((name, depth, fields.len()))
                .default_open(depth < 2)
                .show(ui, |ui| {
                    for (n, v) in fields {
                        value_ui(ui, n, v, depth + 1);
                    }
                });
        }
        Value::List(items) => {
            egui::CollapsingHeader::new(format!("{name} [{}]", items.len()))
                .id_salt((name, depth, items.len()))
                .default_open(depth < 2 && items.len() <= 8)
                .show(ui, |ui| {
                    for (i, v) in items.iter().take(200).enumerate() {
                        value_ui(ui, &format!("[{i}]"), v, depth + 1);
                    }
                    if items.len() > 200 {
                        ui.label(format!("... {} more", items.len() - 200));
                    }
                });
        }
    }
}

/// The inspector panel: a topic to choose and its message at the playhead. Returns the
/// message to ask the worker for (it answers in `Scope::logic`).
pub fn inspector_ui(
    ui: &mut egui::Ui,
    recording: &Recording,
    inspector: &mut Inspector,
    playhead_ns: u64,
) -> Option<Action> {
    let topics = &recording.summary().topics;
    let current = inspector
        .topic
        .and_then(|i| topics.get(i))
        .map_or("choose a topic", |t| t.topic.as_str());
    egui::ComboBox::from_label("Topic")
        .selected_text(current)
        .show_ui(ui, |ui| {
            for (i, t) in topics.iter().enumerate() {
                ui.selectable_value(&mut inspector.topic, Some(i), &t.topic);
            }
        });
    let topic = inspector.topic?;
    let Some(data) = recording.data(topic) else {
        ui.label("Not decoded yet.");
        return None;
    };
    let Some(i) = data.index_at(playhead_ns) else {
        ui.label("No message at or before the playhead.");
        return None;
    };
    let &t_ns = data.times_ns.get(i)?;
    ui.label(format!(
        "message {} of {} at {}",
        i + 1,
        data.times_ns.len(),
        format_relative(t_ns, recording.t0_ns())
    ));
    match &inspector.shown {
        Some(shown) if shown.topic == topic => {
            egui::ScrollArea::vertical()
                .auto_shrink([false, false])
                .show(ui, |ui| match &shown.value {
                    Ok(v) => value_ui(ui, "message", v, 0),
                    Err(e) => {
                        ui.colored_label(theme::DECODE_ERROR, e.report());
                    }
                });
        }
        _ => {
            ui.spinner();
        }
    }
    Some(Action::Inspect { topic, t_ns })
}
