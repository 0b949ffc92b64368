//! The health panel: can this recording be trusted?

use egui::{Color32, RichText};

use crate::data::topic_data::{GAP_PERIODS, Gap, Latency};
use crate::recording::{Recording, SECOND_PREFIX};
use crate::ui::format::format_relative;
use crate::ui::theme;

/// The sentence shown when the recorder dropped messages.
pub const GAPS_SENTENCE: &str = "This recording has gaps.";

/// Drops, unstamped share, never-published topics, parts and latency; of a second recording
/// too, below the first's.
pub fn health_ui(ui: &mut egui::Ui, recording: &Recording) {
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            ui.heading("Health");
            let t0 = recording.t0_ns();
            let Some(second) = recording.second() else {
                recording_health_ui(ui, recording, t0);
                return;
            };
            ui.label(RichText::new(&recording.summary().name).strong());
            recording_health_ui(ui, recording, t0);
            ui.separator();
            ui.label(RichText::new(format!("{SECOND_PREFIX} {}", second.summary().name)).strong());
            recording_health_ui(ui, second, t0);
        });
}

/// Types the recording names without defining them: decoded with the definitions built in
/// (said, since the recording does not vouch for them), or not at all.
fn definitions_ui(ui: &mut egui::Ui, recording: &Recording, warn: egui::Color32) {
    let definitions = recording.definitions();
    if !definitions.built_in.is_empty() {
        ui.label(format!(
            "Definitions built in: {}",
            types(definitions.built_in.len())
        ))
        .on_hover_text(format!(
            "The recording holds no complete definition of these types (rosbag2 stored none \
             in SQLite before Iron); they are decoded with the {} standard definitions built \
             in:\n{}",
            decode::STANDARD_TYPES_SOURCE,
            definitions.built_in.join("\n")
        ));
    }
    if !definitions.missing.is_empty() {
        ui.label(
            RichText::new(format!(
                "No definition: {}",
                types(definitions.missing.len())
            ))
            .color(warn),
        )
        .on_hover_text(format!(
            "The recording names these types without defining them, and none is built in: \
             their messages cannot be decoded.\n{}",
            definitions.missing.join("\n")
        ));
    }
}

fn types(n: usize) -> String {
    if n == 1 {
        "1 type".to_owned()
    } else {
        format!("{n} types")
    }
}

