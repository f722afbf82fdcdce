//! QR codes of activation codes: the module grid, and a PNG of it (what `qrCodeUrl` serves).

use qrcode::{Color, EcLevel, QrCode};

/// A square grid of modules, `true` for dark, without the quiet zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QrMatrix {
    pub width: usize,
    pub dark: Vec<bool>,
}

/// The standard quiet zone around a code, in modules.
pub const QUIET_ZONE: usize = 4;

impl QrMatrix {
    /// Encodes text at error-correction level M (survives a screen's glare and moiré).
    pub fn encode(text: &str) -> Result<Self, String> {
        let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M)
            .map_err(|e| format!("cannot encode this text as a QR code: {e}"))?;
        let dark = code.to_colors().into_iter().map(|c| c == Color::Dark).collect();
        Ok(Self {
            width: code.width(),
            dark,
        })
    }

    /// Whether the module at (x, y) is dark; outside the grid (the quiet zone) it is light.
    pub fn is_dark(&self, x: isize, y: isize) -> bool {
        let w = self.width as isize;
        (0..w).contains(&x) && (0..w).contains(&y) && self.dark[(y * w + x) as usize]
    }

    /// A grayscale PNG, `scale` pixels a module, with the quiet zone.
    pub fn to_png(&self, scale: usize) -> Result<Vec<u8>, String> {
        let side = (self.width + 2 * QUIET_ZONE) * scale;
        let mut pixels = vec![255u8; side * side];
        for (i, px) in pixels.iter_mut().enumerate() {
            let x = (i % side / scale) as isize - QUIET_ZONE as isize;
            let y = (i / side / scale) as isize - QUIET_ZONE as isize;
            if self.is_dark(x, y) {
                *px = 0;
            }
        }
        let side = u32::try_from(side).map_err(|_| "the image would be too large".to_string())?;
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, side, side);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(&pixels).map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_an_activation_code_into_a_png() {
        let m = QrMatrix::encode("LPA:1$rsp.esim.example$ABCDEF123456").unwrap();
        assert_eq!(m.width, 29, "35 bytes at level M fit version 3");
        assert!(m.is_dark(0, 0), "finder pattern corner");
        assert!(!m.is_dark(-1, 0), "quiet zone is light");
        let png = m.to_png(4).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }
}
