//! rosbag2 SQLite storage (`.db3`, the default storage of ROS 2 before Iron) as parts of a
//! recording: each row of the `topics` table becomes a channel (message encoding = its
//! `serialization_format`, schema = its type with the definition from `message_definitions`
//! where the file has that table), each row of `messages` a message whose log time is its
//! `timestamp`.
//!
//! Read with `rusqlite` through SQLite itself: the file is opened read-only with `immutable=1`,
//! so SQLite takes no lock and creates no `-journal`, `-wal` or `-shm` file beside it (nothing in
//! the bag changes by reading it; a bag a recorder still writes is read as it stands).
//!
//! Opening asks SQLite for the topics and, when asked to count, each topic's count and time range
//! (a pass over the `messages` table, not its blobs); uncounted, only the total and the time range
//! (from the table's b-tree and the timestamp index, without a pass). Reading pages through
//! `messages` in (`timestamp`, `id`) order, a bounded page at a time: a `Statement` borrows its
//! connection, so a cursor cannot hold one open across calls; each page starts after the last row
//! handed out. A row whose blob is larger than a record may be is reported without its bytes being
//! read.
//!
//! rosbag2 inserts messages as they arrive, so timestamps nearly always follow row ids; reading in
//! `id` order is then a sequential read of the table, where the timestamp index looks every row
//! up (35% slower here). Whether a file is in that order is known after counting; otherwise a
//! *tiled* read (one of several whose time windows cover all time, as the scope's loader reads)
//! reads in `id` order and checks, before handing out a page, that timestamps do not go back and
//! that it starts and stops where the timestamp index says its window starts and stops. Every
//! tile passing those checks proves the whole table in order; a tile that fails marks the file
//! as out of order and stops with [`SqliteError::NotInIdOrder`], and the reader asks for the read
//! to be repeated (it then goes through the timestamp index). Other reads of a file whose order is
//! unknown go through the index.
//!
//! Per-message compression (`compression_mode: message`, `compression_format: zstd` in
//! `metadata.yaml`) is recognised by each blob's zstd frame magic, so a `.db3` file opened alone
//! reads the same: a CDR payload starts with its encapsulation header (`00 00`/`00 01`/...), never
//! with the magic. A `.db3.zstd` compressed whole (`compression_mode: file`) is decompressed into
//! a temporary copy before it gets here ([`crate::decompressed`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, OptionalExtension};

use crate::channel::{ChannelSpec, SchemaSpec};
use crate::format::MAX_RECORD_BYTES;
use crate::id_map::IdMap;

/// The tables rosbag2 creates in a `.db3` (schema version 4, as Iron and later write it), as
/// SQL, without rows: what this module reads. For tests and benchmarks that write a `.db3` as
/// rosbag2 would.
pub const ROSBAG2_TABLES: &str = "\
    CREATE TABLE schema(schema_version INTEGER PRIMARY KEY, ros_distro TEXT NOT NULL);
    CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,
      serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL,
      type_description_hash TEXT NOT NULL);
    CREATE TABLE message_definitions(id INTEGER PRIMARY KEY, topic_type TEXT NOT NULL,
      encoding TEXT NOT NULL, encoded_message_definition TEXT NOT NULL,
      type_description_hash TEXT NOT NULL);
    CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL,
      timestamp INTEGER NOT NULL, data BLOB NOT NULL);
    CREATE INDEX timestamp_idx ON messages (timestamp ASC);";

/// The first bytes of every SQLite 3 database file.
pub(crate) const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Rows fetched per page, and bytes of blobs after which a page ends early: what a cursor holds
/// in memory at most (besides one message of up to [`MAX_RECORD_BYTES`]).
const PAGE_ROWS: i64 = 8192;
const PAGE_BYTES: usize = 16 << 20;

/// What is wrong in a rosbag2 SQLite file.
#[derive(Debug, thiserror::Error)]
pub enum SqliteError {
    /// A SQLite database, but not one rosbag2 wrote (no `topics` or `messages` table).
    #[error("a SQLite database without rosbag2's tables: {0}")]
    NotRosbag2(String),
    /// SQLite refused: the file is corrupt, truncated, or not a database.
    #[error("SQLite could not {doing}")]
    Sqlite {
        /// What was being done.
        doing: &'static str,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// More topics than a part can hold channels.
    #[error("more than {0} topics")]
    TooManyTopics(usize),
    /// A message blob larger than any record we read (skipped, not read).
    #[error("message {id} holds {bytes} bytes, more than the {limit} bytes a message may have")]
    TooLarge {
        /// The row id.
        id: i64,
        /// Its blob's size.
        bytes: i64,
        /// The limit.
        limit: usize,
    },
    /// A zstd-compressed message that does not decompress, or to too much (skipped).
    #[error("message {id} cannot be decompressed")]
    Decompress {
        /// The row id.
        id: i64,
        /// What went wrong.
        #[source]
        source: crate::DecompressError,
    },
    /// A tiled read found timestamps going back in `id` order, or a window that does not start
    /// or stop where the timestamp index says: the file is now known to be out of `id` order,
    /// and the read must be repeated (it will go through the timestamp index).
    #[error(
        "messages are not in time order by row id (found at row {id}): the read must be \
         repeated in time order"
    )]
    NotInIdOrder {
        /// The row where it showed.
        id: i64,
    },
    /// A message whose `topic_id` the `topics` table does not list, or whose timestamp is
    /// negative (skipped).
    #[error("message {id} {what}")]
    BadRow {
        /// The row id.
        id: i64,
        /// What is wrong with it.
        what: String,
    },
}

fn sqlite(doing: &'static str) -> impl FnOnce(rusqlite::Error) -> SqliteError {
    move |source| SqliteError::Sqlite { doing, source }
}

/// Opens `path` read-only and immutable (see the module doc).
fn open(path: &Path) -> Result<Connection, SqliteError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(file_uri(path), flags).map_err(sqlite("open it"))
}

/// `file:` URI of `path` with `?mode=ro&immutable=1`; every byte but the unreserved ones and
/// `/` is percent-encoded, so a `?`, `#` or `%` in a directory name stays part of the path.
fn file_uri(path: &Path) -> String {
    use std::fmt::Write;
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(char::from(b));
        } else {
            let _ = write!(uri, "%{b:02X}");
        }
    }
    uri.push_str("?mode=ro&immutable=1");
    uri
}

/// SQLite's `PRAGMA quick_check` of the file at `path` (its pages, b-trees and records, not
/// its indexes' contents): `Err` with what SQLite reports (its first ten problems) when it finds
/// any, or why the file could not be checked.
pub(crate) fn quick_check(path: &Path) -> Result<(), String> {
    let conn = open(path).map_err(|e| e.to_string())?;
    let mut stmt = conn
        .prepare("PRAGMA quick_check(10)")
        .map_err(|e| format!("SQLite could not check it: {e}"))?;
    let lines: Vec<String> = stmt
        .query_map([], |row| row.get::<_, String>(0))
        .and_then(|rows| rows.collect())
        .map_err(|e| format!("SQLite could not check it: {e}"))?;
    if lines == ["ok"] {
        Ok(())
    } else {
        Err(lines.join("; ").replace('\n', " "))
    }
}

