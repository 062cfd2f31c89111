//! JOSE as every signer and verifier here uses it (card signatures, push notifications, server
//! JWTs): private keys from PEM, algorithms by name, and the checks every JWT gets before its
//! claims are read.
//!
//! A JWT is read in two steps. [`jwt_header`] refuses, before any key is looked up, a token that
//! is not a JWT, whose algorithm the reader does not accept, or whose header names critical
//! extensions (RFC 7515 §4.1.11: a reader must refuse those it does not implement, and these
//! readers implement none). [`jwt_claims`] then checks the signature with the key the caller
//! chose and the claims the caller's [`Validation`] requires. Both give the reason in words that
//! help a caller and reveal nothing about keys; the caller names what was refused.

use crate::error::{A2AError, ErrorKind, Result};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde_json::{Map, Value};

/// A PEM private key for an asymmetric signature algorithm (ES256/384, RS256/384/512, PS256,
/// EdDSA): the keys that sign cards and push notifications. HMAC is refused: a shared secret
/// cannot be published as a JWKS.
pub fn private_key(pem: &[u8], alg: Algorithm) -> Result<EncodingKey> {
    let invalid = |why: String| A2AError::new(ErrorKind::InvalidParams, why);
    match alg {
        Algorithm::ES256 | Algorithm::ES384 => match sec1_as_pkcs8(pem, alg) {
            Some(pkcs8) => Ok(EncodingKey::from_ec_der(&pkcs8?)),
            None => EncodingKey::from_ec_pem(pem),
        },
        Algorithm::RS256 | Algorithm::RS384 | Algorithm::RS512 | Algorithm::PS256 => EncodingKey::from_rsa_pem(pem),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(pem),
        other => return Err(invalid(format!("{other:?} is not a public-key signature algorithm"))),
    }
    .map_err(|e| {
        let form = match alg {
            Algorithm::ES256 | Algorithm::ES384 => {
                "an EC key (PKCS#8 `BEGIN PRIVATE KEY` or SEC1 `BEGIN EC PRIVATE KEY`)"
            }
            Algorithm::EdDSA => "an Ed25519 key (PKCS#8 `BEGIN PRIVATE KEY`)",
            _ => "an RSA key (PKCS#8 `BEGIN PRIVATE KEY` or PKCS#1 `BEGIN RSA PRIVATE KEY`)",
        };
        invalid(format!("the signing key is not a PEM private key for {alg:?}, which takes {form}: {e}"))
    })
}

/// An EC key in SEC1 form (`BEGIN EC PRIVATE KEY`, what `openssl ecparam -genkey` writes) as
/// the PKCS#8 that jsonwebtoken reads (it reads no SEC1); `None` for any other PEM.
fn sec1_as_pkcs8(pem: &[u8], alg: Algorithm) -> Option<Result<Vec<u8>>> {
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, ECDSA_P384_SHA384_FIXED_SIGNING, EcdsaKeyPair};
    use rustls::pki_types::{PrivateKeyDer, pem::PemObject};
    let Ok(PrivateKeyDer::Sec1(sec1)) = PrivateKeyDer::from_pem_slice(pem) else { return None };
    let curve =
        if alg == Algorithm::ES384 { &ECDSA_P384_SHA384_FIXED_SIGNING } else { &ECDSA_P256_SHA256_FIXED_SIGNING };
    let wrong = || A2AError::new(ErrorKind::InvalidParams, format!("the signing key is no {alg:?} (EC) private key"));
    let pair = EcdsaKeyPair::from_private_key_der(curve, sec1.secret_sec1_der()).map_err(|_| wrong());
    Some(pair.and_then(|p| p.to_pkcs8v1().map(|d| d.as_ref().to_vec()).map_err(|_| wrong())))
}

/// A JWS algorithm by its name (`ES256`, `RS256`, `EdDSA`, ...); InvalidParams naming
/// `field` for any other name.
pub fn algorithm_named(name: &str, field: &str) -> Result<Algorithm> {
    name.parse().map_err(|_| A2AError::invalid_field(field, format!("unknown algorithm {name:?}")))
}

/// Why a JOSE header with a `crit` member is refused. Any `crit` is: the extensions it names
/// are ones no reader here implements, and producers must not send an empty list.
pub(crate) const CRITICAL: &str = "its header names critical extensions (crit), which this reader does not implement";

/// Whether a JOSE header (as JSON) has a `crit` member.
pub(crate) fn has_crit(header: &Value) -> bool {
    header.get("crit").is_some_and(|c| !c.is_null())
}

/// The header of `token`, when it is a JWT signed with one of `algorithms` and has no `crit`.
pub(crate) fn jwt_header(token: &str, algorithms: &[Algorithm]) -> std::result::Result<Header, &'static str> {
    let header = jsonwebtoken::decode_header(token).map_err(|_| "it is not a JWT")?;
    if !algorithms.contains(&header.alg) {
        return Err("its algorithm is not accepted");
    }
    if header.crit.is_some() {
        return Err(CRITICAL);
    }
    Ok(header)
}

/// The claims of `token` (its header read by [`jwt_header`]), when `jwk` verifies its signature
/// and the claims meet `validation`.
pub(crate) fn jwt_claims(
    token: &str,
    jwk: &Jwk,
    validation: &Validation,
) -> std::result::Result<Map<String, Value>, String> {
    let key = DecodingKey::from_jwk(jwk).map_err(|_| "its signing key is unusable".to_owned())?;
    let claims = jsonwebtoken::decode::<Map<String, Value>>(token, &key, validation).map_err(|e| reason(&e))?.claims;
    // RFC 7519 §4.1.1: `iss` is one string (jsonwebtoken would also take a list holding an
    // accepted issuer).
    if claims.get("iss").is_some_and(|iss| !iss.is_string()) {
        return Err("its `iss` claim is not a string".into());
    }
    Ok(claims)
}

/// Why a token failed.
fn reason(e: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind as K;
    match e.kind() {
        K::ExpiredSignature => "expired".into(),
        K::ImmatureSignature => "not yet valid (nbf)".into(),
        K::InvalidIssuer => "wrong issuer".into(),
        K::InvalidAudience => "wrong audience".into(),
        K::InvalidSignature => "bad signature".into(),
        // jsonwebtoken also reports a claim of the wrong type (`"exp": "soon"`) as missing.
        K::MissingRequiredClaim(claim) => format!("the required claim `{claim}` is missing or not of its type"),
        K::InvalidAlgorithm => "algorithm does not match the key".into(),
        _ => "malformed".into(),
    }
}
