//! core's `signing` and `client::PushVerifier` for Kotlin and Swift: RFC 8785 canonical JSON,
//! signed Agent Cards (records in, records out) and the receiver's check of signed push
//! notifications. JWKS and other free-form JSON cross as text.

use crate::convert::{ToRecord, to_core};
use crate::errors::Result;
use crate::models_gen::AgentCard;
use a2a_native::A2AError;
use a2a_native::auth::KeySet;
use a2a_native::client::{PushVerifier as CoreVerifier, PushVerifierOptions};
use a2a_native::model;
use a2a_native::signing;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

fn json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    Ok(serde_json::from_str(text).map_err(|e| A2AError::invalid_field(what, e.to_string()))?)
}

/// The RFC 8785 (JCS) canonical form of a JSON text.
#[uniffi::export]
pub fn canonicalize(json_text: String) -> Result<String> {
    let bytes = signing::canonicalize(&json(&json_text, "value")?)?;
    Ok(String::from_utf8(bytes).map_err(|e| A2AError::internal(e.to_string()))?)
}

/// `card` with one more signature made with the PEM private key (`alg`: ES256, RS256, EdDSA).
#[uniffi::export(default(jku = None))]
pub fn sign_card(card: AgentCard, pem: String, alg: String, kid: String, jku: Option<String>) -> Result<AgentCard> {
    let mut core = to_core::<model::AgentCard, _>(card)?;
    signing::sign_card_named(&mut core, pem.as_bytes(), &alg, &kid, jku)?;
    Ok(core.to_record())
}

/// The kid of a signature of `card` that verifies under the JWKS (JSON text); an
/// UnauthenticatedError when none does.
#[uniffi::export]
pub fn verify_card(card: AgentCard, jwks_json: String, algorithms: Vec<String>) -> Result<String> {
    Ok(signing::verify_card_named(&to_core::<model::AgentCard, _>(card)?, json(&jwks_json, "jwks")?, &algorithms)?)
}

/// What a verified push notification says about itself.
#[derive(uniffi::Record)]
pub struct VerifiedPush {
    pub task_id: String,
    pub jti: String,
    pub issued_at: u64,
}

/// Checks signed push notifications where your webhook receives them.
#[derive(uniffi::Object)]
pub struct PushVerifier {
    inner: CoreVerifier,
}

#[uniffi::export]
impl PushVerifier {
    /// `jwks_json`: the agent's push keys; `audience`: your webhook URL; `token`: the push
    /// config's token; `max_age`: how old a notification may be (default 5 minutes).
    #[uniffi::constructor(default(issuer = None, token = None, max_age = None))]
    pub fn new(
        jwks_json: String,
        audience: String,
        issuer: Option<String>,
        token: Option<String>,
        max_age: Option<Duration>,
    ) -> Result<Arc<Self>> {
        let max_age = max_age.map(|age| age.as_secs_f64());
        let options =
            PushVerifierOptions { jwks: json::<KeySet>(&jwks_json, "jwks")?, audience, issuer, token, max_age };
        let inner = options.verifier()?;
        Ok(Arc::new(Self { inner }))
    }

    /// `headers` as received (names in any case) and the exact body bytes.
    pub fn verify(&self, headers: HashMap<String, String>, body: Vec<u8>) -> Result<VerifiedPush> {
        let v = self.inner.verify_pairs(headers, &body)?;
        Ok(VerifiedPush { task_id: v.task_id, jti: v.jti, issued_at: v.issued_at })
    }
}
