//! `metadata.yaml`: rosbag2's `rosbag2_bagfile_information` layout plus our `redline:` section.
//!
//! Reading is lenient (rosbag2 versions 4 to 9 and our own files all parse; keys a version
//! lacks read as empty or unknown); writing produces version 8 with every key rosbag2 writes
//! for it, `ros_distro` included (`''` when unknown), or version 9 when the index it keeps or
//! takes descriptions from is 9 (its QoS profiles are lists).

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::channel::ChannelSpec;
use crate::error::{BagError, Result};

/// The file name of the index inside a bag directory.
pub const METADATA_FILE: &str = "metadata.yaml";

/// The rosbag2 metadata version we write.
pub const METADATA_VERSION: u32 = 8;

/// The whole `metadata.yaml` document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    /// rosbag2's part, readable by ROS tooling.
    pub rosbag2_bagfile_information: BagfileInformation,
    /// What MCAP has no slot for. Absent in bags written by other tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redline: Option<RedlineSection>,
    /// Part names the file listed that are not plain file names inside the bag (`../x.mcap`,
    /// `/abs/x.mcap`): taken out of every list above by [`Metadata::parse`], so that no reader
    /// or repair ever opens them, and kept here to be reported as damage. Never written.
    #[serde(skip)]
    pub refused_part_names: Vec<RefusedPartName>,
    /// Fields this version does not know, kept as found so that rewriting an index (reindex)
    /// never drops what a newer rosbag2 or Redline wrote.
    #[serde(flatten)]
    pub other_fields: BTreeMap<String, serde_yaml_ng::Value>,
}

/// A part name in `metadata.yaml` that would lead outside the bag directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedPartName {
    /// The list it was in (`relative_file_paths`, `files`, `redline.parts`).
    pub field: &'static str,
    /// The name as written.
    pub name: String,
    /// Why it is not a plain file name.
    pub why: &'static str,
}

impl std::fmt::Display for RefusedPartName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "metadata.yaml lists part {:?} in {}, which is {}: refused, nothing outside the bag is read",
            self.name, self.field, self.why
        )
    }
}

/// Whether `name` is a plain file name that stays inside the bag directory when joined to it:
/// not empty, not `.` or `..`, no separators, not absolute. `Err` says what it is instead.
pub fn check_part_name(name: &str) -> std::result::Result<(), &'static str> {
    if name.is_empty() {
        return Err("empty");
    }
    if name.contains(['/', '\\']) {
        return Err("a path, not a file name");
    }
    if name.contains('\0') {
        return Err("a name with a NUL byte");
    }
    let mut components = Path::new(name).components();
    match (components.next(), components.next()) {
        (Some(Component::Normal(n)), None) if n == name => Ok(()),
        _ => Err("not a plain file name"),
    }
}

/// rosbag2's `rosbag2_bagfile_information`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BagfileInformation {
    /// Layout version (we write 8).
    pub version: u32,
    /// Always `mcap` for bags this crate reads.
    pub storage_identifier: String,
    /// Last log time minus first.
    pub duration: Duration,
    /// First log time.
    pub starting_time: StartingTime,
    /// Messages in all parts.
    pub message_count: u64,
    /// One entry per topic.
    pub topics_with_message_count: Vec<TopicWithCount>,
    /// rosbag2 file/message compression; empty because MCAP compresses inside its chunks.
    pub compression_format: String,
    /// See `compression_format`.
    pub compression_mode: String,
    /// Part file names, relative to the bag directory, in order.
    pub relative_file_paths: Vec<String>,
    /// Per part: path, start, duration, count.
    pub files: Vec<FileInformation>,
    /// Free-form key/values (rosbag2 writes `~` when empty).
    pub custom_data: Option<BTreeMap<String, String>>,
    /// The ROS distribution (`humble`, `jazzy`); `None` when the index does not say (versions
    /// before 8, or `''` as rosbag2 writes an unknown one). Always written, as `''` when
    /// unknown: rosbag2 reads the key unconditionally from version 8 on, and we write version 8.
    #[serde(
        serialize_with = "empty_when_none",
        deserialize_with = "none_when_empty"
    )]
    pub ros_distro: Option<String>,
    /// Fields this version does not know, kept as found so that rewriting an index (reindex)
    /// never drops what a newer rosbag2 or Redline wrote.
    #[serde(flatten)]
    pub other_fields: BTreeMap<String, serde_yaml_ng::Value>,
}

