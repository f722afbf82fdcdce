//! Order numbers.

/// An order's number (`providerOrderNo`) as the API gives it: its own type, so that it is never
/// taken for an ICCID or a slug; read as text wherever text is wanted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(transparent)]
pub struct OrderNo(String);

impl OrderNo {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for OrderNo {
    fn from(text: &str) -> Self {
        OrderNo(text.to_string())
    }
}

impl From<String> for OrderNo {
    fn from(text: String) -> Self {
        OrderNo(text)
    }
}

impl From<OrderNo> for String {
    fn from(no: OrderNo) -> Self {
        no.0
    }
}

impl std::ops::Deref for OrderNo {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for OrderNo {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for OrderNo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for OrderNo {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for OrderNo {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for OrderNo {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}
