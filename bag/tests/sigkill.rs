//! A writer process killed with SIGKILL at random moments: every message of every chunk that
//! was closed before the kill must come back, and `reindex` must make the bag whole.
//!
//! The test re-runs its own binary as the writer process (selected by an environment variable).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bag::{BagReader, BagWriter, ChannelSpec, PartStatus, ReadFilter, WriteOptions};

const CHILD_DIR_ENV: &str = "BAG_TEST_SIGKILL_WRITER_DIR";
const TEST_NAME: &str = "sigkill_at_random_moments_loses_only_the_open_chunk";

fn payload(i: u64) -> Vec<u8> {
    let len = 20 + (i % 200) as usize;
    (0..len)
        .map(|k| (i as usize).wrapping_mul(131).wrapping_add(k) as u8)
        .collect()
}

/// The writer process: writes forever, reporting after each explicit flush how many messages
/// are certainly on disk.
fn run_writer(dir: &str) {
    let options = WriteOptions::new()
        .chunk_size_bytes(16 * 1024)
        .chunk_max_age(Some(Duration::from_millis(5)))
        .part_max_bytes(Some(256 * 1024));
    let mut writer = BagWriter::create(dir, options).expect("create");
    let channel = writer.add_channel(ChannelSpec {
        topic: "car/test".into(),
        message_encoding: "application/octet-stream".into(),
        schema: None,
        metadata: Default::default(),
    });
    writer.add_dropped(3);
    for i in 0u64.. {
        writer
            .write(channel, 1_000 + i, Some(i), &payload(i))
            .expect("write");
        if i % 97 == 96 {
            writer.flush().expect("flush");
            println!("flushed {}", i + 1);
        }
    }
}

#[test]
fn sigkill_at_random_moments_loses_only_the_open_chunk() {
    if let Ok(dir) = std::env::var(CHILD_DIR_ENV) {
        run_writer(&dir);
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
    for trial in 0..12 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let flushes_before_kill = 1 + seed % 60;
        let extra_delay = Duration::from_micros(seed % 3000);
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("killed");
        let mut child = Command::new(&exe)
            .args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
            .env(CHILD_DIR_ENV, &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let mut on_disk = 0u64;
        let mut seen = 0;
        let deadline = Instant::now() + Duration::from_secs(60);
        while seen < flushes_before_kill && Instant::now() < deadline {
            let Some(Ok(line)) = lines.next() else { break };
            if let Some(n) = line.strip_prefix("flushed ") {
                on_disk = n.trim().parse().unwrap();
                seen += 1;
            }
        }
        std::thread::sleep(extra_delay);
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        assert!(on_disk > 0, "trial {trial}: the writer reported nothing");

        let reader = BagReader::open(&dir).unwrap();
        let mut cursor = reader.messages(&ReadFilter::all()).unwrap();
        let mut recovered = 0u64;
        while let Some(m) = cursor.next_message() {
            assert_eq!(
                m.log_time_ns,
                1_000 + recovered,
                "trial {trial}: order or gap"
            );
            assert_eq!(
                m.data,
                payload(recovered).as_slice(),
                "trial {trial}: bytes"
            );
            recovered += 1;
        }
        assert!(
            recovered >= on_disk,
            "trial {trial}: {recovered} recovered but {on_disk} were flushed before the kill"
        );
        assert_eq!(reader.dropped_messages(), Some(3), "trial {trial}");

        let report = bag::reindex::reindex(&dir).unwrap();
        let reader = BagReader::open(&dir).unwrap();
        assert!(
            reader
                .parts()
                .iter()
                .all(|p| p.status == PartStatus::Complete),
            "trial {trial}: {:?}",
            reader
                .parts()
                .iter()
                .map(|p| p.status.clone())
                .collect::<Vec<_>>()
        );
        assert_eq!(reader.message_count(), recovered, "trial {trial}");
        assert_eq!(
            report.metadata.redline.as_ref().unwrap().dropped_messages,
            Some(3)
        );
        eprintln!(
            "trial {trial}: {on_disk} flushed, {recovered} recovered, {} parts, {} repaired",
            reader.parts().len(),
            report.repaired.len()
        );
    }
}
