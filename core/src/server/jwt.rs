//! Bearer JWTs (RFC 7519) validated against a JSON Web Key Set: the scheme an agent uses when
//! its card declares an OAuth2 / OpenID Connect scheme or HTTP bearer with JWT tokens.
//!
//! The signature is checked with the key the token's `kid` names, from a JWKS given once or
//! fetched from a URL (the identity provider's `jwks_uri`). Fetched keys are cached; a `kid`
//! not in the cache triggers a refetch (key rotation), at most once per `min_refresh`, so a
//! flood of forged `kid`s cannot hammer the provider. Only the configured algorithms are
//! accepted (never `none`, never HMAC with a public key). `iss`, `aud`, `exp` and `nbf` are
//! checked with a clock-skew leeway. The principal is the `sub` claim (configurable); its
//! scopes come from `scope` (space-separated, OAuth2) and `scp` (string or array).

use super::auth::{Authenticator, Principal, bearer_token, unauthenticated};
use crate::auth::{KeySet, jose};
use crate::error::{A2AError, ErrorKind, Result};
use async_trait::async_trait;
use http::request::Parts;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, RwLock};

/// What a token must satisfy.
#[derive(Debug, Clone)]
pub struct JwtConfig {
    /// Accepted `iss` values (empty: not checked; set it in production).
    pub issuers: Vec<String>,
    /// Accepted `aud` values (empty: not checked).
    pub audiences: Vec<String>,
    /// Accepted signature algorithms.
    pub algorithms: Vec<Algorithm>,
    /// Clock skew allowed on `exp` and `nbf`.
    pub leeway: Duration,
    /// The claim naming the principal.
    pub principal_claim: String,
    /// Fetched keys are refetched after this long.
    pub max_key_age: Duration,
    /// An unknown `kid` refetches the keys at most this often.
    pub min_refresh: Duration,
}

impl Default for JwtConfig {
    fn default() -> Self {
        Self {
            issuers: Vec::new(),
            audiences: Vec::new(),
            algorithms: vec![Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA],
            leeway: Duration::from_secs(60),
            principal_claim: "sub".into(),
            max_key_age: Duration::from_secs(600),
            min_refresh: Duration::from_secs(30),
        }
    }
}

/// Where the verification keys come from.
#[derive(Debug, Clone)]
pub enum KeySource {
    /// A fixed key set (keys configured by hand, tests).
    Static(KeySet),
    /// A JWKS URL, fetched on first use and on rotation.
    Url(String),
}

/// How long fetching the key set may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

struct Cache {
    keys: KeySet,
    fetched: Option<Instant>,
    /// Why the last fetch got no key set (a connection error, a timeout, an HTTP error status,
    /// an answer that is not one), until a fetch succeeds.
    unreachable: Option<String>,
}

/// How soon a fetch that could not reach the key set is tried again (`min_refresh` paces
/// refetches of a key set that was read).
const RETRY_UNREACHABLE: Duration = Duration::from_secs(2);

/// Validates `Authorization: Bearer <jwt>`.
pub struct JwtBearer {
    config: JwtConfig,
    source: KeySource,
    cache: RwLock<Cache>,
    /// One refetch at a time; the others wait for its result.
    refetch: Mutex<()>,
    http: reqwest::Client,
}

impl JwtBearer {
    pub fn new(config: JwtConfig, source: KeySource) -> Self {
        let keys = match &source {
            KeySource::Static(set) => set.clone(),
            KeySource::Url(_) => KeySet::default(),
        };
        let http = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        let cache = RwLock::new(Cache { keys, fetched: None, unreachable: None });
        Self { config, source, cache, refetch: Mutex::new(()), http }
    }

    /// The key for `kid` (or the only key when the token names none), fetching the set when
    /// it is stale or does not have it.
    async fn key(&self, kid: Option<&str>) -> Result<Jwk> {
        if let Some(jwk) = self.fresh(kid).await {
            return Ok(jwk);
        }
        let unknown = || unauthenticated("the token's signing key is not known");
        let KeySource::Url(url) = &self.source else { return Err(unknown()) };
        let _one = self.refetch.lock().await;
        // Another request may have refetched while this one waited.
        if let Some(jwk) = self.fresh(kid).await {
            return Ok(jwk);
        }
        let recently = {
            let cache = self.cache.read().await;
            let pace = if cache.unreachable.is_some() { RETRY_UNREACHABLE } else { self.config.min_refresh };
            cache.fetched.is_some_and(|t| t.elapsed() < pace)
        };
        if !recently {
            // Read with a bounded reader: at most 1 MiB, however much is served.
            let fetched = crate::auth::fetch_jwks_with(&self.http, url, FETCH_TIMEOUT).await;
            let mut cache = self.cache.write().await;
            cache.fetched = Some(Instant::now()); // paces retries after a failure too
            cache.unreachable = None;
            match fetched {
                Ok(keys) => cache.keys = keys,
                // Keep serving with the keys we have.
                // Unreachable, or an answer that is no key set (garbage, too large): either
                // way the server's trouble, retried soon, not the caller's token.
                Err(why) => {
                    tracing::warn!(url, %why, "could not fetch the JWKS");
                    cache.unreachable = Some(why.message);
                }
            }
        }
        let cache = self.cache.read().await;
        find(&cache.keys, kid).ok_or_else(|| match &cache.unreachable {
            // The server's trouble, not the caller's token: 503, to try again. Why is for the
            // operator's log (above): the JWKS URL and its host's answer are not the caller's.
            Some(_) => {
                A2AError::new(ErrorKind::Unavailable, "the token's signing keys cannot be fetched now; try again")
            }
            None => unknown(),
        })
    }

