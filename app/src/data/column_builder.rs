//! The one way a topic's messages become columns: [`compile_plan`] turns the topic's schema
//! into a decoding plan, and a [`ColumnBuilder`] decodes each message with it and pushes the
//! values onto one column per leaf, giving [`Columns`]. The loader runs one builder per topic
//! per time window and joins their columns; the live worker runs one per topic and sends its
//! columns to the app piece by piece, which only appends them; the inspector compiles its
//! plans here too.

use std::sync::Arc;

use decode::{LeafKind, Plan, Row, Scalar, SchemaSource, compile};

use crate::data::series::{DATA_NAN, SeriesBuilder};
use crate::data::source::{MessageView, TopicInfo};
use crate::error::Error;

/// Compiles the decoding plan of `info`'s schema.
pub fn compile_plan(info: &TopicInfo) -> Result<Plan, Error> {
    compile(&SchemaSource {
        message_encoding: &info.message_encoding,
        schema_encoding: &info.schema_encoding,
        schema_name: &info.schema_name,
        schema_data: &info.schema_data,
    })
    .map_err(|source| Error::Schema {
        type_name: info.type_name.clone(),
        source,
    })
}

/// A topic's messages decoded into columns: one time column, one value column per leaf the
/// plan has learned, all as long as the time column.
#[derive(Debug, Clone, Default)]
pub struct Columns {
    /// Log time of each message, in the order they came.
    pub times_ns: Vec<u64>,
    /// Publish-to-log latency of each message that carried a publish time.
    pub latencies_ns: Vec<i64>,
    /// The leaves (path, kind), by slot: `values[slot]` is the column of `leaves[slot]`.
    pub leaves: Vec<(String, LeafKind)>,
    /// One column per leaf; NaN where a message did not carry the leaf or did not decode.
    pub values: Vec<SeriesBuilder>,
    /// Messages that came from a torn part.
    pub torn_messages: u64,
    /// Messages whose list tail was not flattened (too long).
    pub clipped_messages: u64,
    /// Messages that failed to decode.
    pub decode_errors: u64,
    /// The first of those failures.
    pub first_error: Option<Arc<Error>>,
}

impl Columns {
    /// Messages held.
    pub fn len(&self) -> usize {
        self.times_ns.len()
    }

    /// True when no message is held.
    pub fn is_empty(&self) -> bool {
        self.times_ns.is_empty()
    }
}

/// Decodes one topic's messages into [`Columns`]. The plan is compiled at the first message,
/// so a builder that sees none costs nothing.
#[derive(Debug, Default)]
pub struct ColumnBuilder {
    plan: Option<Result<Plan, Arc<Error>>>,
    columns: Columns,
    /// Messages expected (room reserved in each column up front).
    expected: usize,
}

impl ColumnBuilder {
    /// A builder with room for `expected` messages in each column.
    pub fn with_capacity(expected: usize) -> Self {
        ColumnBuilder {
            plan: None,
            columns: Columns {
                times_ns: Vec::with_capacity(expected),
                latencies_ns: Vec::with_capacity(expected),
                ..Columns::default()
            },
            expected,
        }
    }

    /// Decodes `m`, a message of the topic `info` describes, into a new row of every column
    /// (`row` is scratch space reused across messages). A leaf first seen now gets a column
    /// that is absent for every earlier message; a message that does not decode is absent
    /// from every column and counted.
    pub fn push(&mut self, info: &TopicInfo, m: &MessageView<'_>, row: &mut Row) {
        let c = &mut self.columns;
        let n = c.times_ns.len();
        c.times_ns.push(m.log_time_ns);
        if let Some(publish_ns) = m.publish_time_ns {
            c.latencies_ns
                .push((i128::from(m.log_time_ns) - i128::from(publish_ns)) as i64);
        }
        c.torn_messages += u64::from(m.from_torn_part);
        let plan = self
            .plan
            .get_or_insert_with(|| compile_plan(info).map_err(Arc::new));
        match plan {
            Ok(plan) => match plan.decode(m.data, row) {
                Ok(decoded) => {
                    c.clipped_messages += u64::from(decoded.clipped);
                    for leaf in plan.leaves().get(c.values.len()..).unwrap_or(&[]) {
                        c.leaves.push((leaf.path.clone(), leaf.kind));
                        c.values
                            .push(SeriesBuilder::with_absent_and_capacity(n, self.expected));
                    }
                    // The row has a cell for every leaf of the plan, so this fills every column.
                    // A NaN the message carries is kept apart from an absent leaf.
                    // 64-bit integers stay exact.
                    for (slot, column) in c.values.iter_mut().enumerate() {
                        match row.get(slot) {
                            Some(Scalar::Float(v)) if v.is_nan() => column.push(DATA_NAN),
                            Some(Scalar::Float(v)) => column.push(v),
                            Some(Scalar::Int(v)) => column.push_int(i128::from(v)),
                            Some(Scalar::UInt(v)) => column.push_int(i128::from(v)),
                            None => column.push(f64::NAN),
                        }
                    }
                    return;
                }
                Err(e) => {
                    if c.first_error.is_none() {
                        c.first_error = Some(Arc::new(Error::Decode(e)));
                    }
                }
            },
            Err(e) => {
                if c.first_error.is_none() {
                    c.first_error = Some(Arc::clone(e));
                }
            }
        }
        c.decode_errors += 1;
        for column in &mut c.values {
            column.push(f64::NAN);
        }
    }

