//! Command-line arguments, parsed by clap. The zenoh flags are `bag`'s own
//! ([`ZenohArgs`](bag::live::ZenohArgs)), so `scope` and `bag record` take the same ones with the
//! same help.

use std::ffi::OsString;
use std::path::PathBuf;

use bag::live::ZenohArgs;
use clap::{ArgGroup, Parser};

use crate::live::LiveOptions;
use crate::live::capture::DEFAULT_CAP_BYTES;

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct Args {
    /// A recording to open.
    pub path: Option<PathBuf>,
    /// Capture live data instead (`--connect`, `--listen`, `--zenoh-config` or `--scouting`).
    pub live: Option<LiveOptions>,
    /// Open the built-in demo recording (`--demo-recording`).
    pub demo_recording: bool,
    /// Render one frame to this PNG and exit.
    pub screenshot_to: Option<PathBuf>,
    /// A layout file to show (`--layout`).
    pub layout: Option<PathBuf>,
    /// A second recording to open beside the first (`--compare`).
    pub compare: Option<PathBuf>,
}

/// `--capture-mb` unless given.
const DEFAULT_CAPTURE_MIB: u64 = (DEFAULT_CAP_BYTES >> 20) as u64;

/// Redline Scope: open a recording, plot any signal, scrub and play back, judge whether it can
/// be trusted.
///
/// With no PATH and no zenoh flags it starts on the live demo: a simulated vehicle publishing on
/// an in-process zenoh session that never leaves the machine, captured live. --connect,
/// --listen, --zenoh-config or --scouting capture live zenoh data instead.
#[derive(Debug, Parser)]
#[command(name = "scope", version, about, long_about)]
// The flags that say where a zenoh network is; any of them means a live capture.
#[command(group(
    ArgGroup::new("network")
        .args(["connect", "listen", "zenoh_config", "scouting"])
        .multiple(true)
        .conflicts_with_all(["path", "demo_recording"])
))]
// `bag record` takes --mode alone (its warning says it reaches nothing); the scope refuses it,
// since without a network it would open the demo and ignore the flag.
#[command(mut_arg("mode", |arg| arg.requires("network")))]
struct Cli {
    /// A bag directory, a .mcap file or a rosbag2 directory.
    path: Option<PathBuf>,
    /// The recorded demo: 3 minutes of the simulated drive, written to a temporary bag with a
    /// real recording's flaws (drops, a torn part).
    #[arg(long, conflicts_with = "path")]
    demo_recording: bool,
    /// Render one frame once loaded, write it to this file (PNG) and exit.
    #[arg(long, value_name = "OUT.png")]
    screenshot_to: Option<PathBuf>,
    /// Show this layout file (File > Save Layout writes one): its plots, how each signal is
    /// drawn, the cursors and the time axis. Fields the recording lacks are left out and named.
    #[arg(long, value_name = "FILE.yaml")]
    layout: Option<PathBuf>,
    /// A second recording to open beside PATH (File > Compare With): its topics are listed as
    /// B:/topic, its start aligned with PATH's, and its health shown below PATH's.
    #[arg(long, value_name = "PATH2", requires = "path")]
    compare: Option<PathBuf>,
    #[command(flatten, next_help_heading = "Live capture")]
    zenoh: ZenohArgs,
    /// What to capture (default **, everything); repeatable.
    #[arg(long = "key", value_name = "EXPR", requires = "network")]
    keys: Vec<String>,
    /// Keep at most this many MiB of raw messages, evicting the oldest.
    #[arg(
        long,
        value_name = "MIB",
        default_value_t = DEFAULT_CAPTURE_MIB,
        value_parser = positive_mib,
    )]
    capture_mb: u64,
    /// Keep what is evicted in a temporary bag on disk, for File > Save Recording.
    #[arg(long, requires = "network")]
    spill: bool,
}

/// A `--capture-mb` value: a positive whole number of MiB.
fn positive_mib(value: &str) -> Result<u64, String> {
    value
        .parse()
        .ok()
        .filter(|&mib| mib > 0)
        .ok_or_else(|| "expected a positive whole number of MiB".to_string())
}

impl Cli {
    fn into_args(self) -> Args {
        let live = self.zenoh.names_a_network().then(|| {
            let mut options = LiveOptions::connect("", "**");
            options.session = self.zenoh.options();
            if !self.keys.is_empty() {
                options.key_exprs = self.keys;
            }
            let mib = usize::try_from(self.capture_mb).unwrap_or(usize::MAX);
            options.cap_bytes = mib.saturating_mul(1 << 20);
            options.spill = self.spill;
            options
        });
        Args {
            path: self.path,
            live,
            demo_recording: self.demo_recording,
            screenshot_to: self.screenshot_to,
            layout: self.layout,
            compare: self.compare,
        }
    }
}

