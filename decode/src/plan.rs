//! A compiled schema: the leaf table, the decoders, and the entry points the app calls.

use std::ops::Range;

use crate::capnp_flat::{FlatProgram, NotFlat};
use crate::error::DecodeError;
use crate::leaves::{Branch, Leaf, LeafTable, Limits, Sink};
use crate::ros_flat::Framing;
use crate::row::{LeafSink, Row};
use crate::value::{Scalar, Value};
use crate::{capnp_schema, json, protobuf, ros_flat, ros1, ros2msg};

/// Where a channel's schema comes from: the MCAP Channel's message encoding and its Schema record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaSource<'a> {
    /// Channel message encoding: `capnproto`, `cdr`, `ros1`, `protobuf` or `json`.
    pub message_encoding: &'a str,
    /// Schema encoding: `capnproto`, `ros2msg`, `ros2idl`, `ros1msg`, `protobuf`, `jsonschema`
    /// or empty.
    pub schema_encoding: &'a str,
    /// Schema name: `file.capnp:Type`, `pkg/msg/Type`, `pkg/Type` (ROS 1), the full protobuf
    /// message name (`foxglove.LocationFix`), ...
    pub schema_name: &'a str,
    /// Schema record data: a serialized CodeGeneratorRequest, `.msg` text, a serialized
    /// protobuf `FileDescriptorSet`, ...
    pub schema_data: &'a [u8],
}

/// What one [`Plan::decode`] call changed besides the row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Slots of leaves first seen in this message (empty in the steady state).
    pub new_leaves: Range<usize>,
    /// A list was longer than [`Limits::max_list_elements`]; its tail was not flattened.
    pub clipped: bool,
}

#[derive(Debug)]
enum Backend {
    Capnp(capnp_schema::Schema),
    Cdr(ros2msg::MsgSet),
    Json,
    Protobuf(protobuf::Schema),
    Ros1(ros2msg::MsgSet),
}

/// A schema compiled for fast repeated decoding; see the [crate docs](crate).
///
/// `Plan` is `Send`, so a decoding worker can own it.
#[derive(Debug)]
pub struct Plan {
    backend: Backend,
    table: LeafTable,
    root: Branch,
    limits: Limits,
    type_name: String,
    flat: Flat,
}

/// Whether a Cap'n Proto plan can take the [`FlatProgram`] shortcut.
#[derive(Debug)]
enum Flat {
    /// Not yet: tried when the plan had this many leaves (`None`: never tried).
    Pending(Option<usize>),
    /// The schema has lists (or has no shortcut: JSON, protobuf).
    Never,
    /// Built when the plan had this many leaves; rebuilt when it learns more.
    Ready(FlatProgram, usize),
    /// A fixed-shape ROS 1 or CDR program, built and rebuilt likewise.
    Packed(ros_flat::Program, usize),
}

/// Compiles a schema into a [`Plan`] with default [`Limits`].
pub fn compile(src: &SchemaSource<'_>) -> Result<Plan, DecodeError> {
    compile_with(src, Limits::default())
}

/// Compiles a schema into a [`Plan`] with the given [`Limits`].
pub fn compile_with(src: &SchemaSource<'_>, limits: Limits) -> Result<Plan, DecodeError> {
    let unknown = || DecodeError::UnknownEncoding {
        message_encoding: src.message_encoding.to_owned(),
        schema_encoding: src.schema_encoding.to_owned(),
    };
    let (backend, type_name) = match (src.message_encoding, src.schema_encoding) {
        ("capnproto" | "capnp", "capnproto" | "capnp") => {
            let s = capnp_schema::compile(src.schema_name, src.schema_data)?;
            let name = s.root_name.clone();
            (Backend::Capnp(s), name)
        }
        ("cdr", "ros2msg" | "ros2idl") => {
            let text = std::str::from_utf8(src.schema_data).map_err(|_| {
                DecodeError::bad_schema(src.schema_name, "schema text is not UTF-8")
            })?;
            let set = if src.schema_encoding == "ros2idl" {
                crate::ros2idl::parse(src.schema_name, text)?
            } else {
                ros2msg::parse(src.schema_name, text)?
            };
            let name = set.root_name().to_owned();
            (Backend::Cdr(set), name)
        }
        ("json", "jsonschema" | "") => (Backend::Json, src.schema_name.to_owned()),
        ("ros1", "ros1msg") => {
            let text = std::str::from_utf8(src.schema_data).map_err(|_| {
                DecodeError::bad_schema(src.schema_name, "schema text is not UTF-8")
            })?;
            let set = ros1::parse(src.schema_name, text)?;
            let name = set.root_name().to_owned();
            (Backend::Ros1(set), name)
        }
        ("protobuf", "protobuf") => {
            let s = protobuf::compile(src.schema_name, src.schema_data)?;
            let name = s.root_name().to_owned();
            (Backend::Protobuf(s), name)
        }
        _ => return Err(unknown()),
    };
    Ok(Plan {
        backend,
        table: LeafTable::default(),
        root: Branch::root(),
        limits,
        type_name,
        flat: Flat::Pending(None),
    })
}

