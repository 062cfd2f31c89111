//! core's [`a2a_native::client::Client`] for Kotlin and Swift: typed records in and out, every
//! call a suspend function / async method run on the binding's runtime. Streams are
//! [`EventStream`] objects whose `next()` the wrappers turn into a Flow / AsyncThrowingStream.

use crate::convert::{ToRecord, to_core};
use crate::credentials::{CredentialProvider, ForeignCredentials};
use crate::errors::Result;
use crate::models_gen::*;
use crate::runtime::run;
use crate::trace::traced;
use a2a_native::client::{self as core, ClientBuilder};
use a2a_native::model;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// How to reach the agent. Every member is optional.
#[derive(uniffi::Record, Default)]
pub struct ClientOptions {
    /// `Authorization: Bearer <token>` on every call.
    #[uniffi(default)]
    pub bearer_token: Option<String>,
    /// An API key and the header it goes in.
    #[uniffi(default)]
    pub api_key: Option<ApiKey>,
    /// Called before every request for its headers (tokens that expire, signatures).
    #[uniffi(default)]
    pub credentials: Option<Arc<dyn CredentialProvider>>,
    /// Extra headers on every call.
    #[uniffi(default)]
    pub headers: HashMap<String, String>,
    /// How long one call may take (Kotlin `java.time.Duration`, Swift `TimeInterval`).
    #[uniffi(default)]
    pub timeout: Option<Duration>,
    /// How long connecting may take (default 10 s).
    #[uniffi(default)]
    pub connect_timeout: Option<Duration>,
    /// How long a stream may stay silent before it is resubscribed (default 300 s).
    #[uniffi(default)]
    pub stream_idle_timeout: Option<Duration>,
    /// `JSONRPC`, `HTTP+JSON` or `GRPC`: preferred when the card offers several.
    #[uniffi(default)]
    pub binding: Option<String>,
    #[uniffi(default)]
    pub retries: Option<u32>,
    /// How often in a row a dropped stream is resubscribed (default 6: over about 3 to 5 s,
    /// what a server restart takes).
    #[uniffi(default)]
    pub stream_reconnects: Option<u32>,
    /// Talk to A2A 0.3 agents too (on by default in core).
    #[uniffi(default)]
    pub allow_v03: Option<bool>,
    /// Extension URIs to activate.
    #[uniffi(default)]
    pub extensions: Vec<String>,
    /// OAuth 2.0 client credentials, used when the agent card declares a client credentials
    /// flow (token URL and scopes from the card; the token is cached and refreshed). The secret
    /// goes only to an https token URL, or http on this machine.
    #[uniffi(default)]
    pub client_credentials: Option<ClientCredentials>,
    /// A CA certificate (PEM) to trust besides the system's, for agents with a private CA.
    #[uniffi(default)]
    pub ca_cert: Option<String>,
    /// A client certificate and its key (PEM, concatenated) for agents that require mutual TLS.
    #[uniffi(default)]
    pub client_identity: Option<String>,
    /// `ca_cert`, read from this PEM file.
    #[uniffi(default)]
    pub ca_cert_file: Option<String>,
    /// `client_identity`, read from a certificate file and a key file.
    #[uniffi(default)]
    pub client_cert_files: Option<CertFiles>,
    /// A bearer token, sent on each call whose security the agent's card declares as HTTP
    /// bearer (the card says where each secret goes; with `client_credentials` and `card_api_key`).
    #[uniffi(default)]
    pub card_bearer_token: Option<String>,
    /// An API key, sent where the card's API key scheme says (header, query or cookie).
    #[uniffi(default)]
    pub card_api_key: Option<String>,
    /// The most bytes one response or stream event may take (default 64 MiB).
    #[uniffi(default)]
    pub max_response_bytes: Option<u64>,
}

/// core's `apiKey` pair: the header and the key.
#[derive(uniffi::Record)]
pub struct ApiKey {
    pub header: String,
    pub value: String,
}

/// core's `clientCredentials` pair: OAuth 2.0 client id and secret.
#[derive(uniffi::Record)]
pub struct ClientCredentials {
    pub client_id: String,
    pub client_secret: String,
}

/// core's `clientCertFiles` pair: a certificate PEM file and its key's.
#[derive(uniffi::Record)]
pub struct CertFiles {
    pub cert_file: String,
    pub key_file: String,
}

