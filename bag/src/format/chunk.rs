//! [`ChunkHeader`]: the fields of a chunk record before its compressed records, parsed and
//! written in one place.

use super::{FormatError, RecordPrefix, op};

/// A chunk record's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHeader<'a> {
    /// Earliest log time of a message in the chunk.
    pub message_start_time: u64,
    /// Latest log time of a message in the chunk.
    pub message_end_time: u64,
    /// Length of the records once decompressed.
    pub uncompressed_size: u64,
    /// CRC-32 of the decompressed records, 0 when not computed.
    pub uncompressed_crc: u32,
    /// `zstd`, `lz4`, or empty for none.
    pub compression: &'a str,
}

/// Bytes of a chunk record's body before its records, besides the compression name.
const FIXED_LEN: u64 = 8 + 8 + 8 + 4 + 4 + 8;

impl<'a> ChunkHeader<'a> {
    /// Parses a whole chunk record's body (after opcode and length): the header, and the
    /// compressed records, all of which must be there.
    pub fn parse(body: &'a [u8]) -> Result<(Self, &'a [u8]), FormatError> {
        let (header, records, declared) = Self::parse_fields(body)?;
        if (records.len() as u64) < declared {
            return Err(FormatError::ChunkRecordsCut {
                declared,
                held: records.len() as u64,
            });
        }
        Ok((header, records))
    }

    /// Parses the header of a chunk record that may be cut short (a torn file); the records are
    /// the compressed bytes that are there.
    pub fn parse_prefix(body: &'a [u8]) -> Result<(Self, &'a [u8]), FormatError> {
        Self::parse_fields(body).map(|(header, records, _)| (header, records))
    }

    fn parse_fields(body: &'a [u8]) -> Result<(Self, &'a [u8], u64), FormatError> {
        let mut rest = body;
        let message_start_time = take_u64(&mut rest)?;
        let message_end_time = take_u64(&mut rest)?;
        let uncompressed_size = take_u64(&mut rest)?;
        let uncompressed_crc = u32::from_le_bytes(*take::<4>(&mut rest)?);
        let name_len = u32::from_le_bytes(*take::<4>(&mut rest)?);
        let name = usize::try_from(name_len)
            .ok()
            .and_then(|n| rest.split_at_checked(n));
        let Some((name, after_name)) = name else {
            return Err(FormatError::ShortChunkHeader);
        };
        rest = after_name;
        let compression = std::str::from_utf8(name)
            .map_err(|_| FormatError::UnknownCompression(String::from_utf8_lossy(name).into()))?;
        let declared = take_u64(&mut rest)?;
        let records_len = usize::try_from(declared).unwrap_or(usize::MAX);
        let records = rest.get(..records_len).unwrap_or(rest);
        let header = ChunkHeader {
            message_start_time,
            message_end_time,
            uncompressed_size,
            uncompressed_crc,
            compression,
        };
        Ok((header, records, declared))
    }

    /// Appends the chunk record's opcode, length and header; `records_len` bytes of compressed
    /// records must follow.
    pub fn write_head(&self, out: &mut Vec<u8>, records_len: u64) {
        let name = self.compression.as_bytes();
        RecordPrefix {
            opcode: op::CHUNK,
            body_len: FIXED_LEN + name.len() as u64 + records_len,
        }
        .write(out);
        out.extend_from_slice(&self.message_start_time.to_le_bytes());
        out.extend_from_slice(&self.message_end_time.to_le_bytes());
        out.extend_from_slice(&self.uncompressed_size.to_le_bytes());
        out.extend_from_slice(&self.uncompressed_crc.to_le_bytes());
        out.extend_from_slice(&(name.len() as u32).to_le_bytes());
        out.extend_from_slice(name);
        out.extend_from_slice(&records_len.to_le_bytes());
    }
}

fn take<'a, const N: usize>(rest: &mut &'a [u8]) -> Result<&'a [u8; N], FormatError> {
    let (head, tail) = rest
        .split_first_chunk::<N>()
        .ok_or(FormatError::ShortChunkHeader)?;
    *rest = tail;
    Ok(head)
}

fn take_u64(rest: &mut &[u8]) -> Result<u64, FormatError> {
    take::<8>(rest).map(|bytes| u64::from_le_bytes(*bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Records;

    #[test]
    fn a_written_head_and_its_records_parse_back() {
        let header = ChunkHeader {
            message_start_time: 5,
            message_end_time: 9,
            uncompressed_size: 1234,
            uncompressed_crc: 0xDEAD_BEEF,
            compression: "zstd",
        };
        let mut record = Vec::new();
        header.write_head(&mut record, 3);
        record.extend_from_slice(b"xyz");
        let Some(Ok(framed)) = Records::new(&record).next() else {
            panic!("one whole record");
        };
        assert_eq!(framed.opcode, op::CHUNK);
        assert_eq!(
            ChunkHeader::parse(framed.body).ok(),
            Some((header, &b"xyz"[..]))
        );

        let cut = framed.body.get(..framed.body.len() - 1).unwrap_or_default();
        assert!(matches!(
            ChunkHeader::parse(cut),
            Err(FormatError::ChunkRecordsCut {
                declared: 3,
                held: 2
            })
        ));
        assert_eq!(
            ChunkHeader::parse_prefix(cut).ok(),
            Some((header, &b"xy"[..]))
        );
        let header_cut = framed.body.get(..30).unwrap_or_default();
        assert!(matches!(
            ChunkHeader::parse_prefix(header_cut),
            Err(FormatError::ShortChunkHeader)
        ));
    }
}
