//! The MCAP wire format as the bag library reads and writes it: opcodes and magic, record
//! framing, the message and chunk headers, chunk compression and decompression, the footer and
//! summary, and the limits that keep a damaged file from making us allocate what it claims.
//!
//! Sans-io, in the manner of the mcap crate's `records.rs` and `sans_io` readers: bytes in,
//! values out. Nothing here opens a file or imports another module of this crate. Reading (the
//! reader, parts, the torn-file scanner, the chunk cursor) and writing (the writer, the part
//! writer) both sit on this layer, so each piece of the format is written once: one record
//! framer ([`Records`], [`RecordPrefix`]), one [`MessageHeader`], one [`ChunkHeader`], one
//! [`ChunkDecompressor`].
//!
//! Record bodies handed to the mcap crate's parser (schemas, channels, summary records) go
//! through [`parse_record`] first: the mcap crate allocates each length-prefixed field at the
//! size it declares, so every declared length is checked against what remains before it does.
//!
//! `verify` does not use this layer, on purpose: it is a second parser, written from the
//! specification alone, so that a mistake made here is not repeated there and a file this layer
//! writes wrongly still fails verification.

mod chunk;
mod compression;
mod decompress;
pub(crate) mod encode;
mod error;
mod guard;
mod message;
mod record;
mod summary;

pub use chunk::ChunkHeader;
pub use compression::Compression;
pub use decompress::{ChunkDecompressor, MAX_EXPANSION_RATIO, decompress_prefix};
pub use error::{FormatError, error_chain};
pub use guard::parse_record;
pub use message::{
    MESSAGE_HEADER_LEN, MESSAGE_INDEX_ENTRY_LEN, MESSAGE_RECORD_OVERHEAD, MessageHeader,
    message_index_body_entries, message_index_entries,
};
pub(crate) use record::record_at;
pub use record::{RECORD_PREFIX_LEN, Record, RecordPrefix, Records};
pub use summary::{FOOTER_TAIL_LEN, Footer, SummaryBuilder, SummaryOffset};

/// The eight bytes every MCAP file starts and ends with (major version `0`).
pub const MAGIC: &[u8; 8] = b"\x89MCAP0\r\n";

/// The largest record, or decompressed chunk, the library reads; beyond it a part is damaged
/// (a corrupted length must not allocate).
pub const MAX_RECORD_BYTES: usize = 256 * 1024 * 1024;

/// The profile the Header record at the start of a part says (`ros2`, `""`), from the part's
/// first bytes; `None` when they do not start with the magic and a whole Header record.
pub fn header_profile(start: &[u8]) -> Option<&str> {
    let rest = start.strip_prefix(MAGIC.as_slice())?;
    let prefix = RecordPrefix::read(rest)?;
    if prefix.opcode != op::HEADER {
        return None;
    }
    let available = u64::try_from(rest.len().saturating_sub(RECORD_PREFIX_LEN)).ok()?;
    let body_len = prefix.body_len_within(available).ok()?;
    let body = rest.get(RECORD_PREFIX_LEN..RECORD_PREFIX_LEN + body_len)?;
    let (len, text) = body.split_first_chunk::<4>()?;
    let len = usize::try_from(u32::from_le_bytes(*len)).ok()?;
    std::str::from_utf8(text.get(..len)?).ok()
}

/// Record opcodes, as the MCAP specification numbers them.
pub mod op {
    /// The file's first record: profile and library.
    pub const HEADER: u8 = 0x01;
    /// The file's last record: where the summary and its offsets start.
    pub const FOOTER: u8 = 0x02;
    /// A schema: id, name, encoding, data.
    pub const SCHEMA: u8 = 0x03;
    /// A channel: id, schema id, topic, message encoding, metadata.
    pub const CHANNEL: u8 = 0x04;
    /// A message: [`MessageHeader`](super::MessageHeader) and payload.
    pub const MESSAGE: u8 = 0x05;
    /// A chunk: [`ChunkHeader`](super::ChunkHeader) and compressed records.
    pub const CHUNK: u8 = 0x06;
    /// Where each message of one channel sits in the chunk before it.
    pub const MESSAGE_INDEX: u8 = 0x07;
    /// Where a chunk is, its time range and its message indexes.
    pub const CHUNK_INDEX: u8 = 0x08;
    /// Where an attachment is, its name, media type and size.
    pub const ATTACHMENT_INDEX: u8 = 0x0A;
    /// Counts and time range of the whole file.
    pub const STATISTICS: u8 = 0x0B;
    /// Where a metadata record is, and its name.
    pub const METADATA_INDEX: u8 = 0x0D;
    /// Where one group of summary records starts and how long it is.
    pub const SUMMARY_OFFSET: u8 = 0x0E;
    /// The end of the data section, with its CRC.
    pub const DATA_END: u8 = 0x0F;
}
