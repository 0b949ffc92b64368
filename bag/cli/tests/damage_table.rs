//! Issue 21's damage table: each kind of damage run through every read tool, which must tell
//! the same story: which part, which byte range, how many messages lost, and exit 3.
//!
//! Each row damages a clean bag of 40 messages in 10 chunks in a known way and says what every
//! tool must report. The tools: `bag info`, `bag cat`, `bag verify` (text and `--json`),
//! `bag export`, `bag play`, and the library read the scope's loader and Health use
//! (`BagReader::open`, every message, `known_loss()` and the cursor's issues). The table is
//! printed on stderr.

mod common;

use std::path::{Path, PathBuf};

use bag::{BagWriter, ChannelSpec, ChunkDamage, Compression, ReadFilter, WriteOptions};
use common::{Run, T0_NS, part_paths};

const MESSAGES: u64 = 40;
const OP_CHUNK: u8 = 0x06;
const OP_DATA_END: u8 = 0x0F;
const OP_FOOTER: u8 = 0x02;
const MAGIC: &[u8] = b"\x89MCAP0\r\n";

/// The read tools, each run on every row.
const TOOLS: [&str; 6] = ["info", "cat", "verify", "export", "play", "library"];

/// What a row's damage costs, as every tool must report it.
#[derive(Debug, Clone)]
enum Story {
    /// One chunk skipped: the rest of the part reads.
    Chunk(ChunkDamage),
    /// The part is not whole: nothing is lost, but it must not pass for complete.
    NotWhole { part: String },
}

impl Story {
    fn lost(&self) -> u64 {
        match self {
            Story::Chunk(c) => c.lost_messages.unwrap_or(0),
            Story::NotWhole { .. } => 0,
        }
    }

    /// The text every tool prints for it (on stderr).
    fn line(&self) -> String {
        match self {
            Story::Chunk(c) => c.to_string(),
            Story::NotWhole { part } => part.clone(),
        }
    }
}

struct Row {
    name: &'static str,
    /// Damages the bag at `bag` and says what it costs.
    damage: fn(&Path) -> Story,
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            name: "CRC mismatch in one chunk, summary intact",
            damage: crc_mismatch,
        },
        Row {
            name: "one chunk that does not decompress, summary intact",
            damage: undecompressable,
        },
        Row {
            name: "CRC mismatch in one chunk, no summary (read by scanning)",
            damage: crc_mismatch_no_summary,
        },
        Row {
            name: "end magic missing",
            damage: no_end_magic,
        },
    ]
}

// ---- the bag and its damage -----------------------------------------------------------------

/// A bag of one part: 40 JSON messages in 10 uncompressed chunks (`compression` for the
/// chunks), with its chunk and message indexes. Returns the part's path.
fn clean_bag(bag: &Path, compression: Compression) -> PathBuf {
    let options = WriteOptions::new()
        .compression(compression)
        .chunk_size_bytes(4 * 90);
    let mut w = BagWriter::create(bag, options).expect("create bag");
    let ch = w.add_channel(ChannelSpec {
        topic: "car/speed".into(),
        message_encoding: "json".into(),
        schema: None,
        metadata: Default::default(),
    });
    for i in 0..MESSAGES {
        let t = T0_NS + i * 100_000_000;
        let payload = format!("{{\"kph\": {i}, \"pad\": \"{}\"}}", "x".repeat(40));
        w.write(ch, t, Some(t), payload.as_bytes()).expect("write");
    }
    w.close().expect("close");
    let parts = part_paths(bag);
    assert_eq!(parts.len(), 1, "{parts:?}");
    parts.into_iter().next().unwrap()
}

/// `(opcode, offset, total length)` of each top-level record between the magics.
fn records(bytes: &[u8]) -> Vec<(u8, usize, usize)> {
    let mut out = Vec::new();
    let mut at = MAGIC.len();
    while at + 9 <= bytes.len() {
        let opcode = bytes[at];
        let len = u64::from_le_bytes(bytes[at + 1..at + 9].try_into().unwrap()) as usize;
        if at + 9 + len > bytes.len() {
            break;
        }
        out.push((opcode, at, 9 + len));
        if opcode == OP_FOOTER {
            break;
        }
        at += 9 + len;
    }
    out
}

/// The third chunk of `bytes`: `(offset, length)`, and how many messages it holds (counted
/// from the messages' own records, not from any index).
fn third_chunk(bytes: &[u8]) -> (usize, usize, u64) {
    let chunks: Vec<_> = records(bytes)
        .into_iter()
        .filter(|&(op, ..)| op == OP_CHUNK)
        .collect();
    assert!(chunks.len() >= 8, "{} chunks", chunks.len());
    let (_, at, len) = chunks[2];
    let reader = bag::verify::verify_bytes("x.mcap", bytes);
    assert!(reader.is_valid());
    // Messages are written in order, as many to each chunk as fit: count this one's.
    let body = &bytes[at + 9..at + len];
    let (_, chunk) = parse_chunk(body);
    let mut n = 0;
    let mut pos = 0;
    while pos + 9 <= chunk.len() {
        let l = u64::from_le_bytes(chunk[pos + 1..pos + 9].try_into().unwrap()) as usize;
        n += u64::from(chunk[pos] == 0x05);
        pos += 9 + l;
    }
    (at, len, n)
}

