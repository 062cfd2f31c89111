//! Who is calling: the seam where authentication schemes plug into the server.
//!
//! An [`Authenticator`] reads a request's headers and names the caller (a [`Principal`]), says
//! there are no credentials, or refuses the ones given. The service then applies the card's
//! policy (spec §7): when the card declares `securityRequirements`, every A2A request needs an
//! authenticated caller, and GetExtendedAgentCard always does when the card declares any
//! security scheme. Refusals are HTTP 401 with a `WWW-Authenticate` challenge, in both
//! bindings, as standard web auth expects. The agent card itself is always public.
//!
//! [`BearerTokens`] is the built-in scheme (static bearer tokens); API keys, JWT with JWKS and
//! OAuth2 scopes implement the same trait.

use crate::error::{A2AError, ErrorKind, Result};
use async_trait::async_trait;
use http::HeaderMap;
use std::collections::HashMap;

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
    /// scheme; `Err(_)` (Unauthenticated): credentials are present but invalid.
    async fn authenticate(&self, headers: &HeaderMap) -> Result<Option<Principal>>;

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
    async fn authenticate(&self, headers: &HeaderMap) -> Result<Option<Principal>> {
        let Some(value) = headers.get(http::header::AUTHORIZATION) else { return Ok(None) };
        let value = value.to_str().map_err(|_| unauthenticated("the Authorization header is not ASCII"))?;
        let Some((scheme, token)) = value.split_once(' ') else {
            return Err(unauthenticated("the Authorization header is not `Bearer <token>`"));
        };
        if !scheme.eq_ignore_ascii_case("bearer") {
            // Another scheme's credentials: not ours to judge.
            return Ok(None);
        }
        let token = token.trim();
        // Compare against every token in constant time per token, so timing tells nothing
        // about how much of a guess was right.
        let found = self.tokens.iter().fold(None, |found, (known, principal)| {
            if constant_time_eq(known.as_bytes(), token.as_bytes()) { Some(principal) } else { found }
        });
        found.cloned().map(Some).ok_or_else(|| unauthenticated("the bearer token is not valid"))
    }

    fn challenge(&self) -> &str {
        "Bearer realm=\"a2a\""
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub(crate) fn unauthenticated(why: &str) -> A2AError {
    A2AError::new(ErrorKind::Unauthenticated, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(auth: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(a) = auth {
            h.insert(http::header::AUTHORIZATION, a.parse().unwrap());
        }
        h
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
