//! core's embedded server (`server::embedded`) serving a Python executor: bind (port 0 picks
//! one), serve on the runtime, stop gracefully.

use crate::executor::PyExecutor;
use crate::options::Options;
use crate::runtime::future_into_py;
use crate::{errors, models};
use a2a_native::server::security::SecuritySpec;
use a2a_native::server::{ServerConfig, Stores, embedded};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

struct Running {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// Server settings from the Python layer's `limits` dict (absent keys keep core's defaults):
/// max_body_bytes, max_parts_per_message, max_history_length, max_streams_per_task,
/// blocking_timeout (seconds).
fn server_config(limits: Option<Bound<'_, PyDict>>) -> PyResult<ServerConfig> {
    let mut o = Options::new(limits);
    let mut config = ServerConfig::default();
    let l = &mut config.limits;
    l.max_body_bytes = o.get("max_body_bytes")?.unwrap_or(l.max_body_bytes);
    l.max_parts_per_message = o.get("max_parts_per_message")?.unwrap_or(l.max_parts_per_message);
    l.max_history_length = o.get("max_history_length")?.unwrap_or(l.max_history_length);
    l.max_streams_per_task = o.get("max_streams_per_task")?.unwrap_or(l.max_streams_per_task);
    if let Some(secs) = o.get::<f64>("blocking_timeout")? {
        l.blocking_timeout = std::time::Duration::try_from_secs_f64(secs)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("blocking_timeout: {e}")))?;
    }
    o.finish()?;
    Ok(config)
}

#[pyclass(frozen, module = "a2a_native._native")]
pub struct AgentServer {
    card: Value,
    extended_card: Option<Value>,
    executor: Py<PyAny>,
    store: String,
    security: SecuritySpec,
    config: ServerConfig,
    running: Arc<Mutex<Option<Running>>>,
}

impl AgentServer {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Running>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[pymethods]
impl AgentServer {
    #[new]
    #[pyo3(signature = (card, executor, store="memory", bearer_tokens=None, extended_card=None, limits=None, security=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        card: &Bound<'_, PyAny>,
        executor: Py<PyAny>,
        store: &str,
        bearer_tokens: Option<Vec<(String, String)>>,
        extended_card: Option<&Bound<'_, PyAny>>,
        limits: Option<Bound<'_, PyDict>>,
        security: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let card = models::to_value(card)?;
        let extended_card = extended_card.map(models::to_value).transpose()?;
        let security = crate::security::read(bearer_tokens.unwrap_or_default(), security)?;
        // Refuse bad input now; the interfaces are filled in once the port is known.
        embedded::check(&card, extended_card.as_ref(), &security).map_err(errors::to_py)?;
        let config = server_config(limits)?;
        Ok(Self { card, extended_card, executor, store: store.to_owned(), security, config, running: Arc::default() })
    }

    /// Binds `host:port` and serves in the background; resolves to the bound port. Python
    /// executors run on the calling event loop.
    fn start<'py>(&self, py: Python<'py>, host: String, port: u16) -> PyResult<Bound<'py, PyAny>> {
        if self.lock().is_some() {
            return Err(pyo3::exceptions::PyRuntimeError::new_err("the server is already running"));
        }
        let event_loop = pyo3_async_runtimes::get_running_loop(py)?.unbind();
        let agent = Arc::new(PyExecutor { executor: self.executor.clone_ref(py), event_loop });
        let (card, extended, store, security, config, running) = (
            self.card.clone(),
            self.extended_card.clone(),
            self.store.clone(),
            self.security.clone(),
            self.config.clone(),
            self.running.clone(),
        );
        future_into_py(py, async move {
            let stores = Stores::open(&store).await.map_err(errors::to_py)?;
            let listener = tokio::net::TcpListener::bind((host.as_str(), port)).await.map_err(errors::io)?;
            let addr = listener.local_addr().map_err(errors::io)?;
            let server = embedded::server(agent, &card, extended.as_ref(), stores, config, &security, addr)
                .map_err(errors::to_py)?;
            let (stop, stopped) = oneshot::channel::<()>();
            let done = tokio::spawn(server.serve(listener, async move {
                let _ = stopped.await;
            }));
            *running.lock().unwrap_or_else(|p| p.into_inner()) = Some(Running { addr, stop, done });
            Ok(addr.port())
        })
    }

    /// Stops accepting, ends open streams and waits for the server to finish.
    fn stop<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let running = self.lock().take();
        future_into_py(py, async move {
            if let Some(r) = running {
                let _ = r.stop.send(());
                match r.done.await {
                    Ok(result) => result.map_err(errors::io)?,
                    Err(e) => return Err(pyo3::exceptions::PyRuntimeError::new_err(e.to_string())),
                }
            }
            Ok(())
        })
    }

    /// The bound port (`None` when not running).
    #[getter]
    fn port(&self) -> Option<u16> {
        self.lock().as_ref().map(|r| r.addr.port())
    }

    /// `http(s)://host:port` (`None` when not running).
    #[getter]
    fn url(&self) -> Option<String> {
        self.lock().as_ref().map(|r| embedded::base_url(r.addr, &self.security))
    }
}
