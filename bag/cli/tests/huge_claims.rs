//! Issue 24 item 10: a small (sparse) file whose records claim GiBs must not make `bag` allocate
//! what they claim. Each run has an address-space limit far below the claim: an allocation sized
//! by the claim aborts the child (a signal), which the test reports.

mod common;

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use common::bag;

const MAGIC: &[u8] = b"\x89MCAP0\r\n";

fn record(out: &mut Vec<u8>, opcode: u8, body_len: u64, body: &[u8]) {
    out.push(opcode);
    out.extend_from_slice(&body_len.to_le_bytes());
    out.extend_from_slice(body);
}

/// Magic, a Header, then a record of `opcode` claiming `claim` bytes; the file is made
/// `claim + 4096` bytes long with `set_len`, so the claim fits in it but nothing is there.
fn sparse_claim(path: &Path, opcode: u8, claim: u64, body_start: &[u8]) {
    let mut head = MAGIC.to_vec();
    record(&mut head, 0x01, 8, &[0; 8]);
    record(&mut head, opcode, claim, body_start);
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(&head).unwrap();
    file.set_len(claim + 4096).unwrap();
}

const GIB: u64 = 1024 * 1024 * 1024;

#[test]
fn a_sparse_file_claiming_a_12_gib_chunk_is_damage_not_an_allocation() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("huge.mcap");
    sparse_claim(&file, 0x06, 12 * GIB, &[]);
    for command in ["info", "cat"] {
        let run = bag(&[command.as_ref(), file.as_os_str()]);
        run.assert_code(3, command);
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(
            said.contains("larger than"),
            "{command}: the reason names the limit\n{run:#?}"
        );
    }
}

#[test]
fn a_sparse_file_claiming_a_3_gib_message_is_damage_not_an_allocation() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("huge.mcap");
    sparse_claim(&file, 0x05, 3 * GIB, &[]);
    for command in ["info", "cat"] {
        bag(&[command.as_ref(), file.as_os_str()]).assert_code(3, command);
    }
}

#[test]
fn a_footer_claiming_a_12_gib_summary_is_not_read_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("huge.mcap");
    let len = 12 * GIB;
    let mut head = MAGIC.to_vec();
    record(&mut head, 0x01, 8, &[0; 8]);
    let mut f = std::fs::File::create(&file).unwrap();
    f.write_all(&head).unwrap();
    // Footer at the end: summary from byte 25, no summary offsets, then the magic.
    let mut tail = Vec::new();
    let mut footer = Vec::new();
    footer.extend_from_slice(&(head.len() as u64).to_le_bytes());
    footer.extend_from_slice(&0u64.to_le_bytes());
    footer.extend_from_slice(&0u32.to_le_bytes());
    record(&mut tail, 0x02, 20, &footer);
    tail.extend_from_slice(MAGIC);
    f.seek(SeekFrom::Start(len - tail.len() as u64)).unwrap();
    f.write_all(&tail).unwrap();
    for command in ["info", "cat"] {
        bag(&[command.as_ref(), file.as_os_str()]).assert_code(3, command);
    }
}

/// `bag info` counts the messages of a part without a summary from their headers: a 200 MiB
/// message is not read, so info runs in less address space than the message takes.
#[test]
fn info_counts_a_200_mib_message_without_reading_it() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("big.mcap");
    let mut head = MAGIC.to_vec();
    record(&mut head, 0x01, 8, &[0; 8]);
    let payload = 200 * 1024 * 1024u64;
    let mut header = Vec::new();
    header.extend_from_slice(&0u16.to_le_bytes()); // channel
    header.extend_from_slice(&0u32.to_le_bytes()); // sequence
    header.extend_from_slice(&1u64.to_le_bytes()); // log time
    header.extend_from_slice(&1u64.to_le_bytes()); // publish time
    record(&mut head, 0x05, header.len() as u64 + payload, &header);
    let mut f = std::fs::File::create(&file).unwrap();
    f.write_all(&head).unwrap();
    f.set_len(head.len() as u64 + payload).unwrap();
    let run = common::bag_limited(
        &["info".as_ref(), file.as_os_str()],
        common::TIME_LIMIT,
        150 * 1024 * 1024,
    );
    // Torn (no footer), so 3; the message is counted.
    run.assert_code(3, "info");
    assert!(run.stdout.contains("messages:    1"), "{run:#?}");
}

/// `bag verify` reports a record over its limit and moves past it without reading it: a
/// 64 GiB claim in a sparse file takes no longer than a small file (streaming 64 GiB of holes
/// through a CRC took over half a minute).
#[test]
fn verify_moves_past_a_64_gib_claim_without_reading_it() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("huge.mcap");
    sparse_claim(&file, 0x06, 64 * GIB, &[]);
    let run = bag(&["verify".as_ref(), file.as_os_str()]);
    run.assert_code(3, "verify");
    assert!(run.stdout.contains("the verify limit"), "{run:#?}");
}
