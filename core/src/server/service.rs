//! The A2A HTTP service: one hyper `Service` that routes a request to the agent card, the
//! JSON-RPC binding or the HTTP+JSON binding, and the plumbing they share (bounded body reads,
//! JSON and SSE responses, the call into [`RequestHandler`], tracing).
//!
//! Routing, in order:
//! 1. `/.well-known/agent-card.json` and `/.well-known/agent.json`: the card ([`super::card`]);
//!    `/healthz` and `/readyz` for probes ([`HEALTH_PATH`], [`READY_PATH`]).
//! 2. The path of each `JSONRPC` interface in the card (default `/`): `POST` is JSON-RPC
//!    (`jsonrpc_binding`); other methods get 405 with `Allow: POST`.
//! 3. Under the path of each `HTTP+JSON` interface (default: the root): [`crate::rest::route`]
//!    (`rest_binding`), tenant prefixes included.
//! 4. Anything else: 404 with a `google.rpc.Status` body.
//!
//! Before all of these, a request with `content-type: application/grpc` goes to the gRPC
//! binding (`grpc_binding`), whatever its path, once authenticated.
//!
//! Only the path of an interface URL matters here (scheme, host and port are the deployment's
//! business), so a card listing `https://agent.example.com/a2a/v1` serves JSON-RPC at `/a2a/v1`.
//!
//! Every request runs inside a `tracing` span `a2a.request` with `binding`, `method`, `version`,
//! `task_id` and `context_id` filled in as they become known; SSE bodies re-enter it per event.

use super::auth::Principal;
use super::body::{Framing, ResponseBody, SseOptions};
use super::budget::{BodyBudget, BodyShare};
use super::card::{LEGACY_WELL_KNOWN_PATH, ServedCard, WELL_KNOWN_PATH};
use super::handler::{Reply, RequestHandler};
use super::headers::{self, ExtensionPolicy};
use crate::error::{A2AError, Result};
use crate::metrics::{self, Observed};
use crate::model::{AgentCard, binding};
use crate::request::A2ARequest;
use crate::task::call::{CallContext, EventStream};
use bytes::Bytes;
use futures_util::FutureExt;
use http::header::HeaderValue;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::Body;
use serde_json::Value;
use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use tracing::field::Empty;

pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Liveness: the process answers (`GET`, 200).
pub const HEALTH_PATH: &str = "/healthz";
/// Readiness: the server can serve calls now (its task store answers); 503 otherwise.
pub const READY_PATH: &str = "/readyz";

/// How long a stream's response head waits for its first event (see [`await_head`]): long
/// enough for an executor to start and activate its extensions, short enough that a slow
/// first event does not hold the head (and so the keep-alives) back.
const FIRST_EVENT_WAIT: Duration = Duration::from_secs(1);

/// Waits for a stream's first executor event before its response head goes out (at most
/// [`FIRST_EVENT_WAIT`], or `limit` when sooner: a gRPC deadline), so what the executor
/// activates as it starts is echoed in that head. Every binding calls it on a stream reply.
pub(crate) async fn await_head(events: &mut EventStream, limit: Option<Duration>) {
    events.first_within(limit.map_or(FIRST_EVENT_WAIT, |l| l.min(FIRST_EVENT_WAIT))).await;
}

/// Settings of the HTTP layer (the protocol limits live in [`super::Limits`]).
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// `Cache-Control: public, max-age=…` of the agent card.
    pub card_max_age: Duration,
    /// How often an idle SSE stream gets a `: keep-alive` comment; `None` = never.
    pub sse_keep_alive: Option<Duration>,
    /// `Strict-Transport-Security` on every response (set when the server terminates TLS).
    pub hsts: Option<HeaderValue>,
    /// Serve the card in strict A2A 1.0 form: without the 0.3 fields a declared 0.3 interface
    /// otherwise adds (see `card`), for 1.0 clients that refuse unknown fields.
    pub strict_v1_card: bool,
    /// Refuse the HTTP/1.1 framing hyper lets through (no `Host`, a transfer coding besides
    /// `chunked`; see `framing_refusal`). [`super::Server`] sets it on its own listener; a
    /// service mounted elsewhere leaves framing to the server it is mounted in.
    pub check_framing: bool,
    /// The origins whose web pages may call the agent (CORS); `None`: no cross-origin calls.
    pub cors: Option<super::cors::Cors>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            card_max_age: Duration::from_secs(300),
            sse_keep_alive: Some(Duration::from_secs(15)),
            hsts: None,
            strict_v1_card: false,
            check_framing: false,
            cors: None,
        }
    }
}

/// The A2A service: a cheap-to-clone hyper `Service` over one [`RequestHandler`]. Use it
/// through [`super::Server`], or mount it in your own hyper (or tower) stack.
#[derive(Clone)]
pub struct A2AService {
    app: Arc<App>,
    /// The connection's client, when the listener knows it ([`A2AService::for_peer`]).
    peer: Option<std::net::IpAddr>,
}

/// What every request needs, computed once from the handler's card.
pub(crate) struct App {
    pub handler: Arc<RequestHandler>,
    pub card: ServedCard,
    /// Normalised paths (`/`, `/a2a`) that speak JSON-RPC.
    pub jsonrpc_paths: Vec<String>,
    /// Path prefixes (`""` = root, `/rest`) that speak HTTP+JSON, longest first.
    pub rest_prefixes: Vec<String>,
    /// The card declares a `GRPC` interface.
    pub serves_grpc: bool,
    pub extensions: ExtensionPolicy,
    pub options: HttpOptions,
    /// The push signer's public keys (JSON), served at `push::JWKS_PATH` when notifications
    /// are signed.
    pub push_jwks: Option<Vec<u8>>,
    /// Fired during graceful shutdown once the handler had its chance to end streams.
    pub shutdown: CancellationToken,
}

impl A2AService {
    pub fn new(handler: Arc<RequestHandler>, options: HttpOptions) -> Self {
        Self::with_shutdown(handler, options, CancellationToken::new())
    }

