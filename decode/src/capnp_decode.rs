//! Walks Cap'n Proto messages with a compiled [`Schema`], through capnp's public readers only:
//! structs are read as untyped carriers (`raw::get_struct_data_section` /
//! `get_struct_pointer_section`), lists through the typed list readers. This is the general
//! walk; [`crate::capnp_flat`] is the shortcut for schemas without lists.

use capnp::any_pointer;
use capnp::any_pointer_list;
use capnp::primitive_list;
use capnp::schema_capnp::node;
use capnp::struct_list;

use crate::capnp_schema::{Elem, Kind, Num, Op, PtrTy, ScalarOp, Schema, Struct};
use crate::error::{DecodeError, NESTING_LIMIT, TRAVERSAL_LIMIT_WORDS};
use crate::leaves::{Branch, LeafKind, Limits, Name, Sink};
use crate::value::{Scalar, Value};

/// Any generated struct reader works as a carrier: capnp does not check type ids.
type Carrier<'a> = node::Reader<'a>;

static BIT_ZERO: [u8; 1] = [0];
static BIT_ONE: [u8; 1] = [1];

/// Most values one tree decode may produce.
const MAX_TREE_VALUES: usize = 1 << 21;

/// A struct's data section and (lazily) its pointer section, or a synthesized one-bit data
/// section for a struct list written as `List(Bool)`.
#[derive(Clone, Copy)]
struct View<'a> {
    data: &'a [u8],
    carrier: Option<Carrier<'a>>,
}

impl<'a> View<'a> {
    #[inline]
    fn of(r: Carrier<'a>) -> Self {
        Self {
            data: capnp::raw::get_struct_data_section(r),
            carrier: Some(r),
        }
    }

    fn bit(b: bool) -> Self {
        Self {
            data: if b { &BIT_ONE } else { &BIT_ZERO },
            carrier: None,
        }
    }

    /// The pointer section, only computed for structs that have pointer fields.
    #[inline]
    fn pointers(&self) -> Option<any_pointer_list::Reader<'a>> {
        self.carrier.map(capnp::raw::get_struct_pointer_section)
    }
}

/// The pointer at `index`, `None` if past the section (older writer) or null.
#[inline]
fn ptr_at<'a>(
    ptrs: Option<any_pointer_list::Reader<'a>>,
    index: u32,
) -> Option<any_pointer::Reader<'a>> {
    let p = ptrs?.try_get(index)?;
    (!p.is_null()).then_some(p)
}

#[inline(always)]
fn bytes<const N: usize>(data: &[u8], at: usize) -> Option<[u8; N]> {
    data.get(at..at.checked_add(N)?)?.try_into().ok()
}

#[inline(always)]
fn read_u16(data: &[u8], at: usize) -> u16 {
    bytes::<2>(data, at).map_or(0, u16::from_le_bytes)
}

/// A data-section number; bytes past a short data section read as 0, so the result is the default.
#[inline(always)]
fn read_num(data: &[u8], num: Num, at: usize, default: u64) -> Scalar {
    match num {
        Num::I8 => Scalar::Int(i64::from(
            (data.get(at).copied().unwrap_or(0) ^ default as u8) as i8,
        )),
        Num::U8 => Scalar::UInt(u64::from(
            data.get(at).copied().unwrap_or(0) ^ default as u8,
        )),
        Num::I16 => Scalar::Int(i64::from((read_u16(data, at) ^ default as u16) as i16)),
        Num::U16 => Scalar::UInt(u64::from(read_u16(data, at) ^ default as u16)),
        Num::I32 => Scalar::Int(i64::from(
            (bytes::<4>(data, at).map_or(0, u32::from_le_bytes) ^ default as u32) as i32,
        )),
        Num::U32 => Scalar::UInt(u64::from(
            bytes::<4>(data, at).map_or(0, u32::from_le_bytes) ^ default as u32,
        )),
        Num::F32 => Scalar::Float(f64::from(f32::from_bits(
            bytes::<4>(data, at).map_or(0, u32::from_le_bytes) ^ default as u32,
        ))),
        Num::I64 => {
            Scalar::Int((bytes::<8>(data, at).map_or(0, u64::from_le_bytes) ^ default) as i64)
        }
        Num::U64 => Scalar::UInt(bytes::<8>(data, at).map_or(0, u64::from_le_bytes) ^ default),
        Num::F64 => Scalar::Float(f64::from_bits(
            bytes::<8>(data, at).map_or(0, u64::from_le_bytes) ^ default,
        )),
    }
}

