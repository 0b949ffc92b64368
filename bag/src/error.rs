//! The one error type of the `bag` library.

use std::path::PathBuf;

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
    /// `metadata.yaml` exists but cannot be parsed.
    #[error("cannot parse {path:?}: {message}")]
    BadMetadata {
        /// The metadata file.
        path: PathBuf,
        /// What the YAML parser said.
        message: String,
    },
    /// A part is damaged at a byte offset.
    #[error("{path:?} is damaged at byte {offset}: {what}")]
    Damaged {
        /// The part concerned.
        path: PathBuf,
        /// Byte offset of the first damaged record.
        offset: u64,
        /// What was found there.
        what: String,
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
        let mut text = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        text
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
}

/// Shorthand for results of this crate.
pub type Result<T, E = BagError> = std::result::Result<T, E>;
