//! Taking the terminal over and giving it back: raw mode, the alternate screen, bracketed paste
//! and mouse capture on the way in; all undone on the way out, whether by quitting, a signal or
//! a panic; and both around a suspension (Ctrl-Z, SIGTSTP) until the process is continued.

use crossterm::event::{DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture};
use crossterm::execute;
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{Stdout, stdout};
use std::path::PathBuf;

pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Takes the terminal over; the mouse is reported only when `mouse` is on.
pub fn enter(mouse: bool) -> std::io::Result<Term> {
    enable_raw_mode()?;
    if let Err(e) = execute!(stdout(), EnterAlternateScreen, EnableBracketedPaste).and_then(|()| set_mouse(mouse)) {
        leave();
        return Err(e);
    }
    Terminal::new(CrosstermBackend::new(stdout())).inspect_err(|_| leave())
}

/// Mouse reporting on (wheel and clicks reach the dashboard) or off (the terminal selects text).
pub fn set_mouse(on: bool) -> std::io::Result<()> {
    if on {
        execute!(stdout(), EnableMouseCapture)
    } else {
        execute!(stdout(), DisableMouseCapture)
    }
}

/// Restores the terminal. Errors are ignored: after a hang-up there is no terminal to restore.
pub fn leave() {
    let _ = disable_raw_mode();
    let _ = execute!(
        stdout(),
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// Gives the terminal back and stops the process, as Ctrl-Z does for a program that has not
/// taken the terminal over; returns once it is continued (`fg`, SIGCONT). SIGSTOP cannot be
/// caught, so this stop is not seen again as a SIGTSTP to handle.
#[cfg(unix)]
pub fn stop_process() {
    leave();
    // SAFETY: raise only sends a signal to this process; no memory is involved.
    unsafe {
        libc::raise(libc::SIGSTOP);
    }
}

#[cfg(not(unix))]
pub fn stop_process() {}

/// Takes the terminal again after the process was continued: raw mode (applied again even if
/// it was on, since the shell resets the terminal's modes while a job is stopped), the
/// alternate screen and bracketed paste. Mouse reporting is the app's to set again; the caller
/// clears the screen so the next frame is drawn whole.
pub fn resume() -> std::io::Result<()> {
    let _ = disable_raw_mode();
    enable_raw_mode()?;
    execute!(stdout(), EnterAlternateScreen, EnableBracketedPaste)
}

/// On a panic: restore the terminal first, then say what happened and where the log is.
pub fn install_panic_hook(log: Option<PathBuf>) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if esimdash_domain::panic_guard::inside() {
            // Contained and turned into an error: the dashboard carries on.
            tracing::error!(%info, "contained panic");
            return;
        }
        leave();
        tracing::error!(%info, "panic");
        previous(info);
        match &log {
            Some(path) => eprintln!(
                "esimdash stopped on an internal error; the terminal was restored. The log is at {}",
                path.display()
            ),
            None => eprintln!("esimdash stopped on an internal error; the terminal was restored."),
        }
    }));
}