/// `None` as `''`, as rosbag2 writes an unknown `ros_distro`.
fn empty_when_none<S: serde::Serializer>(
    value: &Option<String>,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.serialize_str(value.as_deref().unwrap_or(""))
}

/// `''` (and `~`) as `None`: rosbag2's way of saying the distribution is unknown.
fn none_when_empty<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<Option<String>, D::Error> {
    let value: Option<String> = Option::deserialize(deserializer)?;
    Ok(value.filter(|v| !v.is_empty()))
}

/// A duration in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Duration {
    /// Nanoseconds.
    pub nanoseconds: u64,
}

/// A point in time in nanoseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartingTime {
    /// Nanoseconds since the Unix epoch.
    pub nanoseconds_since_epoch: u64,
}

/// A topic and how many messages it has.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TopicWithCount {
    /// The topic's description.
    pub topic_metadata: TopicMetadata,
    /// Messages on the topic in all parts.
    pub message_count: u64,
    /// Fields this version does not know, kept as found so that rewriting an index (reindex)
    /// never drops what a newer rosbag2 or Redline wrote.
    #[serde(flatten)]
    pub other_fields: BTreeMap<String, serde_yaml_ng::Value>,
}

/// rosbag2's description of a topic.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TopicMetadata {
    /// The topic name.
    pub name: String,
    /// The type: our registry name (`EngineRpm`) or a ROS type (`std_msgs/msg/String`).
    #[serde(rename = "type")]
    pub type_name: String,
    /// `capnproto`, `cdr`, `json`, ...
    pub serialization_format: String,
    /// rosbag2 QoS profiles (a YAML string in version 8, a list in 9); kept as found.
    pub offered_qos_profiles: serde_yaml_ng::Value,
    /// rosbag2's type description hash; empty for ours.
    pub type_description_hash: String,
    /// Fields this version does not know, kept as found so that rewriting an index (reindex)
    /// never drops what a newer rosbag2 or Redline wrote.
    #[serde(flatten)]
    pub other_fields: BTreeMap<String, serde_yaml_ng::Value>,
}

/// One part in rosbag2's `files` list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileInformation {
    /// Relative file name.
    pub path: String,
    /// First log time in the part.
    pub starting_time: StartingTime,
    /// Last minus first log time in the part.
    pub duration: Duration,
    /// Messages in the part.
    pub message_count: u64,
    /// Fields this version does not know, kept as found so that rewriting an index (reindex)
    /// never drops what a newer rosbag2 or Redline wrote.
    #[serde(flatten)]
    pub other_fields: BTreeMap<String, serde_yaml_ng::Value>,
}

/// Our own section: what the parts cannot say about themselves.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RedlineSection {
    /// Messages that never reached the recording (queue overflow, capture eviction); `None`
    /// when nobody knows (a bag reindexed without a readable count, an export of such a bag).
    /// Written as `null`, never left out: an older reader that finds `null` where it expects a
    /// number calls the whole index unreadable, hence the count unknown, where a missing field
    /// would have read as 0.
    pub dropped_messages: Option<u64>,
    /// Messages that arrived without a publisher timestamp (publish_time = log_time); `None`
    /// when unknown, written as `null` for the same reason.
    pub unstamped_messages: Option<u64>,
    /// Of `dropped_messages`, those the writer itself refused, by reason (a message larger
    /// than a chunk may be). Left out when empty.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub dropped_by_reason: BTreeMap<String, u64>,
    /// Topics advertised during the recording that never published a message.
    pub advertised_never_published: Vec<Advertised>,
    /// Per part: state, count, time range.
    pub parts: Vec<PartRecord>,
    /// Set on bags made from another bag (`bag export`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceRecord>,
    /// What is known to be lost, and where: kept by every rebuild of the index, so that a
    /// repaired bag still says what the repair could not bring back. Left out when empty
    /// (older readers ignore it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub loss: Vec<LossRecord>,
    /// Fields this version does not know, kept as found so that rewriting an index (reindex)
    /// never drops what a newer rosbag2 or Redline wrote.
    #[serde(flatten)]
    pub other_fields: BTreeMap<String, serde_yaml_ng::Value>,
}