/// Parses a command line, program name first (as [`std::env::args_os`] gives it). `--help`,
/// `--version` and mistakes come back as the error; [`clap::Error::exit`] prints them and exits
/// as clap does (0 for help and version, 2 for a mistake).
pub fn parse<I, T>(argv: I) -> Result<Args, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    Ok(Cli::try_parse_from(argv)?.into_args())
}

#[cfg(test)]
mod tests {
    use clap::error::ErrorKind;

    use super::*;
    use bag::live::Mode;

    fn args(list: &[&str]) -> Result<Args, clap::Error> {
        parse(std::iter::once("scope").chain(list.iter().copied()))
    }

    #[test]
    fn parses() {
        let a = args(&["bag", "--screenshot-to", "o.png"]).expect("parses");
        assert_eq!(a.path, Some("bag".into()));
        assert_eq!(a.screenshot_to, Some("o.png".into()));
        let a = args(&["bag", "--layout", "l.yaml"]).expect("parses");
        assert_eq!(a.layout, Some("l.yaml".into()));
        assert!(a.live.is_none());
        assert!(args(&["--screenshot-to"]).is_err());
        assert!(args(&["--bogus"]).is_err());
        assert!(args(&["--demo-recording"]).expect("parses").demo_recording);
        assert!(args(&["bag", "--demo-recording"]).is_err(), "both");
        assert!(args(&["one", "two"]).is_err(), "two recordings");
        let a = args(&["one", "--compare", "two"]).expect("parses");
        assert_eq!(a.compare, Some("two".into()));
        assert!(
            args(&["--compare", "two"]).is_err(),
            "nothing to compare with"
        );
    }

    #[test]
    fn parses_live_capture() {
        let a = args(&[
            "--connect",
            "tcp/10.0.0.2:7447",
            "--key",
            "car/**",
            "--capture-mb",
            "64",
        ])
        .expect("parses");
        let live = a.live.expect("live");
        assert_eq!(live.session.connect, vec!["tcp/10.0.0.2:7447".to_string()]);
        assert_eq!(live.key_exprs, vec!["car/**".to_string()]);
        assert_eq!(live.cap_bytes, 64 << 20);
        assert!(!live.spill && !live.simulate);
        assert!(args(&["--key", "x"]).is_err(), "--key alone");
        assert!(args(&["--spill"]).is_err(), "--spill alone");
        assert!(
            args(&["bag", "--connect", "tcp/1.2.3.4:7447"]).is_err(),
            "both"
        );
        assert!(args(&["--demo-recording", "--scouting"]).is_err(), "both");
        let zero = args(&["--connect", "e", "--capture-mb", "0"]).expect_err("no room");
        assert!(zero.to_string().contains("positive"), "{zero}");
    }

    #[test]
    fn live_capture_defaults_to_everything_in_a_gib() {
        let live = args(&["--listen", "tcp/0.0.0.0:7447", "--spill"])
            .expect("parses")
            .live
            .expect("live");
        assert_eq!(live.session.listen, vec!["tcp/0.0.0.0:7447".to_string()]);
        assert_eq!(live.key_exprs, vec!["**".to_string()]);
        assert_eq!(live.cap_bytes, DEFAULT_CAP_BYTES);
        assert!(live.spill);
        assert!(!live.session.in_process);
    }

    #[test]
    fn parses_the_zenoh_flags_bag_takes() {
        let a = args(&[
            "--zenoh-config",
            "z.json5",
            "--mode",
            "client",
            "--scouting",
        ])
        .expect("parses");
        let session = a.live.expect("live").session;
        assert_eq!(session.config_file, Some(PathBuf::from("z.json5")));
        assert_eq!(session.mode, Some(Mode::Client));
        assert!(session.multicast_scouting);
        let err = args(&["--connect", "e", "--mode", "router"]).expect_err("bad mode");
        assert!(err.to_string().contains("router"), "{err}");
        assert!(args(&["--mode", "client"]).is_err(), "--mode alone");
    }

    #[test]
    fn help_lists_every_flag_and_a_misspelt_one_gets_a_suggestion() {
        let help = args(&["--help"]).expect_err("help is not a command line");
        assert_eq!(help.kind(), ErrorKind::DisplayHelp);
        let text = help.to_string();
        for flag in [
            "--demo-recording",
            "--screenshot-to",
            "--compare",
            "--connect",
            "--listen",
            "--mode",
            "--zenoh-config",
            "--scouting",
            "--key",
            "--capture-mb",
            "--spill",
        ] {
            assert!(text.contains(flag), "{flag} missing from:\n{text}");
        }
        let typo = args(&["--conect", "tcp/10.0.0.2:7447"]).expect_err("unknown flag");
        assert_eq!(typo.kind(), ErrorKind::UnknownArgument);
        assert!(typo.to_string().contains("--connect"), "{typo}");
    }
}
