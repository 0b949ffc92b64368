//! Progress on stderr for long commands (hidden when stderr is not a terminal).

use std::cell::RefCell;
use std::path::Path;

use bag::{BagReader, Decompressing};
use indicatif::{ProgressBar, ProgressStyle};

pub struct Progress(ProgressBar);

impl Progress {
    pub fn new(what: &str, total: u64) -> Self {
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(
                "{msg} [{bar:30}] {pos}/{len} messages ({per_sec}, {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_message(what.to_string());
        Progress(bar)
    }

    pub fn set(&self, done: u64) {
        self.0.set_position(done);
    }

    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// A one-line live status (a spinner and a message) for commands that run until stopped.
pub struct Status(ProgressBar);

impl Status {
    pub fn new() -> Self {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(250));
        Status(bar)
    }

    pub fn set(&self, message: String) {
        self.0.set_message(message);
    }

    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// Opens the recording at `path` as [`BagReader::open`] does, with a bar on stderr while a part
/// stored compressed whole is decompressed (the one step of opening that takes time in
/// proportion to the data; hidden when stderr is not a terminal).
pub fn open_recording(path: &Path) -> bag::Result<BagReader> {
    let bar: RefCell<Option<(String, ProgressBar)>> = RefCell::new(None);
    let reader = BagReader::open_reporting(path, true, &|d: &Decompressing| {
        let mut bar = bar.borrow_mut();
        if bar.as_ref().is_none_or(|(part, _)| *part != d.part) {
            if let Some((_, done)) = bar.take() {
                done.finish_and_clear();
            }
            let new = ProgressBar::new(d.stored_bytes);
            new.set_style(
                ProgressStyle::with_template(
                    "{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            new.set_message(format!("decompressing {}", d.part));
            *bar = Some((d.part.clone(), new));
        }
        if let Some((_, current)) = bar.as_ref() {
            current.set_position(d.read_bytes);
        }
    });
    if let Some((_, done)) = bar.into_inner() {
        done.finish_and_clear();
    }
    reader
}
