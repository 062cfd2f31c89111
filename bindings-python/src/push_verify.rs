//! core's `client::PushVerifier`: checks a signed push notification where your webhook
//! receives it (headers + exact body), raising UnauthenticatedError naming the failed check.

use crate::{errors, models};
use a2a_native::client::{PushVerifier as Core, PushVerifierOptions};
use pyo3::prelude::*;

#[pyclass(frozen, module = "a2a_native._native")]
pub struct PushVerifier {
    inner: Core,
}

#[pymethods]
impl PushVerifier {
    /// `options`: core's description (`{"jwks", "audience", "issuer", "token", "maxAge"}`).
    #[new]
    fn new(options: &Bound<'_, PyAny>) -> PyResult<Self> {
        let options = PushVerifierOptions::from_value(models::to_value(options)?).map_err(errors::to_py)?;
        Ok(Self { inner: options.verifier().map_err(errors::to_py)? })
    }

    /// `headers`: `(name, value)` pairs as received; `body`: the exact bytes. Returns
    /// `{"taskId", "jti", "issuedAt"}`.
    fn verify(&self, py: Python<'_>, headers: Vec<(String, String)>, body: &[u8]) -> PyResult<Py<PyAny>> {
        let verified = py.detach(|| self.inner.verify_pairs(headers, body)).map_err(errors::to_py)?;
        models::into_py(py, &verified)
    }
}
