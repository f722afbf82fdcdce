//! What the terminal hands the dashboard at its edges, driven as messages: a paste (bracketed
//! paste) is one edit however long, cut to the field's limit with a message, never read as keys.
//! Then the same through the real binary in tmux.

use crate::common::*;
use crossterm::event::KeyCode;
use esimdash::esim::text::grouped;
use esimdash::tui::app::{Mode, Overlay, Tone};
use esimdash::tui::msg::{Effect, Msg, Request};
use std::time::{Duration, Instant};

/// 100 KB of what an agent pastes by mistake: a column of a spreadsheet, lines and tabs.
fn hundred_kb() -> String {
    let line = "8944100000002080711\tTürkiye 5GB 30 Days\tin_use\r\n";
    let mut text = line.repeat(100 * 1024 / line.len() + 1);
    let mut end = 100 * 1024;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text
}

/// A 100 KB paste into each tab's search: one edit, a frame within 50 ms, the text cut to the
/// field's 100 characters with a message that says so; nothing of it read as keys (the pasted
/// `q`s and line breaks quit nothing and open nothing).
#[tokio::test]
async fn a_100_kb_paste_into_a_search_is_one_edit_cut_to_the_field_with_a_message() {
    let mut h = Harness::acme().await;
    let big = hundred_kb();
    assert!(big.len() >= 100 * 1024 - 4 && big.len() <= 100 * 1024);
    // What the field is given: one line (a line end or a tab is a space), trimmed.
    let pasted = big.replace("\r\n", "\n").trim().chars().count() as u64;
    let message = format!(
        "Paste cut to this field's limit of 100 characters: {} of the {} pasted were left out",
        grouped(pasted - 100),
        grouped(pasted)
    );
    for tab in ['1', '2', '3'] {
        h.send(key(tab));
        h.settle().await;
        h.send(key('/'));
        let started = Instant::now();
        let effects = h.send(Msg::Paste(big.clone()));
        let screen = h.screen(120, 40);
        let took = started.elapsed();
        eprintln!("tab {tab}: a 100 KB paste, update and a 120x40 frame: {took:?}");
        assert!(took < Duration::from_millis(50), "tab {tab}: {took:?}");
        assert!(!effects.contains(&Effect::Quit));
        assert!(matches!(h.app.mode(), Mode::Typing), "tab {tab}: still typing");
        let typed = match tab {
            '1' => h.app.catalog().filter().typed().to_string(),
            '2' => h.app.orders().search().typed().to_string(),
            _ => h.app.esims().search().typed().to_string(),
        };
        assert_eq!(typed.chars().count(), 100, "tab {tab}");
        assert!(
            typed.starts_with("8944100000002080711 Türkiye 5GB 30 Days in_use 8944"),
            "{typed}"
        );
        let flash = h.app.flash_message().unwrap();
        assert_eq!(flash.tone, Tone::Error);
        assert_eq!(flash.text, message, "tab {tab}");
        assert!(
            screen.contains("Paste cut to this field's limit of 100 characters"),
            "{screen}"
        );
        // Orders searches once, after the typing pause, with the text as cut.
        h.send(Msg::Tick);
        h.now += Duration::from_secs(1);
        let effects = h.send(Msg::Tick);
        if tab == '2' {
            let searches: Vec<_> = sends(&effects)
                .into_iter()
                .filter(|(_, r)| matches!(r, Request::Orders(q) if q.q.is_some()))
                .collect();
            assert_eq!(searches.len(), 1, "one search for the whole paste");
        }
        h.settle().await;
        h.send(code(KeyCode::Esc));
        assert!(matches!(h.app.mode(), Mode::Browse), "tab {tab}: a lone Esc clears");
    }
}

/// An ICCID copied from a spreadsheet or a mail comes with a line end and spaces: pasted into
/// My eSIMs' search, it is found as if typed.
#[tokio::test]
async fn a_pasted_iccid_with_its_line_end_finds_the_esim() {
    let mut h = Harness::acme().await;
    h.send(key('3'));
    h.settle().await;
    let iccid = h.app.esims().selected_iccid().unwrap();
    h.send(key('j'));
    h.send(key('/'));
    h.send(Msg::Paste(format!(" {iccid}\r\n")));
    assert_eq!(h.app.esims().search().typed(), iccid);
    h.settle().await;
    assert!(matches!(h.app.mode(), Mode::Detail), "a whole ICCID found ends typing");
    assert_eq!(h.app.esims().selected_iccid().as_deref(), Some(iccid.as_str()));
    assert_eq!(h.app.flash_message().unwrap().text, "Found the eSIM with that ICCID");
}

