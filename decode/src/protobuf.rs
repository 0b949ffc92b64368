//! Protobuf messages (`protobuf` message and schema encodings): the recording's serialized
//! `FileDescriptorSet` is resolved at run time with `prost-reflect`, then compiled into a compact
//! type table that a wire-format walker reads leaves with.
//!
//! The walker reads the wire format straight into the row (no per-message allocation) and follows
//! protobuf's rules: fields in any order, last value wins for a singular field, packed and
//! unpacked repeated scalars both accepted, unknown fields skipped. Implicit-presence proto3
//! scalars are written as 0 before the message's own bytes are read, so a field absent from the
//! wire reads 0 (its value), while explicit-presence fields (proto3 `optional`, proto2, message
//! fields, oneof members) are absent unless on the wire.
//!
//! Two things a streaming walk cannot get right are rare in practice (no protobuf library writes
//! them) but legal: a singular message field sent twice (the parts merge) and two members of one
//! oneof on the wire (the last wins). The walker detects both and re-reads the message once in
//! canonical form (decoded and re-encoded by `prost-reflect`), so the row is always what a
//! protobuf library would read.
//!
//! Trees ([`Value`]) come from `prost-reflect`'s `DynamicMessage`: they allocate anyway, and it
//! gives enum names and maps.

use std::collections::HashMap;

use prost::Message as _;
use prost_reflect::{
    DescriptorPool, DynamicMessage, Kind, MapKey, MessageDescriptor, ReflectMessage,
};

use crate::error::DecodeError;
use crate::leaves::{Branch, LeafKind, Limits, Name, Sink};
use crate::value::{Scalar, Value};

/// Most values one tree decode may produce (defaults of implicit fields can outnumber bytes).
const MAX_TREE_VALUES: usize = 1 << 21;
/// Field numbers below this are looked up in a direct table.
const DIRECT: u32 = 64;
/// Most message types one schema may define that are reachable from the root.
const MAX_TYPES: usize = 1 << 14;

const VARINT: u8 = 0;
const I64: u8 = 1;
const LEN: u8 = 2;
const SGROUP: u8 = 3;
const EGROUP: u8 = 4;
const I32: u8 = 5;

/// A numeric protobuf scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    Double,
    Float,
    Int32,
    Int64,
    UInt32,
    UInt64,
    SInt32,
    SInt64,
    Fixed32,
    Fixed64,
    SFixed32,
    SFixed64,
    Bool,
    Enum,
}

impl Num {
    fn wire(self) -> u8 {
        match self {
            Self::Double | Self::Fixed64 | Self::SFixed64 => I64,
            Self::Float | Self::Fixed32 | Self::SFixed32 => I32,
            _ => VARINT,
        }
    }

    fn kind(self) -> LeafKind {
        match self {
            Self::Double | Self::Float => LeafKind::Float,
            Self::Int32 | Self::Int64 | Self::SInt32 | Self::SInt64 => LeafKind::Int,
            Self::SFixed32 | Self::SFixed64 => LeafKind::Int,
            Self::UInt32 | Self::UInt64 | Self::Fixed32 | Self::Fixed64 => LeafKind::UInt,
            Self::Bool => LeafKind::Bool,
            Self::Enum => LeafKind::Enum,
        }
    }

    fn zero(self) -> Scalar {
        match self.kind() {
            LeafKind::Float => Scalar::Float(0.0),
            LeafKind::Int | LeafKind::Enum => Scalar::Int(0),
            _ => Scalar::UInt(0),
        }
    }

