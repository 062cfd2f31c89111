//! The server-wide budget of large request bodies in flight (`Limits::max_body_bytes_in_flight`).
//!
//! One request is bounded by `max_body_bytes`, but nothing bounded how many arrive at once,
//! and a body grows when it is parsed: 8 MiB of `[0,0,…]` is about 130 MB of `serde_json`
//! values. So a body larger than [`FREE_BYTES`] holds its size of the budget from the moment it
//! arrives (counted as its bytes do) until its request is answered (a stream: opened). When the budget is spent the request is refused at once with 503 and
//! `Retry-After`, never queued: waiting bodies would hold their partial share and could starve
//! each other until their read timeouts.

use crate::error::{A2AError, ErrorKind};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Bodies up to this size are not counted: their parse is bounded per request, and the hot
/// path takes no shared lock for them.
pub const FREE_BYTES: usize = 64 * 1024;

/// The budget is kept in KiB so any size fits tokio's `u32` permit counts.
const UNIT: usize = 1024;

/// What large bodies in flight may hold at once, server-wide.
#[derive(Debug, Clone)]
pub(crate) struct BodyBudget {
    permits: Arc<Semaphore>,
    bytes: usize,
}

/// A share of the budget, given back when dropped.
#[derive(Debug, Default)]
pub(crate) struct BodyShare {
    permit: Option<OwnedSemaphorePermit>,
    units: usize,
}

impl BodyBudget {
    /// Rounded up to whole units, as each body's need is: a body of exactly `bytes` fits.
    pub fn new(bytes: usize) -> Self {
        Self { permits: Arc::new(Semaphore::new(bytes.div_ceil(UNIT).min(Semaphore::MAX_PERMITS))), bytes }
    }

    /// The budget `limits` ask for, never less than one largest body (with gRPC's 5-byte frame
    /// prefix), so every body the server accepts can be served on an idle server.
    pub fn for_limits(limits: &crate::task::config::Limits) -> Self {
        let largest = limits.max_body_bytes.saturating_add(crate::grpc::frame::PREFIX);
        Self::new(limits.max_body_bytes_in_flight.max(largest))
    }

    /// Makes `share` cover a body of `len` bytes (nothing while it is small); Unavailable when
    /// the budget cannot cover it now.
    pub fn cover(&self, share: &mut BodyShare, len: usize) -> Result<(), A2AError> {
        if len <= FREE_BYTES {
            return Ok(());
        }
        let units = len.div_ceil(UNIT);
        let more = units.saturating_sub(share.units);
        if more == 0 {
            return Ok(());
        }
        let taken = u32::try_from(more)
            .ok()
            .and_then(|n| self.permits.clone().try_acquire_many_owned(n).ok())
            .ok_or_else(|| self.spent())?;
        match &mut share.permit {
            Some(permit) => permit.merge(taken),
            None => share.permit = Some(taken),
        }
        share.units = units;
        Ok(())
    }

    fn spent(&self) -> A2AError {
        A2AError::new(
            ErrorKind::Unavailable,
            format!(
                "the server is reading as many large request bodies as it holds at once ({} bytes, \
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
    fn small_bodies_are_free_and_large_ones_share_the_budget() {
        let budget = BodyBudget::new(1024 * 1024);
        let mut small = BodyShare::default();
        for _ in 0..10_000 {
            budget.cover(&mut small, FREE_BYTES).unwrap();
        }
        let mut a = BodyShare::default();
        budget.cover(&mut a, 600 * 1024).unwrap();
        let mut b = BodyShare::default();
        let refused = budget.cover(&mut b, 600 * 1024).unwrap_err();
        assert_eq!(refused.kind, ErrorKind::Unavailable);
        assert!(refused.message.contains("maxBodyBytesInFlight"), "{}", refused.message);
        // A share grows with its body, by what it lacks only.
        budget.cover(&mut a, 1000 * 1024).unwrap();
        assert!(budget.cover(&mut a, 1025 * 1024).is_err(), "past the whole budget");
        drop(a);
        budget.cover(&mut b, 1024 * 1024).unwrap();
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
