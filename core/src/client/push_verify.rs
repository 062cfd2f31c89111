//! Signed push notifications, the receiver's half: checks that a POST to your webhook comes
//! from the agent and is fresh, before you act on it (spec §9: "MUST check authenticity").
//!
//! [`PushVerifier::verify`] takes the request's headers and exact body and checks, in order:
//! the `X-A2A-Notification-Token` against the token you registered (constant time), the JWT in
//! `A2A-Notification-Signature` (an accepted algorithm, a key of the agent's JWKS by `kid`, the
//! signature), `iss` and `aud` (your webhook URL), `iat` within the freshness window and `exp`,
//! `bodySha256` against the body, and `jti` against the tokens seen within the window (a
//! replayed notification is refused; so is a duplicate delivery, which you may treat as
//! already handled).

use crate::auth::{KeySet, jose};
use crate::error::{A2AError, ErrorKind, Result};
use http::HeaderMap;
use jsonwebtoken::{Algorithm, Validation};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const SIGNATURE_HEADER: &str = "a2a-notification-signature";
const TOKEN_HEADER: &str = "x-a2a-notification-token";

/// Verifies notifications from one agent to one webhook.
pub struct PushVerifier {
    keys: KeySet,
    issuer: Option<String>,
    audience: String,
    token: Option<String>,
    max_age: Duration,
    leeway: Duration,
    algorithms: Vec<Algorithm>,
    /// jti -> when it may be forgotten (unix seconds).
    seen: Mutex<HashMap<String, u64>>,
}

/// The longest freshness window a verifier takes (30 days): notifications older than that are
/// stale anywhere, and the `jti`s it remembers stay bounded in time.
pub const MAX_AGE_LIMIT: Duration = Duration::from_secs(30 * 24 * 3600);

/// A [`PushVerifier`] as every binding describes it: `{"jwks", "audience", "issuer"?,
/// "token"?, "maxAge"?}`, `maxAge` in seconds (as every duration in every language's
/// options). Unknown keys are refused, so a misspelt option never goes unnoticed.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PushVerifierOptions {
    pub jwks: KeySet,
    pub audience: String,
    #[serde(default)]
    pub issuer: Option<String>,
    #[serde(default)]
    pub token: Option<String>,
    #[serde(default)]
    pub max_age: Option<f64>,
}

impl PushVerifierOptions {
    /// Reads the JSON form; InvalidParams naming what is wrong (an unknown key included).
    pub fn from_value(value: Value) -> Result<Self> {
        A2AError::from_options(value)
    }

    /// The verifier these options describe.
    pub fn verifier(self) -> Result<PushVerifier> {
        let mut verifier = PushVerifier::new(self.jwks, self.audience);
        if let Some(issuer) = self.issuer {
            verifier = verifier.with_issuer(issuer);
        }
        if let Some(token) = self.token {
            verifier = verifier.with_token(token);
        }
        if let Some(secs) = self.max_age {
            // `iat` counts whole seconds: a shorter window would refuse every notification.
            if !(1.0..=MAX_AGE_LIMIT.as_secs_f64()).contains(&secs) {
                let why = format!("from 1 to {} seconds", MAX_AGE_LIMIT.as_secs());
                return Err(A2AError::invalid_field("maxAge", why));
            }
            verifier = verifier.with_max_age(Duration::from_secs_f64(secs));
        }
        Ok(verifier)
    }
}

/// What a verified notification says about itself (`{"taskId", "jti", "issuedAt"}` in JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifiedPush {
    pub task_id: String,
    pub jti: String,
    pub issued_at: u64,
}

