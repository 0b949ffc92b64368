//! The topic tree: topics with count, rate, schema and badges, then their numeric fields nested
//! by path, and the derived signals. Click a field to plot it; drag it onto a plot;
//! right-click it to derive a signal from it.

use egui::collapsing_header::CollapsingState;
use egui::{Color32, RichText, Sense};

use crate::data::derived::{DERIVED_TOPIC, DerivedSpec};
use crate::data::layout::SignalRef;
use crate::data::topic_data::{GAP_PERIODS, TopicData};
use crate::recording::{Recording, SECOND_PREFIX, TopicState};
use crate::ui::action::Action;
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

/// The tree, with the derived signals `derived` at the end. Returns what the user asked for:
/// a signal to add to the focused plot, a derived signal to define, edit or remove.
pub fn topic_tree_ui(
    ui: &mut egui::Ui,
    recording: &Recording,
    filter: &mut String,
    derived: &[DerivedSpec],
) -> Vec<Action> {
    let mut actions = Vec::new();
    ui.horizontal(|ui| {
        let label = ui.label("Filter");
        ui.add(egui::TextEdit::singleline(filter).hint_text("topic or field"))
            .labelled_by(label.id);
    });
    let needle = filter.to_lowercase();
    let t0_ns = recording.t0_ns();
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            topics_ui(ui, recording, "", t0_ns, &needle, &mut actions);
            if let Some(second) = recording.second() {
                second_ui(ui, recording, second, &needle, &mut actions);
            }
            derived_ui(ui, recording, derived, &needle, &mut actions);
        });
    actions
}

/// A second recording's topics under its name, with its offset and a button to close it.
fn second_ui(
    ui: &mut egui::Ui,
    recording: &Recording,
    second: &Recording,
    needle: &str,
    actions: &mut Vec<Action>,
) {
    ui.separator();
    let name = &second.summary().name;
    egui::CollapsingHeader::new(format!("{SECOND_PREFIX} {name}"))
        .id_salt("second-recording")
        .default_open(true)
        .show(ui, |ui| {
            ui.horizontal(|ui| {
                let label = ui.label("Offset");
                let mut offset_s = recording.second_offset_ns() as f64 / 1e9;
                let response = ui
                    .add(egui::DragValue::new(&mut offset_s).speed(0.01).suffix(" s"))
                    .labelled_by(label.id)
                    .on_hover_text(
                        "Where this recording's start is drawn, past the first one's start \
                         (negative: before it)",
                    );
                if response.changed() && offset_s.is_finite() {
                    // `as` saturates: an offset past the i64 range is its end.
                    actions.push(Action::SecondOffset((offset_s * 1e9).round() as i64));
                }
                if ui
                    .button("Close")
                    .on_hover_text("Close the second recording")
                    .clicked()
                {
                    actions.push(Action::CloseSecond);
                }
            });
            topics_ui(
                ui,
                second,
                SECOND_PREFIX,
                recording.t0_ns(),
                needle,
                actions,
            );
        });
}

