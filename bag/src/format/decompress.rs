//! [`ChunkDecompressor`]: one seam for every compression a chunk can name (none, zstd, lz4),
//! as the mcap crate's `sans_io/decompressor.rs` is for its readers.
//!
//! A chunk's header declares its uncompressed size, and a damaged one can declare anything, so
//! before the output buffer is sized by it the size is checked against the library's limit,
//! against what the compressed bytes could possibly expand to, and for zstd against the bound
//! its frame and block headers give. Output is checked for exactly the declared size and, when
//! the header gives one, the CRC.

use std::io::Read;

use super::{ChunkHeader, Compression, FormatError, MAX_RECORD_BYTES};

/// No zstd or LZ4 frame expands more than this: a zstd RLE block is 4 bytes for at most 128 KiB
/// (LZ4 tops out near 255:1). A declared size beyond it is impossible, so it is refused before
/// anything is allocated, which keeps every allocation proportional to the input.
pub const MAX_EXPANSION_RATIO: u64 = 32 * 1024;

/// Initial reservation for LZ4 output, relative to the input; the buffer grows as output arrives.
const LZ4_RESERVE_RATIO: usize = 8;

/// Decompresses chunks, reusing one zstd context across them (creating one costs about as much
/// as decompressing a small chunk).
#[derive(Default)]
pub struct ChunkDecompressor {
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

impl ChunkDecompressor {
    /// Decompresses a chunk record's body (after opcode and length) into `out` (cleared first;
    /// its allocation is reused) and checks its size and CRC.
    pub fn decode_chunk(&mut self, body: &[u8], out: &mut Vec<u8>) -> Result<(), FormatError> {
        let (header, records) = ChunkHeader::parse(body)?;
        self.decompress(&header, records, out)?;
        if header.uncompressed_crc != 0 {
            let actual = crc32fast::hash(out);
            if actual != header.uncompressed_crc {
                return Err(FormatError::BadCrc {
                    expected: header.uncompressed_crc,
                    actual,
                });
            }
        }
        Ok(())
    }

    /// Decompresses the `records` of a chunk with `header` into `out` (cleared first): exactly
    /// `header.uncompressed_size` bytes, or an error.
    pub fn decompress(
        &mut self,
        header: &ChunkHeader<'_>,
        records: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), FormatError> {
        let declared = header.uncompressed_size;
        let size = usize::try_from(declared)
            .ok()
            .filter(|size| *size <= MAX_RECORD_BYTES)
            .ok_or(FormatError::ChunkTooLarge {
                declared,
                limit: MAX_RECORD_BYTES,
            })?;
        let compression = Compression::from_mcap_name(header.compression)
            .ok_or_else(|| FormatError::UnknownCompression(header.compression.to_string()))?;
        out.clear();
        if compression != Compression::None {
            let compressed = records.len() as u64;
            let possible = compressed
                .saturating_mul(MAX_EXPANSION_RATIO)
                .saturating_add(4096);
            if declared > possible {
                return Err(FormatError::ImpossibleExpansion {
                    declared,
                    compressed,
                });
            }
        }
        match compression {
            Compression::None => out.extend_from_slice(records),
            Compression::Zstd => {
                // Allocate exactly the declared size, but only once the frames' own block
                // headers show they can hold that much: a flipped bit costs nothing.
                let bound = zstd_bound(records)?;
                if declared > bound {
                    return Err(FormatError::ZstdBound { declared, bound });
                }
                let zstd = match &mut self.zstd {
                    Some(zstd) => zstd,
                    None => {
                        self.zstd
                            .insert(zstd::bulk::Decompressor::new().map_err(|source| {
                                FormatError::Decompress {
                                    compression: "zstd",
                                    source,
                                }
                            })?)
                    }
                };
                // Room for exactly the declared size: more is an error.
                out.reserve_exact(size);
                zstd.decompress_to_buffer(records, out).map_err(|source| {
                    FormatError::Decompress {
                        compression: "zstd",
                        source,
                    }
                })?;
            }
            Compression::Lz4 => {
                out.reserve(
                    size.min(
                        records
                            .len()
                            .saturating_mul(LZ4_RESERVE_RATIO)
                            .saturating_add(4096),
                    ),
                );
                // One byte past the declared size, so that a longer output shows.
                lz4_flex::frame::FrameDecoder::new(records)
                    .take(declared + 1)
                    .read_to_end(out)
                    .map_err(|source| FormatError::Decompress {
                        compression: "lz4",
                        source,
                    })?;
            }
        }
        if out.len() as u64 != declared {
            return Err(FormatError::SizeMismatch {
                declared,
                actual: out.len() as u64,
            });
        }
        Ok(())
    }
}

/// Decompresses as much of a cut-off chunk (a torn file's last) as its bytes allow, up to the
/// size its header declares and the library's limit.
pub fn decompress_prefix(header: &ChunkHeader<'_>, records: &[u8]) -> Vec<u8> {
    let cap = usize::try_from(header.uncompressed_size)
        .unwrap_or(usize::MAX)
        .min(MAX_RECORD_BYTES);
    let mut out = Vec::new();
    let mut read_all = |reader: &mut dyn Read| {
        let mut buf = [0u8; 64 * 1024];
        while out.len() < cap {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(buf.get(..n).unwrap_or_default()),
            }
        }
    };
    match Compression::from_mcap_name(header.compression) {
        Some(Compression::None) => {
            return records.get(..cap).unwrap_or(records).to_vec();
        }
        Some(Compression::Zstd) => {
            if let Ok(mut decoder) = zstd::stream::read::Decoder::with_buffer(records) {
                read_all(&mut decoder);
            }
        }
        Some(Compression::Lz4) => read_all(&mut lz4_flex::frame::FrameDecoder::new(records)),
        None => {}
    }
    out.truncate(cap);
    out
}