    pub(crate) fn with_shutdown(
        handler: Arc<RequestHandler>,
        options: HttpOptions,
        shutdown: CancellationToken,
    ) -> Self {
        let card = handler.card();
        let (jsonrpc_paths, rest_prefixes) = routes(card);
        let app = App {
            card: ServedCard::new(card, options.card_max_age, options.strict_v1_card),
            extensions: ExtensionPolicy::from_card(card),
            jsonrpc_paths,
            rest_prefixes,
            serves_grpc: card
                .supported_interfaces
                .iter()
                .any(|i| i.protocol_binding.eq_ignore_ascii_case(binding::GRPC)),
            push_jwks: handler.push_signer().map(|s| serde_json::to_vec(&s.jwks()).expect("a JWKS serialises")),
            handler,
            options,
            shutdown,
        };
        Self { app: Arc::new(app), peer: None }
    }

    /// This service for one connection from `peer`: its request bodies in flight count against
    /// that client's share of the server's budget.
    pub(crate) fn for_peer(&self, peer: std::net::IpAddr) -> Self {
        Self { app: self.app.clone(), peer: Some(peer) }
    }

    /// Answers one request. Never fails: every problem is an HTTP response.
    pub async fn handle<B>(&self, req: Request<B>) -> Response<ResponseBody>
    where
        B: Body<Data = Bytes> + Send + Unpin + 'static,
        B::Error: Into<BoxError>,
    {
        // DEBUG, not INFO: an enabled span is formatted by the log layer (every field, and
        // every later record), about a tenth of a SendMessage's CPU under `a2a serve`'s default
        // `a2a_native=info`. `RUST_LOG=a2a_native=debug` gives each log line its request.
        // Beside our own fields, OpenTelemetry's semantic conventions for HTTP and RPC servers
        // (`http.*`, `url.path`, `rpc.*`, `enduser.id`), so collectors' RPC views work; once the
        // method is known the exported span is named `{rpc.service}/{rpc.method}` as they say.
        let span = tracing::debug_span!(
            "a2a.request",
            otel.kind = "server",
            otel.name = Empty,
            http.request.method = %req.method(),
            url.path = %req.uri().path(),
            http.response.status_code = Empty,
            rpc.system = Empty,
            rpc.service = Empty,
            rpc.method = Empty,
            binding = Empty,
            method = Empty,
            version = Empty,
            task_id = Empty,
            context_id = Empty,
            tenant = Empty,
            enduser.id = Empty,
            trace_id = Empty,
            span_id = Empty,
            error.type = Empty,
            rpc.jsonrpc.error_code = Empty,
            rpc.grpc.status_code = Empty,
            otel.status_code = Empty,
            otel.status_message = Empty,
        );
        crate::trace_context::continue_trace(&span, req.headers());
        crate::trace_context::record_ids(&span, req.headers());
        let app = self.app.clone();
        let started = std::time::Instant::now();
        let answer = async move {
            let mut resp = app.dispatch(req).await;
            if metrics::shed() {
                // Refused for load of the moment (the body budget): worth retrying soon.
                resp.headers_mut().entry(http::header::RETRY_AFTER).or_insert(HeaderValue::from_static("1"));
            }
            if let Some(hsts) = &app.options.hsts {
                resp.headers_mut().insert(http::header::STRICT_TRANSPORT_SECURITY, hsts.clone());
            }
            tracing::Span::current().record("http.response.status_code", i64::from(resp.status().as_u16()));
            tracing::debug!(status = resp.status().as_u16(), "response");
            // Answers no layer named (a 404, a refused method) by their HTTP status.
            metrics::outcome(if resp.status().is_success() { "OK" } else { "HTTP_ERROR" });
            record_failure(&tracing::Span::current(), resp.status());
            metrics::observe(|o| app.handler.metrics().request(o, started));
            resp
        };
        // Boxed as soon as it is made: the span and the metrics scope wrap it, and the service
        // future holds it, each a move that would otherwise copy the whole dispatch future.
        let observed = Observed { peer: self.peer, ..Observed::default() };
        metrics::OBSERVED.scope(observed, Box::pin(answer).instrument(span)).await
    }
}

/// A failed request on its span, as OpenTelemetry's RPC and HTTP conventions say (see
/// [`Failure::of`]). JSON-RPC and gRPC answer HTTP 200 whatever happened, so without this a
/// failure showed nowhere on the span.
fn record_failure(span: &tracing::Span, status: StatusCode) {
    let (reason, binding) = metrics::observed(|o| (o.outcome.get(), o.binding.get())).unwrap_or(("", ""));
    let Some(failure) = Failure::of(reason, binding, status) else { return };
    if let Some(reason) = failure.error_type {
        span.record("error.type", reason);
    }
    match failure.code {
        Some(Code::JsonRpc(code)) => span.record("rpc.jsonrpc.error_code", i64::from(code)),
        Some(Code::Grpc(code)) => span.record("rpc.grpc.status_code", i64::from(code)),
        None => span,
    };
    if let Some(message) = failure.error_status {
        span.record("otel.status_code", "ERROR");
        span.record("otel.status_message", message);
    }
}

/// What a request's span says of its failure.
#[derive(Debug, PartialEq)]
struct Failure {
    /// The error's reason (`TASK_NOT_FOUND`).
    error_type: Option<&'static str>,
    code: Option<Code>,
    /// Error status, with its message: the server's faults only (5xx, or an error the table
    /// answers with 5xx: UNAVAILABLE, INTERNAL...), never a caller's mistake.
    error_status: Option<&'static str>,
}

#[derive(Debug, PartialEq)]
enum Code {
    JsonRpc(i32),
    Grpc(i32),
}

impl Failure {
    /// `None` for a success.
    fn of(reason: &'static str, binding: &str, status: StatusCode) -> Option<Self> {
        if reason == "OK" || reason.is_empty() {
            let fault = status.is_server_error().then_some("the server failed");
            return fault.map(|m| Failure { error_type: None, code: None, error_status: Some(m) });
        }
        let spec = crate::error::ERROR_TABLE.iter().find(|e| e.reason == reason);
        let code = spec.and_then(|e| match binding {
            "jsonrpc" => Some(Code::JsonRpc(e.jsonrpc_code)),
            "grpc" => Some(Code::Grpc(crate::grpc::status::code(e.grpc_status))),
            _ => None,
        });
        let fault = status.is_server_error() || spec.is_some_and(|e| e.http_status >= 500);
        let error_status = fault.then(|| spec.map_or(reason, |e| e.name));
        Some(Failure { error_type: Some(reason), code, error_status })
    }
}

