//! Live data over zenoh (cargo feature `live`): the conventions of ARCHITECTURE.md in one place,
//! shared by `bag record | play | sim` and the scope.
//!
//! - [`ZenohArgs`]: the flags every command line that touches zenoh takes (clap arguments with
//!   the cargo feature `clap`), and [`SessionOptions`], the session they describe.
//! - [`Subscription`]: subscribes to key expressions; its callback never blocks, it pushes each
//!   sample into a [`DropQueue`](crate::DropQueue) that evicts and counts when the consumer
//!   falls behind. It also watches the advertisement tokens ([`Advertisements`]).
//! - [`LivePublisher`]: one topic, published the way our subscribers expect.
//! - [`Recorder`]: writes what a subscription delivers into a [`BagWriter`](crate::BagWriter).
//! - [`sim`]: the simulated vehicle behind the scope's demo and `bag sim`.
//!
//! Conventions: a publisher of topic `K` with registry schema `S` holds the liveliness token
//! `redline/adv/S/K` while it is up and publishes on `K` with encoding `application/capnp;S` and
//! a timestamp. A sample without a timestamp is logged with its arrival time as publish time and
//! counted as unstamped. A publisher of a topic whose schema is not in our registry (a played
//! ROS 2, protobuf or JSON channel) answers queries on `redline/schema/K` with it; subscribers
//! ask once per new topic ([`schema_query`]).

mod publish;
mod record;
mod schema_query;
mod session;
pub mod sim;
mod subscribe;
mod zenoh_args;

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

pub use publish::{LivePublisher, advertise};
pub use record::{DEFAULT_MAX_TOPICS, RecordStats, Recorder};
pub use schema_query::{SCHEMA_PREFIX, SCHEMA_WAIT, TopicSchema, schema_key, serve_schema};
pub use session::{Mode, SessionOptions, close, link_count};
pub use subscribe::{
    Advertised, Advertisements, LiveMessage, LiveTopic, Subscription, TopicId, TopicTable,
};
/// The zenoh session type, re-exported so users need not depend on zenoh for it.
pub use zenoh::Session;
pub use zenoh_args::ZenohArgs;

use crate::channel::{ChannelSpec, REGISTRY_SCHEMA_KEY};

/// The zstd level live recording writes with: one of zstd's fast levels, so the recorder keeps
/// up with the most traffic. On the simulator's messages its chunks come out about 3% larger
/// than at level 1 (`examples/record_ratio.rs` prints both sizes and rates).
pub const RECORD_COMPRESSION_LEVEL: i32 = -1;

/// The memory `bag record` gives samples waiting to be written, by default, MiB: about a second
/// of messages at the highest rates measured on this project's 2-core machine.
pub const RECORD_QUEUE_MIB: usize = 256;

/// Key prefix of advertisement tokens: `redline/adv/<Schema>/<key>`.
pub const ADVERTISE_PREFIX: &str = "redline/adv";

/// Zenoh encoding prefix of our Cap'n Proto samples: `application/capnp;<Schema>`.
pub const CAPNP_ENCODING_PREFIX: &str = "application/capnp;";

/// Channel metadata key holding the zenoh encoding a sample arrived with, so that `bag play`
/// can publish it again exactly.
pub const ZENOH_ENCODING_KEY: &str = "zenoh/encoding";

/// Something went wrong talking to zenoh.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The session configuration was refused.
    #[error("zenoh configuration: {what}: {reason}")]
    Config {
        /// Which setting.
        what: String,
        /// Why.
        reason: String,
    },
    /// The session could not be opened.
    #[error("opening the zenoh session: {0}")]
    Open(String),
    /// A subscriber, publisher or token could not be declared, or a put failed.
    #[error("zenoh {what}: {reason}")]
    Declare {
        /// What was being declared or done, and on which key.
        what: String,
        /// Why it failed.
        reason: String,
    },
    /// The recording side failed.
    #[error(transparent)]
    Bag(#[from] crate::BagError),
}

