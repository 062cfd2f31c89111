//! The requirements the official A2A conformance kit (TCK, 1.0-dev) lists but does not test
//! itself, tested here against our server over real HTTP. Each test is named by its id.
//!
//! Covered (transports: JSON-RPC, HTTP+JSON and gRPC wherever the requirement is about the wire):
//! - CARD-SIGN-001..004: signed Agent Cards (JCS payload, `signatures` excluded, `alg`/`kid` in
//!   the protected header, revoked keys refused); the served card verifies after a fetch.
//!   CARD-SIGN-004: a revoked key (gone from the set) and an expired one (its JWK's `exp`) verify nothing.
//! - AUTH-TLS-001/002, AUTH-SERVER-001: HTTPS on the three bindings, plain HTTP refused, TLS 1.3
//!   with an AEAD suite, our client refusing a server whose CA it does not trust.
//! - GRPC-SVC-003: gRPC over HTTP/2 with TLS (ALPN h2), cleartext refused on the TLS port.
//! - AUTH-SERVER-002: every operation on both HTTP bindings is authenticated (gRPC: BIND-EQUIV-004).
//! - AUTH-INTASK-001..006: the AUTH_REQUIRED flow, with credentials out of band (an agent
//!   waiting on a signal the test gives, as an OAuth callback would) and in a follow-up message.
//! - AUTH-SCOPE-001..003: per-operation scopes, per-caller results, TaskNotFound for tasks of
//!   others exactly as for tasks that do not exist.
//! - VER-CLIENT-001/002, VER-SERVER-001: our client's A2A-Version header, patch numbers
//!   ignored by client and server, each version's semantics served.
//! - BIND-EQUIV-001..004: one server, the same operations over JSON-RPC, HTTP+JSON and gRPC
//!   (raw gRPC calls: protobuf messages framed by hand over an HTTP/2 client).

use crate::support;

use a2a_native::auth::KeySet;
use a2a_native::client::{Binding, CardCache, Client, ProtocolVersion};
use a2a_native::executor::AgentExecutor;
use a2a_native::grpc;
use a2a_native::model::{self, AgentCard, GetTaskRequest, Message, Role, SendMessageRequest, TaskState};
use a2a_native::request::{A2ARequest, Method};
use a2a_native::server::tls::{ClientCertificate, server_config};
use a2a_native::server::{
    AnyOf, ApiKeys, BearerTokens, KeyLocation, Principal, RequestHandler, RequiredScopes, Server, ServerConfig, Stores,
};
use a2a_native::signing::{CardSigner, card_payload, verify_card};
use a2a_native::sse::SseDecoder;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use support::agent::{Step, TestAgent};
use support::client::{Action, raw_server};
use tokio::net::TcpListener;
use tokio::sync::{Notify, oneshot};

// ------------------------------------------------------------------------------------------
// A server and calls to it
// ------------------------------------------------------------------------------------------

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// JSON-RPC 1.0 at `/`, HTTP+JSON 1.0 at the root, JSON-RPC 0.3 at `/`; with `auth`, every
/// call needs a bearer token or an API key (`X-API-Key`).
fn card(base: &str, auth: bool) -> AgentCard {
    let mut card = json!({
        "name": "tck agent", "description": "d", "version": "1",
        "supportedInterfaces": [
            {"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": base, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            // gRPC at the base URL itself (`http(s)://host:port`), a form clients accept besides
            // the bare host:port: it says whether TLS is on.
            {"url": base, "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
        ],
        "capabilities": {"streaming": true, "pushNotifications": true, "extendedAgentCard": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    });
    if auth {
        card["securitySchemes"] = json!({
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}},
            "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}
        });
        card["securityRequirements"] =
            json!([{"schemes": {"bearer": {"list": []}}}, {"schemes": {"key": {"list": []}}}]);
    }
    model::parse_value(card).expect("test card is valid")
}

fn who(name: &str, scopes: &[&str]) -> Principal {
    Principal::named(name, scopes.iter().map(|s| (*s).to_owned()).collect())
}

/// Bearer `t-alice` (scope `a2a`), `t-bob` (no scope); API key `k-alice` (alice again).
fn authenticator() -> Arc<AnyOf> {
    let bearer = BearerTokens::new().with_token("t-alice", who("alice", &["a2a"])).with_token("t-bob", who("bob", &[]));
    let keys = ApiKeys::new(KeyLocation::Header("X-API-Key".into())).with_key("k-alice", who("alice", &["a2a"]));
    Arc::new(AnyOf::new(vec![Arc::new(bearer), Arc::new(keys)]))
}

struct Srv {
    base: String,
    http: reqwest::Client,
    /// An HTTP/2 client for raw gRPC calls (trusting the test CA).
    grpc: GrpcHttp,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

type GrpcHttp = hyper_util::client::legacy::Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    http_body_util::Full<bytes::Bytes>,
>;

/// A TLS client configuration trusting the test CA (and nothing else).
fn client_tls() -> rustls::ClientConfig {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(fixture("tls-ca.pem")).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth()
}

fn grpc_http() -> GrpcHttp {
    let config = client_tls();
    let mut connector = hyper_util::client::legacy::connect::HttpConnector::new();
    connector.enforce_http(false);
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_or_http()
        .enable_http2()
        .wrap_connector(connector);
    hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).http2_only(true).build(https)
}

struct Reply {
    status: u16,
    body: Value,
}

impl Reply {
    /// The ErrorInfo reason of a JSON-RPC error (`data`) or a google.rpc.Status (`details`).
    fn reason(&self) -> &str {
        let details = self.body["error"].get("details").or_else(|| self.body["error"].get("data"));
        details.and_then(|d| d[0]["reason"].as_str()).unwrap_or("")
    }
}

/// Serves `make(base)` over HTTP, or over HTTPS with `tls` (base `https://localhost:PORT`).
async fn serve(tls: Option<Arc<rustls::ServerConfig>>, make: impl FnOnce(&str) -> RequestHandler) -> Srv {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let base = match tls {
        Some(_) => format!("https://localhost:{port}"),
        None => format!("http://127.0.0.1:{port}"),
    };
    let mut server = Server::new(Arc::new(make(&base))).shutdown_timeout(Duration::from_secs(2));
    let mut http = reqwest::Client::builder().timeout(Duration::from_secs(20));
    if let Some(tls) = tls {
        server = server.tls(tls);
        let ca = reqwest::Certificate::from_pem(&std::fs::read(fixture("tls-ca.pem")).unwrap()).unwrap();
        http = http.add_root_certificate(ca);
    }
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.serve(listener, async {
        let _ = stopped.await;
    }));
    Srv { base, http: http.build().unwrap(), grpc: grpc_http(), stop: Some(stop), task }
}

/// A handler of `agent` with [`card`].
fn handler(base: &str, agent: Arc<dyn AgentExecutor>, auth: bool) -> RequestHandler {
    let mut config = ServerConfig::default();
    config.push.allow_private_targets = a2a_native::push::PrivateTargets::All;
    let mut h =
        RequestHandler::new(agent, card(base, auth), Stores::memory(), config).with_extended_card(card(base, auth));
    if auth {
        h = h.with_authenticator(authenticator());
    }
    h
}

impl Srv {
    async fn call(&self, req: reqwest::RequestBuilder, headers: &[(&str, &str)]) -> Reply {
        let mut req = req;
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        Reply { status, body: serde_json::from_str(&text).unwrap_or(Value::String(text)) }
    }

    /// A JSON-RPC call with these headers (no A2A-Version unless given).
    async fn rpc_h(&self, method: &str, params: Value, headers: &[(&str, &str)]) -> Reply {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let req = self.http.post(format!("{}/", self.base)).header("content-type", "application/json");
        self.call(req.body(body.to_string()), headers).await
    }

    /// A 1.0 JSON-RPC call, with a bearer token when given.
    async fn rpc(&self, method: &str, params: Value, token: Option<&str>) -> Reply {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![("A2A-Version", "1.0")];
        if let Some(a) = &auth {
            headers.push(("authorization", a));
        }
        self.rpc_h(method, params, &headers).await
    }

    /// An HTTP+JSON call with these headers (no A2A-Version unless given).
    async fn rest_h(&self, verb: &str, path: &str, body: Option<Value>, headers: &[(&str, &str)]) -> Reply {
        let mut req = self.http.request(verb.parse().unwrap(), format!("{}{path}", self.base));
        if let Some(b) = body {
            req = req.header("content-type", "application/json").body(b.to_string());
        }
        self.call(req, headers).await
    }

    /// A 1.0 HTTP+JSON call, with a bearer token when given.
    async fn rest(&self, verb: &str, path: &str, body: Option<Value>, token: Option<&str>) -> Reply {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![("A2A-Version", "1.0")];
        if let Some(a) = &auth {
            headers.push(("authorization", a));
        }
        self.rest_h(verb, path, body, &headers).await
    }

    /// Sends a raw gRPC call (the params as the method's protobuf message) with these metadata.
    async fn grpc_send(&self, method: &str, params: Value, headers: &[(&str, &str)]) -> http::Response<Incoming> {
        let m = Method::from_name(method).unwrap();
        let message = grpc::frame::encode(&grpc::convert::encode_params(m, params).unwrap());
        let mut req = http::Request::post(format!("{}{}", self.base, grpc::path(m)))
            .header("content-type", "application/grpc")
            .header("te", "trailers");
        for (k, v) in headers {
            req = req.header(k.to_ascii_lowercase(), *v);
        }
        let req = req.body(http_body_util::Full::new(message)).unwrap();
        tokio::time::timeout(Duration::from_secs(20), self.grpc.request(req)).await.unwrap().unwrap()
    }