fn refused(why: impl Into<String>) -> A2AError {
    A2AError::new(ErrorKind::Unauthenticated, why)
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

impl PushVerifier {
    /// `keys`: the agent's push JWKS (served at `/.well-known/a2a-push-jwks.json`, see
    /// [`fetch_jwks`]); `audience`: the webhook URL you registered.
    pub fn new(keys: impl Into<KeySet>, audience: impl Into<String>) -> Self {
        Self {
            keys: keys.into(),
            issuer: None,
            audience: audience.into(),
            token: None,
            max_age: Duration::from_secs(300),
            leeway: Duration::from_secs(30),
            algorithms: vec![Algorithm::ES256, Algorithm::RS256, Algorithm::EdDSA],
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// The `iss` to require (the agent's identity as its signer names it).
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The `token` you registered in the push config, required in `X-A2A-Notification-Token`.
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// How old (by `iat`, in whole seconds) a notification may be; also how long `jti`s are
    /// remembered. At most [`MAX_AGE_LIMIT`].
    pub fn with_max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age.min(MAX_AGE_LIMIT);
        self
    }

    /// [`PushVerifier::verify`] for headers as a host language holds them (`(name, value)`
    /// pairs, names in any case); a pair HTTP cannot carry is InvalidParams.
    pub fn verify_pairs(
        &self,
        headers: impl IntoIterator<Item = (String, String)>,
        body: &[u8],
    ) -> Result<VerifiedPush> {
        let map: HeaderMap = crate::client::credentials::headers_from_pairs(headers)?.into_iter().collect();
        self.verify(&map, body)
    }

    /// Checks one delivery; Unauthenticated naming the first failed check.
    pub fn verify(&self, headers: &HeaderMap, body: &[u8]) -> Result<VerifiedPush> {
        if let Some(expected) = &self.token {
            let got = headers.get(TOKEN_HEADER).map(|v| v.as_bytes()).unwrap_or_default();
            if !crate::auth::secrets_equal(got, expected.as_bytes()) {
                return Err(refused("the notification token does not match"));
            }
        }
        let token = headers
            .get(SIGNATURE_HEADER)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| refused("the notification is not signed"))?;
        let header = jose::jwt_header(token, &self.algorithms)
            .map_err(|why| refused(format!("the signature is refused: {why}")))?;
        let kid = header.kid.as_deref().ok_or_else(|| refused("the signature names no key (kid)"))?;
        let jwk = self.keys.usable(kid).map_err(|why| refused(format!("signing key {kid:?}: {why}")))?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.leeway.as_secs();
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "aud", "iat", "jti"]);
        if let Some(iss) = &self.issuer {
            validation.set_issuer(&[iss]);
        }
        let claims = jose::jwt_claims(token, jwk, &validation)
            .map_err(|why| refused(format!("the signature is not valid: {why}")))?;
        let issued_at = claims.get("iat").and_then(Value::as_u64).ok_or_else(|| refused("iat is not a number"))?;
        let now = now();
        if issued_at > now + self.leeway.as_secs() || now.saturating_sub(issued_at) > self.max_age.as_secs() {
            return Err(refused("the notification is stale (iat outside the window)"));
        }
        if claims.get("bodySha256").and_then(Value::as_str) != Some(&crate::signing::body_digest(body)) {
            return Err(refused("the body does not match the signature"));
        }
        // Required above only as present: a missing, empty or non-string one would make every
        // such notification the same replay (and let the first through unchecked).
        let jti = match claims.get("jti").and_then(Value::as_str) {
            Some(jti) if !jti.is_empty() => jti.to_owned(),
            _ => return Err(refused("the notification has no jti (a non-empty string)")),
        };
        self.remember(&jti, now)?;
        let task_id = claims.get("taskId").and_then(Value::as_str).unwrap_or_default().to_owned();
        Ok(VerifiedPush { task_id, jti, issued_at })
    }

    /// Refuses a `jti` seen within the window; forgets the expired ones.
    fn remember(&self, jti: &str, now: u64) -> Result<()> {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        seen.retain(|_, until| *until > now);
        if seen.contains_key(jti) {
            return Err(refused("the notification was already received (jti replayed)"));
        }
        seen.insert(jti.to_owned(), now.saturating_add(self.max_age.as_secs()).saturating_add(self.leeway.as_secs()));
        Ok(())
    }
}
