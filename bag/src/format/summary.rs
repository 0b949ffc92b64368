//! The end of a part: the [`Footer`], the [`SummaryOffset`]s that say where each group of
//! summary records is, and [`SummaryBuilder`], which turns summary records into an
//! `mcap::Summary` for the mcap crate's indexed reader. Byte slices in; reading them from a file
//! is the caller's business.

use std::sync::Arc;

use super::{FormatError, MAGIC, RECORD_PREFIX_LEN, RecordPrefix, Records, op, parse_record};

/// Bytes of a footer record's body: summary start, summary offset start, summary CRC.
const FOOTER_BODY_LEN: u64 = 8 + 8 + 4;

/// Bytes at the end of a finished part: the footer record and the closing magic.
pub const FOOTER_TAIL_LEN: usize = RECORD_PREFIX_LEN + FOOTER_BODY_LEN as usize + MAGIC.len();

/// Where the footer says the summary and its offsets start (0: there is none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// Where the summary section starts.
    pub summary_start: u64,
    /// Where the summary offset records start.
    pub summary_offset_start: u64,
}

impl Footer {
    /// The footer in the last [`FOOTER_TAIL_LEN`] bytes of a file, which must end with the magic.
    pub fn parse_tail(tail: &[u8]) -> Result<Self, FormatError> {
        let Some(tail) = tail.first_chunk::<FOOTER_TAIL_LEN>() else {
            return Err(FormatError::NoFooter);
        };
        let (record, magic) = tail.split_at(FOOTER_TAIL_LEN - MAGIC.len());
        let prefix = RecordPrefix::read(record);
        if magic != MAGIC || prefix.is_none_or(|p| p.opcode != op::FOOTER) {
            return Err(FormatError::NoFooter);
        }
        let u64_at = |at: usize| {
            record
                .get(at..at + 8)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_le_bytes)
                .ok_or(FormatError::NoFooter)
        };
        Ok(Footer {
            summary_start: u64_at(RECORD_PREFIX_LEN)?,
            summary_offset_start: u64_at(RECORD_PREFIX_LEN + 8)?,
        })
    }

    /// Appends the footer record up to its summary CRC, which covers these bytes too and so is
    /// the caller's to append, followed by the magic.
    pub fn write_head(&self, out: &mut Vec<u8>) {
        RecordPrefix {
            opcode: op::FOOTER,
            body_len: FOOTER_BODY_LEN,
        }
        .write(out);
        out.extend_from_slice(&self.summary_start.to_le_bytes());
        out.extend_from_slice(&self.summary_offset_start.to_le_bytes());
    }
}

/// Where one group of summary records (all of one opcode) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryOffset {
    /// The opcode of the group's records.
    pub group_opcode: u8,
    /// Where the group starts in the file.
    pub group_start: u64,
    /// Its length in bytes.
    pub group_length: u64,
}

impl SummaryOffset {
    /// Parses a summary offset record's body.
    pub fn parse(body: &[u8]) -> Result<Self, FormatError> {
        let Some(&[group_opcode, s0, s1, s2, s3, s4, s5, s6, s7, length @ ..]) =
            body.first_chunk::<17>()
        else {
            return Err(FormatError::FieldBeyondEnd {
                opcode: op::SUMMARY_OFFSET,
                len: body.len(),
            });
        };
        Ok(SummaryOffset {
            group_opcode,
            group_start: u64::from_le_bytes([s0, s1, s2, s3, s4, s5, s6, s7]),
            group_length: u64::from_le_bytes(length),
        })
    }

    /// Appends a whole summary offset record.
    pub fn write_record(&self, out: &mut Vec<u8>) {
        RecordPrefix {
            opcode: op::SUMMARY_OFFSET,
            body_len: 17,
        }
        .write(out);
        out.push(self.group_opcode);
        out.extend_from_slice(&self.group_start.to_le_bytes());
        out.extend_from_slice(&self.group_length.to_le_bytes());
    }
}

/// Summary records collected so far; channels are given their schemas at the end.
#[derive(Default)]
pub struct SummaryBuilder {
    summary: mcap::Summary,
    channels: Vec<mcap::records::Channel>,
}