/// A topic seen advertised (liveliness) with its schema.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Advertised {
    /// The topic (zenoh key).
    pub topic: String,
    /// Registry schema name.
    pub schema: String,
}

/// The state of a part file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartState {
    /// Closed cleanly: summary and indexes present.
    #[default]
    Complete,
    /// Still being written (the recorder is running, or was killed: reindex decides).
    Open,
    /// Its writer died: no summary; messages are recovered by a file-order scan.
    Torn,
}

/// Our record of one part.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PartRecord {
    /// Relative file name.
    pub path: String,
    /// Complete, open or torn.
    pub state: PartState,
    /// Messages in the part (for a torn part: messages recovered).
    pub message_count: u64,
    /// First log time, ns.
    pub start_ns: u64,
    /// Last log time, ns.
    pub end_ns: u64,
}

/// What kind of loss a [`LossRecord`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossKind {
    /// A part the index listed is gone from the bag.
    MissingPart,
    /// A torn part was cut at its damage: the bytes from there to its end are not in the part
    /// any more (the original is kept beside it as `.mcap.torn`).
    TornTail,
    /// A part is not readable MCAP and holds no messages that could be recovered.
    UnreadablePart,
    /// The index listed a part name that leads outside the bag; it was never read.
    RefusedPartName,
    /// An export stopped before it covered its source range.
    ExportCutShort,
    /// Messages of a torn part on channels it never defined: they cannot be attributed to a
    /// topic, so the repaired part leaves them out (the original keeps them).
    UnattributedMessages,
}

/// One loss, as the index keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LossRecord {
    /// What was lost.
    pub kind: LossKind,
    /// The part concerned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// Messages known to be lost (`None`: unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<u64>,
    /// First byte lost, in the part as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_byte: Option<u64>,
    /// One past the last byte lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_byte: Option<u64>,
    /// First log time of what is lost, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ns: Option<u64>,
    /// End (exclusive) of the log times lost, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_ns: Option<u64>,
    /// In words.
    #[serde(default)]
    pub detail: String,
}

impl LossRecord {
    /// A record of `kind` for `part`, with `detail`; the other fields unset.
    pub fn new(kind: LossKind, part: Option<String>, detail: impl Into<String>) -> Self {
        LossRecord {
            kind,
            part,
            messages: None,
            start_byte: None,
            end_byte: None,
            start_ns: None,
            end_ns: None,
            detail: detail.into(),
        }
    }
}

impl std::fmt::Display for LossRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.kind {
            LossKind::MissingPart => "a listed part is gone",
            LossKind::TornTail => "a torn part was cut",
            LossKind::UnreadablePart => "a part is unreadable",
            LossKind::RefusedPartName => "a part name was refused",
            LossKind::ExportCutShort => "the export stopped short of its range",
            LossKind::UnattributedMessages => "messages on undefined channels were left out",
        };
        write!(f, "recorded loss: {what}")?;
        if let Some(part) = &self.part {
            write!(f, " ({part})")?;
        }
        if let Some(n) = self.messages {
            write!(f, ", {n} messages")?;
        }
        if let (Some(a), Some(b)) = (self.start_byte, self.end_byte) {
            write!(f, ", bytes {a}..{b}")?;
        }
        match (self.start_ns, self.end_ns) {
            (Some(a), Some(b)) => write!(f, ", log time {a}..{b} ns")?,
            (Some(a), None) => write!(f, ", from log time {a} ns")?,
            _ => {}
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// Where an exported bag came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SourceRecord {
    /// The source bag's path as given.
    pub path: String,
    /// First log time kept, ns.
    pub start_ns: u64,
    /// Last log time kept, ns.
    pub end_ns: u64,
    /// Topics kept (empty: all).
    pub topics: Vec<String>,
}

