//! core's `server::security::SecurityConfig` from the Python layer's `security` dict. Read
//! once (typed, unknown keys refused) into plain data; built into the core config when the
//! server starts, since push tokens name the bound address as their issuer.

use crate::errors;
use crate::options::Options;
use a2a_native::push::PushSigner;
use a2a_native::server::auth::{KeyLocation, RequiredScopes};
use a2a_native::server::security::{SecurityConfig, TlsFiles};
use a2a_native::server::{JwtConfig, KeySource, TaskVisibility};
use a2a_native::signing::CardSigner;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;
use std::time::Duration;

/// `(PEM private key, algorithm, kid)`.
type SigningKey = (Vec<u8>, String, String);

#[derive(Clone, Default)]
pub struct SecuritySpec {
    bearer_tokens: Vec<(String, String)>,
    api_keys: Vec<(String, String)>,
    api_key_location: Option<(String, String)>,
    jwt: Option<(JwtConfig, KeySource)>,
    tls: Option<TlsFiles>,
    required_scopes: Vec<(String, Vec<String>)>,
    card_signing_key: Option<SigningKey>,
    push_signing_key: Option<SigningKey>,
    pub visibility: TaskVisibility,
    /// Deliver push notifications to loopback and private addresses (intranets, tests).
    pub allow_private_webhooks: bool,
}

fn algorithm(name: &str) -> PyResult<jsonwebtoken::Algorithm> {
    name.parse().map_err(|_| PyValueError::new_err(format!("unknown algorithm {name:?}")))
}

fn jwt(dict: Bound<'_, PyDict>) -> PyResult<(JwtConfig, KeySource)> {
    let mut o = Options::new(Some(dict));
    let mut config = JwtConfig::default();
    config.issuers = o.get("issuers")?.unwrap_or_default();
    config.audiences = o.get("audiences")?.unwrap_or_default();
    if let Some(secs) = o.get::<f64>("leeway")? {
        config.leeway = Duration::try_from_secs_f64(secs).map_err(|e| PyValueError::new_err(format!("leeway: {e}")))?;
    }
    if let Some(algs) = o.get::<Vec<String>>("algorithms")? {
        config.algorithms = algs.iter().map(|a| algorithm(a)).collect::<PyResult<_>>()?;
    }
    let url = o.get::<String>("jwks_url")?;
    let jwks = o.get::<Bound<'_, PyAny>>("jwks")?;
    o.finish()?;
    let source = match (url, jwks) {
        (Some(url), None) => KeySource::Url(url),
        (None, Some(set)) => KeySource::Static(
            serde_json::from_value(crate::models::to_value(&set)?).map_err(|e| PyValueError::new_err(format!("jwks: {e}")))?,
        ),
        _ => return Err(PyValueError::new_err("jwt needs exactly one of jwks_url and jwks")),
    };
    Ok((config, source))
}

impl SecuritySpec {
    /// Reads the dict; `bearer_tokens` are `(token, principal)` pairs.
    pub fn read(bearer_tokens: Vec<(String, String)>, security: Option<Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut o = Options::new(security);
        let mut spec = SecuritySpec { bearer_tokens, ..Self::default() };
        spec.api_keys = o.get("api_keys")?.unwrap_or_default();
        spec.api_key_location = o.get("api_key_location")?;
        spec.jwt = o.get::<Bound<'_, PyDict>>("jwt")?.map(jwt).transpose()?;
        if let Some(tls) = o.get::<Bound<'_, PyDict>>("tls")? {
            let mut t = Options::new(Some(tls));
            let files = TlsFiles {
                cert: t.get("cert")?.ok_or_else(|| PyValueError::new_err("tls needs cert"))?,
                key: t.get("key")?.ok_or_else(|| PyValueError::new_err("tls needs key"))?,
                client_ca: t.get("client_ca")?,
            };
            t.finish()?;
            spec.tls = Some(files);
        }
        spec.required_scopes = o.get("required_scopes")?.unwrap_or_default();
        spec.card_signing_key = o.get("card_signing_key")?;
        spec.push_signing_key = o.get("push_signing_key")?;
        spec.allow_private_webhooks = o.get("allow_private_webhooks")?.unwrap_or(false);
        spec.visibility = match o.get::<String>("task_visibility")?.as_deref() {
            None | Some("principal") => TaskVisibility::PerPrincipal,
            Some("shared") => TaskVisibility::Shared,
            Some(other) => return Err(PyValueError::new_err(format!("task_visibility {other:?}: \"principal\" or \"shared\""))),
        };
        o.finish()?;
        // Build once now so a bad key or combination fails at construction, not at start.
        spec.build("http://127.0.0.1:0")?;
        Ok(spec)
    }

    pub fn tls_on(&self) -> bool {
        self.tls.is_some()
    }

    /// The core config; `issuer` (the server's base URL) is what push tokens name.
    pub fn build(&self, issuer: &str) -> PyResult<SecurityConfig> {
        let location = self.api_key_location.as_ref().map(|(kind, name)| match kind.as_str() {
            "query" => Ok(KeyLocation::Query(name.clone())),
            "cookie" => Ok(KeyLocation::Cookie(name.clone())),
            "header" => Ok(KeyLocation::Header(name.clone())),
            other => Err(PyValueError::new_err(format!("api_key_location {other:?}: header, query or cookie"))),
        });
        let scopes = self.required_scopes.iter().fold(RequiredScopes::new(), |r, (method, scopes)| {
            r.require(method, &scopes.iter().map(String::as_str).collect::<Vec<_>>())
        });
        let config = SecurityConfig {
            bearer_tokens: self.bearer_tokens.clone(),
            api_keys: self.api_keys.clone(),
            api_key_location: location.transpose()?,
            jwt: self.jwt.clone(),
            tls: self.tls.clone(),
            required_scopes: scopes,
            card_signer: self
                .card_signing_key
                .as_ref()
                .map(|(pem, alg, kid)| CardSigner::from_pem(pem, algorithm(alg)?, kid.clone()).map_err(errors::to_py))
                .transpose()?,
            push_signer: self
                .push_signing_key
                .as_ref()
                .map(|(pem, alg, kid)| {
                    PushSigner::from_pem(pem, algorithm(alg)?, kid.clone(), issuer).map(Arc::new).map_err(errors::to_py)
                })
                .transpose()?,
        };
        config.check().map_err(errors::to_py)?;
        Ok(config)
    }
}
