//! One description of an agent's security, shared by `a2a serve` and every binding: which
//! schemes it accepts (static bearer tokens, API keys, JWTs against a JWKS, client
//! certificates), the scopes operations need, TLS, and the keys that sign its card and its push
//! notifications. From it come the card's `securitySchemes` / `securityRequirements` (any one
//! scheme admits a caller), the authenticator that enforces them, and the TLS config.

use super::auth::{AnyOf, ApiKeys, Authenticator, BearerTokens, KeyLocation, Principal, RequiredScopes};
use super::jwt::{JwtBearer, JwtConfig, KeySource};
use super::tls::MutualTls;
use super::RequestHandler;
use crate::error::{A2AError, ErrorKind, Result};
use crate::model::AgentCard;
use crate::push::PushSigner;
use crate::signing::CardSigner;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;

/// TLS termination: PEM files, and a CA for client certificates (mutual TLS).
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub client_ca: Option<PathBuf>,
}

/// An agent's security (all optional; nothing set = an open agent).
#[derive(Default)]
pub struct SecurityConfig {
    /// `(token, principal name)`: `Authorization: Bearer <token>`.
    pub bearer_tokens: Vec<(String, String)>,
    /// `(key, principal name)`, read from `api_key_location`.
    pub api_keys: Vec<(String, String)>,
    /// Where API keys travel (default: the `X-API-Key` header).
    pub api_key_location: Option<KeyLocation>,
    /// Bearer JWTs validated against a JWKS (not together with `bearer_tokens`: both read
    /// `Authorization: Bearer`).
    pub jwt: Option<(JwtConfig, KeySource)>,
    pub tls: Option<TlsFiles>,
    /// Scopes per operation (403 without them).
    pub required_scopes: RequiredScopes,
    /// Signs the served cards (public and extended).
    pub card_signer: Option<CardSigner>,
    /// Signs push notifications; the public key is served at `push::JWKS_PATH`.
    pub push_signer: Option<Arc<PushSigner>>,
}

impl SecurityConfig {
    fn invalid(why: &str) -> A2AError {
        A2AError::new(ErrorKind::InvalidParams, why)
    }

    fn location(&self) -> KeyLocation {
        self.api_key_location.clone().unwrap_or_else(|| KeyLocation::Header("X-API-Key".into()))
    }

    /// Refuses combinations that cannot work.
    pub fn check(&self) -> Result<()> {
        if !self.bearer_tokens.is_empty() && self.jwt.is_some() {
            return Err(Self::invalid("static bearer tokens and JWT validation both read `Authorization: Bearer`; choose one"));
        }
        Ok(())
    }

    /// Declares the schemes on `card` (each alone admits a caller) and signs it if asked.
    pub fn apply_to_card(&self, card: &mut AgentCard) -> Result<()> {
        let mut schemes = Vec::new();
        if !self.bearer_tokens.is_empty() || self.jwt.is_some() {
            let format = if self.jwt.is_some() { "JWT" } else { "" };
            schemes.push(("bearer", json!({"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": format}})));
        }
        if !self.api_keys.is_empty() {
            let (location, name) = match self.location() {
                KeyLocation::Header(n) => ("header", n),
                KeyLocation::Query(n) => ("query", n),
                KeyLocation::Cookie(n) => ("cookie", n),
            };
            schemes.push(("apiKey", json!({"apiKeySecurityScheme": {"location": location, "name": name}})));
        }
        if self.tls.as_ref().is_some_and(|t| t.client_ca.is_some()) {
            schemes.push(("mtls", json!({"mtlsSecurityScheme": {}})));
        }
        for (name, scheme) in schemes {
            let scheme = serde_json::from_value(scheme).map_err(|e| A2AError::internal(format!("scheme {name}: {e}")))?;
            card.security_schemes.insert(name.to_owned(), scheme);
            let requirement = serde_json::from_value(json!({"schemes": {name: {"list": []}}}))
                .map_err(|e| A2AError::internal(e.to_string()))?;
            card.security_requirements.push(requirement);
        }
        if let Some(signer) = &self.card_signer {
            signer.sign(card)?;
        }
        Ok(())
    }

    /// The authenticator for the configured schemes (`None` without any).
    pub fn authenticator(&self) -> Option<Arc<dyn Authenticator>> {
        let who = |name: &str| Principal { name: name.into(), scopes: Vec::new() };
        let mut schemes: Vec<Arc<dyn Authenticator>> = Vec::new();
        if !self.bearer_tokens.is_empty() {
            let tokens = self.bearer_tokens.iter().fold(BearerTokens::new(), |b, (t, n)| b.with_token(t.clone(), who(n)));
            schemes.push(Arc::new(tokens));
        }
        if let Some((config, source)) = &self.jwt {
            schemes.push(Arc::new(JwtBearer::new(config.clone(), source.clone())));
        }
        if !self.api_keys.is_empty() {
            let keys = self.api_keys.iter().fold(ApiKeys::new(self.location()), |k, (key, n)| k.with_key(key.clone(), who(n)));
            schemes.push(Arc::new(keys));
        }
        if self.tls.as_ref().is_some_and(|t| t.client_ca.is_some()) {
            schemes.push(Arc::new(MutualTls::new().any_verified()));
        }
        match schemes.len() {
            0 => None,
            1 => schemes.pop(),
            _ => Some(Arc::new(AnyOf::new(schemes))),
        }
    }

    /// The TLS config, when TLS is on.
    pub fn tls_config(&self) -> Result<Option<Arc<rustls::ServerConfig>>> {
        self.tls
            .as_ref()
            .map(|t| super::tls::server_config(&t.cert, &t.key, t.client_ca.as_deref()))
            .transpose()
    }

    /// `handler` with this authenticator and these required scopes.
    pub fn secure(&self, mut handler: RequestHandler) -> RequestHandler {
        if let Some(auth) = self.authenticator() {
            handler = handler.with_authenticator(auth);
        }
        handler.with_required_scopes(self.required_scopes.clone())
    }
}
