//! The SSRF guard of the push sender: which webhook targets an agent may call.
//!
//! A webhook URL comes from a client, so without a guard any client could make the agent POST
//! to its own loopback services, the cloud metadata endpoint or the intranet. Two layers:
//! - [`check_url`] (when a config is created, and again when a notification is queued): http(s)
//!   only, no `localhost` names, no non-public IP literals;
//! - [`GuardedResolver`] (the sender's DNS resolver): a name is resolved once, every address is
//!   checked, and the connection goes to exactly those checked addresses, so a name that resolves
//!   to a public address when checked and to 127.0.0.1 when connected (DNS rebinding) gets nowhere.
//!
//! [`PrivateTargets`] relaxes both layers for an operator who needs private targets (intranets,
//! tests): all of them, or only an allow-list. A listed name is matched by name, so what it
//! resolves to is not checked (the operator vouches for it); a listed address or CIDR range is
//! matched against the literal or the resolved address, so a name resolving into the range is
//! allowed and one resolving anywhere else private still is not.

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use std::error::Error as StdError;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// Which non-public webhook targets are allowed anyway. In JSON (`allowPrivateWebhooks`):
/// `false` (the default), `true`, or a list such as `["127.0.0.1", "10.0.0.0/8", "::1",
/// "hooks.internal"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum PrivateTargets {
    /// Public addresses only.
    #[default]
    Blocked,
    /// Every target (tests, intranets): only the URL's scheme is checked.
    All,
    /// Public addresses, plus these.
    Only(Vec<AllowedTarget>),
}

/// One entry of an allow-list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowedTarget {
    /// A host name (lowercase, no trailing dot), matched by name: what it resolves to is not
    /// checked.
    Name(String),
    /// An address range (a lone address is a /32 or /128), matched against the URL's literal
    /// or the addresses a name resolves to.
    Net(IpAddr, u8),
}

impl AllowedTarget {
    /// `10.0.0.0/8`, `fd00::/8`, `127.0.0.1`, `::1` (or `[::1]`), `hooks.internal`. Names and
    /// IPv4 are read as in a URL (so `0177.1` is 127.0.0.1 here too); an IPv4-mapped IPv6
    /// address stands for its IPv4 address.
    pub fn parse(entry: &str) -> Result<Self, String> {
        let bad = |why: &str| format!("{entry:?} {why}; expected a host name, an IP address or a CIDR range");
        if let Some((addr, bits)) = entry.split_once('/') {
            let ip = addr.parse::<IpAddr>().map_err(|_| bad("is not an address/prefix"))?;
            let max = if ip.is_ipv4() { 32 } else { 128 };
            let bits =
                bits.parse::<u8>().ok().filter(|b| *b <= max).ok_or_else(|| bad("has an invalid prefix length"))?;
            // An IPv4-mapped range (::ffff:10.0.0.0/104) is the IPv4 range it maps (10.0.0.0/8).
            return match ip {
                IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                    Some(v4) if bits >= 96 => Ok(AllowedTarget::Net(IpAddr::V4(v4), bits - 96)),
                    Some(_) => Err(bad("is an IPv4-mapped range wider than IPv4 (the prefix must be 96 or more)")),
                    None => Ok(AllowedTarget::Net(ip, bits)),
                },
                IpAddr::V4(_) => Ok(AllowedTarget::Net(ip, bits)),
            };
        }
        if let Ok(ip) = entry.trim_start_matches('[').trim_end_matches(']').parse::<Ipv6Addr>() {
            return Ok(AllowedTarget::net(IpAddr::V6(ip)));
        }
        if entry.contains('*') {
            return Err(bad("has a wildcard (not supported: list each name)"));
        }
        if entry.contains(':') {
            // Not IPv6 (read above): a port, which the URL parser would drop when it is 80.
            return Err(bad("has a port"));
        }
        // Anything else is read as the host of a URL, exactly as webhook URLs are.
        let url = Url::parse(&format!("http://{entry}/")).map_err(|_| bad("is not a valid host"))?;
        let host = url
            .host_str()
            .filter(|h| url.as_str() == format!("http://{h}/"))
            .ok_or_else(|| bad("is not a bare host"))?;
        Ok(match host.parse::<Ipv4Addr>() {
            Ok(v4) => AllowedTarget::net(IpAddr::V4(v4)),
            Err(_) => AllowedTarget::Name(host.trim_end_matches('.').to_owned()),
        })
    }

    fn net(ip: IpAddr) -> Self {
        let ip = ip.to_canonical();
        AllowedTarget::Net(ip, if ip.is_ipv4() { 32 } else { 128 })
    }

    fn contains(&self, ip: IpAddr) -> bool {
        let AllowedTarget::Net(net, bits) = self else { return false };
        match (net, ip.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                prefix_eq(u128::from(net.to_bits()) << 96, u128::from(ip.to_bits()) << 96, *bits)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => prefix_eq(net.to_bits(), ip.to_bits(), *bits),
            _ => false,
        }
    }
}

