//! The binding's tokio runtime, and the one gate through which its threads use Python.
//!
//! Runtime threads are not Python threads: CPython does not wait for them at exit. One that
//! attaches while the interpreter finalizes is killed inside Python (`PyThread_exit_thread`
//! unwinding through Rust: SIGABRT) or trips `Fatal Python error: PyGILState_Release`. So every
//! use of Python from a runtime thread goes through [`attach`], and the package's `atexit` hook
//! ([`shutdown`]) closes the gate before the interpreter starts finalizing: it waits for the
//! threads already inside, and after it nothing gets in. Then it shuts the runtime down.
//!
//! [`future_into_py`] is the awaitable every async method returns; it replaces
//! pyo3-async-runtimes' (which completes futures from runtime threads outside this gate).

use futures_util::FutureExt;
use pyo3::exceptions::PyRuntimeError;
use pyo3::panic::PanicException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::{IntoPyObjectExt, intern};
use std::cell::Cell;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError, RwLock, RwLockReadGuard, TryLockError};
use std::time::Duration;
use tokio::runtime::{Handle, Runtime};
use tokio::sync::oneshot;

/// Runtime threads hold a read lock while they use Python, so [`shutdown`] can wait for them
/// with the write lock. Its value is `true` until then.
static OPEN: RwLock<bool> = RwLock::new(true);
/// Set by [`shutdown`] before it waits: no thread enters Python any more.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// Built on first use; taken (and shut down) by [`shutdown`]. With the process it was built in.
static RUNTIME: Mutex<Option<(u32, Runtime)>> = Mutex::new(None);
/// The process the first runtime was built in: a different one is a child of `fork()`.
static FIRST_PID: OnceLock<u32> = OnceLock::new();

/// [`attach`] for a runtime worker: the worker first hands its other tasks to another thread
/// (`block_in_place`), so that waiting for the GIL stalls only this call. Elsewhere it is
/// [`attach`].
pub fn attach_on_worker<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> Option<R> {
    let on_worker =
        Handle::try_current().is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if on_worker { tokio::task::block_in_place(|| attach(f)) } else { attach(f) }
}

/// Runs `f` attached to Python, unless the interpreter is exiting (then `None`).
pub fn attach<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> Option<R> {
    let _open = open()?;
    // `try_attach` also refuses a finalizing interpreter that skipped `atexit` (embedding).
    Python::try_attach(|py| {
        keep_thread_state();
        f(py)
    })
}

thread_local! {
    /// This runtime thread keeps its Python thread state between attaches.
    static KEEPS_STATE: Cell<bool> = const { Cell::new(false) };
}

/// CPython builds a thread state when a thread it did not start attaches, and frees it when that
/// thread detaches: a 16 KiB data stack mapped and unmapped, and more, on every executor call.
/// So a runtime thread keeps its state: one more `PyGILState_Ensure` while attached keeps the
/// count above zero, and pyo3's release then only lets the GIL go. [`give_back_thread_state`]
/// (the runtime's `on_thread_stop`) frees it.
fn keep_thread_state() {
    if Handle::try_current().is_err() {
        return; // a Python thread: CPython owns its state
    }
    KEEPS_STATE.with(|keeps| {
        if !keeps.replace(true) {
            // SAFETY: attached (the GIL is held); balanced in `give_back_thread_state`.
            unsafe { pyo3::ffi::PyGILState_Ensure() };
        }
    });
}

fn give_back_thread_state() {
    if !KEEPS_STATE.with(|keeps| keeps.replace(false)) {
        return;
    }
    // Through the gate: when Python is exiting, finalization clears the state itself.
    let Some(_open) = open() else { return };
    Python::try_attach(|_| {
        // SAFETY: attached; `LOCKED` because pyo3's own release, right after, detaches and
        // (its count now zero) frees the state.
        unsafe { pyo3::ffi::PyGILState_Release(pyo3::ffi::PyGILState_STATE::PyGILState_LOCKED) }
    });
}

/// The read lock, while Python is open. Only tried, never waited for: a thread holding the GIL
/// (the loop's, or a runtime thread already inside) must not block on it while `shutdown` waits
/// for the GIL's holders; and a waiting writer means Python is closing anyway.
fn open() -> Option<RwLockReadGuard<'static, bool>> {
    let open = match OPEN.try_read() {
        Ok(open) => open,
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        Err(TryLockError::WouldBlock) => return None,
    };
    if *open && !CLOSED.load(Ordering::Acquire) { Some(open) } else { None }
}

/// The error of a call made, or completed, while the interpreter exits. Lazy: building it
/// touches no Python object.
pub fn exiting() -> PyErr {
    PyRuntimeError::new_err("a2a_native is shut down: the Python interpreter is exiting")
}

fn handle() -> PyResult<Handle> {
    let mut runtime = RUNTIME.lock().unwrap_or_else(PoisonError::into_inner);
    // Checked under the runtime's lock, so a runtime is never built after `shutdown` took it.
    if open().is_none() {
        return Err(exiting());
    }
    let pid = std::process::id();
    if let Some((built_in, built)) = runtime.as_ref()
        && *built_in == pid
    {
        return Ok(built.handle().clone());
    }
    // A child of `fork()`: the runtime's threads stayed in the parent. Dropping it would wait
    // for them for ever, so it is let go, and the child gets a runtime of its own (objects
    // made before the fork still belong to the parent's).
    std::mem::forget(runtime.take());
    FIRST_PID.get_or_init(|| pid);
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // One worker unless TOKIO_WORKER_THREADS says otherwise (tokio reads it when no count is
    // set). The agent's Python runs on one thread anyway (the GIL); a second worker mostly
    // added wake-ups between the two workers: a Python echo agent at one connection answered
    // in about 277 µs with two and 238 µs with one (p50, 2 cores), and 16 connections were no
    // slower. Workers never wait for the GIL: see `future_into_py` and `credentials`.
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        builder.worker_threads(1);
    }
    let built = builder
        .enable_all()
        .thread_name("a2a-native")
        .on_thread_stop(give_back_thread_state)
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the tokio runtime: {e}")))?;
    Ok(runtime.insert((pid, built)).1.handle().clone())
}

