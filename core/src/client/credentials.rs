//! Credentials the client attaches to every A2A call: the [`CredentialProvider`] seam and the
//! built-in static providers ([`StaticBearer`], [`ApiKey`]).
//!
//! A provider is asked once per call (not per retry) and answers with headers, and optionally
//! query parameters (API keys declared `location: query`). It sees which operation and which
//! interface URL the call goes to, so one provider can serve several agents or scopes. Token
//! fetching providers (OAuth2 client credentials) implement the same trait and cache their
//! token themselves. The public agent card is fetched without credentials: it is public by
//! definition (spec §8.2).

use crate::error::{A2AError, ErrorKind, Result};
use async_trait::async_trait;
use http::header::{AUTHORIZATION, COOKIE, HeaderName, HeaderValue};

/// What a provider knows about the call it authenticates.
#[derive(Debug, Clone, Copy)]
pub struct CredentialContext<'a> {
    /// The interface URL the call goes to.
    pub url: &'a str,
    /// The A2A 1.0 operation name (`SendMessage`, `GetExtendedAgentCard`, ...), also for calls
    /// sent to a 0.3 agent.
    pub method: &'a str,
    /// The agent's card (its `securitySchemes` say what it accepts).
    pub card: &'a crate::model::AgentCard,
}

/// Supplies credentials for calls to an agent.
#[async_trait]
pub trait CredentialProvider: Send + Sync + 'static {
    /// Headers to add to the call (e.g. `Authorization`).
    async fn headers(&self, ctx: &CredentialContext<'_>) -> Result<Vec<(HeaderName, HeaderValue)>>;

    /// Query parameters to add to the call (API keys sent in the query). None by default.
    async fn query(&self, ctx: &CredentialContext<'_>) -> Result<Vec<(String, String)>> {
        let _ = ctx;
        Ok(Vec::new())
    }
}

/// Headers a host-language provider returned (`{name: value}`), checked: a name or value HTTP
/// cannot carry is InvalidParams naming it. Values are marked sensitive (kept out of logs).
pub fn headers_from_pairs(pairs: impl IntoIterator<Item = (String, String)>) -> Result<Vec<(HeaderName, HeaderValue)>> {
    pairs
        .into_iter()
        .map(|(name, value)| {
            let name = HeaderName::try_from(name.as_str())
                .map_err(|_| A2AError::new(ErrorKind::InvalidParams, format!("{name:?} is not an HTTP header name")))?;
            Ok((name.clone(), header_value(&value, &format!("{name} value"))?))
        })
        .collect()
}

/// A header value from configuration text; a value HTTP cannot carry is a clear error.
fn header_value(value: &str, what: &str) -> Result<HeaderValue> {
    let mut value = HeaderValue::from_str(value)
        .map_err(|_| A2AError::new(ErrorKind::InvalidParams, format!("the {what} is not a valid HTTP header value")))?;
    value.set_sensitive(true);
    Ok(value)
}

/// `Authorization: Bearer <token>` on every call.
#[derive(Clone)]
pub struct StaticBearer {
    token: String,
}

impl StaticBearer {
    pub fn new(token: impl Into<String>) -> Self {
        Self { token: token.into() }
    }
}

impl std::fmt::Debug for StaticBearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StaticBearer(<redacted>)")
    }
}

#[async_trait]
impl CredentialProvider for StaticBearer {
    async fn headers(&self, _ctx: &CredentialContext<'_>) -> Result<Vec<(HeaderName, HeaderValue)>> {
        Ok(vec![(AUTHORIZATION, header_value(&format!("Bearer {}", self.token), "bearer token")?)])
    }
}

/// Where an API key travels (the card's `APIKeySecurityScheme.location`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApiKeyLocation {
    #[default]
    Header,
    Query,
    Cookie,
}

/// A static API key: a header (default), a query parameter or a cookie named `name`.
#[derive(Clone)]
pub struct ApiKey {
    pub name: String,
    pub value: String,
    pub location: ApiKeyLocation,
}

