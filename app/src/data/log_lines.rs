//! The log view's worker: reads a text topic (log messages, strings, DiagnosticLog, rosout)
//! off the UI thread and turns each message into one line of text, so the log view can
//! filter and follow the playhead without decoding anything itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, TryRecvError, bounded};
use decode::Value;

use crate::data::column_builder::compile_plan;
use crate::data::source::{DataSource, TimeWindow, TopicInfo};
use crate::error::Error;

/// Lines kept per topic; a longer log is cut here, and says so.
pub const MAX_LINES: usize = 200_000;

/// Characters kept per line (a line longer than this is cut, with an ellipsis).
pub const MAX_LINE_CHARS: usize = 1_000;

/// How often a live topic's new messages are read.
pub const LIVE_REREAD: Duration = Duration::from_millis(500);

/// Lines sent to the UI at once.
const BATCH: usize = 1_024;

/// One message as a line of text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// Its log time, ns since the epoch.
    pub t_ns: u64,
    /// Its fields as text.
    pub text: String,
}

/// What the worker sends.
enum Batch {
    Lines(Vec<LogLine>),
    /// Done: every message read, cut at [`MAX_LINES`] (`true`), or reading failed.
    Done(Result<bool, Error>),
}

/// The lines of one topic, arriving from a worker that stops when this is dropped.
pub struct LogLines {
    /// The topic read.
    pub topic: usize,
    /// Lines so far, in log-time order.
    pub lines: Vec<LogLine>,
    /// True once every message has been read (or reading stopped).
    pub done: bool,
    /// True when the topic had more than [`MAX_LINES`] messages.
    pub cut: bool,
    /// Why reading stopped early.
    pub error: Option<Error>,
    /// When the worker finished.
    finished_at: Option<Instant>,
    rx: Receiver<Batch>,
    cancel: Arc<AtomicBool>,
}

impl std::fmt::Debug for LogLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogLines")
            .field("topic", &self.topic)
            .field("lines", &self.lines.len())
            .field("done", &self.done)
            .finish()
    }
}

impl Drop for LogLines {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl LogLines {
    /// Starts reading topic `topic` (described by `info`) of `source` on a worker thread.
    pub fn start(
        source: Arc<dyn DataSource>,
        topic: usize,
        info: TopicInfo,
        repaint: Arc<dyn Fn() + Send + Sync>,
    ) -> Self {
        Self::read(source, topic, info, repaint, Vec::new())
    }

    /// For a live capture: once the last read is done and [`LIVE_REREAD`] has passed, reads
    /// what arrived since, keeping the lines so far. Returns `self` unchanged otherwise.
    pub fn read_newer(
        mut self,
        source: Arc<dyn DataSource>,
        info: TopicInfo,
        repaint: Arc<dyn Fn() + Send + Sync>,
    ) -> Self {
        let due = self.finished_at.is_some_and(|t| t.elapsed() >= LIVE_REREAD);
        if !due || self.cut || self.error.is_some() {
            return self;
        }
        let lines = std::mem::take(&mut self.lines);
        Self::read(source, self.topic, info, repaint, lines)
    }

    /// Reads the messages after those `lines` hold (all when empty), appending to them.
    fn read(
        source: Arc<dyn DataSource>,
        topic: usize,
        info: TopicInfo,
        repaint: Arc<dyn Fn() + Send + Sync>,
        lines: Vec<LogLine>,
    ) -> Self {
        // Start at the last line's time and skip the messages of that time already read, so
        // a message logged in the same nanosecond is neither lost nor doubled.
        let last_ns = lines.last().map(|l| l.t_ns);
        let mut skip = last_ns.map_or(0, |t| {
            lines.iter().rev().take_while(|l| l.t_ns == t).count()
        });
        let window = last_ns.map_or(TimeWindow::ALL, TimeWindow::starting_at);
        let already = lines.len();
        // Bounded: a worker ahead of the UI waits instead of piling up lines.
        let (tx, rx) = bounded::<Batch>(16);
        let cancel = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&cancel);
        let spawned = std::thread::Builder::new()
            .name("scope-log".into())
            .spawn(move || {
                let plan = compile_plan(&info);
                let mut batch = Vec::with_capacity(BATCH);
                let mut count = already;
                let mut cut = false;
                let streamed = source.stream(&[topic], window, &stop, &mut |m| {
                    if skip > 0 && Some(m.log_time_ns) == last_ns {
                        skip -= 1;
                        return true;
                    }
                    if count >= MAX_LINES {
                        cut = true;
                        return false;
                    }
                    count += 1;
                    let text = match &plan {
                        Ok(p) => match p.decode_tree(m.data) {
                            Ok(v) => line_of(&v),
                            Err(e) => format!("(does not decode: {e})"),
                        },
                        Err(e) => format!("(cannot decode: {})", e.report()),
                    };
                    batch.push(LogLine {
                        t_ns: m.log_time_ns,
                        text,
                    });
                    if batch.len() >= BATCH {
                        let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                        if tx.send(Batch::Lines(full)).is_err() {
                            return false;
                        }
                        repaint();
                    }
                    true
                });
                // The view may be gone: then nobody is waiting.
                tx.send(Batch::Lines(batch)).ok();
                tx.send(Batch::Done(streamed.map(|_| cut))).ok();
                repaint();
            });
        let mut log = Self {
            topic,
            lines,
            done: false,
            cut: false,
            error: None,
            finished_at: None,
            rx,
            cancel,
        };
        if let Err(source) = spawned {
            log.done = true;
            log.error = Some(Error::Thread {
                name: "scope-log",
                source,
            });
        }
        log
    }

