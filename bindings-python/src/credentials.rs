//! A Python callable as core's [`CredentialProvider`]: `(method, url) -> {header: value}`,
//! plain or `async` (then awaited on the event loop the client was made on).

use a2a_native::client::{CredentialContext, CredentialProvider};
use a2a_native::error::{A2AError, ErrorKind, Result};
use async_trait::async_trait;
use http::header::{HeaderName, HeaderValue};
use pyo3::prelude::*;
use pyo3_async_runtimes::TaskLocals;

pub struct PyCredentials {
    callable: Py<PyAny>,
    /// The loop an `async` provider runs on; none when the client was made outside one.
    locals: Option<TaskLocals>,
}

impl PyCredentials {
    pub fn new(py: Python<'_>, callable: Py<PyAny>) -> PyResult<Self> {
        if !callable.bind(py).is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "credentials must be a callable (method, url) -> dict of headers",
            ));
        }
        let locals = pyo3_async_runtimes::tokio::get_current_locals(py).ok();
        Ok(Self { callable, locals })
    }
}

/// A failure inside the provider: the call is not sent, and the caller sees why.
fn provider_error(e: PyErr) -> A2AError {
    A2AError::new(ErrorKind::Internal, format!("the credentials callable failed: {e}"))
}

fn to_headers(py: Python<'_>, value: Py<PyAny>) -> Result<Vec<(HeaderName, HeaderValue)>> {
    let pairs: Vec<(String, String)> = if value.is_none(py) {
        Vec::new()
    } else {
        let dict = value.bind(py).cast::<pyo3::types::PyDict>().map_err(|_| {
            A2AError::new(ErrorKind::Internal, "the credentials callable must return a dict of headers")
        })?;
        dict.iter()
            .map(|(k, v)| Ok((k.extract::<String>()?, v.extract::<String>()?)))
            .collect::<PyResult<_>>()
            .map_err(provider_error)?
    };
    pairs
        .into_iter()
        .map(|(name, value)| {
            let name = HeaderName::try_from(name.as_str())
                .map_err(|_| A2AError::new(ErrorKind::InvalidParams, format!("{name:?} is not an HTTP header name")))?;
            let mut value = HeaderValue::try_from(value).map_err(|_| {
                A2AError::new(ErrorKind::InvalidParams, format!("the {name} value is not a valid HTTP header value"))
            })?;
            value.set_sensitive(true);
            Ok((name, value))
        })
        .collect()
}

#[async_trait]
impl CredentialProvider for PyCredentials {
    async fn headers(&self, ctx: &CredentialContext<'_>) -> Result<Vec<(HeaderName, HeaderValue)>> {
        let (method, url) = (ctx.method.to_owned(), ctx.url.to_owned());
        let pending = Python::attach(|py| -> Result<std::result::Result<Py<PyAny>, _>> {
            let out = self.callable.call1(py, (method, url)).map_err(provider_error)?;
            if !out.bind(py).hasattr("__await__").unwrap_or(false) {
                return Ok(Ok(out));
            }
            let locals = self.locals.as_ref().ok_or_else(|| {
                A2AError::new(
                    ErrorKind::Internal,
                    "an async credentials callable needs a client made inside a running event loop",
                )
            })?;
            let fut =
                pyo3_async_runtimes::into_future_with_locals(locals, out.into_bound(py)).map_err(provider_error)?;
            Ok(Err(fut))
        })?;
        let value = match pending {
            Ok(value) => value,
            Err(fut) => fut.await.map_err(provider_error)?,
        };
        Python::attach(|py| to_headers(py, value))
    }
}
