//! core's hosted server (`server::host`) serving a Python executor. The keyword arguments
//! arrive as core's `ServerOptions` JSON, which core reads strictly (an unknown key refused).

use crate::executor::PyExecutor;
use crate::inbox::{Inbox, Job};
use crate::runtime::future_into_py;
use crate::{errors, models};
use a2a_native::server::host::{HostedServer, ServerOptions};
use pyo3::prelude::*;
use std::sync::{Arc, Mutex, PoisonError};

#[pyclass(frozen, module = "a2a_native._native")]
pub struct AgentServer {
    server: Arc<HostedServer>,
    executor: Py<PyAny>,
    /// The running server's way to its loop; closed when it stops.
    inbox: Arc<Mutex<Option<Arc<Inbox>>>>,
}

#[pymethods]
impl AgentServer {
    /// `options` is core's `ServerOptions` JSON (store, bearerTokens, extendedCard, limits,
    /// security), read strictly by core: an unknown or mistyped option is InvalidParamsError.
    #[new]
    #[pyo3(signature = (card, executor, options=None))]
    fn new(card: &Bound<'_, PyAny>, executor: Py<PyAny>, options: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let options = match options {
            Some(o) => ServerOptions::from_value(models::to_value(o)?).map_err(errors::to_py)?,
            None => ServerOptions::default(),
        };
        // Refuses bad input now; the interfaces are filled in once the port is known.
        let server = HostedServer::new(models::to_value(card)?, options).map_err(errors::to_py)?;
        Ok(Self { server: Arc::new(server), executor, inbox: Arc::default() })
    }

    /// Binds `host:port` and serves in the background; resolves to the bound port. Python
    /// executors run on the calling event loop. A second start while running is refused.
    fn start<'py>(&self, py: Python<'py>, host: String, port: u16) -> PyResult<Bound<'py, PyAny>> {
        let event_loop = pyo3_async_runtimes::get_running_loop(py)?;
        let inbox = crate::inbox::watch(py, &event_loop, self.executor.clone_ref(py))?;
        let agent = Arc::new(PyExecutor { inbox: inbox.clone() });
        let (server, running) = (self.server.clone(), self.inbox.clone());
        // Until the server runs, the inbox is this start's: a start that fails, or is canceled
        // (even before its future first runs), stops the loop watching it.
        let pending = Closing(Some(inbox));
        future_into_py(py, async move {
            let mut pending = pending;
            let addr = server.start(agent, &host, port).await.map_err(errors::to_py)?;
            if let Some(inbox) = pending.0.take() {
                close(running.lock().unwrap_or_else(PoisonError::into_inner).replace(inbox));
            }
            Ok(addr.port())
        })
    }

    /// Stops accepting, ends open streams and waits for the server to finish.
    fn stop<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (server, running) = (self.server.clone(), self.inbox.clone());
        future_into_py(py, async move {
            server.stop().await.map_err(errors::to_py)?;
            close(running.lock().unwrap_or_else(PoisonError::into_inner).take());
            Ok(())
        })
    }

    /// The bound port (`None` when not running).
    #[getter]
    fn port(&self) -> Option<u16> {
        self.server.addr().map(|a| a.port())
    }

    /// `http(s)://host:port` (`None` when not running).
    #[getter]
    fn url(&self) -> Option<String> {
        self.server.url()
    }

    /// `http://host:port/metrics` (`None` when not running or not serving metrics).
    #[getter]
    fn metrics_url(&self) -> Option<String> {
        self.server.metrics_url()
    }
}

/// An inbox the loop stops watching when this is dropped, unless taken.
struct Closing(Option<Arc<Inbox>>);

impl Drop for Closing {
    fn drop(&mut self) {
        close(self.0.take());
    }
}

/// The loop stops watching `inbox` (its executions have ended with the server).
fn close(inbox: Option<Arc<Inbox>>) {
    if let Some(inbox) = inbox {
        let _ = inbox.push(Job::Close);
    }
}
