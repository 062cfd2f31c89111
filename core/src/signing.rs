//! Signed Agent Cards (spec §8.4): a detached JWS (RFC 7515) over the card's canonical form.
//!
//! The payload is the card without `signatures`, in canonical ProtoJSON (the core's writer
//! already drops defaults and keeps REQUIRED and explicitly set optional fields), then
//! canonicalised by JCS (RFC 8785, the `serde_json_canonicalizer` crate). The signing input is
//! `BASE64URL(protected) "." BASE64URL(payload)`; the card stores only `protected` and
//! `signature`. The protected header carries `alg`, `kid`, `typ: "JOSE"` and, when given,
//! `jku`. A card verifies when at least one of its signatures does, with a key of the set and
//! an algorithm the verifier accepts (several signatures allow key rotation). A card with a 0.3
//! form is also signed over what a2a-sdk 0.3 checks (`model::v03::signed_payloads`).

use crate::auth::{KeyRefusal, KeySet, jose};
pub use crate::auth::{algorithm_named, private_key};
use crate::error::{A2AError, ErrorKind, Result};
use crate::model::{self, AgentCard, AgentCardSignature};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};
use serde_json::{Value, json};

/// Deeper JSON is refused: nesting comes from attacker-controlled extension params, and
/// canonicalising is recursive.
pub const MAX_DEPTH: usize = 128;

fn invalid(why: impl Into<String>) -> A2AError {
    A2AError::new(ErrorKind::InvalidParams, why)
}

/// Integers beyond ±(2^53 − 1) have no exact IEEE 754 form, so implementations would sign
/// different bytes for them (RFC 8785 §3.2.2.3); they are refused, as other JCS
/// implementations do.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Refuses nesting deeper than `MAX_DEPTH` and integers outside the safe range.
fn check(v: &Value, depth: usize) -> Result<()> {
    match v {
        Value::Array(_) | Value::Object(_) if depth >= MAX_DEPTH => {
            Err(invalid(format!("nesting deeper than {MAX_DEPTH}")))
        }
        Value::Array(items) => items.iter().try_for_each(|i| check(i, depth + 1)),
        Value::Object(map) => map.values().try_for_each(|i| check(i, depth + 1)),
        Value::Number(n) if n.as_i64().map(i64::unsigned_abs).or(n.as_u64()).is_some_and(|m| m > MAX_SAFE_INTEGER) => {
            Err(invalid(format!("{n} is outside the integers JSON numbers hold exactly (±2^53−1)")))
        }
        _ => Ok(()),
    }
}

/// RFC 8785 canonical bytes of `value`.
pub fn canonicalize(value: &Value) -> Result<Vec<u8>> {
    check(value, 0)?;
    serde_json_canonicalizer::to_vec(value).map_err(|e| invalid(format!("cannot canonicalise: {e}")))
}

/// The bytes a card's signatures cover.
pub fn card_payload(card: &AgentCard) -> Result<Vec<u8>> {
    let mut value = model::to_value(card);
    if let Some(obj) = value.as_object_mut() {
        obj.remove("signatures");
    }
    canonicalize(&value)
}

/// base64url (no padding) SHA-256 of a push notification body: the `bodySha256` claim that
/// binds a notification's token to its body.
pub fn body_digest(body: &[u8]) -> String {
    use sha2::Digest;
    URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(body))
}

/// Signs cards with one private key.
pub struct CardSigner {
    key: EncodingKey,
    alg: Algorithm,
    kid: String,
    jku: Option<String>,
}

impl CardSigner {
    /// `pem`: a PKCS#8 (or SEC1 for EC, PKCS#1 for RSA) private key for `alg` (ES256, RS256 or EdDSA).
    pub fn from_pem(pem: &[u8], alg: Algorithm, kid: impl Into<String>) -> Result<Self> {
        Ok(Self { key: private_key(pem, alg)?, alg, kid: kid.into(), jku: None })
    }

    /// Where verifiers find the public key (a JWKS URL), put in the protected header.
    pub fn with_jku(mut self, jku: impl Into<String>) -> Self {
        self.jku = Some(jku.into());
        self
    }

