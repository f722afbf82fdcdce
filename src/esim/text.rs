//! Text from the server or the user is shown only after this: no control characters (which
//! could move the cursor or change the terminal) and no bidirectional overrides.

use std::borrow::Cow;

fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
}

/// Replaces every unsafe character with U+FFFD, so that the user sees something was there.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if s.chars().any(is_unsafe) {
        Cow::Owned(s.chars().map(|c| if is_unsafe(c) { '\u{FFFD}' } else { c }).collect())
    } else {
        Cow::Borrowed(s)
    }
}

/// A sanitised prefix of at most `max_chars` characters, with `…` when cut.
pub fn excerpt(s: &str, max_chars: usize) -> String {
    let mut out: String = sanitize(s).chars().take(max_chars).collect();
    if s.chars().count() > max_chars {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_bidi_characters_never_pass() {
        assert_eq!(
            sanitize("a\x1b[2Jb\u{202E}c\r\n"),
            "a\u{FFFD}[2Jb\u{FFFD}c\u{FFFD}\u{FFFD}"
        );
        assert!(matches!(sanitize("plain text €"), Cow::Borrowed(_)));
    }

    #[test]
    fn excerpt_cuts_on_characters() {
        assert_eq!(excerpt("ééééé", 3), "ééé…");
        assert_eq!(excerpt("abc", 3), "abc");
    }
}
