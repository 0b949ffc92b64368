//! The subscriber side: samples into a [`DropQueue`] without ever blocking, topics interned so
//! a message carries a number instead of strings, and the advertised set from liveliness.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Instant, UNIX_EPOCH};

use zenoh::bytes::Encoding;
use zenoh::key_expr::{KeyExpr, keyexpr};
use zenoh::pubsub::Subscriber;
use zenoh::sample::{Sample, SampleKind};
use zenoh::{Session, Wait};

use super::schema_query::{SCHEMA_WAIT, TopicSchema, ask_schemas};
use super::{
    ADVERTISE_PREFIX, CAPNP_ENCODING_PREFIX, LiveError, channel_for, log_time_ns,
    parse_advertisement, zenoh_error,
};
use crate::{ChannelSpec, DropQueue};

/// Index of a topic in a [`TopicTable`].
pub type TopicId = u32;

/// A key and the zenoh encoding its samples arrived with: one recorded channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveTopic {
    /// The zenoh key.
    pub key: String,
    /// The zenoh encoding, as text (`application/capnp;Imu`).
    pub encoding: String,
}

/// One received sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveMessage {
    /// Its topic in the subscription's [`TopicTable`].
    pub topic: TopicId,
    /// When it arrived, ns since the epoch, by [`log_time_ns`](super::log_time_ns), a clock
    /// that never goes back.
    pub log_time_ns: u64,
    /// The sample's timestamp, ns since the epoch; `None` when the publisher sent none.
    pub publish_time_ns: Option<u64>,
    /// The payload, byte for byte.
    pub data: Vec<u8>,
}

impl LiveMessage {
    /// What the message costs in a queue: payload plus its own fields.
    pub fn queue_bytes(&self) -> usize {
        self.data.len() + std::mem::size_of::<Self>()
    }
}

#[derive(Debug, Default)]
struct Interned {
    /// Looked up once per sample: foldhash, several times faster than std's SipHash on short
    /// keys, and still seeded per process against keys crafted to collide.
    by_key: HashMap<String, Vec<(Encoding, TopicId)>, foldhash::fast::RandomState>,
    topics: Vec<LiveTopic>,
    /// Per topic, what is known of its schema.
    schemas: Vec<SchemaState>,
}

/// What a subscriber knows of a topic's schema.
#[derive(Debug, Clone)]
enum SchemaState {
    /// Asked for when the topic's first sample arrived.
    Asked(Instant),
    /// Answered: the publisher's schema, or none.
    Known(Option<Arc<TopicSchema>>),
}

/// The topics seen so far, each (key, encoding) pair once, numbered in order of arrival, and
/// their schemas as their publishers describe them ([`schema_query`](super::schema_query)).
#[derive(Debug, Default)]
pub struct TopicTable {
    inner: Mutex<Interned>,
    /// Notified when a schema is answered.
    answered: Condvar,
    /// Where a new topic's schema is asked for; without it, no topic has one.
    asks: Option<Mutex<Sender<(TopicId, String)>>>,
}

impl TopicTable {
    /// A table that asks for each new topic's schema through `asks`.
    fn asking(asks: Sender<(TopicId, String)>) -> Self {
        TopicTable {
            asks: Some(Mutex::new(asks)),
            ..TopicTable::default()
        }
    }

    fn lock(&self) -> MutexGuard<'_, Interned> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The id of (key, encoding), adding it the first time. Allocates only then.
    pub fn intern(&self, key: &str, encoding: &Encoding) -> TopicId {
        let mut inner = self.lock();
        if let Some(&(_, id)) = inner
            .by_key
            .get(key)
            .and_then(|list| list.iter().find(|(e, _)| e == encoding))
        {
            return id;
        }
        let id = TopicId::try_from(inner.topics.len()).unwrap_or(TopicId::MAX);
        let encoding_text = encoding.to_string();
        // Our registry's Cap'n Proto schemas are known without asking.
        let registered = encoding_text
            .strip_prefix(CAPNP_ENCODING_PREFIX)
            .is_some_and(|name| schemas::by_name(name).is_some());
        let asked = !registered
            && self.asks.as_ref().is_some_and(|asks| {
                asks.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .send((id, key.to_string()))
                    .is_ok()
            });
        inner.schemas.push(if asked {
            SchemaState::Asked(Instant::now())
        } else {
            SchemaState::Known(None)
        });
        inner.topics.push(LiveTopic {
            key: key.to_string(),
            encoding: encoding_text,
        });
        inner
            .by_key
            .entry(key.to_string())
            .or_default()
            .push((encoding.clone(), id));
        id
    }

