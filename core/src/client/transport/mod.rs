//! The client's side of the wire: one [`Transport`] per agent interface, speaking JSON-RPC or
//! HTTP+JSON (A2A 1.0 or 0.3) over one shared HTTP layer ([`Http`]), or gRPC (1.0) over its
//! own HTTP/2 channel ([`grpc`]).
//!
//! Everything above this module works in 1.0 terms: a typed [`A2ARequest`] goes in, the 1.0
//! ProtoJSON result (or a stream of 1.0 `StreamResponse`s) comes out. The binding files do the
//! encoding: [`jsonrpc`] (1.0 and, through [`crate::model::v03`], 0.3) and [`rest`] (1.0). This
//! file holds what every call shares: the service-parameter headers (`A2A-Version: 1.0` on every
//! 1.0 call and never on a 0.3 one, `A2A-Extensions` or its 0.3 name `X-A2A-Extensions`),
//! credentials, the interface's `tenant`, timeouts, retries of idempotent calls
//! ([`super::retry`]), bounded body reads, and the mapping of HTTP failures to [`A2AError`].

pub(crate) mod grpc;
pub(crate) mod jsonrpc;
pub(crate) mod rest;

use super::credentials::{CredentialContext, CredentialProvider};
use super::retry::{self, RetryPolicy};
use super::stream::Source;
use super::{Binding, ProtocolVersion};
use crate::error::{A2AError, ErrorKind, Result};
use crate::model::AgentCard;
use crate::request::{A2ARequest, Method};
use http::HeaderMap;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub(crate) const JSON: &str = "application/json";
pub(crate) const A2A_JSON: &str = "application/a2a+json";
pub(crate) const EVENT_STREAM: &str = "text/event-stream";
const VERSION_HEADER: &str = "a2a-version";
const EXTENSIONS_HEADER: &str = "a2a-extensions";
const LEGACY_EXTENSIONS_HEADER: &str = "x-a2a-extensions";

/// Client settings, fixed when the client is built.
#[derive(Clone)]
pub(crate) struct Config {
    pub preferred_binding: Binding,
    pub allow_v03: bool,
    pub prefer_v03: bool,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub stream_idle_timeout: Option<Duration>,
    pub retry: RetryPolicy,
    pub stream_reconnects: u32,
    pub max_event_bytes: usize,
    pub max_response_bytes: usize,
    pub credentials: Option<Arc<dyn CredentialProvider>>,
    pub extensions: Vec<String>,
    pub headers: HeaderMap,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            preferred_binding: Binding::JsonRpc,
            allow_v03: true,
            prefer_v03: false,
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            stream_idle_timeout: Some(Duration::from_secs(300)),
            retry: RetryPolicy::default(),
            // With the default backoff (doubling from 0.1 s, capped at 2 s, jittered) six tries
            // span about 2.5 to 5 s: what a server restart (a rolling deploy) takes. Three gave
            // up after half a second.
            stream_reconnects: 6,
            // As large as the server's own bound on a request's bodies in flight: a task an
            // agent grew past 16 MiB (a lagging stream gets it whole) must still be readable.
            max_event_bytes: 64 * 1024 * 1024,
            max_response_bytes: 64 * 1024 * 1024,
            credentials: None,
            extensions: Vec::new(),
            headers: HeaderMap::new(),
        }
    }
}

/// The HTTP layer shared by card fetches and A2A calls.
#[derive(Clone)]
pub(crate) struct Http {
    pub client: reqwest::Client,
    pub config: Arc<Config>,
}

