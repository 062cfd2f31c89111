//! core's `client::PushVerifier`: checks a signed push notification where your webhook
//! receives it (headers + exact body), raising UnauthenticatedError naming the failed check.

use crate::{errors, models};
use a2a_native::client::PushVerifier as Core;
use http::{HeaderMap, HeaderName, HeaderValue};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::time::Duration;

#[pyclass(frozen, module = "a2a_native._native")]
pub struct PushVerifier {
    inner: Core,
}

#[pymethods]
impl PushVerifier {
    #[new]
    #[pyo3(signature = (jwks, audience, issuer=None, token=None, max_age=300.0))]
    fn new(
        jwks: &Bound<'_, PyAny>,
        audience: String,
        issuer: Option<String>,
        token: Option<String>,
        max_age: f64,
    ) -> PyResult<Self> {
        let keys: a2a_native::auth::KeySet =
            serde_json::from_value(models::to_value(jwks)?).map_err(|e| PyValueError::new_err(format!("jwks: {e}")))?;
        let max_age =
            Duration::try_from_secs_f64(max_age).map_err(|e| PyValueError::new_err(format!("max_age: {e}")))?;
        let mut inner = Core::new(keys, audience).with_max_age(max_age);
        if let Some(iss) = issuer {
            inner = inner.with_issuer(iss);
        }
        if let Some(t) = token {
            inner = inner.with_token(t);
        }
        Ok(Self { inner })
    }

    /// `headers`: `(name, value)` pairs as received; `body`: the exact bytes. Returns
    /// `{"taskId", "jti", "issuedAt"}`.
    fn verify<'py>(
        &self,
        py: Python<'py>,
        headers: Vec<(String, String)>,
        body: &[u8],
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let name = HeaderName::try_from(name.as_str())
                .map_err(|_| PyValueError::new_err(format!("header name {name:?}")))?;
            let value =
                HeaderValue::try_from(value).map_err(|_| PyValueError::new_err(format!("the {name} header value")))?;
            map.append(name, value);
        }
        let v = py.detach(|| self.inner.verify(&map, body)).map_err(errors::to_py)?;
        let out = PyDict::new(py);
        out.set_item("taskId", v.task_id)?;
        out.set_item("jti", v.jti)?;
        out.set_item("issuedAt", v.issued_at)?;
        Ok(out)
    }
}
