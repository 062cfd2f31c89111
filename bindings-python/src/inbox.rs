//! How runtime threads hand executor work to the server's asyncio loop without the GIL.
//!
//! A runtime thread that needs the loop (to start an executor's coroutine, or to cancel one)
//! queues a [`Job`] and, when the queue was empty, writes one byte to a socket the loop watches
//! (`loop.add_reader`). On the loop's thread, [`Reader`] takes every queued job in one callback.
//! So a tokio worker never waits for the GIL (while it did, every task on that worker stalled,
//! and the loop holds the GIL whenever the agent's Python runs), never runs Python at exit, and
//! a burst of requests costs the loop one wake-up.
//!
//! After a batch the loop keeps looking for the next one for a moment instead of sleeping
//! ([`Reader::keep_awake`]), as the runtime's worker does for the loop's answer
//! (`executor::spin_then_await`): each wake-up saved is tens of microseconds on a virtual
//! machine.
//!
//! The reader is dropped when the loop forgets it (`remove_reader` at [`Job::Close`], or the
//! loop closing): then the inbox refuses new jobs and fails the queued ones, so no execution
//! waits for a loop that will not run it.

use crate::executor::{Completion, EventSink};
use crate::models;
use a2a_native::executor::HOST_SPIN;
use a2a_native::executor::{self as core, RequestContext};
use a2a_native::model;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use std::io::{Read, Write};
use std::mem;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;
use tokio::sync::oneshot;

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
    pub done: oneshot::Sender<Option<String>>,
}

/// One `execute`/`cancel` call, extension method or profile check: its asyncio task once the
/// loop made it.
#[derive(Default)]
pub struct Run {
    /// The task, and whether it has reported its outcome.
    task: Mutex<(Option<Py<PyAny>>, bool)>,
    canceled: AtomicBool,
}

impl Run {
    /// Forgets the asyncio task (on the loop's thread, as it ends), so that dropping the
    /// last `Arc<Run>` on a runtime thread touches no Python object.
    pub fn finished(&self) {
        let mut task = lock(&self.task);
        task.1 = true;
        drop(task.0.take());
    }

    /// Keeps the task to cancel, unless it ended already (an eager task factory runs it
    /// inside `create_task`).
    fn began(&self, task: Py<PyAny>) {
        let mut slot = lock(&self.task);
        if !slot.1 {
            slot.0 = Some(task);
        }
    }
}

#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    /// A wake-up byte is in the socket and not yet read.
    armed: bool,
    closed: bool,
}

pub struct Inbox {
    queue: Mutex<Queue>,
    wake: UnixStream,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Inbox {
    /// A new inbox, watched by `event_loop` from now on. Call on the loop's thread.
    pub fn watch(py: Python<'_>, event_loop: &Bound<'_, PyAny>, executor: Py<PyAny>) -> PyResult<Arc<Inbox>> {
        let (wake, watched) = UnixStream::pair()?;
        wake.set_nonblocking(true)?;
        watched.set_nonblocking(true)?;
        let inbox = Arc::new(Inbox { queue: Mutex::default(), wake });
        let fd = watched.as_raw_fd();
        let reader = Reader {
            inbox: inbox.clone(),
            watched,
            event_loop: event_loop.clone().unbind(),
            executor,
            spin_until: Mutex::default(),
        };
        event_loop.call_method1("add_reader", (fd, Py::new(py, reader)?))?;
        Ok(inbox)
    }

    /// Queues `job`; gives it back when the loop no longer watches this inbox.
    pub fn push(&self, job: Job) -> Result<(), Job> {
        let mut queue = lock(&self.queue);
        if queue.closed {
            return Err(job);
        }
        queue.jobs.push(job);
        if mem::replace(&mut queue.armed, true) {
            return Ok(());
        }
        drop(queue);
        // WouldBlock: the socket is full of unread wake-ups already.
        let _ = (&self.wake).write(&[1]);
        Ok(())
    }

    fn close(&self) -> Vec<Job> {
        let mut queue = lock(&self.queue);
        queue.closed = true;
        mem::take(&mut queue.jobs)
    }
}

/// The loop's reader callback: runs the queued jobs on the loop's thread.
#[pyclass(frozen, module = "a2a_native._native")]
pub struct Reader {
    inbox: Arc<Inbox>,
    watched: UnixStream,
    event_loop: Py<PyAny>,
    executor: Py<PyAny>,
    /// Until when the loop keeps looking for jobs without sleeping ([`Reader::keep_awake`]).
    spin_until: Mutex<Option<Instant>>,
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