/// Whether the first `bits` bits (from the top) of `a` and `b` agree.
fn prefix_eq(a: u128, b: u128, bits: u8) -> bool {
    bits == 0 || (a ^ b) >> (128 - u32::from(bits)) == 0
}

impl PrivateTargets {
    /// Whether `host` (a name) is listed by name; `All` allows every name.
    fn allows_name(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.');
        match self {
            PrivateTargets::Blocked => false,
            PrivateTargets::All => true,
            PrivateTargets::Only(list) => {
                list.iter().any(|t| matches!(t, AllowedTarget::Name(n) if n.eq_ignore_ascii_case(host)))
            }
        }
    }

    /// Whether the non-public `ip` is allowed.
    fn allows_ip(&self, ip: IpAddr) -> bool {
        match self {
            PrivateTargets::Blocked => false,
            PrivateTargets::All => true,
            PrivateTargets::Only(list) => list.iter().any(|t| t.contains(ip)),
        }
    }
}

impl<'de> Deserialize<'de> for PrivateTargets {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PrivateTargets;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("true, false, or a list of host names, IP addresses and CIDR ranges")
            }
            fn visit_bool<E: de::Error>(self, all: bool) -> Result<PrivateTargets, E> {
                Ok(if all { PrivateTargets::All } else { PrivateTargets::Blocked })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PrivateTargets, A::Error> {
                let mut list = Vec::new();
                while let Some(entry) = seq.next_element::<String>()? {
                    list.push(AllowedTarget::parse(&entry).map_err(de::Error::custom)?);
                }
                Ok(if list.is_empty() { PrivateTargets::Blocked } else { PrivateTargets::Only(list) })
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses `url` and refuses what may never be a webhook target: anything but http(s), and
/// non-public IP literals and `localhost` names unless `allowed`. Returns the reason of a
/// refusal. Other names pass here; the resolver checks what they resolve to.
pub(crate) fn check_url(url: &str, allowed: &PrivateTargets) -> Result<Url, String> {
    let parsed = Url::parse(url).map_err(|e| format!("not a valid URL ({e})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("scheme '{}' is not allowed; use http or https", parsed.scheme()));
    }
    let host = parsed.host_str().filter(|h| !h.is_empty()).ok_or_else(|| "the URL has no host".to_owned())?;
    // The url crate has already turned every IPv4 spelling (2130706433, 0x7f.1, 0177.0.0.1, …)
    // into a dotted quad and bracketed IPv6, so what parses as neither is a real name.
    let literal = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => v6.parse::<Ipv6Addr>().ok().map(IpAddr::V6),
        None => host.parse::<Ipv4Addr>().ok().map(IpAddr::V4),
    };
    let refusal = match literal {
        Some(ip) => non_public(ip).filter(|_| !allowed.allows_ip(ip)).map(|why| format!("{ip} is {why}")),
        None => (is_localhost(host) && !allowed.allows_name(host)).then(|| format!("{host} is a localhost name")),
    };
    match refusal {
        Some(reason) => Err(format!("{reason}; push notifications go to public (or allowed) addresses only")),
        None => Ok(parsed),
    }
}

/// `localhost` and any `*.localhost` (RFC 6761), with or without the root dot, any case.
pub(crate) fn is_localhost(name: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost")
}

/// Why `ip` is not a public unicast address, or `None` when it is one.
pub(crate) fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        _ if ip.is_unspecified() => "unspecified",
        (0, _, _) => "in 0.0.0.0/8 (this network)",
        (127, _, _) => "loopback",
        (10, _, _) | (192, 168, _) => "private (RFC 1918)",
        (172, 16..=31, _) => "private (RFC 1918)",
        (100, 64..=127, _) => "shared address space (CGNAT, 100.64.0.0/10)",
        (169, 254, _) => "link-local",
        (192, 0, 0) => "IETF protocol assignment (192.0.0.0/24)",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        (192, 88, 99) => "6to4 relay anycast",
        (198, 18..=19, _) => "a benchmarking address (198.18.0.0/15)",
        _ if ip.is_broadcast() => "broadcast",
        (224..=239, _, _) => "multicast",
        (240..=255, _, _) => "reserved (240.0.0.0/4)",
        _ => return None,
    })
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let seg = ip.segments();
    // Forms that carry an IPv4 address are judged by that address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return non_public_v4(v4).map(|_| "an IPv4-mapped non-public address");
    }
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let v4 = Ipv4Addr::new((seg[6] >> 8) as u8, seg[6] as u8, (seg[7] >> 8) as u8, seg[7] as u8);
        return non_public_v4(v4).map(|_| "a NAT64 (64:ff9b::/96) non-public address");
    }
    if seg[0] == 0x2002 {
        let v4 = Ipv4Addr::new((seg[1] >> 8) as u8, seg[1] as u8, (seg[2] >> 8) as u8, seg[2] as u8);
        return non_public_v4(v4).map(|_| "a 6to4 (2002::/16) non-public address");
    }
    Some(match seg[0] {
        _ if ip.is_unspecified() => "unspecified",
        _ if ip.is_loopback() => "loopback",
        0xff00..=0xffff => "multicast",
        0xfe80..=0xfebf => "link-local",
        0xfec0..=0xfeff => "site-local (deprecated)",
        0xfc00..=0xfdff => "unique local (fc00::/7)",
        // Global unicast is 2000::/3; everything else (::/96 IPv4-compatible, 100::/64 discard,
        // 64:ff9b:1::/48 local NAT64, …) is reserved or special.
        s if !(0x2000..=0x3fff).contains(&s) => "not global unicast (outside 2000::/3)",
        0x2001 if seg[1] < 0x0200 => "IETF protocol assignment (2001::/23: Teredo, benchmarking, ORCHID)",
        0x2001 if seg[1] == 0x0db8 => "a documentation address",
        0x3fff if seg[1] < 0x1000 => "a documentation address",
        _ => return None,
    })
}

