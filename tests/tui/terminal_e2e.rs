//! The real binary with `--demo`, in a real terminal (tmux on a private socket): the balance
//! shows, tabs switch, an order search runs, `q` quits and the terminal is given back.

use rust_decimal::Decimal;
use std::process::Command;
use std::time::{Duration, Instant};

pub(crate) use crate::tmux::Tmux;

/// What the demo's header shows once the dashboard has read the account.
pub(crate) const DEMO_BALANCE: &str = "Balance 250.00 USD";

impl Tmux {
    /// `esimdash --demo` in a 120×40 session on a private socket, with `home` as HOME and XDG
    /// directories.
    pub(crate) fn demo(name: &str, home: &tempfile::TempDir, env: &str) -> Tmux {
        Tmux::demo_sized(name, home, env, (120, 40))
    }

    /// As `demo`, in a `width`×`height` session.
    pub(crate) fn demo_sized(name: &str, home: &tempfile::TempDir, env: &str, (width, height): (u16, u16)) -> Tmux {
        let tmux = Tmux::new(name);
        tmux.start(
            width,
            height,
            &format!(
                "{env} HOME={home} XDG_STATE_HOME={home}/state XDG_CONFIG_HOME={home}/config {bin} --demo",
                home = home.path().display(),
                bin = env!("CARGO_BIN_EXE_esimdash"),
            ),
        );
        tmux
    }

    /// The demo in tmux for the test running now (see `demo`), and the home it has made for
    /// it; `None` where tmux is missing, the test then skipped (and saying so).
    pub(crate) fn demo_for(name: &str, env: &str) -> Option<(tempfile::TempDir, Tmux)> {
        if !crate::common::tmux_available_here() {
            return None;
        }
        let home = tempfile::tempdir().unwrap();
        let tmux = Tmux::demo(name, &home, env);
        Some((home, tmux))
    }

    /// A tmux server for the test running now (see `new`), and a home of its own for what
    /// runs in it; `None` where tmux is missing, the test then skipped (and saying so).
    pub(crate) fn for_test(name: &str) -> Option<(tempfile::TempDir, Tmux)> {
        if !crate::common::tmux_available_here() {
            return None;
        }
        Some((tempfile::tempdir().unwrap(), Tmux::new(name)))
    }

    /// The demo (see `demo_for`) once it shows its balance: where the tests that act on it at
    /// once start.
    pub(crate) fn demo_at_balance(name: &str, env: &str) -> Option<(tempfile::TempDir, Tmux)> {
        let (home, tmux) = Tmux::demo_for(name, env)?;
        tmux.wait_for(DEMO_BALANCE);
        Some((home, tmux))
    }

    /// The demo (see `demo_for`) with copies let through to tmux's buffer (OSC 52), on the
    /// eSIMs tab (once the balance shows) with its list read: where the copy tests start.
    pub(crate) fn copying_demo_on_esims(name: &str, env: &str) -> Option<(tempfile::TempDir, Tmux)> {
        let (home, tmux) = Tmux::demo_for(name, env)?;
        tmux.run(&["set", "-s", "set-clipboard", "on"]);
        tmux.wait_for(DEMO_BALANCE);
        tmux.keys(&["3"]);
        tmux.wait_for("1/");
        Some((home, tmux))
    }
}

#[test]
fn demo_shows_the_balance_switches_tabs_searches_and_quits_cleanly() {
    let Some((_home, tmux)) = Tmux::demo_for("e2e", "") else {
        return;
    };

    let started = Instant::now();
    let screen = tmux.wait_for("Balance 250.00 USD");
    eprintln!("balance on screen after {:?}", started.elapsed());
    assert!(screen.contains("Acme Mobile") && screen.contains("DEMO"));
    tmux.wait_for("of 366 plans");

    tmux.keys(&["2"]);
    tmux.wait_for("400 total");
    tmux.keys(&["/", "f", "r", "a", "n", "c", "e"]);
    let screen = tmux.wait_for("search: france");
    let results = tmux.wait_for("France");
    assert!(
        !results.contains("400 total"),
        "the search narrowed the list:\n{screen}"
    );
    tmux.keys(&["Enter", "Enter"]);
    tmux.wait_for("Order number");
    tmux.keys(&["Escape"]);
    tmux.keys(&["3"]);
    tmux.wait_for("ICCID");
    tmux.keys(&["4"]);
    tmux.wait_for("ada@acme-mobile.example");

    tmux.quit();
    assert!(tmux.alternate_screen_left(), "left the alternate screen");
    let screen = tmux.screen();
    assert!(
        !screen.contains("Balance 250.00"),
        "the dashboard is gone from the terminal:\n{screen}"
    );
}

