//! Core errors as JavaScript errors. The classes (`A2AError` and one subclass per row of core's
//! `ERROR_TABLE`) live in `errors.js`, generated from that table; a native failure carries the
//! error as JSON after a marker, and `lib/native.js` rebuilds an instance of the right class.

use a2a_native::error::{A2AError, ERROR_TABLE};
use napi::{Error, Status};
use serde_json::json;

/// Marks a native error's message as a serialized [`A2AError`] (never in a human message).
pub const MARKER: &str = "\u{1}a2a:";

/// The napi error for a core error.
pub fn to_js(e: A2AError) -> Error {
    let violations: Vec<_> =
        e.violations.iter().map(|v| json!({"field": v.field, "description": v.description})).collect();
    let body = json!({
        "name": e.kind.name(),
        "message": e.message,
        "metadata": e.metadata,
        "violations": violations,
    });
    Error::new(Status::GenericFailure, format!("{MARKER}{body}"))
}

/// Bad input from JavaScript that is not a protocol value (an unknown option, a bad state name).
pub fn invalid(field: &str, description: impl Into<String>) -> Error {
    to_js(A2AError::invalid_field(field, description))
}

/// One row of core's error table.
#[napi_derive::napi(object)]
pub struct ErrorRow {
    pub name: String,
    pub code: i32,
    pub reason: String,
    pub http_status: u16,
    pub grpc_status: String,
    pub default_message: String,
}

/// Core's error table, for tests that the generated classes match it.
#[napi_derive::napi]
pub fn error_table() -> Vec<ErrorRow> {
    ERROR_TABLE
        .iter()
        .map(|r| ErrorRow {
            name: r.name.into(),
            code: r.jsonrpc_code,
            reason: r.reason.into(),
            http_status: r.http_status,
            grpc_status: r.grpc_status.into(),
            default_message: r.default_message.into(),
        })
        .collect()
}
