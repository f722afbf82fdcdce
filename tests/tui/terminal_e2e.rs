//! The real binary with `--demo`, in a real terminal (tmux on a private socket): the balance
//! shows, tabs switch, an order search runs, `q` quits and the terminal is given back.

use std::process::Command;
use std::time::{Duration, Instant};

struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "e2e"])
    }

    /// Waits until the screen holds `text`, or fails with what it shows.
    fn wait_for(&self, text: &str) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "waited for {text:?}; the screen shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.run(&["send-keys", "-t", "e2e", k]);
            // One at a time: Esc followed at once by a key would read as Alt+key.
            std::thread::sleep(Duration::from_millis(60));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

#[test]
fn demo_shows_the_balance_switches_tabs_searches_and_quits_cleanly() {
    let home = tempfile::tempdir().unwrap();
    let tmux = Tmux {
        socket: format!("esimdash-e2e-{}", std::process::id()),
    };
    let command = format!(
        "HOME={home} XDG_STATE_HOME={home}/state XDG_CONFIG_HOME={home}/config {bin} --demo; echo EXITED $?; sleep 30",
        home = home.path().display(),
        bin = env!("CARGO_BIN_EXE_esimdash"),
    );
    tmux.run(&["new-session", "-d", "-s", "e2e", "-x", "120", "-y", "40", &command]);

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

    tmux.keys(&["q"]);
    tmux.wait_for("EXITED 0");
    assert_eq!(
        tmux.run(&["display-message", "-p", "-t", "e2e", "#{alternate_on}"])
            .trim(),
        "0",
        "left the alternate screen"
    );
    let screen = tmux.screen();
    assert!(
        !screen.contains("Balance 250.00"),
        "the dashboard is gone from the terminal:\n{screen}"
    );
}
