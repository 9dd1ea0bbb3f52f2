//! Redacting one string: every secret a rule finds becomes `[REDACTED:<kind>]`.
//! Markers already in the text are never matched into, so redacting twice
//! changes nothing, and overlapping finds merge into one marker.

use std::ops::Range;

use regex::Captures;

use crate::rules::{Redactor, Rule, Secret};

const MARKER_START: &str = "[REDACTED:";

/// A stretch of the text to replace, and the kind of secret it holds.
struct Span {
    range: Range<usize>,
    kind: &'static str,
}

impl Redactor {
    /// `text` with its secrets replaced, or `None` when it has none.
    pub(crate) fn text(&self, text: &str) -> Option<String> {
        let markers = markers(text);
        let mut spans = Vec::new();
        for rule in &self.rules {
            for range in secrets(rule, text) {
                for piece in outside(range, &markers) {
                    if !text[piece.clone()].trim().is_empty() {
                        spans.push(Span {
                            range: piece,
                            kind: rule.kind,
                        });
                    }
                }
            }
        }
        if spans.is_empty() {
            return None;
        }
        // Stable, so that among finds starting at the same place the earlier,
        // more specific rule names the kind.
        spans.sort_by_key(|span| span.range.start);
        Some(replace(text, merge(spans)))
    }
}

/// Whether `text` is exactly one redaction marker.
pub(crate) fn is_marker(text: &str) -> bool {
    markers(text).first() == Some(&(0..text.len()))
}

/// Where `rule` finds secrets in `text`.
fn secrets(rule: &Rule, text: &str) -> Vec<Range<usize>> {
    match rule.secret {
        Secret::Whole => rule.regex.find_iter(text).map(|m| m.range()).collect(),
        Secret::WholeWithDigit => rule
            .regex
            .find_iter(text)
            .filter(|m| has_digit(m.as_str()))
            .map(|m| m.range())
            .collect(),
        Secret::FirstGroup => rule
            .regex
            .captures_iter(text)
            .filter_map(|captures| first_group(&captures))
            .collect(),
        Secret::RandomGroup => rule
            .regex
            .captures_iter(text)
            .filter_map(|captures| first_group(&captures))
            .filter(|range| looks_random(&text[range.clone()]))
            .collect(),
    }
}

fn first_group(captures: &Captures<'_>) -> Option<Range<usize>> {
    captures
        .iter()
        .skip(1)
        .flatten()
        .map(|m| m.range())
        .find(|range| !range.is_empty())
}

fn has_digit(text: &str) -> bool {
    text.bytes().any(|b| b.is_ascii_digit())
}

fn looks_random(text: &str) -> bool {
    has_digit(text) || text.len() >= 20
}

/// The markers already in `text`, in order.
fn markers(text: &str) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = text[from..].find(MARKER_START) {
        let start = from + offset;
        let kind_start = start + MARKER_START.len();
        let kind_len = text[kind_start..]
            .bytes()
            .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
            .count();
        let close = kind_start + kind_len;
        if kind_len > 0 && text[close..].starts_with(']') {
            found.push(start..close + 1);
            from = close + 1;
        } else {
            from = kind_start;
        }
    }
    found
}

/// The parts of `range` outside every marker (`markers` sorted and disjoint).
fn outside(range: Range<usize>, markers: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    let mut start = range.start;
    for marker in markers {
        if marker.end <= start {
            continue;
        }
        if marker.start >= range.end {
            break;
        }
        if marker.start > start {
            pieces.push(start..marker.start);
        }
        start = marker.end;
    }
    if start < range.end {
        pieces.push(start..range.end);
    }
    pieces
}

/// Joins overlapping spans (sorted by start); the first of each group names the kind.
fn merge(spans: Vec<Span>) -> Vec<Span> {
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.range.start < last.range.end => {
                last.range.end = last.range.end.max(span.range.end);
            }
            _ => merged.push(span),
        }
    }
    merged
}

