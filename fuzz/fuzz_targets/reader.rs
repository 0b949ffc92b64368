//! BagReader on arbitrary bytes as a single `.mcap` file: open, list, read every message.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("redline-fuzz-reader-{}.mcap", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(reader) = bag::BagReader::open(&path) {
        let _ = (reader.message_count(), reader.time_range_ns(), reader.channels().len());
        if let Ok(mut cursor) = reader.messages(&bag::ReadFilter::all()) {
            while let Some(m) = cursor.next_message() {
                std::hint::black_box(m.data.len());
            }
        }
    }
});
