//! Which addresses a connection may reach, judged after resolution on every
//! address a name resolves to. A component's grant names origins; whatever
//! they resolve to, a connection never goes to an address that is not
//! publicly routable (loopback, private, link-local, unique-local, shared
//! CGNAT space, unspecified, multicast, broadcast, documentation,
//! benchmarking, reserved) or to a cloud's metadata service, unless the
//! operator opens that range explicitly. An IPv6 address that carries an
//! IPv4 one (IPv4-mapped, IPv4-compatible, NAT64, 6to4) is judged as that
//! IPv4 address too, so no spelling gets around the rule.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;

/// Why an address is not reachable without the operator opening its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocked {
    /// A cloud's instance metadata service.
    CloudMetadata,
    /// This host: 127.0.0.0/8, ::1.
    Loopback,
    /// RFC 1918 private networks.
    Private,
    /// 169.254.0.0/16, fe80::/10.
    LinkLocal,
    /// fc00::/7.
    UniqueLocal,
    /// 100.64.0.0/10, carrier-grade NAT.
    SharedCgnat,
    /// 0.0.0.0/8, ::.
    Unspecified,
    /// 224.0.0.0/4, ff00::/8.
    Multicast,
    /// 255.255.255.255.
    Broadcast,
    /// 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32, 3fff::/20.
    Documentation,
    /// 198.18.0.0/15.
    Benchmarking,
    /// Special-purpose or reserved space: 192.0.0.0/24, 240.0.0.0/4,
    /// 2001::/23, 100::/64, fec0::/10, 64:ff9b:1::/48.
    Reserved,
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::CloudMetadata => "a cloud metadata service",
            Self::Loopback => "loopback",
            Self::Private => "a private network",
            Self::LinkLocal => "link-local",
            Self::UniqueLocal => "unique-local",
            Self::SharedCgnat => "shared (CGNAT) address space",
            Self::Unspecified => "unspecified",
            Self::Multicast => "multicast",
            Self::Broadcast => "broadcast",
            Self::Documentation => "a documentation range",
            Self::Benchmarking => "a benchmarking range",
            Self::Reserved => "reserved address space",
        })
    }
}

/// The addresses of the known cloud metadata services.
const METADATA: [IpAddr; 4] = [
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    IpAddr::V4(Ipv4Addr::new(192, 0, 0, 192)),
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
];

/// The operator's exceptions: ranges a connection may reach although they
/// are blocked, such as `127.0.0.0/8` for a service on this machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    open: Vec<IpNet>,
}

impl AddressPolicy {
    /// A policy opening `ranges`.
    pub fn opening(ranges: Vec<IpNet>) -> Self {
        Self { open: ranges }
    }

    /// The ranges opened.
    pub fn opened(&self) -> &[IpNet] {
        &self.open
    }

    /// Why `ip` may not be reached, or `None` when it may: a public address,
    /// or one in a range the operator opened.
    pub fn refusal(&self, ip: IpAddr) -> Option<Blocked> {
        let forms = forms(ip);
        if forms
            .iter()
            .any(|form| self.open.iter().any(|range| range.contains(form)))
        {
            return None;
        }
        forms.into_iter().find_map(classify)
    }
}

/// `ip`, and the IPv4 address it carries when it carries one.
fn forms(ip: IpAddr) -> Vec<IpAddr> {
    let mut forms = vec![ip];
    if let IpAddr::V6(v6) = ip
        && let Some(v4) = embedded_v4(v6)
    {
        forms.push(IpAddr::V4(v4));
    }
    forms
}

/// The IPv4 address an IPv6 one carries: IPv4-mapped `::ffff:a.b.c.d`,
/// IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(low),
        [0, 0, 0, 0, 0, 0, _, _] if !ip.is_unspecified() && !ip.is_loopback() => Some(low),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(low),
        [0x2002, high, low_word, ..] => Some(Ipv4Addr::new(
            (high >> 8) as u8,
            high as u8,
            (low_word >> 8) as u8,
            low_word as u8,
        )),
        _ => None,
    }
}

/// The class of `ip` that blocks it, if any.
fn classify(ip: IpAddr) -> Option<Blocked> {
    if METADATA.contains(&ip) {
        return Some(Blocked::CloudMetadata);
    }
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<Blocked> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, ..) => Blocked::Unspecified,
        (127, ..) => Blocked::Loopback,
        (10, ..) => Blocked::Private,
        (172, 16..=31, _) => Blocked::Private,
        (192, 168, _) => Blocked::Private,
        (169, 254, _) => Blocked::LinkLocal,
        (100, 64..=127, _) => Blocked::SharedCgnat,
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => Blocked::Documentation,
        (198, 18..=19, _) => Blocked::Benchmarking,
        (192, 0, 0) | (192, 88, 99) => Blocked::Reserved,
        (224..=239, ..) => Blocked::Multicast,
        _ if ip.is_broadcast() => Blocked::Broadcast,
        (240..=255, ..) => Blocked::Reserved,
        _ => return None,
    })
}

