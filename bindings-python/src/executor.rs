//! A Python `AgentExecutor` behind core's [`AgentExecutor`] trait, and the [`EventSink`] it
//! reports through.
//!
//! Each `execute` / `cancel` runs as an asyncio task on the loop that started the server, which
//! the runtime asks for it through the server's [`Inbox`]; the Rust side waits for the outcome
//! without the GIL. When the task is canceled, or core drops the work, the asyncio task is
//! canceled, so the coroutine sees `asyncio.CancelledError`. An exception fails the task with
//! its message (core's rule).

use crate::errors;
use crate::inbox::{Inbox, Job, Run, Start};
use crate::models;
use crate::runtime::future_into_py;
use a2a_native::executor::{self as core, ExecutorError, RequestContext};
use a2a_native::model::StreamResponse;
use pyo3::prelude::*;
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::oneshot;

/// Core's executor trait, filled by a Python object with `execute` / `cancel` coroutines.
pub struct PyExecutor {
    /// Where the coroutines are started: the server's asyncio loop.
    pub inbox: Arc<Inbox>,
}

#[async_trait::async_trait]
impl core::AgentExecutor for PyExecutor {
    async fn execute(&self, ctx: RequestContext, events: core::EventSink) -> Result<(), ExecutorError> {
        self.run("execute", ctx, events).await
    }
    async fn cancel(&self, ctx: RequestContext, events: core::EventSink) -> Result<(), ExecutorError> {
        self.run("cancel", ctx, events).await
    }
    async fn call_method(&self, call: a2a_native::methods::MethodCall) -> a2a_native::Result<serde_json::Value> {
        let (done, rx) = oneshot::channel();
        let run = Arc::new(Run::default());
        self.reporting(Job::Method { call: Box::new(call), run: run.clone(), done }, run, rx, "the method's handler")
            .await
    }
    async fn check_message(&self, check: a2a_native::methods::MessageCheck) -> a2a_native::Result<()> {
        let (done, rx) = oneshot::channel();
        let run = Arc::new(Run::default());
        let job = Job::Check { check: Box::new(check), run: run.clone(), done };
        self.reporting(job, run, rx, "the profile check").await.map(drop)
    }
}

impl PyExecutor {
    /// Starts a handler's `job` and waits for its answer; a caller that leaves (the request is
    /// dropped) cancels its asyncio task.
    async fn reporting(
        &self,
        job: Job,
        run: Arc<Run>,
        rx: oneshot::Receiver<a2a_native::Result<serde_json::Value>>,
        what: &str,
    ) -> a2a_native::Result<serde_json::Value> {
        if self.inbox.push(job).is_err() {
            return Err(a2a_native::A2AError::new(
                a2a_native::ErrorKind::Unavailable,
                "the server's asyncio event loop is closed",
            ));
        }
        let mut guard = CancelOnDrop { inbox: &self.inbox, run: Some(run) };
        let outcome = rx.await;
        guard.run = None;
        outcome.unwrap_or_else(|_| Err(a2a_native::A2AError::internal(format!("{what} ended without an answer"))))
    }

    async fn run(&self, method: &'static str, ctx: RequestContext, sink: core::EventSink) -> Result<(), ExecutorError> {
        let cancelled = ctx.cancelled.clone();
        let (done, mut rx) = oneshot::channel();
        let run = Arc::new(Run::default());
        let job = Job::Start(Box::new(Start { method, ctx, sink, run: run.clone(), done }));
        if self.inbox.push(job).is_err() {
            return Err(ExecutorError::new("the server's asyncio event loop is closed"));
        }
        let mut guard = CancelOnDrop { inbox: &self.inbox, run: Some(run) };
        let watch_cancel = method == "execute";
        let outcome = tokio::select! {
            // The loop usually answers within microseconds: the worker stays awake for it.
            r = core::spin_then_await(&mut rx) => r,
            () = cancelled.cancelled(), if watch_cancel => {
                // The task is being canceled (core sets CANCELED): the coroutine gets
                // CancelledError, and this is not a failure of the agent.
                guard.cancel();
                return Ok(());
            }
        };
        guard.run = None;
        match outcome {
            Some(None) => Ok(()),
            Some(Some(e)) => Err(e),
            None => Err(ExecutorError::new("the Python executor ended without an outcome")),
        }
    }
}

/// Cancels the asyncio task unless it finished (dropped when core drops the work).
struct CancelOnDrop<'a> {
    inbox: &'a Inbox,
    run: Option<Arc<Run>>,
}

