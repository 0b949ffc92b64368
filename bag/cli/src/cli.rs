//! Argument parsing and dispatch for the `bag` binary.

/// `println!` for the commands' output on stdout: once the reader has gone (`bag info | head
/// -2`), the rest of the output is dropped and the command finishes as it would have, with its
/// own exit code, instead of panicking on the broken pipe.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::write_stdout_line(format_args!($($arg)*))
    };
}

mod cat;
mod export;
mod export_table;
mod format;
mod info;
mod live_command;
mod loss;
mod play;
mod progress;
mod record;
mod reindex;
mod sim;
mod verify;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Args, Parser, Subcommand};

/// Record, inspect, play, verify and repair recordings: Redline bags (a directory of MCAP parts
/// plus metadata.yaml), single .mcap files and rosbag2 MCAP directories.
///
/// Exit codes: 0 fine; 1 failed; 2 usage error (including an empty time range or topics the
/// recording does not have); 3 finished but found damage or loss (torn, missing or garbage
/// parts, dropped messages, loss recorded in the index, verify findings).
#[derive(Debug, Parser)]
#[command(name = "bag", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Which messages: topics and a time range.
#[derive(Debug, Clone, Args)]
pub struct Range {
    /// Only these topics (repeat or separate with commas).
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub topics: Vec<String>,
    /// Start at this time: seconds from the start (12.5), absolute nanoseconds, or RFC 3339.
    #[arg(long)]
    pub start: Option<String>,
    /// Stop before this time (same forms as --start).
    #[arg(long)]
    pub end: Option<String>,
}

/// Set once stdout's reader has gone.
static STDOUT_GONE: AtomicBool = AtomicBool::new(false);

/// Set when writing to stdout failed for another reason (a full disk under `> file`).
static STDOUT_FAILED: AtomicBool = AtomicBool::new(false);

/// Whether some output was lost to a write error other than a closed pipe (the command then
/// exits 1: its output is incomplete).
pub fn stdout_failed() -> bool {
    STDOUT_FAILED.load(Ordering::Relaxed)
}

/// One line on stdout (see `outln!`); after a broken pipe, nothing. Any other write error is
/// reported once on stderr, stdout is then left alone too, and [`stdout_failed`] says so.
pub fn write_stdout_line(args: std::fmt::Arguments<'_>) {
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        STDOUT_GONE.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            STDOUT_FAILED.store(true, Ordering::Relaxed);
            eprintln!("error: writing to stdout: {e}");
        }
    }
}

/// A mistake in the command line that clap cannot see (an empty time range, topics the
/// recording does not have): exit 2, like clap's own usage errors.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// What [`Range::resolve`] found.
pub struct Resolved {
    /// The messages asked for.
    pub filter: bag::ReadFilter,
    /// Why nothing can match, when the range lies outside the recording (not a mistake in
    /// itself: `cat` warns, `export` refuses to write an empty bag).
    pub nothing: Option<String>,
}