/// The columns `table` has (empty when there is no such table).
fn columns(conn: &Connection, table: &str) -> Result<BTreeSet<String>, SqliteError> {
    let mut stmt = conn
        .prepare("SELECT name FROM pragma_table_info(?1)")
        .map_err(sqlite("read the table layout"))?;
    let names = stmt
        .query_map([table], |row| row.get::<_, String>(0))
        .map_err(sqlite("read the table layout"))?
        .collect::<Result<_, _>>()
        .map_err(sqlite("read the table layout"))?;
    Ok(names)
}

/// What opening a `.db3` file found.
#[derive(Debug, Default)]
pub(crate) struct SqliteScan {
    /// Part-local channel id (topics in `id` order) -> channel.
    pub(crate) channels: BTreeMap<u16, ChannelSpec>,
    /// Messages per channel; `None` when opening did not count them.
    pub(crate) channel_counts: Option<BTreeMap<u16, u64>>,
    pub(crate) message_count: u64,
    pub(crate) time_range_ns: Option<(u64, u64)>,
    /// `zstd` when the first message is zstd-compressed, `` when it is not.
    pub(crate) compression: BTreeSet<String>,
    /// How to read the file.
    pub(crate) index: SqliteIndex,
}

/// What reading a `.db3` file needs to know of it.
#[derive(Debug, Default)]
pub(crate) struct SqliteIndex {
    /// `topics.id` -> part-local channel id.
    pub(crate) topic_ids: IdMap,
    /// [`RowOrder`] as a number: whether timestamps never decrease in `id` order (rosbag2
    /// inserts messages as they arrive, so this is the rule), and so reading may follow the
    /// table instead of the timestamp index. Shared by every cursor of the file.
    order: AtomicU8,
}

/// What is known of the order of a file's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowOrder {
    /// Not yet known: a tiled read checks as it goes, others read by time.
    Unknown = 0,
    /// Timestamps never decrease in `id` order.
    ById = 1,
    /// Some timestamp goes back in `id` order (or is negative).
    ByTime = 2,
}

impl SqliteIndex {
    /// What is known of the order of the file's rows.
    pub(crate) fn order(&self) -> RowOrder {
        match self.order.load(Ordering::Relaxed) {
            1 => RowOrder::ById,
            2 => RowOrder::ByTime,
            _ => RowOrder::Unknown,
        }
    }

    fn set_order(&self, order: RowOrder) {
        self.order.store(order as u8, Ordering::Relaxed);
    }
}

impl SqliteScan {
    /// Reads the topics and their definitions, and the messages' total and time range; with
    /// `count`, per-topic counts and time ranges and the rows' order too (a pass over the
    /// table). Uncounted, [`SqliteScan::channel_counts`] is `None`, the total counts every row
    /// (also rows of topics `topics` does not list, which are reported when read) and the
    /// order is [`RowOrder::Unknown`].
    pub(crate) fn scan(path: &Path, count: bool) -> Result<SqliteScan, SqliteError> {
        let conn = open(path)?;
        let topic_columns = columns(&conn, "topics")?;
        let message_columns = columns(&conn, "messages")?;
        for (table, have, need) in [
            (
                "topics",
                &topic_columns,
                &["id", "name", "type", "serialization_format"][..],
            ),
            (
                "messages",
                &message_columns,
                &["id", "topic_id", "timestamp", "data"][..],
            ),
        ] {
            if let Some(missing) = need.iter().find(|c| !have.contains(**c)) {
                return Err(SqliteError::NotRosbag2(if have.is_empty() {
                    format!("no `{table}` table")
                } else {
                    format!("the `{table}` table has no `{missing}` column")
                }));
            }
        }
        let definitions = definitions(&conn)?;
        let optional = |column: &str| {
            if topic_columns.contains(column) {
                column.to_string()
            } else {
                "''".to_string()
            }
        };
        let sql = format!(
            "SELECT id, name, type, serialization_format, {}, {} FROM topics ORDER BY id",
            optional("offered_qos_profiles"),
            optional("type_description_hash"),
        );
        let mut stmt = conn.prepare(&sql).map_err(sqlite("read the topics"))?;
        let mut rows = stmt.query([]).map_err(sqlite("read the topics"))?;
        let mut scan = SqliteScan::default();
        while let Some(row) = rows.next().map_err(sqlite("read the topics"))? {
            let local = u16::try_from(scan.channels.len())
                .map_err(|_| SqliteError::TooManyTopics(usize::from(u16::MAX) + 1))?;
            let text = |i: usize| -> Result<String, SqliteError> {
                let value = row.get_ref(i).map_err(sqlite("read the topics"))?;
                Ok(match value {
                    ValueRef::Text(t) | ValueRef::Blob(t) => {
                        String::from_utf8_lossy(t).into_owned()
                    }
                    _ => String::new(),
                })
            };
            let id: i64 = row.get(0).map_err(sqlite("read the topics"))?;
            let (topic, type_name, format) = (text(1)?, text(2)?, text(3)?);
            let (qos, hash) = (text(4)?, text(5)?);
            // Where the rosbag2 MCAP storage keeps the same two, so that an export carries them.
            let mut metadata = BTreeMap::new();
            if !qos.is_empty() {
                metadata.insert("offered_qos_profiles".to_string(), qos);
            }
            if !hash.is_empty() {
                metadata.insert("topic_type_hash".to_string(), hash);
            }
            let (encoding, data) = definitions
                .get(&type_name)
                .cloned()
                .unwrap_or_else(|| ("ros2msg".to_string(), Vec::new()));
            scan.channels.insert(
                local,
                ChannelSpec {
                    topic,
                    message_encoding: format,
                    schema: Some(SchemaSpec {
                        name: type_name,
                        encoding,
                        data,
                    }),
                    metadata,
                },
            );
            scan.index.topic_ids.insert(id, local);
        }
        drop(rows);
        if count {
            scan.count(path, &conn)?;
        } else {
            scan.total(&conn)?;
        }
        let head: Option<Vec<u8>> = conn
            .query_row(
                "SELECT substr(data, 1, 4) FROM messages ORDER BY timestamp LIMIT 1",
                [],
                |row| row.get(0),
            )
            .ok();
        if let Some(head) = head {
            let zstd = crate::compressed_message::starts_compressed(&head);
            scan.compression
                .insert(if zstd { "zstd" } else { "" }.to_string());
        }
        Ok(scan)
    }

