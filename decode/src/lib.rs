//! Schema + bytes -> flat numeric signals.
//!
//! Decoding is driven by the schema a recording carries (the MCAP Schema record), not by code
//! generated at build time, so any numeric field of any recording can be plotted:
//!
//! | message encoding | schema encoding | schema name | schema data |
//! |---|---|---|---|
//! | `capnproto` | `capnproto` | `file.capnp:Type` (or a type id) | serialized `CodeGeneratorRequest` |
//! | `cdr` | `ros2msg` (or `ros2idl`) | `pkg/msg/Type` | `.msg` text with `MSG:` sections |
//! | `ros1` | `ros1msg` | `pkg/Type` | `.msg` text with `MSG:` sections |
//! | `protobuf` | `protobuf` | full message name, `pkg.Type` | serialized `FileDescriptorSet` |
//! | `json` | `jsonschema` or empty | anything | ignored: leaves come from the messages |
//!
//! [`compile`] turns a schema into a [`Plan`]. [`Plan::decode`] writes one message's numeric
//! leaves into a caller-owned [`Row`] reused across messages; [`Plan::leaves`] lists the
//! leaves (stable slot = index) with their paths. [`Plan::decode_tree`] gives the whole message
//! as a [`Value`] tree for an inspector.
//!
//! A Cap'n Proto schema without lists (structs, groups, unions: most telemetry) is decoded
//! through a shortcut once its leaves are known: the known leaves are read straight from the
//! message's one segment. Any message it cannot read that way (several segments, far pointers,
//! damage, a leaf not seen before) goes to the general walk through the capnp crate's readers,
//! so both give the same row; see `capnp_flat.rs`.
//!
//! Path spelling (shared by the app and `bag cat`): field names as the schema writes them
//! joined by `.`; list elements `name[i]`; a union's discriminant `<parent>.$which` (`$which` at
//! the top); enums and bools as numbers; a ROS 2 `builtin_interfaces/Time` (or `Duration`)
//! field `t` yields `t.sec`, `t.nanosec` and `t` in nanoseconds. ROS 1: a `time` field `t`
//! yields `t.secs`, `t.nsecs` and `t` in nanoseconds, a `duration` only its parts; `byte` is
//! signed, `char` unsigned. Protobuf: a `google.protobuf.Timestamp` field `t` yields
//! `t.seconds`, `t.nanos` and `t` in nanoseconds (a `Duration` only its parts); a oneof yields
//! the set member's leaves and `<oneof>.$which` = its field number; unset explicit-presence
//! fields (proto3 `optional`, proto2, message fields) are absent, implicit-presence scalars
//! read 0 when not on the wire. Strings, bytes and maps are in the tree only.
//!
//! ```
//! use decode::{compile, Row, SchemaSource};
//!
//! let schema = "builtin_interfaces/Time stamp\nfloat64[] position\n";
//! let mut plan = compile(&SchemaSource {
//!     message_encoding: "cdr",
//!     schema_encoding: "ros2msg",
//!     schema_name: "demo_msgs/msg/Joints",
//!     schema_data: schema.as_bytes(),
//! })?;
//!
//! // CDR little endian: stamp {sec 1, nanosec 5}, position [0.5, -2.0]
//! // (header, sec, nanosec, count, 4 bytes of padding to align the float64s)
//! let mut msg = vec![0, 1, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0];
//! msg.extend_from_slice(&0.5f64.to_le_bytes());
//! msg.extend_from_slice(&(-2.0f64).to_le_bytes());
//!
//! let mut row = Row::new();
//! let decoded = plan.decode(&msg, &mut row)?;
//! assert_eq!(decoded.new_leaves, 0..5); // first message: leaves learned
//! let slot = plan.slot("position[1]").unwrap();
//! assert_eq!(row.get_f64(slot), Some(-2.0));
//! assert_eq!(row.get_f64(plan.slot("stamp").unwrap()), Some(1_000_000_005.0));
//!
//! // A shorter list: position[1] is absent, not 0.
//! let mut short = vec![0, 1, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
//! short.extend_from_slice(&0.25f64.to_le_bytes());
//! assert!(plan.decode(&short, &mut row)?.new_leaves.is_empty());
//! assert_eq!(row.get_f64(slot), None);
//! # Ok::<(), decode::DecodeError>(())
//! ```
//!
//! No file I/O, threads or UI here: the crate only turns bytes into values.

#![warn(missing_docs)]

mod capnp_decode;
mod capnp_flat;
mod capnp_schema;
mod cdr;
mod error;
pub mod export;
mod json;
mod leaves;
mod plan;
mod protobuf;
mod ros1;
mod ros2idl;
mod ros2msg;
mod ros_flat;
mod row;
mod standard_types;
mod value;

pub use error::{DecodeError, ErrorClass};
pub use leaves::{Leaf, LeafKind, Limits};
pub use plan::{Decoded, Plan, SchemaSource, compile, compile_with};
pub use ros2msg::standard_definition;
pub use row::{LeafSink, Row};
pub use standard_types::STANDARD_TYPES_SOURCE;
pub use value::{Scalar, Value};
