//! The one way a topic's messages become columns: [`compile_plan`] turns the topic's schema
//! into a decoding plan, and a [`ColumnBuilder`] decodes each message with it and pushes the
//! values onto one column per leaf, giving [`Columns`]. The loader runs one builder per topic
//! per time window and joins their columns; the live worker runs one per topic and sends its
//! columns to the app piece by piece, which only appends them; the inspector compiles its
//! plans here too.

use std::sync::Arc;

use decode::{LeafKind, LeafSink, Plan, Row, Scalar, SchemaSource, compile};

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

/// A column for every leaf `plan` knows that `c` has none for yet, absent for the `n`
/// messages before.
fn add_columns(plan: &Plan, c: &mut Columns, n: usize, expected: usize) {
    for leaf in plan.leaves().get(c.values.len()..).unwrap_or(&[]) {
        c.leaves.push((leaf.path.clone(), leaf.kind));
        c.values
            .push(SeriesBuilder::with_absent_and_capacity(n, expected));
    }
}

/// Appends one decoded value to its column: a NaN the message carries is kept apart from an
/// absent leaf, and 64-bit integers stay exact.
#[inline(always)]
fn push_scalar(column: &mut SeriesBuilder, v: Scalar) {
    match v {
        Scalar::Float(v) if v.is_nan() => column.push(DATA_NAN),
        Scalar::Float(v) => column.push(v),
        Scalar::Int(v) => column.push_i64(v),
        Scalar::UInt(v) => column.push_u64(v),
    }
}

/// A plan's shortcut writing straight into a message's columns, one per slot.
struct ColumnSink<'a> {
    columns: &'a mut [SeriesBuilder],
    /// Values put (each slot is put at most once a message): all of them when this is the
    /// number of columns.
    puts: usize,
}