/// Core's `ClientOptions` (which build the client the same way in every language) from the
/// record, plus the foreign credentials provider.
fn builder(o: Option<ClientOptions>) -> Result<ClientBuilder> {
    let o = o.unwrap_or_default();
    // Every field named (no `..Default::default()`): an option core gains does not build here
    // until this record carries it too.
    let options = core::ClientOptions {
        bearer_token: o.bearer_token,
        api_key: o.api_key.map(|k| (k.header, k.value)),
        headers: (!o.headers.is_empty()).then(|| core::options::Headers::Map(o.headers.into_iter().collect())),
        timeout: o.timeout.map(|d| d.as_secs_f64()),
        connect_timeout: o.connect_timeout.map(|d| d.as_secs_f64()),
        stream_idle_timeout: o.stream_idle_timeout.map(|d| d.as_secs_f64()),
        binding: o.binding,
        retries: o.retries,
        stream_reconnects: o.stream_reconnects,
        client_credentials: o.client_credentials.map(|c| (c.client_id, c.client_secret)),
        ca_cert: o.ca_cert,
        client_identity: o.client_identity,
        ca_cert_file: o.ca_cert_file.map(Into::into),
        client_cert_files: o.client_cert_files.map(|f| (f.cert_file.into(), f.key_file.into())),
        card_bearer_token: o.card_bearer_token,
        card_api_key: o.card_api_key,
        allow_v03: o.allow_v03,
        extensions: (!o.extensions.is_empty()).then_some(o.extensions),
        max_response_bytes: o.max_response_bytes,
    };
    let mut b = options.builder()?;
    if let Some(provider) = o.credentials {
        b = b.credentials(Arc::new(ForeignCredentials(provider)));
    }
    Ok(b)
}

/// A client of one agent. Cheap to share; every call is independent.
#[derive(uniffi::Object)]
pub struct Client {
    inner: core::Client,
}

/// A unary call: record -> core request -> core reply -> record, on the runtime.
macro_rules! unary {
    ($self:ident, $req:expr, $core:ty, $call:ident) => {{
        let req: $core = to_core($req)?;
        let client = $self.inner.clone();
        let reply = run(traced(async move { client.$call(req).await })).await?;
        Ok(reply.to_record())
    }};
}

#[uniffi::export]
impl Client {
    /// Resolves the agent card at `url` (its `/.well-known/agent-card.json`) and picks an interface.
    #[uniffi::constructor(default(options = None))]
    pub async fn connect(url: String, options: Option<ClientOptions>) -> Result<Arc<Self>> {
        crate::logging::install();
        let b = builder(options)?;
        let inner = run(async move { b.connect(&url).await }).await?;
        Ok(Arc::new(Self { inner }))
    }

    /// A client for a card you already have, without network access.
    #[uniffi::constructor(default(options = None))]
    pub fn from_card(card: AgentCard, options: Option<ClientOptions>) -> Result<Arc<Self>> {
        let card: model::AgentCard = to_core(card)?;
        Ok(Arc::new(Self { inner: builder(options)?.from_card(card)? }))
    }

    pub fn card(&self) -> AgentCard {
        self.inner.card().clone().to_record()
    }
    pub fn url(&self) -> String {
        self.inner.url().to_owned()
    }
    /// The binding in use: `JSONRPC`, `HTTP+JSON` or `GRPC`.
    pub fn binding(&self) -> String {
        self.inner.binding().as_str().to_owned()
    }
    pub fn protocol_version(&self) -> String {
        self.inner.protocol_version().as_str().to_owned()
    }

    pub async fn send_message(&self, request: SendMessageRequest) -> Result<SendMessageResponse> {
        unary!(self, request, model::SendMessageRequest, send_message)
    }

    /// Sends one user message with one text part (a new message id each time); with `task_id`
    /// (and `context_id`), a turn of that task (multi-turn: an INPUT_REQUIRED task's answer).
    #[uniffi::method(default(task_id = None, context_id = None))]
    pub async fn send_text(
        &self,
        text: String,
        task_id: Option<String>,
        context_id: Option<String>,
    ) -> Result<SendMessageResponse> {
        self.send_message(text_request(text, task_id, context_id)).await
    }

