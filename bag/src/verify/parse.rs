//! Sans-io MCAP record parser over `&[u8]`, written from the spec alone.
//!
//! Nothing here touches the `mcap` crate, nor the library's format layer (`crate::format`), which
//! the reader and the writer share: the point of `verify` is to be a second opinion. Every
//! length read from the input is checked against what remains before it is used, and nothing is
//! allocated here, so any byte string can be fed in. Field parsers read from the record *body*
//! (the bytes the record's length covers) and ignore trailing bytes, which is how the spec lets
//! records grow new fields (and what the conformance `pad` variants exercise).

/// The 8 bytes at both ends of every MCAP file (major version `0`).
pub(crate) const MAGIC: &[u8; 8] = b"\x89MCAP0\r\n";
/// Opcode byte plus `u64` content length.
pub(crate) const RECORD_PREFIX_LEN: usize = 9;

pub(crate) mod op {
    pub const HEADER: u8 = 0x01;
    pub const FOOTER: u8 = 0x02;
    pub const SCHEMA: u8 = 0x03;
    pub const CHANNEL: u8 = 0x04;
    pub const MESSAGE: u8 = 0x05;
    pub const CHUNK: u8 = 0x06;
    pub const MESSAGE_INDEX: u8 = 0x07;
    pub const CHUNK_INDEX: u8 = 0x08;
    pub const ATTACHMENT: u8 = 0x09;
    pub const ATTACHMENT_INDEX: u8 = 0x0A;
    pub const STATISTICS: u8 = 0x0B;
    pub const METADATA: u8 = 0x0C;
    pub const METADATA_INDEX: u8 = 0x0D;
    pub const SUMMARY_OFFSET: u8 = 0x0E;
    pub const DATA_END: u8 = 0x0F;
}

/// Human name of an opcode, as used in findings.
pub(crate) fn record_name(opcode: u8) -> &'static str {
    match opcode {
        0x00 => "InvalidOpcode0",
        op::HEADER => "Header",
        op::FOOTER => "Footer",
        op::SCHEMA => "Schema",
        op::CHANNEL => "Channel",
        op::MESSAGE => "Message",
        op::CHUNK => "Chunk",
        op::MESSAGE_INDEX => "MessageIndex",
        op::CHUNK_INDEX => "ChunkIndex",
        op::ATTACHMENT => "Attachment",
        op::ATTACHMENT_INDEX => "AttachmentIndex",
        op::STATISTICS => "Statistics",
        op::METADATA => "Metadata",
        op::METADATA_INDEX => "MetadataIndex",
        op::SUMMARY_OFFSET => "SummaryOffset",
        op::DATA_END => "DataEnd",
        0x80..=0xFF => "PrivateRecord",
        _ => "ReservedRecord",
    }
}

/// One framed record: where it starts and the bytes its length covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawRecord<'a> {
    pub opcode: u8,
    /// Offset of the opcode byte within the buffer that was framed.
    pub offset: u64,
    pub body: &'a [u8],
}

impl RawRecord<'_> {
    /// Opcode, length prefix and body.
    pub fn total_len(&self) -> u64 {
        RECORD_PREFIX_LEN as u64 + self.body.len() as u64
    }
}

/// Why framing stopped before the end of the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FramingError {
    /// Fewer than 9 bytes left where a record prefix should be.
    TruncatedPrefix { offset: u64, available: u64 },
    /// The length prefix claims more bytes than remain.
    LengthBeyondEnd {
        opcode: u8,
        offset: u64,
        claimed: u64,
        available: u64,
    },
}

/// Frames records from `buf[pos..]`, reporting offsets as `base + position`.
pub(crate) struct Records<'a> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
    failed: bool,
}