/// Where nothing takes text, a paste changes nothing and says where to type: its `q` does not
/// quit, its line break does not open or pay.
#[tokio::test]
async fn a_paste_where_nothing_takes_text_is_never_read_as_keys() {
    let mut h = Harness::acme().await;
    let effects = h.send(Msg::Paste("q\r\nbq\n".to_string()));
    assert!(!effects.contains(&Effect::Quit) && !h.app.should_quit());
    assert!(matches!(h.app.mode(), Mode::Browse));
    assert_eq!(
        h.app.flash_message().unwrap().text,
        "Nothing to paste into: / starts a search, then paste"
    );
    // On a purchase's confirmation, a pasted line end is not Enter.
    h.send(key('b'));
    h.settle().await;
    h.send(code(KeyCode::Enter));
    h.settle().await;
    assert!(h.screen(120, 40).contains("Enter: pay"));
    let effects = h.send(Msg::Paste("\r\n\r\n".to_string()));
    assert!(sends(&effects).is_empty(), "nothing sent");
    assert!(!h.sent.iter().any(|r| matches!(r, Request::Pay(_))));
    // The ICCID prompt takes a paste, cut to its 40 characters.
    h.send(code(KeyCode::Esc));
    h.send(code(KeyCode::Esc));
    h.send(key('4'));
    h.send(key('t'));
    assert!(matches!(h.app.overlay(), Some(Overlay::IccidPrompt { .. })));
    h.send(Msg::Paste("8".repeat(41)));
    let Some(Overlay::IccidPrompt { input, .. }) = h.app.overlay() else {
        panic!("the prompt");
    };
    assert_eq!(input.value.len(), 40);
    assert!(h.app.flash_message().unwrap().text.contains("limit of 40 characters"));
}

// The real binary in tmux.

use crate::terminal_e2e::Tmux;

/// Polls the screen until `done` holds, or fails after `limit` with what it shows; returns the
/// time it took (to the 20 ms a capture takes).
fn within(tmux: &Tmux, limit: Duration, what: &str, done: impl Fn(&str) -> bool) -> Duration {
    let started = Instant::now();
    loop {
        let screen = tmux.screen();
        if done(&screen) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < limit,
            "{what}: not within {limit:?}; the screen shows:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A 100 KB bracketed paste (tmux's `paste-buffer -p`, as a terminal pastes with bracketed
/// paste on) into My eSIMs' search: the screen answers at once with the text cut and the
/// message, and the next lone Esc closes the search at once.
#[test]
fn a_100_kb_paste_in_tmux_answers_at_once_and_a_lone_esc_acts_at_once() {
    if !crate::common::tmux_available("a_100_kb_paste_in_tmux_answers_at_once_and_a_lone_esc_acts_at_once") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let tmux = Tmux::demo("paste", &home, "");
    tmux.wait_for("Balance 250.00 USD");
    tmux.keys(&["3"]);
    tmux.wait_for("1/8");
    tmux.keys(&["/"]);
    tmux.wait_for("search: ");
    let file = home.path().join("paste.txt");
    std::fs::write(&file, hundred_kb()).unwrap();
    tmux.run(&["load-buffer", "-b", "big", &file.to_string_lossy()]);
    let started = Instant::now();
    tmux.run(&["paste-buffer", "-p", "-b", "big", "-t", "e2e"]);
    let took = within(&tmux, Duration::from_secs(1), "the paste", |s| {
        s.contains("Paste cut to this field's limit of 100 characters")
    });
    let screen = tmux.screen();
    eprintln!(
        "100 KB bracketed paste in tmux: message on screen {:?} after paste-buffer returned, {:?} after it was called",
        took,
        started.elapsed()
    );
    assert!(screen.contains("search: 8944100000002080711 Türkiye"), "{screen}");
    assert!(!screen.contains("EXITED"), "nothing of the paste was read as keys");
    let started = Instant::now();
    tmux.run(&["send-keys", "-t", "e2e", "Escape"]);
    let esc = within(&tmux, Duration::from_millis(500), "the lone Esc", |s| {
        !s.contains("search: ")
    });
    eprintln!(
        "lone Esc after the paste: search closed after {esc:?} ({:?} with send-keys)",
        started.elapsed()
    );
    tmux.keys(&["q"]);
    tmux.wait_for("EXITED 0");
}
