//! Compiles a Cap'n Proto `CodeGeneratorRequest` (the MCAP `capnproto` schema) into a compact,
//! owned description of the root struct and everything it reaches.

use std::collections::HashMap;

use capnp::schema_capnp::{code_generator_request, field, node, type_, value};

use crate::error::DecodeError;
use crate::leaves::LeafKind;
use crate::value::Scalar;

/// A fixed-width number in a data section or a primitive list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Num {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
}

impl Num {
    pub(crate) fn bytes(self) -> usize {
        match self {
            Self::I8 | Self::U8 => 1,
            Self::I16 | Self::U16 => 2,
            Self::I32 | Self::U32 | Self::F32 => 4,
            Self::I64 | Self::U64 | Self::F64 => 8,
        }
    }
}

/// A list's element type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Elem {
    Void,
    Bool,
    Num(Num),
    Enum(usize),
    Text,
    Data,
    Struct(usize),
    List(Box<Elem>),
    Any,
    Cap,
}

/// What a pointer field points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PtrTy {
    Text,
    Data,
    Struct(usize),
    List(Elem),
    Any,
    Cap,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    Void,
    /// `bit`: bit offset in the data section; `default`: XOR mask.
    Bool {
        bit: usize,
        default: bool,
    },
    /// `byte`: byte offset in the data section; `default`: XOR mask (the default's bit pattern).
    Num {
        num: Num,
        byte: usize,
        default: u64,
    },
    Enum {
        byte: usize,
        default: u16,
        index: usize,
    },
    Ptr {
        index: u32,
        ty: PtrTy,
    },
    Group(usize),
}

/// How one bool, number or enum is loaded from a data section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Load {
    Bit,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    I64,
    U64,
    F64,
}

/// One precompiled data-section read: `at` is a byte offset (a bit offset for [`Load::Bit`]),
/// `xor` the default's bit pattern. Bytes past a short data section read as 0, so the result
/// is the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScalarOp {
    pub(crate) at: usize,
    pub(crate) load: Load,
    pub(crate) xor: u64,
}

#[inline(always)]
fn le<const N: usize>(data: &[u8], at: usize) -> Option<[u8; N]> {
    data.get(at..at.checked_add(N)?)?.try_into().ok()
}

impl ScalarOp {
    /// The op reading a bool, number or enum field; `None` for other kinds.
    pub(crate) fn of(kind: &Kind) -> Option<(Self, LeafKind)> {
        Some(match kind {
            Kind::Bool { bit, default } => (
                Self {
                    at: *bit,
                    load: Load::Bit,
                    xor: u64::from(*default),
                },
                LeafKind::Bool,
            ),
            Kind::Num { num, byte, default } => {
                let (load, leaf) = match num {
                    Num::I8 => (Load::I8, LeafKind::Int),
                    Num::I16 => (Load::I16, LeafKind::Int),
                    Num::I32 => (Load::I32, LeafKind::Int),
                    Num::I64 => (Load::I64, LeafKind::Int),
                    Num::U8 => (Load::U8, LeafKind::UInt),
                    Num::U16 => (Load::U16, LeafKind::UInt),
                    Num::U32 => (Load::U32, LeafKind::UInt),
                    Num::U64 => (Load::U64, LeafKind::UInt),
                    Num::F32 => (Load::F32, LeafKind::Float),
                    Num::F64 => (Load::F64, LeafKind::Float),
                };
                (
                    Self {
                        at: *byte,
                        load,
                        xor: *default,
                    },
                    leaf,
                )
            }
            Kind::Enum { byte, default, .. } => (
                Self {
                    at: *byte,
                    load: Load::U16,
                    xor: u64::from(*default),
                },
                LeafKind::Enum,
            ),
            _ => return None,
        })
    }