fn replace(text: &str, spans: Vec<Span>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for span in spans {
        out.push_str(&text[last..span.range.start]);
        out.push_str(MARKER_START);
        out.push_str(span.kind);
        out.push(']');
        last = span.range.end;
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::is_marker;
    use crate::rules::Redactor;

    fn redact(text: &str) -> String {
        let redactor = Redactor::new(&[]).expect("built-in rules compile");
        redactor.text(text).unwrap_or_else(|| text.to_owned())
    }

    fn assert_unchanged(text: &str) {
        let redactor = Redactor::new(&[]).expect("built-in rules compile");
        assert_eq!(redactor.text(text), None, "{text}");
    }

    const GITHUB: &str = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";

    #[test]
    fn private_key_blocks_span_lines() {
        let text = "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----\ndone";
        assert_eq!(redact(text), "key:\n[REDACTED:private-key]\ndone");
        let openssh =
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----";
        assert_eq!(redact(openssh), "[REDACTED:private-key]");
    }

    #[test]
    fn unterminated_private_key_is_redacted_to_the_end() {
        assert_eq!(
            redact("a\n-----BEGIN PRIVATE KEY-----\nMIIEvQ\ntruncated"),
            "a\n[REDACTED:private-key]"
        );
    }

    #[test]
    fn public_keys_and_certificates_stay() {
        assert_unchanged("-----BEGIN PUBLIC KEY-----\nMIIBIj\n-----END PUBLIC KEY-----");
        assert_unchanged("-----BEGIN CERTIFICATE-----\nMIIDdz\n-----END CERTIFICATE-----");
    }

    #[test]
    fn aws_access_key_ids() {
        assert_eq!(
            redact("id AKIAIOSFODNN7EXAMPLE and ASIAY34FZKBOKMUTVV7A."),
            "id [REDACTED:aws-access-key] and [REDACTED:aws-access-key]."
        );
    }

    #[test]
    fn github_tokens() {
        assert_eq!(redact(&format!("t={GITHUB}")), "t=[REDACTED:github-token]");
        for prefix in ["gho_", "ghu_", "ghs_", "ghr_"] {
            let token = format!("{prefix}{}", &GITHUB[4..]);
            assert_eq!(redact(&token), "[REDACTED:github-token]");
        }
        let pat = "github_pat_11ABCDEFG0123456789abc_defghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456";
        assert_eq!(redact(pat), "[REDACTED:github-token]");
    }

    #[test]
    fn openai_and_anthropic_keys() {
        assert_eq!(
            redact("OPENAI sk-proj-Ab3dEf6hIj9kLmN0pQrStUvWxYz12345 end"),
            "OPENAI [REDACTED:openai-key] end"
        );
        assert_eq!(
            redact("sk-T3BlbkFJa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8"),
            "[REDACTED:openai-key]"
        );
        assert_eq!(
            redact("use sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe_dcba-AA now"),
            "use [REDACTED:anthropic-key] now"
        );
    }

    #[test]
    fn slack_google_and_jwt() {
        assert_eq!(
            redact("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
            "[REDACTED:slack-token]"
        );
        assert_eq!(
            redact("key=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q&x=1"),
            "key=[REDACTED:google-api-key]&x=1"
        );
        assert_eq!(redact(&format!("jwt {JWT} ok")), "jwt [REDACTED:jwt] ok");
    }

    #[test]
    fn bearer_tokens_keep_the_scheme() {
        assert_eq!(
            redact("Authorization: Bearer abc123def456ghi789"),
            "Authorization: Bearer [REDACTED:bearer-token]"
        );
        assert_eq!(
            redact(&format!("curl -H 'Authorization: Bearer {JWT}'")),
            "curl -H 'Authorization: Bearer [REDACTED:jwt]'"
        );
    }

    #[test]
    fn assignments_keep_the_name() {
        assert_eq!(redact("password=hunter2"), "password=[REDACTED:secret]");
        assert_eq!(
            redact("DB_PASSWORD: s3cr3t!"),
            "DB_PASSWORD: [REDACTED:secret]"
        );
        assert_eq!(
            redact("export GITHUB_TOKEN=abc123 && run"),
            "export GITHUB_TOKEN=[REDACTED:secret] && run"
        );
        assert_eq!(
            redact(r#"{"api_key": "correct horse battery"}"#),
            r#"{"api_key": "[REDACTED:secret]"}"#
        );
        assert_eq!(
            redact("https://x.test/?access_token=zzz999&page=2"),
            "https://x.test/?access_token=[REDACTED:secret]&page=2"
        );
        assert_eq!(
            redact("client-secret = 'q;w e'"),
            "client-secret = '[REDACTED:secret]'"
        );
        assert_eq!(
            redact("Authorization: Basic dXNlcjpwYXNz"),
            "Authorization: Basic [REDACTED:secret]"
        );
    }

    #[test]
    fn ordinary_text_stays() {
        for text in [
            "the token budget is spent",
            "tokens: 512",
            "max_tokens=4096",
            "commit e83c5163316f89bfbde7d9ab23ca2e25604af290 fixed it",
            "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "use Bearer authentication for the API",
            "the password field is empty: password=\"\"",
            "if token == expected {",
            "task-management-system-for-big-teams",
            "password_hint: your pet",
            "a key: value pair",
            "",
        ] {
            assert_unchanged(text);
        }
    }

    #[test]
    fn redacting_twice_changes_nothing() {
        let text = format!(
            "password: hunter2\nAuthorization: Bearer {JWT}\n{GITHUB}\n\
             -----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----\ntoken=\"a b\""
        );
        let once = redact(&text);
        assert_ne!(once, text);
        assert_unchanged(&once);
    }

    #[test]
    fn text_after_a_planted_marker_is_still_redacted() {
        assert_eq!(
            redact("token=[REDACTED:secret]hunter2"),
            "token=[REDACTED:secret][REDACTED:secret]"
        );
    }

    #[test]
    fn extra_patterns_are_custom() {
        let redactor = Redactor::new(&["ACME-[0-9]{6}".to_owned()]).expect("pattern compiles");
        assert_eq!(
            redactor.text("ticket ACME-123456 open").as_deref(),
            Some("ticket [REDACTED:custom] open")
        );
        assert_eq!(redactor.text("ticket [REDACTED:custom] open"), None);
    }

    #[test]
    fn markers_are_recognized_exactly() {
        assert!(is_marker("[REDACTED:secret]"));
        assert!(!is_marker("[REDACTED:secret] "));
        assert!(!is_marker("[REDACTED:]"));
        assert!(!is_marker("hunter2"));
    }
}
