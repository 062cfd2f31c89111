//! The A2A client: resolves an agent's card, picks an interface, and calls every operation
//! over JSON-RPC or HTTP+JSON, in A2A 1.0 or (for agents that only speak it) 0.3.
//!
//! ```no_run
//! # async fn run() -> a2a_native::Result<()> {
//! use a2a_native::client::Client;
//! use a2a_native::model::{Message, Role, SendMessageRequest};
//! let client = Client::connect("http://127.0.0.1:8080").await?;
//! let reply = client.send_message(SendMessageRequest::new(Message::text(Role::User, "hi"))).await?;
//! # let _ = reply; Ok(())
//! # }
//! ```
//!
//! Interface choice (spec §8.3.2): among the card's `supportedInterfaces`, the client takes
//! one it speaks (`JSONRPC`, `HTTP+JSON` or `GRPC`; protocolVersion `1.x`, or `0.3` / `0.2`
//! over JSON-RPC), preferring protocol 1.0 over 0.3, then the preferred binding (default JSON-RPC),
//! then the card's order. 0.3 is therefore used only when the agent declares nothing newer
//! ([`ClientBuilder::allow_v03`] can forbid it; [`ClientBuilder::prefer_v03`] asks for it). Over 0.3 every call is converted both ways by
//! [`crate::model::v03`]; the caller sees 1.0 types either way, and operations 0.3 lacks
//! (ListTasks) are UnsupportedOperation.
//!
//! Every call runs in a `tracing` span `a2a.client` with `method`, `url` and `task_id`.
//! Modules: [`card`] (resolution and cache), `transport` (the bindings), [`stream`] (event
//! streams and reconnection), [`credentials`], [`retry`].

pub mod card;
pub mod credentials;
pub mod feed;
pub mod oauth;
pub mod options;
pub mod push_verify;
pub mod retry;
pub mod stream;
mod transport;

pub use crate::auth::fetch_jwks;
pub use card::CardCache;
pub use credentials::{
    ApiKey, ApiKeyLocation, CredentialContext, CredentialProvider, StaticBearer, headers_from_pairs,
};
pub use feed::Feed;
pub use oauth::{CardCredentials, ClientCredentials};
pub use options::ClientOptions;
pub use push_verify::{PushVerifier, PushVerifierOptions, VerifiedPush};
pub use retry::RetryPolicy;
pub use stream::EventStream;

use crate::error::{A2AError, ErrorKind, Result};
use crate::model::{
    self, AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, SendMessageRequest,
    SendMessageResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig, Validate, binding,
};
use crate::request::A2ARequest;
use futures_core::Stream;
use http::header::{HeaderName, HeaderValue};
use serde::de::DeserializeOwned;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument;
use tracing::field::Empty;
use transport::{Config, Endpoint, Http, Transport};

/// The protocol bindings the client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Binding {
    JsonRpc,
    HttpJson,
    Grpc,
}

impl Binding {
    /// The card's name for it (`JSONRPC`, `HTTP+JSON`, `GRPC`).
    pub fn as_str(self) -> &'static str {
        match self {
            Binding::JsonRpc => binding::JSONRPC,
            Binding::HttpJson => binding::HTTP_JSON,
            Binding::Grpc => binding::GRPC,
        }
    }

    /// OpenTelemetry's `rpc.system` for it (`None` for HTTP+JSON, which is plain HTTP).
    pub fn rpc_system(self) -> Option<&'static str> {
        match self {
            Binding::JsonRpc => Some("jsonrpc"),
            Binding::Grpc => Some("grpc"),
            Binding::HttpJson => None,
        }
    }

    /// The binding a card names (case-insensitively); `None` for others (custom URIs).
    pub fn from_name(name: &str) -> Option<Self> {
        if name.eq_ignore_ascii_case(binding::JSONRPC) {
            Some(Binding::JsonRpc)
        } else if name.eq_ignore_ascii_case(binding::HTTP_JSON) {
            Some(Binding::HttpJson)
        } else if name.eq_ignore_ascii_case(binding::GRPC) {
            Some(Binding::Grpc)
        } else {
            None
        }
    }
}

/// The protocol versions the client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtocolVersion {
    V10,
    V03,
}

