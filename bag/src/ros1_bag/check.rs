//! `bag verify` of a ROS 1 bag: its index section against its data, read with this module's
//! own record and chunk code (see [`check_bag`]).

use std::collections::BTreeMap;
use std::path::Path;

use super::{
    ChunkDamage, OP_MESSAGE_DATA, ROS1_MAGIC, Ros1Error, Ros1Scan, check_records, chunk_data,
    read_index_section, read_top, records,
};
use crate::channel::ChannelSpec;
use crate::scan::Damage;

/// Something a ROS 1 bag says about itself that its data does not bear out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ros1Problem {
    /// The record concerned (for records inside a chunk: the chunk).
    pub(crate) offset: u64,
    /// For records inside a chunk: their offset in the chunk's data.
    pub(crate) offset_in_chunk: Option<u64>,
    /// `BagHeader`, `Chunk`, `ChunkInfo`, `IndexData`, `MessageData`, `file`.
    pub(crate) record: &'static str,
    pub(crate) expected: String,
    pub(crate) found: String,
}

/// A connection and what was found on it.
#[derive(Debug, Default)]
pub(crate) struct CheckedConnection {
    pub(crate) topic: String,
    pub(crate) type_name: String,
    pub(crate) messages: u64,
    /// Log-time range of those messages.
    pub(crate) times: Option<(u64, u64)>,
}

impl CheckedConnection {
    fn new(spec: &ChannelSpec, messages: u64) -> Self {
        CheckedConnection {
            topic: spec.topic.clone(),
            type_name: spec.type_name().to_string(),
            messages,
            times: None,
        }
    }
}

/// What checking a ROS 1 bag's index against its data found ([`check_bag`]).
#[derive(Debug, Default)]
pub(crate) struct Ros1Check {
    /// Chunk records in the file.
    pub(crate) chunks: u64,
    /// Message records found in the chunks that read.
    pub(crate) messages: u64,
    /// Per connection id (a scan's channel id when there is no index section).
    pub(crate) connections: BTreeMap<u32, CheckedConnection>,
    pub(crate) problems: Vec<Ros1Problem>,
    /// Chunks that do not read, with what they cost.
    pub(crate) damaged: Vec<ChunkDamage>,
    /// The file does not end at a record boundary (only found when there is no index section).
    pub(crate) torn: Option<Damage>,
}

impl Ros1Check {
    fn problem(&mut self, offset: u64, record: &'static str, expected: String, found: String) {
        self.problems.push(Ros1Problem {
            offset,
            offset_in_chunk: None,
            record,
            expected,
            found,
        });
    }

    fn count(&mut self, conn: u32, time: u64) {
        self.messages += 1;
        if let Some(c) = self.connections.get_mut(&conn) {
            c.messages += 1;
            c.times = Some(
                c.times
                    .map_or((time, time), |(a, b)| (a.min(time), b.max(time))),
            );
        }
    }
}

