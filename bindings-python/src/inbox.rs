//! How runtime threads hand executor work to the server's asyncio loop without the GIL: core's
//! [`inbox`](a2a_native::inbox), whose socket the loop watches (`loop.add_reader`). On the
//! loop's thread, [`Reader`] takes every queued [`Job`] in one callback. So a tokio worker never
//! waits for the GIL (while it did, every task on that worker stalled, and the loop holds the
//! GIL whenever the agent's Python runs), never runs Python at exit, and a burst of requests
//! costs the loop one wake-up. After a batch the loop keeps looking for the next one for a
//! moment (`call_soon` of `_poll`) instead of sleeping, as the runtime's worker does for the
//! loop's answer (`executor::spin_then_await`).
//!
//! The reader is dropped when the loop forgets it (`remove_reader` at [`Job::Close`], or the
//! loop closing): then the inbox refuses new jobs and fails the queued ones, so no execution
//! waits for a loop that will not run it.

use crate::executor::{Completion, EventSink};
use crate::models;
use a2a_native::executor::{self as core, ExecutorError, RequestContext};
use a2a_native::inbox::{self, Watched};
use a2a_native::model;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::oneshot;

pub type Inbox = inbox::Inbox<Job>;
/// One `execute`/`cancel` call, extension method or profile check: its asyncio task once the
/// loop made it.
pub type Run = inbox::Run<Py<PyAny>>;

/// What the loop is asked to do.
pub enum Job {
    /// Run `executor.<method>(context, events)` as an asyncio task; it reports to `done`.
    Start(Box<Start>),
    /// Cancel that task (`asyncio.CancelledError` inside the coroutine), or skip it if not begun.
    Cancel(Arc<Run>),
    /// Answer an extension method: the executor's handler marked with its name. Its task is
    /// kept in `run`, so a caller that leaves cancels it.
    Method {
        call: Box<a2a_native::methods::MethodCall>,
        run: Arc<Run>,
        done: oneshot::Sender<a2a_native::Result<serde_json::Value>>,
    },
    /// Check a message against a profile extension's rules: the executor's check marked with
    /// the extension's URI (the result is ignored; an error refuses the message).
    Check {
        check: Box<a2a_native::methods::MessageCheck>,
        run: Arc<Run>,
        done: oneshot::Sender<a2a_native::Result<serde_json::Value>>,
    },
    /// The server stopped: the loop stops watching this inbox.
    Close,
}

/// What [`Job::Start`] carries (boxed: it is far larger than the other jobs).
pub struct Start {
    pub method: &'static str,
    pub ctx: RequestContext,
    pub sink: core::EventSink,
    pub run: Arc<Run>,
    pub done: oneshot::Sender<Option<ExecutorError>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A new inbox, watched by `event_loop` from now on. Call on the loop's thread.
pub fn watch(py: Python<'_>, event_loop: &Bound<'_, PyAny>, executor: Py<PyAny>) -> PyResult<Arc<Inbox>> {
    let (inbox, watched) = Inbox::new()?;
    let fd = watched.0.as_raw_fd();
    let reader = Reader { inbox: inbox.clone(), watched, event_loop: event_loop.clone().unbind(), executor };
    event_loop.call_method1("add_reader", (fd, Py::new(py, reader)?))?;
    Ok(inbox)
}

/// The loop's reader callback: runs the queued jobs on the loop's thread.
#[pyclass(frozen, module = "a2a_native._native")]
pub struct Reader {
    inbox: Arc<Inbox>,
    watched: Watched,
    event_loop: Py<PyAny>,
    executor: Py<PyAny>,
}

static BEGIN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static CALL_METHOD: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static CHECK_MESSAGE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

#[pymethods]
impl Reader {
    /// Every job is run whatever another one does: a failure is reported (as asyncio reports
    /// a callback's) and the rest go on. A `KeyboardInterrupt` or `SystemExit` out of an
    /// agent's eagerly started first step is raised to the loop after them, as it would be
    /// from the agent's task.
    fn __call__(slf: &Bound<'_, Self>) -> PyResult<()> {
        Self::run_jobs(slf, true)
    }