impl ProtocolVersion {
    /// `1.0` or `0.3`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V10 => "1.0",
            ProtocolVersion::V03 => "0.3",
        }
    }

    /// The version an interface declares: any `1.x` is 1.0; `0.3` and `0.2` (whose JSON-RPC
    /// methods are the same) are 0.3; patch numbers are ignored.
    pub fn from_declared(version: &str) -> Option<Self> {
        let mut parts = version.trim().split('.');
        match (parts.next(), parts.next()) {
            (Some("1"), _) => Some(ProtocolVersion::V10),
            (Some("0"), Some("3" | "2")) => Some(ProtocolVersion::V03),
            _ => None,
        }
    }
}

/// The interface the client uses, per the rules in the module docs (`prefer_v03` puts 0.3
/// interfaces first, for talking to a mixed agent the old way on purpose).
fn select_interface(card: &AgentCard, preferred: Binding, allow_v03: bool, prefer_v03: bool) -> Result<Endpoint> {
    let preferred_version = if prefer_v03 && allow_v03 { ProtocolVersion::V03 } else { ProtocolVersion::V10 };
    let best = card
        .supported_interfaces
        .iter()
        .enumerate()
        .filter_map(|(i, iface)| {
            let binding = Binding::from_name(&iface.protocol_binding)?;
            let version = ProtocolVersion::from_declared(&iface.protocol_version)?;
            // 0.3 is spoken over JSON-RPC only.
            let usable = version == ProtocolVersion::V10 || (allow_v03 && binding == Binding::JsonRpc);
            usable.then_some(((version != preferred_version, binding != preferred, i), iface, binding, version))
        })
        .min_by_key(|(rank, ..)| *rank);
    match best {
        Some((_, iface, binding, version)) => {
            Ok(Endpoint { url: iface.url.clone(), binding, version, tenant: iface.tenant.clone() })
        }
        None => {
            let declared: Vec<String> = card
                .supported_interfaces
                .iter()
                .map(|i| format!("{} {} at {}", i.protocol_binding, i.protocol_version, i.url))
                .collect();
            let speaks = if allow_v03 {
                "JSONRPC, HTTP+JSON or GRPC 1.x, or JSONRPC 0.3"
            } else {
                "JSONRPC, HTTP+JSON or GRPC 1.x"
            };
            Err(A2AError::unsupported_operation(format!(
                "the agent {:?} declares no interface this client speaks ({speaks}); it declares: {}",
                card.name,
                if declared.is_empty() { "none".to_owned() } else { declared.join("; ") }
            )))
        }
    }
}

/// Settings of a [`Client`]; finish with [`ClientBuilder::connect`] or [`ClientBuilder::from_card`].
#[derive(Default)]
pub struct ClientBuilder {
    config: Config,
    http_client: Option<reqwest::Client>,
    /// Extra trusted roots and a client certificate (mTLS), for the built-in HTTP client.
    tls_roots: Vec<reqwest::Certificate>,
    tls_identity: Option<reqwest::Identity>,
    /// The same as PEM, for the gRPC channel (which is not reqwest's).
    grpc_tls: transport::grpc::TlsMaterial,
    card_cache: Option<Arc<CardCache>>,
    /// A header that could not be used, reported when the client is built.
    bad_header: Option<String>,
}

impl ClientBuilder {
    /// The binding to use when the card offers several at the same protocol version (default
    /// JSON-RPC). gRPC is used only when preferred here or when it is all the card offers.
    pub fn preferred_binding(mut self, binding: Binding) -> Self {
        self.config.preferred_binding = binding;
        self
    }

    /// Whether an agent that only declares A2A 0.3 interfaces may be used, through 0.3
    /// (default true).
    pub fn allow_v03(mut self, allow: bool) -> Self {
        self.config.allow_v03 = allow;
        self
    }

    /// Use a 0.3 interface even when the agent also declares 1.0 ones (default false; for
    /// testing an agent's 0.3 side). Has no effect when `allow_v03` is false.
    pub fn prefer_v03(mut self, prefer: bool) -> Self {
        self.config.prefer_v03 = prefer;
        self
    }

