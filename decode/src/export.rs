//! Signals as one table: a shared time column (the union of every signal's sample times) and a
//! column per signal, written as CSV ([`write_csv`]) or Parquet ([`write_parquet`], with the
//! `parquet` feature). What the scope's File > Export Signals and `bag export --format csv`
//! write; any tool with columns of (time, value) samples can use it.
//!
//! Rows: one per distinct sample time in the range; a time at which some signal holds several
//! samples gets as many rows (the j-th sample of each signal at that time on the j-th row), so
//! no sample is lost. A signal with no sample on a row is either empty or holds its last value
//! before it ([`Fill`]), including its last value from before the range. Values are written as
//! the signal gives them (64-bit integers exactly, floats in their shortest round-trip form,
//! `NaN`, `inf`, `-inf` as pandas and polars read them); a sample a message did not carry is
//! empty.

use std::io::Write;

/// What one column holds, for a typed table (Parquet): integers of either sign stay integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// `f64`.
    Float,
    /// `i64`.
    Int,
    /// `u64`.
    UInt,
}

/// One signal's samples, in time order.
pub trait ExportColumn {
    /// Log times, ns, not decreasing.
    fn times(&self) -> &[u64];
    /// Sample `i`; `None` when the message did not carry it.
    fn value(&self, i: usize) -> Option<crate::Scalar>;
    /// What every value of the column is (a value of another kind is converted, or left
    /// empty where it cannot be: a negative in a `u64` column).
    fn kind(&self) -> ColumnKind;
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
    let rows = for_each_row(columns, (start_ns, end_ns), fill, progress, |t, shown| {
        line.clear();
        line.push_str(&t.to_string());
        line.push(',');
        line.push_str(&relative_seconds(t, t0_ns));
        for (column, i) in columns.iter().zip(shown) {
            line.push(',');
            if let Some(v) = i.and_then(|i| column.value(i)) {
                push_scalar(v, &mut line);
            }
        }
        line.push('\n');
        out.write_all(line.as_bytes())
    })?;
    out.flush()?;
    Ok(rows)
}

