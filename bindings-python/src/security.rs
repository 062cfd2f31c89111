//! core's `server::security::SecuritySpec` from the Python layer's `security` dict (the one JSON
//! reader every binding shares), plus the `bearer_tokens` argument.

use crate::{errors, models};
use a2a_native::server::security::SecuritySpec;
use pyo3::prelude::*;
use pyo3::types::PyDict;

pub fn read(bearer_tokens: Vec<(String, String)>, security: Option<Bound<'_, PyDict>>) -> PyResult<SecuritySpec> {
    let value = match security {
        Some(dict) => models::to_value(dict.as_any())?,
        None => serde_json::json!({}),
    };
    let mut spec = SecuritySpec::from_value(value).map_err(errors::to_py)?;
    spec.bearer_tokens.extend(bearer_tokens);
    Ok(spec)
}