    /// Counts the messages per topic and learns the rows' order, in a pass over the table.
    fn count(&mut self, path: &Path, conn: &Connection) -> Result<(), SqliteError> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        let counted = count_messages(
            path,
            conn,
            &self.index.topic_ids,
            self.channels.len(),
            threads,
        )?;
        self.index.set_order(if counted.in_id_order {
            RowOrder::ById
        } else {
            RowOrder::ByTime
        });
        let mut counts = BTreeMap::new();
        for (local, counted) in counted.per_topic.into_iter().enumerate() {
            let (Some((count, first, last)), Ok(local)) = (counted, u16::try_from(local)) else {
                continue;
            };
            counts.insert(local, count);
            self.message_count += count;
            let (Ok(first), Ok(last)) = (u64::try_from(first), u64::try_from(last.max(0))) else {
                continue;
            };
            self.time_range_ns = Some(match self.time_range_ns {
                Some((a, b)) => (a.min(first), b.max(last)),
                None => (first, last),
            });
        }
        self.channel_counts = Some(counts);
        Ok(())
    }

    /// The total and the time range without a pass: SQLite counts a table's rows from its
    /// b-tree pages and finds the least and greatest timestamp at the ends of the timestamp
    /// index. A file with a negative timestamp is read by time, as a counted one is: rows with
    /// a negative timestamp lie before every window and are not read (they are in the total).
    fn total(&mut self, conn: &Connection) -> Result<(), SqliteError> {
        // One query each: SQLite answers MIN or MAX alone from the index's ends, but scans the
        // table for both in one query.
        let one = |sql: &str| -> Result<Option<i64>, SqliteError> {
            conn.query_row(sql, [], |row| row.get(0))
                .map_err(sqlite("count the messages"))
        };
        let total = one("SELECT COUNT(*) FROM messages")?.unwrap_or(0);
        self.message_count = u64::try_from(total).unwrap_or(0);
        let first = one("SELECT MIN(timestamp) FROM messages WHERE timestamp >= 0")?;
        let last = one("SELECT MAX(timestamp) FROM messages")?;
        if let (Some(first), Some(last)) = (first, last)
            && let (Ok(first), Ok(last)) = (u64::try_from(first), u64::try_from(last))
        {
            self.time_range_ns = Some((first, last));
        }
        if one("SELECT EXISTS(SELECT 1 FROM messages WHERE timestamp < 0)")? == Some(1) {
            self.index.set_order(RowOrder::ByTime);
        }
        Ok(())
    }
}

/// Per-topic counts and time ranges of some rows, in `id` order.
struct Counted {
    /// Per part-local topic: (count, first, last timestamp).
    per_topic: Vec<Option<(u64, i64, i64)>>,
    /// Timestamps never decrease in `id` order.
    in_id_order: bool,
    /// The first and last rows' timestamps.
    ends: Option<(i64, i64)>,
}

impl Counted {
    /// These rows followed by `next`'s.
    fn then(mut self, next: Counted) -> Counted {
        let joined = match (self.ends, next.ends) {
            (Some((a, b)), Some((c, d))) => {
                self.in_id_order &= b <= c;
                Some((a, d))
            }
            (a, b) => a.or(b),
        };
        for (mine, theirs) in self.per_topic.iter_mut().zip(next.per_topic) {
            *mine = match (*mine, theirs) {
                (Some((n, a, b)), Some((m, c, d))) => Some((n + m, a.min(c), b.max(d))),
                (a, b) => a.or(b),
            };
        }
        Counted {
            per_topic: self.per_topic,
            in_id_order: self.in_id_order && next.in_id_order,
            ends: joined,
        }
    }
}

/// Rows each counting thread takes at least (fewer are counted on one thread).
const PARALLEL_COUNT_ROWS: i64 = 50_000;

/// Counts the messages per topic and learns whether timestamps follow `id` order, in one pass
/// in table order: SQLite's `GROUP BY topic_id` sorts every row first (there is no index on
/// it), which took longer. A large table is counted in `id` ranges on up to four threads, each
/// with its own connection (the pass is SQLite stepping through rows, which one connection
/// does on one core). Rows of topics `topics` does not list are left out here and reported
/// when read.
fn count_messages(
    path: &Path,
    conn: &Connection,
    topics: &IdMap,
    topic_count: usize,
    threads: usize,
) -> Result<Counted, SqliteError> {
    // Two queries: SQLite answers MIN or MAX of the rowid alone from the b-tree's ends, but
    // scans the whole table for both in one query.
    let end = |sql: &str| -> Result<Option<i64>, SqliteError> {
        conn.query_row(sql, [], |row| row.get(0))
            .map_err(sqlite("count the messages"))
    };
    let low = end("SELECT MIN(id) FROM messages")?;
    let high = end("SELECT MAX(id) FROM messages")?;
    let (Some(low), Some(high)) = (low, high) else {
        return count_range(conn, topics, topic_count, i64::MIN, i64::MAX);
    };
    let threads = i64::try_from(threads).unwrap_or(1);
    let span = high.saturating_sub(low);
    if threads < 2 || span < PARALLEL_COUNT_ROWS * threads {
        return count_range(conn, topics, topic_count, i64::MIN, i64::MAX);
    }
    let step = span / threads + 1;
    let ranges: Vec<(i64, i64)> = (0..threads)
        .map(|k| {
            let from = if k == 0 {
                i64::MIN
            } else {
                low.saturating_add(k.saturating_mul(step))
            };
            let to = if k == threads - 1 {
                i64::MAX
            } else {
                low.saturating_add((k + 1).saturating_mul(step))
            };
            (from, to)
        })
        .collect();
    let counted: Vec<Result<Counted, SqliteError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = ranges
            .iter()
            .map(|&(from, to)| {
                scope.spawn(move || {
                    let conn = open(path)?;
                    count_range(&conn, topics, topic_count, from, to)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(SqliteError::NotRosbag2("a counting thread panicked".into()))
                })
            })
            .collect()
    });
    let mut counted = counted.into_iter();
    let first = counted
        .next()
        .unwrap_or_else(|| count_range(conn, topics, topic_count, i64::MIN, i64::MAX))?;
    counted.try_fold(first, |all, next| Ok(all.then(next?)))
}

/// [`count_messages`] of the rows with `from <= id < to`.
fn count_range(
    conn: &Connection,
    topics: &IdMap,
    topic_count: usize,
    from: i64,
    to: i64,
) -> Result<Counted, SqliteError> {
    let mut counted = Counted {
        per_topic: vec![None; topic_count],
        in_id_order: true,
        ends: None,
    };
    let mut stmt = conn
        .prepare("SELECT topic_id, timestamp FROM messages WHERE id >= ?1 AND id < ?2 ORDER BY id")
        .map_err(sqlite("count the messages"))?;
    let mut rows = stmt
        .query([from, to])
        .map_err(sqlite("count the messages"))?;
    let mut previous = i64::MIN;
    let mut first = None;
    while let Some(row) = rows.next().map_err(sqlite("count the messages"))? {
        let int = |i: usize| -> Result<i64, SqliteError> {
            row.get_ref(i)
                .and_then(|v| Ok(v.as_i64()?))
                .map_err(sqlite("count the messages"))
        };
        let (topic_id, t) = (int(0)?, int(1)?);
        if t < previous {
            counted.in_id_order = false;
        }
        previous = t;
        first.get_or_insert(t);
        let Some(slot) = topics
            .get(topic_id)
            .and_then(|local| counted.per_topic.get_mut(usize::from(local)))
        else {
            continue;
        };
        let entry = slot.get_or_insert((0, t, t));
        entry.0 += 1;
        entry.1 = entry.1.min(t);
        entry.2 = entry.2.max(t);
    }
    counted.ends = first.map(|f| (f, previous));
    Ok(counted)
}

