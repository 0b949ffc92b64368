//! A fast path for ROS messages of fixed shape, in ROS 1 serialization or little-endian CDR
//! (XCDR1, ROS 2): every field a primitive, a time, a string (skipped), a fixed array or a
//! nested message of the same kind; no variable-length array except of strings. Most telemetry
//! (Imu, PoseStamped, Odometry, ...) has this shape.
//!
//! After the general walk ([`crate::cdr`]) has registered the leaves, a [`Program`] reads them
//! as one straight line of bounds-checked little-endian loads into known slots (in CDR, each
//! aligned to its size from the end of the encapsulation header, which a string before it
//! moves). A message it cannot read that way (too short, a string past the end, bytes left
//! over in ROS 1, big-endian CDR) goes to the general walk, which reports the error: the
//! program is only ever a shortcut to the general walk's result, as `capnp_flat.rs` is for
//! Cap'n Proto.

use crate::capnp_flat::NotFlat;
use crate::leaves::{Branch, Limits};
use crate::ros2msg::{Array, Base, MsgSet, Prim};
use crate::row::LeafSink;
use crate::value::Scalar;

/// Most operations one program may hold (fixed arrays of messages multiply).
const MAX_OPS: usize = 1 << 16;

#[derive(Debug, Clone, Copy)]
enum Op {
    /// `count` primitives of one type into consecutive slots from the first (a fixed array,
    /// or fields of one type one after another).
    Prims(Prim, u32, u32),
    /// A ROS 1 `time`: both parts, then the total in nanoseconds.
    Time([Prim; 2], [u32; 3]),
    /// This many strings, skipped.
    Strs(u32),
    /// A length-prefixed sequence of strings, skipped.
    StrSeq,
}

/// The serialization a [`Program`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// ROS 1: packed, no header; every byte read.
    Ros1,
    /// XCDR1 little endian: a 4-byte encapsulation header `00 01`, values aligned to their
    /// size from its end; padding may follow the last value.
    CdrLe,
}

/// The compiled reads of a fixed-shape ROS message; see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    ops: Vec<Op>,
    framing: Framing,
}

/// Bytes of the CDR encapsulation header.
const CDR_HEADER: usize = 4;

impl Program {
    /// The program for `set` in `framing`, with the slots the general walk registered under
    /// `root`.
    pub(crate) fn build(
        set: &MsgSet,
        root: &Branch,
        limits: &Limits,
        framing: Framing,
    ) -> Result<Self, NotFlat> {
        let mut ops = Vec::new();
        emit(set, set.root, root, limits, &mut ops, 0, framing)?;
        Ok(Self { ops, framing })
    }

    /// Reads `bytes` into `row`; `false` (row partly written) when the general walk must.
    pub(crate) fn decode<S: LeafSink>(&self, bytes: &[u8], row: &mut S) -> bool {
        match self.framing {
            Framing::Ros1 => {
                let mut cur = Cursor { b: bytes, pos: 0 };
                self.run::<false, S>(&mut cur, row) && cur.pos == bytes.len()
            }
            Framing::CdrLe => {
                if bytes.get(..2) != Some(&[0, 1]) || bytes.len() < CDR_HEADER {
                    return false;
                }
                // Alignment counts from the end of the header: read the body from 0.
                let mut cur = Cursor {
                    b: &bytes[CDR_HEADER..],
                    pos: 0,
                };
                self.run::<true, S>(&mut cur, row)
            }
        }
    }

