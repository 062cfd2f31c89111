//! core's hosted server (`server::host`) serving a Python executor. The keyword arguments are
//! read strictly here (each key typed, an unknown one refused) into core's `ServerOptions`.

use crate::executor::PyExecutor;
use crate::options::Options;
use crate::runtime::future_into_py;
use crate::{errors, models};
use a2a_native::server::host::{HostedServer, LimitsSpec, ServerOptions};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

/// Core's limits from the Python layer's `limits` dict (absent keys keep core's defaults):
/// max_body_bytes, max_parts_per_message, max_history_length, max_streams_per_task,
/// blocking_timeout (seconds).
fn limits(limits: Option<Bound<'_, PyDict>>) -> PyResult<LimitsSpec> {
    let mut o = Options::new(limits);
    let spec = LimitsSpec {
        max_body_bytes: o.get("max_body_bytes")?,
        max_parts_per_message: o.get("max_parts_per_message")?,
        max_history_length: o.get("max_history_length")?,
        max_streams_per_task: o.get("max_streams_per_task")?,
        blocking_timeout: o.get("blocking_timeout")?,
    };
    o.finish()?;
    Ok(spec)
}

#[pyclass(frozen, module = "a2a_native._native")]
pub struct AgentServer {
    server: Arc<HostedServer>,
    executor: Py<PyAny>,
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
        let options = ServerOptions {
            store: Some(store.to_owned()),
            bearer_tokens: None,
            extended_card: extended_card.map(models::to_value).transpose()?,
            limits: self::limits(limits)?,
            security: crate::security::read(bearer_tokens.unwrap_or_default(), security)?,
        };
        options
            .config()
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("blocking_timeout: {}", e.message)))?;
        // Refuses bad input now; the interfaces are filled in once the port is known.
        let server = HostedServer::new(models::to_value(card)?, options).map_err(errors::to_py)?;
        Ok(Self { server: Arc::new(server), executor })
    }

    /// Binds `host:port` and serves in the background; resolves to the bound port. Python
    /// executors run on the calling event loop. A second start while running is refused.
    fn start<'py>(&self, py: Python<'py>, host: String, port: u16) -> PyResult<Bound<'py, PyAny>> {
        let event_loop = pyo3_async_runtimes::get_running_loop(py)?.unbind();
        let agent = Arc::new(PyExecutor { executor: self.executor.clone_ref(py), event_loop });
        let server = self.server.clone();
        future_into_py(py, async move {
            let addr = server.start(agent, &host, port).await.map_err(errors::to_py)?;
            Ok(addr.port())
        })
    }

    /// Stops accepting, ends open streams and waits for the server to finish.
    fn stop<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let server = self.server.clone();
        future_into_py(py, async move { server.stop().await.map_err(errors::to_py) })
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
}
