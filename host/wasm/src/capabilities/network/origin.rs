//! Origins, the unit of a network grant: `scheme://host[:port]`, as a
//! manifest asks for them and an operator approves them, and the one
//! question every enforcement point asks of them: does this request's
//! scheme, host and port fall inside?
//!
//! | part | written | matches |
//! |---|---|---|
//! | scheme | `https`, `http`, or `tcp` (raw sockets) | that scheme only |
//! | host | `api.example.com`, `127.0.0.1`, `[::1]` | that host exactly, case aside |
//! | | `*.example.com` | one more label: `a.example.com`, not `a.b.example.com` nor `example.com` |
//! | | `*` | any host (blocked addresses stay blocked) |
//! | port | `:8443` | that port |
//! | | `:*` | any port |
//! | | left out | the scheme's own: 443 for `https`, 80 for `http` |
//!
//! A `tcp` origin names one IP address and one port, literally: a socket
//! sees only addresses, so there is no name to match. Anything else (a
//! path, a query, userinfo, a trailing dot, a wildcard inside a label,
//! non-ASCII) is refused when the origin is parsed, with the reason.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

/// The schemes an origin may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scheme {
    /// HTTP over TLS.
    Https,
    /// Plain HTTP.
    Http,
    /// A raw TCP connection through `wasi:sockets`.
    Tcp,
}

impl Scheme {
    fn parse(text: &str) -> Option<Self> {
        match text {
            "https" => Some(Self::Https),
            "http" => Some(Self::Http),
            "tcp" => Some(Self::Tcp),
            _ => None,
        }
    }

    /// The port a URL of this scheme means when it names none.
    pub fn default_port(self) -> Option<u16> {
        match self {
            Self::Https => Some(443),
            Self::Http => Some(80),
            Self::Tcp => None,
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Https => "https",
            Self::Http => "http",
            Self::Tcp => "tcp",
        })
    }
}

/// The host part of an origin.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum HostPattern {
    /// Any host.
    Any,
    /// One label more than this domain (stored without the `*.`).
    Subdomain(String),
    /// A DNS name, lowercase.
    Name(String),
    /// An IP address.
    Ip(IpAddr),
}

/// The port part of an origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum PortPattern {
    Any,
    Exact(u16),
}

/// An origin pattern, parsed and normalised.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Origin {
    scheme: Scheme,
    host: HostPattern,
    port: PortPattern,
}

/// The host of a request, as the policy judges it: a name, lowercase, or an
/// address (IPv4 in any of the forms resolvers accept, already parsed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// A DNS name, lowercase.
    Name(String),
    /// An address.
    Ip(IpAddr),
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Name(name) => f.write_str(name),
            Self::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            Self::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

impl Host {
    /// Read a request's host: `[v6]`, an IPv4 address in dotted, decimal,
    /// octal or hex form (`2130706433`, `0x7f.1`, `0177.0.0.1` are all
    /// 127.0.0.1, as resolvers read them), or a DNS name.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err("names no host".into());
        }
        if text.contains(['@', '/', '\\', '?', '#', ' ', '%']) {
            return Err(format!("`{text}` is not a host"));
        }
        match url::Host::parse(text) {
            Ok(url::Host::Ipv4(ip)) => Ok(Self::Ip(IpAddr::V4(ip))),
            Ok(url::Host::Ipv6(ip)) => Ok(Self::Ip(IpAddr::V6(ip))),
            Ok(url::Host::Domain(name)) if name.is_ascii() => Ok(Self::Name(name)),
            Ok(url::Host::Domain(_)) => Err(format!("`{text}` is not an ASCII host name")),
            Err(error) => Err(format!("`{text}` is not a host: {error}")),
        }
    }
}

