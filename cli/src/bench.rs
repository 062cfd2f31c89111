//! `a2a bench`: a closed-loop load generator for A2A servers, so ours and the official SDKs'
//! servers are measured by one tool in one run.
//!
//! Each connection is one keep-alive HTTP/1.1 connection sending JSON-RPC SendMessage (or
//! SendStreamingMessage) back to back, each with a fresh messageId; with `--protocol grpc`, one
//! HTTP/2 connection per worker sending the gRPC calls (protobuf, `lf.a2a.v1.A2AService`). Latency is measured per
//! request from send to the last body byte (for streams: to the first SSE event, and the
//! stream is then read to its end). A reply that is not HTTP 200 with a JSON-RPC `result`
//! counts as an error.

use bytes::Bytes;
use clap::{Args, ValueEnum};
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct BenchArgs {
    /// The server's JSON-RPC URL, e.g. http://127.0.0.1:41241/ (with `--protocol grpc`: its
    /// gRPC target, `http://HOST:PORT` or `HOST:PORT`).
    #[arg(long)]
    url: String,
    /// Concurrent connections, each sending one request at a time.
    #[arg(long, default_value_t = 16, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    connections: usize,
    /// Measured time, in seconds (after the warm-up).
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Warm-up time, in seconds, not measured.
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Send exactly this many requests instead of running for a duration (no warm-up).
    #[arg(long)]
    requests: Option<u64>,
    /// Protocol of the requests: 1.0 (`SendMessage`, `A2A-Version: 1.0`), 0.3 (`message/send`),
    /// or grpc (1.0 over gRPC; raw only).
    #[arg(long, value_enum, default_value_t = Protocol::V10)]
    protocol: Protocol,
    #[arg(long, value_enum, default_value_t = Mode::Send)]
    mode: Mode,
    /// What sends the requests: `raw` (hand-built JSON-RPC over hyper: the server's cost alone)
    /// or `client` (the a2a-native client: card resolution once, then its full call path, to
    /// measure the client's overhead). With `client`, --url is the agent's base URL.
    #[arg(long, value_enum, default_value_t = Via::Raw)]
    via: Via,
    /// Seconds a request (and a connect) may take; one that takes longer counts as an error
    /// and its connection is given up, so a server that never answers cannot hang the run.
    #[arg(long, default_value_t = 30.0, value_parser = positive_seconds)]
    request_timeout: f64,
    /// Print one JSON object instead of a line of text (the global --json sets it).
    #[arg(skip)]
    pub json: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Protocol {
    #[value(name = "1.0")]
    V10,
    #[value(name = "0.3")]
    V03,
    #[value(name = "grpc")]
    Grpc,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// SendMessage: latency to the whole reply.
    Send,
    /// SendStreamingMessage: latency to the first event.
    Stream,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Via {
    Raw,
    Client,
}

fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(s),
        _ => Err("seconds, more than 0 and at most 86400".into()),
    }
}

/// What one connection measured.
#[derive(Default)]
struct Tally {
    micros: Vec<u32>,
    errors: u64,
    first_error: Option<String>,
}