impl Metadata {
    /// Reads and parses `path` (a `metadata.yaml`).
    pub fn load(path: &Path) -> Result<Self> {
        // Through `open_regular`: a FIFO named metadata.yaml must not block the reader.
        let mut text = String::new();
        crate::layout::open_regular(path)
            .and_then(|mut file| std::io::Read::read_to_string(&mut file, &mut text))
            .map_err(|e| BagError::io("reading", path, e))?;
        Self::parse(&text).map_err(|message| BagError::BadMetadata {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Parses the text of a `metadata.yaml`.
    ///
    /// Part names that are not plain file names inside the bag are taken out of the lists and
    /// kept in [`Metadata::refused_part_names`].
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let mut m: Self = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
        m.refuse_unsafe_part_names();
        Ok(m)
    }

    /// Moves every part name that would lead outside the bag into `refused_part_names`.
    fn refuse_unsafe_part_names(&mut self) {
        let refused = &mut self.refused_part_names;
        let mut keep = |field: &'static str, name: &str| match check_part_name(name) {
            Ok(()) => true,
            Err(why) => {
                if !refused.iter().any(|r| r.name == name) {
                    refused.push(RefusedPartName {
                        field,
                        name: name.to_string(),
                        why,
                    });
                }
                false
            }
        };
        let info = &mut self.rosbag2_bagfile_information;
        info.relative_file_paths
            .retain(|n| keep("relative_file_paths", n));
        info.files.retain(|f| keep("files", &f.path));
        if let Some(r) = &mut self.redline {
            r.parts.retain(|p| keep("redline.parts", &p.path));
        }
    }

    /// What can still be read of our section from the text of a `metadata.yaml` that does not
    /// parse: the whole section if only another part of the file is broken, else field by
    /// field, else (the text is not even YAML) `dropped_messages: N` and
    /// `unstamped_messages: N` lines. `None` when there is no trace of our section. Counts
    /// that cannot be read stay `None` (unknown), never 0; part names that leave the bag are
    /// left out.
    pub fn salvage(text: &str) -> Option<RedlineSection> {
        use serde_yaml_ng::Value;
        let Ok(document) = serde_yaml_ng::from_str::<Value>(text) else {
            return salvage_lines(text);
        };
        let section = document.get("redline")?;
        let mut redline = match serde_yaml_ng::from_value::<RedlineSection>(section.clone()) {
            Ok(r) => r,
            Err(_) => {
                // Each field that still reads; the rest stays unknown or empty.
                RedlineSection {
                    dropped_messages: field(section, "dropped_messages"),
                    unstamped_messages: field(section, "unstamped_messages"),
                    dropped_by_reason: field(section, "dropped_by_reason").unwrap_or_default(),
                    advertised_never_published: field(section, "advertised_never_published")
                        .unwrap_or_default(),
                    parts: field(section, "parts").unwrap_or_default(),
                    source: field(section, "source"),
                    loss: field(section, "loss").unwrap_or_default(),
                    other_fields: BTreeMap::new(),
                }
            }
        };
        redline.parts.retain(|p| check_part_name(&p.path).is_ok());
        Some(redline)
    }

    /// Reads `path` (a regular file, never a FIFO or device) and [salvages](Self::salvage) it.
    pub fn salvage_file(path: &Path) -> Result<Option<RedlineSection>> {
        let meta = fs::metadata(path).map_err(|e| BagError::io("opening", path, e))?;
        if !meta.is_file() {
            return Ok(None);
        }
        let bytes = fs::read(path).map_err(|e| BagError::io("reading", path, e))?;
        Ok(Self::salvage(&String::from_utf8_lossy(&bytes)))
    }

    /// The YAML text.
    pub fn to_yaml(&self) -> String {
        // Serializing plain structs of strings and integers cannot fail.
        serde_yaml_ng::to_string(self).unwrap_or_default()
    }

    /// Writes `dir/metadata.yaml` atomically: a temporary file, fsync, rename, fsync of the
    /// directory. Readers see the old index or the new one, never a half-written one.
    pub fn store_atomically(&self, dir: &Path) -> Result<()> {
        let final_path = dir.join(METADATA_FILE);
        let tmp_path: PathBuf = dir.join(format!(".{METADATA_FILE}.tmp"));
        // Created new, so that a planted symlink of that name is never followed out of the bag.
        let _ = fs::remove_file(&tmp_path);
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp_path)
            .map_err(|e| BagError::io("creating", &tmp_path, e))?;
        file.write_all(self.to_yaml().as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|e| BagError::io("writing", &tmp_path, e))?;
        drop(file);
        fs::rename(&tmp_path, &final_path).map_err(|e| BagError::io("renaming", &tmp_path, e))?;
        sync_dir(dir)
    }
}