    /// The key from a cache that is not due for a refetch.
    async fn fresh(&self, kid: Option<&str>) -> Option<Jwk> {
        let cache = self.cache.read().await;
        let stale = matches!(self.source, KeySource::Url(_))
            && cache.fetched.is_none_or(|t| t.elapsed() >= self.config.max_key_age);
        if stale { None } else { find(&cache.keys, kid) }
    }

    fn validation(&self, alg: Algorithm) -> Validation {
        let mut v = Validation::new(alg);
        v.leeway = self.config.leeway.as_secs();
        v.validate_nbf = true;
        // jsonwebtoken checks `iss` and `aud` only when the token has them: a configured one
        // is required too, or a token that leaves it out would pass for any issuer or audience.
        let mut required = vec!["exp"];
        if !self.config.issuers.is_empty() {
            v.set_issuer(&self.config.issuers);
            required.push("iss");
        }
        if self.config.audiences.is_empty() {
            v.validate_aud = false;
        } else {
            v.set_audience(&self.config.audiences);
            required.push("aud");
        }
        v.set_required_spec_claims(&required);
        v
    }
}

#[async_trait]
impl Authenticator for JwtBearer {
    async fn authenticate(&self, request: &Parts) -> Result<Option<Principal>> {
        let Some(token) = bearer_token(request)? else { return Ok(None) };
        let header = jose::jwt_header(token, &self.config.algorithms)
            .map_err(|why| unauthenticated(&format!("the bearer token is refused: {why}")))?;
        let jwk = self.key(header.kid.as_deref()).await?;
        let claims = jose::jwt_claims(token, &jwk, &self.validation(header.alg))
            .map_err(|why| unauthenticated(&format!("the token is not valid: {why}")))?;
        let name = claims
            .get(&self.config.principal_claim)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| unauthenticated(&format!("the token has no `{}` claim", self.config.principal_claim)))?;
        let issuer = claims.get("iss").and_then(Value::as_str).unwrap_or_default();
        // The two name the caller's tasks, with U+001F between the parts: no control characters.
        if name.chars().chain(issuer.chars()).any(char::is_control) {
            return Err(unauthenticated("the token's principal or issuer holds control characters"));
        }
        // The identity provider names this caller, not the operator: its tasks are kept apart
        // from those of a bearer token or API key given the same name.
        let realm = format!("jwt {issuer}");
        Ok(Some(Principal { name: name.to_owned(), scopes: scopes(&claims), realm }))
    }

    fn challenge(&self) -> &str {
        "Bearer realm=\"a2a\""
    }
}

/// The key for `kid` (or the only key), if listed and within its validity window: an expired
/// key is treated as unknown, so a URL source refetches (the provider may have rotated).
fn find(keys: &KeySet, kid: Option<&str>) -> Option<Jwk> {
    match kid {
        Some(kid) => keys.usable(kid).ok().cloned(),
        None => keys.only().ok().cloned(),
    }
}

/// OAuth2 `scope` (space-separated) and `scp` (string or array), without duplicates.
fn scopes(claims: &Map<String, Value>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |s: &str| {
        if !s.is_empty() && !out.iter().any(|o| o == s) {
            out.push(s.to_owned());
        }
    };
    if let Some(Value::String(s)) = claims.get("scope") {
        s.split_whitespace().for_each(&mut add);
    }
    match claims.get("scp") {
        Some(Value::String(s)) => s.split_whitespace().for_each(&mut add),
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).for_each(&mut add),
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scopes_from_scope_and_scp() {
        let claims = json!({"scope": "a b  a", "scp": ["c", "b"]});
        assert_eq!(scopes(claims.as_object().unwrap()), ["a", "b", "c"]);
        let claims = json!({"scp": "x y"});
        assert_eq!(scopes(claims.as_object().unwrap()), ["x", "y"]);
        assert!(scopes(&Map::new()).is_empty());
    }
}