/// One HTTP request as the client sends it (possibly several times, see [`Http::send`]).
pub(crate) struct Outgoing {
    pub verb: reqwest::Method,
    pub url: String,
    pub headers: HeaderMap,
    pub body: Option<(&'static str, Vec<u8>)>,
    /// May be sent again after a connect error or a 502/503/504.
    pub idempotent: bool,
    /// The answer is read as a stream: the timeout covers the response head only.
    pub streaming: bool,
}

impl Http {
    /// Sends `out`, retrying idempotent requests per the retry policy. Any HTTP status is
    /// returned as a response (after the last retry, a 503 too); only transport failures are
    /// errors here.
    pub async fn send(&self, out: &Outgoing) -> Result<reqwest::Response> {
        let policy = self.config.retry;
        let timeout = self.config.timeout;
        let mut attempt = 0u32;
        loop {
            let mut builder = self.client.request(out.verb.clone(), &out.url).headers(out.headers.clone());
            if let Some((content_type, body)) = &out.body {
                builder = builder.header(CONTENT_TYPE, *content_type).body(body.clone());
            }
            // `None`: the streaming head did not arrive in time.
            let result: std::result::Result<reqwest::Response, Option<reqwest::Error>> = if out.streaming {
                match tokio::time::timeout(timeout, builder.send()).await {
                    Ok(r) => r.map_err(Some),
                    Err(_) => Err(None),
                }
            } else {
                builder.timeout(timeout).send().await.map_err(Some)
            };
            let can_retry = out.idempotent && attempt < policy.max_retries;
            match result {
                Ok(resp) if can_retry && retry::is_retryable_status(resp.status().as_u16()) => {
                    let delay = policy.delay(attempt, retry::retry_after(resp.headers()));
                    tracing::debug!(status = resp.status().as_u16(), attempt, ?delay, "retrying");
                    tokio::time::sleep(delay).await;
                }
                // Also a request lost before any answer (a pooled keep-alive connection the
                // server had just closed: reset, or closed before the response): repeating an
                // idempotent call is safe, and a fresh connection usually answers.
                Err(Some(e)) if can_retry && (e.is_connect() || (e.is_request() && !e.is_timeout())) => {
                    let delay = policy.delay(attempt, None);
                    tracing::debug!(error = %e, attempt, ?delay, "retrying after a connection error");
                    tokio::time::sleep(delay).await;
                }
                Ok(resp) => return Ok(resp),
                Err(Some(e)) => return Err(reqwest_error(&e, &out.url, timeout)),
                Err(None) => return Err(timed_out(&out.url, timeout)),
            }
            attempt += 1;
        }
    }
}

/// An [`A2AError`] for a failed HTTP exchange: Timeout, or Transport with the whole cause
/// chain (reqwest's own message alone says little).
pub(crate) fn reqwest_error(err: &reqwest::Error, url: &str, timeout: Duration) -> A2AError {
    if err.is_timeout() && !err.is_connect() {
        return timed_out(url, timeout);
    }
    let mut message = format!("request to {url} failed: {err}");
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    // rustls's names for the certificate faults people meet most, said in words.
    for (fault, hint) in [
        (
            "CaUsedAsEndEntity",
            "the server presents a CA certificate (CA:TRUE, as `openssl req -x509` makes by default) as its own: \
             give the server a certificate signed by that CA, or one made with basicConstraints CA:FALSE",
        ),
        ("UnknownIssuer", "the server's certificate is not signed by a CA this client trusts (see caCert / --ca-cert)"),
        ("NotValidForName", "the server's certificate does not name the host in the URL"),
        ("Expired", "the server's certificate has expired"),
    ] {
        if message.contains(fault) {
            message.push_str(&format!(" ({hint})"));
            break;
        }
    }
    // A connect timeout is a timeout too (of `connect_timeout`, named in the cause chain).
    let kind = if err.is_timeout() { ErrorKind::Timeout } else { ErrorKind::Transport };
    A2AError::new(kind, message).with_meta("url", url)
}

pub(crate) fn timed_out(url: &str, timeout: Duration) -> A2AError {
    A2AError::new(ErrorKind::Timeout, format!("no answer from {url} within {timeout:?}")).with_meta("url", url)
}

/// InvalidAgentResponse: the agent answered, but not as the protocol says.
pub(crate) fn invalid_response(message: impl Into<String>) -> A2AError {
    A2AError::new(ErrorKind::InvalidAgentResponse, message)
}

/// A result that does not fit its model is the agent's fault: InvalidAgentResponse, keeping
/// the field path.
/// A peer's 1.0 stream event (ProtoJSON). An update without a `contextId` (which 1.0 requires)
/// is taken with an empty one, for the stream to fill in from its task's: @a2a-js/sdk agents
/// publish a cancel's final status update so (its `cancelTask` hands the agent no context),
/// and refusing it ended the stream on the very event that says how the task ended.
pub(crate) fn parse_event(
    mut value: serde_json::Value,
    at: &str,
) -> crate::error::Result<crate::model::StreamResponse> {
    use crate::model::StreamResponse;
    let key = ["statusUpdate", "artifactUpdate"].into_iter().find(|k| value.get(*k).is_some_and(|u| u.is_object()));
    let update = key.and_then(|k| value.get_mut(k)?.as_object_mut());
    let lacking = update
        .filter(|u| {
            !u.contains_key("context_id") && u.get("contextId").is_none_or(|c| c.is_null() || c.as_str() == Some(""))
        })
        .map(|u| {
            // Read with a stand-in, so everything else is validated as ever; then emptied again.
            u.insert("contextId".into(), "-".into());
        });
    let mut event = crate::model::parse_value_at::<StreamResponse>(value, at)?;
    if lacking.is_some() {
        match &mut event {
            StreamResponse::StatusUpdate(e) => e.context_id.clear(),
            StreamResponse::ArtifactUpdate(e) => e.context_id.clear(),
            _ => {}
        }
    }
    Ok(event)
}

pub(crate) fn agent_fault(mut err: A2AError) -> A2AError {
    if matches!(err.kind, ErrorKind::InvalidParams | ErrorKind::JsonParse | ErrorKind::InvalidRequest) {
        err.kind = ErrorKind::InvalidAgentResponse;
        err.message = format!("the agent's answer is invalid: {}", err.message);
    }
    err
}

/// Reads a whole response body, refusing more than `limit` bytes.
pub(crate) async fn read_body(resp: &mut reqwest::Response, limit: usize, timeout: Duration) -> Result<Vec<u8>> {
    let url = resp.url().to_string();
    let too_large = || invalid_response(format!("the response from {url} is larger than {limit} bytes"));
    if resp.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let read = async {
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| reqwest_error(&e, &url, timeout))? {
            if body.len() + chunk.len() > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    };
    tokio::time::timeout(timeout, read).await.unwrap_or_else(|_| Err(timed_out(&url, timeout)))
}

/// What a response says of its body's form (Content-Encoding, Content-Type), kept before the
/// body is read so that a body that is no JSON can be explained ([`BodyForm::unreadable`])
/// without copying every header of every answer.
pub(crate) struct BodyForm {
    encoding: Option<HeaderValue>,
    content_type: Option<HeaderValue>,
}

impl BodyForm {
    pub(crate) fn of(headers: &HeaderMap) -> Self {
        Self {
            encoding: headers.get(http::header::CONTENT_ENCODING).cloned(),
            content_type: headers.get(CONTENT_TYPE).cloned(),
        }
    }

