//! `--screenshot-to OUT.png`: write the rendered frame as a PNG.

use std::io::BufWriter;
use std::path::Path;

/// Writes an egui screenshot as an RGBA PNG.
pub fn write_png(image: &egui::ColorImage, path: &Path) -> Result<(), String> {
    let [w, h] = image.size;
    let file =
        std::fs::File::create(path).map_err(|e| format!("creating {}: {e}", path.display()))?;
    let width = u32::try_from(w).map_err(|_| "image too wide".to_owned())?;
    let height = u32::try_from(h).map_err(|_| "image too tall".to_owned())?;
    let mut encoder = png::Encoder::new(BufWriter::new(file), width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder
        .write_header()
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    let bytes: Vec<u8> = image
        .pixels
        .iter()
        .flat_map(|c| c.to_srgba_unmultiplied())
        .collect();
    writer
        .write_image_data(&bytes)
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    writer
        .finish()
        .map_err(|e| format!("writing {}: {e}", path.display()))
}