fn classify_v6(ip: Ipv6Addr) -> Option<Blocked> {
    let s = ip.segments();
    Some(match s {
        _ if ip.is_unspecified() => Blocked::Unspecified,
        _ if ip.is_loopback() => Blocked::Loopback,
        [first, ..] if first & 0xffc0 == 0xfe80 => Blocked::LinkLocal,
        [first, ..] if first & 0xffc0 == 0xfec0 => Blocked::Reserved,
        [first, ..] if first & 0xfe00 == 0xfc00 => Blocked::UniqueLocal,
        [first, ..] if first & 0xff00 == 0xff00 => Blocked::Multicast,
        [0x2001, 0xdb8, ..] => Blocked::Documentation,
        [first, ..] if first & 0xfff0 == 0x3ff0 => Blocked::Documentation,
        [0x2001, second, ..] if second < 0x200 => Blocked::Reserved,
        [0x100, 0, 0, 0, ..] => Blocked::Reserved,
        [0x64, 0xff9b, 1, ..] => Blocked::Reserved,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> Option<Blocked> {
        AddressPolicy::default().refusal(text.parse().unwrap())
    }

    #[test]
    fn every_range_that_is_not_public_is_refused() {
        for (address, class) in [
            ("169.254.169.254", Blocked::CloudMetadata),
            ("100.100.100.200", Blocked::CloudMetadata),
            ("192.0.0.192", Blocked::CloudMetadata),
            ("fd00:ec2::254", Blocked::CloudMetadata),
            ("127.0.0.1", Blocked::Loopback),
            ("127.255.0.9", Blocked::Loopback),
            ("::1", Blocked::Loopback),
            ("10.0.0.1", Blocked::Private),
            ("172.16.0.1", Blocked::Private),
            ("172.31.255.255", Blocked::Private),
            ("192.168.1.1", Blocked::Private),
            ("169.254.1.1", Blocked::LinkLocal),
            ("fe80::1", Blocked::LinkLocal),
            ("fc00::1", Blocked::UniqueLocal),
            ("fd12:3456::1", Blocked::UniqueLocal),
            ("100.64.0.1", Blocked::SharedCgnat),
            ("100.127.255.254", Blocked::SharedCgnat),
            ("0.0.0.0", Blocked::Unspecified),
            ("0.1.2.3", Blocked::Unspecified),
            ("::", Blocked::Unspecified),
            ("224.0.0.1", Blocked::Multicast),
            ("ff02::1", Blocked::Multicast),
            ("255.255.255.255", Blocked::Broadcast),
            ("192.0.2.1", Blocked::Documentation),
            ("198.51.100.1", Blocked::Documentation),
            ("203.0.113.1", Blocked::Documentation),
            ("2001:db8::1", Blocked::Documentation),
            ("3fff::1", Blocked::Documentation),
            ("198.18.0.1", Blocked::Benchmarking),
            ("192.0.0.1", Blocked::Reserved),
            ("240.0.0.1", Blocked::Reserved),
            ("2001::1", Blocked::Reserved),
            ("100::1", Blocked::Reserved),
            ("fec0::1", Blocked::Reserved),
            ("64:ff9b:1::1", Blocked::Reserved),
        ] {
            assert_eq!(refused(address), Some(class), "{address}");
        }
    }

    #[test]
    fn an_ipv4_address_inside_an_ipv6_one_is_judged_as_itself() {
        for (address, class) in [
            ("::ffff:127.0.0.1", Blocked::Loopback),
            ("::ffff:169.254.169.254", Blocked::CloudMetadata),
            ("::7f00:1", Blocked::Loopback),
            ("::10.0.0.1", Blocked::Private),
            ("64:ff9b::a00:1", Blocked::Private),
            ("64:ff9b::a9fe:a9fe", Blocked::CloudMetadata),
            ("2002:7f00:1::", Blocked::Loopback),
            ("2002:a9fe:a9fe::1", Blocked::CloudMetadata),
        ] {
            assert_eq!(refused(address), Some(class), "{address}");
        }
        assert_eq!(
            refused("64:ff9b::808:808"),
            None,
            "NAT64 of a public address"
        );
        assert_eq!(refused("::ffff:8.8.8.8"), None);
    }

    #[test]
    fn public_addresses_pass() {
        for address in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "198.20.0.1",
            "2606:4700::1111",
            "2a00:1450::1",
        ] {
            assert_eq!(refused(address), None, "{address}");
        }
    }

    #[test]
    fn a_range_the_operator_opens_passes_in_every_spelling() {
        let policy = AddressPolicy::opening(vec!["127.0.0.0/8".parse().unwrap()]);
        assert_eq!(policy.refusal("127.0.0.1".parse().unwrap()), None);
        assert_eq!(policy.refusal("::ffff:127.0.0.1".parse().unwrap()), None);
        assert_eq!(
            policy.refusal("10.0.0.1".parse().unwrap()),
            Some(Blocked::Private)
        );
        assert_eq!(
            policy.refusal("169.254.169.254".parse().unwrap()),
            Some(Blocked::CloudMetadata)
        );
        assert_eq!(
            policy.refusal("::1".parse().unwrap()),
            Some(Blocked::Loopback),
            "IPv6 loopback is another range"
        );
    }
}
