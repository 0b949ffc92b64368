//! Helpers shared by the decode crate's tests, pulled in with `mod common;` (as the mcap crate's
//! tests do). Not every test file uses every helper.
#![allow(dead_code)]

/// Locating `../shared/oracles` (beside the workspace) for oracle tests.
pub mod oracles {
    use std::path::PathBuf;

    /// The oracle folder `sub`, or `None` (with a printed note) when the oracles are not present.
    /// Under `CI=true` a missing folder is a failure, not a skip.
    pub fn oracle_dir(sub: &str) -> Option<PathBuf> {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/oracles")
            .join(sub);
        if dir.is_dir() {
            return Some(dir);
        }
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!(
                "oracle folder {} is missing (required under CI=true)",
                dir.display()
            );
        }
        eprintln!("skipping: oracle folder {} not found", dir.display());
        None
    }
}

/// Every numeric leaf a row holds equals the value at the same path in the tree.
pub mod tree_check {
    use decode::{Plan, Row, Scalar, Value};

    /// Checks each present leaf against the tree and returns how many were checked. Time leaves
    /// (`stamp` = `stamp.sec * 1e9 + stamp.nanosec`) are checked against their parts.
    pub fn leaves_match_tree(plan: &Plan, row: &Row, tree: &Value) -> usize {
        let mut checked = 0;
        for (slot, got) in row.present() {
            let path = &plan.leaves()[slot].path;
            let want = tree
                .at(path)
                .unwrap_or_else(|| panic!("{path} not in tree {tree:?}"));
            let same = match (got, want) {
                (Scalar::Int(a), Value::Int(b)) => a == *b,
                (Scalar::UInt(a), Value::UInt(b)) => a == *b,
                (Scalar::UInt(a), Value::Bool(b)) => a == u64::from(*b),
                (Scalar::UInt(a), Value::Enum { value, .. }) => a == u64::from(*value),
                (Scalar::Float(a), Value::Float(b)) => a == *b || (a.is_nan() && b.is_nan()),
                (Scalar::Int(ns), Value::Struct(f)) => match f.as_slice() {
                    [(_, Value::Int(s)), (_, Value::UInt(n))] => {
                        ns == s * 1_000_000_000 + *n as i64
                    }
                    _ => false,
                },
                (Scalar::UInt(a), Value::Data(d)) => {
                    // a byte of a uint8 array: `path` ends in `[i]`
                    let i: usize = path
                        .rsplit('[')
                        .next()
                        .and_then(|s| s.strip_suffix(']'))
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(usize::MAX);
                    d.get(i).is_some_and(|b| u64::from(*b) == a)
                }
                _ => false,
            };
            assert!(same, "{path}: row {got:?} vs tree {want:?}");
            checked += 1;
        }
        checked
    }
}

/// A reader for Cap'n Proto's text format (as `capnp decode` and pycapnp print it), and a
/// comparison of a parsed text value against a decoded [`decode::Value`].
pub mod capnp_text {
    use decode::Value;

    #[derive(Debug, Clone, PartialEq)]
    pub enum Text {
        Struct(Vec<(String, Text)>),
        List(Vec<Text>),
        Str(Vec<u8>),
        Num(String),
        Ident(String),
    }

    pub fn parse(s: &str) -> Text {
        let mut p = P {
            b: s.as_bytes(),
            i: 0,
        };
        let v = p.value();
        p.ws();
        assert_eq!(p.i, p.b.len(), "trailing text at byte {}", p.i);
        v
    }