/// One recording's health; times relative to `t0_ns`, the axis' origin.
fn recording_health_ui(ui: &mut egui::Ui, recording: &Recording, t0_ns: u64) {
    let health = &recording.summary().health;
    let warn = theme::WARNING;
    {
        verdict_ui(ui, recording, warn);
        match health.dropped_messages {
            Some(0) => {
                ui.label("Dropped messages: 0");
            }
            Some(n) => {
                ui.label(RichText::new(format!("Dropped messages: {n}")).color(warn));
                ui.label(RichText::new(format!(
                    "{GAPS_SENTENCE} The recorder could not keep up and dropped {n} messages."
                )));
            }
            None => {
                ui.label(RichText::new("Dropped messages: unknown").color(warn))
                    .on_hover_text(
                        "The recording does not say whether messages were dropped: a recording \
                     by another tool, or an index rebuilt without its counts. Unknown is not 0.",
                    );
            }
        }
        match health.unstamped_messages {
            Some(n) => {
                let share = if health.message_count > 0 {
                    100.0 * n as f64 / health.message_count as f64
                } else {
                    0.0
                };
                ui.label(format!("Unstamped messages: {n} ({share:.2}% of {})", health.message_count))
                    .on_hover_text("Messages that arrived without a publisher timestamp; their publish time is the log time.");
            }
            None => {
                ui.label(format!(
                    "Messages: {} (unstamped count not recorded)",
                    health.message_count
                ));
            }
        }
        if health.never_published.is_empty() {
            ui.label("Advertised but never published: none");
        } else {
            ui.label(
                RichText::new(format!(
                    "Advertised but never published: {}",
                    health.never_published.len()
                ))
                .color(warn),
            );
            for (topic, schema) in &health.never_published {
                ui.label(format!("  {topic} ({schema})"));
            }
        }
        definitions_ui(ui, recording, warn);
        gaps_ui(ui, recording, t0_ns, warn);
        ui.separator();
        if recording.capture().is_some() {
            let stats = recording.live_stats();
            ui.label(RichText::new("Capture").strong());
            ui.label(format!("{} messages received", stats.received));
            let evicted = if stats.spilled > 0 {
                format!(
                    "{} evicted from the buffer, {} of them kept on disk",
                    stats.evicted, stats.spilled
                )
            } else {
                format!("{} evicted from the buffer", stats.evicted)
            };
            ui.label(evicted);
            ui.label(format!(
                "{} dropped by the transport queue",
                stats.transport_dropped
            ));
            if let Some(e) = &stats.spill_error {
                let e = e.report();
                ui.add(
                    egui::Label::new(RichText::new(format!("Spill: {e}")).small().color(warn))
                        .wrap(),
                );
            }
        } else {
            ui.label(RichText::new("Parts").strong());
        }
        for part in &health.parts {
            let color = match part.state {
                "complete" => ui.visuals().text_color(),
                _ => warn,
            };
            ui.horizontal(|ui| {
                ui.label(&part.name);
                ui.label(RichText::new(part.state).color(color));
                ui.label(format!("{} messages", part.message_count));
            });
            if !part.detail.is_empty() {
                ui.add(egui::Label::new(RichText::new(&part.detail).small()).wrap());
            }
        }
        torn_topics_ui(ui, recording);
        if !health.loss.is_empty() {
            ui.separator();
            ui.label(RichText::new("Recorded loss").strong().color(warn));
            for line in &health.loss {
                ui.add(egui::Label::new(RichText::new(line).small().color(warn)).wrap());
            }
        }
        for note in &health.notes {
            ui.add(egui::Label::new(RichText::new(note).small().weak()).wrap());
        }
        if !recording.issues.is_empty() {
            ui.separator();
            ui.label(RichText::new("Read problems").strong());
            for issue in &recording.issues {
                ui.add(egui::Label::new(RichText::new(issue).small().color(warn)).wrap());
            }
        }
        ui.separator();
        latency_ui(ui, recording);
        if let Some(t) = recording
            .load_time
            .filter(|_| recording.capture().is_none())
        {
            ui.separator();
            ui.label(
                RichText::new(format!("Decoded in {:.0} ms", t.as_secs_f64() * 1e3))
                    .small()
                    .weak(),
            );
        }
    }
}

/// One line on top: whether anything is known to be lost, and how many reasons there are.
fn verdict_ui(ui: &mut egui::Ui, recording: &Recording, warn: Color32) {
    let reasons = recording.summary().health.known_loss().len() + recording.issues.len();
    if reasons > 0 {
        let s = if reasons == 1 { "" } else { "s" };
        ui.label(
            RichText::new(format!("Known loss: {reasons} reason{s}, listed below"))
                .strong()
                .color(warn),
        );
    } else if recording.capture().is_some() {
        // A capture's counts are live, below.
    } else if recording.summary().health.dropped_messages.is_none() {
        ui.label("No known damage; whether messages were dropped is unknown");
    } else {
        ui.label("No known loss or damage");
    }
}

