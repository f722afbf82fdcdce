//! The Prometheus text format, as `esimdash metrics` and the team gateway write it.

use std::fmt::Write;

/// A metric family's two header lines.
pub fn family(text: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(text, "# HELP {name} {help}");
    let _ = writeln!(text, "# TYPE {name} {kind}");
}

/// A label value as the format wants it: backslash, quote and line end escaped.
pub fn label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_label_cannot_end_its_quotes() {
        assert_eq!(super::label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
