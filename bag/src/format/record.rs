//! Record framing: every MCAP record is an opcode byte, a little-endian `u64` body length, and
//! the body. One framer for the whole library, reading and writing alike; a length is always
//! checked against the bytes that remain before anything is sliced or allocated by it.

use std::ops::Range;

use super::FormatError;

/// Opcode byte plus `u64` body length.
pub const RECORD_PREFIX_LEN: usize = 9;

/// A record's opcode and the body length it declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordPrefix {
    /// The record's kind (see [`op`](super::op)).
    pub opcode: u8,
    /// The length of the body that follows the prefix, as declared (not yet checked).
    pub body_len: u64,
}

impl RecordPrefix {
    /// The prefix in these nine bytes.
    #[inline]
    pub fn parse(prefix: [u8; RECORD_PREFIX_LEN]) -> Self {
        let [opcode, len @ ..] = prefix;
        RecordPrefix {
            opcode,
            body_len: u64::from_le_bytes(len),
        }
    }

    /// The prefix at the start of `bytes`, or `None` when fewer than nine bytes are there.
    #[inline]
    pub fn read(bytes: &[u8]) -> Option<Self> {
        bytes.first_chunk().map(|prefix| Self::parse(*prefix))
    }

    /// The body length, if the body fits in the `available` bytes after the prefix.
    #[inline]
    pub fn body_len_within(&self, available: u64) -> Result<usize, FormatError> {
        usize::try_from(self.body_len)
            .ok()
            .filter(|_| self.body_len <= available)
            .ok_or(FormatError::LengthBeyondEnd {
                opcode: self.opcode,
                claimed: self.body_len,
                available,
            })
    }

    /// Appends a prefix: `opcode` and `body_len`.
    #[inline]
    pub fn write(&self, out: &mut Vec<u8>) {
        out.push(self.opcode);
        out.extend_from_slice(&self.body_len.to_le_bytes());
    }
}

/// One whole record found in a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// The record's kind (see [`op`](super::op)).
    pub opcode: u8,
    /// Where its prefix starts in the buffer.
    pub offset: usize,
    /// The bytes its length covers.
    pub body: &'a [u8],
}

impl Record<'_> {
    /// Where the body is in the buffer (for callers that must let go of the borrow).
    #[inline]
    pub fn body_range(&self) -> Range<usize> {
        let start = self.offset + RECORD_PREFIX_LEN;
        start..start + self.body.len()
    }

    /// Where the next record starts.
    #[inline]
    pub fn end(&self) -> usize {
        self.offset + RECORD_PREFIX_LEN + self.body.len()
    }
}

/// The record starting at `pos` in `buf`: `None` at the end of `buf`, an error when the record
/// is cut off by it.
#[inline]
pub(crate) fn record_at(buf: &[u8], pos: usize) -> Option<Result<Record<'_>, FormatError>> {
    let rest = buf.get(pos..).filter(|rest| !rest.is_empty())?;
    let Some(prefix) = RecordPrefix::read(rest) else {
        return Some(Err(FormatError::TruncatedPrefix {
            available: rest.len() as u64,
        }));
    };
    let after = rest.get(RECORD_PREFIX_LEN..).unwrap_or_default();
    Some(
        prefix
            .body_len_within(after.len() as u64)
            .map(|len| Record {
                opcode: prefix.opcode,
                offset: pos,
                body: after.get(..len).unwrap_or_default(),
            }),
    )
}

/// The records of a buffer, front to back. A record cut off by the end of the buffer is an
/// error, after which the iterator ends.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    buf: &'a [u8],
    pos: usize,
    failed: bool,
}

impl<'a> Records<'a> {
    /// Frames the records of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Records {
            buf,
            pos: 0,
            failed: false,
        }
    }

    /// Where the next record starts in the buffer.
    pub fn position(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, FormatError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let framed = record_at(self.buf, self.pos)?;
        match &framed {
            Ok(record) => self.pos = record.end(),
            Err(_) => self.failed = true,
        }
        Some(framed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(opcode: u8, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        RecordPrefix {
            opcode,
            body_len: body.len() as u64,
        }
        .write(&mut out);
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn frames_whole_records_and_reports_where_they_are() {
        let buf = [record(3, b"abc"), record(5, b""), record(0x80, b"xy")].concat();
        let records: Vec<Record<'_>> = Records::new(&buf).map(|r| r.expect("whole")).collect();
        let seen: Vec<(u8, usize, &[u8])> = records
            .iter()
            .map(|r| (r.opcode, r.offset, r.body))
            .collect();
        assert_eq!(
            seen,
            [
                (3, 0, &b"abc"[..]),
                (5, 12, &b""[..]),
                (0x80, 21, &b"xy"[..])
            ]
        );
        assert_eq!(buf.get(records[0].body_range()), Some(&b"abc"[..]));
        assert_eq!(records[2].end(), buf.len());
    }

    #[test]
    fn a_cut_record_is_an_error_and_ends_the_framing() {
        let mut buf = [record(3, b"abc"), record(4, b"defg")].concat();
        buf.pop();
        let mut records = Records::new(&buf);
        assert!(records.next().is_some_and(|r| r.is_ok()));
        assert!(matches!(
            records.next(),
            Some(Err(FormatError::LengthBeyondEnd {
                opcode: 4,
                claimed: 4,
                available: 3
            }))
        ));
        assert!(records.next().is_none());

        let short = [record(3, b"abc"), vec![4, 1, 0]].concat();
        let last = Records::new(&short).last();
        assert!(matches!(
            last,
            Some(Err(FormatError::TruncatedPrefix { available: 3 }))
        ));
    }

    #[test]
    fn a_huge_length_is_refused_without_overflow() {
        let mut buf = vec![5];
        buf.extend_from_slice(&u64::MAX.to_le_bytes());
        buf.extend_from_slice(b"tail");
        assert!(matches!(
            Records::new(&buf).next(),
            Some(Err(FormatError::LengthBeyondEnd {
                claimed: u64::MAX,
                ..
            }))
        ));
        assert!(record_at(&buf, 100).is_none());
    }
}