/// A target the guard refused; found again in a reqwest error's source chain so the sender does
/// not retry it.
#[derive(Debug)]
pub(crate) struct Refused {
    pub host: String,
    pub reason: String,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} refused: {}", self.host, self.reason)
    }
}

impl StdError for Refused {}

/// The guard's refusal anywhere in `err`'s source chain.
pub(crate) fn find_refused<'a>(err: &'a (dyn StdError + 'static)) -> Option<&'a Refused> {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(refused) = e.downcast_ref::<Refused>() {
            return Some(refused);
        }
        current = e.source();
    }
    None
}

/// Checks the addresses `host` resolved to: all must be public or allowed, or the name is
/// refused.
pub(crate) fn check_resolved(host: &str, addrs: &[SocketAddr], allowed: &PrivateTargets) -> Result<(), Refused> {
    let refused = |ip: IpAddr| non_public(ip).filter(|_| !allowed.allows_ip(ip)).map(|why| (ip, why));
    if let Some((ip, why)) = addrs.iter().find_map(|a| refused(a.ip())) {
        return Err(Refused { host: host.to_owned(), reason: format!("resolves to {ip}, which is {why}") });
    }
    Ok(())
}

/// The sender's DNS resolver unless every private target is allowed: resolves with the system
/// resolver, refuses the name if any address is non-public and not allowed, and hands reqwest
/// only the checked addresses to connect to. A name on the allow-list is resolved unchecked. IP
/// literals never reach a resolver; [`check_url`] covers them.
#[derive(Clone, Default)]
pub(crate) struct GuardedResolver {
    pub allowed: Arc<PrivateTargets>,
    /// Fixed answers instead of the system resolver (tests: a name resolving to loopback).
    #[cfg(test)]
    pub hosts: Arc<std::collections::HashMap<String, Vec<IpAddr>>>,
    #[cfg(test)]
    pub lookups: Arc<std::sync::atomic::AtomicUsize>,
}