impl Origin {
    /// Parse `text`, saying what is wrong with it when it is not an origin.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (scheme, rest) = text
            .split_once("://")
            .ok_or("write it as scheme://host[:port], such as https://api.example.com")?;
        let scheme = Scheme::parse(scheme)
            .ok_or_else(|| format!("the scheme `{scheme}` is not one of https, http and tcp"))?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains('@') {
            return Err("an origin holds no user name or password (`@`)".into());
        }
        if rest.contains(['/', '?', '#']) {
            return Err("an origin holds no path, query or fragment".into());
        }
        let (host, port) = split_port(rest)?;
        let host = host_pattern(host)?;
        let port = match port {
            None => PortPattern::Exact(
                scheme
                    .default_port()
                    .ok_or("a tcp origin names its port, such as tcp://10.0.0.5:5432")?,
            ),
            Some("*") => PortPattern::Any,
            Some(digits) => match digits.parse::<u16>() {
                Ok(port) if port > 0 && digits.bytes().all(|b| b.is_ascii_digit()) => {
                    PortPattern::Exact(port)
                }
                _ => return Err(format!("the port `{digits}` is not 1 to 65535 or `*`")),
            },
        };
        if scheme == Scheme::Tcp
            && (!matches!(host, HostPattern::Ip(_)) || port == PortPattern::Any)
        {
            return Err(
                "a tcp origin names one IP address and one port, such as tcp://10.0.0.5:5432: a socket sees only addresses"
                    .into(),
            );
        }
        Ok(Self { scheme, host, port })
    }

    /// The scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// Whether a request over `scheme` to `host` on `port` falls inside.
    pub fn matches(&self, scheme: Scheme, host: &Host, port: u16) -> bool {
        self.scheme == scheme
            && match self.port {
                PortPattern::Any => true,
                PortPattern::Exact(own) => own == port,
            }
            && match (&self.host, host) {
                (HostPattern::Any, _) => true,
                (HostPattern::Subdomain(domain), Host::Name(name)) => one_label_under(domain, name),
                (HostPattern::Name(own), Host::Name(name)) => own == name,
                (HostPattern::Ip(own), Host::Ip(ip)) => own == ip,
                _ => false,
            }
    }

    /// Whether a raw socket may connect to `addr`: a `tcp` origin naming it.
    pub fn matches_socket(&self, addr: SocketAddr) -> bool {
        self.matches(Scheme::Tcp, &Host::Ip(addr.ip()), addr.port())
    }

    /// Whether everything `other` matches, this matches too.
    pub fn covers(&self, other: &Self) -> bool {
        let port = match (self.port, other.port) {
            (PortPattern::Any, _) => true,
            (PortPattern::Exact(own), PortPattern::Exact(theirs)) => own == theirs,
            (PortPattern::Exact(_), PortPattern::Any) => false,
        };
        let host = match (&self.host, &other.host) {
            (HostPattern::Any, _) => true,
            (HostPattern::Subdomain(own), HostPattern::Subdomain(theirs)) => own == theirs,
            (HostPattern::Subdomain(domain), HostPattern::Name(name)) => {
                one_label_under(domain, name)
            }
            (own, theirs) => own == theirs,
        };
        self.scheme == other.scheme && port && host
    }
}

/// Whether `name` is `domain` with exactly one label before it.
fn one_label_under(domain: &str, name: &str) -> bool {
    name.strip_suffix(domain)
        .and_then(|label| label.strip_suffix('.'))
        .is_some_and(|label| !label.is_empty() && !label.contains('.'))
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://", self.scheme)?;
        match &self.host {
            HostPattern::Any => f.write_str("*")?,
            HostPattern::Subdomain(domain) => write!(f, "*.{domain}")?,
            HostPattern::Name(name) => f.write_str(name)?,
            HostPattern::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]")?,
            HostPattern::Ip(ip) => write!(f, "{ip}")?,
        }
        match self.port {
            PortPattern::Any => f.write_str(":*"),
            PortPattern::Exact(port) if Some(port) == self.scheme.default_port() => Ok(()),
            PortPattern::Exact(port) => write!(f, ":{port}"),
        }
    }
}

/// Split `host[:port]`, `[v6][:port]`.
fn split_port(text: &str) -> Result<(&str, Option<&str>), String> {
    if let Some(rest) = text.strip_prefix('[') {
        let (inside, after) = rest
            .split_once(']')
            .ok_or("an IPv6 address in brackets lacks its `]`")?;
        return match after {
            "" => Ok((inside, None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((inside, Some(port))),
                None => Err(format!("`{after}` after the IPv6 address is not a port")),
            },
        };
    }
    Ok(match text.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (text, None),
    })
}

