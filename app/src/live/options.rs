//! [`LiveOptions`]: what a live capture connects to, subscribes to and keeps.

use bag::live::SessionOptions;

use crate::live::capture::DEFAULT_CAP_BYTES;

/// What to capture.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    /// How to reach the network.
    pub session: SessionOptions,
    /// Key expressions to subscribe to.
    pub key_exprs: Vec<String>,
    /// Cap on the raw capture (payload plus 32 bytes a message).
    pub cap_bytes: usize,
    /// Also run the simulated vehicle on the same session (the demo).
    pub simulate: bool,
    /// Keep what the ring evicts in a temporary bag on disk, for Save Recording.
    pub spill: bool,
}

impl LiveOptions {
    /// Capture everything from `endpoint`.
    pub fn connect(endpoint: &str, key_expr: &str) -> Self {
        LiveOptions {
            session: SessionOptions::connecting(endpoint),
            key_exprs: vec![key_expr.to_string()],
            cap_bytes: DEFAULT_CAP_BYTES,
            simulate: false,
            spill: false,
        }
    }

    /// The demo: the simulated vehicle on a session that never leaves the process.
    pub fn demo() -> Self {
        LiveOptions {
            session: SessionOptions::in_process(),
            key_exprs: vec!["car/**".into()],
            cap_bytes: DEFAULT_CAP_BYTES,
            simulate: true,
            spill: false,
        }
    }

    /// A name for the title bar.
    pub fn describe(&self) -> String {
        if self.simulate {
            "Live demo (simulated vehicle)".into()
        } else if self.spill {
            format!(
                "Live: {} ({}; spilling to disk)",
                self.key_exprs.join(" "),
                self.session.describe()
            )
        } else {
            format!(
                "Live: {} ({})",
                self.key_exprs.join(" "),
                self.session.describe()
            )
        }
    }
}
