//! A one-line text input: what `/` search, filters and form fields edit.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Longest text a search or filter holds: an ICCID with spaces, an order number, a package
/// name fit many times over; a 100 KB paste is cut here instead of searched.
pub const SEARCH_MAX_CHARS: usize = 100;
/// Longest text the ICCID prompt holds: 20 digits with spaces or dashes between groups.
pub const ICCID_MAX_CHARS: usize = 40;
/// Longest website address the profile form holds (what browsers and servers commonly take).
pub const URL_MAX_CHARS: usize = 2048;

/// What a paste did: whether the value changed, how many characters it brought (after
/// cleaning) and how many of them the field's limit left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pasted {
    pub changed: bool,
    pub chars: usize,
    pub left_out: usize,
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextInput {
    pub value: String,
    /// Cursor position in characters.
    pub cursor: usize,
    pub max_chars: Option<usize>,
    /// The whole text is selected (a search opened again): what is typed or pasted replaces it,
    /// so the agent need not erase the last search first; any other key drops the selection.
    pub selected: bool,
}

impl TextInput {
    pub fn with_value(value: &str) -> Self {
        Self {
            value: value.to_string(),
            cursor: value.chars().count(),
            max_chars: None,
            selected: false,
        }
    }

    /// Selects the whole text (nothing, when there is none), the cursor at its end.
    pub fn select_all(&mut self) {
        self.cursor = self.value.chars().count();
        self.selected = !self.value.is_empty();
    }

    /// With a length limit in characters.
    pub fn limited(max_chars: usize) -> Self {
        Self {
            max_chars: Some(max_chars),
            ..Self::default()
        }
    }

    /// Inserts pasted text at the cursor as one edit. A field holds one line: a line break (CR,
    /// LF, CRLF: terminals send CR) and a tab become a space, other control and bidirectional
    /// characters are dropped, and spaces around the paste (a copied cell's line end) are
    /// trimmed. What goes past the field's
    /// limit is left out, and counted so the user can be told. One pass over the text, so
    /// 100 KB costs well under a millisecond.
    pub fn paste(&mut self, text: &str) -> Pasted {
        if std::mem::take(&mut self.selected)
            && text
                .chars()
                .any(|c| !c.is_whitespace() && !esimdash_domain::text::is_unsafe(c))
        {
            self.clear();
        }
        let count = self.value.chars().count();
        let room = self.max_chars.map_or(usize::MAX, |m| m.saturating_sub(count));
        let mut after_break = false;
        let cleaned = text.trim().chars().filter_map(|c| {
            let line_break = matches!(c, '\n' | '\r');
            let kept = match c {
                _ if line_break && after_break => None,
                '\n' | '\r' | '\t' => Some(' '),
                c if esimdash_domain::text::is_unsafe(c) => None,
                c => Some(c),
            };
            after_break = line_break;
            kept
        });
        let (mut kept, mut chars) = (String::new(), 0usize);
        for c in cleaned {
            if chars < room {
                kept.push(c);
            }
            chars += 1;
        }
        let at = self.byte_index(self.cursor);
        self.value.insert_str(at, &kept);
        let inserted = chars.min(room);
        self.cursor += inserted;
        Pasted {
            changed: inserted > 0,
            chars,
            left_out: chars - inserted,
            limit: self.max_chars,
        }
    }

    /// Empties the input (its length limit stays).
    pub fn clear(&mut self) {
        self.value.clear();
        self.cursor = 0;
    }

    fn byte_index(&self, chars: usize) -> usize {
        self.value
            .char_indices()
            .nth(chars)
            .map_or(self.value.len(), |(i, _)| i)
    }

