//! The signals that end a session (Ctrl-C, SIGTERM, a hang-up when an SSH connection drops),
//! caught so that a payment in flight is waited for, and its outcome written, before the
//! process ends.

/// Which signal asked the process to stop, once one did (`Stop as u8 + 1`; 0 none yet): after
/// it no resend is started (one in flight is waited for).
static STOPPED_BY: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// The signal that asked the process to stop, if one did.
pub fn stopped_by() -> Option<Stop> {
    match STOPPED_BY.load(std::sync::atomic::Ordering::SeqCst) {
        1 => Some(Stop::Interrupt),
        2 => Some(Stop::Terminate),
        3 => Some(Stop::HangUp),
        _ => None,
    }
}

/// Whether the process was asked to stop.
pub fn stopping() -> bool {
    stopped_by().is_some()
}

/// Why the process was asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Interrupt,
    Terminate,
    HangUp,
}

impl Stop {
    /// The shell's code for a process ended by this signal (128 + its number).
    pub fn exit_code(self) -> u8 {
        match self {
            Stop::HangUp => 129,
            Stop::Interrupt => 130,
            Stop::Terminate => 143,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Stop::Interrupt => "Ctrl-C",
            Stop::Terminate => "SIGTERM",
            Stop::HangUp => "SIGHUP",
        }
    }
}

/// The three signals, listened to from creation on (each replaces the default of ending the
/// process at once).
pub struct Stops {
    #[cfg(unix)]
    streams: Option<[tokio::signal::unix::Signal; 3]>,
}

impl Stops {
    pub fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let streams = match (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            ) {
                (Ok(i), Ok(t), Ok(h)) => Some([i, t, h]),
                _ => {
                    tracing::warn!("the stop signals could not be caught");
                    None
                }
            };
            Self { streams }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// The next stop signal; never, where they could not be caught.
    pub async fn next(&mut self) -> Stop {
        #[cfg(unix)]
        if let Some([int, term, hup]) = &mut self.streams {
            let stop = tokio::select! {
                _ = int.recv() => Stop::Interrupt,
                _ = term.recv() => Stop::Terminate,
                _ = hup.recv() => Stop::HangUp,
            };
            tracing::info!(signal = stop.name(), "stop signal");
            let _ = STOPPED_BY.compare_exchange(
                0,
                stop as u8 + 1,
                std::sync::atomic::Ordering::SeqCst,
                std::sync::atomic::Ordering::SeqCst,
            );
            return stop;
        }
        std::future::pending().await
    }
}

impl Default for Stops {
    fn default() -> Self {
        Self::new()
    }
}

/// After a hang-up the terminal is gone: standard input and output are pointed at /dev/null,
/// so that what is still written (a result, a last frame) goes nowhere instead of failing.
pub fn detach_stdio() {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let Ok(null) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null") else {
            return;
        };
        for fd in [0, 1, 2] {
            // SAFETY: dup2 onto the standard descriptors with a descriptor we own; no Rust
            // object owns 0, 1 or 2, and the standard streams keep working on the new file.
            unsafe {
                libc::dup2(null.as_raw_fd(), fd);
            }
        }
    }
}
