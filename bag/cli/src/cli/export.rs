//! `bag export`: a sub-range of a recording as a new bag.

use std::path::Path;

use anyhow::Context;
use bag::export::{ExportOptions, export};
use bag::{Compression, IndexState};

use super::progress::Progress;
use super::{Outcome, Range};

pub fn run(
    path: &Path,
    out: &Path,
    range: &Range,
    compression: Compression,
) -> anyhow::Result<Outcome> {
    let source = super::progress::open_recording(path)?;
    let resolved = range.resolve(&source)?;
    if let Some(why) = resolved.nothing {
        return Err(anyhow::Error::new(super::UsageError(format!(
            "nothing to export, so no bag was written: {why}"
        ))));
    }
    let filter = resolved.filter;
    let progress = Progress::new("exporting", source.message_count());
    let options = ExportOptions {
        filter,
        compression,
        define: Some(decode::standard_definition),
    };
    let report = export(&source, out, &options, |n| progress.set(n))
        .with_context(|| format!("exporting to {:?}", out))?;
    progress.finish();
    outln!(
        "exported {} messages in {} parts to {}",
        report.summary.message_count,
        report.summary.parts.len(),
        out.display()
    );
    if !report.defined_types.is_empty() {
        eprintln!(
            "note: the source holds no definition of {}: the export carries the {} standard \
             definitions built in.",
            report.defined_types.join(", "),
            decode::STANDARD_TYPES_SOURCE
        );
    }
    let mut lossy = false;
    if let IndexState::Unreadable(why) = source.index() {
        lossy = true;
        eprintln!(
            "warning: the source's index cannot be read ({why}): its drop count and record of \
             loss are unknown, and so are the export's."
        );
    }
    match report.carried_dropped {
        Some(dropped) if dropped > 0 => {
            lossy = true;
            eprintln!(
                "warning: the source dropped {dropped} messages; the export's index carries that \
                 count, since any part of the range may have gaps."
            );
        }
        Some(_) => {}
        None => eprintln!(
            "note: the source has no drop count, so the export's index says the drop count is \
             unknown."
        ),
    }
    for part in &report.damaged_source_parts {
        lossy = true;
        eprintln!("warning: source part {part}: the export holds only what it yielded");
    }
    for issue in &report.read_issues {
        lossy = true;
        eprintln!("warning: {issue}");
    }
    Ok(if lossy {
        Outcome::Damaged
    } else {
        Outcome::Clean
    })
}
