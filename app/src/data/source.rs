//! [`DataSource`]: what the app needs from a recording (and later a live capture): the topic
//! list and health at once, then a topic set's messages streamed to a worker.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use bag::{BagReader, IndexState, PartStatus, ReadFilter};

use crate::error::Error;

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
    /// Messages on the topic in readable parts; `None` until counted: a rosbag2 SQLite file
    /// stores no per-topic counts, and its topics are counted by loading them.
    pub message_count: Option<u64>,
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
    /// Loss known from the index and not shown elsewhere: an index that cannot be read, loss
    /// an earlier tool recorded (a torn tail cut by reindex, ...), part names refused.
    pub loss: Vec<String>,
}

impl Health {
    /// Every reason known when the recording opens to distrust it, one sentence each: dropped
    /// messages, parts that are not complete, loss recorded in the index. Empty means no known
    /// loss (an unknown drop count is not loss, and is shown as unknown, not as 0). Problems met
    /// while reading the messages come later, from the loader.
    pub fn known_loss(&self) -> Vec<String> {
        let mut reasons = Vec::new();
        if let Some(n) = self.dropped_messages.filter(|n| *n > 0) {
            reasons.push(format!("{n} messages dropped by the recorder"));
        }
        for part in self.parts.iter().filter(|p| p.state != "complete") {
            reasons.push(format!("part {} is {}", part.name, part.state));
        }
        reasons.extend(self.loss.iter().cloned());
        reasons
    }
}

/// What [`Health::loss`] holds for `reader`.
fn index_loss(reader: &BagReader) -> Vec<String> {
    let mut lines = Vec::new();
    if let IndexState::Unreadable(why) = reader.index() {
        lines.push(format!(
            "metadata.yaml cannot be read ({why}): parts were found on disk, and what it counted \
             (drops, unstamped messages, recorded loss) is unknown"
        ));
    }
    if let Some(m) = reader.metadata() {
        lines.extend(
            m.redline
                .iter()
                .flat_map(|r| &r.loss)
                .map(ToString::to_string),
        );
        lines.extend(m.refused_part_names.iter().map(ToString::to_string));
    }
    lines
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
    /// Publish time, ns; `None` when unknown: the message came without one, or the format
    /// has none (see [`known_publish_time`]).
    pub publish_time_ns: Option<u64>,
    /// Payload.
    pub data: &'a [u8],
    /// True when it came from a torn part.
    pub from_torn_part: bool,
}

/// A span of log time: `start_ns <= t < end_ns`, either end open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeWindow {
    /// First log time included (`None`: from the start).
    pub start_ns: Option<u64>,
    /// First log time excluded (`None`: to the end).
    pub end_ns: Option<u64>,
    /// One of the windows [`DataSource::windows`] cut: together they cover all time, and they
    /// are read together (see [`bag::ReadFilter::tiled`]); such a read may end in
    /// [`Error::ReadAgain`].
    pub tiled: bool,
}

impl TimeWindow {
    /// The whole recording.
    pub const ALL: TimeWindow = TimeWindow {
        start_ns: None,
        end_ns: None,
        tiled: false,
    };

    /// The whole recording, as the one window [`DataSource::windows`] cut.
    pub const TILED_ALL: TimeWindow = TimeWindow {
        tiled: true,
        ..Self::ALL
    };

    /// From `start_ns` to the end.
    pub fn starting_at(start_ns: u64) -> Self {
        TimeWindow {
            start_ns: Some(start_ns),
            ..Self::ALL
        }
    }
}

/// A recording or a live capture, as the loader and inspector see it.
pub trait DataSource: Send + Sync {
    /// Topics, time range and health: available at once.
    fn summary(&self) -> &SourceSummary;