    /// Appends a signature over `card` (existing signatures are not covered, and stay); then,
    /// when the card has a 0.3 form, one over each form a 0.3 verifier checks
    /// (`v03::signed_payloads`), so a2a-sdk 0.3 clients verify it too.
    pub fn sign(&self, card: &mut AgentCard) -> Result<()> {
        let mut header = json!({"alg": alg_name(self.alg), "kid": self.kid, "typ": "JOSE"});
        if let Some(jku) = &self.jku {
            header["jku"] = json!(jku);
        }
        let protected = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&header).expect("a JSON object"));
        let mut payloads = vec![card_payload(card)?];
        payloads.extend(model::v03::signed_payloads(card));
        for payload in payloads {
            let input = signing_input(&protected, &payload);
            let signature = jsonwebtoken::crypto::sign(input.as_bytes(), &self.key, self.alg)
                .map_err(|e| A2AError::internal(format!("signing failed: {e}")))?;
            card.signatures.push(AgentCardSignature { protected: protected.clone(), signature, header: None });
        }
        Ok(())
    }
}

fn alg_name(alg: Algorithm) -> String {
    serde_json::to_value(alg).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

fn signing_input(protected: &str, payload: &[u8]) -> String {
    format!("{protected}.{}", URL_SAFE_NO_PAD.encode(payload))
}

/// What verified a card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub kid: String,
    pub alg: Algorithm,
}

/// Checks that at least one of the card's signatures is valid under `keys` with one of
/// `algorithms`. Unauthenticated naming why otherwise (no signature, unknown key, bad
/// signature, algorithm not accepted).
pub fn verify_card(card: &AgentCard, keys: &KeySet, algorithms: &[Algorithm]) -> Result<Verified> {
    if card.signatures.is_empty() {
        return Err(A2AError::new(ErrorKind::Unauthenticated, "the card has no signatures"));
    }
    // Encoded once for every signature: a card's host chooses how many there are.
    let payload = URL_SAFE_NO_PAD.encode(card_payload(card)?);
    let mut input = String::new();
    let mut why = Vec::new();
    for (i, sig) in card.signatures.iter().take(MAX_SIGNATURES).enumerate() {
        match verify_one(sig, &payload, &mut input, keys, algorithms) {
            Ok(v) => return Ok(v),
            Err(e) => why.push(format!("signatures[{i}]: {e}")),
        }
    }
    if card.signatures.len() > MAX_SIGNATURES {
        why.push(format!("only the first {MAX_SIGNATURES} of {} signatures are checked", card.signatures.len()));
    }
    Err(A2AError::new(ErrorKind::Unauthenticated, format!("no valid signature ({})", why.join("; "))))
}

/// How many of a card's signatures [`verify_card`] tries. Each costs a hash of the whole card
/// (and a public-key operation): without a bound, a large card with many signatures under a
/// real key id kept a thread busy for minutes. A card is signed once per key; 16 is plenty.
pub const MAX_SIGNATURES: usize = 16;

/// Checks one signature; `payload` is the card's base64url payload, `input` a buffer reused
/// for the signing input.
fn verify_one(
    sig: &AgentCardSignature,
    payload: &str,
    input: &mut String,
    keys: &KeySet,
    algorithms: &[Algorithm],
) -> std::result::Result<Verified, String> {
    let header: Value = URL_SAFE_NO_PAD
        .decode(sig.protected.trim_end_matches('='))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or("the protected header is not base64url JSON")?;
    let alg: Algorithm = serde_json::from_value(header["alg"].clone()).map_err(|_| "unknown alg")?;
    if !algorithms.contains(&alg) {
        return Err(format!("{} is not an accepted algorithm", alg_name(alg)));
    }
    if jose::has_crit(&header) {
        return Err(jose::CRITICAL.into());
    }
    let kid = header["kid"].as_str().ok_or("the protected header has no kid")?;
    let jwk = keys.usable(kid).map_err(|why| match why {
        KeyRefusal::Unknown => format!("no key {kid:?}"),
        why => format!("key {kid:?}: {why}"),
    })?;
    let key = DecodingKey::from_jwk(jwk).map_err(|e| format!("key {kid:?}: {e}"))?;
    input.clear();
    input.push_str(&sig.protected);
    input.push('.');
    input.push_str(payload);
    match jsonwebtoken::crypto::verify(&sig.signature, input.as_bytes(), &key, alg) {
        Ok(true) => Ok(Verified { kid: kid.to_owned(), alg }),
        Ok(false) => Err("bad signature".into()),
        Err(e) => Err(format!("bad signature ({e})")),
    }
}

