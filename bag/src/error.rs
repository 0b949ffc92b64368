//! The one error type of the `bag` library.

use std::path::PathBuf;

use crate::format::FormatError;

/// What went wrong in the `bag` library, with the path (and byte offset) it concerns.
#[derive(Debug, thiserror::Error)]
pub enum BagError {
    /// An I/O call failed on a path.
    #[error("{op} {path:?}")]
    Io {
        /// What we were doing ("opening", "writing", ...).
        op: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The mcap crate refused something while writing or reading a part.
    #[error("MCAP error in {path:?}")]
    Mcap {
        /// The part concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: mcap::McapError,
    },
    /// A writer was pointed at a directory that already holds files.
    #[error("refusing to write into {0:?}: the directory exists and is not empty")]
    DirectoryNotEmpty(PathBuf),
    /// The path is neither a bag directory, an `.mcap` file nor a rosbag2 directory.
    #[error("{path:?} is not a recording: {why}")]
    NotARecording {
        /// The path given.
        path: PathBuf,
        /// Why it was rejected.
        why: String,
    },
    /// A tool that rewrites MCAP parts and our index met a bag whose parts are in another
    /// storage (rosbag2 SQLite, ROS 1): it leaves the bag as it is.
    #[error(
        "{path:?} keeps its messages in {what}; reindex rebuilds the index of MCAP bags and \
         rewrites MCAP parts only, so it changed nothing (`bag info` and `bag cat` read it as it is)"
    )]
    ForeignStorage {
        /// The bag.
        path: PathBuf,
        /// What its parts are.
        what: &'static str,
    },
    /// `metadata.yaml` exists but cannot be parsed.
    #[error("cannot parse {path:?}: {message}")]
    BadMetadata {
        /// The metadata file.
        path: PathBuf,
        /// What the YAML parser said.
        message: String,
    },
    /// A part is damaged at a byte offset.
    #[error("{path:?} is damaged at byte {offset}")]
    Damaged {
        /// The part concerned.
        path: PathBuf,
        /// Byte offset of the damaged record (for a chunk's contents: of the chunk).
        offset: u64,
        /// What is wrong there.
        #[source]
        source: FormatError,
    },
    /// A part's records contradict its summary (a message on a channel the summary does not
    /// define), where the mcap crate's reader does not say at which byte.
    #[error("{path:?} contradicts its summary")]
    Inconsistent {
        /// The part concerned.
        path: PathBuf,
        /// What it contradicts.
        #[source]
        source: FormatError,
    },
    /// A part's summary, read when the recording was opened, can no longer be read.
    #[error("the summary of {path:?}, read when the recording was opened, can no longer be read")]
    SummaryUnreadable {
        /// The part concerned.
        path: PathBuf,
    },
    /// A torn part was rewritten, but the rewrite did not read back whole, so it was not used.
    #[error("the rewrite of {path:?} did not check out ({found} of {expected} messages, {status})")]
    RepairFailed {
        /// The torn part.
        path: PathBuf,
        /// Messages the rewrite holds.
        found: u64,
        /// Messages recovered from the torn part.
        expected: u64,
        /// The rewrite's status (`complete`, `torn`, ...).
        status: &'static str,
    },
    /// A writer holds the bag's lock: it is being recorded or exported into right now, and
    /// tools that rewrite it or read it as finished leave it alone.
    #[error(
        "{path:?} is being written (a writer holds its lock file); wait until it is closed, \
         then try again"
    )]
    BeingWritten {
        /// The bag directory.
        path: PathBuf,
    },
    /// A message larger than any chunk may be (readers refuse such chunks): not written, and
    /// counted in the index as dropped, with the reason.
    #[error(
        "a message of {bytes} bytes on {topic:?} is larger than a chunk may be ({limit} bytes): dropped"
    )]
    MessageTooLarge {
        /// The message's topic.
        topic: String,
        /// Its payload size.
        bytes: usize,
        /// The largest payload a chunk takes.
        limit: usize,
    },
    /// A ROS 1 bag could not be read.
    #[error("cannot read the ROS 1 bag {path:?}")]
    Ros1 {
        /// The bag file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: crate::ros1_bag::Ros1Error,
    },
    /// A rosbag2 SQLite file (`.db3`) could not be read.
    #[error("cannot read the rosbag2 SQLite file {path:?}")]
    Sqlite {
        /// The `.db3` file.
        path: PathBuf,
        /// What is wrong (boxed: SQLite's errors are large, and every `Result` would carry one).
        #[source]
        source: Box<crate::sqlite_part::SqliteError>,
    },
    /// A message compressed alone (rosbag2's `compression_mode: message`) that does not
    /// decompress; it is handed out as stored, and its decoder says it cannot read it.
    #[error("the message on {topic} logged at {log_time_ns} ns in {path:?} cannot be decompressed")]
    MessageDecompress {
        /// The part.
        path: PathBuf,
        /// Its channel's topic.
        topic: String,
        /// Its log time.
        log_time_ns: u64,
        /// What went wrong.
        #[source]
        source: crate::DecompressError,
    },
    /// A channel handle that this writer never issued.
    #[error("unknown channel handle {0}")]
    UnknownChannel(usize),
    /// An argument was out of range.
    #[error("{0}")]
    InvalidArgument(String),
}

impl BagError {
    /// The message with its causes, for places that keep errors as text.
    pub fn detail(&self) -> String {
        crate::format::error_chain(self)
    }

    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        BagError::Io {
            op,
            path: path.into(),
            source,
        }
    }

    pub(crate) fn mcap(path: impl Into<PathBuf>, source: mcap::McapError) -> Self {
        BagError::Mcap {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn damaged(path: impl Into<PathBuf>, offset: u64, source: FormatError) -> Self {
        BagError::Damaged {
            path: path.into(),
            offset,
            source,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = BagError> = std::result::Result<T, E>;
