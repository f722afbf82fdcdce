//! Drawing what the app shows: each tab's view in its folder, the windows over them
//! (`overlays`), the lists and widgets they share, the theme, and the frame's context every
//! view reads besides its own state (`look`). The app draws its own header and status line
//! (`app/screen.rs`).

pub(crate) mod lists;
mod look;
pub(crate) mod overlays;
pub mod theme;
pub(crate) mod widgets;

pub use look::{Focus, Look};

/// Below this the dashboard says how large the terminal must be instead of drawing.
pub const MIN_WIDTH: u16 = 50;
pub const MIN_HEIGHT: u16 = 12;