/// `headers`: sent with every request (the credentials and `--header`s).
pub async fn run(args: BenchArgs, headers: Vec<(String, String)>) -> Result<(), String> {
    if args.protocol == Protocol::Grpc && args.via == Via::Client {
        return Err(
            "--protocol grpc measures the server with raw calls; for our client use --via client with a gRPC agent URL"
                .into(),
        );
    }
    let url = if args.url.contains("://") { args.url.clone() } else { format!("http://{}", args.url) };
    let uri: hyper::Uri = url.parse().map_err(|e| format!("bad --url: {e}"))?;
    let host = uri.host().ok_or("--url needs a host")?.to_owned();
    let port = uri.port_u16().unwrap_or(80);
    let path = uri.path_and_query().map_or("/".to_owned(), |p| p.as_str().to_owned());
    let start = Instant::now();
    let warmup_end = start + Duration::from_secs_f64(if args.requests.is_some() { 0.0 } else { args.warmup });
    let end = warmup_end + Duration::from_secs_f64(args.duration);
    let budget = args.requests.map(|n| Arc::new(AtomicU64::new(n)));

    let client = match args.via {
        Via::Raw => None,
        Via::Client => {
            let mut builder = a2a_native::client::Client::builder()
                .allow_v03(args.protocol == Protocol::V03)
                .timeout(Duration::from_secs_f64(args.request_timeout));
            for (name, value) in &headers {
                builder = builder.header(name, value);
            }
            Some(builder.connect(&args.url).await.map_err(|e| format!("cannot resolve the agent: {e}"))?)
        }
    };
    let mut extra = hyper::HeaderMap::new();
    for (name, value) in headers {
        let name = hyper::header::HeaderName::try_from(name.as_str()).map_err(|e| format!("header {name:?}: {e}"))?;
        let value = hyper::header::HeaderValue::try_from(value).map_err(|e| format!("header {name}: {e}"))?;
        extra.append(name, value);
    }
    let extra = Arc::new(extra);
    let mut workers = Vec::new();
    for worker in 0..args.connections.max(1) {
        let target = Target {
            host: host.clone(),
            port,
            path: path.clone(),
            protocol: args.protocol,
            mode: args.mode,
            timeout: Duration::from_secs_f64(args.request_timeout),
            headers: extra.clone(),
        };
        let budget = budget.clone();
        let client = client.clone();
        workers.push(tokio::spawn(async move {
            match client {
                Some(client) => drive_client(&client, args_mode(target.mode), worker, warmup_end, end, budget).await,
                None => target.drive(worker, warmup_end, end, budget).await,
            }
        }));
    }
    let mut all = Tally::default();
    for w in workers {
        let t = w.await.map_err(|e| e.to_string())??;
        all.micros.extend(t.micros);
        all.errors += t.errors;
        all.first_error = all.first_error.or(t.first_error);
    }
    let elapsed = if args.requests.is_some() { start.elapsed() } else { end.saturating_duration_since(warmup_end) };
    report(&args, &mut all, elapsed);
    // Nothing measured: a wrong URL or not an A2A server, which a script must not take for a run.
    if all.micros.is_empty() && all.errors > 0 {
        return Err(format!("every request failed ({} errors)", all.errors));
    }
    Ok(())
}

struct Target {
    host: String,
    port: u16,
    path: String,
    protocol: Protocol,
    mode: Mode,
    timeout: Duration,
    /// Sent with every request.
    headers: Arc<hyper::HeaderMap>,
}

/// One worker's connection: HTTP/1.1 for JSON-RPC, HTTP/2 for gRPC.
enum Conn {
    H1(hyper::client::conn::http1::SendRequest<Full<Bytes>>),
    H2(hyper::client::conn::http2::SendRequest<Full<Bytes>>),
}

impl Conn {
    /// Whether the connection can take another request (after a failed one).
    async fn ready(&mut self) -> bool {
        match self {
            Conn::H1(s) => s.ready().await.is_ok(),
            Conn::H2(s) => s.ready().await.is_ok(),
        }
    }
}

impl Target {
    /// One worker: its own connection, one request at a time until the budget or the clock
    /// says stop; requests begun in the warm-up are not counted.
    async fn drive(
        &self,
        worker: usize,
        warmup_end: Instant,
        end: Instant,
        budget: Option<Arc<AtomicU64>>,
    ) -> Result<Tally, String> {
        let tcp = tokio::time::timeout(self.timeout, tokio::net::TcpStream::connect((self.host.as_str(), self.port)))
            .await
            .map_err(|_| format!("connect {}:{}: no connection within {:?}", self.host, self.port, self.timeout))?
            .map_err(|e| format!("connect {}:{}: {e}", self.host, self.port))?;
        tcp.set_nodelay(true).map_err(|e| e.to_string())?;
        let mut conn = if self.protocol == Protocol::Grpc {
            let (sender, conn) =
                hyper::client::conn::http2::handshake(hyper_util::rt::TokioExecutor::new(), TokioIo::new(tcp))
                    .await
                    .map_err(|e| e.to_string())?;
            tokio::spawn(conn);
            Conn::H2(sender)
        } else {
            let (sender, conn) =
                hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await.map_err(|e| e.to_string())?;
            tokio::spawn(conn);
            Conn::H1(sender)
        };
        let mut tally = Tally::default();
        for seq in 0u64.. {
            if !take_one(&budget, end) {
                break;
            }
            let began = Instant::now();
            let call = async {
                match &mut conn {
                    Conn::H1(sender) => self.one(sender, worker, seq).await,
                    Conn::H2(sender) => self.one_grpc(sender, worker, seq).await,
                }
            };
            let Ok(outcome) = tokio::time::timeout(self.timeout, call).await else {
                // The connection is mid-request: given up, with this worker.
                tally.errors += 1;
                tally.first_error.get_or_insert(format!("no answer within {:?}", self.timeout));
                break;
            };
            let latency = began.elapsed();
            if budget.is_none() && began < warmup_end {
                continue;
            }
            match outcome {
                Ok(Some(first_event)) => tally.micros.push(micros(first_event)),
                Ok(None) => tally.micros.push(micros(latency)),
                Err(e) => {
                    tally.errors += 1;
                    tally.first_error.get_or_insert(e);
                    if !conn.ready().await {
                        break;
                    }
                }
            }
        }
        Ok(tally)
    }

