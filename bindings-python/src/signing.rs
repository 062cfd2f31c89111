//! core's `signing`: RFC 8785 canonical JSON, and signing / verifying Agent Cards.

use crate::{errors, models};
use a2a_native::model::AgentCard;
use a2a_native::signing;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The RFC 8785 (JCS) bytes of a JSON value.
#[pyfunction]
pub fn canonicalize<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = signing::canonicalize(&models::to_value(value)?).map_err(errors::to_py)?;
    Ok(PyBytes::new(py, &bytes))
}

/// The card with one more signature, made with the PEM private key `key`.
#[pyfunction]
#[pyo3(signature = (card, key, alg, kid, jku=None))]
pub fn sign_card(
    py: Python<'_>,
    card: &Bound<'_, PyAny>,
    key: &[u8],
    alg: &str,
    kid: &str,
    jku: Option<String>,
) -> PyResult<Py<PyAny>> {
    let mut card: AgentCard = models::from_py(card)?;
    signing::sign_card_named(&mut card, key, alg, kid, jku).map_err(errors::to_py)?;
    models::into_py(py, &card)
}

/// The `kid` of the first signature that verifies under the JWKS `jwks`; raises
/// UnauthenticatedError when none does.
#[pyfunction]
pub fn verify_card(card: &Bound<'_, PyAny>, jwks: &Bound<'_, PyAny>, algorithms: Vec<String>) -> PyResult<String> {
    let card: AgentCard = models::from_py(card)?;
    signing::verify_card_named(&card, models::to_value(jwks)?, &algorithms).map_err(errors::to_py)
}
