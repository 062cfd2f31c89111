//! Who is calling: the seam where authentication schemes plug into the server.
//!
//! An [`Authenticator`] reads a request's headers and names the caller (a [`Principal`]), says
//! there are no credentials, or refuses the ones given. The service then applies the card's
//! policy (spec §7): when the card declares `securityRequirements`, every A2A request needs an
//! authenticated caller, and GetExtendedAgentCard always does when the card declares any
//! security scheme. Refusals are HTTP 401 with a `WWW-Authenticate` challenge, in both
//! bindings, as standard web auth expects. The agent card itself is always public.
//!
//! Built-in schemes: [`BearerTokens`] (static bearer tokens), [`ApiKeys`] (header, query or
//! cookie, as the card's `apiKeySecurityScheme` says) and [`super::jwt::JwtBearer`] (JWT
//! validated against a JWKS); [`AnyOf`] accepts whichever of several a caller uses.
//! [`RequiredScopes`] then says which scopes each operation needs (403 when missing).

use crate::error::{A2AError, ErrorKind, Result};
use async_trait::async_trait;
use http::request::Parts;
use std::collections::HashMap;
use std::sync::Arc;

/// An authenticated caller, as the executor and the stores see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// A stable name for the caller (user, client id, key name).
    pub name: String,
    /// Scopes or roles granted to the caller.
    pub scopes: Vec<String>,
}

/// Authenticates requests from their headers.
#[async_trait]
pub trait Authenticator: Send + Sync + 'static {
    /// `Ok(Some(_))`: authenticated; `Ok(None)`: the request carries no credentials for this
    /// scheme; `Err(_)` (Unauthenticated): credentials are present but invalid. The request's
    /// head (method, URI with its query, headers) is all a scheme may look at.
    async fn authenticate(&self, request: &Parts) -> Result<Option<Principal>>;

    /// The `WWW-Authenticate` value sent with a 401.
    fn challenge(&self) -> &str;
}

/// Static bearer tokens (`Authorization: Bearer <token>`), each naming a principal.
pub struct BearerTokens {
    tokens: HashMap<String, Principal>,
}

impl BearerTokens {
    pub fn new() -> Self {
        Self { tokens: HashMap::new() }
    }

    /// Accepts `token` as `principal`.
    pub fn with_token(mut self, token: impl Into<String>, principal: Principal) -> Self {
        self.tokens.insert(token.into(), principal);
        self
    }
}

impl Default for BearerTokens {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Authenticator for BearerTokens {
    async fn authenticate(&self, request: &Parts) -> Result<Option<Principal>> {
        let Some(token) = bearer_token(request)? else { return Ok(None) };
        // Compare against every token in constant time per token, so timing tells nothing
        // about how much of a guess was right.
        lookup(&self.tokens, token).map(Some).ok_or_else(|| unauthenticated("the bearer token is not valid"))
    }

    fn challenge(&self) -> &str {
        "Bearer realm=\"a2a\""
    }
}

/// The token of an `Authorization: Bearer <token>` header; `None` without one or for another
/// scheme (not ours to judge).
pub(crate) fn bearer_token(request: &Parts) -> Result<Option<&str>> {
    let Some(value) = request.headers.get(http::header::AUTHORIZATION) else { return Ok(None) };
        let value = value.to_str().map_err(|_| unauthenticated("the Authorization header is not ASCII"))?;
        let Some((scheme, token)) = value.split_once(' ') else {
            return Err(unauthenticated("the Authorization header is not `Bearer <token>`"));
        };
        if !scheme.eq_ignore_ascii_case("bearer") {
            // Another scheme's credentials: not ours to judge.
            return Ok(None);
        }
    Ok(Some(token.trim()))
}

/// The principal of a secret, comparing with every known secret in constant time.
fn lookup(known: &HashMap<String, Principal>, secret: &str) -> Option<Principal> {
    known
        .iter()
        .fold(None, |found, (k, p)| if crate::signing::secrets_equal(k.as_bytes(), secret.as_bytes()) { Some(p) } else { found })
        .cloned()
}

/// Where an API key travels (the card's `apiKeySecurityScheme.location`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyLocation {
    Header(String),
    Query(String),
    Cookie(String),
}

/// API keys, each naming a principal, read from one header, query parameter or cookie.
pub struct ApiKeys {
    location: KeyLocation,
    keys: HashMap<String, Principal>,
    challenge: String,
}

