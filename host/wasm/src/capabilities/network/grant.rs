//! `grants.network`: the origins a bundle asks to reach, and the allowlist a
//! call gets from them. A manifest's origins are what the bundle may ever
//! be granted; the operator's approval names what it is granted, which may
//! be fewer (`cordon grants approve http --origin https://api.github.com`).
//! A request must fall inside both, so an approval can narrow and never
//! widen. The bundled plugins come approved for no origin at all.

use super::origin::{Host, Origin, Scheme};
use crate::capabilities::unit::Grant;
use crate::manifest::checks::{ManifestError, Validator};
use crate::manifest::kind::BundleKind;

/// The network capability.
pub(crate) struct Network;

impl Grant for Network {
    const SAID: u8 = 4;

    /// The origins.
    type Asked = Vec<String>;

    /// Each an origin, each listed once.
    fn validate(
        origins: &Vec<String>,
        _kind: BundleKind,
        check: &Validator<'_>,
    ) -> Result<(), ManifestError> {
        parse_all(origins, |index, origin, reason| {
            check.invalid(&format!("grants.network[{index}]"), origin, &reason)
        })
        .map(drop)
    }

    fn is_empty(origins: &Vec<String>) -> bool {
        origins.is_empty()
    }

    fn describe(origins: &Vec<String>) -> Vec<String> {
        if origins.is_empty() {
            Vec::new()
        } else {
            vec![format!("network {}", origins.join(", "))]
        }
    }

    /// Never: the operator may grant fewer origins than asked.
    fn beyond(_asked: &Vec<String>, _approved: &Vec<String>) -> Vec<String> {
        Vec::new()
    }

    /// The origins of `asked` that no origin of `approved` covers: where a
    /// bundle may not connect although it asks to.
    fn narrowed(asked: &Vec<String>, approved: &Vec<String>) -> Vec<String> {
        unapproved(asked, approved)
    }

    fn check_approved(approved: &Vec<String>) -> Result<(), (String, String, String)> {
        parse_all(approved, |index, origin, reason| {
            (format!("[{index}]"), origin.to_owned(), reason)
        })
        .map(drop)
    }

    /// Untrusted code has no network.
    fn untrusted(origins: &mut Vec<String>) -> Vec<String> {
        origins
            .drain(..)
            .map(|origin| format!("network {origin} (untrusted code has no network)"))
            .collect()
    }
}

/// Parse `origins`, each listed once, reporting the first bad one through `fail`.
pub(crate) fn parse_all<E>(
    origins: &[String],
    fail: impl Fn(usize, &str, String) -> E,
) -> Result<Vec<Origin>, E> {
    let mut parsed: Vec<Origin> = Vec::new();
    for (index, text) in origins.iter().enumerate() {
        let origin = Origin::parse(text).map_err(|reason| fail(index, text, reason))?;
        if parsed.contains(&origin) {
            return Err(fail(index, text, format!("is listed twice (as {origin})")));
        }
        parsed.push(origin);
    }
    Ok(parsed)
}

/// The origins of `asked` that no origin of `approved` covers, one line each.
fn unapproved(asked: &[String], approved: &[String]) -> Vec<String> {
    let approved = parse_lossy(approved);
    parse_lossy(asked)
        .into_iter()
        .filter(|origin| !approved.iter().any(|granted| granted.covers(origin)))
        .map(|origin| format!("network {origin}"))
        .collect()
}

/// The origins of `texts` that parse; a manifest's were checked at load.
fn parse_lossy(texts: &[String]) -> Vec<Origin> {
    texts
        .iter()
        .filter_map(|text| Origin::parse(text).ok())
        .collect()
}

/// Where one bundle's calls may connect: what its manifest asks, as the
/// operator's approval narrows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlist {
    asked: Vec<Origin>,
    approved: Vec<Origin>,
}

impl Allowlist {
    /// The origins `asked` as narrowed by those `approved`.
    pub(crate) fn new(asked: &[String], approved: &[String]) -> Self {
        Self {
            asked: parse_lossy(asked),
            approved: parse_lossy(approved),
        }
    }

    /// Whether nothing is granted.
    pub fn is_empty(&self) -> bool {
        self.granted().next().is_none()
    }

    /// The approved origins that some origin asked covers: what the bundle
    /// is granted, as far as it can be written down.
    pub fn granted(&self) -> impl Iterator<Item = &Origin> {
        self.approved
            .iter()
            .filter(|approved| self.asked.iter().any(|asked| asked.covers(approved)))
    }

    /// Whether a request over `scheme` to `host:port` falls inside.
    pub fn allows(&self, scheme: Scheme, host: &Host, port: u16) -> bool {
        let inside = |origins: &[Origin]| {
            origins
                .iter()
                .any(|origin| origin.matches(scheme, host, port))
        };
        inside(&self.asked) && inside(&self.approved)
    }

    /// Whether a raw socket may connect to `addr`.
    pub fn allows_socket(&self, addr: std::net::SocketAddr) -> bool {
        self.allows(Scheme::Tcp, &Host::Ip(addr.ip()), addr.port())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|text| (*text).to_owned()).collect()
    }

    #[test]
    fn a_request_must_fall_inside_what_is_asked_and_what_is_approved() {
        let list = Allowlist::new(
            &strings(&["https://*"]),
            &strings(&["https://api.github.com", "http://evil.test"]),
        );
        let github = Host::parse("api.github.com").unwrap();
        assert!(list.allows(Scheme::Https, &github, 443));
        assert!(!list.allows(Scheme::Https, &Host::parse("evil.test").unwrap(), 443));
        assert!(
            !list.allows(Scheme::Http, &Host::parse("evil.test").unwrap(), 80),
            "an approval never widens what the manifest asks"
        );
        assert_eq!(
            list.granted().map(ToString::to_string).collect::<Vec<_>>(),
            ["https://api.github.com"]
        );
        assert!(Allowlist::new(&strings(&["https://*"]), &[]).is_empty());
    }

    #[test]
    fn what_is_asked_beyond_the_approval_is_said() {
        assert_eq!(
            unapproved(
                &strings(&["https://api.a.test", "https://api.b.test"]),
                &strings(&["https://api.a.test"])
            ),
            ["network https://api.b.test"]
        );
        assert!(unapproved(&strings(&["https://*"]), &strings(&["https://*"])).is_empty());
    }
}
