//! `--screenshot-to OUT.png`: once the recording is loaded (a live capture once its plots
//! hold several seconds), render a few more frames, write the last as a PNG and close the
//! window, leaving the exit code for `main`.

use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::Error;

/// Frames rendered after loading before the screenshot, so the plots have their final window
/// and points.
const FRAMES_BEFORE_SHOT: u32 = 4;

/// How long loading may take before the screenshot gives up.
const LOAD_TIMEOUT: Duration = Duration::from_secs(300);

/// A pending `--screenshot-to`.
#[derive(Debug)]
pub struct ScreenshotJob {
    out: PathBuf,
    frames_ready: u32,
    requested: bool,
    started: Instant,
    /// Filled by the thread that writes the PNG.
    result: Arc<Mutex<Option<Result<(), Error>>>>,
    exit_code: Arc<AtomicI32>,
}

impl ScreenshotJob {
    /// Writes to `out`; the exit code lands in `exit_code` (0 written, 1 failed).
    pub fn new(out: PathBuf, exit_code: Arc<AtomicI32>) -> Self {
        ScreenshotJob {
            out,
            frames_ready: 0,
            requested: false,
            started: Instant::now(),
            result: Arc::new(Mutex::new(None)),
            exit_code,
        }
    }

    /// Called after each frame: `ready` when what is open is ready to be shown, `failed` when
    /// opening it failed. Returns true once finished (the window is then asked to close).
    pub fn after_frame(
        &mut self,
        ctx: &egui::Context,
        ready: bool,
        failed: Option<&Error>,
    ) -> bool {
        let written = self.result.lock().ok().and_then(|mut r| r.take());
        let outcome = match (written.as_ref(), failed) {
            (Some(Ok(())), _) => {
                eprintln!("scope: wrote {}", self.out.display());
                Some(0)
            }
            (Some(Err(e)), _) | (None, Some(e)) => {
                eprintln!("scope: {}", e.report());
                Some(1)
            }
            (None, None) if self.started.elapsed() > LOAD_TIMEOUT => {
                eprintln!("scope: {}", Error::LoadTimeout);
                Some(1)
            }
            (None, None) => None,
        };
        if let Some(code) = outcome {
            self.exit_code.store(code, Ordering::SeqCst);
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return true;
        }
        if ready {
            self.frames_ready += 1;
        }
        if self.frames_ready >= FRAMES_BEFORE_SHOT && !self.requested {
            self.requested = true;
            let out = self.out.clone();
            let slot = Arc::clone(&self.result);
            let repaint = ctx.clone();
            ctx.request_screenshot(move |image| {
                std::thread::spawn(move || {
                    let r = write_png(&image, &out);
                    if let Ok(mut s) = slot.lock() {
                        *s = Some(r);
                    }
                    repaint.request_repaint();
                });
            });
        }
        ctx.request_repaint_after(Duration::from_millis(50));
        false
    }
}

/// Writes an egui screenshot as an RGBA PNG.
pub fn write_png(image: &egui::ColorImage, path: &Path) -> Result<(), Error> {
    let [w, h] = image.size;
    let (Ok(width), Ok(height)) = (u32::try_from(w), u32::try_from(h)) else {
        return Err(Error::ImageTooLarge {
            width: w,
            height: h,
        });
    };
    let file = std::fs::File::create(path).map_err(|source| Error::Io {
        what: "creating",
        path: path.to_path_buf(),
        source,
    })?;
    let failed = |source| Error::Png {
        path: path.to_path_buf(),
        source,
    };
    let mut encoder = png::Encoder::new(BufWriter::new(file), width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(failed)?;
    let bytes: Vec<u8> = image
        .pixels
        .iter()
        .flat_map(|c| c.to_srgba_unmultiplied())
        .collect();
    writer.write_image_data(&bytes).map_err(failed)?;
    writer.finish().map_err(failed)
}
