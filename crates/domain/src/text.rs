//! Text on a terminal. Text from the server or the user is shown only after this: no control
//! characters (which could move the cursor or change the terminal) and no bidirectional
//! overrides, in tables, on screen and in `--json` lines. Also counts grouped by thousands, and
//! whether colour may be used at all.

use std::borrow::Cow;

/// Control characters (C0, DEL, C1) and the bidirectional controls that reorder what follows.
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
}

/// Whether colour may be used on a terminal: not when `NO_COLOR` is set to anything
/// (no-color.org).
pub fn colour_allowed() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Bytes as lower-case hex: a hash's prefix made a name (of a file, an account, an event).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `["a", "b", "c"]` → `a, b and c`, as a sentence names several things.
pub fn list_and(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// An age in its largest whole unit: "40 s", "12 min", "3 h", "2 d".
pub fn age(age: chrono::Duration) -> String {
    let secs = age.num_seconds().max(0);
    match secs {
        0..60 => format!("{secs} s"),
        60..3_600 => format!("{} min", secs / 60),
        3_600..86_400 => format!("{} h", secs / 3_600),
        _ => format!("{} d", secs / 86_400),
    }
}

/// `1400` → `1 400`, `102400` → `102 400`: thousands apart, as progress and counts read.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// Replaces every unsafe character with U+FFFD, so that the user sees something was there.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if s.chars().any(is_unsafe) {
        Cow::Owned(s.chars().map(|c| if is_unsafe(c) { '\u{FFFD}' } else { c }).collect())
    } else {
        Cow::Borrowed(s)
    }
}

/// `sanitize` line by line: the text's own line breaks are kept (a message listing problems),
/// every other unsafe character replaced. For sentences printed whole: errors, notices.
pub fn sanitize_lines(s: &str) -> Cow<'_, str> {
    if s.chars().any(|c| c != '\n' && is_unsafe(c)) {
        Cow::Owned(s.split('\n').map(sanitize).collect::<Vec<_>>().join("\n"))
    } else {
        Cow::Borrowed(s)
    }
}

/// A sanitised prefix of at most `max_chars` characters, with `…` when cut. Only the prefix is
/// looked at, so a 5 000-character name costs no more than a short one.
pub fn excerpt(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", sanitize(&s[..cut])),
        None => sanitize(s).into_owned(),
    }
}

/// `value` as one compact line of JSON in which every unsafe character is a `\uXXXX` escape, so
/// `--json` on a terminal passes it nothing raw. (serde_json escapes only C0 by itself.)
pub fn json_line(value: &impl serde::Serialize) -> serde_json::Result<String> {
    let mut out = Vec::new();
    value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, EscapeUnsafe))?;
    // Only UTF-8 and ASCII escapes were written.
    String::from_utf8(out).map_err(|e| serde_json::Error::io(std::io::Error::other(e)))
}

struct EscapeUnsafe;

