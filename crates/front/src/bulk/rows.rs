//! The rows of a bulk file: a CSV whose first line names its columns (`iccid,slug,qty` for
//! top-ups, `slug,qty` for orders; any order, other columns ignored, `qty` 1 when absent), as a
//! spreadsheet exports it. Each row keeps its line, so that every message and the result CSV
//! point at the line the user sees.

use esimdash_domain::iccid::Iccid;
use esimdash_domain::purchase::Spend;
use std::collections::HashMap;
use std::path::Path;

/// The most a row may buy at once: as `--qty` takes it.
pub const MAX_QTY: u32 = 10;

/// One row of the file, read and checked on its own (the API is asked later).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Its line in the file (the header is line 1), as a spreadsheet numbers it.
    pub line: u64,
    pub spend: Spend,
    /// Which occurrence of the same payment (eSIM or plan, slug, quantity) in the file this
    /// is, from 1: with it the row is told apart from its twins in the journal.
    pub occurrence: u32,
}

impl Row {
    /// Stable while the file keeps its rows, whatever lines move: what the journal keys on.
    pub fn identity(&self) -> String {
        format!("{}#{}", payment(&self.spend), self.occurrence)
    }

    /// The identity of the same payment's occurrence just before this one in the file.
    pub fn twin_before(&self) -> Option<String> {
        (self.occurrence > 1).then(|| format!("{}#{}", payment(&self.spend), self.occurrence - 1))
    }

    pub fn iccid(&self) -> Option<&Iccid> {
        self.spend.what.iccid()
    }
}

/// The payment a row stands for: its eSIM (or "order"), slug and quantity.
fn payment(spend: &Spend) -> String {
    let Spend { what, slug, qty } = spend;
    let target = what.iccid().map_or("order", Iccid::as_str);
    format!("{target}/{slug}/{qty}")
}

/// Whether the file tops up eSIMs or buys new ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Topup,
    Order,
}

impl Kind {
    /// The columns the file must have.
    pub fn columns(self) -> &'static str {
        match self {
            Kind::Topup => "iccid,slug,qty",
            Kind::Order => "slug,qty",
        }
    }
}

/// What a file can be refused for: everything wrong with it at once, each with its line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .problems.join("\n"))]
pub struct FileError {
    pub problems: Vec<String>,
}

impl FileError {
    fn one(problem: String) -> Self {
        Self {
            problems: vec![problem],
        }
    }
}

/// The rows read, and the lines that are not rows a payment can be made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub rows: Vec<Row>,
    pub problems: Vec<String>,
}

/// The largest file read: 100 000 rows with a few columns of notes take a few MB; far more is
/// not a spreadsheet's export, and would be held in memory whole.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// How many rows are read or checked between two looks at a stop (and, in a loop on the
/// runtime's thread, two chances for it to hear a signal): often enough that a stop acts
/// within milliseconds, seldom enough to cost nothing.
pub(crate) const STOP_EVERY: usize = 4096;

/// Why the rows were not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    File(FileError),
    /// `stopped` said so before the end.
    Stopped,
}

impl From<FileError> for ReadError {
    fn from(e: FileError) -> Self {
        ReadError::File(e)
    }
}

/// Reads and checks the file at `path`; `stopped` is asked every few thousand rows.
pub fn read(path: &Path, kind: Kind, stopped: &dyn Fn() -> bool) -> Result<Parsed, ReadError> {
    let failed = |e: std::io::Error| FileError::one(format!("{}: {e}", path.display()));
    let text = esimdash_files::read_regular_at_most(path, MAX_FILE_BYTES).map_err(failed)?;
    let Some(text) = text else {
        return Err(FileError::one(format!(
            "the file is larger than {} MB, more than a bulk file holds (100 000 rows take a few MB): split it, or remove the columns it does not need",
            MAX_FILE_BYTES / (1024 * 1024)
        ))
        .into());
    };
    parse_until(&text, kind, stopped)
}