    /// Why a body that should be JSON cannot be, when the reason is plain from the response:
    /// it is empty, or compressed though the client asks for no compression (with a
    /// Content-Encoding, or gzip's bytes without one), or a web page. `None` when it is simply
    /// not JSON.
    pub(crate) fn unreadable(&self, body: &[u8]) -> Option<String> {
        let text = |v: &Option<HeaderValue>| v.as_ref().and_then(|v| v.to_str().ok()).map(str::to_owned);
        match text(&self.encoding) {
            _ if body.iter().all(u8::is_ascii_whitespace) => Some("the body is empty".into()),
            Some(c) if !c.trim().eq_ignore_ascii_case("identity") => {
                Some(format!("the body is compressed (Content-Encoding: {c}), which the client does not ask for"))
            }
            _ if body.starts_with(&[0x1f, 0x8b]) => Some("the body is gzip data, with no Content-Encoding".into()),
            _ => {
                let kind = text(&self.content_type).unwrap_or_default();
                let page = body.trim_ascii_start().starts_with(b"<") && !kind.contains("json");
                let kind = if kind.is_empty() { "no Content-Type".to_owned() } else { kind };
                page.then(|| format!("the body is a web page ({kind}), not JSON"))
            }
        }
    }
}

/// Whether the response's media type is `text/event-stream`.
pub(crate) fn is_event_stream(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with(EVENT_STREAM))
}

/// Where calls go: the interface the client picked from the card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    pub url: String,
    pub binding: Binding,
    pub version: ProtocolVersion,
    pub tenant: String,
}

/// Calls to one agent interface.
pub(crate) struct Transport {
    pub http: Http,
    pub card: AgentCard,
    pub endpoint: Endpoint,
    /// The HTTP/2 channel of a gRPC interface.
    pub grpc: Option<grpc::Channel>,
    next_id: AtomicU64,
}

/// Operations that read only, so sending them twice is harmless.
/// The extensions a response says were activated (`A2A-Extensions`, or the 0.3 header).
fn echoed_extensions(headers: &HeaderMap) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for value in headers.get_all(EXTENSIONS_HEADER).iter().chain(headers.get_all(LEGACY_EXTENSIONS_HEADER).iter()) {
        for uri in value.to_str().unwrap_or_default().split(',').map(str::trim).filter(|u| !u.is_empty()) {
            if !found.iter().any(|f| f == uri) {
                found.push(uri.to_owned());
            }
        }
    }
    found
}

