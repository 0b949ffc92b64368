//! `cargo +nightly fuzz run verify`: verify must never panic, whatever the bytes.
//!
//! Seed the corpus with real parts for depth, e.g.
//! `mkdir -p corpus/verify && cp ../../shared/oracles/foxglove-mcap/conformance/data/*/*.mcap corpus/verify/`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let report = bag::verify::verify_bytes("fuzz.mcap", data);
    // Cheap invariants on the report itself.
    assert_eq!(report.size_bytes, data.len() as u64);
    assert!(report.findings.len() as u64 <= report.error_count + report.warning_count);
    if data.is_empty() {
        assert!(!report.is_valid());
    }
});
