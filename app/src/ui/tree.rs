//! The topic tree: topics with count, rate, schema and badges, then their numeric fields nested
//! by path. Click a field to plot it; drag it onto a plot.

use egui::collapsing_header::CollapsingState;
use egui::{Color32, RichText, Sense};

use crate::data::layout::SignalRef;
use crate::data::topic_data::{GAP_PERIODS, TopicData};
use crate::recording::{Recording, TopicState};
use crate::ui::format::format_relative;
use crate::ui::theme;

/// Fields nested by the dots in their paths.
#[derive(Debug, Default)]
struct FieldNode {
    name: String,
    /// Set when this node is itself a leaf.
    path: Option<String>,
    children: Vec<FieldNode>,
}

fn insert(nodes: &mut Vec<FieldNode>, parts: &[&str], path: &str) {
    let Some((first, rest)) = parts.split_first() else {
        return;
    };
    let index = match nodes.iter().position(|n| n.name == *first) {
        Some(i) => i,
        None => {
            nodes.push(FieldNode {
                name: (*first).to_owned(),
                ..FieldNode::default()
            });
            nodes.len() - 1
        }
    };
    if let Some(node) = nodes.get_mut(index) {
        if rest.is_empty() {
            node.path = Some(path.to_owned());
        } else {
            insert(&mut node.children, rest, path);
        }
    }
}

fn badge(ui: &mut egui::Ui, text: &str, color: Color32, hover: &str) {
    ui.label(
        RichText::new(text)
            .small()
            .color(theme::BADGE_TEXT)
            .background_color(color),
    )
    .on_hover_text(hover);
}

/// The tree. Returns the signal the user clicked, to be added to the focused plot.
pub fn topic_tree_ui(
    ui: &mut egui::Ui,
    recording: &Recording,
    filter: &mut String,
) -> Option<SignalRef> {
    let mut clicked = None;
    ui.horizontal(|ui| {
        let label = ui.label("Filter");
        ui.add(egui::TextEdit::singleline(filter).hint_text("topic or field"))
            .labelled_by(label.id);
    });
    let needle = filter.to_lowercase();
    let summary = recording.summary();
    let duration_s = (recording.t1_ns().saturating_sub(recording.t0_ns())) as f64 / 1e9;
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            for (i, topic) in summary.topics.iter().enumerate() {
                let state = recording.topics.get(i);
                let data = recording.data(i);
                let fields: Vec<&str> = data
                    .map(|d| d.fields.iter().map(|f| f.path.as_str()).collect())
                    .unwrap_or_default();
                let topic_match = topic.topic.to_lowercase().contains(&needle);
                let matching: Vec<&str> = fields
                    .iter()
                    .copied()
                    .filter(|p| topic_match || p.to_lowercase().contains(&needle))
                    .collect();
                if !needle.is_empty() && !topic_match && matching.is_empty() {
                    continue;
                }
                let id = ui.make_persistent_id(("topic", &topic.topic));
                let mut collapsing = CollapsingState::load_with_default_open(ui.ctx(), id, false);
                if !needle.is_empty() {
                    collapsing.set_open(true);
                }
                let mut toggle = false;
                collapsing
                    .show_header(ui, |ui| {
                        // Elided in a narrow panel (the full name on hover), so that the
                        // count and the badges after it stay in view.
                        let name_width = (ui.available_width() * 0.6).max(60.0);
                        toggle = ui
                            .scope(|ui| {
                                ui.set_max_width(name_width);
                                ui.add(egui::Button::selectable(false, &topic.topic).truncate())
                            })
                            .inner
                            .on_hover_text(&topic.topic)
                            .clicked();
                        let rate = data
                            .and_then(|d| {
                                let (a, b) = (d.times_ns.first()?, d.times_ns.last()?);
                                let span = (b.saturating_sub(*a)) as f64 / 1e9;
                                (span > 0.0).then(|| (d.times_ns.len() - 1) as f64 / span)
                            })
                            .or_else(|| {
                                (duration_s > 0.0).then(|| topic.message_count as f64 / duration_s)
                            });
                        let rate = rate.map_or_else(String::new, |r| format!(", {r:.1} Hz"));
                        ui.label(
                            RichText::new(format!("{} msgs{rate}", topic.message_count))
                                .small()
                                .weak(),
                        )
                        .on_hover_text(format!(
                            "type {}\nschema {} ({})\nencoding {}",
                            topic.type_name,
                            topic.schema_name,
                            topic.schema_encoding,
                            topic.message_encoding
                        ));
                        if topic.message_count == 0 {
                            badge(
                                ui,
                                "no messages",
                                theme::EMPTY_BADGE,
                                "This topic has zero messages in the readable parts.",
                            );
                        }
                        match state {
                            Some(TopicState::Failed(e)) => {
                                badge(ui, "decode error", theme::DECODE_ERROR, &e.report());
                            }
                            Some(TopicState::Loading) => {
                                let (done, total) = recording.topic_progress(i).unwrap_or((0, 0));
                                let pct = (100 * done).checked_div(total).unwrap_or(0);
                                ui.label(RichText::new(format!("loading {pct}%")).small().weak());
                            }
                            _ => {}
                        }
                        if let Some(d) = data {
                            if d.torn_messages > 0 {
                                badge(
                                    ui,
                                    "torn",
                                    theme::WARNING,
                                    &torn_hover(recording, d),
                                );
                            }
                            if let Some(longest) = d.longest_gap() {
                                let text = if d.gap_count == 1 {
                                    "1 gap".to_owned()
                                } else {
                                    format!("{} gaps", d.gap_count)
                                };
                                badge(
                                    ui,
                                    &text,
                                    theme::GAP_BADGE,
                                    &format!(
                                        "Silences longer than {GAP_PERIODS} of this topic's typical periods. The longest: {:.3} s from t = {}.",
                                        longest.secs(),
                                        format_relative(longest.from_ns, recording.t0_ns())
                                    ),
                                );
                            }
                            if d.decode_errors > 0 {
                                let text = format!(
                                    "{} messages failed to decode: {}",
                                    d.decode_errors,
                                    d.first_error.as_ref().map(|e| e.report()).unwrap_or_default()
                                );
                                badge(
                                    ui,
                                    "decode error",
                                    theme::DECODE_ERROR,
                                    &text,
                                );
                            }
                        }
                    })
                    .body(|ui| {
                        ui.label(RichText::new(&topic.type_name).small().weak());
                        let mut nodes = Vec::new();
                        for path in &matching {
                            let parts: Vec<&str> = path.split('.').collect();
                            insert(&mut nodes, &parts, path);
                        }
                        for node in &nodes {
                            if let Some(s) =
                                field_node_ui(ui, &topic.topic, node, !needle.is_empty())
                            {
                                clicked = Some(s);
                            }
                        }
                    });
                if toggle {
                    let mut s = CollapsingState::load_with_default_open(ui.ctx(), id, false);
                    s.toggle(ui);
                    s.store(ui.ctx());
                }
            }
            for (topic, schema) in &summary.health.never_published {
                if summary.topics.iter().any(|t| &t.topic == topic) {
                    continue;
                }
                if !needle.is_empty() && !topic.to_lowercase().contains(&needle) {
                    continue;
                }
                ui.horizontal(|ui| {
                    ui.add_space(18.0);
                    ui.label(RichText::new(topic).weak());
                    badge(
                        ui,
                        "never published",
                        theme::NEVER_PUBLISHED_BADGE,
                        &format!(
                            "Advertised with schema {schema} but no message was ever published."
                        ),
                    );
                });
            }
        });
    clicked
}