/// A chunk body's compression name and its records (uncompressed chunks only).
fn parse_chunk(body: &[u8]) -> (String, &[u8]) {
    let name_len = u32::from_le_bytes(body[28..32].try_into().unwrap()) as usize;
    let name = String::from_utf8(body[32..32 + name_len].to_vec()).unwrap();
    let records = &body[32 + name_len + 8..];
    (name, records)
}

fn chunk_story(part: &Path, at: usize, len: usize, lost: u64) -> Story {
    Story::Chunk(ChunkDamage {
        part: part.file_name().unwrap().to_string_lossy().into_owned(),
        offset: at as u64,
        end: (at + len) as u64,
        lost_messages: Some(lost),
    })
}

fn crc_mismatch(bag: &Path) -> Story {
    let part = clean_bag(bag, Compression::None);
    let mut bytes = std::fs::read(&part).unwrap();
    let (at, len, n) = third_chunk(&bytes);
    assert_eq!(parse_chunk(&bytes[at + 9..at + len]).0, "");
    bytes[at + len - 3] ^= 0x55; // in the last message's payload: only the CRC can tell
    std::fs::write(&part, &bytes).unwrap();
    chunk_story(&part, at, len, n)
}

fn undecompressable(bag: &Path) -> Story {
    let part = clean_bag(bag, Compression::Zstd);
    let mut bytes = std::fs::read(&part).unwrap();
    let chunks: Vec<_> = records(&bytes)
        .into_iter()
        .filter(|&(op, ..)| op == OP_CHUNK)
        .collect();
    let (_, at, len) = chunks[2];
    let body = &bytes[at + 9..at + len];
    let name_len = u32::from_le_bytes(body[28..32].try_into().unwrap()) as usize;
    assert_eq!(&body[32..32 + name_len], b"zstd");
    // The messages it held, from the uncompressed twin of the same bag.
    let twin = tempfile::tempdir().unwrap();
    let (_, _, n) =
        third_chunk(&std::fs::read(clean_bag(&twin.path().join("b"), Compression::None)).unwrap());
    let records_at = at + 9 + 32 + name_len + 8;
    for b in &mut bytes[records_at..records_at + 4] {
        *b = 0; // no longer the zstd frame magic
    }
    std::fs::write(&part, &bytes).unwrap();
    chunk_story(&part, at, len, n)
}

/// The CRC row, with the summary cut away: data section, DataEnd, then a Footer that points
/// at no summary, and the magic. Readers must scan it; the MessageIndex records stay.
fn crc_mismatch_no_summary(bag: &Path) -> Story {
    let story = crc_mismatch(bag);
    let part = part_paths(bag).remove(0);
    let bytes = std::fs::read(&part).unwrap();
    let (_, data_end, data_end_len) = records(&bytes)
        .into_iter()
        .find(|&(op, ..)| op == OP_DATA_END)
        .expect("DataEnd");
    let mut cut = bytes[..data_end + data_end_len].to_vec();
    cut.push(OP_FOOTER);
    cut.extend_from_slice(&20u64.to_le_bytes());
    cut.extend_from_slice(&[0; 20]);
    cut.extend_from_slice(MAGIC);
    std::fs::write(&part, &cut).unwrap();
    // metadata.yaml describes the part as it was written; the part is what is read.
    story
}

fn no_end_magic(bag: &Path) -> Story {
    let part = clean_bag(bag, Compression::Zstd);
    let bytes = std::fs::read(&part).unwrap();
    std::fs::write(&part, &bytes[..bytes.len() - MAGIC.len()]).unwrap();
    Story::NotWhole {
        part: part.file_name().unwrap().to_string_lossy().into_owned(),
    }
}

// ---- the tools ------------------------------------------------------------------------------

fn run(tool: &str, bag: &Path, scratch: &Path) -> Run {
    let bag = bag.as_os_str();
    match tool {
        "export" => {
            let out = scratch.join("export");
            common::bag(&["export".as_ref(), bag, "-o".as_ref(), out.as_os_str()])
        }
        "play" => common::bag(&[
            "play".as_ref(),
            bag,
            "--rate".as_ref(),
            "1000".as_ref(),
            "--wait".as_ref(),
            "0".as_ref(),
        ]),
        _ => common::bag(&[tool.as_ref(), bag]),
    }
}

