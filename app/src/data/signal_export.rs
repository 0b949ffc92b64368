//! File > Export Signals: the plotted signals, between the cursors (or over the whole
//! recording), as one CSV or Parquet table ([`decode::export`]), written on a worker thread from the loaded
//! columns, with its progress shared for the menu bar.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use decode::LeafKind;
use decode::Scalar;
use decode::export::{ColumnKind, ExportColumn, Fill, write_csv, write_parquet};

use crate::data::series::is_absent;
use crate::data::topic_data::TopicData;

/// One signal's loaded column, shared with the UI (the export holds it, not a copy).
pub struct SignalColumn {
    /// `topic/path`, the column's header.
    pub name: String,
    data: Arc<TopicData>,
    field: usize,
}

impl std::fmt::Debug for SignalColumn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignalColumn")
            .field("name", &self.name)
            .field("samples", &self.data.times_ns.len())
            .finish()
    }
}

impl SignalColumn {
    /// Field `path` of `data`, or `None` when it has no such field.
    pub fn new(name: String, data: Arc<TopicData>, path: &str) -> Option<Self> {
        let field = data.fields.iter().position(|f| f.path == path)?;
        Some(SignalColumn { name, data, field })
    }
}

impl ExportColumn for SignalColumn {
    fn times(&self) -> &[u64] {
        &self.data.times_ns
    }

    fn value(&self, i: usize) -> Option<Scalar> {
        let field = self.data.fields.get(self.field)?;
        let v = field.series.value(i)?;
        if is_absent(v) {
            return None;
        }
        if self.kind() == ColumnKind::Float {
            return Some(Scalar::Float(v));
        }
        // Integers as the messages carried them (a u64 past 2^53 included).
        Some(match field.series.exact(i) {
            Some(e) if e < 0 => i64::try_from(e).map_or(Scalar::Float(v), Scalar::Int),
            Some(e) => u64::try_from(e).map_or(Scalar::Float(v), Scalar::UInt),
            None => Scalar::Float(v),
        })
    }

    fn kind(&self) -> ColumnKind {
        match self.data.fields.get(self.field).map(|f| f.kind) {
            Some(LeafKind::Float) | None => ColumnKind::Float,
            Some(LeafKind::Int | LeafKind::TimeNs | LeafKind::DurationNs) => ColumnKind::Int,
            Some(LeafKind::UInt | LeafKind::Bool | LeafKind::Enum | LeafKind::Which) => {
                ColumnKind::UInt
            }
        }
    }
}

/// How far an export has got: samples written of all.
#[derive(Debug, Default)]
pub struct ExportProgress {
    done: AtomicU64,
    total: AtomicU64,
}

impl ExportProgress {
    /// The fraction done, 0 to 1.
    pub fn fraction(&self) -> f32 {
        let total = self.total.load(Ordering::Relaxed).max(1);
        self.done.load(Ordering::Relaxed) as f32 / total as f32
    }
}

/// What to export.
pub struct ExportJob {
    /// The signals, in plot order.
    pub columns: Vec<SignalColumn>,
    /// Log times, both included.
    pub range_ns: (u64, u64),
    /// The recording's start (`time_s` counts from it).
    pub t0_ns: u64,
    /// Where it goes.
    pub path: PathBuf,
}

impl ExportJob {
    /// Writes the file, Parquet when its name ends in `.parquet`, else CSV (through a file
    /// beside it, renamed once whole, so that a failed export leaves no half file under the
    /// name asked for). Returns the rows written.
    pub fn run(&self, progress: &ExportProgress) -> std::io::Result<u64> {
        let names: Vec<String> = self.columns.iter().map(|c| c.name.clone()).collect();
        let columns: Vec<&dyn ExportColumn> = self
            .columns
            .iter()
            .map(|c| c as &dyn ExportColumn)
            .collect();
        let partial = partial_path(&self.path);
        let file = std::fs::File::create(&partial)?;
        let mut out = std::io::BufWriter::new(file);
        let report = |done, total| {
            progress.done.store(done, Ordering::Relaxed);
            progress.total.store(total, Ordering::Relaxed);
        };
        let parquet = self
            .path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
        let (range, t0) = (self.range_ns, self.t0_ns);
        let written = if parquet {
            write_parquet(&mut out, &names, &columns, range, Fill::Hold, t0, &report)
        } else {
            write_csv(&mut out, &names, &columns, range, Fill::Hold, t0, &report)
        }
        .and_then(|rows| {
            out.into_inner()
                .map_err(std::io::IntoInnerError::into_error)?
                .sync_all()?;
            std::fs::rename(&partial, &self.path)?;
            Ok(rows)
        });
        if written.is_err() {
            std::fs::remove_file(&partial).ok();
        }
        written
    }
}

fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}