/// Checks every row and says every problem, not only the first. An error only when no row
/// can be read at all (no header, nothing after it).
pub fn parse(text: &[u8], kind: Kind) -> Result<Parsed, FileError> {
    match parse_until(text, kind, &|| false) {
        Ok(parsed) => Ok(parsed),
        Err(ReadError::File(e)) => Err(e),
        // Never asked to stop: said all the same, rather than a panic.
        Err(ReadError::Stopped) => Err(FileError::one("stopped".to_string())),
    }
}

/// As `parse`, asking `stopped` every few thousand rows.
fn parse_until(text: &[u8], kind: Kind, stopped: &dyn Fn() -> bool) -> Result<Parsed, ReadError> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text);
    let headers = reader
        .headers()
        .map_err(|e| FileError::one(format!("line 1: {e}")))?
        .clone();
    let column = |name: &str| headers.iter().position(|h| h.eq_ignore_ascii_case(name));
    let (iccid_at, slug_at) = (column("iccid"), column("slug"));
    // `quantity` as the result CSV names it, so that a result can be edited into a new file.
    let qty_at = column("qty").or_else(|| column("quantity"));
    let wanted = kind.columns();
    if slug_at.is_none() || (kind == Kind::Topup && iccid_at.is_none()) {
        let said = esimdash_domain::text::excerpt(&headers.iter().collect::<Vec<_>>().join(","), 200);
        let hint = if said.contains(';') {
            " (its columns seem separated by \";\": save the file as CSV with commas)"
        } else {
            ""
        };
        let needed = match kind {
            Kind::Topup => "iccid and slug (and qty, else 1)",
            Kind::Order => "slug (and qty, else 1)",
        };
        return Err(FileError::one(format!("line 1 must name the columns {needed}; it says {said:?}{hint}")).into());
    }
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    let mut seen: HashMap<String, u32> = HashMap::new();
    let mut lines = LineCounter::default();
    for (n, record) in reader.records().enumerate() {
        if n % STOP_EVERY == 0 && stopped() {
            return Err(ReadError::Stopped);
        }
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                problems.push(e.to_string());
                continue;
            }
        };
        let line = record.position().map_or(0, |p| lines.line_of(text, p.byte()));
        if record.iter().all(str::is_empty) {
            continue;
        }
        let field = |at: Option<usize>| at.and_then(|i| record.get(i)).unwrap_or("");
        match row(field(iccid_at), field(slug_at), field(qty_at), kind) {
            Ok(spend) => {
                let n = seen.entry(payment(&spend)).or_insert(0);
                *n += 1;
                rows.push(Row {
                    line,
                    spend,
                    occurrence: *n,
                });
            }
            Err(problem) => problems.push(format!("line {line}: {problem}")),
        }
    }
    if rows.is_empty() && problems.is_empty() {
        return Err(FileError::one(format!("no rows after the header ({wanted})")).into());
    }
    Ok(Parsed { rows, problems })
}

/// The line each record starts on, counted from the bytes: the reader's own count, and the
/// offset it gives, include the blank lines it skipped before the record. The newlines are
/// counted once, from where the last record's count stopped: counting from the start for each
/// record made a file of 100 000 rows take minutes.
#[derive(Default)]
struct LineCounter {
    /// The byte up to which newlines are counted, and how many there are before it.
    at: usize,
    newlines: u64,
}

impl LineCounter {
    fn line_of(&mut self, text: &[u8], byte: u64) -> u64 {
        let at = usize::try_from(byte).unwrap_or(usize::MAX).min(text.len());
        if at < self.at {
            // The reader never goes back; were it to, the count starts over rather than lie.
            *self = Self::default();
        }
        self.newlines += newlines(&text[self.at..at]);
        self.at = at;
        let blank = text[at..]
            .iter()
            .take_while(|b| matches!(b, b'\n' | b'\r'))
            .filter(|&&b| b == b'\n')
            .count() as u64;
        1 + self.newlines + blank
    }
}

