//! core's `signing` and `client::PushVerifier`: RFC 8785 canonical JSON, signed Agent Cards,
//! and the receiver's check of signed push notifications. JSON crosses as text.

use crate::errors;
use a2a_native::client::{PushVerifier as CoreVerifier, PushVerifierOptions};
use a2a_native::model::AgentCard;
use a2a_native::signing;
use napi::Result;

fn json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| errors::invalid(what, e.to_string()))
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
    signing::sign_card_named(&mut card, pem.as_bytes(), &alg, &kid, jku).map_err(errors::to_js)?;
    Ok(a2a_native::model::to_value(&card).to_string())
}

/// The kid of a signature that verifies under the JWKS (JSON text); UnauthenticatedError if none.
#[napi_derive::napi]
pub fn verify_card(card_json: String, jwks_json: String, algorithms: Vec<String>) -> Result<String> {
    let card: AgentCard = a2a_native::model::parse_value(json(&card_json, "card")?).map_err(errors::to_js)?;
    signing::verify_card_named(&card, json(&jwks_json, "jwks")?, &algorithms).map_err(errors::to_js)
}

#[napi_derive::napi]
pub struct PushVerifier {
    inner: CoreVerifier,
}

#[napi_derive::napi]
impl PushVerifier {
    /// `options_json`: core's description (`{"jwks", "audience", "issuer", "token", "maxAge"}`,
    /// `maxAge` in seconds).
    #[napi(constructor)]
    pub fn new(options_json: String) -> Result<Self> {
        let options = PushVerifierOptions::from_value(json(&options_json, "options")?).map_err(errors::to_js)?;
        Ok(Self { inner: options.verifier().map_err(errors::to_js)? })
    }

    /// `headers`: `[name, value]` pairs as received; `body`: the exact bytes. Returns JSON text
    /// `{"taskId", "jti", "issuedAt"}`.
    #[napi]
    pub fn verify(&self, headers: Vec<Vec<String>>, body: napi::bindgen_prelude::Buffer) -> Result<String> {
        let pairs = headers
            .into_iter()
            .map(|h| <[String; 2]>::try_from(h).map(|[name, value]| (name, value)))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|_| errors::invalid("headers", "expected [name, value]"))?;
        let verified = self.inner.verify_pairs(pairs, &body).map_err(errors::to_js)?;
        Ok(serde_json::to_string(&verified).expect("a verified push serialises"))
    }
}
