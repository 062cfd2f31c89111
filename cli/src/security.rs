//! `a2a serve`'s security options, read into core's `SecurityConfig` (which declares the
//! schemes in the card, enforces them, and sets up TLS and the signing keys).

use a2a_native::push::PushSigner;
use a2a_native::server::security::{SecurityConfig, TlsFiles};
use a2a_native::server::{JwtConfig, KeySource};
use a2a_native::signing::CardSigner;
use clap::Args;
use jsonwebtoken::Algorithm;
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
    /// The core's description of this security (`issuer`: this agent's base URL, for push
    /// notification tokens).
    pub fn config(&self, issuer: &str) -> Result<SecurityConfig, String> {
        let read = |p: &PathBuf| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
        let mut config = SecurityConfig::default();
        if let Some(token) = self.bearer_token.as_deref().filter(|t| !t.is_empty()) {
            config.bearer_tokens.push((token.to_owned(), "bearer-token".into()));
        }
        if let Some(key) = self.api_key.as_deref().filter(|k| !k.is_empty()) {
            config.api_keys.push((key.to_owned(), "api-key".into()));
        }
        if let Some(url) = &self.jwt_jwks {
            let jwt = JwtConfig {
                issuers: self.jwt_issuer.iter().cloned().collect(),
                audiences: self.jwt_audience.iter().cloned().collect(),
                ..JwtConfig::default()
            };
            config.jwt = Some((jwt, KeySource::Url(url.clone())));
        }
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            config.tls = Some(TlsFiles { cert: cert.clone(), key: key.clone(), client_ca: self.tls_client_ca.clone() });
        }
        if let Some(path) = &self.card_signing_key {
            config.card_signer = Some(CardSigner::from_pem(&read(path)?, Algorithm::ES256, "card-1").map_err(|e| e.message)?);
        }
        if let Some(path) = &self.push_signing_key {
            let signer = PushSigner::from_pem(&read(path)?, Algorithm::ES256, "push-1", issuer).map_err(|e| e.message)?;
            config.push_signer = Some(Arc::new(signer));
        }
        config.check().map_err(|e| e.message)?;
        Ok(config)
    }

    pub fn tls_on(&self) -> bool {
        self.tls_cert.is_some()
    }
}
