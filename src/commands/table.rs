//! Aligned plain-text tables for human output: columns padded by display width, numbers
//! right-aligned, every cell sanitised.

use esimdash_domain::text::safe_fit;
use esimdash_front::format::verdict::StatusTone;
use esimdash_front::format::verdict::cell_tone;
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

    /// A table with these columns, left-aligned until `right` says otherwise.
    pub fn of(headers: &[&'static str]) -> Self {
        Self::new(&headers.iter().map(|h| (*h, Align::Left)).collect::<Vec<_>>())
    }

    /// Right-aligns the columns with these headers (figures).
    pub fn right(mut self, headers: &[&str]) -> Self {
        for (header, align) in &mut self.headers {
            if headers.contains(header) {
                *align = Align::Right;
            }
        }
        self
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

    /// A list's table: cut at the list's width, its status words (column `status`) coloured.
    pub fn listed(mut self, status: usize) -> Self {
        self.colour_status(status);
        self.cut_at(LIST_CELL)
    }

    pub fn row(&mut self, cells: Vec<String>) {
        let cells = self.fit(cells);
        self.rows.push(cells);
    }

    /// The cells as shown: safe, and cut at `max_cell`.
    fn fit(&self, cells: Vec<String>) -> Vec<String> {
        let max = self.max_cell.unwrap_or(usize::MAX);
        cells.into_iter().map(|c| safe_fit(&c, max).into_owned()).collect()
    }

    /// The table as text; statuses coloured when `colour`.
    pub fn render_coloured(&self, colour: bool) -> String {
        self.draw(colour)
    }

    pub fn render(&self) -> String {
        self.draw(false)
    }

    /// The columns as wide as their headers; `widen` makes room for the cells.
    fn header_widths(&self) -> Vec<usize> {
        self.headers.iter().map(|(h, _)| h.width()).collect()
    }

    fn widen(widths: &mut [usize], cells: &[impl AsRef<str>]) {
        for (w, cell) in widths.iter_mut().zip(cells) {
            *w = (*w).max(cell.as_ref().width());
        }
    }

    fn draw(&self, colour: bool) -> String {
        let mut widths = self.header_widths();
        for row in &self.rows {
            Self::widen(&mut widths, row);
        }
        let mut out = self.header_line(&widths);
        for row in &self.rows {
            out.push_str(&self.line(&widths, row, colour));
        }
        out
    }

    fn header_line(&self, widths: &[usize]) -> String {
        let headers: Vec<&str> = self.headers.iter().map(|(h, _)| *h).collect();
        self.line(widths, &headers, false)
    }

    /// A row's line, its status coloured when `colour`.
    fn line(&self, widths: &[usize], cells: &[impl AsRef<str>], colour: bool) -> String {
        let mut out = String::new();
        for (i, ((cell, (_, align)), width)) in cells.iter().zip(&self.headers).zip(widths).enumerate() {
            let cell = cell.as_ref();
            let pad = " ".repeat(width.saturating_sub(cell.width()));
            let last = i + 1 == self.headers.len();
            let code = (colour && self.status_column == Some(i))
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
    }
}

/// A table too long to hold (`--all` of a large account): its rows wait in an unnamed temporary
/// file, gone with the process however it ends, while the widths of the columns are measured;
/// then it is drawn exactly as `Table` draws it, a few lines at a time. Memory stays the same
/// for any number of rows.
pub struct SpooledTable {
    table: Table,
    widths: Vec<usize>,
    spool: std::io::BufWriter<std::fs::File>,
}

/// Between the cells of a spooled row. Cells are sanitised (`safe_fit`): no control character
/// is left in them, so neither this nor a line end can be part of a cell.
const CELL_END: char = '\x1f';

impl SpooledTable {
    pub fn new(table: Table) -> std::io::Result<Self> {
        Ok(Self {
            widths: table.header_widths(),
            spool: std::io::BufWriter::new(tempfile::tempfile()?),
            table,
        })
    }

    pub fn row(&mut self, cells: Vec<String>) -> std::io::Result<()> {
        use std::io::Write;
        let cells = self.table.fit(cells);
        Table::widen(&mut self.widths, &cells);
        writeln!(self.spool, "{}", cells.join(&CELL_END.to_string()))
    }

    /// Hands the table's text to `write`, some lines at a time; statuses coloured when `colour`.
    pub fn draw(self, colour: bool, mut write: impl FnMut(&str)) -> std::io::Result<()> {
        use std::io::{BufRead, Seek};
        let mut file = self.spool.into_inner().map_err(std::io::IntoInnerError::into_error)?;
        file.seek(std::io::SeekFrom::Start(0))?;
        let mut chunk = self.table.header_line(&self.widths);
        for row in std::io::BufReader::new(file).lines() {
            let row = row?;
            let cells: Vec<&str> = row.split(CELL_END).collect();
            chunk.push_str(&self.table.line(&self.widths, &cells, colour));
            if chunk.len() >= 64 * 1024 {
                write(&chunk);
                chunk.clear();
            }
        }
        write(&chunk);
        Ok(())
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
    fn a_spooled_table_is_drawn_as_the_table_held_whole() {
        let rows = [
            ["in_use", "Türkiye 1GB", "1"],
            ["cancel", "a\x1f\nb", ""],
            ["used_up", "", "12345"],
        ];
        for colour in [false, true] {
            let table = || {
                let mut t =
                    Table::new(&[("STATUS", Align::Left), ("NAME", Align::Left), ("N", Align::Right)]).cut_at(8);
                t.colour_status(0);
                t
            };
            let (mut whole, mut spooled) = (table(), SpooledTable::new(table()).unwrap());
            for row in rows {
                whole.row(row.iter().map(|c| c.to_string()).collect());
                spooled.row(row.iter().map(|c| c.to_string()).collect()).unwrap();
            }
            let mut drawn = String::new();
            spooled.draw(colour, |text| drawn.push_str(text)).unwrap();
            assert_eq!(drawn, whole.render_coloured(colour));
            assert!(
                drawn.contains("a\u{FFFD}\u{FFFD}b"),
                "a cell's own controls stay in it: {drawn}"
            );
        }
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
