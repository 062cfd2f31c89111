//! Signed Agent Cards: sign with each algorithm and verify; tampering, unknown or wrong keys,
//! refused algorithms and missing signatures fail; several signatures allow rotation.

use a2a_native::ErrorKind;
use a2a_native::auth::KeySet;
use a2a_native::model::{self, AgentCard};
use a2a_native::signing::{CardSigner, card_payload, verify_card};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::json;

fn pem(file: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/fixtures/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn public(file: &str, alg: Algorithm, kid: &str) -> Jwk {
    let key = match alg {
        Algorithm::RS256 => EncodingKey::from_rsa_pem(&pem(file)),
        Algorithm::ES256 => EncodingKey::from_ec_pem(&pem(file)),
        _ => EncodingKey::from_ed_pem(&pem(file)),
    }
    .unwrap();
    let mut jwk = Jwk::from_encoding_key(&key, alg).unwrap();
    jwk.common.key_id = Some(kid.into());
    jwk
}

fn card() -> AgentCard {
    model::parse_value(json!({
        "name": "signed agent", "description": "Ünïcödé and numbers", "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://agent.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": false, "extensions": [{"uri": "urn:x", "params": {"n": 1.5e21, "z": [0.1, -0.0]}}]},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    }))
    .unwrap()
}

const ALL: [Algorithm; 3] = [Algorithm::ES256, Algorithm::RS256, Algorithm::EdDSA];

#[test]
fn each_algorithm_signs_and_verifies() {
    for (file, alg) in
        [("jwt-ec.pem", Algorithm::ES256), ("jwt-rsa.pem", Algorithm::RS256), ("jwt-ed25519.pem", Algorithm::EdDSA)]
    {
        let mut c = card();
        CardSigner::from_pem(&pem(file), alg, "k1")
            .unwrap()
            .with_jku("https://agent.example/jwks.json")
            .sign(&mut c)
            .unwrap();
        let keys = JwkSet { keys: vec![public(file, alg, "k1")] };
        let v = verify_card(&c, &KeySet::from(keys.clone()), &ALL).unwrap();
        assert_eq!((v.kid.as_str(), v.alg), ("k1", alg));
        // The signature survives the wire: written and read back.
        let again: AgentCard = model::parse_value(model::to_value(&c)).unwrap();
        assert!(verify_card(&again, &KeySet::from(keys.clone()), &ALL).is_ok(), "{alg:?}");
        // The protected header says what the spec asks.
        use base64::Engine;
        let header: serde_json::Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(&c.signatures[0].protected).unwrap(),
        )
        .unwrap();
        assert_eq!((header["kid"].as_str(), header["typ"].as_str()), (Some("k1"), Some("JOSE")));
        assert_eq!(header["jku"], "https://agent.example/jwks.json");
    }
}

/// An EC key as `openssl ecparam -genkey` writes it (SEC1, `BEGIN EC PRIVATE KEY`) signs as the
/// same key in PKCS#8 does (jsonwebtoken reads only PKCS#8: it was refused as InvalidKeyFormat);
/// an RSA or Ed25519 key given for ES256 is still refused.
#[test]
fn a_sec1_ec_key_signs_as_its_pkcs8_form() {
    assert!(String::from_utf8(pem("jwt-ec-sec1.pem")).unwrap().starts_with("-----BEGIN EC PRIVATE KEY-----"));
    let mut c = card();
    CardSigner::from_pem(&pem("jwt-ec-sec1.pem"), Algorithm::ES256, "k1").unwrap().sign(&mut c).unwrap();
    let keys = KeySet::from(JwkSet { keys: vec![public("jwt-ec.pem", Algorithm::ES256, "k1")] });
    assert!(verify_card(&c, &keys, &ALL).is_ok());
    let signer = a2a_native::push::PushSigner::from_pem(&pem("jwt-ec-sec1.pem"), Algorithm::ES256, "k1", "me").unwrap();
    assert_eq!(
        signer.jwks().keys,
        vec![public("jwt-ec.pem", Algorithm::ES256, "k1")]
            .into_iter()
            .map(|mut k| {
                k.common.public_key_use = Some(jsonwebtoken::jwk::PublicKeyUse::Signature);
                k
            })
            .collect::<Vec<_>>()
    );
    // A SEC1 key of another curve than the algorithm's is refused, as InvalidParams.
    let e = CardSigner::from_pem(&pem("jwt-ec-sec1.pem"), Algorithm::ES384, "k1").err().expect("refused");
    assert_eq!(e.kind, a2a_native::ErrorKind::InvalidParams, "{e}");
    assert!(CardSigner::from_pem(&pem("jwt-rsa.pem"), Algorithm::ES256, "k1").is_err());
}

