//! [`Compression`]: the chunk compressions the library writes and reads, and their MCAP names.

/// Chunk compression.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Compression {
    /// zstd (the default): about a quarter of the raw size for typical telemetry.
    #[default]
    Zstd,
    /// lz4: faster, larger.
    Lz4,
    /// No compression.
    None,
}

impl Compression {
    /// The name MCAP records use (`zstd`, `lz4`, or empty).
    pub fn mcap_name(self) -> &'static str {
        match self {
            Compression::Zstd => "zstd",
            Compression::Lz4 => "lz4",
            Compression::None => "",
        }
    }

    /// The compression a chunk names, `None` for one the library does not know.
    pub fn from_mcap_name(name: &str) -> Option<Self> {
        match name {
            "zstd" => Some(Compression::Zstd),
            "lz4" => Some(Compression::Lz4),
            "" => Some(Compression::None),
            _ => None,
        }
    }
}

impl std::str::FromStr for Compression {
    type Err = String;

    /// The MCAP names, and `none` for no compression (as a command line spells it).
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Compression::None),
            other => Self::from_mcap_name(other)
                .ok_or_else(|| format!("unknown compression {other:?} (zstd, lz4 or none)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for c in [Compression::Zstd, Compression::Lz4, Compression::None] {
            assert_eq!(Compression::from_mcap_name(c.mcap_name()), Some(c));
            assert_eq!(c.mcap_name().parse::<Compression>(), Ok(c));
        }
        assert_eq!("none".parse::<Compression>(), Ok(Compression::None));
        assert!("brotli".parse::<Compression>().is_err());
        assert_eq!(Compression::from_mcap_name("none"), None);
    }
}
