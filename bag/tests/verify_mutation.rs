//! Verify never panics and never allocates beyond a bound proportional to its input, on damaged
//! copies of valid parts (conformance files, `mcap`-crate files, our writer's parts) and on
//! arbitrary bytes.
//!
//! Allocation is measured with a counting global allocator (per thread, so parallel tests do not
//! disturb each other). More cases: `PROPTEST_CASES=100000 cargo test -p bag --release --test
//! verify_mutation`.

// The counting allocator is the only unsafe code here, and it only forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::OnceLock;

mod common;
use common::{files_named, oracle_dir};

use proptest::prelude::*;
use proptest::sample::Index;

// ---- allocation accounting -----------------------------------------------------------------

struct Counting;

thread_local! {
    static NET: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn account(delta: isize) {
    let _ = NET.try_with(|net| {
        let now = net.get() + delta;
        net.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// bookkeeping touches only const-initialised thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            account(layout.size() as isize);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            account(layout.size() as isize);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) };
        account(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            account(new_size as isize - layout.size() as isize);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Peak bytes allocated (net of frees) on this thread while `f` runs.
fn peak_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    NET.with(|n| n.set(0));
    PEAK.with(|p| p.set(0));
    let out = f();
    let peak = PEAK.with(|p| p.get());
    (out, peak.max(0) as usize)
}

/// What verify may allocate for an input of `len` bytes: a multiple of the input plus a fixed
/// allowance (the dense channel table, zstd and LZ4 decoder state, a decompressed chunk of the
/// small test files).
fn allocation_bound(len: usize) -> usize {
    64 * len + 16 * 1024 * 1024
}

/// Verifies and checks the allocation bound; panics inside verify fail the property.
fn verify_within_bounds(bytes: &[u8]) -> Result<bag::verify::Report, TestCaseError> {
    let (report, peak) = peak_allocation(|| bag::verify::verify_bytes("mutant.mcap", bytes));
    prop_assert!(
        peak <= allocation_bound(bytes.len()),
        "verify allocated {peak} bytes for a {}-byte input",
        bytes.len()
    );
    Ok(report)
}

// ---- corpus --------------------------------------------------------------------------------

fn conformance_files() -> Vec<Vec<u8>> {
    let Some(root) = oracle_dir("foxglove-mcap/conformance/data") else {
        return Vec::new();
    };
    files_named(&root, &|p| p.extension().is_some_and(|e| e == "mcap"))
        .iter()
        .map(|p| std::fs::read(p).expect("read conformance file"))
        .collect()
}

fn mcap_crate_file(compression: Option<mcap::Compression>) -> Vec<u8> {
    let mut cursor = std::io::Cursor::new(Vec::new());
    {
        let mut writer = mcap::WriteOptions::new()
            .compression(compression)
            .chunk_size(Some(1024))
            .create(&mut cursor)
            .expect("mcap writer");
        let schema = writer
            .add_schema("engine_rpm.capnp:EngineRpm", "capnproto", b"\x01\x02")
            .expect("schema");
        let a = writer
            .add_channel(schema, "a", "capnproto", &BTreeMap::new())
            .expect("channel");
        let b = writer
            .add_channel(0, "b", "json", &BTreeMap::new())
            .expect("channel");
        for i in 0..200u64 {
            let header = mcap::records::MessageHeader {
                channel_id: if i % 4 == 0 { b } else { a },
                sequence: i as u32,
                log_time: 1_000 + i * 7 - (i % 5),
                publish_time: 1_000 + i * 7,
            };
            writer
                .write_to_known_channel(&header, &i.to_le_bytes().repeat(3))
                .expect("write");
        }
        writer
            .attach(&mcap::Attachment {
                log_time: 1,
                create_time: 2,
                name: "a.txt".into(),
                media_type: "text/plain".into(),
                data: std::borrow::Cow::Borrowed(b"attached"),
            })
            .expect("attach");
        writer
            .write_metadata(&mcap::records::Metadata {
                name: "m".into(),
                metadata: BTreeMap::from([("k".to_owned(), "v".to_owned())]),
            })
            .expect("metadata");
        writer.finish().expect("finish");
    }
    cursor.into_inner()
}

fn our_writer_part() -> Vec<u8> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("drive");
    let mut writer = bag::BagWriter::create(&path, bag::WriteOptions::new().chunk_size_bytes(1024))
        .expect("create");
    let rpm = writer.add_channel(bag::ChannelSpec::capnp(
        "vehicle/engine/rpm",
        "EngineRpm",
        "engine_rpm.capnp:EngineRpm",
        vec![1, 2, 3],
    ));
    for i in 0..300u64 {
        writer
            .write(rpm, 1_000 + i, Some(990 + i), &i.to_le_bytes())
            .expect("write");
    }
    writer.close().expect("close");
    let part = std::fs::read_dir(&path)
        .expect("list bag")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "mcap"))
        .expect("a part");
    std::fs::read(part).expect("read part")
}

fn corpus() -> &'static [Vec<u8>] {
    static CORPUS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut files = vec![
            mcap_crate_file(None),
            mcap_crate_file(Some(mcap::Compression::Zstd)),
            mcap_crate_file(Some(mcap::Compression::Lz4)),
            our_writer_part(),
        ];
        files.extend(conformance_files());
        for file in &files {
            assert!(
                bag::verify::verify_bytes("seed.mcap", file).is_valid(),
                "every seed verifies clean"
            );
        }
        files
    })
}

