//! The exported JSON helpers: core validation, the records' round trip and the 0.3
//! conversions, by type name (records <-> core models are in [`crate::convert`]).

use crate::errors::Result;
use a2a_native::model;
use serde_json::Value;

fn parse_text(json: &str) -> Result<Value> {
    serde_json::from_str(json).map_err(|e| a2a_native::A2AError::parse_error(e.to_string()).into())
}

/// Reads `json` as the A2A type `type_name` with the core's validation and returns its
/// canonical ProtoJSON text; throws InvalidParams naming the offending field.
#[uniffi::export]
pub fn validate_json(type_name: String, json: String) -> Result<String> {
    Ok(model::dynamic::normalize(&type_name, parse_text(&json)?)?.to_string())
}

/// `json` validated by the core, taken through the generated record of `type_name` and back
/// (the conversions every record crossing the boundary goes through), and validated again.
#[uniffi::export]
pub fn record_round_trip(type_name: String, json: String) -> Result<String> {
    let canonical = model::dynamic::normalize(&type_name, parse_text(&json)?)?;
    let written = crate::models_gen::round_trip(&type_name, canonical)?;
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

/// Core's SSE codec in the shared vectors' form (`tests/vectors/sse`), for the vector tests:
/// decodes `chunks` in order and ends the stream; JSON `{"outcomes", "last_event_id"}`.
#[uniffi::export]
pub fn sse_decode_vector(chunks: Vec<Vec<u8>>, max_event_bytes: Option<u64>) -> String {
    a2a_native::sse::vectors::decode(max_event_bytes, chunks.iter().map(Vec::as_slice)).to_string()
}

/// The bytes core's SSE encoder writes for an `encode` vector case (JSON: its `event` or
/// `comment`).
#[uniffi::export]
pub fn sse_encode_vector(case_json: String) -> Result<String> {
    Ok(a2a_native::sse::vectors::encode(&parse_text(&case_json)?)?)
}

/// One wire vector case (`tests/vectors/jsonrpc` of a file's `kind`, or `rest`; JSON) checked
/// by core's codec: `null` when it holds, else what differed.
#[uniffi::export]
pub fn check_wire_vector(folder: String, kind: String, case_json: String) -> Result<Option<String>> {
    Ok(a2a_native::vectors::check(&folder, &kind, &parse_text(&case_json)?).err())
}
