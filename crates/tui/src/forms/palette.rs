//! The command palette (`:` or Ctrl-P): every action of the keymap where the keyboard was,
//! found by typing a few letters of what it does, with its key beside it; Enter runs it as its
//! key would. Its list is made from the keymap in force when it opens (no list kept by hand: an
//! action added to the keymap is here), the contexts in the order keys are looked up, so the
//! first of two rows for one action is the one its key would reach. The team's own commands
//! (`[[commands]]`) of the record chosen follow, each by its name.

use crate::keymap::{Action, Chord, Context, Keymap};
use crate::kit::input::TextInput;
use crate::view::Look;
use crate::view::theme::Theme;
use crate::view::widgets::{keys_line, popup, safe, window_start};
use esimdash_front::team_commands::{Subject, TeamCommand};
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
use ratatui::text::Line;

/// The most characters the search takes.
const MOST_CHARS: usize = 60;

/// One action as the palette offers it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub run: Run,
    /// Its keys, as help writes them (`q, Ctrl-c`); a team command's: `cmd`.
    pub keys: String,
    pub about: String,
}

/// What Enter on an entry does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Run {
    /// The action, as its first key would in its context.
    Action {
        context: Context,
        action: Action,
        chord: Chord,
    },
    /// The team command of this place in the config's list.
    Command(usize),
}