/// `recording`'s topics and their fields, named with `prefix` in the signals they give;
/// times shown relative to `t0_ns`, the axis' origin.
fn topics_ui(
    ui: &mut egui::Ui,
    recording: &Recording,
    prefix: &str,
    t0_ns: u64,
    needle: &str,
    actions: &mut Vec<Action>,
) {
    let summary = recording.summary();
    let duration_s = summary
        .time_range_ns
        .map_or(0.0, |(a, b)| b.saturating_sub(a) as f64 / 1e9);
    for (i, topic) in summary.topics.iter().enumerate() {
        let state = recording.topics.get(i);
        let data = recording.data(i);
        let fields: Vec<&str> = data
            .map(|d| d.fields.iter().map(|f| f.path.as_str()).collect())
            .unwrap_or_default();
        let topic_match = topic.topic.to_lowercase().contains(needle);
        let matching: Vec<&str> = fields
            .iter()
            .copied()
            .filter(|p| topic_match || p.to_lowercase().contains(needle))
            .collect();
        if !needle.is_empty() && !topic_match && matching.is_empty() {
            continue;
        }
        let signal_topic = format!("{prefix}{}", topic.topic);
        let id = ui.make_persistent_id(("topic", &signal_topic));
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
                        let n = topic.message_count?;
                        (duration_s > 0.0).then(|| n as f64 / duration_s)
                    });
                let rate = rate.map_or_else(String::new, |r| format!(", {r:.1} Hz"));
                // A rosbag2 SQLite file stores no per-topic counts: loading counts them (a topic
                // that does not decode is not loaded, and stays uncounted).
                let count = match topic.message_count {
                    Some(n) => format!("{n} msgs"),
                    None if recording.loaded() => "not counted".to_owned(),
                    None => "counting".to_owned(),
                };
                ui.label(RichText::new(format!("{count}{rate}")).small().weak())
                    .on_hover_ui(|ui| {
                        ui.label(format!(
                            "type {}\nschema {} ({})\nencoding {}",
                            topic.type_name,
                            topic.schema_name,
                            topic.schema_encoding,
                            topic.message_encoding
                        ));
                        if let Some(types) = recording
                            .definitions()
                            .by_topic
                            .get(i)
                            .filter(|t| !t.is_empty())
                        {
                            ui.label(format!(
                                "The recording holds no definition of {}: decoded with the {} \
                                 definitions built in.",
                                types.join(", "),
                                decode::STANDARD_TYPES_SOURCE
                            ));
                        }
                    });
                if topic.message_count == Some(0) {
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
                        let text = match recording.topic_progress(i) {
                            Some((done, Some(total))) => {
                                let pct = (100 * done).checked_div(total).unwrap_or(0);
                                format!("loading {pct}%")
                            }
                            Some((done, None)) => format!("loading, {done} read"),
                            None => "loading".to_owned(),
                        };
                        ui.label(RichText::new(text).small().weak());
                    }
                    _ => {}
                }
                if let Some(d) = data {
                    if d.torn_messages > 0 {
                        badge(
                            ui,
                            "torn",
                            theme::WARNING,
                            &torn_hover(recording, d, t0_ns),
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
                                format_relative(longest.from_ns, t0_ns)
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
                    field_node_ui(ui, &signal_topic, node, !needle.is_empty(), actions);
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
        if !needle.is_empty() && !topic.to_lowercase().contains(needle) {
            continue;
        }
        ui.horizontal(|ui| {
            ui.add_space(18.0);
            ui.label(RichText::new(topic).weak());
            badge(
                ui,
                "never published",
                theme::NEVER_PUBLISHED_BADGE,
                &format!("Advertised with schema {schema} but no message was ever published."),
            );
        });
    }
}

/// The derived signals: click to plot, drag onto a plot, right-click to edit or remove; and
/// the button that defines a new one.
fn derived_ui(
    ui: &mut egui::Ui,
    recording: &Recording,
    derived: &[DerivedSpec],
    needle: &str,
    actions: &mut Vec<Action>,
) {
    ui.separator();
    let shown: Vec<&DerivedSpec> = derived
        .iter()
        .filter(|d| {
            needle.is_empty()
                || d.name.to_lowercase().contains(needle)
                || DERIVED_TOPIC.to_lowercase().contains(needle)
        })
        .collect();
    egui::CollapsingHeader::new(format!("{DERIVED_TOPIC} ({})", derived.len()))
        .id_salt("derived-signals")
        .default_open(true)
        .show(ui, |ui| {
            for spec in shown {
                let signal = spec.signal();
                let mut hover = format!("{}\n= {}", signal.label(), spec.expression);
                let described = spec.transform.describe();
                if !described.is_empty() {
                    hover.push_str(&format!("\nthen {described}"));
                }
                hover.push_str(
                    "\nclick: add to the focused plot; drag: onto a plot; right-click: edit",
                );
                ui.horizontal(|ui| {
                    let response = ui
                        .selectable_label(false, &spec.name)
                        .interact(Sense::drag())
                        .on_hover_text(hover);
                    if response.drag_started() {
                        response.dnd_set_drag_payload(signal.clone());
                    }
                    if response.clicked() {
                        actions.push(Action::AddSignal(signal.clone()));
                    }
                    response.context_menu(|ui| {
                        if ui.button("Edit...").clicked() {
                            actions.push(Action::EditDerived(spec.name.clone()));
                        }
                        if ui.button("Remove").clicked() {
                            actions.push(Action::RemoveDerived(spec.name.clone()));
                        }
                    });
                    match recording.signal_state(&signal).map(|(_, s)| s) {
                        Some(TopicState::Loaded(d)) => {
                            ui.label(
                                RichText::new(format!("{} samples", d.times_ns.len()))
                                    .small()
                                    .weak(),
                            );
                        }
                        Some(TopicState::Failed(e)) => {
                            badge(ui, "error", theme::DECODE_ERROR, &e.report());
                        }
                        _ => {
                            ui.label(RichText::new("computing...").small().weak());
                        }
                    }
                });
            }
            if ui
                .button("New derived signal...")
                .on_hover_text(
                    "An expression over signals (a - b, sqrt(x^2 + y^2), unit conversions), \
                     then optionally a derivative, integral, moving average or low-pass",
                )
                .clicked()
            {
                actions.push(Action::NewDerived(None));
            }
        });
}

/// What is known of a topic with messages in a torn part: how many were recovered, until
/// when, and where the part was cut. How many of its messages the cut record held is not
/// known: the bag library does not record per-topic counts for a torn part.
fn torn_hover(recording: &Recording, data: &TopicData, t0: u64) -> String {
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
    actions: &mut Vec<Action>,
) {
    if let Some(path) = &node.path {
        let signal = SignalRef {
            topic: topic.to_owned(),
            path: path.clone(),
        };
        let response = ui
            .selectable_label(false, &node.name)
            .interact(Sense::drag())
            .on_hover_text(format!(
                "{topic}/{path}\nclick: add to the focused plot; drag: onto a plot; \
                 right-click: derive a signal"
            ));
        if response.drag_started() {
            response.dnd_set_drag_payload(signal.clone());
        }
        response.context_menu(|ui| {
            if ui.button("Derive a signal from this...").clicked() {
                actions.push(Action::NewDerived(Some(signal.clone())));
            }
        });
        if response.clicked() {
            actions.push(Action::AddSignal(signal));
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
                field_node_ui(ui, topic, child, force_open, actions);
            }
        });
    }
}