impl Plan {
    /// ROS 2 types (as `pkg/Type`) the recording's schema did not define, decoded with the
    /// [standard definitions built in](crate::STANDARD_TYPES_SOURCE) instead (the message type
    /// itself first when it was one of them); empty for every other schema.
    pub fn standard_types(&self) -> &[String] {
        match &self.backend {
            Backend::Cdr(set) => &set.standard,
            _ => &[],
        }
    }

    /// Whether the recording names this ROS 2 message type without defining it, and no
    /// standard definition is built in: its messages decode only if they are empty ones.
    pub fn lacks_definition(&self) -> bool {
        matches!(&self.backend, Backend::Cdr(set) if set.undefined)
    }

    /// The numeric leaves learned so far; a leaf's slot is its index here. Slots never change.
    ///
    /// Leaves are learned as messages show them (list elements, JSON keys, struct pointers), so
    /// this grows during the first messages; [`Decoded::new_leaves`] tells the caller when.
    pub fn leaves(&self) -> &[Leaf] {
        &self.table.leaves
    }

    /// The slot of the leaf spelled `path`, if it has been seen.
    pub fn slot(&self, path: &str) -> Option<usize> {
        self.table.find(path)
    }

    /// The root type's name as the schema spells it.
    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    /// The limits this plan was compiled with.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Decodes one message's numeric leaves into `row` (reused across messages; no allocation
    /// once every shape has been seen). Leaves the message does not carry read as absent.
    ///
    /// On error the row holds whatever was decoded before the error; treat it as absent.
    pub fn decode(&mut self, bytes: &[u8], row: &mut Row) -> Result<Decoded, DecodeError> {
        let before = self.table.len();
        row.begin(before);
        if self.decode_shortcut(bytes, row) == Some(true) {
            return Ok(Decoded {
                new_leaves: before..before,
                clipped: false,
            });
        }
        self.walk(bytes, row)
    }

    /// [`Plan::decode`] by the general walk alone, for a caller that has tried
    /// [`Plan::decode_shortcut`] already.
    pub fn walk(&mut self, bytes: &[u8], row: &mut Row) -> Result<Decoded, DecodeError> {
        let before = self.table.len();
        row.begin(before);
        let limits = self.limits;
        let mut sink = Sink::new(&mut self.table, row, limits);
        let result = match &mut self.backend {
            Backend::Capnp(s) => s.decode(bytes, &mut self.root, &mut sink, &limits),
            Backend::Cdr(m) => m.decode(bytes, &mut self.root, &mut sink, &limits),
            Backend::Json => json::decode(bytes, &mut self.root, &mut sink, &limits),
            Backend::Protobuf(p) => p.decode(bytes, &mut self.root, &mut sink, &limits),
            Backend::Ros1(m) => m.decode_ros1(bytes, &mut self.root, &mut sink, &limits),
        };
        let clipped = sink.clipped;
        result?;
        self.try_flat();
        Ok(Decoded {
            new_leaves: before..self.table.len(),
            clipped,
        })
    }