/// Offsets of the length fields of the top-level records (our own walk, for targeted damage).
fn length_fields(bytes: &[u8]) -> Vec<usize> {
    let mut fields = Vec::new();
    let mut pos: usize = 8;
    while pos.saturating_add(9) <= bytes.len().saturating_sub(8) {
        fields.push(pos + 1);
        let len = u64::from_le_bytes(bytes[pos + 1..pos + 9].try_into().expect("8 bytes"));
        let Some(next) = usize::try_from(len)
            .ok()
            .and_then(|l| (pos + 9).checked_add(l))
        else {
            break;
        };
        pos = next;
    }
    fields
}

// ---- mutations -----------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Mutation {
    Truncate(Index),
    FlipBit(Index, u8),
    /// Set a top-level record's length field.
    Length(Index, LengthValue),
    /// Overwrite 8 bytes anywhere (sizes, offsets, counts, times are all u64).
    Overwrite64(Index, u64),
    Insert(Index, Vec<u8>),
    Delete(Index, u16),
}

#[derive(Clone, Debug)]
enum LengthValue {
    Delta(i16),
    Exact(u64),
}

fn length_value() -> impl Strategy<Value = LengthValue> {
    prop_oneof![
        any::<i16>().prop_map(LengthValue::Delta),
        prop_oneof![
            Just(0u64),
            Just(1),
            Just(u64::MAX),
            Just(u64::MAX - 8),
            Just(1 << 32),
            Just(1 << 40),
            any::<u64>(),
        ]
        .prop_map(LengthValue::Exact),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => any::<Index>().prop_map(Mutation::Truncate),
        3 => (any::<Index>(), 0u8..8).prop_map(|(i, b)| Mutation::FlipBit(i, b)),
        3 => (any::<Index>(), length_value()).prop_map(|(i, v)| Mutation::Length(i, v)),
        1 => (any::<Index>(), prop_oneof![Just(0u64), Just(u64::MAX), any::<u64>(), 0u64..4096])
            .prop_map(|(i, v)| Mutation::Overwrite64(i, v)),
        1 => (any::<Index>(), prop::collection::vec(any::<u8>(), 1..32))
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        1 => (any::<Index>(), 1u16..256).prop_map(|(i, n)| Mutation::Delete(i, n)),
    ]
}

fn apply(bytes: &mut Vec<u8>, mutation: &Mutation) {
    if bytes.is_empty() {
        return;
    }
    match mutation {
        Mutation::Truncate(i) => bytes.truncate(i.index(bytes.len())),
        Mutation::FlipBit(i, bit) => {
            let at = i.index(bytes.len());
            bytes[at] ^= 1 << bit;
        }
        Mutation::Length(i, value) => {
            let fields = length_fields(bytes);
            if fields.is_empty() {
                return;
            }
            let at = fields[i.index(fields.len())];
            let old = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
            let new = match value {
                LengthValue::Delta(d) => old.wrapping_add(*d as i64 as u64),
                LengthValue::Exact(v) => *v,
            };
            bytes[at..at + 8].copy_from_slice(&new.to_le_bytes());
        }
        Mutation::Overwrite64(i, value) => {
            let at = i.index(bytes.len());
            let end = (at + 8).min(bytes.len());
            bytes[at..end].copy_from_slice(&value.to_le_bytes()[..end - at]);
        }
        Mutation::Insert(i, inserted) => {
            let at = i.index(bytes.len() + 1);
            bytes.splice(at..at, inserted.iter().copied());
        }
        Mutation::Delete(i, n) => {
            let at = i.index(bytes.len());
            let end = (at + usize::from(*n)).min(bytes.len());
            bytes.drain(at..end);
        }
    }
}

