//! A fast path for the common Cap'n Proto shape: a message whose numeric leaves all sit in
//! structs reached through struct pointers (a header, a few vectors), groups and unions, with
//! no lists.
//!
//! After the general walk ([`crate::capnp_decode`]) has registered leaves, a [`FlatProgram`]
//! reads the ones it knows straight from the message bytes: one segment, near struct pointers,
//! every read bounds-checked. When a message needs anything else (several segments, a far
//! pointer, a pointer out of bounds, a struct or union arm whose leaves have not been seen yet),
//! the program gives up on it and the general walk, through the capnp crate's checked readers,
//! decodes it instead: it reports the error if there is one, or registers the new leaves, after
//! which the plan builds a new program. The program is therefore only ever a shortcut to the
//! general walk's result, never a second opinion on what a message means.

use crate::capnp_schema::{Op, ScalarOp, Schema};
use crate::leaves::{Branch, Limits};
use crate::row::LeafSink;
use crate::value::Scalar;

/// The reads of one struct instance (with its groups): its scalars, its union and the structs
/// its pointers lead to.
#[derive(Debug, Clone, Default)]
struct FlatStruct {
    /// Data-section reads and the slot each fills.
    loads: Vec<(ScalarOp, u32)>,
    /// Pointer-section index and the struct it points to (`None`: not seen yet, so a non-null
    /// pointer sends the message to the general walk).
    children: Vec<(u32, Option<FlatStruct>)>,
    /// The struct's union and those of its groups.
    unions: Vec<FlatUnion>,
}

/// A union: its discriminant's byte and slot, and per arm the reads of that arm's fields.
#[derive(Debug, Clone)]
struct FlatUnion {
    byte: usize,
    which_slot: u32,
    /// By discriminant value; `None`: an arm whose leaves have not been seen yet.
    arms: Vec<Option<FlatStruct>>,
}

/// The compiled reads of a schema's known leaves; see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct FlatProgram {
    root: FlatStruct,
}

/// Why a schema, or a part of it, has no flat program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotFlat {
    /// The schema has lists: the general walk reads them.
    Never,
    /// Leaves not registered yet. For the root this means no program yet; below it, a message
    /// that reaches the part goes to the general walk.
    NotYet,
}

impl FlatProgram {
    /// The program for `schema`, with the slots the general walk registered under `root`.
    pub(crate) fn build(schema: &Schema, root: &Branch, limits: &Limits) -> Result<Self, NotFlat> {
        let root = build_struct(schema, schema.root, root, limits, 0)?;
        Ok(Self { root })
    }

    /// Writes the message's leaves into `row`; `false` when this message needs the general walk
    /// (the row may then hold some values: begin it again).
    pub(crate) fn decode<S: LeafSink>(&self, bytes: &[u8], row: &mut S) -> bool {
        let Some(segment) = single_segment(bytes) else {
            return false;
        };
        match pointer_target(segment, 0) {
            Target::Null => true,
            Target::Struct(s) => read_struct(&self.root, segment, s, row),
            Target::GiveUp => false,
        }
    }
}

/// The reads of struct `si`, whose instance the general walk registered as `branch`.
fn build_struct(
    schema: &Schema,
    si: usize,
    branch: &Branch,
    limits: &Limits,
    depth: u32,
) -> Result<FlatStruct, NotFlat> {
    let mut out = FlatStruct::default();
    add_struct(schema, si, branch, limits, depth, &mut out)?;
    Ok(out)
}

