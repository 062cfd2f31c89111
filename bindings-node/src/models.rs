//! Models cross the boundary as ProtoJSON text: JavaScript's `JSON.stringify` output is read
//! and validated by the core (`model::parse`), and core models go back as `model::to_value`
//! text for `JSON.parse`. The TypeScript types of these objects are generated from the spec's
//! proto (`models.d.ts`).

use crate::errors;
use a2a_native::model::{self, v03};
use napi::Result;
use serde::Serialize;

/// A core model as JSON text.
pub fn text<T: Serialize>(value: &T) -> String {
    model::to_value(value).to_string()
}

/// Any JSON text as a value. The text is `JSON.stringify`'s (lib/native.js `json`), so what
/// does not parse is a value JSON cannot carry (a string with a lone surrogate): InvalidParams.
pub fn value(json: &str) -> Result<serde_json::Value> {
    serde_json::from_str(json).map_err(|e| {
        let why = a2a_native::A2AError::invalid_json(&e).message;
        errors::to_js(a2a_native::A2AError::new(a2a_native::ErrorKind::InvalidParams, why))
    })
}

/// Reads `json` as the 1.0 model `typeName` and returns it in canonical ProtoJSON (defaults
/// dropped, enums by name); throws `InvalidParamsError` naming the offending field.
#[napi_derive::napi]
pub fn normalize(type_name: String, json: String) -> Result<String> {
    let out = model::dynamic::normalize(&type_name, value(&json)?).map_err(errors::to_js)?;
    Ok(out.to_string())
}

/// The 0.3 wire form of `typeName` (`v03::TYPE_NAMES`) converted to its 1.0 form.
#[napi_derive::napi(js_name = "v03ToV10")]
pub fn v03_to_v10(type_name: String, json: String) -> Result<String> {
    let out = v03::to_v10(&type_name, value(&json)?).map_err(errors::to_js)?;
    Ok(out.to_string())
}

/// A 1.0 value converted to the 0.3 wire form of `typeName`.
#[napi_derive::napi(js_name = "v10ToV03")]
pub fn v10_to_v03(type_name: String, json: String) -> Result<String> {
    let out = v03::to_v03(&type_name, value(&json)?).map_err(errors::to_js)?;
    Ok(out.to_string())
}

/// Core's SSE codec in the shared vectors' form (`tests/vectors/sse`), for the vector tests:
/// decodes `chunks` in order and ends the stream; JSON `{"outcomes", "last_event_id"}`.
#[napi_derive::napi]
pub fn sse_decode(chunks: Vec<napi::bindgen_prelude::Buffer>, max_event_bytes: Option<i64>) -> Result<String> {
    let limit = max_event_bytes
        .map(|n| u64::try_from(n).map_err(|_| napi::Error::from_reason("maxEventBytes must not be negative")))
        .transpose()?;
    Ok(a2a_native::sse::vectors::decode(limit, chunks.iter().map(|c| &c[..])).to_string())
}

/// The bytes core's SSE encoder writes for an `encode` vector case (JSON: its `event` or
/// `comment`).
#[napi_derive::napi]
pub fn sse_encode(case_json: String) -> Result<String> {
    a2a_native::sse::vectors::encode(&value(&case_json)?).map_err(errors::to_js)
}

/// One wire vector case (`tests/vectors/jsonrpc` of a file's `kind`, or `rest`; JSON) checked
/// by core's codec: `null` when it holds, else what differed.
#[napi_derive::napi]
pub fn vector_check(folder: String, kind: String, case_json: String) -> Result<Option<String>> {
    Ok(a2a_native::vectors::check(&folder, &kind, &value(&case_json)?).err())
}