    pub async fn get_task(&self, request: GetTaskRequest) -> Result<A2ATask> {
        unary!(self, request, model::GetTaskRequest, get_task)
    }
    pub async fn list_tasks(&self, request: ListTasksRequest) -> Result<ListTasksResponse> {
        unary!(self, request, model::ListTasksRequest, list_tasks)
    }
    pub async fn cancel_task(&self, request: CancelTaskRequest) -> Result<A2ATask> {
        unary!(self, request, model::CancelTaskRequest, cancel_task)
    }
    pub async fn create_push_config(&self, config: TaskPushNotificationConfig) -> Result<TaskPushNotificationConfig> {
        unary!(self, config, model::TaskPushNotificationConfig, create_push_config)
    }
    pub async fn get_push_config(
        &self,
        request: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig> {
        unary!(self, request, model::GetTaskPushNotificationConfigRequest, get_push_config)
    }
    pub async fn list_push_configs(
        &self,
        request: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse> {
        unary!(self, request, model::ListTaskPushNotificationConfigsRequest, list_push_configs)
    }
    pub async fn delete_push_config(&self, request: DeleteTaskPushNotificationConfigRequest) -> Result<()> {
        let req: model::DeleteTaskPushNotificationConfigRequest = to_core(request)?;
        let client = self.inner.clone();
        Ok(run(traced(async move { client.delete_push_config(req).await })).await?)
    }
    pub async fn get_extended_agent_card(&self) -> Result<AgentCard> {
        let client = self.inner.clone();
        let card = run(traced(async move { client.get_extended_agent_card().await })).await?;
        Ok(card.to_record())
    }

    /// Calls the extension method `method` with `params_json` (JSON text) and asks for
    /// `extensions` (besides the client's own) for this call. Refusals are `A2aException`s
    /// (MethodNotFound for an unknown method, ExtensionSupportRequired, ...).
    #[uniffi::method(default(params_json = "null", extensions = []))]
    pub async fn call(&self, method: String, params_json: String, extensions: Vec<String>) -> Result<MethodReply> {
        let params: serde_json::Value = serde_json::from_str(&params_json)
            .map_err(|e| a2a_native::A2AError::invalid_field("paramsJson", format!("not JSON text: {e}")))?;
        let client = self.inner.clone();
        let reply = run(traced(async move { client.call_method(&method, params, &extensions).await })).await?;
        Ok(MethodReply { result_json: reply.result.to_string(), activated: reply.activated })
    }

    /// Every task matching `request`, page after page, as core's pager reads them (it stops
    /// if a server hands back the page token it was given). Kotlin: `allTasks`, a Flow.
    pub fn list_all_tasks(&self, request: ListTasksRequest) -> Result<Arc<TaskPager>> {
        let req: model::ListTasksRequest = to_core(request)?;
        Ok(Arc::new(TaskPager(core::Feed::new(self.inner.list_all_tasks(req)))))
    }

    /// The events of a streamed message (SendStreamingMessage).
    pub async fn send_streaming_message(&self, request: SendMessageRequest) -> Result<Arc<EventStream>> {
        let req: model::SendMessageRequest = to_core(request)?;
        let client = self.inner.clone();
        let stream = run(traced(async move { client.send_streaming_message(req).await })).await?;
        Ok(Arc::new(EventStream(core::Feed::new(stream))))
    }

    /// The events of an existing task from now on (SubscribeToTask).
    pub async fn subscribe_to_task(&self, request: SubscribeToTaskRequest) -> Result<Arc<EventStream>> {
        let req: model::SubscribeToTaskRequest = to_core(request)?;
        let client = self.inner.clone();
        let stream = run(traced(async move { client.subscribe_to_task(req).await })).await?;
        Ok(Arc::new(EventStream(core::Feed::new(stream))))
    }
}

/// An extension method's answer.
#[derive(Debug, Clone, uniffi::Record)]
pub struct MethodReply {
    /// The result, as JSON text.
    pub result_json: String,
    /// The extensions the agent activated for the call (its `A2A-Extensions` echo).
    pub activated: Vec<String>,
}

/// A SendMessageRequest with one user text message, in `task_id` and `context_id` when given.
#[uniffi::export(default(task_id = None, context_id = None))]
pub fn text_request(text: String, task_id: Option<String>, context_id: Option<String>) -> SendMessageRequest {
    SendMessageRequest {
        tenant: String::new(),
        message: Message {
            message_id: uuid_v4(),
            context_id: context_id.unwrap_or_default(),
            task_id: task_id.unwrap_or_default(),
            role: Role::User,
            parts: vec![Part {
                content: Some(PartContent::Text { text }),
                metadata: None,
                filename: String::new(),
                media_type: String::new(),
            }],
            metadata: None,
            extensions: Vec::new(),
            reference_task_ids: Vec::new(),
        },
        configuration: None,
        metadata: None,
    }
}

/// A fresh random message / artifact id.
#[uniffi::export]
pub fn uuid_v4() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The events of one stream: core's [`core::Feed`]. `next()` returns `null`/`nil` at the end;
/// `stop()` ends it early (the task goes on). Ends by itself after the task's final event.
/// (`stop`, not `close`: Kotlin objects already have `AutoCloseable.close`, which frees the
/// Rust object.)
#[derive(uniffi::Object)]
pub struct EventStream(core::Feed<model::StreamResponse>);

#[uniffi::export]
impl EventStream {
    pub async fn next(&self) -> Result<Option<StreamResponse>> {
        let feed = self.0.clone();
        Ok(run(async move { feed.next().await }).await.transpose()?.map(ToRecord::to_record))
    }

    /// Ends the stream and releases its connection, also while another coroutine waits in
    /// `next()` (which then returns `null`/`nil`).
    pub async fn stop(&self) {
        let feed = self.0.clone();
        run(async move { feed.close().await }).await;
    }
}

/// The tasks of `listAllTasks`, fetched a page at a time as they are read. `next()` returns
/// `null`/`nil` after the last one.
#[derive(uniffi::Object)]
pub struct TaskPager(core::Feed<model::Task>);

#[uniffi::export]
impl TaskPager {
    pub async fn next(&self) -> Result<Option<A2ATask>> {
        let feed = self.0.clone();
        Ok(run(async move { feed.next().await }).await.transpose()?.map(ToRecord::to_record))
    }
}
