//! Schemas travel next to the data: a publisher of a topic whose schema its subscribers cannot
//! know (a ROS 2 message definition, a protobuf descriptor set, a Cap'n Proto schema outside the
//! registry) answers queries on `redline/schema/<key>`; a subscriber asks once per new topic,
//! before that topic's channel is written or decoded.
//!
//! A reply's payload is the body of an MCAP `Schema` record without its id (name, encoding,
//! data), followed by the publisher's channel metadata as an MCAP `Channel` record writes it:
//!
//! ```text
//! name: u32 length, UTF-8 · encoding: u32 length, UTF-8 · data: u32 length, bytes
//! metadata: u32 byte length, then (u32 length + UTF-8 key, u32 length + UTF-8 value) pairs
//! ```
//!
//! Lengths are little-endian. A reply that does not parse, or none within [`SCHEMA_WAIT`],
//! leaves the topic without a schema, as it was before this convention: nothing is lost, the
//! payloads are recorded byte for byte.

use std::collections::BTreeMap;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Weak};
use std::time::Duration;

use zenoh::query::Query;
use zenoh::query::Queryable;
use zenoh::{Session, Wait};

use super::{LiveError, TopicId, TopicTable, ZENOH_ENCODING_KEY, zenoh_error};
use crate::channel::{ChannelSpec, SchemaSpec};

/// Key prefix of the schema queryables: `redline/schema/<key>`.
pub const SCHEMA_PREFIX: &str = "redline/schema";

/// How long a subscriber waits for a topic's schema after its first sample, and how long the
/// query stays open. A publisher on the same network answers within milliseconds.
pub const SCHEMA_WAIT: Duration = Duration::from_secs(1);

/// The largest schema reply taken, bytes (a protobuf descriptor set of a large API is a few
/// hundred KiB).
const MAX_REPLY: usize = 64 << 20;

/// The key the schema of `topic_key` is asked on.
pub fn schema_key(topic_key: &str) -> String {
    format!("{SCHEMA_PREFIX}/{topic_key}")
}

/// A topic's schema as a publisher describes it: the schema and the channel metadata to keep
/// with it (a ROS 2 type hash, QoS profiles).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSchema {
    /// The schema, byte for byte.
    pub schema: SchemaSpec,
    /// Channel metadata, without the zenoh encoding (the subscriber records the one it saw).
    pub metadata: BTreeMap<String, String>,
}

impl TopicSchema {
    /// What a publisher of `channel` answers, `None` for a channel without a schema.
    pub fn of(channel: &ChannelSpec) -> Option<Self> {
        let schema = channel.schema.clone()?;
        let mut metadata = channel.metadata.clone();
        metadata.remove(ZENOH_ENCODING_KEY);
        Some(TopicSchema { schema, metadata })
    }

    /// `spec` with this schema, and this metadata where `spec` has none of its own.
    pub fn apply(&self, mut spec: ChannelSpec) -> ChannelSpec {
        spec.schema = Some(self.schema.clone());
        for (k, v) in &self.metadata {
            spec.metadata.entry(k.clone()).or_insert_with(|| v.clone());
        }
        spec
    }

    /// The reply payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.schema.data.len() + 64);
        put_bytes(&mut out, self.schema.name.as_bytes());
        put_bytes(&mut out, self.schema.encoding.as_bytes());
        put_bytes(&mut out, &self.schema.data);
        let mut map = Vec::new();
        for (k, v) in &self.metadata {
            put_bytes(&mut map, k.as_bytes());
            put_bytes(&mut map, v.as_bytes());
        }
        put_bytes(&mut out, &map);
        out
    }

    /// Parses a reply payload; every length is checked against what is there.
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        let mut rest = bytes;
        let name = take_str(&mut rest, "schema name")?;
        let encoding = take_str(&mut rest, "schema encoding")?;
        let data = take_bytes(&mut rest, "schema data")?.to_vec();
        let mut map = take_bytes(&mut rest, "metadata")?;
        if !rest.is_empty() {
            return Err(format!("{} bytes after the metadata", rest.len()));
        }
        let mut metadata = BTreeMap::new();
        while !map.is_empty() {
            let key = take_str(&mut map, "metadata key")?;
            let value = take_str(&mut map, "metadata value")?;
            metadata.insert(key, value);
        }
        Ok(TopicSchema {
            schema: SchemaSpec {
                name,
                encoding,
                data,
            },
            metadata,
        })
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&bytes[..len as usize]);
}

