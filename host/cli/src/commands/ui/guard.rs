//! Who may ask the inspector anything. It answers on this machine's
//! loopback only, and refuses, before reading a request further:
//! - a `Host` that is not the loopback address and port it listens on (a
//!   page of another site reaching it by DNS rebinding);
//! - an `Origin` that is not its own page's (another site's page posting to
//!   it from the person's browser);
//! - a request for the store's data or a decision without the launch's
//!   token, which only the person who started it was shown;
//! - a decision that is not JSON (a plain form another page could send).

use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, ORIGIN};
use hyper::http::request::Parts;
use hyper::{Method, StatusCode};

/// Why a request is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    /// The `Host` header names another host (or none).
    #[error("Host {0:?} is not this inspector's loopback address")]
    Host(String),
    /// The `Origin` header names another site.
    #[error("Origin {0:?} is not this inspector's page")]
    Origin(String),
    /// The request carries no token, or another one.
    #[error("the request lacks this launch's token: open the address `cordon ui` printed")]
    Token,
    /// A write that is not JSON.
    #[error("a decision is sent as application/json")]
    NotJson,
}

impl Refusal {
    /// The status that answers it.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Self::Host(_) | Self::Origin(_) => StatusCode::FORBIDDEN,
            Self::Token => StatusCode::UNAUTHORIZED,
            Self::NotJson => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        }
    }
}

/// The checks of one launch: its port and its token.
pub(crate) struct Guard {
    port: u16,
    token: String,
}

impl Guard {
    pub(crate) fn new(port: u16, token: String) -> Self {
        Self { port, token }
    }

    /// The launch's token.
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// Refuse `request` unless it may be answered; `data` says whether it
    /// asks for the store's data or a decision, which need the token.
    pub(crate) fn admit(&self, request: &Parts, data: bool) -> Result<(), Refusal> {
        let header = |name| {
            request
                .headers
                .get(name)
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        };
        let host = header(HOST).unwrap_or_default();
        if !self.ours(&host) {
            return Err(Refusal::Host(host));
        }
        if let Some(origin) = header(ORIGIN) {
            let host = origin.strip_prefix("http://").unwrap_or_default();
            if !self.ours(host) {
                return Err(Refusal::Origin(origin));
            }
        }
        if !data {
            return Ok(());
        }
        let given = header(AUTHORIZATION).unwrap_or_default();
        let given = given.strip_prefix("Bearer ").unwrap_or_default();
        if !same(given.as_bytes(), self.token.as_bytes()) {
            return Err(Refusal::Token);
        }
        if request.method == Method::POST {
            let kind = header(CONTENT_TYPE).unwrap_or_default();
            let kind = kind.split(';').next().unwrap_or_default().trim();
            if !kind.eq_ignore_ascii_case("application/json") {
                return Err(Refusal::NotJson);
            }
        }
        Ok(())
    }

    /// Whether `host` (`name:port`) is this launch's loopback address.
    fn ours(&self, host: &str) -> bool {
        let port = self.port.to_string();
        ["127.0.0.1", "localhost", "[::1]"].iter().any(|name| {
            host.strip_prefix(name)
                .and_then(|rest| rest.strip_prefix(':'))
                .is_some_and(|given| given == port)
        })
    }
}

/// Whether `given` is `expected`, in time that does not depend on where
/// they differ.
fn same(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0_u8, |differs, (a, b)| differs | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(method: Method, headers: &[(&str, &str)]) -> Parts {
        let mut request = hyper::Request::builder().method(method).uri("/api/runs");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    const TOKEN: &str = "00112233445566778899aabbccddeeff";

    fn guard() -> Guard {
        Guard::new(4567, TOKEN.to_owned())
    }

    #[test]
    fn its_own_host_origin_and_token_are_admitted_and_each_other_refused() {
        let bearer = format!("Bearer {TOKEN}");
        let good = [
            ("host", "127.0.0.1:4567"),
            ("origin", "http://127.0.0.1:4567"),
            ("authorization", bearer.as_str()),
            ("content-type", "application/json"),
        ];
        assert_eq!(guard().admit(&parts(Method::POST, &good), true), Ok(()));
        let with = |name: &str, value: &str| {
            let mut headers: Vec<(&str, &str)> = good
                .iter()
                .filter(|(key, _)| *key != name)
                .copied()
                .collect();
            headers.push((name, value));
            guard().admit(&parts(Method::POST, &headers), true)
        };
        for host in [
            "evil.example:4567",
            "127.0.0.1:80",
            "127.0.0.1",
            "localhost.evil:4567",
        ] {
            assert_eq!(
                with("host", host),
                Err(Refusal::Host(host.into())),
                "{host}"
            );
        }
        for origin in [
            "http://evil.example",
            "null",
            "https://127.0.0.1:4567",
            "http://127.0.0.1:9",
        ] {
            assert_eq!(
                with("origin", origin),
                Err(Refusal::Origin(origin.into())),
                "{origin}"
            );
        }
        assert_eq!(
            with("authorization", "Bearer 00112233445566778899aabbccddeefe"),
            Err(Refusal::Token)
        );
        assert_eq!(with("authorization", TOKEN), Err(Refusal::Token));
        assert_eq!(with("content-type", "text/plain"), Err(Refusal::NotJson));
    }

    #[test]
    fn the_page_itself_needs_no_token_but_its_own_host() {
        let page = parts(Method::GET, &[("host", "localhost:4567")]);
        assert_eq!(guard().admit(&page, false), Ok(()));
        assert_eq!(guard().admit(&page, true), Err(Refusal::Token));
        let rebound = parts(Method::GET, &[("host", "attacker.example:4567")]);
        assert!(matches!(
            guard().admit(&rebound, false),
            Err(Refusal::Host(_))
        ));
    }
}
