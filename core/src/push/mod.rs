//! Push notifications: the sender (SSRF guard, bounded queue, per-task ordering, retries with
//! backoff) and, later, a receiver helper.

mod guard;
mod sender;

pub use sender::{PushSender, PushSenderConfig, PushStats};
