//! [`FormatError`]: what is wrong with the bytes of a part.
//!
//! The format layer knows no paths and no file offsets; the layers above add them (see
//! `BagError::Damaged`), keeping this error as the cause.

/// What is wrong with the bytes of an MCAP part.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// The file is too short to hold the magic.
    #[error("file is {len} bytes, shorter than the MCAP magic")]
    ShorterThanMagic {
        /// The file's length.
        len: u64,
    },
    /// The file does not start with the MCAP magic.
    #[error("not an MCAP file (bad magic)")]
    BadMagic,
    /// The data ends where a record should start, before any footer.
    #[error("file ends without a footer (the writer did not finish)")]
    NoFooter,
    /// A Footer is there, but the file does not end with the magic right after it.
    #[error(
        "the file does not end with the MCAP magic after its Footer ({after} bytes follow the Footer)"
    )]
    NoEndMagic {
        /// Bytes after the Footer (8 of them, the magic, in a whole file).
        after: u64,
    },
    /// Fewer than the nine bytes of a record's opcode and length remain.
    #[error("the data ends inside a record's opcode and length ({available} of 9 bytes)")]
    TruncatedPrefix {
        /// Bytes left.
        available: u64,
    },
    /// Opcode zero: zero fill or garbage where a record should be.
    #[error("opcode 0x00 is not a record (garbage or zero fill)")]
    ZeroOpcode,
    /// A record's length runs past the end of what holds it.
    #[error("record 0x{opcode:02x} claims {claimed} bytes but only {available} remain")]
    LengthBeyondEnd {
        /// The record's opcode.
        opcode: u8,
        /// The length it declares.
        claimed: u64,
        /// The bytes that remain after its opcode and length.
        available: u64,
    },
    /// A record is larger than the library reads.
    #[error(
        "record 0x{opcode:02x} of {len} bytes is larger than the {limit} bytes the reader accepts"
    )]
    RecordTooLarge {
        /// The record's opcode.
        opcode: u8,
        /// Its length.
        len: u64,
        /// [`MAX_RECORD_BYTES`](super::MAX_RECORD_BYTES).
        limit: usize,
    },
    /// A record of a kind that was not expected where it was met.
    #[error("unexpected record 0x{opcode:02x}")]
    UnexpectedRecord {
        /// The record's opcode.
        opcode: u8,
    },
    /// A field inside a record declares a length longer than the body holds.
    #[error("record 0x{opcode:02x} declares a field longer than its {len} bytes")]
    FieldBeyondEnd {
        /// The record's opcode.
        opcode: u8,
        /// The body's length.
        len: usize,
    },
    /// The mcap crate could not parse a record whose lengths fit.
    #[error("unreadable record 0x{opcode:02x}")]
    Unreadable {
        /// The record's opcode.
        opcode: u8,
        /// What the mcap crate said.
        #[source]
        source: Box<mcap::McapError>,
    },
    /// A message record too short for its header.
    #[error("message record of {len} bytes is shorter than its header")]
    ShortMessage {
        /// The body's length.
        len: usize,
    },
    /// A chunk record too short for its header.
    #[error("chunk header is cut off")]
    ShortChunkHeader,
    /// A chunk record holds fewer bytes of records than its header declares.
    #[error("chunk declares {declared} bytes of records but holds {held}")]
    ChunkRecordsCut {
        /// Declared by the chunk header.
        declared: u64,
        /// Present in the record.
        held: u64,
    },
    /// The file ends inside a chunk: the writer was interrupted while writing it.
    #[error(
        "the chunk starting here is cut off after {available} bytes (the writer was interrupted)"
    )]
    TornChunk {
        /// The chunk's bytes that are there.
        available: u64,
    },
    /// Something is wrong inside a chunk's records.
    #[error("inside chunk")]
    InChunk {
        /// What.
        #[source]
        source: Box<FormatError>,
    },
    /// A chunk claims to decompress to more than the library reads.
    #[error("chunk claims {declared} uncompressed bytes, over the {limit}-byte limit")]
    ChunkTooLarge {
        /// The chunk header's `uncompressed_size`.
        declared: u64,
        /// [`MAX_RECORD_BYTES`](super::MAX_RECORD_BYTES).
        limit: usize,
    },
    /// A chunk claims more uncompressed bytes than its compressed bytes can expand to.
    #[error(
        "chunk claims {declared} uncompressed bytes, more than {compressed} compressed bytes can expand to"
    )]
    ImpossibleExpansion {
        /// The chunk header's `uncompressed_size`.
        declared: u64,
        /// The compressed records' length.
        compressed: u64,
    },
    /// A zstd chunk claims more than its frames' headers allow.
    #[error("chunk claims {declared} uncompressed bytes, but its zstd frames hold at most {bound}")]
    ZstdBound {
        /// The chunk header's `uncompressed_size`.
        declared: u64,
        /// The bound the frame and block headers give.
        bound: u64,
    },
    /// A zstd chunk's frames are malformed.
    #[error("malformed zstd frames: {what}")]
    BadZstdFrames {
        /// What was wrong.
        what: &'static str,
    },
    /// A chunk names a compression the library does not know.
    #[error("unknown compression {0:?}")]
    UnknownCompression(String),
    /// The decompressor refused a chunk's bytes.
    #[error("{compression} decompression failed")]
    Decompress {
        /// `zstd` or `lz4`.
        compression: &'static str,
        /// What it said.
        #[source]
        source: std::io::Error,
    },
    /// A chunk decompressed to another size than its header declares.
    #[error("decompressed to {actual} bytes, header says {declared}")]
    SizeMismatch {
        /// The chunk header's `uncompressed_size`.
        declared: u64,
        /// What came out (at most one byte past `declared`).
        actual: u64,
    },
    /// A chunk's records do not match the CRC its header gives.
    #[error("CRC mismatch: expected {expected:08x}, found {actual:08x}")]
    BadCrc {
        /// The chunk header's `uncompressed_crc`.
        expected: u32,
        /// The CRC of the decompressed records.
        actual: u32,
    },
    /// A chunk index points outside the file.
    #[error(
        "the chunk index points past the end of the file ({length} bytes at byte {offset} of {file_len})"
    )]
    ChunkOutsideFile {
        /// Where the index says the chunk starts.
        offset: u64,
        /// How long it says the chunk is.
        length: u64,
        /// The file's length.
        file_len: u64,
    },
    /// A chunk index points at something that is not a chunk.
    #[error("the chunk index does not point at a chunk (found opcode 0x{opcode:02x})")]
    NotAChunk {
        /// The opcode found there.
        opcode: u8,
    },
    /// A message refers to a channel the part does not define.
    #[error("a message refers to channel {channel_id}, which is not defined")]
    UndefinedChannel {
        /// The message's channel id.
        channel_id: u16,
    },
}

impl FormatError {
    /// The message with its causes, for reports that keep damage as text.
    pub fn detail(&self) -> String {
        error_chain(self)
    }
}

/// An error and each of its causes, joined by `": "`: one line that loses nothing, for places
/// that keep errors as text.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