    fn run<const CDR: bool, S: LeafSink>(&self, cur: &mut Cursor<'_>, row: &mut S) -> bool {
        for op in &self.ops {
            match *op {
                Op::Prims(Prim::F64, first, count) => {
                    // The common case, one type known for the whole run.
                    for slot in first..first.saturating_add(count) {
                        let Some(b) = cur.take::<CDR, 8>() else {
                            return false;
                        };
                        row.put(slot, Scalar::Float(f64::from_le_bytes(b)));
                    }
                }
                Op::Prims(p, first, count) => {
                    for slot in first..first.saturating_add(count) {
                        let Some(v) = cur.load::<CDR>(p) else {
                            return false;
                        };
                        row.put(slot, v);
                    }
                }
                Op::Time([sp, np], [s, n, total]) => {
                    let (Some(sec), Some(nsec)) = (cur.load::<CDR>(sp), cur.load::<CDR>(np)) else {
                        return false;
                    };
                    row.put(s, sec);
                    row.put(n, nsec);
                    row.put(total, Scalar::Int(crate::cdr::time_ns(sec, nsec)));
                }
                Op::Strs(n) => {
                    for _ in 0..n {
                        if !cur.skip_string::<CDR>() {
                            return false;
                        }
                    }
                }
                Op::StrSeq => {
                    let Some(n) = cur.take::<CDR, 4>().map(u32::from_le_bytes) else {
                        return false;
                    };
                    for _ in 0..n {
                        if !cur.skip_string::<CDR>() {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }
}

/// Where a program reads.
struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    /// `N` bytes, aligned to `N` first in CDR.
    #[inline(always)]
    fn take<const CDR: bool, const N: usize>(&mut self) -> Option<[u8; N]> {
        if CDR {
            let rem = self.pos % N;
            if rem != 0 {
                self.pos = self.pos.checked_add(N - rem)?;
            }
        }
        let end = self.pos.checked_add(N)?;
        let v = self.b.get(self.pos..end)?.try_into().ok()?;
        self.pos = end;
        Some(v)
    }

    #[inline(always)]
    fn load<const CDR: bool>(&mut self, p: Prim) -> Option<Scalar> {
        Some(match p {
            Prim::Bool => Scalar::UInt(u64::from(self.take::<CDR, 1>()?[0] != 0)),
            Prim::U8 => Scalar::UInt(u64::from(self.take::<CDR, 1>()?[0])),
            Prim::I8 => Scalar::Int(i64::from(self.take::<CDR, 1>()?[0] as i8)),
            Prim::U16 => Scalar::UInt(u64::from(u16::from_le_bytes(self.take::<CDR, 2>()?))),
            Prim::I16 => Scalar::Int(i64::from(i16::from_le_bytes(self.take::<CDR, 2>()?))),
            Prim::U32 => Scalar::UInt(u64::from(u32::from_le_bytes(self.take::<CDR, 4>()?))),
            Prim::I32 => Scalar::Int(i64::from(i32::from_le_bytes(self.take::<CDR, 4>()?))),
            Prim::U64 => Scalar::UInt(u64::from_le_bytes(self.take::<CDR, 8>()?)),
            Prim::I64 => Scalar::Int(i64::from_le_bytes(self.take::<CDR, 8>()?)),
            Prim::F32 => Scalar::Float(f64::from(f32::from_le_bytes(self.take::<CDR, 4>()?))),
            Prim::F64 => Scalar::Float(f64::from_le_bytes(self.take::<CDR, 8>()?)),
        })
    }

    /// A length (in CDR: aligned, counting the NUL) and that many bytes.
    #[inline]
    fn skip_string<const CDR: bool>(&mut self) -> bool {
        let Some(n) = self.take::<CDR, 4>().map(u32::from_le_bytes) else {
            return false;
        };
        match self.pos.checked_add(n as usize) {
            Some(end) if end <= self.b.len() => {
                self.pos = end;
                true
            }
            _ => false,
        }
    }
}

fn push(ops: &mut Vec<Op>, op: Op) -> Result<(), NotFlat> {
    if ops.len() >= MAX_OPS {
        return Err(NotFlat::Never);
    }
    ops.push(op);
    Ok(())
}

/// Appends a read of one `p` into `slot`, as part of the last run when that run is of the same
/// type and ends at the slot before.
fn push_prim(ops: &mut Vec<Op>, p: Prim, slot: u32) -> Result<(), NotFlat> {
    if let Some(Op::Prims(q, first, count)) = ops.last_mut()
        && *q == p
        && first.checked_add(*count) == Some(slot)
    {
        *count += 1;
        return Ok(());
    }
    push(ops, Op::Prims(p, slot, 1))
}

fn emit(
    set: &MsgSet,
    t: usize,
    br: &Branch,
    limits: &Limits,
    ops: &mut Vec<Op>,
    depth: u32,
    framing: Framing,
) -> Result<(), NotFlat> {
    if depth > limits.max_depth {
        return Err(NotFlat::Never);
    }
    let ty = set.types.get(t).ok_or(NotFlat::Never)?;
    // An empty struct is one byte in CDR (but none at the very end); wide strings count
    // 2-byte units: the general walk's.
    let cdr = framing == Framing::CdrLe;
    if cdr
        && (ty.fields.is_empty()
            || ty
                .fields
                .iter()
                .any(|f| matches!(f.base, Base::Str { wide: true })))
    {
        return Err(NotFlat::Never);
    }
    let slot = |b: &Branch, i: usize| b.leaf_slot(i).ok_or(NotFlat::NotYet);
    if ty.time.is_some()
        && let [a, b] = ty.fields.as_slice()
        && let (Base::Prim(sp), Base::Prim(np)) = (&a.base, &b.base)
    {
        let slots = [slot(br, 0)?, slot(br, 1)?, slot(br, 2)?];
        return push(ops, Op::Time([*sp, *np], slots));
    }
    for (i, f) in ty.fields.iter().enumerate() {
        match (f.array, &f.base) {
            (Array::One, Base::Prim(p)) => push_prim(ops, *p, slot(br, i)?)?,
            (Array::One, Base::Str { .. }) => push(ops, Op::Strs(1))?,
            (Array::One, Base::Msg(m)) => {
                let child = br.child(i).ok_or(NotFlat::NotYet)?;
                emit(set, *m, child, limits, ops, depth + 1, framing)?;
            }
            (Array::Fixed(n), _) if n > limits.max_list_elements => return Err(NotFlat::Never),
            (Array::Fixed(n), Base::Str { .. }) => {
                push(ops, Op::Strs(u32::try_from(n).map_err(|_| NotFlat::Never)?))?
            }
            (Array::Fixed(0), _) => {}
            (Array::Fixed(n), Base::Prim(p)) => {
                let child = br.child(i).ok_or(NotFlat::NotYet)?;
                for j in 0..n {
                    push_prim(ops, *p, slot(child, j)?)?;
                }
            }
            (Array::Fixed(n), Base::Msg(m)) => {
                let child = br.child(i).ok_or(NotFlat::NotYet)?;
                for j in 0..n {
                    let e = child.child(j).ok_or(NotFlat::NotYet)?;
                    emit(set, *m, e, limits, ops, depth + 1, framing)?;
                }
            }
            (Array::Seq, Base::Str { .. }) => push(ops, Op::StrSeq)?,
            // Variable-length numeric arrays: their slots depend on the message.
            (Array::Seq, _) => return Err(NotFlat::Never),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use crate::{Plan, Row, SchemaSource, compile};

    const IMU: &str = "Header header\ngeometry_msgs/Quaternion orientation\nfloat64[9] orientation_covariance\nbyte b\nchar c\nduration d\nstring[] tags\nstring[2] pair\nbool ok\n===\nMSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n===\nMSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w\n";

    fn plan() -> Plan {
        compile(&SchemaSource {
            message_encoding: "ros1",
            schema_encoding: "ros1msg",
            schema_name: "sensor_msgs/Imu",
            schema_data: IMU.as_bytes(),
        })
        .expect("compiles")
    }

    fn valid() -> Vec<u8> {
        let mut m = Vec::new();
        m.extend(7u32.to_le_bytes());
        m.extend(1_700_000_000u32.to_le_bytes());
        m.extend(5u32.to_le_bytes());
        m.extend(3u32.to_le_bytes());
        m.extend(b"imu");
        for i in 0..13 {
            m.extend((f64::from(i) * 0.5).to_le_bytes());
        }
        m.extend([0xfe, 0xfe]);
        m.extend((-1i32).to_le_bytes());
        m.extend(2i32.to_le_bytes());
        m.extend(1u32.to_le_bytes());
        m.extend(1u32.to_le_bytes());
        m.extend(b"a");
        m.extend(0u32.to_le_bytes());
        m.extend(2u32.to_le_bytes());
        m.extend(b"bc");
        m.push(1);
        m
    }

    fn rows(plan: &mut Plan, bytes: &[u8]) -> Option<Vec<(usize, crate::Scalar)>> {
        let mut row = Row::new();
        plan.decode(bytes, &mut row).ok()?;
        Some(row.present().collect())
    }

    /// The row's leaves with floats as their bits: a NaN the bytes spell must equal itself.
    fn bits(rows: Option<Vec<(usize, crate::Scalar)>>) -> Option<Vec<(usize, char, u64)>> {
        use crate::Scalar;
        Some(
            rows?
                .into_iter()
                .map(|(i, s)| match s {
                    Scalar::Int(v) => (i, 'i', v as u64),
                    Scalar::UInt(v) => (i, 'u', v),
                    Scalar::Float(v) => (i, 'f', v.to_bits()),
                })
                .collect(),
        )
    }

    /// `seed` with bytes overwritten at `edits`, `cut` bytes cut from its end and `extra`
    /// appended.
    fn damaged(
        mut bytes: Vec<u8>,
        edits: &[(prop::sample::Index, u8)],
        cut: usize,
        extra: &[u8],
    ) -> Vec<u8> {
        for (at, v) in edits {
            let i = at.index(bytes.len());
            bytes[i] = *v;
        }
        bytes.truncate(bytes.len().saturating_sub(cut));
        bytes.extend(extra);
        bytes
    }

    #[test]
    fn the_shortcut_is_taken_once_leaves_are_known() {
        let mut p = plan();
        assert!(rows(&mut p, &valid()).is_some());
        assert!(p.takes_shortcut());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        /// The shortcut gives exactly the general walk's row (or sends the message to it).
        #[test]
        fn shortcut_equals_general_walk(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
            cut in 0usize..8,
            extra in proptest::collection::vec(any::<u8>(), 0..3),
        ) {
            let mut fast = plan();
            let mut slow = plan().without_shortcut();
            let seed = valid();
            prop_assert!(rows(&mut fast, &seed).is_some());
            prop_assert!(rows(&mut slow, &seed).is_some());
            let bytes = damaged(seed, &edits, cut, &extra);
            prop_assert_eq!(bits(rows(&mut fast, &bytes)), bits(rows(&mut slow, &bytes)));
        }
    }

    const IMU_ROS2: &str = "std_msgs/Header header\ngeometry_msgs/Quaternion orientation\nfloat64[9] orientation_covariance\nint8 b\nuint16 s\nbuiltin_interfaces/Duration d\nstring[] tags\nstring[2] pair\nbool ok\nfloat32 f\n================================================================================\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n================================================================================\nMSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w\n";

    fn plan_cdr() -> Plan {
        compile(&SchemaSource {
            message_encoding: "cdr",
            schema_encoding: "ros2msg",
            schema_name: "sensor_msgs/msg/Imu",
            schema_data: IMU_ROS2.as_bytes(),
        })
        .expect("compiles")
    }

    /// Little-endian CDR: values aligned to their size from the end of the 4-byte header.
    struct Cdr(Vec<u8>);

    impl Cdr {
        fn put<const N: usize>(&mut self, b: [u8; N]) {
            while !(self.0.len() - 4).is_multiple_of(N) {
                self.0.push(0xaa);
            }
            self.0.extend(b);
        }

        fn string(&mut self, s: &str) {
            self.put((s.len() as u32 + 1).to_le_bytes());
            self.0.extend(s.as_bytes());
            self.0.push(0);
        }
    }

    /// An Imu-like message whose frame id is `frame` (its length moves every later value's
    /// alignment), and `padding` bytes after the last value.
    fn valid_cdr(frame: &str, padding: usize) -> Vec<u8> {
        let mut m = Cdr(vec![0, 1, 0, 0]);
        m.put(1_700_000_000i32.to_le_bytes());
        m.put(5u32.to_le_bytes());
        m.string(frame);
        for i in 0..13 {
            m.put((f64::from(i) * 0.5).to_le_bytes());
        }
        m.put((-2i8).to_le_bytes());
        m.put(513u16.to_le_bytes());
        m.put((-1i32).to_le_bytes());
        m.put(2u32.to_le_bytes());
        m.put(1u32.to_le_bytes());
        m.string("a");
        m.string("b");
        m.string("cd");
        m.put([1u8]);
        m.put(1.5f32.to_le_bytes());
        m.0.extend(std::iter::repeat_n(0, padding));
        m.0
    }

    #[test]
    fn cdr_takes_the_shortcut_with_every_alignment_a_string_can_leave() {
        for frame in ["", "i", "im", "imu", "imu0"] {
            let mut fast = plan_cdr();
            let mut slow = plan_cdr().without_shortcut();
            let bytes = valid_cdr(frame, 0);
            let first = rows(&mut fast, &bytes);
            assert!(first.is_some(), "{frame:?}");
            assert!(fast.takes_shortcut(), "{frame:?}");
            for padding in 0..4 {
                let bytes = valid_cdr(frame, padding);
                let got = bits(rows(&mut fast, &bytes));
                assert_eq!(got, bits(rows(&mut slow, &bytes)), "{frame:?} +{padding}");
                // stamp (3), orientation (4), covariance (9), b, s, d (3), ok, f.
                assert_eq!(got.map(|r| r.len()), Some(3 + 4 + 9 + 1 + 1 + 3 + 1 + 1));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        /// In CDR too, the shortcut gives exactly the general walk's row.
        #[test]
        fn cdr_shortcut_equals_general_walk(
            frame in "[a-z]{0,5}",
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
            cut in 0usize..8,
            extra in proptest::collection::vec(any::<u8>(), 0..5),
        ) {
            let mut fast = plan_cdr();
            let mut slow = plan_cdr().without_shortcut();
            let seed = valid_cdr(&frame, 0);
            prop_assert!(rows(&mut fast, &seed).is_some());
            prop_assert!(rows(&mut slow, &seed).is_some());
            let bytes = damaged(seed, &edits, cut, &extra);
            prop_assert_eq!(bits(rows(&mut fast, &bytes)), bits(rows(&mut slow, &bytes)));
        }
    }
}
