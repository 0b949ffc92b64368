//! Cap'n Proto decoding from the recording's own schema, checked against the Cap'n Proto
//! project's test messages (`../shared/oracles/capnproto`).

mod common;
use common::tree_check::leaves_match_tree;
use common::{capnp_text, oracles};

use std::path::Path;

use decode::{ErrorClass, Plan, Row, Scalar, SchemaSource, Value, compile};

/// `capnp compile -o- -I capnproto/capnp-v0.9.2 capnp/test.capnp` (Debian capnp 0.9.2): our
/// own build artifact of the oracle's schema, kept so tests need no compiler.
const TEST_CGR: &[u8] = include_bytes!("fixtures/capnp-test.cgr");

fn plan(name: &str) -> Plan {
    compile(&SchemaSource {
        message_encoding: "capnproto",
        schema_encoding: "capnproto",
        schema_name: name,
        schema_data: TEST_CGR,
    })
    .unwrap_or_else(|e| panic!("compile {name}: {e}"))
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn test_all_types_binary_and_segmented_match_pretty_txt() {
    let Some(dir) = oracles::oracle_dir("capnproto/capnp/testdata") else {
        return;
    };
    let want = capnp_text::parse(&String::from_utf8(read(&dir, "pretty.txt")).expect("utf8"));
    let mut plan = plan("capnp/test.capnp:TestAllTypes");
    assert_eq!(plan.type_name(), "capnp/test.capnp:TestAllTypes");
    for file in ["binary", "segmented"] {
        let bytes = read(&dir, file);
        let tree = plan
            .decode_tree(&bytes)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        capnp_text::compare(&tree, &want, file).unwrap_or_else(|e| panic!("{file}: {e}"));

        let mut row = Row::new();
        plan.decode(&bytes, &mut row)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let checked = leaves_match_tree(&plan, &row, &tree);
        assert!(checked > 100, "{file}: only {checked} numeric leaves");
        let get = |p: &str| row.get(plan.slot(p).unwrap_or_else(|| panic!("no leaf {p}")));
        assert_eq!(get("int64Field"), Some(Scalar::Int(-123_456_789_012_345)));
        assert_eq!(
            get("uInt64Field"),
            Some(Scalar::UInt(12_345_678_901_234_567_890))
        );
        assert_eq!(get("float64Field"), Some(Scalar::Float(-1.23e47)));
        assert_eq!(
            get("structField.structField.int8Field"),
            Some(Scalar::Int(0))
        );
        assert_eq!(get("structField.int64List[3]"), Some(Scalar::Int(i64::MAX)));
        assert_eq!(get("boolList[3]"), Some(Scalar::UInt(1)));
        assert_eq!(get("enumField"), Some(Scalar::UInt(5))); // corge
        assert!(get("float32List[3]").is_some_and(|v| v.as_f64().is_nan()));
    }
    eprintln!("checked {} text values per file", capnp_text::count(&want));
}

#[test]
fn unaligned_payload_slices_decode_the_same() {
    let Some(dir) = oracles::oracle_dir("capnproto/capnp/testdata") else {
        return;
    };
    let plan = plan("capnp/test.capnp:TestAllTypes");
    let bytes = read(&dir, "segmented");
    let aligned = plan.decode_tree(&bytes).expect("aligned");
    for shift in 1..8 {
        let mut buf = vec![0u8; shift];
        buf.extend_from_slice(&bytes);
        let tree = plan.decode_tree(&buf[shift..]).expect("unaligned");
        assert_eq!(format!("{tree:?}"), format!("{aligned:?}"), "shift {shift}");
    }
}

/// The lists message decoded completely: bit-, byte- and word-encoded struct lists, lists of
/// lists of numbers, text and structs. Expected values are TestLists' own defaults in
/// test.capnp (the message is their encoding); when the `capnp` tool is installed its
/// `decode` output is checked as well.
#[test]
fn lists_binary_decodes_completely() {
    let Some(dir) = oracles::oracle_dir("capnproto/capnp/testdata") else {
        return;
    };
    let bytes = read(&dir, "lists.binary");
    let mut plan = plan("capnp/test.capnp:TestLists");
    let tree = plan.decode_tree(&bytes).expect("tree");
    let zeros = "voidField = void, boolField = false, int8Field = 0, int16Field = 0, \
        int64Field = 0, uInt8Field = 0, uInt16Field = 0, uInt32Field = 0, uInt64Field = 0, \
        float32Field = 0, float64Field = 0, enumField = foo, interfaceField = void";
    let want = format!(
        "( list0 = [(f = void), (f = void)],
           list1 = [(f = true), (f = false), (f = true), (f = true)],
           list8 = [(f = 123), (f = 45)],
           list16 = [(f = 12345), (f = 6789)],
           list32 = [(f = 123456789), (f = 234567890)],
           list64 = [(f = 1234567890123456), (f = 2345678901234567)],
           listP = [(f = \"foo\"), (f = \"bar\")],
           int32ListList = [[1, 2, 3], [4, 5], [12341234]],
           textListList = [[\"foo\", \"bar\"], [\"baz\"], [\"qux\", \"corge\"]],
           structListList = [[(int32Field = 123, {zeros}), (int32Field = 456, {zeros})],
                             [(int32Field = 789, {zeros})]] )"
    );
    capnp_text::compare(&tree, &capnp_text::parse(&want), "lists").expect("matches");

    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/oracles/capnproto/capnp-v0.9.2");
    match std::process::Command::new("capnp")
        .args(["decode", "-I.", "capnp/test.capnp", "TestLists"])
        .current_dir(&root)
        .stdin(std::fs::File::open(dir.join("lists.binary")).expect("open"))
        .output()
    {
        Ok(out) if out.status.success() => {
            let text = capnp_text::parse(&String::from_utf8(out.stdout).expect("utf8"));
            capnp_text::compare(&tree, &text, "capnp decode").expect("matches capnp decode");
        }
        _ => eprintln!("note: `capnp` not installed; skipped the cross-check with `capnp decode`"),
    }

    let mut row = Row::new();
    plan.decode(&bytes, &mut row).expect("numeric");
    leaves_match_tree(&plan, &row, &tree);
    let get = |p: &str| row.get(plan.slot(p).unwrap_or_else(|| panic!("no leaf {p}")));
    assert_eq!(get("list1[1].f"), Some(Scalar::UInt(0)));
    assert_eq!(get("list1[3].f"), Some(Scalar::UInt(1)));
    assert_eq!(
        get("list64[1].f"),
        Some(Scalar::UInt(2_345_678_901_234_567))
    );
    assert_eq!(get("int32ListList[1][1]"), Some(Scalar::Int(5)));
    assert_eq!(
        get("structListList[1][0].int32Field"),
        Some(Scalar::Int(789))
    );
}

/// TestDefaults mirrors TestAllTypes' layout with the same values as defaults, so the
/// TestAllTypes message read as TestDefaults is all zeros (XOR-encoded defaults, floats too),
/// and an empty struct (a data section shorter than the schema) reads as the defaults.
#[test]
fn defaults_are_xor_encoded_and_short_sections_read_as_defaults() {
    let Some(dir) = oracles::oracle_dir("capnproto/capnp/testdata") else {
        return;
    };
    let mut plan = plan("TestDefaults");
    let mut row = Row::new();
    plan.decode(&read(&dir, "binary"), &mut row)
        .expect("decode");
    let get = |plan: &Plan, row: &Row, p: &str| {
        row.get(plan.slot(p).unwrap_or_else(|| panic!("no leaf {p}")))
    };
    for p in ["int8Field", "int16Field", "int32Field", "int64Field"] {
        assert_eq!(get(&plan, &row, p), Some(Scalar::Int(0)), "{p}");
    }
    for p in [
        "boolField",
        "uInt8Field",
        "uInt16Field",
        "uInt32Field",
        "uInt64Field",
    ] {
        assert_eq!(get(&plan, &row, p), Some(Scalar::UInt(0)), "{p}");
    }
    assert_eq!(get(&plan, &row, "float32Field"), Some(Scalar::Float(0.0)));
    assert_eq!(get(&plan, &row, "float64Field"), Some(Scalar::Float(0.0)));

    // Segment table (1 segment, 1 word) + root pointer to a struct with no data or pointers.
    let empty = [0u8, 0, 0, 0, 1, 0, 0, 0, 0xfc, 0xff, 0xff, 0xff, 0, 0, 0, 0];
    plan.decode(&empty, &mut row).expect("empty struct");
    assert_eq!(get(&plan, &row, "int8Field"), Some(Scalar::Int(-123)));
    assert_eq!(
        get(&plan, &row, "uInt64Field"),
        Some(Scalar::UInt(12_345_678_901_234_567_890))
    );
    assert_eq!(
        get(&plan, &row, "float32Field"),
        Some(Scalar::Float(1234.5))
    );
    assert_eq!(
        get(&plan, &row, "float64Field"),
        Some(Scalar::Float(-123e45))
    );
    assert_eq!(get(&plan, &row, "boolField"), Some(Scalar::UInt(1)));
    assert_eq!(
        get(&plan, &row, "structField.int8Field"),
        None,
        "null struct pointer is absent"
    );
}

/// Any valid message read as TestUnion: each union shows its `$which` and at most the one arm
/// it names (an unknown discriminant shows no arm). Exact union values are checked with our
/// own schema in `capnp_telemetry.rs`.
#[test]
fn unions_show_which_and_at_most_the_named_arm() {
    let Some(dir) = oracles::oracle_dir("capnproto/capnp/testdata") else {
        return;
    };
    let mut plan = plan("capnp/test.capnp:TestUnion");
    let bytes = read(&dir, "binary");
    let tree = plan.decode_tree(&bytes).expect("tree");
    let mut row = Row::new();
    plan.decode(&bytes, &mut row).expect("rows");
    for u in ["union0", "union1", "union2", "union3"] {
        let group = tree.field(u).expect("union group");
        let Some(Value::Enum { value, name }) = group.field("$which") else {
            panic!("{u}: no $which")
        };
        let Value::Struct(fields) = group else {
            panic!("{u}: not a struct")
        };
        let arms: Vec<&str> = fields.iter().skip(1).map(|(n, _)| n.as_str()).collect();
        match name {
            Some(n) => assert_eq!(arms, [n.as_str()], "{u}"),
            None => assert!(arms.is_empty(), "{u}: {arms:?}"),
        }
        let slot = plan.slot(&format!("{u}.$which")).expect("which leaf");
        assert_eq!(row.get(slot), Some(Scalar::UInt(u64::from(*value))));
    }
}

#[test]
fn schema_names_resolve_or_fail_classified() {
    for name in [
        "capnp/test.capnp:TestAllTypes",
        "test.capnp:TestAllTypes",
        "TestAllTypes",
        "0xa0a8f314b80b63fd",
    ] {
        let p = compile(&SchemaSource {
            message_encoding: "capnproto",
            schema_encoding: "capnproto",
            schema_name: name,
            schema_data: TEST_CGR,
        });
        assert!(p.is_ok(), "{name}: {:?}", p.err());
    }
    for name in ["NoSuchType", "other.capnp:TestAllTypes"] {
        let e = compile(&SchemaSource {
            message_encoding: "capnproto",
            schema_encoding: "capnproto",
            schema_name: name,
            schema_data: TEST_CGR,
        })
        .expect_err(name);
        assert_eq!(e.class(), ErrorClass::BadSchema, "{name}");
    }
    let e = compile(&SchemaSource {
        message_encoding: "capnproto",
        schema_encoding: "capnproto",
        schema_name: "x.capnp:T",
        schema_data: b"not a request",
    })
    .expect_err("garbage");
    assert_eq!(e.class(), ErrorClass::BadSchema);
}

/// The committed request is what the Debian compiler makes of the oracle's test.capnp.
#[test]
fn fixture_matches_the_compiler_output() {
    let Some(dir) = oracles::oracle_dir("capnproto/capnp-v0.9.2") else {
        return;
    };
    match std::process::Command::new("capnp")
        .args(["compile", "-o-", "-I.", "capnp/test.capnp"])
        .current_dir(&dir)
        .output()
    {
        Ok(out) if out.status.success() => {
            assert!(out.stdout == TEST_CGR, "fixtures/capnp-test.cgr is stale")
        }
        _ => eprintln!("note: `capnp` not installed; fixture not re-checked"),
    }
}