/// `message_definitions` (rosbag2 schema version 4 and later): type -> (encoding, definition).
/// Older files have no such table: their channels get an empty `ros2msg` schema.
fn definitions(conn: &Connection) -> Result<HashMap<String, (String, Vec<u8>)>, SqliteError> {
    let have = columns(conn, "message_definitions")?;
    if !["topic_type", "encoding", "encoded_message_definition"]
        .iter()
        .all(|c| have.contains(*c))
    {
        return Ok(HashMap::new());
    }
    let mut stmt = conn
        .prepare("SELECT topic_type, encoding, encoded_message_definition FROM message_definitions")
        .map_err(sqlite("read the message definitions"))?;
    let rows = stmt
        .query_map([], |row| {
            let text = |i: usize| -> rusqlite::Result<Vec<u8>> {
                Ok(match row.get_ref(i)? {
                    ValueRef::Text(t) | ValueRef::Blob(t) => t.to_vec(),
                    _ => Vec::new(),
                })
            };
            Ok((
                String::from_utf8_lossy(&text(0)?).into_owned(),
                String::from_utf8_lossy(&text(1)?).into_owned(),
                text(2)?,
            ))
        })
        .map_err(sqlite("read the message definitions"))?;
    let mut out = HashMap::new();
    for row in rows {
        let (name, encoding, data) = row.map_err(sqlite("read the message definitions"))?;
        out.insert(name, (encoding, data));
    }
    Ok(out)
}

/// One message read from a `.db3` file; its payload is [`SqliteCursor::payload`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct SqliteMessage {
    /// Part-local channel id.
    pub(crate) channel: u16,
    /// The row's `timestamp`.
    pub(crate) log_time_ns: u64,
}

/// A row of the current page.
struct Row {
    id: i64,
    topic_id: i64,
    timestamp: i64,
    /// Where its blob is in the page's buffer; `None` when the blob is larger than a message
    /// may be (its bytes were not read).
    data: Option<std::ops::Range<usize>>,
    size: i64,
}

/// What [`take_rows`] took.
#[derive(Default)]
struct Taken {
    /// Rows taken.
    rows: i64,
    /// The page holds [`PAGE_BYTES`] of blobs: it ended early.
    full: bool,
    /// A row at or past the end time was met (and not taken): its id.
    past_end: Option<i64>,
    /// The next row's blob is larger than the connection reads (SQLite stopped with
    /// `SQLITE_TOOBIG` before reading it).
    too_big: bool,
}

/// Moves `rows` into `page` (blobs into `page_bytes`) until [`PAGE_BYTES`] are held or a row
/// logged at or after `end` comes.
fn take_rows(
    rows: &mut rusqlite::Rows<'_>,
    page: &mut VecDeque<Row>,
    page_bytes: &mut Vec<u8>,
    end: i64,
) -> Result<Taken, SqliteError> {
    let mut taken = Taken::default();
    loop {
        let row = match rows.next() {
            Ok(Some(row)) => row,
            Ok(None) => break,
            Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::TooBig => {
                taken.too_big = true;
                break;
            }
            Err(e) => return Err(sqlite("read the messages")(e)),
        };
        // Read as references: no conversion layer per value (a row is four values and the
        // table has millions), and without asking SQLite each time how many columns the page
        // query has (its four are fixed, so `get_ref_unwrap` cannot panic).
        let int = |i: usize| -> Result<i64, SqliteError> {
            row.get_ref_unwrap(i)
                .as_i64()
                .map_err(|e| sqlite("read the messages")(e.into()))
        };
        let timestamp = int(2)?;
        let id = int(0)?;
        if timestamp >= end {
            taken.past_end = Some(id);
            break;
        }
        let (data, size) = match row.get_ref_unwrap(3) {
            ValueRef::Blob(b) => {
                let start = page_bytes.len();
                page_bytes.extend_from_slice(b);
                (Some(start..page_bytes.len()), b.len() as i64)
            }
            other => {
                return Err(SqliteError::BadRow {
                    id,
                    what: format!("has data of type {}, not a blob", other.data_type()),
                });
            }
        };
        taken.rows += 1;
        page.push_back(Row {
            id,
            topic_id: int(1)?,
            timestamp,
            size,
            data,
        });
        if page_bytes.len() >= PAGE_BYTES {
            taken.full = true;
            break;
        }
    }
    Ok(taken)
}

/// The columns a page reads. A blob larger than a message may be is not read: the cursor's
/// connection limits values to that size (`SQLITE_LIMIT_LENGTH`), SQLite stops at such a row
/// before reading its overflow pages, and the row is looked up alone, by its length. (Asking
/// for `length(data)` on every row to choose costs 15-20% of the page reads.)
const PAGE_COLUMNS: &str = "SELECT id, topic_id, timestamp, data";

/// Reads a `.db3` file's messages in (timestamp, id) order, a page at a time.
pub(crate) struct SqliteCursor {
    conn: Connection,
    index: Arc<SqliteIndex>,
    /// Read in `id` order (see [`SqliteIndex::order`]), not through the timestamp index.
    in_id_order: bool,
    /// Reading in `id` order without knowing the file is in that order: each page is checked
    /// (see the module doc).
    checking: bool,
    /// The timestamp of the last row taken (read in `id` order).
    last_timestamp: i64,
    /// The last row handed out, where the next page starts (read by time).
    after: Option<(i64, i64)>,
    /// The next row to read (read in `id` order; `None` before the first page).
    next_id: Option<i64>,
    start: i64,
    end: i64,
    page: VecDeque<Row>,
    /// The blobs of the page's rows, one after another (one allocation per page, not per row).
    page_bytes: Vec<u8>,
    /// The previous page was the last.
    exhausted: bool,
    /// The last message handed out, decompressed (when it was compressed).
    current: Vec<u8>,
    /// Where the last message handed out is: its place in `page_bytes`, `None` in `current`.
    last: Option<std::ops::Range<usize>>,
    /// The largest blob read (see [`PAGE_COLUMNS`]).
    blob_limit: usize,
}