    /// How long a call may take (default 60 s): the whole exchange for unary calls; the
    /// response head for streams (see [`ClientBuilder::stream_idle_timeout`] for their body).
    /// Each retry gets its own.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.config.timeout = timeout;
        self
    }

    /// How long establishing a connection may take (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.config.connect_timeout = timeout;
        self
    }

    /// How long a stream may stay silent (no event, no keep-alive) before it counts as dropped
    /// and is resubscribed (default 300 s; `None` = wait forever).
    pub fn stream_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.stream_idle_timeout = timeout;
        self
    }

    /// Credentials for every call (not for the public card). Given more than once, all are sent
    /// (a later provider's header replaces an earlier one's of the same name).
    pub fn credentials(mut self, provider: Arc<dyn CredentialProvider>) -> Self {
        self.config.credentials = Some(match self.config.credentials.take() {
            None => provider,
            Some(earlier) => Arc::new(credentials::AllOf(vec![earlier, provider])),
        });
        self
    }

    /// Extension URIs to activate, sent as `A2A-Extensions` (`X-A2A-Extensions` over 0.3).
    pub fn extensions<I, S>(mut self, uris: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.config.extensions = uris.into_iter().map(Into::into).collect();
        self
    }

    /// An extra header on every request (card fetches included). An invalid name or value is
    /// reported by `connect` / `from_card`.
    pub fn header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        let (name, value) = (name.as_ref(), value.as_ref());
        match (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            (Ok(n), Ok(v)) => {
                self.config.headers.append(n, v);
            }
            _ => self.bad_header = Some(name.chars().take(100).collect()),
        }
        self
    }

    /// Retries of idempotent calls after a connect error or HTTP 502/503/504 (default 2).
    pub fn max_retries(mut self, n: u32) -> Self {
        self.config.retry.max_retries = n;
        self
    }

    /// The whole retry policy (retries and backoff; the backoff also paces stream reconnection).
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.config.retry = policy;
        self
    }

    /// How many times in a row a dropped stream is resubscribed (default 6, over about 2.5 to 5 s
    /// with the default backoff; 0 = never).
    pub fn stream_reconnects(mut self, n: u32) -> Self {
        self.config.stream_reconnects = n;
        self
    }

    /// The largest SSE event accepted (default 16 MiB).
    pub fn max_event_bytes(mut self, n: usize) -> Self {
        self.config.max_event_bytes = n;
        self
    }

    /// The largest response body accepted (default 16 MiB).
    pub fn max_response_bytes(mut self, n: usize) -> Self {
        self.config.max_response_bytes = n;
        self
    }

    /// Use this reqwest client (TLS settings, proxies, ...). `connect_timeout` is then the
    /// client's own business.
    /// Trusts this CA certificate too (an agent with a private CA), on the HTTP bindings.
    /// Ignored with [`Self::http_client`]. [`Self::tls_root_pem`] covers gRPC as well.
    pub fn tls_root(mut self, cert: reqwest::Certificate) -> Self {
        self.tls_roots.push(cert);
        self
    }

    /// Presents this client certificate (agents that require mutual TLS), on the HTTP
    /// bindings. Ignored with [`Self::http_client`]. [`Self::tls_identity_pem`] covers gRPC too.
    pub fn tls_identity(mut self, identity: reqwest::Identity) -> Self {
        self.tls_identity = Some(identity);
        self
    }

    /// Trusts the CA certificates of this PEM text too, on every binding (gRPC included).
    /// Refused when the client is built if it holds no certificate.
    pub fn tls_root_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.grpc_tls.roots_pem.push(pem.into());
        self
    }

    /// Presents this client certificate and key (one PEM text) on every binding (mutual TLS).
    pub fn tls_identity_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.grpc_tls.identity_pem = Some(pem.into());
        self
    }

    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http_client = Some(client);
        self
    }

    /// Cache agent cards here instead of in the process-wide [`CardCache::shared`].
    pub fn card_cache(mut self, cache: Arc<CardCache>) -> Self {
        self.card_cache = Some(cache);
        self
    }

    fn http(&mut self) -> Result<Http> {
        if let Some(name) = &self.bad_header {
            return Err(A2AError::invalid_field(
                "header",
                format!("{name:?} is not a valid HTTP header (name or value)"),
            ));
        }
        let client = match self.http_client.take() {
            Some(c) => c,
            None => {
                let mut b = reqwest::Client::builder()
                    .connect_timeout(self.config.connect_timeout)
                    .redirect(reqwest::redirect::Policy::custom(same_origin_redirects));
                for root in self.tls_roots.drain(..) {
                    b = b.add_root_certificate(root);
                }
                for pem in &self.grpc_tls.roots_pem {
                    let certs = reqwest::Certificate::from_pem_bundle(pem)
                        .map_err(|e| A2AError::invalid_field("caCert", e.to_string()))?;
                    if certs.is_empty() {
                        return Err(A2AError::invalid_field("caCert", "no PEM certificate in it"));
                    }
                    for cert in certs {
                        b = b.add_root_certificate(cert);
                    }
                }
                if let Some(identity) = self.tls_identity.take() {
                    b = b.identity(identity);
                }
                if let Some(pem) = &self.grpc_tls.identity_pem {
                    let id = reqwest::Identity::from_pem(pem)
                        .map_err(|e| A2AError::invalid_field("clientIdentity", e.to_string()))?;
                    b = b.identity(id);
                }
                b
            }
            .build()
            .map_err(|e| A2AError::new(ErrorKind::Transport, format!("cannot build the HTTP client: {e}")))?,
        };
        Ok(Http { client, config: Arc::new(self.config.clone()) })
    }

    /// Resolves the card of the agent at `url` (see [`card`]) and picks its interface.
    pub async fn connect(mut self, url: &str) -> Result<Client> {
        let http = self.http()?;
        let cache = self.card_cache.take().unwrap_or_else(CardCache::shared);
        let span = tracing::info_span!("a2a.client", otel.kind = "client", method = "GetAgentCard", url = %url, task_id = Empty);
        let card = card::resolve(&http, &cache, url).instrument(span).await?;
        self.build(http, card)
    }

    /// A client for `card`, without any network access.
    pub fn from_card(mut self, card: AgentCard) -> Result<Client> {
        let http = self.http()?;
        self.build(http, card)
    }

    /// [`ClientBuilder::from_card`] for a card as JSON: 1.0, or a 0.3 card (an agent that
    /// speaks 0.3 only), read as [`ClientBuilder::connect`] reads a fetched one.
    pub fn from_card_value(self, card: serde_json::Value) -> Result<Client> {
        self.from_card(card::read_card(card)?)
    }

    fn build(self, http: Http, card: AgentCard) -> Result<Client> {
        let c = &http.config;
        let endpoint = select_interface(&card, c.preferred_binding, c.allow_v03, c.prefer_v03)?;
        tracing::debug!(url = %endpoint.url, binding = endpoint.binding.as_str(), version = endpoint.version.as_str(), "A2A client ready");
        Ok(Client { transport: Arc::new(Transport::new(http, card, endpoint, &self.grpc_tls)?) })
    }
}

