//! Aligned plain-text tables for human output: columns padded by display width, numbers
//! right-aligned, every cell sanitised.

use crate::format::records::StatusTone;
use crate::format::verdict::cell_tone;
use crate::text::safe_fit;
use unicode_width::UnicodeWidthStr;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

pub struct Table {
    headers: Vec<(&'static str, Align)>,
    rows: Vec<Vec<String>>,
    /// The column holding a status, coloured by it (on a terminal that allows colour).
    status_column: Option<usize>,
    /// Cells wider than this end in `…` (lists; a detail shows its values whole).
    max_cell: Option<usize>,
}

/// How wide a list's cell may be: a real plan name fits, a 5 000-character one does not push
/// the rest of its row off the screen.
pub const LIST_CELL: usize = 48;

/// The SGR code of a status's colour.
fn sgr(tone: StatusTone) -> Option<&'static str> {
    match tone {
        StatusTone::Usable => Some("32"),
        StatusTone::Waiting => Some("33"),
        StatusTone::Ended => Some("2"),
        StatusTone::Failed => Some("31"),
        StatusTone::Unknown => None,
    }
}

impl Table {
    pub fn new(headers: &[(&'static str, Align)]) -> Self {
        Self {
            headers: headers.to_vec(),
            rows: Vec::new(),
            status_column: None,
            max_cell: None,
        }
    }

    /// Cuts every cell to `width` columns, with `…`.
    pub fn cut_at(mut self, width: usize) -> Self {
        self.max_cell = Some(width);
        self
    }

    /// Colours column `index` by the status it holds.
    pub fn colour_status(&mut self, index: usize) {
        self.status_column = Some(index);
    }

    pub fn row(&mut self, cells: Vec<String>) {
        let max = self.max_cell.unwrap_or(usize::MAX);
        self.rows
            .push(cells.into_iter().map(|c| safe_fit(&c, max).into_owned()).collect());
    }

    /// The table as text; statuses coloured when `colour`.
    pub fn render_coloured(&self, colour: bool) -> String {
        self.draw(colour)
    }

    pub fn render(&self) -> String {
        self.draw(false)
    }

    fn draw(&self, colour: bool) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|(h, _)| h.width()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.width());
            }
        }
        let line = |cells: Vec<&str>, body: bool| {
            let mut out = String::new();
            for (i, ((cell, (_, align)), width)) in cells.iter().zip(&self.headers).zip(&widths).enumerate() {
                let pad = " ".repeat(width.saturating_sub(cell.width()));
                let last = i + 1 == self.headers.len();
                let code = (colour && body && self.status_column == Some(i))
                    .then(|| sgr(cell_tone(cell)))
                    .flatten();
                let shown = match code {
                    Some(code) => format!("\x1b[{code}m{cell}\x1b[0m"),
                    None => cell.to_string(),
                };
                match align {
                    Align::Right => out.push_str(&format!("{pad}{shown}")),
                    Align::Left if last => out.push_str(&shown),
                    Align::Left => out.push_str(&format!("{shown}{pad}")),
                }
                if !last {
                    out.push_str("  ");
                }
            }
            out.trim_end().to_string() + "\n"
        };
        let mut out = line(self.headers.iter().map(|(h, _)| *h).collect(), false);
        for row in &self.rows {
            out.push_str(&line(row.iter().map(String::as_str).collect(), true));
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

    #[test]
    fn long_cells_of_a_list_end_in_an_ellipsis() {
        let mut t = Table::new(&[("NAME", Align::Left), ("N", Align::Right)]).cut_at(6);
        t.row(vec!["Türkiye 1GB".into(), "1".into()]);
        assert_eq!(t.render(), "NAME    N\nTürki…  1\n");
    }

    #[test]
    fn statuses_are_coloured_after_padding_so_columns_stay_aligned() {
        let mut t = Table::new(&[("STATUS", Align::Left), ("N", Align::Right)]);
        t.colour_status(0);
        t.row(vec!["in_use".into(), "1".into()]);
        t.row(vec!["cancel".into(), "2".into()]);
        t.row(vec!["used_up".into(), "3".into()]);
        t.row(vec!["teleported".into(), "4".into()]);
        let coloured = t.render_coloured(true);
        assert!(coloured.contains("\x1b[32min_use\x1b[0m    "), "{coloured}");
        assert!(coloured.contains("\x1b[31mcancel\x1b[0m"));
        assert!(coloured.contains("\x1b[2mused_up\x1b[0m"));
        assert!(coloured.contains("teleported  4"), "an unknown status stays plain");
        assert!(
            !coloured.lines().next().unwrap().contains('\x1b'),
            "the header is not coloured"
        );
        assert!(!t.render_coloured(false).contains('\x1b'));
    }
}