    /// Takes in what the worker has read (never blocks).
    pub fn poll(&mut self) {
        loop {
            match self.rx.try_recv() {
                Ok(Batch::Lines(mut lines)) => self.lines.append(&mut lines),
                Ok(Batch::Done(result)) => {
                    self.done = true;
                    self.finished_at = Some(Instant::now());
                    match result {
                        Ok(cut) => self.cut = cut,
                        Err(e) => self.error = Some(e),
                    }
                }
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => {
                    self.done = true;
                    self.finished_at.get_or_insert_with(Instant::now);
                    return;
                }
            }
        }
    }
}

/// A message as one line: its text fields as they are, enum values by name, numbers as
/// `name=value`; headers and time stamps left out (the line has its log time).
pub fn line_of(value: &Value) -> String {
    let mut parts = Vec::new();
    flatten(value, "", &mut parts);
    let mut line = parts.join("  ");
    if line.chars().count() > MAX_LINE_CHARS {
        line = line.chars().take(MAX_LINE_CHARS).collect();
        line.push_str("...");
    }
    line
}

fn flatten(value: &Value, name: &str, out: &mut Vec<String>) {
    let named = |text: String| {
        if name.is_empty() {
            text
        } else {
            format!("{name}={text}")
        }
    };
    match value {
        Value::Struct(fields) => {
            for (field, v) in fields {
                let lower = field.to_ascii_lowercase();
                if lower == "header" || lower.contains("stamp") {
                    continue;
                }
                flatten(v, field, out);
            }
        }
        Value::List(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten(v, &format!("{name}[{i}]"), out);
            }
        }
        Value::Text(s) => out.push(s.clone()),
        Value::Enum {
            name: Some(enumerant),
            ..
        } => out.push(enumerant.clone()),
        Value::Enum { value, name: None } => out.push(named(value.to_string())),
        Value::Bool(b) => out.push(named(b.to_string())),
        Value::Int(v) => out.push(named(v.to_string())),
        Value::UInt(v) => out.push(named(v.to_string())),
        Value::Float(v) => out.push(named(v.to_string())),
        Value::Data(d) => out.push(named(format!("{} bytes", d.len()))),
        Value::Null | Value::Void | Value::Opaque(_) => {}
    }
}

/// True for a topic the log view offers first: a log, a string or a rosout-style topic.
pub fn looks_like_text(info: &TopicInfo) -> bool {
    let name = format!("{} {}", info.topic, info.type_name).to_ascii_lowercase();
    ["log", "string", "rosout", "text", "diagnostic"]
        .iter()
        .any(|w| name.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diagnostic_message_reads_as_one_line_without_its_header() {
        let value = Value::Struct(vec![
            (
                "header".into(),
                Value::Struct(vec![("seq".into(), Value::UInt(4))]),
            ),
            (
                "severity".into(),
                Value::Enum {
                    value: 2,
                    name: Some("warning".into()),
                },
            ),
            ("source".into(), Value::Text("brakes".into())),
            ("message".into(), Value::Text("pad wear high".into())),
            ("code".into(), Value::UInt(12)),
            ("stampNs".into(), Value::UInt(1_700_000_000)),
        ]);
        assert_eq!(line_of(&value), "warning  brakes  pad wear high  code=12");
    }

    #[test]
    fn a_long_line_is_cut_with_an_ellipsis() {
        let value = Value::Text("x".repeat(MAX_LINE_CHARS + 50));
        let line = line_of(&value);
        assert_eq!(line.chars().count(), MAX_LINE_CHARS + 3);
        assert!(line.ends_with("..."));
    }
}
