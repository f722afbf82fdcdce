//! "Top up which eSIM?": an ICCID typed in, checked as it is accepted; the eSIM's top-up opens
//! from it.

use crate::keymap::Action;
use crate::kit::input::{Pasted, TextInput};
use crate::kit::tab::Tab;
use crate::kit::then::{About, Then};
use esimdash_domain::iccid::Iccid;

/// Its keys: Enter tops up the eSIM typed (My eSIMs knows where it was seen), or says why it
/// is not an ICCID, under it.
pub fn on_action(action: Action, input: &TextInput, error: &mut Option<String>) -> Vec<Then> {
    match action {
        Action::Close => vec![Then::Close],
        Action::Accept => match Iccid::parse(&input.value) {
            Ok(iccid) => vec![Then::Hand {
                tab: Tab::Esims,
                action: Action::TopUp,
                about: About::Iccid(iccid),
            }],
            Err(e) => {
                *error = Some(e.to_string());
                Vec::new()
            }
        },
        _ => Vec::new(),
    }
}

/// A key typed into the ICCID (its error goes once it is edited).
pub fn edit(input: &mut TextInput, error: &mut Option<String>, key: crossterm::event::KeyEvent) {
    if input.handle(key) {
        *error = None;
    }
}

/// A paste into the ICCID, as one edit.
pub fn paste(input: &mut TextInput, error: &mut Option<String>, text: &str) -> Pasted {
    let pasted = input.paste(text);
    if pasted.changed {
        *error = None;
    }
    pasted
}