impl ApiKey {
    /// A key sent in header `header_name`.
    pub fn header(header_name: impl Into<String>, value: impl Into<String>) -> Self {
        Self { name: header_name.into(), value: value.into(), location: ApiKeyLocation::Header }
    }
    pub fn query(param: impl Into<String>, value: impl Into<String>) -> Self {
        Self { name: param.into(), value: value.into(), location: ApiKeyLocation::Query }
    }
    pub fn cookie(cookie: impl Into<String>, value: impl Into<String>) -> Self {
        Self { name: cookie.into(), value: value.into(), location: ApiKeyLocation::Cookie }
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiKey({:?} in {:?}, <redacted>)", self.name, self.location)
    }
}

#[async_trait]
impl CredentialProvider for ApiKey {
    async fn headers(&self, _ctx: &CredentialContext<'_>) -> Result<Vec<(HeaderName, HeaderValue)>> {
        match self.location {
            ApiKeyLocation::Header => {
                let name = HeaderName::from_bytes(self.name.as_bytes()).map_err(|_| {
                    A2AError::new(ErrorKind::InvalidParams, format!("{:?} is not a valid HTTP header name", self.name))
                })?;
                Ok(vec![(name, header_value(&self.value, "API key")?)])
            }
            ApiKeyLocation::Cookie => {
                Ok(vec![(COOKIE, header_value(&format!("{}={}", self.name, self.value), "API key cookie")?)])
            }
            ApiKeyLocation::Query => Ok(Vec::new()),
        }
    }

    async fn query(&self, _ctx: &CredentialContext<'_>) -> Result<Vec<(String, String)>> {
        Ok(match self.location {
            ApiKeyLocation::Query => vec![(self.name.clone(), self.value.clone())],
            _ => Vec::new(),
        })
    }
}

/// Several providers given to one client, all sent: each one's headers and query parameters in
/// the order given, a later header replacing an earlier one of the same name (two
/// `Authorization` headers are ambiguous). So a bearer token and an API key both go.
pub(crate) struct AllOf(pub(crate) Vec<std::sync::Arc<dyn CredentialProvider>>);

#[async_trait]
impl CredentialProvider for AllOf {
    async fn headers(&self, ctx: &CredentialContext<'_>) -> Result<Vec<(HeaderName, HeaderValue)>> {
        let mut all: Vec<(HeaderName, HeaderValue)> = Vec::new();
        for provider in &self.0 {
            let found = provider.headers(ctx).await?;
            all.retain(|(name, _)| !found.iter().any(|(n, _)| n == name));
            all.extend(found);
        }
        Ok(all)
    }

    async fn query(&self, ctx: &CredentialContext<'_>) -> Result<Vec<(String, String)>> {
        let mut all = Vec::new();
        for provider in &self.0 {
            all.extend(provider.query(ctx).await?);
        }
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn several_providers_are_all_sent_and_a_later_header_wins() {
        let card: crate::model::AgentCard = serde_json::from_value(serde_json::json!({
            "name": "a", "description": "d", "version": "1", "supportedInterfaces": [], "capabilities": {},
            "defaultInputModes": [], "defaultOutputModes": [], "skills": []}))
        .unwrap();
        let ctx = CredentialContext { url: "http://x/", method: "SendMessage", card: &card };
        let all = AllOf(vec![
            Arc::new(StaticBearer::new("t1")),
            Arc::new(ApiKey::header("X-API-Key", "k")),
            Arc::new(ApiKey::query("key", "q")),
            Arc::new(StaticBearer::new("t2")),
        ]);
        let headers = all.headers(&ctx).await.unwrap();
        let names: Vec<_> = headers.iter().map(|(n, v)| (n.as_str(), v.to_str().unwrap())).collect();
        assert_eq!(names, [("x-api-key", "k"), ("authorization", "Bearer t2")]);
        assert_eq!(all.query(&ctx).await.unwrap(), [("key".to_owned(), "q".to_owned())]);
    }
}
