//! [`MessageHeader`]: the fixed fields of a message record, parsed and written in one place.
//!
//! Every message passes through here, on the reader's and the writer's hot paths alike, so both
//! directions are a handful of fixed-offset loads and stores, with no allocation.

use super::{FormatError, RECORD_PREFIX_LEN, op};

/// Bytes of a message record's body before its payload: channel id, sequence and both times.
pub const MESSAGE_HEADER_LEN: usize = 2 + 4 + 8 + 8;

/// Bytes a message record takes besides its payload: opcode, length and header.
pub const MESSAGE_RECORD_OVERHEAD: usize = RECORD_PREFIX_LEN + MESSAGE_HEADER_LEN;

/// A message's header fields, as MCAP stores them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MessageHeader {
    /// The part-local channel id.
    pub channel_id: u16,
    /// `Message.sequence`.
    pub sequence: u32,
    /// When the recorder received it, ns since the epoch.
    pub log_time: u64,
    /// When the publisher stamped it, ns since the epoch.
    pub publish_time: u64,
}

impl MessageHeader {
    /// The header at the start of a message record's body; the payload follows at
    /// [`MESSAGE_HEADER_LEN`] (see [`MessageHeader::payload`]).
    #[inline]
    pub fn parse(body: &[u8]) -> Result<Self, FormatError> {
        let Some(fixed) = body.first_chunk::<MESSAGE_HEADER_LEN>() else {
            return Err(FormatError::ShortMessage { len: body.len() });
        };
        let [
            c0,
            c1,
            s0,
            s1,
            s2,
            s3,
            l0,
            l1,
            l2,
            l3,
            l4,
            l5,
            l6,
            l7,
            publish @ ..,
        ] = *fixed;
        Ok(MessageHeader {
            channel_id: u16::from_le_bytes([c0, c1]),
            sequence: u32::from_le_bytes([s0, s1, s2, s3]),
            log_time: u64::from_le_bytes([l0, l1, l2, l3, l4, l5, l6, l7]),
            publish_time: u64::from_le_bytes(publish),
        })
    }

    /// The payload of a message record's body: what follows the header.
    #[inline]
    pub fn payload(body: &[u8]) -> &[u8] {
        body.get(MESSAGE_HEADER_LEN..).unwrap_or_default()
    }

    /// Appends a whole message record (opcode, length, header, payload) to `out`: one
    /// reservation and a few appends.
    #[inline]
    pub fn write_record(&self, out: &mut Vec<u8>, payload: &[u8]) {
        out.reserve(MESSAGE_RECORD_OVERHEAD + payload.len());
        out.push(op::MESSAGE);
        out.extend_from_slice(&((MESSAGE_HEADER_LEN + payload.len()) as u64).to_le_bytes());
        out.extend_from_slice(&self.channel_id.to_le_bytes());
        out.extend_from_slice(&self.sequence.to_le_bytes());
        out.extend_from_slice(&self.log_time.to_le_bytes());
        out.extend_from_slice(&self.publish_time.to_le_bytes());
        out.extend_from_slice(payload);
    }
}

/// Bytes of one MessageIndex entry: log time and offset.
pub const MESSAGE_INDEX_ENTRY_LEN: u64 = 16;

/// How many messages the MessageIndex records in `records` list (other records are passed
/// over), or `None` when there is no MessageIndex record among them or one is malformed. A
/// damaged chunk's MessageIndex records lie outside it, so they still say what it held.
pub fn message_index_entries(records: &[u8]) -> Option<u64> {
    let mut total: Option<u64> = None;
    for record in super::Records::new(records) {
        let record = record.ok()?;
        if record.opcode != super::op::MESSAGE_INDEX {
            continue;
        }
        total = Some(total.unwrap_or(0) + message_index_body_entries(record.body)?);
    }
    total
}

/// How many messages one MessageIndex record's body lists, or `None` when it is malformed.
pub fn message_index_body_entries(body: &[u8]) -> Option<u64> {
    // channel_id (u16), then the entries' byte length (u32) and the entries.
    let len = body
        .get(2..6)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)?;
    let held = (body.len() as u64).saturating_sub(6);
    if u64::from(len) > held || u64::from(len) % MESSAGE_INDEX_ENTRY_LEN != 0 {
        return None;
    }
    Some(u64::from(len) / MESSAGE_INDEX_ENTRY_LEN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Records;

    #[test]
    fn a_written_record_parses_back() {
        let header = MessageHeader {
            channel_id: 0x0102,
            sequence: 0x0304_0506,
            log_time: u64::MAX - 7,
            publish_time: 42,
        };
        let mut out = vec![0xAA];
        header.write_record(&mut out, b"payload");
        let rest = out.get(1..).unwrap_or_default();
        let mut records = Records::new(rest);
        let Some(Ok(record)) = records.next() else {
            panic!("one whole record");
        };
        assert_eq!(record.opcode, op::MESSAGE);
        assert_eq!(record.body.len(), MESSAGE_HEADER_LEN + 7);
        assert_eq!(rest.len(), MESSAGE_RECORD_OVERHEAD + 7);
        assert_eq!(MessageHeader::parse(record.body).ok(), Some(header));
        assert_eq!(MessageHeader::payload(record.body), b"payload");
        assert!(records.next().is_none());
    }

    #[test]
    fn a_body_shorter_than_the_header_is_an_error() {
        assert!(matches!(
            MessageHeader::parse(&[0; MESSAGE_HEADER_LEN - 1]),
            Err(FormatError::ShortMessage { len: 21 })
        ));
        assert_eq!(MessageHeader::payload(&[0; 3]), b"");
    }
}