/// Field `name` of a YAML mapping, if it is there and reads as a `T`.
fn field<T: serde::de::DeserializeOwned>(mapping: &serde_yaml_ng::Value, name: &str) -> Option<T> {
    serde_yaml_ng::from_value(mapping.get(name)?.clone()).ok()
}

/// [`Metadata::salvage`] for text that is not YAML: the two counts, from lines of their own.
fn salvage_lines(text: &str) -> Option<RedlineSection> {
    let count = |key: &str| {
        text.lines()
            .filter_map(|l| l.trim().strip_prefix(key)?.trim().parse::<u64>().ok())
            .next_back()
    };
    let dropped_messages = count("dropped_messages:");
    let unstamped_messages = count("unstamped_messages:");
    (dropped_messages.is_some() || unstamped_messages.is_some()).then(|| RedlineSection {
        dropped_messages,
        unstamped_messages,
        ..RedlineSection::default()
    })
}

/// Message counts by topic, type and serialization format, as rosbag2 lists topics.
#[derive(Debug, Clone, Default)]
pub(crate) struct TopicCounts(BTreeMap<(String, String, String), u64>);

impl TopicCounts {
    /// Counts `count` messages on a channel of this content.
    pub(crate) fn add(&mut self, spec: &ChannelSpec, count: u64) {
        let key = (
            spec.topic.clone(),
            spec.type_name().to_string(),
            spec.message_encoding.clone(),
        );
        *self.0.entry(key).or_insert(0) += count;
    }

    /// Whether `topic` has messages (under any type).
    pub(crate) fn published(&self, topic: &str) -> bool {
        self.0
            .iter()
            .any(|((name, _, _), &count)| count > 0 && name == topic)
    }
}

impl BagfileInformation {
    /// rosbag2's section for a bag of these parts and topics, as the writer keeps it while
    /// recording and reindex rebuilds it from the parts.
    pub(crate) fn build(parts: &[PartRecord], topics: TopicCounts) -> Self {
        let counted: Vec<&PartRecord> = parts.iter().filter(|p| p.message_count > 0).collect();
        let start = counted.iter().map(|p| p.start_ns).min().unwrap_or(0);
        let end = counted.iter().map(|p| p.end_ns).max().unwrap_or(0);
        BagfileInformation {
            version: METADATA_VERSION,
            storage_identifier: "mcap".into(),
            duration: Duration {
                nanoseconds: end.saturating_sub(start),
            },
            starting_time: StartingTime {
                nanoseconds_since_epoch: start,
            },
            message_count: parts.iter().map(|p| p.message_count).sum(),
            topics_with_message_count: topics
                .0
                .into_iter()
                .map(|((name, type_name, encoding), count)| TopicWithCount {
                    topic_metadata: TopicMetadata {
                        name,
                        type_name,
                        serialization_format: encoding,
                        offered_qos_profiles: serde_yaml_ng::Value::String(String::new()),
                        type_description_hash: String::new(),
                        other_fields: BTreeMap::new(),
                    },
                    message_count: count,
                    other_fields: BTreeMap::new(),
                })
                .collect(),
            compression_format: String::new(),
            compression_mode: String::new(),
            relative_file_paths: parts.iter().map(|p| p.path.clone()).collect(),
            files: parts
                .iter()
                .map(|p| FileInformation {
                    path: p.path.clone(),
                    starting_time: StartingTime {
                        nanoseconds_since_epoch: p.start_ns,
                    },
                    duration: Duration {
                        nanoseconds: p.end_ns.saturating_sub(p.start_ns),
                    },
                    message_count: p.message_count,
                    other_fields: BTreeMap::new(),
                })
                .collect(),
            custom_data: None,
            ros_distro: None,
            other_fields: BTreeMap::new(),
        }
    }
}

/// How [`BagfileInformation::take_descriptions_of`] finds a topic's description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TopicMatch {
    /// Same name, type and serialization format only.
    Exact,
    /// That, else the first of the same name (reindex: a type renamed in the parts).
    NameFallback,
}