    /// Whether the key edits text or moves within it (typing keys go here before list keys).
    pub fn edits(key: &KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('u' | 'a' | 'e') if ctrl => true,
            KeyCode::Char(c) => !ctrl && !c.is_control(),
            KeyCode::Backspace | KeyCode::Delete | KeyCode::Left | KeyCode::Right | KeyCode::Home | KeyCode::End => {
                true
            }
            _ => false,
        }
    }

    /// Applies an editing key; `true` when the value changed.
    pub fn handle(&mut self, key: KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let typed = matches!(key.code, KeyCode::Char(c) if !ctrl && !c.is_control());
        if std::mem::take(&mut self.selected) && typed {
            self.clear();
        }
        match key.code {
            KeyCode::Char('u') if ctrl => {
                let changed = !self.value.is_empty();
                self.clear();
                changed
            }
            KeyCode::Char('a') if ctrl => {
                self.cursor = 0;
                false
            }
            KeyCode::Char('e') if ctrl => {
                self.cursor = self.value.chars().count();
                false
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() => {
                if self.max_chars.is_some_and(|m| self.value.chars().count() >= m) {
                    return false;
                }
                let at = self.byte_index(self.cursor);
                self.value.insert(at, c);
                self.cursor += 1;
                true
            }
            KeyCode::Backspace if self.cursor > 0 => {
                let at = self.byte_index(self.cursor - 1);
                self.value.remove(at);
                self.cursor -= 1;
                true
            }
            KeyCode::Delete if self.cursor < self.value.chars().count() => {
                let at = self.byte_index(self.cursor);
                self.value.remove(at);
                true
            }
            KeyCode::Left => {
                self.cursor = self.cursor.saturating_sub(1);
                false
            }
            KeyCode::Right => {
                self.cursor = (self.cursor + 1).min(self.value.chars().count());
                false
            }
            KeyCode::Home => {
                self.cursor = 0;
                false
            }
            KeyCode::End => {
                self.cursor = self.value.chars().count();
                false
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn edits_in_the_middle_of_multibyte_text() {
        let mut t = TextInput::with_value("Tüki");
        t.handle(key(KeyCode::Left));
        t.handle(key(KeyCode::Left));
        assert!(t.handle(key(KeyCode::Char('r'))));
        assert_eq!(t.value, "Türki");
        assert!(t.handle(key(KeyCode::Backspace)));
        assert_eq!(t.value, "Tüki");
        assert!(t.handle(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)));
        assert_eq!((t.value.as_str(), t.cursor), ("", 0));
        let mut limited = TextInput {
            max_chars: Some(2),
            ..Default::default()
        };
        limited.handle(key(KeyCode::Char('a')));
        limited.handle(key(KeyCode::Char('b')));
        assert!(!limited.handle(key(KeyCode::Char('c'))));
    }

    #[test]
    fn selected_text_is_replaced_by_typing_and_kept_by_editing_keys() {
        let mut t = TextInput::with_value("japan");
        t.select_all();
        assert!(t.handle(key(KeyCode::Char('f'))));
        assert_eq!((t.value.as_str(), t.cursor, t.selected), ("f", 1, false));
        t.select_all();
        assert!(t.handle(key(KeyCode::Backspace)));
        assert_eq!(t.value, "", "Backspace deletes a character, as without the selection");
        let mut t = TextInput::with_value("japan");
        t.select_all();
        t.handle(key(KeyCode::Home));
        t.handle(key(KeyCode::Char('x')));
        assert_eq!(t.value, "xjapan");
        t.select_all();
        t.paste(" \n ");
        assert_eq!(t.value, "xjapan", "a blank paste replaces nothing");
        t.select_all();
        t.paste("norway");
        assert_eq!(t.value, "norway");
        let mut empty = TextInput::default();
        empty.select_all();
        assert!(!empty.selected);
    }

    #[test]
    fn a_paste_is_one_edit_on_one_line_cut_at_the_limit() {
        let mut t = TextInput::with_value("ab");
        t.handle(key(KeyCode::Left));
        let pasted = t.paste("  X\r\nY\tZ\x1b[2J\u{202e}\u{7}\n");
        assert_eq!(
            t.value, "aX Y Z[2Jb",
            "line breaks and tabs are spaces, controls dropped"
        );
        assert_eq!(t.cursor, 9, "the cursor after the pasted text");
        assert_eq!(
            pasted,
            Pasted {
                changed: true,
                chars: 8,
                left_out: 0,
                limit: None
            }
        );
        // CR LF is one line break, and so are the CRs a terminal sends for them, and blank lines.
        for lines in ["a\r\nb", "a\r\rb", "a\n\n\nb", "a\rb"] {
            let mut t = TextInput::default();
            t.paste(lines);
            assert_eq!(t.value, "a b", "{lines:?}");
        }
        let mut search = TextInput::limited(SEARCH_MAX_CHARS);
        search.paste("fr");
        let big = "ü".repeat(100 * 1024);
        let started = std::time::Instant::now();
        let pasted = search.paste(&big);
        let took = started.elapsed();
        assert_eq!(search.value.chars().count(), SEARCH_MAX_CHARS);
        assert_eq!((pasted.chars, pasted.left_out), (102_400, 102_302));
        assert!(took < std::time::Duration::from_millis(50), "{took:?}");
        // Full: nothing goes in, and the paste says so.
        let again = search.paste("x");
        assert!(!again.changed && again.left_out == 1);
        assert!(
            !TextInput::default().paste(" \n\x1b ").changed,
            "nothing but blanks and controls"
        );
    }
}