/// Upper bound of what a sequence of zstd frames decompresses to, from the frame and block
/// headers alone (the zstd format, RFC 8878): the frame content size when a frame declares it,
/// else 128 KiB per compressed block plus the exact size of raw and RLE blocks.
fn zstd_bound(mut input: &[u8]) -> Result<u64, FormatError> {
    const MAGIC: u32 = 0xFD2F_B528;
    const BLOCK_MAX: u64 = 128 * 1024;
    fn take<'a>(input: &mut &'a [u8], n: u64) -> Result<&'a [u8], FormatError> {
        let split = usize::try_from(n)
            .ok()
            .and_then(|n| input.split_at_checked(n));
        let Some((head, rest)) = split else {
            return Err(FormatError::BadZstdFrames {
                what: "a frame is cut off",
            });
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
    if input.is_empty() {
        return Err(FormatError::BadZstdFrames { what: "no frame" });
    }
    let mut bound = 0u64;
    while !input.is_empty() {
        let magic = le(take(&mut input, 4)?) as u32;
        if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
            // A skippable frame: its length, then that many bytes.
            let size = le(take(&mut input, 4)?);
            take(&mut input, size)?;
            continue;
        }
        if magic != MAGIC {
            return Err(FormatError::BadZstdFrames {
                what: "a frame does not start with the zstd magic",
            });
        }
        let descriptor = take(&mut input, 1)?.first().copied().unwrap_or(0);
        let single_segment = descriptor & 0x20 != 0;
        let checksum = descriptor & 0x04 != 0;
        if !single_segment {
            take(&mut input, 1)?;
        }
        let dictionary_id_len = match descriptor & 0x03 {
            0 => 0,
            1 => 1,
            2 => 2,
            _ => 4,
        };
        take(&mut input, dictionary_id_len)?;
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
                // Raw: `size` bytes stored as they are.
                0 => {
                    take(&mut input, size)?;
                    blocks_bound = blocks_bound.saturating_add(size);
                }
                // RLE: one byte, repeated `size` times.
                1 => {
                    take(&mut input, 1)?;
                    blocks_bound = blocks_bound.saturating_add(size);
                }
                // Compressed: `size` bytes that expand to at most a block.
                2 => {
                    take(&mut input, size)?;
                    blocks_bound = blocks_bound.saturating_add(BLOCK_MAX);
                }
                _ => {
                    return Err(FormatError::BadZstdFrames {
                        what: "a block has the reserved block type",
                    });
                }
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

    /// A chunk record body holding `records` compressed with `compression`, whose header says
    /// `claimed` uncompressed bytes and `crc`.
    fn chunk_body(records: &[u8], compression: &str, claimed: u64, crc: u32) -> Vec<u8> {
        let data = match compression {
            "zstd" => zstd::bulk::compress(records, 1).expect("compress"),
            "lz4" => {
                let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
                std::io::Write::write_all(&mut e, records).expect("compress");
                e.finish().expect("finish")
            }
            _ => records.to_vec(),
        };
        chunk_body_of(&data, compression, claimed, crc)
    }

    /// A chunk record body holding `data`, already compressed.
    fn chunk_body_of(data: &[u8], compression: &str, claimed: u64, crc: u32) -> Vec<u8> {
        let header = ChunkHeader {
            message_start_time: 1,
            message_end_time: 2,
            uncompressed_size: claimed,
            uncompressed_crc: crc,
            compression,
        };
        let mut record = Vec::new();
        header.write_head(&mut record, data.len() as u64);
        record.extend_from_slice(data);
        record.split_off(crate::format::RECORD_PREFIX_LEN)
    }

    #[test]
    fn one_decompressor_reads_chunk_after_chunk_and_refuses_lying_headers() {
        let mut decoder = ChunkDecompressor::default();
        let mut out = Vec::new();
        for (i, compression) in ["zstd", "lz4", "", "zstd"].into_iter().enumerate() {
            let records: Vec<u8> = (0..5000u32).map(|k| (k * 7 + i as u32) as u8).collect();
            let crc = crc32fast::hash(&records);
            let body = chunk_body(&records, compression, records.len() as u64, crc);
            decoder.decode_chunk(&body, &mut out).expect(compression);
            assert_eq!(out, records, "chunk {i} ({compression:?})");

            let short = chunk_body(&records, compression, records.len() as u64 - 1, 0);
            assert!(
                decoder.decode_chunk(&short, &mut out).is_err(),
                "{compression:?} short"
            );
            let long = chunk_body(&records, compression, records.len() as u64 + 1, 0);
            assert!(
                decoder.decode_chunk(&long, &mut out).is_err(),
                "{compression:?} long"
            );
            let bad_crc = chunk_body(&records, compression, records.len() as u64, crc ^ 1);
            assert!(
                matches!(
                    decoder.decode_chunk(&bad_crc, &mut out),
                    Err(FormatError::BadCrc { .. })
                ),
                "{compression:?} CRC"
            );
        }
    }

    #[test]
    fn impossible_sizes_are_refused_before_allocating() {
        let mut decoder = ChunkDecompressor::default();
        let mut out = Vec::new();
        let records = vec![7u8; 1 << 16];
        let over_limit = chunk_body(&records, "zstd", MAX_RECORD_BYTES as u64 + 1, 0);
        assert!(matches!(
            decoder.decode_chunk(&over_limit, &mut out),
            Err(FormatError::ChunkTooLarge { .. })
        ));
        // 64 KiB of one byte compresses to a few bytes, whose frame says so.
        let lying = chunk_body(&records, "zstd", (1 << 16) + 1, 0);
        assert!(matches!(
            decoder.decode_chunk(&lying, &mut out),
            Err(FormatError::ZstdBound { .. })
        ));
        let tiny = chunk_body(b"abc", "lz4", 200 << 20, 0);
        assert!(matches!(
            decoder.decode_chunk(&tiny, &mut out),
            Err(FormatError::ImpossibleExpansion { .. })
        ));
        let unknown = chunk_body(b"abc", "brotli", 3, 0);
        assert!(matches!(
            decoder.decode_chunk(&unknown, &mut out),
            Err(FormatError::UnknownCompression(name)) if name == "brotli"
        ));
        assert!(out.capacity() < 1 << 20, "{}", out.capacity());
    }

    #[test]
    fn zstd_bound_from_headers() {
        let raw = vec![7u8; 1 << 20];
        // With the content size in the frame header (bulk encoder)...
        let sized = zstd::bulk::compress(&raw, 3).expect("compress");
        assert_eq!(zstd_bound(&sized).ok(), Some(1 << 20));
        // ...and without (streaming encoder, as the mcap crate writes chunks).
        let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), 3).expect("encoder");
        std::io::Write::write_all(&mut encoder, &raw).expect("write");
        let streamed = encoder.finish().expect("finish");
        let bound = zstd_bound(&streamed).expect("bound");
        assert!(bound >= 1 << 20, "{bound}");
        // Two frames back to back.
        let both = [sized.as_slice(), sized.as_slice()].concat();
        assert_eq!(zstd_bound(&both).ok(), Some(2 << 20));
        assert!(zstd_bound(&sized[..sized.len() - 1]).is_err());
        assert!(zstd_bound(&[]).is_err());
        assert!(zstd_bound(&[1, 2, 3, 4, 5]).is_err());
    }

    #[test]
    fn a_cut_chunk_yields_what_its_bytes_hold() {
        // Half-random bytes: several zstd blocks and lz4 blocks, so a cut leaves whole ones.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let records: Vec<u8> = (0..600_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state & 0x0F) as u8
            })
            .collect();
        // lz4 in 64 KiB blocks (written whole, a frame is one block, which a cut leaves empty).
        let info =
            lz4_flex::frame::FrameInfo::new().block_size(lz4_flex::frame::BlockSize::Max64KB);
        let mut lz4 = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
        std::io::Write::write_all(&mut lz4, &records).expect("compress");
        let lz4 = lz4.finish().expect("finish");
        for compression in ["zstd", "lz4", ""] {
            let body = if compression == "lz4" {
                chunk_body_of(&lz4, compression, records.len() as u64, 0)
            } else {
                chunk_body(&records, compression, records.len() as u64, 0)
            };
            let cut = body.get(..body.len() * 2 / 3).unwrap_or_default();
            let (header, present) = ChunkHeader::parse_prefix(cut).expect("header");
            let prefix = decompress_prefix(&header, present);
            assert!(!prefix.is_empty(), "{compression:?}");
            assert!(records.starts_with(&prefix), "{compression:?}");
        }
    }
}