/// A client of one agent. Cheap to clone; clones share connections.
#[derive(Clone)]
pub struct Client {
    transport: Arc<Transport>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("agent", &self.transport.card.name)
            .field("url", &self.url())
            .field("binding", &self.binding())
            .field("protocol_version", &self.protocol_version())
            .finish()
    }
}

/// The answer of an extension method ([`Client::call_method`]).
#[derive(Debug, Clone, PartialEq)]
pub struct MethodReply {
    pub result: serde_json::Value,
    /// The extensions the agent echoed as activated (`A2A-Extensions`).
    pub activated: Vec<String>,
}

/// Which redirects the HTTP client follows: at most 10, each to the same host, with the same
/// scheme and port or upgraded from http to https. Every other one is not followed (its 3xx is
/// the answer, an error): a request carries credentials (an API key in a header of the card's
/// choosing, extra headers), and reqwest strips only `Authorization` and cookies when a
/// redirect leaves the host.
fn same_origin_redirects(attempt: reqwest::redirect::Attempt<'_>) -> reqwest::redirect::Action {
    let (from, to) = (attempt.previous().last(), attempt.url());
    let same_origin = from.is_some_and(|from| {
        from.host_str() == to.host_str()
            && ((from.scheme() == to.scheme() && from.port_or_known_default() == to.port_or_known_default())
                || (from.scheme() == "http" && to.scheme() == "https" && to.port().is_none()))
    });
    if same_origin && attempt.previous().len() <= 10 { attempt.follow() } else { attempt.stop() }
}

