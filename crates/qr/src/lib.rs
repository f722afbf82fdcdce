//! QR codes of activation codes: the module grid; drawing it as text with the 4-module quiet zone,
//! in half blocks (two module rows per terminal row) or, where there is room, in full blocks (two
//! columns and one row a module: twice as large); reading such text back; and decoding a code
//! from modules or from a PNG (what `qrCodeUrl` serves). Either way a module is about square, a
//! terminal cell being about twice as high as wide.

#![warn(clippy::too_many_lines)]

use esimdash_domain::lpa::ActivationCode;
use esimdash_domain::panic_guard::contain;
use qrcode::{Color, EcLevel, QrCode};

/// A square grid of modules, `true` for dark, without the quiet zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QrMatrix {
    pub width: usize,
    pub dark: Vec<bool>,
}

/// The standard quiet zone around a code, in modules.
pub const QUIET_ZONE: usize = 4;

/// Pixels a module in the PNG files we write: 10 px at 300 dpi prints modules near 0.85 mm,
/// a code of about 3.5 cm that any phone camera reads off paper.
pub const FILE_SCALE: usize = 10;

/// Printed size of the SVG files we write, in millimetres a side.
pub const FILE_SIZE_MM: u32 = 40;

/// Largest image decoded from `qrCodeUrl`, in pixels a side.
pub const MAX_IMAGE_SIDE: u32 = 4096;

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

    /// Columns and rows the half-block drawing takes, quiet zone included.
    pub fn half_block_size(&self) -> (usize, usize) {
        let side = self.width + 2 * QUIET_ZONE;
        (side, side.div_ceil(2))
    }

    /// The drawing: `█` both modules dark, `▀` top, `▄` bottom, space none. Meant as dark ink
    /// on a light background.
    pub fn to_half_blocks(&self) -> Vec<String> {
        let (cols, rows) = self.half_block_size();
        let q = QUIET_ZONE as isize;
        drawn(cols, rows, |col, row| {
            let (x, y) = (col - q, row * 2 - q);
            match (self.is_dark(x, y), self.is_dark(x, y + 1)) {
                (true, true) => "█",
                (true, false) => "▀",
                (false, true) => "▄",
                (false, false) => " ",
            }
        })
    }

    /// Columns and rows the full-block drawing takes, quiet zone included.
    pub fn full_block_size(&self) -> (usize, usize) {
        let side = self.width + 2 * QUIET_ZONE;
        (side * 2, side)
    }

    /// The drawing at twice the half blocks' size: `██` a dark module, two spaces a light one.
    /// Meant as dark ink on a light background.
    pub fn to_full_blocks(&self) -> Vec<String> {
        let (_, side) = self.full_block_size();
        let q = QUIET_ZONE as isize;
        drawn(side, side, |x, y| if self.is_dark(x - q, y - q) { "██" } else { "  " })
    }

    /// Reads a half-block drawing back (a screen capture, say): the dark modules' bounding box
    /// is the code. Characters other than the four blocks are an error.
    pub fn from_half_blocks(lines: &[&str]) -> Result<Self, String> {
        let mut grid: Vec<Vec<bool>> = Vec::new();
        for line in lines {
            let (mut top, mut bottom) = (Vec::new(), Vec::new());
            for c in line.chars() {
                let (t, b) = match c {
                    '█' => (true, true),
                    '▀' => (true, false),
                    '▄' => (false, true),
                    ' ' => (false, false),
                    other => return Err(format!("{other:?} is not part of a half-block QR code")),
                };
                top.push(t);
                bottom.push(b);
            }
            grid.push(top);
            grid.push(bottom);
        }
        Self::from_grid(&grid)
    }

    /// Reads a full-block drawing back: a module is two columns, from the leftmost dark one;
    /// a pair that is neither `██` nor two spaces is an error.
    pub fn from_full_blocks(lines: &[&str]) -> Result<Self, String> {
        let rows: Vec<Vec<char>> = lines.iter().map(|l| l.chars().collect()).collect();
        let left = rows
            .iter()
            .filter_map(|r| r.iter().position(|c| *c == '█'))
            .min()
            .ok_or("no dark modules")?;
        let mut grid = Vec::new();
        for row in &rows {
            let modules = row.get(left..).unwrap_or_default().chunks(2).map(|pair| match pair {
                ['█', '█'] => Ok(true),
                [' ', ' '] | [' '] => Ok(false),
                other => Err(format!("{other:?} is not a module of a full-block QR code")),
            });
            grid.push(modules.collect::<Result<Vec<bool>, String>>()?);
        }
        Self::from_grid(&grid)
    }

    /// The code in a grid of modules read off a drawing: the dark modules' bounding box.
    fn from_grid(grid: &[Vec<bool>]) -> Result<Self, String> {
        let dark_at = |x: usize, y: usize| grid.get(y).and_then(|r| r.get(x)).copied().unwrap_or(false);
        let ys: Vec<usize> = (0..grid.len()).filter(|&y| grid[y].iter().any(|d| *d)).collect();
        let xs: Vec<usize> = (0..grid.iter().map(Vec::len).max().unwrap_or(0))
            .filter(|&x| (0..grid.len()).any(|y| dark_at(x, y)))
            .collect();
        let (Some(&top), Some(&left)) = (ys.first(), xs.first()) else {
            return Err("no dark modules".to_string());
        };
        let width = xs.last().map_or(0, |r| r - left + 1);
        let height = ys.last().map_or(0, |b| b - top + 1);
        if width != height {
            return Err(format!("not square: {width}×{height} modules"));
        }
        let dark = (0..width * width)
            .map(|i| dark_at(left + i % width, top + i / width))
            .collect();
        Ok(Self { width, dark })
    }

    /// Decodes the modules with a QR decoder, as a camera would see them.
    pub fn decode(&self) -> Result<String, String> {
        let scale = 4;
        let side = (self.width + 2 * QUIET_ZONE) * scale;
        let q = QUIET_ZONE as isize;
        decode_luma(side, side, |x, y| {
            let (mx, my) = ((x / scale) as isize - q, (y / scale) as isize - q);
            if self.is_dark(mx, my) { 0 } else { 255 }
        })
    }

    /// An SVG image: black modules on a white square, quiet zone included, one unit a module
    /// (`size_mm` millimetres a side when printed; a vector scales to any printer).
    pub fn to_svg(&self, size_mm: u32) -> String {
        let side = self.width + 2 * QUIET_ZONE;
        let mut path = String::new();
        for y in 0..self.width {
            for x in 0..self.width {
                if self.dark[y * self.width + x] {
                    path.push_str(&format!("M{},{}h1v1h-1z", x + QUIET_ZONE, y + QUIET_ZONE));
                }
            }
        }
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{size_mm}mm\" height=\"{size_mm}mm\" viewBox=\"0 0 {side} {side}\" shape-rendering=\"crispEdges\">\n<rect width=\"{side}\" height=\"{side}\" fill=\"#fff\"/>\n<path fill=\"#000\" d=\"{path}\"/>\n</svg>\n"
        )
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