impl CancelOnDrop<'_> {
    fn cancel(&mut self) {
        if let Some(run) = self.run.take() {
            // Refused only when the loop is gone, and its tasks with it.
            let _ = self.inbox.push(Job::Cancel(run));
        }
    }
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// Called by the asyncio task when it is done: `None`, or the failure's message, with the name of
/// the A2A error it raised (a refusal of the request: see core's `ExecutorError::refusal`).
#[pyclass(frozen, module = "a2a_native._native")]
pub struct Completion {
    tx: Mutex<Option<oneshot::Sender<Option<ExecutorError>>>>,
    /// Weak: the run holds the task, whose coroutine holds this.
    run: Weak<Run>,
}

impl Completion {
    pub fn new(tx: oneshot::Sender<Option<ExecutorError>>, run: &Arc<Run>) -> Self {
        Self { tx: Mutex::new(Some(tx)), run: Arc::downgrade(run) }
    }

    pub fn report(&self, error: Option<ExecutorError>) {
        if let Some(run) = self.run.upgrade() {
            run.finished();
        }
        if let Some(tx) = self.tx.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = tx.send(error);
        }
    }
}

#[pymethods]
impl Completion {
    #[pyo3(signature = (error=None, name=None))]
    fn __call__(&self, error: Option<String>, name: Option<&str>) {
        self.report(error.map(|message| ExecutorError::from_host(name, message)));
    }
}

/// Core's event sink: every method returns an awaitable.
#[pyclass(frozen, module = "a2a_native._native")]
pub struct EventSink {
    inner: Arc<core::QueuedSink>,
}

impl EventSink {
    pub fn new(inner: core::EventSink) -> Self {
        Self { inner: Arc::new(core::QueuedSink::new(inner)) }
    }
}

#[pymethods]
impl EventSink {
    #[getter]
    fn task_id(&self) -> &str {
        self.inner.sink().task_id()
    }
    #[getter]
    fn context_id(&self) -> &str {
        self.inner.sink().context_id()
    }

    /// Marks an extension the client asked for (and the card declares) as activated.
    fn activate_extension(&self, uri: &str) -> bool {
        self.inner.sink().activate_extension(uri)
    }

    /// A status update: `state` by core's table of names (`"working"`, `"TASK_STATE_WORKING"`),
    /// `message` a str (one agent text part) or a Message dict, read by core as in every
    /// language.
    #[pyo3(signature = (state, message=None))]
    fn status<'py>(
        &self,
        py: Python<'py>,
        state: &str,
        message: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let message = message.map(models::to_value).transpose()?;
        let event = self.inner.sink().status_event_from_value(state, message).map_err(errors::to_py)?;
        self.deliver(py, event)
    }

    /// An Artifact dict (core gives one without an id a fresh one, and checks it), or with
    /// `append` more parts for an earlier one with the same id.
    fn artifact<'py>(
        &self,
        py: Python<'py>,
        artifact: &Bound<'py, PyAny>,
        append: bool,
        last_chunk: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let artifact = models::to_value(artifact)?;
        let event = self.inner.sink().artifact_event_from_value(artifact, append, last_chunk).map_err(errors::to_py)?;
        self.deliver(py, event)
    }

    /// A direct reply (str or Message dict) instead of a task.
    fn message<'py>(&self, py: Python<'py>, message: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let message = self.inner.sink().agent_message_from_value(models::to_value(message)?).map_err(errors::to_py)?;
        self.deliver(py, StreamResponse::Message(message))
    }

    /// Any event, as a StreamResponse dict.
    fn send<'py>(&self, py: Python<'py>, event: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let event = self.inner.sink().event_from_value(models::to_value(event)?).map_err(errors::to_py)?;
        self.deliver(py, event)
    }
}

impl EventSink {
    /// Sends at once when the sink has room and returns `None`; only when it is full, an
    /// awaitable that sends the queued events in order (core's `QueuedSink`). A round trip
    /// through the event loop costs far more than the send, so the common case never makes one.
    fn deliver<'py>(&self, py: Python<'py>, event: StreamResponse) -> PyResult<Bound<'py, PyAny>> {
        if self.inner.deliver(event).map_err(errors::to_py)? {
            return Ok(py.None().into_bound(py));
        }
        let queued = self.inner.clone();
        future_into_py(py, async move { queued.flush().await.map_err(errors::to_py) })
    }
}
