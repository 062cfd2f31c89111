//! Credentials that follow the agent card: [`ClientCredentials`] (the OAuth 2.0 client
//! credentials grant, RFC 6749 §4.4: token fetched, cached, refreshed before it expires) and
//! [`CardCredentials`], which holds the secrets a client has and uses, on each call, the one
//! the agent's card asks for (`securityRequirements`, else `securitySchemes`).

use super::credentials::{ApiKey, ApiKeyLocation, CredentialContext, CredentialProvider, StaticBearer};
use crate::error::{A2AError, ErrorKind, Result};
use crate::model::{AgentCard, OAuthFlows, SecurityScheme};
use async_trait::async_trait;
use http::header::{AUTHORIZATION, HeaderName, HeaderValue};
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A token is refreshed this long before it expires, so no call carries one about to lapse.
const REFRESH_MARGIN: Duration = Duration::from_secs(30);

fn auth_error(why: impl Into<String>) -> A2AError {
    A2AError::new(ErrorKind::Unauthenticated, why)
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    token_type: String,
    /// Seconds; absent: the token is used until refused (re-fetched after an hour).
    expires_in: Option<u64>,
}

struct Cached {
    token: String,
    refresh_at: Instant,
}

/// OAuth 2.0 client credentials: `Authorization: Bearer <access token>` from `token_url`.
pub struct ClientCredentials {
    token_url: String,
    client_id: String,
    client_secret: String,
    scopes: Vec<String>,
    http: reqwest::Client,
    cached: Mutex<Option<Cached>>,
    /// One fetch at a time; concurrent calls wait for its token.
    fetching: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClientCredentials({:?} at {:?}, <redacted>)", self.client_id, self.token_url)
    }
}

