//! core's [`a2a_native::client::Client`]: every operation takes and returns ProtoJSON text, as
//! Promises; streams are [`EventStream`]s that the JS layer makes async iterables.

use crate::{errors, models};
use a2a_native::client::{self as core, ApiKey, Binding, ClientBuilder, StaticBearer};
use a2a_native::model;
use napi::Result;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How to reach and authenticate to an agent (all optional).
#[napi_derive::napi(object)]
#[derive(Default)]
pub struct ClientOptions {
    /// Sent as `Authorization: Bearer …`.
    pub bearer_token: Option<String>,
    /// `[headerName, value]`.
    pub api_key: Option<Vec<String>>,
    /// Extra headers on every request.
    pub headers: Option<Vec<Vec<String>>>,
    /// Per-request timeout in milliseconds.
    pub timeout_ms: Option<f64>,
    /// "JSONRPC" (default) or "HTTP+JSON".
    pub binding: Option<String>,
    /// Retries of idempotent calls on connection errors and 502/503/504 (default 2).
    pub retries: Option<u32>,
    /// How often a dropped stream is resubscribed.
    pub stream_reconnects: Option<u32>,
    /// Secrets used the way the agent card asks, per call: a bearer token, an API key (sent
    /// where the card says), OAuth 2.0 client credentials `[clientId, clientSecret]`.
    pub card_bearer_token: Option<String>,
    pub card_api_key: Option<String>,
    pub client_credentials: Option<Vec<String>>,
    /// A CA certificate (PEM text) to trust besides the system's.
    pub ca_cert: Option<String>,
    /// A client certificate and its key (PEM text) for agents that require mutual TLS.
    pub client_identity: Option<String>,
}

fn pair(v: Vec<String>, field: &str) -> Result<(String, String)> {
    match <[String; 2]>::try_from(v) {
        Ok([name, value]) => Ok((name, value)),
        Err(_) => Err(errors::invalid(field, "expected [name, value]")),
    }
}

fn builder(options: Option<ClientOptions>) -> Result<ClientBuilder> {
    let o = options.unwrap_or_default();
    let mut b = core::Client::builder();
    if let Some(token) = o.bearer_token {
        b = b.credentials(Arc::new(StaticBearer::new(token)));
    }
    if let Some(key) = o.api_key {
        let (name, value) = pair(key, "apiKey")?;
        b = b.credentials(Arc::new(ApiKey::header(name, value)));
    }
    for h in o.headers.unwrap_or_default() {
        let (name, value) = pair(h, "headers")?;
        b = b.header(name, value);
    }
    if let Some(ms) = o.timeout_ms {
        let t = Duration::try_from_secs_f64(ms / 1000.0).map_err(|e| errors::invalid("timeout", e.to_string()))?;
        b = b.timeout(t);
    }
    if let Some(name) = o.binding {
        let binding =
            Binding::from_name(&name).ok_or_else(|| errors::invalid("binding", format!("unknown binding {name:?}")))?;
        b = b.preferred_binding(binding);
    }
    if let Some(n) = o.retries {
        b = b.max_retries(n);
    }
    if let Some(n) = o.stream_reconnects {
        b = b.stream_reconnects(n);
    }
    if o.card_bearer_token.is_some() || o.card_api_key.is_some() || o.client_credentials.is_some() {
        let mut c = core::CardCredentials::new();
        if let Some(t) = o.card_bearer_token {
            c = c.with_bearer_token(t);
        }
        if let Some(k) = o.card_api_key {
            c = c.with_api_key(k);
        }
        if let Some(pair_) = o.client_credentials {
            let (id, secret) = pair(pair_, "clientCredentials")?;
            c = c.with_client_credentials(id, secret);
        }
        b = b.credentials(Arc::new(c));
    }
    if let Some(pem) = o.ca_cert {
        let cert =
            reqwest::Certificate::from_pem(pem.as_bytes()).map_err(|e| errors::invalid("caCert", e.to_string()))?;
        b = b.tls_root(cert);
    }
    if let Some(pem) = o.client_identity {
        let id = reqwest::Identity::from_pem(pem.as_bytes())
            .map_err(|e| errors::invalid("clientIdentity", e.to_string()))?;
        b = b.tls_identity(id);
    }
    Ok(b)
}

#[napi_derive::napi]
pub struct Client {
    inner: core::Client,
}

/// A unary call: request JSON in (validated by the core before anything is sent), reply out.
macro_rules! unary {
    ($self:ident, $json:ident : $ty:ty => $call:ident) => {{
        let req: $ty = models::parse(&$json)?;
        let reply = $self.inner.$call(req).await.map_err(errors::to_js)?;
        Ok(models::text(&reply))
    }};
}

