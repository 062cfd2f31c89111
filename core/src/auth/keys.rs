//! A JSON Web Key Set as a verifier uses it: the keys by `kid`, each with the validity window
//! its JWK states, so that an expired key verifies nothing (spec §8.4.3: "never use expired or
//! revoked keys"; a revoked key is one the set no longer lists).
//!
//! RFC 7517 gives a JWK no lifetime of its own; key sets that publish one use `exp` and `nbf`
//! (seconds since the epoch, as in a JWT), which jsonwebtoken's `Jwk` drops when reading. This
//! type reads them beside it. An `x5c` certificate's own validity is not checked here.

use jsonwebtoken::jwk::{Jwk, JwkSet};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::time::{SystemTime, UNIX_EPOCH};

/// Verification keys with their validity windows.
#[derive(Debug, Clone, Default)]
pub struct KeySet {
    keys: Vec<(Jwk, Window)>,
}

/// When a key may be used, in seconds since the epoch (bounds absent: always).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Window {
    not_before: Option<i64>,
    expires: Option<i64>,
}

/// Why a key could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyRefusal {
    /// No key has that id (unknown or revoked).
    Unknown,
    /// The key's `exp` has passed.
    Expired,
    /// The key's `nbf` is still ahead.
    NotYetValid,
}

impl std::fmt::Display for KeyRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            KeyRefusal::Unknown => "unknown key",
            KeyRefusal::Expired => "the key has expired",
            KeyRefusal::NotYetValid => "the key is not valid yet",
        })
    }
}

impl KeySet {
    /// A key set from its JSON (`{"keys": [...]}`); each key's `exp`/`nbf` kept.
    pub fn from_value(value: Value) -> Result<Self, String> {
        let Value::Object(mut set) = value else { return Err("a JWKS is a JSON object".into()) };
        let Some(Value::Array(keys)) = set.remove("keys") else { return Err("a JWKS has a \"keys\" array".into()) };
        let keys = keys
            .into_iter()
            .enumerate()
            .map(|(i, key)| {
                let window = Window { not_before: seconds(&key, "nbf")?, expires: seconds(&key, "exp")? };
                let jwk = serde_json::from_value(key).map_err(|e| format!("keys[{i}]: {e}"))?;
                Ok((jwk, window))
            })
            .collect::<Result<_, String>>()?;
        Ok(Self { keys })
    }

    /// A key set from JSON bytes.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, String> {
        Self::from_value(serde_json::from_slice(bytes).map_err(|e| e.to_string())?)
    }

    /// The key `kid` if the set lists it and it is valid now.
    pub fn usable(&self, kid: &str) -> Result<&Jwk, KeyRefusal> {
        let (jwk, window) =
            self.keys.iter().find(|(jwk, _)| jwk.common.key_id.as_deref() == Some(kid)).ok_or(KeyRefusal::Unknown)?;
        window.check(now())?;
        Ok(jwk)
    }

    /// The only key, when a token names none and the set has exactly one, if valid now.
    pub fn only(&self) -> Result<&Jwk, KeyRefusal> {
        match self.keys.as_slice() {
            [(jwk, window)] => window.check(now()).map(|()| jwk),
            _ => Err(KeyRefusal::Unknown),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

impl Window {
    fn check(&self, now: i64) -> Result<(), KeyRefusal> {
        if self.expires.is_some_and(|exp| now >= exp) {
            return Err(KeyRefusal::Expired);
        }
        if self.not_before.is_some_and(|nbf| now < nbf) {
            return Err(KeyRefusal::NotYetValid);
        }
        Ok(())
    }
}

/// A NumericDate member of a key (`exp`, `nbf`): a number of seconds, fractions dropped.
fn seconds(key: &Value, name: &str) -> Result<Option<i64>, String> {
    match key.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)).map(Some).ok_or_else(|| format!("{name} is not a date"))
        }
        Some(_) => Err(format!("a key's {name} must be a number of seconds since the epoch")),
    }
}

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or_default()
}

/// Keys built in code (a signer's own public keys): no validity windows.
impl From<JwkSet> for KeySet {
    fn from(set: JwkSet) -> Self {
        Self { keys: set.keys.into_iter().map(|jwk| (jwk, Window::default())).collect() }
    }
}

impl<'de> Deserialize<'de> for KeySet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::from_value(Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(kid: &str, extra: Value) -> Value {
        let mut k = json!({"kty": "oct", "k": "c2VjcmV0", "kid": kid});
        k.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        k
    }

    #[test]
    fn windows_decide_which_keys_are_usable() {
        let set = KeySet::from_value(json!({"keys": [
            key("plain", json!({})),
            key("expired", json!({"exp": 946684800})),
            key("future", json!({"nbf": 32503680000_i64})),
            key("current", json!({"nbf": 946684800, "exp": 32503680000.5})),
        ]}))
        .unwrap();
        assert!(set.usable("plain").is_ok());
        assert!(set.usable("current").is_ok());
        assert_eq!(set.usable("expired").unwrap_err(), KeyRefusal::Expired);
        assert_eq!(set.usable("future").unwrap_err(), KeyRefusal::NotYetValid);
        assert_eq!(set.usable("gone").unwrap_err(), KeyRefusal::Unknown);
        assert_eq!(set.only().unwrap_err(), KeyRefusal::Unknown, "four keys: none is the only one");
    }

    #[test]
    fn bad_sets_and_bad_dates_are_refused() {
        assert!(KeySet::from_value(json!([])).is_err());
        assert!(KeySet::from_value(json!({"keys": {}})).is_err());
        assert!(KeySet::from_value(json!({"keys": [key("k", json!({"exp": "tomorrow"}))]})).is_err());
        assert!(KeySet::from_value(json!({"keys": [42]})).is_err());
        let one: KeySet = serde_json::from_value(json!({"keys": [key("k", json!({"exp": 946684800}))]})).unwrap();
        assert_eq!(one.only().unwrap_err(), KeyRefusal::Expired);
    }
}