/// Topics that fell silent for many of their typical periods (lost messages show up here even
/// when the recorder did not count them).
fn gaps_ui(ui: &mut egui::Ui, recording: &Recording, t0: u64, warn: Color32) {
    let topics: Vec<(&str, u64, Gap)> = recording
        .summary()
        .topics
        .iter()
        .enumerate()
        .filter_map(|(i, topic)| {
            let data = recording.data(i)?;
            Some((topic.topic.as_str(), data.gap_count, data.longest_gap()?))
        })
        .collect();
    if topics.is_empty() {
        if recording.loaded() {
            ui.label("Gaps inside topics: none").on_hover_text(format!(
                "No topic fell silent for more than {GAP_PERIODS} of its typical periods."
            ));
        }
        return;
    }
    ui.label(RichText::new(format!("Gaps inside topics: {}", topics.len())).color(warn))
        .on_hover_text(format!(
            "A topic that publishes steadily sent nothing for more than {GAP_PERIODS} of its typical periods. The ticks under the timeline mark them."
        ));
    for (topic, count, longest) in topics {
        let gaps = if count == 1 {
            "1 gap".to_owned()
        } else {
            format!("{count} gaps")
        };
        ui.label(format!(
            "  {topic}: {gaps}, longest {:.3} s at t = {}",
            longest.secs(),
            format_relative(longest.from_ns, t0)
        ));
    }
}

/// Under the parts, when some are torn: which topics have messages recovered from them, and
/// how many. What the cut record held is lost, and the recording does not say of which topics.
fn torn_topics_ui(ui: &mut egui::Ui, recording: &Recording) {
    let torn_parts = recording
        .summary()
        .health
        .parts
        .iter()
        .filter(|p| p.state == "torn")
        .count();
    if torn_parts == 0 {
        return;
    }
    let from = if torn_parts == 1 {
        "the torn part"
    } else {
        "the torn parts"
    };
    ui.label(RichText::new(format!("Recovered from {from}:")).small());
    for (i, topic) in recording.summary().topics.iter().enumerate() {
        let Some(data) = recording.data(i).filter(|d| d.torn_messages > 0) else {
            continue;
        };
        ui.label(
            RichText::new(format!(
                "  {}: {} messages",
                topic.topic, data.torn_messages
            ))
            .small(),
        );
    }
    ui.add(
        egui::Label::new(
            RichText::new(
                "Messages in the record cut at the tear are lost; how many, and of which \
                 topics, the recording does not say.",
            )
            .small()
            .weak(),
        )
        .wrap(),
    );
}

/// Publish-to-log latency of the topics whose messages carry a publish time of their own (not
/// 0, not equal to the log time); the others are counted, never shown as 0.
fn latency_ui(ui: &mut egui::Ui, recording: &Recording) {
    let topics = &recording.summary().topics;
    let rows: Vec<(&str, Latency)> = topics
        .iter()
        .enumerate()
        .filter_map(|(i, t)| Some((t.topic.as_str(), recording.data(i)?.latency?)))
        .collect();
    let without = topics.len() - rows.len();
    if rows.is_empty() {
        ui.label("Publish-to-log latency: unknown")
            .on_hover_text(LATENCY_UNKNOWN);
        return;
    }
    ui.label(RichText::new("Publish-to-log latency (ms)").strong())
        .on_hover_text("log time - publish time; negative means the publisher's clock is ahead of the recorder's.");
    egui::Grid::new("health-latency")
        .striped(true)
        .show(ui, |ui| {
            ui.label("topic");
            ui.label("p50");
            ui.label("p99");
            ui.label("max");
            ui.end_row();
            for (topic, lat) in rows {
                ui.label(topic);
                ui.monospace(format!("{:.3}", lat.p50_ms));
                ui.monospace(format!("{:.3}", lat.p99_ms));
                ui.monospace(format!("{:.3}", lat.max_ms));
                ui.end_row();
            }
        });
    if without > 0 {
        let topics = if without == 1 { "topic" } else { "topics" };
        ui.label(
            RichText::new(format!(
                "{without} {topics} without a publish time: not listed"
            ))
            .small()
            .weak(),
        )
        .on_hover_text(LATENCY_UNKNOWN);
    }
}

/// Why a topic has no latency.
const LATENCY_UNKNOWN: &str = "No message carries a publish time of its own: the format has none \
     (publish time 0), or the recorder stored the log time in its place.";
