//! How times and values are written on screen.

use decode::LeafKind;
use time::OffsetDateTime;

use crate::data::series::{Series, is_absent};

use time::macros::format_description;

/// A value as the legend, inspector and hover show it: the shortest digits that read back as
/// the same number, in scientific notation outside 1e-4..1e9; `n/a` for absent, `NaN` for a
/// NaN the recording holds, `inf` and `-inf`. Zero is `0`, whatever its sign. A value an
/// `f32` holds exactly is written as that `f32` (the `f32` 0.1 is `0.1`, not
/// `0.10000000149011612`): columns keep `f32` values that way (see
/// [`Series`](crate::data::series::Series)).
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        return if is_absent(v) { "n/a" } else { "NaN" }.to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if v == 0.0 {
        return "0".to_owned();
    }
    let narrow = f64::from(v as f32) == v;
    // Rust's `{}` and `{:e}` print the shortest digits that round-trip.
    let plain = (1e-4..1e9).contains(&v.abs());
    match (plain, narrow) {
        (true, false) => format!("{v}"),
        (false, false) => format!("{v:e}"),
        (true, true) => format!("{}", v as f32),
        (false, true) => format!("{:e}", v as f32),
    }
}

/// Sample `i` of a column of kind `kind`: integers exactly (a u64 past 2^53 as the message
/// carried it), other values as [`format_value`]; `None` past the end.
pub fn format_sample(series: &Series, kind: LeafKind, i: usize) -> Option<String> {
    let v = series.value(i)?;
    let integer = !matches!(kind, LeafKind::Float);
    if integer && let Some(exact) = series.exact(i) {
        return Some(exact.to_string());
    }
    Some(format_value(v))
}

/// `text` cut to at most `max` characters, with `…` where it was cut.
pub fn elide(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
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
        assert_eq!(format_value(crate::data::series::DATA_NAN), "NaN");
        assert_eq!(format_value(-0.1234567), "-0.1234567");
        assert_eq!(format_value(f64::INFINITY), "inf");
        assert_eq!(format_value(-0.0), "0");
    }

    #[test]
    fn tiny_and_huge_values_are_short_and_never_minus_zero() {
        assert_eq!(format_value(-1.25e-10), "-1.25e-10");
        assert_eq!(format_value(1e306), "1e306");
        assert_eq!(format_value(1e-4), "0.0001");
        assert_eq!(format_value(999_999_999.5), "999999999.5");
        assert_eq!(format_value(1e9), "1e9");
        assert_eq!(format_value(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(format_value(f64::from(0.1f32)), "0.1");
        // Every value reads back as itself.
        for v in [
            1.0 / 3.0,
            -2.5e-300,
            123_456.789,
            f64::MAX,
            f64::MIN_POSITIVE,
            -7e-5,
        ] {
            assert_eq!(format_value(v).parse::<f64>().ok(), Some(v), "{v}");
        }
    }

    #[test]
    fn a_u64_past_2_to_the_53_is_shown_exactly() {
        let mut b = crate::data::series::SeriesBuilder::default();
        b.push_int(1);
        b.push_int(12_345_678_901_234_567_890);
        b.push_int(i128::from(u64::MAX));
        b.push(f64::NAN);
        let s = b.finish();
        let show = |i| format_sample(&s, LeafKind::UInt, i).unwrap_or_default();
        assert_eq!(show(0), "1");
        assert_eq!(show(1), "12345678901234567890");
        assert_eq!(show(2), "18446744073709551615");
        assert_eq!(show(3), "n/a");
    }

    #[test]
    fn elided_text_keeps_its_start() {
        assert_eq!(elide("car/engine/rpm", 40), "car/engine/rpm");
        assert_eq!(elide("car/engine/rpm", 8), "car/eng…");
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
