//! The shared wire vectors (`tests/vectors`) that core's codecs check, one entry point for
//! every binding's test suite: a binding hands over a case as its host read it and gets back
//! what differed, so each language runs every case through the code it ships with.

use serde_json::Value;

/// Checks one `case` of `folder` (`jsonrpc`, whose files have a `kind`, or `rest`); `Err`
/// says what differed from the case's `expected`. SSE vectors have their own entry points
/// (`sse::vectors`): they produce output for the binding to compare.
pub fn check(folder: &str, kind: &str, case: &Value) -> Result<(), String> {
    match folder {
        "jsonrpc" => crate::jsonrpc::vectors::check(kind, case),
        "rest" => crate::rest::vectors::check(case),
        other => Err(format!("core checks no vectors of folder {other:?}")),
    }
}