impl<B> hyper::service::Service<Request<B>> for A2AService
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = std::result::Result<Response<ResponseBody>, Infallible>> + Send>>;

    fn call(&self, req: Request<B>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(req).await) })
    }
}

impl App {
    async fn dispatch<B>(&self, req: Request<B>) -> Response<ResponseBody>
    where
        B: Body<Data = Bytes> + Send + Unpin + 'static,
        B::Error: Into<BoxError>,
    {
        let (parts, body) = req.into_parts();
        let ended = Arc::new(std::sync::atomic::AtomicBool::new(body.is_end_stream()));
        let body = Tracked { inner: body, ended: ended.clone() };
        let http1 = parts.version < http::Version::HTTP_2;
        let head = parts.method == http::Method::HEAD;
        let check = http1 && self.options.check_framing;
        let drains = http1 && drained_behind_refusal(&parts.headers, self.max_body_bytes());
        let cors = self.options.cors.as_ref();
        let origin = cors.and_then(|_| parts.headers.get(http::header::ORIGIN).cloned());
        let mut resp = match check.then(|| framing_refusal(&parts)).flatten() {
            Some(refusal) => refusal,
            None => match cors.and_then(|c| c.preflight(&parts.method, &parts.headers)) {
                Some(answer) => answer,
                None => self.dispatch_parts(parts, body).await,
            },
        };
        // HTTP/1 keep-alive: an answer that left the request body unread (a refusal before the
        // body, a body too large or too slow) says that the connection closes, and it does, so
        // the client does not send its next request into a connection nobody reads. Not a 413
        // whose body is still being read behind it (`read_body`): hyper keeps the connection
        // for it, or closes it if that read gives up.
        let drained = drains && resp.status() == StatusCode::PAYLOAD_TOO_LARGE;
        if http1 && !drained && !ended.load(std::sync::atomic::Ordering::Acquire) {
            resp.headers_mut().insert(http::header::CONNECTION, HeaderValue::from_static("close"));
        }
        // HEAD: the GET's headers without its body. hyper drops the body itself on HTTP/1 only;
        // over HTTP/2 a body after a HEAD is a protocol error to the client.
        if head && !http1 {
            // The GET's length, when it has one (none for an empty answer: a 304 says none).
            if let Some(len) = hyper::body::Body::size_hint(resp.body()).exact().filter(|&len| len > 0) {
                resp.headers_mut().entry(http::header::CONTENT_LENGTH).or_insert(HeaderValue::from(len));
            }
            *resp.body_mut() = ResponseBody::empty();
        }
        self.hold_answer(&mut resp);
        // After `hold_answer`, which may put a 503 in the answer's place: that too names the origin.
        if let Some(cors) = cors {
            cors.decorate(origin.as_ref(), resp.headers_mut());
        }
        // RFC 9110 §12.5.3: a 415 says which content codings would do (only none).
        if resp.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
            resp.headers_mut().insert(http::header::ACCEPT_ENCODING, HeaderValue::from_static("identity"));
        }
        resp
    }

    /// An answer holds its size of the budget of unsent answers until it has left: a client
    /// that asks for large answers and reads none (h2 lets it ask for 200 at a time per
    /// connection) would otherwise fill memory with them. Past the budget a read (nothing done,
    /// so safe to retry) is refused for now: 503 with `Retry-After`, or gRPC UNAVAILABLE. An
    /// answer to a call that changed something goes out all the same, uncovered: refusing it
    /// would tell the client to send again what was done. A stream's events are covered one by
    /// one as they are written (`ResponseBody::hold`).
    fn hold_answer(&self, resp: &mut Response<ResponseBody>) {
        let budget = self.handler.answer_budget();
        let observed = || metrics::observed(|o| (o.binding.get(), o.method.get())).unwrap_or_default();
        // The agent card (public, its own observed method) is a read too.
        let is_read = |method: &str| {
            method == "GetAgentCard" || crate::request::Method::from_name(method).is_some_and(|m| m.is_read())
        };
        if resp.body_mut().hold(budget, || is_read(observed().1)).is_ok() {
            return;
        }
        let (binding, method) = observed();
        if !is_read(method) {
            return;
        }
        let e = budget.answers_spent();
        metrics::observe(|o| o.outcome.set(e.kind.spec().reason));
        *resp = match binding {
            "grpc" => super::grpc_binding::refused(e),
            "jsonrpc" => bytes_response(
                StatusCode::SERVICE_UNAVAILABLE,
                headers::JSON,
                crate::jsonrpc::error(&crate::jsonrpc::Id::Null, &e),
            ),
            _ => json_response(StatusCode::SERVICE_UNAVAILABLE, headers::JSON, &e.to_http_body()),
        };
        if binding != "grpc" {
            resp.headers_mut().insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
    }

    async fn dispatch_parts<B>(&self, parts: http::request::Parts, body: Tracked<B>) -> Response<ResponseBody>
    where
        B: Body<Data = Bytes> + Send + Unpin + 'static,
        B::Error: Into<BoxError>,
    {
        let path = parts.uri.path().to_owned();
        let span = tracing::Span::current();
        if is_grpc(&parts.headers) {
            span.record("binding", "grpc");
            span.record("rpc.system", "grpc");
            metrics::observe(|o| o.binding.set("grpc"));
            if parts.version != http::Version::HTTP_2 {
                // gRPC's trailers (its status) cannot be sent over HTTP/1: refused before
                // anything runs, after the body so that a keep-alive client reads the answer.
                self.drain(body, 0).await;
                return super::grpc_binding::requires_http2();
            }
            if super::grpc_health::is_health_path(parts.uri.path()) {
                return super::grpc_health::serve(self, parts, body).await;
            }
            let mut parts = parts;
            return match self.authenticate(&parts).await {
                Ok(principal) => {
                    if let Some(principal) = principal {
                        span.record("enduser.id", principal.name.as_str());
                        parts.extensions.insert(principal);
                    }
                    super::grpc_binding::serve(self, parts, body).await
                }
                // HTTP/2 answers before the body without harm (the stream is reset after the
                // answer): a caller that holds its body open is not kept waiting.
                Err(e) => super::grpc_binding::refuse_error(&e),
            };
        }
        if let Some(answer) = self.health(&path, &parts.method).await {
            return answer;
        }
        if parts.method == Method::OPTIONS && parts.uri.path() == "*" {
            // The server as a whole (RFC 9110 §9.3.7): the methods some resource here takes.
            let mut resp = no_content();
            resp.headers_mut()
                .insert(http::header::ALLOW, HeaderValue::from_static("GET, HEAD, POST, DELETE, OPTIONS"));
            return resp;
        }
        if path == WELL_KNOWN_PATH || path == LEGACY_WELL_KNOWN_PATH {
            span.record("binding", "card");
            metrics::observe(|o| {
                o.binding.set("card");
                o.method.set("GetAgentCard");
            });
            return self.card.respond(&parts.method, &parts.headers);
        }
        if path == crate::push::JWKS_PATH
            && let Some(jwks) = &self.push_jwks
        {
            // Public, like the card: receivers fetch it to check notification signatures.
            return bytes_response(StatusCode::OK, headers::JSON, jwks.clone());
        }
        let normalised = normalise(&path);
        let is_jsonrpc = self.jsonrpc_paths.contains(&normalised);
        // Named before authentication, so that refusals are counted under their binding.
        if is_jsonrpc {
            span.record("rpc.system", "jsonrpc");
            metrics::observe(|o| o.binding.set("jsonrpc"));
        } else if self.rest_prefixes.iter().any(|prefix| strip_path_prefix(&path, prefix).is_some()) {
            metrics::observe(|o| o.binding.set("http+json"));
        }
        let mut parts = parts;
        match self.authenticate(&parts).await {
            Ok(Some(principal)) => {
                span.record("enduser.id", principal.name.as_str());
                parts.extensions.insert(principal);
            }
            Ok(None) => {}
            Err(e) => {
                // Answered after the body, so a client sending it separately reads the 401. A
                // JSON-RPC answer echoes the request's id (JSON-RPC 2.0 §5), read from a small
                // body only: an unauthenticated caller gets no large parse.
                let keep = if is_jsonrpc { ID_PROBE_BYTES } else { 0 };
                let head = self.drain(body, keep).await;
                let id = head.map_or(crate::jsonrpc::Id::Null, |b| crate::jsonrpc::id_of(&b));
                return self.refuse(is_jsonrpc, &id, &e);
            }
        }
        let resp = self.route(parts, body, &path, is_jsonrpc).await;
        self.with_challenge(resp)
    }

    /// `/healthz` (and `/livez`): the process answers. `/readyz`: it can serve calls now (its
    /// task store answers, and it is not stopping); 503 with the reason otherwise. Public, as
    /// the card is: probes carry no credentials. `None` for other paths.
    async fn health(&self, path: &str, method: &Method) -> Option<Response<ResponseBody>> {
        let ready = match path {
            HEALTH_PATH | "/livez" => false,
            READY_PATH => true,
            _ => return None,
        };
        metrics::observe(|o| {
            o.binding.set("health");
            o.method.set(if ready { "Ready" } else { "Health" });
        });
        if method != Method::GET && method != Method::HEAD {
            let mut resp = json_response(
                StatusCode::METHOD_NOT_ALLOWED,
                headers::JSON,
                &serde_json::json!({"status": "GET only"}),
            );
            resp.headers_mut().insert(http::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return Some(resp);
        }
        let outcome = if !ready {
            Ok(())
        } else if self.shutdown.is_cancelled() {
            Err("the server is stopping".to_owned())
        } else {
            self.handler.ready().await.map_err(|e| e.message)
        };
        let mut resp = match outcome {
            Ok(()) => json_response(StatusCode::OK, headers::JSON, &serde_json::json!({"status": "ok"})),
            Err(reason) => json_response(
                StatusCode::SERVICE_UNAVAILABLE,
                headers::JSON,
                &serde_json::json!({"status": "unavailable", "reason": reason}),
            ),
        };
        resp.headers_mut().insert(http::header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        Some(resp)
    }

    /// The caller, by the handler's authenticator, held to the card's own requirements (no
    /// credentials: Unauthenticated; too few scopes: PermissionDenied); GetExtendedAgentCard
    /// checks its own rule in the handler.
    async fn authenticate(&self, request: &http::request::Parts) -> Result<Option<Principal>> {
        let Some(authenticator) = self.handler.authenticator() else { return Ok(None) };
        let principal = authenticator.authenticate(request).await?;
        super::auth::check_card_requirements(&self.handler.card().security_requirements, principal.as_ref())?;
        Ok(principal)
    }

    /// An authentication failure in the binding's error format, with its HTTP status.
    fn refuse(&self, is_jsonrpc: bool, id: &crate::jsonrpc::Id, err: &A2AError) -> Response<ResponseBody> {
        metrics::outcome(err.kind.spec().reason);
        let status = status(err.http_status());
        let resp = if is_jsonrpc {
            bytes_response(status, headers::JSON, crate::jsonrpc::error(id, err))
        } else {
            json_response(status, headers::JSON, &err.to_http_body())
        };
        self.with_challenge(resp)
    }

    /// Every 401 names the scheme to use (RFC 9110 §11.6.1).
    fn with_challenge(&self, mut resp: Response<ResponseBody>) -> Response<ResponseBody> {
        if resp.status() == StatusCode::UNAUTHORIZED && !resp.headers().contains_key(http::header::WWW_AUTHENTICATE) {
            let challenge = self.handler.authenticator().map_or("Bearer", |a| a.challenge());
            if let Ok(value) = HeaderValue::from_str(challenge) {
                resp.headers_mut().insert(http::header::WWW_AUTHENTICATE, value);
            }
        }
        resp
    }

    async fn route<B>(
        &self,
        parts: http::request::Parts,
        body: B,
        path: &str,
        is_jsonrpc: bool,
    ) -> Response<ResponseBody>
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let span = tracing::Span::current();
        if is_jsonrpc {
            span.record("binding", "jsonrpc");
            if parts.method == Method::POST {
                return super::jsonrpc_binding::serve(self, parts, body).await;
            }
            let err = A2AError::invalid_request(format!("JSON-RPC requests are sent with POST, not {}", parts.method));
            let mut resp = bytes_response(
                StatusCode::METHOD_NOT_ALLOWED,
                headers::JSON,
                crate::jsonrpc::error(&crate::jsonrpc::Id::Null, &err),
            );
            resp.headers_mut().insert(http::header::ALLOW, HeaderValue::from_static("POST"));
            return resp;
        }
        for prefix in &self.rest_prefixes {
            if let Some(rel) = strip_path_prefix(path, prefix) {
                span.record("binding", "http+json");
                return super::rest_binding::serve(self, parts, rel, body).await;
            }
        }
        let shown: String = path.chars().take(200).collect();
        let err = A2AError::new(crate::ErrorKind::MethodNotFound, format!("no A2A endpoint at {shown}"))
            .with_meta("path", shown);
        json_response(StatusCode::NOT_FOUND, headers::JSON, &err.to_http_body())
    }

    /// Calls the handler, recording task and context ids in the span. A panic in the handler
    /// (a server bug) becomes InternalError rather than a dropped connection.
    pub async fn call(&self, ctx: &CallContext, request: A2ARequest) -> Result<Reply> {
        record_request_ids(&request);
        metrics::observe(|o| o.method.set(request.method().as_str()));
        // Boxed: the handler's future (task manager, store) is large, and every layer above
        // (binding, dispatch, span) would otherwise copy it by value as it starts.
        let mut result = AssertUnwindSafe(Box::pin(self.handler.handle(ctx, request)))
            .catch_unwind()
            .await
            .unwrap_or_else(|_| Err(A2AError::internal("the request handler panicked")));
        match &mut result {
            Ok(Reply::Stream(events)) => {
                metrics::outcome("OK");
                events.hold(self.handler.metrics().open_stream());
            }
            Ok(_) => metrics::outcome("OK"),
            Err(e) => metrics::outcome(e.kind.spec().reason),
        }
        match &result {
            Ok(Reply::Value(v)) => record_result_ids(v.ids()),
            // The message as a field, escaped: it may repeat what the caller sent (a task id with
            // a newline in it would otherwise forge a log line of its own).
            Err(e) if e.http_status() >= 500 => tracing::warn!(code = e.code(), error = ?e.message, "request failed"),
            Err(e) => tracing::debug!(code = e.code(), error = ?e.message, "request failed"),
            _ => {}
        }
        result
    }

    /// Calls an extension method, as [`Self::call`] does a core one (panics caught, the
    /// outcome counted and traced).
    pub async fn call_method(
        &self,
        ctx: &CallContext,
        spec: &crate::methods::MethodSpec,
        params: serde_json::Value,
    ) -> Result<serde_json::Value> {
        metrics::observe(|o| o.method.set("extension"));
        let result = AssertUnwindSafe(self.handler.call_method(ctx, spec, params))
            .catch_unwind()
            .await
            .unwrap_or_else(|_| Err(A2AError::internal("the extension method panicked")));
        match &result {
            Ok(_) => metrics::outcome("OK"),
            Err(e) => {
                metrics::outcome(e.kind.spec().reason);
                tracing::debug!(code = e.code(), method = %spec.name, "extension method failed: {}", e.message);
            }
        }
        result
    }

    /// A `text/event-stream` response writing `events` with `framing`.
    pub fn sse_response(&self, events: EventStream, framing: Framing) -> Response<ResponseBody> {
        let options = SseOptions {
            keep_alive: self.options.sse_keep_alive,
            shutdown: Some(self.shutdown.clone()),
            span: tracing::Span::current(),
        };
        let mut resp = Response::new(ResponseBody::sse(events, framing, options));
        let h = resp.headers_mut();
        h.insert(http::header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        h.insert(http::header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        // Tells nginx-style proxies not to buffer the stream.
        h.insert("x-accel-buffering", HeaderValue::from_static("no"));
        resp
    }

    pub fn max_body_bytes(&self) -> usize {
        self.handler.limits().max_body_bytes
    }

    pub fn body_read_timeout(&self) -> Duration {
        self.handler.limits().body_read_timeout
    }

    /// A JSON binding's request body, under this server's limits (see [`read_body`]).
    pub(crate) async fn read_json_body<B>(
        &self,
        headers: &HeaderMap,
        body: B,
    ) -> std::result::Result<(Bytes, BodyShare), BodyError>
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        read_body(
            headers,
            body,
            self.max_body_bytes(),
            self.body_read_timeout(),
            self.handler.body_budget(),
            Announced::Nothing,
        )
        .await
    }

    /// [`drain`] within this server's body limits: drops the rest of a refused request's body,
    /// keeping its first `keep` bytes when it ends within them.
    async fn drain<B>(&self, body: B, keep: usize) -> Option<Vec<u8>>
    where
        B: Body<Data = Bytes>,
        B::Error: Into<BoxError>,
    {
        drain(body, self.max_body_bytes(), self.body_read_timeout(), None, keep).await
    }
}

/// Whether the request is a gRPC call (by its content type, whatever its codec: the gRPC
/// binding refuses one it does not read with a gRPC status).
fn is_grpc(headers: &HeaderMap) -> bool {
    headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(crate::grpc::is_grpc_call)
}

/// The JSON-RPC paths and HTTP+JSON prefixes the card declares.
fn routes(card: &AgentCard) -> (Vec<String>, Vec<String>) {
    let mut jsonrpc: Vec<String> = Vec::new();
    let mut rest: Vec<String> = Vec::new();
    for i in &card.supported_interfaces {
        let path = normalise(url_path(&i.url));
        if i.protocol_binding.eq_ignore_ascii_case(binding::JSONRPC) {
            if !jsonrpc.contains(&path) {
                jsonrpc.push(path);
            }
        } else if i.protocol_binding.eq_ignore_ascii_case(binding::HTTP_JSON) {
            let prefix = if path == "/" { String::new() } else { path };
            if !rest.contains(&prefix) {
                rest.push(prefix);
            }
        }
    }
    if jsonrpc.is_empty() {
        jsonrpc.push("/".to_owned());
    }
    if rest.is_empty() {
        rest.push(String::new());
    }
    rest.sort_by_key(|p| std::cmp::Reverse(p.len()));
    (jsonrpc, rest)
}

/// The path of an interface URL (`https://h:1/a/b?x` → `/a/b`); `/` when it has none.
fn url_path(url: &str) -> &str {
    let after_scheme = match url.find("://") {
        Some(i) => &url[i + 3..],
        None if url.starts_with('/') => return cut_query(url),
        None => url,
    };
    match after_scheme.find('/') {
        Some(i) => cut_query(&after_scheme[i..]),
        None => "/",
    }
}

fn cut_query(path: &str) -> &str {
    path.split(['?', '#']).next().unwrap_or("/")
}

/// Without trailing slashes; `/` for the root.
fn normalise(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() { "/".to_owned() } else { trimmed.to_owned() }
}

/// `path` relative to `prefix` (still starting with `/`), if it lies under it.
fn strip_path_prefix<'a>(path: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = path.strip_prefix(prefix)?;
    (rest.starts_with('/')).then_some(rest)
}

fn record_request_ids(request: &A2ARequest) {
    let span = tracing::Span::current();
    span.record("method", request.method().as_str());
    span.record("rpc.service", crate::request::SERVICE);
    span.record("rpc.method", request.method().as_str());
    crate::trace_context::rename(&span, request.method().rpc_name());
    if !request.tenant().is_empty() {
        span.record("tenant", request.tenant());
    }
    let (task, context) = match request {
        A2ARequest::SendMessage(r) | A2ARequest::SendStreamingMessage(r) => {
            (r.message.task_id.as_str(), r.message.context_id.as_str())
        }
        A2ARequest::GetTask(r) => (r.id.as_str(), ""),
        A2ARequest::CancelTask(r) => (r.id.as_str(), ""),
        A2ARequest::SubscribeToTask(r) => (r.id.as_str(), ""),
        A2ARequest::CreateTaskPushNotificationConfig(r) => (r.task_id.as_str(), ""),
        A2ARequest::GetTaskPushNotificationConfig(r) | A2ARequest::DeleteTaskPushNotificationConfig(r) => {
            (r.task_id.as_str(), "")
        }
        A2ARequest::ListTaskPushNotificationConfigs(r) => (r.task_id.as_str(), ""),
        A2ARequest::ListTasks(r) => ("", r.context_id.as_str()),
        A2ARequest::GetExtendedAgentCard(_) => ("", ""),
    };
    if !task.is_empty() {
        span.record("task_id", task);
    }
    if !context.is_empty() {
        span.record("context_id", context);
    }
}

/// Ids of the task a result names (SendMessage's task or message, a Task).
fn record_result_ids((task, context): (&str, &str)) {
    let span = tracing::Span::current();
    if !task.is_empty() {
        span.record("task_id", task);
    }
    if !context.is_empty() {
        span.record("context_id", context);
    }
}

/// Why a request body could not be read.
pub(crate) struct BodyError {
    pub status: StatusCode,
    pub error: A2AError,
}

/// The first content coding of the body other than `identity`: none is supported (a
/// compressed body read as JSON would fail as garbage, and decoding one would let a small
/// request grow past the body limit before it could be checked).
fn unsupported_coding(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(http::header::CONTENT_ENCODING)
        .iter()
        .flat_map(|v| v.to_str().unwrap_or("?").split(','))
        .map(str::trim)
        .find(|c| !c.is_empty() && !c.eq_ignore_ascii_case("identity"))
        .map(|c| c.chars().take(40).collect())
}

/// Reads the whole body, refusing a compressed one (415), more than `limit` bytes (first from
/// `Content-Length`, before reading anything; then while reading, for chunked or lying
/// bodies), a body that takes longer than `timeout` to arrive (408), and a large body the
/// server-wide `budget` cannot cover now (503). The share of the budget goes with the bytes:
/// keep it until the request is answered. `announced` reads the length a body's first bytes
/// declare, where its framing has one (gRPC's 5-byte prefix): over `limit`, the body is
/// refused as soon as those bytes arrive, not when the rest does (or never does).
pub(crate) async fn read_body<B>(
    headers: &HeaderMap,
    body: B,
    limit: usize,
    timeout: Duration,
    budget: &BodyBudget,
    announced: Announced,
) -> std::result::Result<(Bytes, BodyShare), BodyError>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let too_large = || BodyError {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        error: A2AError::invalid_request(format!("the request body is larger than {limit} bytes"))
            .with_meta("maxBodyBytes", limit.to_string()),
    };
    let busy = |error| {
        metrics::observe(|o| o.shed.set(true));
        BodyError { status: StatusCode::SERVICE_UNAVAILABLE, error }
    };
    if let Some(coding) = unsupported_coding(headers) {
        return Err(BodyError {
            status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
            error: A2AError::new(
                crate::ErrorKind::ContentTypeNotSupported,
                format!("Content-Encoding {coding:?} is not supported; send the body uncompressed"),
            ),
        });
    }
    let (declared, expects_continue) = (declared_length(headers), expects_continue(headers));
    if declared.is_some_and(|n| n > limit as u64) {
        // Answered at once. An HTTP/1 client still uploading when the connection closes sees
        // a broken pipe, not the 413: a body within a few times the limit is read on and
        // dropped behind the answer (as it comes, holding nothing; within the body timeout),
        // and the connection stays open for it (see [`drained_behind_refusal`]).
        if drained_behind_refusal(headers, limit) {
            // Read to its end, the body leaves the connection open for the next request;
            // dropped early (too large, too slow, or idle), hyper closes it.
            let cap = limit.saturating_mul(DRAIN_FACTOR);
            tokio::spawn(async move { drain(body, cap, timeout, Some(LINGER_IDLE), 0).await });
        }
        return Err(too_large());
    }
    // Counted as the bytes arrive, not from `Content-Length`: a client that only announces a
    // large body holds nothing. A body the budget cannot cover is still read (and dropped as
    // it comes, holding nothing), so a keep-alive client that sends its body after its
    // headers reads the 503.
    let (mut share, mut refused) = (BodyShare::default(), None);
    let client = metrics::observed(|o| o.peer).flatten();
    // A client that waits for `100 Continue` sends nothing until the body is read: its declared
    // length is charged now, and when it does not fit it is answered before it uploads anything.
    if let Some(n) = declared.filter(|_| expects_continue) {
        // At most `limit`, checked above.
        budget.cover_for(client, &mut share, n as usize).map_err(busy)?;
    }
    let read = async {
        let mut body = std::pin::pin!(Limited::new(body, limit));
        let (mut chunks, mut len) = (Vec::<Bytes>::new(), 0);
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| {
                if e.downcast_ref::<LengthLimitError>().is_some() {
                    return too_large();
                }
                BodyError {
                    status: StatusCode::BAD_REQUEST,
                    error: A2AError::invalid_request(format!("cannot read the request body: {e}")),
                }
            })?;
            let Ok(data) = frame.into_data() else { continue };
            let before = len;
            len += data.len();
            if refused.is_some() {
                continue;
            }
            if let Announced::Prefix(size, read) = announced
                && before < size
                && len >= size
            {
                // The prefix is complete with this chunk (it may span the earlier ones).
                let declared = if before == 0 {
                    read(&data[..size])
                } else {
                    let mut prefix = chunks.concat();
                    prefix.extend_from_slice(&data[..size - before]);
                    read(&prefix)
                };
                if declared > limit {
                    return Err(too_large());
                }
            }
            match budget.cover_for(client, &mut share, len) {
                Ok(()) => chunks.push(data),
                Err(e) => {
                    refused = Some(e);
                    chunks = Vec::new();
                    share = BodyShare::default();
                }
            }
        }
        if let Some(e) = refused {
            return Err(busy(e));
        }
        Ok(match chunks.len() {
            0 => Bytes::new(),
            1 => chunks.pop().unwrap_or_default(),
            _ => chunks.concat().into(),
        })
    };
    match tokio::time::timeout(timeout, read).await {
        Ok(read) => read.map(|bytes| (bytes, share)),
        Err(_) => Err(BodyError {
            status: StatusCode::REQUEST_TIMEOUT,
            error: A2AError::invalid_request(format!("the request body did not arrive within {timeout:?}"))
                .with_meta("bodyReadTimeoutSeconds", timeout.as_secs_f64().to_string()),
        }),
    }
}

