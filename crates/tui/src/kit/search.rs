//! The search input the Catalog, Orders and My eSIMs tabs share: the text being typed and the
//! text in effect. Where a search costs a request (Orders), the typed text takes effect only
//! after a pause in typing, so a word typed quickly sends one search, not one per letter.

use super::input::{Pasted, SEARCH_MAX_CHARS, TextInput};
use crossterm::event::KeyEvent;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Default)]
pub struct SearchBox {
    input: TextInput,
    applied: String,
    due: Option<Instant>,
    pause: Duration,
}

impl SearchBox {
    /// A search that takes effect after `pause` without typing (zero: at every key).
    pub fn new(pause: Duration) -> Self {
        Self {
            pause,
            input: TextInput::limited(SEARCH_MAX_CHARS),
            ..Self::default()
        }
    }

    /// The text as typed.
    pub fn typed(&self) -> &str {
        &self.input.value
    }

    /// Whether the typed text is selected: the next key typed replaces it.
    pub fn is_selected(&self) -> bool {
        self.input.selected
    }

    /// The search opens again on its text: shown selected, replaced by what is typed.
    pub fn select_all(&mut self) {
        self.input.select_all();
    }

    /// The text set whole and in effect at once (a saved view chosen).
    pub fn set(&mut self, text: &str) {
        let text: String = text.chars().take(SEARCH_MAX_CHARS).collect();
        self.input.cursor = text.chars().count();
        self.input.selected = false;
        self.input.value.clone_from(&text);
        self.applied = text.trim().to_string();
        self.due = None;
    }

    /// The text in effect (trimmed): what the list shows results for.
    pub fn applied(&self) -> &str {
        &self.applied
    }

    pub fn is_empty(&self) -> bool {
        self.applied.is_empty() && self.input.value.trim().is_empty()
    }

    /// When the typed text takes effect, if it waits for a pause.
    pub fn due(&self) -> Option<Instant> {
        self.due
    }

    /// An editing key; `true` when the text in effect changed.
    pub fn edit(&mut self, key: KeyEvent, now: Instant) -> bool {
        if !self.input.handle(key) {
            return false;
        }
        if self.pause.is_zero() {
            self.apply()
        } else {
            self.due = Some(now + self.pause);
            false
        }
    }

    /// Pasted text, as one edit (the pause as after a key); also `true` when the text in
    /// effect changed.
    pub fn paste(&mut self, text: &str, now: Instant) -> (Pasted, bool) {
        let pasted = self.input.paste(text);
        if !pasted.changed {
            return (pasted, false);
        }
        if self.pause.is_zero() {
            (pasted, self.apply())
        } else {
            self.due = Some(now + self.pause);
            (pasted, false)
        }
    }

    /// Takes the typed text into effect now; `true` when it changed.
    pub fn apply(&mut self) -> bool {
        self.due = None;
        let typed = self.input.value.trim();
        if typed == self.applied {
            return false;
        }
        self.applied = typed.to_string();
        true
    }

    /// Empties it; `true` when the text in effect changed.
    pub fn clear(&mut self) -> bool {
        self.input.clear();
        self.apply()
    }

    /// The pause is over: `true` when the text in effect changed.
    pub fn tick(&mut self, now: Instant) -> bool {
        match self.due {
            Some(due) if now >= due => self.apply(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyModifiers};

    fn key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn with_a_pause_only_the_last_text_takes_effect() {
        let t = Instant::now();
        let mut s = SearchBox::new(Duration::from_millis(350));
        for (i, c) in "france".chars().enumerate() {
            assert!(!s.edit(key(c), t + Duration::from_millis(i as u64 * 100)));
        }
        assert!(!s.tick(t + Duration::from_millis(700)), "still within the pause");
        assert!(s.tick(t + Duration::from_millis(900)));
        assert_eq!(s.applied(), "france");
        assert!(s.clear());
        let mut now = SearchBox::new(Duration::ZERO);
        assert!(now.edit(key('j'), t));
        assert_eq!(now.applied(), "j");
    }
}