/// What a request needs to know of the method it carries.
#[derive(Clone, Copy)]
struct Call<'a> {
    name: &'a str,
    idempotent: bool,
    streaming: bool,
}

pub(crate) fn is_idempotent(method: Method) -> bool {
    matches!(
        method,
        Method::GetTask
            | Method::ListTasks
            | Method::GetTaskPushNotificationConfig
            | Method::ListTaskPushNotificationConfigs
            | Method::GetExtendedAgentCard
    )
}

impl Transport {
    /// The transport for `endpoint`; a gRPC interface gets its channel (with `tls`) here.
    pub fn new(http: Http, card: AgentCard, endpoint: Endpoint, tls: &grpc::TlsMaterial) -> Result<Self> {
        let grpc = match endpoint.binding {
            Binding::Grpc => {
                // A bare host:port says nothing of TLS: the card's other interfaces do.
                let secure = card.supported_interfaces.iter().any(|i| i.url.starts_with("https://"));
                Some(grpc::Channel::new(&endpoint.url, secure, tls, http.config.connect_timeout)?)
            }
            _ => None,
        };
        Ok(Self { http, card, endpoint, grpc, next_id: AtomicU64::new(1) })
    }

    pub fn config(&self) -> &Config {
        &self.http.config
    }

    /// A fresh JSON-RPC id.
    pub(crate) fn next_id(&self) -> crate::jsonrpc::Id {
        crate::jsonrpc::Id::from(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// The interface's tenant goes into every request that does not name one itself.
    fn with_tenant(&self, mut req: A2ARequest) -> A2ARequest {
        if !self.endpoint.tenant.is_empty() && req.tenant().is_empty() {
            req.set_tenant(self.endpoint.tenant.clone());
        }
        req
    }

    /// One unary call: the 1.0 ProtoJSON result (`null` for an empty result).
    pub async fn call(&self, req: A2ARequest) -> Result<Value> {
        let req = self.with_tenant(req);
        match self.endpoint.binding {
            Binding::JsonRpc => jsonrpc::call(self, &req).await,
            Binding::HttpJson => rest::call(self, &req).await,
            Binding::Grpc => grpc::call(self, &req).await,
        }
    }

    /// Opens a streaming call (SendStreamingMessage or SubscribeToTask). An error before the
    /// stream starts is returned here; errors inside it become items of the stream.
    /// `last_event_id`: a resumed stream's `Last-Event-ID` header.
    pub async fn open_stream(&self, req: A2ARequest, last_event_id: Option<&str>) -> Result<Source> {
        let req = self.with_tenant(req);
        let resume = match last_event_id.map(HeaderValue::from_str) {
            Some(Ok(value)) => Some(value),
            // Not a header value (a peer's odd id): resume without it, from a snapshot.
            _ => None,
        };
        match self.endpoint.binding {
            Binding::JsonRpc => jsonrpc::open_stream(self, &req, resume).await,
            Binding::HttpJson => rest::open_stream(self, &req, resume).await,
            // gRPC streams carry no event ids: a resumed one starts from the snapshot.
            Binding::Grpc => grpc::open_stream(self, &req).await,
        }
    }

    /// The HTTP request of a call: the configured extra headers, then `Accept`, the service
    /// parameters and the credentials (their query parameters appended to `url`).
    pub(crate) async fn request(
        &self,
        verb: reqwest::Method,
        url: String,
        method: Method,
        accept: &'static str,
        body: Option<(&'static str, Vec<u8>)>,
    ) -> Result<Outgoing> {
        let call = Call { name: method.as_str(), idempotent: is_idempotent(method), streaming: method.is_streaming() };
        self.request_for(verb, url, call, &[], accept, body).await
    }

    /// [`Self::request`] for any method by name; `extensions` are requested beside the
    /// configured ones.
    async fn request_for(
        &self,
        verb: reqwest::Method,
        url: String,
        call: Call<'_>,
        extensions: &[String],
        accept: &'static str,
        body: Option<(&'static str, Vec<u8>)>,
    ) -> Result<Outgoing> {
        let config = self.config();
        let mut headers = config.headers.clone();
        headers.insert(ACCEPT, HeaderValue::from_static(accept));
        let v10 = self.endpoint.version == ProtocolVersion::V10;
        if v10 {
            headers.insert(VERSION_HEADER, HeaderValue::from_static("1.0"));
        }
        // The caller's trace continues in the agent (a no-op unless the application installed
        // an OpenTelemetry propagator).
        crate::trace_context::inject_current(&mut headers);
        let mut requested = config.extensions.clone();
        requested.extend(extensions.iter().filter(|e| !config.extensions.contains(e)).cloned());
        if !requested.is_empty() {
            let value = HeaderValue::from_str(&requested.join(","))
                .map_err(|_| A2AError::invalid_field("extensions", "an extension URI is not a valid header value"))?;
            headers.insert(if v10 { EXTENSIONS_HEADER } else { LEGACY_EXTENSIONS_HEADER }, value);
        }
        let mut url = url;
        if let Some(provider) = &config.credentials {
            let ctx = CredentialContext { url: &self.endpoint.url, method: call.name, card: &self.card };
            // A provider (often host-language code) that never answers must not hang the call:
            // it gets the call's timeout.
            let bounded = |what: &'static str| {
                move |_| {
                    A2AError::new(
                        ErrorKind::Timeout,
                        format!("the credentials provider gave no {what} within {:?}", config.timeout),
                    )
                }
            };
            let found =
                tokio::time::timeout(config.timeout, provider.headers(&ctx)).await.map_err(bounded("headers"))?;
            // The provider's credentials replace any configured header of the same name: two
            // Authorization headers are ambiguous, and servers refuse them.
            let found = found?;
            for (name, _) in &found {
                headers.remove(name);
            }
            for (name, value) in found {
                headers.append(name, value);
            }
            let query = tokio::time::timeout(config.timeout, provider.query(&ctx))
                .await
                .map_err(bounded("query parameters"))??;
            if !query.is_empty() {
                let mut ser = form_urlencoded::Serializer::new(String::new());
                ser.extend_pairs(query);
                url.push(if url.contains('?') { '&' } else { '?' });
                url.push_str(&ser.finish());
            }
        }
        Ok(Outgoing { verb, url, headers, body, idempotent: call.idempotent, streaming: call.streaming })
    }

    /// An extension method (see `crate::methods`): `params` as JSON-RPC params, or as the body
    /// of `POST {base}/{method}` over HTTP+JSON. The result, and the extensions the agent
    /// echoed as activated. Never retried (nothing says it is idempotent).
    pub async fn call_method(
        &self,
        method: &str,
        params: Value,
        extensions: &[String],
    ) -> Result<(Value, Vec<String>)> {
        let call = Call { name: method, idempotent: false, streaming: false };
        let (url, body) = match self.endpoint.binding {
            Binding::JsonRpc => {
                let id = self.next_id();
                (self.endpoint.url.clone(), (crate::jsonrpc::request(&id, method, params), Some(id)))
            }
            Binding::HttpJson => {
                let body = serde_json::to_vec(&params).map_err(|e| A2AError::internal(e.to_string()))?;
                (
                    format!("{}/{}", self.endpoint.url.trim_end_matches('/'), method.trim_start_matches('/')),
                    (body, None),
                )
            }
            Binding::Grpc => return grpc::call_method(self, method, params, extensions).await,
        };
        let (bytes, id) = body;
        let out = self.request_for(reqwest::Method::POST, url, call, extensions, JSON, Some((JSON, bytes))).await?;
        let mut resp = self.send(&out).await?;
        let activated = echoed_extensions(resp.headers());
        let value = match id {
            Some(id) => jsonrpc::read_response(self, &mut resp, &id, false).await?,
            None => {
                let status = resp.status().as_u16();
                let body = self.read_body(&mut resp).await?;
                if !(200..300).contains(&status) {
                    return Err(A2AError::from_http(status, &body));
                }
                serde_json::from_slice(&body).map_err(|e| invalid_response(format!("the result is not JSON: {e}")))?
            }
        };
        Ok((value, activated))
    }

    /// Sends `out` (see [`Http::send`]).
    pub(crate) async fn send(&self, out: &Outgoing) -> Result<reqwest::Response> {
        self.http.send(out).await
    }

    pub(crate) async fn read_body(&self, resp: &mut reqwest::Response) -> Result<Vec<u8>> {
        read_body(resp, self.config().max_response_bytes, self.config().timeout).await
    }
}