    /// Decodes one message through the plan's compiled shortcut straight into `sink`, for a
    /// caller that keeps its own columns (a [`Row`] is one such sink; [`Plan::decode`] uses
    /// it). `None`: there is no shortcut yet, use [`Plan::walk`]. `Some(false)`: this
    /// message needs [`Plan::walk`], and `sink` may hold part of it: discard that.
    /// `Some(true)`: every leaf the message carries was put, each once, and no new leaf was
    /// learned; a slot not put is absent.
    #[inline]
    pub fn decode_shortcut<S: LeafSink>(&self, bytes: &[u8], sink: &mut S) -> Option<bool> {
        match &self.flat {
            Flat::Ready(program, _) => Some(program.decode(bytes, sink)),
            Flat::Packed(program, _) => Some(program.decode(bytes, sink)),
            Flat::Pending(_) | Flat::Never => None,
        }
    }

    /// After a general decode: builds the flat program once every leaf it needs is known.
    fn try_flat(&mut self) {
        let leaves = self.table.len();
        let stale = match self.flat {
            Flat::Pending(tried) => tried != Some(leaves),
            Flat::Ready(_, built) | Flat::Packed(_, built) => built != leaves,
            Flat::Never => false,
        };
        if !stale {
            return;
        }
        self.flat = match &self.backend {
            Backend::Capnp(schema) => match FlatProgram::build(schema, &self.root, &self.limits) {
                Ok(program) => Flat::Ready(program, leaves),
                Err(NotFlat::NotYet) => Flat::Pending(Some(leaves)),
                Err(NotFlat::Never) => Flat::Never,
            },
            // An undefined type's messages are checked one by one (MsgSet::check_defined).
            Backend::Cdr(set) if set.undefined => Flat::Never,
            Backend::Ros1(set) | Backend::Cdr(set) => {
                let framing = match &self.backend {
                    Backend::Ros1(_) => Framing::Ros1,
                    _ => Framing::CdrLe,
                };
                match ros_flat::Program::build(set, &self.root, &self.limits, framing) {
                    Ok(program) => Flat::Packed(program, leaves),
                    Err(NotFlat::NotYet) => Flat::Pending(Some(leaves)),
                    Err(NotFlat::Never) => Flat::Never,
                }
            }
            _ => Flat::Never,
        };
    }

    /// This plan with the flat shortcut switched off: the reference its tests compare against.
    #[cfg(test)]
    pub(crate) fn without_shortcut(mut self) -> Self {
        self.flat = Flat::Never;
        self
    }

    /// Whether decoding takes the flat shortcut now.
    #[cfg(test)]
    pub(crate) fn takes_shortcut(&self) -> bool {
        matches!(self.flat, Flat::Ready(..) | Flat::Packed(..))
    }

    /// Decodes one message into a full tree (text, data, enum names, unions, lists) for an
    /// inspector. Allocates; not for the plotting path.
    pub fn decode_tree(&self, bytes: &[u8]) -> Result<Value, DecodeError> {
        match &self.backend {
            Backend::Capnp(s) => s.tree(bytes, &self.limits),
            Backend::Cdr(m) => m.tree(bytes, &self.limits),
            Backend::Json => json::tree(bytes, &self.limits),
            Backend::Protobuf(p) => p.tree(bytes, &self.limits),
            Backend::Ros1(m) => m.tree_ros1(bytes, &self.limits),
        }
    }

    /// Decodes one message into `(path, value)` pairs, in decode order: a convenience for
    /// `bag cat --json`. Allocates; use [`Plan::decode`] with a reused [`Row`] for plotting.
    pub fn decode_fields(&mut self, bytes: &[u8]) -> Result<Vec<(String, Scalar)>, DecodeError> {
        let mut row = Row::new();
        self.decode(bytes, &mut row)?;
        Ok(row
            .present()
            .filter_map(|(slot, v)| Some((self.table.leaves.get(slot)?.path.clone(), v)))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_is_send() {
        fn send<T: Send>() {}
        send::<Plan>();
        send::<Row>();
    }

    #[test]
    fn unknown_pairs_are_classified() {
        let src = SchemaSource {
            message_encoding: "flatbuffer",
            schema_encoding: "flatbuffer",
            schema_name: "x",
            schema_data: b"",
        };
        let err = compile(&src).err();
        assert_eq!(
            err.map(|e| e.class()),
            Some(crate::ErrorClass::UnknownEncoding)
        );
    }
}