/// A body announced larger than the limit is still read (and dropped) behind its 413 when it
/// is at most this many times the limit (see [`read_body`]).
const DRAIN_FACTOR: usize = 4;

/// How long a body read on behind its refusal may go without a byte before the read stops
/// and the connection closes: a client that announced a body and sends none is not held.
const LINGER_IDLE: Duration = Duration::from_secs(1);

/// Whether [`read_body`] reads on a body it refuses as too large, so the connection can stay
/// open: one announced by `Content-Length` within [`DRAIN_FACTOR`] times the limit, from a
/// client that does not wait for `100 Continue` (that one sends nothing after the refusal).
fn drained_behind_refusal(headers: &HeaderMap, limit: usize) -> bool {
    !expects_continue(headers)
        && declared_length(headers).is_some_and(|n| n > limit as u64 && n <= limit.saturating_mul(DRAIN_FACTOR) as u64)
}

/// The body length `Content-Length` announces, when it is a number.
fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(http::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok())
}

fn expects_continue(headers: &HeaderMap) -> bool {
    headers.get(http::header::EXPECT).is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"))
}

/// What a body's framing says of its length (see [`read_body`]).
#[derive(Clone, Copy)]
pub(crate) enum Announced {
    Nothing,
    /// The first `.0` bytes declare the body's whole length, read by `.1`.
    Prefix(usize, fn(&[u8]) -> usize),
}

