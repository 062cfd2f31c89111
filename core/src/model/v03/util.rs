//! Private helpers shared by the 0.3 types and their conversions.

use crate::error::{A2AError, Result};
use crate::model::validate::join;
use crate::model::wire::{self, Timestamp};
use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Deserializer, Serializer};
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Wire helpers
// ---------------------------------------------------------------------------------------------

/// Optional arrays and strings: a `null` from a 0.3 peer reads as absent.
pub(super) fn nullable<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// 0.3 timestamps are "ISO 8601 datetime strings". Read any RFC 3339 offset, and (leniently)
/// an offset-less `YYYY-MM-DDTHH:MM:SS[.f]`, taken as UTC, which some 0.3 peers write.
/// Written as 1.0 does: UTC with `Z`.
pub(super) mod timestamp03 {
    use super::*;

    pub fn parse(text: &str) -> Result<Timestamp, String> {
        wire::timestamp::parse(text).or_else(|err| {
            chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").map(|n| n.and_utc()).map_err(|_| err)
        })
    }

    pub fn serialize<S: Serializer>(ts: &Option<Timestamp>, s: S) -> Result<S::Ok, S::Error> {
        match ts {
            Some(ts) => s.serialize_str(&wire::timestamp::format(ts)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Timestamp>, D::Error> {
        match Option::<String>::deserialize(d)? {
            Some(text) => parse(&text).map(Some).map_err(de::Error::custom),
            None => Ok(None),
        }
    }
}

/// Deserialises a nested value already buffered as JSON (a `kind`-dispatched result), keeping
/// the inner path in the message so the caller's error still names the field.
pub(super) fn from_nested<T: DeserializeOwned, E: de::Error>(value: Value) -> Result<T, E> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let inner = e.into_inner().to_string();
        match inner.strip_prefix("missing field `").and_then(|r| r.split('`').next()) {
            Some(name) => E::custom(format!("missing field `{}`", join(&path, name))),
            None if path.is_empty() => E::custom(inner),
            None => E::custom(format!("{path}: {inner}")),
        }
    })
}

pub(super) fn opt(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

pub(super) fn ser_b64<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&wire::b64_encode(bytes))
}

/// base64 text decoded while reading, so a bad value is reported at its own path.
pub(super) struct B64(pub(super) Vec<u8>);

impl<'de> Deserialize<'de> for B64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        wire::b64_decode(&text).map(B64).map_err(de::Error::custom)
    }
}

/// A conversion error raised inside a nested value: prefix its field path with `at`.
pub(super) fn within(at: &str, err: A2AError) -> A2AError {
    match err.violations.as_slice() {
        [v] => A2AError::invalid_field(join(at, &v.field), v.description.clone()),
        _ => err,
    }
}