impl SummaryBuilder {
    /// Adds the schemas, channels, chunk indexes, attachment and metadata indexes and statistics
    /// among `records` (whole records only), each parsed behind the length guard; other records
    /// are skipped. An error when a record is cut off or unreadable.
    pub fn add(&mut self, records: &[u8]) -> Result<(), FormatError> {
        const KEPT: [u8; 6] = [
            op::SCHEMA,
            op::CHANNEL,
            op::CHUNK_INDEX,
            op::ATTACHMENT_INDEX,
            op::METADATA_INDEX,
            op::STATISTICS,
        ];
        for record in Records::new(records) {
            let record = record?;
            // Summary offsets and unknown records: not needed.
            if !KEPT.contains(&record.opcode) {
                continue;
            }
            match parse_record(record.opcode, record.body)? {
                mcap::records::Record::Schema { header, data } => {
                    self.summary.schemas.insert(
                        header.id,
                        Arc::new(mcap::Schema {
                            id: header.id,
                            name: header.name,
                            encoding: header.encoding,
                            data: std::borrow::Cow::Owned(data.into_owned()),
                        }),
                    );
                }
                mcap::records::Record::Channel(c) => self.channels.push(c),
                mcap::records::Record::Statistics(stats) => self.summary.stats = Some(stats),
                mcap::records::Record::ChunkIndex(index) => self.summary.chunk_indexes.push(index),
                mcap::records::Record::AttachmentIndex(index) => {
                    self.summary.attachment_indexes.push(index)
                }
                mcap::records::Record::MetadataIndex(index) => {
                    self.summary.metadata_indexes.push(index)
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The summary, each channel with its schema (none when the summary lacks it).
    pub fn finish(mut self) -> mcap::Summary {
        for c in self.channels {
            let schema = self.summary.schemas.get(&c.schema_id).cloned();
            self.summary.channels.insert(
                c.id,
                Arc::new(mcap::Channel {
                    id: c.id,
                    topic: c.topic,
                    schema,
                    message_encoding: c.message_encoding,
                    metadata: c.metadata,
                }),
            );
        }
        self.summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_and_offsets_round_trip() {
        let footer = Footer {
            summary_start: 1000,
            summary_offset_start: 2000,
        };
        let mut tail = Vec::new();
        footer.write_head(&mut tail);
        tail.extend_from_slice(&0u32.to_le_bytes());
        tail.extend_from_slice(MAGIC);
        assert_eq!(tail.len(), FOOTER_TAIL_LEN);
        assert_eq!(Footer::parse_tail(&tail).ok(), Some(footer));
        let last = tail.len() - 1;
        tail[last] ^= 1;
        assert!(Footer::parse_tail(&tail).is_err());
        assert!(Footer::parse_tail(&tail[1..]).is_err());

        let offset = SummaryOffset {
            group_opcode: op::CHANNEL,
            group_start: 7,
            group_length: 9,
        };
        let mut record = Vec::new();
        offset.write_record(&mut record);
        let Some(Ok(framed)) = Records::new(&record).next() else {
            panic!("one whole record");
        };
        assert_eq!(framed.opcode, op::SUMMARY_OFFSET);
        assert_eq!(SummaryOffset::parse(framed.body).ok(), Some(offset));
        assert!(SummaryOffset::parse(&framed.body[..16]).is_err());
    }

    #[test]
    fn a_summary_with_a_cut_record_is_an_error() {
        let mut records = Vec::new();
        crate::format::encode::record(&mut records, op::CHANNEL, |b| {
            crate::format::encode::put_u16(b, 3);
            crate::format::encode::put_u16(b, 0);
            crate::format::encode::put_str(b, "car/rpm");
            crate::format::encode::put_str(b, "json");
            crate::format::encode::put_u32(b, 0);
        });
        let mut builder = SummaryBuilder::default();
        builder.add(&records).expect("whole");
        let summary = builder.finish();
        assert_eq!(summary.channels[&3].topic, "car/rpm");
        assert!(
            SummaryBuilder::default()
                .add(&records[..records.len() - 1])
                .is_err()
        );
    }
}