/// The bindings' card signing: `card` gets one more signature, made with the PEM private `key`
/// and the algorithm named `alg`, its header naming `kid` (and `jku`, when given).
pub fn sign_card_named(card: &mut AgentCard, key: &[u8], alg: &str, kid: &str, jku: Option<String>) -> Result<()> {
    let mut signer = CardSigner::from_pem(key, algorithm_named(alg, "alg")?, kid)?;
    if let Some(jku) = jku {
        signer = signer.with_jku(jku);
    }
    signer.sign(card)
}

/// The bindings' card check: the kid of a signature of `card` that verifies under the JWKS
/// `jwks` (JSON) with one of the algorithms named; Unauthenticated when none does.
pub fn verify_card_named(card: &AgentCard, jwks: Value, algorithms: &[String]) -> Result<String> {
    let keys: KeySet = serde_json::from_value(jwks).map_err(|e| A2AError::invalid_field("jwks", e.to_string()))?;
    let algorithms = algorithms.iter().map(|a| algorithm_named(a, "algorithms")).collect::<Result<Vec<_>>>()?;
    Ok(verify_card(card, &keys, &algorithms)?.kid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jcs_orders_keys_by_utf16_and_formats_numbers_as_ecmascript() {
        let v: Value = serde_json::from_str(
            r#"{"b": 1e21, "a": [1.0, -0.0, 1e-7, 100], "\ufb01": "x", "\ud83d\ude00": 1, "c": "\u000f"}"#,
        )
        .unwrap();
        let out = String::from_utf8(canonicalize(&v).unwrap()).unwrap();
        // U+1F600 sorts before U+FB01 by UTF-16 code units (0xD83D < 0xFB01), not by code point.
        assert_eq!(out, "{\"a\":[1,0,1e-7,100],\"b\":1e+21,\"c\":\"\\u000f\",\"😀\":1,\"ﬁ\":\"x\"}");
    }

    #[test]
    fn nesting_is_bounded() {
        let mut v = json!(1);
        for _ in 0..=MAX_DEPTH {
            v = json!([v]);
        }
        assert_eq!(canonicalize(&v).unwrap_err().kind, ErrorKind::InvalidParams);
        assert!(canonicalize(&json!([9007199254740991_u64, -9007199254740991_i64])).is_ok());
        assert!(canonicalize(&json!({"n": 9007199254740992_u64})).is_err());
        assert!(canonicalize(&json!(-9007199254740992_i64)).is_err());
    }

    #[test]
    fn the_bindings_helpers_name_what_they_refuse() {
        let field = |e: A2AError| (e.kind, e.violations[0].field.clone());
        assert_eq!(algorithm_named("ES256", "alg").unwrap(), Algorithm::ES256);
        assert_eq!(field(algorithm_named("HS999", "alg").unwrap_err()), (ErrorKind::InvalidParams, "alg".into()));
        let card: AgentCard = serde_json::from_value(json!({
            "name": "a", "description": "d", "version": "1", "supportedInterfaces": [],
            "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []
        }))
        .unwrap();
        let no_keys = json!({"keys": []});
        let refused = verify_card_named(&card, no_keys.clone(), &["ES256".into(), "none".into()]).unwrap_err();
        assert_eq!(field(refused), (ErrorKind::InvalidParams, "algorithms".into()));
        let refused = verify_card_named(&card, json!({"keys": 1}), &["ES256".into()]).unwrap_err();
        assert_eq!(field(refused), (ErrorKind::InvalidParams, "jwks".into()));
        let unsigned = verify_card_named(&card, no_keys, &["ES256".into()]).unwrap_err();
        assert_eq!(unsigned.kind, ErrorKind::Unauthenticated);
        let mut signed = card.clone();
        let refused = sign_card_named(&mut signed, b"not a key", "RS999", "k1", None).unwrap_err();
        assert_eq!(field(refused), (ErrorKind::InvalidParams, "alg".into()));
        assert_eq!(signed, card, "a refused signing leaves the card as it was");
    }
}