#[test]
fn tampering_and_wrong_keys_fail() {
    let keys = JwkSet { keys: vec![public("jwt-ec.pem", Algorithm::ES256, "k1")] };
    let mut c = card();
    CardSigner::from_pem(&pem("jwt-ec.pem"), Algorithm::ES256, "k1").unwrap().sign(&mut c).unwrap();

    let mut tampered = c.clone();
    tampered.description.push('!');
    let e = verify_card(&tampered, &KeySet::from(keys.clone()), &ALL).unwrap_err();
    assert!(e.message.contains("bad signature"), "{e}");

    let other = JwkSet { keys: vec![public("jwt-ec-rotated.pem", Algorithm::ES256, "k1")] };
    assert!(verify_card(&c, &KeySet::from(other.clone()), &ALL).is_err());
    let e = verify_card(&c, &KeySet::from(JwkSet { keys: vec![public("jwt-ec.pem", Algorithm::ES256, "k2")] }), &ALL)
        .unwrap_err();
    assert!(e.message.contains("no key"), "{e}");
    let e = verify_card(&c, &KeySet::from(keys.clone()), &[Algorithm::RS256]).unwrap_err();
    assert!(e.message.contains("not an accepted algorithm"), "{e}");
    let e = verify_card(&card(), &KeySet::from(keys.clone()), &ALL).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unauthenticated);

    let mut garbage = c.clone();
    garbage.signatures[0].protected = "%%%".into();
    assert!(verify_card(&garbage, &KeySet::from(keys.clone()), &ALL).is_err());
}

#[test]
fn several_signatures_allow_rotation_and_are_not_covered() {
    let mut c = card();
    let before = card_payload(&c).unwrap();
    CardSigner::from_pem(&pem("jwt-ec.pem"), Algorithm::ES256, "old").unwrap().sign(&mut c).unwrap();
    CardSigner::from_pem(&pem("jwt-ec-rotated.pem"), Algorithm::ES256, "new").unwrap().sign(&mut c).unwrap();
    assert_eq!(card_payload(&c).unwrap(), before, "signatures are outside the payload");
    // A verifier that knows only the new key accepts the card by its second signature.
    let keys = JwkSet { keys: vec![public("jwt-ec-rotated.pem", Algorithm::ES256, "new")] };
    assert_eq!(verify_card(&c, &KeySet::from(keys.clone()), &ALL).unwrap().kid, "new");
}

/// At most the first 16 signatures are tried (each costs a hash of the whole card and a key
/// operation; a card's host chooses how many there are). Forged copies of a real signature's
/// header before the real one are skipped past while within the bound.
#[test]
fn at_most_sixteen_signatures_are_tried() {
    let keys = KeySet::from(JwkSet { keys: vec![public("jwt-ec.pem", Algorithm::ES256, "k1")] });
    let mut signed = card();
    CardSigner::from_pem(&pem("jwt-ec.pem"), Algorithm::ES256, "k1").unwrap().sign(&mut signed).unwrap();
    let real = signed.signatures[0].clone();
    let forged = a2a_native::model::AgentCardSignature { signature: "AAAA".into(), ..real.clone() };
    for (forgeries, verifies) in [(15, true), (16, false), (1000, false)] {
        let mut c = signed.clone();
        c.signatures = std::iter::repeat_n(forged.clone(), forgeries).chain([real.clone()]).collect();
        match verify_card(&c, &keys, &ALL) {
            Ok(v) => assert!(verifies, "{forgeries} forgeries: verified by {v:?}"),
            Err(e) => {
                assert!(!verifies, "{forgeries} forgeries: {e}");
                assert_eq!(e.kind, ErrorKind::Unauthenticated);
                assert!(e.message.contains("only the first 16 of"), "{e}");
                assert_eq!(e.message.matches("bad signature").count(), 16, "{e}");
            }
        }
    }
}

/// A signature whose protected header names critical extensions is refused (RFC 7515
/// §4.1.11), even when it verifies; the same signature without them is accepted.
#[test]
fn a_signature_naming_critical_extensions_is_refused() {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let keys = KeySet::from(JwkSet { keys: vec![public("jwt-ec.pem", Algorithm::ES256, "k1")] });
    let key = EncodingKey::from_ec_pem(&pem("jwt-ec.pem")).unwrap();
    let payload = b64.encode(card_payload(&card()).unwrap());
    let signed = |header: serde_json::Value| {
        let protected = b64.encode(header.to_string());
        let signature =
            jsonwebtoken::crypto::sign(format!("{protected}.{payload}").as_bytes(), &key, Algorithm::ES256).unwrap();
        let mut c = card();
        c.signatures.push(model::AgentCardSignature { protected, signature, header: None });
        c
    };
    let plain = signed(json!({"alg": "ES256", "kid": "k1", "typ": "JOSE"}));
    assert_eq!(verify_card(&plain, &keys, &ALL).unwrap().kid, "k1");
    let critical = signed(json!({"alg": "ES256", "kid": "k1", "typ": "JOSE", "crit": ["urn:x"], "urn:x": 1}));
    let e = verify_card(&critical, &keys, &ALL).unwrap_err();
    assert!(e.message.contains("crit"), "{e}");
}
