//! Push notifications: the sender (SSRF guard, bounded queue, per-task ordering, retries with
//! backoff) and the signer of notifications (the receiver's verifier is in
//! `client::push_verify`).

mod guard;
mod sender;
mod signer;

pub use guard::{AllowedTarget, PrivateTargets};
pub use sender::{Payload, PushSender, PushSenderConfig, PushStats};
pub use signer::{JWKS_PATH, PushSigner, SIGNATURE_HEADER};
