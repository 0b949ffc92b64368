//! Chunk bodies: `""`, `"zstd"` (zstd frames) and `"lz4"` (LZ4 frame format).
//!
//! Verify's own decompressor, kept apart from the format layer's `ChunkDecompressor` like the
//! rest of verify's parser (see the `verify` module docs).
//!
//! The caller checks the declared uncompressed size against its limit and against what the
//! compressed input could possibly expand to before anything here allocates.

use std::io::Read;

/// No zstd or LZ4 frame expands more than this: a zstd RLE block is 4 bytes for at most 128 KiB
/// (LZ4 tops out near 255:1). A declared size beyond it is impossible, so it is rejected before
/// anything is allocated, which keeps every allocation proportional to the input.
pub(crate) const MAX_EXPANSION_RATIO: u64 = 32 * 1024;

/// Initial reservation for LZ4 output, relative to the input; the buffer grows as output arrives.
const LZ4_RESERVE_RATIO: usize = 8;

/// Decompresses chunk bodies, reusing the zstd context across chunks.
#[derive(Default)]
pub(crate) struct ChunkDecoder {
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

impl ChunkDecoder {
    /// Decompresses `input` into `out` (cleared first).
    ///
    /// The caller has checked `declared` against its limit and [`MAX_EXPANSION_RATIO`]. zstd
    /// decodes in one shot into exactly `declared` bytes (no window buffer, no regrowth) and fails
    /// if the data is longer; LZ4 stops one byte past `declared`, so the caller sees the excess.
    pub fn decompress(
        &mut self,
        compression: &str,
        input: &[u8],
        declared: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        out.clear();
        let declared_usize =
            usize::try_from(declared).map_err(|_| "size exceeds memory".to_owned())?;
        match compression {
            "zstd" => {
                // Allocate exactly the declared size, but only once the frames' own block headers
                // show they can hold that much: a flipped bit in uncompressed_size costs nothing.
                let bound = zstd_bound(input)?;
                if declared > bound {
                    return Err(format!("zstd frames that can hold at most {bound} bytes"));
                }
                let zstd = match &mut self.zstd {
                    Some(zstd) => zstd,
                    None => self
                        .zstd
                        .insert(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?),
                };
                out.reserve_exact(declared_usize);
                zstd.decompress_to_buffer(input, out)
                    .map(drop)
                    .map_err(|e| e.to_string())
            }
            "lz4" => {
                out.reserve(
                    declared_usize.min(
                        input
                            .len()
                            .saturating_mul(LZ4_RESERVE_RATIO)
                            .saturating_add(4096),
                    ),
                );
                lz4_flex::frame::FrameDecoder::new(input)
                    .take(declared.saturating_add(1))
                    .read_to_end(out)
                    .map(drop)
                    .map_err(|e| e.to_string())
            }
            other => Err(format!("unknown compression {other:?}")),
        }
    }
}

/// Upper bound of what a sequence of zstd frames decompresses to, from the frame and block
/// headers alone (the zstd format spec, RFC 8878): the frame content size when a frame declares
/// it, else 128 KiB per compressed block plus the exact size of raw and RLE blocks.
fn zstd_bound(mut input: &[u8]) -> Result<u64, String> {
    const MAGIC: u32 = 0xFD2F_B528;
    const BLOCK_MAX: u64 = 128 * 1024;
    fn take<'a>(input: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
        let Some((head, rest)) = input.split_at_checked(n) else {
            return Err("a truncated zstd frame".to_owned());
        };
        *input = rest;
        Ok(head)
    }
    fn le(bytes: &[u8]) -> u64 {
        bytes
            .iter()
            .rev()
            .fold(0, |acc, b| (acc << 8) | u64::from(*b))
    }
    let mut bound = 0u64;
    if input.is_empty() {
        return Err("no zstd frame".to_owned());
    }
    while !input.is_empty() {
        let magic = le(take(&mut input, 4)?) as u32;
        if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
            let size = le(take(&mut input, 4)?);
            take(&mut input, usize::try_from(size).unwrap_or(usize::MAX))?;
            continue;
        }
        if magic != MAGIC {
            return Err(format!("zstd frame magic, not {magic:#010x}"));
        }
        let descriptor = *take(&mut input, 1)?.first().unwrap_or(&0);
        let single_segment = descriptor & 0x20 != 0;
        let checksum = descriptor & 0x04 != 0;
        if !single_segment {
            take(&mut input, 1)?;
        }
        take(&mut input, [0, 1, 2, 4][usize::from(descriptor & 0x03)])?;
        let content_size = match (descriptor >> 6, single_segment) {
            (0, false) => None,
            (0, true) => Some(le(take(&mut input, 1)?)),
            (1, _) => Some(le(take(&mut input, 2)?) + 256),
            (2, _) => Some(le(take(&mut input, 4)?)),
            _ => Some(le(take(&mut input, 8)?)),
        };
        let mut blocks_bound = 0u64;
        loop {
            let header = le(take(&mut input, 3)?);
            let last = header & 1 != 0;
            let size = header >> 3;
            match (header >> 1) & 0x03 {
                0 => {
                    take(&mut input, usize::try_from(size).unwrap_or(usize::MAX))?;
                    blocks_bound = blocks_bound.saturating_add(size);
                }
                1 => {
                    take(&mut input, 1)?;
                    blocks_bound = blocks_bound.saturating_add(size);
                }
                2 => {
                    take(&mut input, usize::try_from(size).unwrap_or(usize::MAX))?;
                    blocks_bound = blocks_bound.saturating_add(BLOCK_MAX);
                }
                _ => return Err("a valid zstd block type (found the reserved one)".to_owned()),
            }
            if last {
                break;
            }
        }
        if checksum {
            take(&mut input, 4)?;
        }
        bound = bound.saturating_add(content_size.unwrap_or(blocks_bound));
    }
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zstd_round_trip_and_overlong_detection() {
        let raw: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let Ok(compressed) = zstd::encode_all(raw.as_slice(), 3) else {
            panic!("zstd encode");
        };
        let mut decoder = ChunkDecoder::default();
        let mut out = Vec::new();
        assert!(
            decoder
                .decompress("zstd", &compressed, raw.len() as u64, &mut out)
                .is_ok()
        );
        assert_eq!(out, raw);
        // Declared too small: an error, or more output than declared (the buffer kept its
        // capacity from the call above); either way the caller sees the mismatch.
        let short = decoder.decompress("zstd", &compressed, 100, &mut out);
        assert!(short.is_err() || out.len() != 100);
    }

    #[test]
    fn zstd_bound_from_headers() {
        let raw = vec![7u8; 1 << 20];
        // With the content size in the frame header (bulk encoder)...
        let Ok(sized) = zstd::bulk::compress(&raw, 3) else {
            panic!("zstd encode");
        };
        assert_eq!(zstd_bound(&sized), Ok(1 << 20));
        // ...and without (streaming encoder, as the mcap crate writes chunks).
        let mut encoder = match zstd::stream::write::Encoder::new(Vec::new(), 3) {
            Ok(encoder) => encoder,
            Err(err) => panic!("{err}"),
        };
        assert!(std::io::Write::write_all(&mut encoder, &raw).is_ok());
        let Ok(streamed) = encoder.finish() else {
            panic!("zstd finish");
        };
        let Ok(bound) = zstd_bound(&streamed) else {
            panic!("bound");
        };
        assert!(bound >= 1 << 20, "{bound}");
        // Two frames back to back.
        let both = [sized.as_slice(), sized.as_slice()].concat();
        assert_eq!(zstd_bound(&both), Ok(2 << 20));
        let mut decoder = ChunkDecoder::default();
        let mut out = Vec::new();
        assert!(decoder.decompress("zstd", &both, 2 << 20, &mut out).is_ok());
        assert_eq!(out.len(), 2 << 20);
        // A lie about the size is refused before allocating.
        assert!(
            decoder
                .decompress("zstd", &sized, (1 << 20) + 1, &mut out)
                .is_err()
        );
        assert!(zstd_bound(&sized[..sized.len() - 1]).is_err());
    }

    #[test]
    fn lz4_frame_round_trip() {
        let raw = b"hello hello hello hello".repeat(100);
        let mut encoder = lz4_flex::frame::FrameEncoder::new(Vec::new());
        assert!(std::io::Write::write_all(&mut encoder, &raw).is_ok());
        let Ok(compressed) = encoder.finish() else {
            panic!("lz4 encode");
        };
        let mut decoder = ChunkDecoder::default();
        let mut out = Vec::new();
        assert!(
            decoder
                .decompress("lz4", &compressed, raw.len() as u64, &mut out)
                .is_ok()
        );
        assert_eq!(out, raw);
        // Declared too small: decoding stops one byte past it.
        assert!(decoder.decompress("lz4", &compressed, 10, &mut out).is_ok());
        assert_eq!(out.len(), 11);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let mut decoder = ChunkDecoder::default();
        let mut out = Vec::new();
        assert!(
            decoder
                .decompress("zstd", &[1, 2, 3, 4, 5], 1000, &mut out)
                .is_err()
        );
        assert!(
            decoder
                .decompress("lz4", &[1, 2, 3, 4, 5], 1000, &mut out)
                .is_err()
        );
        assert!(decoder.decompress("brotli", &[], 0, &mut out).is_err());
    }
}