impl<'a> Records<'a> {
    pub fn new(buf: &'a [u8], base: u64) -> Self {
        Self {
            buf,
            pos: 0,
            base,
            failed: false,
        }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<RawRecord<'a>, FramingError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let rest = self.buf.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        let offset = self.base + self.pos as u64;
        let (Some(&opcode), Some(len_bytes)) = (rest.first(), rest.get(1..RECORD_PREFIX_LEN))
        else {
            self.failed = true;
            return Some(Err(FramingError::TruncatedPrefix {
                offset,
                available: rest.len() as u64,
            }));
        };
        let claimed = le_u64(len_bytes);
        let after_prefix = rest.get(RECORD_PREFIX_LEN..).unwrap_or_default();
        let body = usize::try_from(claimed)
            .ok()
            .and_then(|len| after_prefix.get(..len));
        let Some(body) = body else {
            self.failed = true;
            return Some(Err(FramingError::LengthBeyondEnd {
                opcode,
                offset,
                claimed,
                available: after_prefix.len() as u64,
            }));
        };
        self.pos += RECORD_PREFIX_LEN + body.len();
        Some(Ok(RawRecord {
            opcode,
            offset,
            body,
        }))
    }
}

fn le_u64(bytes: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    for (dst, src) in buf.iter_mut().zip(bytes) {
        *dst = *src;
    }
    u64::from_le_bytes(buf)
}

/// A record body too short for its fields, or a string that is not UTF-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FieldError {
    /// `field` needs `needed` bytes at body offset `at` but only `available` remain.
    Short {
        field: &'static str,
        at: u64,
        needed: u64,
        available: u64,
    },
    /// `field` is a String whose bytes are not UTF-8.
    Utf8 { field: &'static str, at: u64 },
}

impl FieldError {
    pub fn describe(&self) -> (String, String) {
        match *self {
            FieldError::Short {
                field,
                at,
                needed,
                available,
            } => (
                format!(
                    "field `{field}` ({needed} bytes at body offset {at}) within the record length"
                ),
                format!("only {available} bytes left"),
            ),
            FieldError::Utf8 { field, at } => (
                format!("field `{field}` (body offset {at}) to be UTF-8"),
                "invalid UTF-8".to_owned(),
            ),
        }
    }
}

/// A bounds-checked little-endian reader over one record body.
pub(crate) struct Fields<'a> {
    body: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    pub fn new(body: &'a [u8]) -> Self {
        Self { body, pos: 0 }
    }

    /// Bytes not consumed yet.
    pub fn rest(&self) -> &'a [u8] {
        self.body.get(self.pos..).unwrap_or_default()
    }

    /// Bytes consumed so far.
    pub fn consumed(&self) -> &'a [u8] {
        self.body.get(..self.pos).unwrap_or_default()
    }

    pub fn bytes(&mut self, field: &'static str, len: u64) -> Result<&'a [u8], FieldError> {
        let rest = self.rest();
        let out = usize::try_from(len).ok().and_then(|n| rest.get(..n));
        match out {
            Some(out) => {
                self.pos += out.len();
                Ok(out)
            }
            None => Err(FieldError::Short {
                field,
                at: self.pos as u64,
                needed: len,
                available: rest.len() as u64,
            }),
        }
    }

    fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], FieldError> {
        let bytes = self.bytes(field, N as u64)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    pub fn u8(&mut self, field: &'static str) -> Result<u8, FieldError> {
        Ok(u8::from_le_bytes(self.array(field)?))
    }

    pub fn u16(&mut self, field: &'static str) -> Result<u16, FieldError> {
        Ok(u16::from_le_bytes(self.array(field)?))
    }

    pub fn u32(&mut self, field: &'static str) -> Result<u32, FieldError> {
        Ok(u32::from_le_bytes(self.array(field)?))
    }

    pub fn u64(&mut self, field: &'static str) -> Result<u64, FieldError> {
        Ok(u64::from_le_bytes(self.array(field)?))
    }

    /// `uint32` length-prefixed bytes (also the framing of Arrays and Maps).
    pub fn prefixed32(&mut self, field: &'static str) -> Result<&'a [u8], FieldError> {
        let len = self.u32(field)?;
        self.bytes(field, u64::from(len))
    }

    /// `uint64` length-prefixed bytes.
    pub fn prefixed64(&mut self, field: &'static str) -> Result<&'a [u8], FieldError> {
        let len = self.u64(field)?;
        self.bytes(field, len)
    }

    pub fn string(&mut self, field: &'static str) -> Result<&'a str, FieldError> {
        let at = self.pos as u64;
        let bytes = self.prefixed32(field)?;
        std::str::from_utf8(bytes).map_err(|_| FieldError::Utf8 { field, at })
    }
}

/// Iterates `Map<string, string>` entries.
pub(crate) fn string_map<'a>(
    field: &'static str,
    bytes: &'a [u8],
) -> impl Iterator<Item = Result<(&'a str, &'a str), FieldError>> + 'a {
    let mut fields = Fields::new(bytes);
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed || fields.rest().is_empty() {
            return None;
        }
        let entry = fields
            .string(field)
            .and_then(|k| fields.string(field).map(|v| (k, v)));
        failed = entry.is_err();
        Some(entry)
    })
}