    /// The value of one wire item already read as a varint or fixed-width integer.
    #[inline(always)]
    fn scalar(self, raw: u64) -> Scalar {
        match self {
            Self::Double => Scalar::Float(f64::from_bits(raw)),
            Self::Float => Scalar::Float(f64::from(f32::from_bits(raw as u32))),
            // int32 is sign-extended on the wire; a 5-byte encoding is truncated as parsers do.
            Self::Int32 | Self::Enum => Scalar::Int(i64::from(raw as u32 as i32)),
            Self::Int64 | Self::SFixed64 => Scalar::Int(raw as i64),
            Self::UInt32 | Self::Fixed32 => Scalar::UInt(u64::from(raw as u32)),
            Self::UInt64 | Self::Fixed64 => Scalar::UInt(raw),
            Self::SInt32 => {
                let v = raw as u32;
                Scalar::Int(i64::from((v >> 1) as i32 ^ -((v & 1) as i32)))
            }
            Self::SInt64 => Scalar::Int((raw >> 1) as i64 ^ -((raw & 1) as i64)),
            Self::SFixed32 => Scalar::Int(i64::from(raw as u32 as i32)),
            Self::Bool => Scalar::UInt(u64::from(raw != 0)),
        }
    }
}

/// What the walker does with a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Num(Num),
    Msg(usize),
    /// Strings, bytes, maps and groups: tree only.
    Skip,
}

#[derive(Debug, Clone)]
struct Field {
    name: Box<str>,
    ty: Ty,
    repeated: bool,
    /// Index of the (non-synthetic) oneof this field belongs to.
    oneof: Option<usize>,
}

/// Special message types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Special {
    None,
    /// `google.protobuf.Timestamp`: also yields the time in nanoseconds.
    Timestamp,
}

#[derive(Debug, Clone)]
struct Type {
    fields: Vec<Field>,
    /// Field index + 1 by field number, for numbers below [`DIRECT`].
    direct: [u16; DIRECT as usize],
    /// `(number, field index)` sorted by number, for the others.
    sparse: Vec<(u32, u16)>,
    oneofs: Vec<Box<str>>,
    /// Implicit-presence singular numeric fields: written as 0 before the wire is read.
    implicit: Vec<(u16, Num)>,
    special: Special,
}

impl Type {
    #[inline(always)]
    fn lookup(&self, number: u32) -> Option<usize> {
        if number < DIRECT {
            match self.direct.get(number as usize) {
                Some(&i) if i != 0 => Some(usize::from(i) - 1),
                _ => None,
            }
        } else {
            self.sparse
                .binary_search_by_key(&number, |&(n, _)| n)
                .ok()
                .and_then(|at| self.sparse.get(at))
                .map(|&(_, i)| usize::from(i))
        }
    }
}

/// A compiled protobuf schema: the root type and every type reachable from it.
///
/// Recursive types are legal in protobuf (a tree of nodes): only the data decides the depth, and
/// the walker bounds it with [`Limits::max_depth`].
#[derive(Debug)]
pub(crate) struct Schema {
    types: Vec<Type>,
    root: usize,
    desc: MessageDescriptor,
    /// Per-message-instance counters (repeated element index, oneof member), reused.
    scratch: Vec<u32>,
}

/// Outcome of a walk: done, or the message must be re-read in canonical form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    Done,
    NotCanonical,
}

