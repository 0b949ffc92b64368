//! Progress on stderr for long commands (hidden when stderr is not a terminal).

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