    /// One gRPC call: the request encoded with prost, the answer read to its trailers. For
    /// streams, returns the time to the first message.
    async fn one_grpc(
        &self,
        sender: &mut hyper::client::conn::http2::SendRequest<Full<Bytes>>,
        worker: usize,
        seq: u64,
    ) -> Result<Option<Duration>, String> {
        use a2a_native::grpc::{self, frame, pb, status};
        use a2a_native::request::Method;
        let began = Instant::now();
        let request = pb::SendMessageRequest {
            message: Some(pb::Message {
                message_id: format!("bench-{worker}-{seq}"),
                role: pb::Role::User as i32,
                parts: vec![pb::Part { content: Some(pb::part::Content::Text("hello".into())), ..Default::default() }],
                ..Default::default()
            }),
            ..Default::default()
        };
        let method = if self.mode == Mode::Send { Method::SendMessage } else { Method::SendStreamingMessage };
        let mut req = Request::post(format!("http://{}:{}{}", self.host, self.port, grpc::path(method)))
            .header(hyper::header::CONTENT_TYPE, grpc::CONTENT_TYPE)
            .header("te", "trailers")
            .header("a2a-version", "1.0")
            .body(Full::new(frame::encode_message(&request)))
            .map_err(|e| e.to_string())?;
        // gRPC metadata: header names are lowercase on HTTP/2 (the HeaderMap's always are).
        req.headers_mut().extend(self.headers.iter().map(|(n, v)| (n.clone(), v.clone())));
        sender.ready().await.map_err(|e| e.to_string())?;
        let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
        if let Some(s) = status::from_headers(resp.headers()) {
            return Err(format!("gRPC status {}: {}", status::name(s.code), s.message));
        }
        // A peer may gzip its answers (grpcio servers configured so do, whatever is asked).
        let mut decoder = frame::Decoder::new(1 << 24).with_encoding(frame::Encoding::of(resp.headers()));
        let mut body = resp.into_body();
        let mut first_event = None;
        let mut messages = 0;
        let mut code = None;
        while let Some(f) = body.frame().await {
            match f.map_err(|e| e.to_string())?.into_data() {
                Ok(data) => {
                    decoder.push(&data);
                    while decoder.next_message().map_err(|e| e.to_string())?.is_some() {
                        messages += 1;
                        first_event.get_or_insert_with(|| began.elapsed());
                    }
                }
                Err(f) => code = f.into_trailers().ok().as_ref().and_then(status::from_headers),
            }
        }
        match code {
            Some(s) if s.code == status::OK && messages > 0 => {}
            Some(s) => return Err(format!("gRPC status {}: {}", status::name(s.code), s.message)),
            None => return Err("a gRPC answer without a status".into()),
        }
        Ok(if self.mode == Mode::Stream { first_event } else { None })
    }

    /// One request. For streams, returns the time to the first event.
    async fn one(
        &self,
        sender: &mut hyper::client::conn::http1::SendRequest<Full<Bytes>>,
        worker: usize,
        seq: u64,
    ) -> Result<Option<Duration>, String> {
        let began = Instant::now();
        let message_id = format!("bench-{worker}-{seq}");
        let (method, message) = match (self.protocol, self.mode) {
            (Protocol::V10 | Protocol::Grpc, m) => (
                if m == Mode::Send { "SendMessage" } else { "SendStreamingMessage" },
                json!({"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "hello"}]}),
            ),
            (Protocol::V03, m) => (
                if m == Mode::Send { "message/send" } else { "message/stream" },
                json!({"kind": "message", "messageId": message_id, "role": "user", "parts": [{"kind": "text", "text": "hello"}]}),
            ),
        };
        let body = json!({"jsonrpc": "2.0", "id": seq, "method": method, "params": {"message": message}}).to_string();
        let mut req = Request::post(&self.path)
            .header(hyper::header::HOST, format!("{}:{}", self.host, self.port))
            .header(hyper::header::CONTENT_TYPE, "application/json");
        if self.protocol == Protocol::V10 {
            req = req.header("A2A-Version", "1.0");
        }
        if self.mode == Mode::Stream {
            req = req.header(hyper::header::ACCEPT, "text/event-stream");
        }
        let mut req = req.body(Full::new(Bytes::from(body))).map_err(|e| e.to_string())?;
        req.headers_mut().extend(self.headers.iter().map(|(n, v)| (n.clone(), v.clone())));
        sender.ready().await.map_err(|e| e.to_string())?;
        let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
        let status = resp.status();
        let mut body = resp.into_body();
        let mut first_event = None;
        let mut seen = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| e.to_string())?;
            if let Some(data) = frame.data_ref() {
                if first_event.is_none() && self.mode == Mode::Stream && contains(data, b"data:") {
                    first_event = Some(began.elapsed());
                }
                if seen.len() < 4096 {
                    seen.extend_from_slice(data);
                }
            }
        }
        if status != 200 || !contains(&seen, b"\"result\"") {
            return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&seen[..seen.len().min(300)])));
        }
        if self.mode == Mode::Stream && first_event.is_none() {
            return Err("a stream without events".into());
        }
        Ok(first_event)
    }
}