    /// Records the answer to topic `id`'s schema query; the first answer stands.
    pub(super) fn answer(&self, id: TopicId, schema: Option<TopicSchema>) {
        let mut inner = self.lock();
        if let Some(state @ SchemaState::Asked(_)) = inner.schemas.get_mut(id as usize) {
            *state = SchemaState::Known(schema.map(Arc::new));
            drop(inner);
            self.answered.notify_all();
        }
    }

    /// The channel topic `id` is recorded and decoded as: [`channel_for`] its key and encoding,
    /// with the schema its publisher describes. Waits for that answer until [`SCHEMA_WAIT`]
    /// after the topic's first sample, so topics first seen together wait about that long
    /// together, however many there are.
    pub fn channel(&self, id: TopicId) -> Option<ChannelSpec> {
        let mut inner = self.lock();
        loop {
            let since = match inner.schemas.get(id as usize)? {
                SchemaState::Known(schema) => {
                    let topic = inner.topics.get(id as usize)?;
                    let spec = channel_for(&topic.key, &topic.encoding);
                    return Some(match schema {
                        Some(schema) => schema.apply(spec),
                        None => spec,
                    });
                }
                SchemaState::Asked(since) => *since,
            };
            let Some(left) = SCHEMA_WAIT.checked_sub(since.elapsed()) else {
                // Too late: this topic goes on without a schema.
                if let Some(state) = inner.schemas.get_mut(id as usize) {
                    *state = SchemaState::Known(None);
                }
                continue;
            };
            inner = self
                .answered
                .wait_timeout(inner, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The topic with id `id`.
    pub fn get(&self, id: TopicId) -> Option<LiveTopic> {
        self.lock().topics.get(id as usize).cloned()
    }

    /// How many topics have been seen.
    pub fn len(&self) -> usize {
        self.lock().topics.len()
    }

    /// True before the first sample.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The topics with ids `from..`, in id order.
    pub fn since(&self, from: usize) -> Vec<LiveTopic> {
        self.lock().topics.get(from..).unwrap_or(&[]).to_vec()
    }
}

/// One advertised topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advertised {
    /// The topic (zenoh key).
    pub topic: String,
    /// Its registry schema name.
    pub schema: String,
    /// True while its token is up.
    pub alive: bool,
}

/// Topics advertised through `redline/adv/<Schema>/<key>` tokens that match the subscription.
/// A topic stays listed after its token goes away: it was advertised.
#[derive(Debug, Default)]
pub struct Advertisements {
    inner: Mutex<BTreeMap<String, Advertised>>,
}

impl Advertisements {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Advertised>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a token appearing (`alive`) or going away.
    pub fn note(&self, schema: &str, topic: &str, alive: bool) {
        self.lock().insert(
            topic.to_string(),
            Advertised {
                topic: topic.to_string(),
                schema: schema.to_string(),
                alive,
            },
        );
    }

    /// Every topic advertised so far, by topic.
    pub fn snapshot(&self) -> Vec<Advertised> {
        self.lock().values().cloned().collect()
    }
}

/// A live subscription: its samples go into a [`DropQueue`]; dropping it undeclares everything.
pub struct Subscription {
    queue: Arc<DropQueue<LiveMessage>>,
    topics: Arc<TopicTable>,
    advertisements: Arc<Advertisements>,
    received: Arc<AtomicU64>,
    key_exprs: Vec<String>,
    _data: Vec<Subscriber<()>>,
    _tokens: Subscriber<()>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("key_exprs", &self.key_exprs)
            .field("received", &self.received())
            .finish_non_exhaustive()
    }
}

impl Subscription {
    /// Subscribes to `key_exprs` (e.g. `car/**`) and to the advertisements of matching topics,
    /// existing ones included. A sample whose key several expressions match is queued once.
    pub fn start(
        session: &Session,
        key_exprs: &[String],
        queue: Arc<DropQueue<LiveMessage>>,
    ) -> Result<Self, LiveError> {
        let exprs = key_exprs
            .iter()
            .map(|k| {
                KeyExpr::try_from(k.clone()).map_err(|e| LiveError::Declare {
                    what: format!("key expression {k:?}"),
                    reason: zenoh_error(&e),
                })
            })
            .collect::<Result<Vec<KeyExpr<'static>>, _>>()?;
        let (asks, asked) = std::sync::mpsc::channel();
        let topics = Arc::new(TopicTable::asking(asks));
        {
            let (session, topics) = (session.clone(), Arc::downgrade(&topics));
            std::thread::Builder::new()
                .name("schema queries".into())
                .spawn(move || ask_schemas(session, asked, topics))
                .map_err(|e| LiveError::Declare {
                    what: "the schema query thread".into(),
                    reason: e.to_string(),
                })?;
        }
        let received = Arc::new(AtomicU64::new(0));
        let mut data = Vec::new();
        for (i, expr) in exprs.iter().enumerate() {
            let (queue, topics, received) = (
                Arc::clone(&queue),
                Arc::clone(&topics),
                Arc::clone(&received),
            );
            // Zenoh delivers a sample to every subscriber whose expression matches its key; the
            // first of ours that matches takes it. Only expressions that overlap this one are
            // asked.
            let earlier: Vec<KeyExpr<'static>> = exprs[..i]
                .iter()
                .filter(|e| e.intersects(expr))
                .cloned()
                .collect();
            let subscriber = session
                .declare_subscriber(expr.clone())
                .callback(move |sample: Sample| {
                    if sample.kind() != SampleKind::Put
                        || earlier.iter().any(|e| e.includes(sample.key_expr()))
                    {
                        return;
                    }
                    let message = LiveMessage {
                        topic: topics.intern(sample.key_expr().as_str(), sample.encoding()),
                        log_time_ns: log_time_ns(),
                        publish_time_ns: sample.timestamp().map(|ts| {
                            ts.get_time()
                                .to_system_time()
                                .duration_since(UNIX_EPOCH)
                                .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
                        }),
                        data: sample.payload().to_bytes().into_owned(),
                    };
                    received.fetch_add(1, Ordering::Relaxed);
                    let bytes = message.queue_bytes();
                    queue.push(message, bytes);
                })
                .wait()
                .map_err(|e| LiveError::Declare {
                    what: format!("subscriber on {expr}"),
                    reason: zenoh_error(&e),
                })?;
            data.push(subscriber);
        }
        let advertisements = Arc::new(Advertisements::default());
        let tokens = {
            let advertisements = Arc::clone(&advertisements);
            let exprs = exprs.clone();
            session
                .liveliness()
                .declare_subscriber(format!("{ADVERTISE_PREFIX}/**"))
                .history(true)
                .callback(move |sample: Sample| {
                    let Some((schema, topic)) = parse_advertisement(sample.key_expr().as_str())
                    else {
                        return;
                    };
                    let matches = keyexpr::new(topic)
                        .is_ok_and(|topic| exprs.iter().any(|e| e.intersects(topic)));
                    if matches {
                        advertisements.note(schema, topic, sample.kind() == SampleKind::Put);
                    }
                })
                .wait()
                .map_err(|e| LiveError::Declare {
                    what: format!("liveliness subscriber on {ADVERTISE_PREFIX}/**"),
                    reason: zenoh_error(&e),
                })?
        };
        Ok(Subscription {
            queue,
            topics,
            advertisements,
            received,
            key_exprs: key_exprs.to_vec(),
            _data: data,
            _tokens: tokens,
        })
    }

    /// The queue the samples go into.
    pub fn queue(&self) -> &Arc<DropQueue<LiveMessage>> {
        &self.queue
    }

    /// The topics seen so far.
    pub fn topics(&self) -> &Arc<TopicTable> {
        &self.topics
    }

    /// The advertised topics seen so far.
    pub fn advertisements(&self) -> &Arc<Advertisements> {
        &self.advertisements
    }

    /// Samples delivered by zenoh so far (queued or dropped by the queue).
    pub fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }

    /// The key expressions subscribed to.
    pub fn key_exprs(&self) -> &[String] {
        &self.key_exprs
    }
}