impl SqliteCursor {
    /// A cursor over messages with `start_ns <= timestamp < end_ns` of the file `index`
    /// describes. `tiled`: this read is one of several whose windows cover all time, each read
    /// to its end (see the module doc).
    pub(crate) fn new(
        path: &Path,
        index: &Arc<SqliteIndex>,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
        tiled: bool,
    ) -> Result<Self, SqliteError> {
        let clamp = |t: u64| i64::try_from(t).unwrap_or(i64::MAX);
        let (in_id_order, checking) = match index.order() {
            RowOrder::ById => (true, false),
            RowOrder::ByTime => (false, false),
            RowOrder::Unknown => (tiled, tiled),
        };
        let conn = open(path)?;
        let blob_limit = MAX_RECORD_BYTES;
        conn.set_limit(
            rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH,
            i32::try_from(blob_limit).unwrap_or(i32::MAX),
        )
        .map_err(sqlite("open it"))?;
        Ok(SqliteCursor {
            conn,
            index: Arc::clone(index),
            in_id_order,
            checking,
            last_timestamp: i64::MIN,
            after: None,
            next_id: None,
            start: start_ns.map_or(0, clamp),
            end: end_ns.map_or(i64::MAX, clamp),
            page: VecDeque::new(),
            page_bytes: Vec::new(),
            exhausted: false,
            current: Vec::new(),
            last: None,
            blob_limit,
        })
    }

    /// Fetches the next page of rows.
    fn fill(&mut self) -> Result<(), SqliteError> {
        self.page_bytes.clear();
        let taken = if self.in_id_order {
            // Rows in table order, stopping at the first one past the end: a sequential read
            // of the table, where going through the timestamp index looks each row up.
            let next_id = match self.next_id {
                Some(id) => id,
                None => match self.first_at(self.start)? {
                    Some(id) => {
                        if self.checking {
                            self.check_start(id)?;
                        }
                        id
                    }
                    None => {
                        self.exhausted = true;
                        return Ok(());
                    }
                },
            };
            let mut stmt = self
                .conn
                .prepare(&format!(
                    "{PAGE_COLUMNS} FROM messages WHERE id >= ?1 ORDER BY id LIMIT ?2"
                ))
                .map_err(sqlite("read the messages"))?;
            let mut rows = stmt
                .query(rusqlite::params![next_id, PAGE_ROWS])
                .map_err(sqlite("read the messages"))?;
            let mut taken = take_rows(&mut rows, &mut self.page, &mut self.page_bytes, self.end)?;
            drop(rows);
            drop(stmt);
            if taken.too_big {
                let from = self
                    .page
                    .back()
                    .map_or(Some(next_id), |r| r.id.checked_add(1));
                let big = match from {
                    Some(from) => self.row_alone("id >= ?1 ORDER BY id", &[&from])?,
                    None => None,
                };
                self.take_alone(big, &mut taken);
            }
            self.next_id = match self.page.back() {
                Some(last) => last.id.checked_add(1),
                None => Some(next_id),
            };
            if self.next_id.is_none() {
                self.exhausted = true;
            }
            if self.checking {
                let at_end = taken.past_end.is_some()
                    || (!taken.too_big && taken.rows < PAGE_ROWS && !taken.full);
                self.check_page(at_end.then_some(taken.past_end))?;
            }
            taken
        } else {
            let (after_t, after_id) = self.after.unwrap_or((i64::MIN, i64::MIN));
            let mut stmt = self
                .conn
                .prepare(&format!(
                    "{PAGE_COLUMNS} FROM messages WHERE timestamp >= ?1 AND timestamp < ?2 \
                     AND (timestamp > ?3 OR (timestamp = ?3 AND id > ?4)) \
                     ORDER BY timestamp, id LIMIT ?5"
                ))
                .map_err(sqlite("read the messages"))?;
            let mut rows = stmt
                .query(rusqlite::params![
                    self.start.max(after_t),
                    self.end,
                    after_t,
                    after_id,
                    PAGE_ROWS
                ])
                .map_err(sqlite("read the messages"))?;
            let mut taken = take_rows(&mut rows, &mut self.page, &mut self.page_bytes, self.end)?;
            drop(rows);
            drop(stmt);
            if taken.too_big {
                let (t, id) = self
                    .page
                    .back()
                    .map_or((after_t, after_id), |r| (r.timestamp, r.id));
                let big = self.row_alone(
                    "timestamp >= ?1 AND (timestamp > ?2 OR (timestamp = ?2 AND id > ?3)) \
                     ORDER BY timestamp, id",
                    &[&self.start.max(t), &t, &id],
                )?;
                self.take_alone(big, &mut taken);
            }
            taken
        };
        if taken.past_end.is_some() || (taken.rows < PAGE_ROWS && !taken.full) {
            self.exhausted = true;
        }
        if taken.too_big {
            // The part stops at that row (see `next`).
            self.exhausted = true;
        }
        Ok(())
    }

