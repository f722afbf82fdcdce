//! "Top up which eSIM?": an ICCID typed in, checked as it is accepted; the eSIM's top-up opens
//! from it.

use crate::domain::iccid::Iccid;
use crate::tui::app::input::{ICCID_MAX_CHARS, TextInput};
use crate::tui::app::mode::{Mode, Overlay};

/// The prompt, empty.
pub fn open() -> Mode {
    Mode::Overlay(Overlay::IccidPrompt {
        input: TextInput::limited(ICCID_MAX_CHARS),
        error: None,
    })
}

/// Enter: the ICCID typed, or why it is not one (shown under it).
pub fn accept(input: &TextInput, error: &mut Option<String>) -> Option<Iccid> {
    match Iccid::parse(&input.value) {
        Ok(iccid) => Some(iccid),
        Err(e) => {
            *error = Some(e.to_string());
            None
        }
    }
}