/// Reads a result as `T`; a result that does not fit is InvalidAgentResponse naming the field.
fn parse_result<T: DeserializeOwned + Validate>(value: serde_json::Value) -> Result<T> {
    model::parse_value_at(value, "result").map_err(transport::agent_fault)
}

impl Client {
    /// [`ClientBuilder`] with the defaults.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// Resolves the agent at `url` with the default settings.
    pub async fn connect(url: &str) -> Result<Client> {
        Self::builder().connect(url).await
    }

    /// The agent's public card (a 0.3 card converted to 1.0).
    pub fn card(&self) -> &AgentCard {
        &self.transport.card
    }

    pub fn binding(&self) -> Binding {
        self.transport.endpoint.binding
    }

    pub fn protocol_version(&self) -> ProtocolVersion {
        self.transport.endpoint.version
    }

    /// The URL of the interface in use.
    pub fn url(&self) -> &str {
        &self.transport.endpoint.url
    }

    /// The tenant of the interface in use (`""` when none), put into every request.
    pub fn tenant(&self) -> &str {
        &self.transport.endpoint.tenant
    }

    fn span(&self, req: &A2ARequest, task_id: &str) -> tracing::Span {
        let span = tracing::info_span!(
            "a2a.client",
            otel.kind = "client",
            otel.name = req.method().rpc_name(),
            method = req.method().as_str(),
            rpc.system = self.binding().rpc_system(),
            rpc.service = crate::request::SERVICE,
            rpc.method = req.method().as_str(),
            url = %self.url(),
            task_id = Empty
        );
        if !task_id.is_empty() {
            span.record("task_id", task_id);
        }
        // A host language's current span (a binding's caller) is this call's parent.
        if let Some(caller) = crate::trace_context::caller_headers() {
            crate::trace_context::continue_trace(&span, &caller);
        }
        span
    }

    /// A unary call, its result read as `T`.
    async fn unary<T: DeserializeOwned + Validate>(&self, req: A2ARequest, task_id: &str) -> Result<T> {
        let span = self.span(&req, task_id);
        async { parse_result(self.transport.call(req).await?) }.instrument(span).await
    }

    async fn open_stream(&self, req: A2ARequest, task_id: &str) -> Result<EventStream> {
        let span = self.span(&req, task_id);
        let tenant = if req.tenant().is_empty() { self.tenant().to_owned() } else { req.tenant().to_owned() };
        let source = self.transport.open_stream(req, None).instrument(span.clone()).await?;
        Ok(EventStream::new(self.transport.clone(), source, tenant, Some(task_id.to_owned()), span))
    }

    /// Calls an extension method the agent declares (see `crate::methods` for the server
    /// side), asking for `extensions` on this call beside the configured ones. The result, and
    /// the extensions the agent activated for it.
    pub async fn call_method(
        &self,
        method: &str,
        params: serde_json::Value,
        extensions: &[String],
    ) -> Result<MethodReply> {
        let span = tracing::info_span!(
            "a2a.client",
            otel.kind = "client",
            method = %method,
            rpc.system = self.binding().rpc_system(),
            rpc.method = %method,
            url = %self.url()
        );
        if let Some(caller) = crate::trace_context::caller_headers() {
            crate::trace_context::continue_trace(&span, &caller);
        }
        let (result, activated) = self.transport.call_method(method, params, extensions).instrument(span).await?;
        Ok(MethodReply { result, activated })
    }

