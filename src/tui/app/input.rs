//! A one-line text input: what `/` search, filters and form fields edit.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextInput {
    pub value: String,
    /// Cursor position in characters.
    pub cursor: usize,
    pub max_chars: Option<usize>,
}

impl TextInput {
    pub fn with_value(value: &str) -> Self {
        Self {
            value: value.to_string(),
            cursor: value.chars().count(),
            max_chars: None,
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
}