    /// The first row matching `condition` (with its ordering), its blob's length instead of
    /// its bytes: the row a page stopped at because its blob is too large to read.
    fn row_alone(
        &self,
        condition: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Result<Option<Row>, SqliteError> {
        self.conn
            .query_row(
                &format!(
                    "SELECT id, topic_id, timestamp, length(data) FROM messages \
                     WHERE {condition} LIMIT 1"
                ),
                params,
                |row| {
                    Ok(Row {
                        id: row.get(0)?,
                        topic_id: row.get(1)?,
                        timestamp: row.get(2)?,
                        data: None,
                        size: row.get(3)?,
                    })
                },
            )
            .optional()
            .map_err(sqlite("read the messages"))
    }

    /// Puts the row a page stopped at (its blob too large) in the page, where reading will
    /// report it, unless it lies past the end.
    fn take_alone(&mut self, big: Option<Row>, taken: &mut Taken) {
        match big {
            Some(row) if row.timestamp >= self.end => taken.past_end = Some(row.id),
            Some(row) => {
                taken.rows += 1;
                self.page.push_back(row);
            }
            None => {}
        }
    }

    /// The first row in (timestamp, id) order with `timestamp >= t`.
    fn first_at(&self, t: i64) -> Result<Option<i64>, SqliteError> {
        self.conn
            .query_row(
                "SELECT id FROM messages WHERE timestamp >= ?1 ORDER BY timestamp, id LIMIT 1",
                [t],
                |row| row.get(0),
            )
            .optional()
            .map_err(sqlite("read the messages"))
    }

    /// A tiled read starting at row `first` (the first at or after the start time): when no row
    /// lies before the start time, no row may come before `first` in `id` order either.
    fn check_start(&mut self, first: i64) -> Result<(), SqliteError> {
        let (lowest, earlier): (Option<i64>, bool) = self
            .conn
            .query_row(
                "SELECT (SELECT MIN(id) FROM messages), \
                 EXISTS(SELECT 1 FROM messages WHERE timestamp < ?1)",
                [self.start],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .map_err(sqlite("read the messages"))?;
        if !earlier && lowest.is_some_and(|l| l != first) {
            return Err(self.out_of_order(first));
        }
        Ok(())
    }

    /// A page read in `id` order while checking: its timestamps never go back, and where the
    /// read ends (`end`: `Some(row past the end time)`, or `Some(None)` at the end of the
    /// table) is where the timestamp index says the window ends.
    fn check_page(&mut self, end: Option<Option<i64>>) -> Result<(), SqliteError> {
        let mut previous = self.last_timestamp;
        for row in &self.page {
            if row.timestamp < previous {
                return Err(self.out_of_order(row.id));
            }
            previous = row.timestamp;
        }
        self.last_timestamp = previous;
        if let Some(stop) = end
            && self.first_at(self.end)? != stop
        {
            let at = stop.or(self.page.back().map(|r| r.id)).unwrap_or(0);
            return Err(self.out_of_order(at));
        }
        Ok(())
    }

    /// Marks the file out of `id` order and drops what this read holds: the read must be
    /// repeated.
    fn out_of_order(&mut self, id: i64) -> SqliteError {
        self.index.set_order(RowOrder::ByTime);
        self.page.clear();
        self.exhausted = true;
        SqliteError::NotInIdOrder { id }
    }

    /// Reads blobs of at most `limit` bytes (tests: a blob larger than a message may be).
    #[cfg(test)]
    fn with_blob_limit(mut self, limit: usize) -> Self {
        self.conn
            .set_limit(
                rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH,
                i32::try_from(limit).unwrap_or(i32::MAX),
            )
            .expect("limit");
        self.blob_limit = limit;
        self
    }

    /// The payload of the message [`SqliteCursor::next`] handed out last (held until the
    /// cursor moves on).
    pub(crate) fn payload(&self) -> &[u8] {
        match &self.last {
            Some(range) => self.page_bytes.get(range.clone()).unwrap_or(&[]),
            None => &self.current,
        }
    }

    /// The next message whose channel is `wanted`, `Ok(None)` at the end. A row that cannot be
    /// read (too large, not decompressing, an unknown topic, a page SQLite finds corrupt) is an
    /// error that names it, and the reader stops the part there: what came before it was read.
    pub(crate) fn next(
        &mut self,
        topic_ids: &IdMap,
        mut wanted: impl FnMut(u16) -> bool,
    ) -> Result<Option<SqliteMessage>, SqliteError> {
        loop {
            if self.page.is_empty() {
                if self.exhausted {
                    return Ok(None);
                }
                self.fill()?;
                if self.page.is_empty() {
                    return Ok(None);
                }
            }
            let Some(row) = self.page.pop_front() else {
                continue;
            };
            self.after = Some((row.timestamp, row.id));
            let Some(channel) = topic_ids.get(row.topic_id) else {
                return Err(SqliteError::BadRow {
                    id: row.id,
                    what: format!(
                        "names topic id {}, which `topics` does not list",
                        row.topic_id
                    ),
                });
            };
            if !wanted(channel) {
                continue;
            }
            let Ok(log_time_ns) = u64::try_from(row.timestamp) else {
                return Err(SqliteError::BadRow {
                    id: row.id,
                    what: format!("has a negative timestamp ({})", row.timestamp),
                });
            };
            let Some(data) = row.data.clone().and_then(|r| self.page_bytes.get(r)) else {
                return Err(SqliteError::TooLarge {
                    id: row.id,
                    bytes: row.size,
                    limit: self.blob_limit,
                });
            };
            if crate::compressed_message::starts_compressed(data) {
                crate::compressed_message::decompress(data, &mut self.current)
                    .map_err(|source| SqliteError::Decompress { id: row.id, source })?;
                self.last = None;
            } else {
                self.last = row.data;
            }
            return Ok(Some(SqliteMessage {
                channel,
                log_time_ns,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.db3` file as rosbag2 (schema version 4) writes it, or with the layout of older
    /// versions (`old`: no `message_definitions`, no QoS or hash columns), holding `messages`
    /// (topic id, timestamp, payload).
    fn db3(path: &Path, old: bool, messages: &[(i64, i64, Vec<u8>)]) {
        let conn = Connection::open(path).unwrap();
        if old {
            // Before schema version 4: no definitions, no QoS or hash, no `schema` table.
            conn.execute_batch(
                "CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, \
                 type TEXT NOT NULL, serialization_format TEXT NOT NULL);
                 CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, \
                 timestamp INTEGER NOT NULL, data BLOB NOT NULL);
                 CREATE INDEX timestamp_idx ON messages (timestamp ASC);",
            )
            .unwrap();
        } else {
            conn.execute_batch(ROSBAG2_TABLES).unwrap();
            conn.execute_batch(
                "INSERT INTO message_definitions VALUES (1, 'std_msgs/msg/Int32', 'ros2msg', \
                 'int32 data', 'RIHS01_x');",
            )
            .unwrap();
        }
        for (id, name) in [(1, "/a"), (2, "/b")] {
            if old {
                conn.execute(
                    "INSERT INTO topics VALUES (?1, ?2, 'std_msgs/msg/Int32', 'cdr')",
                    rusqlite::params![id, name],
                )
                .unwrap();
            } else {
                conn.execute(
                    "INSERT INTO topics VALUES (?1, ?2, 'std_msgs/msg/Int32', 'cdr', '- qos', \
                     'RIHS01_x')",
                    rusqlite::params![id, name],
                )
                .unwrap();
            }
        }
        let tx = conn.unchecked_transaction().unwrap();
        for (topic, t, data) in messages {
            tx.execute(
                "INSERT INTO messages (topic_id, timestamp, data) VALUES (?1, ?2, ?3)",
                rusqlite::params![topic, t, data],
            )
            .unwrap();
        }
        tx.commit().unwrap();
    }

    fn read_all(
        path: &Path,
        index: &Arc<SqliteIndex>,
        start: Option<u64>,
        end: Option<u64>,
    ) -> Result<Vec<(u16, u64, Vec<u8>)>, SqliteError> {
        read(path, index, start, end, false)
    }

    fn read(
        path: &Path,
        index: &Arc<SqliteIndex>,
        start: Option<u64>,
        end: Option<u64>,
        tiled: bool,
    ) -> Result<Vec<(u16, u64, Vec<u8>)>, SqliteError> {
        let mut cursor = SqliteCursor::new(path, index, start, end, tiled)?;
        let mut out = Vec::new();
        while let Some(m) = cursor.next(&index.topic_ids, |_| true)? {
            out.push((m.channel, m.log_time_ns, cursor.payload().to_vec()));
        }
        Ok(out)
    }

    fn payload(i: u32) -> Vec<u8> {
        let mut p = vec![0, 1, 0, 0];
        p.extend(i.to_le_bytes());
        p
    }

    #[test]
    fn pages_come_in_timestamp_then_id_order_and_time_filters_hold() {
        let dir = tempfile::tempdir().unwrap();
        // 3000 rows, 7 to a timestamp, on two topics: inserted out of time order (read through
        // the timestamp index), and in time order (read in table order).
        let shuffled: Vec<(i64, i64, Vec<u8>)> = (0..3000u32)
            .map(|i| (1 + i64::from(i % 2), 1000 - i64::from(i / 7), payload(i)))
            .collect();
        let mut sorted = shuffled.clone();
        sorted.sort_by_key(|&(_, t, _)| t);
        for (name, rows, in_id_order) in [("shuffled", &shuffled, false), ("sorted", &sorted, true)]
        {
            let path = dir.path().join(format!("{name}.db3"));
            db3(&path, false, rows);
            let scan = SqliteScan::scan(&path, true).unwrap();
            let order = if in_id_order {
                RowOrder::ById
            } else {
                RowOrder::ByTime
            };
            assert_eq!(scan.index.order(), order, "{name}");
            assert_eq!(scan.message_count, 3000);
            let counts = scan.channel_counts.as_ref().unwrap();
            assert_eq!(counts.values().sum::<u64>(), 3000);
            assert_eq!(scan.time_range_ns, Some((1000 - 428, 1000)));
            let index = Arc::new(scan.index);
            let got = read_all(&path, &index, None, None).unwrap();
            let mut want: Vec<(i64, usize)> = rows
                .iter()
                .enumerate()
                .map(|(id, (_, t, _))| (*t, id))
                .collect();
            want.sort();
            let want: Vec<(u16, u64, Vec<u8>)> = want
                .iter()
                .map(|&(t, id)| {
                    let (topic, _, data) = &rows[id];
                    (u16::try_from(topic - 1).unwrap(), t as u64, data.clone())
                })
                .collect();
            assert_eq!(got, want, "{name}");
            for (a, b) in [(700, 800), (572, 573), (999, 2000), (0, 572), (800, 800)] {
                let window = read_all(&path, &index, Some(a), Some(b)).unwrap();
                let expected: Vec<_> = want
                    .iter()
                    .filter(|(_, t, _)| (a..b).contains(t))
                    .cloned()
                    .collect();
                assert_eq!(window, expected, "{name} {a}..{b}");
            }
        }
    }

    #[test]
    fn zstd_compressed_messages_read_as_their_payload() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.db3");
        let rows: Vec<(i64, i64, Vec<u8>)> = (0..5u32)
            .map(|i| {
                (
                    1,
                    i64::from(i),
                    zstd::encode_all(&payload(i)[..], 3).unwrap(),
                )
            })
            .collect();
        db3(&path, false, &rows);
        let scan = SqliteScan::scan(&path, true).unwrap();
        assert_eq!(scan.compression, BTreeSet::from(["zstd".to_string()]));
        let index = Arc::new(scan.index);
        let got = read_all(&path, &index, None, None).unwrap();
        let payloads: Vec<Vec<u8>> = got.into_iter().map(|(_, _, d)| d).collect();
        assert_eq!(payloads, (0..5).map(payload).collect::<Vec<_>>());
    }

    #[test]
    fn channels_carry_definitions_qos_and_hash_and_older_files_read_without_them() {
        let dir = tempfile::tempdir().unwrap();
        for old in [false, true] {
            let path = dir.path().join(format!("old_{old}.db3"));
            db3(&path, old, &[(2, 5, payload(1))]);
            let scan = SqliteScan::scan(&path, true).unwrap();
            let b = &scan.channels[&1];
            assert_eq!(b.topic, "/b");
            assert_eq!(b.message_encoding, "cdr");
            let schema = b.schema.as_ref().unwrap();
            assert_eq!(schema.name, "std_msgs/msg/Int32");
            assert_eq!(schema.encoding, "ros2msg");
            if old {
                assert!(schema.data.is_empty());
                assert!(b.metadata.is_empty());
            } else {
                assert_eq!(schema.data, b"int32 data");
                assert_eq!(b.metadata["offered_qos_profiles"], "- qos");
                assert_eq!(b.metadata["topic_type_hash"], "RIHS01_x");
            }
            let counts = scan.channel_counts.as_ref().unwrap();
            assert_eq!(counts.get(&0), None);
            assert_eq!(counts[&1], 1);
        }
    }

    #[test]
    fn other_databases_and_rows_of_unknown_topics_are_errors_that_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.db3");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE t(x);")
            .unwrap();
        let error = SqliteScan::scan(&path, true).unwrap_err();
        assert!(error.to_string().contains("no `topics` table"), "{error}");

        let path = dir.path().join("stray.db3");
        db3(&path, false, &[(1, 1, payload(1)), (9, 2, payload(2))]);
        let index = Arc::new(SqliteScan::scan(&path, true).unwrap().index);
        let mut cursor = SqliteCursor::new(&path, &index, None, None, false).unwrap();
        assert!(cursor.next(&index.topic_ids, |_| true).unwrap().is_some());
        let error = cursor.next(&index.topic_ids, |_| true).err().unwrap();
        assert!(error.to_string().contains("topic id 9"), "{error}");

        let path = dir.path().join("garbage.db3");
        std::fs::write(
            &path,
            b"SQLite format 3\0 and then nothing a database holds",
        )
        .unwrap();
        assert!(SqliteScan::scan(&path, true).is_err());
    }

    #[test]
    fn reading_changes_nothing_in_the_directory_and_odd_names_open() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a ?#%&=b");
        std::fs::create_dir(&sub).unwrap();
        let path = sub.join("x.db3");
        db3(&path, false, &[(1, 1, payload(1))]);
        let listing = |p: &Path| {
            let mut names: Vec<(String, u64)> = std::fs::read_dir(p)
                .unwrap()
                .map(|e| {
                    let e = e.unwrap();
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        e.metadata().unwrap().len(),
                    )
                })
                .collect();
            names.sort();
            names
        };
        let before = (listing(&sub), std::fs::read(&path).unwrap());
        let index = Arc::new(SqliteScan::scan(&path, true).unwrap().index);
        assert_eq!(read_all(&path, &index, None, None).unwrap().len(), 1);
        assert_eq!((listing(&sub), std::fs::read(&path).unwrap()), before);
        assert_eq!(
            file_uri(Path::new("/a b/c?d#e%.db3")),
            "file:/a%20b/c%3Fd%23e%25.db3?mode=ro&immutable=1"
        );
    }

    #[test]
    fn counting_in_id_ranges_on_several_threads_agrees_with_one_pass() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("b.db3");
        let rows = (PARALLEL_COUNT_ROWS * 3) as usize;
        // Two topics, alternating, timestamps rising with id except where `dip` lies.
        let make = |dip: Option<usize>| -> Vec<(i64, i64, Vec<u8>)> {
            (0..rows)
                .map(|i| {
                    let t = if Some(i) == dip { 5 } else { 1_000 + i as i64 };
                    (1 + (i % 2) as i64, t, vec![0, 1, 0, 0])
                })
                .collect()
        };
        let count = |threads: usize| {
            let conn = open(&path).expect("open");
            let scan = SqliteScan::scan(&path, true).expect("scan");
            let counted =
                count_messages(&path, &conn, &scan.index.topic_ids, 2, threads).expect("count");
            (counted.per_topic, counted.in_id_order, counted.ends)
        };
        db3(&path, false, &make(None));
        let one = count(1);
        assert_eq!(
            one.0[0],
            Some((rows as u64 / 2, 1_000, 1_000 + rows as i64 - 2))
        );
        assert!(one.1);
        assert_eq!(count(3), one);
        assert_eq!(count(2), one);

        // A timestamp that goes back exactly where the second thread's range starts (ids from
        // 1; three threads split at thirds), and one inside a range: both are seen.
        let boundary = rows / 3;
        for dip in [boundary, boundary + 7] {
            std::fs::remove_file(&path).expect("remove");
            db3(&path, false, &make(Some(dip)));
            let one = count(1);
            assert!(!one.1, "dip at {dip}");
            assert_eq!(count(3), one, "dip at {dip}");
        }
    }

    #[test]
    fn tiled_reads_in_row_order_give_every_message_or_ask_to_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let n = 2500i64;
        // Timestamps rising with id (two topics, three rows to a timestamp), then each way of
        // breaking that order: one row far back, a first row late, a last row early, a pair
        // swapped across a tile boundary, and the whole table reversed.
        let sorted: Vec<(i64, i64, Vec<u8>)> = (0..n)
            .map(|i| (1 + i % 2, 100 + i / 3, payload(i as u32)))
            .collect();
        let with = |changes: &[(usize, i64)]| {
            let mut rows = sorted.clone();
            for &(at, t) in changes {
                rows[at].1 = t;
            }
            rows
        };
        let mut reversed = sorted.clone();
        reversed.reverse();
        let datasets = [
            ("in order", sorted.clone(), false),
            ("one row far back", with(&[(1700, 150)]), true),
            ("first row late", with(&[(0, 700)]), true),
            ("last row early", with(&[(2499, 100)]), true),
            (
                "a pair swapped at 400",
                with(&[(899, 401), (900, 399)]),
                true,
            ),
            ("reversed", reversed, true),
        ];
        for (name, rows, out_of_order) in &datasets {
            let path = dir.path().join(format!("{name}.db3"));
            db3(&path, false, rows);
            let mut truth: Vec<(i64, usize)> =
                rows.iter().enumerate().map(|(id, r)| (r.1, id)).collect();
            truth.sort();
            let truth: Vec<(u16, u64, Vec<u8>)> = truth
                .iter()
                .map(|&(t, id)| ((rows[id].0 - 1) as u16, t as u64, rows[id].2.clone()))
                .collect();
            for cuts in [&[][..], &[400], &[150, 400, 401, 700], &[99, 100, 933]] {
                let scan = SqliteScan::scan(&path, false).unwrap();
                assert_eq!(scan.channel_counts, None);
                assert_eq!(scan.message_count, n as u64);
                let index = Arc::new(scan.index);
                assert_eq!(index.order(), RowOrder::Unknown);
                let bounds: Vec<Option<u64>> = std::iter::once(None)
                    .chain(cuts.iter().map(|&c| Some(c)))
                    .chain(std::iter::once(None))
                    .collect();
                let tiles = |tiled: bool| -> Result<Vec<_>, SqliteError> {
                    let mut all = Vec::new();
                    let mut asked = None;
                    for w in bounds.windows(2) {
                        match read(&path, &index, w[0], w[1], tiled) {
                            Ok(got) => all.extend(got),
                            Err(e) => asked = Some(e),
                        }
                    }
                    asked.map_or(Ok(all), Err)
                };
                match tiles(true) {
                    Ok(all) => {
                        assert!(!out_of_order, "{name} {cuts:?}: not caught");
                        assert_eq!(all, truth, "{name} {cuts:?}");
                    }
                    Err(e) => {
                        assert!(out_of_order, "{name} {cuts:?}: {e}");
                        assert!(matches!(e, SqliteError::NotInIdOrder { .. }), "{e}");
                        assert_eq!(index.order(), RowOrder::ByTime, "{name}");
                        assert_eq!(tiles(true).unwrap(), truth, "{name} {cuts:?} again");
                    }
                }
            }
            // Not tiled and not counted: read by time, whatever the order.
            let index = Arc::new(SqliteScan::scan(&path, false).unwrap().index);
            let part: Vec<_> = truth
                .iter()
                .filter(|m| (400..700).contains(&m.1))
                .cloned()
                .collect();
            assert_eq!(read_all(&path, &index, Some(400), Some(700)).unwrap(), part);
        }
    }

    #[test]
    fn a_blob_too_large_to_read_is_reported_after_the_messages_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.db3");
        // 100 rows, timestamps rising; row 60 (id 61) holds 100 kB, past the 20 kB read here.
        let rows: Vec<(i64, i64, Vec<u8>)> = (0..100u32)
            .map(|i| {
                let data = if i == 60 {
                    vec![7u8; 100_000]
                } else {
                    payload(i)
                };
                (1, 1_000 + i64::from(i), data)
            })
            .collect();
        db3(&path, false, &rows);
        // By time (order unknown, not tiled), in checked row order (tiled), and windows that
        // end before the big row or start after it.
        for (tiled, start, end, before) in [
            (false, None, None, Some(60)),
            (true, None, None, Some(60)),
            (false, Some(1_010), None, Some(50)),
            (true, None, Some(1_060), None),
            (false, Some(1_061), None, None),
        ] {
            let index = Arc::new(SqliteScan::scan(&path, false).unwrap().index);
            let mut cursor = SqliteCursor::new(&path, &index, start, end, tiled)
                .unwrap()
                .with_blob_limit(20_000);
            let mut got = 0;
            let outcome = loop {
                match cursor.next(&index.topic_ids, |_| true) {
                    Ok(Some(m)) => {
                        let i = (m.log_time_ns - 1_000) as u32;
                        assert_eq!(cursor.payload(), payload(i), "{tiled} {start:?}");
                        got += 1;
                    }
                    Ok(None) => break None,
                    Err(e) => break Some(e),
                }
            };
            match before {
                Some(n) => {
                    assert_eq!(got, n, "{tiled} {start:?} {end:?}");
                    let e = outcome.expect("the big row is reported");
                    assert!(
                        matches!(
                            e,
                            SqliteError::TooLarge {
                                id: 61,
                                bytes: 100_000,
                                limit: 20_000
                            }
                        ),
                        "{e}"
                    );
                }
                None => assert!(outcome.is_none(), "{tiled} {start:?} {end:?}: {outcome:?}"),
            }
        }
    }
}
