//! A time as the API gives it (`createdAt`, `expiredTime`): decoded once, when the answer is
//! read, so that nothing parses it again per frame or per row. The text is kept too: a server
//! may send a time that is not RFC 3339, which is shown as it came rather than dropped.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Timestamp {
    text: String,
    at: Option<DateTime<Utc>>,
}

impl Timestamp {
    /// From the API's text (surrounding spaces ignored for the instant).
    pub fn parse(text: &str) -> Self {
        let at = DateTime::parse_from_rfc3339(text.trim())
            .ok()
            .map(|t| t.with_timezone(&Utc));
        Self {
            text: text.to_string(),
            at,
        }
    }

    /// The instant, when the text is an RFC 3339 time.
    pub fn at(&self) -> Option<DateTime<Utc>> {
        self.at
    }

    /// As the API sent it.
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// `2026-11-20 21:55` (UTC); a text that is not a time, as it came.
    pub fn short(&self) -> String {
        match self.at {
            Some(t) => t.format("%Y-%m-%d %H:%M").to_string(),
            None => self.text.clone(),
        }
    }

    /// `2026-11-20`; a text that is not a time, as it came (its first ten characters).
    pub fn date(&self) -> String {
        match self.at {
            Some(t) => t.format("%Y-%m-%d").to_string(),
            None => self.text.chars().take(10).collect(),
        }
    }
}

/// Earlier first, by the instant; a text that is not a time sorts before every time.
impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.at.cmp(&other.at).then_with(|| self.text.cmp(&other.text))
    }
}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Written back as the text it was read from (for `--json`).
impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

/// Read tolerantly, as every text field is (a number or null becomes text or empty).
impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        super::lenient::string(d).map(|text| Timestamp::parse(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_decoded_once_and_other_text_is_kept() {
        let t = Timestamp::parse("2026-11-20T21:55:07+01:00");
        assert_eq!(t.short(), "2026-11-20 20:55");
        assert_eq!(t.date(), "2026-11-20");
        assert_eq!(t.text(), "2026-11-20T21:55:07+01:00");
        let odd = Timestamp::parse("next tuesday, maybe");
        assert_eq!(
            (odd.at(), odd.short(), odd.date()),
            (None, "next tuesday, maybe".to_string(), "next tuesd".to_string())
        );
        let json: Timestamp = serde_json::from_str("20261120").unwrap();
        assert_eq!((json.text(), json.at()), ("20261120", None));
    }
}