impl ApiKeys {
    pub fn new(location: KeyLocation) -> Self {
        let name = match &location {
            KeyLocation::Header(n) | KeyLocation::Query(n) | KeyLocation::Cookie(n) => n.clone(),
        };
        // RFC 9110 asks for a challenge with every 401; API keys have no registered scheme.
        let challenge = format!("ApiKey realm=\"a2a\", name=\"{name}\"");
        Self { location, keys: HashMap::new(), challenge }
    }

    /// Accepts `key` as `principal`.
    pub fn with_key(mut self, key: impl Into<String>, principal: Principal) -> Self {
        self.keys.insert(key.into(), principal);
        self
    }

    fn presented(&self, request: &Parts) -> Result<Option<String>> {
        Ok(match &self.location {
            KeyLocation::Header(name) => match request.headers.get(name.as_str()) {
                Some(v) => Some(v.to_str().map_err(|_| unauthenticated("the API key header is not ASCII"))?.to_owned()),
                None => None,
            },
            KeyLocation::Query(name) => request.uri.query().and_then(|q| {
                form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == name.as_str()).map(|(_, v)| v.into_owned())
            }),
            KeyLocation::Cookie(name) => request
                .headers
                .get_all(http::header::COOKIE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(';'))
                .filter_map(|pair| pair.trim().split_once('='))
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.to_owned()),
        })
    }
}

#[async_trait]
impl Authenticator for ApiKeys {
    async fn authenticate(&self, request: &Parts) -> Result<Option<Principal>> {
        let Some(key) = self.presented(request)? else { return Ok(None) };
        lookup(&self.keys, &key).map(Some).ok_or_else(|| unauthenticated("the API key is not valid"))
    }

    fn challenge(&self) -> &str {
        &self.challenge
    }
}

/// Several schemes at once: the first that recognises credentials decides (invalid
/// credentials for one scheme are refused, not passed on to the next).
pub struct AnyOf {
    schemes: Vec<Arc<dyn Authenticator>>,
    challenge: String,
}

impl AnyOf {
    pub fn new(schemes: Vec<Arc<dyn Authenticator>>) -> Self {
        let challenge = schemes.iter().map(|s| s.challenge()).collect::<Vec<_>>().join(", ");
        Self { schemes, challenge }
    }
}

#[async_trait]
impl Authenticator for AnyOf {
    async fn authenticate(&self, request: &Parts) -> Result<Option<Principal>> {
        for scheme in &self.schemes {
            if let Some(p) = scheme.authenticate(request).await? {
                return Ok(Some(p));
            }
        }
        Ok(None)
    }

    fn challenge(&self) -> &str {
        &self.challenge
    }
}

/// Scopes each A2A operation needs (OAuth2 / OIDC scopes, or any granted roles): a caller
/// without all of them gets 403 PermissionDenied. Operations not listed need none beyond
/// authentication.
#[derive(Debug, Clone, Default)]
pub struct RequiredScopes {
    by_method: HashMap<String, Vec<String>>,
}

impl RequiredScopes {
    pub fn new() -> Self {
        Self::default()
    }

    /// `method` is the A2A 1.0 operation name (`SendMessage`, `GetTask`, ...; `*` for all).
    pub fn require(mut self, method: &str, scopes: &[&str]) -> Self {
        self.by_method.entry(method.to_owned()).or_default().extend(scopes.iter().map(|s| (*s).to_owned()));
        self
    }

    /// Unauthenticated when a scope is needed and nobody is calling; PermissionDenied naming
    /// the missing scopes otherwise.
    pub fn check(&self, method: &str, principal: Option<&Principal>) -> Result<()> {
        let needed: Vec<&String> =
            self.by_method.get(method).into_iter().chain(self.by_method.get("*")).flatten().collect();
        if needed.is_empty() {
            return Ok(());
        }
        let Some(principal) = principal else {
            return Err(unauthenticated(&format!("{method} needs an authenticated caller")));
        };
        let missing: Vec<&str> =
            needed.into_iter().filter(|s| !principal.scopes.contains(s)).map(String::as_str).collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(A2AError::new(ErrorKind::PermissionDenied, format!("{method} needs the scopes: {}", missing.join(" "))))
        }
    }
}