/// Adds the reads of struct `si` (or a group of it) to `out`.
fn add_struct(
    schema: &Schema,
    si: usize,
    branch: &Branch,
    limits: &Limits,
    depth: u32,
    out: &mut FlatStruct,
) -> Result<(), NotFlat> {
    if depth > limits.max_depth {
        return Err(NotFlat::NotYet);
    }
    let st = schema.structs.get(si).ok_or(NotFlat::Never)?;
    if branch.slots.len() != st.loads.len() {
        return Err(NotFlat::NotYet);
    }
    out.loads
        .extend(st.loads.iter().copied().zip(branch.slots.iter().copied()));
    let mut union = match &st.union {
        Some(u) => Some(FlatUnion {
            byte: u.byte,
            which_slot: branch.leaf_slot(st.fields.len()).ok_or(NotFlat::NotYet)?,
            arms: vec![Some(FlatStruct::default()); u.arms.len()],
        }),
        None => None,
    };
    for op in &st.ops {
        let (arm, step) = match *op {
            Op::Scalar { field, arm, op, .. } => (
                Some(arm),
                branch.leaf_slot(field).map(|slot| Step::Load(op, slot)),
            ),
            Op::Group { field, arm, strukt } => (
                arm,
                branch.child(field).map(|child| Step::Group(strukt, child)),
            ),
            Op::Struct {
                field,
                arm,
                ptr,
                strukt,
            } => (arm, Some(Step::Pointer(ptr, strukt, branch.child(field)))),
            Op::List { .. } => return Err(NotFlat::Never),
        };
        let Some(a) = arm else {
            step.ok_or(NotFlat::NotYet)?
                .add(schema, limits, depth, out)?;
            continue;
        };
        let arms = union.as_mut().map(|u| &mut u.arms);
        let Some(slot) = arms.and_then(|arms| arms.get_mut(usize::from(a))) else {
            return Err(NotFlat::Never);
        };
        let Some(target) = slot else {
            // An arm already known to be incomplete.
            continue;
        };
        match step.map(|step| step.add(schema, limits, depth, target)) {
            Some(Ok(())) => {}
            // The arm's leaves are not all known: a message in this arm goes to the walk.
            None | Some(Err(NotFlat::NotYet)) => *slot = None,
            Some(Err(NotFlat::Never)) => return Err(NotFlat::Never),
        }
    }
    out.unions.extend(union);
    Ok(())
}

/// One field's reads, to be added to a struct or to one of its union's arms.
enum Step<'b> {
    Load(ScalarOp, u32),
    Group(usize, &'b Branch),
    Pointer(u32, usize, Option<&'b Branch>),
}

impl Step<'_> {
    fn add(
        self,
        schema: &Schema,
        limits: &Limits,
        depth: u32,
        out: &mut FlatStruct,
    ) -> Result<(), NotFlat> {
        match self {
            Step::Load(op, slot) => out.loads.push((op, slot)),
            // A group shares its parent's data and pointer sections.
            Step::Group(strukt, child) => {
                add_struct(schema, strukt, child, limits, depth + 1, out)?
            }
            Step::Pointer(ptr, strukt, child) => {
                let target = match child {
                    Some(child) => match build_struct(schema, strukt, child, limits, depth + 1) {
                        Ok(t) => Some(t),
                        Err(NotFlat::NotYet) => None,
                        Err(NotFlat::Never) => return Err(NotFlat::Never),
                    },
                    None => None,
                };
                out.children.push((ptr, target));
            }
        }
        Ok(())
    }
}

/// A struct instance inside the segment.
#[derive(Clone, Copy)]
struct StructAt<'a> {
    data: &'a [u8],
    /// Word index of the pointer section in the segment, and its length in words.
    pointers: usize,
    pointer_count: usize,
}

enum Target<'a> {
    Null,
    Struct(StructAt<'a>),
    GiveUp,
}

/// The one segment of a single-segment message, `None` for anything else.
fn single_segment(bytes: &[u8]) -> Option<&[u8]> {
    let count_minus_one = u32::from_le_bytes(bytes.get(0..4)?.try_into().ok()?);
    if count_minus_one != 0 {
        return None;
    }
    let words = u32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?) as usize;
    bytes.get(8..8 + words.checked_mul(8)?)
}

