//! Cap'n Proto decoding checked against messages built with capnpc-generated code for our own
//! schema (`fixtures/telemetry.capnp`): unions, enums, defaults, lists that grow and shrink,
//! and leaves that appear as messages show them.

#[allow(clippy::all, unused, unsafe_code)]
#[path = "gen/telemetry_capnp.rs"]
mod telemetry_capnp;

use decode::{LeafKind, Plan, Row, Scalar, SchemaSource, Value, compile};
use telemetry_capnp::{Mode, imu};

const CGR: &[u8] = include_bytes!("fixtures/telemetry.cgr");

fn plan() -> Plan {
    compile(&SchemaSource {
        message_encoding: "capnproto",
        schema_encoding: "capnproto",
        schema_name: "telemetry.capnp:Imu",
        schema_data: CGR,
    })
    .expect("compile")
}

fn build(f: impl FnOnce(imu::Builder<'_>)) -> Vec<u8> {
    let mut m = capnp::message::Builder::new_default();
    f(m.init_root::<imu::Builder<'_>>());
    capnp::serialize::write_message_to_words(&m)
}

fn full(i: imu::Builder<'_>) {
    let mut i = i;
    {
        let mut h = i.reborrow().init_header();
        h.set_seq(7);
        h.set_frame_id("imu_link");
        let mut t = h.init_stamp();
        t.set_sec(1_700_000_000);
        t.set_nsec(5);
    }
    {
        let mut w = i.reborrow().init_angular_velocity();
        w.set_x(0.1);
        w.set_y(-0.2);
        w.set_z(0.3);
    }
    i.reborrow().init_orientation().set_z(0.5);
    i.set_temperature(31.5);
    i.set_mode(Mode::Running);
    i.reborrow().init_status().set_fault(42);
    let mut s = i.init_samples(3);
    s.set(0, 1.0);
    s.set(1, 2.0);
    s.set(2, 3.0);
}

#[test]
fn numeric_leaves_unions_enums_and_defaults() {
    let mut plan = plan();
    let mut row = Row::new();
    let d = plan.decode(&build(full), &mut row).expect("decode");
    assert_eq!(d.new_leaves, 0..plan.leaves().len());
    let get = |plan: &Plan, row: &Row, p: &str| {
        row.get(plan.slot(p).unwrap_or_else(|| panic!("no leaf {p}")))
    };
    assert_eq!(
        get(&plan, &row, "header.stamp.sec"),
        Some(Scalar::Int(1_700_000_000))
    );
    assert_eq!(get(&plan, &row, "header.stamp.nsec"), Some(Scalar::UInt(5)));
    assert_eq!(get(&plan, &row, "header.seq"), Some(Scalar::UInt(7)));
    assert_eq!(
        get(&plan, &row, "angularVelocity.y"),
        Some(Scalar::Float(-0.2))
    );
    assert_eq!(get(&plan, &row, "orientation.z"), Some(Scalar::Float(0.5)));
    assert_eq!(
        get(&plan, &row, "orientation.w"),
        Some(Scalar::Float(1.0)),
        "default 1.0 (XOR)"
    );
    assert_eq!(get(&plan, &row, "temperature"), Some(Scalar::Float(31.5)));
    assert_eq!(get(&plan, &row, "mode"), Some(Scalar::UInt(2)));
    assert_eq!(get(&plan, &row, "status.$which"), Some(Scalar::UInt(1)));
    assert_eq!(get(&plan, &row, "status.fault"), Some(Scalar::UInt(42)));
    assert_eq!(get(&plan, &row, "samples[2]"), Some(Scalar::Float(3.0)));
    assert!(
        plan.slot("linearAcceleration.x").is_none(),
        "null struct: no leaves"
    );
    let kinds: Vec<(String, LeafKind)> = plan
        .leaves()
        .iter()
        .map(|l| (l.path.clone(), l.kind))
        .collect();
    assert!(kinds.contains(&("status.$which".into(), LeafKind::Which)));
    assert!(kinds.contains(&("mode".into(), LeafKind::Enum)));

    // Another arm, a shorter list, an unset struct: those leaves read absent, not 0.
    let second = build(|mut i| {
        i.set_temperature(20.0);
        i.reborrow().init_status().init_saturated().set_x(9.0);
        i.init_samples(1).set(0, 4.0);
    });
    let d = plan.decode(&second, &mut row).expect("decode");
    assert!(!d.new_leaves.is_empty(), "saturated.* leaves are new");
    assert_eq!(get(&plan, &row, "status.$which"), Some(Scalar::UInt(2)));
    assert_eq!(get(&plan, &row, "status.fault"), None);
    assert_eq!(
        get(&plan, &row, "status.saturated.x"),
        Some(Scalar::Float(9.0))
    );
    assert_eq!(get(&plan, &row, "samples[0]"), Some(Scalar::Float(4.0)));
    assert_eq!(get(&plan, &row, "samples[1]"), None);
    assert_eq!(get(&plan, &row, "header.seq"), None);
    assert_eq!(get(&plan, &row, "temperature"), Some(Scalar::Float(20.0)));
    assert_eq!(get(&plan, &row, "orientation.w"), None);

    // Steady state: same shapes again learn nothing.
    assert!(
        plan.decode(&build(full), &mut row)
            .expect("decode")
            .new_leaves
            .is_empty()
    );
    assert_eq!(row.present_count(), 17);
}

#[test]
fn tree_has_text_enum_names_and_union_arm() {
    let plan = plan();
    let tree = plan.decode_tree(&build(full)).expect("tree");
    assert_eq!(
        tree.at("header.frameId"),
        Some(&Value::Text("imu_link".into()))
    );
    assert_eq!(
        tree.at("mode"),
        Some(&Value::Enum {
            value: 2,
            name: Some("running".into())
        })
    );
    assert_eq!(
        tree.at("status.$which"),
        Some(&Value::Enum {
            value: 1,
            name: Some("fault".into())
        })
    );
    assert_eq!(tree.at("status.fault"), Some(&Value::UInt(42)));
    assert_eq!(tree.at("status.ok"), None);
    assert_eq!(tree.at("linearAcceleration"), Some(&Value::Null));
    assert_eq!(tree.at("samples[1]"), Some(&Value::Float(2.0)));
}

#[test]
fn decode_fields_lists_present_leaves_in_slot_order() {
    let mut plan = plan();
    let fields = plan.decode_fields(&build(full)).expect("fields");
    let names: Vec<&str> = fields.iter().map(|(p, _)| p.as_str()).collect();
    let slots: Vec<usize> = names.iter().map(|n| plan.slot(n).expect("known")).collect();
    assert!(
        slots.windows(2).all(|w| w[0] < w[1]),
        "slot order: {names:?}"
    );
    assert_eq!(fields.len(), 17);
    assert!(fields.contains(&("samples[1]".into(), Scalar::Float(2.0))));
    assert!(fields.contains(&("header.stamp.sec".into(), Scalar::Int(1_700_000_000))));
}

#[test]
fn truncated_and_corrupt_messages_fail_classified() {
    let mut plan = plan();
    let mut row = Row::new();
    let bytes = build(full);
    for cut in [0, 3, 8, 20, bytes.len() - 8] {
        let err = plan.decode(&bytes[..cut], &mut row).expect_err("cut");
        assert!(
            matches!(
                err.class(),
                decode::ErrorClass::Truncated | decode::ErrorClass::Corrupt
            ),
            "cut {cut}: {err}"
        );
    }
}
