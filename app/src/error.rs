//! The app's one error type. Each variant carries what it concerns (a path, a topic, a
//! thread) and keeps its cause as `#[source]`, so the OS error behind "cannot open" is never
//! lost; [`Error::report`] shows the message with every cause, as the user sees it.

use std::path::PathBuf;

/// What went wrong in the app.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A recording could not be opened.
    #[error("cannot open {}", path.display())]
    Open {
        /// The path given.
        path: PathBuf,
        /// Why.
        #[source]
        source: bag::BagError,
    },
    /// An open recording's messages could not be read.
    #[error("cannot read the recording")]
    Read {
        /// Why.
        #[source]
        source: bag::BagError,
    },
    /// A tiled read (see [`TimeWindow::tiled`](crate::data::source::TimeWindow::tiled)) read a
    /// rosbag2 SQLite file in row order and found it out of time order: what it read is not to
    /// be used, and reading the windows again (now in time order) gives every message.
    #[error("the recording is out of time order by row: it must be read again in time order")]
    ReadAgain,
    /// A topic's schema could not be turned into a decoding plan.
    #[error("cannot decode {type_name}")]
    Schema {
        /// The topic's type, as tools show it.
        type_name: String,
        /// What the decoder said.
        #[source]
        source: decode::DecodeError,
    },
    /// One message did not decode.
    #[error(transparent)]
    Decode(#[from] decode::DecodeError),
    /// A derived signal has no values.
    #[error("derived signal {name}")]
    Derived {
        /// Its name.
        name: String,
        /// Why.
        #[source]
        source: crate::data::derived::DerivedError,
    },
    /// The inspector found no message of the topic at or after the time asked for.
    #[error("no message at this time")]
    NoMessage,
    /// The live session failed.
    #[error(transparent)]
    Live(#[from] bag::live::LiveError),
    /// A worker thread could not be started.
    #[error("cannot start the {name} thread")]
    Thread {
        /// Which worker.
        name: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file or directory could not be created, removed or written.
    #[error("{what} {}", path.display())]
    Io {
        /// What was being done (`creating`, `clearing`).
        what: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The temporary bag that keeps what the capture evicts failed.
    #[error("{what} the spill bag")]
    Spill {
        /// What was being done (`creating`, `flushing`, `reading`, `copying from`).
        what: &'static str,
        /// Why.
        #[source]
        source: bag::BagError,
    },
    /// File > Save Recording failed to write the bag.
    #[error("saving to {}", dir.display())]
    Save {
        /// The bag directory being written.
        dir: PathBuf,
        /// Why.
        #[source]
        source: bag::BagError,
    },
    /// The capture holds a message on a topic it never announced.
    #[error("message on unknown topic #{topic}")]
    UnknownTopic {
        /// The topic id.
        topic: u32,
    },
    /// A layout file could not be read or written.
    #[error(transparent)]
    Layout(#[from] crate::data::layout_file::LayoutFileError),
    /// A layout names fields the open recording does not have: the rest of it is shown.
    #[error(
        "the layout {} names {} this recording does not have (the rest is shown): {}",
        path.display(),
        if missing.len() == 1 { "a field" } else { "fields" },
        missing.join(", ")
    )]
    LayoutFieldsMissing {
        /// The layout file.
        path: PathBuf,
        /// `topic/path` of each missing field.
        missing: Vec<String>,
    },
    /// File > Export Signals with no signal plotted.
    #[error(
        "Export Signals: no signal is plotted (plot one first; the plotted signals are exported)"
    )]
    NothingToExport,
    /// File > Save Recording with no live capture open.
    #[error("Save Recording: nothing is being captured")]
    NothingCaptured,
    /// A second recording to compare with, and no first one open.
    #[error("Compare With: open a recording first, then the one to compare it with")]
    NothingToCompare,
    /// A screenshot could not be written as PNG.
    #[error("writing {}", path.display())]
    Png {
        /// The PNG file.
        path: PathBuf,
        /// Why.
        #[source]
        source: png::EncodingError,
    },
    /// A screenshot is larger than a PNG can hold.
    #[error("the image is too large for a PNG: {width} x {height}")]
    ImageTooLarge {
        /// Pixels across.
        width: usize,
        /// Pixels down.
        height: usize,
    },
    /// The built-in demo recording could not be written (the demo says why in words).
    #[error("{0}")]
    Demo(String),
    /// A worker thread (the file dialog, opening a recording) panicked; the panic message is
    /// on stderr.
    #[error("the {name} thread failed (it panicked) without giving an answer")]
    JobPanicked {
        /// Which worker.
        name: &'static str,
    },
    /// The file dialog's thread ended without an answer.
    #[error("the file dialog failed without giving an answer")]
    DialogFailed,
    /// The thread writing a Save Recording ended without a result.
    #[error("saving to {}: the writer stopped without a result", dir.display())]
    SaveThreadFailed {
        /// The bag directory being written.
        dir: PathBuf,
    },
    /// `--screenshot-to` waited too long for the recording to load.
    #[error("gave up waiting for the recording to load")]
    LoadTimeout,
}

impl Error {
    /// The message followed by each of its causes, `message: cause: cause`.
    pub fn report(&self) -> String {
        report(self)
    }
}

/// Any error followed by each of its causes, `message: cause: cause`.
pub fn report(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_os_error_behind_cannot_open_is_reported() {
        let path = std::env::temp_dir().join("redline-scope-no-such-recording");
        let source = match bag::BagReader::open(&path) {
            Err(e) => e,
            Ok(_) => panic!("{} opened", path.display()),
        };
        let error = Error::Open { path, source };
        let text = error.report();
        assert!(text.starts_with("cannot open "), "{text}");
        assert!(text.contains("os error"), "{text}");
    }
}
