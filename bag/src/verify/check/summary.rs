//! The summary and summary-offset sections, the Footer, and the checks that need the whole
//! file: each summary record is compared with what the data-section walk recorded.

use std::collections::HashSet;

use super::super::parse::{self, RawRecord, op, record_name};
use super::{Checker, Group, Loc, Section, channel_difference, id_list, quoted, schema_difference};

impl<'a> Checker<'a> {
    pub(super) fn summary_record(&mut self, rec: RawRecord<'_>) {
        let loc = Loc::file(rec.offset);
        if rec.opcode == op::SUMMARY_OFFSET {
            self.section = Section::SummaryOffsets;
            self.first_summary_offset.get_or_insert(rec.offset);
            match parse::SummaryOffset::parse(rec.body) {
                Ok(offset) => self.summary_offsets.push((rec.offset, offset)),
                Err(err) => self.field_error(loc, rec.opcode, err),
            }
            return;
        }
        if self.section == Section::SummaryOffsets {
            return self.error(
                loc,
                record_name(rec.opcode),
                "only SummaryOffset records between the first SummaryOffset and the Footer",
                format!("a {} record", record_name(rec.opcode)),
            );
        }
        self.first_summary_record.get_or_insert(rec.offset);
        self.group(rec);
        match rec.opcode {
            op::SCHEMA => self.summary_schema(rec),
            op::CHANNEL => self.summary_channel(rec),
            op::CHUNK_INDEX => self.chunk_index(rec),
            op::ATTACHMENT_INDEX => self.attachment_index(rec),
            op::METADATA_INDEX => self.metadata_index(rec),
            op::STATISTICS => self.statistics(rec),
            op::MESSAGE | op::CHUNK | op::MESSAGE_INDEX | op::ATTACHMENT | op::METADATA => self.error(
                loc,
                record_name(rec.opcode),
                "only Schema, Channel, ChunkIndex, AttachmentIndex, MetadataIndex and Statistics records in the summary section",
                format!("a {} record after DataEnd", record_name(rec.opcode)),
            ),
            _ => {}
        }
    }

    fn group(&mut self, rec: RawRecord<'_>) {
        let end = rec.offset + rec.total_len();
        if let Some(last) = self.groups.last_mut().filter(|g| g.opcode == rec.opcode) {
            last.end = end;
            return;
        }
        // `grouped_opcodes` keeps this linear on a hostile summary that alternates opcodes.
        let seen_before = !self.grouped_opcodes.insert(rec.opcode);
        if seen_before && self.misgrouped.insert(rec.opcode) {
            self.error(
                Loc::file(rec.offset),
                record_name(rec.opcode),
                format!(
                    "summary records grouped by opcode (all {} records together)",
                    record_name(rec.opcode)
                ),
                "a second group of them",
            );
        }
        self.groups.push(Group {
            opcode: rec.opcode,
            start: rec.offset,
            end,
        });
    }

