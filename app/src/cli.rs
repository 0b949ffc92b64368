//! Command-line arguments.

use std::path::PathBuf;

use bag::live::Mode;

use crate::live::LiveOptions;
use crate::live::capture::DEFAULT_CAP_BYTES;

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct Args {
    /// A recording to open.
    pub path: Option<PathBuf>,
    /// Capture live data instead (`--connect` / `--listen`).
    pub live: Option<LiveOptions>,
    /// Open the built-in demo recording (`--demo-recording`).
    pub demo_recording: bool,
    /// Render one frame to this PNG and exit.
    pub screenshot_to: Option<PathBuf>,
}

/// Usage text.
pub const USAGE: &str = "\
usage: scope [PATH | --demo-recording] [--screenshot-to OUT.png]
       scope --connect ENDPOINT [--key EXPR] [--capture-mb N] [--spill] [ZENOH]
       scope --listen ENDPOINT [--key EXPR] [--capture-mb N] [--spill] [ZENOH]
       scope --zenoh-config FILE | --scouting [--key EXPR] ...

  PATH              a bag directory, a .mcap file or a rosbag2 directory
  (nothing)         the live demo: a simulated vehicle on an in-process zenoh session
  --demo-recording  the recorded demo: 3 minutes of the simulated drive, written to a
                    temporary bag with a real recording's flaws (drops, a torn part)
  --connect EP      capture live zenoh data from endpoint EP, e.g. tcp/192.168.1.10:7447
  --listen EP       capture from publishers that connect to EP, e.g. tcp/0.0.0.0:7447
  --key EXPR        what to capture (default **, everything); repeatable
  --capture-mb N    keep at most N MiB of raw messages, evicting the oldest (default 1024)
  --spill           keep what is evicted in a temporary bag on disk, for File > Save Recording
  --mode M          ZENOH: join as a peer (default) or a client (through a router)
  --zenoh-config F  ZENOH: a zenoh configuration file (json5); the flags above override it
  --scouting        ZENOH: find peers by UDP multicast scouting (off unless asked, here or
                    in the configuration file)
  --screenshot-to F render one frame once loaded, write it to F (PNG) and exit";

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut out = Args::default();
    let (mut connect, mut listen, mut keys) = (Vec::new(), Vec::new(), Vec::new());
    let mut cap_bytes = DEFAULT_CAP_BYTES;
    let mut spill = false;
    let (mut mode, mut config_file, mut scouting) = (None, None, false);
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let mut value = |what: &str| {
            it.next()
                .ok_or_else(|| format!("{arg} needs {what}\n{USAGE}"))
        };
        match arg.as_str() {
            "--screenshot-to" => out.screenshot_to = Some(PathBuf::from(value("a file name")?)),
            "--connect" => connect.push(value("an endpoint")?),
            "--listen" => listen.push(value("an endpoint")?),
            "--key" => keys.push(value("a key expression")?),
            "--capture-mb" => {
                let v = value("a number of MiB")?;
                let mib: usize =
                    v.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                        format!("--capture-mb wants a positive number, not {v:?}")
                    })?;
                cap_bytes = mib.saturating_mul(1 << 20);
            }
            "--spill" => spill = true,
            "--mode" => mode = Some(value("peer or client")?.parse::<Mode>()?),
            "--zenoh-config" => config_file = Some(PathBuf::from(value("a file name")?)),
            "--scouting" => scouting = true,
            "--demo-recording" => out.demo_recording = true,
            "-h" | "--help" => return Err(USAGE.to_owned()),
            s if s.starts_with("--") => return Err(format!("unknown option {s}\n{USAGE}")),
            _ => {
                if out.path.is_some() {
                    return Err(format!("only one recording can be opened\n{USAGE}"));
                }
                out.path = Some(PathBuf::from(arg));
            }
        }
    }
    if out.demo_recording && out.path.is_some() {
        return Err(format!(
            "open a recording or the demo recording, not both\n{USAGE}"
        ));
    }
    if !connect.is_empty() || !listen.is_empty() || config_file.is_some() || scouting {
        if out.path.is_some() || out.demo_recording {
            return Err(format!(
                "open a recording or capture live data, not both\n{USAGE}"
            ));
        }
        let mut options = LiveOptions::connect("", "**");
        options.session.connect = connect;
        options.session.listen = listen;
        options.session.mode = mode;
        options.session.config_file = config_file;
        options.session.multicast_scouting = scouting;
        if !keys.is_empty() {
            options.key_exprs = keys;
        }
        options.cap_bytes = cap_bytes;
        options.spill = spill;
        out.live = Some(options);
    } else if !keys.is_empty() || spill || mode.is_some() {
        return Err(format!(
            "--key, --spill and --mode need --connect, --listen, --zenoh-config or \
             --scouting\n{USAGE}"
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Args, String> {
        parse(list.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses() {
        let a = args(&["bag", "--screenshot-to", "o.png"]).expect("parses");
        assert_eq!(a.path, Some("bag".into()));
        assert_eq!(a.screenshot_to, Some("o.png".into()));
        assert!(a.live.is_none());
        assert!(args(&["--screenshot-to"]).is_err());
        assert!(args(&["--bogus"]).is_err());
        assert!(args(&["--demo-recording"]).expect("parses").demo_recording);
        assert!(args(&["bag", "--demo-recording"]).is_err(), "both");
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
        assert!(args(&["--key", "x"]).is_err(), "--key alone");
        assert!(
            args(&["bag", "--connect", "tcp/1.2.3.4:7447"]).is_err(),
            "both"
        );
        assert!(args(&["--connect", "e", "--capture-mb", "0"]).is_err());
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
        assert!(err.contains("router"), "{err}");
        assert!(args(&["--mode", "client"]).is_err(), "--mode alone");
    }
}
