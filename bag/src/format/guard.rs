//! The length guard: checks before handing a record body to the mcap crate's parser.
//!
//! The mcap crate allocates every length-prefixed field (strings, byte arrays, maps) at the size
//! it declares before seeing whether the body holds that much, so a corrupted length in a damaged
//! file could ask for gigabytes. Every record body we parse goes through here first: each
//! declared length is checked against the bytes that remain.

use super::FormatError;
use super::op::{ATTACHMENT_INDEX, CHANNEL, CHUNK_INDEX, METADATA_INDEX, SCHEMA, STATISTICS};

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn len_prefix(&mut self) -> Option<usize> {
        let bytes = self.take(4)?;
        usize::try_from(u32::from_le_bytes(bytes.try_into().ok()?)).ok()
    }

    /// A string or byte array: u32 length, then that many bytes.
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.len_prefix()?;
        self.take(n)
    }

    /// A map: u32 byte length, then entries that must fill it exactly.
    fn map(&mut self, entry: impl Fn(&mut Cursor<'a>) -> Option<()>) -> Option<()> {
        let mut inner = Cursor(self.bytes()?);
        while !inner.0.is_empty() {
            entry(&mut inner)?;
        }
        Some(())
    }
}

fn string_map_entry(c: &mut Cursor<'_>) -> Option<()> {
    c.bytes()?;
    c.bytes().map(|_| ())
}

fn int_map_entry(c: &mut Cursor<'_>) -> Option<()> {
    c.take(2 + 8).map(|_| ())
}

/// True when every length inside the record fits its body; `None` for kinds not checked here
/// (which are therefore not parsed).
fn lengths_fit(opcode: u8, body: &[u8]) -> Option<bool> {
    let mut c = Cursor(body);
    let fits = match opcode {
        SCHEMA => c
            .take(2)
            .and_then(|_| c.bytes())
            .and_then(|_| c.bytes())
            .and_then(|_| c.bytes())
            .map(|_| ()),
        CHANNEL => c
            .take(4)
            .and_then(|_| c.bytes())
            .and_then(|_| c.bytes())
            .and_then(|_| c.map(string_map_entry)),
        CHUNK_INDEX => c
            .take(32)
            .and_then(|_| c.map(int_map_entry))
            .and_then(|_| c.take(8))
            .and_then(|_| c.bytes())
            .and_then(|_| c.take(16))
            .map(|_| ()),
        STATISTICS => c
            .take(8 + 2 + 4 * 4 + 16)
            .and_then(|_| c.map(int_map_entry)),
        // Offset, length, log time, create time, data size; name, media type.
        ATTACHMENT_INDEX => c
            .take(5 * 8)
            .and_then(|_| c.bytes())
            .and_then(|_| c.bytes())
            .map(|_| ()),
        // Offset, length; name.
        METADATA_INDEX => c.take(2 * 8).and_then(|_| c.bytes()).map(|_| ()),
        _ => return None,
    };
    Some(fits.is_some())
}

/// Parses a schema, channel, chunk index, attachment index, metadata index or statistics record
/// with the mcap crate, once its lengths are known to fit its body.
pub fn parse_record(opcode: u8, body: &[u8]) -> Result<mcap::records::Record<'_>, FormatError> {
    match lengths_fit(opcode, body) {
        None => Err(FormatError::UnexpectedRecord { opcode }),
        Some(false) => Err(FormatError::FieldBeyondEnd {
            opcode,
            len: body.len(),
        }),
        Some(true) => mcap::parse_record(opcode, body).map_err(|e| FormatError::Unreadable {
            opcode,
            source: Box::new(e),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_claiming_more_than_the_body_is_refused() {
        // Schema id 1, name claims 4 GiB.
        let mut body = vec![1, 0];
        body.extend_from_slice(&u32::MAX.to_le_bytes());
        body.extend_from_slice(b"abc");
        assert!(matches!(
            parse_record(SCHEMA, &body),
            Err(FormatError::FieldBeyondEnd {
                opcode: SCHEMA,
                len: 9
            })
        ));
        assert!(matches!(
            parse_record(0x05, &body),
            Err(FormatError::UnexpectedRecord { opcode: 0x05 })
        ));
    }

    #[test]
    fn attachment_and_metadata_indexes_parse_and_their_names_are_guarded() {
        let string = |s: &str| [&(s.len() as u32).to_le_bytes()[..], s.as_bytes()].concat();
        let mut attachment = [0u8; 40].to_vec();
        attachment[32] = 8; // data size
        attachment.extend(string("calib.yaml"));
        attachment.extend(string("application/yaml"));
        match parse_record(ATTACHMENT_INDEX, &attachment) {
            Ok(mcap::records::Record::AttachmentIndex(index)) => {
                assert_eq!((index.name.as_str(), index.data_size), ("calib.yaml", 8));
            }
            other => panic!("{other:?}"),
        }
        let mut metadata = [0u8; 16].to_vec();
        metadata.extend(string("run"));
        assert!(matches!(
            parse_record(METADATA_INDEX, &metadata),
            Ok(mcap::records::Record::MetadataIndex(index)) if index.name == "run"
        ));
        // A name claiming 4 GiB is refused before the mcap crate allocates it.
        for (opcode, fixed) in [(ATTACHMENT_INDEX, 40), (METADATA_INDEX, 16)] {
            let mut body = vec![0u8; fixed];
            body.extend_from_slice(&u32::MAX.to_le_bytes());
            assert!(
                matches!(
                    parse_record(opcode, &body),
                    Err(FormatError::FieldBeyondEnd { .. })
                ),
                "opcode {opcode:#x}"
            );
        }
    }

    #[test]
    fn a_well_formed_channel_parses() {
        let mut body = vec![7, 0, 1, 0];
        for s in ["topic", "cdr"] {
            body.extend_from_slice(&(s.len() as u32).to_le_bytes());
            body.extend_from_slice(s.as_bytes());
        }
        let mut map = Vec::new();
        for s in ["k", "v"] {
            map.extend_from_slice(&(s.len() as u32).to_le_bytes());
            map.extend_from_slice(s.as_bytes());
        }
        body.extend_from_slice(&(map.len() as u32).to_le_bytes());
        body.extend_from_slice(&map);
        match parse_record(CHANNEL, &body) {
            Ok(mcap::records::Record::Channel(c)) => {
                let got = (c.id, c.topic.as_str(), c.metadata["k"].as_str());
                assert_eq!(got, (7, "topic", "v"));
            }
            _ => panic!("channel did not parse"),
        }
        let value_len_at = body.len() - 6;
        body[value_len_at] = 200; // the map's value length now overruns the map
        assert!(parse_record(CHANNEL, &body).is_err());
    }
}