    /// A unary operation by its A2A method name (`"GetTask"`) and ProtoJSON params, read and
    /// validated as a server reads them (InvalidParams names the field); the result as
    /// ProtoJSON (`null` for DeleteTaskPushNotificationConfig). What the Python and Node
    /// bindings call, so that neither decides anything per operation. (Extension methods are
    /// [`Client::call_method`].)
    pub async fn call(&self, method: &str, params: serde_json::Value) -> Result<serde_json::Value> {
        let request = by_name(method, params)?;
        Ok(match request {
            A2ARequest::SendMessage(r) => model::to_value(&self.send_message(r).await?),
            A2ARequest::GetTask(r) => model::to_value(&self.get_task(r).await?),
            A2ARequest::ListTasks(r) => model::to_value(&self.list_tasks(r).await?),
            A2ARequest::CancelTask(r) => model::to_value(&self.cancel_task(r).await?),
            A2ARequest::CreateTaskPushNotificationConfig(r) => model::to_value(&self.create_push_config(r).await?),
            A2ARequest::GetTaskPushNotificationConfig(r) => model::to_value(&self.get_push_config(r).await?),
            A2ARequest::ListTaskPushNotificationConfigs(r) => model::to_value(&self.list_push_configs(r).await?),
            A2ARequest::DeleteTaskPushNotificationConfig(r) => {
                self.delete_push_config(r).await?;
                serde_json::Value::Null
            }
            A2ARequest::GetExtendedAgentCard(_) => model::to_value(&self.get_extended_agent_card().await?),
            A2ARequest::SendStreamingMessage(_) | A2ARequest::SubscribeToTask(_) => {
                return Err(A2AError::invalid_request(format!("{method} is a stream: open it with `stream`")));
            }
        })
    }

    /// A streaming operation (SendStreamingMessage, SubscribeToTask) by name, as [`Client::call`].
    pub async fn stream(&self, method: &str, params: serde_json::Value) -> Result<EventStream> {
        match by_name(method, params)? {
            A2ARequest::SendStreamingMessage(r) => self.send_streaming_message(r).await,
            A2ARequest::SubscribeToTask(r) => self.subscribe_to_task(r).await,
            _ => Err(A2AError::invalid_request(format!("{method} is not a stream: call it with `call`"))),
        }
    }

    /// SendMessage: blocks (unless `configuration.returnImmediately`) until the task is
    /// terminal or interrupted, or the agent replies with a message. Never retried.
    pub async fn send_message(&self, req: SendMessageRequest) -> Result<SendMessageResponse> {
        let task_id = req.message.task_id.clone();
        let req = A2ARequest::SendMessage(req);
        let span = self.span(&req, &task_id);
        let reply: SendMessageResponse =
            async { parse_result(self.transport.call(req).await?) }.instrument(span.clone()).await?;
        if let SendMessageResponse::Task(t) = &reply {
            span.record("task_id", t.id.as_str());
        }
        Ok(reply)
    }

    /// SendStreamingMessage: the task's events (or one message) as an [`EventStream`].
    pub async fn send_streaming_message(&self, req: SendMessageRequest) -> Result<EventStream> {
        let task_id = req.message.task_id.clone();
        self.open_stream(A2ARequest::SendStreamingMessage(req), &task_id).await
    }

    pub async fn get_task(&self, req: GetTaskRequest) -> Result<Task> {
        let task_id = req.id.clone();
        self.unary(A2ARequest::GetTask(req), &task_id).await
    }

    /// One page of tasks (A2A 1.0 only: UnsupportedOperation over 0.3).
    pub async fn list_tasks(&self, req: ListTasksRequest) -> Result<ListTasksResponse> {
        self.unary(A2ARequest::ListTasks(req), "").await
    }

