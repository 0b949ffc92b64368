//! [`DataSource`]: what the app needs from a recording (and later a live capture): the topic
//! list and health at once, then a topic set's messages streamed to a worker.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use bag::{BagReader, PartStatus, ReadFilter};

/// A topic as the summaries describe it, before any message is read.
#[derive(Debug, Clone)]
pub struct TopicInfo {
    /// Topic name.
    pub topic: String,
    /// The type name tools show (registry name, else schema name).
    pub type_name: String,
    /// Channel message encoding (`capnproto`, `cdr`, `json`).
    pub message_encoding: String,
    /// Schema encoding (empty when there is no schema).
    pub schema_encoding: String,
    /// Schema name.
    pub schema_name: String,
    /// Schema data.
    pub schema_data: Vec<u8>,
    /// Messages on the topic in readable parts.
    pub message_count: u64,
}

/// One part's state, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartRow {
    /// File name.
    pub name: String,
    /// `complete`, `torn`, `missing`, `garbage`.
    pub state: &'static str,
    /// What happened to it, for a damaged part.
    pub detail: String,
    /// Messages read from it (recovered, for a torn part).
    pub message_count: u64,
    /// First and last log time.
    pub time_range_ns: Option<(u64, u64)>,
}

/// Whether a recording can be trusted, from its index and summaries.
#[derive(Debug, Clone, Default)]
pub struct Health {
    /// Messages the recorder dropped (`None`: the recording does not say).
    pub dropped_messages: Option<u64>,
    /// Messages recorded without a publisher timestamp (`None`: unknown).
    pub unstamped_messages: Option<u64>,
    /// Messages in readable parts.
    pub message_count: u64,
    /// Topics advertised but never published: (topic, schema).
    pub never_published: Vec<(String, String)>,
    /// Every part and its state.
    pub parts: Vec<PartRow>,
    /// Plain sentences from the reader about how the recording was opened.
    pub notes: Vec<String>,
}

/// What is known of a source as soon as it is open.
#[derive(Debug, Clone, Default)]
pub struct SourceSummary {
    /// Shown in the title bar.
    pub name: String,
    /// Where it came from.
    pub path: PathBuf,
    /// The topics, sorted by name.
    pub topics: Vec<TopicInfo>,
    /// First and last log time.
    pub time_range_ns: Option<(u64, u64)>,
    /// Health.
    pub health: Health,
}

/// One message handed to a [`DataSource::stream`] callback.
#[derive(Debug, Clone, Copy)]
pub struct MessageView<'a> {
    /// Index of the topic in [`SourceSummary::topics`].
    pub topic: usize,
    /// Log time, ns.
    pub log_time_ns: u64,
    /// Publish time, ns.
    pub publish_time_ns: u64,
    /// Payload.
    pub data: &'a [u8],
    /// True when it came from a torn part.
    pub from_torn_part: bool,
}

/// A recording or a live capture, as the loader and inspector see it.
pub trait DataSource: Send + Sync {
    /// Topics, time range and health: available at once.
    fn summary(&self) -> &SourceSummary;