impl LeafSink for ColumnSink<'_> {
    #[inline(always)]
    fn put(&mut self, slot: u32, value: Scalar) {
        if let Some(column) = self.columns.get_mut(slot as usize) {
            push_scalar(column, value);
            self.puts += 1;
        }
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
            Ok(plan) => {
                // A plan's shortcut (fixed-shape messages) puts values straight into the
                // columns; what it cannot read goes the general way, through the row.
                add_columns(plan, c, n, self.expected);
                let mut sink = ColumnSink {
                    columns: &mut c.values,
                    puts: 0,
                };
                match plan.decode_shortcut(m.data, &mut sink) {
                    Some(true) => {
                        // A leaf this message lacks (another union arm) is absent.
                        if sink.puts < c.values.len() {
                            for column in c.values.iter_mut().filter(|col| col.len() == n) {
                                column.push(f64::NAN);
                            }
                        }
                        return;
                    }
                    Some(false) => c.values.iter_mut().for_each(|col| col.truncate(n)),
                    None => {}
                }
                match plan.walk(m.data, row) {
                    Ok(decoded) => {
                        c.clipped_messages += u64::from(decoded.clipped);
                        add_columns(plan, c, n, self.expected);
                        // The row has a cell for every leaf of the plan, so this fills every
                        // column.
                        for (slot, column) in c.values.iter_mut().enumerate() {
                            match row.get(slot) {
                                Some(v) => push_scalar(column, v),
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
                }
            }
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
            message_count: Some(0),
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

    /// Plain CDR of the `Probe` schema below, little or big endian, values aligned to their
    /// size from the end of the 4-byte header.
    fn probe(little: bool, name: &str, x: f64, y: f32, big: i64, huge: u64) -> Vec<u8> {
        let mut b = vec![0, u8::from(little), 0, 0];
        let put = |b: &mut Vec<u8>, le: &[u8], be: &[u8]| {
            while !(b.len() - 4).is_multiple_of(le.len()) {
                b.push(0);
            }
            b.extend_from_slice(if little { le } else { be });
        };
        put(&mut b, &7i32.to_le_bytes(), &7i32.to_be_bytes());
        put(&mut b, &9u32.to_le_bytes(), &9u32.to_be_bytes());
        let len = name.len() as u32 + 1;
        put(&mut b, &len.to_le_bytes(), &len.to_be_bytes());
        b.extend_from_slice(name.as_bytes());
        b.push(0);
        put(&mut b, &x.to_le_bytes(), &x.to_be_bytes());
        put(&mut b, &y.to_le_bytes(), &y.to_be_bytes());
        put(&mut b, &big.to_le_bytes(), &big.to_be_bytes());
        put(&mut b, &huge.to_le_bytes(), &huge.to_be_bytes());
        b.extend([1, 0xff, 0, 1]);
        b
    }

    #[test]
    fn the_shortcut_fills_the_columns_the_general_walk_would() {
        let info = TopicInfo {
            topic: "probe".into(),
            type_name: "test_msgs/msg/Probe".into(),
            message_encoding: "cdr".into(),
            schema_encoding: "ros2msg".into(),
            schema_name: "test_msgs/msg/Probe".into(),
            schema_data: b"builtin_interfaces/Time stamp\nstring name\nfloat64 x\nfloat32 y\n\
                int64 big\nuint64 huge\nbool ok\nint8[3] trio\n\
                ================================================================================\n\
                MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n"
                .to_vec(),
            message_count: Some(0),
        };
        let good = probe(true, "a", 0.1, 0.5, i64::MIN, u64::MAX);
        let messages = [
            good.clone(),
            probe(true, "a longer name", -1e-300, -0.0, (1 << 53) + 1, 1 << 53),
            // Cut short: the shortcut stops midway, the general walk fails, all absent.
            good.get(..20).unwrap_or(&[]).to_vec(),
            // Big endian: the shortcut declines, the general walk reads it.
            probe(false, "be", 2.5, 1e-3, -5, 12_345_678_901_234_567_890),
            probe(true, "", f64::NAN, f32::INFINITY, 0, 0),
            good,
        ];
        // The type takes the shortcut once the general walk has seen it.
        let mut plan = compile_plan(&info).expect("plan");
        let mut row = Row::new();
        plan.decode(&messages[0], &mut row).expect("decodes");
        assert_eq!(plan.decode_shortcut(&messages[1], &mut row), Some(true));
        assert_eq!(plan.decode_shortcut(&messages[3], &mut row), Some(false));

        let columns = columns_match_the_walk(&info, &messages);
        assert_eq!(columns.decode_errors, 1);
        assert_eq!(columns.leaves.len(), 11, "{:?}", columns.leaves);
    }

    /// Builds `messages`' columns and checks every value against a plan that walks (one
    /// that has seen nothing); returns the columns.
    fn columns_match_the_walk(info: &TopicInfo, messages: &[Vec<u8>]) -> Columns {
        let mut row = Row::new();
        let mut builder = ColumnBuilder::default();
        for (t, m) in messages.iter().enumerate() {
            builder.push(info, &message(t as u64, None, m), &mut row);
        }
        let columns = builder.finish();
        let series: Vec<(String, crate::data::series::Series)> = columns
            .leaves
            .iter()
            .zip(columns.values.clone())
            .map(|((path, _), col)| (path.clone(), col.finish()))
            .collect();
        for (i, m) in messages.iter().enumerate() {
            let mut walk = compile_plan(info).expect("plan");
            let decoded = walk.decode(m, &mut row).is_ok();
            for (path, s) in &series {
                let want = walk.slot(path).filter(|_| decoded).and_then(|k| row.get(k));
                let got = s.value(i).expect("as long as the messages");
                match want {
                    None => assert!(crate::data::series::is_absent(got), "{path} {i}: {got}"),
                    Some(Scalar::Float(v)) => {
                        let v = if v.is_nan() { DATA_NAN } else { v };
                        assert_eq!(got.to_bits(), v.to_bits(), "{path} {i}");
                    }
                    Some(Scalar::Int(v)) => {
                        assert_eq!(s.exact(i), Some(i128::from(v)), "{path} {i}")
                    }
                    Some(Scalar::UInt(v)) => {
                        assert_eq!(s.exact(i), Some(i128::from(v)), "{path} {i}")
                    }
                }
            }
        }
        columns
    }

    #[test]
    fn union_arms_the_shortcut_skips_are_absent_as_the_walk_says() {
        let registry = schemas::by_name("DriverInputs").expect("registered");
        let info = TopicInfo {
            topic: "car/driver".into(),
            type_name: "DriverInputs".into(),
            schema_name: registry.capnp_name.into(),
            schema_data: registry.descriptor.to_vec(),
            ..engine()
        };
        // Manual, cruise and autonomous arms, and back.
        let messages: Vec<Vec<u8>> = [0.0, 5.0, 31.0, 35.0, 61.0, 65.0, 1.0, 32.0]
            .iter()
            .enumerate()
            .map(|(seq, &t)| {
                schemas::sample::encode("DriverInputs", t, seq as u64).expect("encode")
            })
            .collect();
        let mut plan = compile_plan(&info).expect("plan");
        let mut row = Row::new();
        plan.decode(&messages[0], &mut row).expect("decodes");
        assert_eq!(plan.decode_shortcut(&messages[1], &mut row), Some(true));
        let columns = columns_match_the_walk(&info, &messages);
        assert_eq!(columns.decode_errors, 0);
        let absent = |path: &str| {
            let slot = columns.leaves.iter().position(|(p, _)| p == path);
            let column = slot.and_then(|k| columns.values.get(k)).cloned();
            let s = column.expect(path).finish();
            (0..s.len())
                .filter(|&i| s.value(i).is_some_and(crate::data::series::is_absent))
                .count()
        };
        assert_eq!(
            absent("mode.cruise"),
            5,
            "set only in the three cruise messages"
        );
    }
}