impl GuardedResolver {
    async fn lookup(&self, host: &str) -> std::io::Result<Vec<SocketAddr>> {
        #[cfg(test)]
        {
            self.lookups.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if let Some(ips) = self.hosts.get(host) {
                return Ok(ips.iter().map(|ip| SocketAddr::new(*ip, 0)).collect());
            }
        }
        // Port 0: reqwest puts in the URL's port (or the scheme's default).
        Ok(tokio::net::lookup_host((host, 0)).await?.collect())
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let this = self.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let listed = this.allowed.allows_name(&host);
            if is_localhost(&host) && !listed {
                let refused = Refused { host, reason: "a localhost name".to_owned() };
                return Err(Box::new(refused) as Box<dyn StdError + Send + Sync>);
            }
            let addrs = this.lookup(&host).await?;
            if addrs.is_empty() {
                return Err(format!("{host} resolved to no address").into());
            }
            if !listed {
                check_resolved(&host, &addrs, &this.allowed)?;
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::HashMap;

    pub(crate) fn allow_list(entries: &[&str]) -> PrivateTargets {
        serde_json::from_value(serde_json::json!(entries)).unwrap()
    }

    #[test]
    fn the_url_parser_turns_ipv4_spellings_into_dotted_quads() {
        // What check_url relies on: whatever the spelling, the host it sees is the address.
        for (url, host) in [
            ("http://0177.0.0.1/", "127.0.0.1"),
            ("http://0177.0.0.01/", "127.0.0.1"),
            ("http://017700000001/", "127.0.0.1"),
            ("http://0x7f.1/", "127.0.0.1"),
            ("http://127.1/", "127.0.0.1"),
            ("http://0177.0x0.1/", "127.0.0.1"),
            ("http://127.0.0.1./", "127.0.0.1"),
            ("http://0300.0250.1.1/", "192.168.1.1"),
            ("http://0xa9fea9fe/", "169.254.169.254"),
            ("http://\u{2460}\u{2461}\u{2466}.0.0.1/", "127.0.0.1"),
        ] {
            assert_eq!(Url::parse(url).unwrap().host_str(), Some(host), "{url}");
        }
        // Not numbers after all: no URL at all.
        for url in ["http://08.0.0.1/", "http://[::ffff:0177.0.0.1]/", "http://0x7g.1/"] {
            assert!(Url::parse(url).is_err(), "{url}");
        }
    }

    #[test]
    fn the_allow_list_is_read_from_json() {
        use super::AllowedTarget as T;
        let read = |v: serde_json::Value| serde_json::from_value::<PrivateTargets>(v).map_err(|e| e.to_string());
        assert_eq!(read(serde_json::json!(true)), Ok(PrivateTargets::All));
        assert_eq!(read(serde_json::json!(false)), Ok(PrivateTargets::Blocked));
        assert_eq!(read(serde_json::json!([])), Ok(PrivateTargets::Blocked));
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let entries = [
            "127.0.0.1",
            "10.0.0.0/8",
            "::1",
            "[fd00::]",
            "fd00::/8",
            "Hooks.Internal.",
            "0177.1",
            "::ffff:10.0.0.1",
            "::ffff:172.16.0.0/108",
        ];
        assert_eq!(
            allow_list(&entries),
            PrivateTargets::Only(vec![
                T::Net(ip("127.0.0.1"), 32),
                T::Net(ip("10.0.0.0"), 8),
                T::Net(ip("::1"), 128),
                T::Net(ip("fd00::"), 128),
                T::Net(ip("fd00::"), 8),
                T::Name("hooks.internal".into()),
                T::Net(ip("127.0.0.1"), 32),
                T::Net(ip("10.0.0.1"), 32),
                T::Net(ip("172.16.0.0"), 12),
            ])
        );
        for bad in [
            "10.0.0.0/33",
            "::1/129",
            "::ffff:10.0.0.0/8",
            "10.0.0.0/x",
            "010.0.0.0/8",
            "a/8",
            "",
            "http://x",
            "host:80",
            "u@host",
            "a b",
            "*.internal",
            "h/path",
        ] {
            assert!(read(serde_json::json!([bad])).is_err(), "{bad:?} was accepted");
        }
        for bad in [serde_json::json!("127.0.0.1"), serde_json::json!(1), serde_json::json!([1]), serde_json::json!({})]
        {
            let e = read(bad.clone()).unwrap_err();
            assert!(e.contains("true, false, or a list") || e.contains("expected a string"), "{bad}: {e}");
        }
    }

    #[tokio::test]
    async fn the_resolver_applies_the_allow_list() {
        use reqwest::dns::Resolve;
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let hosts = HashMap::from([
            ("hooks.internal".to_owned(), vec![ip("192.168.7.7")]),
            ("inside.test".to_owned(), vec![ip("10.9.8.7"), ip("8.8.8.8")]),
            ("loop.test".to_owned(), vec![ip("127.0.0.1")]),
            ("mapped.test".to_owned(), vec![ip("::ffff:10.0.0.5")]),
            ("neighbour.test".to_owned(), vec![ip("127.0.0.2")]),
            ("outside.test".to_owned(), vec![ip("192.168.1.1")]),
            ("mixed.test".to_owned(), vec![ip("10.0.0.1"), ip("192.168.1.1")]),
            ("meta.test".to_owned(), vec![ip("169.254.169.254")]),
            ("v6.test".to_owned(), vec![ip("fd00::1")]),
        ]);
        let resolver = GuardedResolver {
            allowed: Arc::new(allow_list(&["127.0.0.1", "10.0.0.0/8", "::1", "hooks.internal"])),
            hosts: Arc::new(hosts),
            ..Default::default()
        };
        // Allowed by name (resolved, not checked), by a range, by the exact address; the
        // addresses handed back are the ones checked.
        for (name, first) in [
            ("hooks.internal", "192.168.7.7"),
            ("inside.test", "10.9.8.7"),
            ("loop.test", "127.0.0.1"),
            ("mapped.test", "::ffff:10.0.0.5"),
        ] {
            let addrs: Vec<_> =
                resolver.resolve(name.parse().unwrap()).await.unwrap_or_else(|e| panic!("{name}: {e}")).collect();
            assert_eq!(addrs[0].ip(), ip(first), "{name}");
        }
        for name in ["neighbour.test", "outside.test", "mixed.test", "meta.test", "v6.test", "localhost"] {
            let error =
                resolver.resolve(name.parse().unwrap()).await.err().unwrap_or_else(|| panic!("{name} resolved"));
            assert!(find_refused(error.as_ref()).is_some(), "{name}: {error}");
        }
    }

    #[test]
    fn classifies_addresses() {
        for ip in [
            "0.1.2.3",
            "127.0.0.53",
            "10.255.0.1",
            "172.31.255.255",
            "192.168.0.1",
            "100.127.255.254",
            "169.254.0.1",
            "192.0.0.8",
            "198.51.100.1",
            "203.0.113.9",
            "198.19.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "::",
            "::1",
            "::ffff:192.168.1.1",
            "::127.0.0.1",
            "64:ff9b::a00:1",
            "2002:7f00:1::1",
            "2001::1",
            "2001:db8::1",
            "3fff::1",
            "fc00::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "100::1",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert!(non_public(ip).is_some(), "{ip} should be refused");
        }
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "2606:4700::1111",
            "2a00:1450::1",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(non_public(ip), None, "{ip} should be allowed");
        }
    }

    #[tokio::test]
    async fn resolver_checks_every_address() {
        use reqwest::dns::Resolve;
        let public: IpAddr = "8.8.8.8".parse().unwrap();
        let resolver = GuardedResolver {
            hosts: Arc::new(HashMap::from([
                ("public.test".to_owned(), vec![public]),
                ("mixed.test".to_owned(), vec![public, "10.0.0.7".parse().unwrap()]),
            ])),
            ..Default::default()
        };
        let addrs: Vec<_> = resolver.resolve("public.test".parse().unwrap()).await.unwrap().collect();
        assert_eq!(addrs, vec![std::net::SocketAddr::new(public, 0)]);
        for name in ["mixed.test", "localhost", "localhost.", "x.LOCALHOST"] {
            let error =
                resolver.resolve(name.parse().unwrap()).await.err().unwrap_or_else(|| panic!("{name} resolved"));
            assert!(find_refused(error.as_ref()).is_some(), "{name}: {error}");
        }
        // What the system resolver says of localhost is refused too.
        let system: Vec<_> = tokio::net::lookup_host(("localhost", 0)).await.unwrap().collect();
        assert!(check_resolved("localhost", &system, &PrivateTargets::Blocked).is_err());
    }

    #[test]
    fn check_url_refuses_non_public_targets() {
        let allowed = PrivateTargets::default();
        for url in [
            "http://127.0.0.1",
            "http://127.0.0.1:8080/hook",
            "http://localhost",
            "http://LOCALHOST./x",
            "http://api.localhost",
            "http://10.0.0.1",
            "http://172.16.5.4",
            "http://192.168.1.1",
            "http://[::1]",
            "http://[::ffff:127.0.0.1]",
            "http://[::ffff:10.1.2.3]",
            "http://[fe80::1]",
            "http://[fd00::1]",
            "http://169.254.169.254/latest/meta-data",
            "http://100.64.0.1",
            "http://0.0.0.0",
            "http://2130706433",
            "http://0x7f.1",
            // Octal, hex, short and mixed IPv4 spellings (WHATWG makes each a dotted quad).
            "http://0177.0.0.1/",
            "http://0177.0.0.01/",
            "http://017700000001/",
            "http://0x7f.1/",
            "http://127.1/",
            "http://0x7f.0.0.1/",
            "http://0177.0x0.1/",
            "http://0x7F000001/",
            "http://00000177.0.0.1/",
            "http://127.0.0.1./",
            "http://012.0.0.1/",
            "http://0300.0250.1.1/",
            "http://0251.0376.0251.0376/",
            "http://0xa9fea9fe/",
            "http://2852039166/",
            "http://\u{2460}\u{2461}\u{2466}.0.0.1/",
            "http://[::ffff:7f00:1]/",
            "http://[0:0:0:0:0:ffff:127.0.0.1]/",
            "http://[::ffff:0177.0.0.1]/",
            "http://08.0.0.1/",
            "http://224.0.0.1",
            "http://255.255.255.255",
            "https://192.0.2.10",
            "https://[2001:db8::1]",
            "ftp://x",
            "file:///etc/passwd",
            "not a url",
            "",
        ] {
            check_url(url, &allowed).expect_err(url);
        }
        for url in
            ["https://example.com", "http://example.com:8080/hook?x=1", "http://8.8.8.8", "https://[2606:4700::1111]/"]
        {
            check_url(url, &allowed).unwrap_or_else(|e| panic!("{url}: {e}"));
        }
    }

    #[test]
    fn check_url_allows_private_targets_when_configured() {
        let allowed = PrivateTargets::All;
        for url in ["http://127.0.0.1:9000/hook", "http://localhost", "http://[::1]", "http://10.0.0.1"] {
            check_url(url, &allowed).unwrap_or_else(|e| panic!("{url}: {e}"));
        }
        for url in ["ftp://x", "not a url"] {
            assert!(check_url(url, &allowed).is_err(), "{url}");
        }
    }

    #[test]
    fn check_url_with_an_allow_list() {
        let allowed = allow_list(&["127.0.0.1", "10.0.0.0/8", "::1", "hooks.internal"]);
        for url in [
            "http://127.0.0.1:9000/hook",
            "http://0177.0.0.1/",
            "http://017700000001/",
            "http://[::ffff:127.0.0.1]/",
            "http://10.20.30.40/",
            "http://012.1.2.3/",
            "http://10.255.255.255/",
            "http://[::1]:8080/",
            "http://hooks.internal/x",
            "http://HOOKS.internal./x",
            "https://example.com",
            "http://8.8.8.8",
        ] {
            check_url(url, &allowed).unwrap_or_else(|e| panic!("{url}: {e}"));
        }
        for url in [
            "http://127.0.0.2/",
            "http://127.1.0.1/",
            "http://0.0.0.0/",
            "http://192.168.0.1/",
            "http://172.16.0.1/",
            "http://169.254.169.254/",
            "http://100.64.0.1/",
            "http://[::2]/",
            "http://[fd00::1]/",
            "http://[::ffff:192.168.0.1]/",
            "http://localhost/",
            "http://hooks.localhost/",
            "ftp://127.0.0.1/",
        ] {
            assert!(check_url(url, &allowed).is_err(), "{url} was allowed");
        }
    }
}
