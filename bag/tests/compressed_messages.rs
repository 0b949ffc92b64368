//! Messages compressed one by one (rosbag2's `compression_mode: message`, zstd) inside MCAP
//! parts, as rosbag2's Humble releases wrote them with MCAP storage: CDR messages come out
//! decompressed; other encodings as stored; a frame that does not decompress is an issue that
//! names the message, and reading goes on.

use bag::{BagError, BagReader, BagWriter, ChannelSpec, ReadFilter, SchemaSpec, WriteOptions};

const T0_NS: u64 = 1_700_000_000_000_000_000;

/// A CDR `std_msgs/msg/Int32` holding `v`.
fn cdr(v: i32) -> Vec<u8> {
    let mut m = vec![0, 1, 0, 0];
    m.extend_from_slice(&v.to_le_bytes());
    m
}

#[test]
fn cdr_messages_compressed_alone_read_as_their_cdr_and_others_as_stored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bag");
    let mut w = BagWriter::create(&path, WriteOptions::new()).unwrap();
    let speed = w.add_channel(ChannelSpec {
        topic: "/speed".into(),
        message_encoding: "cdr".into(),
        schema: Some(SchemaSpec {
            name: "std_msgs/msg/Int32".into(),
            encoding: "ros2msg".into(),
            data: b"int32 data".to_vec(),
        }),
        metadata: Default::default(),
    });
    let raw = w.add_channel(ChannelSpec {
        topic: "/raw".into(),
        message_encoding: "protobuf".into(),
        schema: None,
        metadata: Default::default(),
    });
    // A protobuf message may start with the zstd magic: it is not touched.
    let protobuf = zstd::encode_all(&b"not for us"[..], 3).unwrap();
    for i in 0..20i32 {
        let t = T0_NS + u64::try_from(i).unwrap() * 1_000_000;
        let mut payload = zstd::encode_all(&cdr(i)[..], 3).unwrap();
        if i == 7 {
            // Cut: it does not decompress.
            payload.truncate(payload.len() - 3);
        }
        w.write(speed, t, None, &payload).unwrap();
        w.write(raw, t, None, &protobuf).unwrap();
    }
    w.close().unwrap();
    // As rosbag2 says it in the index.
    let index = path.join("metadata.yaml");
    let yaml = std::fs::read_to_string(&index).unwrap();
    let yaml: String = yaml
        .lines()
        .map(|line| match line.trim_start().split_once(':') {
            Some(("compression_format", _)) => "  compression_format: zstd\n".to_owned(),
            Some(("compression_mode", _)) => "  compression_mode: MESSAGE\n".to_owned(),
            _ => format!("{line}\n"),
        })
        .collect();
    assert!(yaml.contains("compression_mode: MESSAGE"), "{yaml}");
    std::fs::write(&index, yaml).unwrap();

    let reader = BagReader::open(&path).unwrap();
    assert!(
        reader
            .notes()
            .iter()
            .any(|n| n.starts_with("messages compressed one by one (zstd")),
        "{:?}",
        reader.notes()
    );
    let mut cursor = reader.messages(&ReadFilter::all()).unwrap();
    let (mut speeds, mut raws) = (Vec::new(), 0);
    while let Some(m) = cursor.next_message() {
        match m.channel.spec.topic.as_str() {
            "/speed" => speeds.push(m.data.to_vec()),
            _ => {
                assert_eq!(m.data, protobuf.as_slice());
                raws += 1;
            }
        }
    }
    assert_eq!(raws, 20);
    assert_eq!(speeds.len(), 20);
    for (i, data) in speeds.iter().enumerate() {
        if i == 7 {
            assert!(
                data.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]),
                "handed out as stored"
            );
        } else {
            assert_eq!(*data, cdr(i32::try_from(i).unwrap()), "message {i}");
        }
    }
    let [issue] = cursor.issues() else {
        panic!("{:?}", cursor.issues());
    };
    let BagError::MessageDecompress {
        topic, log_time_ns, ..
    } = issue.error.as_ref()
    else {
        panic!("{:?}", issue.error);
    };
    assert_eq!(
        (topic.as_str(), *log_time_ns),
        ("/speed", T0_NS + 7_000_000)
    );
    assert!(issue.skipped.is_none());
}