/// A drawing of `cols` × `rows` cells, each drawn by `cell(column, row)`: a line a row.
fn drawn(cols: usize, rows: usize, cell: impl Fn(isize, isize) -> &'static str) -> Vec<String> {
    (0..rows as isize)
        .map(|row| (0..cols as isize).map(|col| cell(col, row)).collect())
        .collect()
}

/// Finds and decodes the first QR code in a greyscale image (0 black, 255 white).
fn decode_luma(w: usize, h: usize, luma: impl FnMut(usize, usize) -> u8) -> Result<String, String> {
    contain(|| {
        let mut image = rqrr::PreparedImage::prepare_from_greyscale(w, h, luma);
        let grids = image.detect_grids();
        let grid = grids
            .first()
            .ok_or_else(|| "no QR code found in the image".to_string())?;
        grid.decode()
            .map(|(_, text)| text)
            .map_err(|e| format!("the QR code could not be read: {e}"))
    })
    .map_err(|panic| format!("the QR decoder failed on this image: {panic}"))?
}

/// Decodes the QR code in a PNG. Images over `MAX_IMAGE_SIDE` a side, or not PNG, are refused.
pub fn decode_png(bytes: &[u8]) -> Result<String, String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_limits(png::Limits {
        bytes: 64 * 1024 * 1024,
    });
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(|e| format!("not a PNG image: {e}"))?;
    let (w, h) = (reader.info().width, reader.info().height);
    if w > MAX_IMAGE_SIDE || h > MAX_IMAGE_SIDE {
        return Err(format!("the image is {w}×{h}, larger than {MAX_IMAGE_SIDE} a side"));
    }
    let size = reader.output_buffer_size().ok_or("the image is too large")?;
    let mut buf = vec![0; size];
    let frame = reader
        .next_frame(&mut buf)
        .map_err(|e| format!("the PNG is damaged: {e}"))?;
    let channels = match frame.color_type {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Rgb | png::ColorType::Indexed => 3,
        png::ColorType::Rgba => 4,
    };
    let (w, h, line) = (frame.width as usize, frame.height as usize, frame.line_size);
    decode_luma(w, h, |x, y| {
        let px = &buf[y * line + x * channels..][..channels];
        let (luma, alpha) = match px {
            [g] => (u32::from(*g), 255),
            [g, a] => (u32::from(*g), u32::from(*a)),
            [r, g, b] => (
                (u32::from(*r) * 299 + u32::from(*g) * 587 + u32::from(*b) * 114) / 1000,
                255,
            ),
            [r, g, b, a, ..] => (
                (u32::from(*r) * 299 + u32::from(*g) * 587 + u32::from(*b) * 114) / 1000,
                u32::from(*a),
            ),
            [] => (255, 255),
        };
        // Transparent pixels count as the white page they would be printed on.
        ((luma * alpha + 255 * (255 - alpha)) / 255) as u8
    })
}

