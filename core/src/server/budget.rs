//! The server-wide budgets of bodies in flight (`Limits::max_body_bytes_in_flight`): one for
//! request bodies while they are read, and one of the same size for answers (buffered ones, and
//! each event of a stream) until they are sent (`ResponseBody::hold`), since an answer a client
//! never reads would otherwise stay in memory for as long as the connection lives.
//!
//! One request is bounded by `max_body_bytes`, but nothing bounded how many arrive at once,
//! and a body grows when it is parsed: 8 MiB of `[0,0,…]` is about 190 MB of `serde_json`
//! values. So a body holds its size of a budget from the moment it arrives (counted as its bytes
//! do) until its request is answered (a stream: opened). Bodies up to [`SMALL_BYTES`] share a
//! budget of their own, of the same size, so large bodies cannot starve ordinary requests, and
//! many small ones cannot add up unbounded either. When a budget is spent the request is refused
//! at once with 503 and `Retry-After`, never queued: waiting bodies would hold their partial
//! share and could starve each other until their read timeouts.
//!
//! One client (one address) may hold at most half of the small bodies' budget: a single client opening
//! thousands of requests and never finishing their bodies (a few bytes each; a small body counts
//! at least 1 KiB) spent the whole small-bodies budget with about 2 MB of traffic, and every
//! other client's requests were refused until its bodies timed out.

use crate::error::{A2AError, ErrorKind};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Bodies up to this size count against the small bodies' budget, larger ones against the
/// large bodies' (a body moves over as it grows past it).
pub const SMALL_BYTES: usize = 64 * 1024;

/// Budgets are kept in KiB so any size fits tokio's `u32` permit counts.
const UNIT: usize = 1024;

/// What bodies in flight may hold at once, server-wide: large and small ones apart.
#[derive(Debug, Clone)]
pub(crate) struct BodyBudget {
    large: Arc<Semaphore>,
    small: Arc<Semaphore>,
    bytes: usize,
    /// Units of the small bodies' budget each client holds now.
    clients: Arc<Mutex<HashMap<IpAddr, usize>>>,
    /// The most one client may hold of it: half.
    per_client: usize,
}

/// A share of a budget, given back when dropped.
#[derive(Debug, Default)]
pub(crate) struct BodyShare {
    permit: Option<OwnedSemaphorePermit>,
    units: usize,
    large: bool,
    client: Option<ClientHold>,
}

/// What a share counts against its client, given back when dropped.
#[derive(Debug)]
struct ClientHold {
    clients: Arc<Mutex<HashMap<IpAddr, usize>>>,
    ip: IpAddr,
    units: usize,
}

impl Drop for ClientHold {
    fn drop(&mut self) {
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(held) = clients.get_mut(&self.ip) {
            *held = held.saturating_sub(self.units);
            if *held == 0 {
                clients.remove(&self.ip);
            }
        }
    }
}

/// The client a connection's peer address stands for in the per-client share: an IPv6 address
/// by its /64 (one host's usual allocation: counting each address apart, one host would be
/// 2^64 clients), an IPv4-mapped one as the IPv4 address it maps. Behind a proxy every caller
/// is the proxy's address: the share is then the proxied callers' together.
pub(crate) fn client_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(std::net::Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
        },
        v4 => v4,
    }
}

impl BodyBudget {
    /// Each budget `bytes`, rounded up to whole units as each body's need is: a body of exactly
    /// `bytes` fits.
    pub fn new(bytes: usize) -> Self {
        let units = bytes.div_ceil(UNIT).min(Semaphore::MAX_PERMITS);
        Self {
            large: Arc::new(Semaphore::new(units)),
            small: Arc::new(Semaphore::new(units)),
            bytes,
            clients: Arc::default(),
            per_client: units.div_ceil(2),
        }
    }

