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

/// The regions regional plans are sold for, with the names their plans are called by (the
/// sandbox names its plans so; a provider's plan names say them the same way).
pub const REGIONS: &[(&str, &str)] = &[
    ("EU", "Europe"),
    ("AS", "Asia"),
    ("AM", "Americas"),
    ("AF", "Africa"),
    ("ME", "Middle East"),
];

/// Other regions a provider's regional plans are named after.
const OTHER_REGIONS: &[&str] = &[
    "North America",
    "South America",
    "Latin America",
    "Central America",
    "Caribbean",
    "Asia Pacific",
    "Southeast Asia",
    "Central Asia",
    "Oceania",
    "Balkans",
    "Scandinavia",
    "Nordics",
    "Gulf",
];

/// The display name of a location code alone, when known: a country's name, `Region` or
/// `Global`.
pub fn location_name(code: &str) -> Option<&'static str> {
    match code {
        REGIONAL => Some("Region"),
        GLOBAL => Some("Global"),
        _ => COUNTRIES
            .iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(code))
            .map(|(_, name)| *name),
    }
}

/// Where a plan of location `code` connects, as people read it: `Japan`, `Global`, and for a
/// regional plan `Region (Europe)` or `Region (France, Spain)` when its name says which
/// (else `Region`: the code says no more, and a guess would send a traveller to the wrong
/// country). An unknown code as it is. Every view that puts a location into words calls this.
pub fn area(code: &str, plan_name: &str) -> String {
    let code = code.trim();
    let Some(name) = location_name(code) else {
        return code.to_string();
    };
    if code != REGIONAL {
        return name.to_string();
    }
    let mut names: Vec<&'static str> = COUNTRIES.iter().chain(REGIONS).map(|(_, n)| *n).collect();
    names.extend(OTHER_REGIONS);
    // Longest first, so that "South Africa" is read as the country and not also as Africa.
    names.sort_unstable_by_key(|n| std::cmp::Reverse(n.len()));
    let mut rest = plan_name.to_lowercase();
    let mut said: Vec<(usize, &str)> = names
        .into_iter()
        .filter_map(|n| take_word(&mut rest, n).map(|at| (at, n)))
        .collect();
    said.sort_unstable();
    let said: Vec<&str> = said.into_iter().map(|(_, n)| n).collect();
    if said.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({})", said.join(", "))
    }
}

/// A location in a LOC column of four: a country's code, `Reg.` or `Glob` (never `!RG`).
pub fn short(code: &str) -> &str {
    match code.trim() {
        REGIONAL => "Reg.",
        GLOBAL => "Glob",
        code => code,
    }
}

/// Where lower-case `text` has `word` (any case) as a whole word, blanked out there so that it
/// is not found again inside a longer name: "Eurasia" does not name Asia.
fn take_word(text: &mut String, word: &str) -> Option<usize> {
    let word = word.to_lowercase();
    let bounded = |c: Option<char>| !c.is_some_and(char::is_alphanumeric);
    let (at, _) = text
        .match_indices(&word)
        .find(|(at, _)| bounded(text[..*at].chars().next_back()) && bounded(text[at + word.len()..].chars().next()))?;
    text.replace_range(at..at + word.len(), &" ".repeat(word.len()));
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_unknowns() {
        assert_eq!(location_name("fr"), Some("France"));
        assert_eq!(location_name("!GL"), Some("Global"));
        assert_eq!(location_name("!RG"), Some("Region"));
        assert_eq!(location_name("XX"), None);
        assert!(COUNTRIES.len() >= 50);
        let mut codes: Vec<_> = COUNTRIES.iter().map(|(c, _)| c).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), COUNTRIES.len(), "a country is listed twice");
    }

    /// What a person reads for each kind of code: never `!RG` or `!GL`, a region only when the
    /// plan's name says it.
    #[test]
    fn areas_in_words() {
        assert_eq!((short("!RG"), short("!GL"), short("JP")), ("Reg.", "Glob", "JP"));
        for (code, plan, words) in [
            ("JP", "Japan 5GB 30 Days", "Japan"),
            ("jp", "", "Japan"),
            ("!GL", "Global 1GB 7 Days", "Global"),
            ("!RG", "Europe 5GB 30 Days", "Region (Europe)"),
            ("!RG", "Middle East 500MB 1 Day", "Region (Middle East)"),
            ("!RG", "Regional Top-up 1GB 7 Days", "Region"),
            ("!RG", "", "Region"),
            ("!RG", "France & Spain 3GB 15 Days", "Region (France, Spain)"),
            ("!RG", "Eurasia 3GB", "Region"),
            ("!RG", "South Africa and Kenya 1GB", "Region (South Africa, Kenya)"),
            ("!RG", "Europe incl. Türkiye 5GB", "Region (Europe, Türkiye)"),
            ("!RG", "North America 1GB 7Days", "Region (North America)"),
            ("XX", "Somewhere 1GB", "XX"),
            ("", "", ""),
        ] {
            assert_eq!(area(code, plan), words, "{code} {plan:?}");
        }
    }
}