/// Compiles the type `name` of a serialized `FileDescriptorSet`.
pub(crate) fn compile(name: &str, data: &[u8]) -> Result<Schema, DecodeError> {
    let bad = |reason: String| DecodeError::bad_schema(name, reason);
    let pool = DescriptorPool::decode(data)
        .map_err(|e| bad(format!("not a valid serialized FileDescriptorSet: {e}")))?;
    let full = name.strip_prefix('.').unwrap_or(name);
    let Some(desc) = pool.get_message_by_name(full) else {
        let mut known: Vec<String> = pool
            .all_messages()
            .map(|m| m.full_name().to_owned())
            .collect();
        known.sort();
        let shown = known.len().min(8);
        let more = if known.len() > shown { ", ..." } else { "" };
        return Err(bad(format!(
            "unknown protobuf message type {full:?}; the schema's FileDescriptorSet defines {} message types: {}{more}",
            known.len(),
            known.get(..shown).unwrap_or_default().join(", ")
        )));
    };
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut queue: Vec<MessageDescriptor> = vec![desc.clone()];
    index.insert(desc.full_name().to_owned(), 0);
    let mut types = Vec::new();
    while let Some(m) = queue.get(types.len()).cloned() {
        let mut fields = Vec::new();
        let mut direct = [0u16; DIRECT as usize];
        let mut sparse = Vec::new();
        let mut implicit = Vec::new();
        let oneofs: Vec<_> = m.oneofs().filter(|o| !o.is_synthetic()).collect();
        for f in m.fields() {
            let i = u16::try_from(fields.len())
                .map_err(|_| bad(format!("{}: more than 65535 fields", m.full_name())))?;
            let ty = match f.kind() {
                _ if f.is_map() || f.is_group() => Ty::Skip,
                Kind::String | Kind::Bytes => Ty::Skip,
                Kind::Message(sub) => {
                    let next = index.len();
                    let at = *index.entry(sub.full_name().to_owned()).or_insert(next);
                    if at == next {
                        if next >= MAX_TYPES {
                            return Err(bad(format!("more than {MAX_TYPES} message types")));
                        }
                        queue.push(sub);
                    }
                    Ty::Msg(at)
                }
                Kind::Double => Ty::Num(Num::Double),
                Kind::Float => Ty::Num(Num::Float),
                Kind::Int32 => Ty::Num(Num::Int32),
                Kind::Int64 => Ty::Num(Num::Int64),
                Kind::Uint32 => Ty::Num(Num::UInt32),
                Kind::Uint64 => Ty::Num(Num::UInt64),
                Kind::Sint32 => Ty::Num(Num::SInt32),
                Kind::Sint64 => Ty::Num(Num::SInt64),
                Kind::Fixed32 => Ty::Num(Num::Fixed32),
                Kind::Fixed64 => Ty::Num(Num::Fixed64),
                Kind::Sfixed32 => Ty::Num(Num::SFixed32),
                Kind::Sfixed64 => Ty::Num(Num::SFixed64),
                Kind::Bool => Ty::Num(Num::Bool),
                Kind::Enum(_) => Ty::Num(Num::Enum),
            };
            let oneof = f
                .containing_oneof()
                .filter(|o| !o.is_synthetic())
                .and_then(|o| oneofs.iter().position(|x| x.name() == o.name()));
            if let Ty::Num(n) = ty
                && !f.is_list()
                && !f.supports_presence()
            {
                implicit.push((i, n));
            }
            let number = f.number();
            if number < DIRECT {
                if let Some(d) = direct.get_mut(number as usize) {
                    *d = i + 1;
                }
            } else {
                sparse.push((number, i));
            }
            fields.push(Field {
                name: f.name().into(),
                ty,
                repeated: f.is_list(),
                oneof,
            });
        }
        sparse.sort_unstable();
        let special = match m.full_name() {
            "google.protobuf.Timestamp" => Special::Timestamp,
            _ => Special::None,
        };
        types.push(Type {
            fields,
            direct,
            sparse,
            oneofs: oneofs.iter().map(|o| o.name().into()).collect(),
            implicit,
            special,
        });
    }
    Ok(Schema {
        types,
        root: 0,
        desc,
        scratch: Vec::new(),
    })
}

