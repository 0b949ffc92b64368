//! The `bag` binary as a user runs it: output, exit codes, bad input.

use std::path::Path;
use std::process::{Command, Output};

use bag::{BagWriter, ChannelSpec, Compression, WriteOptions};

fn bag(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bag"))
        .args(args)
        .output()
        .expect("runs")
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// A two-part bag of EngineRpm messages from the simulated drive, 10 Hz for 20 s.
fn drive(dir: &Path, dropped: u64) {
    let info = schemas::by_name("EngineRpm").unwrap();
    let options = WriteOptions::new()
        .compression(Compression::Zstd)
        .part_max_duration_ns(Some(10_000_000_000));
    let mut w = BagWriter::create(dir, options).unwrap();
    let ch = w.add_channel(ChannelSpec::capnp(
        "car/engine",
        info.registry_name,
        info.capnp_name,
        info.descriptor,
    ));
    w.advertise("car/horn", "Horn");
    let t0 = 1_764_676_800_000_000_000u64;
    for i in 0..200u64 {
        let bytes = schemas::sample::encode("EngineRpm", i as f64 / 10.0, i).unwrap();
        w.write(
            ch,
            t0 + i * 100_000_000,
            Some(t0 + i * 100_000_000 - 1_000),
            &bytes,
        )
        .unwrap();
    }
    w.add_dropped(dropped);
    w.close().unwrap();
}

#[test]
fn info_reports_a_clean_bag_and_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    drive(&dir, 0);
    let out = bag(&["info", dir.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("messages:    200"), "{stdout}");
    assert!(
        stdout.contains("car/engine") && stdout.contains("EngineRpm"),
        "{stdout}"
    );
    assert!(
        stdout.contains("10.00 Hz") || stdout.contains("10.05 Hz"),
        "{stdout}"
    );
    assert!(
        stdout.contains("advertised but never published:\n  car/horn (Horn)"),
        "{stdout}"
    );
    assert!(stdout.contains("drive_1.mcap"), "{stdout}");
}

#[test]
fn info_json_reports_drops_and_a_torn_part_and_exits_3() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    drive(&dir, 12);
    let part = dir.join("drive_1.mcap");
    let bytes = std::fs::read(&part).unwrap();
    std::fs::write(&part, &bytes[..bytes.len() * 2 / 3]).unwrap();

    let out = bag(&["info", dir.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["dropped_messages"], 12);
    assert_eq!(v["parts"][0]["state"], "complete");
    assert_eq!(v["parts"][1]["state"], "torn");
    assert!(v["parts"][1]["damage"]["offset"].as_u64().unwrap() > 0);
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("This recording has gaps"), "{warnings}");

    let text_out = text(&bag(&["info", dir.to_str().unwrap()]).stdout);
    assert!(text_out.contains("torn, "), "{text_out}");
    assert!(
        text_out.contains("warning: This recording has gaps: 12 messages"),
        "{text_out}"
    );

    // reindex repairs the torn part; drops are kept, so the bag still reports loss (exit 3).
    let out = bag(&["reindex", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("repaired torn part drive_1.mcap"));
    let v: serde_json::Value =
        serde_json::from_slice(&bag(&["info", dir.to_str().unwrap(), "--json"]).stdout).unwrap();
    assert_eq!(v["parts"][1]["state"], "complete");
    assert_eq!(v["dropped_messages"], 12);
    // The bytes are sound again, but 12 messages are still lost: verify exits 3 (issue 24 #15).
    assert_eq!(
        bag(&["verify", dir.to_str().unwrap()]).status.code(),
        Some(3)
    );
}

#[test]
fn cat_json_prints_decoded_fields_in_time_order_within_the_range() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    drive(&dir, 0);
    let out = bag(&[
        "cat",
        dir.to_str().unwrap(),
        "--json",
        "--start",
        "5",
        "--end",
        "6",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 10);
    let t0 = 1_764_676_800_000_000_000u64;
    for (k, line) in lines.iter().enumerate() {
        let i = 50 + k as u64;
        assert_eq!(line["log_time"], t0 + i * 100_000_000);
        assert_eq!(line["publish_time"], t0 + i * 100_000_000 - 1_000);
        assert_eq!(line["topic"], "car/engine");
        assert_eq!(line["schema"], "EngineRpm");
        let expected = schemas::sample::VehicleState::at(i as f64 / 10.0);
        let rpm = line["fields"]["rpm"].as_f64().unwrap();
        assert!(
            (rpm - f64::from(expected.rpm)).abs() < 1e-3,
            "{rpm} vs {}",
            expected.rpm
        );
        use base64::Engine;
        let data = base64::engine::general_purpose::STANDARD
            .decode(line["data_b64"].as_str().unwrap())
            .unwrap();
        assert_eq!(
            data,
            schemas::sample::encode("EngineRpm", i as f64 / 10.0, i).unwrap()
        );
    }
}

#[test]
fn bad_input_gives_a_clear_message_and_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-bag");
    let out = bag(&["info", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("no-such-bag") && err.contains("No such file"),
        "{err}"
    );

    let garbage = tmp.path().join("garbage.mcap");
    std::fs::write(&garbage, b"GIF89a not a recording").unwrap();
    let out = bag(&["cat", garbage.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("not a recording"),
        "{}",
        text(&out.stderr)
    );
    // verify reports a non-MCAP file as a finding, not a failure to run.
    assert_eq!(
        bag(&["verify", garbage.to_str().unwrap()]).status.code(),
        Some(3)
    );

    // A time that does not parse is a usage error, like clap's own.
    let out = bag(&["cat", tmp.path().to_str().unwrap(), "--start", "soon"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--start"),
        "{}",
        text(&out.stderr)
    );

    // A zstd level out of range is refused before anything is created.
    let out_dir = tmp.path().join("rec");
    let out = bag(&[
        "record",
        "-o",
        out_dir.to_str().unwrap(),
        "--compression-level",
        "30",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("--compression-level") && err.contains("30"),
        "{err}"
    );
    assert!(!out_dir.exists());

    // So is a key expression zenoh rejects, and a duration no clock can reach.
    let out = bag(&["record", "-o", out_dir.to_str().unwrap(), "car//x"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("car//x"), "{err}");
    assert!(!out_dir.exists(), "a bad key expression left a bag behind");
    let out = bag(&[
        "record",
        "-o",
        out_dir.to_str().unwrap(),
        "--duration",
        "1e30",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("--duration 1e30") && err.contains("too long"),
        "{err}"
    );
    assert!(!out_dir.exists());

    let help = text(&bag(&["--help"]).stdout);
    for cmd in ["info", "cat", "verify", "reindex"] {
        assert!(help.contains(cmd), "{help}");
    }
}

#[test]
fn export_writes_a_byte_exact_sub_range_that_verifies_and_keeps_the_drop_count() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    drive(&dir, 9);
    let out = tmp.path().join("cut");
    let run = bag(&[
        "export",
        dir.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--start",
        "8.5",
        "--end",
        "12",
    ]);
    assert_eq!(
        run.status.code(),
        Some(3),
        "lossy source: {}",
        text(&run.stderr)
    );
    assert!(
        text(&run.stderr).contains("dropped 9 messages"),
        "{}",
        text(&run.stderr)
    );
    assert!(
        text(&run.stdout).contains("exported 35 messages"),
        "{}",
        text(&run.stdout)
    );

    let source = bag::BagReader::open(&dir).unwrap();
    let t0 = 1_764_676_800_000_000_000u64;
    let expected: Vec<_> = source
        .messages(
            &bag::ReadFilter::all()
                .start_ns(t0 + 8_500_000_000)
                .end_ns(t0 + 12_000_000_000),
        )
        .unwrap()
        .collect();
    let cut = bag::BagReader::open(&out).unwrap();
    let got: Vec<_> = cut.messages(&bag::ReadFilter::all()).unwrap().collect();
    assert_eq!(got, expected);
    assert_eq!(cut.dropped_messages(), Some(9));
    let src = cut
        .metadata()
        .unwrap()
        .redline
        .as_ref()
        .unwrap()
        .source
        .clone()
        .unwrap();
    assert_eq!(
        (src.start_ns, src.end_ns),
        (t0 + 8_500_000_000, t0 + 12_000_000_000)
    );
    assert!(src.path.ends_with("drive"));
    assert_eq!(cut.advertised_never_published().len(), 1);
    // Every byte verifies; the one error is the loss the export carries (issue 24 item 15).
    let verified = bag(&["verify", out.to_str().unwrap()]);
    assert_eq!(verified.status.code(), Some(3));
    let report = text(&verified.stdout);
    let findings: Vec<&str> = report
        .lines()
        .filter(|l| {
            (l.contains(": error: ") || l.contains(": warning: ")) && !l.contains(" errors, ")
        })
        .collect();
    assert_eq!(findings.len(), 1, "{report}");
    assert!(findings[0].contains("dropped_messages"), "{report}");
    // The verdict ends the report, and is the reason on stderr.
    assert!(report.contains("1 errors, 0 warnings"), "{report}");
    assert!(
        text(&verified.stderr).contains("1 errors, 0 warnings"),
        "{}",
        text(&verified.stderr)
    );

    // The target must not hold anything already.
    let again = bag(&["export", dir.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        text(&again.stderr).contains("not empty"),
        "{}",
        text(&again.stderr)
    );
}

/// An empty range, a range outside the recording and topics it does not have say so: usage
/// errors exit 2 and write nothing; `cat` of a range past the end warns.
#[test]
fn ranges_that_select_nothing_say_so() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    drive(&src, 0);
    let src = src.to_str().unwrap();
    let code_and_err = |args: &[&str]| {
        let out = bag(args);
        (out.status.code(), text(&out.stderr), text(&out.stdout))
    };
    let out1 = tmp.path().join("out1");
    let (code, err, _) = code_and_err(&[
        "export",
        src,
        "-o",
        out1.to_str().unwrap(),
        "--start",
        "8",
        "--end",
        "2",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is not after --start"), "{err}");
    assert!(!out1.exists(), "nothing written");

    let out2 = tmp.path().join("out2");
    let (code, err, _) = code_and_err(&[
        "export",
        src,
        "-o",
        out2.to_str().unwrap(),
        "--topics",
        "nope",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("nope") && err.contains("car/engine"), "{err}");
    assert!(!out2.exists(), "nothing written");

    let out3 = tmp.path().join("out3");
    let (code, err, _) = code_and_err(&[
        "export",
        src,
        "-o",
        out3.to_str().unwrap(),
        "--start",
        "1000",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("after the recording's last message"), "{err}");
    assert!(!out3.exists(), "nothing written");

    let (code, err, stdout) = code_and_err(&["cat", src, "--start", "1000"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(stdout.is_empty());
    assert!(err.contains("warning: nothing to print"), "{err}");

    // One unknown topic among known ones: a warning, and the known one is printed.
    let (code, err, stdout) = code_and_err(&["cat", src, "--topics", "car/engine,nope"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(stdout.lines().count(), 200);
    assert!(err.contains("\"nope\" is not in this recording"), "{err}");
}

/// `bag info X | head -1` and the like: a reader that goes away early ends the output, not
/// the command (no panic, the command's own exit code).
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    drive(&dir, 0);
    let dropped = tmp.path().join("dropped");
    drive(&dropped, 5);
    for (args, code) in [
        (vec!["info", dir.to_str().unwrap()], 0),
        (vec!["verify", dir.to_str().unwrap()], 0),
        (vec!["cat", "--json", dir.to_str().unwrap()], 0),
        (vec!["info", dropped.to_str().unwrap()], 3),
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bag"))
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("runs");
        // Closed before the child has started to write.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("waits");
        let err = text(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    }
}

/// `--no-data` leaves the raw message out; keys come in the order written (topic first, then
/// times; `fields` in schema order).
#[test]
fn cat_json_can_leave_out_the_raw_message() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drive");
    drive(&dir, 0);
    let out = bag(&["cat", "--json", "--no-data", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 200);
    let first = stdout.lines().next().unwrap();
    assert!(
        first.starts_with("{\"topic\":\"car/engine\",\"log_time\":"),
        "{first}"
    );
    assert!(!stdout.contains("data_b64"), "{first}");
    let with = bag(&["cat", "--json", dir.to_str().unwrap()]);
    assert!(
        text(&with.stdout)
            .lines()
            .all(|l| l.contains("\"data_b64\":"))
    );
}

#[test]
fn verify_checks_what_it_can_of_a_ros1_bag_or_a_sqlite_rosbag2_and_never_calls_garbage_valid() {
    let tmp = tempfile::tempdir().unwrap();
    // Only the magic: verify checks it as a ROS 1 bag (not as MCAP) and finds no index.
    let ros1 = tmp.path().join("drive.bag");
    std::fs::write(&ros1, b"#ROSBAG V2.0\n\x04\x00\x00\x00").unwrap();
    let sqlite = tmp.path().join("rosbag2");
    std::fs::create_dir(&sqlite).unwrap();
    std::fs::write(sqlite.join("rosbag2_0.db3"), b"SQLite format 3\0").unwrap();
    std::fs::write(
        sqlite.join("metadata.yaml"),
        b"rosbag2_bagfile_information: {}\n",
    )
    .unwrap();
    for (path, checked, finding) in [
        (
            &ros1,
            "checked: a ROS 1 bag",
            "error: BagHeader: expected an index section",
        ),
        (
            &sqlite,
            "checked: a rosbag2 SQLite bag",
            "rosbag2_0.db3:0: error: file:",
        ),
    ] {
        let out = bag(&["verify", path.to_str().unwrap()]);
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(3), "{checked}: {stdout}");
        assert!(stdout.starts_with(checked), "{stdout}");
        assert!(stdout.contains(finding), "{stdout}");
    }
    // A .bag name alone changes nothing: an MCAP file named .bag is verified as MCAP.
    let mcap_named_bag = tmp.path().join("really-mcap.bag");
    std::fs::write(&mcap_named_bag, b"\x89MCAP0\r\n").unwrap();
    let out = bag(&["verify", mcap_named_bag.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains("checked:"));
}

#[test]
fn info_lists_attachments_and_metadata_records() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("foreign.mcap");
    let mut w = mcap::Writer::new(std::io::BufWriter::new(
        std::fs::File::create(&path).unwrap(),
    ))
    .unwrap();
    let channel = w
        .add_channel(0, "/status", "json", &Default::default())
        .unwrap();
    let header = mcap::records::MessageHeader {
        channel_id: channel,
        sequence: 0,
        log_time: 1_000,
        publish_time: 1_000,
    };
    w.write_to_known_channel(&header, br#"{"ok": 1}"#).unwrap();
    w.attach(&mcap::Attachment {
        log_time: 1_700_000_000_000_000_000,
        create_time: 0,
        name: "calib.yaml".into(),
        media_type: "application/yaml".into(),
        data: std::borrow::Cow::Borrowed(b"gain: 2\n"),
    })
    .unwrap();
    for name in ["run", "vehicle"] {
        w.write_metadata(&mcap::records::Metadata {
            name: name.into(),
            metadata: [("driver".to_owned(), "test".to_owned())].into(),
        })
        .unwrap();
    }
    w.finish().unwrap();
    drop(w);

    let out = bag(&["info", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let attachments = stdout.find("attachments:").expect(&stdout);
    let line = stdout[attachments..].lines().nth(1).unwrap();
    for want in [
        "calib.yaml",
        "8 B",
        "application/yaml",
        "2023-11-14T22:13:20",
        "foreign.mcap",
    ] {
        assert!(line.contains(want), "{want} in {line:?}\n{stdout}");
    }
    let metadata = stdout.find("metadata records:").expect(&stdout);
    let names: Vec<&str> = stdout[metadata..].lines().skip(1).take(2).collect();
    assert!(
        names[0].contains("run") && names[1].contains("vehicle"),
        "{stdout}"
    );

    let out = bag(&["info", "--json", path.to_str().unwrap()]);
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let part = &info["parts"][0];
    assert_eq!(part["attachments"][0]["name"], "calib.yaml");
    assert_eq!(part["attachments"][0]["media_type"], "application/yaml");
    assert_eq!(part["attachments"][0]["size_bytes"], 8);
    assert_eq!(
        part["attachments"][0]["log_time_ns"],
        1_700_000_000_000_000_000u64
    );
    assert_eq!(
        part["metadata_records"],
        serde_json::json!(["run", "vehicle"])
    );
}
