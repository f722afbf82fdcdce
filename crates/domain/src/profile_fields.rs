//! The rules for the company fields of a profile (docs/api-contract.md: PATCH /reseller/profile). The
//! sandbox enforces them; the dashboard's form checks them before sending.

/// Longest company name, in characters.
pub const MAX_COMPANY_CHARS: usize = 200;

/// A company name: at most 200 characters, no control characters. Empty clears it.
pub fn check_company(value: &str) -> Result<(), String> {
    if value.chars().count() > MAX_COMPANY_CHARS {
        return Err(format!("Invalid companyName: at most {MAX_COMPANY_CHARS} characters"));
    }
    if value.chars().any(char::is_control) {
        return Err("Invalid companyName: control characters are not allowed".to_string());
    }
    Ok(())
}

/// A country: two letters (ISO 3166-1 alpha-2), or empty. Returned in capitals.
pub fn check_country(value: &str) -> Result<String, String> {
    let value = value.trim().to_ascii_uppercase();
    if value.is_empty() || (value.len() == 2 && value.bytes().all(|b| b.is_ascii_alphabetic())) {
        Ok(value)
    } else {
        Err("Invalid country: two letters (ISO 3166-1) or empty".to_string())
    }
}

/// A website: an http or https URL with a host, or empty.
pub fn check_website(value: &str) -> Result<(), String> {
    let ok = value.is_empty()
        || url::Url::parse(value).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
    if ok {
        Ok(())
    } else {
        Err("Invalid website: an http(s) URL or empty".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_rules() {
        assert!(check_company(&"x".repeat(200)).is_ok());
        assert!(check_company(&"x".repeat(201)).is_err());
        assert!(check_company("a\u{7}b").is_err());
        assert_eq!(check_country(" ie ").unwrap(), "IE");
        assert_eq!(check_country("").unwrap(), "");
        assert!(check_country("IRL").is_err() && check_country("1E").is_err());
        assert!(check_website("https://acme.example/x").is_ok() && check_website("").is_ok());
        assert!(check_website("ftp://x").is_err() && check_website("acme.example").is_err());
    }
}
