//! The reseller's secret taken out of server text, in every encoding a body can carry it: as
//! written, JSON-escaped (`\/`, `\u002B`), percent-encoded (either case, `+` for a space) or
//! base64 (standard or URL-safe, at any of the three alignments inside a longer run). A server
//! or proxy that quotes a request back must not carry the key to whoever reads its answer.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};

const REDACTED: &[u8] = b"[REDACTED]";

/// Shorter base64 runs than this are not looked for: they would match ordinary text.
const SHORTEST_BASE64: usize = 8;

/// The body with every occurrence of the secret, however encoded, replaced by `[REDACTED]`.
pub fn scrub(body: &[u8], secret: &[u8]) -> Vec<u8> {
    if secret.is_empty() {
        return body.to_vec();
    }
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let first = secret[0];
    for start in 0..body.len() {
        if (matches!(body[start], b'%' | b'\\' | b'+') || body[start] == first)
            && let Some(end) = encoded_at(body, start, secret)
        {
            spans.push((start, end));
        }
    }
    for run in base64_runs(secret) {
        let mut from = 0;
        while let Some(at) = find(&body[from..], &run) {
            spans.push((from + at, from + at + run.len()));
            from += at + 1;
        }
    }
    if spans.is_empty() {
        return body.to_vec();
    }
    spans.sort_unstable();
    let mut out = Vec::with_capacity(body.len());
    let mut done = 0;
    for (start, end) in spans {
        if end <= done {
            continue;
        }
        if start >= done {
            out.extend_from_slice(&body[done..start]);
            out.extend_from_slice(REDACTED);
        }
        done = end;
    }
    out.extend_from_slice(&body[done..]);
    out
}

/// The text with the secret replaced, as `scrub` does for bytes.
pub fn scrub_text(text: &str, secret: &str) -> String {
    String::from_utf8_lossy(&scrub(text.as_bytes(), secret.as_bytes())).into_owned()
}

/// Where the secret ends if it starts at `start`, each of its bytes written plainly or escaped.
fn encoded_at(body: &[u8], start: usize, secret: &[u8]) -> Option<usize> {
    let mut at = start;
    for &byte in secret {
        at += one_byte(body.get(at..)?, byte)?;
    }
    Some(at)
}

/// How many bytes of `rest` spell `byte`: plainly, `%XX`, `+` for a space, or a JSON escape.
fn one_byte(rest: &[u8], byte: u8) -> Option<usize> {
    match rest {
        [b, ..] if *b == byte => Some(1),
        [b'%', hi, lo, ..] if hex(*hi)? * 16 + hex(*lo)? == byte => Some(3),
        [b'+', ..] if byte == b' ' => Some(1),
        [b'\\', b'/', ..] if byte == b'/' => Some(2),
        [b'\\', b'\\', ..] if byte == b'\\' => Some(2),
        [b'\\', b'"', ..] if byte == b'"' => Some(2),
        [b'\\', b'u', a, b, c, d, ..] if byte.is_ascii() => {
            let code = [a, b, c, d]
                .iter()
                .try_fold(0u32, |n, &&h| Some(n * 16 + u32::from(hex(h)?)))?;
            (code == u32::from(byte)).then_some(6)
        }
        _ => None,
    }
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

/// The base64 characters that depend on the secret's bytes alone, for each alignment of the
/// secret within a longer encoded run, in both alphabets.
fn base64_runs(secret: &[u8]) -> Vec<Vec<u8>> {
    let mut runs = Vec::new();
    for lead in 0..3usize {
        let mut bytes = vec![0u8; lead];
        bytes.extend_from_slice(secret);
        let first = (8 * lead).div_ceil(6);
        let last = 8 * (lead + secret.len()) / 6;
        for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
            let encoded = engine.encode(&bytes);
            if let Some(run) = encoded.as_bytes().get(first..last)
                && run.len() >= SHORTEST_BASE64
                && !runs.iter().any(|r: &Vec<u8>| r.as_slice() == run)
            {
                runs.push(run.to_vec());
            }
        }
    }
    runs
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "sk_live/A+b c";

    fn scrubbed(body: &str) -> String {
        scrub_text(body, SECRET)
    }

    #[test]
    fn the_secret_is_gone_in_every_encoding() {
        let b64 = STANDARD_NO_PAD.encode(SECRET);
        let url_b64 = URL_SAFE_NO_PAD.encode(format!("Basic x:{SECRET}"));
        let inner = STANDARD_NO_PAD.encode(format!("ab{SECRET}yz"));
        // Each body, and a piece of it that spells the secret and must be gone.
        for (body, tell) in [
            (format!(r#"{{"error":"bad key {SECRET}"}}"#), "live".to_string()),
            (
                r#"{"error":"bad key sk_live\/A\u002Bb c"}"#.to_string(),
                "live".to_string(),
            ),
            (
                r#"{"error":"bad key \u0073k_live\u002fA+b\u0020c"}"#.to_string(),
                "live".to_string(),
            ),
            ("key=sk_live%2FA%2bb+c&x=1".to_string(), "live".to_string()),
            ("key=sk_live%2fA%2Bb%20c".to_string(), "live".to_string()),
            (format!("token {b64} end"), b64[2..14].to_string()),
            (format!("auth {url_b64}"), url_b64[12..20].to_string()),
            (format!("auth {inner}"), inner[5..15].to_string()),
        ] {
            let out = scrubbed(&body);
            assert!(out.contains("[REDACTED]"), "{body} → {out}");
            assert!(!out.contains(&tell), "{body} → {out}");
        }
    }

    #[test]
    fn text_without_the_secret_is_left_as_it_is() {
        for body in ["", "plain", r#"{"error":"Invalid slug \/x"}"#, "100%25 sk_liv"] {
            assert_eq!(scrubbed(body), body);
        }
        assert_eq!(scrub(b"any", b""), b"any".to_vec());
    }

    #[test]
    fn each_occurrence_is_replaced_once() {
        assert_eq!(
            scrub_text("a sk1sk1 b sk1", "sk1"),
            "a [REDACTED][REDACTED] b [REDACTED]"
        );
    }
}
