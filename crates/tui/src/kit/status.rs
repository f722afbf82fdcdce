//! What the screen says of where things stand: a message's tone, and why requests stopped.

/// How a message in the status line reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Info,
    Success,
    Error,
}

/// Why requests stopped until the user acts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Halt {
    /// 401: nothing more is sent; the view is replaced by a banner.
    Unauthorized { revoked: bool, message: String },
    /// The network failed; `r` tries again.
    Offline { message: String },
}
