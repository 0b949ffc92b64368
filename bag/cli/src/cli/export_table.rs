//! `bag export --format csv|parquet`: chosen numeric fields of a recording as one table, a
//! shared time column and a column per field ([`decode::export`], the table the scope's
//! File > Export Signals writes too).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use bag::ChannelInfo;
use decode::export::{ColumnKind, ExportColumn, Fill, write_csv, write_parquet};
use decode::{Plan, Scalar};

use super::loss::report_loss;
use super::progress::Progress;
use super::{Outcome, Range, UsageError};

/// One field's samples: every message of its topic, with its value or none.
struct Column {
    topic: String,
    path: String,
    times: Vec<u64>,
    values: Vec<Option<Scalar>>,
}

impl ExportColumn for Column {
    fn times(&self) -> &[u64] {
        &self.times
    }

    fn value(&self, i: usize) -> Option<Scalar> {
        self.values.get(i).copied().flatten()
    }

    /// Float when any value is; else signed when any is; else unsigned.
    fn kind(&self) -> ColumnKind {
        let values = self.values.iter().flatten();
        if values.clone().any(|v| matches!(v, Scalar::Float(_))) {
            ColumnKind::Float
        } else if values.clone().any(|v| matches!(v, Scalar::Int(_))) {
            ColumnKind::Int
        } else {
            ColumnKind::UInt
        }
    }
}

/// `TOPIC/FIELD` as (topic, field): the longest topic of the recording that the text starts
/// with, then `/` (topics hold slashes too: `/imu/data/linear_acceleration.x`).
fn split_field<'a>(text: &'a str, topics: &[&'a str]) -> Option<(&'a str, &'a str)> {
    topics
        .iter()
        .filter_map(|t| {
            let rest = text.strip_prefix(t)?.strip_prefix('/')?;
            (!rest.is_empty()).then_some((*t, rest))
        })
        .max_by_key(|(t, _)| t.len())
}

pub fn run(
    path: &Path,
    out: &Path,
    fields: &[String],
    range: &Range,
    (parquet, fill): (bool, Fill),
) -> anyhow::Result<Outcome> {
    let usage = |text: String| anyhow::Error::new(UsageError(text));
    if fields.is_empty() {
        return Err(usage(
            "a table needs the fields to write: --fields TOPIC/FIELD (repeat, or separate with \
             commas; `bag cat --json` shows the field names)"
                .into(),
        ));
    }
    let reader = super::progress::open_recording(path)?;
    let topics: Vec<&str> = reader
        .channels()
        .iter()
        .map(|c| c.spec.topic.as_str())
        .collect();
    let mut columns = Vec::new();
    for text in fields {
        let (topic, field) = split_field(text, &topics)
            .ok_or_else(|| usage(format!("{text}: no topic of the recording starts it")))?;
        columns.push(Column {
            topic: topic.to_string(),
            path: field.to_string(),
            times: Vec::new(),
            values: Vec::new(),
        });
    }
    let mut only = range.clone();
    only.topics = columns.iter().map(|c| c.topic.clone()).collect();
    let resolved = only.resolve(&reader)?;
    if let Some(why) = resolved.nothing {
        return Err(usage(format!(
            "nothing to export, so no file was written: {why}"
        )));
    }
    let progress = Progress::new("reading", reader.message_count());
    let mut plans: HashMap<usize, Option<Plan>> = HashMap::new();
    let mut cursor = reader.messages(&resolved.filter)?;
    let mut read = 0u64;
    let mut decoded_any = vec![false; columns.len()];
    while let Some(m) = cursor.next_message() {
        read += 1;
        if read.is_multiple_of(65_536) {
            progress.set(read);
        }
        let plan = plans
            .entry(m.channel.id)
            .or_insert_with(|| compile(m.channel).ok());
        let values = plan.as_mut().and_then(|p| p.decode_fields(m.data).ok());
        for (k, column) in columns.iter_mut().enumerate() {
            if column.topic != m.channel.spec.topic {
                continue;
            }
            let value = values.as_ref().and_then(|vs| {
                vs.iter()
                    .find(|(path, _)| *path == column.path)
                    .map(|(_, v)| *v)
            });
            decoded_any[k] |= value.is_some();
            column.times.push(m.log_time_ns);
            column.values.push(value);
        }
    }
    progress.finish();
    for (column, found) in columns.iter().zip(&decoded_any) {
        if !found {
            eprintln!(
                "warning: {}/{}: no message in the range carries this field (its column is \
                 empty)",
                column.topic, column.path
            );
        }
    }
    let names: Vec<String> = columns
        .iter()
        .map(|c| format!("{}/{}", c.topic, c.path))
        .collect();
    let refs: Vec<&dyn ExportColumn> = columns.iter().map(|c| c as &dyn ExportColumn).collect();
    let t0 = reader.time_range_ns().map_or(0, |r| r.0);
    let rows = write_file(out, |w| {
        if parquet {
            write_parquet(w, &names, &refs, (0, u64::MAX), fill, t0, &|_, _| {})
        } else {
            write_csv(w, &names, &refs, (0, u64::MAX), fill, t0, &|_, _| {})
        }
    })
    .with_context(|| format!("writing {}", out.display()))?;
    outln!(
        "exported {} fields, {rows} rows to {}",
        columns.len(),
        out.display()
    );
    Ok(report_loss(&reader, cursor.issues()))
}

/// Writes `out` through a file beside it, renamed over it once whole (a failed export leaves
/// nothing under the name asked for). An existing file is not replaced.
fn write_file(
    out: &Path,
    write: impl FnOnce(&mut (dyn std::io::Write + Send)) -> std::io::Result<u64>,
) -> std::io::Result<u64> {
    if out.exists() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "the file exists: choose another name, or remove it first",
        ));
    }
    let mut partial = out.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let result = std::fs::File::create(&partial).and_then(|file| {
        let mut w = std::io::BufWriter::new(file);
        let rows = write(&mut w)?;
        w.into_inner()
            .map_err(std::io::IntoInnerError::into_error)?
            .sync_all()?;
        std::fs::rename(&partial, out)?;
        Ok(rows)
    });
    if result.is_err() {
        std::fs::remove_file(&partial).ok();
    }
    result
}

fn compile(channel: &ChannelInfo) -> Result<Plan, String> {
    super::cat::compile(channel)
}

#[cfg(test)]
mod tests {
    use super::split_field;

    #[test]
    fn fields_split_at_the_longest_topic() {
        let topics = ["/imu", "/imu/data", "car/speed"];
        assert_eq!(
            split_field("/imu/data/linear_acceleration.x", &topics),
            Some(("/imu/data", "linear_acceleration.x"))
        );
        assert_eq!(split_field("/imu/x", &topics), Some(("/imu", "x")));
        assert_eq!(
            split_field("car/speed/kph", &topics),
            Some(("car/speed", "kph"))
        );
        assert_eq!(split_field("car/speed", &topics), None);
        assert_eq!(split_field("/gps/lat", &topics), None);
    }
}
