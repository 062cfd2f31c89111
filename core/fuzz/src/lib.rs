//! The bodies of the fuzz targets, one function each. The `fuzz_targets/` binaries only hand
//! libFuzzer's input to these; core's `tests/suite/fuzz_bodies.rs` includes this file and runs each
//! body on seeds and on generated inputs, so the bodies build and run with the workspace tests.
//! Each body must refuse bad input with an error, never panic, and never accept a forgery.

use a2a_native::auth::KeySet;
use a2a_native::client::PushVerifier;
use a2a_native::grpc::{convert, frame};
use a2a_native::jsonrpc;
use a2a_native::model::{self, AgentCard, AgentCardSignature};
use a2a_native::request::Method;
use a2a_native::signing::verify_card;
use a2a_native::sse::SseDecoder;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey};
use std::sync::LazyLock;

/// The JSON-RPC request path a server runs on every body: envelope, then the 1.0 typed params.
/// A parsed request must serialise back into a request that parses to the same thing.
pub fn jsonrpc_request(data: &[u8]) {
    let Ok(envelope) = jsonrpc::parse_envelope(data) else { return };
    let Ok(call) = jsonrpc::parse_v10(envelope) else { return };
    if let Some(id) = &call.id {
        let again = jsonrpc::request_for(id, &call.request);
        let reparsed = jsonrpc::parse_request(&again).expect("our own request must parse");
        assert_eq!(reparsed.request, call.request);
    }
}

/// The SSE decoder on arbitrary bytes, fed in chunks whose size the first byte chooses: it must
/// never hold more than its event-size bound.
pub fn sse_decoder(data: &[u8]) {
    let Some((&split, rest)) = data.split_first() else { return };
    let mut decoder = SseDecoder::new(256);
    let step = usize::from(split).max(1);
    for chunk in rest.chunks(step) {
        for event in decoder.push(chunk).into_iter().flatten() {
            assert!(event.data.len() <= 256 * 4, "event larger than the bound");
        }
    }
    let _ = decoder.finish();
}

static KEYS: LazyLock<KeySet> = LazyLock::new(|| {
    let key = EncodingKey::from_ec_pem(include_bytes!("../../tests/fixtures/jwt-ec.pem")).unwrap();
    let mut jwk = Jwk::from_encoding_key(&key, Algorithm::ES256).unwrap();
    jwk.common.key_id = Some("k1".into());
    JwkSet { keys: vec![jwk] }.into()
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

/// The JWT/JWS paths that read attacker-controlled tokens: a push notification's signature
/// header (the input up to a 0xff byte; the body after it) through `PushVerifier`, and an Agent
/// Card signature's protected header and signature through `verify_card`. Nobody can sign
/// without the private key, so every input must be refused.
pub fn jws_verify(data: &[u8]) {
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
}

/// The gRPC request path a server runs on every call: the body's framing (the first byte picks
/// the method), then the method's protobuf message read as a typed request. A request read must
/// encode back to a message that reads the same.
pub fn grpc_request(data: &[u8]) {
    let Some((&pick, body)) = data.split_first() else { return };
    let method = Method::ALL[usize::from(pick) % Method::ALL.len()];
    // gzip named: compressed frames are inflated too (bounded), as a server reads them.
    let Ok(message) = frame::single_message(body, 1 << 20, frame::Encoding::Gzip) else { return };
    let Ok(request) = convert::decode_request(method, &message) else { return };
    let again = convert::encode_request(&request).expect("a request read must encode");
    assert_eq!(convert::decode_request(method, &again).expect("our own message must read"), request);
}
