//! The profile form (`e` on the Profile tab): company name, country, website, checked by the same
//! rules as the server before anything is sent.

use crate::keymap::{Action, Context};
use crate::kit::input::{Pasted, TextInput};
use crate::kit::status::Tone;
use crate::kit::then::Then;
use crate::view::Look;
use crate::view::theme::Theme;
use crate::view::widgets::{keys_line, paragraph, popup, safe};
use esimdash_api::model::{Profile, ProfileUpdate};
use esimdash_domain::profile_fields::{MAX_COMPANY_CHARS, check_company, check_country, check_website};
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};

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
            Action::Close => return vec![Then::Close],
            Action::NextField => self.focus_next(),
            Action::PreviousField => self.focus_previous(),
            Action::Accept if !saving => {
                self.server_error = None;
                let Some(update) = self.validate() else {
                    return Vec::new();
                };
                if update == ProfileUpdate::default() {
                    return vec![Then::Close, Then::Flash("Nothing changed".to_string(), Tone::Info)];
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
        inputs[2].max_chars = Some(crate::kit::input::URL_MAX_CHARS);
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

/// The company profile's fields, the one in focus with the terminal's cursor in it.
pub(crate) fn draw(frame: &mut Frame, area: Rect, form: &ProfileForm, look: &Look<'_>, theme: &Theme) {
    const WIDTH: u16 = 70;
    const INDENT: usize = 16;
    let room = usize::from(WIDTH.min(area.width).saturating_sub(2));
    let mut lines = Vec::new();
    // The focused field's row and column in the window.
    let mut cursor = None;
    for (i, label) in FIELDS.iter().enumerate() {
        let focused = i == form.focus;
        let marker = if focused { "›" } else { " " };
        let prefix = format!("{marker} {label:<13} ");
        if focused {
            cursor = Some((lines.len(), prefix.chars().count() + form.inputs[i].cursor));
        }
        lines.push(Line::from(vec![
            Span::styled(prefix, if focused { theme.key() } else { theme.muted() }),
            Span::raw(safe(&form.inputs[i].value)),
        ]));
        match &form.errors[i] {
            // Wrapped here, under the value, so that the rows below (and the cursor) stay put.
            Some(e) => lines.extend(
                esimdash_domain::text::wrap_words(&safe(e), room.saturating_sub(INDENT))
                    .into_iter()
                    .map(|l| Line::styled(format!("{:INDENT$}{l}", ""), theme.error())),
            ),
            None => lines.push(Line::raw("")),
        }
    }
    lines.push(if look.saving {
        Line::styled(format!("{} saving…", look.spinner()), theme.muted())
    } else if let Some(e) = &form.server_error {
        Line::styled(format!("The server refused: {}", safe(e)), theme.error())
    } else {
        keys_line(
            look,
            Context::ProfileForm,
            "{} saves, {} cancels. An empty field clears it.",
            &[Action::Accept, Action::Close],
            theme.muted(),
        )
    });
    let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX).max(12);
    let inner = popup(frame, area, "Edit company profile", WIDTH, height, theme);
    paragraph(frame, inner, lines);
    if let Some((row, column)) = cursor {
        let x = inner.x.saturating_add(u16::try_from(column).unwrap_or(u16::MAX));
        let y = inner.y.saturating_add(u16::try_from(row).unwrap_or(u16::MAX));
        let (right, bottom) = (inner.right().saturating_sub(1), inner.bottom().saturating_sub(1));
        frame.set_cursor_position(Position::new(x.min(right), y.min(bottom)));
    }
}