    /// [`BodyBudget::cover`] for a request body from `client`, who may hold at most half of the
    /// small bodies' budget however many requests it has open.
    pub fn cover_for(&self, client: Option<IpAddr>, share: &mut BodyShare, len: usize) -> Result<(), A2AError> {
        // Large bodies cost their sender what they hold (64 KiB and more each): only the small
        // ones are shared out, and a body that grows large leaves its client's count.
        let Some(ip) = client.filter(|_| len <= SMALL_BYTES && !share.large) else {
            share.client = None;
            return self.cover(share, len);
        };
        let units = len.div_ceil(UNIT);
        let mine = share.client.as_ref().map_or(0, |h| h.units);
        let more = units.saturating_sub(mine);
        if more > 0 {
            let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
            let held = clients.entry(ip).or_default();
            // A client's one body always fits (as on an idle server); with others, half a budget.
            if *held > mine && *held + more > self.per_client {
                drop(clients);
                return Err(self.client_spent());
            }
            *held += more;
            drop(clients);
            let hold = share.client.get_or_insert_with(|| ClientHold { clients: self.clients.clone(), ip, units: 0 });
            hold.units += more;
        }
        let covered = self.cover(share, len);
        if covered.is_err()
            && let Some(hold) = share.client.as_mut()
        {
            // Not taken after all: the client's count goes back to what the share holds.
            let back = hold.units.saturating_sub(share.units);
            let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(held) = clients.get_mut(&ip) {
                *held = held.saturating_sub(back);
            }
            hold.units -= back;
        }
        covered
    }

    fn client_spent(&self) -> A2AError {
        A2AError::new(
            ErrorKind::Unavailable,
            format!(
                "this client is sending as many request bodies at once as one client may (half of {} bytes, \
                 limits.maxBodyBytesInFlight); finish or cancel some, then try again",
                self.bytes
            ),
        )
        .with_meta("maxBodyBytesInFlight", self.bytes.to_string())
    }

    /// The budget `limits` ask for, never less than one largest body (with gRPC's 5-byte frame
    /// prefix), so every body the server accepts can be served on an idle server.
    pub fn for_limits(limits: &crate::task::config::Limits) -> Self {
        let largest = limits.max_body_bytes.saturating_add(crate::grpc::frame::PREFIX);
        Self::new(limits.max_body_bytes_in_flight.max(largest))
    }

    /// Makes `share` cover a body of `len` bytes so far; Unavailable when its budget cannot
    /// cover it now.
    pub fn cover(&self, share: &mut BodyShare, len: usize) -> Result<(), A2AError> {
        let units = len.div_ceil(UNIT);
        let large = len > SMALL_BYTES;
        if large && !share.large {
            // Grown past the small ones: all of it moves to the large bodies' budget (the
            // small share goes back when replaced).
            let taken = self.take(&self.large, units, true)?;
            let client = share.client.take();
            *share = BodyShare { permit: Some(taken), units, large: true, client };
            return Ok(());
        }
        let more = units.saturating_sub(share.units);
        if more == 0 {
            return Ok(());
        }
        let pool = if large { &self.large } else { &self.small };
        let taken = self.take(pool, more, large)?;
        match &mut share.permit {
            Some(permit) => permit.merge(taken),
            None => share.permit = Some(taken),
        }
        share.units = units;
        Ok(())
    }

    /// Makes `share` cover an answer of `len` bytes waiting to be sent. An answer may be larger
    /// than any request (a task's history and artifacts): one larger than the whole budget takes
    /// all of it, so an idle server still sends it.
    pub fn cover_answer(&self, share: &mut BodyShare, len: usize) -> Result<(), A2AError> {
        self.cover(share, len.min(self.bytes))
    }

    /// Why an answer (or a stream's event) cannot be sent now: the answers' budget is spent.
    pub fn answers_spent(&self) -> A2AError {
        A2AError::new(
            ErrorKind::Unavailable,
            format!(
                "the server holds as many answers not yet sent as it may at once ({} bytes, \
                 limits.maxBodyBytesInFlight); try again shortly",
                self.bytes
            ),
        )
        .with_meta("maxBodyBytesInFlight", self.bytes.to_string())
    }

    fn take(&self, pool: &Arc<Semaphore>, units: usize, large: bool) -> Result<OwnedSemaphorePermit, A2AError> {
        u32::try_from(units)
            .ok()
            .and_then(|n| pool.clone().try_acquire_many_owned(n).ok())
            .ok_or_else(|| self.spent(large))
    }

