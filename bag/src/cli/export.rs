//! `bag export`: a sub-range of a recording as a new bag.

use std::path::Path;

use anyhow::Context;
use bag::export::{ExportOptions, export};
use bag::{BagReader, Compression, ReadFilter};

use super::Outcome;
use super::format::parse_time;
use super::progress::Progress;

pub struct Args<'a> {
    pub path: &'a Path,
    pub out: &'a Path,
    pub topics: &'a [String],
    pub start: Option<&'a str>,
    pub end: Option<&'a str>,
    pub compression: Compression,
}

pub fn run(args: Args<'_>) -> anyhow::Result<Outcome> {
    let source = BagReader::open(args.path)?;
    let origin = source.time_range_ns().map_or(0, |r| r.0);
    let mut filter = ReadFilter::all();
    if !args.topics.is_empty() {
        filter = filter.topics(args.topics.iter().cloned());
    }
    if let Some(s) = args.start {
        filter = filter.start_ns(parse_time(s, origin).context("--start")?);
    }
    if let Some(e) = args.end {
        filter = filter.end_ns(parse_time(e, origin).context("--end")?);
    }
    let progress = Progress::new("exporting", source.message_count());
    let options = ExportOptions {
        filter,
        compression: args.compression,
    };
    let report = export(&source, args.out, &options, |n| progress.set(n))
        .with_context(|| format!("exporting to {:?}", args.out))?;
    progress.finish();
    println!(
        "exported {} messages in {} parts to {}",
        report.summary.message_count,
        report.summary.parts.len(),
        args.out.display()
    );
    let mut lossy = false;
    if report.carried_dropped > 0 {
        lossy = true;
        eprintln!(
            "warning: the source dropped {} messages; the export's index carries that count, \
             since any part of the range may have gaps.",
            report.carried_dropped
        );
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
