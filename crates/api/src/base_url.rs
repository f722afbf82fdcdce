//! `base_url` normalisation (docs/api-contract.md): it ends in `/api/v1`; a bare host gets it appended;
//! another version is refused rather than silently spoken to.

use reqwest::Url;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaseUrlError {
    #[error("the base URL {0:?} is not a URL: {1}")]
    Invalid(String, String),
    #[error("the base URL must start with http:// or https://, not {0:?}")]
    Scheme(String),
    #[error("the base URL {url:?} is for API {version}, but esimdash speaks API v1 (use a URL ending in /api/v1)")]
    Version { url: String, version: String },
    #[error("the base URL must not carry a query or fragment: {0:?}")]
    Extra(String),
}

/// A base address that ends in `/api/v1`, without a trailing slash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrl(Url);

impl BaseUrl {
    pub fn parse(input: &str) -> Result<Self, BaseUrlError> {
        let input = input.trim();
        let mut url = Url::parse(input).map_err(|e| BaseUrlError::Invalid(input.to_string(), e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(BaseUrlError::Scheme(input.to_string()));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(BaseUrlError::Extra(input.to_string()));
        }
        let segments: Vec<String> = url
            .path_segments()
            .map(|s| s.filter(|p| !p.is_empty()).map(str::to_string).collect())
            .unwrap_or_default();
        let path = match segments.as_slice() {
            [.., api, v] if api == "api" && v == "v1" => segments.join("/"),
            [.., api, v] if api == "api" && is_version(v) => {
                return Err(BaseUrlError::Version {
                    url: input.to_string(),
                    version: v.clone(),
                });
            }
            [.., api] if api == "api" => format!("{}/v1", segments.join("/")),
            _ if segments.is_empty() => "api/v1".to_string(),
            _ => format!("{}/api/v1", segments.join("/")),
        };
        url.set_path(&format!("/{path}"));
        Ok(Self(url))
    }

    /// The full URL of an API path such as `/reseller/orders`.
    pub fn join(&self, path: &str) -> Url {
        let mut url = self.0.clone();
        url.set_path(&format!("{}{}", self.0.path(), path));
        url
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// Whether requests travel unencrypted (http://).
    pub fn is_cleartext(&self) -> bool {
        self.0.scheme() == "http"
    }

    /// Whether the host is this machine (127.0.0.0/8, ::1, localhost): traffic to it never
    /// crosses a network, so plain http there is safe (the demo, a local sandbox).
    pub fn is_loopback(&self) -> bool {
        match self.0.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(name)) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                name == "localhost" || name.ends_with(".localhost")
            }
            None => false,
        }
    }

    /// Scheme and host for messages: "http://api.example.com".
    pub fn origin(&self) -> String {
        self.0.origin().ascii_serialization()
    }

    /// Scheme, host and port, for messages ("could not reach 127.0.0.1:8080").
    pub fn host(&self) -> String {
        match (self.0.host_str(), self.0.port_or_known_default()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            _ => self.0.to_string(),
        }
    }
}

fn is_version(segment: &str) -> bool {
    segment.len() > 1 && segment.starts_with('v') && segment[1..].bytes().all(|b| b.is_ascii_digit())
}

impl fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> Result<String, BaseUrlError> {
        BaseUrl::parse(s).map(|b| b.to_string())
    }

    #[test]
    fn appends_api_v1_where_missing() {
        assert_eq!(norm("https://host").unwrap(), "https://host/api/v1");
        assert_eq!(norm("https://host/").unwrap(), "https://host/api/v1");
        assert_eq!(norm("https://host/api/v1/").unwrap(), "https://host/api/v1");
        assert_eq!(norm("https://host/api").unwrap(), "https://host/api/v1");
        assert_eq!(
            norm("http://127.0.0.1:8080/prefix").unwrap(),
            "http://127.0.0.1:8080/prefix/api/v1"
        );
        assert_eq!(
            BaseUrl::parse("https://host")
                .unwrap()
                .join("/reseller/orders")
                .as_str(),
            "https://host/api/v1/reseller/orders"
        );
    }

    #[test]
    fn knows_cleartext_and_loopback() {
        let url = |s| BaseUrl::parse(s).unwrap();
        for local in [
            "http://127.0.0.1:8080",
            "http://127.0.0.2",
            "http://[::1]:9",
            "http://localhost",
            "http://a.localhost.",
        ] {
            assert!(url(local).is_cleartext() && url(local).is_loopback(), "{local}");
        }
        for remote in [
            "http://api.example.com",
            "http://10.0.0.1",
            "http://127.0.0.1.example.com",
        ] {
            assert!(url(remote).is_cleartext() && !url(remote).is_loopback(), "{remote}");
        }
        assert!(!url("https://api.example.com").is_cleartext());
        assert_eq!(
            url("https://api.example.com:8443/x").origin(),
            "https://api.example.com:8443"
        );
    }

    #[test]
    fn refuses_other_versions_and_non_urls() {
        assert!(matches!(norm("https://host/api/v2"), Err(BaseUrlError::Version { .. })));
        assert!(matches!(norm("host:8080"), Err(BaseUrlError::Scheme(_))));
        assert!(matches!(norm("ftp://host"), Err(BaseUrlError::Scheme(_))));
        assert!(matches!(norm("not a url"), Err(BaseUrlError::Invalid(..))));
        assert!(matches!(norm("https://host/api/v1?x=1"), Err(BaseUrlError::Extra(_))));
    }
}
