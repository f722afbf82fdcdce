//! What the terminal hands the dashboard at its edges, driven as messages: a paste (bracketed
//! paste) is one edit however long, cut to the field's limit with a message, never read as keys;
//! Ctrl-Z and a stop signal suspend, but not in the middle of a payment; after `fg` the whole
//! screen is drawn again. Then the same through the real binary in tmux, and the dashboard
//! killed (SIGKILL) while its inventory index is read.

use crate::common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use esimdash_domain::text::grouped;
use esimdash_tui::app::{Mode, Overlay, Tone};
use esimdash_tui::msg::{Effect, Msg, Request};
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

fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
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
        "Paste cut to the field's 100 characters: {} of {} left out",
        grouped(pasted - 100),
        grouped(pasted)
    );
    for tab in ['1', '2', '3'] {
        h.send_and_settle(key(tab)).await;
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
        assert!(screen.contains("Paste cut to the field's 100 characters"), "{screen}");
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
    let mut h = Harness::acme_on('3').await;
    let iccid = h.app.selected_iccid().unwrap().to_string();
    h.send(key('j'));
    h.send(key('/'));
    h.send(Msg::Paste(format!(" {iccid}\r\n")));
    assert_eq!(h.app.esims().search().typed(), iccid);
    h.settle().await;
    assert!(matches!(h.app.mode(), Mode::Detail), "a whole ICCID found ends typing");
    assert_eq!(h.app.selected_iccid().as_deref(), Some(iccid.as_str()));
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
    h.send_and_settle(key('b')).await;
    h.send_and_settle(code(KeyCode::Enter)).await;
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
    assert!(
        h.app
            .flash_message()
            .unwrap()
            .text
            .contains("the field's 40 characters: 1 of 41")
    );
}

/// Ctrl-Z suspends at once; in the middle of a payment it waits for the answer, then suspends;
/// a stop signal from outside does the same; continued, the app draws the whole screen and sets
/// the mouse as it was.
#[tokio::test]
async fn ctrl_z_and_a_stop_signal_suspend_but_never_mid_payment() {
    let mut h = Harness::acme().await;
    assert!(h.send(ctrl('z')).contains(&Effect::Suspend));
    h.app.take_dirty();
    let effects = h.send(Msg::Resumed);
    assert!(effects.contains(&Effect::Mouse(true)), "the mouse as it was");
    assert!(h.app.take_dirty(), "the whole screen is drawn again");
    assert!(h.send(Msg::Suspend).contains(&Effect::Suspend), "SIGTSTP");
    // Typing a search: Ctrl-Z is not text, it suspends.
    h.send(key('/'));
    assert!(h.send(ctrl('z')).contains(&Effect::Suspend));
    assert_eq!(h.app.catalog().filter().typed(), "");
    h.send(code(KeyCode::Esc));

    // A purchase sent: the suspension waits for its answer.
    h.send_and_settle(key('b')).await;
    h.send_and_settle(code(KeyCode::Enter)).await;
    let effects = h.send(code(KeyCode::Enter));
    assert!(sends(&effects).iter().any(|(_, r)| matches!(r, Request::Pay(_))));
    for msg in [ctrl('z'), Msg::Suspend] {
        let effects = h.send(msg);
        assert!(!effects.contains(&Effect::Suspend), "not mid-payment");
    }
    assert_eq!(
        h.app.flash_message().unwrap().text,
        "Suspending once the server has answered what was sent"
    );
    // The answer comes: the suspension follows, once.
    let (id, request) = h
        .pending()
        .iter()
        .find(|(_, r)| matches!(r, Request::Pay(_)))
        .cloned()
        .unwrap();
    let client = h.api();
    let result = request.run(&client, &Default::default()).await;
    assert!(result.is_ok(), "{result:?}");
    let effects = h.send(Msg::Answer(Box::new(esimdash_tui::msg::Answer { id, result })));
    assert_eq!(
        effects.iter().filter(|e| **e == Effect::Suspend).count(),
        1,
        "{effects:?}"
    );
    assert!(!h.send(Msg::Tick).contains(&Effect::Suspend), "once");
}

// The real binary in tmux.

use crate::terminal_e2e::{Tmux, start_demo};

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
    let Some((home, tmux)) = Tmux::demo_at_balance("paste", "") else {
        return;
    };
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
        s.contains("Paste cut to the field's 100 characters")
    });
    let screen = tmux.screen();
    eprintln!(
        "100 KB bracketed paste in tmux: message on screen {:?} after paste-buffer returned, {:?} after it was called",
        took,
        started.elapsed()
    );
    assert!(screen.contains("search: 8944100000002080711 Türkiye"), "{screen}");
    assert_eq!(tmux.exited(), None, "nothing of the paste was read as keys");
    let started = Instant::now();
    tmux.run(&["send-keys", "-t", "e2e", "Escape"]);
    let esc = within(&tmux, Duration::from_millis(500), "the lone Esc", |s| {
        !s.contains("search: ")
    });
    eprintln!(
        "lone Esc after the paste: search closed after {esc:?} ({:?} with send-keys)",
        started.elapsed()
    );
    tmux.quit();
}

