//! `--screenshot-to OUT.png`: write the rendered frame as a PNG.

use std::io::BufWriter;
use std::path::Path;

use crate::error::Error;

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
