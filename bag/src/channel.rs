//! Channels and schemas as the bag sees them: bytes and names, never interpreted.

use std::collections::BTreeMap;

/// Channel metadata key under which our recorder stores the registry schema name.
pub const REGISTRY_SCHEMA_KEY: &str = "redline/schema";

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
    /// Messages on this channel in all readable parts.
    pub message_count: u64,
}