/// What the library read finds: messages read, and every line it reports (known loss, then
/// each issue), with the chunk damages among them.
fn library(bag: &Path) -> (u64, Vec<String>, Vec<ChunkDamage>) {
    let reader = bag::BagReader::open(bag).expect("open");
    let mut cursor = reader.messages(&ReadFilter::all()).expect("read");
    let mut n = 0;
    while cursor.next_message().is_some() {
        n += 1;
    }
    let mut lines = reader.known_loss();
    lines.extend(cursor.issues().iter().map(ToString::to_string));
    let mut chunks: Vec<ChunkDamage> = reader
        .parts()
        .iter()
        .flat_map(|p| p.damaged_chunks.clone())
        .collect();
    chunks.extend(cursor.issues().iter().filter_map(|i| i.skipped.clone()));
    chunks.dedup();
    // The check that needs no message read (for `bag info`) must find the same chunks.
    let checked = reader.damaged_chunks().expect("checking chunks");
    assert_eq!(
        checked, chunks,
        "BagReader::damaged_chunks against the read"
    );
    (n, lines, chunks)
}

/// Why `tool`'s report of the row disagrees with `story`, if it does.
fn disagreement(tool: &str, bag: &Path, scratch: &Path, story: &Story) -> Option<String> {
    if tool == "library" {
        let (read, lines, chunks) = library(bag);
        if lines.is_empty() {
            return Some("no known loss and no issue: it reads as complete".into());
        }
        if read != MESSAGES - story.lost() {
            return Some(format!(
                "read {read} messages, expected {}",
                MESSAGES - story.lost()
            ));
        }
        return match story {
            Story::Chunk(c) if chunks != [c.clone()] => Some(format!("chunk damage {chunks:?}")),
            Story::NotWhole { .. } if !lines.iter().any(|l| l.contains("magic")) => {
                Some(format!("no line says the magic is missing: {lines:?}"))
            }
            _ if !lines.iter().any(|l| l.contains(&story.line())) => {
                Some(format!("no line with {:?}: {lines:?}", story.line()))
            }
            _ => None,
        };
    }
    let run = run(tool, bag, scratch);
    if run.code != Some(3) {
        return Some(format!(
            "exit {:?}, expected 3; stderr: {}",
            run.code, run.stderr
        ));
    }
    // The readers say it on stderr, as a diagnostic; for verify it is part of its report, on
    // stdout.
    let said = if tool == "verify" {
        &run.stdout
    } else {
        &run.stderr
    };
    if !said.contains(&story.line()) {
        return Some(format!("{tool} does not say {:?}: {said}", story.line()));
    }
    // The part is not whole because its end magic is missing: the tools that say why say so.
    if matches!(story, Story::NotWhole { .. })
        && matches!(tool, "cat" | "verify" | "play")
        // verify lists its findings (the one that says so among them) on stdout.
        && !format!("{}{}", run.stdout, run.stderr).contains("magic")
    {
        return Some(format!(
            "stderr does not say the magic is missing: {}",
            run.stderr
        ));
    }
    if tool == "cat" {
        let printed = run.stdout.lines().count() as u64;
        if printed != MESSAGES - story.lost() {
            return Some(format!(
                "printed {printed} messages, expected {}",
                MESSAGES - story.lost()
            ));
        }
    }
    if tool == "verify"
        && let Story::Chunk(c) = story
    {
        let json = common::bag(&["verify".as_ref(), "--json".as_ref(), bag.as_os_str()]);
        let report: serde_json::Value = serde_json::from_str(&json.stdout).ok()?;
        let listed = &report["parts"][0]["damaged_chunks"];
        let expected = serde_json::to_value([c]).unwrap();
        if *listed != expected {
            return Some(format!(
                "--json damaged_chunks {listed}, expected {expected}"
            ));
        }
    }
    None
}

#[test]
fn every_damage_kind_through_every_read_tool() {
    let mut failures = Vec::new();
    let mut table = String::from("damage | part | bytes | lost | ");
    table.push_str(&TOOLS.join(" | "));
    table.push('\n');
    for row in rows() {
        let tmp = tempfile::tempdir().unwrap();
        let bag = tmp.path().join("drive");
        let story = (row.damage)(&bag);
        let (part, bytes, lost) = match &story {
            Story::Chunk(c) => (
                c.part.clone(),
                format!("{}..{}", c.offset, c.end),
                format!("{:?}", c.lost_messages),
            ),
            Story::NotWhole { part } => (part.clone(), "end".into(), "0".into()),
        };
        table.push_str(&format!("{} | {part} | {bytes} | {lost}", row.name));
        for tool in TOOLS {
            let problem = disagreement(tool, &bag, tmp.path(), &story);
            table.push_str(if problem.is_some() {
                " | DISAGREES"
            } else {
                " | agrees"
            });
            if let Some(p) = problem {
                failures.push(format!("{} / {tool}: {p}", row.name));
            }
        }
        table.push('\n');
    }
    eprintln!("{table}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