impl Entry {
    /// The keymap's action, where it is one.
    pub fn action(&self) -> Option<Action> {
        match self.run {
            Run::Action { action, .. } => Some(action),
            Run::Command(_) => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Palette {
    pub input: TextInput,
    pub cursor: usize,
    entries: Vec<Entry>,
    /// Opened from the eSIM pane shown alone (a narrow terminal): where it goes back to.
    pub from_detail: bool,
}

impl Palette {
    /// The actions of `contexts` (in the order their keys are looked up), each once, then the
    /// team's `commands` about `subject` (the record chosen).
    pub fn new(
        keymap: &Keymap,
        contexts: &[Context],
        (commands, subject): (&[TeamCommand], Option<Subject>),
        from_detail: bool,
    ) -> Palette {
        let mut entries: Vec<Entry> = Vec::new();
        for &context in contexts {
            for row in keymap.rows().iter().filter(|r| r.binding.context == context) {
                let action = row.binding.action;
                let Some(&chord) = row.keys.first() else { continue };
                if action == Action::Palette || entries.iter().any(|e| e.action() == Some(action)) {
                    continue;
                }
                entries.push(Entry {
                    run: Run::Action { context, action, chord },
                    keys: row.keys_text(),
                    about: row.binding.about.to_string(),
                });
            }
        }
        for (i, command) in commands.iter().enumerate() {
            if Some(command.on) == subject {
                entries.push(Entry {
                    run: Run::Command(i),
                    keys: "cmd".to_string(),
                    about: format!("{} (the team's command)", command.name),
                });
            }
        }
        Palette {
            input: TextInput::limited(MOST_CHARS),
            cursor: 0,
            entries,
            from_detail,
        }
    }

    /// Every action offered, whatever is typed.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The actions that match what is typed, best first (all, in the keymap's order, before
    /// anything is typed).
    pub fn matching(&self) -> Vec<&Entry> {
        let query = self.input.value.trim().to_lowercase();
        let mut scored: Vec<(u32, usize, &Entry)> = self
            .entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| {
                let name = e.action().map_or(String::new(), |a| a.name().replace('_', " "));
                let text = format!("{} {name}", e.about).to_lowercase();
                score(&query, &text).map(|s| (s, i, e))
            })
            .collect();
        scored.sort_by_key(|&(s, i, _)| (std::cmp::Reverse(s), i));
        scored.into_iter().map(|(_, _, e)| e).collect()
    }

    pub fn selected(&self) -> Option<&Entry> {
        self.matching().get(self.cursor).copied()
    }

    /// Down or Up through the matches.
    pub fn step(&mut self, down: bool) {
        let shown = self.matching().len();
        self.cursor = if down {
            (self.cursor + 1).min(shown.saturating_sub(1))
        } else {
            self.cursor.saturating_sub(1)
        };
    }

    /// A key typed into the search: the best match is selected again.
    pub fn edit(&mut self, key: crossterm::event::KeyEvent) {
        if self.input.handle(key) {
            self.cursor = 0;
        }
    }

    pub fn paste(&mut self, text: &str) -> crate::kit::input::Pasted {
        let pasted = self.input.paste(text);
        self.cursor = 0;
        pasted
    }
}

/// How well `query` matches `text` (both lower case): its letters in order, more for letters
/// that follow one another and for a match at a word's start; `None` when they are not all
/// there. An empty query matches everything equally.
fn score(query: &str, text: &str) -> Option<u32> {
    let mut score = 0u32;
    let mut rest = text.char_indices().peekable();
    let mut last: Option<usize> = None;
    for q in query.chars().filter(|c| !c.is_whitespace()) {
        let (at, _) = rest.by_ref().find(|&(_, c)| c == q)?;
        let word_start = at == 0 || text[..at].ends_with([' ', '-', ':', '(']);
        score += 1 + u32::from(last.is_some_and(|l| l + 1 == at)) * 4 + u32::from(word_start) * 2;
        last = Some(at + q.len_utf8() - 1);
    }
    // A whole phrase found as it was typed comes first.
    if !query.is_empty() && text.contains(query) {
        score += 20 + u32::from(text.starts_with(query)) * 10;
    }
    Some(score)
}

pub(crate) fn draw(frame: &mut Frame, area: Rect, palette: &Palette, look: &Look<'_>, theme: &Theme) {
    const WIDTH: u16 = 72;
    let room = usize::from(area.height.saturating_sub(8)).clamp(1, 14);
    let matching = palette.matching();
    let prompt = format!("Find: {}", safe(&palette.input.value));
    let mut lines = vec![Line::styled(prompt, theme.key()), Line::raw("")];
    if matching.is_empty() {
        lines.push(Line::styled(
            "No action matches: Esc closes, Backspace edits.",
            theme.muted(),
        ));
    }
    let start = window_start(palette.cursor, room);
    let key_width = 12;
    for (i, entry) in matching.iter().enumerate().skip(start).take(room) {
        let text = format!(
            "{} {:<key_width$} {}",
            if i == palette.cursor { "›" } else { " " },
            entry.keys,
            entry.about
        );
        let style = if i == palette.cursor {
            theme.selected()
        } else {
            Style::default()
        };
        lines.push(Line::styled(safe(&text), style));
    }
    lines.push(Line::raw(""));
    lines.push(keys_line(
        look,
        Context::Palette,
        "type a few letters · {}/{} choose · {} run · {} close",
        &[Action::Down, Action::Up, Action::Accept, Action::Close],
        theme.muted(),
    ));
    let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX).min(area.height);
    let inner = popup(frame, area, "Command palette", WIDTH, height, theme);
    // No wrapping: a long description is cut at the window's edge, one row an action.
    frame.render_widget(ratatui::widgets::Paragraph::new(lines), inner);
    let column = "Find: ".len() + palette.input.value.chars().take(palette.input.cursor).count();
    if let Ok(column) = u16::try_from(column)
        && inner.width > column
    {
        frame.set_cursor_position(Position::new(inner.x + column, inner.y));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(palette: &mut Palette, text: &str) {
        palette.input = TextInput::with_value(text);
        palette.cursor = 0;
    }

    /// "top" finds the top-up first, on every tab; "qr" the QR code alone on My eSIMs.
    #[test]
    fn a_few_letters_find_the_action() {
        let keymap = Keymap::default();
        for contexts in [
            vec![Context::Esims, Context::List, Context::Global],
            vec![Context::Orders, Context::List, Context::Global],
            vec![Context::Catalog, Context::List, Context::Global],
            vec![Context::Profile, Context::Global],
        ] {
            let mut palette = Palette::new(&keymap, &contexts, (&[], None), false);
            typed(&mut palette, "top");
            assert_eq!(
                palette.selected().and_then(Entry::action),
                Some(Action::TopUp),
                "{contexts:?}"
            );
        }
        let mut palette = Palette::new(
            &keymap,
            &[Context::Esims, Context::List, Context::Global],
            (&[], None),
            false,
        );
        typed(&mut palette, "qr c");
        assert_eq!(palette.selected().and_then(Entry::action), Some(Action::Zoom));
        typed(&mut palette, "zzzz");
        assert!(palette.matching().is_empty());
    }

    /// Every action bound where the keyboard can be when the palette opens (each tab's list,
    /// the eSIM pane alone) is in its palette: read from the keymap, never listed by hand.
    #[test]
    fn every_action_of_the_keymap_is_in_the_palette_of_its_context() {
        let keymap = Keymap::default();
        for contexts in [
            vec![Context::Catalog, Context::List, Context::Global],
            vec![Context::Orders, Context::List, Context::Global],
            vec![Context::Esims, Context::List, Context::Global],
            vec![Context::Profile, Context::Global],
            vec![Context::EsimDetail, Context::Esims, Context::List, Context::Global],
        ] {
            let palette = Palette::new(&keymap, &contexts, (&[], None), false);
            for row in keymap.rows().iter().filter(|r| contexts.contains(&r.binding.context)) {
                let action = row.binding.action;
                if action == Action::Palette {
                    continue;
                }
                assert!(
                    palette.entries().iter().any(|e| e.action() == Some(action)),
                    "{action:?} of {:?} is missing from the palette of {contexts:?}",
                    row.binding.context
                );
            }
        }
    }

    /// A team command is offered on the record it is about, by its name, and nowhere else.
    #[test]
    fn a_team_command_is_offered_on_its_records_only() {
        let keymap = Keymap::default();
        let command = TeamCommand {
            name: "Open in the CRM".into(),
            on: Subject::Esim,
            run: vec!["true".into()],
            timeout: std::time::Duration::from_secs(1),
        };
        let contexts = [Context::Esims, Context::List, Context::Global];
        let commands = std::slice::from_ref(&command);
        let mut on_esim = Palette::new(&keymap, &contexts, (commands, Some(Subject::Esim)), false);
        typed(&mut on_esim, "crm");
        assert_eq!(on_esim.selected().map(|e| e.run), Some(Run::Command(0)));
        let on_plan = Palette::new(&keymap, &contexts, (commands, Some(Subject::Plan)), false);
        assert!(on_plan.entries().iter().all(|e| e.action().is_some()));
    }

    #[test]
    fn letters_out_of_order_do_not_match() {
        assert!(score("pot", "top up").is_none());
        assert!(score("tp", "top up").is_some());
        assert!(score("top", "top up") > score("top", "stop the upload"));
    }
}
