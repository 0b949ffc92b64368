//! A fast path for ROS 1 messages of fixed shape: every field a primitive, a `time`, a string
//! (skipped), a fixed array or a nested message of the same kind; no variable-length array
//! except of strings. Most ROS 1 telemetry (Imu, PoseStamped, Odometry, ...) has this shape.
//!
//! After the general walk ([`crate::cdr`] with ROS 1 framing) has registered the leaves, a
//! [`Program`] reads them as one straight line of bounds-checked little-endian loads into known
//! slots. A message it cannot read that way (too short, a string past the end, bytes left over)
//! goes to the general walk, which reports the error: the program is only ever a shortcut to the
//! general walk's result, as `capnp_flat.rs` is for Cap'n Proto.

use crate::capnp_flat::NotFlat;
use crate::leaves::{Branch, Limits};
use crate::ros2msg::{Array, Base, MsgSet, Prim};
use crate::row::Row;
use crate::value::Scalar;

/// Most operations one program may hold (fixed arrays of messages multiply).
const MAX_OPS: usize = 1 << 16;

#[derive(Debug, Clone, Copy)]
enum Op {
    /// A primitive into a slot.
    Prim(Prim, u32),
    /// A ROS 1 `time`: both parts, then the total in nanoseconds.
    Time([Prim; 2], [u32; 3]),
    /// This many strings, skipped.
    Strs(u32),
    /// A length-prefixed sequence of strings, skipped.
    StrSeq,
}

/// The compiled reads of a fixed-shape ROS 1 message; see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    ops: Vec<Op>,
}

impl Program {
    /// The program for `set`, with the slots the general walk registered under `root`.
    pub(crate) fn build(set: &MsgSet, root: &Branch, limits: &Limits) -> Result<Self, NotFlat> {
        let mut ops = Vec::new();
        emit(set, set.root, root, limits, &mut ops, 0)?;
        Ok(Self { ops })
    }

    /// Reads `bytes` into `row`; `false` (row partly written) when the general walk must.
    pub(crate) fn decode(&self, bytes: &[u8], row: &mut Row) -> bool {
        let mut pos = 0usize;
        for op in &self.ops {
            match *op {
                Op::Prim(p, slot) => {
                    let Some(v) = load(bytes, &mut pos, p) else {
                        return false;
                    };
                    row.set(slot, v);
                }
                Op::Time([sp, np], [s, n, total]) => {
                    let (Some(sec), Some(nsec)) =
                        (load(bytes, &mut pos, sp), load(bytes, &mut pos, np))
                    else {
                        return false;
                    };
                    row.set(s, sec);
                    row.set(n, nsec);
                    row.set(total, Scalar::Int(crate::cdr::time_ns(sec, nsec)));
                }
                Op::Strs(n) => {
                    for _ in 0..n {
                        if !skip_string(bytes, &mut pos) {
                            return false;
                        }
                    }
                }
                Op::StrSeq => {
                    let Some(n) = take::<4>(bytes, &mut pos).map(u32::from_le_bytes) else {
                        return false;
                    };
                    for _ in 0..n {
                        if !skip_string(bytes, &mut pos) {
                            return false;
                        }
                    }
                }
            }
        }
        pos == bytes.len()
    }
}

#[inline(always)]
fn take<const N: usize>(b: &[u8], pos: &mut usize) -> Option<[u8; N]> {
    let end = pos.checked_add(N)?;
    let v = b.get(*pos..end)?.try_into().ok()?;
    *pos = end;
    Some(v)
}

#[inline(always)]
fn load(b: &[u8], pos: &mut usize, p: Prim) -> Option<Scalar> {
    Some(match p {
        Prim::Bool => Scalar::UInt(u64::from(take::<1>(b, pos)?[0] != 0)),
        Prim::U8 => Scalar::UInt(u64::from(take::<1>(b, pos)?[0])),
        Prim::I8 => Scalar::Int(i64::from(take::<1>(b, pos)?[0] as i8)),
        Prim::U16 => Scalar::UInt(u64::from(u16::from_le_bytes(take(b, pos)?))),
        Prim::I16 => Scalar::Int(i64::from(i16::from_le_bytes(take(b, pos)?))),
        Prim::U32 => Scalar::UInt(u64::from(u32::from_le_bytes(take(b, pos)?))),
        Prim::I32 => Scalar::Int(i64::from(i32::from_le_bytes(take(b, pos)?))),
        Prim::U64 => Scalar::UInt(u64::from_le_bytes(take(b, pos)?)),
        Prim::I64 => Scalar::Int(i64::from_le_bytes(take(b, pos)?)),
        Prim::F32 => Scalar::Float(f64::from(f32::from_le_bytes(take(b, pos)?))),
        Prim::F64 => Scalar::Float(f64::from_le_bytes(take(b, pos)?)),
    })
}

#[inline]
fn skip_string(b: &[u8], pos: &mut usize) -> bool {
    let Some(n) = take::<4>(b, pos).map(u32::from_le_bytes) else {
        return false;
    };
    match pos.checked_add(n as usize) {
        Some(end) if end <= b.len() => {
            *pos = end;
            true
        }
        _ => false,
    }
}

fn push(ops: &mut Vec<Op>, op: Op) -> Result<(), NotFlat> {
    if ops.len() >= MAX_OPS {
        return Err(NotFlat::Never);
    }
    ops.push(op);
    Ok(())
}

fn emit(
    set: &MsgSet,
    t: usize,
    br: &Branch,
    limits: &Limits,
    ops: &mut Vec<Op>,
    depth: u32,
) -> Result<(), NotFlat> {
    if depth > limits.max_depth {
        return Err(NotFlat::Never);
    }
    let ty = set.types.get(t).ok_or(NotFlat::Never)?;
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
            (Array::One, Base::Prim(p)) => push(ops, Op::Prim(*p, slot(br, i)?))?,
            (Array::One, Base::Str { .. }) => push(ops, Op::Strs(1))?,
            (Array::One, Base::Msg(m)) => {
                let child = br.child(i).ok_or(NotFlat::NotYet)?;
                emit(set, *m, child, limits, ops, depth + 1)?;
            }
            (Array::Fixed(n), _) if n > limits.max_list_elements => return Err(NotFlat::Never),
            (Array::Fixed(n), Base::Str { .. }) => {
                push(ops, Op::Strs(u32::try_from(n).map_err(|_| NotFlat::Never)?))?
            }
            (Array::Fixed(0), _) => {}
            (Array::Fixed(n), Base::Prim(p)) => {
                let child = br.child(i).ok_or(NotFlat::NotYet)?;
                for j in 0..n {
                    push(ops, Op::Prim(*p, slot(child, j)?))?;
                }
            }
            (Array::Fixed(n), Base::Msg(m)) => {
                let child = br.child(i).ok_or(NotFlat::NotYet)?;
                for j in 0..n {
                    let e = child.child(j).ok_or(NotFlat::NotYet)?;
                    emit(set, *m, e, limits, ops, depth + 1)?;
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
            let mut bytes = seed;
            for (at, v) in edits {
                let i = at.index(bytes.len());
                bytes[i] = v;
            }
            bytes.truncate(bytes.len().saturating_sub(cut));
            bytes.extend(extra);
            prop_assert_eq!(bits(rows(&mut fast, &bytes)), bits(rows(&mut slow, &bytes)));
        }
    }
}