    /// A raw gRPC call: the result as ProtoJSON, or the status as the HTTP+JSON binding's error
    /// body (`{"error": {code: the gRPC code, status, message, details: [ErrorInfo, ...]}}`).
    async fn grpc_h(&self, method: &str, params: Value, headers: &[(&str, &str)]) -> Reply {
        let m = Method::from_name(method).unwrap();
        let resp = self.grpc_send(method, params, headers).await;
        let http_status = resp.status().as_u16();
        let (head, body) = resp.into_parts();
        let mut message = None;
        let mut status = grpc::status::from_headers(&head.headers);
        if status.is_none() {
            let mut body = body;
            let mut decoder = grpc::frame::Decoder::new(1 << 24);
            while let Some(frame) = body.frame().await {
                match frame.unwrap().into_data() {
                    Ok(data) => {
                        decoder.push(&data);
                        while let Some(m) = decoder.next_message().unwrap() {
                            assert!(message.replace(m).is_none(), "two messages in a unary answer");
                        }
                    }
                    Err(f) => status = grpc::status::from_headers(&f.into_trailers().unwrap()),
                }
            }
        }
        let status = status.expect("a grpc-status");
        let body = if status.code == 0 {
            canonical(m, grpc::convert::decode_result(m, &message.expect("a message with OK")).unwrap())
        } else {
            grpc_error_body(&status)
        };
        Reply { status: http_status, body }
    }

    /// A 1.0 gRPC call, with a bearer token when given.
    async fn grpc(&self, method: &str, params: Value, token: Option<&str>) -> Reply {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![("a2a-version", "1.0")];
        if let Some(a) = &auth {
            headers.push(("authorization", a));
        }
        self.grpc_h(method, params, &headers).await
    }

    /// Operation `method` with these ProtoJSON params over `binding` (1.0, bearer when given).
    async fn op(&self, binding: Binding, method: &str, params: Value, token: Option<&str>) -> Reply {
        match binding {
            Binding::JsonRpc => self.rpc(method, params, token).await,
            Binding::Grpc => self.grpc(method, params, token).await,
            Binding::HttpJson => {
                let req = A2ARequest::from_params(Method::from_name(method).unwrap(), params, "").unwrap();
                let (verb, path, body) = a2a_native::rest::request_for(&req);
                let body = body.map(|b| serde_json::from_slice(&b).unwrap());
                self.rest(verb, &path, body, token).await
            }
        }
    }

    /// Opens a 1.0 stream: SendStreamingMessage / SubscribeToTask over `binding`.
    async fn open_stream(&self, binding: Binding, method: &str, params: Value) -> Sse {
        if binding == Binding::Grpc {
            let resp = self.grpc_send(method, params, &[("a2a-version", "1.0")]).await;
            assert_eq!(resp.status(), 200, "{method} over gRPC");
            assert!(grpc::status::from_headers(resp.headers()).is_none(), "{method}: refused: {:?}", resp.headers());
            return Sse::Grpc { body: resp.into_body(), decoder: grpc::frame::Decoder::new(1 << 20), ended: false };
        }
        let req = match binding {
            Binding::Grpc => unreachable!("answered above"),
            Binding::JsonRpc => {
                let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
                self.http.post(format!("{}/", self.base)).body(body.to_string())
            }
            Binding::HttpJson => {
                let path = match method {
                    "SendStreamingMessage" => "/message:stream".to_owned(),
                    _ => format!("/tasks/{}:subscribe", params["id"].as_str().unwrap()),
                };
                self.http.post(format!("{}{path}", self.base)).body(params.to_string())
            }
        };
        let resp = req
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .header("A2A-Version", "1.0")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{method} over {binding:?}");
        Sse::Http { resp, decoder: SseDecoder::new(1 << 20), ready: VecDeque::new() }
    }

    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        let _ = tokio::time::timeout(Duration::from_secs(10), self.task).await;
    }
}

/// An open stream, read event by event: an SSE response (JSON-RPC frames unwrapped to their
/// result), or a gRPC stream of StreamResponse messages (its final status must be OK).
#[allow(clippy::large_enum_variant)] // a handful per test
enum Sse {
    Http { resp: reqwest::Response, decoder: SseDecoder, ready: VecDeque<Value> },
    Grpc { body: Incoming, decoder: grpc::frame::Decoder, ended: bool },
}

impl Sse {
    /// The next event, `None` when the stream has ended; panics after 10 s of nothing.
    async fn next(&mut self) -> Option<Value> {
        match self {
            Sse::Http { resp, decoder, ready } => loop {
                if let Some(v) = ready.pop_front() {
                    return Some(v);
                }
                let chunk = tokio::time::timeout(Duration::from_secs(10), resp.chunk())
                    .await
                    .expect("an event or the end within 10 s")
                    .unwrap()?;
                for ev in decoder.push(&chunk) {
                    let v: Value = serde_json::from_str(&ev.unwrap().data).unwrap();
                    ready.push_back(v.get("result").cloned().unwrap_or(v));
                }
            },
            Sse::Grpc { body, decoder, ended } => loop {
                if let Some(m) = decoder.next_message().unwrap() {
                    return Some(model::to_value(&grpc::convert::decode_event(&m).unwrap()));
                }
                if *ended {
                    return None;
                }
                let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
                    .await
                    .expect("an event or the end within 10 s")
                    .expect("a gRPC stream ends with trailers")
                    .unwrap();
                match frame.into_data() {
                    Ok(data) => decoder.push(&data),
                    Err(f) => {
                        let status = grpc::status::from_headers(&f.into_trailers().unwrap()).unwrap();
                        assert_eq!(status.code, 0, "the stream ended with {status:?}");
                        *ended = true;
                    }
                }
            },
        }
    }

    async fn rest(mut self) -> Vec<Value> {
        let mut all = Vec::new();
        while let Some(v) = self.next().await {
            all.push(v);
        }
        all
    }
}

/// `task:STATE`, `status:STATE`, `artifact:NAME`, `message`, or `error` for a stream event.
fn kind(ev: &Value) -> String {
    if let Some(t) = ev.get("task") {
        format!("task:{}", t["status"]["state"].as_str().unwrap_or(""))
    } else if let Some(s) = ev.get("statusUpdate") {
        format!("status:{}", s["status"]["state"].as_str().unwrap_or(""))
    } else if let Some(a) = ev.get("artifactUpdate") {
        format!("artifact:{}", a["artifact"]["name"].as_str().unwrap_or(""))
    } else if ev.get("message").is_some() {
        "message".into()
    } else {
        format!("error:{ev}")
    }
}

