//! CDR details beyond the oracle vectors: big endian, time leaves, clipping of long arrays,
//! corrupted lengths, encapsulation kinds, nested arrays of structs.

use decode::{
    ErrorClass, LeafKind, Limits, Plan, Row, Scalar, SchemaSource, compile, compile_with,
};

fn plan_with(def: &str, limits: Limits) -> Plan {
    compile_with(
        &SchemaSource {
            message_encoding: "cdr",
            schema_encoding: "ros2msg",
            schema_name: "demo/msg/M",
            schema_data: def.as_bytes(),
        },
        limits,
    )
    .expect("compile")
}

fn plan(def: &str) -> Plan {
    plan_with(def, Limits::default())
}

struct W {
    buf: Vec<u8>,
    be: bool,
}

impl W {
    fn new(be: bool) -> Self {
        Self {
            buf: if be {
                vec![0, 0, 0, 0]
            } else {
                vec![0, 1, 0, 0]
            },
            be,
        }
    }
    fn align(&mut self, n: usize) {
        while !(self.buf.len() - 4).is_multiple_of(n) {
            self.buf.push(0);
        }
    }
    fn u32(&mut self, v: u32) {
        self.align(4);
        self.buf.extend(if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }
    fn i32(&mut self, v: i32) {
        self.u32(v as u32)
    }
    fn f64(&mut self, v: f64) {
        self.align(8);
        self.buf.extend(if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }
    fn u16(&mut self, v: u16) {
        self.align(2);
        self.buf.extend(if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }
    fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    fn string(&mut self, s: &str) {
        self.u32(s.len() as u32 + 1);
        self.buf.extend(s.as_bytes());
        self.buf.push(0);
    }
}

const DEF: &str = "\
std_msgs/Header header\n\
uint8 flag\n\
uint16 code\n\
float64[] values\n\
Point[2] corners\n\
builtin_interfaces/Duration timeout\n\
string<=8[<=4] names\n\
================================================================================\n\
MSG: std_msgs/Header\n\
builtin_interfaces/Time stamp\n\
string frame_id\n\
================================================================================\n\
MSG: demo/Point\n\
float64 x\n\
int32 y\n";

fn message(be: bool, values: &[f64]) -> Vec<u8> {
    let mut w = W::new(be);
    w.i32(1_700_000_000);
    w.u32(123_456_789);
    w.string("base_link");
    w.u8(1);
    w.u16(0xbeef);
    w.u32(values.len() as u32);
    for v in values {
        w.f64(*v);
    }
    for (x, y) in [(1.5, -1), (2.5, -2)] {
        w.f64(x);
        w.i32(y);
    }
    w.i32(-1);
    w.u32(500_000_000);
    w.u32(2);
    w.string("a");
    w.string("bb");
    w.buf
}

#[test]
fn little_and_big_endian_decode_the_same_leaves() {
    for be in [false, true] {
        let mut plan = plan(DEF);
        let mut row = Row::new();
        plan.decode(&message(be, &[0.5, -0.25, 8.0]), &mut row)
            .expect("decode");
        let get = |p: &str| row.get(plan.slot(p).unwrap_or_else(|| panic!("no {p}")));
        assert_eq!(get("header.stamp.sec"), Some(Scalar::Int(1_700_000_000)));
        assert_eq!(get("header.stamp.nanosec"), Some(Scalar::UInt(123_456_789)));
        assert_eq!(
            get("header.stamp"),
            Some(Scalar::Int(1_700_000_000_123_456_789))
        );
        assert_eq!(get("timeout"), Some(Scalar::Int(-500_000_000)));
        assert_eq!(get("flag"), Some(Scalar::UInt(1)));
        assert_eq!(get("code"), Some(Scalar::UInt(0xbeef)));
        assert_eq!(get("values[2]"), Some(Scalar::Float(8.0)));
        assert_eq!(get("corners[1].x"), Some(Scalar::Float(2.5)));
        assert_eq!(get("corners[1].y"), Some(Scalar::Int(-2)));
        let kind = |p: &str| plan.leaves()[plan.slot(p).expect(p)].kind;
        assert_eq!(kind("header.stamp"), LeafKind::TimeNs);
        assert_eq!(kind("timeout"), LeafKind::DurationNs);
        let tree = plan.decode_tree(&message(be, &[1.0])).expect("tree");
        assert_eq!(
            tree.at("header.frame_id"),
            Some(&decode::Value::Text("base_link".into()))
        );
        assert_eq!(tree.at("names[1]"), Some(&decode::Value::Text("bb".into())));
    }
}

#[test]
fn long_arrays_are_clipped_not_failed_and_short_ones_read_absent() {
    let mut plan = plan_with(
        DEF,
        Limits {
            max_list_elements: 2,
            ..Limits::default()
        },
    );
    let mut row = Row::new();
    let d = plan
        .decode(&message(false, &[1.0, 2.0, 3.0, 4.0]), &mut row)
        .expect("decode");
    assert!(d.clipped);
    assert!(plan.slot("values[2]").is_none());
    assert_eq!(
        row.get(plan.slot("timeout.sec").expect("after the array")),
        Some(Scalar::Int(-1))
    );
    let d = plan
        .decode(&message(false, &[9.0]), &mut row)
        .expect("decode");
    assert!(!d.clipped && d.new_leaves.is_empty());
    assert_eq!(
        row.get(plan.slot("values[0]").expect("v0")),
        Some(Scalar::Float(9.0))
    );
    assert_eq!(row.get(plan.slot("values[1]").expect("v1")), None);
}

#[test]
fn corrupted_lengths_fail_before_allocating() {
    let mut plan =
        plan("float64[] values\nstring[] names\ndemo/P[] ps\n===\nMSG: demo/P\nint8 a\n");
    let mut row = Row::new();
    for msg in [
        vec![0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff],
        vec![0, 1, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f],
        vec![0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x0f],
        vec![0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff],
    ] {
        let e = plan.decode(&msg, &mut row).expect_err("corrupt");
        assert!(
            matches!(e.class(), ErrorClass::Corrupt | ErrorClass::Truncated),
            "{e}"
        );
        let e = plan.decode_tree(&msg).expect_err("corrupt");
        assert!(
            matches!(e.class(), ErrorClass::Corrupt | ErrorClass::Truncated),
            "{e}"
        );
        assert!(!e.to_string().contains('\u{ff}'));
    }
}

#[test]
fn encapsulations_other_than_xcdr1_are_refused() {
    let mut plan = plan("uint8 a\n");
    let mut row = Row::new();
    for header in [[0u8, 2, 0, 0], [0, 7, 0, 0], [9, 9, 0, 0]] {
        let mut msg = header.to_vec();
        msg.push(1);
        assert_eq!(
            plan.decode(&msg, &mut row).unwrap_err().class(),
            ErrorClass::Corrupt
        );
    }
    assert_eq!(
        plan.decode(&[0, 1], &mut row).unwrap_err().class(),
        ErrorClass::Truncated
    );
}

#[test]
fn schema_errors_are_classified() {
    for def in [
        "int32 a\n---\nint32 b\n",
        "Missing m\n",
        "int32[x] a\n",
        "A a\n===\nMSG: demo/A\nA a\n",
        "int32\n",
    ] {
        let e = compile(&SchemaSource {
            message_encoding: "cdr",
            schema_encoding: "ros2msg",
            schema_name: "demo/M",
            schema_data: def.as_bytes(),
        })
        .expect_err(def);
        assert_eq!(e.class(), ErrorClass::BadSchema, "{def}: {e}");
    }
}

fn named(name: &str, def: &str) -> Plan {
    compile(&SchemaSource {
        message_encoding: "cdr",
        schema_encoding: "ros2msg",
        schema_name: name,
        schema_data: def.as_bytes(),
    })
    .expect(name)
}

/// Little-endian CDR of a `geometry_msgs/Vector3`.
fn vector3(x: f64, y: f64, z: f64) -> Vec<u8> {
    let mut b = vec![0, 1, 0, 0];
    for v in [x, y, z] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b
}

/// rosbag2 before Iron stored a type's name and no definition: a standard type decodes with
/// the definitions built in, and the plan says which types came from there.
#[test]
fn a_standard_type_without_a_definition_decodes_from_the_built_in_one() {
    let mut p = named("geometry_msgs/msg/Vector3", "");
    assert_eq!(p.standard_types(), ["geometry_msgs/Vector3"]);
    let fields = p.decode_fields(&vector3(1.5, -2.0, 1e-10)).unwrap();
    assert_eq!(
        fields,
        [
            ("x".to_owned(), Scalar::Float(1.5)),
            ("y".to_owned(), Scalar::Float(-2.0)),
            ("z".to_owned(), Scalar::Float(1e-10)),
        ]
    );
    // A text that uses a standard type without defining it: only that type is taken.
    let mut p = named("demo/msg/M", "geometry_msgs/Vector3 v\n");
    assert_eq!(p.standard_types(), ["geometry_msgs/Vector3"]);
    let fields = p.decode_fields(&vector3(1.0, 2.0, 3.0)).unwrap();
    assert_eq!(
        fields.first(),
        Some(&("v.x".to_owned(), Scalar::Float(1.0)))
    );
    // The recording's own definitions win, also of a standard type's name.
    let mut p = named(
        "demo/msg/M",
        "geometry_msgs/Vector3 v\n===\nMSG: geometry_msgs/Vector3\nfloat64 z\n",
    );
    assert!(p.standard_types().is_empty());
    let fields = p.decode_fields(&vector3(1.0, 2.0, 3.0)).unwrap();
    assert_eq!(fields, [("v.z".to_owned(), Scalar::Float(1.0))]);
}

/// A type named without a definition that is no standard type: an empty message decodes (it
/// may be one), a longer one fails, saying the definition is missing, every time (no shortcut
/// learned from the empty ones skips the check).
#[test]
fn a_type_named_without_a_definition_fails_messages_longer_than_an_empty_one() {
    let mut p = named("my_robot_msgs/msg/MotorState", "");
    assert!(p.standard_types().is_empty());
    let empty = [0u8, 1, 0, 0, 0];
    for _ in 0..3 {
        assert_eq!(p.decode_fields(&empty).unwrap(), []);
        let mut row = Row::default();
        p.decode(&empty, &mut row).unwrap();
    }
    for _ in 0..3 {
        let e = p.decode_fields(&vector3(1.0, 2.0, 3.0)).unwrap_err();
        assert_eq!(e.class(), ErrorClass::BadSchema, "{e}");
        let text = e.to_string();
        assert!(
            text.contains("MotorState")
                && text.contains("holds no definition")
                && text.contains("24 bytes"),
            "{text}"
        );
        let mut row = Row::default();
        assert!(p.decode(&vector3(1.0, 2.0, 3.0), &mut row).is_err());
        assert!(p.decode_tree(&vector3(1.0, 2.0, 3.0)).is_err());
    }
}
