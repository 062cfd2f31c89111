//! `a2a serve`'s security options: which schemes the card declares and the authenticator that
//! enforces them (any one of them admits a caller), TLS, and the signing keys for the card and
//! for push notifications.

use a2a_native::model::AgentCard;
use a2a_native::push::PushSigner;
use a2a_native::server::auth::{AnyOf, ApiKeys, Authenticator, BearerTokens, KeyLocation, Principal};
use a2a_native::server::{JwtBearer, JwtConfig, KeySource, MutualTls};
use a2a_native::signing::CardSigner;
use clap::Args;
use jsonwebtoken::Algorithm;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args, Default)]
pub struct SecurityArgs {
    /// Require `Authorization: Bearer TOKEN` on every request (the card declares the scheme);
    /// the agent card stays public. Also read from A2A_BEARER_TOKEN.
    #[arg(long, env = "A2A_BEARER_TOKEN", value_name = "TOKEN", hide_env_values = true, conflicts_with = "jwt_jwks")]
    pub bearer_token: Option<String>,
    /// Accept this API key in the `X-API-Key` header (the card declares the scheme). Also read
    /// from A2A_SERVE_API_KEY.
    #[arg(long, env = "A2A_SERVE_API_KEY", value_name = "KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Accept bearer JWTs signed by a key of this JWKS URL (the issuer's `jwks_uri`).
    #[arg(long, value_name = "URL")]
    pub jwt_jwks: Option<String>,
    /// With --jwt-jwks: the required `iss`.
    #[arg(long, value_name = "ISS", requires = "jwt_jwks")]
    pub jwt_issuer: Option<String>,
    /// With --jwt-jwks: the required `aud`.
    #[arg(long, value_name = "AUD", requires = "jwt_jwks")]
    pub jwt_audience: Option<String>,
    /// Serve HTTPS with this PEM certificate chain (and --tls-key); HSTS is sent.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// With TLS: require client certificates issued by this CA (mutual TLS); each verified
    /// certificate is a caller named by its SHA-256 fingerprint.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,
    /// Sign the served agent card with this ES256 private key (PEM; kid "card-1").
    #[arg(long, value_name = "PEM")]
    pub card_signing_key: Option<PathBuf>,
    /// Sign push notifications with this ES256 private key (PEM; kid "push-1"); the public key
    /// is served at /.well-known/a2a-push-jwks.json.
    #[arg(long, value_name = "PEM")]
    pub push_signing_key: Option<PathBuf>,
}

impl SecurityArgs {
    pub fn tls(&self) -> Result<Option<Arc<rustls::ServerConfig>>, String> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => a2a_native::server::tls::server_config(cert, key, self.tls_client_ca.as_deref())
                .map(Some)
                .map_err(|e| e.message),
            _ => Ok(None),
        }
    }

    pub fn push_signer(&self, issuer: &str) -> Result<Option<Arc<PushSigner>>, String> {
        let Some(path) = &self.push_signing_key else { return Ok(None) };
        let pem = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        PushSigner::from_pem(&pem, Algorithm::ES256, "push-1", issuer).map(|s| Some(Arc::new(s))).map_err(|e| e.message)
    }

    /// Declares the configured schemes on `card` (any one suffices) and signs it when asked.
    pub fn apply_to_card(&self, card: &mut AgentCard) -> Result<(), String> {
        let mut schemes = serde_json::Map::new();
        if self.bearer_token().is_some() || self.jwt_jwks.is_some() {
            let format = if self.jwt_jwks.is_some() { "JWT" } else { "" };
            schemes.insert("bearer".into(), json!({"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": format}}));
        }
        if self.api_key.as_deref().is_some_and(|k| !k.is_empty()) {
            schemes.insert("apiKey".into(), json!({"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}));
        }
        if self.tls_client_ca.is_some() {
            schemes.insert("mtls".into(), json!({"mtlsSecurityScheme": {}}));
        }
        for (name, scheme) in schemes {
            let scheme = serde_json::from_value(scheme).map_err(|e| format!("security scheme {name}: {e}"))?;
            card.security_schemes.insert(name.clone(), scheme);
            let requirement = serde_json::from_value(json!({"schemes": {name: {"list": []}}})).map_err(|e| e.to_string())?;
            card.security_requirements.push(requirement);
        }
        if let Some(path) = &self.card_signing_key {
            let pem = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            CardSigner::from_pem(&pem, Algorithm::ES256, "card-1").and_then(|s| s.sign(card)).map_err(|e| e.message)?;
        }
        Ok(())
    }

    /// The authenticator for the configured schemes (`None` without any).
    pub fn authenticator(&self) -> Option<Arc<dyn Authenticator>> {
        let mut schemes: Vec<Arc<dyn Authenticator>> = Vec::new();
        let who = |name: &str| Principal { name: name.into(), scopes: Vec::new() };
        if let Some(token) = self.bearer_token() {
            schemes.push(Arc::new(BearerTokens::new().with_token(token, who("bearer-token"))));
        }
        if let Some(url) = &self.jwt_jwks {
            let config = JwtConfig {
                issuers: self.jwt_issuer.iter().cloned().collect(),
                audiences: self.jwt_audience.iter().cloned().collect(),
                ..JwtConfig::default()
            };
            schemes.push(Arc::new(JwtBearer::new(config, KeySource::Url(url.clone()))));
        }
        if let Some(key) = self.api_key.as_deref().filter(|k| !k.is_empty()) {
            schemes.push(Arc::new(ApiKeys::new(KeyLocation::Header("X-API-Key".into())).with_key(key, who("api-key"))));
        }
        if self.tls_client_ca.is_some() {
            schemes.push(Arc::new(MutualTls::new().any_verified()));
        }
        match schemes.len() {
            0 => None,
            1 => schemes.pop(),
            _ => Some(Arc::new(AnyOf::new(schemes))),
        }
    }

    fn bearer_token(&self) -> Option<&str> {
        self.bearer_token.as_deref().filter(|t| !t.is_empty())
    }
}
