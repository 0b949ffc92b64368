//! How times and values are written on screen.

use time::OffsetDateTime;
use time::macros::format_description;

/// A value as the legend and inspector show it: integers exactly, others with up to six
/// decimals, trailing zeros removed; `—` for absent.
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        return "n/a".to_owned();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_owned()
}

/// Seconds since the start of the recording, `12.345 s`.
pub fn format_relative(t_ns: u64, t0_ns: u64) -> String {
    let s = (t_ns as f64 - t0_ns as f64) / 1e9;
    format!("{s:.3} s")
}

/// Absolute UTC time, `2026-06-01 08:00:12.345 UTC`.
pub fn format_utc(t_ns: u64) -> String {
    let format =
        format_description!("[year]-[month]-[day] [hour]:[minute]:[second].[subsecond digits:3]");
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(t_ns))
        .ok()
        .and_then(|t| t.format(&format).ok())
        .map_or_else(|| format!("{t_ns} ns"), |s| format!("{s} UTC"))
}

/// A byte count in binary units: `512 B`, `3.2 MiB`, `1.0 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(3 << 20), "3.0 MiB");
        assert_eq!(format_bytes(1 << 30), "1.0 GiB");
    }

    #[test]
    fn values() {
        assert_eq!(format_value(812.0), "812");
        assert_eq!(format_value(1.25), "1.25");
        assert_eq!(format_value(f64::NAN), "n/a");
        assert_eq!(format_value(-0.1234567), "-0.123457");
    }

    #[test]
    fn times() {
        assert_eq!(format_relative(2_500_000_000, 1_000_000_000), "1.500 s");
        assert_eq!(
            format_utc(1_780_300_812_345_000_000),
            "2026-06-01 08:00:12.345 UTC"
        );
    }
}
