//! The inspector: the whole decoded message of a chosen topic at the playhead, as a tree. The
//! message is read and decoded on a worker thread; the UI only sends requests.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crossbeam_channel::{Receiver, Sender, TrySendError, bounded};
use decode::{Plan, SchemaSource, Value, compile};

use crate::format::{format_relative, format_value};
use crate::recording::Recording;
use crate::source::{DataSource, TimeWindow, TopicInfo};

/// A decoded message.
#[derive(Debug, Clone)]
pub struct Inspected {
    /// Topic index.
    pub topic: usize,
    /// Its log time.
    pub log_time_ns: u64,
    /// The tree, or why there is none.
    pub value: Result<Value, String>,
}

/// The inspector's state and its worker.
pub struct Inspector {
    /// The topic shown.
    pub topic: Option<usize>,
    requests: Sender<Request>,
    results: Receiver<Inspected>,
    requested: Option<(usize, u64)>,
    /// The last message decoded.
    pub shown: Option<Inspected>,
}

impl std::fmt::Debug for Inspector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inspector")
            .field("topic", &self.topic)
            .finish()
    }
}

impl Inspector {
    /// Starts the worker for `source`. It ends when the inspector is dropped.
    pub fn start(source: Arc<dyn DataSource>, repaint: Arc<dyn Fn() + Send + Sync>) -> Self {
        let (req_tx, req_rx) = bounded::<Request>(4);
        let (res_tx, res_rx) = bounded::<Inspected>(4);
        let spawned = std::thread::Builder::new()
            .name("scope-inspector".into())
            .spawn(move || {
                let mut plans: HashMap<usize, Result<Plan, String>> = HashMap::new();
                let never = AtomicBool::new(false);
                while let Ok(mut req) = req_rx.recv() {
                    // Only the newest request matters.
                    while let Ok(newer) = req_rx.try_recv() {
                        req = newer;
                    }
                    let Request { topic, t_ns, info } = req;
                    let plan = plans.entry(topic).or_insert_with(|| {
                        compile(&SchemaSource {
                            message_encoding: &info.message_encoding,
                            schema_encoding: &info.schema_encoding,
                            schema_name: &info.schema_name,
                            schema_data: &info.schema_data,
                        })
                        .map_err(|e| e.to_string())
                    });
                    let mut found: Option<(u64, Result<Value, String>)> = None;
                    let streamed =
                        source.stream(&[topic], TimeWindow::starting_at(t_ns), &never, &mut |m| {
                            let value = match plan {
                                Ok(p) => p.decode_tree(m.data).map_err(|e| e.to_string()),
                                Err(e) => Err(e.clone()),
                            };
                            found = Some((m.log_time_ns, value));
                            false
                        });
                    let result = match (found, streamed) {
                        (Some((t, value)), _) => Inspected {
                            topic,
                            log_time_ns: t,
                            value,
                        },
                        (None, Err(e)) => Inspected {
                            topic,
                            log_time_ns: t_ns,
                            value: Err(e),
                        },
                        (None, Ok(_)) => Inspected {
                            topic,
                            log_time_ns: t_ns,
                            value: Err("no message at this time".to_owned()),
                        },
                    };
                    if res_tx.send(result).is_err() {
                        break;
                    }
                    repaint();
                }
            });
        if let Err(e) = spawned {
            eprintln!("scope: cannot start the inspector thread: {e}");
        }
        Self {
            topic: None,
            requests: req_tx,
            results: res_rx,
            requested: None,
            shown: None,
        }
    }

    /// Asks for the message of the chosen topic at the playhead (exact log time `t_ns`).
    pub fn request(&mut self, topic: usize, t_ns: u64, info: &TopicInfo) {
        if self.requested == Some((topic, t_ns)) {
            return;
        }
        let request = Request {
            topic,
            t_ns,
            info: info.clone(),
        };
        match self.requests.try_send(request) {
            Ok(()) => self.requested = Some((topic, t_ns)),
            // Busy: ask again next frame.
            Err(TrySendError::Full(_)) => {}
            Err(TrySendError::Disconnected(_)) => self.requested = Some((topic, t_ns)),
        }
    }

    /// Takes in decoded messages.
    pub fn poll(&mut self) {
        while let Ok(r) = self.results.try_recv() {
            self.shown = Some(r);
        }
    }
}

/// What the UI asks the inspector thread for: the message of `topic` at `t_ns`. The topic's
/// description travels with it, since a live capture's topics appear after the thread starts.
struct Request {
    topic: usize,
    t_ns: u64,
    info: TopicInfo,
}

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

/// The inspector panel.
pub fn inspector_ui(
    ui: &mut egui::Ui,
    recording: &Recording,
    inspector: &mut Inspector,
    playhead_ns: u64,
) {
    inspector.poll();
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
    let Some(topic) = inspector.topic else {
        return;
    };
    let Some(data) = recording.data(topic) else {
        ui.label("Not decoded yet.");
        return;
    };
    let Some(i) = data.index_at(playhead_ns) else {
        ui.label("No message at or before the playhead.");
        return;
    };
    let Some(&t) = data.times_ns.get(i) else {
        return;
    };
    if let Some(info) = topics.get(topic) {
        inspector.request(topic, t, info);
    }
    ui.label(format!(
        "message {} of {} at {}",
        i + 1,
        data.times_ns.len(),
        format_relative(t, recording.t0_ns())
    ));
    match &inspector.shown {
        Some(shown) if shown.topic == topic => {
            egui::ScrollArea::vertical()
                .auto_shrink([false, false])
                .show(ui, |ui| match &shown.value {
                    Ok(v) => value_ui(ui, "message", v, 0),
                    Err(e) => {
                        ui.colored_label(egui::Color32::from_rgb(0xf0, 0x80, 0x80), e);
                    }
                });
        }
        _ => {
            ui.spinner();
        }
    }
}