/// Takes one request from the budget (or, without one, checks the clock): false when the
/// worker is done.
fn take_one(budget: &Option<Arc<AtomicU64>>, end: Instant) -> bool {
    match budget {
        Some(left) => left.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).is_ok(),
        None => Instant::now() < end,
    }
}

fn args_mode(mode: Mode) -> bool {
    mode == Mode::Stream
}

/// One worker sending through the a2a-native client (its connection pool is shared, as an
/// application's would be).
async fn drive_client(
    client: &a2a_native::client::Client,
    stream: bool,
    worker: usize,
    warmup_end: Instant,
    end: Instant,
    budget: Option<Arc<AtomicU64>>,
) -> Result<Tally, String> {
    use a2a_native::model::{Message, Role, SendMessageRequest};
    let mut tally = Tally::default();
    for seq in 0u64.. {
        if !take_one(&budget, end) {
            break;
        }
        let mut message = Message::text(Role::User, "hello");
        message.message_id = format!("bench-{worker}-{seq}");
        let req = SendMessageRequest::new(message);
        let began = Instant::now();
        let outcome: Result<Duration, String> = if stream {
            async {
                let mut events = client.send_streaming_message(req).await.map_err(|e| e.to_string())?;
                let first = events.next().await.ok_or("a stream without events")?.map_err(|e| e.to_string())?;
                let at = began.elapsed();
                drop(first);
                while let Some(e) = events.next().await {
                    e.map_err(|e| e.to_string())?;
                }
                Ok(at)
            }
            .await
        } else {
            client.send_message(req).await.map(|_| began.elapsed()).map_err(|e| e.to_string())
        };
        if budget.is_none() && began < warmup_end {
            continue;
        }
        match outcome {
            Ok(latency) => tally.micros.push(micros(latency)),
            Err(e) => {
                tally.errors += 1;
                tally.first_error.get_or_insert(e);
            }
        }
    }
    Ok(tally)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn micros(d: Duration) -> u32 {
    u32::try_from(d.as_micros()).unwrap_or(u32::MAX)
}

fn report(args: &BenchArgs, all: &mut Tally, elapsed: Duration) {
    all.micros.sort_unstable();
    let n = all.micros.len();
    let pct = |p: f64| -> f64 {
        if n == 0 {
            return 0.0;
        }
        let i = ((p / 100.0) * (n - 1) as f64).round() as usize;
        f64::from(all.micros[i.min(n - 1)]) / 1000.0
    };
    let rps = n as f64 / elapsed.as_secs_f64().max(1e-9);
    let (p50, p99, max) = (pct(50.0), pct(99.0), pct(100.0));
    let what = if args.mode == Mode::Stream { "first event" } else { "reply" };
    if args.json {
        let out = json!({
            "url": args.url, "connections": args.connections, "mode": if args.mode == Mode::Stream { "stream" } else { "send" }, "via": if args.via == Via::Client { "client" } else { "raw" },
            "protocol": match args.protocol { Protocol::V10 => "1.0", Protocol::V03 => "0.3", Protocol::Grpc => "grpc" },
            "requests": n, "errors": all.errors, "seconds": elapsed.as_secs_f64(),
            "rps": rps, "p50_ms": p50, "p99_ms": p99, "max_ms": max, "first_error": all.first_error,
        });
        outln!("{out}");
    } else {
        outln!(
            "{n} requests in {:.1} s over {} connections: {rps:.0} req/s; {what} p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms; {} errors",
            elapsed.as_secs_f64(),
            args.connections,
            all.errors
        );
        if let Some(e) = &all.first_error {
            outln!("first error: {}", crate::print::safe(&e.to_string()));
        }
    }
}