/// Iterates `Map<uint16, uint64>` entries.
pub(crate) fn u16_u64_map<'a>(
    field: &'static str,
    bytes: &'a [u8],
) -> impl Iterator<Item = Result<(u16, u64), FieldError>> + 'a {
    let mut fields = Fields::new(bytes);
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed || fields.rest().is_empty() {
            return None;
        }
        let entry = fields
            .u16(field)
            .and_then(|k| fields.u64(field).map(|v| (k, v)));
        failed = entry.is_err();
        Some(entry)
    })
}

/// Validates a whole `Map<string, string>`.
pub(crate) fn check_string_map(field: &'static str, bytes: &[u8]) -> Result<(), FieldError> {
    string_map(field, bytes).try_for_each(|entry| entry.map(|_| ()))
}

/// Validates a whole `Map<uint16, uint64>`.
pub(crate) fn check_u16_u64_map(field: &'static str, bytes: &[u8]) -> Result<(), FieldError> {
    u16_u64_map(field, bytes).try_for_each(|entry| entry.map(|_| ()))
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Header<'a> {
    pub profile: &'a str,
    pub library: &'a str,
}

impl<'a> Header<'a> {
    pub fn parse(body: &'a [u8]) -> Result<Self, FieldError> {
        let mut f = Fields::new(body);
        Ok(Self {
            profile: f.string("profile")?,
            library: f.string("library")?,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Footer {
    pub summary_start: u64,
    pub summary_offset_start: u64,
    pub summary_crc: u32,
}

impl Footer {
    pub fn parse(body: &[u8]) -> Result<Self, FieldError> {
        let mut f = Fields::new(body);
        Ok(Self {
            summary_start: f.u64("summary_start")?,
            summary_offset_start: f.u64("summary_offset_start")?,
            summary_crc: f.u32("summary_crc")?,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Schema<'a> {
    pub id: u16,
    pub name: &'a str,
    pub encoding: &'a str,
    pub data: &'a [u8],
}

impl<'a> Schema<'a> {
    pub fn parse(body: &'a [u8]) -> Result<Self, FieldError> {
        let mut f = Fields::new(body);
        Ok(Self {
            id: f.u16("id")?,
            name: f.string("name")?,
            encoding: f.string("encoding")?,
            data: f.prefixed32("data")?,
        })
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Channel<'a> {
    pub id: u16,
    pub schema_id: u16,
    pub topic: &'a str,
    pub message_encoding: &'a str,
    /// The serialized `Map<string, string>` entries (without the length prefix).
    pub metadata: &'a [u8],
}

impl<'a> Channel<'a> {
    pub fn parse(body: &'a [u8]) -> Result<Self, FieldError> {
        let mut f = Fields::new(body);
        let channel = Self {
            id: f.u16("id")?,
            schema_id: f.u16("schema_id")?,
            topic: f.string("topic")?,
            message_encoding: f.string("message_encoding")?,
            metadata: f.prefixed32("metadata")?,
        };
        check_string_map("metadata", channel.metadata)?;
        Ok(channel)
    }
}

/// The fixed part of a Message; `data` is the rest of the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MessageHeader {
    pub channel_id: u16,
    pub sequence: u32,
    pub log_time: u64,
    pub publish_time: u64,
}

impl MessageHeader {
    pub fn parse(body: &[u8]) -> Result<Self, FieldError> {
        let mut f = Fields::new(body);
        Ok(Self {
            channel_id: f.u16("channel_id")?,
            sequence: f.u32("sequence")?,
            log_time: f.u64("log_time")?,
            publish_time: f.u64("publish_time")?,
        })
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Chunk<'a> {
    pub message_start_time: u64,
    pub message_end_time: u64,
    pub uncompressed_size: u64,
    pub uncompressed_crc: u32,
    pub compression: &'a str,
    pub records: &'a [u8],
}

impl<'a> Chunk<'a> {
    pub fn parse(body: &'a [u8]) -> Result<Self, FieldError> {
        let mut f = Fields::new(body);
        Ok(Self {
            message_start_time: f.u64("message_start_time")?,
            message_end_time: f.u64("message_end_time")?,
            uncompressed_size: f.u64("uncompressed_size")?,
            uncompressed_crc: f.u32("uncompressed_crc")?,
            compression: f.string("compression")?,
            records: f.prefixed64("records")?,
        })
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct MessageIndex<'a> {
    pub channel_id: u16,
    /// `(log_time, offset)` tuples, 16 bytes each.
    pub records: &'a [u8],
}

impl<'a> MessageIndex<'a> {
    pub fn parse(body: &'a [u8]) -> Result<Self, FieldError> {
        let mut f = Fields::new(body);
        let channel_id = f.u16("channel_id")?;
        let at = f.consumed().len() as u64;
        let records = f.prefixed32("records")?;
        if records.len() % 16 != 0 {
            return Err(FieldError::Short {
                field: "records",
                at,
                needed: (records.len() as u64 / 16 + 1) * 16,
                available: records.len() as u64,
            });
        }
        Ok(Self {
            channel_id,
            records,
        })
    }

    pub fn entries(&self) -> impl Iterator<Item = (u64, u64)> + 'a {
        self.records.chunks_exact(16).map(|e| {
            (
                le_u64(e.get(..8).unwrap_or_default()),
                le_u64(e.get(8..).unwrap_or_default()),
            )
        })
    }

    pub fn entry_count(&self) -> usize {
        self.records.len() / 16
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct ChunkIndex<'a> {
    pub message_start_time: u64,
    pub message_end_time: u64,
    pub chunk_start_offset: u64,
    pub chunk_length: u64,
    /// Serialized `Map<uint16, uint64>` entries.
    pub message_index_offsets: &'a [u8],
    pub message_index_length: u64,
    pub compression: &'a str,
    pub compressed_size: u64,
    pub uncompressed_size: u64,
}

impl<'a> ChunkIndex<'a> {
    pub fn parse(body: &'a [u8]) -> Result<Self, FieldError> {
        let mut f = Fields::new(body);
        let index = Self {
            message_start_time: f.u64("message_start_time")?,
            message_end_time: f.u64("message_end_time")?,
            chunk_start_offset: f.u64("chunk_start_offset")?,
            chunk_length: f.u64("chunk_length")?,
            message_index_offsets: f.prefixed32("message_index_offsets")?,
            message_index_length: f.u64("message_index_length")?,
            compression: f.string("compression")?,
            compressed_size: f.u64("compressed_size")?,
            uncompressed_size: f.u64("uncompressed_size")?,
        };
        check_u16_u64_map("message_index_offsets", index.message_index_offsets)?;
        Ok(index)
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Attachment<'a> {
    pub log_time: u64,
    pub create_time: u64,
    pub name: &'a str,
    pub media_type: &'a str,
    pub data: &'a [u8],
    pub crc: u32,
    /// Body bytes the CRC covers (every field before it).
    pub crc_covered: &'a [u8],
}

impl<'a> Attachment<'a> {
    pub fn parse(body: &'a [u8]) -> Result<Self, FieldError> {
        let mut f = Fields::new(body);
        let log_time = f.u64("log_time")?;
        let create_time = f.u64("create_time")?;
        let name = f.string("name")?;
        let media_type = f.string("media_type")?;
        let data = f.prefixed64("data")?;
        let crc_covered = f.consumed();
        let crc = f.u32("crc")?;
        Ok(Self {
            log_time,
            create_time,
            name,
            media_type,
            data,
            crc,
            crc_covered,
        })
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct AttachmentIndex<'a> {
    pub offset: u64,
    pub length: u64,
    pub log_time: u64,
    pub create_time: u64,
    pub data_size: u64,
    pub name: &'a str,
    pub media_type: &'a str,
}

impl<'a> AttachmentIndex<'a> {
    pub fn parse(body: &'a [u8]) -> Result<Self, FieldError> {
        let mut f = Fields::new(body);
        Ok(Self {
            offset: f.u64("offset")?,
            length: f.u64("length")?,
            log_time: f.u64("log_time")?,
            create_time: f.u64("create_time")?,
            data_size: f.u64("data_size")?,
            name: f.string("name")?,
            media_type: f.string("media_type")?,
        })
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Statistics<'a> {
    pub message_count: u64,
    pub schema_count: u16,
    pub channel_count: u32,
    pub attachment_count: u32,
    pub metadata_count: u32,
    pub chunk_count: u32,
    pub message_start_time: u64,
    pub message_end_time: u64,
    /// Serialized `Map<uint16, uint64>` entries.
    pub channel_message_counts: &'a [u8],
}

impl<'a> Statistics<'a> {
    pub fn parse(body: &'a [u8]) -> Result<Self, FieldError> {
        let mut f = Fields::new(body);
        let stats = Self {
            message_count: f.u64("message_count")?,
            schema_count: f.u16("schema_count")?,
            channel_count: f.u32("channel_count")?,
            attachment_count: f.u32("attachment_count")?,
            metadata_count: f.u32("metadata_count")?,
            chunk_count: f.u32("chunk_count")?,
            message_start_time: f.u64("message_start_time")?,
            message_end_time: f.u64("message_end_time")?,
            channel_message_counts: f.prefixed32("channel_message_counts")?,
        };
        check_u16_u64_map("channel_message_counts", stats.channel_message_counts)?;
        Ok(stats)
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Metadata<'a> {
    pub name: &'a str,
}

impl<'a> Metadata<'a> {
    pub fn parse(body: &'a [u8]) -> Result<Self, FieldError> {
        let mut f = Fields::new(body);
        let name = f.string("name")?;
        let map = f.prefixed32("metadata")?;
        check_string_map("metadata", map)?;
        Ok(Self { name })
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct MetadataIndex<'a> {
    pub offset: u64,
    pub length: u64,
    pub name: &'a str,
}

impl<'a> MetadataIndex<'a> {
    pub fn parse(body: &'a [u8]) -> Result<Self, FieldError> {
        let mut f = Fields::new(body);
        Ok(Self {
            offset: f.u64("offset")?,
            length: f.u64("length")?,
            name: f.string("name")?,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SummaryOffset {
    pub group_opcode: u8,
    pub group_start: u64,
    pub group_length: u64,
}

impl SummaryOffset {
    pub fn parse(body: &[u8]) -> Result<Self, FieldError> {
        let mut f = Fields::new(body);
        Ok(Self {
            group_opcode: f.u8("group_opcode")?,
            group_start: f.u64("group_start")?,
            group_length: f.u64("group_length")?,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DataEnd {
    pub data_section_crc: u32,
}

impl DataEnd {
    pub fn parse(body: &[u8]) -> Result<Self, FieldError> {
        let mut f = Fields::new(body);
        Ok(Self {
            data_section_crc: f.u32("data_section_crc")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(opcode: u8, body: &[u8]) -> Vec<u8> {
        let mut out = vec![opcode];
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn frames_records_and_reports_offsets() {
        let mut buf = record(op::HEADER, &[0; 8]);
        buf.extend(record(0x80, b"private"));
        let records: Vec<_> = Records::new(&buf, 8).collect();
        assert_eq!(records.len(), 2);
        let Some(Ok(second)) = records.get(1) else {
            panic!("second record: {records:?}");
        };
        assert_eq!(second.opcode, 0x80);
        assert_eq!(second.offset, 8 + 17);
        assert_eq!(second.body, b"private");
    }

    #[test]
    fn length_beyond_end_stops_framing() {
        let mut buf = record(op::SCHEMA, b"abc");
        buf.truncate(buf.len() - 1);
        let records: Vec<_> = Records::new(&buf, 0).collect();
        assert_eq!(
            records,
            vec![Err(FramingError::LengthBeyondEnd {
                opcode: op::SCHEMA,
                offset: 0,
                claimed: 3,
                available: 2
            })]
        );
    }

    #[test]
    fn huge_length_does_not_overflow() {
        let mut buf = vec![op::CHUNK];
        buf.extend_from_slice(&u64::MAX.to_le_bytes());
        let records: Vec<_> = Records::new(&buf, 0).collect();
        assert!(matches!(
            records.as_slice(),
            [Err(FramingError::LengthBeyondEnd {
                claimed: u64::MAX,
                ..
            })]
        ));
    }

    #[test]
    fn truncated_prefix() {
        let records: Vec<_> = Records::new(&[op::HEADER, 1, 2], 5).collect();
        assert_eq!(
            records,
            vec![Err(FramingError::TruncatedPrefix {
                offset: 5,
                available: 3
            })]
        );
    }

    #[test]
    fn fields_ignore_trailing_bytes() {
        let mut body = Vec::new();
        body.extend_from_slice(&7u16.to_le_bytes());
        for s in ["name", "enc"] {
            body.extend_from_slice(&(s.len() as u32).to_le_bytes());
            body.extend_from_slice(s.as_bytes());
        }
        body.extend_from_slice(&2u32.to_le_bytes());
        body.extend_from_slice(&[1, 2]);
        body.extend_from_slice(&[0xff; 5]);
        let schema = Schema::parse(&body);
        assert_eq!(
            schema,
            Ok(Schema {
                id: 7,
                name: "name",
                encoding: "enc",
                data: &[1, 2]
            })
        );
    }

    #[test]
    fn string_longer_than_body_is_a_field_error() {
        let mut body = vec![0, 0];
        body.extend_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            Schema::parse(&body),
            Err(FieldError::Short {
                field: "name",
                at: 6,
                needed: u64::from(u32::MAX),
                available: 0
            })
        );
    }

    #[test]
    fn invalid_utf8_is_a_field_error() {
        let mut body = vec![1, 0];
        body.extend_from_slice(&1u32.to_le_bytes());
        body.push(0xff);
        assert!(matches!(
            Schema::parse(&body),
            Err(FieldError::Utf8 { field: "name", .. })
        ));
    }

    #[test]
    fn message_index_entries() {
        let mut body = 3u16.to_le_bytes().to_vec();
        body.extend_from_slice(&32u32.to_le_bytes());
        for (t, o) in [(10u64, 0u64), (11, 40)] {
            body.extend_from_slice(&t.to_le_bytes());
            body.extend_from_slice(&o.to_le_bytes());
        }
        let Ok(index) = MessageIndex::parse(&body) else {
            panic!("parse");
        };
        assert_eq!(index.channel_id, 3);
        assert_eq!(index.entries().collect::<Vec<_>>(), vec![(10, 0), (11, 40)]);
    }

    #[test]
    fn maps_stop_at_first_error() {
        let mut map = Vec::new();
        map.extend_from_slice(&1u16.to_le_bytes());
        map.extend_from_slice(&5u64.to_le_bytes());
        map.extend_from_slice(&[1, 2, 3]);
        let entries: Vec<_> = u16_u64_map("m", &map).collect();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries.first(), Some(&Ok((1, 5))));
        assert!(matches!(entries.get(1), Some(Err(_))));
    }
}