    struct P<'a> {
        b: &'a [u8],
        i: usize,
    }

    impl P<'_> {
        fn ws(&mut self) {
            while self.b.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
                self.i += 1;
            }
        }

        fn peek(&mut self) -> u8 {
            self.ws();
            self.b.get(self.i).copied().unwrap_or(0)
        }

        fn expect(&mut self, c: u8) {
            assert_eq!(
                self.peek(),
                c,
                "expected {:?} at byte {}",
                c as char,
                self.i
            );
            self.i += 1;
        }

        fn word(&mut self) -> String {
            self.ws();
            let start = self.i;
            while self
                .b
                .get(self.i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || b"_.-+".contains(c))
            {
                self.i += 1;
            }
            String::from_utf8(self.b[start..self.i].to_vec()).expect("ascii")
        }

        fn value(&mut self) -> Text {
            match self.peek() {
                b'(' => {
                    self.i += 1;
                    let mut fields = Vec::new();
                    while self.peek() != b')' {
                        let name = self.word();
                        self.expect(b'=');
                        fields.push((name, self.value()));
                        if self.peek() == b',' {
                            self.i += 1;
                        }
                    }
                    self.i += 1;
                    Text::Struct(fields)
                }
                b'[' => {
                    self.i += 1;
                    let mut items = Vec::new();
                    while self.peek() != b']' {
                        items.push(self.value());
                        if self.peek() == b',' {
                            self.i += 1;
                        }
                    }
                    self.i += 1;
                    Text::List(items)
                }
                b'"' => {
                    self.i += 1;
                    let mut out = Vec::new();
                    loop {
                        let c = self.b[self.i];
                        self.i += 1;
                        match c {
                            b'"' => break,
                            b'\\' => {
                                let e = self.b[self.i];
                                self.i += 1;
                                match e {
                                    b'n' => out.push(b'\n'),
                                    b't' => out.push(b'\t'),
                                    b'r' => out.push(b'\r'),
                                    b'0' => out.push(0),
                                    b'x' => {
                                        let h = std::str::from_utf8(&self.b[self.i..self.i + 2])
                                            .expect("hex");
                                        out.push(u8::from_str_radix(h, 16).expect("hex"));
                                        self.i += 2;
                                    }
                                    other => out.push(other),
                                }
                            }
                            c => out.push(c),
                        }
                    }
                    Text::Str(out)
                }
                c if c.is_ascii_digit() || c == b'-' => Text::Num(self.word()),
                _ => {
                    let w = self.word();
                    match w.as_str() {
                        "inf" | "nan" => Text::Num(w),
                        _ => Text::Ident(w),
                    }
                }
            }
        }
    }

    fn float_eq(ours: f64, text: &str) -> bool {
        let want: f64 = match text {
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            "nan" | "-nan" => f64::NAN,
            t => t.parse().expect("float text"),
        };
        if want.is_nan() {
            return ours.is_nan();
        }
        ours == want || (ours as f32) == (want as f32)
    }

    /// Checks `ours` against the text rendering; null pointers (omitted in text) are skipped.
    pub fn compare(ours: &Value, want: &Text, path: &str) -> Result<(), String> {
        let fail = |what: &str| Err(format!("{path}: {what}: ours {ours:?}, text {want:?}"));
        match (ours, want) {
            (Value::Struct(fields), Text::Struct(expected)) => {
                for (name, w) in expected {
                    let Some(v) = ours.field(name) else {
                        return Err(format!("{path}.{name}: missing in ours"));
                    };
                    compare(v, w, &format!("{path}.{name}"))?;
                }
                for (name, v) in fields {
                    let shown = expected.iter().any(|(n, _)| n == name);
                    if !shown && !matches!(v, Value::Null) && name != "$which" {
                        return Err(format!("{path}.{name}: ours has {v:?}, text omits it"));
                    }
                }
                Ok(())
            }
            (Value::List(items), Text::List(expected)) => {
                if items.len() != expected.len() {
                    return fail("list length");
                }
                for (i, (v, w)) in items.iter().zip(expected).enumerate() {
                    compare(v, w, &format!("{path}[{i}]"))?;
                }
                Ok(())
            }
            (Value::Text(s), Text::Str(b)) if s.as_bytes() == b.as_slice() => Ok(()),
            (Value::Data(d), Text::Str(b)) if d == b => Ok(()),
            (Value::Void, Text::Ident(w)) if w == "void" => Ok(()),
            (Value::Bool(b), Text::Ident(w)) if w == if *b { "true" } else { "false" } => Ok(()),
            (Value::Enum { name: Some(n), .. }, Text::Ident(w)) if n == w => Ok(()),
            (Value::Int(v), Text::Num(t)) if t.parse::<i128>() == Ok(i128::from(*v)) => Ok(()),
            (Value::UInt(v), Text::Num(t)) if t.parse::<i128>() == Ok(i128::from(*v)) => Ok(()),
            (Value::Float(v), Text::Num(t)) if float_eq(*v, t) => Ok(()),
            _ => fail("differs"),
        }
    }

    /// Counts the leaves of a text value (for reporting how much was checked).
    pub fn count(t: &Text) -> usize {
        match t {
            Text::Struct(f) => f.iter().map(|(_, v)| count(v)).sum(),
            Text::List(items) => items.iter().map(count).sum(),
            _ => 1,
        }
    }
}

/// Checks recordings against an oracle folder's `expected.json`: every message of an MCAP file
/// decodes, and its numeric leaves equal the listed `fields` exactly (same paths, same values).
pub mod expected {
    use std::collections::HashMap;
    use std::path::Path;

    use decode::{DecodeError, Plan, Row, Scalar, SchemaSource, Value, compile};
    use serde_json::Value as Json;

    /// What one file's check covered.
    #[derive(Debug, Default, Clone, Copy)]
    pub struct Checked {
        pub messages: usize,
        pub leaves: usize,
        pub non_numeric: usize,
    }

