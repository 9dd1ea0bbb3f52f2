//! What the redactor looks for: one rule per kind of credential, the names under
//! which secrets are usually stored, and the operator's extra patterns.

use regex::Regex;

/// The names of fields and assignments whose value is a secret, as word lists:
/// `["api", "key"]` stands for `apikey`, `api_key`, `api-key` and `apiKey`, and
/// a name matches when it ends with one of them (`DB_PASSWORD`, `github_token`).
const SECRET_NAMES: &[&[&str]] = &[
    &["password"],
    &["passwd"],
    &["passphrase"],
    &["secret"],
    &["secret", "key"],
    &["token"],
    &["api", "key"],
    &["access", "key"],
    &["private", "key"],
    &["authorization"],
    &["client", "secret"],
];

/// Names that end like a secret name but hold something the model needs as is:
/// pagination cursors (`nextPageToken`) must be echoed back to fetch more.
const NOT_SECRET_SUFFIXES: &[&str] = &["pagetoken"];

/// The credential formats, most specific first: when two rules match the same
/// text, the earlier one names the kind. Word boundaries are ASCII (`(?-u:\b)`)
/// so that matching stays on the fast DFA path for any input.
const BUILT_IN: &[(&str, &str, Secret)] = &[
    (
        "private-key",
        r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*)",
        Secret::Whole,
    ),
    (
        "aws-access-key",
        r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)",
        Secret::Whole,
    ),
    (
        "github-token",
        r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        Secret::Whole,
    ),
    (
        "anthropic-key",
        r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{20,}",
        Secret::Whole,
    ),
    (
        "openai-key",
        r"(?-u:\b)sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
        Secret::WholeWithDigit,
    ),
    (
        "slack-token",
        r"(?-u:\b)xox[abprs]-[A-Za-z0-9-]{10,}",
        Secret::Whole,
    ),
    (
        "google-api-key",
        r"(?-u:\b)AIza[0-9A-Za-z_-]{35}",
        Secret::Whole,
    ),
    (
        "jwt",
        r"(?-u:\b)eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",
        Secret::Whole,
    ),
    (
        "bearer-token",
        r"(?i)(?-u:\b)bearer[ \t]+([A-Za-z0-9._~+/=-]{8,})",
        Secret::RandomGroup,
    ),
];

/// The kind of the `name = value` rule, and of values under secret-named fields.
pub(crate) const NAMED_SECRET: &str = "secret";

/// The kind of the operator's extra patterns.
pub(crate) const CUSTOM: &str = "custom";

/// Which part of a match is the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Secret {
    /// The whole match.
    Whole,
    /// The whole match, when it contains a digit: real keys are random and
    /// almost always do, while kebab-case words of the same shape do not.
    WholeWithDigit,
    /// The first capture group that took part, which leaves a name or scheme
    /// in front of it readable.
    FirstGroup,
    /// The first capture group, when it looks random (a digit, or 20 characters
    /// or more), so that prose such as "Bearer authentication" stays.
    RandomGroup,
}

/// One kind of secret and how to find it.
#[derive(Debug)]
pub(crate) struct Rule {
    /// The name in `[REDACTED:<kind>]`.
    pub kind: &'static str,
    /// Where the candidates are.
    pub regex: Regex,
    /// Which part of a match is the secret.
    pub secret: Secret,
}

/// The complete rule set: the built-in formats, `name = value` assignments and
/// the operator's patterns, in priority order.
#[derive(Debug)]
pub(crate) struct Redactor {
    /// The rules, most specific first.
    pub rules: Vec<Rule>,
}

impl Redactor {
    /// The built-in rules plus `extra` patterns; a pattern that does not compile
    /// is an error naming it, since skipping it would let its secrets through.
    pub(crate) fn new(extra: &[String]) -> Result<Self, String> {
        let mut rules = Vec::with_capacity(BUILT_IN.len() + 1 + extra.len());
        for &(kind, pattern, secret) in BUILT_IN {
            rules.push(compile(kind, pattern, secret)?);
        }
        rules.push(compile(
            NAMED_SECRET,
            &assignment_pattern(),
            Secret::FirstGroup,
        )?);
        for pattern in extra {
            rules.push(compile(CUSTOM, pattern, Secret::Whole)?);
        }
        Ok(Self { rules })
    }
}

/// Whether a field named `name` holds a secret: its name, lowercased and with
/// `-`, `_`, `.` and spaces removed, ends with a secret name.
pub(crate) fn is_secret_name(name: &str) -> bool {
    let name: String = name
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_NAMES
        .iter()
        .any(|words| name.ends_with(&words.concat()))
        && !NOT_SECRET_SUFFIXES
            .iter()
            .any(|suffix| name.ends_with(suffix))
}

/// `name = value` and `name: value` where the name ends with a secret name. The
/// value is a quoted string (its content is the secret) or a bare word; an
/// authorization scheme in front of it stays readable. `==` is a comparison,
/// not an assignment, so a bare value never starts with `=`.
fn assignment_pattern() -> String {
    let names: Vec<String> = SECRET_NAMES
        .iter()
        .map(|words| words.join("[_-]?"))
        .collect();
    format!(
        r#"(?i)(?-u:\b)[A-Za-z0-9_.-]*?(?:{names})(?-u:\b)["']?[ \t]*(?::=|[:=])[ \t]*(?:(?:bearer|basic|token|digest)[ \t]+)?(?:"([^"\r\n]*)"|'([^'\r\n]*)'|([^\s"',;&=][^\s"',;&]*))"#,
        names = names.join("|"),
    )
}

fn compile(kind: &'static str, pattern: &str, secret: Secret) -> Result<Rule, String> {
    let regex =
        Regex::new(pattern).map_err(|error| format!("invalid pattern `{pattern}`: {error}"))?;
    Ok(Rule {
        kind,
        regex,
        secret,
    })
}

#[cfg(test)]
mod tests {
    use super::{Redactor, is_secret_name};

    #[test]
    fn built_in_rules_compile() {
        assert!(Redactor::new(&[]).is_ok());
    }

    #[test]
    fn invalid_extra_pattern_is_an_error_naming_it() {
        let error = Redactor::new(&["(unclosed".to_owned()]).expect_err("must fail");
        assert!(error.contains("`(unclosed`"), "{error}");
    }

    #[test]
    fn secret_names_tolerate_case_and_separators() {
        for name in [
            "password",
            "DB_PASSWORD",
            "passwd",
            "api_key",
            "apiKey",
            "x-api-key",
            "ACCESS_KEY",
            "aws_secret_access_key",
            "private-key",
            "Authorization",
            "client_secret",
            "github_token",
            "token",
            "secret",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn ordinary_names_are_not_secret() {
        for name in [
            "max_tokens",
            "token_count",
            "tokens",
            "token_type",
            "secret_name",
            "password_hint",
            "key",
            "path",
            "nextPageToken",
            "page_token",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }
}
