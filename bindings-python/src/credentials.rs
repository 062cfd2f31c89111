//! A Python callable as core's [`CredentialProvider`]: `(method, url) -> {header: value}`,
//! plain or `async`: then awaited on the event loop that awaits the call (the one the client
//! was made on, for work the client does on its own: a stream's reconnect).

use a2a_native::client::{CredentialContext, CredentialProvider, headers_from_pairs};
use a2a_native::error::{A2AError, ErrorKind, Result};
use async_trait::async_trait;
use http::header::{HeaderName, HeaderValue};
use pyo3::intern;
use pyo3::prelude::*;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::oneshot;

pub struct PyCredentials {
    callable: Py<PyAny>,
    /// The `contextvars` context an `async` provider runs in: the client maker's.
    context: Py<PyAny>,
    /// The client maker's loop, for a call no loop awaits; none when the client was made
    /// outside a running loop.
    event_loop: Option<Py<PyAny>>,
}

impl PyCredentials {
    pub fn new(py: Python<'_>, callable: Py<PyAny>) -> PyResult<Self> {
        if !callable.bind(py).is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "credentials must be a callable (method, url) -> dict of headers",
            ));
        }
        let event_loop = crate::runtime::asyncio(py)?.call_method0("get_running_loop").ok().map(Bound::unbind);
        let context = py.import("contextvars")?.call_method0("copy_context")?.unbind();
        Ok(Self { callable, context, event_loop })
    }
}

/// A failure inside the provider: the call is not sent, and the caller sees why. (Formatting a
/// `PyErr` uses Python: attached only.)
fn provider_error(e: impl std::fmt::Display) -> A2AError {
    A2AError::new(ErrorKind::Internal, format!("the credentials callable failed: {e}"))
}

fn to_headers(py: Python<'_>, value: Py<PyAny>) -> Result<Vec<(HeaderName, HeaderValue)>> {
    if value.is_none(py) {
        return Ok(Vec::new());
    }
    let dict = value
        .bind(py)
        .cast::<pyo3::types::PyDict>()
        .map_err(|_| A2AError::new(ErrorKind::Internal, "the credentials callable must return a dict of headers"))?;
    let pairs: Vec<(String, String)> = dict
        .iter()
        .map(|(k, v)| Ok((k.extract::<String>()?, v.extract::<String>()?)))
        .collect::<PyResult<_>>()
        .map_err(provider_error)?;
    headers_from_pairs(pairs)
}

/// The Python side of the process is exiting: no provider runs any more.
fn exiting() -> A2AError {
    A2AError::new(ErrorKind::Internal, "the credentials callable cannot run: Python is exiting")
}

#[async_trait]
impl CredentialProvider for PyCredentials {
    async fn headers(&self, ctx: &CredentialContext<'_>) -> Result<Vec<(HeaderName, HeaderValue)>> {
        let (method, url) = (ctx.method.to_owned(), ctx.url.to_owned());
        // On a runtime thread: Python only through the gate.
        let pending = crate::runtime::attach_on_worker(|py| -> Result<std::result::Result<Py<PyAny>, _>> {
            let out = self.callable.call1(py, (method, url)).map_err(provider_error)?;
            if !out.bind(py).hasattr("__await__").unwrap_or(false) {
                return Ok(Ok(out));
            }
            let caller = crate::runtime::CALLER_LOOP.try_with(|l| l.clone_ref(py)).ok();
            let event_loop = caller.or_else(|| self.event_loop.as_ref().map(|l| l.clone_ref(py))).ok_or_else(|| {
                A2AError::new(
                    ErrorKind::Internal,
                    "an async credentials callable needs an event loop: call the client from one, or make it in one",
                )
            })?;
            let context = &self.context;
            let (tx, rx) = oneshot::channel();
            let kwargs = pyo3::types::PyDict::new(py);
            kwargs.set_item(intern!(py, "context"), context).map_err(provider_error)?;
            let start = wrap_pyfunction!(start, py).map_err(provider_error)?;
            let running = Arc::new(Mutex::new(Running::default()));
            let done = Awaited { tx: Mutex::new(Some(tx)), running: running.clone() };
            event_loop
                .bind(py)
                .call_method(intern!(py, "call_soon_threadsafe"), (start, out, done), Some(&kwargs))
                .map_err(provider_error)?;
            Ok(Err((rx, Abandon { running, armed: true })))
        })
        .ok_or_else(exiting)??;
        let value = match pending {
            Ok(value) => value,
            Err((rx, mut abandon)) => {
                let outcome = rx.await;
                abandon.armed = false;
                outcome
                    .map_err(|_| provider_error("its event loop closed before it finished"))?
                    .map_err(provider_error)?
            }
        };
        crate::runtime::attach_on_worker(|py| to_headers(py, value)).ok_or_else(exiting)?
    }
}

/// On the client's loop: awaits the provider's awaitable as a task, reporting to `done`;
/// unless the call that wants it was abandoned meanwhile.
#[pyfunction]
fn start(awaitable: &Bound<'_, PyAny>, done: &Bound<'_, Awaited>) -> PyResult<()> {
    let py = awaitable.py();
    let mut running = lock(&done.get().running);
    if running.abandoned {
        // Never awaited: closed, so Python does not warn that it was not.
        if awaitable.hasattr(intern!(py, "close"))? {
            awaitable.call_method0(intern!(py, "close"))?;
        }
        return Ok(());
    }
    let asyncio = crate::runtime::asyncio(py)?;
    let task = asyncio.call_method1(intern!(py, "ensure_future"), (awaitable,))?;
    task.call_method1(intern!(py, "add_done_callback"), (done,))?;
    running.task = Some((task.unbind(), asyncio.call_method0(intern!(py, "get_running_loop"))?.unbind()));
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The provider's task and its loop, from its start until it ends (both set and cleared on
/// the loop, so the Rust side drops no Python object); whether the call gave up on it.
#[derive(Default)]
struct Running {
    task: Option<(Py<PyAny>, Py<PyAny>)>,
    abandoned: bool,
}

/// Cancels the provider's task when the call that waits for it is dropped (it timed out, or
/// its caller left) before the task ended: a slow token endpoint piles up no tasks.
struct Abandon {
    running: Arc<Mutex<Running>>,
    armed: bool,
}

impl Drop for Abandon {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let task = {
            let mut running = lock(&self.running);
            running.abandoned = true;
            running.task.take()
        };
        if let Some((task, event_loop)) = task {
            crate::runtime::attach_on_worker(move |py| {
                if let Ok(cancel) = task.bind(py).getattr(intern!(py, "cancel")) {
                    // A closed loop: nothing runs the task any more.
                    let _ = event_loop.call_method1(py, intern!(py, "call_soon_threadsafe"), (cancel,));
                }
            });
        }
    }
}

/// The provider's headers, or its failure's message.
type Outcome = std::result::Result<Py<PyAny>, String>;

/// The provider task's done callback: its result (or exception) back to the Rust side.
#[pyclass(frozen, module = "a2a_native._native")]
struct Awaited {
    tx: Mutex<Option<oneshot::Sender<Outcome>>>,
    running: Arc<Mutex<Running>>,
}

#[pymethods]
impl Awaited {
    fn __call__(&self, task: &Bound<'_, PyAny>) {
        lock(&self.running).task = None;
        // A failure (a cancel included) as its message, made here while attached.
        let result = task.call_method0(intern!(task.py(), "result")).map(Bound::unbind).map_err(|e| e.to_string());
        if let Some(tx) = lock(&self.tx).take() {
            let _ = tx.send(result);
        }
    }
}
