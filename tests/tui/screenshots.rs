//! README's screenshots: each tab drawn by the real drawing code (colours on) into a test
//! backend, with the sandbox's seeded data and the pinned clock, written as SVG to
//! `assets/screenshots/`. The committed files must equal what the code draws now: run with
//! `ESIMDASH_UPDATE_SCREENSHOTS=1` to write them again after a change to the screens.

use crate::common::*;
use esimdash_tui::view::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

const WIDTH: u16 = 120;
const HEIGHT: u16 = 32;
const CELL_W: f32 = 8.4;
const CELL_H: f32 = 17.0;

fn rgb(color: Color, default: &'static str) -> String {
    let named = match color {
        Color::Reset => default,
        Color::Black => "#1e1e1e",
        Color::Red => "#cd3131",
        Color::Green => "#0dbc79",
        Color::Yellow => "#e5e510",
        Color::Blue => "#2472c8",
        Color::Magenta => "#bc3fbc",
        Color::Cyan => "#11a8cd",
        Color::Gray => "#cccccc",
        Color::DarkGray => "#767676",
        Color::White => "#e5e5e5",
        Color::Rgb(r, g, b) => return format!("#{r:02x}{g:02x}{b:02x}"),
        _ => default,
    };
    named.to_string()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The buffer as SVG: a background rectangle per run of cells of one colour, then the text of
/// each run in its colour, monospaced.
fn svg(buffer: &Buffer) -> String {
    let (w, h) = (buffer.area.width, buffer.area.height);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0}\" height=\"{:.0}\" font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"14\">\n<rect width=\"100%\" height=\"100%\" fill=\"#1e1e1e\"/>\n",
        f32::from(w) * CELL_W,
        f32::from(h) * CELL_H
    );
    for y in 0..h {
        let mut x = 0;
        while x < w {
            let cell = &buffer[(x, y)];
            let (reversed, fg, bg, bold, dim) = (
                cell.modifier.contains(Modifier::REVERSED),
                cell.fg,
                cell.bg,
                cell.modifier.contains(Modifier::BOLD),
                cell.modifier.contains(Modifier::DIM),
            );
            let same = |c: &ratatui::buffer::Cell| c.fg == fg && c.bg == bg && c.modifier == cell.modifier;
            let mut end = x + 1;
            while end < w && same(&buffer[(end, y)]) {
                end += 1;
            }
            let text: String = (x..end).map(|i| buffer[(i, y)].symbol()).collect();
            let (mut fill, mut back) = (rgb(fg, "#e5e5e5"), rgb(bg, "none"));
            if reversed {
                (fill, back) = (if back == "none" { "#1e1e1e".into() } else { back }, fill);
            }
            let (px, py) = (f32::from(x) * CELL_W, f32::from(y) * CELL_H);
            if back != "none" {
                out.push_str(&format!(
                    "<rect x=\"{px:.1}\" y=\"{py:.1}\" width=\"{:.1}\" height=\"{CELL_H}\" fill=\"{back}\"/>\n",
                    f32::from(end - x) * CELL_W
                ));
            }
            if !text.trim().is_empty() {
                let weight = if bold { " font-weight=\"bold\"" } else { "" };
                let opacity = if dim { " opacity=\"0.6\"" } else { "" };
                out.push_str(&format!(
                    "<text x=\"{px:.1}\" y=\"{:.1}\" fill=\"{fill}\"{weight}{opacity} xml:space=\"preserve\">{}</text>\n",
                    py + CELL_H - 4.0,
                    escape(&text)
                ));
            }
            x = end;
        }
    }
    out.push_str("</svg>\n");
    out
}

fn check(name: &str, h: &Harness) {
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
    terminal.draw(|f| h.app.draw(f, &Theme::dark(true), h.now)).unwrap();
    let drawn = svg(terminal.backend().buffer());
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("assets/screenshots/{name}.svg"));
    if std::env::var_os("ESIMDASH_UPDATE_SCREENSHOTS").is_some() {
        std::fs::write(&path, &drawn).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == drawn,
        "{} differs from what the code draws; run ESIMDASH_UPDATE_SCREENSHOTS=1 cargo test --test tui screenshots",
        path.display()
    );
}

#[tokio::test]
async fn readme_screenshots_are_what_the_code_draws() {
    let mut h = Harness::acme().await;
    check("catalog", &h);
    h.send_and_settle(key('2')).await;
    check("orders", &h);
    h.send_and_settle(key('3')).await;
    check("esims", &h);
    // The command palette, "top" typed, over My eSIMs.
    for c in [':', 't', 'o', 'p'] {
        h.send_and_settle(key(c)).await;
    }
    check("palette", &h);
    h.send_and_settle(code(crossterm::event::KeyCode::Esc)).await;
    // The selected eSIM's triage.
    h.send_and_settle(key('T')).await;
    check("triage", &h);
    h.send_and_settle(code(crossterm::event::KeyCode::Esc)).await;
    h.send_and_settle(key('4')).await;
    check("profile", &h);
}
