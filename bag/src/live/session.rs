//! Opening a zenoh session from the flags every live command shares.

use std::path::{Path, PathBuf};

use zenoh::{Config, Session, Wait};

use super::{LiveError, zenoh_error};

/// How the session joins the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Mode {
    /// Talks to other peers directly (zenoh's default).
    #[default]
    Peer,
    /// Talks only to the router or peer it connects to.
    Client,
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "peer" => Ok(Mode::Peer),
            "client" => Ok(Mode::Client),
            other => Err(format!("mode must be peer or client, not {other:?}")),
        }
    }
}

/// Where and how to open a session. The defaults (no endpoints, peer mode, no multicast
/// scouting) reach nothing outside the process until endpoints are given.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// Endpoints to connect to, e.g. `tcp/192.168.1.10:7447`.
    pub connect: Vec<String>,
    /// Endpoints to listen on, e.g. `tcp/0.0.0.0:7447`.
    pub listen: Vec<String>,
    /// Peer or client; `None` keeps the configuration file's (or zenoh's default, peer).
    pub mode: Option<Mode>,
    /// A zenoh configuration file (json5); the flags above override it.
    pub config_file: Option<PathBuf>,
    /// Find peers by UDP multicast scouting. Off unless asked here or in the configuration
    /// file (`scouting.multicast.enabled`).
    pub multicast_scouting: bool,
    /// Neither listen nor connect nor scout: publishers and subscribers of this process only.
    pub in_process: bool,
}

impl SessionOptions {
    /// A session that only listens on `endpoint` (tests and the in-process demo use loopback).
    pub fn listening(endpoint: impl Into<String>) -> Self {
        SessionOptions {
            listen: vec![endpoint.into()],
            ..Self::default()
        }
    }

    /// A session that reaches nothing outside this process (the scope's demo).
    pub fn in_process() -> Self {
        SessionOptions {
            in_process: true,
            ..Self::default()
        }
    }

    /// A session that connects to `endpoint`.
    pub fn connecting(endpoint: impl Into<String>) -> Self {
        SessionOptions {
            connect: vec![endpoint.into()],
            ..Self::default()
        }
    }

    /// The zenoh configuration these options describe.
    pub fn config(&self) -> Result<Config, LiveError> {
        let mut config = match &self.config_file {
            Some(path) => Config::from_file(path).map_err(|e| LiveError::Config {
                what: path.display().to_string(),
                reason: zenoh_error(&e),
            })?,
            None => Config::default(),
        };
        let mut set = |key: &str, value: String| {
            config
                .insert_json5(key, &value)
                .map_err(|e| LiveError::Config {
                    what: format!("{key} = {value}"),
                    reason: zenoh_error(&e),
                })
        };
        if let Some(mode) = self.mode {
            let mode = match mode {
                Mode::Peer => "\"peer\"",
                Mode::Client => "\"client\"",
            };
            set("mode", mode.to_string())?;
        }
        let file_decides = match &self.config_file {
            Some(path) => sets_multicast_scouting(path)?,
            None => false,
        };
        if self.multicast_scouting {
            set("scouting/multicast/enabled", "true".into())?;
        } else if !file_decides {
            set("scouting/multicast/enabled", "false".into())?;
        }
        if self.in_process {
            set("listen/endpoints", "[]".into())?;
            set("connect/endpoints", "[]".into())?;
            set("scouting/gossip/enabled", "false".into())?;
        }
        for endpoint in self.connect.iter().chain(&self.listen) {
            endpoint
                .parse::<zenoh::config::EndPoint>()
                .map_err(|e| LiveError::Config {
                    what: format!("endpoint {endpoint:?}"),
                    reason: zenoh_error(&e),
                })?;
        }
        if !self.connect.is_empty() {
            set("connect/endpoints", json_strings(&self.connect))?;
        }
        if !self.listen.is_empty() {
            set("listen/endpoints", json_strings(&self.listen))?;
        }
        Ok(config)
    }

    /// Opens the session.
    pub fn open(&self) -> Result<Session, LiveError> {
        let config = self.config()?;
        zenoh::open(config)
            .wait()
            .map_err(|e| LiveError::Open(format!("{} ({})", zenoh_error(&e), self.describe())))
    }

    /// The endpoints in words, for status lines and errors.
    pub fn describe(&self) -> String {
        let mut words = Vec::new();
        if !self.connect.is_empty() {
            words.push(format!("connect {}", self.connect.join(", ")));
        }
        if !self.listen.is_empty() {
            words.push(format!("listen {}", self.listen.join(", ")));
        }
        if let Some(path) = &self.config_file {
            words.push(format!("config {}", path.display()));
        }
        if self.multicast_scouting {
            words.push("multicast scouting".into());
        }
        if self.in_process {
            "in-process".into()
        } else if words.is_empty() {
            "no endpoints".into()
        } else {
            words.join("; ")
        }
    }
}

/// How many peers and routers the session is linked to now.
pub fn link_count(session: &Session) -> usize {
    let info = session.info();
    info.peers_zid().wait().count() + info.routers_zid().wait().count()
}

/// Closes the session, waiting for zenoh to let go of its links.
pub fn close(session: Session) -> Result<(), LiveError> {
    session.close().wait().map_err(|e| LiveError::Declare {
        what: "close of the session".into(),
        reason: zenoh_error(&e),
    })
}

/// True when the json5 configuration file at `path` says whether to scout by multicast.
/// zenoh's own default is to scout; ours is not to, unless asked.
fn sets_multicast_scouting(path: &Path) -> Result<bool, LiveError> {
    let unreadable = |reason: String| LiveError::Config {
        what: path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| unreadable(e.to_string()))?;
    let value: serde_json::Value = json5::from_str(&text).map_err(|e| unreadable(e.to_string()))?;
    Ok(value.pointer("/scouting/multicast/enabled").is_some())
}

fn json_strings(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_reach_the_config() {
        let options = SessionOptions {
            connect: vec!["tcp/127.0.0.1:7447".into()],
            listen: vec!["tcp/127.0.0.1:0".into()],
            mode: Some(Mode::Client),
            ..SessionOptions::default()
        };
        let config = options.config().expect("config");
        let json = |key| config.get_json(key).expect(key);
        assert_eq!(json("mode"), "\"client\"");
        assert_eq!(json("connect/endpoints"), "[\"tcp/127.0.0.1:7447\"]");
        assert_eq!(json("scouting/multicast/enabled"), "false");
    }

    #[test]
    fn a_config_file_scouts_by_multicast_only_when_it_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let scouting = |file: &str, text: &str| {
            let path = dir.path().join(file);
            std::fs::write(&path, text).expect("write");
            let options = SessionOptions {
                config_file: Some(path),
                ..SessionOptions::default()
            };
            let config = options.config().expect("config");
            config.get_json("scouting/multicast/enabled").expect("key")
        };
        let endpoints = r#"{ connect: { endpoints: ["tcp/127.0.0.1:7447"] } }"#;
        assert_eq!(scouting("endpoints.json5", endpoints), "false");
        let on = "{ scouting: { multicast: { enabled: true } } } // asked";
        assert_eq!(scouting("on.json5", on), "true");
    }

    #[test]
    fn a_bad_endpoint_is_refused_with_its_name() {
        let options = SessionOptions::connecting("not an endpoint");
        let err = options.config().map(|_| ()).expect_err("must refuse");
        assert!(err.to_string().contains("not an endpoint"), "{err}");
    }
}
