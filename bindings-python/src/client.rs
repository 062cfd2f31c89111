//! core's [`a2a_native::client::Client`]: every operation takes and returns ProtoJSON dicts,
//! as awaitables; streams are async iterators over StreamResponse dicts.

use crate::{errors, models};
use a2a_native::client::{self as core, ApiKey, Binding, ClientBuilder, StaticBearer};
use a2a_native::model;
use pyo3::exceptions::{PyStopAsyncIteration, PyValueError};
use pyo3::prelude::*;
use pyo3_async_runtimes::tokio::future_into_py;
use std::sync::Arc;
use std::time::Duration;

#[pyclass(frozen, module = "a2a_native._native")]
pub struct Client {
    inner: core::Client,
}

/// Options shared by `connect` and `from_card`.
fn builder(
    bearer_token: Option<String>,
    api_key: Option<(String, String)>,
    headers: Option<Vec<(String, String)>>,
    timeout: Option<f64>,
    binding: Option<&str>,
) -> PyResult<ClientBuilder> {
    let mut b = core::Client::builder();
    if let Some(token) = bearer_token {
        b = b.credentials(Arc::new(StaticBearer::new(token)));
    }
    if let Some((name, value)) = api_key {
        b = b.credentials(Arc::new(ApiKey::header(name, value)));
    }
    for (name, value) in headers.unwrap_or_default() {
        b = b.header(name, value);
    }
    if let Some(t) = timeout {
        b = b.timeout(
            Duration::try_from_secs_f64(t)
                .map_err(|e| PyValueError::new_err(format!("timeout: {e}")))?,
        );
    }
    if let Some(name) = binding {
        let binding = Binding::from_name(name)
            .ok_or_else(|| PyValueError::new_err(format!("unknown binding {name:?}")))?;
        b = b.preferred_binding(binding);
    }
    Ok(b)
}

macro_rules! unary {
    ($self:ident, $py:ident, $req:ident : $ty:ty => $call:ident) => {{
        let req: $ty = models::from_py($req)?;
        let client = $self.inner.clone();
        future_into_py($py, async move {
            let reply = client.$call(req).await.map_err(errors::to_py)?;
            Python::attach(|py| models::into_py(py, &reply))
        })
    }};
}

#[pymethods]
impl Client {
    /// Resolves the agent card at `url` and picks an interface.
    #[staticmethod]
    #[pyo3(signature = (url, bearer_token=None, api_key=None, headers=None, timeout=None, binding=None))]
    fn connect<'py>(
        py: Python<'py>,
        url: String,
        bearer_token: Option<String>,
        api_key: Option<(String, String)>,
        headers: Option<Vec<(String, String)>>,
        timeout: Option<f64>,
        binding: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let b = builder(bearer_token, api_key, headers, timeout, binding)?;
        future_into_py(py, async move {
            let inner = b.connect(&url).await.map_err(errors::to_py)?;
            Ok(Client { inner })
        })
    }

    /// A client for an agent card, without network access.
    #[staticmethod]
    #[pyo3(signature = (card, bearer_token=None, api_key=None, headers=None, timeout=None, binding=None))]
    fn from_card(
        card: &Bound<'_, PyAny>,
        bearer_token: Option<String>,
        api_key: Option<(String, String)>,
        headers: Option<Vec<(String, String)>>,
        timeout: Option<f64>,
        binding: Option<&str>,
    ) -> PyResult<Self> {
        let card = models::from_py(card)?;
        let b = builder(bearer_token, api_key, headers, timeout, binding)?;
        Ok(Client {
            inner: b.from_card(card).map_err(errors::to_py)?,
        })
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

    fn send_message<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        unary!(self, py, request: model::SendMessageRequest => send_message)
    }
    fn get_task<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        unary!(self, py, request: model::GetTaskRequest => get_task)
    }
    fn list_tasks<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        unary!(self, py, request: model::ListTasksRequest => list_tasks)
    }
    fn cancel_task<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        unary!(self, py, request: model::CancelTaskRequest => cancel_task)
    }
    fn create_push_config<'py>(
        &self,
        py: Python<'py>,
        config: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        unary!(self, py, config: model::TaskPushNotificationConfig => create_push_config)
    }
    fn get_push_config<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        unary!(self, py, request: model::GetTaskPushNotificationConfigRequest => get_push_config)
    }
    fn list_push_configs<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        unary!(self, py, request: model::ListTaskPushNotificationConfigsRequest => list_push_configs)
    }
    fn delete_push_config<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let req: model::DeleteTaskPushNotificationConfigRequest = models::from_py(request)?;
        let client = self.inner.clone();
        future_into_py(py, async move {
            client.delete_push_config(req).await.map_err(errors::to_py)
        })
    }
    fn get_extended_agent_card<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let client = self.inner.clone();
        future_into_py(py, async move {
            let card = client
                .get_extended_agent_card()
                .await
                .map_err(errors::to_py)?;
            Python::attach(|py| models::into_py(py, &card))
        })
    }

    fn send_streaming_message<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let req: model::SendMessageRequest = models::from_py(request)?;
        let client = self.inner.clone();
        future_into_py(py, async move {
            let stream = client
                .send_streaming_message(req)
                .await
                .map_err(errors::to_py)?;
            Ok(EventStream::new(stream))
        })
    }
    fn subscribe_to_task<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let req: model::SubscribeToTaskRequest = models::from_py(request)?;
        let client = self.inner.clone();
        future_into_py(py, async move {
            let stream = client.subscribe_to_task(req).await.map_err(errors::to_py)?;
            Ok(EventStream::new(stream))
        })
    }
}

/// The events of one stream (StreamResponse dicts); `aclose()` ends it early.
#[pyclass(frozen, module = "a2a_native._native")]
pub struct EventStream {
    inner: Arc<tokio::sync::Mutex<Option<core::EventStream>>>,
}

impl EventStream {
    fn new(stream: core::EventStream) -> Self {
        Self {
            inner: Arc::new(tokio::sync::Mutex::new(Some(stream))),
        }
    }
}

#[pymethods]
impl EventStream {
    fn __aiter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __anext__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        future_into_py(py, async move {
            let mut guard = inner.lock().await;
            let next = match guard.as_mut() {
                Some(stream) => stream.next().await,
                None => None,
            };
            match next {
                Some(Ok(event)) => Python::attach(|py| models::into_py(py, &event)),
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
        let inner = self.inner.clone();
        future_into_py(py, async move {
            inner.lock().await.take();
            Ok(())
        })
    }
}
