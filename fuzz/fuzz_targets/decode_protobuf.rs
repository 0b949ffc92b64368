//! `cargo +nightly fuzz run decode_protobuf`: protobuf decoding must never panic, whatever the
//! payload bytes (or, with a first byte of 0xff, whatever the FileDescriptorSet bytes).
//!
//! Seed the corpus with a real message for depth, e.g.
//! `mkdir -p corpus/decode_protobuf && cp ../decode/tests/fixtures/protobuf-alltypes.bin corpus/decode_protobuf/`.

#![no_main]

use decode::{Row, SchemaSource, compile};
use libfuzzer_sys::fuzz_target;

/// `redline.test.AllTypes` (every scalar type, enum, nested, packed/unpacked repeated, oneof,
/// map, Timestamp, proto3 optional).
const FDS: &[u8] = include_bytes!("../../decode/tests/fixtures/protobuf-alltypes.fds");

fn source(schema: &[u8]) -> SchemaSource<'_> {
    SchemaSource {
        message_encoding: "protobuf",
        schema_encoding: "protobuf",
        schema_name: "redline.test.AllTypes",
        schema_data: schema,
    }
}

fuzz_target!(|data: &[u8]| {
    let (schema, payload) = match data.split_first() {
        // The schema itself is hostile; decode a fixed small payload with it.
        Some((0xff, rest)) => (rest, &[0x08, 0x01, 0x12, 0x00][..]),
        _ => (FDS, data),
    };
    let Ok(mut plan) = compile(&source(schema)) else {
        return;
    };
    let mut row = Row::new();
    if plan.decode(payload, &mut row).is_ok() {
        // Every present leaf has a path; the tree decodes the same bytes.
        for (slot, _) in row.present() {
            assert!(plan.leaves().get(slot).is_some());
        }
    }
    let _ = plan.decode_tree(payload);
});
