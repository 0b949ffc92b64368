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
