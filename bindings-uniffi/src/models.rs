//! Records <-> core models. A record crosses into the core as ProtoJSON, where
//! `model::parse_value` validates it; core values come back through `model::to_value`.
//! Also the exported JSON helpers: core validation and the records' round trip, by type name.

use crate::errors::Result;
use crate::json::ProtoJson;
use a2a_native::model::{self, Validate};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A record as the core model `C` (validated by the core).
pub fn to_core<C: DeserializeOwned + Validate>(record: &impl ProtoJson) -> Result<C> {
    Ok(model::parse_value(record.write("")?)?)
}

/// A core model as its record.
pub fn from_core<R: ProtoJson>(value: &impl Serialize) -> Result<R> {
    R::read(&model::to_value(value), "")
}

fn parse_text(json: &str) -> Result<Value> {
    serde_json::from_str(json).map_err(|e| a2a_native::A2AError::parse_error(e.to_string()).into())
}

/// Reads `json` as the A2A type `type_name` with the core's validation and returns its
/// canonical ProtoJSON text; throws InvalidParams naming the offending field.
#[uniffi::export]
pub fn validate_json(type_name: String, json: String) -> Result<String> {
    Ok(model::dynamic::normalize(&type_name, parse_text(&json)?)?.to_string())
}

/// `json` validated by the core, read into the generated record of `type_name`, written back
/// and validated again: what every record crossing the boundary goes through.
#[uniffi::export]
pub fn record_round_trip(type_name: String, json: String) -> Result<String> {
    let canonical = model::dynamic::normalize(&type_name, parse_text(&json)?)?;
    let written = crate::models_gen::round_trip(&type_name, &canonical)?;
    Ok(model::dynamic::normalize(&type_name, written)?.to_string())
}

/// `json`, an A2A 0.3 value of `type_name` (its 0.3 name, e.g. `MessageSendParams`), as the A2A
/// 1.0 ProtoJSON text core converts it to: the conversion old peers' payloads go through.
#[uniffi::export]
pub fn v03_to_v10(type_name: String, json: String) -> Result<String> {
    Ok(model::v03::to_v10(&type_name, parse_text(&json)?)?.to_string())
}

/// `json`, an A2A 1.0 value of the 0.3 type `type_name`, as core writes it for a 0.3 peer.
#[uniffi::export]
pub fn v10_to_v03(type_name: String, json: String) -> Result<String> {
    Ok(model::v03::to_v03(&type_name, parse_text(&json)?)?.to_string())
}