/// A bounds-checked reader over one whole payload; offsets in errors are from its start.
struct Cur<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cur<'a> {
    fn truncated(&self, needed: usize) -> DecodeError {
        DecodeError::Truncated {
            offset: self.pos,
            needed,
            len: self.buf.len(),
        }
    }

    #[inline(always)]
    fn varint(&mut self, end: usize) -> Result<u64, DecodeError> {
        let mut v = 0u64;
        for i in 0..10 {
            if self.pos >= end {
                return Err(self.truncated(1));
            }
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(self.truncated(1));
            };
            self.pos += 1;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(DecodeError::corrupt(format!(
            "protobuf varint longer than 10 bytes ending at offset {}",
            self.pos
        )))
    }

    #[inline(always)]
    fn fixed<const N: usize>(&mut self, end: usize) -> Result<u64, DecodeError> {
        let stop = self.pos.saturating_add(N);
        if stop > end {
            return Err(self.truncated(N));
        }
        let Some(b) = self.buf.get(self.pos..stop) else {
            return Err(self.truncated(N));
        };
        self.pos = stop;
        let mut v = [0u8; 8];
        if let Some(d) = v.get_mut(..N) {
            d.copy_from_slice(b);
        }
        Ok(u64::from_le_bytes(v))
    }

    /// A length-delimited item's end offset, checked against `end`.
    #[inline(always)]
    fn len(&mut self, end: usize) -> Result<usize, DecodeError> {
        let n = self.varint(end)?;
        let stop = usize::try_from(n)
            .ok()
            .and_then(|n| self.pos.checked_add(n))
            .filter(|&s| s <= end)
            .ok_or_else(|| self.truncated(usize::try_from(n).unwrap_or(usize::MAX)))?;
        Ok(stop)
    }

    /// One value of wire type `wt` as an integer (varint or fixed width).
    #[inline(always)]
    fn raw(&mut self, wt: u8, end: usize) -> Result<u64, DecodeError> {
        match wt {
            VARINT => self.varint(end),
            I64 => self.fixed::<8>(end),
            _ => self.fixed::<4>(end),
        }
    }

    /// Skips one value of wire type `wt` (field `number`, for groups).
    fn skip(&mut self, wt: u8, number: u32, end: usize, depth: u32) -> Result<(), DecodeError> {
        match wt {
            VARINT => self.varint(end).map(|_| ()),
            I64 => self.fixed::<8>(end).map(|_| ()),
            I32 => self.fixed::<4>(end).map(|_| ()),
            LEN => {
                self.pos = self.len(end)?;
                Ok(())
            }
            SGROUP => {
                if depth > 100 {
                    return Err(DecodeError::limit("protobuf group nesting", 100));
                }
                loop {
                    let (n, w) = self.key(end)?;
                    if w == EGROUP {
                        if n != number {
                            return Err(DecodeError::corrupt(format!(
                                "protobuf group {number} closed by end-group {n} at offset {}",
                                self.pos
                            )));
                        }
                        return Ok(());
                    }
                    self.skip(w, n, end, depth + 1)?;
                }
            }
            _ => Err(DecodeError::corrupt(format!(
                "protobuf wire type {wt} (field {number}) at offset {}",
                self.pos
            ))),
        }
    }

    #[inline(always)]
    fn key(&mut self, end: usize) -> Result<(u32, u8), DecodeError> {
        let at = self.pos;
        let key = self.varint(end)?;
        let number = u32::try_from(key >> 3).unwrap_or(0);
        if number == 0 {
            return Err(DecodeError::corrupt(format!(
                "protobuf field number 0 (or above 2^29) at offset {at}"
            )));
        }
        Ok((number, (key & 7) as u8))
    }
}

impl Schema {
    fn ty(&self, t: usize) -> Result<&Type, DecodeError> {
        self.types
            .get(t)
            .ok_or_else(|| DecodeError::corrupt("protobuf type index out of range"))
    }

    pub(crate) fn root_name(&self) -> &str {
        self.desc.full_name()
    }

