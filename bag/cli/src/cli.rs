//! Argument parsing and dispatch for the `bag` binary.

mod cat;
mod export;
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

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// Record, inspect, play, verify and repair recordings: Redline bags (a directory of MCAP parts
/// plus metadata.yaml), single .mcap files and rosbag2 MCAP directories.
///
/// Exit codes: 0 fine; 1 failed; 3 finished but found damage or loss (torn, missing or
/// garbage parts, dropped messages, verify findings).
#[derive(Debug, Parser)]
#[command(name = "bag", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Which messages: topics and a time range.
#[derive(Debug, Args)]
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

impl Range {
    /// The filter these arguments describe; relative times count from `origin_ns`.
    pub fn filter(&self, origin_ns: u64) -> anyhow::Result<bag::ReadFilter> {
        use anyhow::Context;
        let mut filter = bag::ReadFilter::all();
        if !self.topics.is_empty() {
            filter = filter.topics(self.topics.iter().cloned());
        }
        if let Some(s) = &self.start {
            filter = filter.start_ns(format::parse_time(s, origin_ns).context("--start")?);
        }
        if let Some(e) = &self.end {
            filter = filter.end_ns(format::parse_time(e, origin_ns).context("--end")?);
        }
        Ok(filter)
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
        /// One JSON object per line, with decoded numeric `fields` where the schema decodes.
        #[arg(long)]
        json: bool,
    },
    /// Check every byte of every part with an MCAP parser independent of the one we read with.
    Verify {
        /// A bag directory or a .mcap file.
        path: PathBuf,
        /// Print one JSON object instead of one finding per line.
        #[arg(long)]
        json: bool,
    },
    /// Write a sub-range of a recording (by time and topics) as a new bag, byte for byte.
    ///
    /// The new index names the source and the range, and carries the source's drop count.
    Export {
        /// A bag directory, a .mcap file or a rosbag2 directory.
        path: PathBuf,
        /// The new bag directory (must not exist or be empty).
        #[arg(short, long)]
        out: PathBuf,
        #[command(flatten)]
        range: Range,
        /// Chunk compression of the new bag: zstd, lz4 or none.
        #[arg(long, default_value = "zstd")]
        compression: bag::Compression,
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
        Command::Cat { path, range, json } => cat::run(&path, &range, json),
        Command::Verify { path, json } => verify::run(&path, json),
        Command::Reindex { path } => reindex::run(&path),
        Command::Export {
            path,
            out,
            range,
            compression,
        } => export::run(&path, &out, &range, compression),
        Command::Record(args) => record::run(&args),
        Command::Play(args) => play::run(&args),
        Command::Sim(args) => sim::run(&args),
    }
}