/// Starts the demo in tmux with `env`, waits for the balance, and returns the pane's process id.
pub(crate) fn start_demo(tmux: &Tmux, home: &tempfile::TempDir, env: &str) -> String {
    let pid_file = home.path().join("pid");
    let command = format!(
        "HOME={home} XDG_STATE_HOME={home}/state {env} sh -c 'echo $$ > {pid}; exec {bin} --demo'",
        home = home.path().display(),
        pid = pid_file.display(),
        bin = env!("CARGO_BIN_EXE_esimdash"),
    );
    tmux.start(100, 30, &command);
    tmux.wait_for("Balance 250.00 USD");
    std::fs::read_to_string(pid_file).unwrap().trim().to_string()
}

#[test]
fn no_color_is_respected_and_sigterm_and_sighup_give_the_terminal_back() {
    if !crate::common::tmux_available("no_color_is_respected_and_sigterm_and_sighup_give_the_terminal_back") {
        return;
    }
    for signal in ["TERM", "HUP"] {
        let home = tempfile::tempdir().unwrap();
        let tmux = Tmux::new(&format!("sig-{signal}"));
        let pid = start_demo(&tmux, &home, "NO_COLOR=1");
        let styled = tmux.run(&["capture-pane", "-p", "-e", "-t", "e2e"]);
        // Bold and reverse video only: no foreground or background colour codes.
        for colour in ["\u{1b}[3", "\u{1b}[4", "38;5;", "48;5;"] {
            let coloured: Vec<_> = styled
                .match_indices(colour)
                .filter(|(i, _)| {
                    // `ESC[4m` is underline and `ESC[39m`/`ESC[49m` reset colours: not colours.
                    let rest = &styled[i + colour.len()..];
                    !(rest.starts_with('m') || rest.starts_with("9m") || rest.starts_with("9;"))
                })
                .collect();
            assert!(coloured.is_empty(), "NO_COLOR: found {colour:?} in the screen");
        }
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .unwrap();
        assert!(status.success());
        // A signal ends the program: it exits through the normal path and restores the terminal.
        assert_eq!(tmux.exit_code(), 0, "SIG{signal}");
        assert!(tmux.alternate_screen_left(), "SIG{signal}");
        let screen = tmux.screen();
        assert!(
            !screen.contains("Balance 250.00"),
            "SIG{signal}: the dashboard is gone:\n{screen}"
        );
    }
}