/// A zenoh error as text, without the source-file locations zenoh appends (`... at
/// /path/to/zenoh/src/x.rs:86.`), which say nothing to a user.
pub(crate) fn zenoh_error(e: impl std::fmt::Display) -> String {
    let mut text = e.to_string();
    while let Some(at) = text.find(" at /") {
        let rest = &text[at + 4..];
        let end = rest
            .find(".rs:")
            .map(|i| {
                let tail = &rest[i + 4..];
                let digits = tail.chars().take_while(char::is_ascii_digit).count();
                let dot = usize::from(tail[digits..].starts_with('.'));
                i + 4 + digits + dot
            })
            .unwrap_or(rest.len());
        text.replace_range(at..at + 4 + end, "");
    }
    text
}

/// The zenoh encoding of our Cap'n Proto samples of registry schema `schema`.
pub fn capnp_encoding(schema: &str) -> String {
    format!("{CAPNP_ENCODING_PREFIX}{schema}")
}

/// The liveliness token key advertising `topic` with registry schema `schema`.
pub fn advertisement_key(schema: &str, topic: &str) -> String {
    format!("{ADVERTISE_PREFIX}/{schema}/{topic}")
}

/// `(schema, topic)` of an advertisement token key, `None` for any other key.
pub fn parse_advertisement(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix(ADVERTISE_PREFIX)?.strip_prefix('/')?;
    let (schema, topic) = rest.split_once('/')?;
    (!schema.is_empty() && !topic.is_empty()).then_some((schema, topic))
}

/// The channel a sample on `topic` with zenoh `encoding` is recorded under.
///
/// `application/capnp;S` with `S` in the registry gets its schema from the registry; an unknown
/// `S` is recorded as Cap'n Proto without a schema (it cannot be decoded, but nothing is lost);
/// JSON becomes `json`; CDR `cdr`; anything else keeps the zenoh encoding as its message
/// encoding. The zenoh encoding itself is kept in the channel metadata.
pub fn channel_for(topic: &str, encoding: &str) -> ChannelSpec {
    let mut metadata = BTreeMap::new();
    metadata.insert(ZENOH_ENCODING_KEY.to_string(), encoding.to_string());
    if let Some(schema) = encoding.strip_prefix(CAPNP_ENCODING_PREFIX) {
        if let Some(info) = schemas::by_name(schema) {
            let mut spec =
                ChannelSpec::capnp(topic, info.registry_name, info.capnp_name, info.descriptor);
            spec.metadata.extend(metadata);
            return spec;
        }
        metadata.insert(REGISTRY_SCHEMA_KEY.to_string(), schema.to_string());
        return ChannelSpec {
            topic: topic.to_string(),
            message_encoding: "capnproto".into(),
            schema: None,
            metadata,
        };
    }
    let base = encoding.split(';').next().unwrap_or_default();
    let message_encoding = match base {
        "application/json" | "text/json" => "json",
        "application/cdr" => "cdr",
        "application/protobuf" => "protobuf",
        "" | "zenoh/bytes" | "application/octet-stream" => "",
        other => other,
    };
    ChannelSpec {
        topic: topic.to_string(),
        message_encoding: message_encoding.to_string(),
        schema: None,
        metadata,
    }
}

/// The zenoh encoding to publish a recorded channel with: the one it was recorded with, else
/// ours for Cap'n Proto with a registry name, else a standard one for the message encoding.
pub fn encoding_for(channel: &ChannelSpec) -> String {
    if let Some(encoding) = channel.metadata.get(ZENOH_ENCODING_KEY) {
        return encoding.clone();
    }
    let schema_name = channel.schema.as_ref().map(|s| s.name.as_str());
    match channel.message_encoding.as_str() {
        "capnproto" => match channel.metadata.get(REGISTRY_SCHEMA_KEY) {
            Some(registry) => capnp_encoding(registry),
            None => "application/capnp".into(),
        },
        "json" => "application/json".into(),
        "cdr" => match schema_name {
            Some(name) => format!("application/cdr;{name}"),
            None => "application/cdr".into(),
        },
        "protobuf" => match schema_name {
            Some(name) => format!("application/protobuf;{name}"),
            None => "application/protobuf".into(),
        },
        "" => "zenoh/bytes".into(),
        other => other.to_string(),
    }
}

