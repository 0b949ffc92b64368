//! `scope [PATH | --demo-recording | --connect ENDPOINT] [--layout FILE.yaml]
//! [--screenshot-to OUT.png]` (see `scope --help`)

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use scope::Scope;

fn main() -> ExitCode {
    let args = match scope::cli::parse(std::env::args_os()) {
        Ok(a) => a,
        // Help and version on stdout with 0, a mistake on stderr with 2.
        Err(e) => e.exit(),
    };
    let exit_code = Arc::new(AtomicI32::new(0));
    let screenshot = args.screenshot_to.is_some();
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("Redline Scope")
            .with_inner_size([1280.0, 800.0])
            .with_drag_and_drop(true)
            .with_icon(scope::icon()),
        // A screenshot must not depend on what an earlier session saved.
        persist_window: !screenshot,
        ..Default::default()
    };
    let code = Arc::clone(&exit_code);
    let result = eframe::run_native(
        "redline-scope",
        options,
        Box::new(move |cc| {
            let mut app = Scope::new(scope::app::open::native_dialog());
            if !screenshot {
                app.persisted = scope::app::restore(cc.storage);
            }
            match (args.path, args.live) {
                (Some(p), _) => app.open_with_default_layout(p),
                (None, Some(live)) => app.start_live(live),
                (None, None) if args.demo_recording => app.open_demo_recording(),
                (None, None) => app.open_demo(),
            }
            if let Some(second) = args.compare {
                app.open_second(second);
            }
            if let Some(layout) = args.layout {
                app.open_layout_from(layout);
            }
            if let Some(out) = args.screenshot_to {
                app.screenshot_to(out, code);
            }
            Ok(Box::new(app))
        }),
    );
    if let Err(e) = result {
        eprintln!("scope: {e}");
        return ExitCode::FAILURE;
    }
    match exit_code.load(Ordering::SeqCst) {
        0 => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}
