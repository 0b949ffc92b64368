//! `bag record | play | sim` as a user runs them, on loopback.

#[path = "../../tests/common.rs"]
mod common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use bag::{BagReader, BagWriter, ChannelSpec, ReadFilter, WriteOptions};

fn bag_cmd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bag"))
}

fn free_endpoint() -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    format!("tcp/127.0.0.1:{port}")
}

fn spawn(args: &[&str]) -> Child {
    bag_cmd()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn bag")
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([name, &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

fn finish(child: Child, timeout: Duration) -> Output {
    let start = Instant::now();
    let mut child = child;
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "bag did not finish: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A bag with 300 EngineRpm messages over 3 s and 30 JSON messages.
fn source_bag(dir: &Path) -> PathBuf {
    source_bag_advertising(dir, &[])
}

/// [`source_bag`], whose index also lists `silent` (topic, schema) as advertised and never
/// published, which `bag play` advertises again.
fn source_bag_advertising(dir: &Path, silent: &[(&str, &str)]) -> PathBuf {
    let path = dir.join("source");
    let mut w = BagWriter::create(&path, WriteOptions::new()).expect("create");
    for (topic, schema) in silent {
        w.advertise(topic, schema);
    }
    let info = schemas::by_name("EngineRpm").expect("registered");
    let rpm = w.add_channel(ChannelSpec::capnp(
        "car/engine",
        info.registry_name,
        info.capnp_name,
        info.descriptor,
    ));
    let json = w.add_channel(ChannelSpec {
        topic: "/car/status".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: Default::default(),
    });
    let t0 = 1_700_000_000_000_000_000u64;
    for i in 0..300u64 {
        let t = t0 + i * 10_000_000;
        let bytes = schemas::sample::encode("EngineRpm", i as f64 * 0.01, i).expect("encode");
        w.write(rpm, t, Some(t), &bytes).expect("write");
        if i % 10 == 0 {
            let body = format!("{{\"ok\": true, \"n\": {i}}}");
            w.write(json, t + 1, Some(t), body.as_bytes())
                .expect("write");
        }
    }
    w.close().expect("close");
    path
}

fn payloads(path: &Path, topic: &str) -> Vec<Vec<u8>> {
    let reader = BagReader::open(path).expect("open");
    let mut cursor = reader
        .messages(&ReadFilter::all().topics([topic]))
        .expect("read");
    let mut out = Vec::new();
    while let Some(m) = cursor.next_message() {
        out.push(m.data.to_vec());
    }
    out
}

/// Waits until the recorder says it is recording (its subscription is declared).
fn wait_for_recording(child: &mut Child) {
    use std::io::{BufRead, BufReader};
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    for line in lines.by_ref() {
        if line.expect("line").starts_with("recording ") {
            // Keep draining so the recorder never blocks on a full pipe.
            std::thread::spawn(move || for _ in lines {});
            return;
        }
    }
    panic!("the recorder never started");
}

/// Starts `bag record -o OUT --listen ENDPOINT ARGS..` on a free endpoint and waits until it is
/// recording; returns the process and the endpoint publishers connect to.
fn start_recorder(out: &Path, args: &[&str]) -> (Child, String) {
    let endpoint = free_endpoint();
    let out = out.to_str().expect("utf-8");
    let mut all = vec!["record", "-o", out, "--listen", &endpoint];
    all.extend_from_slice(args);
    let mut record = spawn(&all);
    wait_for_recording(&mut record);
    (record, endpoint)
}

#[test]
fn play_into_record_keeps_bytes_order_and_encodings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = source_bag(dir.path());
    let out = dir.path().join("recorded");
    let (record, endpoint) = start_recorder(&out, &["car/**", "--duration", "120"]);
    let play = bag_cmd()
        .args([
            "play",
            source.to_str().expect("utf-8"),
            "--connect",
            &endpoint,
            "--rate",
            "10",
            "--wait",
            "20",
        ])
        .output()
        .expect("play");
    assert!(play.status.success(), "{}", text(&play));
    assert!(
        text(&play).contains("published 330 messages"),
        "{}",
        text(&play)
    );
    std::thread::sleep(Duration::from_millis(500));
    signal(&record, "-INT");
    let recorded = finish(record, Duration::from_secs(30));
    assert!(recorded.status.success(), "{}", text(&recorded));
    assert!(
        String::from_utf8_lossy(&recorded.stdout).contains("recorded 330 messages"),
        "{}",
        text(&recorded)
    );

    assert_eq!(
        payloads(&out, "car/engine"),
        payloads(&source, "car/engine")
    );
    // The ROS-style topic lost its leading slash; its JSON encoding went with it.
    assert_eq!(
        payloads(&out, "car/status"),
        payloads(&source, "/car/status")
    );
    let reader = BagReader::open(&out).expect("open");
    let status = reader
        .channels()
        .iter()
        .find(|c| c.spec.topic == "car/status")
        .expect("car/status");
    assert_eq!(status.spec.message_encoding, "json");
    let engine = reader
        .channels()
        .iter()
        .find(|c| c.spec.topic == "car/engine")
        .expect("car/engine");
    assert_eq!(engine.spec.type_name(), "EngineRpm");
    assert_eq!(reader.dropped_messages(), Some(0));

    let verify = bag_cmd()
        .args(["verify", out.to_str().expect("utf-8")])
        .output()
        .expect("verify");
    assert!(verify.status.success(), "{}", text(&verify));
}

#[test]
fn recording_the_simulator_lists_its_silent_topic_and_counts_unstamped_samples() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("sim");
    let endpoint = free_endpoint();
    let sim = spawn(&["sim", "--listen", &endpoint, "--duration", "60"]);
    let record = bag_cmd()
        .args([
            "record",
            "-o",
            out.to_str().expect("utf-8"),
            "--connect",
            &endpoint,
            "--duration",
            "3",
        ])
        .output()
        .expect("record");
    signal(&sim, "-TERM");
    let sim_out = finish(sim, Duration::from_secs(30));
    assert!(sim_out.status.success(), "{}", text(&sim_out));
    assert!(record.status.success(), "{}", text(&record));
    assert!(
        text(&record)
            .contains("car/camera/front (DiagnosticLog) was advertised but never published"),
        "{}",
        text(&record)
    );
    let reader = BagReader::open(&out).expect("open");
    let battery = reader
        .channels()
        .iter()
        .find(|c| c.spec.topic == "car/battery")
        .and_then(|c| c.message_count)
        .unwrap_or(0);
    assert!(battery >= 2, "battery messages: {battery}");
    assert_eq!(
        reader.unstamped_messages(),
        Some(battery),
        "only the battery is unstamped"
    );
    let imu = reader
        .channels()
        .iter()
        .find(|c| c.spec.topic == "car/imu")
        .and_then(|c| c.message_count)
        .unwrap_or(0);
    assert!(imu > 200, "imu messages: {imu}");
}

#[test]
fn a_killed_recorder_loses_at_most_its_open_chunk_and_reindex_restores_the_rest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = source_bag_advertising(dir.path(), &[("car/camera", "CameraFrame")]);
    let out = dir.path().join("killed");
    let (record, endpoint) = start_recorder(&out, &["car/**"]);
    // Real time: 3 s of messages; chunks close after 1 s, so the first ~2 s are on disk.
    let play = bag_cmd()
        .args([
            "play",
            source.to_str().expect("utf-8"),
            "--connect",
            &endpoint,
            "--wait",
            "20",
        ])
        .output()
        .expect("play");
    assert!(play.status.success(), "{}", text(&play));
    std::thread::sleep(Duration::from_millis(300));
    signal(&record, "-KILL");
    let _ = finish(record, Duration::from_secs(10));

    let reindex = bag_cmd()
        .args(["reindex", out.to_str().expect("utf-8")])
        .output()
        .expect("reindex");
    assert!(
        reindex.status.code().is_some_and(|c| c == 0 || c == 3),
        "{}",
        text(&reindex)
    );
    let recovered = payloads(&out, "car/engine");
    let sent = payloads(&source, "car/engine");
    assert!(recovered.len() >= 150, "recovered only {}", recovered.len());
    assert_eq!(
        recovered.as_slice(),
        &sent[..recovered.len()],
        "an exact prefix"
    );
    let verify = bag_cmd()
        .args(["verify", out.to_str().expect("utf-8")])
        .output()
        .expect("verify");
    // The bytes left are sound; the tail the kill tore off (if any) is loss the rebuilt index
    // records, so verify says what reindex said.
    assert_eq!(
        verify.status.code(),
        reindex.status.code(),
        "reindex: {}\nverify: {}",
        text(&reindex),
        text(&verify)
    );
    if reindex.status.code() == Some(3) {
        assert!(
            String::from_utf8_lossy(&verify.stdout).contains("recorded loss: a torn part was cut"),
            "{}",
            text(&verify)
        );
    }
    // The recorder stored the advertisements before it was killed; car/engine, advertised too,
    // published before the kill, so the rebuilt index does not list it.
    let reader = BagReader::open(&out).expect("open");
    let never: Vec<&str> = reader
        .advertised_never_published()
        .iter()
        .map(|a| a.topic.as_str())
        .collect();
    assert_eq!(never, ["car/camera"]);
}

#[test]
fn a_publisher_from_another_zenoh_implementation_is_recorded() {
    if !common::python_can_import("zenoh", "eclipse-zenoh==1.10.2") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("from-python");
    let (record, endpoint) = start_recorder(&out, &["py/**", "--duration", "120"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/python_publisher.py");
    let python = Command::new("python3")
        .arg(&script)
        .arg(&endpoint)
        .output()
        .expect("python3");
    assert!(python.status.success(), "{}", text(&python));
    std::thread::sleep(Duration::from_millis(500));
    signal(&record, "-INT");
    let recorded = finish(record, Duration::from_secs(30));
    assert!(recorded.status.success(), "{}", text(&recorded));

    let reader = BagReader::open(&out).expect("open");
    let count = |topic: &str| {
        reader
            .channels()
            .iter()
            .find(|c| c.spec.topic == topic)
            .and_then(|c| c.message_count)
            .unwrap_or(0)
    };
    assert_eq!((count("py/status"), count("py/raw")), (200, 200));
    assert_eq!(
        reader.unstamped_messages(),
        Some(200),
        "py/raw has no timestamps"
    );
    let silent: Vec<&str> = reader
        .advertised_never_published()
        .iter()
        .map(|a| a.topic.as_str())
        .collect();
    assert_eq!(silent, ["py/engine", "py/imu_never"]);
    let first = payloads(&out, "py/status")
        .into_iter()
        .next()
        .expect("a message");
    assert_eq!(first, br#"{"speed": 0.0, "ok": true}"#);
    let status = reader
        .channels()
        .iter()
        .find(|c| c.spec.topic == "py/status")
        .expect("py/status");
    assert_eq!(status.spec.message_encoding, "json");
}

/// `n` bytes that zstd cannot shrink, different for every `seed`.
fn incompressible(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn a_recorder_whose_disk_falls_behind_drops_without_holding_up_the_publisher_and_counts_exactly() {
    use bag::live::{LivePublisher, SessionOptions};
    use zenoh::Wait;

    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("behind");
    // zstd at level 19 compresses incompressible data at a few MB/s: closing the first 4 MiB
    // chunk takes far longer than loopback takes to deliver the rest of the burst (later chunks
    // of such data are stored uncompressed, untried), and a 1 MiB queue holds about 16 of these
    // messages.
    let (record, endpoint) = start_recorder(
        &out,
        &["--compression-level", "19", "--queue-size", "1", "car/**"],
    );
    let session = SessionOptions::connecting(&endpoint)
        .open()
        .expect("session");
    let publisher = LivePublisher::with_encoding(&session, "car/blob", "application/octet-stream")
        .expect("publisher");
    let start = Instant::now();
    while !publisher.has_subscribers() {
        assert!(start.elapsed() < Duration::from_secs(20), "no subscriber");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The publisher blocks when the transport is full, so if the recorder's callback waited for
    // its writer, nothing would ever be dropped.
    let n = 400u64;
    let sent: Vec<Vec<u8>> = (0..n).map(|i| incompressible(i, 64 << 10)).collect();
    for bytes in &sent {
        publisher.put(bytes.clone()).expect("put");
    }
    // Let the last samples reach the recorder's queue before stopping it.
    std::thread::sleep(Duration::from_secs(2));
    signal(&record, "-INT");
    let output = finish(record, Duration::from_secs(120));
    session.close().wait().expect("close");
    // Exit status 3: the recording is lossy (its warnings went to the stderr drained above).
    assert_eq!(output.status.code(), Some(3), "{}", text(&output));

    let reader = BagReader::open(&out).expect("open");
    let dropped = reader.dropped_messages().expect("a dropped count");
    let recorded = payloads(&out, "car/blob");
    assert!(dropped > 0, "the recorder kept up: nothing was throttled");
    assert_eq!(
        recorded.len() as u64 + dropped,
        n,
        "published = recorded + dropped"
    );
    // What was kept is byte-exact and in order: a subsequence of what was sent.
    let mut rest = sent.iter();
    for got in &recorded {
        assert!(rest.any(|s| s == got), "a recorded message was never sent");
    }
}

/// A CDR payload of `demo/msg/Sample` (`float64 x`, `int32 n`): encapsulation header, then the
/// fields little-endian and aligned.
fn sample_cdr(x: f64, n: i32) -> Vec<u8> {
    let mut bytes = vec![0, 1, 0, 0];
    bytes.extend_from_slice(&x.to_le_bytes());
    bytes.extend_from_slice(&n.to_le_bytes());
    bytes
}

#[test]
fn played_topics_whose_schemas_are_not_in_the_registry_are_recorded_with_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = dir.path().join("foreign");
    let mut w = BagWriter::create(&source, WriteOptions::new()).expect("create");
    let sample = ChannelSpec {
        topic: "/car/sample".into(),
        message_encoding: "cdr".into(),
        schema: Some(bag::SchemaSpec {
            name: "demo/msg/Sample".into(),
            encoding: "ros2msg".into(),
            data: b"float64 x\nint32 n\n".to_vec(),
        }),
        metadata: [("topic_type_hash".to_string(), "RIHS01_0123".to_string())].into(),
    };
    let cdr = w.add_channel(sample.clone());
    // A Cap'n Proto type the recorder's registry does not know by this name.
    let info = schemas::by_name("EngineRpm").expect("registered");
    let mystery = ChannelSpec::capnp("car/mystery", "Mystery", info.capnp_name, info.descriptor);
    let capnp = w.add_channel(mystery.clone());
    let t0 = 1_700_000_000_000_000_000u64;
    for i in 0..50u64 {
        let t = t0 + i * 10_000_000;
        w.write(cdr, t, Some(t), &sample_cdr(i as f64 * 0.5, -(i as i32)))
            .expect("write");
        let bytes = schemas::sample::encode("EngineRpm", i as f64, i).expect("encode");
        w.write(capnp, t + 1, Some(t), &bytes).expect("write");
    }
    w.close().expect("close");

    let out = dir.path().join("recorded");
    let (record, endpoint) = start_recorder(&out, &["car/**", "--duration", "120"]);
    let play = bag_cmd()
        .args(["play", source.to_str().expect("utf-8")])
        .args(["--connect", &endpoint, "--rate", "10", "--wait", "20"])
        .output()
        .expect("play");
    assert!(play.status.success(), "{}", text(&play));
    std::thread::sleep(Duration::from_millis(500));
    signal(&record, "-INT");
    let recorded = finish(record, Duration::from_secs(30));
    assert!(recorded.status.success(), "{}", text(&recorded));

    let reader = BagReader::open(&out).expect("open");
    let channel = |topic: &str| {
        reader
            .channels()
            .iter()
            .find(|c| c.spec.topic == topic)
            .map(|c| (c.spec.clone(), c.message_count))
            .expect(topic)
    };
    let (got, count) = channel("car/sample");
    assert_eq!(count, Some(50));
    assert_eq!(got.message_encoding, "cdr");
    assert_eq!(
        got.schema, sample.schema,
        "the schema travelled byte for byte"
    );
    assert_eq!(got.metadata["topic_type_hash"], "RIHS01_0123");
    let (got, count) = channel("car/mystery");
    assert_eq!(count, Some(50));
    assert_eq!(got.schema, mystery.schema);
    assert_eq!(got.type_name(), "Mystery");

    // And the recording decodes as the source does, every field of every message.
    let fields = |bag: &Path, topic: &str| -> Vec<serde_json::Value> {
        let cat = bag_cmd()
            .args(["cat", "--json", "--no-data"])
            .arg(bag)
            .args(["--topics", topic])
            .output()
            .expect("cat");
        assert!(cat.status.success(), "{}", text(&cat));
        String::from_utf8_lossy(&cat.stdout)
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).expect("a JSON line")["fields"].clone()
            })
            .collect()
    };
    let recorded = fields(&out, "car/sample");
    assert_eq!(recorded, fields(&source, "/car/sample"));
    assert_eq!(
        (&recorded[7]["x"], &recorded[7]["n"]),
        (&3.5.into(), &(-7).into())
    );
    let recorded = fields(&out, "car/mystery");
    assert_eq!(recorded, fields(&source, "car/mystery"));
    assert!(recorded[7]["rpm"].is_number(), "{}", recorded[7]);
}