fn host_pattern(text: &str) -> Result<HostPattern, String> {
    if text.is_empty() {
        return Err("an origin names a host, or `*` for any".into());
    }
    if text == "*" {
        return Ok(HostPattern::Any);
    }
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Ok(HostPattern::Ip(ip));
    }
    let lower = text.to_ascii_lowercase();
    let (subdomain, name) = match lower.strip_prefix("*.") {
        Some(domain) => (true, domain),
        None => (false, lower.as_str()),
    };
    if name.contains('*') {
        return Err(
            "`*` stands for a whole host or its first label (`*.example.com`), nothing else".into(),
        );
    }
    if name.ends_with('.') {
        return Err("a host name ends without a dot".into());
    }
    let labels_ok = name.split('.').all(|label| {
        (1..=63).contains(&label.len())
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    });
    if !labels_ok || name.len() > 253 {
        return Err(format!(
            "`{text}` is not a host name: labels of a-z, 0-9 and `-` between dots (write an internationalised name in its xn-- form)"
        ));
    }
    if name
        .split('.')
        .all(|label| label.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(format!("`{text}` is not an IPv4 address in dotted form"));
    }
    Ok(if subdomain {
        HostPattern::Subdomain(name.to_owned())
    } else {
        HostPattern::Name(name.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(text: &str) -> Host {
        Host::parse(text).unwrap()
    }

    fn allows(origin: &str, scheme: Scheme, host_text: &str, port: u16) -> bool {
        Origin::parse(origin)
            .unwrap()
            .matches(scheme, &host(host_text), port)
    }

    #[test]
    fn an_origin_matches_its_scheme_host_and_port_and_nothing_else() {
        let origin = "https://api.example.com";
        assert!(allows(origin, Scheme::Https, "api.example.com", 443));
        assert!(allows(origin, Scheme::Https, "API.Example.COM", 443));
        assert!(!allows(origin, Scheme::Http, "api.example.com", 443));
        assert!(!allows(origin, Scheme::Https, "api.example.com", 8443));
        assert!(!allows(origin, Scheme::Https, "x.api.example.com", 443));
        assert!(!allows(origin, Scheme::Https, "api.example.com.evil", 443));
        assert!(!allows(origin, Scheme::Https, "api.example.com.", 443));
        assert!(!allows(origin, Scheme::Https, "example.com", 443));
    }

    #[test]
    fn wildcards_stand_for_one_label_any_host_or_any_port() {
        let sub = "https://*.example.com:8443";
        assert!(allows(sub, Scheme::Https, "a.example.com", 8443));
        assert!(!allows(sub, Scheme::Https, "a.b.example.com", 8443));
        assert!(!allows(sub, Scheme::Https, "example.com", 8443));
        assert!(!allows(sub, Scheme::Https, "aexample.com", 8443));
        assert!(!allows(sub, Scheme::Https, "a.example.com", 443));
        assert!(allows(
            "http://localhost:*",
            Scheme::Http,
            "localhost",
            8080
        ));
        assert!(!allows(
            "http://localhost:*",
            Scheme::Https,
            "localhost",
            8080
        ));
        assert!(allows("https://*", Scheme::Https, "anything.test", 443));
        assert!(allows("https://*", Scheme::Https, "10.0.0.1", 443));
        assert!(!allows("https://*", Scheme::Https, "anything.test", 444));
    }

    #[test]
    fn addresses_match_in_any_form_a_resolver_reads() {
        let origin = "http://127.0.0.1:*";
        for form in [
            "127.0.0.1",
            "2130706433",
            "0x7f000001",
            "0177.0.0.1",
            "0x7f.1",
        ] {
            assert!(allows(origin, Scheme::Http, form, 80), "{form}");
        }
        assert!(allows("http://[::1]:8080", Scheme::Http, "[::1]", 8080));
        assert!(!allows(
            "http://[::1]:8080",
            Scheme::Http,
            "[::ffff:127.0.0.1]",
            8080
        ));
    }

    #[test]
    fn a_malformed_origin_says_what_is_wrong() {
        for (text, says) in [
            ("api.example.com", "scheme://host"),
            ("ftp://example.com", "not one of https, http and tcp"),
            ("https://user@example.com", "user name or password"),
            ("https://example.com/path", "no path"),
            ("https://example.com?q", "no path"),
            ("https://", "names a host"),
            ("https://ex*ample.com", "first label"),
            ("https://*.*.example.com", "first label"),
            ("https://example.com.", "without a dot"),
            ("https://exa_mple.com", "not a host name"),
            ("https://bücher.example", "xn--"),
            ("https://example.com:0", "not 1 to 65535"),
            ("https://example.com:70000", "not 1 to 65535"),
            ("https://example.com:+80", "not 1 to 65535"),
            ("https://[::1", "lacks its `]`"),
            ("https://2130706433", "dotted form"),
            ("tcp://db.internal:5432", "one IP address and one port"),
            ("tcp://10.0.0.5", "names its port"),
            ("tcp://10.0.0.5:*", "one IP address and one port"),
        ] {
            let error = Origin::parse(text).unwrap_err();
            assert!(error.contains(says), "{text}: {error}");
        }
    }

    #[test]
    fn origins_print_as_they_are_normalised() {
        for (text, shown) in [
            ("https://API.example.com:443/", "https://api.example.com"),
            ("http://localhost:*", "http://localhost:*"),
            ("https://*.example.com:8443", "https://*.example.com:8443"),
            ("http://[::1]:80", "http://[::1]"),
            ("tcp://10.0.0.5:5432", "tcp://10.0.0.5:5432"),
        ] {
            assert_eq!(Origin::parse(text).unwrap().to_string(), shown);
        }
    }

    #[test]
    fn a_pattern_covers_the_narrower_ones_only() {
        let covers = |wide: &str, narrow: &str| {
            Origin::parse(wide)
                .unwrap()
                .covers(&Origin::parse(narrow).unwrap())
        };
        assert!(covers("https://*", "https://api.github.com"));
        assert!(covers("https://*:*", "https://*.example.com:8443"));
        assert!(covers("https://*.example.com", "https://api.example.com"));
        assert!(!covers("https://*.example.com", "https://a.b.example.com"));
        assert!(!covers("https://*", "http://api.github.com"));
        assert!(!covers("https://*", "https://api.github.com:8443"));
        assert!(!covers("https://api.github.com", "https://*"));
        assert!(covers("tcp://10.0.0.5:5432", "tcp://10.0.0.5:5432"));
    }

    #[test]
    fn a_request_host_that_is_no_host_is_refused() {
        for text in ["", "allowed@evil", "a b", "evil/x", "%65vil"] {
            assert!(Host::parse(text).is_err(), "{text}");
        }
    }
}