    fn summary_schema(&mut self, rec: RawRecord<'_>) {
        let loc = Loc::file(rec.offset);
        let schema = match parse::Schema::parse(rec.body) {
            Ok(schema) => schema,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        if schema.id == 0 {
            return self.warning(
                loc,
                "Schema",
                "a non-zero schema id (readers ignore id 0)",
                "id 0",
            );
        }
        self.summary_schema_ids.insert(schema.id);
        match self.schemas.get(&schema.id) {
            None => self.error(
                loc,
                "Schema",
                format!(
                    "schema {} in the data section (the summary only repeats data-section records)",
                    schema.id
                ),
                format!(
                    "schema {} ({}) only in the summary",
                    schema.id,
                    quoted(schema.name)
                ),
            ),
            Some(existing) => {
                if let Some(diff) = schema_difference(existing, &schema) {
                    self.error(
                        loc,
                        "Schema",
                        format!(
                            "summary schema {} identical to the data section's",
                            schema.id
                        ),
                        diff,
                    );
                }
            }
        }
    }

    fn summary_channel(&mut self, rec: RawRecord<'_>) {
        let loc = Loc::file(rec.offset);
        let channel = match parse::Channel::parse(rec.body) {
            Ok(channel) => channel,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        self.summary_channel_ids.insert(channel.id);
        match self.channel_index(channel.id).and_then(|i| self.channels.get(i)) {
            None => self.error(
                loc,
                "Channel",
                format!("channel {} in the data section (the summary only repeats data-section records)", channel.id),
                format!("channel {} ({}) only in the summary", channel.id, quoted(channel.topic)),
            ),
            Some(existing) => {
                if let Some(diff) = channel_difference(existing, &channel) {
                    self.error(
                        loc,
                        "Channel",
                        format!("summary channel {} identical to the data section's", channel.id),
                        diff,
                    );
                }
            }
        }
    }

    fn chunk_index(&mut self, rec: RawRecord<'_>) {
        let loc = Loc::file(rec.offset);
        let index = match parse::ChunkIndex::parse(rec.body) {
            Ok(index) => index,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        self.chunk_index_count += 1;
        let Some(&i) = self.chunk_at.get(&index.chunk_start_offset) else {
            return self.error(
                loc,
                "ChunkIndex",
                format!(
                    "a Chunk record at chunk_start_offset {}",
                    index.chunk_start_offset
                ),
                "no Chunk starts there",
            );
        };
        let Some(chunk) = self.chunks.get_mut(i) else {
            return;
        };
        let duplicate = std::mem::replace(&mut chunk.indexed, true);
        let mut problems: Vec<(String, String)> = Vec::new();
        if duplicate {
            problems.push((
                format!("one ChunkIndex for the chunk at {}", chunk.offset),
                "a second one".to_owned(),
            ));
        }
        let mut compare = |field: &str, claimed: u64, actual: u64| {
            if claimed != actual {
                problems.push((
                    format!("{field} {actual} (the chunk at {})", chunk.offset),
                    format!("{claimed}"),
                ));
            }
        };
        compare("chunk_length", index.chunk_length, chunk.total_len);
        compare(
            "message_start_time",
            index.message_start_time,
            chunk.message_start_time,
        );
        compare(
            "message_end_time",
            index.message_end_time,
            chunk.message_end_time,
        );
        compare(
            "compressed_size",
            index.compressed_size,
            chunk.compressed_size,
        );
        compare(
            "uncompressed_size",
            index.uncompressed_size,
            chunk.uncompressed_size,
        );
        if index.compression != chunk.compression {
            problems.push((
                format!(
                    "compression {} (the chunk at {})",
                    quoted(&chunk.compression),
                    chunk.offset
                ),
                quoted(index.compression),
            ));
        }
        let mut listed = 0usize;
        let mut bad = 0u64;
        let mut first_bad = None;
        for entry in parse::u16_u64_map("message_index_offsets", index.message_index_offsets) {
            let Ok((channel, offset)) = entry else { break };
            listed += 1;
            // MessageIndex records were recorded in file order, so sorted by offset.
            let found = chunk
                .message_indexes
                .binary_search_by_key(&offset, |(_, at, _)| *at)
                .ok()
                .and_then(|i| chunk.message_indexes.get(i));
            let problem = match found {
                None => Some((
                    format!(
                        "a MessageIndex for channel {channel} after the chunk at offset {offset}"
                    ),
                    "none there".to_owned(),
                )),
                Some((actual, _, _)) if *actual != channel => Some((
                    format!("the MessageIndex at {offset} to be for channel {channel}"),
                    format!("channel {actual}"),
                )),
                Some(_) => None,
            };
            if let Some(problem) = problem {
                bad += 1;
                first_bad.get_or_insert(problem);
            }
        }
        if let Some((expected, found)) = first_bad {
            let more = if bad > 1 {
                format!(" ({} more bad message_index_offsets entries)", bad - 1)
            } else {
                String::new()
            };
            problems.push((expected, format!("{found}{more}")));
        }
        let actual_indexes = chunk.message_indexes.len();
        if listed != 0 && listed != actual_indexes {
            problems.push((
                format!("message_index_offsets listing the {actual_indexes} MessageIndex records after the chunk"),
                format!("{listed} listed"),
            ));
        }
        let actual_length: u64 = chunk.message_indexes.iter().map(|(_, _, len)| len).sum();
        let unindexed = listed == 0 && index.message_index_length == 0;
        if !unindexed && index.message_index_length != actual_length {
            problems.push((
                format!("message_index_length {actual_length} (the MessageIndex records after the chunk)"),
                format!("{}", index.message_index_length),
            ));
        }
        for (expected, found) in problems {
            self.error(loc, "ChunkIndex", expected, found);
        }
    }

    fn attachment_index(&mut self, rec: RawRecord<'_>) {
        let loc = Loc::file(rec.offset);
        let index = match parse::AttachmentIndex::parse(rec.body) {
            Ok(index) => index,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        self.attachment_index_count += 1;
        let Some(attachment) = self
            .attachment_at
            .get(&index.offset)
            .and_then(|&i| self.attachments.get_mut(i))
        else {
            return self.error(
                loc,
                "AttachmentIndex",
                format!("an Attachment record at offset {}", index.offset),
                "no Attachment starts there",
            );
        };
        let mut problems: Vec<(String, String)> = Vec::new();
        if std::mem::replace(&mut attachment.indexed, true) {
            problems.push((
                format!(
                    "one AttachmentIndex for the attachment at {}",
                    attachment.offset
                ),
                "a second one".to_owned(),
            ));
        }
        let mut compare = |field: &str, claimed: u64, actual: u64| {
            if claimed != actual {
                problems.push((
                    format!("{field} {actual} (the attachment at {})", attachment.offset),
                    format!("{claimed}"),
                ));
            }
        };
        compare("length", index.length, attachment.total_len);
        compare("log_time", index.log_time, attachment.log_time);
        compare("create_time", index.create_time, attachment.create_time);
        compare("data_size", index.data_size, attachment.data_size);
        if index.name != attachment.name {
            problems.push((
                format!("name {}", quoted(&attachment.name)),
                quoted(index.name),
            ));
        }
        if index.media_type != attachment.media_type {
            problems.push((
                format!("media_type {}", quoted(&attachment.media_type)),
                quoted(index.media_type),
            ));
        }
        for (expected, found) in problems {
            self.error(loc, "AttachmentIndex", expected, found);
        }
    }

    fn metadata_index(&mut self, rec: RawRecord<'_>) {
        let loc = Loc::file(rec.offset);
        let index = match parse::MetadataIndex::parse(rec.body) {
            Ok(index) => index,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        self.metadata_index_count += 1;
        let Some(metadata) = self
            .metadata_at
            .get(&index.offset)
            .and_then(|&i| self.metadata.get_mut(i))
        else {
            return self.error(
                loc,
                "MetadataIndex",
                format!("a Metadata record at offset {}", index.offset),
                "no Metadata starts there",
            );
        };
        let mut problems: Vec<(String, String)> = Vec::new();
        if std::mem::replace(&mut metadata.indexed, true) {
            problems.push((
                format!("one MetadataIndex for the metadata at {}", metadata.offset),
                "a second one".to_owned(),
            ));
        }
        if index.length != metadata.total_len {
            problems.push((
                format!(
                    "length {} (the metadata at {})",
                    metadata.total_len, metadata.offset
                ),
                format!("{}", index.length),
            ));
        }
        if index.name != metadata.name {
            problems.push((
                format!("name {}", quoted(&metadata.name)),
                quoted(index.name),
            ));
        }
        for (expected, found) in problems {
            self.error(loc, "MetadataIndex", expected, found);
        }
    }

    fn statistics(&mut self, rec: RawRecord<'_>) {
        let loc = Loc::file(rec.offset);
        if self.statistics_at.is_some() {
            // Only the first is checked against the data section: each check walks every
            // channel, and a hostile summary could repeat the record many times.
            return self.error(
                loc,
                "Statistics",
                "at most one Statistics record",
                "a second one",
            );
        }
        self.statistics_at = Some(rec.offset);
        let stats = match parse::Statistics::parse(rec.body) {
            Ok(stats) => stats,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        let (start, end) = self
            .log_time_range
            .map_or((0, 0), |r| (r.start_ns, r.end_ns));
        let checks: [(&str, u64, u64); 8] = [
            ("message_count", stats.message_count, self.message_count),
            (
                "schema_count",
                u64::from(stats.schema_count),
                self.schemas.len() as u64,
            ),
            (
                "channel_count",
                u64::from(stats.channel_count),
                self.channels.len() as u64,
            ),
            (
                "attachment_count",
                u64::from(stats.attachment_count),
                self.attachments.len() as u64,
            ),
            (
                "metadata_count",
                u64::from(stats.metadata_count),
                self.metadata.len() as u64,
            ),
            (
                "chunk_count",
                u64::from(stats.chunk_count),
                self.chunks.len() as u64,
            ),
            ("message_start_time", stats.message_start_time, start),
            ("message_end_time", stats.message_end_time, end),
        ];
        for (field, claimed, actual) in checks {
            if claimed != actual {
                self.error(
                    loc,
                    "Statistics",
                    format!("{field} {actual} (counted in the data section)"),
                    format!("{claimed}"),
                );
            }
        }
        if stats.channel_message_counts.is_empty() {
            return;
        }
        let mut seen = HashSet::new();
        let mut problems: Vec<(String, String)> = Vec::new();
        for entry in parse::u16_u64_map("channel_message_counts", stats.channel_message_counts) {
            let Ok((channel, count)) = entry else { break };
            if !seen.insert(channel) {
                problems.push((
                    format!("one channel_message_counts entry for channel {channel}"),
                    "two".to_owned(),
                ));
                continue;
            }
            match self.channel_index(channel).and_then(|i| self.channels.get(i)) {
                None => problems.push((
                    "channel_message_counts only for channels of the data section".to_owned(),
                    format!("a count of {count} for channel {channel}, which the data section never defined"),
                )),
                Some(c) if c.message_count != count => problems.push((
                    format!("channel_message_counts[{channel}] {} (counted in the data section)", c.message_count),
                    format!("{count}"),
                )),
                Some(_) => {}
            }
        }
        let mut unlisted: Vec<u16> = self
            .channels
            .iter()
            .filter(|c| c.message_count > 0 && !seen.contains(&c.id))
            .map(|c| c.id)
            .collect();
        unlisted.sort_unstable();
        if !unlisted.is_empty() {
            problems.push((
                format!(
                    "channel_message_counts for every channel with messages ({})",
                    id_list(&unlisted)
                ),
                "no entry for them".to_owned(),
            ));
        }
        for (expected, found) in problems {
            self.error(loc, "Statistics", expected, found);
        }
        let mut not_repeated: Vec<u16> = self
            .channels
            .iter()
            .filter(|c| !self.summary_channel_ids.contains(&c.id))
            .map(|c| c.id)
            .collect();
        if !not_repeated.is_empty() {
            not_repeated.sort_unstable();
            self.warning(
                loc,
                "Statistics",
                format!(
                    "every Channel repeated in the summary before a Statistics with channel_message_counts ({})",
                    id_list(&not_repeated)
                ),
                "not repeated",
            );
        }
    }

    pub(super) fn footer(&mut self, rec: RawRecord<'_>) {
        let loc = Loc::file(rec.offset);
        self.footer_at = Some(rec.offset);
        self.footer_end = Some(rec.offset + rec.total_len());
        if self.section == Section::Data {
            self.error(loc, "Footer", "a DataEnd record before the Footer", "none");
        }
        let footer = match parse::Footer::parse(rec.body) {
            Ok(footer) => footer,
            Err(err) => return self.field_error(loc, rec.opcode, err),
        };
        if rec.body.len() != 20 {
            self.error(
                loc,
                "Footer",
                "content length 20 (readers find the Footer from the end of the file)",
                format!("{}", rec.body.len()),
            );
        }
        let expected_start = self.first_summary_record.unwrap_or(0);
        // A summary of SummaryOffset records alone (every group empty) may be said to start at
        // the first of them, as the Python writer says it: its CRC covers them from there.
        let offsets_only_start = self
            .first_summary_offset
            .filter(|_| self.first_summary_record.is_none());
        if footer.summary_start != expected_start
            && Some(footer.summary_start) != offsets_only_start
        {
            self.error(
                loc,
                "Footer",
                format!("summary_start {expected_start} (the first summary record, or 0 for none)"),
                format!("{}", footer.summary_start),
            );
        }
        let expected_offsets = self.first_summary_offset.unwrap_or(0);
        // With no SummaryOffset records, an offset section that starts at this Footer is as
        // empty as one at 0: the reference writers (Python's, the mcap crate's) write that.
        let empty_at_footer =
            self.first_summary_offset.is_none() && footer.summary_offset_start == rec.offset;
        if footer.summary_offset_start != expected_offsets && !empty_at_footer {
            self.error(
                loc,
                "Footer",
                format!("summary_offset_start {expected_offsets} (the first SummaryOffset record, or 0 for none)"),
                format!("{}", footer.summary_offset_start),
            );
        }
        if footer.summary_crc != 0 && self.data_end.is_some() && self.summary_crc_complete {
            // The summary records read since DataEnd, then this Footer up to its CRC field.
            let mut covered = self.summary_crc.clone();
            covered.update(&[rec.opcode]);
            covered.update(&(rec.body.len() as u64).to_le_bytes());
            covered.update(rec.body.get(..16).unwrap_or(rec.body));
            let crc = covered.finalize();
            if crc != footer.summary_crc {
                self.error(
                    loc,
                    "Footer",
                    format!("summary_crc {:#010x}", footer.summary_crc),
                    format!("CRC {crc:#010x} of the summary through summary_offset_start"),
                );
            }
        }
    }

    // ---- after the walk --------------------------------------------------------------------

    pub(super) fn finish_checks(&mut self) {
        let offsets = std::mem::take(&mut self.summary_offsets);
        let mut opcodes_seen = HashSet::new();
        for (at, offset) in &offsets {
            let loc = Loc::file(*at);
            let name = record_name(offset.group_opcode);
            if !opcodes_seen.insert(offset.group_opcode) {
                self.error(
                    loc,
                    "SummaryOffset",
                    format!("one SummaryOffset for the {name} group"),
                    "a second one",
                );
            }
            if offset.group_length == 0 {
                if let Some((expected, found)) = self.empty_group_problem(offset, name) {
                    self.error(loc, "SummaryOffset", expected, found);
                }
                continue;
            }
            // Groups are in file order, so sorted by start.
            let group = self
                .groups
                .binary_search_by_key(&offset.group_start, |g| g.start)
                .ok()
                .and_then(|i| self.groups.get(i));
            let problem = match group {
                None => Some((
                    format!(
                        "a group of {name} records starting at group_start {}",
                        offset.group_start
                    ),
                    "no summary group starts there".to_owned(),
                )),
                Some(g) if g.opcode != offset.group_opcode => Some((
                    format!("the group at {} to hold {name} records", offset.group_start),
                    format!("{} records", record_name(g.opcode)),
                )),
                Some(g) if g.end - g.start != offset.group_length => Some((
                    format!(
                        "group_length {} (all {name} records of the summary)",
                        g.end - g.start
                    ),
                    format!("{}", offset.group_length),
                )),
                Some(_) => None,
            };
            if let Some((expected, found)) = problem {
                self.error(loc, "SummaryOffset", expected, found);
            }
        }
        if self.chunk_index_count > 0 {
            let unindexed: Vec<u64> = self
                .chunks
                .iter()
                .filter(|c| !c.indexed)
                .map(|c| c.offset)
                .collect();
            for offset in unindexed {
                self.error(
                    Loc::file(offset),
                    "Chunk",
                    "a ChunkIndex for this chunk in the summary",
                    "none",
                );
            }
            if let Some(first) = self.first_loose_message {
                self.warning(
                    Loc::file(first),
                    "Message",
                    "every Message inside a chunk when the summary has ChunkIndex records",
                    format!(
                        "{} messages outside chunks, invisible to indexed readers",
                        self.loose_messages
                    ),
                );
            }
            self.check_summary_copies();
        }
        if self.attachment_index_count > 0 {
            let unindexed: Vec<u64> = self
                .attachments
                .iter()
                .filter(|a| !a.indexed)
                .map(|a| a.offset)
                .collect();
            for offset in unindexed {
                self.error(
                    Loc::file(offset),
                    "Attachment",
                    "an AttachmentIndex for this attachment in the summary",
                    "none",
                );
            }
        }
        if self.metadata_index_count > 0 {
            let unindexed: Vec<u64> = self
                .metadata
                .iter()
                .filter(|m| !m.indexed)
                .map(|m| m.offset)
                .collect();
            for offset in unindexed {
                self.error(
                    Loc::file(offset),
                    "Metadata",
                    "a MetadataIndex for this metadata in the summary",
                    "none",
                );
            }
        }
    }

    /// What is wrong with a SummaryOffset for an empty group, if anything. An empty group is
    /// valid wherever it points inside the summary or at its end (the Python writer points it at
    /// where the next group starts, or at the offset section); it is wrong when the summary does
    /// hold records of its kind (readers that trust the offsets would miss them), or when it
    /// points outside the summary.
    fn empty_group_problem(
        &self,
        offset: &parse::SummaryOffset,
        name: &str,
    ) -> Option<(String, String)> {
        if let Some(g) = self.groups.iter().find(|g| g.opcode == offset.group_opcode) {
            return Some((
                format!(
                    "group_length {} (all {name} records of the summary)",
                    g.end - g.start
                ),
                "0".to_owned(),
            ));
        }
        // The summary runs from the end of DataEnd to the Footer, offset section included.
        let start = self
            .data_end
            .map(|(_, end)| end)
            .or(self.first_summary_record)
            .or(self.first_summary_offset);
        match (start, self.footer_at) {
            (Some(start), Some(end)) if (start..=end).contains(&offset.group_start) => None,
            (start, end) => Some((
                format!(
                    "group_start of the empty {name} group inside the summary or at its end ({}..={})",
                    start.map_or("?".to_owned(), |s| s.to_string()),
                    end.map_or("?".to_owned(), |e| e.to_string()),
                ),
                format!("{}", offset.group_start),
            )),
        }
    }

    /// Indexed readers look channels and schemas up in the summary only.
    fn check_summary_copies(&mut self) {
        let mut channels: Vec<u16> = Vec::new();
        let mut schemas: Vec<u16> = Vec::new();
        let mut schemas_seen = HashSet::new();
        for c in self.channels.iter().filter(|c| c.chunked_message_count > 0) {
            if !self.summary_channel_ids.contains(&c.id) {
                channels.push(c.id);
            }
            if c.schema_id != 0
                && !self.summary_schema_ids.contains(&c.schema_id)
                && schemas_seen.insert(c.schema_id)
            {
                schemas.push(c.schema_id);
            }
        }
        let at = self.first_summary_record.unwrap_or(0);
        if !channels.is_empty() {
            channels.sort_unstable();
            self.warning(
                Loc::file(at),
                "Channel",
                format!(
                    "a summary copy of every channel of indexed chunks ({})",
                    id_list(&channels)
                ),
                "not in the summary",
            );
        }
        if !schemas.is_empty() {
            schemas.sort_unstable();
            self.warning(
                Loc::file(at),
                "Schema",
                format!(
                    "a summary copy of every schema of indexed chunks ({})",
                    id_list(&schemas)
                ),
                "not in the summary",
            );
        }
    }
}