    fn spent(&self, large: bool) -> A2AError {
        let which = if large { "large" } else { "small (64 KiB or less)" };
        A2AError::new(
            ErrorKind::Unavailable,
            format!(
                "the server is reading as many {which} request bodies as it holds at once ({} bytes, \
                 limits.maxBodyBytesInFlight); try again shortly",
                self.bytes
            ),
        )
        .with_meta("maxBodyBytesInFlight", self.bytes.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_bodies_each_share_a_budget() {
        let budget = BodyBudget::new(1024 * 1024);
        let mut a = BodyShare::default();
        budget.cover(&mut a, 600 * 1024).unwrap();
        let mut b = BodyShare::default();
        let refused = budget.cover(&mut b, 600 * 1024).unwrap_err();
        assert_eq!(refused.kind, ErrorKind::Unavailable);
        assert!(refused.message.contains("maxBodyBytesInFlight"), "{}", refused.message);
        // Small bodies have a budget of their own: the large ones do not starve them.
        let mut smalls: Vec<BodyShare> = (0..16).map(|_| BodyShare::default()).collect();
        for share in &mut smalls {
            budget.cover(share, SMALL_BYTES).unwrap();
        }
        let refused = budget.cover(&mut BodyShare::default(), 1).unwrap_err();
        assert!(refused.message.contains("small"), "many small ones add up too: {}", refused.message);
        drop(smalls);
        // A share grows with its body, by what it lacks only, and moves over when it grows large.
        let mut growing = BodyShare::default();
        budget.cover(&mut growing, 1000).unwrap();
        budget.cover(&mut growing, SMALL_BYTES + 1).unwrap();
        assert!(budget.cover(&mut growing, 600 * 1024).is_err(), "with a, past the large budget");
        drop(growing);
        budget.cover(&mut a, 1000 * 1024).unwrap();
        assert!(budget.cover(&mut a, 1025 * 1024).is_err(), "past the whole budget");
        drop(a);
        budget.cover(&mut b, 1024 * 1024).unwrap();
    }

    #[test]
    fn clients_are_hosts() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(client_of(ip("2001:db8:1:2:aaaa::1")), client_of(ip("2001:db8:1:2:bbbb::2")));
        assert_ne!(client_of(ip("2001:db8:1:2::1")), client_of(ip("2001:db8:1:3::1")));
        assert_eq!(client_of(ip("::ffff:10.0.0.1")), ip("10.0.0.1"));
        assert_eq!(client_of(ip("10.0.0.1")), ip("10.0.0.1"));
    }

    #[test]
    fn one_client_may_hold_half_of_a_budget() {
        let budget = BodyBudget::new(1024 * 1024);
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        // Many small unfinished bodies of one client (1 KiB each as counted): half, then refused.
        let mut held: Vec<BodyShare> = Vec::new();
        let refused = loop {
            let mut share = BodyShare::default();
            match budget.cover_for(Some(a), &mut share, 6) {
                Ok(()) => held.push(share),
                Err(e) => break e,
            }
        };
        assert_eq!(held.len(), 512);
        assert!(refused.message.contains("this client"), "{}", refused.message);
        // Another client is served meanwhile.
        budget.cover_for(Some(b), &mut BodyShare::default(), 6).unwrap();
        // Given back as the bodies end.
        held.truncate(100);
        budget.cover_for(Some(a), &mut BodyShare::default(), 6).unwrap();
        drop(held);
        // A body that grows large leaves its client's count: the client's small ones go on.
        let mut big = BodyShare::default();
        budget.cover_for(Some(a), &mut big, 100).unwrap();
        budget.cover_for(Some(a), &mut big, 900 * 1024).unwrap();
        budget.cover_for(Some(a), &mut BodyShare::default(), 6).unwrap();
        drop(big);
        assert!(budget.clients.lock().unwrap().is_empty(), "every count given back");
    }

    #[test]
    fn a_largest_body_fits_an_idle_server() {
        let limits = crate::task::config::Limits {
            max_body_bytes: 100_000,
            max_body_bytes_in_flight: 100_000,
            ..Default::default()
        };
        let budget = BodyBudget::for_limits(&limits);
        budget.cover(&mut BodyShare::default(), 100_000 + crate::grpc::frame::PREFIX).unwrap();
        let exact = BodyBudget::new(100_000);
        exact.cover(&mut BodyShare::default(), 100_000).unwrap();
    }

    #[test]
    fn any_size_is_counted_without_overflow() {
        let budget = BodyBudget::new(usize::MAX);
        let mut share = BodyShare::default();
        budget.cover(&mut share, 3 << 40).unwrap_or_else(|e| panic!("{e}"));
        let small = BodyBudget::new(0);
        assert!(small.cover(&mut BodyShare::default(), usize::MAX).is_err());
    }
}