fn word(segment: &[u8], index: usize) -> Option<u64> {
    let at = index.checked_mul(8)?;
    Some(u64::from_le_bytes(
        segment.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// What the pointer at word `at` of the segment leads to.
#[inline]
fn pointer_target(segment: &[u8], at: usize) -> Target<'_> {
    let Some(w) = word(segment, at) else {
        return Target::GiveUp;
    };
    if w == 0 {
        return Target::Null;
    }
    // Only near struct pointers: kind 0 in the low two bits.
    if w & 3 != 0 {
        return Target::GiveUp;
    }
    let offset = i64::from((w as u32 as i32) >> 2);
    let data_words = ((w >> 32) & 0xffff) as usize;
    let pointer_count = (w >> 48) as usize;
    let Some(start) = usize::try_from(at as i64 + 1 + offset).ok() else {
        return Target::GiveUp;
    };
    let pointers = start + data_words;
    let end = pointers + pointer_count;
    if end.saturating_mul(8) > segment.len() {
        return Target::GiveUp;
    }
    match segment.get(start * 8..pointers * 8) {
        Some(data) => Target::Struct(StructAt {
            data,
            pointers,
            pointer_count,
        }),
        None => Target::GiveUp,
    }
}

fn read_struct<S: LeafSink>(
    program: &FlatStruct,
    segment: &[u8],
    s: StructAt<'_>,
    row: &mut S,
) -> bool {
    for &(op, slot) in &program.loads {
        row.put(slot, op.read(s.data));
    }
    if !read_children(&program.children, segment, s, row) {
        return false;
    }
    for u in &program.unions {
        let which = s
            .data
            .get(u.byte..u.byte + 2)
            .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
        row.put(u.which_slot, Scalar::UInt(u64::from(which)));
        let complete = match u.arms.get(usize::from(which)) {
            // An arm the schema does not know (a newer writer): only the discriminant.
            None => true,
            Some(None) => false,
            // The arm's fields live in the same struct (a group arm may hold a union).
            Some(Some(arm)) => read_struct(arm, segment, s, row),
        };
        if !complete {
            return false;
        }
    }
    true
}

fn read_children<S: LeafSink>(
    children: &[(u32, Option<FlatStruct>)],
    segment: &[u8],
    s: StructAt<'_>,
    row: &mut S,
) -> bool {
    for (ptr, child) in children {
        let ptr = *ptr as usize;
        // A pointer past the section (an older writer) reads as null.
        if ptr >= s.pointer_count {
            continue;
        }
        match (pointer_target(segment, s.pointers + ptr), child) {
            (Target::Null, _) => {}
            (Target::Struct(c), Some(child)) => {
                if !read_struct(child, segment, c, row) {
                    return false;
                }
            }
            (Target::Struct(_), None) | (Target::GiveUp, _) => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use schemas::engine_rpm_capnp::engine_rpm;

    use crate::{Plan, Row, SchemaSource, compile};

    fn plan(registry_name: &str) -> Plan {
        let info = schemas::by_name(registry_name).expect("registered");
        compile(&SchemaSource {
            message_encoding: schemas::MESSAGE_ENCODING,
            schema_encoding: schemas::SCHEMA_ENCODING,
            schema_name: info.capnp_name,
            schema_data: info.descriptor,
        })
        .expect("compile")
    }

    /// A plan that never takes the shortcut: the reference.
    fn general(registry_name: &str) -> Plan {
        plan(registry_name).without_shortcut()
    }

    /// What a decode gave: the error text, or each present leaf's path and value.
    fn outcome(plan: &mut Plan, bytes: &[u8]) -> Result<Vec<(String, String)>, String> {
        let mut row = Row::new();
        plan.decode(bytes, &mut row).map_err(|e| e.to_string())?;
        Ok(row
            .present()
            .map(|(slot, v)| (plan.leaves()[slot].path.clone(), format!("{v:?}")))
            .collect())
    }

    fn same(registry_name: &str, messages: &[Vec<u8>]) -> Plan {
        let (mut fast, mut reference) = (plan(registry_name), general(registry_name));
        for (i, m) in messages.iter().enumerate() {
            assert_eq!(
                outcome(&mut fast, m),
                outcome(&mut reference, m),
                "{registry_name} message {i}"
            );
        }
        fast
    }

    fn drive(registry_name: &str, n: u64) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| schemas::sample::encode(registry_name, i as f64 * 0.37, i).expect("encode"))
            .collect()
    }

    #[test]
    fn flat_schemas_take_the_shortcut_and_decode_as_the_general_walk_does() {
        for info in schemas::ALL {
            let name = info.registry_name;
            let fast = same(name, &drive(name, 50));
            let flat = fast.takes_shortcut();
            // Battery has a list: it keeps the general walk.
            let expected = name != "Battery";
            assert_eq!(flat, expected, "{name}: shortcut taken");
        }
    }

    fn engine(first_segment_words: Option<u32>, with_header: bool) -> Vec<u8> {
        let mut m = match first_segment_words {
            Some(words) => capnp::message::Builder::new(
                capnp::message::HeapAllocator::new()
                    .first_segment_words(words)
                    .allocation_strategy(capnp::message::AllocationStrategy::FixedSize),
            ),
            None => capnp::message::Builder::new_default(),
        };
        let mut e = m.init_root::<engine_rpm::Builder<'_>>();
        e.set_rpm(2500.0);
        e.set_coolant_temp_c(91.5);
        if with_header {
            let mut h = e.init_header();
            h.set_seq(9);
            h.set_stamp_ns(123);
        }
        capnp::serialize::write_message_to_words(&m)
    }

    #[test]
    fn null_structs_far_pointers_and_several_segments_decode_as_the_general_walk_does() {
        let messages = [
            engine(None, true),
            // The header missing: its leaves are absent, not zero.
            engine(None, false),
            // The root in its own segment: far pointers, several segments.
            engine(Some(1), true),
            engine(Some(4), true),
            engine(None, true),
        ];
        let mut fast = same("EngineRpm", &messages);
        let absent = outcome(&mut fast, &messages[1]).expect("decodes");
        assert!(absent.iter().all(|(path, _)| !path.starts_with("header")));
        assert!(
            absent
                .iter()
                .any(|(path, v)| path == "rpm" && v.contains("2500"))
        );
        let split = outcome(&mut fast, &messages[2]).expect("decodes");
        assert!(
            split
                .iter()
                .any(|(path, v)| path == "header.seq" && v.contains('9'))
        );
    }

    /// A single-segment message of `words`.
    fn message(words: &[u64]) -> Vec<u8> {
        let mut bytes = vec![0u8; 4];
        bytes.extend_from_slice(&(words.len() as u32).to_le_bytes());
        for w in words {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        bytes
    }

    /// A near struct pointer.
    fn struct_pointer(offset: i32, data_words: u64, pointers: u64) -> u64 {
        u64::from((offset << 2) as u32) | (data_words << 32) | (pointers << 48)
    }

    #[test]
    fn a_struct_with_fewer_pointers_than_the_schema_reads_them_as_null() {
        let rpm = u64::from(2500f32.to_bits());
        // An older writer's EngineRpm: two data words and no pointer section, followed by a
        // word that would be a valid header pointer if it were read as one.
        let short = message(&[struct_pointer(0, 2, 0), rpm, 0, struct_pointer(-3, 2, 0)]);
        let mut fast = same("EngineRpm", &[engine(None, true), short.clone()]);
        assert!(fast.takes_shortcut());
        let leaves = outcome(&mut fast, &short).expect("decodes");
        assert!(leaves.iter().all(|(path, _)| !path.starts_with("header")));
        assert!(
            leaves
                .iter()
                .any(|(path, v)| path == "rpm" && v.contains("2500"))
        );
    }

    const CAPNP_TEST: &[u8] = include_bytes!("../tests/fixtures/capnp-test.cgr");

    fn test_plan(name: &str) -> Plan {
        compile(&SchemaSource {
            message_encoding: "capnproto",
            schema_encoding: "capnproto",
            schema_name: name,
            schema_data: CAPNP_TEST,
        })
        .expect(name)
    }

    /// A word that is often a small near struct pointer, sometimes anything.
    fn word() -> impl Strategy<Value = u64> {
        prop_oneof![
            (-1i32..4, 0u64..3, 0u64..3).prop_map(|(off, d, p)| struct_pointer(off, d, p)),
            0u64..8,
            any::<u64>(),
        ]
    }

    proptest! {
        /// Random single-segment bodies, one after another into the same plans, on the capnp
        /// test suite's group and union types: the shortcut, built as leaves appear, always
        /// agrees with the general walk.
        #[test]
        fn random_bodies_of_unions_and_groups_decode_as_the_general_walk_does(
            bodies in proptest::collection::vec(proptest::collection::vec(word(), 1..12), 1..8),
        ) {
            for name in ["TestGroups", "TestUnion", "TestInterleavedGroups", "TestUnnamedUnion"] {
                let (mut fast, mut reference) = (test_plan(name), test_plan(name).without_shortcut());
                for (i, body) in bodies.iter().enumerate() {
                    let bytes = message(body);
                    prop_assert_eq!(
                        outcome(&mut fast, &bytes),
                        outcome(&mut reference, &bytes),
                        "{} body {}", name, i
                    );

                }
            }
        }

        /// Damaged messages (truncated, bytes overwritten) give the general walk's result: the
        /// same leaves or the same error.
        #[test]
        fn damaged_messages_decode_as_the_general_walk_does(
            seq in 0u64..1000,
            cut in 0usize..200,
            flips in proptest::collection::vec((0usize..200, any::<u8>()), 0..6),
        ) {
            for name in ["EngineRpm", "Imu", "GnssFix", "DriverInputs", "DiagnosticLog"] {
                let good = schemas::sample::encode(name, seq as f64 * 0.1, seq).expect("encode");
                let mut bad = good.clone();
                for &(at, byte) in &flips {
                    let len = bad.len();
                    if let Some(b) = bad.get_mut(at % len) {
                        *b = byte;
                    }
                }
                bad.truncate(bad.len().saturating_sub(cut % 24));
                // The good message first, so the shortcut is in place for the damaged one.
                same(name, &[good, bad]);
            }
        }
    }
}
