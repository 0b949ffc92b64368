//! Writing record fields: little-endian integers, length-prefixed strings and maps, and
//! [`record`], which frames a body as it is written. The write side of the record framer, for
//! the part writer's summary and index records.

use super::{RECORD_PREFIX_LEN, RecordPrefix};

/// Appends a record: opcode, length, then what `body` writes (its length is filled in after).
pub(crate) fn record(buf: &mut Vec<u8>, opcode: u8, body: impl FnOnce(&mut Vec<u8>)) {
    let start = buf.len();
    RecordPrefix {
        opcode,
        body_len: 0,
    }
    .write(buf);
    body(buf);
    let length = (buf.len() - start - RECORD_PREFIX_LEN) as u64;
    if let Some(slot) = buf.get_mut(start + 1..start + RECORD_PREFIX_LEN) {
        slot.copy_from_slice(&length.to_le_bytes());
    }
}

/// Appends a `u16`.
pub(crate) fn put_u16(buf: &mut Vec<u8>, v: u16) {
    buf.extend_from_slice(&v.to_le_bytes());
}

/// Appends a `u32`.
pub(crate) fn put_u32(buf: &mut Vec<u8>, v: u32) {
    buf.extend_from_slice(&v.to_le_bytes());
}

/// Appends a `u64`.
pub(crate) fn put_u64(buf: &mut Vec<u8>, v: u64) {
    buf.extend_from_slice(&v.to_le_bytes());
}

/// A string or byte array: u32 length, then the bytes.
pub(crate) fn put_bytes(buf: &mut Vec<u8>, bytes: &[u8]) {
    put_u32(buf, bytes.len() as u32);
    buf.extend_from_slice(bytes);
}

/// A string: u32 length, then its UTF-8 bytes.
pub(crate) fn put_str(buf: &mut Vec<u8>, s: &str) {
    put_bytes(buf, s.as_bytes());
}

/// A map: u32 byte length, then the entries `entry` writes.
pub(crate) fn put_map<T>(
    buf: &mut Vec<u8>,
    entries: impl Iterator<Item = T>,
    entry: impl Fn(&mut Vec<u8>, T),
) {
    let length_at = buf.len();
    put_u32(buf, 0);
    for e in entries {
        entry(buf, e);
    }
    let length = (buf.len() - length_at - 4) as u32;
    if let Some(slot) = buf.get_mut(length_at..length_at + 4) {
        slot.copy_from_slice(&length.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Records;

    #[test]
    fn a_record_frames_what_its_body_wrote() {
        let mut buf = Vec::new();
        record(&mut buf, 0x0B, |b| {
            put_u16(b, 1);
            put_str(b, "ab");
            put_map(b, [(1u16, 2u64)].into_iter(), |b, (k, v)| {
                put_u16(b, k);
                put_u64(b, v);
            });
        });
        record(&mut buf, 0x0F, |b| put_u32(b, 7));
        let records: Vec<(u8, usize)> = Records::new(&buf)
            .map(|r| r.map(|r| (r.opcode, r.body.len())))
            .collect::<Result<_, _>>()
            .expect("whole records");
        assert_eq!(records, [(0x0B, 2 + 4 + 2 + 4 + 10), (0x0F, 4)]);
    }
}