    /// Streams the messages of the given topics (indices into [`SourceSummary::topics`]) in
    /// log-time order, starting at `start_ns`, until the callback returns `false` or `cancel`
    /// is set. Returns the problems met (a part that stopped early), or an error when nothing
    /// could be read.
    fn stream(
        &self,
        topics: &[usize],
        start_ns: Option<u64>,
        cancel: &AtomicBool,
        on_message: &mut dyn FnMut(MessageView<'_>) -> bool,
    ) -> Result<Vec<String>, String>;
}

/// A recording on disk, read with [`BagReader`].
#[derive(Debug)]
pub struct RecordingSource {
    reader: BagReader,
    summary: SourceSummary,
}

impl RecordingSource {
    /// Opens a bag directory, `.mcap` file or rosbag2 directory and reads its summaries.
    pub fn open(path: &Path) -> Result<Self, String> {
        let reader =
            BagReader::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let mut topics: Vec<TopicInfo> = Vec::new();
        for c in reader.channels() {
            let spec = &c.spec;
            // The same topic can appear as several channels (re-advertised); merge by name.
            if let Some(t) = topics.iter_mut().find(|t| t.topic == spec.topic) {
                t.message_count += c.message_count;
                continue;
            }
            let (schema_encoding, schema_name, schema_data) = match &spec.schema {
                Some(s) => (s.encoding.clone(), s.name.clone(), s.data.clone()),
                None => (String::new(), String::new(), Vec::new()),
            };
            topics.push(TopicInfo {
                topic: spec.topic.clone(),
                type_name: spec.type_name().to_owned(),
                message_encoding: spec.message_encoding.clone(),
                schema_encoding,
                schema_name,
                schema_data,
                message_count: c.message_count,
            });
        }
        topics.sort_by(|a, b| a.topic.cmp(&b.topic));
        let parts = reader
            .parts()
            .iter()
            .map(|p| PartRow {
                name: p.name.clone(),
                state: p.status.label(),
                detail: match &p.status {
                    PartStatus::Complete => String::new(),
                    PartStatus::Torn { damage } => format!(
                        "writer stopped: {} at byte {}; {} messages recovered",
                        damage.what, damage.offset, p.message_count
                    ),
                    PartStatus::Missing => "listed in metadata.yaml but not on disk".to_owned(),
                    PartStatus::Garbage { what } => format!("not an MCAP file: {what}"),
                },
                message_count: p.message_count,
                time_range_ns: p.time_range_ns,
            })
            .collect();
        let health = Health {
            dropped_messages: reader.dropped_messages(),
            unstamped_messages: reader.unstamped_messages(),
            message_count: reader.message_count(),
            never_published: reader
                .advertised_never_published()
                .iter()
                .map(|a| (a.topic.clone(), a.schema.clone()))
                .collect(),
            parts,
            notes: reader.notes().to_vec(),
        };
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let summary = SourceSummary {
            name,
            path: path.to_path_buf(),
            topics,
            time_range_ns: reader.time_range_ns(),
            health,
        };
        Ok(Self { reader, summary })
    }
}

impl DataSource for RecordingSource {
    fn summary(&self) -> &SourceSummary {
        &self.summary
    }

    fn stream(
        &self,
        topics: &[usize],
        start_ns: Option<u64>,
        cancel: &AtomicBool,
        on_message: &mut dyn FnMut(MessageView<'_>) -> bool,
    ) -> Result<Vec<String>, String> {
        let names: Vec<&str> = topics
            .iter()
            .filter_map(|&i| self.summary.topics.get(i).map(|t| t.topic.as_str()))
            .collect();
        let mut filter = ReadFilter::all().topics(names.iter().copied());
        if let Some(s) = start_ns {
            filter = filter.start_ns(s);
        }
        let mut cursor = self.reader.messages(&filter).map_err(|e| e.to_string())?;
        let parts = self.reader.parts();
        let mut n: u32 = 0;
        while let Some(m) = cursor.next_message() {
            n = n.wrapping_add(1);
            if n.is_multiple_of(4096) && cancel.load(Ordering::Relaxed) {
                break;
            }
            let topic = m.channel.spec.topic.as_str();
            let Some(index) = topics
                .iter()
                .copied()
                .find(|&i| self.summary.topics.get(i).is_some_and(|t| t.topic == topic))
            else {
                continue;
            };
            let torn = parts
                .get(m.part)
                .is_some_and(|p| matches!(p.status, PartStatus::Torn { .. }));
            let keep_going = on_message(MessageView {
                topic: index,
                log_time_ns: m.log_time_ns,
                publish_time_ns: m.publish_time_ns,
                data: m.data,
                from_torn_part: torn,
            });
            if !keep_going {
                break;
            }
        }
        Ok(cursor.issues().iter().map(ToString::to_string).collect())
    }
}