impl BagfileInformation {
    /// Takes from `from` (the index of the bag these messages come from, or the one this index
    /// replaces) what counting the parts cannot give: `ros_distro`, `custom_data`, and per
    /// topic its QoS profiles, `type_description_hash` and unknown fields. A version 9 source
    /// (QoS profiles as a list) raises the version to 9, so that they stay readable.
    pub(crate) fn take_descriptions_of(&mut self, from: &BagfileInformation, matching: TopicMatch) {
        self.version = self.version.max(from.version);
        self.custom_data = from.custom_data.clone();
        self.ros_distro = from.ros_distro.clone();
        let same = |a: &TopicMetadata, b: &TopicMetadata| {
            a.name == b.name
                && a.type_name == b.type_name
                && a.serialization_format == b.serialization_format
        };
        for topic in &mut self.topics_with_message_count {
            let new = &topic.topic_metadata;
            let exact = from
                .topics_with_message_count
                .iter()
                .find(|o| same(&o.topic_metadata, new));
            let found = match matching {
                TopicMatch::Exact => exact,
                TopicMatch::NameFallback => exact.or_else(|| {
                    from.topics_with_message_count
                        .iter()
                        .find(|o| o.topic_metadata.name == new.name)
                }),
            };
            let Some(found) = found else {
                continue;
            };
            let message_count = topic.message_count;
            let (name, type_name, serialization_format) = (
                new.name.clone(),
                new.type_name.clone(),
                new.serialization_format.clone(),
            );
            *topic = found.clone();
            topic.message_count = message_count;
            topic.topic_metadata.name = name;
            topic.topic_metadata.type_name = type_name;
            topic.topic_metadata.serialization_format = serialization_format;
        }
    }

    /// Takes from `old` (the index this one replaces) every field a rebuild from the parts does
    /// not own: the version (never lowered, so a version 9 list of QoS profiles stays readable),
    /// compression, `custom_data`, `ros_distro`, unknown fields, and per topic its QoS profiles,
    /// type hash and unknown fields. Topics `old` lists that the parts do not hold stay listed,
    /// with 0 messages. Counts, times and the part lists are this one's.
    pub(crate) fn keep_fields_of(&mut self, old: &BagfileInformation) {
        self.version = self.version.max(old.version);
        if !old.compression_format.is_empty() || !old.compression_mode.is_empty() {
            self.compression_format = old.compression_format.clone();
            self.compression_mode = old.compression_mode.clone();
        }
        self.other_fields = old.other_fields.clone();
        self.take_descriptions_of(old, TopicMatch::NameFallback);
        for old_topic in &old.topics_with_message_count {
            let listed = self
                .topics_with_message_count
                .iter()
                .any(|t| t.topic_metadata.name == old_topic.topic_metadata.name);
            if !listed {
                let mut kept = old_topic.clone();
                kept.message_count = 0;
                self.topics_with_message_count.push(kept);
            }
        }
        for file in &mut self.files {
            if let Some(found) = old.files.iter().find(|o| o.path == file.path) {
                file.other_fields = found.other_fields.clone();
            }
        }
    }
}

/// fsyncs a directory so that a rename inside it survives a power cut.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    let handle = fs::File::open(dir).map_err(|e| BagError::io("opening", dir, e))?;
    handle
        .sync_all()
        .map_err(|e| BagError::io("syncing", dir, e))
}

