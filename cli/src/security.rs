//! `a2a serve`'s security options, read into core's `SecurityConfig` (which declares the
//! schemes in the card, enforces them, and sets up TLS and the signing keys).

use a2a_native::server::security::{SecurityConfig, SecuritySpec};
use clap::Args;
use serde_json::json;
use std::path::PathBuf;

#[derive(Args, Default)]
pub struct SecurityArgs {
    /// Require `Authorization: Bearer TOKEN` on every request (the card declares the scheme);
    /// the agent card stays public. Also read from A2A_BEARER_TOKEN.
    #[arg(long, env = "A2A_BEARER_TOKEN", value_name = "TOKEN", hide_env_values = true, conflicts_with = "jwt_jwks")]
    pub bearer_token: Option<String>,
    /// Accept this API key in the `X-API-Key` header (the card declares the scheme); repeat it
    /// for several. `NAME=KEY` names the caller the key stands for (its tasks are its own:
    /// tenancy), a bare `KEY` is the caller `api-key` (write a key containing `=` as NAME=KEY).
    /// Also read from A2A_SERVE_API_KEY (one key).
    #[arg(long, env = "A2A_SERVE_API_KEY", value_name = "[NAME=]KEY", hide_env_values = true)]
    pub api_key: Vec<String>,
    /// Accept bearer JWTs signed by a key of this JWKS URL (the issuer's `jwks_uri`).
    #[arg(long, value_name = "URL")]
    pub jwt_jwks: Option<String>,
    /// With --jwt-jwks: the required `iss` (repeat it to accept several issuers).
    #[arg(long, value_name = "ISS", requires = "jwt_jwks")]
    pub jwt_issuer: Vec<String>,
    /// With --jwt-jwks: the required `aud` (repeat it to accept several audiences).
    #[arg(long, value_name = "AUD", requires = "jwt_jwks")]
    pub jwt_audience: Vec<String>,
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
    /// Deliver push notifications to non-public targets (loopback, private ranges; refused by
    /// default). Alone: any target. With a comma-separated list, only those host names
    /// (matched by name), IP addresses and CIDR ranges (matched against the resolved
    /// address): --allow-private-webhooks=127.0.0.1,10.0.0.0/8,::1,hooks.internal
    #[arg(long, value_name = "TARGETS", num_args = 0..=1, require_equals = true, value_delimiter = ',')]
    pub allow_private_webhooks: Option<Vec<String>>,
}

/// `NAME=KEY` → (KEY, NAME) when NAME is a plain name; anything else is a key of `api-key`.
/// A base64 key ends in `=` padding: `S2V5MQ==` is that key, not the key `=` of a caller
/// `S2V5MQ` (which anyone could then send), so a KEY of nothing but `=` does not split.
fn named_key(given: &str) -> (&str, &str) {
    let plain = |n: &str| {
        n.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && n.chars().all(|c| c.is_ascii_alphanumeric() || "_.-@".contains(c))
    };
    match given.split_once('=') {
        Some((name, key)) if plain(name) && !key.bytes().all(|b| b == b'=') => (key, name),
        _ => (given, "api-key"),
    }
}

impl SecurityArgs {
    /// The core's description of this security (`issuer`: this agent's base URL, for push
    /// notification tokens), through the same JSON reader the bindings use.
    pub fn config(&self, issuer: &str) -> Result<SecurityConfig, String> {
        let pem = |p: &PathBuf| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
        let key = |p: &Option<PathBuf>, kid: &str| -> Result<Option<serde_json::Value>, String> {
            p.as_ref().map(|p| Ok(json!({"pem": pem(p)?, "alg": "ES256", "kid": kid}))).transpose()
        };
        // An empty token or key (an unset variable, say) would serve everyone: refused.
        if self.bearer_token.as_deref() == Some("") || self.api_key.iter().any(String::is_empty) {
            return Err("--bearer-token / --api-key (or A2A_BEARER_TOKEN / A2A_SERVE_API_KEY) is empty: \
                        give the credential, or leave the option out to serve without it"
                .into());
        }
        let mut spec = json!({});
        if let Some(token) = &self.bearer_token {
            spec["bearerTokens"] = json!({token: "bearer-token"});
        }
        let mut keys = serde_json::Map::new();
        for given in &self.api_key {
            let (key, name) = named_key(given);
            if keys.insert(key.to_owned(), json!(name)).is_some() {
                return Err(format!("--api-key: the key of {name} is given twice"));
            }
        }
        if !keys.is_empty() {
            spec["apiKeys"] = serde_json::Value::Object(keys);
        }
        if let Some(url) = &self.jwt_jwks {
            if self.jwt_issuer.is_empty() || self.jwt_audience.is_empty() {
                // Else any issuer's token for any service, as long as the JWKS holds its key.
                return Err("--jwt-jwks needs --jwt-issuer and --jwt-audience: the issuers whose tokens are \
                            accepted and this server's audiences"
                    .into());
            }
            spec["jwt"] = json!({"jwksUrl": url, "issuers": self.jwt_issuer, "audiences": self.jwt_audience});
        }
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            spec["tls"] = json!({"cert": cert, "key": key, "clientCa": self.tls_client_ca});
        }
        if let Some(k) = key(&self.card_signing_key, "card-1")? {
            spec["cardSigningKey"] = k;
        }
        if let Some(k) = key(&self.push_signing_key, "push-1")? {
            spec["pushSigningKey"] = k;
        }
        match self.allow_private_webhooks.as_deref() {
            None => {}
            Some([]) => spec["allowPrivateWebhooks"] = json!(true),
            Some(targets) => spec["allowPrivateWebhooks"] = json!(targets),
        }
        SecuritySpec::from_value(spec).and_then(|s| s.build(issuer)).map_err(|e| e.to_string())
    }

    pub fn tls_on(&self) -> bool {
        self.tls_cert.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::{SecurityArgs, named_key};

    #[test]
    fn an_empty_token_or_key_is_refused_not_an_open_server() {
        let token = SecurityArgs { bearer_token: Some(String::new()), ..Default::default() };
        let key = SecurityArgs { api_key: vec!["k".into(), String::new()], ..Default::default() };
        for args in [token, key] {
            assert!(args.config("http://x").is_err_and(|e| e.contains("is empty")));
        }
        let given = SecurityArgs { bearer_token: Some("t".into()), ..Default::default() };
        assert!(given.config("http://x").is_ok());
    }

    #[test]
    fn api_keys_name_their_callers() {
        assert_eq!(named_key("k-123"), ("k-123", "api-key"));
        assert_eq!(named_key("alice=k-1"), ("k-1", "alice"));
        assert_eq!(named_key("svc.bot@x=a=b"), ("a=b", "svc.bot@x"));
        assert_eq!(named_key("=k"), ("=k", "api-key"));
        assert_eq!(named_key("9x=k"), ("9x=k", "api-key"));
        assert_eq!(named_key("alice="), ("alice=", "api-key"));
        // Base64 keys with their padding are whole keys; a named one keeps its padding.
        assert_eq!(named_key("MDEyMzQ1Njc4OWFiY2RlZg=="), ("MDEyMzQ1Njc4OWFiY2RlZg==", "api-key"));
        assert_eq!(named_key("S2V5MQ==="), ("S2V5MQ===", "api-key"));
        assert_eq!(named_key("alice=S2V5MQ=="), ("S2V5MQ==", "alice"));
    }
}