fn msg(text: &str) -> Value {
    json!({"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// A message continuing task `id`.
fn follow(id: &str, text: &str) -> Value {
    let mut m = msg(text);
    m["taskId"] = json!(id);
    m
}

/// Drops what differs between two runs of the same thing: ids and timestamps.
fn normalize(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| {
                    !matches!(k.as_str(), "id" | "contextId" | "taskId" | "messageId" | "artifactId" | "timestamp")
                })
                .map(|(k, v)| (k.clone(), normalize(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        other => other.clone(),
    }
}

const BINDINGS: [Binding; 3] = [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc];

/// A result as the JSON bindings write it (through the model: e.g. timestamps end in `Z`).
fn canonical(method: Method, v: Value) -> Value {
    use a2a_native::model::*;
    fn via<T: serde::Serialize + serde::de::DeserializeOwned + Validate>(v: Value) -> Value {
        model::to_value(&model::parse_value::<T>(v).unwrap())
    }
    match method {
        Method::SendMessage => via::<SendMessageResponse>(v),
        Method::GetTask | Method::CancelTask => via::<Task>(v),
        Method::ListTasks => via::<ListTasksResponse>(v),
        Method::CreateTaskPushNotificationConfig | Method::GetTaskPushNotificationConfig => {
            via::<TaskPushNotificationConfig>(v)
        }
        Method::ListTaskPushNotificationConfigs => via::<ListTaskPushNotificationConfigsResponse>(v),
        Method::GetExtendedAgentCard => via::<AgentCard>(v),
        _ => v,
    }
}

/// A gRPC status in the HTTP+JSON binding's error shape, with the gRPC code and status name.
fn grpc_error_body(status: &grpc::status::Status) -> Value {
    use prost::Message;
    let details: Vec<Value> = status
        .details
        .iter()
        .map(|d| match grpc::status::ErrorInfo::decode(d.value.as_slice()) {
            Ok(info) if d.type_url.ends_with("google.rpc.ErrorInfo") => {
                json!({"@type": d.type_url, "reason": info.reason, "domain": info.domain, "metadata": info.metadata})
            }
            _ => json!({"@type": d.type_url}),
        })
        .collect();
    json!({"error": {
        "code": status.code,
        "status": grpc::status::name(status.code),
        "message": status.message,
        "details": details,
    }})
}

/// SendMessage over `binding`: (HTTP status, the result / REST body or the error body).
async fn send_over(s: &Srv, binding: Binding, message: Value, token: Option<&str>) -> Reply {
    s.op(binding, "SendMessage", json!({"message": message}), token).await
}

/// The task of a successful SendMessage over either binding.
fn task_of(binding: Binding, r: &Reply) -> Value {
    assert_eq!(r.status, 200, "{binding:?}: {}", r.body);
    let body = if binding == Binding::JsonRpc { &r.body["result"] } else { &r.body };
    assert!(body["task"].is_object(), "{binding:?}: a task, not a message: {body}");
    body["task"].clone()
}

async fn get_over(s: &Srv, binding: Binding, id: &str, token: Option<&str>) -> Reply {
    s.op(binding, "GetTask", json!({"id": id}), token).await
}

fn result(binding: Binding, r: &Reply) -> Value {
    assert_eq!(r.status, 200, "{binding:?}: {}", r.body);
    assert!(r.body.get("error").is_none(), "{binding:?}: {}", r.body);
    if binding == Binding::JsonRpc { r.body["result"].clone() } else { r.body.clone() }
}

/// Polls GetTask until the task is in `state` (5 s at most).
async fn wait_state(s: &Srv, binding: Binding, id: &str, state: &str) -> Value {
    for _ in 0..100 {
        let task = result(binding, &get_over(s, binding, id, None).await);
        if task["status"]["state"] == state {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never reached {state}");
}

// ------------------------------------------------------------------------------------------
// CARD-SIGN: signed Agent Cards (spec §8.4)
// ------------------------------------------------------------------------------------------

fn pem(file: &str) -> Vec<u8> {
    std::fs::read(fixture(file)).unwrap()
}

fn public_key(file: &str, kid: &str) -> Jwk {
    let mut jwk = Jwk::from_encoding_key(&EncodingKey::from_ec_pem(&pem(file)).unwrap(), Algorithm::ES256).unwrap();
    jwk.common.key_id = Some(kid.into());
    jwk
}

/// A card whose JSON has keys out of order, non-ASCII text and numbers JCS writes its own way.
fn unsorted_card() -> Value {
    json!({
        "version": "1", "name": "Ünïcödé agent", "description": "d\u{1F600}",
        "supportedInterfaces": [{"url": "https://agent.example/a2a", "protocolVersion": "1.0", "protocolBinding": "JSONRPC"}],
        "skills": [{"tags": ["t"], "id": "s", "name": "s", "description": "d"}],
        "defaultOutputModes": ["text/plain"], "defaultInputModes": ["text/plain"],
        "capabilities": {"extensions": [{"uri": "urn:x", "params": {"z": [0.1, -0.0, 1e0], "n": 1.5e21}}]}
    })
}

#[test]
fn card_sign_001_signed_content_is_the_jcs_form_of_the_card() {
    let mut card: AgentCard = model::parse_value(unsorted_card()).unwrap();
    let payload = String::from_utf8(card_payload(&card).unwrap()).unwrap();
    // RFC 8785: members sorted at every level, no whitespace, ES6 number forms, UTF-8 kept.
    assert!(payload.starts_with(r#"{"capabilities":{"extensions":[{"params":{"n":1.5e+21,"z":[0.1,0,1]},"uri":"urn:x"}]},"defaultInputModes":"#), "{payload}");
    assert!(payload.contains(r#""skills":[{"description":"d","id":"s","name":"s","tags":["t"]}]"#), "{payload}");
    assert!(payload.contains("\"name\":\"Ünïcödé agent\"") && payload.contains("d\u{1F600}"), "{payload}");
    assert!(!payload.contains(": ") && !payload.contains(", ") && !payload.contains('\n'), "{payload}");
    // The same card written in another member order has the same payload.
    let reordered: Value = serde_json::from_str(&model::to_value(&card).to_string()).unwrap();
    assert_eq!(card_payload(&model::parse_value(reordered).unwrap()).unwrap(), payload.as_bytes());
    // The signature is over exactly these bytes: checked by hand, as any JWS verifier would.
    CardSigner::from_pem(&pem("jwt-ec.pem"), Algorithm::ES256, "k1").unwrap().sign(&mut card).unwrap();
    let sig = &card.signatures[0];
    let input = format!("{}.{}", sig.protected, URL_SAFE_NO_PAD.encode(payload.as_bytes()));
    let key = DecodingKey::from_jwk(&public_key("jwt-ec.pem", "k1")).unwrap();
    assert!(jsonwebtoken::crypto::verify(&sig.signature, input.as_bytes(), &key, Algorithm::ES256).unwrap());
    // Not over the non-canonical JSON.
    let loose = format!("{}.{}", sig.protected, URL_SAFE_NO_PAD.encode(model::to_value(&card).to_string()));
    assert!(!jsonwebtoken::crypto::verify(&sig.signature, loose.as_bytes(), &key, Algorithm::ES256).unwrap_or(false));
}

#[test]
fn card_sign_002_signatures_are_excluded_from_the_signed_content() {
    let mut card: AgentCard = model::parse_value(unsorted_card()).unwrap();
    let before = card_payload(&card).unwrap();
    CardSigner::from_pem(&pem("jwt-ec.pem"), Algorithm::ES256, "k1").unwrap().sign(&mut card).unwrap();
    assert!(!String::from_utf8_lossy(&card_payload(&card).unwrap()).contains("signatures"));
    assert_eq!(card_payload(&card).unwrap(), before);
    // A second signature (and even a bogus third) leaves the first one valid.
    CardSigner::from_pem(&pem("jwt-ec-rotated.pem"), Algorithm::ES256, "k2").unwrap().sign(&mut card).unwrap();
    let mut bogus = card.signatures[0].clone();
    bogus.signature = "AAAA".into();
    card.signatures.push(bogus);
    let first_only = JwkSet { keys: vec![public_key("jwt-ec.pem", "k1")] };
    assert_eq!(verify_card(&card, &KeySet::from(first_only.clone()), &[Algorithm::ES256]).unwrap().kid, "k1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn card_sign_003_protected_header_has_alg_and_kid() {
    for (file, alg, name) in [
        ("jwt-ec.pem", Algorithm::ES256, "ES256"),
        ("jwt-rsa.pem", Algorithm::RS256, "RS256"),
        ("jwt-ed25519.pem", Algorithm::EdDSA, "EdDSA"),
    ] {
        let mut card: AgentCard = model::parse_value(unsorted_card()).unwrap();
        CardSigner::from_pem(&pem(file), alg, "key-7").unwrap().sign(&mut card).unwrap();
        let header: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(&card.signatures[0].protected).unwrap()).unwrap();
        assert_eq!((header["alg"].as_str(), header["kid"].as_str()), (Some(name), Some("key-7")), "{header}");
    }
    // The card our server serves, signed, carries them and verifies after the fetch.
    let signer = Arc::new(CardSigner::from_pem(&pem("jwt-ec.pem"), Algorithm::ES256, "card-1").unwrap());
    let s = serve(None, |base| {
        let mut c = card(base, false);
        signer.sign(&mut c).unwrap();
        RequestHandler::new(Arc::new(TestAgent::new()), c, Stores::memory(), ServerConfig::default())
            .with_card_signer(signer.clone())
    })
    .await;
    let fetched = s.rest_h("GET", "/.well-known/agent-card.json", None, &[]).await;
    assert_eq!(fetched.status, 200);
    let sigs = fetched.body["signatures"].as_array().expect("a signed card").clone();
    assert!(!sigs.is_empty(), "{}", fetched.body);
    for sig in &sigs {
        let header: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(sig["protected"].as_str().unwrap()).unwrap()).unwrap();
        assert_eq!((header["alg"].as_str(), header["kid"].as_str()), (Some("ES256"), Some("card-1")), "{header}");
    }
    let served: AgentCard = model::parse_value(fetched.body.clone()).unwrap();
    let keys = JwkSet { keys: vec![public_key("jwt-ec.pem", "card-1")] };
    assert_eq!(verify_card(&served, &KeySet::from(keys.clone()), &[Algorithm::ES256]).unwrap().kid, "card-1");
    // A signature whose protected header lacks kid is refused, even though its bytes are valid.
    let mut card: AgentCard = model::parse_value(unsorted_card()).unwrap();
    let protected = URL_SAFE_NO_PAD.encode(json!({"alg": "ES256", "typ": "JOSE"}).to_string());
    let input = format!("{protected}.{}", URL_SAFE_NO_PAD.encode(card_payload(&card).unwrap()));
    let key = EncodingKey::from_ec_pem(&pem("jwt-ec.pem")).unwrap();
    let signature = jsonwebtoken::crypto::sign(input.as_bytes(), &key, Algorithm::ES256).unwrap();
    card.signatures.push(model::AgentCardSignature { protected, signature, header: None });
    let e = verify_card(&card, &KeySet::from(keys.clone()), &[Algorithm::ES256]).unwrap_err();
    assert!(e.message.contains("no kid"), "{e}");
    s.stop().await;
}

#[test]
fn card_sign_004_revoked_keys_do_not_verify() {
    let mut card: AgentCard = model::parse_value(unsorted_card()).unwrap();
    CardSigner::from_pem(&pem("jwt-ec.pem"), Algorithm::ES256, "old").unwrap().sign(&mut card).unwrap();
    let with_old = JwkSet { keys: vec![public_key("jwt-ec.pem", "old")] };
    assert!(verify_card(&card, &KeySet::from(with_old.clone()), &[Algorithm::ES256]).is_ok());
    // "old" revoked: gone from the agent's key set. Nothing verifies the card any more, not
    // even a key of another id that happens to be the same key material.
    let revoked = JwkSet { keys: vec![public_key("jwt-ec-rotated.pem", "new")] };
    let e = verify_card(&card, &KeySet::from(revoked.clone()), &[Algorithm::ES256]).unwrap_err();
    assert_eq!(e.kind, a2a_native::ErrorKind::Unauthenticated, "{e}");
    let renamed = JwkSet { keys: vec![public_key("jwt-ec.pem", "new")] };
    assert!(verify_card(&card, &KeySet::from(renamed.clone()), &[Algorithm::ES256]).is_err());
    // A new key under a reused kid does not verify the old signature either.
    let reused = JwkSet { keys: vec![public_key("jwt-ec-rotated.pem", "old")] };
    assert!(verify_card(&card, &KeySet::from(reused.clone()), &[Algorithm::ES256]).is_err());
}

#[test]
fn card_sign_004_expired_keys_do_not_verify() {
    let mut card: AgentCard = model::parse_value(unsorted_card()).unwrap();
    CardSigner::from_pem(&pem("jwt-ec.pem"), Algorithm::ES256, "k1").unwrap().sign(&mut card).unwrap();
    // The key set as an agent publishes it, each key with its validity window (`exp`, `nbf`).
    let with = |window: Value| {
        let mut jwk = serde_json::to_value(public_key("jwt-ec.pem", "k1")).unwrap();
        jwk.as_object_mut().unwrap().extend(window.as_object().unwrap().clone());
        KeySet::from_value(json!({"keys": [jwk]})).unwrap()
    };
    let current = with(json!({"nbf": 946684800, "exp": 32503680000_i64})); // 2000 .. 3000
    assert_eq!(verify_card(&card, &current, &[Algorithm::ES256]).unwrap().kid, "k1");
    let e = verify_card(&card, &with(json!({"exp": 946684800})), &[Algorithm::ES256]).unwrap_err();
    assert_eq!(e.kind, a2a_native::ErrorKind::Unauthenticated);
    assert!(e.message.contains("expired"), "{e}");
    let e = verify_card(&card, &with(json!({"nbf": 32503680000_i64})), &[Algorithm::ES256]).unwrap_err();
    assert!(e.message.contains("not valid yet"), "{e}");
    // The same rule for a push notification's signing key.
    let signer = a2a_native::push::PushSigner::from_pem(&pem("jwt-ec.pem"), Algorithm::ES256, "k1", "agent").unwrap();
    let body = br#"{"task":{}}"#;
    let mut headers = http::HeaderMap::new();
    let token = signer.sign("https://hook.example/", "t1", body).unwrap();
    headers.insert("a2a-notification-signature", token.parse().unwrap());
    let verifier = a2a_native::client::PushVerifier::new(current.clone(), "https://hook.example/");
    assert_eq!(verifier.verify(&headers, body).unwrap().task_id, "t1");
    let verifier = a2a_native::client::PushVerifier::new(with(json!({"exp": 946684800})), "https://hook.example/");
    let e = verifier.verify(&headers, body).unwrap_err();
    assert!(e.message.contains("expired"), "{e}");
}

// ------------------------------------------------------------------------------------------
// AUTH-TLS, AUTH-SERVER: transport security and authentication (spec §7.1, §7.2, §7.4)
// ------------------------------------------------------------------------------------------

fn tls_config() -> Arc<rustls::ServerConfig> {
    server_config(&fixture("tls-server.pem"), &fixture("tls-server.key"), None, ClientCertificate::None).unwrap()
}

fn echo_agent() -> Arc<TestAgent> {
    Arc::new(TestAgent::standard())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_tls_001_both_bindings_are_served_over_https_only() {
    let s = serve(Some(tls_config()), |base| handler(base, echo_agent(), false)).await;
    for binding in BINDINGS {
        let task = task_of(binding, &send_over(&s, binding, msg("hello"), None).await);
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{binding:?}: {task}");
    }
    // The card advertises https URLs only.
    let c = s.rest_h("GET", "/.well-known/agent-card.json", None, &[]).await;
    for i in c.body["supportedInterfaces"].as_array().unwrap() {
        assert!(i["url"].as_str().unwrap().starts_with("https://"), "{i}");
    }
    // Plain HTTP to the port gets no HTTP answer, on either binding's endpoint.
    let plain = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
    let http_base = s.base.replace("https://", "http://");
    let rpc = plain.post(format!("{http_base}/")).header("content-type", "application/json").body("{}").send().await;
    assert!(rpc.is_err() || !rpc.unwrap().status().is_success());
    let rest = plain.get(format!("{http_base}/tasks/x")).header("A2A-Version", "1.0").send().await;
    assert!(rest.is_err() || !rest.unwrap().status().is_success());
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_tls_002_tls_1_3_with_an_aead_suite_is_negotiated() {
    use rustls::pki_types::ServerName;
    let s = serve(Some(tls_config()), |base| handler(base, echo_agent(), false)).await;
    let port: u16 = s.base.rsplit(':').next().unwrap().parse().unwrap();
    let config = client_tls();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    let (_, conn) = tls.get_ref();
    assert_eq!(conn.protocol_version(), Some(rustls::ProtocolVersion::TLSv1_3));
    let suite = conn.negotiated_cipher_suite().unwrap().suite();
    use rustls::CipherSuite as C;
    assert!(
        matches!(suite, C::TLS13_AES_128_GCM_SHA256 | C::TLS13_AES_256_GCM_SHA384 | C::TLS13_CHACHA20_POLY1305_SHA256),
        "{suite:?}"
    );
    drop(tls);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_svc_003_grpc_runs_over_http2_with_tls() {
    let s = serve(Some(tls_config()), |base| handler(base, echo_agent(), false)).await;
    // Over TLS (ALPN h2): a unary call and a stream.
    let r = s.grpc("SendMessage", json!({"message": msg("hello")}), None).await;
    assert_eq!(r.body["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{}", r.body);
    let stream = s.open_stream(Binding::Grpc, "SendStreamingMessage", json!({"message": msg("hello")})).await;
    assert_eq!(kind(stream.rest().await.last().unwrap()), "status:TASK_STATE_COMPLETED");
    // The TLS handshake offers h2 and the server picks it.
    use rustls::pki_types::ServerName;
    let mut config = client_tls();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let port: u16 = s.base.rsplit(':').next().unwrap().parse().unwrap();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    drop(tls);
    // Cleartext HTTP/2 (h2c) to the TLS port gets no gRPC answer.
    let h2c = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .http2_only(true)
        .build_http::<http_body_util::Full<bytes::Bytes>>();
    let req = http::Request::post(format!("http://127.0.0.1:{port}{}", grpc::path(Method::GetTask)))
        .header("content-type", "application/grpc")
        .body(http_body_util::Full::new(grpc::frame::encode(&[])))
        .unwrap();
    let plain = tokio::time::timeout(Duration::from_secs(10), h2c.request(req)).await.expect("no hang");
    assert!(plain.is_err(), "a cleartext gRPC call was answered on the TLS port");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_server_001_our_client_verifies_the_server_certificate() {
    let s = serve(Some(tls_config()), |base| handler(base, echo_agent(), false)).await;
    for binding in BINDINGS {
        // Trusting the CA: works.
        let client = Client::builder()
            .card_cache(Arc::new(CardCache::new()))
            .preferred_binding(binding)
            .tls_root_pem(pem("tls-ca.pem"))
            .connect(&s.base)
            .await
            .unwrap();
        let sent = client.send_message(SendMessageRequest::new(Message::text(Role::User, "hi"))).await;
        assert!(sent.is_ok(), "{binding:?}: {sent:?}");
        // Not trusting it: neither the card fetch nor a call on a known card gets through.
        // (A fresh card cache: the card must really be fetched.)
        let untrusting =
            Client::builder().preferred_binding(binding).card_cache(Arc::new(CardCache::new())).connect(&s.base).await;
        assert!(untrusting.is_err(), "{binding:?}: an untrusted certificate was accepted");
        let blind = Client::builder().preferred_binding(binding).from_card(client.card().clone()).unwrap();
        let r = blind.get_task(GetTaskRequest { id: "x".into(), ..Default::default() }).await;
        let e = r.expect_err("an untrusted certificate was accepted");
        assert_ne!(e.kind, a2a_native::ErrorKind::TaskNotFound, "{e}");
    }
    s.stop().await;
}

/// Every A2A operation over JSON-RPC, as (method, params).
fn rpc_operations() -> Vec<(&'static str, Value)> {
    vec![
        ("SendMessage", json!({"message": msg("hello")})),
        ("SendStreamingMessage", json!({"message": msg("hello")})),
        ("GetTask", json!({"id": "t-x"})),
        ("ListTasks", json!({})),
        ("CancelTask", json!({"id": "t-x"})),
        ("SubscribeToTask", json!({"id": "t-x"})),
        ("CreateTaskPushNotificationConfig", json!({"taskId": "t-x", "url": "http://127.0.0.1:9/hook"})),
        ("GetTaskPushNotificationConfig", json!({"taskId": "t-x", "id": "c"})),
        ("ListTaskPushNotificationConfigs", json!({"taskId": "t-x"})),
        ("DeleteTaskPushNotificationConfig", json!({"taskId": "t-x", "id": "c"})),
        ("GetExtendedAgentCard", json!({})),
    ]
}

/// The same operations over HTTP+JSON, as (verb, path, body).
fn rest_operations() -> Vec<(&'static str, &'static str, Option<Value>)> {
    vec![
        ("POST", "/message:send", Some(json!({"message": msg("hello")}))),
        ("POST", "/message:stream", Some(json!({"message": msg("hello")}))),
        ("GET", "/tasks/t-x", None),
        ("GET", "/tasks", None),
        ("POST", "/tasks/t-x:cancel", None),
        ("POST", "/tasks/t-x:subscribe", None),
        ("POST", "/tasks/t-x/pushNotificationConfigs", Some(json!({"url": "http://127.0.0.1:9/hook"}))),
        ("GET", "/tasks/t-x/pushNotificationConfigs/c", None),
        ("GET", "/tasks/t-x/pushNotificationConfigs", None),
        ("DELETE", "/tasks/t-x/pushNotificationConfigs/c", None),
        ("GET", "/extendedAgentCard", None),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_server_002_every_request_is_authenticated() {
    let s = serve(None, |base| handler(base, echo_agent(), true)).await;
    let bad: [&[(&str, &str)]; 4] = [
        &[("A2A-Version", "1.0")],
        &[("A2A-Version", "1.0"), ("authorization", "Bearer wrong")],
        &[("A2A-Version", "1.0"), ("X-API-Key", "wrong")],
        &[("A2A-Version", "1.0"), ("authorization", "Basic dTpw")],
    ];
    let good: [&[(&str, &str)]; 2] = [
        &[("A2A-Version", "1.0"), ("authorization", "Bearer t-alice")],
        &[("A2A-Version", "1.0"), ("X-API-Key", "k-alice")],
    ];
    for (method, params) in rpc_operations() {
        for headers in bad {
            let r = s.rpc_h(method, params.clone(), headers).await;
            assert_eq!((r.status, r.reason()), (401, "UNAUTHENTICATED"), "{method} {headers:?}: {}", r.body);
        }
        for headers in good {
            let r = s.rpc_h(method, params.clone(), headers).await;
            assert!(r.status != 401 && r.reason() != "UNAUTHENTICATED", "{method} {headers:?}: {}", r.body);
        }
    }
    // 0.3 method names are guarded too.
    let r = s.rpc_h("tasks/get", json!({"id": "t-x"}), &[]).await;
    assert_eq!(r.status, 401, "{}", r.body);
    for (verb, path, body) in rest_operations() {
        for headers in bad {
            let r = s.rest_h(verb, path, body.clone(), headers).await;
            assert_eq!(
                (r.status, r.body["error"]["code"].as_i64()),
                (401, Some(401)),
                "{verb} {path} {headers:?}: {}",
                r.body
            );
        }
        for headers in good {
            let r = s.rest_h(verb, path, body.clone(), headers).await;
            assert_ne!(r.status, 401, "{verb} {path} {headers:?}: {}", r.body);
        }
    }
    // The public card needs nothing.
    assert_eq!(s.rest_h("GET", "/.well-known/agent-card.json", None, &[]).await.status, 200);
    s.stop().await;
}

// ------------------------------------------------------------------------------------------
// AUTH-INTASK: in-task authorization (spec §7.6)
// ------------------------------------------------------------------------------------------

const AUTH_TEXT: &str = "authorization needed: sign in at https://idp.example/authorize?task=purchase";

async fn out_of_band_server() -> (Srv, Arc<Notify>) {
    let granted = Arc::new(Notify::new());
    // Asks for authorization, then waits for it to arrive out of band (the test's signal, as an
    // OAuth callback to the agent would), then completes with a receipt.
    let agent = Arc::new(TestAgent::new().otherwise([
        Step::status(TaskState::AuthRequired, AUTH_TEXT),
        Step::UntilSignal(granted.clone()),
        Step::working(),
        Step::artifact("receipt", "paid"),
        Step::complete(),
    ]));
    (serve(None, |base| handler(base, agent, false)).await, granted)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_intask_001_a_task_tracks_the_operation_needing_authorization() {
    let (s, granted) = out_of_band_server().await;
    for binding in BINDINGS {
        // The answer is a Task (not a Message), which the client can then follow.
        let task = task_of(binding, &send_over(&s, binding, msg("buy"), None).await);
        let id = task["id"].as_str().unwrap();
        assert!(!id.is_empty() && task["contextId"].is_string(), "{task}");
        let got = result(binding, &get_over(&s, binding, id, None).await);
        assert_eq!(got["id"], id);
        granted.notify_one();
        wait_state(&s, binding, id, "TASK_STATE_COMPLETED").await;
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_intask_002_the_task_enters_auth_required() {
    let (s, granted) = out_of_band_server().await;
    for binding in BINDINGS {
        let task = task_of(binding, &send_over(&s, binding, msg("buy"), None).await);
        assert_eq!(task["status"]["state"], "TASK_STATE_AUTH_REQUIRED", "{binding:?}: {task}");
        let id = task["id"].as_str().unwrap();
        let got = result(binding, &get_over(&s, binding, id, None).await);
        assert_eq!(got["status"]["state"], "TASK_STATE_AUTH_REQUIRED", "{binding:?}: {got}");
        // ListTasks filtered by that state finds it.
        let listed = s.op(binding, "ListTasks", json!({"status": "TASK_STATE_AUTH_REQUIRED"}), None).await;
        let listed = result(binding, &listed);
        assert!(listed["tasks"].as_array().unwrap().iter().any(|t| t["id"] == id), "{binding:?}: {listed}");
        granted.notify_one();
        wait_state(&s, binding, id, "TASK_STATE_COMPLETED").await;
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_intask_003_the_status_message_explains_the_authorization() {
    let (s, granted) = out_of_band_server().await;
    for binding in BINDINGS {
        let task = task_of(binding, &send_over(&s, binding, msg("buy"), None).await);
        let message = &task["status"]["message"];
        assert_eq!(message["role"], "ROLE_AGENT", "{binding:?}: {task}");
        assert_eq!(message["parts"][0]["text"], AUTH_TEXT, "{binding:?}: {task}");
        let id = task["id"].as_str().unwrap();
        let got = result(binding, &get_over(&s, binding, id, None).await);
        assert_eq!(got["status"]["message"]["parts"][0]["text"], AUTH_TEXT, "{binding:?}: {got}");
        granted.notify_one();
        wait_state(&s, binding, id, "TASK_STATE_COMPLETED").await;
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_intask_004_credentials_arrive_out_of_band_and_the_task_goes_on() {
    let (s, granted) = out_of_band_server().await;
    for binding in BINDINGS {
        let task = task_of(binding, &send_over(&s, binding, msg("buy"), None).await);
        let id = task["id"].as_str().unwrap();
        // Nothing happens until the credential arrives out of band; the client sends nothing.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let got = result(binding, &get_over(&s, binding, id, None).await);
        assert_eq!(got["status"]["state"], "TASK_STATE_AUTH_REQUIRED", "{binding:?}: {got}");
        granted.notify_one();
        let done = wait_state(&s, binding, id, "TASK_STATE_COMPLETED").await;
        assert_eq!(done["artifacts"][0]["parts"][0]["text"], "paid", "{binding:?}: {done}");
        // The credential never travelled in the task: its history is the request alone.
        let history = done["history"].as_array().cloned().unwrap_or_default();
        assert!(history.iter().all(|m| m["role"] != "ROLE_USER" || m["parts"][0]["text"] == "buy"), "{done}");
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_intask_005_streams_stay_open_through_auth_required() {
    let (s, granted) = out_of_band_server().await;
    for binding in BINDINGS {
        let mut stream = s.open_stream(binding, "SendStreamingMessage", json!({"message": msg("buy")})).await;
        let mut seen = Vec::new();
        while !seen.last().is_some_and(|k: &String| k.ends_with("TASK_STATE_AUTH_REQUIRED")) {
            seen.push(kind(&stream.next().await.expect("the stream reaches AUTH_REQUIRED")));
        }
        // Still open: the credential arrives out of band, and the rest comes on the same stream.
        tokio::time::sleep(Duration::from_millis(200)).await;
        granted.notify_one();
        seen.extend(stream.rest().await.iter().map(kind));
        let tail: Vec<&str> = seen.iter().map(String::as_str).skip_while(|k| !k.ends_with("AUTH_REQUIRED")).collect();
        assert_eq!(
            tail,
            [
                "status:TASK_STATE_AUTH_REQUIRED",
                "status:TASK_STATE_WORKING",
                "artifact:receipt",
                "status:TASK_STATE_COMPLETED"
            ],
            "{binding:?}: {seen:?}"
        );
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_intask_005_our_client_reads_on_through_auth_required() {
    fn state_of(event: &model::StreamResponse) -> Option<TaskState> {
        match event {
            model::StreamResponse::Task(t) => Some(t.status.state),
            model::StreamResponse::StatusUpdate(e) => Some(e.status.state),
            _ => None,
        }
    }
    // The client ends a stream where the server closes it: at AUTH_REQUIRED it reads on, so
    // what the agent sends once the credential arrives out of band reaches the caller.
    let (s, granted) = out_of_band_server().await;
    for binding in BINDINGS {
        let client = Client::builder()
            .card_cache(Arc::new(CardCache::new()))
            .preferred_binding(binding)
            .connect(&s.base)
            .await
            .unwrap();
        let mut stream =
            client.send_streaming_message(SendMessageRequest::new(Message::text(Role::User, "buy"))).await.unwrap();
        let mut states = Vec::new();
        while states.last() != Some(&TaskState::AuthRequired) {
            let event = stream.next().await.expect("the stream reaches AUTH_REQUIRED").unwrap();
            if let Some(state) = state_of(&event) {
                states.push(state);
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        granted.notify_one();
        while let Some(event) = stream.next().await {
            if let Some(state) = state_of(&event.unwrap()) {
                states.push(state);
            }
        }
        assert_eq!(
            states.iter().skip_while(|s| **s != TaskState::AuthRequired).copied().collect::<Vec<_>>(),
            [TaskState::AuthRequired, TaskState::Working, TaskState::Completed],
            "{binding:?}"
        );
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_intask_006_messages_are_accepted_while_auth_required() {
    let agent = Arc::new(
        TestAgent::new()
            .on("buy", [Step::status(TaskState::AuthRequired, AUTH_TEXT)])
            .on_follow_up("decline", [Step::status(TaskState::AuthRequired, "refused; sign in or say cancel")])
            .on_follow_up("token", [Step::working(), Step::artifact("receipt", "paid with {text}"), Step::complete()]),
    );
    let s = serve(None, |base| handler(base, agent.clone(), false)).await;
    for binding in BINDINGS {
        let task = task_of(binding, &send_over(&s, binding, msg("buy"), None).await);
        assert_eq!(task["status"]["state"], "TASK_STATE_AUTH_REQUIRED");
        let id = task["id"].as_str().unwrap();
        // The client rejects the request: the task takes the message and stays AUTH_REQUIRED.
        let again = task_of(binding, &send_over(&s, binding, follow(id, "decline"), None).await);
        assert_eq!(
            (again["id"].as_str(), again["status"]["state"].as_str()),
            (Some(id), Some("TASK_STATE_AUTH_REQUIRED"))
        );
        assert_eq!(again["status"]["message"]["parts"][0]["text"], "refused; sign in or say cancel");
        // Then it sends the credential it obtained: the task completes.
        let done = task_of(binding, &send_over(&s, binding, follow(id, "token abc123"), None).await);
        assert_eq!((done["id"].as_str(), done["status"]["state"].as_str()), (Some(id), Some("TASK_STATE_COMPLETED")));
        assert_eq!(done["artifacts"][0]["parts"][0]["text"], "paid with token abc123", "{done}");
    }
    // The agent saw each follow-up as a turn of the existing task.
    let follow_ups = agent.runs().iter().filter(|r| r.ctx.task.is_some()).count();
    assert_eq!(follow_ups, 2 * BINDINGS.len());
    s.stop().await;
}

// ------------------------------------------------------------------------------------------
// AUTH-SCOPE: authorization and scoping (spec §13.1, §3.3.2)
// ------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_scope_001_every_operation_is_authorized() {
    // Every operation needs scope `a2a`; CancelTask needs `admin` as well (nobody has it).
    let s = serve(None, |base| {
        handler(base, echo_agent(), true)
            .with_required_scopes(RequiredScopes::new().require("*", &["a2a"]).require("CancelTask", &["admin"]))
    })
    .await;
    for (method, params) in rpc_operations() {
        let r = s.rpc(method, params.clone(), Some("t-bob")).await;
        assert_eq!((r.status, r.body["error"]["code"].as_i64()), (403, Some(-31403)), "{method}: {}", r.body);
        let r = s.rpc(method, params.clone(), Some("t-alice")).await;
        let denied = r.status == 403;
        assert_eq!(denied, method == "CancelTask", "{method}: {}", r.body);
    }
    for (verb, path, body) in rest_operations() {
        let r = s.rest(verb, path, body.clone(), Some("t-bob")).await;
        assert_eq!((r.status, r.reason()), (403, "PERMISSION_DENIED"), "{verb} {path}: {}", r.body);
        let r = s.rest(verb, path, body.clone(), Some("t-alice")).await;
        assert_eq!(r.status == 403, path.ends_with(":cancel"), "{verb} {path}: {}", r.body);
    }
    s.stop().await;
}

/// A push config given with a message needs CreateTaskPushNotificationConfig's scopes, as the
/// operation itself does: the message's own scopes let a caller register a webhook otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_scope_001_a_push_config_sent_with_a_message_needs_the_create_scopes() {
    let s = serve(None, |base| {
        handler(base, echo_agent(), true)
            .with_required_scopes(RequiredScopes::new().require("CreateTaskPushNotificationConfig", &["admin"]))
    })
    .await;
    let hook = json!({"url": "https://hooks.example.com/a2a", "token": "tok"});
    for method in ["SendMessage", "SendStreamingMessage"] {
        let with_hook = json!({"message": msg("hi"), "configuration": {"taskPushNotificationConfig": hook}});
        let r = s.rpc(method, with_hook, Some("t-alice")).await;
        assert_eq!((r.status, r.body["error"]["code"].as_i64()), (403, Some(-31403)), "{method}: {}", r.body);
        assert!(
            r.body["error"]["message"].as_str().unwrap().contains("CreateTaskPushNotificationConfig"),
            "{}",
            r.body
        );
        // Without one, the message alone is served.
        let r = s.rpc(method, json!({"message": msg("hi")}), Some("t-alice")).await;
        assert_eq!(r.status, 200, "{method}: {}", r.body);
    }
    let r = s
        .rest(
            "POST",
            "/message:send",
            Some(json!({"message": msg("hi"), "configuration": {"taskPushNotificationConfig": hook}})),
            Some("t-alice"),
        )
        .await;
    assert_eq!((r.status, r.reason()), (403, "PERMISSION_DENIED"), "{}", r.body);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_scope_002_results_are_scoped_to_the_caller() {
    let s = serve(None, |base| handler(base, echo_agent(), true)).await;
    let mut mine = Vec::new();
    for (token, text) in [("t-alice", "a1"), ("t-alice", "a2"), ("t-bob", "b1")] {
        for binding in BINDINGS {
            let task = task_of(binding, &send_over(&s, binding, msg(text), Some(token)).await);
            mine.push((token, task["id"].as_str().unwrap().to_owned()));
        }
    }
    for token in ["t-alice", "t-bob"] {
        let expected: Vec<&str> = mine.iter().filter(|(t, _)| *t == token).map(|(_, id)| id.as_str()).collect();
        for binding in BINDINGS {
            let listed = s.op(binding, "ListTasks", json!({}), Some(token)).await;
            let listed = result(binding, &listed);
            let mut ids: Vec<&str> =
                listed["tasks"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
            ids.sort_unstable();
            let mut want = expected.clone();
            want.sort_unstable();
            assert_eq!(ids, want, "{token} over {binding:?}: {listed}");
            assert_eq!(listed["totalSize"].as_i64().unwrap_or(ids.len() as i64), want.len() as i64, "{listed}");
        }
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_scope_003_tasks_of_others_look_like_tasks_that_do_not_exist() {
    let s = serve(None, |base| handler(base, echo_agent(), true)).await;
    let r = s
        .rpc(
            "SendMessage",
            json!({"message": msg("wait"), "configuration": {"returnImmediately": true}}),
            Some("t-alice"),
        )
        .await;
    let alices = result(Binding::JsonRpc, &r)["task"]["id"].as_str().unwrap().to_owned();
    let missing = "no-such-task";
    for (method, params) in rpc_operations() {
        let Some(obj) = params.as_object() else { continue };
        let key = if obj.contains_key("taskId") {
            "taskId"
        } else if obj.contains_key("id") {
            "id"
        } else {
            continue;
        };
        let mut theirs = params.clone();
        theirs[key] = json!(alices);
        let mut none = params.clone();
        none[key] = json!(missing);
        let a = s.rpc(method, theirs, Some("t-bob")).await;
        let b = s.rpc(method, none, Some("t-bob")).await;
        assert_eq!(a.reason(), "TASK_NOT_FOUND", "{method}: {}", a.body);
        assert_eq!(same_as_missing(&a), same_as_missing(&b), "{method}");
    }
    // A follow-up message to it.
    let a = s.rpc("SendMessage", json!({"message": follow(&alices, "hi")}), Some("t-bob")).await;
    let b = s.rpc("SendMessage", json!({"message": follow(missing, "hi")}), Some("t-bob")).await;
    assert_eq!(a.reason(), "TASK_NOT_FOUND", "{}", a.body);
    assert_eq!(same_as_missing(&a), same_as_missing(&b));
    for (verb, path, body) in rest_operations() {
        if !path.starts_with("/tasks/") {
            continue;
        }
        let a = s.rest(verb, &path.replace("t-x", &alices), body.clone(), Some("t-bob")).await;
        let b = s.rest(verb, &path.replace("t-x", missing), body.clone(), Some("t-bob")).await;
        assert_eq!((a.status, a.reason()), (404, "TASK_NOT_FOUND"), "{verb} {path}: {}", a.body);
        assert_eq!(same_as_missing(&a), same_as_missing(&b), "{verb} {path}");
    }
    // Alice still has it, working.
    let got = s.rpc("GetTask", json!({"id": alices}), Some("t-alice")).await;
    assert_eq!(got.body["result"]["status"]["state"], "TASK_STATE_WORKING", "{}", got.body);
    s.stop().await;
}

/// An error reply without what may name the id asked for (the message, ErrorInfo metadata).
fn same_as_missing(r: &Reply) -> (u16, Value) {
    let mut b = r.body.clone();
    if let Some(e) = b["error"].as_object_mut() {
        e.remove("message");
    }
    for key in ["data", "details"] {
        for item in b["error"][key].as_array_mut().into_iter().flatten() {
            if let Some(o) = item.as_object_mut() {
                o.remove("metadata");
            }
        }
    }
    (r.status, b)
}

// ------------------------------------------------------------------------------------------
// VER: versioning (spec §3.6)
// ------------------------------------------------------------------------------------------

/// A raw server answering every 1.0 call with a completed task, over `binding`.
async fn recording_server(binding: &'static str) -> support::client::RawServer {
    let task = json!({"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}});
    raw_server(move |req, _| {
        if binding == "JSONRPC" {
            let result = if req.rpc_method() == "SendMessage" { json!({"task": task}) } else { task.clone() };
            Action::json(200, &req.rpc_result(result))
        } else if req.path().starts_with("/message:send") {
            Action::json(200, &json!({"task": task}))
        } else {
            Action::json(200, &task)
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ver_client_001_our_client_sends_a2a_version_on_every_request() {
    for (name, binding) in [("JSONRPC", Binding::JsonRpc), ("HTTP+JSON", Binding::HttpJson)] {
        let raw = recording_server(name).await;
        let card: AgentCard = model::parse_value(support::client::raw_card(&raw.base, name)).unwrap();
        let client = Client::builder().preferred_binding(binding).from_card(card).unwrap();
        client.send_message(SendMessageRequest::new(Message::text(Role::User, "hi"))).await.unwrap();
        client.get_task(GetTaskRequest { id: "t1".into(), ..Default::default() }).await.unwrap();
        client.cancel_task(model::CancelTaskRequest { id: "t1".into(), ..Default::default() }).await.unwrap();
        let requests = raw.requests();
        assert_eq!(requests.len(), 3, "{name}");
        for r in &requests {
            assert_eq!(r.header("A2A-Version"), Some("1.0"), "{name} {} {}", r.method, r.target);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ver_client_002_patch_numbers_do_not_affect_negotiation() {
    // Our client: a card declaring 1.0.3 is spoken to as 1.0, and no patch number is sent.
    for (name, binding) in [("JSONRPC", Binding::JsonRpc), ("HTTP+JSON", Binding::HttpJson)] {
        let raw = recording_server(name).await;
        let mut card = support::client::raw_card(&raw.base, name);
        card["supportedInterfaces"][0]["protocolVersion"] = json!("1.0.3");
        let client = Client::builder().preferred_binding(binding).from_card(model::parse_value(card).unwrap()).unwrap();
        assert_eq!(client.protocol_version(), ProtocolVersion::V10);
        client.get_task(GetTaskRequest { id: "t1".into(), ..Default::default() }).await.unwrap();
        assert_eq!(raw.requests()[0].header("A2A-Version"), Some("1.0"), "{name}");
    }
    // Our server: 1.0.x is 1.0, whatever the patch, on both bindings.
    let s = serve(None, |base| handler(base, echo_agent(), false)).await;
    for version in ["1.0", "1.0.0", "1.0.7"] {
        let h = [("A2A-Version", version)];
        let r = s.rpc_h("SendMessage", json!({"message": msg("hello")}), &h).await;
        assert_eq!(r.body["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{version}: {}", r.body);
        let r = s.rest_h("POST", "/message:send", Some(json!({"message": msg("hello")})), &h).await;
        assert_eq!(r.body["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{version}: {}", r.body);
        let r = s.rest_h("GET", "/tasks/no-such-task", None, &h).await;
        assert_eq!((r.status, r.reason()), (404, "TASK_NOT_FOUND"), "{version}");
    }
    // 0.3.x is 0.3 on JSON-RPC.
    let m03 = json!({"kind": "message", "messageId": "m03", "role": "user", "parts": [{"kind": "text", "text": "x"}]});
    let r = s.rpc_h("message/send", json!({"message": m03}), &[("A2A-Version", "0.3.2")]).await;
    assert_eq!(r.body["result"]["status"]["state"], "completed", "{}", r.body);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ver_server_001_requests_get_the_semantics_of_the_requested_version() {
    let s = serve(None, |base| handler(base, echo_agent(), false)).await;
    // 1.0: 1.0 method names and ProtoJSON enums.
    let r = s.rpc_h("SendMessage", json!({"message": msg("hello")}), &[("A2A-Version", "1.0")]).await;
    let t10 = &r.body["result"]["task"];
    assert_eq!((t10["status"]["state"].as_str(), t10.get("kind")), (Some("TASK_STATE_COMPLETED"), None), "{}", r.body);
    assert_eq!(t10["artifacts"][0]["parts"][0]["text"], "echo: hello");
    // 0.3: 0.3 names, `kind` discriminators, lower-case enums, for the same operation.
    let m03 =
        json!({"kind": "message", "messageId": "m03", "role": "user", "parts": [{"kind": "text", "text": "hello"}]});
    let r = s.rpc_h("message/send", json!({"message": m03}), &[("A2A-Version", "0.3")]).await;
    let t03 = &r.body["result"];
    assert_eq!(
        (t03["kind"].as_str(), t03["status"]["state"].as_str()),
        (Some("task"), Some("completed")),
        "{}",
        r.body
    );
    assert_eq!(t03["artifacts"][0]["parts"][0]["kind"], "text");
    // The 0.3 task read back under 1.0 is shown the 1.0 way, and vice versa.
    let id03 = t03["id"].as_str().unwrap();
    let r = s.rpc_h("GetTask", json!({"id": id03}), &[("A2A-Version", "1.0")]).await;
    assert_eq!(r.body["result"]["status"]["state"], "TASK_STATE_COMPLETED", "{}", r.body);
    let id10 = t10["id"].as_str().unwrap();
    let r = s.rpc_h("tasks/get", json!({"id": id10}), &[("A2A-Version", "0.3")]).await;
    assert_eq!(
        (r.body["result"]["kind"].as_str(), r.body["result"]["status"]["state"].as_str()),
        (Some("task"), Some("completed")),
        "{}",
        r.body
    );
    // Each version's names only under it.
    let r = s.rpc_h("message/send", json!({"message": m03}), &[("A2A-Version", "1.0")]).await;
    assert_eq!(r.body["error"]["code"], -32601, "{}", r.body);
    let r = s.rpc_h("SendMessage", json!({"message": msg("x")}), &[("A2A-Version", "0.3")]).await;
    assert_eq!(r.body["error"]["code"], -32601, "{}", r.body);
    // HTTP+JSON is declared for 1.0 only: 0.3 there is VersionNotSupported.
    let r = s.rest_h("POST", "/message:send", Some(json!({"message": msg("x")})), &[("A2A-Version", "0.3")]).await;
    assert_eq!((r.status, r.reason()), (400, "VERSION_NOT_SUPPORTED"), "{}", r.body);
    s.stop().await;
}

// ------------------------------------------------------------------------------------------
// BIND-EQUIV: JSON-RPC and HTTP+JSON are equivalent (spec §5.1)
// ------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bind_equiv_001_every_operation_is_served_on_both_bindings() {
    let s = serve(None, |base| handler(base, echo_agent(), false)).await;
    for binding in BINDINGS {
        let id = task_of(binding, &send_over(&s, binding, msg("hello"), None).await)["id"].as_str().unwrap().to_owned();
        let stream =
            s.open_stream(binding, "SendStreamingMessage", json!({"message": msg("hello")})).await.rest().await;
        assert_eq!(kind(stream.last().unwrap()), "status:TASK_STATE_COMPLETED", "{binding:?}");
        result(binding, &get_over(&s, binding, &id, None).await);
        let waiting = json!({"message": msg("wait"), "configuration": {"returnImmediately": true}});
        let wid = result(binding, &s.op(binding, "SendMessage", waiting, None).await)["task"]["id"].clone();
        let wid = wid.as_str().unwrap().to_owned();
        let mut sub = s.open_stream(binding, "SubscribeToTask", json!({"id": wid})).await;
        assert!(kind(&sub.next().await.unwrap()).starts_with("task:"), "{binding:?}");
        let hook = "http://127.0.0.1:9/hook";
        let calls = vec![
            s.op(binding, "ListTasks", json!({}), None).await,
            s.op(binding, "CreateTaskPushNotificationConfig", json!({"taskId": id, "id": "p", "url": hook}), None)
                .await,
            s.op(binding, "GetTaskPushNotificationConfig", json!({"taskId": id, "id": "p"}), None).await,
            s.op(binding, "ListTaskPushNotificationConfigs", json!({"taskId": id}), None).await,
            s.op(binding, "DeleteTaskPushNotificationConfig", json!({"taskId": id, "id": "p"}), None).await,
            s.op(binding, "GetExtendedAgentCard", json!({}), None).await,
            s.op(binding, "CancelTask", json!({"id": wid}), None).await,
        ];
        for r in &calls {
            result(binding, r);
        }
        assert_eq!(result(binding, calls.last().unwrap())["status"]["state"], "TASK_STATE_CANCELED");
        let rest = sub.rest().await;
        assert_eq!(kind(rest.last().unwrap()), "status:TASK_STATE_CANCELED", "{binding:?}: {rest:?}");
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bind_equiv_002_results_are_equivalent_across_bindings() {
    let s = serve(None, |base| handler(base, echo_agent(), false)).await;
    // The same send: the same task, ids aside.
    let mut sent = Vec::new();
    for binding in BINDINGS {
        sent.push(task_of(binding, &send_over(&s, binding, msg("hello"), None).await));
    }
    assert_eq!(normalize(&sent[0]), normalize(&sent[1]));
    assert_eq!(normalize(&sent[0]), normalize(&sent[2]));
    assert_eq!(sent[0]["artifacts"][0]["parts"][0]["text"], "echo: hello");
    // The same task read over each binding: identical.
    for t in &sent {
        let id = t["id"].as_str().unwrap();
        let a = result(Binding::JsonRpc, &get_over(&s, Binding::JsonRpc, id, None).await);
        let b = result(Binding::HttpJson, &get_over(&s, Binding::HttpJson, id, None).await);
        let c = result(Binding::Grpc, &get_over(&s, Binding::Grpc, id, None).await);
        assert_eq!(a, b);
        assert_eq!(a, c);
    }
    // The same list.
    let ctx = sent[0]["contextId"].as_str().unwrap();
    let a = result(Binding::JsonRpc, &s.rpc("ListTasks", json!({"contextId": ctx}), None).await);
    let b = result(Binding::HttpJson, &s.rest("GET", &format!("/tasks?contextId={ctx}"), None, None).await);
    let c = result(Binding::Grpc, &s.grpc("ListTasks", json!({"contextId": ctx}), None).await);
    assert_eq!(a, b);
    assert_eq!(a, c);
    // A task holding an integer from 2^53 (a nanosecond timestamp) lists over gRPC too, as the
    // double a protobuf Value carries: its whole page failed (INTERNAL) though the other
    // bindings and GetTask served it.
    let mut big = msg("hello");
    big["metadata"] = json!({"ns": 1764358000000000000u64});
    let t = task_of(Binding::JsonRpc, &send_over(&s, Binding::JsonRpc, big, None).await);
    let ctx = t["contextId"].as_str().unwrap();
    let listed = result(Binding::Grpc, &s.grpc("ListTasks", json!({"contextId": ctx}), None).await);
    assert_eq!(listed["tasks"][0]["history"][0]["metadata"]["ns"].as_f64(), Some(1764358000000000000.0), "{listed}");
    // A direct reply: a message either way.
    let a = result(Binding::JsonRpc, &send_over(&s, Binding::JsonRpc, msg("direct"), None).await);
    let b = result(Binding::HttpJson, &send_over(&s, Binding::HttpJson, msg("direct"), None).await);
    let c = result(Binding::Grpc, &send_over(&s, Binding::Grpc, msg("direct"), None).await);
    assert_eq!(normalize(&a), normalize(&b));
    assert_eq!(normalize(&a), normalize(&c));
    assert_eq!(a["message"]["parts"][0]["text"], "direct reply");
    // The same stream events.
    let mut streams = Vec::new();
    for binding in BINDINGS {
        let events =
            s.open_stream(binding, "SendStreamingMessage", json!({"message": msg("hello")})).await.rest().await;
        streams.push(events.iter().map(normalize).collect::<Vec<_>>());
    }
    assert_eq!(streams[0], streams[1]);
    assert_eq!(streams[0], streams[2]);
    assert_eq!(
        streams[0].iter().map(kind).collect::<Vec<_>>(),
        ["task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "artifact:echo", "status:TASK_STATE_COMPLETED"]
    );
    // Cancel: the same canceled task.
    let mut canceled = Vec::new();
    for binding in BINDINGS {
        let r = s
            .rpc("SendMessage", json!({"message": msg("wait"), "configuration": {"returnImmediately": true}}), None)
            .await;
        let id = result(Binding::JsonRpc, &r)["task"]["id"].as_str().unwrap().to_owned();
        let r = s.op(binding, "CancelTask", json!({"id": id}), None).await;
        canceled.push(normalize(&result(binding, &r)));
    }
    assert_eq!(canceled[0], canceled[1]);
    assert_eq!(canceled[0], canceled[2]);
    assert_eq!(canceled[0]["status"]["state"], "TASK_STATE_CANCELED");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bind_equiv_003_errors_map_consistently() {
    let s = serve(None, |base| handler(base, echo_agent(), false)).await;
    let done = task_of(Binding::JsonRpc, &send_over(&s, Binding::JsonRpc, msg("hello"), None).await)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let v = [("a2a-version", "1.0")];
    let nine = [("a2a-version", "9.0")];
    let no_parts = json!({"message": {"role": "ROLE_USER"}});
    // (what, JSON-RPC reply, HTTP+JSON reply, gRPC reply, JSON-RPC code, HTTP status, gRPC status)
    let cases = [
        (
            "GetTask unknown",
            s.rpc("GetTask", json!({"id": "nope"}), None).await,
            s.rest("GET", "/tasks/nope", None, None).await,
            s.grpc("GetTask", json!({"id": "nope"}), None).await,
            -32001,
            404,
            "NOT_FOUND",
        ),
        (
            "CancelTask unknown",
            s.rpc("CancelTask", json!({"id": "nope"}), None).await,
            s.rest("POST", "/tasks/nope:cancel", None, None).await,
            s.grpc("CancelTask", json!({"id": "nope"}), None).await,
            -32001,
            404,
            "NOT_FOUND",
        ),
        (
            "SubscribeToTask unknown",
            s.rpc("SubscribeToTask", json!({"id": "nope"}), None).await,
            s.rest("POST", "/tasks/nope:subscribe", None, None).await,
            s.grpc("SubscribeToTask", json!({"id": "nope"}), None).await,
            -32001,
            404,
            "NOT_FOUND",
        ),
        (
            "push config on an unknown task",
            s.rpc("GetTaskPushNotificationConfig", json!({"taskId": "nope", "id": "c"}), None).await,
            s.rest("GET", "/tasks/nope/pushNotificationConfigs/c", None, None).await,
            s.grpc("GetTaskPushNotificationConfig", json!({"taskId": "nope", "id": "c"}), None).await,
            -32001,
            404,
            "NOT_FOUND",
        ),
        (
            "CancelTask completed",
            s.rpc("CancelTask", json!({"id": done}), None).await,
            s.rest("POST", &format!("/tasks/{done}:cancel"), None, None).await,
            s.grpc("CancelTask", json!({"id": done}), None).await,
            -32002,
            400,
            "FAILED_PRECONDITION",
        ),
        (
            "unsupported version",
            s.rpc_h("GetTask", json!({"id": done}), &[("A2A-Version", "9.0")]).await,
            s.rest_h("GET", &format!("/tasks/{done}"), None, &[("A2A-Version", "9.0")]).await,
            s.grpc_h("GetTask", json!({"id": done}), &nine).await,
            -32009,
            400,
            "FAILED_PRECONDITION",
        ),
        (
            "invalid params",
            s.rpc_h("SendMessage", no_parts.clone(), &[("A2A-Version", "1.0")]).await,
            s.rest_h("POST", "/message:send", Some(no_parts.clone()), &[("A2A-Version", "1.0")]).await,
            s.grpc_h("SendMessage", no_parts.clone(), &v).await,
            -32602,
            400,
            "INVALID_ARGUMENT",
        ),
    ];
    for (what, rpc, rest, grpc, code, status, grpc_status) in cases {
        assert_eq!((rpc.status, rpc.body["error"]["code"].as_i64()), (200, Some(code)), "{what}: {}", rpc.body);
        assert_eq!(rest.status, status, "{what}: {}", rest.body);
        assert_eq!(rest.body["error"]["code"].as_i64(), Some(status as i64), "{what}: {}", rest.body);
        assert_eq!(grpc.body["error"]["status"], grpc_status, "{what}: {}", grpc.body);
        assert_eq!(rpc.reason(), rest.reason(), "{what}: {} vs {}", rpc.body, rest.body);
        assert_eq!(rpc.reason(), grpc.reason(), "{what}: {} vs {}", rpc.body, grpc.body);
        assert_eq!(grpc.body["error"]["details"][0]["domain"], "a2a-protocol.org", "{what}");
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bind_equiv_004_both_bindings_accept_the_same_auth_schemes() {
    let agent = Arc::new(TestAgent::new().otherwise([Step::status(TaskState::Completed, "{principal}")]));
    let s = serve(None, |base| handler(base, agent, true)).await;
    // The card declares bearer and API key; each works on each binding, naming the same caller.
    let c = s.rest_h("GET", "/.well-known/agent-card.json", None, &[]).await;
    let schemes: Vec<&String> = c.body["securitySchemes"].as_object().unwrap().keys().collect();
    assert_eq!(schemes, ["bearer", "key"]);
    let creds: [(&str, &str); 2] = [("authorization", "Bearer t-alice"), ("X-API-Key", "k-alice")];
    for cred in creds {
        let h = [("A2A-Version", "1.0"), cred];
        let r = s.rpc_h("SendMessage", json!({"message": msg("hi")}), &h).await;
        assert_eq!(r.body["result"]["task"]["status"]["message"]["parts"][0]["text"], "alice", "{cred:?}: {}", r.body);
        let r = s.rest_h("POST", "/message:send", Some(json!({"message": msg("hi")})), &h).await;
        assert_eq!(r.body["task"]["status"]["message"]["parts"][0]["text"], "alice", "{cred:?}: {}", r.body);
        // Streams too.
        let body =
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": msg("hi")}});
        for (url, body) in
            [(format!("{}/", s.base), body), (format!("{}/message:stream", s.base), json!({"message": msg("hi")}))]
        {
            let resp = s
                .http
                .post(url)
                .header("content-type", "application/json")
                .header(h[0].0, h[0].1)
                .header(h[1].0, h[1].1)
                .body(body.to_string())
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 200, "{cred:?}");
            assert!(resp.text().await.unwrap().contains("alice"), "{cred:?}");
        }
    }
    // gRPC: the same credentials as metadata, unary and streaming; anything else is refused.
    for cred in creds {
        let h = [("a2a-version", "1.0"), (cred.0, cred.1)];
        let r = s.grpc_h("SendMessage", json!({"message": msg("hi")}), &h).await;
        assert_eq!(r.body["task"]["status"]["message"]["parts"][0]["text"], "alice", "{cred:?}: {}", r.body);
        let resp = s.grpc_send("SendStreamingMessage", json!({"message": msg("hi")}), &h).await;
        assert!(grpc::status::from_headers(resp.headers()).is_none(), "{cred:?}: refused");
        let events = Sse::Grpc { body: resp.into_body(), decoder: grpc::frame::Decoder::new(1 << 20), ended: false };
        assert!(events.rest().await.iter().any(|e| e.to_string().contains("alice")), "{cred:?}");
    }
    for h in [vec![("a2a-version", "1.0")], vec![("a2a-version", "1.0"), ("x-other", "k-alice")]] {
        let r = s.grpc_h("SendMessage", json!({"message": msg("hi")}), &h).await;
        assert_eq!((r.body["error"]["status"].as_str(), r.reason()), (Some("UNAUTHENTICATED"), "UNAUTHENTICATED"));
    }
    // And neither binding takes anything else.
    let r =
        s.rpc_h("SendMessage", json!({"message": msg("hi")}), &[("A2A-Version", "1.0"), ("X-Other", "k-alice")]).await;
    assert_eq!(r.status, 401);
    let r = s
        .rest_h(
            "POST",
            "/message:send",
            Some(json!({"message": msg("hi")})),
            &[("A2A-Version", "1.0"), ("X-Other", "k-alice")],
        )
        .await;
    assert_eq!(r.status, 401);
    s.stop().await;
}
