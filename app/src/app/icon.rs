//! The window's icon: `assets/icon-256.png` (drawn by `assets/make_icon.py`), embedded in the
//! binary so the app needs no files beside it.

/// The PNG, as committed.
const ICON_PNG: &[u8] = include_bytes!("../../../assets/icon-256.png");

/// The application icon, for `egui::ViewportBuilder::with_icon`. The PNG is embedded and
/// checked by a test; were it ever unreadable, the window would get the platform's default
/// icon (an empty [`egui::IconData`]) rather than the app failing to start.
pub fn icon() -> egui::IconData {
    eframe::icon_data::from_png_bytes(ICON_PNG).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_icon_decodes_to_256_pixels_square() {
        let icon = eframe::icon_data::from_png_bytes(ICON_PNG).expect("a PNG");
        assert_eq!((icon.width, icon.height), (256, 256));
        assert_eq!(icon.rgba.len(), 256 * 256 * 4);
        assert_eq!(super::icon(), icon);
    }
}