    /// Every task matching `req`, page after page (following `nextPageToken` from
    /// `req.page_token`). An error is the last item; after the end, `None` again (the bindings'
    /// iterators may be asked once more).
    pub fn list_all_tasks(&self, req: ListTasksRequest) -> impl Stream<Item = Result<Task>> + Send + 'static {
        /// Empty pages in a row, each with a next page token, before the listing ends with an
        /// error: nothing reaches the caller while pages are empty, so a server that keeps
        /// handing out fresh tokens would otherwise hold `next()` for ever.
        const EMPTY_PAGES: u32 = 16;
        struct Pager {
            client: Client,
            req: ListTasksRequest,
            buffer: VecDeque<Task>,
            done: bool,
            empty_pages: u32,
        }
        let pager = Pager { client: self.clone(), req, buffer: VecDeque::new(), done: false, empty_pages: 0 };
        futures_util::StreamExt::fuse(futures_util::stream::unfold(pager, |mut p| async move {
            loop {
                if let Some(task) = p.buffer.pop_front() {
                    return Some((Ok(task), p));
                }
                if p.done {
                    return None;
                }
                match p.client.list_tasks(p.req.clone()).await {
                    Ok(page) => {
                        // A server that hands back the token it was given would loop forever.
                        p.done = page.next_page_token.is_empty() || page.next_page_token == p.req.page_token;
                        p.empty_pages = if page.tasks.is_empty() { p.empty_pages + 1 } else { 0 };
                        if !p.done && p.empty_pages == EMPTY_PAGES {
                            p.done = true;
                            let e = A2AError::new(
                                ErrorKind::InvalidAgentResponse,
                                format!(
                                    "ListTasks gave {EMPTY_PAGES} empty pages in a row, each with a next page token"
                                ),
                            );
                            return Some((Err(e), p));
                        }
                        p.req.page_token = page.next_page_token;
                        p.buffer.extend(page.tasks);
                    }
                    Err(e) => {
                        p.done = true;
                        return Some((Err(e), p));
                    }
                }
            }
        }))
    }

    pub async fn cancel_task(&self, req: CancelTaskRequest) -> Result<Task> {
        let task_id = req.id.clone();
        self.unary(A2ARequest::CancelTask(req), &task_id).await
    }

    /// SubscribeToTask: the task's current state first, then its live events.
    pub async fn subscribe_to_task(&self, req: SubscribeToTaskRequest) -> Result<EventStream> {
        let task_id = req.id.clone();
        self.open_stream(A2ARequest::SubscribeToTask(req), &task_id).await
    }

    pub async fn create_push_config(&self, config: TaskPushNotificationConfig) -> Result<TaskPushNotificationConfig> {
        let task_id = config.task_id.clone();
        self.unary(A2ARequest::CreateTaskPushNotificationConfig(config), &task_id).await
    }

    pub async fn get_push_config(
        &self,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig> {
        let task_id = req.task_id.clone();
        self.unary(A2ARequest::GetTaskPushNotificationConfig(req), &task_id).await
    }

    pub async fn list_push_configs(
        &self,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse> {
        let task_id = req.task_id.clone();
        self.unary(A2ARequest::ListTaskPushNotificationConfigs(req), &task_id).await
    }

    pub async fn delete_push_config(&self, req: DeleteTaskPushNotificationConfigRequest) -> Result<()> {
        let task_id = req.task_id.clone();
        let req = A2ARequest::DeleteTaskPushNotificationConfig(req);
        let span = self.span(&req, &task_id);
        self.transport.call(req).instrument(span).await.map(|_| ())
    }

    /// The extended card (authenticated; a 0.3 agent's card converted to 1.0).
    pub async fn get_extended_agent_card(&self) -> Result<AgentCard> {
        let req = A2ARequest::GetExtendedAgentCard(GetExtendedAgentCardRequest::default());
        if self.protocol_version() != ProtocolVersion::V03 {
            return self.unary(req, "").await;
        }
        // Held, as a 0.3 agent's public card is, to the 0.3 schema only (its conversion
        // checked that), not to 1.0's minimums (a mode, a skill), which 0.3 cards may lack.
        let span = self.span(&req, "");
        let value = self.transport.call(req).instrument(span).await?;
        serde_json::from_value(value)
            .map_err(|e| transport::agent_fault(A2AError::invalid_field("result", e.to_string())))
    }
}

/// A request by its A2A 1.0 method name, validated.
fn by_name(method: &str, params: serde_json::Value) -> Result<A2ARequest> {
    let method = crate::request::Method::from_name(method).ok_or_else(|| A2AError::method_not_found(method))?;
    A2ARequest::from_caller_params(method, params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn card(interfaces: serde_json::Value) -> AgentCard {
        model::parse_value(json!({
            "name": "a", "description": "d", "version": "1", "supportedInterfaces": interfaces,
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
        }))
        .unwrap()
    }

    fn iface(url: &str, binding: &str, version: &str) -> serde_json::Value {
        json!({"url": url, "protocolBinding": binding, "protocolVersion": version})
    }

    #[test]
    fn interface_choice() {
        let c = card(json!([
            iface("http://h/v03", "JSONRPC", "0.3"),
            iface("http://h/grpc", "GRPC", "1.0"),
            iface("http://h/rest", "HTTP+JSON", "1.0"),
            iface("http://h/rpc", "jsonrpc", "1.0"),
        ]));
        let pick = |b, v03| select_interface(&c, b, v03, false).map(|e| (e.url, e.binding, e.version));
        assert_eq!(
            pick(Binding::JsonRpc, true).unwrap(),
            ("http://h/rpc".into(), Binding::JsonRpc, ProtocolVersion::V10)
        );
        assert_eq!(
            pick(Binding::HttpJson, true).unwrap(),
            ("http://h/rest".into(), Binding::HttpJson, ProtocolVersion::V10)
        );

        // 1.0 wins over the preferred binding at 0.3; 0.3 only when nothing newer exists.
        let c = card(json!([iface("http://h/v03", "JSONRPC", "0.3.0"), iface("http://h/rest", "HTTP+JSON", "1.1")]));
        let e = select_interface(&c, Binding::JsonRpc, true, false).unwrap();
        assert_eq!((e.url.as_str(), e.version), ("http://h/rest", ProtocolVersion::V10));
        // Unless 0.3 is asked for (and allowed).
        let e = select_interface(&c, Binding::JsonRpc, true, true).unwrap();
        assert_eq!((e.url.as_str(), e.version), ("http://h/v03", ProtocolVersion::V03));
        let e = select_interface(&c, Binding::JsonRpc, false, true).unwrap();
        assert_eq!(e.version, ProtocolVersion::V10);
        let c = card(json!([iface("http://h/r03", "HTTP+JSON", "0.3"), iface("http://h/v03", "JSONRPC", "0.3")]));
        let e = select_interface(&c, Binding::HttpJson, true, false).unwrap();
        assert_eq!((e.url.as_str(), e.binding, e.version), ("http://h/v03", Binding::JsonRpc, ProtocolVersion::V03));
        let err = select_interface(&c, Binding::JsonRpc, false, false).unwrap_err();
        assert_eq!(err.kind, ErrorKind::UnsupportedOperation);
        assert!(err.message.contains("JSONRPC 0.3 at http://h/v03"), "{err}");

        // The tenant comes along.
        let mut t = iface("http://h/", "JSONRPC", "1.0");
        t["tenant"] = json!("acme");
        assert_eq!(select_interface(&card(json!([t])), Binding::JsonRpc, true, false).unwrap().tenant, "acme");
        // gRPC: taken when preferred or when it is all there is; never at 0.3 (package a2a.v1).
        let g = card(json!([iface("h:1", "GRPC", "1.0"), iface("http://h/", "JSONRPC", "1.0")]));
        assert_eq!(select_interface(&g, Binding::JsonRpc, true, false).unwrap().binding, Binding::JsonRpc);
        assert_eq!(select_interface(&g, Binding::Grpc, true, false).unwrap().url, "h:1");
        let only = card(json!([iface("h:1", "GRPC", "1.0")]));
        assert_eq!(select_interface(&only, Binding::JsonRpc, true, false).unwrap().binding, Binding::Grpc);
        assert!(select_interface(&card(json!([iface("h:1", "GRPC", "0.3")])), Binding::Grpc, true, false).is_err());
    }

    #[test]
    fn declared_versions() {
        use ProtocolVersion::*;
        for (v, want) in [
            ("1.0", Some(V10)),
            ("1", Some(V10)),
            ("1.1.0", Some(V10)),
            ("0.3", Some(V03)),
            ("0.3.0", Some(V03)),
            ("0.2.5", Some(V03)),
            ("2.0", None),
            ("", None),
            ("0.1", None),
        ] {
            assert_eq!(ProtocolVersion::from_declared(v), want, "{v}");
        }
        assert_eq!(Binding::from_name("http+json"), Some(Binding::HttpJson));
        assert_eq!(Binding::from_name("grpc"), Some(Binding::Grpc));
        assert_eq!(Binding::from_name("urn:custom"), None);
    }

    #[test]
    fn bad_headers_are_reported() {
        let c = card(json!([iface("http://h/", "JSONRPC", "1.0")]));
        let err = Client::builder().header("bad name", "x").from_card(c.clone()).unwrap_err();
        assert_eq!(err.violations[0].field, "header");
        let client = Client::builder().header("x-trace", "1").from_card(c).unwrap();
        assert_eq!(
            (client.url(), client.binding(), client.protocol_version()),
            ("http://h/", Binding::JsonRpc, ProtocolVersion::V10)
        );
    }
}
