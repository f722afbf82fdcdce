//! ICCIDs: 19 or 20 digits, starting `89` (telecom), ending in a Luhn check digit.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error)]
pub enum IccidError {
    #[error("an ICCID has only digits")]
    NotDigits,
    #[error("an ICCID has 19 or 20 digits, this has {0}")]
    Length(usize),
    #[error("an ICCID starts with 89")]
    Prefix,
    #[error("the last digit does not match (Luhn check): a digit is probably mistyped")]
    CheckDigit,
}

/// A validated ICCID; sent as its digits (a top-up's body).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Iccid(String);

impl Iccid {
    /// Accepts spaces and dashes between digit groups, as people read ICCIDs out.
    pub fn parse(input: &str) -> Result<Self, IccidError> {
        let digits: String = input.chars().filter(|c| !matches!(c, ' ' | '-')).collect();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(IccidError::NotDigits);
        }
        if !(19..=20).contains(&digits.len()) {
            return Err(IccidError::Length(digits.len()));
        }
        if !digits.starts_with("89") {
            return Err(IccidError::Prefix);
        }
        let (payload, check) = digits.split_at(digits.len() - 1);
        if luhn_check_digit(payload) != check.as_bytes()[0] - b'0' {
            return Err(IccidError::CheckDigit);
        }
        Ok(Self(digits))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Iccid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An ICCID as an eSIM or order record carries it, decoded once when the answer is read: a
/// valid `Iccid` (its digits; spaces and dashes the API put between them dropped), or, when the
/// API sent something else, the text as it came. That text is shown and matched as it is, but
/// never sent back to the API, copied as an ICCID or used as a file name (it could hold
/// anything, `../` included).
#[derive(Debug, Clone, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", from = "String")]
pub enum EsimIccid {
    Valid(Iccid),
    Invalid { text: String, why: IccidError },
}

impl EsimIccid {
    pub fn parse(text: &str) -> Self {
        match Iccid::parse(text) {
            Ok(iccid) => EsimIccid::Valid(iccid),
            Err(why) => EsimIccid::Invalid {
                text: text.to_string(),
                why,
            },
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            EsimIccid::Valid(iccid) => iccid.as_str(),
            EsimIccid::Invalid { text, .. } => text,
        }
    }

    /// The ICCID, when it is one, or why not.
    pub fn valid(&self) -> Result<&Iccid, IccidError> {
        match self {
            EsimIccid::Valid(iccid) => Ok(iccid),
            EsimIccid::Invalid { why, .. } => Err(why.clone()),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.as_str().is_empty()
    }
}

/// Read as text wherever text is wanted (shown, matched, written to a table); only `valid`
/// gives an `Iccid`.
impl std::ops::Deref for EsimIccid {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl Default for EsimIccid {
    fn default() -> Self {
        EsimIccid::Invalid {
            text: String::new(),
            why: IccidError::NotDigits,
        }
    }
}

impl From<Iccid> for EsimIccid {
    fn from(iccid: Iccid) -> Self {
        EsimIccid::Valid(iccid)
    }
}

/// Equal, and hashed, by the text they stand for (a valid one's digits), so a map keyed by them
/// can be asked with a `&str`.
impl PartialEq for EsimIccid {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl std::hash::Hash for EsimIccid {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl std::borrow::Borrow<str> for EsimIccid {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

/// Equal to text that is its text (`"8944…"`, a `String`).
impl<T: AsRef<str> + ?Sized> PartialEq<T> for EsimIccid {
    fn eq(&self, other: &T) -> bool {
        self.as_str() == other.as_ref()
    }
}

impl PartialEq<Iccid> for EsimIccid {
    fn eq(&self, other: &Iccid) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Display for EsimIccid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Read back as whatever text was written (a file can hold anything): never refused, only
/// `valid` tells whether it is an ICCID.
impl From<String> for EsimIccid {
    fn from(text: String) -> Self {
        EsimIccid::parse(&text)
    }
}

impl From<EsimIccid> for String {
    fn from(iccid: EsimIccid) -> String {
        match iccid {
            EsimIccid::Valid(Iccid(digits)) => digits,
            EsimIccid::Invalid { text, .. } => text,
        }
    }
}

/// The Luhn check digit for a string of ASCII digits (other bytes count as 0).
pub fn luhn_check_digit(payload: &str) -> u8 {
    let sum: u32 = payload
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b.saturating_sub(b'0') % 10);
            if i % 2 == 0 {
                let doubled = d * 2;
                if doubled > 9 { doubled - 9 } else { doubled }
            } else {
                d
            }
        })
        .sum();
    ((10 - sum % 10) % 10) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_valid_and_names_what_is_wrong() {
        // 8944 5000 0000 0000 01 + check digit.
        let payload = "894450000000000001";
        let full = format!("{payload}{}", luhn_check_digit(payload));
        assert_eq!(Iccid::parse(&full).unwrap().as_str(), full);
        assert!(Iccid::parse(&format!("8944 5000 0000 0000 01{}", luhn_check_digit(payload))).is_ok());
        let wrong = format!("{payload}{}", (luhn_check_digit(payload) + 1) % 10);
        assert_eq!(Iccid::parse(&wrong), Err(IccidError::CheckDigit));
        assert_eq!(Iccid::parse("8944"), Err(IccidError::Length(4)));
        assert_eq!(Iccid::parse("12345678901234567890"), Err(IccidError::Prefix));
        assert_eq!(Iccid::parse("89x"), Err(IccidError::NotDigits));
        assert_eq!(Iccid::parse(""), Err(IccidError::NotDigits));
    }

    #[test]
    fn luhn_known_value() {
        // The classic example: 7992739871 has check digit 3.
        assert_eq!(luhn_check_digit("7992739871"), 3);
    }
}
