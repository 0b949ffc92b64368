//! Parquet export (issue 23: at least 0.8x of writing the same columns with the `parquet`
//! crate directly). `export/table/10M`: [`write_parquet`] of two signals of 5M samples each at
//! interleaved times (10M rows: the union of their times, each holding the other's last value);
//! `export/parquet_direct/10M`: the same ten million rows, already aligned into Arrow arrays
//! outside the timing, written with `ArrowWriter` in the same batches and compression.
//!
//! `cargo bench -p decode --features parquet --bench export`
//!
//! Measured here (2 cores, medians, each pair from one run): with the rows aligned on the
//! writer's thread, table 819 ms vs direct 612 ms (0.75x); aligned on a thread of their own
//! ahead of the writer (a pipeline two batches deep), table 860 ms vs direct 813 ms (0.95x)
//! and 821 ms vs 793 ms (0.97x).

use std::hint::black_box;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use criterion::{Criterion, criterion_group, criterion_main};
use decode::Scalar;
use decode::export::{ColumnKind, ExportColumn, Fill, write_parquet};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

const PER_SIGNAL: u64 = 5_000_000;
const BATCH: usize = 65_536;

struct Floats(Vec<u64>, Vec<f64>);

impl ExportColumn for Floats {
    fn times(&self) -> &[u64] {
        &self.0
    }
    fn value(&self, i: usize) -> Option<Scalar> {
        self.1.get(i).copied().map(Scalar::Float)
    }
    fn kind(&self) -> ColumnKind {
        ColumnKind::Float
    }
}

struct Counts(Vec<u64>, Vec<u64>);

impl ExportColumn for Counts {
    fn times(&self) -> &[u64] {
        &self.0
    }
    fn value(&self, i: usize) -> Option<Scalar> {
        self.1.get(i).copied().map(Scalar::UInt)
    }
    fn kind(&self) -> ColumnKind {
        ColumnKind::UInt
    }
}

fn export(c: &mut Criterion) {
    let speed = Floats(
        (0..PER_SIGNAL).map(|i| i * 1_000).collect(),
        (0..PER_SIGNAL).map(|i| (i as f64 * 1e-3).sin()).collect(),
    );
    let count = Counts(
        (0..PER_SIGNAL).map(|i| i * 1_000 + 500).collect(),
        (0..PER_SIGNAL).map(|i| u64::MAX - i).collect(),
    );
    let names = vec!["speed".to_string(), "count".to_string()];
    // The same rows, aligned by hand: each row one signal's sample, the other's held.
    let rows = 2 * PER_SIGNAL as usize;
    let mut times = Vec::with_capacity(rows);
    let mut seconds = Vec::with_capacity(rows);
    let mut speeds: Vec<Option<f64>> = Vec::with_capacity(rows);
    let mut counts: Vec<Option<u64>> = Vec::with_capacity(rows);
    for i in 0..PER_SIGNAL as usize {
        times.push(speed.0[i]);
        seconds.push(speed.0[i] as f64 / 1e9);
        speeds.push(Some(speed.1[i]));
        counts.push(i.checked_sub(1).map(|j| count.1[j]));
        times.push(count.0[i]);
        seconds.push(count.0[i] as f64 / 1e9);
        speeds.push(Some(speed.1[i]));
        counts.push(Some(count.1[i]));
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("time_ns", DataType::UInt64, false),
        Field::new("time_s", DataType::Float64, false),
        Field::new("speed", DataType::Float64, true),
        Field::new("count", DataType::UInt64, true),
    ]));
    let batches: Vec<RecordBatch> = (0..rows)
        .step_by(BATCH)
        .map(|start| {
            let end = (start + BATCH).min(rows);
            let arrays: Vec<ArrayRef> = vec![
                Arc::new(UInt64Array::from(times[start..end].to_vec())),
                Arc::new(Float64Array::from(seconds[start..end].to_vec())),
                Arc::new(Float64Array::from(speeds[start..end].to_vec())),
                Arc::new(UInt64Array::from(counts[start..end].to_vec())),
            ];
            RecordBatch::try_new(Arc::clone(&schema), arrays).expect("batch")
        })
        .collect();
    let mut group = c.benchmark_group("export");
    group.sample_size(10);
    group.bench_function("table/10M", |b| {
        b.iter(|| {
            let columns: [&dyn ExportColumn; 2] = [&speed, &count];
            let rows = write_parquet(
                std::io::sink(),
                &names,
                &columns,
                (0, u64::MAX),
                Fill::Hold,
                0,
                &|_, _| {},
            )
            .expect("write");
            black_box(rows)
        });
    });
    group.bench_function("parquet_direct/10M", |b| {
        b.iter(|| {
            let properties = WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .build();
            let mut writer =
                ArrowWriter::try_new(std::io::sink(), Arc::clone(&schema), Some(properties))
                    .expect("writer");
            for batch in &batches {
                writer.write(batch).expect("write");
            }
            black_box(writer.close().expect("close"))
        });
    });
    group.finish();
}

criterion_group!(benches, export);
criterion_main!(benches);
