//! What the client tests share: our own server in-process with the standard test agent, and a
//! scripted raw HTTP/1.1 server (tokio `TcpListener`) that misbehaves on purpose.

use super::agent::TestAgent;
use a2a_native::model::{self, AgentCard, StreamResponse};
use a2a_native::server::{BearerTokens, Principal, RequestHandler, Server, ServerConfig, Stores};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

// ------------------------------------------------------------------------------------------
// Our server with the standard test agent
// ------------------------------------------------------------------------------------------

#[derive(Clone, Default)]
pub struct Opts {
    /// A tenant on every interface.
    pub tenant: Option<&'static str>,
    /// Only one interface: JSONRPC protocolVersion 0.3.
    pub only_v03: bool,
    /// A bearer token the server accepts, and whether every call needs it
    /// (`securityRequirements`) or only the extended card (`securitySchemes` alone).
    pub bearer: Option<(&'static str, bool)>,
}

pub fn test_card(base: &str, opts: &Opts) -> AgentCard {
    let mut interfaces = if opts.only_v03 {
        vec![json!({"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "0.3"})]
    } else {
        vec![
            json!({"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}),
            json!({"url": base, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}),
            json!({"url": a2a_native::grpc::target_of(base), "protocolBinding": "GRPC", "protocolVersion": "1.0"}),
        ]
    };
    if let Some(tenant) = opts.tenant {
        for i in &mut interfaces {
            i["tenant"] = json!(tenant);
        }
    }
    let mut card = json!({
        "name": "client test agent",
        "description": "echoes",
        "version": "1.0.0",
        "supportedInterfaces": interfaces,
        "capabilities": {"streaming": true, "pushNotifications": true, "extendedAgentCard": true,
                         "extensions": [{"uri": "urn:a2a-native:test:opt"}]},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "echo", "description": "echoes", "tags": ["test"]}]
    });
    if let Some((_, required)) = opts.bearer {
        card["securitySchemes"] = json!({"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}});
        if required {
            card["securityRequirements"] = json!([{"schemes": {"bearer": {"list": []}}}]);
        }
    }
    model::parse_value(card).expect("test card is valid")
}

pub struct TestServer {
    pub base: String,
    pub card: AgentCard,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    /// Stops the server and waits until it has.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

pub async fn start(opts: Opts) -> TestServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card = test_card(&base, &opts);
    let mut extended = card.clone();
    extended.description = "the extended card".into();
    let mut config = ServerConfig::default();
    config.push.allow_private_targets = a2a_native::push::PrivateTargets::All;
    let mut handler = RequestHandler::new(Arc::new(TestAgent::standard()), card.clone(), Stores::memory(), config)
        .with_extended_card(extended);
    if let Some((token, _)) = opts.bearer {
        let principal = Principal::named("tester", vec![]);
        handler = handler.with_authenticator(Arc::new(BearerTokens::new().with_token(token, principal)));
    }
    let server = Server::new(Arc::new(handler)).shutdown_timeout(Duration::from_secs(2));
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.serve(listener, async {
        let _ = stopped.await;
    }));
    TestServer { base, card, stop: Some(stop), task: Some(task) }
}

/// A short summary of events: `task:STATE`, `status:STATE`, `artifact:ID`, `message`.
pub fn kinds(events: &[StreamResponse]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            StreamResponse::Task(t) => format!("task:{}", t.status.state),
            StreamResponse::Message(_) => "message".into(),
            StreamResponse::StatusUpdate(u) => format!("status:{}", u.status.state),
            StreamResponse::ArtifactUpdate(a) => format!("artifact:{}", a.artifact.artifact_id),
        })
        .collect()
}

// ------------------------------------------------------------------------------------------
// A scripted raw HTTP/1.1 server
// ------------------------------------------------------------------------------------------

/// One request as the raw server read it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query, as sent.
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    /// `http://host:port` from the Host header.
    pub fn base(&self) -> String {
        format!("http://{}", self.header("host").unwrap_or(""))
    }
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
    /// The JSON-RPC method ("" for a non-JSON-RPC request).
    pub fn rpc_method(&self) -> String {
        self.json()["method"].as_str().unwrap_or("").to_owned()
    }
    /// A JSON-RPC success answering this request.
    pub fn rpc_result(&self, result: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": self.json()["id"], "result": result})
    }
    pub fn rpc_error(&self, code: i64, message: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": self.json()["id"], "error": {"code": code, "message": message}})
    }
}

/// What the raw server does with a request.
#[derive(Clone)]
pub enum Action {
    /// A complete response with Content-Length.
    Respond { status: u16, headers: Vec<(String, String)>, body: Vec<u8> },
    /// A close-delimited `text/event-stream` response: each part after its delay, then close.
    Stream { parts: Vec<(Duration, Vec<u8>)> },
    /// Wait, then do the action.
    Delay(Duration, Box<Action>),
}

impl Action {
    pub fn json(status: u16, value: &Value) -> Self {
        Action::Respond {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: value.to_string().into_bytes(),
        }
    }
    pub fn text(status: u16, body: &str) -> Self {
        Action::Respond {
            status,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: body.as_bytes().to_vec(),
        }
    }
    pub fn stream(parts: Vec<Vec<u8>>) -> Self {
        Action::Stream { parts: parts.into_iter().map(|p| (Duration::ZERO, p)).collect() }
    }
}

/// One SSE event carrying `value`.
pub fn sse(value: &Value) -> Vec<u8> {
    format!("data: {value}\n\n").into_bytes()
}

type Handler = dyn Fn(&Recorded, usize) -> Action + Send + Sync;

pub struct RawServer {
    pub base: String,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl RawServer {
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
    /// Requests whose path is `path`.
    pub fn count(&self, path: &str) -> usize {
        self.requests().iter().filter(|r| r.path() == path).count()
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts a raw server; `handler` gets each request and its index (0-based, over all requests).
pub async fn raw_server(handler: impl Fn(&Recorded, usize) -> Action + Send + Sync + 'static) -> RawServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let requests: Arc<Mutex<Vec<Recorded>>> = Arc::default();
    let handler: Arc<Handler> = Arc::new(handler);
    let recorded = requests.clone();
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (handler, recorded) = (handler.clone(), recorded.clone());
            tokio::spawn(async move {
                let _ = serve_one(stream, handler, recorded).await;
            });
        }
    });
    RawServer { base, requests, task }
}

async fn serve_one(
    mut stream: TcpStream,
    handler: Arc<Handler>,
    recorded: Arc<Mutex<Vec<Recorded>>>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (method, target) = (first.next().unwrap_or("").to_owned(), first.next().unwrap_or("").to_owned());
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())).collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let request = Recorded { method, target, headers, body };
    let index = {
        let mut all = recorded.lock().unwrap();
        all.push(request.clone());
        all.len() - 1
    };
    let mut action = handler(&request, index);
    loop {
        match action {
            Action::Delay(d, next) => {
                tokio::time::sleep(d).await;
                action = *next;
            }
            Action::Respond { status, headers, body } => {
                let mut out = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n", body.len());
                for (k, v) in headers {
                    out.push_str(&format!("{k}: {v}\r\n"));
                }
                out.push_str("\r\n");
                stream.write_all(out.as_bytes()).await?;
                stream.write_all(&body).await?;
                break;
            }
            Action::Stream { parts } => {
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
                stream.write_all(head.as_bytes()).await?;
                stream.flush().await?;
                for (delay, bytes) in parts {
                    tokio::time::sleep(delay).await;
                    stream.write_all(&bytes).await?;
                    stream.flush().await?;
                }
                break;
            }
        }
    }
    stream.flush().await?;
    stream.shutdown().await?;
    Ok(())
}

/// A 1.0 card for the raw server: one interface of `binding` at `base` (`/` for JSON-RPC).
pub fn raw_card(base: &str, binding: &str) -> Value {
    let url = if binding == "JSONRPC" { format!("{base}/") } else { base.to_owned() };
    json!({
        "name": "raw", "description": "scripted", "version": "1",
        "supportedInterfaces": [{"url": url, "protocolBinding": binding, "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    })
}

/// A pure A2A 0.3 card (no `supportedInterfaces`) whose JSON-RPC endpoint is `url`.
pub fn v03_card(url: &str) -> Value {
    json!({
        "protocolVersion": "0.3.0", "name": "legacy", "description": "an A2A 0.3 agent", "version": "0.9",
        "url": url, "preferredTransport": "JSONRPC",
        "capabilities": {"streaming": true, "pushNotifications": true},
        "supportsAuthenticatedExtendedCard": true,
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    })
}