    /// Reads the value from a data section.
    #[inline(always)]
    pub(crate) fn read(&self, data: &[u8]) -> Scalar {
        let at = self.at;
        let x = self.xor;
        match self.load {
            Load::Bit => {
                let set = data.get(at / 8).map_or(0, |b| (b >> (at % 8)) & 1);
                Scalar::UInt(u64::from(set) ^ (x & 1))
            }
            Load::I8 => Scalar::Int(i64::from(
                (data.get(at).copied().unwrap_or(0) ^ x as u8) as i8,
            )),
            Load::U8 => Scalar::UInt(u64::from(data.get(at).copied().unwrap_or(0) ^ x as u8)),
            Load::I16 => Scalar::Int(i64::from(
                (le::<2>(data, at).map_or(0, u16::from_le_bytes) ^ x as u16) as i16,
            )),
            Load::U16 => Scalar::UInt(u64::from(
                le::<2>(data, at).map_or(0, u16::from_le_bytes) ^ x as u16,
            )),
            Load::I32 => Scalar::Int(i64::from(
                (le::<4>(data, at).map_or(0, u32::from_le_bytes) ^ x as u32) as i32,
            )),
            Load::U32 => Scalar::UInt(u64::from(
                le::<4>(data, at).map_or(0, u32::from_le_bytes) ^ x as u32,
            )),
            Load::F32 => Scalar::Float(f64::from(f32::from_bits(
                le::<4>(data, at).map_or(0, u32::from_le_bytes) ^ x as u32,
            ))),
            Load::I64 => Scalar::Int((le::<8>(data, at).map_or(0, u64::from_le_bytes) ^ x) as i64),
            Load::U64 => Scalar::UInt(le::<8>(data, at).map_or(0, u64::from_le_bytes) ^ x),
            Load::F64 => Scalar::Float(f64::from_bits(
                le::<8>(data, at).map_or(0, u64::from_le_bytes) ^ x,
            )),
        }
    }
}