    /// Messages decoded since the builder was made or last taken.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// True when nothing was decoded since the builder was made or last taken.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Takes the latencies recorded so far, leaving the messages' columns.
    pub fn drain_latencies(&mut self) -> std::vec::Drain<'_, i64> {
        self.columns.latencies_ns.drain(..)
    }

    /// Forgets the messages logged before `t_ns` (the live capture's ring evicted them
    /// before they reached the app); returns how many. Latencies are left alone: they are
    /// not one per message.
    pub fn drop_before(&mut self, t_ns: u64) -> usize {
        let c = &mut self.columns;
        let k = c.times_ns.partition_point(|&t| t < t_ns);
        if k > 0 {
            c.times_ns.drain(..k);
            for column in &mut c.values {
                column.drain_front(k);
            }
        }
        k
    }

    /// The columns so far; the builder goes on from empty columns with the same plan (every
    /// leaf it knows gets a column again at the next message).
    pub fn take(&mut self) -> Columns {
        std::mem::take(&mut self.columns)
    }

    /// The columns, the builder done.
    pub fn finish(self) -> Columns {
        self.columns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine() -> TopicInfo {
        let info = schemas::by_name("EngineRpm").expect("registered");
        TopicInfo {
            topic: "car/engine".into(),
            type_name: "EngineRpm".into(),
            message_encoding: "capnproto".into(),
            schema_encoding: "capnproto".into(),
            schema_name: info.capnp_name.into(),
            schema_data: info.descriptor.to_vec(),
            message_count: 0,
        }
    }

    fn message(t_ns: u64, publish_time_ns: Option<u64>, data: &[u8]) -> MessageView<'_> {
        MessageView {
            topic: 0,
            log_time_ns: t_ns,
            publish_time_ns,
            data,
            from_torn_part: false,
        }
    }

    #[test]
    fn decodes_into_one_column_per_leaf_and_counts_what_does_not_decode() {
        let info = engine();
        let mut builder = ColumnBuilder::with_capacity(4);
        let mut row = Row::new();
        let good = schemas::sample::encode("EngineRpm", 0.5, 3).expect("encode");
        builder.push(&info, &message(10, Some(7), &good), &mut row);
        builder.push(&info, &message(20, None, b"not capnp"), &mut row);
        builder.push(&info, &message(30, Some(30), &good), &mut row);
        let columns = builder.finish();
        assert_eq!(columns.times_ns, [10, 20, 30]);
        assert_eq!(
            columns.latencies_ns,
            [3, 0],
            "the unstamped message has none"
        );
        assert_eq!(columns.decode_errors, 1);
        assert!(columns.first_error.is_some());
        assert_eq!(columns.leaves.len(), columns.values.len());
        let rpm = columns
            .leaves
            .iter()
            .position(|(path, _)| path == "rpm")
            .and_then(|slot| columns.values.get(slot))
            .expect("an rpm column")
            .clone()
            .finish();
        assert_eq!(rpm.len(), 3);
        assert!(
            rpm.value(1).is_some_and(f64::is_nan),
            "absent where it failed"
        );
        assert_eq!(rpm.value(0), rpm.value(2));
    }

    #[test]
    fn a_schema_that_does_not_compile_fails_every_message_with_its_reason() {
        let info = TopicInfo {
            schema_data: b"garbage".to_vec(),
            ..engine()
        };
        let mut builder = ColumnBuilder::default();
        let mut row = Row::new();
        for t in 0..3 {
            builder.push(&info, &message(t, Some(t), b""), &mut row);
        }
        let columns = builder.take();
        assert_eq!((columns.len(), columns.decode_errors), (3, 3));
        assert!(columns.values.is_empty());
        let reason = columns.first_error.map(|e| e.report()).unwrap_or_default();
        assert!(reason.starts_with("cannot decode EngineRpm: "), "{reason}");
    }

    #[test]
    fn dropping_the_evicted_messages_keeps_the_columns_aligned() {
        let info = engine();
        let mut builder = ColumnBuilder::default();
        let mut row = Row::new();
        for seq in 0..10u64 {
            let bytes = schemas::sample::encode("EngineRpm", seq as f64, seq).expect("encode");
            builder.push(
                &info,
                &message(seq * 100, Some(seq * 100), &bytes),
                &mut row,
            );
        }
        assert_eq!(builder.drop_before(450), 5);
        assert_eq!(builder.drain_latencies().count(), 10);
        let columns = builder.take();
        assert_eq!(columns.times_ns, [500, 600, 700, 800, 900]);
        assert!(columns.values.iter().all(|c| c.len() == 5));
        assert!(builder.is_empty());
    }
}