/// The zenoh key a recorded topic is published on: ROS-style topics (`/imu/data`) lose their
/// leading and trailing slashes, which zenoh keys cannot have.
pub fn key_for_topic(topic: &str) -> String {
    topic.trim_matches('/').to_string()
}

/// Nanoseconds since the Unix epoch, now, by the wall clock.
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// A message's log time: nanoseconds since the Unix epoch, by the wall clock when the process
/// first asked, advanced since by the monotonic clock. It never goes back, so a wall clock
/// stepped during a recording (NTP, GNSS) neither reorders messages nor makes `bag play` wait
/// out the step; slewing moves both clocks alike.
pub fn log_time_ns() -> u64 {
    static ANCHOR: OnceLock<(Instant, u64)> = OnceLock::new();
    let (instant, wall_ns) = ANCHOR.get_or_init(|| (Instant::now(), now_ns()));
    let since = u64::try_from(instant.elapsed().as_nanos()).unwrap_or(u64::MAX);
    wall_ns.saturating_add(since)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zenoh_errors_lose_their_source_locations() {
        let raw = "Endpoints must be of the form <protocol>/<address>: garbage at \
                   /root/.cargo/registry/src/zenoh-protocol-1.10.2/src/core/endpoint.rs:615. \
                   at /root/zenoh-1.10.2/src/api/config.rs:86.";
        assert_eq!(
            zenoh_error(raw),
            "Endpoints must be of the form <protocol>/<address>: garbage"
        );
    }

    #[test]
    fn log_times_start_at_the_wall_clock_and_never_go_back() {
        let wall = now_ns();
        let first = log_time_ns();
        assert!(first.abs_diff(wall) < 1_000_000_000, "{first} vs {wall}");
        let mut last = first;
        for _ in 0..10_000 {
            let t = log_time_ns();
            assert!(t >= last);
            last = t;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(log_time_ns() >= first + 20_000_000, "it advances with time");
    }

    #[test]
    fn advertisement_keys_round_trip() {
        let key = advertisement_key("Imu", "car/imu/front");
        assert_eq!(key, "redline/adv/Imu/car/imu/front");
        assert_eq!(parse_advertisement(&key), Some(("Imu", "car/imu/front")));
        assert_eq!(parse_advertisement("redline/adv/Imu"), None);
        assert_eq!(parse_advertisement("car/imu"), None);
    }

    #[test]
    fn channels_from_encodings() {
        let rpm = channel_for("car/engine", "application/capnp;EngineRpm");
        assert_eq!(rpm.message_encoding, "capnproto");
        assert_eq!(rpm.type_name(), "EngineRpm");
        assert!(rpm.schema.as_ref().is_some_and(|s| !s.data.is_empty()));
        assert_eq!(encoding_for(&rpm), "application/capnp;EngineRpm");

        let unknown = channel_for("x", "application/capnp;Mystery");
        assert_eq!(unknown.schema, None);
        assert_eq!(unknown.type_name(), "Mystery");

        let json = channel_for("x", "application/json");
        assert_eq!(json.message_encoding, "json");
        assert_eq!(encoding_for(&json), "application/json");

        let mut foreign = channel_for("x", "text/plain");
        assert_eq!(foreign.message_encoding, "text/plain");
        foreign.metadata.clear();
        assert_eq!(encoding_for(&foreign), "text/plain");
        assert_eq!(key_for_topic("/imu/data"), "imu/data");
    }
}