    pub(crate) fn decode(
        &mut self,
        bytes: &[u8],
        root: &mut Branch,
        sink: &mut Sink<'_>,
        limits: &Limits,
    ) -> Result<(), DecodeError> {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let mut cur = Cur { buf: bytes, pos: 0 };
        let first = self.walk(
            self.root,
            &mut cur,
            bytes.len(),
            root,
            sink,
            limits,
            0,
            &mut scratch,
        );
        let result = match first {
            Ok(Walk::Done) => Ok(()),
            Ok(Walk::NotCanonical) => {
                // Merge the repeated parts as a protobuf library would, then read that.
                sink.restart();
                let canonical = DynamicMessage::decode(self.desc.clone(), bytes)
                    .map_err(|e| DecodeError::corrupt(format!("protobuf: {e}")))?
                    .encode_to_vec();
                scratch.clear();
                let mut cur = Cur {
                    buf: &canonical,
                    pos: 0,
                };
                match self.walk(
                    self.root,
                    &mut cur,
                    canonical.len(),
                    root,
                    sink,
                    limits,
                    0,
                    &mut scratch,
                )? {
                    Walk::Done => Ok(()),
                    Walk::NotCanonical => Err(DecodeError::corrupt(
                        "protobuf message still not canonical after re-encoding",
                    )),
                }
            }
            Err(e) => Err(e),
        };
        self.scratch = scratch;
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn walk(
        &self,
        t: usize,
        cur: &mut Cur<'_>,
        end: usize,
        br: &mut Branch,
        sink: &mut Sink<'_>,
        limits: &Limits,
        depth: u32,
        scratch: &mut Vec<u32>,
    ) -> Result<Walk, DecodeError> {
        if depth > limits.max_depth {
            return Err(DecodeError::limit(
                "nesting depth",
                u64::from(limits.max_depth),
            ));
        }
        let ty = self.ty(t)?;
        if ty.special == Special::Timestamp {
            return timestamp(cur, end, br, sink);
        }
        for &(i, n) in &ty.implicit {
            let f = ty.fields.get(usize::from(i));
            let name = f.map_or("", |f| &f.name);
            br.put(sink, usize::from(i), Name::Field(name), n.kind(), n.zero())?;
        }
        let nf = ty.fields.len();
        let base = scratch.len();
        scratch.resize(base + nf + ty.oneofs.len(), 0);
        let max = sink.max_list_elements();
        while cur.pos < end {
            let (number, wt) = cur.key(end)?;
            let Some(i) = ty.lookup(number) else {
                cur.skip(wt, number, end, 0)?;
                continue;
            };
            let Some(f) = ty.fields.get(i) else {
                cur.skip(wt, number, end, 0)?;
                continue;
            };
            let name = Name::Field(&f.name);
            if let Some(o) = f.oneof {
                let at = base + nf + o;
                let Some(set) = scratch.get_mut(at) else {
                    return Err(DecodeError::corrupt("protobuf oneof index out of range"));
                };
                if *set != 0 && *set != number {
                    return Ok(Walk::NotCanonical);
                }
                *set = number;
                let oneof = ty.oneofs.get(o).map_or("", |s| s);
                br.branch(nf + o, Name::Field(oneof))?.put(
                    sink,
                    0,
                    Name::Field("$which"),
                    LeafKind::Which,
                    Scalar::UInt(u64::from(number)),
                )?;
            }
            let count = scratch
                .get_mut(base + i)
                .ok_or_else(|| DecodeError::corrupt("protobuf field index out of range"))?;
            match f.ty {
                Ty::Num(n) if wt == n.wire() => {
                    let v = n.scalar(cur.raw(wt, end)?);
                    if f.repeated {
                        let j = *count as usize;
                        *count = count.saturating_add(1);
                        if j < max {
                            br.branch(i, name)?
                                .put(sink, j, Name::Index(j), n.kind(), v)?;
                        } else {
                            sink.clipped = true;
                        }
                    } else {
                        br.put(sink, i, name, n.kind(), v)?;
                    }
                }
                Ty::Num(n) if wt == LEN && f.repeated => {
                    // Packed: a run of values of the element's own wire type.
                    let stop = cur.len(end)?;
                    let ew = n.wire();
                    let b = br.branch(i, name)?;
                    while cur.pos < stop {
                        let v = n.scalar(cur.raw(ew, stop)?);
                        let j = *count as usize;
                        *count = count.saturating_add(1);
                        if j < max {
                            b.put(sink, j, Name::Index(j), n.kind(), v)?;
                        } else {
                            sink.clipped = true;
                        }
                    }
                }
                Ty::Msg(m) if wt == LEN => {
                    let stop = cur.len(end)?;
                    let j = *count as usize;
                    *count = count.saturating_add(1);
                    let b = br.branch(i, name)?;
                    let target = if f.repeated {
                        if j >= max {
                            sink.clipped = true;
                            cur.pos = stop;
                            continue;
                        }
                        b.branch(j, Name::Index(j))?
                    } else if j > 0 {
                        // A singular message sent twice: its parts merge.
                        return Ok(Walk::NotCanonical);
                    } else {
                        b
                    };
                    if self.walk(m, cur, stop, target, sink, limits, depth + 1, scratch)?
                        == Walk::NotCanonical
                    {
                        return Ok(Walk::NotCanonical);
                    }
                    if cur.pos != stop {
                        return Err(DecodeError::corrupt(format!(
                            "protobuf field {number} ends at offset {} but its length says {stop}",
                            cur.pos
                        )));
                    }
                }
                Ty::Skip => cur.skip(wt, number, end, 0)?,
                _ => {
                    return Err(DecodeError::corrupt(format!(
                        "protobuf field {} (number {number}) has wire type {wt} at offset {}, which its type does not allow",
                        f.name, cur.pos
                    )));
                }
            }
        }
        scratch.truncate(base);
        if cur.pos != end {
            return Err(cur.truncated(cur.pos.saturating_sub(end)));
        }
        Ok(Walk::Done)
    }

    pub(crate) fn tree(&self, bytes: &[u8], limits: &Limits) -> Result<Value, DecodeError> {
        let msg = DynamicMessage::decode(self.desc.clone(), bytes)
            .map_err(|e| DecodeError::corrupt(format!("protobuf: {e}")))?;
        let mut budget = MAX_TREE_VALUES;
        tree_msg(&msg, limits, 0, &mut budget)
    }
}

/// `google.protobuf.Timestamp` at `br`: `seconds`, `nanos` and the time in nanoseconds.
fn timestamp(
    cur: &mut Cur<'_>,
    end: usize,
    br: &mut Branch,
    sink: &mut Sink<'_>,
) -> Result<Walk, DecodeError> {
    let (mut seconds, mut nanos) = (0i64, 0i32);
    while cur.pos < end {
        let (number, wt) = cur.key(end)?;
        match (number, wt) {
            (1, VARINT) => seconds = cur.varint(end)? as i64,
            (2, VARINT) => nanos = cur.varint(end)? as u32 as i32,
            (1 | 2, _) => {
                return Err(DecodeError::corrupt(format!(
                    "protobuf Timestamp field {number} has wire type {wt} at offset {}",
                    cur.pos
                )));
            }
            _ => cur.skip(wt, number, end, 0)?,
        }
    }
    br.put(
        sink,
        0,
        Name::Field("seconds"),
        LeafKind::Int,
        Scalar::Int(seconds),
    )?;
    br.put(
        sink,
        1,
        Name::Field("nanos"),
        LeafKind::Int,
        Scalar::Int(i64::from(nanos)),
    )?;
    let total = seconds
        .saturating_mul(1_000_000_000)
        .saturating_add(i64::from(nanos));
    br.put(sink, 2, Name::Same, LeafKind::TimeNs, Scalar::Int(total))?;
    Ok(Walk::Done)
}

fn spend(budget: &mut usize, n: usize) -> Result<(), DecodeError> {
    *budget = budget
        .checked_sub(n)
        .ok_or_else(|| DecodeError::limit("values in one tree", MAX_TREE_VALUES as u64))?;
    Ok(())
}

fn tree_msg(
    msg: &DynamicMessage,
    limits: &Limits,
    depth: u32,
    budget: &mut usize,
) -> Result<Value, DecodeError> {
    if depth > limits.max_depth {
        return Err(DecodeError::limit(
            "nesting depth",
            u64::from(limits.max_depth),
        ));
    }
    let desc = msg.descriptor();
    let mut out = Vec::new();
    let mut oneofs: Vec<(String, Value)> = Vec::new();
    for f in desc.fields() {
        // Explicit presence: absent unless set. Implicit presence: always there.
        if f.supports_presence() && !msg.has_field(&f) {
            continue;
        }
        spend(budget, 1)?;
        let v = msg.get_field(&f);
        let kind = f.kind();
        out.push((
            f.name().to_owned(),
            tree_value(&v, &kind, limits, depth, budget)?,
        ));
        if let Some(o) = f.containing_oneof().filter(|o| !o.is_synthetic()) {
            let which = match u16::try_from(f.number()) {
                Ok(value) => Value::Enum {
                    value,
                    name: Some(f.name().to_owned()),
                },
                Err(_) => Value::UInt(u64::from(f.number())),
            };
            oneofs.push((
                o.name().to_owned(),
                Value::Struct(vec![("$which".to_owned(), which)]),
            ));
        }
    }
    out.extend(oneofs);
    Ok(Value::Struct(out))
}

fn tree_value(
    v: &prost_reflect::Value,
    kind: &Kind,
    limits: &Limits,
    depth: u32,
    budget: &mut usize,
) -> Result<Value, DecodeError> {
    use prost_reflect::Value as V;
    Ok(match v {
        V::Bool(b) => Value::Bool(*b),
        V::I32(x) => Value::Int(i64::from(*x)),
        V::I64(x) => Value::Int(*x),
        V::U32(x) => Value::UInt(u64::from(*x)),
        V::U64(x) => Value::UInt(*x),
        V::F32(x) => Value::Float(f64::from(*x)),
        V::F64(x) => Value::Float(*x),
        V::String(s) => Value::Text(s.clone()),
        V::Bytes(b) => Value::Data(b.to_vec()),
        V::EnumNumber(n) => {
            let name = match kind {
                Kind::Enum(e) => e.get_value(*n).map(|v| v.name().to_owned()),
                _ => None,
            };
            match u16::try_from(*n) {
                Ok(value) => Value::Enum { value, name },
                Err(_) => Value::Int(i64::from(*n)),
            }
        }
        V::Message(m) => tree_msg(m, limits, depth + 1, budget)?,
        V::List(items) => {
            spend(budget, items.len())?;
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(tree_value(item, kind, limits, depth, budget)?);
            }
            Value::List(out)
        }
        V::Map(map) => {
            spend(budget, map.len().saturating_mul(2))?;
            let (kk, vk) = match kind {
                Kind::Message(entry) => (
                    entry.map_entry_key_field().kind(),
                    entry.map_entry_value_field().kind(),
                ),
                _ => return Err(DecodeError::corrupt("protobuf map without an entry type")),
            };
            let mut entries: Vec<(&MapKey, &prost_reflect::Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let mut out = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                let key = tree_value(&map_key(k), &kk, limits, depth, budget)?;
                let value = tree_value(v, &vk, limits, depth + 1, budget)?;
                out.push(Value::Struct(vec![
                    ("key".to_owned(), key),
                    ("value".to_owned(), value),
                ]));
            }
            Value::List(out)
        }
    })
}

fn map_key(k: &MapKey) -> prost_reflect::Value {
    use prost_reflect::Value as V;
    match k {
        MapKey::Bool(b) => V::Bool(*b),
        MapKey::I32(x) => V::I32(*x),
        MapKey::I64(x) => V::I64(*x),
        MapKey::U32(x) => V::U32(*x),
        MapKey::U64(x) => V::U64(*x),
        MapKey::String(s) => V::String(s.clone()),
    }
}
