//! Messages compressed one by one, as rosbag2 writes them with `compression_mode: message`
//! (zstd, each message's serialized bytes a frame of their own): in its SQLite storage, and in
//! MCAP files written by the Humble releases that still allowed that mode with MCAP storage (no
//! other tool reads those).
//!
//! Such a message is known by its first bytes, but only where the encoding says what those must
//! otherwise be: a CDR message starts with its encapsulation header (`00 00`, `00 01`, ...),
//! never with the zstd magic, so a CDR message that starts with the magic is compressed. Other
//! encodings are left as they are (a protobuf message may start with those bytes).

use std::io::Read;

use crate::format::MAX_RECORD_BYTES;

/// The first bytes of a zstd frame.
pub(crate) const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// True when `data` starts as a zstd frame does.
pub(crate) fn starts_compressed(data: &[u8]) -> bool {
    data.get(..4) == Some(&ZSTD_MAGIC[..])
}

/// True when a message of `message_encoding` with these bytes is one compressed alone (see the
/// module doc): only CDR says what its first bytes must be.
pub(crate) fn is_compressed_cdr(message_encoding: &str, data: &[u8]) -> bool {
    starts_compressed(data) && message_encoding == "cdr"
}

/// Why a message compressed alone could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DecompressError {
    /// The frame is cut or damaged.
    #[error("does not decompress (zstd)")]
    Zstd(#[source] std::io::Error),
    /// It decompresses to more than a message may hold.
    #[error("decompresses to more than the {MAX_RECORD_BYTES} bytes a message may hold")]
    TooLarge,
}

/// Decompresses the zstd frame `data` into `out` (emptied first), stopping past
/// [`MAX_RECORD_BYTES`] so that a small frame cannot take memory without bound.
pub(crate) fn decompress(data: &[u8], out: &mut Vec<u8>) -> Result<(), DecompressError> {
    out.clear();
    let decoder = zstd::stream::read::Decoder::new(data).map_err(DecompressError::Zstd)?;
    decoder
        .take(MAX_RECORD_BYTES as u64 + 1)
        .read_to_end(out)
        .map_err(DecompressError::Zstd)?;
    if out.len() > MAX_RECORD_BYTES {
        return Err(DecompressError::TooLarge);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_cdr_that_starts_as_a_frame_is_compressed_and_it_decompresses() {
        let cdr = [0u8, 1, 0, 0, 42, 0, 0, 0];
        let frame = zstd::encode_all(&cdr[..], 3).unwrap();
        assert!(is_compressed_cdr("cdr", &frame));
        assert!(!is_compressed_cdr("cdr", &cdr));
        assert!(!is_compressed_cdr("protobuf", &frame));
        let mut out = vec![9; 3];
        decompress(&frame, &mut out).unwrap();
        assert_eq!(out, cdr);
        let cut = &frame[..frame.len() - 2];
        assert!(matches!(
            decompress(cut, &mut out),
            Err(DecompressError::Zstd(_))
        ));
    }
}
