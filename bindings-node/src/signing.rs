//! core's `signing` and `client::PushVerifier`: RFC 8785 canonical JSON, signed Agent Cards,
//! and the receiver's check of signed push notifications. JSON crosses as text.

use crate::errors;
use a2a_native::client::PushVerifier as CoreVerifier;
use a2a_native::model::AgentCard;
use a2a_native::signing::{self, CardSigner};
use napi::Result;
use std::time::Duration;

fn json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| errors::invalid(what, e.to_string()))
}

fn algorithm(name: &str) -> Result<jsonwebtoken::Algorithm> {
    name.parse().map_err(|_| errors::invalid("alg", format!("unknown algorithm {name:?}")))
}

/// The RFC 8785 (JCS) form of a JSON text.
#[napi_derive::napi]
pub fn canonicalize(json_text: String) -> Result<String> {
    let value = json(&json_text, "value")?;
    let bytes = signing::canonicalize(&value).map_err(errors::to_js)?;
    String::from_utf8(bytes).map_err(|e| errors::invalid("value", e.to_string()))
}

/// The card (JSON text) with one more signature made with the PEM private key.
#[napi_derive::napi]
pub fn sign_card(card_json: String, pem: String, alg: String, kid: String, jku: Option<String>) -> Result<String> {
    let mut card: AgentCard = a2a_native::model::parse_value(json(&card_json, "card")?).map_err(errors::to_js)?;
    let mut signer = CardSigner::from_pem(pem.as_bytes(), algorithm(&alg)?, kid).map_err(errors::to_js)?;
    if let Some(jku) = jku {
        signer = signer.with_jku(jku);
    }
    signer.sign(&mut card).map_err(errors::to_js)?;
    Ok(a2a_native::model::to_value(&card).to_string())
}

/// The kid of a signature that verifies under the JWKS (JSON text); UnauthenticatedError if none.
#[napi_derive::napi]
pub fn verify_card(card_json: String, jwks_json: String, algorithms: Vec<String>) -> Result<String> {
    let card: AgentCard = a2a_native::model::parse_value(json(&card_json, "card")?).map_err(errors::to_js)?;
    let keys = json(&jwks_json, "jwks")?;
    let algs = algorithms.iter().map(|a| algorithm(a)).collect::<Result<Vec<_>>>()?;
    Ok(signing::verify_card(&card, &keys, &algs).map_err(errors::to_js)?.kid)
}

#[napi_derive::napi]
pub struct PushVerifier {
    inner: CoreVerifier,
}

#[napi_derive::napi]
impl PushVerifier {
    #[napi(constructor)]
    pub fn new(
        jwks_json: String,
        audience: String,
        issuer: Option<String>,
        token: Option<String>,
        max_age_ms: Option<f64>,
    ) -> Result<Self> {
        let mut inner = CoreVerifier::new(json::<a2a_native::auth::KeySet>(&jwks_json, "jwks")?, audience);
        if let Some(iss) = issuer {
            inner = inner.with_issuer(iss);
        }
        if let Some(t) = token {
            inner = inner.with_token(t);
        }
        if let Some(ms) = max_age_ms {
            let age = Duration::try_from_secs_f64(ms / 1000.0).map_err(|e| errors::invalid("maxAge", e.to_string()))?;
            inner = inner.with_max_age(age);
        }
        Ok(Self { inner })
    }

    /// `headers`: `[name, value]` pairs as received; `body`: the exact bytes. Returns JSON text
    /// `{"taskId", "jti", "issuedAt"}`.
    #[napi]
    pub fn verify(&self, headers: Vec<Vec<String>>, body: napi::bindgen_prelude::Buffer) -> Result<String> {
        let mut map = http::HeaderMap::new();
        for h in headers {
            let [name, value] =
                <[String; 2]>::try_from(h).map_err(|_| errors::invalid("headers", "expected [name, value]"))?;
            let name = http::HeaderName::try_from(name.as_str())
                .map_err(|_| errors::invalid("headers", format!("header name {name:?}")))?;
            let value = http::HeaderValue::try_from(value).map_err(|_| errors::invalid("headers", "a header value"))?;
            map.append(name, value);
        }
        let v = self.inner.verify(&map, &body).map_err(errors::to_js)?;
        Ok(serde_json::json!({"taskId": v.task_id, "jti": v.jti, "issuedAt": v.issued_at}).to_string())
    }
}