impl ClientCredentials {
    pub fn new(token_url: impl Into<String>, client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        let token_url = token_url.into();
        let mut builder = reqwest::Client::builder().timeout(Duration::from_secs(30));
        if reqwest::Url::parse(&token_url).is_ok_and(|u| is_loopback(&u)) {
            // A proxy would see the secret of a plain-http token request to this machine.
            builder = builder.no_proxy();
        }
        let http = builder.build().unwrap_or_default();
        Self {
            token_url,
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            scopes: Vec::new(),
            http,
            cached: Mutex::new(None),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// Scopes to ask for (space-joined in `scope`).
    pub fn with_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    fn fresh(&self) -> Option<String> {
        let cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        cached.as_ref().filter(|c| Instant::now() < c.refresh_at).map(|c| c.token.clone())
    }

    /// A valid access token: the cached one, or a new one from the token endpoint.
    pub async fn token(&self) -> Result<String> {
        if let Some(t) = self.fresh() {
            return Ok(t);
        }
        let _one = self.fetching.lock().await;
        if let Some(t) = self.fresh() {
            return Ok(t);
        }
        let mut form = vec![("grant_type", "client_credentials".to_owned())];
        if !self.scopes.is_empty() {
            form.push(("scope", self.scopes.join(" ")));
        }
        let body = form
            .iter()
            .map(|(k, v)| format!("{k}={}", form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>()));
        let mut resp = self
            .http
            .post(&self.token_url)
            .basic_auth(&self.client_id, Some(&self.client_secret))
            .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(http::header::ACCEPT, "application/json")
            .body(body.collect::<Vec<_>>().join("&"))
            .send()
            .await
            .map_err(|e| A2AError::new(ErrorKind::Transport, format!("token endpoint {}: {e}", self.token_url)))?;
        let status = resp.status();
        // A token response is small; a larger one is refused rather than read.
        let bytes = super::transport::read_body(&mut resp, 64 * 1024, Duration::from_secs(30)).await?;
        if !status.is_success() {
            // RFC 6749 §5.2: `{"error": "invalid_client", ...}`; the secret never appears.
            let reason = serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
                .unwrap_or_else(|| format!("HTTP {status}"));
            return Err(auth_error(format!("the token endpoint refused the client credentials: {reason}")));
        }
        let token: TokenResponse =
            serde_json::from_slice(&bytes).map_err(|e| auth_error(format!("the token endpoint's answer: {e}")))?;
        if !token.token_type.is_empty() && !token.token_type.eq_ignore_ascii_case("bearer") {
            return Err(auth_error(format!("token type {:?} is not supported (bearer only)", token.token_type)));
        }
        let lifetime = super::card::delta_seconds(token.expires_in.unwrap_or(3600));
        let refresh_at = Instant::now() + lifetime.saturating_sub(REFRESH_MARGIN);
        *self.cached.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(Cached { token: token.access_token.clone(), refresh_at });
        Ok(token.access_token)
    }
}

#[async_trait]
impl CredentialProvider for ClientCredentials {
    async fn headers(&self, _ctx: &CredentialContext<'_>) -> Result<Vec<(HeaderName, HeaderValue)>> {
        let mut value = HeaderValue::from_str(&format!("Bearer {}", self.token().await?))
            .map_err(|_| auth_error("the access token is not a valid header value"))?;
        value.set_sensitive(true);
        Ok(vec![(AUTHORIZATION, value)])
    }
}

/// The secrets a client holds; each call uses the one the agent's card asks for.
#[derive(Default)]
pub struct CardCredentials {
    bearer: Option<String>,
    api_key: Option<String>,
    client: Option<(String, String)>,
    /// Client-credentials providers by token URL (each caches its own token).
    oauth: Mutex<HashMap<String, std::sync::Arc<ClientCredentials>>>,
}

impl CardCredentials {
    pub fn new() -> Self {
        Self::default()
    }

    /// For `httpAuthSecurityScheme` Bearer (and OpenID Connect schemes: a token you obtained).
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// For `apiKeySecurityScheme`, sent where and as the card says.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// For `oauth2SecurityScheme` with a `clientCredentials` flow (token URL and scopes from
    /// the card).
    pub fn with_client_credentials(mut self, client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        self.client = Some((client_id.into(), client_secret.into()));
        self
    }

    /// The schemes the card asks for, in its order of preference: each requirement's schemes
    /// (with their scopes), then any other declared scheme.
    fn wanted(card: &AgentCard) -> Vec<(&str, &SecurityScheme, Vec<String>)> {
        let mut out: Vec<(&str, &SecurityScheme, Vec<String>)> = Vec::new();
        for req in &card.security_requirements {
            for (name, scopes) in &req.schemes {
                if let Some(s) = card.security_schemes.get(name) {
                    out.push((name.as_str(), s, scopes.list.clone()));
                }
            }
        }
        for (name, s) in &card.security_schemes {
            if !out.iter().any(|(n, _, _)| n == name) {
                out.push((name.as_str(), s, Vec::new()));
            }
        }
        out
    }

    /// The provider for the first scheme of the card this client has a secret for (a token
    /// endpoint the secret must not go to is passed over, and named if nothing else fits).
    fn choose(&self, card: &AgentCard) -> Option<Chosen> {
        let mut refused = None;
        for (_, scheme, scopes) in Self::wanted(card) {
            match scheme {
                SecurityScheme::HttpAuth(h) if h.scheme.eq_ignore_ascii_case("bearer") => {
                    if let Some(t) = &self.bearer {
                        return Some(Chosen::Bearer(StaticBearer::new(t.clone())));
                    }
                }
                SecurityScheme::OpenIdConnect(_) => {
                    if let Some(t) = &self.bearer {
                        return Some(Chosen::Bearer(StaticBearer::new(t.clone())));
                    }
                }
                SecurityScheme::ApiKey(k) => {
                    if let Some(v) = &self.api_key {
                        let location = match k.location.to_ascii_lowercase().as_str() {
                            "query" => ApiKeyLocation::Query,
                            "cookie" => ApiKeyLocation::Cookie,
                            _ => ApiKeyLocation::Header,
                        };
                        return Some(Chosen::ApiKey(ApiKey { name: k.name.clone(), value: v.clone(), location }));
                    }
                }
                SecurityScheme::OAuth2(o) => {
                    if let (Some((id, secret)), OAuthFlows::ClientCredentials(flow)) = (&self.client, &o.flows) {
                        if let Err(e) = tls_or_loopback(&flow.token_url) {
                            refused.get_or_insert(e);
                            continue;
                        }
                        let mut cache = self.oauth.lock().unwrap_or_else(|p| p.into_inner());
                        let provider = cache
                            .entry(flow.token_url.clone())
                            .or_insert_with(|| {
                                std::sync::Arc::new(
                                    ClientCredentials::new(&flow.token_url, id, secret).with_scopes(scopes),
                                )
                            })
                            .clone();
                        return Some(Chosen::OAuth(provider));
                    }
                }
                _ => {}
            }
        }
        refused.map(Chosen::Refused)
    }
}

enum Chosen {
    Bearer(StaticBearer),
    ApiKey(ApiKey),
    OAuth(std::sync::Arc<ClientCredentials>),
    /// The card asks for a secret we have, somewhere it must not go.
    Refused(A2AError),
}

fn is_loopback(url: &reqwest::Url) -> bool {
    let host = url.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The card's `tokenUrl` gets the client secret: only over TLS (RFC 6749 §3.2: the token
/// endpoint MUST be reached over TLS), or to this machine (development). Otherwise a card naming
/// a plain-http endpoint (or one altered on its way over plain http) would have the secret sent
/// in clear. Which https endpoint may have it is the card's to say: give the client only secrets
/// meant for that agent.
fn tls_or_loopback(token_url: &str) -> Result<()> {
    let url = reqwest::Url::parse(token_url).map_err(|e| {
        A2AError::new(ErrorKind::InvalidAgentResponse, format!("the card's tokenUrl {token_url:?}: {e}"))
    })?;
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(&url) => Ok(()),
        scheme => Err(A2AError::new(
            ErrorKind::InvalidAgentResponse,
            format!(
                "the card's OAuth tokenUrl {token_url} is not https ({scheme}): client credentials are sent only \
                 over TLS (RFC 6749 §3.2), or over http to this machine"
            ),
        )),
    }
}

#[async_trait]
impl CredentialProvider for CardCredentials {
    async fn headers(&self, ctx: &CredentialContext<'_>) -> Result<Vec<(HeaderName, HeaderValue)>> {
        match self.choose(ctx.card) {
            Some(Chosen::Bearer(p)) => p.headers(ctx).await,
            Some(Chosen::ApiKey(p)) => p.headers(ctx).await,
            Some(Chosen::OAuth(p)) => p.headers(ctx).await,
            Some(Chosen::Refused(e)) => Err(e),
            // The card asks for nothing we have: send none and let the agent say what it needs.
            None => Ok(Vec::new()),
        }
    }

    async fn query(&self, ctx: &CredentialContext<'_>) -> Result<Vec<(String, String)>> {
        match self.choose(ctx.card) {
            Some(Chosen::ApiKey(p)) => p.query(ctx).await,
            _ => Ok(Vec::new()),
        }
    }
}