/// A request body that records whether it was read to its end, so the service can tell a
/// keep-alive client that its connection closes when an answer left the body unread.
pub(crate) struct Tracked<B> {
    inner: B,
    ended: Arc<std::sync::atomic::AtomicBool>,
}

impl<B: Body + Unpin> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<std::result::Result<hyper::body::Frame<B::Data>, B::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, std::task::Poll::Ready(None)) || self.inner.is_end_stream() {
            self.ended.store(true, std::sync::atomic::Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// The most of a refused JSON-RPC body read for its id (larger ones are answered with id null).
const ID_PROBE_BYTES: usize = 16 * 1024;

/// Reads and drops what is left of a refused request's body, within the limits, so the
/// answer reaches a keep-alive client that sends its body after its headers. Its first `keep`
/// bytes are kept: `Some(them)` when the body ended within them, `None` when it was longer,
/// too large or too slow (the connection then closes). With `idle`, the read also stops when
/// no byte came for that long.
async fn drain<B>(body: B, limit: usize, timeout: Duration, idle: Option<Duration>, keep: usize) -> Option<Vec<u8>>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let discard = async {
        let mut body = std::pin::pin!(Limited::new(body, limit));
        let mut kept = Some(Vec::new());
        loop {
            let frame = match idle {
                Some(idle) => tokio::time::timeout(idle, body.frame()).await.ok()?,
                None => body.frame().await,
            };
            match frame {
                None => return kept,
                // Dropped as it comes past `keep`: a refused body holds no memory.
                Some(Ok(frame)) => {
                    if let (Some(head), Some(data)) = (&mut kept, frame.data_ref()) {
                        if head.len() + data.len() <= keep {
                            head.extend_from_slice(data);
                        } else {
                            kept = None;
                        }
                    }
                }
                Some(Err(_)) => return None,
            }
        }
    };
    tokio::time::timeout(timeout, discard).await.ok().flatten()
}

/// What HTTP/1 (RFC 9112) requires of a request's framing that hyper lets through: at most
/// one `Host`, and exactly one on HTTP/1.1 (§3.2: 400 otherwise), and no transfer coding but
/// `chunked` (§6.1: 501 for one the server does not implement; hyper would read
/// `gzip, chunked` as plain chunked, so the body would not be what the client meant). Empty
/// list elements are ignored (RFC 9110 §5.6.1).
fn framing_refusal(parts: &http::request::Parts) -> Option<Response<ResponseBody>> {
    let refuse = |status, why: &str| Some(bytes_response(status, "text/plain; charset=utf-8", why.as_bytes().to_vec()));
    let hosts = parts.headers.get_all(http::header::HOST).iter().count();
    if hosts > 1 || (hosts == 0 && parts.version == http::Version::HTTP_11) {
        return refuse(StatusCode::BAD_REQUEST, "an HTTP/1.1 request needs exactly one Host header\n");
    }
    let mut codings = parts
        .headers
        .get_all(http::header::TRANSFER_ENCODING)
        .iter()
        .flat_map(|v| v.to_str().unwrap_or("?").split(','))
        .map(str::trim)
        .filter(|c| !c.is_empty());
    let only_chunked = match (codings.next(), codings.next()) {
        (None, _) => true,
        (Some(first), None) => first.eq_ignore_ascii_case("chunked"),
        _ => false,
    };
    if !only_chunked {
        return refuse(StatusCode::NOT_IMPLEMENTED, "no transfer coding but chunked is implemented\n");
    }
    None
}

pub(crate) fn bytes_response(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Response<ResponseBody> {
    let mut resp = Response::new(ResponseBody::full(body));
    *resp.status_mut() = status;
    resp.headers_mut().insert(http::header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

/// A JSON response written straight from a typed value.
pub(crate) fn serialized_response(
    status: StatusCode,
    content_type: &'static str,
    value: &impl serde::Serialize,
) -> Response<ResponseBody> {
    match serde_json::to_vec(value) {
        Ok(bytes) => bytes_response(status, content_type, bytes),
        Err(e) => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            content_type,
            &A2AError::internal(format!("cannot serialise the result: {e}")).to_http_body(),
        ),
    }
}

pub(crate) fn json_response(status: StatusCode, content_type: &'static str, value: &Value) -> Response<ResponseBody> {
    // Serialising a `Value` cannot fail.
    bytes_response(status, content_type, serde_json::to_vec(value).unwrap_or_default())
}

/// `204 No Content`: the answer to a JSON-RPC notification.
pub(crate) fn no_content() -> Response<ResponseBody> {
    let mut resp = Response::new(ResponseBody::empty());
    *resp.status_mut() = StatusCode::NO_CONTENT;
    resp
}

/// Echoes the activated extensions: `A2A-Extensions`, and `X-A2A-Extensions` too when the
/// client used the 0.3 name.
pub(crate) fn echo_extensions(resp: &mut Response<ResponseBody>, request: &HeaderMap, activated: &[String]) {
    if let Some(value) = headers::extensions_value(activated) {
        if request.contains_key(headers::LEGACY_EXTENSIONS_NAME) {
            resp.headers_mut().insert(headers::LEGACY_EXTENSIONS_NAME, value.clone());
        }
        resp.headers_mut().insert(headers::EXTENSIONS_NAME, value);
    }
}

/// The [`CallContext`] of a request; the one place the bindings build it, so fields added to
/// it later get their defaults here.
#[allow(clippy::needless_update)]
pub(crate) fn call_context(activation: &crate::executor::Activation, request: &http::request::Parts) -> CallContext {
    CallContext {
        extensions: activation.offered().to_vec(),
        activation: activation.clone(),
        principal: request.extensions.get::<Principal>().cloned(),
        last_event_id: last_event_id(&request.headers),
        trace: crate::trace_context::TraceParent::from_headers(&request.headers),
        ..Default::default()
    }
}

/// The `Last-Event-ID` of a reconnecting stream, when it is one of ours (a sequence number).
/// Anything else is ignored, as the SSE spec lets a server do: the stream then starts afresh.
fn last_event_id(headers: &http::HeaderMap) -> Option<u64> {
    headers.get("last-event-id")?.to_str().ok()?.trim().parse().ok()
}

/// An HTTP status from a table value (always valid; 500 otherwise).
pub(crate) fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_on_the_span_is_an_error_only_when_the_server_failed() {
        let of = Failure::of;
        assert_eq!(of("OK", "jsonrpc", StatusCode::OK), None);
        // A caller's mistake: named, coded, no Error status.
        let missing = of("TASK_NOT_FOUND", "jsonrpc", StatusCode::OK).unwrap();
        assert_eq!(
            missing,
            Failure { error_type: Some("TASK_NOT_FOUND"), code: Some(Code::JsonRpc(-32001)), error_status: None }
        );
        assert_eq!(of("TASK_NOT_FOUND", "grpc", StatusCode::OK).unwrap().code, Some(Code::Grpc(5)));
        // The server's faults, whatever the HTTP status says (JSON-RPC and gRPC answer 200).
        let away = of("UNAVAILABLE", "grpc", StatusCode::OK).unwrap();
        assert_eq!((away.code, away.error_status), (Some(Code::Grpc(14)), Some("UnavailableError")));
        assert!(of("INTERNAL", "jsonrpc", StatusCode::OK).unwrap().error_status.is_some());
        assert!(of("HTTP_ERROR", "http+json", StatusCode::BAD_GATEWAY).unwrap().error_status.is_some());
        assert!(of("HTTP_ERROR", "http+json", StatusCode::NOT_FOUND).unwrap().error_status.is_none());
    }

    #[test]
    fn interface_paths() {
        assert_eq!(url_path("https://h:8080/a2a/v1?x=1"), "/a2a/v1");
        assert_eq!(url_path("http://h"), "/");
        assert_eq!(url_path("http://h/"), "/");
        assert_eq!(url_path("/rpc"), "/rpc");
        assert_eq!(url_path("h:443"), "/");
        assert_eq!(normalise("/a/"), "/a");
        assert_eq!(normalise("/"), "/");
        assert_eq!(strip_path_prefix("/rest/tasks", "/rest"), Some("/tasks"));
        assert_eq!(strip_path_prefix("/restx/tasks", "/rest"), None);
        assert_eq!(strip_path_prefix("/tasks", ""), Some("/tasks"));
    }
}
