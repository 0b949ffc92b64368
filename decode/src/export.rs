//! Signals as one table: a shared time column (the union of every signal's sample times) and a
//! column per signal, written as CSV. What the scope's File > Export Signals writes; any tool
//! with columns of (time, value) samples can use it.
//!
//! Rows: one per distinct sample time in the range; a time at which some signal holds several
//! samples gets as many rows (the j-th sample of each signal at that time on the j-th row), so
//! no sample is lost. A signal with no sample on a row is either empty or holds its last value
//! before it ([`Fill`]), including its last value from before the range. Values are written as
//! the signal gives them (64-bit integers exactly, floats in their shortest round-trip form,
//! `NaN`, `inf`, `-inf` as pandas and polars read them); a sample a message did not carry is
//! empty.

use std::io::Write;

/// One signal's samples, in time order.
pub trait ExportColumn {
    /// Log times, ns, not decreasing.
    fn times(&self) -> &[u64];
    /// Appends sample `i` to `out` as text; false (nothing appended) when the message did not
    /// carry it.
    fn write_value(&self, i: usize, out: &mut String) -> bool;
}

/// What a signal shows on a row where it has no sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fill {
    /// Its last value before the row (empty before its first sample).
    #[default]
    Hold,
    /// Nothing.
    Empty,
}

/// Rows are reported every this many.
const PROGRESS_EVERY: u64 = 65_536;

/// Writes `columns` (named `names`) between `start_ns` and `end_ns` (both included) as CSV to
/// `out`: a header `time_ns,time_s,<names>`, then a row per sample time, `time_s` counted from
/// `t0_ns`. `progress(rows_done, rows_total)` is called as it goes. Returns the rows written.
#[allow(clippy::too_many_arguments)]
pub fn write_csv(
    out: &mut dyn Write,
    names: &[String],
    columns: &[&dyn ExportColumn],
    (start_ns, end_ns): (u64, u64),
    fill: Fill,
    t0_ns: u64,
    progress: &dyn Fn(u64, u64),
) -> std::io::Result<u64> {
    let mut line = String::from("time_ns,time_s");
    for name in names {
        line.push(',');
        push_field(&mut line, name);
    }
    line.push('\n');
    out.write_all(line.as_bytes())?;
    // Per column: the first sample in range, and one past the last.
    let bounds: Vec<(usize, usize)> = columns
        .iter()
        .map(|c| {
            let t = c.times();
            (
                t.partition_point(|&x| x < start_ns),
                t.partition_point(|&x| x <= end_ns),
            )
        })
        .collect();
    let total: u64 = bounds.iter().map(|(a, b)| (b - a) as u64).sum();
    let mut next: Vec<usize> = bounds.iter().map(|b| b.0).collect();
    // Held: the sample each column shows until its next one (its last before the range).
    let mut held: Vec<Option<usize>> = bounds.iter().map(|b| b.0.checked_sub(1)).collect();
    let (mut rows, mut samples_done) = (0u64, 0u64);
    loop {
        let t = columns
            .iter()
            .zip(&next)
            .zip(&bounds)
            .filter_map(|((c, &i), b)| (i < b.1).then(|| c.times().get(i).copied()).flatten())
            .min();
        let Some(t) = t else {
            break;
        };
        // How many samples each column has at `t`: that many rows at `t`.
        let at_t: Vec<usize> = columns
            .iter()
            .zip(&next)
            .zip(&bounds)
            .map(|((c, &i), b)| {
                c.times()
                    .get(i..b.1)
                    .map_or(0, |ts| ts.partition_point(|&x| x == t))
            })
            .collect();
        let depth = at_t.iter().copied().max().unwrap_or(0);
        for j in 0..depth {
            line.clear();
            line.push_str(&t.to_string());
            line.push(',');
            line.push_str(&relative_seconds(t, t0_ns));
            for (k, column) in columns.iter().enumerate() {
                line.push(',');
                let here = (j < at_t[k]).then(|| next[k] + j);
                if let Some(i) = here {
                    held[k] = Some(i);
                }
                let shown = match fill {
                    Fill::Hold => here.or(held[k]),
                    Fill::Empty => here,
                };
                if let Some(i) = shown {
                    column.write_value(i, &mut line);
                }
            }
            line.push('\n');
            out.write_all(line.as_bytes())?;
            rows += 1;
            if rows.is_multiple_of(PROGRESS_EVERY) {
                progress(samples_done, total);
            }
        }
        for (k, n) in at_t.iter().enumerate() {
            next[k] += n;
            samples_done += *n as u64;
        }
    }
    progress(total, total);
    out.flush()?;
    Ok(rows)
}

