//! Issue 23, item 4: File > Export Signals writes the plotted signals between the cursors on
//! one time column, exactly (64-bit integers as the messages carried them), as CSV or Parquet,
//! and pandas and polars read both back with the right types.

use std::path::Path;
use std::sync::Arc;

use bag::WriteOptions;
use egui_kittest::kittest::Queryable;
use scope::Scope;
use scope::data::layout::{Layout, PlotSpec};

mod common;
use common::{
    T0, V, cdr_bag, harness, loaded, python_can_import, run_python_peer, signal, step_until,
};

const MS: u64 = 1_000_000;

/// `ramp` = i at 10 i ms; `big` = u64::MAX - 100 + i at 20 i + 5 ms.
fn bag(dir: &Path) -> std::path::PathBuf {
    let ramp = (0..=100u64)
        .map(|i| (i * 10 * MS, V::F(i as f64)))
        .collect();
    let big = (0..=50u64)
        .map(|i| ((20 * i + 5) * MS, V::U(u64::MAX - 100 + i)))
        .collect();
    cdr_bag(
        dir,
        T0,
        &[("ramp", ramp), ("big", big)],
        WriteOptions::new(),
    )
}

#[test]
fn export_signals_writes_the_cursor_range_on_one_time_column_exactly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let csv = dir.path().join("signals.csv");
    let parquet = dir.path().join("signals.parquet");
    // The dialog gives the CSV name first, then the Parquet one.
    let names = std::sync::Mutex::new(vec![parquet.clone(), csv.clone()]);
    let mut h = harness(Scope::new(Arc::new(move |_| {
        names.lock().ok().and_then(|mut n| n.pop())
    })));
    h.state_mut().open(bag(dir.path()));
    step_until(&mut h, "the recording to load", loaded);
    *h.state_mut().layout_mut() = Layout {
        plots: vec![PlotSpec {
            signals: vec![signal("ramp"), signal("big")],
            ..PlotSpec::default()
        }],
        ..Layout::default()
    };
    h.state_mut().playback.playhead_ns = T0 + 100 * MS;
    h.key_press(egui::Key::A);
    h.run_steps(2);
    h.state_mut().playback.playhead_ns = T0 + 300 * MS;
    h.key_press(egui::Key::B);
    h.run_steps(2);
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Export Signals...").click();
    h.run_steps(2);
    step_until(&mut h, "the export", |s| {
        !s.is_exporting() && !s.is_opening()
    });
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
    let text = std::fs::read_to_string(&csv).expect("the CSV file");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "time_ns,time_s,ramp/value,big/value");
    // 21 ramp samples (100..=300 ms) and 10 big ones (105..=285 ms), at different times.
    assert_eq!(lines.len(), 1 + 31, "{text}");
    // At 100 ms `big` holds its sample from 85 ms, before the range: u64::MAX - 96.
    assert_eq!(
        lines[1],
        format!("{},0.1,10.0,18446744073709551519", T0 + 100 * MS)
    );
    assert_eq!(
        lines[2],
        format!("{},0.105,10.0,18446744073709551520", T0 + 105 * MS)
    );
    assert_eq!(
        lines[31],
        format!("{},0.3,30.0,18446744073709551529", T0 + 300 * MS)
    );
    // No partial file is left beside it.
    assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 2);

    // The same range as Parquet.
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Export Signals...").click();
    h.run_steps(2);
    step_until(&mut h, "the Parquet export", |s| {
        !s.is_exporting() && !s.is_opening()
    });
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
    assert!(parquet.exists());

    if !python_can_import("pandas, polars, pyarrow", "pandas polars pyarrow") {
        return;
    }
    let read: serde_json::Value =
        serde_json::from_str(&run_python_peer("dataframe_reader.py", &parquet)).expect("JSON");
    for reader in ["pandas", "polars"] {
        let got = &read[reader];
        assert_eq!(got["rows"], 31, "{reader}");
        assert_eq!(got["first"][0], (T0 + 100 * MS).to_string(), "{reader}");
        assert_eq!(got["first"][2], "10.0", "{reader}");
        assert_eq!(got["first"][3], "18446744073709551519", "{reader}");
    }
    let pandas = &read["pandas"]["dtypes"];
    assert_eq!(pandas["time_ns"], "uint64");
    assert_eq!(pandas["ramp/value"], "float64");
    assert_eq!(pandas["big/value"], "uint64");
    let polars = &read["polars"]["dtypes"];
    assert_eq!(polars["time_ns"], "UInt64");
    assert_eq!(polars["big/value"], "UInt64");
    let read: serde_json::Value =
        serde_json::from_str(&run_python_peer("dataframe_reader.py", &csv)).expect("JSON");
    let pandas = &read["pandas"];
    assert_eq!(pandas["rows"], 31);
    assert_eq!(pandas["dtypes"]["time_ns"], "int64");
    assert_eq!(pandas["dtypes"]["ramp/value"], "float64");
    assert_eq!(pandas["dtypes"]["big/value"], "uint64");
    assert_eq!(pandas["first"][3], "18446744073709551519");
    let polars = &read["polars"];
    assert_eq!(polars["rows"], 31);
    assert_eq!(polars["dtypes"]["time_ns"], "Int64");
    assert_eq!(polars["dtypes"]["ramp/value"], "Float64");
    assert_eq!(polars["dtypes"]["big/value"], "Int128");
    assert_eq!(polars["first"][3], "18446744073709551519");
}

#[test]
fn export_with_nothing_plotted_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut h = harness(Scope::new(Arc::new(|_| None)));
    h.state_mut().open(bag(dir.path()));
    step_until(&mut h, "the recording to load", loaded);
    *h.state_mut().layout_mut() = Layout::default();
    h.state_mut().export_signals(None);
    h.run_steps(2);
    h.get_by_label_contains("no signal is plotted");
}