/// Calls `row(t, shown)` for every row between `start_ns` and `end_ns` (both included), in
/// order: `shown[k]` is the sample column `k` shows on the row (see the module doc). Returns
/// the rows.
fn for_each_row(
    columns: &[&dyn ExportColumn],
    (start_ns, end_ns): (u64, u64),
    fill: Fill,
    progress: &dyn Fn(u64, u64),
    mut row: impl FnMut(u64, &[Option<usize>]) -> std::io::Result<()>,
) -> std::io::Result<u64> {
    // Each column's times, fetched once (not through the trait for every row).
    let times: Vec<&[u64]> = columns.iter().map(|c| c.times()).collect();
    // Per column: the first sample in range, and one past the last.
    let bounds: Vec<(usize, usize)> = times
        .iter()
        .map(|t| {
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
    let mut shown: Vec<Option<usize>> = vec![None; columns.len()];
    // How many samples each column has at the row's time (usually 0 or 1; counted, not
    // searched).
    let mut at_t: Vec<usize> = vec![0; columns.len()];
    let (mut rows, mut samples_done) = (0u64, 0u64);
    loop {
        // The earliest next sample of any column.
        let mut t = None;
        for k in 0..times.len() {
            if let Some(&x) = times[k].get(next[k]).filter(|_| next[k] < bounds[k].1) {
                t = Some(t.map_or(x, |t: u64| t.min(x)));
            }
        }
        let Some(t) = t else {
            break;
        };
        for k in 0..times.len() {
            at_t[k] = times[k]
                .get(next[k]..bounds[k].1)
                .map_or(0, |ts| ts.iter().take_while(|&&x| x == t).count());
        }
        let depth = at_t.iter().copied().max().unwrap_or(0);
        for j in 0..depth {
            for k in 0..columns.len() {
                let here = (j < at_t[k]).then(|| next[k] + j);
                if let Some(i) = here {
                    held[k] = Some(i);
                }
                shown[k] = match fill {
                    Fill::Hold => here.or(held[k]),
                    Fill::Empty => here,
                };
            }
            row(t, &shown)?;
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
    Ok(rows)
}

/// Rows per Parquet record batch (and so per page of each column, about).
#[cfg(feature = "parquet")]
const BATCH_ROWS: usize = 65_536;

/// Writes the table [`write_csv`] writes as Parquet to `out`: `time_ns` (UInt64, exact),
/// `time_s` (Float64, from `t0_ns`), then a nullable column per signal of its
/// [`ColumnKind`] (null where the message did not carry the value; NaN and infinities stay
/// floats). Snappy-compressed. Returns the rows written.
#[cfg(feature = "parquet")]
#[allow(clippy::too_many_arguments)]
pub fn write_parquet<W: std::io::Write + Send>(
    out: W,
    names: &[String],
    columns: &[&dyn ExportColumn],
    range_ns: (u64, u64),
    fill: Fill,
    t0_ns: u64,
    progress: &dyn Fn(u64, u64),
) -> std::io::Result<u64> {
    use std::sync::Arc;

    use arrow_array::builder::{ArrayBuilder, Float64Builder, Int64Builder, UInt64Builder};
    use arrow_array::{ArrayRef, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Compression;
    use parquet::file::properties::WriterProperties;

    enum Builder {
        Float(Float64Builder),
        Int(Int64Builder),
        UInt(UInt64Builder),
    }
    impl Builder {
        fn append(&mut self, v: Option<crate::Scalar>) {
            use crate::Scalar;
            match self {
                Builder::Float(b) => b.append_option(v.map(|v| match v {
                    Scalar::Float(f) => f,
                    Scalar::Int(i) => i as f64,
                    Scalar::UInt(u) => u as f64,
                })),
                Builder::Int(b) => b.append_option(v.and_then(|v| match v {
                    Scalar::Int(i) => Some(i),
                    Scalar::UInt(u) => i64::try_from(u).ok(),
                    Scalar::Float(f) => whole(f).and_then(|w| i64::try_from(w).ok()),
                })),
                Builder::UInt(b) => b.append_option(v.and_then(|v| match v {
                    Scalar::UInt(u) => Some(u),
                    Scalar::Int(i) => u64::try_from(i).ok(),
                    Scalar::Float(f) => whole(f).and_then(|w| u64::try_from(w).ok()),
                })),
            }
        }
        fn finish(&mut self) -> ArrayRef {
            match self {
                Builder::Float(b) => Arc::new(b.finish()),
                Builder::Int(b) => Arc::new(b.finish()),
                Builder::UInt(b) => Arc::new(b.finish()),
            }
        }
    }
    /// A whole float within i128, as an integer.
    fn whole(f: f64) -> Option<i128> {
        (f.is_finite() && f.fract() == 0.0 && f.abs() < 1.7e38).then_some(f as i128)
    }

    let mut fields = vec![
        Field::new("time_ns", DataType::UInt64, false),
        Field::new("time_s", DataType::Float64, false),
    ];
    let mut builders: Vec<Builder> = Vec::with_capacity(columns.len());
    for (name, column) in names.iter().zip(columns) {
        let (data_type, builder) = match column.kind() {
            ColumnKind::Float => (
                DataType::Float64,
                Builder::Float(Float64Builder::with_capacity(BATCH_ROWS)),
            ),
            ColumnKind::Int => (
                DataType::Int64,
                Builder::Int(Int64Builder::with_capacity(BATCH_ROWS)),
            ),
            ColumnKind::UInt => (
                DataType::UInt64,
                Builder::UInt(UInt64Builder::with_capacity(BATCH_ROWS)),
            ),
        };
        fields.push(Field::new(name, data_type, true));
        builders.push(builder);
    }
    let schema = Arc::new(Schema::new(fields));
    let properties = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let mut writer = ArrowWriter::try_new(out, Arc::clone(&schema), Some(properties))
        .map_err(std::io::Error::other)?;
    // Rows are aligned into batches on this thread while the writer encodes and compresses
    // the batches before them on another: a pipeline, [`PIPELINE_BATCHES`] deep, so that
    // the two take about as long as the slower of them, not their sum.
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<RecordBatch>(PIPELINE_BATCHES);
        let encoder = scope.spawn(move || -> std::io::Result<()> {
            for batch in rx {
                writer.write(&batch).map_err(std::io::Error::other)?;
            }
            writer.close().map_err(std::io::Error::other)?;
            Ok(())
        });
        let mut times = UInt64Builder::with_capacity(BATCH_ROWS);
        let mut seconds = Float64Builder::with_capacity(BATCH_ROWS);
        // Hands the rows built so far to the writer; false when it has stopped (an error,
        // which joining it returns).
        let flush = |times: &mut UInt64Builder,
                     seconds: &mut Float64Builder,
                     builders: &mut [Builder]|
         -> std::io::Result<bool> {
            let mut arrays: Vec<ArrayRef> =
                vec![Arc::new(times.finish()), Arc::new(seconds.finish())];
            arrays.extend(builders.iter_mut().map(Builder::finish));
            let batch =
                RecordBatch::try_new(Arc::clone(&schema), arrays).map_err(std::io::Error::other)?;
            Ok(tx.send(batch).is_ok())
        };
        let aligned = for_each_row(columns, range_ns, fill, progress, |t, shown| {
            times.append_value(t);
            // Exact in i64 for any two times less than 292 years apart.
            seconds.append_value(t.wrapping_sub(t0_ns) as i64 as f64 / 1e9);
            for ((builder, column), i) in builders.iter_mut().zip(columns).zip(shown) {
                builder.append(i.and_then(|i| column.value(i)));
            }
            if times.len() >= BATCH_ROWS && !flush(&mut times, &mut seconds, &mut builders)? {
                return Err(std::io::Error::other("the Parquet writer stopped"));
            }
            Ok(())
        })
        .and_then(|rows| {
            if !times.is_empty() {
                flush(&mut times, &mut seconds, &mut builders)?;
            }
            Ok(rows)
        });
        // The writer ends when the last batch is in (or on its first error).
        drop(tx);
        let written = encoder
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the Parquet writer panicked")));
        // The writer's own error says more than "it stopped".
        written.and(aligned)
    })
}

/// Batches aligned ahead of the Parquet writer at most.
#[cfg(feature = "parquet")]
const PIPELINE_BATCHES: usize = 2;

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
        fn value(&self, i: usize) -> Option<crate::Scalar> {
            self.1.get(i).copied().flatten().map(crate::Scalar::Float)
        }
        fn kind(&self) -> ColumnKind {
            ColumnKind::Float
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
             1000,0.0,1.0,\n\
             2000,0.000001,1.0,10.0\n\
             3000,0.000002,2.0,NaN\n\
             3000,0.000002,2.5,NaN\n\
             5000,0.000004,,NaN\n"
        );
        let empty = csv(&[&a, &b], (0, u64::MAX), Fill::Empty);
        assert_eq!(
            empty,
            "time_ns,time_s,\"a,b\",c\n\
             1000,0.0,1.0,\n\
             2000,0.000001,,10.0\n\
             3000,0.000002,2.0,NaN\n\
             3000,0.000002,2.5,\n\
             5000,0.000004,,\n"
        );
        // A range: values held from before it; both ends included.
        let part = csv(&[&a, &b], (2_500, 3_000), Fill::Hold);
        assert_eq!(
            part,
            "time_ns,time_s,\"a,b\",c\n\
             3000,0.000002,2.0,NaN\n\
             3000,0.000002,2.5,NaN\n"
        );
        assert_eq!(relative_seconds(999, 1_000), "-0.000000001");
        assert_eq!(relative_seconds(13_500_000_000, 1_000_000_000), "12.5");
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn parquet_holds_the_same_table_typed() {
        use arrow_array::{Array, Float64Array, UInt64Array};
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

        struct Big(Vec<u64>, Vec<Option<u64>>);
        impl ExportColumn for Big {
            fn times(&self) -> &[u64] {
                &self.0
            }
            fn value(&self, i: usize) -> Option<crate::Scalar> {
                self.1.get(i).copied().flatten().map(crate::Scalar::UInt)
            }
            fn kind(&self) -> ColumnKind {
                ColumnKind::UInt
            }
        }
        let a = Col(vec![1_000, 3_000], vec![Some(1.5), Some(f64::NAN)]);
        let big = Big(vec![2_000, 3_000], vec![Some(u64::MAX), None]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let names = vec!["a".to_string(), "big".to_string()];
        let rows = write_parquet(
            std::fs::File::create(&path).unwrap(),
            &names,
            &[&a, &big],
            (0, u64::MAX),
            Fill::Empty,
            1_000,
            &|_, _| {},
        )
        .unwrap();
        assert_eq!(rows, 3);
        let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&path).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let batches: Vec<_> = reader.map(Result::unwrap).collect();
        assert_eq!(batches.len(), 1);
        let batch = &batches[0];
        let column = |i: usize| batch.column(i).clone();
        let times = column(0);
        let times = times.as_any().downcast_ref::<UInt64Array>().unwrap();
        assert_eq!(times.values().to_vec(), vec![1_000, 2_000, 3_000]);
        let a = column(2);
        let a = a.as_any().downcast_ref::<Float64Array>().unwrap();
        assert_eq!(a.value(0), 1.5);
        assert!(a.is_null(1));
        assert!(a.value(2).is_nan());
        let big = column(3);
        let big = big.as_any().downcast_ref::<UInt64Array>().unwrap();
        assert!(big.is_null(0));
        assert_eq!(big.value(1), u64::MAX);
        assert!(big.is_null(2));
    }

    /// A sink that takes `room` bytes, then fails as a full disk does.
    struct Full {
        room: usize,
    }

    impl std::io::Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.room < buf.len() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::StorageFull,
                    "no space left on device",
                ));
            }
            self.room -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_parquet_sink_that_fails_midway_is_an_error_not_a_hang() {
        // More rows than a row group, so that the writer writes (and fails) while rows are
        // still being aligned for it.
        let n = 1_200_000u64;
        let a = Col((0..n).collect(), (0..n).map(|i| Some(i as f64)).collect());
        let names = vec!["a".to_string()];
        let got = write_parquet(
            Full { room: 64 },
            &names,
            &[&a],
            (0, u64::MAX),
            Fill::Hold,
            0,
            &|_, _| {},
        );
        let e = got.expect_err("the sink is full");
        assert!(e.to_string().contains("no space left"), "{e}");
    }
}
