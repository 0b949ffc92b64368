//! The whole path a recording takes: write with rolling -> the recorder dies (a torn last
//! part) -> reindex -> read -> decode with the schema the recording carries -> signals that
//! equal what was recorded.

use std::collections::BTreeMap;

use bag::{BagReader, BagWriter, ChannelSpec, PartStatus, ReadFilter, WriteOptions};
use decode::{Row, SchemaSource};
use schemas::sample::VehicleState;

const T0: u64 = 1_764_676_800_000_000_000;
const TOPICS: [(&str, &str, u64); 3] = [
    ("car/imu", "Imu", 200),
    ("car/engine", "EngineRpm", 50),
    ("car/battery", "Battery", 1),
];

fn record(dir: &std::path::Path, seconds: u64) {
    let options = WriteOptions::new().part_max_duration_ns(Some(20_000_000_000));
    let mut w = BagWriter::create(dir, options).unwrap();
    let mut channels = Vec::new();
    for (topic, name, hz) in TOPICS {
        let info = schemas::by_name(name).unwrap();
        let ch = w.add_channel(ChannelSpec::capnp(
            topic,
            name,
            info.capnp_name,
            info.descriptor,
        ));
        channels.push((ch, name, hz));
    }
    // Interleave topics by time, as a recorder sees them.
    let mut events: Vec<(u64, usize, u64)> = Vec::new();
    for (k, (_, _, hz)) in channels.iter().enumerate() {
        for i in 0..seconds * hz {
            events.push((i * 1_000_000_000 / hz, k, i));
        }
    }
    events.sort();
    for (t, k, i) in events {
        let (ch, name, _) = channels[k];
        let bytes = schemas::sample::encode(name, t as f64 / 1e9, i).unwrap();
        w.write(ch, T0 + t, Some(T0 + t - 2_000_000), &bytes)
            .unwrap();
    }
    w.add_dropped(5);
    w.close().unwrap();
}

#[test]
fn a_torn_rolled_recording_reindexes_and_decodes_to_the_recorded_values() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    record(&dir, 60);

    // The recorder died while writing the last part.
    let reader = BagReader::open(&dir).unwrap();
    assert_eq!(reader.parts().len(), 3);
    let last = reader.parts()[2].path.clone();
    let bytes = std::fs::read(&last).unwrap();
    std::fs::write(&last, &bytes[..bytes.len() / 2]).unwrap();
    let torn = BagReader::open(&dir).unwrap();
    assert!(matches!(torn.parts()[2].status, PartStatus::Torn { .. }));
    let recovered = torn.message_count();
    assert!(recovered > 2 * 20 * 251, "{recovered}");

    bag::reindex::reindex(&dir).unwrap();
    let reader = BagReader::open(&dir).unwrap();
    assert!(
        reader
            .parts()
            .iter()
            .all(|p| p.status == PartStatus::Complete)
    );
    assert_eq!(reader.message_count(), recovered);
    assert_eq!(reader.dropped_messages(), Some(5));

    // Decode every message with a plan compiled from the recording's own schema.
    let mut plans = BTreeMap::new();
    for c in reader.channels() {
        let schema = c.spec.schema.as_ref().unwrap();
        let plan = decode::compile(&SchemaSource {
            message_encoding: &c.spec.message_encoding,
            schema_encoding: &schema.encoding,
            schema_name: &schema.name,
            schema_data: &schema.data,
        })
        .unwrap();
        plans.insert(c.id, plan);
    }
    let mut row = Row::new();
    let mut cursor = reader.messages(&ReadFilter::all()).unwrap();
    let mut checked = BTreeMap::<String, u64>::new();
    let mut last_time = 0;
    while let Some(m) = cursor.next_message() {
        assert!(m.log_time_ns >= last_time, "log-time order");
        last_time = m.log_time_ns;
        let plan = plans.get_mut(&m.channel.id).unwrap();
        plan.decode(m.data, &mut row).unwrap();
        let t = (m.log_time_ns - T0) as f64 / 1e9;
        let truth = VehicleState::at(t);
        let value = |path: &str| {
            let slot = plan.slot(path).unwrap_or_else(|| panic!("no leaf {path}"));
            row.get_f64(slot)
                .unwrap_or_else(|| panic!("{path} absent in {} at {t} s", m.channel.spec.topic))
        };
        match m.channel.spec.type_name() {
            "EngineRpm" => assert_eq!(value("rpm"), f64::from(truth.rpm)),
            "Imu" => {
                assert_eq!(
                    value("linearAcceleration.z"),
                    truth.linear_acceleration_mps2[2]
                );
                assert_eq!(value("orientation.w"), truth.orientation[3]);
            }
            "Battery" => {
                assert_eq!(value("cellTempsC[0]"), f64::from(truth.cell_temps_c[0]));
            }
            other => panic!("unexpected type {other}"),
        }
        *checked.entry(m.channel.spec.topic.clone()).or_insert(0) += 1;
    }
    assert!(cursor.issues().is_empty());
    assert_eq!(checked.values().sum::<u64>(), recovered);
    assert_eq!(checked.len(), 3);
}