/// Closes the gate and stops the runtime; registered with `atexit` by the package, so it runs
/// while the interpreter is still whole. Idempotent.
#[pyfunction]
#[pyo3(name = "_shutdown")]
pub fn shutdown(py: Python<'_>) {
    // Without the GIL: a thread inside the gate may be waiting for it.
    py.detach(|| {
        a2a_native::telemetry::flush_global();
        close_gate();
        let runtime = RUNTIME.lock().unwrap_or_else(PoisonError::into_inner).take();
        // Spawned work is dropped at once (nothing of it can reach Python now); blocking work
        // already running (a file write, a DNS lookup) gets a moment to finish.
        match runtime {
            Some((built_in, runtime)) if built_in == std::process::id() => {
                runtime.shutdown_timeout(Duration::from_secs(1));
            }
            // Inherited through `fork()`: its threads are not here to stop.
            inherited => std::mem::forget(inherited),
        }
    });
}

/// Lets no thread into Python from now on, and waits for those inside to leave. In a child of
/// `fork()` the parent's runtime threads may have left read locks that no thread here will
/// ever give back: there the wait is short.
fn close_gate() {
    CLOSED.store(true, Ordering::Release);
    let forked = FIRST_PID.get().is_some_and(|first| *first != std::process::id());
    let deadline = std::time::Instant::now() + Duration::from_millis(200);
    loop {
        match OPEN.try_write() {
            Ok(mut open) => return *open = false,
            Err(TryLockError::Poisoned(p)) => return *p.into_inner() = false,
            Err(TryLockError::WouldBlock) if forked && std::time::Instant::now() >= deadline => return,
            Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}

tokio::task_local! {
    /// The asyncio loop awaiting the call this runtime task does (set by [`future_into_py`]):
    /// where the call's own Python work runs (an async credentials provider), so that it works
    /// from any loop, not only the one the client was made on.
    pub static CALLER_LOOP: Py<PyAny>;
}

static ASYNCIO: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
static SETTLE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

pub fn asyncio(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    Ok(ASYNCIO.get_or_try_init(py, || py.import("asyncio").map(Bound::unbind))?.bind(py))
}

/// An asyncio future on the running loop that resolves to `fut`'s output. `fut` runs on the
/// runtime; canceling the asyncio future drops it.
pub fn future_into_py<'py, F, T>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = PyResult<T>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    let handle = handle()?;
    let event_loop = asyncio(py)?.call_method0(intern!(py, "get_running_loop"))?;
    let py_future = event_loop.call_method0(intern!(py, "create_future"))?;
    let (cancel, canceled) = oneshot::channel();
    py_future.call_method1(intern!(py, "add_done_callback"), (OnDone(Mutex::new(Some(cancel))),))?;
    let caller = event_loop.clone().unbind();
    let (event_loop, future) = (event_loop.unbind(), py_future.clone().unbind());
    handle.spawn(CALLER_LOOP.scope(caller, async move {
        let outcome = tokio::select! {
            outcome = AssertUnwindSafe(fut).catch_unwind() => outcome,
            // Done before `fut` is: canceled. (Our own result arrives after `fut` is.)
            _ = canceled => return,
        };
        let result = outcome.unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Err(PanicException::new_err(message))
        });
        // Waiting for the GIL on a worker would stall the other tasks on it.
        tokio::task::spawn_blocking(move || {
            attach(|py| complete(py, event_loop.bind(py), future.bind(py), result));
        });
    }));
    Ok(py_future)
}

/// Hands `result` to the loop's thread (asyncio futures are not thread-safe).
fn complete<T: for<'a> IntoPyObject<'a>>(
    py: Python<'_>,
    event_loop: &Bound<'_, PyAny>,
    future: &Bound<'_, PyAny>,
    result: PyResult<T>,
) {
    let (ok, value) = match result.and_then(|v| v.into_py_any(py)) {
        Ok(v) => (true, v),
        Err(e) => (false, e.into_value(py).into_any()),
    };
    let sent = SETTLE
        .get_or_try_init(py, || wrap_pyfunction!(settle, py).map(|f| f.into_any().unbind()))
        .and_then(|settle| event_loop.call_method1(intern!(py, "call_soon_threadsafe"), (settle, future, ok, value)));
    match sent {
        // The loop is closed: nobody is waiting for this result.
        Err(e) if e.is_instance_of::<PyRuntimeError>(py) => {}
        Err(e) => e.print(py),
        Ok(_) => {}
    }
}

/// On the loop: sets the result unless the future was canceled meanwhile.
#[pyfunction]
fn settle(future: &Bound<'_, PyAny>, ok: bool, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = future.py();
    if future.call_method0(intern!(py, "done"))?.is_truthy()? {
        return Ok(());
    }
    let method = if ok { intern!(py, "set_result") } else { intern!(py, "set_exception") };
    future.call_method1(method, (value,))?;
    Ok(())
}

/// The asyncio future's done callback: tells the Rust side it need not go on.
#[pyclass(frozen, module = "a2a_native._native")]
struct OnDone(Mutex<Option<oneshot::Sender<()>>>);

#[pymethods]
impl OnDone {
    fn __call__(&self, _future: &Bound<'_, PyAny>) {
        if let Some(tx) = self.0.lock().unwrap_or_else(PoisonError::into_inner).take() {
            let _ = tx.send(());
        }
    }
}
