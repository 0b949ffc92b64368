//! The built-in demo recording: a few minutes of the simulated drive from [`schemas::sample`],
//! written with our [`BagWriter`] at realistic rates, with the flaws a real recording has (dropped
//! messages, unstamped samples, a topic advertised but never published, a torn last part).

use std::path::{Path, PathBuf};

use bag::{BagWriter, ChannelSpec, WriteOptions};

/// The demo's topics: (topic, registry name, rate in Hz).
pub const DEMO_TOPICS: &[(&str, &str, f64)] = &[
    ("car/imu", "Imu", 200.0),
    ("car/wheels", "WheelSpeeds", 100.0),
    ("car/engine", "EngineRpm", 50.0),
    ("car/driver", "DriverInputs", 50.0),
    ("car/gnss", "GnssFix", 10.0),
    ("car/battery", "Battery", 1.0),
    ("car/diagnostics", "DiagnosticLog", 0.2),
];

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
    let mut channels = Vec::new();
    for &(topic, registry, rate) in DEMO_TOPICS {
        let Some(info) = schemas::by_name(registry) else {
            return Err(format!("schema {registry} is not registered"));
        };
        let id = writer.add_channel(ChannelSpec::capnp(
            topic,
            info.registry_name,
            info.capnp_name,
            info.descriptor,
        ));
        channels.push((id, registry, rate, 0u64));
    }
    writer.advertise("car/camera/front", "DiagnosticLog");
    // The recorder "drops" DEMO_DROPPED IMU messages a little past the middle: a silence in
    // that topic, which the scope finds, and the count metadata.yaml carries.
    let imu_gap_start = (options.duration_secs * 0.53 * 200.0) as u64;
    let imu_gap = imu_gap_start..imu_gap_start + DEMO_DROPPED;
    // Every topic's next due time; merge them in time order.
    let mut next: Vec<f64> = vec![0.0; channels.len()];
    // `bag record` closes a chunk once it is a second old; the demo, written faster than real
    // time, closes one per simulated second to have the same layout on disk.
    let mut chunk_end = 1.0;
    while let Some((i, &t)) = next.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1)) {
        if t >= options.duration_secs {
            break;
        }
        if t >= chunk_end {
            writer.flush().map_err(err)?;
            chunk_end = t.floor() + 1.0;
        }
        let Some((id, registry, rate, seq)) = channels.get_mut(i) else {
            break;
        };
        let bytes = schemas::sample::encode(registry, t, *seq).map_err(|e| e.to_string())?;
        let log_ns = options.start_ns + (t * 1e9) as u64;
        // Publisher clocks run 0.4-3 ms behind the recorder, with a slow wobble; the battery
        // monitor sometimes sends without a timestamp.
        let lag_ns = 400_000 + ((*seq * 7919) % 2_600_000);
        let publish = if *registry == "Battery" && *seq % 15 == 7 {
            None
        } else {
            Some(log_ns.saturating_sub(lag_ns))
        };
        if !(*registry == "Imu" && imu_gap.contains(seq)) {
            writer.write(*id, log_ns, publish, &bytes).map_err(err)?;
        }
        *seq += 1;
        if let Some(n) = next.get_mut(i) {
            *n = *seq as f64 / *rate;
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