/// Under an interactive shell in tmux: Ctrl-Z gives the terminal back to the shell (alternate
/// screen left, the shell's prompt usable), `fg` brings the dashboard back drawn whole, in raw
/// mode (a single key acts); then the same with SIGTSTP sent from outside.
#[test]
fn ctrl_z_and_sigtstp_suspend_to_the_shell_and_fg_brings_the_dashboard_back() {
    let Some((home, tmux)) = Tmux::for_test("suspend") else {
        return;
    };
    let shell = format!(
        "env HOME={home} XDG_STATE_HOME={home}/state XDG_CONFIG_HOME={home}/config PS1='shell$ ' bash --norc --noprofile -i",
        home = home.path().display()
    );
    tmux.start(100, 30, &shell);
    tmux.wait_for("shell$");
    let pid_file = home.path().join("pid");
    let command = format!(
        "sh -c 'echo $$ > {pid}; exec {bin} --demo'",
        pid = pid_file.display(),
        bin = env!("CARGO_BIN_EXE_esimdash")
    );
    tmux.run(&["send-keys", "-t", "e2e", "-l", &command]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Balance 250.00 USD");
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    for (round, stop) in ["Ctrl-Z", "SIGTSTP"].into_iter().enumerate() {
        if stop == "Ctrl-Z" {
            tmux.keys(&["C-z"]);
        } else {
            let status = std::process::Command::new("kill")
                .args(["-TSTP", &pid])
                .status()
                .unwrap();
            assert!(status.success());
        }
        let screen = tmux.wait_for("[1]+  Stopped");
        assert!(!tmux.alternate_on(), "{stop}: the alternate screen was left:\n{screen}");
        assert!(
            !screen.contains("Balance 250.00"),
            "{stop}: the dashboard is gone:\n{screen}"
        );
        // The shell has the terminal in line mode: a command runs.
        tmux.run(&["send-keys", "-t", "e2e", "-l", &format!("echo round{round}")]);
        tmux.keys(&["Enter"]);
        tmux.wait_for(&format!("\nround{round}"));
        tmux.run(&["send-keys", "-t", "e2e", "-l", "fg"]);
        tmux.keys(&["Enter"]);
        let took = within(&tmux, Duration::from_secs(5), stop, |s| {
            s.contains("Balance 250.00 USD") && s.contains("1 Catalog")
        });
        eprintln!("{stop}, fg: the dashboard drawn again {took:?} after fg's Enter");
        assert!(tmux.alternate_on(), "{stop}: back on the alternate screen");
        // Raw mode: one key, no Enter, switches the tab.
        tmux.run(&["send-keys", "-t", "e2e", if round == 0 { "2" } else { "1" }]);
        tmux.wait_for(if round == 0 { "400 total" } else { "of 366 plans" });
    }
    tmux.keys(&["q"]);
    assert!(tmux.alternate_screen_left(), "q gives the terminal back to the shell");
    assert_eq!(tmux.exited(), None, "the shell goes on");
}

/// Stopped and continued from outside with no shell's job control (a service manager, `kill`):
/// SIGTSTP gives the terminal back and SIGCONT takes it again, drawn whole; an uncatchable
/// SIGSTOP, which the dashboard never sees, is mended by SIGCONT the same way.
#[test]
fn kill_tstp_and_kill_cont_from_outside_restore_and_redraw() {
    let Some((home, tmux)) = Tmux::for_test("tstp") else {
        return;
    };
    let pid = start_demo(&tmux, &home, "");
    let kill = |signal: &str| {
        let status = std::process::Command::new("kill")
            .args([signal, &pid])
            .status()
            .unwrap();
        assert!(status.success(), "kill {signal}");
    };
    kill("-TSTP");
    within(&tmux, Duration::from_secs(5), "SIGTSTP", |s| {
        !s.contains("Balance 250.00")
    });
    assert!(!tmux.alternate_on(), "SIGTSTP: the terminal given back");
    kill("-CONT");
    let took = within(&tmux, Duration::from_secs(5), "SIGCONT", |s| {
        s.contains("Balance 250.00 USD")
    });
    eprintln!("kill -CONT: the dashboard drawn again after {took:?}");
    assert!(tmux.alternate_on());
    tmux.keys(&["2"]);
    tmux.wait_for("400 total");
    // SIGSTOP cannot be caught; meanwhile the pane is reset (alternate screen left, cleared),
    // as a shell taking the terminal back would leave it.
    kill("-STOP");
    tmux.run(&["send-keys", "-t", "e2e", "-R"]);
    within(&tmux, Duration::from_secs(5), "the reset", |s| !s.contains("400 total"));
    kill("-CONT");
    tmux.wait_for("400 total");
    tmux.keys(&["3"]);
    tmux.wait_for("1/8");
    tmux.quit();
}

/// The dashboard (the real binary, in tmux) against a server without the lookup, killed with
/// SIGKILL while its index is read in the background: the next session resumes the read where
/// the index's saves left it, never reading a saved page again. Pages counted at the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dashboard_killed_mid_read_resumes_its_index_without_reading_saved_pages_again() {
    if !crate::common::tmux_available("a_dashboard_killed_mid_read_resumes_its_index_without_reading_saved_pages_again")
    {
        return;
    }
    let config = esimdash_sandbox::SandboxConfig {
        orders: 5_000,
        rate_limit: 1_000_000,
        iccid_lookup: false,
        // 51 pages at 100 ms: the read takes 5 s, and saves (every 10 pages) on the way.
        latency: Duration::from_millis(100),
        ..Default::default()
    };
    let sandbox = esimdash_sandbox::spawn(&config, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let start = |name: &str| {
        let tmux = Tmux::new(name);
        let command = format!(
            "ESIMDASH_BASE_URL={url} ESIMDASH_ACCESS_CODE=ak_demo_acme ESIMDASH_SECRET_KEY=sk_demo_acme \
             ESIMDASH_RATE_LIMIT=1000000 HOME={home} XDG_CACHE_HOME={home}/cache XDG_STATE_HOME={home}/state \
             XDG_CONFIG_HOME={home}/config {bin}",
            url = sandbox.base_url(),
            home = home.path().display(),
            bin = env!("CARGO_BIN_EXE_esimdash"),
        );
        tmux.start(120, 40, &command);
        tmux.wait_for("Balance");
        tmux.keys(&["3"]);
        tmux.wait_for("1/");
        tmux.keys(&["/", "8", "9"]);
        tmux
    };
    let index_file = || {
        let base = esimdash_api::BaseUrl::parse(&sandbox.base_url()).unwrap();
        let account = esimdash_inventory::store::account_key(
            base.as_str(),
            &esimdash_api::Credentials::pair("ak_demo_acme", "sk_demo_acme").account(),
        );
        let path = esimdash_inventory::store::path_in(&home.path().join("cache/esimdash"), &account);
        esimdash_inventory::store::load(&path, &account).ok()
    };

    let first = start("index-1");
    let started = Instant::now();
    while index_file().is_none_or(|f| f.inventory.len() < 900) {
        assert!(started.elapsed() < Duration::from_secs(30), "{}", first.screen());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let shell: i32 = first
        .run(&["display", "-p", "-t", "e2e", "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap();
    let dashboard = child_of(shell).expect("the dashboard runs under the pane's shell");
    // SIGKILL: no chance to save on the way out. SAFETY: kill(2) on a process of this test's.
    assert_eq!(unsafe { libc::kill(dashboard, libc::SIGKILL) }, 0);
    assert_eq!(first.exit_code(), 137);
    let saved = index_file().expect("the index saved before the kill").inventory;
    let total = saved.total().unwrap();
    assert!(!saved.is_complete(), "killed mid-read: {} of {total}", saved.len());

    let before = sandbox.esim_pages_served().len();
    let second = start("index-2");
    second.wait_for(" in the index");
    let read: Vec<u64> = sandbox.esim_pages_served()[before..].to_vec();
    let again: Vec<u64> = read
        .iter()
        .copied()
        .filter(|&p| p != 1 && saved.first_gap_from((p - 1) * 100).is_none_or(|gap| gap >= p * 100))
        .collect();
    eprintln!(
        "killed with {} of {total} eSIMs saved; the next session read {} pages: {read:?}",
        saved.len(),
        read.len()
    );
    assert!(again.is_empty(), "saved pages read again: {again:?}");
    second.keys(&["Escape", "Escape", "q"]);
    assert_eq!(second.exit_code(), 0);
    let complete = index_file().expect("saved at the end").inventory;
    assert!(complete.is_complete(), "{} of {:?}", complete.len(), complete.total());
}

/// A child process of `parent`, from /proc.
fn child_of(parent: i32) -> Option<i32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|entry| {
        let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
        // `pid (comm) state ppid …`; comm may hold spaces, so read after its last ')'.
        let ppid: i32 = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
        (ppid == parent).then_some(pid)
    })
}
