//! Aligned plain-text tables for human output: columns padded by display width, numbers
//! right-aligned, every cell sanitised.

use crate::esim::text::sanitize;
use unicode_width::UnicodeWidthStr;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

pub struct Table {
    headers: Vec<(&'static str, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(headers: &[(&'static str, Align)]) -> Self {
        Self {
            headers: headers.to_vec(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows
            .push(cells.into_iter().map(|c| sanitize(&c).into_owned()).collect());
    }

    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|(h, _)| h.width()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.width());
            }
        }
        let line = |cells: Vec<&str>| {
            let mut out = String::new();
            for (i, ((cell, (_, align)), width)) in cells.iter().zip(&self.headers).zip(&widths).enumerate() {
                let pad = " ".repeat(width.saturating_sub(cell.width()));
                let last = i + 1 == self.headers.len();
                match align {
                    Align::Right => out.push_str(&format!("{pad}{cell}")),
                    Align::Left if last => out.push_str(cell),
                    Align::Left => out.push_str(&format!("{cell}{pad}")),
                }
                if !last {
                    out.push_str("  ");
                }
            }
            out.trim_end().to_string() + "\n"
        };
        let mut out = line(self.headers.iter().map(|(h, _)| *h).collect());
        for row in &self.rows {
            out.push_str(&line(row.iter().map(String::as_str).collect()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_by_display_width_and_sanitises() {
        let mut t = Table::new(&[("NAME", Align::Left), ("PRICE", Align::Right)]);
        t.row(vec!["Türkiye".into(), "5.00".into()]);
        t.row(vec!["evil\x1b[2J".into(), "12.50".into()]);
        assert_eq!(t.render(), "NAME      PRICE\nTürkiye    5.00\nevil\u{FFFD}[2J  12.50\n");
    }
}