/// The parts of the directory `dir` stored compressed whole (rosbag2's `compression_mode:
/// file`), with their compression (`zstd`, `lz4`): those `metadata.yaml` lists, in its order,
/// then those found on disk by the reader's discovery rule (a decompressed twin of a listed one
/// aside, see [`twin_of_listed`]). Judged by each file's first bytes, as the reader judges
/// them, without decompressing anything. For `bag verify` (which checks them through a copy)
/// and `bag reindex` (which refuses them).
///
/// [`twin_of_listed`]: crate::layout::twin_of_listed
pub(crate) fn stored_compressed_parts(dir: &Path) -> Vec<(String, &'static str)> {
    use std::io::Read;
    let compression = |name: &str| {
        let mut magic = Vec::with_capacity(4);
        crate::layout::open_regular(&dir.join(name))
            .and_then(|file| file.take(4).read_to_end(&mut magic))
            .ok()?;
        crate::layout::whole_file_compression(&magic)
    };
    // The index's names in its order, once each.
    let mut listed = std::collections::BTreeSet::new();
    let mut in_order = Vec::new();
    if let Ok(metadata) = Metadata::load(&dir.join(METADATA_FILE)) {
        let info = &metadata.rosbag2_bagfile_information;
        for name in info
            .relative_file_paths
            .iter()
            .chain(info.files.iter().map(|f| &f.path))
        {
            if listed.insert(name.clone()) {
                in_order.push(name.clone());
            }
        }
    }
    let found = crate::layout::discover_parts(dir).unwrap_or_default();
    let found = found.into_iter().filter(|name| {
        !listed.contains(name)
            && crate::layout::twin_of_listed(name, |n| listed.contains(n)).is_none()
    });
    in_order
        .into_iter()
        .chain(found)
        .filter_map(|name| compression(&name).map(|format| (name, format)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rosbag2_version_4_and_7_files_parse() {
        let v4 = "rosbag2_bagfile_information:\n  version: 4\n  storage_identifier: mcap\n  duration:\n    nanoseconds: 5\n  starting_time:\n    nanoseconds_since_epoch: 7\n  message_count: 2\n  topics_with_message_count:\n  - message_count: 2\n    topic_metadata:\n      name: /a\n      offered_qos_profiles: ''\n      serialization_format: cdr\n      type: std_msgs/msg/String\n  relative_file_paths:\n  - a.mcap\n";
        let m = Metadata::parse(v4).expect("parses");
        let info = &m.rosbag2_bagfile_information;
        assert_eq!(info.version, 4);
        assert_eq!(info.message_count, 2);
        assert_eq!(
            info.topics_with_message_count[0].topic_metadata.type_name,
            "std_msgs/msg/String"
        );
        assert!(m.redline.is_none());
    }

    #[test]
    fn version_8_keys_are_written_even_when_an_old_index_had_none() {
        // A version 4 index: no ros_distro, custom_data, files or type hashes.
        let v4 = "rosbag2_bagfile_information:\n  version: 4\n  storage_identifier: mcap\n  message_count: 0\n  topics_with_message_count:\n  - message_count: 0\n    topic_metadata:\n      name: /a\n      offered_qos_profiles: ''\n      serialization_format: cdr\n      type: std_msgs/msg/String\n  relative_file_paths: []\n";
        let m = Metadata::parse(v4).expect("parses");
        let info = &m.rosbag2_bagfile_information;
        assert_eq!(info.ros_distro, None);
        assert_eq!(info.custom_data, None);
        assert!(info.files.is_empty());
        // Written as version 8, every key rosbag2 reads for it is there.
        let mut rebuilt = BagfileInformation::build(&[], TopicCounts::default());
        rebuilt.keep_fields_of(info);
        let text = serde_yaml_ng::to_string(&rebuilt).expect("yaml");
        let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).expect("reparses");
        assert_eq!(value["version"].as_u64(), Some(8));
        assert_eq!(value["ros_distro"].as_str(), Some(""), "{text}");
        for key in [
            "storage_identifier",
            "duration",
            "starting_time",
            "message_count",
            "topics_with_message_count",
            "compression_format",
            "compression_mode",
            "relative_file_paths",
            "files",
            "custom_data",
        ] {
            assert!(value.get(key).is_some(), "{key} missing in\n{text}");
        }
        let topic = &value["topics_with_message_count"][0]["topic_metadata"];
        assert_eq!(topic["type_description_hash"].as_str(), Some(""), "{text}");
        // A distro that is known stays known; `~` reads as unknown.
        let with = "rosbag2_bagfile_information:\n  version: 8\n  ros_distro: jazzy\n";
        let m = Metadata::parse(with).expect("parses");
        assert_eq!(
            m.rosbag2_bagfile_information.ros_distro.as_deref(),
            Some("jazzy")
        );
        assert!(m.to_yaml().contains("ros_distro: jazzy"));
        let null = "rosbag2_bagfile_information:\n  version: 8\n  ros_distro: ~\n";
        let m = Metadata::parse(null).expect("parses");
        assert_eq!(m.rosbag2_bagfile_information.ros_distro, None);
    }

    #[test]
    fn take_descriptions_of_keeps_hashes_and_distro_of_matching_topics_only() {
        let topic = |name: &str, type_name: &str, hash: &str| TopicWithCount {
            topic_metadata: TopicMetadata {
                name: name.into(),
                type_name: type_name.into(),
                serialization_format: "cdr".into(),
                offered_qos_profiles: serde_yaml_ng::Value::String("- depth: 3".into()),
                type_description_hash: hash.into(),
                other_fields: BTreeMap::new(),
            },
            message_count: 5,
            other_fields: BTreeMap::new(),
        };
        let source = BagfileInformation {
            version: 8,
            ros_distro: Some("humble".into()),
            topics_with_message_count: vec![
                topic("/a", "std_msgs/msg/String", "RIHS01_aa"),
                topic("/b", "std_msgs/msg/Int32", "RIHS01_bb"),
            ],
            ..BagfileInformation::default()
        };
        let mut counts = TopicCounts::default();
        let spec = |t: &str, ty: &str| ChannelSpec {
            topic: t.into(),
            message_encoding: "cdr".into(),
            schema: Some(crate::channel::SchemaSpec {
                name: ty.into(),
                encoding: "ros2msg".into(),
                data: Vec::new(),
            }),
            metadata: BTreeMap::new(),
        };
        counts.add(&spec("/a", "std_msgs/msg/String"), 2);
        // Same name, another type: not this topic's description.
        counts.add(&spec("/b", "std_msgs/msg/Float64"), 1);
        let mut info = BagfileInformation::build(&[], counts);
        info.take_descriptions_of(&source, TopicMatch::Exact);
        assert_eq!(info.ros_distro.as_deref(), Some("humble"));
        let by_name: BTreeMap<&str, &TopicWithCount> = info
            .topics_with_message_count
            .iter()
            .map(|t| (t.topic_metadata.name.as_str(), t))
            .collect();
        assert_eq!(
            by_name["/a"].topic_metadata.type_description_hash,
            "RIHS01_aa"
        );
        assert_eq!(by_name["/a"].message_count, 2, "counts are ours");
        assert_eq!(by_name["/b"].topic_metadata.type_description_hash, "");
        assert_eq!(info.topics_with_message_count.len(), 2, "no topic added");
    }

    #[test]
    fn our_section_round_trips() {
        let mut m = Metadata::default();
        m.rosbag2_bagfile_information.version = METADATA_VERSION;
        m.redline = Some(RedlineSection {
            dropped_messages: Some(3),
            unstamped_messages: None,
            dropped_by_reason: BTreeMap::from([("too large".to_string(), 1)]),
            advertised_never_published: vec![Advertised {
                topic: "car/horn".into(),
                schema: "EngineRpm".into(),
            }],
            parts: vec![PartRecord {
                path: "b_0.mcap".into(),
                state: PartState::Torn,
                message_count: 9,
                start_ns: 1,
                end_ns: 2,
            }],
            source: None,
            loss: vec![LossRecord::new(
                LossKind::MissingPart,
                Some("b_1.mcap".into()),
                "",
            )],
            other_fields: BTreeMap::new(),
        });
        let text = m.to_yaml();
        assert!(text.contains("state: torn"), "{text}");
        assert!(text.contains("unstamped_messages: null"), "{text}");
        assert_eq!(Metadata::parse(&text).expect("parses"), m);
    }

    #[test]
    fn part_names_that_leave_the_bag_are_taken_out_and_kept_as_refused() {
        for bad in [
            "",
            ".",
            "..",
            "../x.mcap",
            "/abs/x.mcap",
            "a/b.mcap",
            "a\\b.mcap",
        ] {
            assert!(check_part_name(bad).is_err(), "{bad:?}");
        }
        for good in ["b_0.mcap", "..x.mcap", "x..mcap", "a b.mcap"] {
            assert_eq!(check_part_name(good), Ok(()), "{good:?}");
        }
        let text = "rosbag2_bagfile_information:\n  relative_file_paths:\n  - a.mcap\n  - ../x.mcap\n  files:\n  - path: ../x.mcap\n  - path: /etc/y.mcap\n";
        let m = Metadata::parse(text).expect("parses");
        assert_eq!(
            m.rosbag2_bagfile_information.relative_file_paths,
            ["a.mcap"]
        );
        assert!(m.rosbag2_bagfile_information.files.is_empty());
        let refused: Vec<&str> = m
            .refused_part_names
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(refused, ["../x.mcap", "/etc/y.mcap"]);
    }
}
