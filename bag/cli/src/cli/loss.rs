//! One rule for every command that reads a recording: exit 3 whenever it has known loss or
//! damage, with one line per reason on stderr.

use bag::{BagReader, ReadIssue};

use super::Outcome;

/// Prints each known loss of the recording and each part that stopped early or chunk that was
/// skipped while reading, one line each on stderr, and says whether there were any: the exit
/// code of every command that reads messages (`cat`, `play`).
pub fn report_loss(reader: &BagReader, issues: &[ReadIssue]) -> Outcome {
    let mut lines = reader.known_loss();
    // A damaged chunk found when the part was scanned at open is already among the known loss:
    // once is enough.
    let known_at_open = |issue: &ReadIssue| {
        issue.skipped.as_ref().is_some_and(|chunk| {
            reader
                .parts()
                .iter()
                .any(|p| p.damaged_chunks.contains(chunk))
        })
    };
    lines.extend(
        issues
            .iter()
            .filter(|i| !known_at_open(i))
            .map(|i| i.to_string()),
    );
    for line in &lines {
        eprintln!("warning: {line}");
    }
    if lines.is_empty() {
        Outcome::Clean
    } else {
        Outcome::Damaged
    }
}
