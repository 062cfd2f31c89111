//! Core errors as Python exceptions. The classes (`A2AError` and one subclass per row of
//! core's `ERROR_TABLE`) live in `a2a_native/errors.py`, generated from that table; this file
//! builds an instance of the right one.

use a2a_native::error::{A2AError, ERROR_TABLE};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use serde_json::Value;

static FACTORY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The Python exception for a core error. Also made on runtime threads (a failed call), so it
/// goes through the gate; when Python is exiting, a RuntimeError with the same text, made
/// without touching Python.
pub fn to_py(e: A2AError) -> PyErr {
    crate::runtime::attach(|py| build(py, &e).unwrap_or_else(|failed| failed))
        .unwrap_or_else(|| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}

fn build(py: Python<'_>, e: &A2AError) -> PyResult<PyErr> {
    let factory =
        FACTORY.get_or_try_init(py, || py.import("a2a_native.errors")?.getattr("_from_native").map(Bound::unbind))?;
    let metadata = crate::models::to_py(py, &Value::Object(e.metadata.clone()))?;
    let violations: Vec<(&str, &str)> =
        e.violations.iter().map(|v| (v.field.as_str(), v.description.as_str())).collect();
    let exc = factory.bind(py).call1((e.kind.name(), e.message.as_str(), metadata, violations))?;
    Ok(PyErr::from_value(exc))
}

/// Core's error table: `(name, code, reason, http_status, grpc_status, default_message)` rows.
#[pyfunction]
pub fn error_table() -> Vec<(&'static str, i32, &'static str, u16, &'static str, &'static str)> {
    ERROR_TABLE
        .iter()
        .map(|r| (r.name, r.jsonrpc_code, r.reason, r.http_status, r.grpc_status, r.default_message))
        .collect()
}