    /// Streams the messages of the given topics (indices into [`SourceSummary::topics`]) in
    /// log-time order, within `window`, until the callback returns `false` or `cancel` is set.
    /// Returns the problems met (a part that stopped early), or an error when nothing could be
    /// read.
    fn stream(
        &self,
        topics: &[usize],
        window: TimeWindow,
        cancel: &AtomicBool,
        on_message: &mut dyn FnMut(MessageView<'_>) -> bool,
    ) -> Result<Vec<String>, Error>;

    /// About `wanted` disjoint windows, in time order, that together cover every message and
    /// can be read independently at about `1 / wanted` of the cost of the whole (so loading can
    /// read them on parallel workers). The default is one window. Each is
    /// [tiled](TimeWindow::tiled).
    fn windows(&self, wanted: usize) -> Vec<TimeWindow> {
        let _ = wanted;
        vec![TimeWindow::TILED_ALL]
    }
}

/// Whether `spec` holds the messages `topic` decodes: the same encoding and definition.
fn same_definition(topic: &TopicInfo, spec: &bag::ChannelSpec) -> bool {
    let (encoding, name, data) = spec.schema.as_ref().map_or(("", "", &[][..]), |s| {
        (s.encoding.as_str(), s.name.as_str(), s.data.as_slice())
    });
    topic.message_encoding == spec.message_encoding
        && topic.schema_encoding == encoding
        && topic.schema_name == name
        && topic.schema_data == data
}

/// The publish time of a message as the app uses it: `None` when unknown. MCAP writes 0 when
/// a format has no publish time, and our writer (like rosbag2's recorder) stores the log time
/// for a message that arrived without one, so a publish time equal to the log time says
/// nothing about latency either.
pub fn known_publish_time(log_time_ns: u64, publish_time_ns: u64) -> Option<u64> {
    (publish_time_ns != 0 && publish_time_ns != log_time_ns).then_some(publish_time_ns)
}

/// A recording on disk, read with [`BagReader`].
#[derive(Debug)]
pub struct RecordingSource {
    reader: BagReader,
    summary: SourceSummary,
    /// Recording-wide channel id -> index in `summary.topics`.
    channel_topic: Vec<Option<usize>>,
    /// Per topic, the name it was recorded under (`summary.topics` names a second type on one
    /// name apart).
    recorded_topics: Vec<String>,
    /// Per part: read in file order because it is torn.
    torn_parts: Vec<bool>,
}

impl RecordingSource {
    /// Opens a bag directory, `.mcap` file or rosbag2 directory and reads its summaries. A
    /// rosbag2 SQLite file's topics are left uncounted: loading counts them, and counting
    /// first would read the whole table one more time.
    pub fn open(path: &Path) -> Result<Self, Error> {
        Self::open_reporting(path, &|_| {})
    }

