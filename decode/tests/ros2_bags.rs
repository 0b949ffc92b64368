//! Every message of every real rosbag2 recording (`../shared/oracles/rosbag2`) decodes with
//! the schema the recording carries. The mcap crate reads the files here; the decode crate
//! itself does no file I/O.

mod common;
use common::{oracles, tree_check};

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use decode::{ErrorClass, Plan, Row, Scalar, SchemaSource, compile};

fn mcap_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            mcap_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "mcap") {
            out.push(p);
        }
    }
}

#[derive(Default, Debug)]
struct Tally {
    decoded: usize,
    leaves_checked: usize,
    unknown_encoding: usize,
    srv_schemas: usize,
}

#[test]
fn every_message_of_every_bag_decodes() {
    let Some(dir) = oracles::oracle_dir("rosbag2") else {
        return;
    };
    let mut files = Vec::new();
    mcap_files(&dir, &mut files);
    assert_eq!(files.len(), 20, "bags found");
    let mut total = Tally::default();
    let mut byte_default_seen = false;
    for file in &files {
        let name = file
            .strip_prefix(&dir)
            .unwrap_or(file)
            .display()
            .to_string();
        let bytes = std::fs::read(file).expect("read");
        let mut plans: HashMap<u16, Result<Plan, decode::DecodeError>> = HashMap::new();
        let mut row = Row::new();
        let mut t = Tally::default();
        for msg in mcap::MessageStream::new(&bytes).expect("mcap") {
            let msg = msg.unwrap_or_else(|e| panic!("{name}: mcap: {e}"));
            let ch = &msg.channel;
            let plan = plans.entry(ch.id).or_insert_with(|| {
                let schema = ch.schema.as_deref();
                compile(&SchemaSource {
                    message_encoding: &ch.message_encoding,
                    schema_encoding: schema.map_or("", |s| s.encoding.as_str()),
                    schema_name: schema.map_or("", |s| s.name.as_str()),
                    schema_data: schema.map_or(&[][..], |s| &s.data[..]),
                })
            });
            let plan = match plan {
                Ok(p) => p,
                Err(e) => {
                    match e.class() {
                        ErrorClass::UnknownEncoding => {
                            assert_eq!(ch.message_encoding, "wrong_format", "{name}: {e}");
                            t.unknown_encoding += 1;
                        }
                        ErrorClass::BadSchema => {
                            // Old service-event channels carry raw `.srv` text.
                            assert!(
                                e.to_string().contains("service"),
                                "{name} {}: {e}",
                                ch.topic
                            );
                            t.srv_schemas += 1;
                        }
                        _ => panic!("{name} {}: {e}", ch.topic),
                    }
                    continue;
                }
            };
            plan.decode(&msg.data, &mut row)
                .unwrap_or_else(|e| panic!("{name} {}: {e}", ch.topic));
            let tree = plan
                .decode_tree(&msg.data)
                .unwrap_or_else(|e| panic!("{name} {}: tree: {e}", ch.topic));
            t.leaves_checked += tree_check::leaves_match_tree(plan, &row, &tree);
            t.decoded += 1;
            if plan.type_name() == "test_msgs/Arrays" {
                let slot = plan.slot("byte_values_default[2]").expect("byte leaf");
                assert_eq!(
                    row.get(slot),
                    Some(Scalar::UInt(255)),
                    "ROS 2 byte is unsigned"
                );
                byte_default_seen = true;
            }
        }
        eprintln!("{name}: {t:?}");
        total.decoded += t.decoded;
        total.leaves_checked += t.leaves_checked;
        total.unknown_encoding += t.unknown_encoding;
        total.srv_schemas += t.srv_schemas;
    }
    eprintln!("total: {total:?}");
    assert!(byte_default_seen);
    assert!(total.decoded > 500, "{total:?}");
    assert!(total.unknown_encoding > 0, "wrong_rmw_test is flagged");
}
