//! Every message of every protobuf MCAP oracle (`../shared/oracles/protobuf-mcap`, written by
//! `mcap-protobuf-support` and the Foxglove SDK) decodes from the schema the file carries, and
//! every numeric leaf equals `expected.json` exactly.

mod common;
use common::{expected, oracles};

use decode::{ErrorClass, SchemaSource, compile};

#[test]
fn every_protobuf_message_matches_expected() {
    let Some(dir) = oracles::oracle_dir("protobuf-mcap") else {
        return;
    };
    let want = expected::load(&dir);
    let files: Vec<&String> = want["files"].as_object().expect("files").keys().collect();
    assert_eq!(files.len(), 2, "{files:?}");
    for name in files {
        let c = expected::check_mcap(&dir, name, &want);
        eprintln!("{name}: {c:?}");
        assert!(c.leaves > 500, "{name}: {c:?}");
    }
}

#[test]
fn an_unknown_type_name_is_a_clear_schema_error() {
    let Some(dir) = oracles::oracle_dir("protobuf-mcap") else {
        return;
    };
    let bytes = std::fs::read(dir.join("pb_alltypes_foxglove_zstd.mcap")).expect("read");
    let summary = mcap::Summary::read(&bytes)
        .expect("summary")
        .expect("has a summary");
    let schema = summary
        .schemas
        .values()
        .find(|s| s.name == "redline.test.AllTypes")
        .expect("AllTypes schema");
    let err = compile(&SchemaSource {
        message_encoding: "protobuf",
        schema_encoding: "protobuf",
        schema_name: "redline.test.NoSuchType",
        schema_data: &schema.data,
    })
    .expect_err("unknown type");
    assert_eq!(err.class(), ErrorClass::BadSchema);
    let text = err.to_string();
    assert!(
        text.contains("redline.test.NoSuchType") && text.contains("redline.test.AllTypes"),
        "{text}"
    );
    let garbage = compile(&SchemaSource {
        message_encoding: "protobuf",
        schema_encoding: "protobuf",
        schema_name: "redline.test.AllTypes",
        schema_data: b"\x0a\x05hello",
    })
    .expect_err("not a descriptor set");
    assert_eq!(garbage.class(), ErrorClass::BadSchema, "{garbage}");
}

/// The oracle's `redline.test.AllTypes` schema (a serialized FileDescriptorSet).
fn all_types_schema() -> Option<Vec<u8>> {
    let dir = oracles::oracle_dir("protobuf-mcap")?;
    let bytes = std::fs::read(dir.join("pb_alltypes_foxglove_zstd.mcap")).expect("read");
    let summary = mcap::Summary::read(&bytes).expect("summary")?;
    let schema = summary
        .schemas
        .values()
        .find(|s| s.name == "redline.test.AllTypes")?;
    Some(schema.data.to_vec())
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, number: u64, wire: u64) {
    varint(out, number << 3 | wire);
}

fn double(out: &mut Vec<u8>, number: u64, v: f64) {
    key(out, number, 1);
    out.extend_from_slice(&v.to_le_bytes());
}

fn len(out: &mut Vec<u8>, number: u64, body: &[u8]) {
    key(out, number, 2);
    varint(out, body.len() as u64);
    out.extend_from_slice(body);
}

