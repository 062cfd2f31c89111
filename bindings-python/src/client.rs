//! core's [`a2a_native::client::Client`]: every operation takes and returns ProtoJSON dicts,
//! as awaitables; streams are async iterators over StreamResponse dicts.

use crate::runtime::future_into_py;
use crate::{credentials, errors, models};
use a2a_native::client::{self as core, ClientBuilder, ClientOptions};
use a2a_native::request::A2ARequest;
use a2a_native::trace_context::{TraceParent, with_caller};
use pyo3::exceptions::PyStopAsyncIteration;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

#[pyclass(frozen, module = "a2a_native._native")]
pub struct Client {
    inner: core::Client,
}

/// A core client builder from the Python layer's options: core's `ClientOptions` JSON (read
/// strictly by core), plus `credentials`, a callable `(method, url) -> headers` (plain or
/// async) that JSON cannot carry.
fn builder(py: Python<'_>, options: Option<Bound<'_, PyDict>>) -> PyResult<ClientBuilder> {
    let Some(options) = options else { return Ok(core::Client::builder()) };
    let options = options.copy()?;
    let callable = options.get_item("credentials")?;
    options.del_item("credentials").ok();
    let mut b =
        ClientOptions::from_value(models::to_value(&options)?).and_then(|o| o.builder()).map_err(errors::to_py)?;
    if let Some(callable) = callable.filter(|c| !c.is_none()) {
        b = b.credentials(Arc::new(credentials::PyCredentials::new(py, callable.unbind())?));
    }
    Ok(b)
}

/// The caller's OpenTelemetry context, as the Python layer read it (`{"traceparent": ...}`).
type Trace = Option<HashMap<String, String>>;

/// Runs a call as part of the Python caller's trace (see `trace_context::with_caller`).
fn traced<F: Future>(trace: Trace, call: F) -> impl Future<Output = F::Output> {
    let trace = trace.unwrap_or_default();
    let text = |name: &str| trace.get(name).map(String::as_str);
    with_caller(TraceParent::from_text(text("traceparent"), text("tracestate"), text("baggage")), call)
}

#[pymethods]
impl Client {
    /// Resolves the agent card at `url` and picks an interface.
    #[staticmethod]
    #[pyo3(signature = (url, options=None))]
    fn connect<'py>(py: Python<'py>, url: String, options: Option<Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyAny>> {
        let b = builder(py, options)?;
        future_into_py(py, async move {
            let inner = b.connect(&url).await.map_err(errors::to_py)?;
            Ok(Client { inner })
        })
    }

    /// A client for an agent card, without network access.
    #[staticmethod]
    #[pyo3(signature = (card, options=None))]
    fn from_card<'py>(
        py: Python<'py>,
        card: &Bound<'py, PyAny>,
        options: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Self> {
        let card = models::to_value(card)?;
        let b = builder(py, options)?;
        Ok(Client { inner: b.from_card_value(card).map_err(errors::to_py)? })
    }

    #[getter]
    fn card(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        models::into_py(py, self.inner.card())
    }
    #[getter]
    fn url(&self) -> &str {
        self.inner.url()
    }
    #[getter]
    fn binding(&self) -> &'static str {
        self.inner.binding().as_str()
    }
    #[getter]
    fn protocol_version(&self) -> &'static str {
        self.inner.protocol_version().as_str()
    }

    /// A unary operation by its A2A name (`"GetTask"`) with a ProtoJSON dict: core reads,
    /// validates and calls it (`Client::call`).
    #[pyo3(signature = (method, request, trace=None))]
    fn call<'py>(
        &self,
        py: Python<'py>,
        method: String,
        request: &Bound<'py, PyAny>,
        trace: Trace,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = models::to_value(request)?;
        let client = self.inner.clone();
        future_into_py(
            py,
            traced(trace, async move {
                client.call(&method, request).await.map(|r| models::Json::of(&r)).map_err(errors::to_py)
            }),
        )
    }

    /// An extension method: `(result, activated extensions)`.
    #[pyo3(signature = (method, params, extensions, trace=None))]
    fn call_method<'py>(
        &self,
        py: Python<'py>,
        method: String,
        params: &Bound<'py, PyAny>,
        extensions: Vec<String>,
        trace: Trace,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = models::to_value(params)?;
        let client = self.inner.clone();
        future_into_py(
            py,
            traced(trace, async move {
                let reply = client.call_method(&method, params, &extensions).await.map_err(errors::to_py)?;
                Ok((models::Json::of(&reply.result), reply.activated))
            }),
        )
    }

    /// Every task matching `request`, page after page, as an async iterator.
    fn list_all_tasks(&self, request: &Bound<'_, PyAny>) -> PyResult<Feed> {
        let req = A2ARequest::list_tasks_from_caller(models::to_value(request)?).map_err(errors::to_py)?;
        Ok(Feed::new(self.inner.list_all_tasks(req)))
    }

    /// A streaming operation by its A2A name (`Client::stream`), as a [`Feed`].
    #[pyo3(signature = (method, request, trace=None))]
    fn stream<'py>(
        &self,
        py: Python<'py>,
        method: String,
        request: &Bound<'py, PyAny>,
        trace: Trace,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = models::to_value(request)?;
        let client = self.inner.clone();
        future_into_py(
            py,
            traced(trace, async move {
                let stream = client.stream(&method, request).await.map_err(errors::to_py)?;
                Ok(Feed::new(stream))
            }),
        )
    }
}

/// An event stream (StreamResponse dicts) or the tasks of `list_all_tasks` (Task dicts): core's
/// [`core::Feed`]. The Python layer's `__anext__` fetches, then takes the oldest item read, so
/// an item read for a wait that was canceled (a timed-out `wait_for`) is the next one taken.
#[pyclass(frozen, module = "a2a_native._native")]
pub struct Feed(core::Feed<models::Json>);

impl Feed {
    fn new<T: serde::Serialize>(
        items: impl futures_util::Stream<Item = a2a_native::Result<T>> + Send + 'static,
    ) -> Self {
        use futures_util::StreamExt;
        Feed(core::Feed::new(items.map(|item| item.map(|item| models::Json::of(&item)))))
    }
}

#[pymethods]
impl Feed {
    /// The oldest item read and not yet taken (`None`: fetch first).
    fn take<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.0.take().map(|item| item.into_pyobject(py)).transpose()
    }

    /// Reads the next item for `take` (StopAsyncIteration at the end).
    fn fetch<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let feed = self.0.clone();
        future_into_py(py, async move {
            match feed.fetch().await {
                Some(read) => read.map_err(errors::to_py),
                None => Err(PyStopAsyncIteration::new_err(())),
            }
        })
    }

    /// Ends the stream now (the task goes on).
    fn aclose<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let feed = self.0.clone();
        future_into_py(py, async move {
            feed.close().await;
            Ok(())
        })
    }
}
