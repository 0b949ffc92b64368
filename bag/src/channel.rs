//! Channels and schemas as the bag sees them: bytes and names, never interpreted.

use std::collections::BTreeMap;

/// Channel metadata key under which our recorder stores the registry schema name.
pub const REGISTRY_SCHEMA_KEY: &str = "redline/schema";

/// The MCAP header's `profile` for the parts a [`BagWriter`](crate::BagWriter) writes.
///
/// The header is a part's first record, written before any channel: a part says `ros2` only
/// when the writer was asked for it ([`WriteOptions::profile`](crate::WriteOptions::profile))
/// and every channel it knows when the part starts [fits the ROS 2 profile](ChannelSpec::fits_ros2_profile).
/// A channel that does not fit, arriving later, starts a new part that says `""` (or restarts
/// the part in place while it holds nothing yet): no part that says `ros2` ever holds a channel
/// that does not fit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Profile {
    /// `""`: no profile (what every part said before profiles were chosen).
    #[default]
    Unnamed,
    /// `ros2`: every channel is CDR with a `ros2msg` or `ros2idl` schema (the MCAP ROS 2
    /// profile), which the `rosbags` reader and rosbag2 require.
    Ros2,
}

impl Profile {
    /// The string in the MCAP header.
    pub fn mcap_name(self) -> &'static str {
        match self {
            Profile::Unnamed => "",
            Profile::Ros2 => "ros2",
        }
    }

    /// `Ros2` when there is at least one channel and every one fits the ROS 2 profile, else
    /// `Unnamed`: how `bag export` and Save Recording choose, knowing every channel up front.
    pub fn for_channels<'a>(channels: impl IntoIterator<Item = &'a ChannelSpec>) -> Profile {
        let mut any = false;
        for channel in channels {
            if !channel.fits_ros2_profile() {
                return Profile::Unnamed;
            }
            any = true;
        }
        if any { Profile::Ros2 } else { Profile::Unnamed }
    }
}

/// A schema as stored in an MCAP `Schema` record.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SchemaSpec {
    /// `Schema.name`, e.g. `engine_rpm.capnp:EngineRpm` or `sensor_msgs/msg/Imu`.
    pub name: String,
    /// `Schema.encoding`, e.g. `capnproto`, `ros2msg`, `jsonschema`.
    pub encoding: String,
    /// `Schema.data`, byte for byte.
    pub data: Vec<u8>,
}

/// A channel: a topic with its message encoding, optional schema and metadata.
///
/// Two channels with equal content are the same channel, in one part or across parts.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChannelSpec {
    /// `Channel.topic` (for live data, the zenoh key).
    pub topic: String,
    /// `Channel.message_encoding`, e.g. `capnproto`, `cdr`, `json`.
    pub message_encoding: String,
    /// The schema, or `None` for schemaless channels (MCAP schema id 0).
    pub schema: Option<SchemaSpec>,
    /// `Channel.metadata`.
    pub metadata: BTreeMap<String, String>,
}

impl ChannelSpec {
    /// A Cap'n Proto channel following our conventions: `capnproto` encodings, the capnp
    /// qualified name as `Schema.name`, the registry name in `redline/schema`.
    pub fn capnp(
        topic: impl Into<String>,
        registry_name: impl Into<String>,
        capnp_name: impl Into<String>,
        descriptor: impl Into<Vec<u8>>,
    ) -> Self {
        let mut metadata = BTreeMap::new();
        metadata.insert(REGISTRY_SCHEMA_KEY.to_string(), registry_name.into());
        ChannelSpec {
            topic: topic.into(),
            message_encoding: "capnproto".into(),
            schema: Some(SchemaSpec {
                name: capnp_name.into(),
                encoding: "capnproto".into(),
                data: descriptor.into(),
            }),
            metadata,
        }
    }

    /// The name tools show for this channel's type: the registry name when the channel carries
    /// one, else `Schema.name`, else the empty string.
    pub fn type_name(&self) -> &str {
        if let Some(name) = self.metadata.get(REGISTRY_SCHEMA_KEY) {
            return name;
        }
        self.schema.as_ref().map_or("", |s| s.name.as_str())
    }

    /// Whether the channel may appear in a part whose profile is `ros2`: message encoding
    /// `cdr` and a `ros2msg` or `ros2idl` schema (the MCAP specification's ROS 2 profile).
    pub fn fits_ros2_profile(&self) -> bool {
        self.message_encoding == "cdr"
            && self
                .schema
                .as_ref()
                .is_some_and(|s| s.encoding == "ros2msg" || s.encoding == "ros2idl")
    }

    pub(crate) fn from_mcap(channel: &mcap::Channel<'_>) -> Self {
        ChannelSpec {
            topic: channel.topic.clone(),
            message_encoding: channel.message_encoding.clone(),
            schema: channel.schema.as_ref().map(|s| SchemaSpec {
                name: s.name.clone(),
                encoding: s.encoding.clone(),
                data: s.data.to_vec(),
            }),
            metadata: channel.metadata.clone(),
        }
    }
}

/// A channel of the recording, unified across parts by content.
#[derive(Debug, Clone)]
pub struct ChannelInfo {
    /// Index in [`BagReader::channels`](crate::BagReader::channels).
    pub id: usize,
    /// Topic, encodings, schema and metadata.
    pub spec: ChannelSpec,
    /// Messages on this channel in all readable parts; `None` when a part was opened without
    /// counting them (see [`BagReader::open_uncounted`](crate::BagReader::open_uncounted)).
    pub message_count: Option<u64>,
}
