//! The SSRF guard of the push sender: which webhook targets an agent may call.
//!
//! A webhook URL comes from a client, so without a guard any client could make the agent POST
//! to its own loopback services, the cloud metadata endpoint or the intranet. Two layers:
//! - [`check_url`] (when a config is created, and again when a notification is queued): http(s)
//!   only, no `localhost` names, no non-public IP literals;
//! - [`GuardedResolver`] (the sender's DNS resolver): a name is resolved once, every address is
//!   checked, and the connection goes to exactly those checked addresses, so a name that resolves
//!   to a public address when checked and to 127.0.0.1 when connected (DNS rebinding) gets nowhere.

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::error::Error as StdError;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Parses `url` and refuses what may never be a webhook target. With `allow_private`, only the
/// parse and scheme checks apply. Returns the reason of a refusal.
pub(crate) fn check_url(url: &str, allow_private: bool) -> Result<Url, String> {
    let parsed = Url::parse(url).map_err(|e| format!("not a valid URL ({e})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("scheme '{}' is not allowed; use http or https", parsed.scheme()));
    }
    let host = parsed.host_str().filter(|h| !h.is_empty()).ok_or_else(|| "the URL has no host".to_owned())?;
    if !allow_private {
        // The url crate has already turned every IPv4 spelling (2130706433, 0x7f.1, …) into a
        // dotted quad and bracketed IPv6, so what parses as neither is a real name.
        let literal = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            Some(v6) => v6.parse::<Ipv6Addr>().ok().map(IpAddr::V6),
            None => host.parse::<Ipv4Addr>().ok().map(IpAddr::V4),
        };
        let refusal = match literal {
            Some(ip) => non_public(ip).map(|why| format!("{ip} is {why}")),
            None => is_localhost(host).then(|| format!("{host} is a localhost name")),
        };
        if let Some(reason) = refusal {
            return Err(format!("{reason}; push notifications go to public addresses only"));
        }
    }
    Ok(parsed)
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

/// Checks the addresses `host` resolved to: all must be public, or the name is refused.
pub(crate) fn check_resolved(host: &str, addrs: &[SocketAddr]) -> Result<(), Refused> {
    if let Some((ip, why)) = addrs.iter().find_map(|a| non_public(a.ip()).map(|why| (a.ip(), why))) {
        return Err(Refused { host: host.to_owned(), reason: format!("resolves to {ip}, which is {why}") });
    }
    Ok(())
}

/// The sender's DNS resolver when private targets are not allowed: resolves with the system
/// resolver, refuses the name if any address is non-public, and hands reqwest only the checked
/// addresses to connect to. IP literals never reach a resolver; [`check_url`] covers them.
#[derive(Clone, Default)]
pub(crate) struct GuardedResolver {
    /// Fixed answers instead of the system resolver (tests: a name resolving to loopback).
    #[cfg(test)]
    pub hosts: std::sync::Arc<std::collections::HashMap<String, Vec<IpAddr>>>,
    #[cfg(test)]
    pub lookups: std::sync::Arc<std::sync::atomic::AtomicUsize>,
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
            if is_localhost(&host) {
                let refused = Refused { host, reason: "a localhost name".to_owned() };
                return Err(Box::new(refused) as Box<dyn StdError + Send + Sync>);
            }
            let addrs = this.lookup(&host).await?;
            if addrs.is_empty() {
                return Err(format!("{host} resolved to no address").into());
            }
            check_resolved(&host, &addrs)?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}