/// Random but well-framed records, so field parsers (not just framing) see hostile bodies.
fn framed_records() -> impl Strategy<Value = Vec<u8>> {
    let opcode = prop_oneof![1u8..=0x0F, Just(0u8), 0x10u8..=0xFF];
    let body = prop::collection::vec(
        prop_oneof![Just(0u8), Just(0xFF), any::<u8>(), 1u8..8],
        0..96,
    );
    (prop::collection::vec((opcode, body), 0..24), any::<bool>()).prop_map(|(records, tail)| {
        let mut out = b"\x89MCAP0\r\n".to_vec();
        for (opcode, body) in records {
            out.push(opcode);
            out.extend_from_slice(&(body.len() as u64).to_le_bytes());
            out.extend_from_slice(&body);
        }
        if tail {
            out.extend_from_slice(b"\x89MCAP0\r\n");
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_valid_parts_never_panic_and_stay_bounded(
        seed in any::<Index>(),
        mutations in prop::collection::vec(mutation(), 1..5),
    ) {
        let corpus = corpus();
        let mut bytes = corpus[seed.index(corpus.len())].clone();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        let report = verify_within_bounds(&bytes)?;
        prop_assert_eq!(report.size_bytes, bytes.len() as u64);
        // Every finding renders as one line.
        for finding in &report.findings {
            prop_assert!(!finding.to_string().contains('\n'));
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        verify_within_bounds(&bytes)?;
        let mut with_magic = b"\x89MCAP0\r\n".to_vec();
        with_magic.extend_from_slice(&bytes);
        verify_within_bounds(&with_magic)?;
    }

    #[test]
    fn well_framed_random_records_never_panic(bytes in framed_records()) {
        verify_within_bounds(&bytes)?;
    }
}

/// The bound is not vacuous: verify of a clean part allocates a small multiple of its size.
#[test]
fn clean_parts_allocate_little() {
    for file in corpus().iter().take(4) {
        let (report, peak) = peak_allocation(|| bag::verify::verify_bytes("seed.mcap", file));
        assert!(report.is_valid());
        assert!(peak > 0, "the counting allocator is in use");
        assert!(
            peak <= allocation_bound(file.len()),
            "{peak} for {}",
            file.len()
        );
    }
}

/// A chunk claiming a huge uncompressed size is refused without allocating it.
#[test]
fn lying_chunk_sizes_are_not_allocated() {
    let mut bytes = mcap_crate_file(Some(mcap::Compression::Zstd));
    let fields = length_fields(&bytes);
    // The first Chunk: uncompressed_size is the third u64 of its body.
    let chunk = fields
        .iter()
        .map(|f| f - 1)
        .find(|&at| bytes[at] == 0x06)
        .expect("a chunk");
    let size_at = chunk + 9 + 16;
    for claimed in [u64::MAX, 1 << 40, 200 << 20, 10 << 20] {
        bytes[size_at..size_at + 8].copy_from_slice(&claimed.to_le_bytes());
        let (report, peak) = peak_allocation(|| bag::verify::verify_bytes("lie.mcap", &bytes));
        assert!(!report.is_valid());
        assert!(
            peak < 4 * 1024 * 1024,
            "claimed {claimed}: allocated {peak} bytes"
        );
    }
}

/// Hostile summaries stay linear: alternating opcodes (ungrouped), thousands of SummaryOffsets,
/// repeated Statistics. A quadratic check would take minutes here.
#[test]
fn hostile_summaries_verify_in_linear_time() {
    fn record(out: &mut Vec<u8>, opcode: u8, body: &[u8]) {
        out.push(opcode);
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(body);
    }
    let mut bytes = b"\x89MCAP0\r\n".to_vec();
    record(&mut bytes, 0x01, &[0; 8]);
    let mut channel = 1u16.to_le_bytes().to_vec();
    channel.extend_from_slice(&[0; 2 + 4 + 4 + 4]);
    for id in 0..2_000u16 {
        channel[..2].copy_from_slice(&id.to_le_bytes());
        record(&mut bytes, 0x04, &channel);
    }
    record(&mut bytes, 0x0F, &[0; 4]);
    for i in 0..60_000u32 {
        record(&mut bytes, 0x80 + (i % 2) as u8, &[]);
    }
    let mut stats = vec![0u8; 8 + 2 + 4 * 4 + 16];
    stats.extend_from_slice(&0u32.to_le_bytes());
    for _ in 0..20_000 {
        record(&mut bytes, 0x0B, &stats);
    }
    for i in 0..40_000u64 {
        let mut body = vec![0x80];
        body.extend_from_slice(&(i * 9).to_le_bytes());
        body.extend_from_slice(&9u64.to_le_bytes());
        record(&mut bytes, 0x0E, &body);
    }
    record(&mut bytes, 0x02, &[0; 20]);
    bytes.extend_from_slice(b"\x89MCAP0\r\n");

    let started = std::time::Instant::now();
    let report = bag::verify::verify_bytes("hostile.mcap", &bytes);
    let elapsed = started.elapsed();
    assert!(!report.is_valid());
    assert!(
        elapsed < std::time::Duration::from_secs(10),
        "verify took {elapsed:?} on a {}-byte hostile summary",
        bytes.len()
    );
}