    /// Opens as [`RecordingSource::open`] does, telling `report` how decompressing the parts
    /// stored compressed whole goes (the one step of opening that takes time in proportion to
    /// the data).
    pub fn open_reporting(
        path: &Path,
        report: &dyn Fn(&bag::Decompressing),
    ) -> Result<Self, Error> {
        let reader =
            BagReader::open_reporting(path, false, report).map_err(|source| Error::Open {
                path: path.to_path_buf(),
                source,
            })?;
        // Channels merge into one topic when they share its name and definition (re-advertised,
        // or the same in each part). A name recorded with another type or definition (a node
        // restarted with a new message version) is a topic of its own, named after its type:
        // decoding its messages with the first one's definition would show values the
        // recording does not hold. Each topic is kept with the name it was recorded under.
        let mut topics: Vec<(TopicInfo, String)> = Vec::new();
        for c in reader.channels() {
            let spec = &c.spec;
            if let Some((t, _)) = topics
                .iter_mut()
                .find(|(t, recorded)| *recorded == spec.topic && same_definition(t, spec))
            {
                t.message_count = t.message_count.zip(c.message_count).map(|(a, b)| a + b);
                continue;
            }
            let type_name = spec.type_name().to_owned();
            let namesakes: Vec<&TopicInfo> = topics
                .iter()
                .filter(|(_, recorded)| *recorded == spec.topic)
                .map(|(t, _)| t)
                .collect();
            let topic = if namesakes.is_empty() {
                spec.topic.clone()
            } else if namesakes.iter().any(|t| t.type_name == type_name) {
                format!(
                    "{} (as {type_name}, definition {})",
                    spec.topic,
                    namesakes.len() + 1
                )
            } else {
                format!("{} (as {type_name})", spec.topic)
            };
            let (schema_encoding, schema_name, schema_data) = match &spec.schema {
                Some(s) => (s.encoding.clone(), s.name.clone(), s.data.clone()),
                None => (String::new(), String::new(), Vec::new()),
            };
            topics.push((
                TopicInfo {
                    topic,
                    type_name,
                    message_encoding: spec.message_encoding.clone(),
                    schema_encoding,
                    schema_name,
                    schema_data,
                    message_count: c.message_count,
                },
                spec.topic.clone(),
            ));
        }
        topics.sort_by(|a, b| a.0.topic.cmp(&b.0.topic));
        let channel_topic = reader
            .channels()
            .iter()
            .map(|c| {
                topics.iter().position(|(t, recorded)| {
                    *recorded == c.spec.topic && same_definition(t, &c.spec)
                })
            })
            .collect();
        let recorded_topics = topics.iter().map(|(_, r)| r.clone()).collect();
        let topics: Vec<TopicInfo> = topics.into_iter().map(|(t, _)| t).collect();
        let parts = reader
            .parts()
            .iter()
            .map(|p| PartRow {
                name: p.name.clone(),
                state: p.status.label(),
                detail: match &p.status {
                    PartStatus::Complete => String::new(),
                    PartStatus::Torn { damage } => format!(
                        "writer stopped at byte {}: {}; {} messages recovered",
                        damage.offset, damage.what, p.message_count
                    ),
                    PartStatus::Missing => "listed in metadata.yaml but not on disk".to_owned(),
                    PartStatus::Garbage { what } => format!("the file {what}"),
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
            loss: index_loss(&reader),
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
        let torn_parts = reader
            .parts()
            .iter()
            .map(|p| matches!(p.status, PartStatus::Torn { .. }))
            .collect();
        Ok(Self {
            reader,
            summary,
            channel_topic,
            recorded_topics,
            torn_parts,
        })
    }
}

impl DataSource for RecordingSource {
    fn summary(&self) -> &SourceSummary {
        &self.summary
    }

    fn stream(
        &self,
        topics: &[usize],
        window: TimeWindow,
        cancel: &AtomicBool,
        on_message: &mut dyn FnMut(MessageView<'_>) -> bool,
    ) -> Result<Vec<String>, Error> {
        let mut wanted = vec![false; self.summary.topics.len()];
        for &i in topics {
            if let Some(w) = wanted.get_mut(i) {
                *w = true;
            }
        }
        let mut filter = if wanted.iter().all(|&w| w) {
            ReadFilter::all()
        } else {
            ReadFilter::all().topics(
                topics
                    .iter()
                    .filter_map(|&i| self.recorded_topics.get(i).map(String::as_str)),
            )
        };
        if let Some(s) = window.start_ns {
            filter = filter.start_ns(s);
        }
        if let Some(e) = window.end_ns {
            filter = filter.end_ns(e);
        }
        if window.tiled {
            filter = filter.tiled();
        }
        let mut cursor = self
            .reader
            .messages(&filter)
            .map_err(|source| Error::Read { source })?;
        let mut n: u32 = 0;
        while let Some(m) = cursor.next_message() {
            n = n.wrapping_add(1);
            if n.is_multiple_of(4096) && cancel.load(Ordering::Relaxed) {
                break;
            }
            let Some(index) = self
                .channel_topic
                .get(m.channel.id)
                .copied()
                .flatten()
                .filter(|&i| wanted.get(i).copied().unwrap_or(false))
            else {
                continue;
            };
            let keep_going = on_message(MessageView {
                topic: index,
                log_time_ns: m.log_time_ns,
                publish_time_ns: known_publish_time(m.log_time_ns, m.publish_time_ns),
                data: m.data,
                from_torn_part: self.torn_parts.get(m.part).copied().unwrap_or(false),
            });
            if !keep_going {
                break;
            }
        }
        if cursor.issues().iter().any(bag::ReadIssue::asks_reread) {
            return Err(Error::ReadAgain);
        }
        Ok(cursor.issues().iter().map(ToString::to_string).collect())
    }

    /// Splits at part starts and inside the time range of each part read through its chunk
    /// indexes, in proportion to its messages; never inside a part read in file order (torn,
    /// or without indexes), since every window overlapping such a part reads all of it. Cuts
    /// inside a part move to the next chunk start, so no chunk is decompressed by two windows.
    fn windows(&self, wanted: usize) -> Vec<TimeWindow> {
        let parts = self.reader.parts();
        let total: u64 = parts.iter().map(|p| p.message_count).sum();
        if wanted <= 1 || total == 0 {
            return vec![TimeWindow::ALL];
        }
        let mut cuts: Vec<u64> = Vec::new();
        // Cuts b with first < b <= last would put such a part in two windows.
        let mut whole: Vec<(u64, u64)> = Vec::new();
        for (index, p) in parts.iter().enumerate() {
            if p.message_count == 0 {
                continue;
            }
            let Some((first, last)) = p.time_range_ns else {
                // Unknown where its messages lie: every window would read it.
                return vec![TimeWindow::ALL];
            };
            cuts.push(first);
            if !p.reads_time_windows() {
                whole.push((first, last));
                continue;
            }
            let pieces = (wanted as u128 * u128::from(p.message_count)).div_ceil(u128::from(total));
            let span = u128::from(last - first);
            let chunk_starts = self.reader.chunk_start_times(index).unwrap_or_default();
            for k in 1..pieces {
                let cut = first + u64::try_from(span * k / pieces).unwrap_or(0);
                if chunk_starts.is_empty() {
                    cuts.push(cut);
                } else if let Some(&start) =
                    chunk_starts.get(chunk_starts.partition_point(|&s| s < cut))
                {
                    // The first chunk start at or after the cut; none means the cut falls in
                    // the last chunk, which the part's last window reads whole.
                    cuts.push(start);
                }
            }
        }
        let start = cuts.iter().copied().min().unwrap_or(0);
        cuts.retain(|&b| b > start && !whole.iter().any(|&(f, l)| b > f && b <= l));
        cuts.sort_unstable();
        cuts.dedup();
        let mut windows = Vec::with_capacity(cuts.len() + 1);
        let mut from = None;
        for b in cuts {
            windows.push(TimeWindow {
                start_ns: from,
                end_ns: Some(b),
                tiled: true,
            });
            from = Some(b);
        }
        windows.push(TimeWindow {
            start_ns: from,
            end_ns: None,
            tiled: true,
        });
        windows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bag::{BagWriter, ChannelSpec, WriteOptions};

    #[test]
    fn a_publish_time_of_zero_or_equal_to_the_log_time_is_unknown() {
        assert_eq!(known_publish_time(1_000, 0), None);
        assert_eq!(known_publish_time(1_000, 1_000), None);
        assert_eq!(known_publish_time(1_000, 990), Some(990));
        // A publisher whose clock runs ahead still has a publish time.
        assert_eq!(known_publish_time(1_000, 1_010), Some(1_010));
    }

    /// Two parts of 2,000 IMU messages each, in chunks of about 16 KiB.
    fn small_chunked_bag(dir: &Path) -> PathBuf {
        let path = dir.join("bag");
        let options = WriteOptions::new()
            .chunk_max_age(None)
            .chunk_size_bytes(16 << 10)
            .part_max_duration_ns(Some(10_000_000_000));
        let mut w = BagWriter::create(&path, options).expect("create");
        let info = schemas::by_name("Imu").expect("registered");
        let imu = w.add_channel(ChannelSpec::capnp(
            "car/imu",
            info.registry_name,
            info.capnp_name,
            info.descriptor,
        ));
        for seq in 0..4_000u64 {
            let bytes = schemas::sample::encode("Imu", seq as f64 * 0.005, seq).expect("encode");
            let t = 1_000_000_000 + seq * 5_000_000;
            w.write(imu, t, Some(t), &bytes).expect("write");
        }
        w.close().expect("close");
        path
    }

    #[test]
    fn windows_cut_at_chunk_starts_and_read_every_message_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let source = RecordingSource::open(&small_chunked_bag(dir.path())).expect("open");
        let reader = BagReader::open(dir.path().join("bag")).expect("open");
        assert_eq!(reader.parts().len(), 2);
        let starts: Vec<u64> = (0..2)
            .flat_map(|p| reader.chunk_start_times(p).expect("indexed"))
            .collect();
        assert!(starts.len() > 8, "{} chunks", starts.len());

        let windows = source.windows(8);
        assert!(windows.len() >= 6, "{windows:?}");
        for w in &windows {
            if let Some(cut) = w.end_ns {
                assert!(starts.contains(&cut), "cut {cut} is not a chunk start");
            }
        }
        let mut seen = 0u64;
        let mut last = 0u64;
        for w in windows {
            source
                .stream(&[0], w, &AtomicBool::new(false), &mut |m| {
                    assert!(m.log_time_ns >= last, "out of order");
                    last = m.log_time_ns;
                    seen += 1;
                    true
                })
                .expect("stream");
        }
        assert_eq!(seen, 4_000);
    }

    fn ros1_record(header: &[(&str, &[u8])], data: &[u8]) -> Vec<u8> {
        let mut fields = Vec::new();
        for (name, value) in header {
            fields.extend(((name.len() + 1 + value.len()) as u32).to_le_bytes());
            fields.extend(name.as_bytes());
            fields.push(b'=');
            fields.extend(*value);
        }
        let mut r = (fields.len() as u32).to_le_bytes().to_vec();
        r.extend(fields);
        r.extend((data.len() as u32).to_le_bytes());
        r.extend(data);
        r
    }

    /// A ROS 1 bag of 2,000 messages on two connections in chunks of 50, the second
    /// connection's messages logged 30 ms late, so that neighbouring chunks overlap in time.
    fn ros1_bag(dir: &Path) -> PathBuf {
        let path = dir.join("drive.bag");
        let mut bag = b"#ROSBAG V2.0\n".to_vec();
        bag.extend(ros1_record(
            &[("op", &[0x03]), ("index_pos", &0u64.to_le_bytes())],
            &[b' '; 64],
        ));
        let mut chunk = Vec::new();
        for conn in 0..2u32 {
            let data = ros1_record(
                &[
                    ("type", b"demo/Value"),
                    ("message_definition", b"uint32 v\n"),
                ],
                &[],
            );
            // A connection record's data is itself a list of fields: drop the record framing.
            let data = &data[4..data.len() - 4];
            chunk.extend(ros1_record(
                &[
                    ("op", &[0x07]),
                    ("conn", &conn.to_le_bytes()),
                    ("topic", format!("/v{conn}").as_bytes()),
                ],
                data,
            ));
        }
        for i in 0..2_000u64 {
            let conn = (i % 2) as u32;
            let t = 10_000_000_000 + i * 1_000_000 - u64::from(conn) * 30_000_000;
            let mut time = ((t / 1_000_000_000) as u32).to_le_bytes().to_vec();
            time.extend(((t % 1_000_000_000) as u32).to_le_bytes());
            chunk.extend(ros1_record(
                &[
                    ("op", &[0x02]),
                    ("conn", &conn.to_le_bytes()),
                    ("time", &time),
                ],
                &(i as u32).to_le_bytes(),
            ));
            if i % 50 == 49 {
                let size = (chunk.len() as u32).to_le_bytes();
                bag.extend(ros1_record(
                    &[("op", &[0x05]), ("compression", b"none"), ("size", &size)],
                    &chunk,
                ));
                chunk.clear();
            }
        }
        std::fs::write(&path, bag).expect("write");
        path
    }

    #[test]
    fn a_ros1_bag_splits_into_windows_at_chunk_starts_and_reads_every_message_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = ros1_bag(dir.path());
        let source = RecordingSource::open(&path).expect("open");
        let starts = BagReader::open(&path)
            .expect("open")
            .chunk_start_times(0)
            .expect("a ROS 1 bag's chunks");
        assert_eq!(starts.len(), 40);
        let windows = source.windows(4);
        assert_eq!(windows.len(), 4, "{windows:?}");
        let mut seen = Vec::new();
        let mut last = 0u64;
        for w in windows {
            if let Some(cut) = w.end_ns {
                assert!(starts.contains(&cut), "cut {cut} is not a chunk start");
            }
            source
                .stream(&[0, 1], w, &AtomicBool::new(false), &mut |m| {
                    assert!(m.log_time_ns >= last, "out of order");
                    last = m.log_time_ns;
                    seen.push(u32::from_le_bytes(m.data[..4].try_into().expect("4 bytes")));
                    true
                })
                .expect("stream");
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..2_000).collect::<Vec<u32>>(), "each message once");
    }
}
