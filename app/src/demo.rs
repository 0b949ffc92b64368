//! The built-in demo recording: a few minutes of the simulated drive from [`schemas::sample`],
//! written with our [`BagWriter`] at the rates of [`schemas::vehicle`] (the live simulator's
//! table), with the flaws a real recording has (dropped messages, unstamped samples, a topic
//! advertised but never published, a torn last part).

use std::path::{Path, PathBuf};

use bag::{BagWriter, ChannelSpec, WriteOptions};
use schemas::vehicle::{SILENT_TOPIC, Schedule, TOPICS};

/// The topic whose messages the demo's recorder "dropped".
pub const DEMO_DROPPED_TOPIC: &str = "car/imu";

/// IMU messages the demo's recorder "dropped": missing from the recording, counted in
/// metadata.yaml.
pub const DEMO_DROPPED: u64 = 37;

/// How the demo is shaped.
#[derive(Debug, Clone, Copy)]
pub struct DemoOptions {
    /// Length of the drive, s.
    pub duration_secs: f64,
    /// Length of each part, s.
    pub part_secs: f64,
    /// Start of the recording, ns since the epoch.
    pub start_ns: u64,
    /// Fraction of the last part's bytes cut off to tear it (0: leave it complete).
    pub tear_fraction: f64,
}

impl Default for DemoOptions {
    fn default() -> Self {
        Self {
            duration_secs: 180.0,
            part_secs: 60.0,
            // 2026-06-01T08:00:00Z: a fixed date keeps screenshots reproducible.
            start_ns: 1_780_300_800_000_000_000,
            tear_fraction: 0.35,
        }
    }
}

/// Writes the demo recording into `dir` (created; must not exist) and returns its path.
pub fn write_demo(dir: &Path, options: DemoOptions) -> Result<PathBuf, String> {
    let err = |e: bag::BagError| format!("writing the demo recording: {e}");
    let part_ns = (options.part_secs * 1e9) as u64;
    let mut writer =
        BagWriter::create(dir, WriteOptions::new().part_max_duration_ns(Some(part_ns)))
            .map_err(err)?;
    let mut channels = Vec::with_capacity(TOPICS.len());
    for topic in TOPICS {
        let Some(info) = schemas::by_name(topic.schema) else {
            return Err(format!("schema {} is not registered", topic.schema));
        };
        channels.push(writer.add_channel(ChannelSpec::capnp(
            topic.topic,
            info.registry_name,
            info.capnp_name,
            info.descriptor,
        )));
    }
    writer.advertise(SILENT_TOPIC.topic, SILENT_TOPIC.schema);
    // The recorder "drops" DEMO_DROPPED IMU messages a little past the middle: a silence in
    // that topic, which the scope finds, and the count metadata.yaml carries.
    let imu_rate = TOPICS
        .iter()
        .find(|t| t.topic == DEMO_DROPPED_TOPIC)
        .map_or(0.0, |t| t.rate_hz);
    let imu_gap_start = (options.duration_secs * 0.53 * imu_rate) as u64;
    let imu_gap = imu_gap_start..imu_gap_start + DEMO_DROPPED;
    // `bag record` closes a chunk once it is a second old; the demo, written faster than real
    // time, closes one per simulated second to have the same layout on disk.
    let mut chunk_end = 1.0;
    for due in Schedule::new() {
        let t = due.t_secs;
        if t >= options.duration_secs {
            break;
        }
        if t >= chunk_end {
            writer.flush().map_err(err)?;
            chunk_end = t.floor() + 1.0;
        }
        let Some(&id) = channels.get(due.index) else {
            break;
        };
        let bytes =
            schemas::sample::encode(due.topic.schema, t, due.seq).map_err(|e| e.to_string())?;
        let log_ns = options.start_ns + (t * 1e9) as u64;
        // Publisher clocks run 0.4-3 ms behind the recorder, with a slow wobble. The battery
        // monitor, whose live publisher sends no timestamps (`stamped: false` in the table),
        // lacks one here on every 15th message only, as the demo recording always had it.
        let lag_ns = 400_000 + ((due.seq * 7919) % 2_600_000);
        let publish = if !due.topic.stamped && due.seq % 15 == 7 {
            None
        } else {
            Some(log_ns.saturating_sub(lag_ns))
        };
        if !(due.topic.topic == DEMO_DROPPED_TOPIC && imu_gap.contains(&due.seq)) {
            writer.write(id, log_ns, publish, &bytes).map_err(err)?;
        }
    }
    writer.add_dropped(DEMO_DROPPED);
    let summary = writer.close().map_err(err)?;
    if options.tear_fraction > 0.0
        && summary.parts.len() > 1
        && let Some(last) = summary.parts.last()
    {
        let path = dir.join(&last.path);
        let len = std::fs::metadata(&path).map_err(|e| e.to_string())?.len();
        let keep = (len as f64 * (1.0 - options.tear_fraction)) as u64;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|e| format!("tearing {}: {e}", path.display()))?;
        file.set_len(keep)
            .map_err(|e| format!("tearing {}: {e}", path.display()))?;
    }
    Ok(dir.to_path_buf())
}

/// Writes a fresh demo recording under the temp directory and returns its path.
pub fn write_demo_in_temp() -> Result<PathBuf, String> {
    let root = std::env::temp_dir().join("redline-scope-demo");
    std::fs::create_dir_all(&root).map_err(|e| format!("creating {}: {e}", root.display()))?;
    let dir = root.join(format!("drive-{}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("clearing {}: {e}", dir.display()))?;
    }
    write_demo(&dir, DemoOptions::default())
}

#[cfg(test)]
mod tests {
    use bag::BagReader;

    use super::*;

    /// The demo and the live simulator show one car: the recording has exactly the topics,
    /// schemas, rates and silent topic of `schemas::vehicle`, which the simulator publishes.
    #[test]
    fn the_demo_recording_has_the_simulated_vehicles_topics_at_its_rates() {
        let dir = tempfile::tempdir().expect("tempdir");
        let duration_secs = 30.0;
        let path = write_demo(
            &dir.path().join("drive"),
            DemoOptions {
                duration_secs,
                part_secs: 15.0,
                tear_fraction: 0.0,
                ..DemoOptions::default()
            },
        )
        .expect("demo");
        let reader = BagReader::open(&path).expect("open");
        assert_eq!(reader.channels().len(), TOPICS.len());
        for topic in TOPICS {
            let channel = reader
                .channels()
                .iter()
                .find(|c| c.spec.topic == topic.topic)
                .unwrap_or_else(|| panic!("{} is missing", topic.topic));
            assert_eq!(channel.spec.type_name(), topic.schema);
            let mut expected = (duration_secs * topic.rate_hz).ceil() as u64;
            if topic.topic == DEMO_DROPPED_TOPIC {
                expected -= DEMO_DROPPED;
            }
            assert_eq!(channel.message_count, Some(expected), "{}", topic.topic);
        }
        let silent: Vec<(&str, &str)> = reader
            .advertised_never_published()
            .iter()
            .map(|a| (a.topic.as_str(), a.schema.as_str()))
            .collect();
        assert_eq!(silent, [(SILENT_TOPIC.topic, SILENT_TOPIC.schema)]);
        assert_eq!(reader.dropped_messages(), Some(DEMO_DROPPED));
    }
}