    /// The keep-awake turn: as the socket's callback, but reads the socket only when a wake-up
    /// byte was written (`Inbox::take`); a byte left behind is read by the socket's own callback.
    fn _poll(slf: &Bound<'_, Self>) -> PyResult<()> {
        Self::run_jobs(slf, false)
    }
}

impl Reader {
    fn run_jobs(slf: &Bound<'_, Self>, from_socket: bool) -> PyResult<()> {
        let py = slf.py();
        let this = slf.get();
        let mut fatal = None;
        let jobs = this.inbox.take(&this.watched, from_socket);
        let had_jobs = !jobs.is_empty();
        for job in jobs {
            match job {
                Job::Start(start) => {
                    let Start { method, ctx, sink, run, done } = *start;
                    if let Err(e) = this.start(py, method, &ctx, sink, run, done) {
                        fatal.get_or_insert(e);
                    }
                }
                Job::Cancel(run) => {
                    if let Some(Err(e)) = run.cancel().map(|t| t.call_method0(py, "cancel")) {
                        e.print(py);
                    }
                }
                Job::Method { call, run, done } => {
                    this.run_reporting(py, &CALL_METHOD, "_call_method", call.view(), run, done)
                }
                Job::Check { check, run, done } => {
                    this.run_reporting(py, &CHECK_MESSAGE, "_check_message", check.view(), run, done)
                }
                Job::Close => {
                    this.inbox.close();
                    if let Err(e) = this.event_loop.call_method1(py, "remove_reader", (this.watched.0.as_raw_fd(),)) {
                        e.print(py);
                    }
                }
            }
        }
        // Idle again after a moment: then the loop sleeps until the socket wakes it.
        if this.inbox.stay_awake(had_jobs)
            && let Err(e) = slf
                .getattr(intern!(py, "_poll"))
                .and_then(|turn| this.event_loop.call_method1(py, intern!(py, "call_soon"), (turn,)))
        {
            e.print(py);
        }
        fatal.map_or(Ok(()), Err)
    }
}

impl Reader {
    fn start(
        &self,
        py: Python<'_>,
        method: &str,
        ctx: &RequestContext,
        sink: core::EventSink,
        run: Arc<Run>,
        done: oneshot::Sender<Option<ExecutorError>>,
    ) -> PyResult<()> {
        if run.is_canceled() {
            let _ = done.send(Some(ExecutorError::new("the executor's coroutine was canceled")));
            return Ok(());
        }
        // Failing here drops `done`: the execution ends "without an outcome".
        let Ok(done) = Py::new(py, Completion::new(done, &run)) else { return Ok(()) };
        let task = (|| -> PyResult<Py<PyAny>> {
            let begin =
                BEGIN.get_or_try_init(py, || py.import("a2a_native.executor")?.getattr("_begin").map(Bound::unbind))?;
            // Core's view of the context (camelCase JSON) as a dict; `executor.py` reads it.
            let context = models::to_py(py, &model::to_value(&ctx.view()))?;
            let events = Py::new(py, EventSink::new(sink))?;
            let args = (self.event_loop.bind(py), self.executor.bind(py), method, context, events, done.clone_ref(py));
            Ok(begin.bind(py).call1(args)?.unbind())
        })();
        match task {
            Ok(task) => run.began(task),
            Err(e) => {
                done.get().report(Some(ExecutorError::new(e.to_string())));
                if !e.is_instance_of::<pyo3::exceptions::PyException>(py) {
                    return Err(e);
                }
            }
        }
        Ok(())
    }
}

impl Reader {
    /// Runs `executor.py`'s `function` (an extension method's handler, or a profile check) as
    /// an asyncio task that reports to a [`MethodReply`], and keeps the task in `run`.
    fn run_reporting(
        &self,
        py: Python<'_>,
        cell: &PyOnceLock<Py<PyAny>>,
        function: &str,
        view: serde_json::Value,
        run: Arc<Run>,
        done: oneshot::Sender<a2a_native::Result<serde_json::Value>>,
    ) {
        if run.is_canceled() {
            // Its caller left before it began.
            return;
        }
        let reply = MethodReply { done: std::sync::Mutex::new(Some(done)), run: Arc::downgrade(&run) };
        let Ok(reply) = Py::new(py, reply) else { return };
        let started = (|| -> PyResult<Py<PyAny>> {
            let function =
                cell.get_or_try_init(py, || py.import("a2a_native.executor")?.getattr(function).map(Bound::unbind))?;
            let view = models::to_py(py, &view)?;
            let args = (self.event_loop.bind(py), self.executor.bind(py), view, reply.clone_ref(py));
            Ok(function.bind(py).call1(args)?.unbind())
        })();
        match started {
            Ok(task) => run.began(task),
            Err(e) => reply.get().send(Err(a2a_native::A2AError::internal(e.to_string()))),
        }
    }
}

/// Called by the handler's task as it ends: `(result)`, or `(None, error_name, message)`.
#[pyclass(frozen, module = "a2a_native._native")]
pub struct MethodReply {
    done: std::sync::Mutex<Option<oneshot::Sender<a2a_native::Result<serde_json::Value>>>>,
    /// Weak: the run holds the task, which holds this reply (a cycle Python cannot collect).
    run: std::sync::Weak<Run>,
}

impl MethodReply {
    /// On the loop's thread, as the task ends.
    fn send(&self, outcome: a2a_native::Result<serde_json::Value>) {
        if let Some(run) = self.run.upgrade() {
            run.finished();
        }
        if let Some(tx) = lock(&self.done).take() {
            let _ = tx.send(outcome);
        }
    }
}

#[pymethods]
impl MethodReply {
    /// The result (any JSON-able value); or, with `error`, the name of an A2A error class
    /// (another exception is `InternalError`) and its message.
    #[pyo3(signature = (result=None, error=None, message=None))]
    fn __call__(&self, result: Option<&Bound<'_, PyAny>>, error: Option<&str>, message: Option<String>) {
        let outcome = match error {
            Some(name) => {
                Err(a2a_native::A2AError::new(a2a_native::ErrorKind::from_host(name), message.unwrap_or_default()))
            }
            None => match result {
                Some(r) => models::to_value(r)
                    .map_err(|e| a2a_native::A2AError::internal(format!("the method's result is not JSON: {e}"))),
                None => Ok(serde_json::Value::Null),
            },
        };
        self.send(outcome);
    }
}

impl Drop for Reader {
    /// The loop forgot this reader: nothing will run the queued jobs.
    fn drop(&mut self) {
        for job in self.inbox.close() {
            match job {
                Job::Start(start) => {
                    let _ = start.done.send(Some(ExecutorError::new("the server's asyncio event loop is closed")));
                }
                Job::Method { done, .. } | Job::Check { done, .. } => {
                    let _ = done.send(Err(a2a_native::A2AError::new(
                        a2a_native::ErrorKind::Unavailable,
                        "the server's asyncio event loop is closed",
                    )));
                }
                _ => {}
            }
        }
    }
}