pub(crate) fn unauthenticated(why: &str) -> A2AError {
    A2AError::new(ErrorKind::Unauthenticated, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(auth: Option<&str>) -> Parts {
        request("/", &[("authorization", auth)])
    }

    fn request(uri: &str, headers: &[(&str, Option<&str>)]) -> Parts {
        let mut b = http::Request::builder().uri(uri);
        for (name, value) in headers {
            if let Some(v) = value {
                b = b.header(*name, *v);
            }
        }
        b.body(()).unwrap().into_parts().0
    }

    fn who(name: &str, scopes: &[&str]) -> Principal {
        Principal { name: name.into(), scopes: scopes.iter().map(|s| (*s).to_owned()).collect() }
    }

    #[tokio::test]
    async fn api_keys_in_header_query_and_cookie() {
        let header = ApiKeys::new(KeyLocation::Header("X-API-Key".into())).with_key("k1", who("svc", &[]));
        assert_eq!(header.authenticate(&request("/", &[("x-api-key", Some("k1"))])).await.unwrap(), Some(who("svc", &[])));
        assert_eq!(header.authenticate(&request("/", &[])).await.unwrap(), None);
        assert!(header.authenticate(&request("/", &[("x-api-key", Some("k2"))])).await.is_err());

        let query = ApiKeys::new(KeyLocation::Query("api_key".into())).with_key("k 1", who("q", &[]));
        assert_eq!(query.authenticate(&request("/tasks?x=1&api_key=k+1", &[])).await.unwrap(), Some(who("q", &[])));
        assert_eq!(query.authenticate(&request("/tasks?x=1", &[])).await.unwrap(), None);
        assert!(query.authenticate(&request("/?api_key=nope", &[])).await.is_err());

        let cookie = ApiKeys::new(KeyLocation::Cookie("session".into())).with_key("c1", who("c", &[]));
        let r = request("/", &[("cookie", Some("a=b; session=c1"))]);
        assert_eq!(cookie.authenticate(&r).await.unwrap(), Some(who("c", &[])));
        assert_eq!(cookie.authenticate(&request("/", &[("cookie", Some("a=b"))])).await.unwrap(), None);
        assert!(cookie.challenge().starts_with("ApiKey"));
    }

    #[tokio::test]
    async fn any_of_lets_the_scheme_in_use_decide() {
        let both = AnyOf::new(vec![
            Arc::new(BearerTokens::new().with_token("t", who("bearer", &[]))),
            Arc::new(ApiKeys::new(KeyLocation::Header("x-api-key".into())).with_key("k", who("key", &[]))),
        ]);
        assert_eq!(both.authenticate(&request("/", &[("x-api-key", Some("k"))])).await.unwrap().unwrap().name, "key");
        assert_eq!(both.authenticate(&headers(Some("Bearer t"))).await.unwrap().unwrap().name, "bearer");
        assert!(both.authenticate(&headers(Some("Bearer wrong"))).await.is_err());
        assert_eq!(both.authenticate(&request("/", &[])).await.unwrap(), None);
        assert_eq!(both.challenge(), "Bearer realm=\"a2a\", ApiKey realm=\"a2a\", name=\"x-api-key\"");
    }

    #[test]
    fn required_scopes() {
        let policy = RequiredScopes::new().require("*", &["a2a"]).require("CancelTask", &["a2a.write"]);
        assert!(policy.check("GetTask", Some(&who("r", &["a2a"]))).is_ok());
        let e = policy.check("CancelTask", Some(&who("r", &["a2a"]))).unwrap_err();
        assert_eq!((e.kind, e.message.as_str()), (ErrorKind::PermissionDenied, "CancelTask needs the scopes: a2a.write"));
        assert!(policy.check("CancelTask", Some(&who("w", &["a2a", "a2a.write"]))).is_ok());
        assert_eq!(policy.check("GetTask", None).unwrap_err().kind, ErrorKind::Unauthenticated);
        assert!(RequiredScopes::new().check("GetTask", None).is_ok());
    }

    #[tokio::test]
    async fn bearer_tokens() {
        let alice = Principal { name: "alice".into(), scopes: vec![] };
        let auth = BearerTokens::new().with_token("s3cret", alice.clone());
        assert_eq!(auth.authenticate(&headers(Some("Bearer s3cret"))).await.unwrap(), Some(alice.clone()));
        assert_eq!(auth.authenticate(&headers(Some("bearer  s3cret"))).await.unwrap(), Some(alice));
        assert_eq!(auth.authenticate(&headers(None)).await.unwrap(), None);
        assert_eq!(auth.authenticate(&headers(Some("Basic YTpi"))).await.unwrap(), None);
        for bad in ["Bearer s3cre", "Bearer s3cret2", "Bearer", "garbage"] {
            let e = auth.authenticate(&headers(Some(bad))).await.unwrap_err();
            assert_eq!(e.kind, ErrorKind::Unauthenticated, "{bad}");
        }
    }
}
