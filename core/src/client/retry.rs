//! When and how long the client waits before trying again: bounded exponential backoff with
//! jitter, for idempotent calls and for stream reconnection.
//!
//! Rules: only idempotent operations (GetTask, ListTasks, Get/List push config, the extended
//! card, the card fetch) are retried, and only when the failure says "try again": a
//! connection that could not be made, or HTTP 502, 503 or 504. SendMessage, SendStreamingMessage,
//! CancelTask and push-config create/delete are never retried, because the server may have acted
//! on the first attempt. A `Retry-After` of a few seconds is honoured, capped by the policy's
//! maximum delay.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// Bounded exponential backoff with jitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts after the first one (0 = never retry).
    pub max_retries: u32,
    /// The delay before the first retry (before jitter).
    pub initial_backoff: Duration,
    /// No delay is longer than this.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self { max_retries: 2, initial_backoff: Duration::from_millis(100), max_backoff: Duration::from_secs(2) }
    }
}

impl RetryPolicy {
    /// The delay before retry number `attempt` (0-based): `initial * 2^attempt`, capped at
    /// `max_backoff`, then drawn uniformly from its upper half so that clients that failed
    /// together do not retry together.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let base = self.initial_backoff.saturating_mul(1u32 << attempt.min(16)).min(self.max_backoff);
        let half = base / 2;
        let nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
        let jitter = if nanos == 0 { 0 } else { random_u64() % (nanos + 1) };
        half + Duration::from_nanos(jitter)
    }

    /// The delay before retry `attempt`, or the server's `Retry-After` (seconds) when it gave
    /// one, never beyond `max_backoff`.
    pub(crate) fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(d) => d.min(self.max_backoff),
            None => self.backoff(attempt),
        }
    }
}

/// Whether an HTTP status means "the server may answer if asked again".
pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 502..=504)
}

/// `Retry-After` in seconds (the HTTP-date form is ignored).
pub(crate) fn retry_after(headers: &http::HeaderMap) -> Option<Duration> {
    let text = headers.get(http::header::RETRY_AFTER)?.to_str().ok()?;
    text.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// A random number from the standard library's randomly keyed hasher: enough for jitter,
/// without a dependency on a random number crate.
fn random_u64() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64),
    );
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_is_capped_and_jittered() {
        let p = RetryPolicy {
            max_retries: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
        };
        for attempt in 0..10 {
            let base = (Duration::from_millis(100) * 2u32.pow(attempt.min(16))).min(Duration::from_secs(1));
            let d = p.backoff(attempt);
            assert!(d >= base / 2 && d <= base, "attempt {attempt}: {d:?} not in [{:?}, {base:?}]", base / 2);
        }
        let zero = RetryPolicy { initial_backoff: Duration::ZERO, ..p };
        assert_eq!(zero.backoff(3), Duration::ZERO);
        assert_eq!(p.delay(0, Some(Duration::from_secs(30))), Duration::from_secs(1));
        assert_eq!(p.delay(0, Some(Duration::from_millis(10))), Duration::from_millis(10));
    }

    #[test]
    fn retryable_statuses() {
        for s in [502, 503, 504] {
            assert!(is_retryable_status(s));
        }
        for s in [200, 400, 401, 404, 500, 501, 505] {
            assert!(!is_retryable_status(s));
        }
        let mut h = http::HeaderMap::new();
        h.insert(http::header::RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert(http::header::RETRY_AFTER, "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }
}
