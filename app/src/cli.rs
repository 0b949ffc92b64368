//! Command-line arguments: `scope [PATH] [--screenshot-to OUT.png]`.

use std::path::PathBuf;

/// What the command line asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    /// A recording to open; `None` opens the demo.
    pub path: Option<PathBuf>,
    /// Render one frame to this PNG and exit.
    pub screenshot_to: Option<PathBuf>,
}

/// Usage text.
pub const USAGE: &str = "usage: scope [PATH] [--screenshot-to OUT.png]\n\
  PATH   a bag directory, a .mcap file or a rosbag2 directory (default: the built-in demo)";

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut out = Args::default();
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--screenshot-to" => {
                let Some(p) = it.next() else {
                    return Err("--screenshot-to needs a file name".to_owned());
                };
                out.screenshot_to = Some(PathBuf::from(p));
            }
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
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        let a = parse([
            "bag".to_owned(),
            "--screenshot-to".to_owned(),
            "o.png".to_owned(),
        ]);
        assert_eq!(
            a,
            Ok(Args {
                path: Some("bag".into()),
                screenshot_to: Some("o.png".into())
            })
        );
        assert!(parse(["--screenshot-to".to_owned()]).is_err());
        assert!(parse(["--bogus".to_owned()]).is_err());
    }
}