/// Appends float `v` as a table cell: its shortest digits that read back as the same `f64`,
/// with `.0` on a whole number (or readers take a float column for integers), and `NaN`,
/// `inf`, `-inf` as pandas and polars read them.
pub fn push_float(v: f64, out: &mut String) {
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "inf" } else { "-inf" });
    } else {
        let text = v.to_string();
        let whole = !text.contains(['.', 'e', 'E']);
        out.push_str(&text);
        if whole {
            out.push_str(".0");
        }
    }
}

/// Appends a decoded value as a table cell: integers exactly, floats by [`push_float`].
pub fn push_scalar(v: crate::Scalar, out: &mut String) {
    match v {
        crate::Scalar::Int(i) => out.push_str(&i.to_string()),
        crate::Scalar::UInt(u) => out.push_str(&u.to_string()),
        crate::Scalar::Float(f) => push_float(f, out),
    }
}

/// `t - t0` in seconds, every nanosecond exact: `12.000345678`, `-0.5`.
fn relative_seconds(t: u64, t0: u64) -> String {
    let d = i128::from(t) - i128::from(t0);
    let sign = if d < 0 { "-" } else { "" };
    let a = d.unsigned_abs();
    let mut frac = format!("{:09}", a % 1_000_000_000);
    while frac.len() > 1 && frac.ends_with('0') {
        frac.pop();
    }
    format!("{sign}{}.{frac}", a / 1_000_000_000)
}

/// `text` as one CSV field: quoted when it holds a comma, a quote or a line break.
fn push_field(line: &mut String, text: &str) {
    if text.contains([',', '"', '\n', '\r']) {
        line.push('"');
        line.push_str(&text.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Col(Vec<u64>, Vec<Option<f64>>);

    impl ExportColumn for Col {
        fn times(&self) -> &[u64] {
            &self.0
        }
        fn write_value(&self, i: usize, out: &mut String) -> bool {
            match self.1.get(i).copied().flatten() {
                Some(v) => {
                    out.push_str(&v.to_string());
                    true
                }
                None => false,
            }
        }
    }

    fn csv(columns: &[&dyn ExportColumn], range: (u64, u64), fill: Fill) -> String {
        let names: Vec<String> = vec!["a,b".into(), "c".into()];
        let mut out = Vec::new();
        write_csv(&mut out, &names, columns, range, fill, 1_000, &|_, _| {}).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn rows_are_the_union_of_sample_times_held_or_empty() {
        let a = Col(
            vec![1_000, 3_000, 3_000, 5_000],
            vec![Some(1.0), Some(2.0), Some(2.5), None],
        );
        let b = Col(vec![2_000, 3_000], vec![Some(10.0), Some(f64::NAN)]);
        let held = csv(&[&a, &b], (0, u64::MAX), Fill::Hold);
        assert_eq!(
            held,
            "time_ns,time_s,\"a,b\",c\n\
             1000,0.0,1,\n\
             2000,0.000001,1,10\n\
             3000,0.000002,2,NaN\n\
             3000,0.000002,2.5,NaN\n\
             5000,0.000004,,NaN\n"
        );
        let empty = csv(&[&a, &b], (0, u64::MAX), Fill::Empty);
        assert_eq!(
            empty,
            "time_ns,time_s,\"a,b\",c\n\
             1000,0.0,1,\n\
             2000,0.000001,,10\n\
             3000,0.000002,2,NaN\n\
             3000,0.000002,2.5,\n\
             5000,0.000004,,\n"
        );
        // A range: values held from before it; both ends included.
        let part = csv(&[&a, &b], (2_500, 3_000), Fill::Hold);
        assert_eq!(
            part,
            "time_ns,time_s,\"a,b\",c\n\
             3000,0.000002,2,NaN\n\
             3000,0.000002,2.5,NaN\n"
        );
        assert_eq!(relative_seconds(999, 1_000), "-0.000000001");
        assert_eq!(relative_seconds(13_500_000_000, 1_000_000_000), "12.5");
    }
}