#[napi_derive::napi]
impl Client {
    /// Resolves the agent card at `url` and picks an interface.
    #[napi(factory)]
    pub async fn connect(url: String, options: Option<ClientOptions>) -> Result<Client> {
        let inner = builder(options)?.connect(&url).await.map_err(errors::to_js)?;
        Ok(Client { inner })
    }

    /// A client for an agent card (JSON), without network access.
    #[napi(factory)]
    pub fn from_card(card_json: String, options: Option<ClientOptions>) -> Result<Client> {
        let card = models::parse(&card_json)?;
        let inner = builder(options)?.from_card(card).map_err(errors::to_js)?;
        Ok(Client { inner })
    }

    /// The agent card, as JSON.
    #[napi(getter)]
    pub fn card(&self) -> String {
        models::text(self.inner.card())
    }
    #[napi(getter)]
    pub fn url(&self) -> String {
        self.inner.url().to_owned()
    }
    #[napi(getter)]
    pub fn binding(&self) -> &'static str {
        self.inner.binding().as_str()
    }
    #[napi(getter)]
    pub fn protocol_version(&self) -> &'static str {
        self.inner.protocol_version().as_str()
    }

    #[napi]
    pub async fn send_message(&self, request: String) -> Result<String> {
        unary!(self, request: model::SendMessageRequest => send_message)
    }
    #[napi]
    pub async fn get_task(&self, request: String) -> Result<String> {
        unary!(self, request: model::GetTaskRequest => get_task)
    }
    #[napi]
    pub async fn list_tasks(&self, request: String) -> Result<String> {
        unary!(self, request: model::ListTasksRequest => list_tasks)
    }
    #[napi]
    pub async fn cancel_task(&self, request: String) -> Result<String> {
        unary!(self, request: model::CancelTaskRequest => cancel_task)
    }
    #[napi]
    pub async fn create_push_config(&self, config: String) -> Result<String> {
        unary!(self, config: model::TaskPushNotificationConfig => create_push_config)
    }
    #[napi]
    pub async fn get_push_config(&self, request: String) -> Result<String> {
        unary!(self, request: model::GetTaskPushNotificationConfigRequest => get_push_config)
    }
    #[napi]
    pub async fn list_push_configs(&self, request: String) -> Result<String> {
        unary!(self, request: model::ListTaskPushNotificationConfigsRequest => list_push_configs)
    }
    #[napi]
    pub async fn delete_push_config(&self, request: String) -> Result<()> {
        let req: model::DeleteTaskPushNotificationConfigRequest = models::parse(&request)?;
        self.inner.delete_push_config(req).await.map_err(errors::to_js)
    }
    #[napi]
    pub async fn get_extended_agent_card(&self) -> Result<String> {
        let card = self.inner.get_extended_agent_card().await.map_err(errors::to_js)?;
        Ok(models::text(&card))
    }

    #[napi]
    pub async fn send_streaming_message(&self, request: String) -> Result<EventStream> {
        let req: model::SendMessageRequest = models::parse(&request)?;
        let stream = self.inner.send_streaming_message(req).await.map_err(errors::to_js)?;
        Ok(EventStream::new(stream))
    }
    #[napi]
    pub async fn subscribe_to_task(&self, request: String) -> Result<EventStream> {
        let req: model::SubscribeToTaskRequest = models::parse(&request)?;
        let stream = self.inner.subscribe_to_task(req).await.map_err(errors::to_js)?;
        Ok(EventStream::new(stream))
    }
}

/// The events of one stream (StreamResponse JSON). It ends (and its connection closes) when the
/// server ends it, on an error, or on `close()`; never by waiting for a garbage collector.
#[napi_derive::napi]
pub struct EventStream {
    inner: tokio::sync::Mutex<Option<core::EventStream>>,
    /// Fired by `close()`, so a pending `next()` returns at once instead of holding the stream.
    closed: CancellationToken,
}

impl EventStream {
    fn new(stream: core::EventStream) -> Self {
        Self { inner: tokio::sync::Mutex::new(Some(stream)), closed: CancellationToken::new() }
    }
}

#[napi_derive::napi]
impl EventStream {
    /// The next event's JSON; `null` once the stream is over.
    #[napi]
    pub async fn next(&self) -> Result<Option<String>> {
        let mut guard = self.inner.lock().await;
        let next = match guard.as_mut() {
            Some(stream) => tokio::select! {
                next = stream.next() => next,
                () = self.closed.cancelled() => None,
            },
            None => None,
        };
        match next {
            Some(Ok(event)) => Ok(Some(models::text(&event))),
            Some(Err(e)) => {
                *guard = None;
                Err(errors::to_js(e))
            }
            None => {
                *guard = None;
                Ok(None)
            }
        }
    }

    /// Ends the stream now (the task goes on).
    #[napi]
    pub async fn close(&self) {
        self.closed.cancel();
        self.inner.lock().await.take();
    }
}