/// A precompiled step of a struct walk for a field other than an always-present scalar.
/// `field` indexes [`Struct::fields`] (and the instance's children); `arm` is the union arm the
/// field belongs to, if any.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    /// A bool, number or enum inside a union arm.
    Scalar {
        field: usize,
        arm: u16,
        op: ScalarOp,
        leaf: LeafKind,
    },
    /// A group: same data and pointer sections, another struct's fields.
    Group {
        field: usize,
        arm: Option<u16>,
        strukt: usize,
    },
    /// A struct pointer.
    Struct {
        field: usize,
        arm: Option<u16>,
        ptr: u32,
        strukt: usize,
    },
    /// A list pointer with numeric, enum, bool, struct or list elements.
    List {
        field: usize,
        arm: Option<u16>,
        ptr: u32,
        elem: Elem,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    pub(crate) name: String,
    /// The union arm this field belongs to, if any.
    pub(crate) arm: Option<u16>,
    pub(crate) kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Union {
    /// Byte offset of the discriminant in the data section.
    pub(crate) byte: usize,
    /// Arm names by discriminant value.
    pub(crate) arms: Vec<Option<String>>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Struct {
    pub(crate) name: String,
    pub(crate) union: Option<Union>,
    pub(crate) fields: Vec<Field>,
    /// Indices of the fields outside any union that are bools, numbers or enums: read in one
    /// tight loop into the instance's dense slot list.
    pub(crate) scalars: Vec<usize>,
    /// The reads of `scalars`, in the same order.
    pub(crate) loads: Vec<ScalarOp>,
    /// Every other field that can hold numeric leaves (union-arm scalars, groups, struct and
    /// list pointers), in schema order; `Void`, text, data, capability and any-pointer fields
    /// are left out.
    pub(crate) ops: Vec<Op>,
    /// Whether any op reads this struct's pointer section (groups read it themselves).
    pub(crate) has_ptrs: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Enum {
    pub(crate) names: Vec<String>,
}

/// The compiled schema: structs and enums by index; `root` is the message type.
#[derive(Debug, Clone, Default)]
pub(crate) struct Schema {
    pub(crate) structs: Vec<Struct>,
    pub(crate) enums: Vec<Enum>,
    pub(crate) root: usize,
    pub(crate) root_name: String,
}

/// Most struct and enum nodes one schema may reach.
const MAX_NODES: usize = 1 << 16;
/// Deepest `List(List(...))` nesting accepted.
const MAX_LIST_NESTING: u32 = 32;

pub(crate) fn compile(schema_name: &str, data: &[u8]) -> Result<Schema, DecodeError> {
    let bad = |reason: String| DecodeError::bad_schema(schema_name, reason);
    let mut slice = data;
    let options = capnp::message::ReaderOptions {
        traversal_limit_in_words: Some(64 * 1024 * 1024),
        nesting_limit: 128,
    };
    let message =
        capnp::serialize::read_message_from_flat_slice(&mut slice, options).map_err(|e| {
            bad(format!(
                "not a serialized CodeGeneratorRequest ({})",
                e.kind
            ))
        })?;
    let request: code_generator_request::Reader<'_> = message
        .get_root()
        .map_err(|e| bad(format!("unreadable CodeGeneratorRequest ({})", e.kind)))?;
    let nodes = request
        .get_nodes()
        .map_err(|e| bad(format!("unreadable node list ({})", e.kind)))?;
    let mut by_id: HashMap<u64, node::Reader<'_>> = HashMap::with_capacity(nodes.len() as usize);
    for n in nodes.iter() {
        by_id.insert(n.get_id(), n);
    }
    let root_id = resolve_root(schema_name, &by_id).map_err(bad)?;
    let mut c = Compiler {
        by_id: &by_id,
        struct_index: HashMap::new(),
        enum_index: HashMap::new(),
        queue: Vec::new(),
        out: Schema::default(),
    };
    let root = c.struct_ref(root_id).map_err(bad)?;
    while let Some((id, index)) = c.queue.pop() {
        let s = c.compile_struct(id).map_err(bad)?;
        if let Some(slot) = c.out.structs.get_mut(index) {
            *slot = s;
        }
    }
    c.out.root = root;
    c.out.root_name = c
        .out
        .structs
        .get(root)
        .map(|s| s.name.clone())
        .unwrap_or_default();
    Ok(c.out)
}

fn display_name(n: &node::Reader<'_>) -> Option<String> {
    n.get_display_name().ok()?.to_str().ok().map(str::to_owned)
}

fn is_plain_struct(n: &node::Reader<'_>) -> bool {
    matches!(n.which(), Ok(node::Struct(s)) if !s.get_is_group())
}

/// Finds the root struct: `file.capnp:Type` (file by full path or trailing path components),
/// a full display name, a type id (`0x..` or decimal), or a unique `Type` / `Outer.Inner` suffix.
fn resolve_root(name: &str, by_id: &HashMap<u64, node::Reader<'_>>) -> Result<u64, String> {
    let name = name.trim();
    let structs: Vec<(u64, String)> = by_id
        .values()
        .filter(|n| is_plain_struct(n))
        .filter_map(|n| Some((n.get_id(), display_name(n)?)))
        .collect();
    let pick = |hits: Vec<u64>, how: &str| -> Result<Option<u64>, String> {
        match hits.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            _ => Err(format!(
                "{how} {name:?} matches {} struct types",
                hits.len()
            )),
        }
    };
    let exact: Vec<u64> = structs
        .iter()
        .filter(|(_, d)| d == name)
        .map(|(id, _)| *id)
        .collect();
    if let Some(id) = pick(exact, "display name")? {
        return Ok(id);
    }
    if let Some((file, ty)) = name.rsplit_once(':') {
        let hits = structs
            .iter()
            .filter(|(_, d)| {
                d.rsplit_once(':').is_some_and(|(df, dt)| {
                    dt == ty
                        && (df == file
                            || df.ends_with(&format!("/{file}"))
                            || file.ends_with(&format!("/{df}")))
                })
            })
            .map(|(id, _)| *id)
            .collect();
        if let Some(id) = pick(hits, "file:type")? {
            return Ok(id);
        }
    }
    let id = name
        .strip_prefix("0x")
        .map(|h| u64::from_str_radix(h, 16))
        .unwrap_or_else(|| name.parse::<u64>());
    if let Ok(id) = id
        && by_id.get(&id).is_some_and(is_plain_struct)
    {
        return Ok(id);
    }
    let suffix: Vec<u64> = structs
        .iter()
        .filter(|(_, d)| {
            d.rsplit_once(':')
                .is_some_and(|(_, dt)| dt == name || dt.ends_with(&format!(".{name}")))
        })
        .map(|(id, _)| *id)
        .collect();
    if let Some(id) = pick(suffix, "type name")? {
        return Ok(id);
    }
    Err(format!("no struct type named {name:?} in the request"))
}

struct Compiler<'r, 'a> {
    by_id: &'r HashMap<u64, node::Reader<'a>>,
    struct_index: HashMap<u64, usize>,
    enum_index: HashMap<u64, usize>,
    queue: Vec<(u64, usize)>,
    out: Schema,
}

impl<'a> Compiler<'_, 'a> {
    fn node(&self, id: u64) -> Result<node::Reader<'a>, String> {
        self.by_id
            .get(&id)
            .copied()
            .ok_or_else(|| format!("type id {id:#x} is not in the request"))
    }

    fn check_size(&self) -> Result<(), String> {
        if self.out.structs.len() + self.out.enums.len() >= MAX_NODES {
            return Err(format!("more than {MAX_NODES} types"));
        }
        Ok(())
    }

    fn struct_ref(&mut self, id: u64) -> Result<usize, String> {
        if let Some(&i) = self.struct_index.get(&id) {
            return Ok(i);
        }
        self.check_size()?;
        let n = self.node(id)?;
        if !matches!(n.which(), Ok(node::Struct(_))) {
            return Err(format!("type id {id:#x} is not a struct"));
        }
        let i = self.out.structs.len();
        self.out.structs.push(Struct::default());
        self.struct_index.insert(id, i);
        self.queue.push((id, i));
        Ok(i)
    }

    fn enum_ref(&mut self, id: u64) -> Result<usize, String> {
        if let Some(&i) = self.enum_index.get(&id) {
            return Ok(i);
        }
        self.check_size()?;
        let n = self.node(id)?;
        let Ok(node::Enum(e)) = n.which() else {
            return Err(format!("type id {id:#x} is not an enum"));
        };
        let mut names = Vec::new();
        for en in e
            .get_enumerants()
            .map_err(|e| format!("enumerants: {}", e.kind))?
            .iter()
        {
            names.push(text(en.get_name())?);
        }
        let i = self.out.enums.len();
        self.out.enums.push(Enum { names });
        self.enum_index.insert(id, i);
        Ok(i)
    }

    fn compile_struct(&mut self, id: u64) -> Result<Struct, String> {
        let n = self.node(id)?;
        let name = display_name(&n).unwrap_or_else(|| format!("{id:#x}"));
        let Ok(node::Struct(s)) = n.which() else {
            return Err(format!("type id {id:#x} is not a struct"));
        };
        let fields_r = s
            .get_fields()
            .map_err(|e| format!("{name}: fields: {}", e.kind))?;
        let mut union = (s.get_discriminant_count() > 0).then(|| Union {
            byte: s.get_discriminant_offset() as usize * 2,
            arms: Vec::new(),
        });
        let mut fields = Vec::with_capacity(fields_r.len() as usize);
        for f in fields_r.iter() {
            let fname = text(f.get_name())?;
            let d = f.get_discriminant_value();
            let arm = (d != field::NO_DISCRIMINANT).then_some(d);
            if let (Some(d), Some(u)) = (arm, union.as_mut()) {
                let d = usize::from(d);
                if u.arms.len() <= d {
                    u.arms.resize(d + 1, None);
                }
                if let Some(slot) = u.arms.get_mut(d) {
                    *slot = Some(fname.clone());
                }
            }
            let kind = match f.which().map_err(|e| format!("{name}.{fname}: {e}"))? {
                field::Group(g) => Kind::Group(self.struct_ref(g.get_type_id())?),
                field::Slot(slot) => {
                    let ty = slot
                        .get_type()
                        .map_err(|e| format!("{name}.{fname}: type: {}", e.kind))?;
                    let default = slot.get_default_value().ok();
                    self.slot_kind(slot.get_offset(), ty, default)
                        .map_err(|e| format!("{name}.{fname}: {e}"))?
                }
            };
            fields.push(Field {
                name: fname,
                arm,
                kind,
            });
        }
        let mut scalars = Vec::new();
        let mut loads = Vec::new();
        let mut ops = Vec::new();
        for (field, f) in fields.iter().enumerate() {
            let arm = f.arm;
            match (ScalarOp::of(&f.kind), arm) {
                (Some((op, _)), None) => {
                    scalars.push(field);
                    loads.push(op);
                }
                (Some((op, leaf)), Some(arm)) => ops.push(Op::Scalar {
                    field,
                    arm,
                    op,
                    leaf,
                }),
                (None, _) => match &f.kind {
                    Kind::Group(strukt) => ops.push(Op::Group {
                        field,
                        arm,
                        strukt: *strukt,
                    }),
                    Kind::Ptr {
                        index,
                        ty: PtrTy::Struct(strukt),
                    } => ops.push(Op::Struct {
                        field,
                        arm,
                        ptr: *index,
                        strukt: *strukt,
                    }),
                    Kind::Ptr {
                        index,
                        ty: PtrTy::List(elem),
                    } => ops.push(Op::List {
                        field,
                        arm,
                        ptr: *index,
                        elem: elem.clone(),
                    }),
                    _ => {}
                },
            }
        }
        let has_ptrs = ops
            .iter()
            .any(|op| matches!(op, Op::Struct { .. } | Op::List { .. }));
        Ok(Struct {
            name,
            union,
            fields,
            scalars,
            loads,
            ops,
            has_ptrs,
        })
    }

    fn slot_kind(
        &mut self,
        offset: u32,
        ty: type_::Reader<'_>,
        default: Option<value::Reader<'_>>,
    ) -> Result<Kind, String> {
        let off = offset as usize;
        let dv = default.and_then(|d| d.which().ok());
        let num = |num: Num, default: u64| Kind::Num {
            num,
            byte: off * num.bytes(),
            default,
        };
        Ok(match ty.which().map_err(|e| e.to_string())? {
            type_::Void(()) => Kind::Void,
            type_::Bool(()) => Kind::Bool {
                bit: off,
                default: matches!(dv, Some(value::Bool(true))),
            },
            type_::Int8(()) => num(
                Num::I8,
                match dv {
                    Some(value::Int8(v)) => u64::from(v as u8),
                    _ => 0,
                },
            ),
            type_::Int16(()) => num(
                Num::I16,
                match dv {
                    Some(value::Int16(v)) => u64::from(v as u16),
                    _ => 0,
                },
            ),
            type_::Int32(()) => num(
                Num::I32,
                match dv {
                    Some(value::Int32(v)) => u64::from(v as u32),
                    _ => 0,
                },
            ),
            type_::Int64(()) => num(
                Num::I64,
                match dv {
                    Some(value::Int64(v)) => v as u64,
                    _ => 0,
                },
            ),
            type_::Uint8(()) => num(
                Num::U8,
                match dv {
                    Some(value::Uint8(v)) => u64::from(v),
                    _ => 0,
                },
            ),
            type_::Uint16(()) => num(
                Num::U16,
                match dv {
                    Some(value::Uint16(v)) => u64::from(v),
                    _ => 0,
                },
            ),
            type_::Uint32(()) => num(
                Num::U32,
                match dv {
                    Some(value::Uint32(v)) => u64::from(v),
                    _ => 0,
                },
            ),
            type_::Uint64(()) => num(
                Num::U64,
                match dv {
                    Some(value::Uint64(v)) => v,
                    _ => 0,
                },
            ),
            type_::Float32(()) => num(
                Num::F32,
                match dv {
                    Some(value::Float32(v)) => u64::from(v.to_bits()),
                    _ => 0,
                },
            ),
            type_::Float64(()) => num(
                Num::F64,
                match dv {
                    Some(value::Float64(v)) => v.to_bits(),
                    _ => 0,
                },
            ),
            type_::Enum(e) => Kind::Enum {
                byte: off * 2,
                default: match dv {
                    Some(value::Enum(v)) => v,
                    _ => 0,
                },
                index: self.enum_ref(e.get_type_id())?,
            },
            type_::Text(()) => Kind::Ptr {
                index: offset,
                ty: PtrTy::Text,
            },
            type_::Data(()) => Kind::Ptr {
                index: offset,
                ty: PtrTy::Data,
            },
            type_::Struct(s) => Kind::Ptr {
                index: offset,
                ty: PtrTy::Struct(self.struct_ref(s.get_type_id())?),
            },
            type_::List(l) => {
                let et = l
                    .get_element_type()
                    .map_err(|e| format!("list element: {}", e.kind))?;
                Kind::Ptr {
                    index: offset,
                    ty: PtrTy::List(self.elem(et, 0)?),
                }
            }
            type_::Interface(_) => Kind::Ptr {
                index: offset,
                ty: PtrTy::Cap,
            },
            type_::AnyPointer(_) => Kind::Ptr {
                index: offset,
                ty: PtrTy::Any,
            },
        })
    }

    fn elem(&mut self, ty: type_::Reader<'_>, depth: u32) -> Result<Elem, String> {
        if depth > MAX_LIST_NESTING {
            return Err(format!("lists nested deeper than {MAX_LIST_NESTING}"));
        }
        Ok(match ty.which().map_err(|e| e.to_string())? {
            type_::Void(()) => Elem::Void,
            type_::Bool(()) => Elem::Bool,
            type_::Int8(()) => Elem::Num(Num::I8),
            type_::Int16(()) => Elem::Num(Num::I16),
            type_::Int32(()) => Elem::Num(Num::I32),
            type_::Int64(()) => Elem::Num(Num::I64),
            type_::Uint8(()) => Elem::Num(Num::U8),
            type_::Uint16(()) => Elem::Num(Num::U16),
            type_::Uint32(()) => Elem::Num(Num::U32),
            type_::Uint64(()) => Elem::Num(Num::U64),
            type_::Float32(()) => Elem::Num(Num::F32),
            type_::Float64(()) => Elem::Num(Num::F64),
            type_::Enum(e) => Elem::Enum(self.enum_ref(e.get_type_id())?),
            type_::Text(()) => Elem::Text,
            type_::Data(()) => Elem::Data,
            type_::Struct(s) => Elem::Struct(self.struct_ref(s.get_type_id())?),
            type_::List(l) => {
                let et = l
                    .get_element_type()
                    .map_err(|e| format!("list element: {}", e.kind))?;
                Elem::List(Box::new(self.elem(et, depth + 1)?))
            }
            type_::Interface(_) => Elem::Cap,
            type_::AnyPointer(_) => Elem::Any,
        })
    }
}

fn text(t: capnp::Result<capnp::text::Reader<'_>>) -> Result<String, String> {
    let t = t.map_err(|e| format!("name: {}", e.kind))?;
    t.to_str()
        .map(str::to_owned)
        .map_err(|_| "a name is not UTF-8".to_owned())
}
