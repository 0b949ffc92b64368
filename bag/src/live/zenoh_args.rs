//! The zenoh flags of every command line that joins a zenoh network: `bag record | play | sim`
//! and the scope. With the cargo feature `clap` they are clap arguments, to `#[command(flatten)]`
//! into a parser, so both programs take the same flags with the same help.

use std::path::PathBuf;

use super::{Mode, SessionOptions};

/// How to reach the zenoh network, as the command line says it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ZenohArgs {
    /// Connect to this zenoh endpoint, e.g. tcp/192.168.1.10:7447 (repeatable).
    #[cfg_attr(feature = "clap", arg(long, value_name = "ENDPOINT"))]
    pub connect: Vec<String>,
    /// Listen on this endpoint, e.g. tcp/0.0.0.0:7447 (repeatable).
    #[cfg_attr(feature = "clap", arg(long, value_name = "ENDPOINT"))]
    pub listen: Vec<String>,
    /// Session mode: peer (default) or client.
    #[cfg_attr(feature = "clap", arg(long, value_name = "MODE"))]
    pub mode: Option<Mode>,
    /// A zenoh configuration file (json5). --connect, --listen and --mode override it.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub zenoh_config: Option<PathBuf>,
    /// Find peers by UDP multicast scouting (off unless asked, here or in --zenoh-config).
    #[cfg_attr(feature = "clap", arg(long))]
    pub scouting: bool,
}

impl ZenohArgs {
    /// The session these flags describe.
    pub fn options(&self) -> SessionOptions {
        SessionOptions {
            connect: self.connect.clone(),
            listen: self.listen.clone(),
            mode: self.mode,
            config_file: self.zenoh_config.clone(),
            multicast_scouting: self.scouting,
            in_process: false,
        }
    }

    /// True when a flag says where the network is: an endpoint, a configuration file or
    /// scouting. Without one, a session reaches only the peers that find it (`--mode` alone
    /// says how to join, not where).
    pub fn names_a_network(&self) -> bool {
        !self.connect.is_empty()
            || !self.listen.is_empty()
            || self.zenoh_config.is_some()
            || self.scouting
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_reaches_the_session_options() {
        let args = ZenohArgs {
            connect: vec!["tcp/10.0.0.2:7447".into()],
            listen: vec!["tcp/0.0.0.0:7447".into()],
            mode: Some(Mode::Client),
            zenoh_config: Some("z.json5".into()),
            scouting: true,
        };
        let options = args.options();
        assert_eq!(options.connect, args.connect);
        assert_eq!(options.listen, args.listen);
        assert_eq!(options.mode, Some(Mode::Client));
        assert_eq!(options.config_file, args.zenoh_config);
        assert!(options.multicast_scouting);
        assert!(!options.in_process);
    }

    #[test]
    fn a_mode_alone_names_no_network() {
        let mode_only = ZenohArgs {
            mode: Some(Mode::Client),
            ..ZenohArgs::default()
        };
        assert!(!mode_only.names_a_network());
        let scouting = ZenohArgs {
            scouting: true,
            ..ZenohArgs::default()
        };
        assert!(scouting.names_a_network());
        let config = ZenohArgs {
            zenoh_config: Some("z.json5".into()),
            ..ZenohArgs::default()
        };
        assert!(config.names_a_network());
    }
}
