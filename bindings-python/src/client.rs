//! core's [`a2a_native::client::Client`]: every operation takes and returns ProtoJSON dicts,
//! as awaitables; streams are async iterators over StreamResponse dicts.

use crate::runtime::future_into_py;
use crate::{credentials, errors, models};
use a2a_native::client::{self as core, ClientBuilder, ClientOptions};
use a2a_native::model;
use a2a_native::trace_context::{TraceParent, with_caller};
use pyo3::exceptions::PyStopAsyncIteration;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

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
        let card = models::from_py(card)?;
        let b = builder(py, options)?;
        Ok(Client { inner: b.from_card(card).map_err(errors::to_py)? })
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
    fn list_all_tasks(&self, request: &Bound<'_, PyAny>) -> PyResult<TaskPager> {
        let req: model::ListTasksRequest = models::from_py(request)?;
        Ok(TaskPager {
            inner: Arc::new(tokio::sync::Mutex::new(Box::pin(self.inner.list_all_tasks(req)))),
            held: Backlog::default(),
        })
    }

    /// A streaming operation by its A2A name (`Client::stream`), as an [`EventStream`].
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
                Ok(EventStream::new(stream))
            }),
        )
    }
}

/// The events of one stream (StreamResponse dicts); `aclose()` ends it early, also while
/// another task awaits the next event (that one then ends the iteration).
#[pyclass(frozen, module = "a2a_native._native")]
pub struct EventStream {
    inner: Arc<tokio::sync::Mutex<Option<core::EventStream>>>,
    closed: CancellationToken,
    /// Events read for an `__anext__` that was canceled before it got them (a timed-out
    /// `wait_for`): the next calls return them first, in order.
    held: Backlog,
}

/// The items read and not yet taken, oldest first. `fetch()` reads one more into it (pushed
/// under the reader's lock, so in read order) and resolves to `None`; `take()` gives the
/// oldest. The Python layer's `__anext__` takes one after its fetch, so an item read for a
/// wait that was canceled (a timed-out `wait_for`) stays for the next one, in order, as in an
/// `asyncio.Queue`.
#[derive(Default, Clone)]
struct Backlog(Arc<std::sync::Mutex<std::collections::VecDeque<models::Json>>>);

impl Backlog {
    fn push(&self, item: models::Json) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push_back(item);
    }

    fn take<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let item = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop_front();
        item.map(|item| item.into_pyobject(py)).transpose()
    }
}

impl EventStream {
    fn new(stream: core::EventStream) -> Self {
        Self {
            inner: Arc::new(tokio::sync::Mutex::new(Some(stream))),
            closed: CancellationToken::new(),
            held: Backlog::default(),
        }
    }
}

#[pymethods]
impl EventStream {
    /// The oldest event read and not yet taken (`None`: fetch first).
    fn take<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.held.take(py)
    }

    /// Reads the next event for `take` (StopAsyncIteration at the end).
    fn fetch<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (inner, closed, held) = (self.inner.clone(), self.closed.clone(), self.held.clone());
        future_into_py(py, async move {
            let mut guard = inner.lock().await;
            let next = match guard.as_mut() {
                Some(stream) => tokio::select! {
                    next = stream.next() => next,
                    () = closed.cancelled() => None,
                },
                None => None,
            };
            match next {
                Some(Ok(event)) => {
                    held.push(models::Json::of(&event));
                    Ok(())
                }
                Some(Err(e)) => {
                    *guard = None;
                    Err(errors::to_py(e))
                }
                None => {
                    *guard = None;
                    Err(PyStopAsyncIteration::new_err(()))
                }
            }
        })
    }

    /// Ends the stream (the task goes on).
    fn aclose<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.closed.cancel();
        let inner = self.inner.clone();
        future_into_py(py, async move {
            inner.lock().await.take();
            Ok(())
        })
    }
}

type Tasks = std::pin::Pin<Box<dyn futures_util::Stream<Item = a2a_native::Result<model::Task>> + Send>>;

/// The tasks of `list_all_tasks` (Task dicts), fetched a page at a time as they are consumed.
#[pyclass(frozen, module = "a2a_native._native")]
pub struct TaskPager {
    inner: Arc<tokio::sync::Mutex<Tasks>>,
    held: Backlog,
}

#[pymethods]
impl TaskPager {
    /// The oldest task read and not yet taken (`None`: fetch first).
    fn take<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.held.take(py)
    }

    /// Reads the next task for `take`, a page at a time (StopAsyncIteration at the end).
    fn fetch<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (inner, held) = (self.inner.clone(), self.held.clone());
        future_into_py(py, async move {
            use futures_util::StreamExt;
            let mut pager = inner.lock().await;
            match pager.next().await {
                Some(Ok(task)) => {
                    held.push(models::Json::of(&task));
                    Ok(())
                }
                Some(Err(e)) => Err(errors::to_py(e)),
                None => Err(PyStopAsyncIteration::new_err(())),
            }
        })
    }
}
