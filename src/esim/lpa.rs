//! LPA activation codes (`LPA:1$<SM-DP+ address>$<matching id>`), what an eSIM QR code holds.

/// The parts of an activation code that a support agent reads out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivationCode {
    pub smdp_address: String,
    pub matching_id: String,
}

impl ActivationCode {
    /// Reads `LPA:1$addr$id`, with optional fields after the matching ID (GSMA SGP.22).
    pub fn parse(code: &str) -> Option<Self> {
        let rest = code
            .trim()
            .strip_prefix("LPA:")
            .or_else(|| code.trim().strip_prefix("lpa:"))?;
        let mut parts = rest.split('$');
        if parts.next()? != "1" {
            return None;
        }
        let smdp_address = parts.next()?.to_string();
        let matching_id = parts.next().unwrap_or_default().to_string();
        (!smdp_address.is_empty()).then_some(Self {
            smdp_address,
            matching_id,
        })
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
    }
}
