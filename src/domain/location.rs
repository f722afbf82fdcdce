//! Location codes: ISO 3166-1 alpha-2, or `!RG` / `!GL` for regional and global plans.

/// The countries the catalog covers, with the names people search for.
pub const COUNTRIES: &[(&str, &str)] = &[
    ("AE", "United Arab Emirates"),
    ("AR", "Argentina"),
    ("AT", "Austria"),
    ("AU", "Australia"),
    ("BE", "Belgium"),
    ("BG", "Bulgaria"),
    ("BR", "Brazil"),
    ("CA", "Canada"),
    ("CH", "Switzerland"),
    ("CL", "Chile"),
    ("CN", "China"),
    ("CO", "Colombia"),
    ("CZ", "Czechia"),
    ("DE", "Germany"),
    ("DK", "Denmark"),
    ("EG", "Egypt"),
    ("ES", "Spain"),
    ("FI", "Finland"),
    ("FR", "France"),
    ("GB", "United Kingdom"),
    ("GR", "Greece"),
    ("HK", "Hong Kong"),
    ("HR", "Croatia"),
    ("HU", "Hungary"),
    ("ID", "Indonesia"),
    ("IE", "Ireland"),
    ("IL", "Israel"),
    ("IN", "India"),
    ("IS", "Iceland"),
    ("IT", "Italy"),
    ("JP", "Japan"),
    ("KE", "Kenya"),
    ("KR", "South Korea"),
    ("MA", "Morocco"),
    ("MX", "Mexico"),
    ("MY", "Malaysia"),
    ("NL", "Netherlands"),
    ("NO", "Norway"),
    ("NZ", "New Zealand"),
    ("PE", "Peru"),
    ("PH", "Philippines"),
    ("PL", "Poland"),
    ("PT", "Portugal"),
    ("RO", "Romania"),
    ("SA", "Saudi Arabia"),
    ("SE", "Sweden"),
    ("SG", "Singapore"),
    ("TH", "Thailand"),
    ("TR", "Türkiye"),
    ("TW", "Taiwan"),
    ("US", "United States"),
    ("VN", "Vietnam"),
    ("ZA", "South Africa"),
    ("QA", "Qatar"),
    ("JO", "Jordan"),
];

pub const REGIONAL: &str = "!RG";
pub const GLOBAL: &str = "!GL";

/// The display name of a location code, when known.
pub fn location_name(code: &str) -> Option<&'static str> {
    match code {
        REGIONAL => Some("Regional"),
        GLOBAL => Some("Global"),
        _ => COUNTRIES
            .iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(code))
            .map(|(_, name)| *name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_unknowns() {
        assert_eq!(location_name("fr"), Some("France"));
        assert_eq!(location_name("!GL"), Some("Global"));
        assert_eq!(location_name("XX"), None);
        assert!(COUNTRIES.len() >= 50);
        let mut codes: Vec<_> = COUNTRIES.iter().map(|(c, _)| c).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), COUNTRIES.len(), "a country is listed twice");
    }
}