/// The activation code in a PNG QR image: refused unless it is one (`LPA:1$…`), so that the
/// dashboard never draws a code that would send a phone somewhere else.
pub fn activation_code_from_png(bytes: &[u8]) -> Result<String, String> {
    let text = decode_png(bytes)?;
    match ActivationCode::parse(&text) {
        Some(_) => Ok(text.trim().to_string()),
        None => Err("the QR image does not hold an eSIM activation code".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODE: &str = "LPA:1$rsp.esim.example$ABCDEF123456";

    #[test]
    fn a_version_3_code_with_its_quiet_zone_takes_37_by_19_cells() {
        let m = QrMatrix::encode(CODE).unwrap();
        assert_eq!(m.width, 29, "35 bytes at level M fit version 3");
        assert_eq!(m.half_block_size(), (37, 19));
        let lines = m.to_half_blocks();
        assert_eq!(lines.len(), 19);
        assert!(lines.iter().all(|l| l.chars().count() == 37));
        assert!(
            lines[0].trim().is_empty() && lines[1].trim().is_empty(),
            "two rows of quiet zone on top"
        );
        assert!(lines[2].starts_with("    █"), "four columns of quiet zone on the left");
    }

    #[test]
    fn half_blocks_read_back_and_decode_to_the_same_code() {
        let m = QrMatrix::encode(CODE).unwrap();
        let lines = m.to_half_blocks();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let back = QrMatrix::from_half_blocks(&refs).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.decode().unwrap(), CODE);
        assert!(QrMatrix::from_half_blocks(&["ab"]).is_err());
    }

    #[test]
    fn full_blocks_are_twice_the_size_and_read_back_to_the_same_code() {
        let m = QrMatrix::encode(CODE).unwrap();
        assert_eq!(m.full_block_size(), (74, 37));
        let lines = m.to_full_blocks();
        assert_eq!(lines.len(), 37);
        assert!(lines.iter().all(|l| l.chars().count() == 74));
        assert!(
            lines[4].starts_with("        ██████████████"),
            "eight columns of quiet zone, then a finder"
        );
        let framed: Vec<String> = lines.iter().map(|l| format!("   {l} │")).collect();
        let refs: Vec<&str> = framed.iter().map(|l| l.trim_end_matches(" │")).collect();
        let back = QrMatrix::from_full_blocks(&refs).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.decode().unwrap(), CODE);
        assert!(QrMatrix::from_full_blocks(&["█ █"]).is_err(), "half a module");
        assert!(QrMatrix::from_full_blocks(&["    "]).is_err());
    }

    #[test]
    fn pngs_decode_and_only_activation_codes_are_accepted() {
        let png = QrMatrix::encode(CODE).unwrap().to_png(6).unwrap();
        assert_eq!(activation_code_from_png(&png).unwrap(), CODE);
        let other = QrMatrix::encode("https://phishing.example/")
            .unwrap()
            .to_png(6)
            .unwrap();
        assert!(
            activation_code_from_png(&other)
                .unwrap_err()
                .contains("activation code")
        );
        let blank = QrMatrix {
            width: 21,
            dark: vec![false; 441],
        }
        .to_png(4)
        .unwrap();
        assert!(decode_png(&blank).unwrap_err().contains("no QR code"));
        assert!(decode_png(b"GIF89a not a png").unwrap_err().contains("not a PNG"));
        let truncated = &png[..png.len() / 2];
        assert!(decode_png(truncated).is_err());
    }
}