    /// [`Reader::keep_awake`]'s turn: as the socket's callback, but reads the socket only when a
    /// wake-up byte was written (a read that finds nothing is a wasted system call on every
    /// turn of a busy loop); a byte left behind is read by the socket's own callback.
    fn _poll(slf: &Bound<'_, Self>) -> PyResult<()> {
        Self::run_jobs(slf, false)
    }
}

impl Reader {
    fn run_jobs(slf: &Bound<'_, Self>, from_socket: bool) -> PyResult<()> {
        let py = slf.py();
        let this = slf.get();
        let mut fatal = None;
        if from_socket || lock(&this.inbox.queue).armed {
            // One read empties the socket in practice (a byte is written only when the queue
            // was not armed); a full buffer means more may wait. Outside the queue's lock, so
            // no runtime thread waits on a system call to queue a job.
            let mut buf = [0u8; 64];
            while matches!((&this.watched).read(&mut buf), Ok(n) if n == buf.len()) {}
        }
        let jobs = {
            let mut queue = lock(&this.inbox.queue);
            queue.armed = false;
            mem::take(&mut queue.jobs)
        };
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
                    run.canceled.store(true, Ordering::Release);
                    let task = lock(&run.task).0.take();
                    if let Some(Err(e)) = task.map(|t| t.call_method0(py, "cancel")) {
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
                    if let Err(e) = this.event_loop.call_method1(py, "remove_reader", (this.watched.as_raw_fd(),)) {
                        e.print(py);
                    }
                }
            }
        }
        this.keep_awake(slf, had_jobs);
        fatal.map_or(Ok(()), Err)
    }
}

impl Reader {
    /// After jobs, the loop looks for more on every turn for [`HOST_SPIN`] (`call_soon` of
    /// `_poll`) instead of sleeping in its selector until the socket wakes it: on a virtual
    /// machine that wake-up costs tens of microseconds, about what a short executor's whole run
    /// costs, and a busy server's loop would not sleep anyway. Idle, the loop sleeps again.
    fn keep_awake(&self, slf: &Bound<'_, Self>, had_jobs: bool) {
        let now = Instant::now();
        let mut until = lock(&self.spin_until);
        if had_jobs {
            *until = Some(now + HOST_SPIN);
        }
        match *until {
            Some(deadline) if now < deadline && !lock(&self.inbox.queue).closed => {
                let py = slf.py();
                let turn = slf.getattr(intern!(py, "_poll"));
                if let Err(e) =
                    turn.and_then(|turn| self.event_loop.call_method1(py, intern!(py, "call_soon"), (turn,)))
                {
                    e.print(py);
                }
            }
            _ => *until = None,
        }
    }

    fn start(
        &self,
        py: Python<'_>,
        method: &str,
        ctx: &RequestContext,
        sink: core::EventSink,
        run: Arc<Run>,
        done: oneshot::Sender<Option<String>>,
    ) -> PyResult<()> {
        if run.canceled.load(Ordering::Acquire) {
            let _ = done.send(Some("the executor's coroutine was canceled".into()));
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
                done.get().report(Some(e.to_string()));
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
        if run.canceled.load(Ordering::Acquire) {
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
                    let _ = start.done.send(Some("the server's asyncio event loop is closed".into()));
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
