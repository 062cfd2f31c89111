//! core's `signing`: RFC 8785 canonical JSON, and signing / verifying Agent Cards.

use crate::{errors, models};
use a2a_native::model::AgentCard;
use a2a_native::signing::{self, CardSigner};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

fn algorithm(name: &str) -> PyResult<jsonwebtoken::Algorithm> {
    name.parse().map_err(|_| PyValueError::new_err(format!("unknown algorithm {name:?}")))
}

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
    let mut signer = CardSigner::from_pem(key, algorithm(alg)?, kid).map_err(errors::to_py)?;
    if let Some(jku) = jku {
        signer = signer.with_jku(jku);
    }
    signer.sign(&mut card).map_err(errors::to_py)?;
    models::into_py(py, &card)
}

/// The `kid` of the first signature that verifies under the JWKS `jwks`; raises
/// UnauthenticatedError when none does.
#[pyfunction]
pub fn verify_card(card: &Bound<'_, PyAny>, jwks: &Bound<'_, PyAny>, algorithms: Vec<String>) -> PyResult<String> {
    let card: AgentCard = models::from_py(card)?;
    let keys =
        serde_json::from_value(models::to_value(jwks)?).map_err(|e| PyValueError::new_err(format!("jwks: {e}")))?;
    let algorithms = algorithms.iter().map(|a| algorithm(a)).collect::<PyResult<Vec<_>>>()?;
    Ok(signing::verify_card(&card, &keys, &algorithms).map_err(errors::to_py)?.kid)
}