#[inline(always)]
fn read_bit(data: &[u8], bit: usize, default: bool) -> bool {
    let set = data.get(bit / 8).is_some_and(|b| (b >> (bit % 8)) & 1 == 1);
    set ^ default
}

fn scalar_value(s: Scalar) -> Value {
    match s {
        Scalar::Int(v) => Value::Int(v),
        Scalar::UInt(v) => Value::UInt(v),
        Scalar::Float(v) => Value::Float(v),
    }
}

fn options() -> capnp::message::ReaderOptions {
    capnp::message::ReaderOptions {
        traversal_limit_in_words: Some(TRAVERSAL_LIMIT_WORDS),
        nesting_limit: NESTING_LIMIT,
    }
}

fn too_deep(limits: &Limits, depth: u32) -> Result<(), DecodeError> {
    if depth > limits.max_depth {
        return Err(DecodeError::limit(
            "nesting depth",
            u64::from(limits.max_depth),
        ));
    }
    Ok(())
}

/// Reads a primitive list: straight from its bytes when the elements are contiguous (the usual
/// case), else element by element through capnp's typed reader (lists written as structs).
macro_rules! prim_list {
    ($p:expr, $t:ty, |$v:ident| $conv:expr, $f:expr) => {{
        let list: primitive_list::Reader<'_, $t> = $p.get_as()?;
        let mut f = $f;
        const SIZE: usize = std::mem::size_of::<$t>();
        let len = list.len() as usize;
        let bytes = capnp::raw::get_list_bytes(list);
        if capnp::raw::get_list_step_size_in_bits(list) as usize == SIZE * 8
            && bytes.len() >= len * SIZE
        {
            for (j, c) in bytes.chunks_exact(SIZE).take(len).enumerate() {
                let Ok(raw) = <[u8; SIZE]>::try_from(c) else {
                    break;
                };
                let $v = <$t>::from_le_bytes(raw);
                if !f(j, $conv)? {
                    break;
                }
            }
        } else {
            for j in 0..list.len() {
                if let Some($v) = list.try_get(j) {
                    if !f(j as usize, $conv)? {
                        break;
                    }
                }
            }
        }
    }};
}

/// Bit lists go through capnp's reader (bit-packed).
macro_rules! bool_list {
    ($p:expr, $f:expr) => {{
        let list: primitive_list::Reader<'_, bool> = $p.get_as()?;
        let mut f = $f;
        for j in 0..list.len() {
            if let Some(v) = list.try_get(j) {
                if !f(j as usize, Scalar::UInt(u64::from(v)))? {
                    break;
                }
            }
        }
    }};
}

/// Calls `f(index, value)` for each element of a numeric, bool or enum list; stops when `f`
/// returns `false`.
fn each_scalar<'a>(
    elem: &Elem,
    p: any_pointer::Reader<'a>,
    f: impl FnMut(usize, Scalar) -> Result<bool, DecodeError>,
) -> Result<(), DecodeError> {
    match elem {
        Elem::Bool => bool_list!(p, f),
        Elem::Enum(_) => prim_list!(p, u16, |v| Scalar::UInt(u64::from(v)), f),
        Elem::Num(Num::I8) => prim_list!(p, i8, |v| Scalar::Int(i64::from(v)), f),
        Elem::Num(Num::I16) => prim_list!(p, i16, |v| Scalar::Int(i64::from(v)), f),
        Elem::Num(Num::I32) => prim_list!(p, i32, |v| Scalar::Int(i64::from(v)), f),
        Elem::Num(Num::I64) => prim_list!(p, i64, |v| Scalar::Int(v), f),
        Elem::Num(Num::U8) => prim_list!(p, u8, |v| Scalar::UInt(u64::from(v)), f),
        Elem::Num(Num::U16) => prim_list!(p, u16, |v| Scalar::UInt(u64::from(v)), f),
        Elem::Num(Num::U32) => prim_list!(p, u32, |v| Scalar::UInt(u64::from(v)), f),
        Elem::Num(Num::U64) => prim_list!(p, u64, |v| Scalar::UInt(v), f),
        Elem::Num(Num::F32) => prim_list!(p, f32, |v| Scalar::Float(f64::from(v)), f),
        Elem::Num(Num::F64) => prim_list!(p, f64, |v| Scalar::Float(v), f),
        _ => {}
    }
    Ok(())
}

