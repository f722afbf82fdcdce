//! A real terminal for the tests: tmux on a private socket, one session running one command.
//! The command's exit status comes from a file its shell writes, never from text on the screen:
//! a program killed in raw mode leaves the terminal without carriage returns, so whatever the
//! shell prints next starts where its "Killed …" line ended, and that line holds the paths of the
//! clone and of the temporary folder; with long ones, printed text wrapped and was never seen.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// How long a wait for the screen or for the exit lasts before the test fails with the screen.
const WAIT: Duration = Duration::from_secs(20);

/// The one session of each server.
const SESSION: &str = "e2e";

pub struct Tmux {
    socket: String,
    /// Holds the file the shell writes the command's exit status to.
    status: tempfile::TempDir,
}

#[allow(dead_code)]
impl Tmux {
    /// A tmux server of this test's own (`name` tells it from the others of this process).
    pub fn new(name: &str) -> Tmux {
        Tmux {
            socket: format!("esimdash-{name}-{}", std::process::id()),
            status: tempfile::tempdir().expect("a temporary folder for the exit status"),
        }
    }

    /// Runs `command` (a shell command line) in a `width`×`height` session. When it ends, its
    /// exit status goes to the status file and the pane stays as the command left it.
    pub fn start(&self, width: u16, height: u16, command: &str) {
        let command = format!(
            "{command}; echo $? > '{status}'; sleep 30",
            status = self.status_file().display()
        );
        let (width, height) = (width.to_string(), height.to_string());
        self.run(&[
            "new-session",
            "-d",
            "-s",
            SESSION,
            "-x",
            &width,
            "-y",
            &height,
            &command,
        ]);
    }

    fn status_file(&self) -> PathBuf {
        self.status.path().join("exit-status")
    }

    pub fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", SESSION])
    }

    /// Waits until the screen holds `text`, or fails with what it shows.
    pub fn wait_for(&self, text: &str) -> String {
        self.wait_until(text, |screen| screen.contains(text))
    }

    /// Waits until `done` holds for the screen, or fails with what it shows; returns the screen.
    pub fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                started.elapsed() < WAIT,
                "waited for {what:?}; the screen shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The command's exit status (128 + n for signal n) if it has ended.
    pub fn exited(&self) -> Option<i32> {
        let written = std::fs::read_to_string(self.status_file()).ok()?;
        // Complete once its line ends: the shell may have created the file and not written.
        written.strip_suffix('\n')?.parse().ok()
    }

    /// Waits for the command to end and returns its exit status (128 + n for signal n).
    pub fn exit_code(&self) -> i32 {
        let started = Instant::now();
        loop {
            if let Some(code) = self.exited() {
                return code;
            }
            assert!(
                started.elapsed() < WAIT,
                "waited for the command to end; the screen shows:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether the pane is on the alternate screen (a full-screen program's).
    pub fn alternate_on(&self) -> bool {
        self.run(&["display-message", "-p", "-t", SESSION, "#{alternate_on}"])
            .trim()
            == "1"
    }

    /// Waits for the pane to leave the alternate screen; whether it did within the wait. After
    /// an exit too: the program's last output may reach tmux after its shell wrote the status.
    pub fn alternate_screen_left(&self) -> bool {
        let started = Instant::now();
        while self.alternate_on() {
            if started.elapsed() >= WAIT {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }

    /// Presses each key and waits for its text on the screen, in turn: what a user types and
    /// sees. Returns the last screen.
    pub fn press_and_wait(&self, steps: &[(&str, &str)]) -> String {
        let mut screen = String::new();
        for (key, text) in steps {
            self.keys(&[key]);
            screen = self.wait_for(text);
        }
        screen
    }

    /// `q`, and the dashboard ends with exit status 0.
    #[allow(dead_code)] // in the test binaries that drive the dashboard only
    pub fn quit(&self) {
        self.keys(&["q"]);
        assert_eq!(self.exit_code(), 0, "q ends the dashboard with status 0");
    }

    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.run(&["send-keys", "-t", SESSION, k]);
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
