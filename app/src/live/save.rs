//! File > Save Recording: the live capture written as a bag, off the UI thread, while the
//! capture goes on. The store is locked only for short slices, never for the whole save.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use bag::live::RECORD_COMPRESSION_LEVEL;
use bag::{BagSummary, BagWriter, ChannelId, Profile, WriteOptions};

use crate::error::Error;
use crate::live::LiveShared;
use crate::live::spill::copy_spilled;

/// Messages written per lock of the store.
const SLICE: u64 = 4_096;

/// Progress of a save: messages written and the total to write.
#[derive(Debug, Default)]
pub struct SaveProgress {
    /// Written so far.
    pub done: AtomicU64,
    /// To write.
    pub total: AtomicU64,
}

/// Writes what the capture holds into a new bag at `dir`.
///
/// `dropped_messages` in its index = messages evicted from the capture (and not kept by the
/// spill bag) before or during the save + messages the transport queue dropped; advertised
/// topics that the capture never received a message on are listed.
pub fn save_capture(
    shared: &LiveShared,
    dir: &Path,
    progress: &SaveProgress,
) -> Result<BagSummary, Error> {
    let fail = |source: bag::BagError| Error::Save {
        dir: dir.to_path_buf(),
        source,
    };
    // One consistent cut: the ring's range and, when spilling, everything spilled before it.
    let (mut cursor, end, evicted_before, spilled) = {
        let store = shared.store();
        let mut spill = shared.spill();
        let spilled = match spill.as_mut() {
            Some(s) => {
                s.flush()?;
                Some(SpillCut {
                    dir: s.dir().to_path_buf(),
                    written: s.written(),
                    failed: s.failed(),
                })
            }
            None => None,
        };
        (store.first_seq(), store.end_seq(), store.evicted(), spilled)
    };
    let start = cursor;
    let stats = shared.stats();
    progress.total.store(end - start, Ordering::Relaxed);
    let topics = shared.channel_specs();
    // Every channel of the cut is known before the first header: `ros2` when all fit it
    // (CDR with ROS 2 schemas), so that ROS tools read the saved bag.
    let mut writer = BagWriter::create(
        dir,
        WriteOptions::new()
            .compression_level(RECORD_COMPRESSION_LEVEL)
            .profile(Profile::for_channels(topics.iter())),
    )
    .map_err(fail)?;
    // What the ring evicted, from the spill bag, comes first; what it could not keep is lost.
    let mut lost_before = evicted_before;
    if let Some(cut) = &spilled {
        let copied = copy_spilled(
            &cut.dir,
            std::slice::from_ref(&(0..cut.written)),
            &mut writer,
        )?;
        lost_before = evicted_before.saturating_sub(copied);
    }
    let mut channels: Vec<Option<ChannelId>> = vec![None; topics.len()];
    // Ring positions evicted before this save reached them.
    let mut overtaken: Vec<Range<u64>> = Vec::new();
    let mut failure = None;
    while cursor < end && failure.is_none() {
        let store = shared.store();
        if cursor < store.first_seq() {
            overtaken.push(cursor..store.first_seq().min(end));
            cursor = store.first_seq();
        }
        let slice_end = end.min(cursor + SLICE);
        cursor = store.visit(cursor, slice_end, &mut |m| {
            let Some(spec) = topics.get(m.topic as usize) else {
                failure = Some(Error::UnknownTopic { topic: m.topic });
                return false;
            };
            let Some(slot) = channels.get_mut(m.topic as usize) else {
                return false;
            };
            let id = *slot.get_or_insert_with(|| writer.add_channel(spec.clone()));
            match writer.write(id, m.log_time_ns, m.publish_time_ns, m.data) {
                Ok(()) => true,
                Err(e) => {
                    failure = Some(fail(e));
                    false
                }
            }
        });
        drop(store);
        progress.done.store(cursor - start, Ordering::Relaxed);
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let overtaken_count: u64 = overtaken.iter().map(|r| r.end - r.start).sum();
    let recovered = match &spilled {
        Some(cut) if overtaken_count > 0 => {
            recover_overtaken(shared, cut, start, &overtaken, &mut writer)?
        }
        _ => 0,
    };
    let lost_during_save = overtaken_count.saturating_sub(recovered);
    writer.add_dropped(lost_before + stats.transport_dropped + lost_during_save);
    // A topic the capture received counts as published even when the cap evicted all of its
    // messages; only the others are listed as never published.
    let received = shared.channel_specs();
    let published = |topic: &str| received.iter().any(|spec| spec.topic == topic);
    for a in stats.advertised.iter().filter(|a| !published(&a.topic)) {
        writer.advertise(&a.topic, &a.schema);
    }
    writer.close().map_err(fail)
}

/// The spill bag as it was at a save's cut.
struct SpillCut {
    dir: PathBuf,
    written: u64,
    failed: u64,
}

/// Copies from the spill bag the ring positions (`overtaken`, at or after `start`, the ring's
/// first position at the cut) that the ring evicted before the save reached them; returns how
/// many. Each eviction since the cut is one attempt to spill, in ring order, so position `p`
/// was spilled `p - start` messages after the cut, unless a spill write failed meanwhile; then
/// nothing is copied, and the overtaken messages count as lost.
fn recover_overtaken(
    shared: &LiveShared,
    cut: &SpillCut,
    start: u64,
    overtaken: &[Range<u64>],
    writer: &mut BagWriter,
) -> Result<u64, Error> {
    {
        let _store = shared.store();
        let mut spill = shared.spill();
        let Some(s) = spill.as_mut() else {
            return Ok(0);
        };
        if s.failed() != cut.failed {
            return Ok(0);
        }
        s.flush()?;
    }
    let in_spill: Vec<Range<u64>> = overtaken
        .iter()
        .map(|r| (r.start - start + cut.written)..(r.end - start + cut.written))
        .collect();
    copy_spilled(&cut.dir, &in_spill, writer)
}