/// Checks a ROS 1 bag's index against its data, for `bag verify`: that an index section
/// describes the file ([`read_index_section`]); that every chunk decompresses and its records
/// parse; that each chunk info's per-connection counts and time range are those of the chunk's
/// messages; and that each index data record's entries point at message records of its
/// connection with its times. Without an index section the file is scanned, and only what a
/// scan finds (damaged chunks, a torn end) is reported besides the missing index.
pub(crate) fn check_bag(path: &Path, part_name: &str) -> Result<Ros1Check, Ros1Error> {
    let mut file = crate::layout::open_regular(path)?;
    let size = file.metadata()?.len();
    let mut check = Ros1Check::default();
    let Some(section) = read_index_section(&mut file, size, true) else {
        let scan = Ros1Scan::scan(path, part_name)?;
        check.problem(
            ROS1_MAGIC.len() as u64,
            "BagHeader",
            "an index section (at the header's index_pos) listing every connection and chunk, \
             as a bag is left when its writer closes it"
                .into(),
            "none that describes this file (`rosbag reindex` writes one)".into(),
        );
        check.chunks = scan.index.chunks.len() as u64 + scan.damaged_chunks.len() as u64;
        check.messages = scan.message_count;
        for (local, spec) in &scan.channels {
            let n = scan.channel_counts.get(local).copied().unwrap_or(0);
            check
                .connections
                .insert(u32::from(*local), CheckedConnection::new(spec, n));
        }
        for d in &scan.damaged_chunks {
            check.problem(
                d.offset,
                "Chunk",
                "a chunk that decompresses and whose records parse".into(),
                "one that does not".into(),
            );
        }
        check.damaged = scan.damaged_chunks;
        check.torn = scan.torn;
        return Ok(check);
    };
    for (conn, spec) in &section.connections {
        check
            .connections
            .insert(*conn, CheckedConnection::new(spec, 0));
    }
    check.chunks = section.chunks.len() as u64;
    for listed in &section.chunks {
        let at = listed.place.offset;
        let data = read_top(&mut file, at, size).and_then(|top| chunk_data(&mut file, &top));
        let data = match data.and_then(|d| check_records(&d).map(|()| d)) {
            Ok(data) => data,
            Err(e) => {
                check.problem(
                    at,
                    "Chunk",
                    "a chunk that decompresses and whose records parse".into(),
                    e.to_string(),
                );
                check.damaged.push(listed.place.damage(part_name));
                continue;
            }
        };
        // Offset in the chunk -> (conn, time) of each message record; counts and range.
        let mut at_offset: BTreeMap<u32, (u32, u64)> = BTreeMap::new();
        let mut counts: BTreeMap<u32, u64> = BTreeMap::new();
        let mut range: Option<(u64, u64)> = None;
        for record in records(&data).map_while(Result::ok) {
            if record.op != OP_MESSAGE_DATA {
                continue;
            }
            let (Ok(conn), Ok(time)) = (record.u32_field("conn"), record.time_field("time")) else {
                continue;
            };
            // The record starts 4 bytes (its header length) before its header.
            let start = (record.header.as_ptr() as usize)
                .saturating_sub(data.as_ptr() as usize)
                .saturating_sub(4);
            at_offset.insert(u32::try_from(start).unwrap_or(u32::MAX), (conn, time));
            *counts.entry(conn).or_insert(0) += 1;
            range = Some(range.map_or((time, time), |(a, b)| (a.min(time), b.max(time))));
            if !check.connections.contains_key(&conn) {
                check.problems.push(Ros1Problem {
                    offset: at,
                    offset_in_chunk: Some(start as u64),
                    record: "MessageData",
                    expected: "a connection the index section lists".into(),
                    found: format!("connection {conn}"),
                });
            }
            check.count(conn, time);
        }
        let listed_counts: BTreeMap<u32, u64> = listed
            .counts
            .iter()
            .copied()
            .filter(|(_, n)| *n > 0)
            .collect();
        if listed_counts != counts {
            check.problem(
                at,
                "ChunkInfo",
                format!("messages per connection {listed_counts:?}, as the chunk info says"),
                format!("{counts:?}"),
            );
        }
        let listed_range = Some((listed.place.first_ns, listed.place.last_ns));
        if range.is_some() && range != listed_range {
            check.problem(
                at,
                "ChunkInfo",
                format!("log times {:?}, as the chunk info says", listed_range),
                format!("{range:?}"),
            );
        }
        let mut indexed: BTreeMap<u32, u64> = BTreeMap::new();
        for (conn, entries) in &listed.entries {
            *indexed.entry(*conn).or_insert(0) += entries.len() as u64;
            let wrong = entries
                .iter()
                .find(|(time, offset)| at_offset.get(offset) != Some(&(*conn, *time)));
            if let Some((time, offset)) = wrong {
                check.problems.push(Ros1Problem {
                    offset: at,
                    offset_in_chunk: Some(u64::from(*offset)),
                    record: "IndexData",
                    expected: format!("a message of connection {conn} at time {time}"),
                    found: match at_offset.get(offset) {
                        Some((c, t)) => format!("connection {c} at time {t}"),
                        None => "no message record starting there".into(),
                    },
                });
            }
        }
        if indexed != counts {
            check.problem(
                at,
                "IndexData",
                format!("index entries per connection {counts:?}, one per message"),
                format!("{indexed:?}"),
            );
        }
    }
    Ok(check)
}
