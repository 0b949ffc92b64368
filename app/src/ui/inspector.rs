//! The inspector panel: the whole decoded message of a chosen topic at the playhead, as a
//! tree. The message is read and decoded by the inspector's worker ([`Inspector`]).

use decode::Value;

use crate::data::inspector::{Inspector, RawBytes};
use crate::recording::{Recording, TopicState};
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
    // The label first and the box after it, taking what is left of the row and eliding a long
    // topic (the full name on hover). With the label after the box (`ComboBox::from_label`) the
    // box took the whole row and squeezed the label into a column a letter wide.
    ui.horizontal(|ui| {
        let label = ui.label("Topic");
        egui::ComboBox::from_id_salt("inspector-topic")
            .selected_text(current)
            .width(ui.available_width())
            .truncate()
            .show_ui(ui, |ui| {
                for (i, t) in topics.iter().enumerate() {
                    ui.selectable_value(&mut inspector.topic, Some(i), &t.topic);
                }
            })
            .response
            .labelled_by(label.id)
            .on_hover_text(current);
    });
    let topic = inspector.topic?;
    let t_ns = match recording.topics.get(topic) {
        Some(TopicState::Failed(e)) => {
            // No columns to find the message at the playhead: the worker reads the first
            // message at or after it, to show its bytes.
            ui.colored_label(
                theme::DECODE_ERROR,
                format!("This topic cannot be decoded: {}", e.report()),
            );
            ui.label("Raw view of the first message at or after the playhead.");
            playhead_ns
        }
        Some(TopicState::Loading) | None => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Decoding this topic...");
            });
            return None;
        }
        Some(TopicState::Loaded(data)) => {
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
            t_ns
        }
    };
    match &inspector.shown {
        Some(shown) if shown.topic == topic => {
            egui::ScrollArea::both()
                .auto_shrink([false, false])
                .show(ui, |ui| match &shown.value {
                    Ok(v) => value_ui(ui, "message", v, 0),
                    Err(e) => {
                        ui.colored_label(theme::DECODE_ERROR, e.report());
                        if let Some(raw) = &shown.raw {
                            raw_ui(ui, raw, shown.log_time_ns, recording.t0_ns());
                        }
                    }
                });
        }
        _ => {
            ui.spinner();
        }
    }
    Some(Action::Inspect { topic, t_ns })
}

/// The raw view of a message that did not decode: its length and its bytes in hex.
fn raw_ui(ui: &mut egui::Ui, raw: &RawBytes, log_time_ns: u64, t0_ns: u64) {
    ui.separator();
    ui.label(egui::RichText::new("Raw message").strong());
    ui.label(format!(
        "length {} bytes, logged at {}",
        raw.len,
        format_relative(log_time_ns, t0_ns)
    ));
    ui.add(egui::Label::new(egui::RichText::new(hex_dump(&raw.head)).monospace()).extend());
    if raw.len > raw.head.len() {
        ui.label(format!("... {} more bytes", raw.len - raw.head.len()));
    }
}

/// Bytes per row of a hex dump: eight fit the side panel at its default width.
pub const HEX_ROW: usize = 8;

/// `bytes` as a hex dump: offset, [`HEX_ROW`] bytes in hex, and the same bytes as ASCII (`.`
/// for the rest).
pub fn hex_dump(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (row, chunk) in bytes.chunks(HEX_ROW).enumerate() {
        if row > 0 {
            out.push('\n');
        }
        out.push_str(&format!("{:04x} ", row * HEX_ROW));
        for k in 0..HEX_ROW {
            match chunk.get(k) {
                Some(b) => out.push_str(&format!(" {b:02x}")),
                None => out.push_str("   "),
            }
        }
        out.push_str("  ");
        out.extend(chunk.iter().map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                char::from(b)
            } else {
                '.'
            }
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hex_dump_shows_offsets_bytes_and_printable_ascii() {
        let bytes: Vec<u8> = (0u8..20).chain(*b"Hi!").collect();
        let dump = hex_dump(&bytes);
        let lines: Vec<&str> = dump.lines().collect();
        assert_eq!(
            lines,
            vec![
                "0000  00 01 02 03 04 05 06 07  ........",
                "0008  08 09 0a 0b 0c 0d 0e 0f  ........",
                "0010  10 11 12 13 48 69 21     ....Hi!",
            ]
        );
        assert_eq!(hex_dump(&[]), "");
    }
}