impl Range {
    /// The filter these arguments describe for `reader`'s recording (relative times count
    /// from its start). A time that does not parse, `--end` not after `--start`, and topics
    /// none of which the recording has are [`UsageError`]s; some unknown topics among known
    /// ones are a warning on stderr.
    pub fn resolve(&self, reader: &bag::BagReader) -> anyhow::Result<Resolved> {
        let usage = |text: String| anyhow::Error::new(UsageError(text));
        let range = reader.time_range_ns();
        let origin = range.map_or(0, |r| r.0);
        let mut filter = bag::ReadFilter::all();
        if !self.topics.is_empty() {
            let known: std::collections::BTreeSet<&str> = reader
                .channels()
                .iter()
                .map(|c| c.spec.topic.as_str())
                .collect();
            let unknown: Vec<&str> = self
                .topics
                .iter()
                .map(String::as_str)
                .filter(|t| !known.contains(t))
                .collect();
            if unknown.len() == self.topics.len() {
                let have: Vec<&str> = known.iter().copied().take(20).collect();
                let more = known.len().saturating_sub(have.len());
                return Err(usage(format!(
                    "no topic asked for is in this recording: {} (it has: {}{})",
                    unknown.join(", "),
                    have.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                )));
            }
            for t in unknown {
                eprintln!("warning: topic {t:?} is not in this recording");
            }
            filter = filter.topics(self.topics.iter().cloned());
        }
        let time = |arg: &str, text: &Option<String>| -> anyhow::Result<Option<u64>> {
            text.as_deref()
                .map(|t| format::parse_time(t, origin).map_err(|e| usage(format!("{arg}: {e:#}"))))
                .transpose()
        };
        let (start, end) = (time("--start", &self.start)?, time("--end", &self.end)?);
        if let (Some(s), Some(e)) = (start, end)
            && e <= s
        {
            return Err(usage(format!(
                "--end ({}) is not after --start ({}): the range is empty",
                format::utc(e),
                format::utc(s)
            )));
        }
        let mut nothing = None;
        if let Some((first, last)) = range {
            if let Some(s) = start.filter(|&s| s > last) {
                nothing = Some(format!(
                    "--start ({}) is after the recording's last message ({})",
                    format::utc(s),
                    format::utc(last)
                ));
            } else if let Some(e) = end.filter(|&e| e <= first) {
                nothing = Some(format!(
                    "--end ({}) is not after the recording's first message ({})",
                    format::utc(e),
                    format::utc(first)
                ));
            }
        }
        if let Some(s) = start {
            filter = filter.start_ns(s);
        }
        if let Some(e) = end {
            filter = filter.end_ns(e);
        }
        Ok(Resolved { filter, nothing })
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Summarize a recording from its index and part summaries (does not read messages).
    Info {
        /// A bag directory, a .mcap file or a rosbag2 directory.
        path: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print messages, one per line, in log-time order.
    Cat {
        /// A bag directory, a .mcap file or a rosbag2 directory.
        path: PathBuf,
        #[command(flatten)]
        range: Range,
        /// One JSON object per line, with decoded numeric `fields` (in schema order) where the
        /// schema decodes, and the raw message as `data_b64`.
        #[arg(long)]
        json: bool,
        /// With --json: leave out `data_b64`.
        #[arg(long, requires = "json")]
        no_data: bool,
    },
    /// Check every byte of every part with an MCAP parser independent of the one we read with.
    Verify {
        /// A bag directory or a .mcap file. A ROS 1 .bag file or a rosbag2 SQLite directory is
        /// not checked (exit 2).
        path: PathBuf,
        /// Print one JSON object instead of one finding per line.
        #[arg(long)]
        json: bool,
    },
    /// Write a sub-range of a recording (by time and topics) as a new bag, byte for byte; or
    /// chosen fields as a table (--format csv or parquet).
    ///
    /// A bag: the new index names the source and the range, and carries the source's drop
    /// count. CSV: a header `time_ns,time_s,TOPIC/FIELD...`, a row per sample time of any of
    /// the fields (several samples at one time keep a row each), 64-bit integers exact, floats
    /// in their shortest exact digits, empty where a message did not carry the field.
    Export {
        /// A bag directory, a .mcap or .bag file, or a rosbag2 directory.
        path: PathBuf,
        /// The new bag directory (must not exist or be empty), or the new CSV file.
        #[arg(short, long)]
        out: PathBuf,
        #[command(flatten)]
        range: Range,
        /// Chunk compression of the new bag: zstd, lz4 or none.
        #[arg(long, default_value = "zstd")]
        compression: bag::Compression,
        /// What to write: a bag, or a CSV table of --fields.
        #[arg(long, value_enum, default_value = "bag")]
        format: ExportFormat,
        /// For --format csv or parquet: the fields, as TOPIC/FIELD (`bag cat --json` shows the
        /// field names); repeat, or separate with commas.
        #[arg(long, value_delimiter = ',', num_args = 1..)]
        fields: Vec<String>,
        /// For a table: on a row where a field has no sample, its last value (hold) or nothing
        /// (empty).
        #[arg(long, value_enum, default_value = "hold")]
        fill: FillMode,
    },
    /// Rebuild metadata.yaml from the parts and rewrite torn parts as complete MCAP files.
    ///
    /// Drop and unstamped counts and advertised-but-never-published topics are kept from an
    /// existing index; without one they cannot be recovered, and reindex says so.
    Reindex {
        /// A bag directory.
        path: PathBuf,
    },
    /// Record zenoh samples into a new bag until Ctrl-C.
    ///
    /// The index counts messages dropped because the disk fell behind, messages that came
    /// without a publisher timestamp, and topics advertised (redline/adv/<Schema>/<key>
    /// liveliness tokens) but never published.
    Record(record::RecordArgs),
    /// Publish a recording's messages on zenoh, paced by their log times.
    ///
    /// Each topic keeps its encoding (ours: application/capnp;<Schema>, with its advertisement
    /// token); ROS-style topics lose their leading slash, which zenoh keys cannot have.
    Play(play::PlayArgs),
    /// Publish a simulated vehicle on zenoh, to try record, play and the scope without hardware.
    Sim(sim::SimArgs),
}

/// What `bag export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// A new bag, every message byte for byte.
    Bag,
    /// A CSV table of chosen fields.
    Csv,
    /// The same table as Parquet (typed columns: u64 time, f64 / i64 / u64 values).
    Parquet,
}

/// What a CSV export shows where a field has no sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FillMode {
    /// The field's last value.
    Hold,
    /// Nothing.
    Empty,
}

impl From<FillMode> for decode::export::Fill {
    fn from(f: FillMode) -> Self {
        match f {
            FillMode::Hold => decode::export::Fill::Hold,
            FillMode::Empty => decode::export::Fill::Empty,
        }
    }
}

/// How a command finished.
pub enum Outcome {
    /// Nothing wrong found.
    Clean,
    /// Finished, but the recording has damage or loss.
    Damaged,
}

impl Outcome {
    pub fn exit_code(self) -> ExitCode {
        match self {
            Outcome::Clean => ExitCode::SUCCESS,
            Outcome::Damaged => ExitCode::from(3),
        }
    }
}

pub fn run(cli: Cli) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::Info { path, json } => info::run(&path, json),
        Command::Cat {
            path,
            range,
            json,
            no_data,
        } => cat::run(&path, &range, json, !no_data),
        Command::Verify { path, json } => verify::run(&path, json),
        Command::Reindex { path } => reindex::run(&path),
        Command::Export {
            path,
            out,
            range,
            compression,
            format: ExportFormat::Bag,
            fields,
            ..
        } => {
            if !fields.is_empty() {
                return Err(anyhow::Error::new(UsageError(
                    "--fields chooses the columns of --format csv or parquet; a bag keeps every field".into(),
                )));
            }
            export::run(&path, &out, &range, compression)
        }
        Command::Export {
            path,
            out,
            range,
            format: format @ (ExportFormat::Csv | ExportFormat::Parquet),
            fields,
            fill,
            ..
        } => export_table::run(
            &path,
            &out,
            &fields,
            &range,
            (format == ExportFormat::Parquet, fill.into()),
        ),
        Command::Record(args) => record::run(&args),
        Command::Play(args) => play::run(&args),
        Command::Sim(args) => sim::run(&args),
    }
}