/// Calls `f(index, view)` for each element of a struct list, including lists written in a
/// primitive or bit encoding (capnp's list upgrade rules).
fn each_struct<'a>(
    p: any_pointer::Reader<'a>,
    mut f: impl FnMut(usize, View<'a>) -> Result<bool, DecodeError>,
) -> Result<(), DecodeError> {
    match p.get_as::<struct_list::Reader<'a, node::Owned>>() {
        Ok(list) => {
            for j in 0..list.len() {
                if let Some(e) = list.try_get(j)
                    && !f(j as usize, View::of(e))?
                {
                    break;
                }
            }
        }
        Err(e)
            if matches!(
                e.kind,
                capnp::ErrorKind::FoundBitListWhereStructListWasExpected
            ) =>
        {
            let list: primitive_list::Reader<'a, bool> = p.get_as()?;
            for j in 0..list.len() {
                if let Some(b) = list.try_get(j)
                    && !f(j as usize, View::bit(b))?
                {
                    break;
                }
            }
        }
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// The slots of a scalar list's first `len` elements (at most `max_list_elements`; more sets
/// `clipped`), registering the ones not seen before. Element `j`'s slot is `br.slots[j]`.
#[inline]
fn element_slots<'b>(
    br: &'b mut Branch,
    sink: &mut Sink<'_>,
    len: u32,
    kind: LeafKind,
) -> Result<&'b [u32], DecodeError> {
    let max = sink.max_list_elements();
    let len = len as usize;
    let n = if len > max {
        sink.clipped = true;
        max
    } else {
        len
    };
    if br.slots.len() < n {
        register_elements(br, sink, n, kind)?;
    }
    Ok(br.slots.get(..n).unwrap_or(&[]))
}

#[cold]
fn register_elements(
    br: &mut Branch,
    sink: &mut Sink<'_>,
    n: usize,
    kind: LeafKind,
) -> Result<(), DecodeError> {
    for j in br.slots.len()..n {
        let slot = br.leaf(sink, j, Name::Index(j), kind)?;
        br.slots.push(slot);
    }
    Ok(())
}

#[inline(always)]
fn int(v: impl Into<i64>) -> Scalar {
    Scalar::Int(v.into())
}

#[inline(always)]
fn uint(v: impl Into<u64>) -> Scalar {
    Scalar::UInt(v.into())
}

#[inline(always)]
fn float(v: impl Into<f64>) -> Scalar {
    Scalar::Float(v.into())
}

/// Writes a primitive list's elements into their slots: straight from the list's bytes when
/// they are contiguous (the usual case), else element by element through capnp's typed reader
/// (lists written as structs).
macro_rules! fast_list {
    ($p:expr, $br:expr, $sink:expr, $t:ty, $kind:expr, $conv:expr) => {{
        let list: primitive_list::Reader<'_, $t> = $p.get_as()?;
        const SIZE: usize = std::mem::size_of::<$t>();
        let len = list.len();
        let slots = element_slots($br, $sink, len, $kind)?;
        let bytes = capnp::raw::get_list_bytes(list);
        let conv = $conv;
        if capnp::raw::get_list_step_size_in_bits(list) as usize == SIZE * 8
            && bytes.len() >= slots.len() * SIZE
        {
            for (c, &slot) in bytes.chunks_exact(SIZE).zip(slots) {
                let raw = <[u8; SIZE]>::try_from(c).unwrap_or([0; SIZE]);
                $sink.put(slot, conv(<$t>::from_le_bytes(raw)));
            }
        } else {
            for (j, &slot) in (0..).zip(slots) {
                if let Some(v) = list.try_get(j) {
                    $sink.put(slot, conv(v));
                }
            }
        }
    }};
}