/// What is known of a topic with messages in a torn part: how many were recovered, until
/// when, and where the part was cut. How many of its messages the cut record held is not
/// known: the bag library does not record per-topic counts for a torn part.
fn torn_hover(recording: &Recording, data: &TopicData) -> String {
    let t0 = recording.t0_ns();
    let last = data.times_ns.last().map_or_else(String::new, |&t| {
        format!(
            " Its last recovered message is at t = {}.",
            format_relative(t, t0)
        )
    });
    let cuts: Vec<String> = recording
        .summary()
        .health
        .parts
        .iter()
        .filter(|p| p.state == "torn")
        .map(|p| format!("{}: {}", p.name, p.detail))
        .collect();
    format!(
        "{} of this topic's messages were recovered from a torn part.{last} \
         Messages in the record cut at the tear are lost; the recording does not say how many \
         belonged to this topic.\n{}",
        data.torn_messages,
        cuts.join("\n")
    )
}

fn field_node_ui(
    ui: &mut egui::Ui,
    topic: &str,
    node: &FieldNode,
    force_open: bool,
) -> Option<SignalRef> {
    let mut clicked = None;
    if let Some(path) = &node.path {
        let signal = SignalRef {
            topic: topic.to_owned(),
            path: path.clone(),
        };
        let response = ui
            .selectable_label(false, &node.name)
            .interact(Sense::drag())
            .on_hover_text(format!(
                "{topic}/{path}\nclick: add to the focused plot; drag: onto a plot"
            ));
        if response.drag_started() {
            response.dnd_set_drag_payload(signal.clone());
        }
        if response.clicked() {
            clicked = Some(signal);
        }
    }
    if !node.children.is_empty() {
        let mut header = egui::CollapsingHeader::new(&node.name).id_salt((
            topic,
            &node.name,
            node.children.len(),
        ));
        if force_open {
            header = header.open(Some(true));
        }
        header.show(ui, |ui| {
            for child in &node.children {
                if let Some(s) = field_node_ui(ui, topic, child, force_open) {
                    clicked = Some(s);
                }
            }
        });
    }
    clicked
}
