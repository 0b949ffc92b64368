//! JSON messages: numeric and boolean leaves by the shared path spelling.

use decode::{ErrorClass, LeafKind, Plan, Row, Scalar, SchemaSource, Value, compile};

fn plan() -> Plan {
    compile(&SchemaSource {
        message_encoding: "json",
        schema_encoding: "jsonschema",
        schema_name: "demo.Status",
        schema_data: b"{\"type\":\"object\"}",
    })
    .expect("compile")
}

#[test]
fn numbers_and_bools_become_leaves_strings_and_nulls_do_not() {
    let mut plan = plan();
    let mut row = Row::new();
    let msg = br#"{"speed": 12.5, "ok": true, "name": "x", "gear": -2, "big": 18446744073709551615,
                  "pose": {"x": 1, "q": [0.5, 0.25]}, "none": null, "arr": [{"v": 3}, {"v": 4}]}"#;
    let d = plan.decode(msg, &mut row).expect("decode");
    let paths: Vec<&str> = plan.leaves().iter().map(|l| l.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "speed",
            "ok",
            "gear",
            "big",
            "pose.x",
            "pose.q[0]",
            "pose.q[1]",
            "arr[0].v",
            "arr[1].v"
        ]
    );
    assert_eq!(d.new_leaves, 0..9);
    let get = |plan: &Plan, row: &Row, p: &str| row.get(plan.slot(p).expect(p));
    assert_eq!(get(&plan, &row, "speed"), Some(Scalar::Float(12.5)));
    assert_eq!(get(&plan, &row, "ok"), Some(Scalar::UInt(1)));
    assert_eq!(get(&plan, &row, "gear"), Some(Scalar::Int(-2)));
    assert_eq!(get(&plan, &row, "big"), Some(Scalar::UInt(u64::MAX)));
    assert_eq!(get(&plan, &row, "arr[1].v"), Some(Scalar::UInt(4)));
    assert_eq!(plan.leaves()[1].kind, LeafKind::Bool);

    // Keys in another order, one missing, a shorter array: absent, not 0; nothing new learned.
    let d = plan
        .decode(br#"{"pose": {"q": [1.5], "x": 2}, "speed": 3}"#, &mut row)
        .expect("decode");
    assert!(d.new_leaves.is_empty());
    assert_eq!(get(&plan, &row, "speed"), Some(Scalar::UInt(3)));
    assert_eq!(get(&plan, &row, "pose.x"), Some(Scalar::UInt(2)));
    assert_eq!(get(&plan, &row, "pose.q[0]"), Some(Scalar::Float(1.5)));
    assert_eq!(get(&plan, &row, "pose.q[1]"), None);
    assert_eq!(get(&plan, &row, "ok"), None);
    assert_eq!(row.present_count(), 3);
}

#[test]
fn tree_keeps_key_order_and_all_values() {
    let plan = plan();
    let tree = plan
        .decode_tree(br#"{"b": "text", "a": [1, -1, 1.5, null, false]}"#)
        .expect("tree");
    assert_eq!(
        tree,
        Value::Struct(vec![
            ("b".into(), Value::Text("text".into())),
            (
                "a".into(),
                Value::List(vec![
                    Value::UInt(1),
                    Value::Int(-1),
                    Value::Float(1.5),
                    Value::Null,
                    Value::Bool(false)
                ])
            ),
        ])
    );
}

#[test]
fn bad_json_is_classified() {
    let mut plan = plan();
    let mut row = Row::new();
    assert_eq!(
        plan.decode(br#"{"a": 1"#, &mut row).unwrap_err().class(),
        ErrorClass::Truncated
    );
    assert_eq!(
        plan.decode(br#"{"a": 1}}"#, &mut row).unwrap_err().class(),
        ErrorClass::Corrupt
    );
    assert_eq!(
        plan.decode_tree(b"{'a': 1}").unwrap_err().class(),
        ErrorClass::Corrupt
    );
    let deep = "[".repeat(200) + &"]".repeat(200);
    assert!(plan.decode(deep.as_bytes(), &mut row).is_err());
}

#[test]
fn json_without_schema_compiles() {
    let p = compile(&SchemaSource {
        message_encoding: "json",
        schema_encoding: "",
        schema_name: "",
        schema_data: b"",
    });
    assert!(p.is_ok());
}
