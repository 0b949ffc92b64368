//! Shared formatting and time parsing for the CLI.

use anyhow::{Context, bail};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// `2026-12-02T12:00:00.123456789Z` for nanoseconds since the epoch.
pub fn utc(ns: u64) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ns))
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_else(|| format!("{ns} ns"))
}

/// `12.345 s`.
pub fn seconds(ns: u64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

/// `1.5 MiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Parses a time given as seconds from `start_ns` (`12.5`), absolute nanoseconds (an integer
/// of 13 digits or more), or RFC 3339 (`2026-12-02T12:00:00Z`).
pub fn parse_time(text: &str, start_ns: u64) -> anyhow::Result<u64> {
    let text = text.trim();
    if text.contains('T') || text.matches('-').count() >= 2 {
        let t = OffsetDateTime::parse(text, &Rfc3339)
            .with_context(|| format!("{text:?} is not an RFC 3339 time"))?;
        let ns = t.unix_timestamp_nanos();
        return u64::try_from(ns).with_context(|| format!("{text:?} is before 1970"));
    }
    if text.len() >= 13 && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse()
            .with_context(|| format!("{text:?} is not a nanosecond time"));
    }
    let secs: f64 = text.parse().with_context(|| {
        format!(
            "{text:?} is not a time: use seconds from the start (12.5), nanoseconds, or RFC 3339"
        )
    })?;
    if !secs.is_finite() || secs < 0.0 {
        bail!("{text:?}: seconds from the start must be zero or more");
    }
    Ok(start_ns.saturating_add((secs * 1e9).round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_in_three_forms() {
        assert_eq!(parse_time("1.5", 1_000).unwrap(), 1_500_001_000);
        assert_eq!(
            parse_time("1764676800000000000", 7).unwrap(),
            1_764_676_800_000_000_000
        );
        assert_eq!(
            parse_time("2025-12-02T12:00:00.5Z", 0).unwrap(),
            1_764_676_800_500_000_000
        );
        assert!(parse_time("soon", 0).is_err());
        assert!(parse_time("-3", 0).is_err());
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(3 * 1024 * 1024 / 2), "1.5 MiB");
    }
}