fn newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// The longest slug a row may name: plans' slugs are short words; a megabyte in that cell is a
/// mistake (it was sent, and the request failed as a "network error").
const MAX_SLUG: usize = 200;

fn row(iccid_cell: &str, slug: &str, qty: &str, kind: Kind) -> Result<Spend, String> {
    if slug.is_empty() {
        return Err("no slug".to_string());
    }
    if slug.len() > MAX_SLUG || !slug.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "slug {:?} is not a plan's slug (at most {MAX_SLUG} letters, digits and signs, no spaces)",
            esimdash_domain::text::excerpt(slug, 40)
        ));
    }
    let qty = if qty.is_empty() {
        1
    } else {
        qty.parse::<u32>()
            .ok()
            .filter(|q| (1..=MAX_QTY).contains(q))
            .ok_or_else(|| {
                format!(
                    "qty {:?} is not a whole number from 1 to {MAX_QTY}",
                    esimdash_domain::text::excerpt(qty, 40)
                )
            })?
    };
    Ok(match kind {
        Kind::Topup => {
            let iccid = Iccid::parse(iccid_cell).map_err(|e| {
                let hint = if iccid_cell.contains(['E', 'e']) && iccid_cell.contains(['.', ',']) {
                    " (a spreadsheet wrote it as a number: format the column as text and export again)"
                } else {
                    ""
                };
                format!(
                    "{:?} is not an ICCID: {e}{hint}",
                    esimdash_domain::text::excerpt(iccid_cell, 40)
                )
            })?;
            Spend::topup(iccid, slug, qty)
        }
        Kind::Order => Spend::order(slug, qty),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_their_lines_and_twins_are_told_apart() {
        let text = b"ICCID, slug ,qty,note\n8944100000000000018,fr-1gb,2,first\n\n8944100000000000018,fr-1gb,2,again\n8944100000000000000,de-1gb,,x\n";
        let rows = parse(text, Kind::Topup).unwrap().rows;
        assert_eq!(rows.iter().map(|r| r.line).collect::<Vec<_>>(), [2, 4, 5]);
        assert_eq!(rows[0].identity(), "8944100000000000018/fr-1gb/2#1");
        assert_eq!(rows[1].identity(), "8944100000000000018/fr-1gb/2#2");
        assert_eq!(rows[2].spend.qty, 1, "qty defaults to 1");
        let orders = parse(b"qty,slug\n3,fr-5gb\n", Kind::Order).unwrap().rows;
        assert_eq!(orders[0].identity(), "order/fr-5gb/3#1");
    }

    #[test]
    fn every_problem_is_said_with_its_line() {
        let long = "x".repeat(1_000_000);
        let text = format!(
            "iccid,slug,qty\n12,fr-1gb,1\n8944100000000000018,,1\n8944100000000000018,fr-1gb,11\n8944100000000000018,fr-1gb,1.5\n8944100000000000018,{long},1\n8944100000000000018,fr 1gb,1\n"
        );
        let problems = parse(text.as_bytes(), Kind::Topup).unwrap().problems;
        assert_eq!(problems.len(), 6, "{problems:?}");
        assert!(
            problems[4].starts_with("line 6: slug \"xxx") && problems[4].len() < 200,
            "{}",
            &problems[4][..100]
        );
        assert!(problems[5].starts_with("line 7: slug \"fr 1gb\""), "{problems:?}");
        assert!(
            problems[0].starts_with("line 2: \"12\" is not an ICCID"),
            "{problems:?}"
        );
        assert_eq!(problems[1], "line 3: no slug");
        assert!(problems[2].starts_with("line 4: qty \"11\""));
        assert!(problems[3].starts_with("line 5: qty \"1.5\""));
        let headless = parse(b"8944100000000000018,fr-1gb,1\n", Kind::Topup).unwrap_err();
        assert!(
            headless.to_string().contains("must name the columns iccid and slug"),
            "{headless}"
        );
        let excel = parse(b"iccid,slug\n8.9441E+18,fr-1gb\n", Kind::Topup).unwrap().problems;
        assert!(excel[0].contains("format the column as text"), "{excel:?}");
        assert!(
            parse(b"iccid,slug,qty\n", Kind::Topup)
                .unwrap_err()
                .to_string()
                .contains("no rows")
        );
        assert!(
            parse(b"slug\nfr-5gb\n", Kind::Order).is_ok(),
            "an order file needs no ICCID"
        );
    }

    #[test]
    fn a_huge_iccid_or_quantity_is_said_in_a_few_words() {
        let huge = "9".repeat(1_000_000);
        let text = format!("iccid,slug,qty\n{huge},fr-1gb,1\n8944100000000000018,fr-1gb,{huge}\n");
        let problems = parse(text.as_bytes(), Kind::Topup).unwrap().problems;
        assert_eq!(problems.len(), 2, "{}", problems.join("\n").len());
        assert!(
            problems.iter().all(|p| p.len() < 200),
            "{:?}",
            problems.iter().map(String::len).collect::<Vec<_>>()
        );
        assert!(problems[0].starts_with("line 2: \"999"), "{}", &problems[0]);
        assert!(problems[1].starts_with("line 3: qty \"999"), "{}", &problems[1]);
    }

    #[test]
    fn a_file_past_the_limit_is_refused_whole_and_a_stop_is_heard() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.csv");
        let mut text = b"slug,qty\nfr-5gb,1\n".to_vec();
        text.resize(usize::try_from(MAX_FILE_BYTES).unwrap() + 1, b'\n');
        std::fs::write(&path, &text).unwrap();
        let Err(ReadError::File(e)) = read(&path, Kind::Order, &|| false) else {
            panic!("refused")
        };
        assert!(e.to_string().contains("larger than 64 MB"), "{e}");
        text.truncate(text.len() - 1);
        std::fs::write(&path, &text).unwrap();
        assert_eq!(
            read(&path, Kind::Order, &|| false).unwrap().rows.len(),
            1,
            "at the limit is read"
        );
        assert_eq!(read(&path, Kind::Order, &|| true), Err(ReadError::Stopped));
    }

    #[test]
    fn lines_are_counted_in_one_pass_over_a_large_file() {
        // Blank lines between rows, in both ends' styles: each row keeps the line a
        // spreadsheet shows, at the end of a large file as at its start.
        let mut text = String::from("slug,qty\n");
        for i in 0..100_000 {
            text.push_str(if i % 3 == 0 { "fr-1gb,1\r\n\r\n" } else { "fr-1gb,1\n" });
        }
        let started = std::time::Instant::now();
        let rows = parse(text.as_bytes(), Kind::Order).unwrap().rows;
        let took = started.elapsed();
        let mut line = 1;
        for (i, row) in rows.iter().enumerate() {
            line += if i % 3 == 1 { 2 } else { 1 };
            assert_eq!(row.line, line, "row {i}");
        }
        assert_eq!(rows.last().map(|r| r.occurrence), Some(100_000));
        // A scan from the start per row took minutes here; one pass takes a fraction of a
        // second even unoptimised.
        assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    }

    proptest::proptest! {
        /// Whatever a file holds (a spreadsheet's export, a binary file, half a line), reading
        /// it never panics, and a row it gives is a row a payment can be made of.
        #[test]
        fn any_bytes_read_without_panic(
            head in proptest::sample::select(vec!["iccid,slug,qty\n", "slug,qty\r\n", "\u{feff}ICCID;slug\n", ""]),
            body in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
        ) {
            let mut text = head.as_bytes().to_vec();
            text.extend(body);
            for kind in [Kind::Topup, Kind::Order] {
                if let Ok(parsed) = parse(&text, kind) {
                    for row in parsed.rows {
                        proptest::prop_assert!(row.line >= 2);
                        proptest::prop_assert!((1..=MAX_QTY).contains(&row.spend.qty));
                        proptest::prop_assert!(!row.spend.slug.is_empty());
                    }
                }
            }
        }
    }
}
