//! The publisher side: one topic, its advertisement token, timestamps, and congestion control
//! that blocks instead of dropping.

use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::Publisher;
use zenoh::qos::CongestionControl;
use zenoh::{Session, Wait};

use super::{LiveError, advertisement_key, capnp_encoding, zenoh_error};

/// Declares the token that advertises `topic` with registry schema `schema`; the topic stays
/// advertised until the token is dropped.
pub fn advertise(
    session: &Session,
    schema: &str,
    topic: &str,
) -> Result<LivelinessToken, LiveError> {
    let key = advertisement_key(schema, topic);
    session
        .liveliness()
        .declare_token(key.clone())
        .wait()
        .map_err(|e| LiveError::Declare {
            what: format!("liveliness token {key}"),
            reason: zenoh_error(&e),
        })
}

/// A publisher of one topic following our conventions.
///
/// Puts block when the network is congested (zenoh's default drops under bursts, which a
/// recorder would then count against the wrong side).
pub struct LivePublisher {
    session: Session,
    publisher: Publisher<'static>,
    key: String,
    stamped: bool,
    _token: Option<LivelinessToken>,
}

impl std::fmt::Debug for LivePublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LivePublisher")
            .field("key", &self.key)
            .field("stamped", &self.stamped)
            .finish_non_exhaustive()
    }
}

impl LivePublisher {
    /// A Cap'n Proto publisher of `topic` with registry schema `schema`: encoding
    /// `application/capnp;<schema>`, advertised, timestamped.
    pub fn capnp(session: &Session, topic: &str, schema: &str) -> Result<Self, LiveError> {
        let mut publisher = Self::with_encoding(session, topic, &capnp_encoding(schema))?;
        publisher._token = Some(advertise(session, schema, topic)?);
        Ok(publisher)
    }

    /// A timestamped publisher of `topic` with any zenoh `encoding`, not advertised.
    pub fn with_encoding(
        session: &Session,
        topic: &str,
        encoding: &str,
    ) -> Result<Self, LiveError> {
        let publisher = session
            .declare_publisher(topic.to_string())
            .encoding(encoding)
            .congestion_control(CongestionControl::Block)
            .wait()
            .map_err(|e| LiveError::Declare {
                what: format!("publisher on {topic:?}"),
                reason: zenoh_error(&e),
            })?;
        Ok(LivePublisher {
            session: session.clone(),
            publisher,
            key: topic.to_string(),
            stamped: true,
            _token: None,
        })
    }

    /// Also advertises the topic with registry schema `schema`.
    pub fn advertised(mut self, schema: &str) -> Result<Self, LiveError> {
        self._token = Some(advertise(&self.session, schema, &self.key)?);
        Ok(self)
    }

    /// Sends samples without a timestamp, as a publisher whose session has timestamping off
    /// does (the simulator's battery monitor, to exercise the unstamped count).
    pub fn without_timestamps(mut self) -> Self {
        self.stamped = false;
        self
    }

    /// True when some subscriber on the network matches this publisher's key.
    pub fn has_subscribers(&self) -> bool {
        self.publisher
            .matching_status()
            .wait()
            .is_ok_and(|m| m.matching())
    }

    /// The key published on.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Publishes one sample.
    pub fn put(&self, bytes: impl Into<Vec<u8>>) -> Result<(), LiveError> {
        let timestamp = self.stamped.then(|| self.session.new_timestamp());
        self.publisher
            .put(bytes.into())
            .timestamp(timestamp)
            .wait()
            .map_err(|e| LiveError::Declare {
                what: format!("put on {:?}", self.key),
                reason: zenoh_error(&e),
            })
    }
}
