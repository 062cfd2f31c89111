//! The JWT/JWS paths that read attacker-controlled tokens: a push notification's signature
//! header (with its body) through `PushVerifier`, and an Agent Card signature's protected
//! header and signature through `verify_card`. Any input must be refused with an error, never
//! a panic, and never accepted: nobody can sign without the private key.
#![no_main]

use a2a_native::client::PushVerifier;
use a2a_native::model::{self, AgentCard, AgentCardSignature};
use a2a_native::signing::verify_card;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey};
use libfuzzer_sys::fuzz_target;
use std::sync::LazyLock;

static KEYS: LazyLock<JwkSet> = LazyLock::new(|| {
    let key = EncodingKey::from_ec_pem(include_bytes!("../../tests/fixtures/jwt-ec.pem")).unwrap();
    let mut jwk = Jwk::from_encoding_key(&key, Algorithm::ES256).unwrap();
    jwk.common.key_id = Some("k1".into());
    JwkSet { keys: vec![jwk] }
});

static CARD: LazyLock<AgentCard> = LazyLock::new(|| {
    model::parse_value(serde_json::json!({
        "name": "fuzz", "description": "d", "version": "1",
        "supportedInterfaces": [{"url": "https://a.example/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    }))
    .unwrap()
});

fuzz_target!(|data: &[u8]| {
    let (token, body) = match data.iter().position(|&b| b == 0xff) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let Ok(token) = std::str::from_utf8(token) else { return };

    if let Ok(value) = http::HeaderValue::from_str(token) {
        let mut headers = http::HeaderMap::new();
        headers.insert("a2a-notification-signature", value);
        let verifier = PushVerifier::new(KEYS.clone(), "https://hook.example/");
        assert!(verifier.verify(&headers, body).is_err(), "a forged notification was accepted");
    }

    let (protected, signature) = token.split_once('.').unwrap_or((token, ""));
    let mut card = CARD.clone();
    card.signatures.push(AgentCardSignature { protected: protected.into(), signature: signature.into(), header: None });
    let algorithms = [Algorithm::ES256, Algorithm::RS256, Algorithm::EdDSA];
    assert!(verify_card(&card, &KEYS, &algorithms).is_err(), "a forged card signature was accepted");
});
