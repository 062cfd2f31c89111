//! Signed push notifications, the sender's half: one short-lived JWT per notification, in the
//! `A2A-Notification-Signature` header, whose public key the server publishes as a JWKS.
//!
//! Claims: `iss` (this agent), `aud` (the webhook URL), `iat`, `exp`, `jti` (one per
//! notification, kept across its retries so a receiver can drop duplicates), `taskId`, and
//! `bodySha256` (base64url SHA-256 of the exact body), which binds the token to the body: a
//! captured token cannot carry another body. Receivers check it with
//! `client::PushVerifier` (client feature).

use crate::error::{A2AError, Result};
use jsonwebtoken::jwk::{Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The header carrying a notification's JWT.
pub const SIGNATURE_HEADER: &str = "a2a-notification-signature";
/// Where a server with a signer publishes its public keys.
pub const JWKS_PATH: &str = "/.well-known/a2a-push-jwks.json";

/// Signs notifications with one private key.
pub struct PushSigner {
    key: EncodingKey,
    alg: Algorithm,
    kid: String,
    issuer: String,
    ttl: Duration,
    public: Jwk,
}

impl std::fmt::Debug for PushSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushSigner")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .field("issuer", &self.issuer)
            .finish()
    }
}

impl PushSigner {
    /// `pem`: the private key for `alg` (see [`crate::auth::private_key`]); `issuer`: this agent (its
    /// card URL, say), which receivers expect in `iss`.
    pub fn from_pem(pem: &[u8], alg: Algorithm, kid: impl Into<String>, issuer: impl Into<String>) -> Result<Self> {
        let key = crate::auth::private_key(pem, alg)?;
        let kid = kid.into();
        let mut public =
            Jwk::from_encoding_key(&key, alg).map_err(|e| A2AError::internal(format!("public key: {e}")))?;
        public.common.key_id = Some(kid.clone());
        public.common.public_key_use = Some(PublicKeyUse::Signature);
        Ok(Self { key, alg, kid, issuer: issuer.into(), ttl: Duration::from_secs(300), public })
    }

    /// How long a notification's token is valid (default 5 minutes; retries reuse it).
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The public key set to publish.
    pub fn jwks(&self) -> JwkSet {
        JwkSet { keys: vec![self.public.clone()] }
    }

    /// The token for one notification of `task_id` to `url` carrying `body`.
    pub fn sign(&self, url: &str, task_id: &str, body: &[u8]) -> Result<String> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let digest = crate::signing::body_digest(body);
        let claims = json!({
            "iss": self.issuer,
            "aud": url,
            "iat": now,
            "exp": now + self.ttl.as_secs(),
            "jti": uuid::Uuid::new_v4().to_string(),
            "taskId": task_id,
            "bodySha256": digest,
        });
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|e| A2AError::internal(format!("signing a notification: {e}")))
    }
}