/// Writes a list of bools, numbers or enums into its element slots.
#[inline(never)]
fn scalar_list(
    elem: &Elem,
    p: any_pointer::Reader<'_>,
    br: &mut Branch,
    sink: &mut Sink<'_>,
) -> Result<(), DecodeError> {
    match elem {
        Elem::Bool => {
            let list: primitive_list::Reader<'_, bool> = p.get_as()?;
            let slots = element_slots(br, sink, list.len(), LeafKind::Bool)?;
            for (j, &slot) in (0..).zip(slots) {
                if let Some(b) = list.try_get(j) {
                    sink.put(slot, Scalar::UInt(u64::from(b)));
                }
            }
        }
        Elem::Enum(_) => fast_list!(p, br, sink, u16, LeafKind::Enum, uint),
        Elem::Num(Num::I8) => fast_list!(p, br, sink, i8, LeafKind::Int, int),
        Elem::Num(Num::I16) => fast_list!(p, br, sink, i16, LeafKind::Int, int),
        Elem::Num(Num::I32) => fast_list!(p, br, sink, i32, LeafKind::Int, int),
        Elem::Num(Num::I64) => fast_list!(p, br, sink, i64, LeafKind::Int, int),
        Elem::Num(Num::U8) => fast_list!(p, br, sink, u8, LeafKind::UInt, uint),
        Elem::Num(Num::U16) => fast_list!(p, br, sink, u16, LeafKind::UInt, uint),
        Elem::Num(Num::U32) => fast_list!(p, br, sink, u32, LeafKind::UInt, uint),
        Elem::Num(Num::U64) => fast_list!(p, br, sink, u64, LeafKind::UInt, uint),
        Elem::Num(Num::F32) => fast_list!(p, br, sink, f32, LeafKind::Float, float),
        Elem::Num(Num::F64) => fast_list!(p, br, sink, f64, LeafKind::Float, float),
        _ => {}
    }
    Ok(())
}