fn fields(plan: &decode::Plan, row: &decode::Row) -> Vec<(String, decode::Scalar)> {
    let mut out: Vec<_> = row
        .present()
        .map(|(slot, v)| (plan.leaves()[slot].path.clone(), v))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Legal wire forms no writer in the oracle produces: a message field sent in two parts (they
/// merge), two members of one oneof (the last wins, the first leaves nothing), a packed field
/// sent unpacked and an unpacked one packed, a repeated field split in two runs.
#[test]
fn non_canonical_wire_forms_read_as_a_protobuf_library_reads_them() {
    use decode::Scalar::{Float, Int, UInt};
    let Some(schema) = all_types_schema() else {
        return;
    };
    let mut plan = compile(&SchemaSource {
        message_encoding: "protobuf",
        schema_encoding: "protobuf",
        schema_name: "redline.test.AllTypes",
        schema_data: &schema,
    })
    .expect("compiles");
    let mut msg = Vec::new();
    // position (18) in two parts: {x: 1}, then {y: 2}
    let mut part = Vec::new();
    double(&mut part, 1, 1.0);
    len(&mut msg, 18, &part);
    // set_target (29, a Vec3 oneof member) then set_gear (28): only set_gear remains
    len(&mut msg, 29, &part);
    key(&mut msg, 28, 0);
    varint(&mut msg, 3);
    part.clear();
    double(&mut part, 2, 2.0);
    len(&mut msg, 18, &part);
    // packed_doubles (19) unpacked, twice; unpacked_int64 (21) packed: [5, 6]
    double(&mut msg, 19, 0.5);
    double(&mut msg, 19, 0.25);
    len(&mut msg, 21, &[5, 6]);
    // packed_sint32 (20) in two packed runs: [-1], [1]
    len(&mut msg, 20, &[1]);
    len(&mut msg, 20, &[2]);
    let mut row = decode::Row::new();
    plan.decode(&msg, &mut row).expect("decodes");
    let got = fields(&plan, &row);
    let find = |p: &str| got.iter().find(|(n, _)| n == p).map(|(_, v)| *v);
    assert_eq!(find("position.x"), Some(Float(1.0)), "{got:?}");
    assert_eq!(find("position.y"), Some(Float(2.0)), "{got:?}");
    assert_eq!(find("position.z"), Some(Float(0.0)), "{got:?}");
    assert_eq!(find("set_gear"), Some(Int(3)), "{got:?}");
    assert_eq!(find("command.$which"), Some(UInt(28)), "{got:?}");
    assert_eq!(find("set_target.x"), None, "{got:?}");
    assert_eq!(find("packed_doubles[0]"), Some(Float(0.5)), "{got:?}");
    assert_eq!(find("packed_doubles[1]"), Some(Float(0.25)), "{got:?}");
    assert_eq!(find("unpacked_int64[0]"), Some(Int(5)), "{got:?}");
    assert_eq!(find("unpacked_int64[1]"), Some(Int(6)), "{got:?}");
    assert_eq!(find("packed_sint32[0]"), Some(Int(-1)), "{got:?}");
    assert_eq!(find("packed_sint32[1]"), Some(Int(1)), "{got:?}");
    // Implicit-presence scalars read 0; explicit ones (optional, stamp) are absent.
    assert_eq!(find("f_int32"), Some(Int(0)), "{got:?}");
    assert_eq!(find("opt_double"), None, "{got:?}");
    assert_eq!(find("stamp"), None, "{got:?}");
    // The same after a canonical message: nothing of the first stays.
    plan.decode(&[], &mut row).expect("empty message");
    let empty = fields(&plan, &row);
    assert!(
        empty.iter().all(|(p, v)| !p.contains('.')
            && !p.contains('[')
            && matches!(v, Int(0) | UInt(0) | Float(0.0))),
        "{empty:?}"
    );
    let tree = plan.decode_tree(&msg).expect("tree");
    assert_eq!(tree.at("position.y"), Some(&decode::Value::Float(2.0)));
    assert!(tree.at("set_target").is_none(), "{tree:?}");
}

/// Damaged payloads are errors, never panics or invented values.
#[test]
fn damaged_payloads_are_errors() {
    let Some(schema) = all_types_schema() else {
        return;
    };
    let mut plan = compile(&SchemaSource {
        message_encoding: "protobuf",
        schema_encoding: "protobuf",
        schema_name: "redline.test.AllTypes",
        schema_data: &schema,
    })
    .expect("compiles");
    let mut row = decode::Row::new();
    // f_double (2) cut short; a length past the end; field number 0; f_double as a varint
    for bad in [
        &[0x11, 1, 2][..],
        &[0x92, 0x01, 9, 1],
        &[0x00, 1],
        &[0x10, 1],
    ] {
        let err = plan.decode(bad, &mut row).expect_err("damaged");
        assert!(
            matches!(err.class(), ErrorClass::Truncated | ErrorClass::Corrupt),
            "{err}"
        );
    }
}
