//! ROS 2 CDR decoding checked against foxglove/rosmsg2-serialization's test vectors
//! (`../shared/oracles/foxglove-rosmsg2-serialization/vectors.json`).

mod common;
use common::{oracles, tree_check};

use decode::{Row, SchemaSource, Value, compile};
use serde_json::Value as Json;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// `nsec_alias`: the vector names Time's second field `nsec` (a reader option or a writer
/// alias) where the schema says `nanosec`.
fn matches(ours: &Value, want: &Json, nsec_alias: bool, path: &str) -> Result<(), String> {
    let fail = || Err(format!("{path}: ours {ours:?}, expected {want}"));
    match (ours, want) {
        (Value::Struct(_), Json::Object(map)) if map.contains_key("$bigint") => fail(),
        (Value::Struct(fields), Json::Object(map)) => {
            for (k, w) in map {
                let key = if nsec_alias && k == "nsec" && ours.field("nsec").is_none() {
                    "nanosec"
                } else {
                    k
                };
                let Some(v) = ours.field(key) else {
                    return Err(format!("{path}.{k}: missing in ours {fields:?}"));
                };
                matches(v, w, nsec_alias, &format!("{path}.{k}"))?;
            }
            Ok(())
        }
        (v, Json::Object(map)) if map.contains_key("$bigint") => {
            let want: i128 = map["$bigint"]
                .as_str()
                .and_then(|s| s.parse().ok())
                .expect("bigint");
            match v {
                Value::Int(a) if i128::from(*a) == want => Ok(()),
                Value::UInt(a) if i128::from(*a) == want => Ok(()),
                _ => fail(),
            }
        }
        (Value::List(items), Json::Array(w)) => {
            if items.len() != w.len() {
                return fail();
            }
            for (i, (v, w)) in items.iter().zip(w).enumerate() {
                matches(v, w, nsec_alias, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        (Value::Data(d), Json::Array(w)) => {
            let w: Vec<u64> = w.iter().map(|x| x.as_u64().expect("byte")).collect();
            if d.iter().map(|b| u64::from(*b)).eq(w) {
                Ok(())
            } else {
                fail()
            }
        }
        (Value::Text(s), Json::String(w)) if s == w => Ok(()),
        (Value::Bool(b), Json::Bool(w)) if b == w => Ok(()),
        (Value::Int(a), Json::Number(n)) if n.as_i64() == Some(*a) => Ok(()),
        (Value::UInt(a), Json::Number(n)) if n.as_u64() == Some(*a) => Ok(()),
        (Value::Float(a), Json::Number(n)) if n.as_f64() == Some(*a) => Ok(()),
        _ => fail(),
    }
}

#[test]
fn every_read_vector_decodes_to_its_expected_value() {
    let Some(dir) = oracles::oracle_dir("foxglove-rosmsg2-serialization") else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("vectors.json")).expect("vectors.json");
    let doc: Json = serde_json::from_str(&text).expect("json");
    let cases = doc["cases"].as_array().expect("cases");
    let (mut read, mut write, mut leaves) = (0, 0, 0);
    for case in cases {
        let kind = case["kind"].as_str().expect("kind");
        let name = case["test"].as_str().expect("test");
        let (hex_key, want) = match kind {
            "read" => ("cdr_hex", &case["expected"]),
            _ => ("expected_cdr_hex", &case["message"]),
        };
        let Some(bytes) = case[hex_key].as_str().map(hex) else {
            continue;
        };
        let format = case["format"].as_str().expect("format");
        let nsec_alias =
            kind == "write" || case["options"]["timeType"].as_str() == Some("sec,nsec");
        let mut plan = compile(&SchemaSource {
            message_encoding: "cdr",
            schema_encoding: format,
            schema_name: "",
            schema_data: case["definition"].as_str().expect("definition").as_bytes(),
        })
        .unwrap_or_else(|e| panic!("{name}: compile: {e}"));
        let tree = plan.decode_tree(&bytes);
        if case["expect_error"]
            .as_str()
            .is_some_and(|e| e.contains("wstring"))
        {
            // Upstream refuses wstring as implementation-defined; we read it as a uint32
            // count of UTF-16 units. These bytes then hold an empty wstring (or list).
            let tree = tree.unwrap_or_else(|e| panic!("{name}: {e}"));
            let field = tree.field("field").expect("field");
            assert!(
                matches!(field, Value::Text(t) if t.is_empty())
                    || matches!(field, Value::List(l) if l.is_empty()),
                "{name}: {field:?}"
            );
            continue;
        }
        assert!(
            case["expect_error"].is_null() || case["expect_error"] == false,
            "{name}: unhandled error case"
        );
        let tree = tree.unwrap_or_else(|e| panic!("{name}: decode_tree: {e}"));
        matches(&tree, want, nsec_alias, "").unwrap_or_else(|e| panic!("{name} ({kind}): {e}"));
        let mut row = Row::new();
        plan.decode(&bytes, &mut row)
            .unwrap_or_else(|e| panic!("{name}: decode: {e}"));
        leaves += tree_check::leaves_match_tree(&plan, &row, &tree);
        if kind == "read" {
            read += 1
        } else {
            write += 1
        }
    }
    eprintln!(
        "{read} read vectors and {write} write vectors (read back), {leaves} numeric leaves checked"
    );
    assert_eq!(
        read, 68,
        "every read vector except the 2 wstring error cases"
    );
}