    /// The oracle folder's `expected.json`.
    pub fn load(dir: &Path) -> Json {
        let text = std::fs::read_to_string(dir.join("expected.json")).expect("expected.json");
        serde_json::from_str(&text).expect("expected.json parses")
    }

    /// Whether a decoded leaf equals an expected JSON value exactly (NaN/inf as strings, -0.0
    /// keeps its sign, 64-bit integers exact).
    pub fn same(got: Scalar, want: &Json) -> bool {
        match (got, want) {
            (Scalar::Float(v), Json::String(s)) => match s.as_str() {
                "NaN" => v.is_nan(),
                "inf" => v == f64::INFINITY,
                "-inf" => v == f64::NEG_INFINITY,
                _ => false,
            },
            (Scalar::Float(v), Json::Number(n)) => {
                n.as_f64().is_some_and(|w| w.to_bits() == v.to_bits())
            }
            (Scalar::Int(v), Json::Number(n)) => n.as_i64() == Some(v),
            (Scalar::UInt(v), Json::Number(n)) => n.as_u64() == Some(v),
            _ => false,
        }
    }

    /// One message: compares the row's present leaves with `fields`, and checks each
    /// `non_numeric_paths` entry is in the tree but not a numeric leaf.
    pub fn check_message(plan: &Plan, row: &Row, tree: &Value, want: &Json, what: &str) -> Checked {
        let fields = want["fields"].as_object().expect("fields");
        let mut got: HashMap<&str, Scalar> = HashMap::new();
        for (slot, v) in row.present() {
            got.insert(plan.leaves()[slot].path.as_str(), v);
        }
        for (path, w) in fields {
            let Some(&g) = got.get(path.as_str()) else {
                panic!("{what}: leaf {path} = {w} missing; decoded {got:?}");
            };
            assert!(same(g, w), "{what}: {path}: decoded {g:?}, expected {w}");
        }
        for (path, g) in &got {
            assert!(
                fields.contains_key(*path),
                "{what}: decoded leaf {path} = {g:?} is not expected"
            );
        }
        let non_numeric = want["non_numeric_paths"].as_array().expect("non_numeric");
        for p in non_numeric {
            let p = p.as_str().expect("path");
            assert!(
                tree.at(p).is_some(),
                "{what}: non-numeric {p} not in the tree {tree:?}"
            );
            assert!(!got.contains_key(p), "{what}: {p} is a numeric leaf");
        }
        Checked {
            messages: 1,
            leaves: fields.len(),
            non_numeric: non_numeric.len(),
        }
    }

    /// Every message of the MCAP file `name` in `dir` against `expected["files"][name]`.
    pub fn check_mcap(dir: &Path, name: &str, expected: &Json) -> Checked {
        let file = &expected["files"][name];
        let want: HashMap<(String, u64), &Json> = file["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .map(|m| {
                let topic = m["topic"].as_str().expect("topic").to_owned();
                ((topic, m["log_time"].as_u64().expect("log_time")), m)
            })
            .collect();
        let bytes = std::fs::read(dir.join(name)).expect("read mcap");
        let mut plans: HashMap<u16, Plan> = HashMap::new();
        let mut row = Row::new();
        let mut total = Checked::default();
        for msg in mcap::MessageStream::new(&bytes).expect("mcap") {
            let msg = msg.unwrap_or_else(|e| panic!("{name}: mcap: {e}"));
            let ch = &msg.channel;
            let topics = &file["topics"][&ch.topic];
            let plan = match plans.entry(ch.id) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    let schema = ch.schema.as_deref().expect("schema");
                    assert_eq!(schema.name, topics["schema"].as_str().expect("schema"));
                    let plan: Result<Plan, DecodeError> = compile(&SchemaSource {
                        message_encoding: &ch.message_encoding,
                        schema_encoding: &schema.encoding,
                        schema_name: &schema.name,
                        schema_data: &schema.data,
                    });
                    e.insert(plan.unwrap_or_else(|e| panic!("{name} {}: {e}", ch.topic)))
                }
            };
            let what = format!("{name} {} @{}", ch.topic, msg.log_time);
            let w = want
                .get(&(ch.topic.clone(), msg.log_time))
                .unwrap_or_else(|| panic!("{what}: not in expected.json"));
            plan.decode(&msg.data, &mut row)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let tree = plan
                .decode_tree(&msg.data)
                .unwrap_or_else(|e| panic!("{what}: tree: {e}"));
            let c = check_message(plan, &row, &tree, w, &what);
            total.messages += c.messages;
            total.leaves += c.leaves;
            total.non_numeric += c.non_numeric;
        }
        assert_eq!(
            total.messages as u64,
            file["message_count"].as_u64().expect("count"),
            "{name}: every message decoded"
        );
        total
    }
}