fn take_bytes<'a>(rest: &mut &'a [u8], what: &str) -> Result<&'a [u8], String> {
    let Some((len, tail)) = rest.split_first_chunk::<4>() else {
        return Err(format!("{what}: length cut short"));
    };
    let len = u32::from_le_bytes(*len) as usize;
    if len > tail.len() {
        return Err(format!("{what}: claims {len} bytes, {} remain", tail.len()));
    }
    let (bytes, tail) = tail.split_at(len);
    *rest = tail;
    Ok(bytes)
}

fn take_str(rest: &mut &[u8], what: &str) -> Result<String, String> {
    let bytes = take_bytes(rest, what)?;
    String::from_utf8(bytes.to_vec()).map_err(|_| format!("{what}: not UTF-8"))
}

/// Answers schema queries for one published topic until dropped.
pub fn serve_schema(
    session: &Session,
    topic_key: &str,
    schema: &TopicSchema,
) -> Result<Queryable<()>, LiveError> {
    let key = schema_key(topic_key);
    let payload = schema.encode();
    session
        .declare_queryable(key.clone())
        .callback(move |query: Query| {
            // A reply that cannot be sent leaves the asker without a schema, which it handles.
            let _ = query
                .reply(query.key_expr().clone(), payload.clone())
                .wait();
        })
        .wait()
        .map_err(|e| LiveError::Declare {
            what: format!("schema queryable {key}"),
            reason: zenoh_error(&e),
        })
}

/// Asks for the schema of each topic `asks` names, answering into `topics`, until every
/// sender is gone. Queries are sent without waiting for replies, so a peer publishing on
/// thousands of keys costs one query each and no waiting in line.
pub(super) fn ask_schemas(
    session: Session,
    asks: Receiver<(TopicId, String)>,
    topics: Weak<TopicTable>,
) {
    for (id, key) in asks {
        let Some(table) = topics.upgrade() else {
            return;
        };
        // Answers "no schema" when the query ends, unless a reply answered first.
        let done = Answered {
            id,
            topics: Arc::downgrade(&table),
        };
        let sent = session
            .get(schema_key(&key))
            .timeout(SCHEMA_WAIT)
            .callback(move |reply| {
                let Some(table) = done.topics.upgrade() else {
                    return;
                };
                let schema = reply.result().ok().and_then(|sample| {
                    let payload = sample.payload();
                    (payload.len() <= MAX_REPLY)
                        .then(|| TopicSchema::decode(&payload.to_bytes()).ok())
                        .flatten()
                });
                if let Some(schema) = schema {
                    table.answer(done.id, Some(schema));
                }
            })
            .wait();
        if sent.is_err() {
            table.answer(id, None);
        }
    }
}

/// Dropped with a query's callback, when the query has ended.
struct Answered {
    id: TopicId,
    topics: Weak<TopicTable>,
}

impl Drop for Answered {
    fn drop(&mut self) {
        if let Some(table) = self.topics.upgrade() {
            table.answer(self.id, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn imu() -> TopicSchema {
        TopicSchema {
            schema: SchemaSpec {
                name: "sensor_msgs/msg/Imu".into(),
                encoding: "ros2msg".into(),
                data: b"std_msgs/Header header\n".to_vec(),
            },
            metadata: BTreeMap::from([("topic_type_hash".to_string(), "RIHS01_abc".to_string())]),
        }
    }

    #[test]
    fn replies_round_trip() {
        let schema = imu();
        assert_eq!(TopicSchema::decode(&schema.encode()), Ok(schema));
    }

    #[test]
    fn a_channel_gets_the_schema_and_keeps_its_own_metadata() {
        let mut spec = ChannelSpec {
            topic: "imu".into(),
            message_encoding: "cdr".into(),
            schema: None,
            metadata: BTreeMap::from([(
                ZENOH_ENCODING_KEY.to_string(),
                "application/cdr".to_string(),
            )]),
        };
        spec = imu().apply(spec);
        assert_eq!(spec.schema, Some(imu().schema));
        assert_eq!(spec.metadata.len(), 2);
        assert_eq!(spec.metadata[ZENOH_ENCODING_KEY], "application/cdr");
        // What a player answers leaves out the encoding it published with.
        assert_eq!(TopicSchema::of(&spec), Some(imu()));
    }

    #[test]
    fn damaged_replies_are_refused() {
        let bytes = imu().encode();
        for cut in 0..bytes.len() {
            assert!(TopicSchema::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(TopicSchema::decode(&longer).is_err());
        let mut huge = bytes;
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(TopicSchema::decode(&huge).is_err());
    }

    proptest! {
        #[test]
        fn any_bytes_parse_or_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = TopicSchema::decode(&bytes);
        }
    }
}
