//! The profile form (`e` on the Profile tab): company name, country, website, checked by the same
//! rules as the server before anything is sent.

use crate::app::input::{Pasted, TextInput};
use crate::app::{Mode, Then, Tone};
use crate::keymap::Action;
use esimdash_api::model::{Profile, ProfileUpdate};
use esimdash_domain::profile_fields::{MAX_COMPANY_CHARS, check_company, check_country, check_website};

pub const FIELDS: [&str; 3] = ["Company name", "Country", "Website"];

#[derive(Debug, Clone, Default)]
pub struct ProfileForm {
    pub inputs: [TextInput; 3],
    pub focus: usize,
    pub errors: [Option<String>; 3],
    /// The server's answer when it refused the update.
    pub server_error: Option<String>,
    original: [String; 3],
}

impl ProfileForm {
    /// Its keys (`saving`: an update is in flight, and Enter waits for it).
    pub fn on_action(&mut self, action: Action, saving: bool) -> Vec<Then> {
        match action {
            Action::Close => return vec![Then::Mode(Mode::Browse)],
            Action::NextField => self.focus_next(),
            Action::PreviousField => self.focus_previous(),
            Action::Accept if !saving => {
                self.server_error = None;
                let Some(update) = self.validate() else {
                    return Vec::new();
                };
                if update == ProfileUpdate::default() {
                    return vec![
                        Then::Mode(Mode::Browse),
                        Then::Flash("Nothing changed".to_string(), Tone::Info),
                    ];
                }
                return vec![Then::SaveProfile(update)];
            }
            _ => {}
        }
        Vec::new()
    }

    /// A key typed into the field in focus (its error goes once it is edited).
    pub fn edit(&mut self, key: crossterm::event::KeyEvent) {
        if self.inputs[self.focus].handle(key) {
            self.errors[self.focus] = None;
        }
    }

    /// A paste into the field in focus, as one edit.
    pub fn paste(&mut self, text: &str) -> Pasted {
        let pasted = self.inputs[self.focus].paste(text);
        if pasted.changed {
            self.errors[self.focus] = None;
        }
        pasted
    }

    pub fn new(profile: &Profile) -> Self {
        let original = [
            profile.company_name.clone(),
            profile.country.clone(),
            profile.website.clone(),
        ];
        let mut inputs = original.clone().map(|v| TextInput::with_value(&v));
        inputs[0].max_chars = Some(MAX_COMPANY_CHARS);
        // Room for what people type ("AUT", "Austria"): the check says why it is refused,
        // instead of the field cutting it to another country's code.
        inputs[1].max_chars = Some(32);
        inputs[2].max_chars = Some(crate::app::input::URL_MAX_CHARS);
        Self {
            inputs,
            focus: 0,
            errors: Default::default(),
            server_error: None,
            original,
        }
    }

    pub fn focus_next(&mut self) {
        self.focus = (self.focus + 1) % FIELDS.len();
    }

    pub fn focus_previous(&mut self) {
        self.focus = (self.focus + FIELDS.len() - 1) % FIELDS.len();
    }

    /// Checks every field; the update holds only what changed. `None` when a field is wrong
    /// (the messages are then set on the fields).
    pub fn validate(&mut self) -> Option<ProfileUpdate> {
        let values = self.inputs.clone().map(|i| i.value.trim().to_string());
        self.errors = [
            check_company(&values[0]).err(),
            check_country(&values[1]).err(),
            check_website(&values[2]).err(),
        ];
        if self.errors.iter().any(Option::is_some) {
            return None;
        }
        let country = check_country(&values[1]).unwrap_or_default();
        let changed = |i: usize, v: String| (v != self.original[i]).then_some(v);
        Some(ProfileUpdate {
            company_name: changed(0, values[0].clone()),
            country: changed(1, country),
            website: changed(2, values[2].clone()),
        })
    }
}