/// Over tmux (as over SSH): the QR code captured off the pane decodes to the eSIM's activation
/// code, and `y` puts the ICCID in tmux's buffer through OSC 52.
#[test]
fn the_qr_code_read_off_the_pane_is_the_activation_code_and_y_reaches_tmux() {
    let Some((_home, tmux)) =
        Tmux::copying_demo_on_esims("qr", "ESIMDASH_CLIPBOARD=auto SSH_CONNECTION='10.0.0.1 22 10.0.0.2 22'")
    else {
        return;
    };
    // The first eSIM has only a QR image (decoded by the dashboard). The pane draws a code only
    // where it can be installed now, so `j` goes on past installed and ended eSIMs.
    let code_on = |screen: &str| -> Option<String> {
        let line = screen.lines().find(|l| l.contains("LPA:1$"))?;
        let from = &line[line.find("LPA:1$")?..];
        Some(from.split(|c: char| c.is_whitespace() || c == '│').next()?.to_string())
    };
    let mut previous = String::new();
    for step in 0..2 {
        if step == 1 {
            tmux.keys(&["j"]);
        }
        // Wait for this eSIM's code: after `j`, one different from the last.
        let started = Instant::now();
        let (screen, code) = loop {
            let screen = tmux.screen();
            if screen.contains("QR code not drawn") {
                tmux.keys(&["j"]);
                std::thread::sleep(Duration::from_millis(150));
                continue;
            }
            if let Some(code) = code_on(&screen).filter(|c| *c != previous) {
                break (screen, code);
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "step {step}: no new code:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let qr = crate::common::qr_from_screen(&screen).unwrap_or_else(|e| panic!("{e}:\n{screen}"));
        assert_eq!(
            qr.decode().unwrap(),
            code,
            "step {step}: the QR on the screen is the activation code"
        );
        // A screenshot of the capture, read by ZBar as a phone app would.
        if let Some(read) = crate::common::zbar_decode(&[qr.to_png(6).unwrap()]) {
            assert_eq!(read, vec![code.clone()], "step {step}: zbarimg on the screenshot");
        }
        previous = code;
    }
    let screen = tmux.screen();
    let selected = screen.lines().find(|l| l.starts_with('›')).unwrap();
    let iccid = selected.split_whitespace().nth(1).unwrap().to_string();
    tmux.keys(&["y"]);
    tmux.wait_for("ICCID sent to the terminal's clipboard (OSC 52 through tmux)");
    assert_eq!(tmux.run(&["show-buffer"]).trim(), iccid);
    tmux.quit();
}

/// The amount (a decimal, never a float) that follows `label` on the screen: `Total  15.84 USD`.
fn amount_after(label: &str, screen: &str) -> Decimal {
    let line = screen.lines().find(|l| l.contains(&format!("{label} "))).unwrap();
    let rest = &line[line.find(label).unwrap() + label.len()..];
    rest.split_whitespace().next().unwrap().parse().unwrap()
}

/// On `--demo`, by keys only: a top-up and a purchase, Enter hammered at each confirmation; each
/// debits once and shows in Orders.
#[test]
fn demo_top_up_and_purchase_by_keys_each_debit_once() {
    let Some((home, tmux)) = Tmux::demo_at_balance("buy", "") else {
        return;
    };
    let confirming = tmux.press_and_wait(&[
        ("3", "LPA:1$"),
        ("t", "Plans offered by the API"),
        ("Enter", "Enter: pay"),
    ]);
    let total = amount_after("Total", &confirming);
    tmux.keys(&["Enter", "Enter", "Enter", "Enter"]);
    tmux.wait_for("Placed: order");
    let after_topup = Decimal::new(25000, 2) - total;
    tmux.wait_for(&format!("Balance {after_topup} USD"));

    tmux.keys(&["Escape"]);
    tmux.keys(&["1"]);
    tmux.wait_for("of 366 plans");
    tmux.keys(&["b"]);
    tmux.wait_for("Quantity");
    tmux.keys(&["Enter"]);
    let price = amount_after("Total", &tmux.wait_for("Enter: pay"));
    tmux.keys(&["Enter", "Enter", "Enter"]);
    tmux.wait_for("Placed: order");
    let after_both = after_topup - price;
    tmux.wait_for(&format!("Balance {after_both} USD"));
    tmux.keys(&["Escape"]);
    tmux.keys(&["2"]);
    let orders = tmux.wait_for("402 total");
    assert!(orders.contains("Top-up"), "the top-up is in Orders:\n{orders}");
    tmux.quit();
    // Both payments are in the audit trail, stage by stage, under the demo's profile.
    let trail = esimdash_api::audit::read(&home.path().join("state/esimdash/audit.jsonl")).unwrap();
    let stages: Vec<(&str, &str)> = trail
        .entries
        .iter()
        .map(|e| (e.action.as_str(), e.stage.label()))
        .collect();
    assert_eq!(
        stages,
        [
            ("topup", "asked"),
            ("topup", "sent"),
            ("topup", "answered"),
            ("order", "asked"),
            ("order", "sent"),
            ("order", "answered")
        ]
    );
    assert!(trail.entries.iter().all(|e| e.profile == "demo"));
    assert_eq!(trail.entries[2].total, Some(total.to_string()));
}

/// A read-only seat in a real terminal: the header says so, the purchase window says why it
/// does not open; and the profile picker switches to the demo's other reseller while running.
#[test]
fn read_only_says_why_and_the_picker_switches_account_while_running() {
    let Some((_home, tmux)) = Tmux::demo_for("accounts", "ESIMDASH_READ_ONLY=1") else {
        return;
    };
    let screen = tmux.wait_for("Balance 250.00 USD");
    assert!(
        screen.contains("demo │ Acme Mobile") && screen.contains("read-only"),
        "{screen}"
    );
    tmux.wait_for("of 366 plans");
    tmux.keys(&["b"]);
    tmux.wait_for("Purchases are off: this session is read-only (ESIMDASH_READ_ONLY=1)");
    tmux.keys(&["P"]);
    tmux.wait_for("Switch profile");
    tmux.keys(&["Down", "Enter"]);
    let screen = tmux.wait_for("Balance 1000.00 USD");
    assert!(screen.contains("demo-globex │ Hank Scorpio"), "{screen}");
    assert!(!screen.contains("Acme"), "nothing of Acme's is left:\n{screen}");
    tmux.keys(&["2"]);
    tmux.wait_for("400 total");
    tmux.quit();
}

#[test]
fn a_config_that_binds_quit_to_shift_q_quits_on_it_and_help_says_so() {
    if !crate::common::tmux_available("a_config_that_binds_quit_to_shift_q_quits_on_it_and_help_says_so") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config/esimdash");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[keys]\nquit = [\"Q\", \"ctrl-c\"]\n").unwrap();
    let tmux = Tmux::demo("keys", &home, "");
    let screen = tmux.wait_for("of 366 plans");
    assert!(
        screen.contains("Q quit"),
        "the bottom line shows the rebound key:\n{screen}"
    );
    tmux.keys(&["?"]);
    let help = tmux.wait_for("Keys");
    assert!(
        help.lines().any(|l| l.contains("Q, Ctrl-c") && l.contains("quit")),
        "help lists Q for quit:\n{help}"
    );
    tmux.keys(&["Escape", "q"]);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(tmux.exited(), None, "q no longer quits");
    tmux.keys(&["Q"]);
    assert_eq!(tmux.exit_code(), 0);
}

/// Found by ICCID, then Esc: `y` copies that ICCID, with the search still shown (one Esc
/// closes the detail) and after the search closed (the list on the found eSIM's page and row).
#[test]
fn a_found_esim_stays_selected_after_esc_and_y_copies_its_iccid() {
    let Some((_home, tmux)) = Tmux::copying_demo_on_esims("find", "ESIMDASH_CLIPBOARD=osc52") else {
        return;
    };
    // The oldest eSIM: the list's last row, far from page 1.
    tmux.keys(&["G"]);
    let started = Instant::now();
    let iccid = loop {
        let screen = tmux.screen();
        let row = screen.lines().find(|l| l.starts_with('›')).map(str::to_string);
        if let Some(iccid) = row.and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
            && screen.contains("8/8")
        {
            break iccid;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "no last page:\n{screen}");
        std::thread::sleep(Duration::from_millis(50));
    };
    eprintln!("looking for the oldest eSIM, {iccid}");
    tmux.keys(&["g", "/"]);
    tmux.run(&["send-keys", "-t", "e2e", "-l", &iccid]);
    tmux.wait_for("Found the eSIM with that ICCID");
    let selected = |screen: &str| {
        screen
            .lines()
            .find(|l| l.starts_with('›'))
            .and_then(|l| l.split_whitespace().nth(1))
            .map(str::to_string)
    };
    for step in ["the search still shown", "the search closed"] {
        tmux.keys(&["Escape"]);
        let started = Instant::now();
        // The second Esc keeps the same row selected: wait for the search to close too, or `y`
        // and the check below race the key.
        let done = |screen: &str| {
            selected(screen).as_deref() == Some(iccid.as_str())
                && (step == "the search still shown" || !screen.contains("search:"))
        };
        while !done(&tmux.screen()) {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{step}: the found eSIM is not selected:\n{}",
                tmux.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        tmux.run(&["delete-buffer"]);
        tmux.keys(&["y"]);
        tmux.wait_for("ICCID sent to the terminal's clipboard");
        assert_eq!(tmux.run(&["show-buffer"]).trim(), iccid, "{step}");
    }
    assert!(!tmux.screen().contains("search:"), "the search is closed");
    tmux.quit();
}

/// A revoked key: the dashboard shows why and, on `q`, exits 3 as the commands do, so a script
/// or a wrapper that opened it learns the credentials were refused.
#[test]
fn refused_credentials_end_the_dashboard_with_exit_3() {
    if !crate::common::tmux_available("refused_credentials_end_the_dashboard_with_exit_3") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let mut sandbox = Command::new(env!("CARGO_BIN_EXE_esimdash"))
        .args(["sandbox", "--addr", "127.0.0.1:0", "--orders", "20"])
        .stdin(std::process::Stdio::null())
        .env("HOME", home.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let banner = crate::common::sandbox_banner(&mut sandbox.stdout.take().unwrap());
    let base = banner
        .split_whitespace()
        .find(|w| w.starts_with("http://") && w.contains("/api/v1"))
        .unwrap_or_else(|| panic!("a base URL in {banner}"))
        .to_string();
    let tmux = Tmux::new("refused");
    let command = format!(
        "HOME={home} XDG_STATE_HOME={home}/state XDG_CONFIG_HOME={home}/config ESIMDASH_BASE_URL={base} \
         ESIMDASH_ACCESS_CODE=ak_demo_revoked ESIMDASH_SECRET_KEY=sk_demo_revoked {bin} --no-cache",
        home = home.path().display(),
        bin = env!("CARGO_BIN_EXE_esimdash"),
    );
    tmux.start(80, 24, &command);
    // Killed even when a wait below fails: a sandbox left running would hold the test's pipe.
    struct Stop(std::process::Child);
    impl Drop for Stop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _stop = Stop(sandbox);
    tmux.wait_for("API key revoked or expired");
    tmux.keys(&["q"]);
    assert_eq!(tmux.exit_code(), 3);
}

/// The command palette at 80×24 and 120×40: `:` opens it, three letters find "top up", Enter
/// runs it as `t` would (on the catalog: "Top up which eSIM?"); Ctrl-P opens it too, and Esc
/// closes it with nothing run.
#[test]
fn the_palette_finds_top_up_in_three_letters_and_runs_it() {
    for (width, height) in [(80, 24), (120, 40)] {
        if !crate::common::tmux_available_here() {
            return;
        }
        let home = tempfile::tempdir().unwrap();
        let tmux = Tmux::demo_sized(&format!("palette-{width}"), &home, "", (width, height));
        tmux.wait_for(DEMO_BALANCE);
        tmux.keys(&[":"]);
        tmux.wait_for("Command palette");
        tmux.keys(&["t", "o", "p"]);
        let screen = tmux.wait_until("top up chosen", |s| {
            s.lines().any(|l| l.contains('›') && l.contains("top up:"))
        });
        assert!(screen.contains("Find: top"), "{screen}");
        tmux.keys(&["Enter"]);
        tmux.wait_for("Top up which eSIM?");
        tmux.keys(&["Escape"]);
        tmux.wait_until("the prompt closed", |s| !s.contains("Top up which eSIM?"));
        tmux.keys(&["C-p"]);
        tmux.wait_for("Command palette");
        tmux.keys(&["Escape"]);
        tmux.wait_until("the palette closed", |s| !s.contains("Command palette"));
        tmux.quit();
    }
}

/// The team's own commands from the config file, run from the palette on the eSIM chosen: the
/// command gets the ICCID and the other fields each as its own argument (a `$(…)` in one stays
/// text), no secret in its environment, and its output and exit status show; a command that
/// hangs is stopped at its time limit and says so.
#[test]
fn a_team_command_gets_its_fields_as_arguments_no_secret_and_a_hung_one_is_stopped() {
    if !crate::common::tmux_available_here() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let script = home.path().join("record.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '{o}/argv'\nenv > '{o}/env'\necho recorded $# arguments\n",
            o = out.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = home.path().join("config/esimdash");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[[commands]]\nname = \"Record it\"\non = \"esim\"\nrun = [\"{}\", \"{{iccid}}\", \"{{package}}\", \"$(touch {}/pwned)\"]\n\n[[commands]]\nname = \"Hang\"\non = \"esim\"\nrun = [\"sleep\", \"30\"]\ntimeout_secs = 1\n",
            script.display(),
            out.display()
        ),
    )
    .unwrap();
    let tmux = Tmux::demo_sized("team-command", &home, "ESIMDASH_SECRET_KEY=sk_must_not_leak", (120, 40));
    tmux.wait_for(DEMO_BALANCE);
    tmux.keys(&["3"]);
    tmux.wait_for("1/");
    tmux.keys(&[":", "r", "e", "c"]);
    tmux.wait_until("the command offered", |s| s.contains("Record it (the team's command)"));
    tmux.keys(&["Enter"]);
    tmux.wait_for("ended with exit status 0");
    tmux.wait_for("recorded 3 arguments");
    let argv = std::fs::read_to_string(out.join("argv")).unwrap();
    let argv: Vec<&str> = argv.lines().collect();
    assert_eq!(argv.len(), 3, "{argv:?}");
    assert!(
        argv[0].len() >= 19 && argv[0].chars().all(|c| c.is_ascii_digit()),
        "{argv:?}"
    );
    assert!(argv[2].starts_with("$(touch "), "{argv:?}");
    assert!(!out.join("pwned").exists(), "no shell ran the value");
    let env = std::fs::read_to_string(out.join("env")).unwrap();
    assert!(!env.contains("ESIMDASH") && !env.contains("sk_must_not_leak"), "{env}");
    tmux.keys(&["Escape"]);
    tmux.wait_until("the window closed", |s| !s.contains("recorded 3 arguments"));
    tmux.keys(&[":", "h", "a", "n", "g"]);
    tmux.wait_until("the command offered", |s| s.contains("Hang (the team's command)"));
    tmux.keys(&["Enter"]);
    tmux.wait_for("stopped at its time limit (1 s)");
    tmux.keys(&["Escape"]);
    tmux.wait_until("the window closed", |s| !s.contains("time limit"));
    tmux.quit();
}

/// `T` on My eSIMs opens the eSIM's triage at 80×24: its checks read over HTTP, each marked,
/// and `c` puts the escalation pack on the clipboard (said on the status line).
#[test]
fn the_triage_window_shows_the_checks_and_copies_the_pack() {
    if !crate::common::tmux_available_here() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let tmux = Tmux::demo_sized("triage", &home, "", (80, 24));
    tmux.wait_for(DEMO_BALANCE);
    tmux.keys(&["3"]);
    tmux.wait_for("1/");
    tmux.keys(&["T"]);
    let screen = tmux.wait_for("Manual SM-DP+");
    assert!(screen.contains("Triage of 89"), "{screen}");
    assert!(screen.contains("Profile state"), "{screen}");
    assert!(
        ["ok  ", "FAIL", "ASK "].iter().any(|m| screen.contains(m)),
        "each check is marked: {screen}"
    );
    tmux.keys(&["c"]);
    tmux.wait_until("the pack copied", |s| s.to_lowercase().contains("escalation pack"));
    tmux.keys(&["Escape"]);
    tmux.wait_until("the window closed", |s| !s.contains("Triage of"));
    tmux.quit();
}

/// Saved views from the config file at 80×24 and 120×40: `V` lists the tab's views and says
/// the entry that is not one with its line (the dashboard opened all the same); Enter shows a
/// view's rows and puts its name in the tab bar; `s` saves the filters shown as a new view in
/// the config file.
#[test]
fn a_saved_view_shows_its_rows_and_its_name_and_one_is_saved_from_the_filters() {
    for (width, height) in [(80, 24), (120, 40)] {
        if !crate::common::tmux_available_here() {
            return;
        }
        let home = tempfile::tempdir().unwrap();
        let config = home.path().join("config/esimdash");
        std::fs::create_dir_all(&config).unwrap();
        let file = config.join("config.toml");
        std::fs::write(
            &file,
            "[[views]]\nname = \"Ready to install\"\ntab = \"esims\"\nstatus = \"got_resource\"\n\n[[views]]\nname = \"Broken\"\ntab = \"esims\"\nsort = \"price\"\n",
        )
        .unwrap();
        let tmux = Tmux::demo_sized(&format!("views-{width}"), &home, "", (width, height));
        tmux.wait_for(DEMO_BALANCE);
        tmux.keys(&["3"]);
        tmux.wait_for("1/");
        tmux.keys(&["V"]);
        let screen = tmux.wait_for("Saved views: My eSIMs");
        assert!(screen.contains("Ready to install"), "{screen}");
        assert!(screen.contains("line 6"), "the broken entry names its line: {screen}");
        tmux.keys(&["Enter"]);
        let screen = tmux.wait_until("the view shown", |s| s.contains("[Ready to install]"));
        let rows: Vec<&str> = screen
            .lines()
            .filter(|l| l.contains("ready") || l.contains("in use"))
            .collect();
        assert!(rows.iter().any(|l| l.contains("ready")), "{screen}");
        assert!(
            !rows.iter().any(|l| l.contains("in use")),
            "only the view's rows: {screen}"
        );
        // Another filter, saved as a view of its own.
        tmux.keys(&["!"]);
        tmux.wait_until("the view no longer shown", |s| !s.contains("[Ready to install]"));
        tmux.keys(&["V"]);
        tmux.wait_for("Saved views: My eSIMs");
        tmux.keys(&["s"]);
        tmux.wait_for("Saved the view");
        let saved = std::fs::read_to_string(&file).unwrap();
        assert!(saved.contains("attention = true"), "{saved}");
        assert!(
            saved.starts_with("[[views]]\nname = \"Ready to install\""),
            "the file's lines kept: {saved}"
        );
        tmux.wait_until("its name in the bar", |s| s.contains("[esims: got_resou"));
        tmux.quit();
    }
}
