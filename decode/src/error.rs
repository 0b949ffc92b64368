//! The crate's one error type.

/// Why a schema could not be compiled or a message could not be decoded.
///
/// Messages never contain payload bytes: only offsets, lengths, type and field names from the
/// schema, and fixed descriptions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The (message encoding, schema encoding) pair is not one this crate decodes.
    #[error(
        "unknown encoding: message encoding {message_encoding:?} with schema encoding {schema_encoding:?}"
    )]
    UnknownEncoding {
        /// The channel's message encoding, e.g. `cdr`.
        message_encoding: String,
        /// The schema's encoding, e.g. `ros2msg`.
        schema_encoding: String,
    },
    /// The schema could not be parsed or does not describe a decodable type.
    #[error("bad schema {schema:?}: {reason}")]
    BadSchema {
        /// The schema name as given by the recording.
        schema: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The payload ended before the value being read.
    #[error("payload truncated: {needed} bytes needed at offset {offset}, payload is {len} bytes")]
    Truncated {
        /// Byte offset of the read (from the start of the payload).
        offset: usize,
        /// Bytes the read needed.
        needed: usize,
        /// Total payload length.
        len: usize,
    },
    /// The payload is malformed (a bad pointer, an invalid header, an impossible length).
    #[error("corrupt payload: {reason}")]
    Corrupt {
        /// What is wrong, without payload bytes.
        reason: String,
    },
    /// A configured limit (nesting depth, traversal, number of leaves) was exceeded.
    #[error("limit exceeded: {what} (limit {limit})")]
    LimitExceeded {
        /// Which limit.
        what: &'static str,
        /// The limit's value.
        limit: u64,
    },
}

/// The class of a [`DecodeError`], for counting and display without matching on fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// See [`DecodeError::UnknownEncoding`].
    UnknownEncoding,
    /// See [`DecodeError::BadSchema`].
    BadSchema,
    /// See [`DecodeError::Truncated`].
    Truncated,
    /// See [`DecodeError::Corrupt`].
    Corrupt,
    /// See [`DecodeError::LimitExceeded`].
    LimitExceeded,
}

impl DecodeError {
    /// The error's class.
    pub fn class(&self) -> ErrorClass {
        match self {
            Self::UnknownEncoding { .. } => ErrorClass::UnknownEncoding,
            Self::BadSchema { .. } => ErrorClass::BadSchema,
            Self::Truncated { .. } => ErrorClass::Truncated,
            Self::Corrupt { .. } => ErrorClass::Corrupt,
            Self::LimitExceeded { .. } => ErrorClass::LimitExceeded,
        }
    }

    pub(crate) fn bad_schema(schema: &str, reason: impl Into<String>) -> Self {
        Self::BadSchema {
            schema: schema.to_owned(),
            reason: reason.into(),
        }
    }

    pub(crate) fn corrupt(reason: impl Into<String>) -> Self {
        Self::Corrupt {
            reason: reason.into(),
        }
    }

    pub(crate) fn limit(what: &'static str, limit: u64) -> Self {
        Self::LimitExceeded { what, limit }
    }
}

impl From<capnp::Error> for DecodeError {
    fn from(err: capnp::Error) -> Self {
        use capnp::ErrorKind as K;
        // Only the kind is kept: its text is fixed, while `extra` may quote the message.
        match err.kind {
            K::MessageEndsPrematurely(needed_words, have_words) => Self::Truncated {
                offset: have_words.saturating_mul(8),
                needed: needed_words.saturating_sub(have_words).saturating_mul(8),
                len: have_words.saturating_mul(8),
            },
            K::ReadLimitExceeded => Self::limit(
                "capnp traversal limit (words)",
                TRAVERSAL_LIMIT_WORDS as u64,
            ),
            K::MessageIsTooDeeplyNested
            | K::MessageIsTooDeeplyNestedOrContainsCycles
            | K::NestingLimitExceeded => Self::limit("capnp nesting depth", NESTING_LIMIT as u64),
            kind => Self::corrupt(format!("cap'n proto: {kind}")),
        }
    }
}

/// Traversal limit for one Cap'n Proto message, in 8-byte words (capnp's default).
pub(crate) const TRAVERSAL_LIMIT_WORDS: usize = 8 * 1024 * 1024;
/// Pointer nesting limit for one Cap'n Proto message (capnp's default).
pub(crate) const NESTING_LIMIT: i32 = 64;