impl serde_json::ser::Formatter for EscapeUnsafe {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut rest = fragment;
        while let Some((at, c)) = rest.char_indices().find(|&(_, c)| is_unsafe(c)) {
            writer.write_all(&rest.as_bytes()[..at])?;
            // Every unsafe character is in the Basic Multilingual Plane: one escape each.
            write!(writer, "\\u{:04x}", u32::from(c))?;
            rest = &rest[at + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }
}

/// `text` in lines of at most `width` terminal columns, broken at spaces; a word longer than a
/// line is broken where the line ends. Laid out here rather than by the terminal widget, so that
/// the caller knows how many lines it draws (to scroll to the last) and can indent the rest.
pub fn wrap_words(text: &str, width: usize) -> Vec<String> {
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
    let width = width.max(1);
    let (mut lines, mut line, mut used) = (Vec::new(), String::new(), 0);
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let w = word.width();
        if used > 0 && used + 1 + w <= width {
            line.push(' ');
            line.push_str(word);
            used += 1 + w;
            continue;
        }
        if used > 0 {
            lines.push(std::mem::take(&mut line));
            used = 0;
        }
        for c in word.chars() {
            let cw = c.width().unwrap_or(0);
            if used > 0 && used + cw > width {
                lines.push(std::mem::take(&mut line));
                used = 0;
            }
            line.push(c);
            used += cw;
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// `s` made safe (as `sanitize`) and cut to at most `width` terminal columns, ending in `…`
/// when cut. One pass that stops at the cut, so a 5 000-character name costs what a short one
/// does: tables call it for every cell of every frame.
pub fn safe_fit(s: &str, width: usize) -> Cow<'_, str> {
    use unicode_width::UnicodeWidthChar;
    let shown = |c: char| if is_unsafe(c) { '\u{FFFD}' } else { c };
    let room = width.saturating_sub(1);
    let (mut used, mut cut, mut clean) = (0, None, true);
    for (at, c) in s.char_indices() {
        clean &= !is_unsafe(c);
        used += shown(c).width().unwrap_or(0);
        if used > room && cut.is_none() {
            cut = Some(at);
        }
        if used > width {
            let mut kept: String = s[..cut.unwrap_or(at)].chars().map(shown).collect();
            if width > 0 {
                kept.push('…');
            }
            return Cow::Owned(kept);
        }
    }
    if clean { Cow::Borrowed(s) } else { sanitize(s) }
}

/// A package name in at most `width` terminal columns with no number cut: "Day" and "Days"
/// after a number become "d" (`Singapore 500MB 1d`), then whole words go from the end
/// (`Poland 5GB…`). A name cut inside a number reads as another plan: "Singapore 50…" as 50 GB.
/// Made safe as `safe_fit`; only a prefix of a long name is looked at.
pub fn fit_package(name: &str, width: usize) -> Cow<'_, str> {
    use unicode_width::UnicodeWidthStr;
    // Each word kept is at least a column wide and "N Days" saves three: more is never shown.
    let head: String = name.chars().take(4 * width + 8).collect();
    let whole = head.len() == name.len();
    let head = sanitize(&head);
    if whole && head.width() <= width {
        return safe_fit(name, width);
    }
    let mut words: Vec<String> = Vec::new();
    for word in head.split(' ').filter(|w| !w.is_empty()) {
        let after_number = words.last().is_some_and(|w| w.ends_with(|c: char| c.is_ascii_digit()));
        match words.last_mut() {
            Some(last) if after_number && matches!(word.to_ascii_lowercase().as_str(), "day" | "days") => {
                last.push('d');
            }
            _ => words.push(word.to_string()),
        }
    }
    let short = words.join(" ");
    if whole && short.width() <= width {
        return Cow::Owned(short);
    }
    for kept in (1..words.len()).rev() {
        let shown = format!("{}…", words[..kept].join(" "));
        if shown.width() <= width {
            return Cow::Owned(shown);
        }
    }
    // Not even the first word fits with `…`: cut it, but never inside a number.
    let cut = safe_fit(&short, width);
    match cut.strip_suffix('…') {
        Some(kept) => Cow::Owned(format!(
            "{}…",
            kept.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ',')
        )),
        None => Cow::Owned(cut.into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_wrap_at_spaces_and_a_long_word_where_the_line_ends() {
        assert_eq!(wrap_words("copy the ICCID", 9), vec!["copy the", "ICCID"]);
        assert_eq!(wrap_words("abcdefgh ij", 3), vec!["abc", "def", "gh", "ij"]);
        assert_eq!(wrap_words("Türkiye  ünü", 7), vec!["Türkiye", "ünü"]);
        assert_eq!(wrap_words("", 5), vec![""]);
        assert_eq!(wrap_words("ab", 0), vec!["a", "b"], "no room: a column a line");
    }

    #[test]
    fn control_and_bidi_characters_never_pass() {
        assert_eq!(
            sanitize("a\x1b[2Jb\u{202E}c\r\n"),
            "a\u{FFFD}[2Jb\u{FFFD}c\u{FFFD}\u{FFFD}"
        );
        assert!(matches!(sanitize("plain text €"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_lines_escape_c0_del_c1_and_bidi_and_read_back_the_same() {
        let name = "a\x1b[2J\x7f\u{9b}31m\u{202e}b\u{2067}é€😀\"\\";
        let line = json_line(&serde_json::json!({ "name": name })).unwrap();
        assert_eq!(line, r#"{"name":"a\u001b[2J\u007f\u009b31m\u202eb\u2067é€😀\"\\"}"#);
        assert!(!line.chars().any(is_unsafe));
        let back: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back["name"], name);
    }

    #[test]
    fn sentences_keep_their_lines_and_lose_every_control() {
        assert_eq!(sanitize_lines("a\x1b[2J\nb\u{7}\r"), "a\u{FFFD}[2J\nb\u{FFFD}\u{FFFD}");
        assert!(matches!(sanitize_lines("two\nlines"), Cow::Borrowed(_)));
    }

    #[test]
    fn safe_fit_counts_terminal_columns_and_replaces_controls() {
        for (text, width, fitted) in [
            ("abcdef", 4, "abc…"),
            ("abcd", 4, "abcd"),
            ("日本語です", 5, "日本…"),
            ("abc", 0, ""),
            ("abc", 1, "…"),
            ("a\x1b[2J", 10, "a\u{FFFD}[2J"),
            ("a\u{202e}bcdef", 4, "a\u{FFFD}b…"),
        ] {
            assert_eq!(safe_fit(text, width), fitted, "{text:?} in {width}");
        }
        assert!(matches!(safe_fit("plain", 9), Cow::Borrowed(_)));
    }

    #[test]
    fn a_package_name_shortens_by_whole_words_and_never_cuts_a_number() {
        let shortened = |name: &str, widths: &[(usize, &str)]| {
            for (width, fitted) in widths {
                assert_eq!(fit_package(name, *width), *fitted, "{name:?} in {width}");
            }
        };
        let singapore = "Singapore 500MB 1 Day";
        shortened(
            singapore,
            &[(21, singapore), (18, "Singapore 500MB 1d"), (14, "Singapore…")],
        );
        shortened("Poland 5GB 30 Days", &[(14, "Poland 5GB 30d"), (13, "Poland 5GB…")]);
        assert_eq!(
            fit_package("Singapore 500MB", 8),
            "Singapo…",
            "a word without a number is cut"
        );
        assert_eq!(
            fit_package("Singapore 500MB", 9),
            "Singapor…",
            "never a whole word that reads as all"
        );
        assert_eq!(fit_package("500MB Asia", 4), "…", "never 500…");
        assert_eq!(
            fit_package("Holiday days", 20),
            "Holiday days",
            "days after no number stay"
        );
        assert_eq!(fit_package("a\x1b[2J 1 Day", 8), "a\u{FFFD}[2J 1d");
        let long = format!("Europe {}", "x".repeat(5000));
        assert_eq!(fit_package(&long, 10), "Europe…");
    }

    #[test]
    fn excerpt_cuts_on_characters() {
        assert_eq!(excerpt("ééééé", 3), "ééé…");
        assert_eq!(excerpt("abc", 3), "abc");
    }
}