impl Schema {
    /// Writes one message's numeric leaves.
    pub(crate) fn decode(
        &self,
        bytes: &[u8],
        root: &mut Branch,
        sink: &mut Sink<'_>,
        limits: &Limits,
    ) -> Result<(), DecodeError> {
        let mut slice = bytes;
        let message =
            capnp::serialize::read_message_from_flat_slice_no_alloc(&mut slice, options())?;
        let root_ptr: any_pointer::Reader<'_> = message.get_root()?;
        if root_ptr.is_null() {
            return Ok(());
        }
        let view = View::of(root_ptr.get_as::<Carrier<'_>>()?);
        self.walk_struct(self.root, view, root, sink, limits, 0)
    }

    fn walk_struct(
        &self,
        si: usize,
        v: View<'_>,
        br: &mut Branch,
        sink: &mut Sink<'_>,
        limits: &Limits,
        depth: u32,
    ) -> Result<(), DecodeError> {
        too_deep(limits, depth)?;
        let Some(st) = self.structs.get(si) else {
            return Err(DecodeError::corrupt("struct index out of range"));
        };
        let data = v.data;
        self.scalars(st, data, br, sink)?;
        let which = match &st.union {
            Some(u) => {
                let w = read_u16(data, u.byte);
                br.put(
                    sink,
                    st.fields.len(),
                    Name::Field("$which"),
                    LeafKind::Which,
                    Scalar::UInt(u64::from(w)),
                )?;
                Some(w)
            }
            None => None,
        };
        if st.ops.is_empty() {
            return Ok(());
        }
        let ptrs = if st.has_ptrs { v.pointers() } else { None };
        let name = |field: usize| move || Name::Field(st.fields.get(field).map_or("", |f| &f.name));
        for op in &st.ops {
            match op {
                Op::Scalar {
                    field,
                    arm,
                    op,
                    leaf,
                } => {
                    if which == Some(*arm) {
                        br.put(sink, *field, name(*field)(), *leaf, op.read(data))?;
                    }
                }
                Op::Group { field, arm, strukt } => {
                    if arm.is_some() && *arm != which {
                        continue;
                    }
                    let b = br.branch_with(*field, name(*field))?;
                    self.walk_struct(*strukt, v, b, sink, limits, depth + 1)?;
                }
                Op::Struct {
                    field,
                    arm,
                    ptr,
                    strukt,
                } => {
                    if arm.is_some() && *arm != which {
                        continue;
                    }
                    let Some(p) = ptr_at(ptrs, *ptr) else {
                        continue;
                    };
                    let view = View::of(p.get_as::<Carrier<'_>>()?);
                    let b = br.branch_with(*field, name(*field))?;
                    match self.structs.get(*strukt) {
                        // Only bools, numbers and enums (a vector, a time): no recursion.
                        Some(target) if target.ops.is_empty() && target.union.is_none() => {
                            too_deep(limits, depth + 1)?;
                            self.scalars(target, view.data, b, sink)?;
                        }
                        _ => self.walk_struct(*strukt, view, b, sink, limits, depth + 1)?,
                    }
                }
                Op::List {
                    field,
                    arm,
                    ptr,
                    elem,
                } => {
                    if arm.is_some() && *arm != which {
                        continue;
                    }
                    let Some(p) = ptr_at(ptrs, *ptr) else {
                        continue;
                    };
                    let b = br.branch_with(*field, name(*field))?;
                    self.walk_list(elem, p, b, sink, limits, depth + 1)?;
                }
            }
        }
        Ok(())
    }

    /// Writes a struct instance's always-present bools, numbers and enums.
    #[inline(always)]
    fn scalars(
        &self,
        st: &Struct,
        data: &[u8],
        br: &mut Branch,
        sink: &mut Sink<'_>,
    ) -> Result<(), DecodeError> {
        if br.slots.len() != st.loads.len() {
            self.scalar_slots(st, br, sink)?;
        }
        for (op, &slot) in st.loads.iter().zip(&br.slots) {
            sink.put(slot, op.read(data));
        }
        Ok(())
    }

    /// Registers the leaves of a struct instance's scalar fields (first sight only).
    #[cold]
    fn scalar_slots(
        &self,
        st: &Struct,
        br: &mut Branch,
        sink: &mut Sink<'_>,
    ) -> Result<(), DecodeError> {
        let mut slots = Vec::with_capacity(st.scalars.len());
        for &i in &st.scalars {
            let Some(f) = st.fields.get(i) else { continue };
            let kind = ScalarOp::of(&f.kind).map_or(LeafKind::Enum, |(_, kind)| kind);
            slots.push(br.leaf(sink, i, Name::Field(&f.name), kind)?);
        }
        br.slots = slots;
        Ok(())
    }

    #[inline]
    fn walk_list(
        &self,
        elem: &Elem,
        p: any_pointer::Reader<'_>,
        br: &mut Branch,
        sink: &mut Sink<'_>,
        limits: &Limits,
        depth: u32,
    ) -> Result<(), DecodeError> {
        too_deep(limits, depth)?;
        match elem {
            Elem::Void | Elem::Text | Elem::Data | Elem::Any | Elem::Cap => Ok(()),
            Elem::Bool | Elem::Num(_) | Elem::Enum(_) => scalar_list(elem, p, br, sink),
            Elem::Struct(si) => self.struct_list(*si, p, br, sink, limits, depth),
            Elem::List(inner) => self.list_list(inner, p, br, sink, limits, depth),
        }
    }

    #[inline(never)]
    fn struct_list(
        &self,
        si: usize,
        p: any_pointer::Reader<'_>,
        br: &mut Branch,
        sink: &mut Sink<'_>,
        limits: &Limits,
        depth: u32,
    ) -> Result<(), DecodeError> {
        let max = sink.max_list_elements();
        each_struct(p, |j, view| {
            if j >= max {
                sink.clipped = true;
                return Ok(false);
            }
            let b = br.branch(j, Name::Index(j))?;
            self.walk_struct(si, view, b, sink, limits, depth + 1)?;
            Ok(true)
        })
    }

    #[inline(never)]
    fn list_list(
        &self,
        inner: &Elem,
        p: any_pointer::Reader<'_>,
        br: &mut Branch,
        sink: &mut Sink<'_>,
        limits: &Limits,
        depth: u32,
    ) -> Result<(), DecodeError> {
        let max = sink.max_list_elements();
        let list: any_pointer_list::Reader<'_> = p.get_as()?;
        for j in 0..list.len() {
            let j = j as usize;
            if j >= max {
                sink.clipped = true;
                break;
            }
            let Some(e) = list.try_get(j as u32) else {
                break;
            };
            if e.is_null() {
                continue;
            }
            let b = br.branch(j, Name::Index(j))?;
            self.walk_list(inner, e, b, sink, limits, depth + 1)?;
        }
        Ok(())
    }

    /// Decodes one message into a [`Value`] tree.
    pub(crate) fn tree(&self, bytes: &[u8], limits: &Limits) -> Result<Value, DecodeError> {
        let mut slice = bytes;
        let message =
            capnp::serialize::read_message_from_flat_slice_no_alloc(&mut slice, options())?;
        let root_ptr: any_pointer::Reader<'_> = message.get_root()?;
        if root_ptr.is_null() {
            return Ok(Value::Null);
        }
        let view = View::of(root_ptr.get_as::<Carrier<'_>>()?);
        let mut t = Tree {
            schema: self,
            limits,
            budget: MAX_TREE_VALUES,
        };
        t.strukt(self.root, view, 0)
    }
}

struct Tree<'s> {
    schema: &'s Schema,
    limits: &'s Limits,
    budget: usize,
}

impl Tree<'_> {
    fn spend(&mut self, n: usize) -> Result<(), DecodeError> {
        self.budget = self
            .budget
            .checked_sub(n)
            .ok_or_else(|| DecodeError::limit("values in one tree", MAX_TREE_VALUES as u64))?;
        Ok(())
    }

    fn enum_value(&self, index: usize, value: u16) -> Value {
        let name = self
            .schema
            .enums
            .get(index)
            .and_then(|e| e.names.get(usize::from(value)))
            .cloned();
        Value::Enum { value, name }
    }

    fn strukt(&mut self, si: usize, v: View<'_>, depth: u32) -> Result<Value, DecodeError> {
        too_deep(self.limits, depth)?;
        let schema = self.schema;
        let Some(st) = schema.structs.get(si) else {
            return Err(DecodeError::corrupt("struct index out of range"));
        };
        self.spend(st.fields.len() + 1)?;
        let mut out = Vec::with_capacity(st.fields.len() + 1);
        let which = match &st.union {
            Some(u) => {
                let w = read_u16(v.data, u.byte);
                let name = u.arms.get(usize::from(w)).cloned().flatten();
                out.push(("$which".to_owned(), Value::Enum { value: w, name }));
                Some(w)
            }
            None => None,
        };
        let ptrs = v.pointers();
        for f in &st.fields {
            if f.arm.is_some() && f.arm != which {
                continue;
            }
            let value = match &f.kind {
                Kind::Void => Value::Void,
                Kind::Bool { bit, default } => Value::Bool(read_bit(v.data, *bit, *default)),
                Kind::Num { num, byte, default } => {
                    scalar_value(read_num(v.data, *num, *byte, *default))
                }
                Kind::Enum {
                    byte,
                    default,
                    index,
                } => self.enum_value(*index, read_u16(v.data, *byte) ^ default),
                Kind::Group(g) => self.strukt(*g, v, depth + 1)?,
                Kind::Ptr { index, ty } => match ptr_at(ptrs, *index) {
                    None => Value::Null,
                    Some(p) => self.pointer(ty, p, depth + 1)?,
                },
            };
            out.push((f.name.clone(), value));
        }
        Ok(Value::Struct(out))
    }

    fn pointer(
        &mut self,
        ty: &PtrTy,
        p: any_pointer::Reader<'_>,
        depth: u32,
    ) -> Result<Value, DecodeError> {
        Ok(match ty {
            PtrTy::Text => Value::Text(
                String::from_utf8_lossy(p.get_as::<capnp::text::Reader<'_>>()?.as_bytes())
                    .into_owned(),
            ),
            PtrTy::Data => {
                let d: capnp::data::Reader<'_> = p.get_as()?;
                Value::Data(d.to_vec())
            }
            PtrTy::Struct(s) => {
                let view = View::of(p.get_as::<Carrier<'_>>()?);
                self.strukt(*s, view, depth)?
            }
            PtrTy::List(elem) => self.list(elem, p, depth)?,
            PtrTy::Any => Value::Opaque("any pointer"),
            PtrTy::Cap => Value::Opaque("capability"),
        })
    }

    fn list(
        &mut self,
        elem: &Elem,
        p: any_pointer::Reader<'_>,
        depth: u32,
    ) -> Result<Value, DecodeError> {
        too_deep(self.limits, depth)?;
        let mut out = Vec::new();
        match elem {
            Elem::Void => {
                let list: primitive_list::Reader<'_, ()> = p.get_as()?;
                self.spend(list.len() as usize)?;
                out.resize(list.len() as usize, Value::Void);
            }
            Elem::Bool | Elem::Num(_) => {
                each_scalar(elem, p, |_, s| {
                    self.spend(1)?;
                    out.push(match (elem, s) {
                        (Elem::Bool, Scalar::UInt(b)) => Value::Bool(b != 0),
                        _ => scalar_value(s),
                    });
                    Ok(true)
                })?;
            }
            Elem::Enum(index) => {
                let list: primitive_list::Reader<'_, u16> = p.get_as()?;
                self.spend(list.len() as usize)?;
                for j in 0..list.len() {
                    if let Some(v) = list.try_get(j) {
                        out.push(self.enum_value(*index, v));
                    }
                }
            }
            Elem::Text => {
                let list: capnp::text_list::Reader<'_> = p.get_as()?;
                self.spend(list.len() as usize)?;
                for j in 0..list.len() {
                    out.push(match list.try_get(j) {
                        Some(Ok(t)) => {
                            Value::Text(String::from_utf8_lossy(t.as_bytes()).into_owned())
                        }
                        Some(Err(e)) => return Err(e.into()),
                        None => Value::Null,
                    });
                }
            }
            Elem::Data => {
                let list: capnp::data_list::Reader<'_> = p.get_as()?;
                self.spend(list.len() as usize)?;
                for j in 0..list.len() {
                    out.push(match list.try_get(j) {
                        Some(Ok(d)) => Value::Data(d.to_vec()),
                        Some(Err(e)) => return Err(e.into()),
                        None => Value::Null,
                    });
                }
            }
            Elem::Struct(si) => {
                let mut items = Vec::new();
                each_struct(p, |_, view| {
                    items.push(self.strukt(*si, view, depth + 1)?);
                    Ok(true)
                })?;
                out = items;
            }
            Elem::List(inner) => {
                let list: any_pointer_list::Reader<'_> = p.get_as()?;
                self.spend(list.len() as usize)?;
                for j in 0..list.len() {
                    let Some(e) = list.try_get(j) else { break };
                    out.push(if e.is_null() {
                        Value::Null
                    } else {
                        self.list(inner, e, depth + 1)?
                    });
                }
            }
            Elem::Any | Elem::Cap => {
                let list: any_pointer_list::Reader<'_> = p.get_as()?;
                self.spend(list.len() as usize)?;
                out.resize(
                    list.len() as usize,
                    Value::Opaque(if matches!(elem, Elem::Cap) {
                        "capability"
                    } else {
                        "any pointer"
                    }),
                );
            }
        }
        Ok(Value::List(out))
    }
}
