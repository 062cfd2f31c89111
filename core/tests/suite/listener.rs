//! The listener against hostile clients, over raw sockets (HTTP/1.1) and a raw HTTP/2 client:
//! a bounded request head (431), a body that must arrive in time (408, then the connection
//! closes), and refusals on keep-alive connections that reach a client sending its body after
//! its headers (the bounded body is read before a 401; an answer that leaves the body unread
//! says `Connection: close` and closes), idle connections closed (HTTP/1 keep-alive, h2c after
//! its preface, TLS after its handshake) while open streams are kept, clients that stop reading
//! (the socket, or an HTTP/2 stream's window) dropped, a request head that does not arrive in
//! time answered 408 (hyper would close without a word), and HTTP/1.1 framing
//! hyper lets through (no Host, unknown transfer codings) refused.

use crate::support;

use a2a_native::model::{self, AgentCard};
use a2a_native::server::{BearerTokens, Principal, RequestHandler, Server, ServerConfig, Stores};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use support::agent::TestAgent;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

struct Srv {
    addr: std::net::SocketAddr,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Srv {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn card(base: &str, bearer: bool) -> AgentCard {
    let mut card = json!({
        "name": "listener test agent", "description": "d", "version": "1",
        "supportedInterfaces": [
            {"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": base, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    });
    if bearer {
        card["securitySchemes"] = json!({"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}});
        card["securityRequirements"] = json!([{"schemes": {"bearer": {"list": []}}}]);
    }
    model::parse_value(card).unwrap()
}

async fn start(bearer: bool) -> Srv {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut config = ServerConfig::default();
    config.limits.max_header_bytes = 16 * 1024;
    config.limits.body_read_timeout = Duration::from_millis(400);
    let mut handler = RequestHandler::new(
        Arc::new(TestAgent::standard()),
        card(&format!("http://{addr}"), bearer),
        Stores::memory(),
        config,
    );
    if bearer {
        let who = Principal::named("tester", vec![]);
        handler = handler.with_authenticator(Arc::new(BearerTokens::new().with_token("s3cret", who)));
    }
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(Server::new(Arc::new(handler)).serve(listener, async {
        let _ = stopped.await;
    }));
    Srv { addr, stop: Some(stop) }
}

fn send_body(id: u32) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "SendMessage",
           "params": {"message": {"messageId": format!("m{id}"), "role": "ROLE_USER", "parts": [{"text": "hello"}]}}})
    .to_string()
}

fn head(content_length: usize, extra: &str) -> String {
    format!(
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n{extra}Content-Length: {content_length}\r\n\r\n"
    )
}

/// Reads one HTTP/1.1 response (head and a Content-Length body); `None` when the server closed.
async fn read_response(s: &mut TcpStream) -> Option<(u16, String, String)> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match tokio::time::timeout(Duration::from_secs(5), s.read(&mut byte)).await.expect("an answer in time") {
            Ok(1) => buf.push(byte[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8_lossy(&buf).to_string();
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let len: usize = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).await.ok()?;
    Some((status, head.to_ascii_lowercase(), String::from_utf8_lossy(&body).to_string()))
}

/// Whether the server closed the connection (EOF or reset) within a second.
async fn closed(s: &mut TcpStream) -> bool {
    closed_within(s, Duration::from_secs(1)).await
}

async fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    let mut byte = [0u8; 1];
    matches!(tokio::time::timeout(within, s.read(&mut byte)).await, Ok(Ok(0) | Err(_)))
}

#[tokio::test]
async fn an_oversized_request_head_gets_431_on_http1() {
    let s = start(false).await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let big = format!("X-Big: {}\r\n", "a".repeat(32 * 1024));
    c.write_all(head(0, &big).as_bytes()).await.unwrap();
    let (status, _, _) = read_response(&mut c).await.expect("an answer, not a dropped connection");
    assert_eq!(status, 431);
    // A head within the limit is served.
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let body = send_body(1);
    c.write_all(format!("{}{body}", head(body.len(), &format!("X-Ok: {}\r\n", "a".repeat(4 * 1024)))).as_bytes())
        .await
        .unwrap();
    assert_eq!(read_response(&mut c).await.unwrap().0, 200);
}

#[tokio::test]
async fn an_oversized_header_list_is_refused_on_http2() {
    let s = start(false).await;
    let h2 = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .http2_only(true)
        .build_http::<http_body_util::Full<bytes::Bytes>>();
    let req = http::Request::post(format!("http://{}/", s.addr))
        .header("content-type", "application/json")
        .header("x-big", "a".repeat(32 * 1024))
        .body(http_body_util::Full::new(bytes::Bytes::from(send_body(1))))
        .unwrap();
    match tokio::time::timeout(Duration::from_secs(5), h2.request(req)).await.expect("no hang") {
        Ok(resp) => assert_eq!(resp.status(), 431),
        Err(e) => assert!(format!("{e:?}").to_lowercase().contains("header"), "{e:?}"),
    }
    // The connection's other requests are still served.
    let req = http::Request::post(format!("http://{}/", s.addr))
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .body(http_body_util::Full::new(bytes::Bytes::from(send_body(2))))
        .unwrap();
    assert_eq!(h2.request(req).await.unwrap().status(), 200);
}

#[tokio::test]
async fn a_trickled_body_gets_408_and_the_connection_closes() {
    let s = start(false).await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let body = send_body(1);
    c.write_all(head(body.len(), "").as_bytes()).await.unwrap();
    c.write_all(&body.as_bytes()[..5]).await.unwrap();
    // ... and the rest never comes.
    let (status, answer, _) = read_response(&mut c).await.expect("a 408");
    assert_eq!(status, 408);
    assert!(answer.contains("connection: close"), "{answer}");
    assert!(closed(&mut c).await, "the connection stays open after a 408");
}

#[tokio::test]
async fn a_401_reaches_a_client_that_sends_its_body_after_its_headers() {
    let s = start(true).await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let body = send_body(1);
    c.write_all(head(body.len(), "").as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    c.write_all(body.as_bytes()).await.unwrap();
    let (status, answer, text) = read_response(&mut c).await.expect("the 401");
    assert_eq!(status, 401, "{text}");
    assert!(!answer.contains("connection: close"), "{answer}");
    // The same connection serves the next request.
    let body = send_body(2);
    c.write_all(format!("{}{body}", head_with_auth(body.len())).as_bytes()).await.unwrap();
    let (status, _, text) = read_response(&mut c).await.expect("the next answer on the same connection");
    assert_eq!(status, 200, "{text}");
}

fn head_with_auth(len: usize) -> String {
    head(len, "Authorization: Bearer s3cret\r\n")
}

#[tokio::test]
async fn an_answer_that_leaves_the_body_unread_says_the_connection_closes() {
    let s = start(false).await;
    // A JSON-RPC request with a non-JSON content type is refused before its body is read.
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let body = send_body(1);
    let h = format!("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n", body.len());
    c.write_all(h.as_bytes()).await.unwrap();
    let (status, answer, _) = read_response(&mut c).await.expect("the 415");
    assert_eq!(status, 415);
    assert!(answer.contains("connection: close"), "{answer}");
    // A body over the limit: 413, announced and closed.
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(head(64 * 1024 * 1024, "").as_bytes()).await.unwrap();
    let (status, answer, _) = read_response(&mut c).await.expect("the 413");
    assert_eq!(status, 413);
    assert!(answer.contains("connection: close"), "{answer}");
    assert!(closed(&mut c).await);
}

/// A client that uploads a body somewhat over the limit whole before it reads (as most HTTP/1
/// clients do) gets the 413, not a broken pipe: the body is read on behind the answer, and the
/// connection then serves the next request. Far over the limit, the 413 closes the connection.
#[tokio::test]
async fn a_413_reaches_a_client_that_uploads_its_whole_body_first() {
    let mut config = ServerConfig::default();
    config.limits.max_body_bytes = 64 * 1024;
    let s = start_with(config).await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let big = 200 * 1024; // over the limit, within the four times read on
    c.write_all(head(big, "").as_bytes()).await.unwrap();
    // Several times the socket buffers: a server that closed at once breaks this write.
    for _ in 0..big / 1024 {
        c.write_all(&[b' '; 1024]).await.expect("the whole body is taken");
    }
    let (status, answer, text) = read_response(&mut c).await.expect("the 413");
    assert_eq!(status, 413, "{text}");
    assert!(!answer.contains("connection: close"), "{answer}");
    let body = send_body(2);
    c.write_all(format!("{}{body}", head(body.len(), "")).as_bytes()).await.unwrap();
    let (status, _, text) = read_response(&mut c).await.expect("the next answer on the same connection");
    assert_eq!(status, 200, "{text}");

    // Announced and never sent: the 413, and the connection is not held for the body.
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(head(big, "").as_bytes()).await.unwrap();
    let (status, _, _) = read_response(&mut c).await.expect("the 413");
    assert_eq!(status, 413);
    assert!(closed_within(&mut c, Duration::from_secs(3)).await, "held open for a body that never comes");

    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(head(1024 * 1024, "").as_bytes()).await.unwrap();
    let (status, answer, _) = read_response(&mut c).await.expect("the 413");
    assert_eq!(status, 413);
    assert!(answer.contains("connection: close"), "{answer}");
    assert!(closed(&mut c).await);
}

#[tokio::test]
async fn a_trickled_body_gets_408_on_http2_too() {
    use futures_util::StreamExt;
    use http_body_util::BodyExt;
    let s = start(false).await;
    let h2 = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .http2_only(true)
        .build_http::<http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>>();
    // The first bytes of the body, then nothing: the stream stays open.
    let first = Ok::<_, std::convert::Infallible>(hyper::body::Frame::data(bytes::Bytes::from_static(b"{\"jsonrpc\"")));
    let frames = futures_util::stream::iter([first]).chain(futures_util::stream::pending());
    let req = http::Request::post(format!("http://{}/", s.addr))
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .body(BodyExt::boxed(http_body_util::StreamBody::new(frames)))
        .unwrap();
    let resp = tokio::time::timeout(Duration::from_secs(5), h2.request(req)).await.expect("an answer in time").unwrap();
    assert_eq!(resp.status(), 408);
}

#[tokio::test]
async fn a_connection_that_never_sends_a_byte_is_closed_at_the_header_read_timeout() {
    let s = start_head_timeout().await;
    let mut silent = TcpStream::connect(s.addr).await.unwrap();
    // Open before the timeout, closed after it (`closed` waits up to a second).
    let mut byte = [0u8; 1];
    assert!(tokio::time::timeout(Duration::from_millis(100), silent.read(&mut byte)).await.is_err());
    assert!(closed(&mut silent).await, "an idle connection holds its descriptor");
    // A client that speaks is served as before.
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let body = send_body(1);
    c.write_all(format!("{}{body}", head(body.len(), "")).as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut c).await.unwrap().0, 200);
}

/// A plain-HTTP server with `config` (the standard test agent; SSE keep-alive comments off, so
/// an open stream sends nothing while it waits).
async fn start_with(config: ServerConfig) -> Srv {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handler = RequestHandler::new(
        Arc::new(TestAgent::standard()),
        card(&format!("http://{addr}"), false),
        Stores::memory(),
        config,
    );
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(Server::new(Arc::new(handler)).sse_keep_alive(None).serve(listener, async {
        let _ = stopped.await;
    }));
    Srv { addr, stop: Some(stop) }
}

/// A server with a short header read timeout (300 ms).
async fn start_head_timeout() -> Srv {
    let mut config = ServerConfig::default();
    config.limits.header_read_timeout = Duration::from_millis(300);
    start_with(config).await
}

/// A request head begun and not finished in time gets 408 and the connection closes, on a new
/// connection and on a keep-alive one, however its bytes trickle in.
#[tokio::test]
async fn a_request_head_that_does_not_arrive_in_time_gets_408_and_a_close() {
    let s = start_head_timeout().await;
    let body = send_body(1);
    let partial = "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: appl";
    // A head that stops half way.
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(partial.as_bytes()).await.unwrap();
    let began = std::time::Instant::now();
    let (status, answer, _) = read_response(&mut c).await.expect("a 408, not a silent close");
    assert_eq!(status, 408);
    assert!(answer.contains("connection: close"), "{answer}");
    assert!(began.elapsed() >= Duration::from_millis(250), "408 after {:?}", began.elapsed());
    assert!(closed(&mut c).await);
    // The same after a request was served on the connection.
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(format!("{}{body}", head(body.len(), "")).as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut c).await.unwrap().0, 200);
    c.write_all(partial.as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut c).await.expect("a 408 on the keep-alive connection").0, 408);
    assert!(closed(&mut c).await);
    // A head that trickles a byte every 50 ms: the time counts from its first byte.
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let trickle = async {
        for b in head(body.len(), "").bytes() {
            if c.write_all(&[b]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), trickle).await;
    assert_eq!(read_response(&mut c).await.expect("a 408 for a trickled head").0, 408);
    // A head that starts like HTTP/2's preface and is not one is an HTTP/1 head, timed too.
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(b"PRI / HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    assert_eq!(read_response(&mut c).await.expect("a 408 for a PRI head").0, 408);
    // A client that stops inside what could be HTTP/2's preface is timed from its first byte.
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(b"PRI * HTT").await.unwrap();
    assert_eq!(read_response(&mut c).await.expect("a 408 inside the preface").0, 408);
    assert!(closed(&mut c).await);
}

/// The header read timeout leaves alone heads that arrive in pieces in time, keep-alive
/// connections that wait between requests, and HTTP/2 connections.
#[tokio::test]
async fn the_header_read_timeout_spares_what_arrives_in_time_and_idle_connections() {
    let s = start_head_timeout().await;
    let body = send_body(1);
    let request = format!("{}{body}", head(body.len(), ""));
    // In two pieces, 150 ms apart.
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let (first, rest) = request.split_at(20);
    c.write_all(first.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    c.write_all(rest.as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut c).await.unwrap().0, 200);
    // A blank line after the answer (some clients end a body with one) is no request head
    // (RFC 9112 §2.2). Then quiet for three timeouts: no unasked-for 408 waits on the connection.
    tokio::time::sleep(Duration::from_millis(50)).await;
    c.write_all(b"\r\n").await.unwrap();
    tokio::time::sleep(Duration::from_millis(900)).await;
    c.write_all(request.as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut c).await.expect("the keep-alive connection still serves").0, 200);
    // HTTP/2 reads frames between requests (here PINGs every 100 ms, as gRPC clients send):
    // none of that is a late request head. One connection, no pool: a connection the server
    // broke would not be replaced unseen.
    let tcp = TcpStream::connect(s.addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
        .timer(hyper_util::rt::TokioTimer::new())
        .keep_alive_interval(Duration::from_millis(100))
        .keep_alive_while_idle(true)
        .handshake::<_, http_body_util::Full<bytes::Bytes>>(hyper_util::rt::TokioIo::new(tcp))
        .await
        .unwrap();
    let conn = tokio::spawn(conn);
    let send = |id| {
        http::Request::post(format!("http://{}/", s.addr))
            .header("content-type", "application/json")
            .header("a2a-version", "1.0")
            .body(http_body_util::Full::new(bytes::Bytes::from(send_body(id))))
            .unwrap()
    };
    assert_eq!(sender.send_request(send(2)).await.unwrap().status(), 200);
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(!conn.is_finished(), "the server broke an idle HTTP/2 connection");
    assert_eq!(sender.send_request(send(3)).await.unwrap().status(), 200);
}

/// A server whose connections close after `idle` with no request in flight; SSE keep-alive
/// comments are off, so an open stream sends nothing while it waits.
async fn start_idle(idle: Duration) -> Srv {
    let mut config = ServerConfig::default();
    config.limits.idle_timeout = idle;
    start_with(config).await
}

/// The HTTP/2 frame types a server sent until it closed the connection (within 3 s).
async fn h2_frames_until_closed(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(3), s.read_to_end(&mut bytes)).await.ok();
    read?.ok()?;
    Some(h2_frames(&bytes).into_iter().map(|(kind, _)| kind).collect())
}

/// The (type, flags) of the HTTP/2 frames in `bytes`, in order.
fn h2_frames(bytes: &[u8]) -> Vec<(u8, u8)> {
    let mut frames = Vec::new();
    let mut at = 0;
    while at + 9 <= bytes.len() {
        let len = usize::from(bytes[at]) << 16 | usize::from(bytes[at + 1]) << 8 | usize::from(bytes[at + 2]);
        frames.push((bytes[at + 3], bytes[at + 4]));
        at += 9 + len;
    }
    frames
}

const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";

/// The server's first SETTINGS frame announces how many requests one connection may have open
/// (`limits.max_streams_per_connection`, 100 by default): open requests are what unfinished
/// bodies cost, and hyper's own default was 200 per connection.
#[tokio::test]
async fn an_h2_connection_is_told_how_many_streams_it_may_open() {
    let s = start(false).await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(H2_PREFACE).await.unwrap();
    let mut buf = vec![0u8; 9];
    tokio::time::timeout(Duration::from_secs(5), c.read_exact(&mut buf)).await.unwrap().unwrap();
    assert_eq!(buf[3], 4, "SETTINGS first");
    let len = usize::from(buf[0]) << 16 | usize::from(buf[1]) << 8 | usize::from(buf[2]);
    let mut payload = vec![0u8; len];
    c.read_exact(&mut payload).await.unwrap();
    let settings: Vec<(u16, u32)> = payload
        .chunks_exact(6)
        .map(|p| (u16::from_be_bytes([p[0], p[1]]), u32::from_be_bytes([p[2], p[3], p[4], p[5]])))
        .collect();
    // SETTINGS_MAX_CONCURRENT_STREAMS is parameter 3.
    assert!(settings.contains(&(3, 100)), "{settings:?}");
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_at_the_idle_timeout() {
    let s = start_idle(Duration::from_millis(300)).await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let body = send_body(1);
    c.write_all(format!("{}{body}", head(body.len(), "")).as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut c).await.unwrap().0, 200);
    // Kept alive for a next request: one sent soon is served on the same connection.
    tokio::time::sleep(Duration::from_millis(100)).await;
    c.write_all(format!("{}{body}", head(body.len(), "")).as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut c).await.unwrap().0, 200);
    // Then nothing: closed once idle for the timeout (it looks every 300 ms: within 600 ms).
    assert!(closed_within(&mut c, Duration::from_secs(3)).await, "an idle keep-alive connection stays open");
}

#[tokio::test]
async fn an_h2c_connection_idle_after_its_preface_gets_goaway_and_is_closed() {
    let s = start_idle(Duration::from_millis(300)).await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(H2_PREFACE).await.unwrap();
    let types = h2_frames_until_closed(&mut c).await.expect("closed within 3 s");
    // SETTINGS (4) first, then GOAWAY (7) before the close.
    assert_eq!(types.first(), Some(&4), "{types:?}");
    assert!(types.contains(&7), "no GOAWAY before the close: {types:?}");
}

#[tokio::test]
async fn an_open_stream_keeps_its_connection_past_the_idle_timeout() {
    let s = start_idle(Duration::from_millis(200)).await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
        "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "wait"}]}}})
    .to_string();
    c.write_all(format!("{}{body}", head(body.len(), "Accept: text/event-stream\r\n")).as_bytes()).await.unwrap();
    // The stream's first events, then silence (the task waits to be canceled).
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), c.read(&mut buf)).await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    // Well past the idle timeout, the connection is still open: reading waits, it does not end.
    tokio::time::sleep(Duration::from_millis(700)).await;
    loop {
        match tokio::time::timeout(Duration::from_millis(100), c.read(&mut buf)).await {
            Err(_) => break,
            Ok(Ok(n)) => assert!(n > 0, "the connection of an open stream was closed as idle"),
            Ok(Err(e)) => panic!("{e}"),
        }
    }
}

#[tokio::test]
async fn a_tls_connection_idle_after_its_handshake_is_closed() {
    let mut config = ServerConfig::default();
    config.limits.idle_timeout = Duration::from_millis(300);
    let s = start_tls(config).await;
    let mut tls = tls_connect(s.addr).await;
    // Handshake done, then nothing: the server closes the connection.
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(Duration::from_secs(3), tls.read(&mut byte)).await;
    assert!(matches!(read, Ok(Ok(0) | Err(_))), "an idle TLS connection stays open: {read:?}");
}

#[tokio::test]
async fn a_request_head_that_does_not_arrive_in_time_gets_408_over_tls_too() {
    let mut config = ServerConfig::default();
    config.limits.header_read_timeout = Duration::from_millis(300);
    let s = start_tls(config).await;
    let mut tls = tls_connect(s.addr).await;
    tls.write_all(b"POST / HTTP/1.1\r\nHost: x\r\nConte").await.unwrap();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(3), tls.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "no answer in time");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer}");
}

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// A server on TLS (the test fixtures' certificate for `localhost`).
async fn start_tls(config: ServerConfig) -> Srv {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handler = RequestHandler::new(
        Arc::new(TestAgent::standard()),
        card(&format!("https://{addr}"), false),
        Stores::memory(),
        config,
    );
    let tls = a2a_native::server::tls::server_config(
        &fixture("tls-server.pem"),
        &fixture("tls-server.key"),
        None,
        a2a_native::server::tls::ClientCertificate::None,
    )
    .unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(Server::new(Arc::new(handler)).tls(tls).serve(listener, async {
        let _ = stopped.await;
    }));
    Srv { addr, stop: Some(stop) }
}

/// A TLS connection to `addr` (HTTP/1.1: no ALPN), its handshake done.
async fn tls_connect(addr: std::net::SocketAddr) -> tokio_rustls::client::TlsStream<TcpStream> {
    use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from_pem_file(fixture("tls-ca.pem")).unwrap()).unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let client = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = TcpStream::connect(addr).await.unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    tokio_rustls::TlsConnector::from(Arc::new(client)).connect(name, tcp).await.expect("handshake")
}

#[tokio::test]
async fn http11_framing_hyper_lets_through_is_refused() {
    let s = start(false).await;
    let body = send_body(1);
    // No Host, and two: 400 (RFC 9112 §3.2); HTTP/1.0 needs none.
    for (version, hosts, status) in [
        ("1.1", "", 400),
        ("1.1", "Host: a\r\nHost: b\r\n", 400),
        ("1.0", "Host: a\r\nHost: b\r\n", 400),
        ("1.0", "", 200),
        ("1.1", "Host: a\r\n", 200),
    ] {
        let mut c = TcpStream::connect(s.addr).await.unwrap();
        let head = format!(
            "POST / HTTP/{version}\r\n{hosts}Content-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        c.write_all(format!("{head}{body}").as_bytes()).await.unwrap();
        assert_eq!(read_response(&mut c).await.unwrap().0, status, "HTTP/{version} with {hosts:?}");
    }
    // A transfer coding besides chunked: 501 and the connection closes (RFC 9112 §6.1; hyper
    // itself answers 400 to one without chunked last); plain chunked is served.
    for (coding, status) in
        [("gzip, chunked", 501), ("identity", 400), ("chunked", 200), ("Chunked", 200), (" , chunked", 200)]
    {
        let mut c = TcpStream::connect(s.addr).await.unwrap();
        let head = format!(
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nTransfer-Encoding: {coding}\r\n\r\n"
        );
        c.write_all(format!("{head}{:x}\r\n{body}\r\n0\r\n\r\n", body.len()).as_bytes()).await.unwrap();
        let (got, head, _) = read_response(&mut c).await.unwrap();
        assert_eq!(got, status, "Transfer-Encoding: {coding}");
        if status != 200 {
            assert!(head.contains("connection: close"), "{head}");
            assert!(closed(&mut c).await);
        }
    }
}

#[tokio::test]
async fn a_client_that_stops_reading_is_dropped_once_its_writes_stall() {
    let s = start_idle(Duration::from_millis(300)).await;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut c = socket.connect(s.addr).await.unwrap();
    // A stream that stays open (the task waits to be canceled) and opens with the task, whose
    // history holds this 6 MB message: more than the socket buffers on both sides hold, so the
    // server's writes block while nobody reads. The stream is in flight: only the stalled
    // writes can end the connection.
    let text = format!("wait {}", "x".repeat(6 << 20));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
        "params": {"message": {"messageId": "big", "role": "ROLE_USER", "parts": [{"text": text}]}}})
    .to_string();
    c.write_all(format!("{}{body}", head(body.len(), "Accept: text/event-stream\r\n")).as_bytes()).await.unwrap();
    // Room for a slow debug build to make the 6 MB snapshot, and for two 300 ms looks.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    // Read now: what was buffered, then the end, well short of the whole answer. A server that
    // had kept the connection would send all of it and keep the connection open.
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), c.read_to_end(&mut got)).await;
    assert!(read.is_ok(), "the stalled connection was kept open ({} bytes read)", got.len());
    assert!(got.len() < text.len(), "the whole answer came ({} bytes)", got.len());
}

#[tokio::test]
async fn a_mounted_service_leaves_framing_to_its_own_server() {
    // `Server::service()` mounted in another stack gets requests that server framed (an
    // in-process request has no Host): only the listener refuses them.
    use hyper::service::Service;
    let handler = RequestHandler::new(
        Arc::new(TestAgent::standard()),
        card("http://127.0.0.1:1", false),
        Stores::memory(),
        ServerConfig::default(),
    );
    let service = Server::new(Arc::new(handler)).service();
    let req = http::Request::post("/")
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .body(http_body_util::Full::new(bytes::Bytes::from(send_body(1))))
        .unwrap();
    assert_eq!(req.version(), http::Version::HTTP_11);
    assert_eq!(service.call(req).await.unwrap().status(), 200);
}

/// A client's HTTP/2 connection: its request sender (the connection closes when it is
/// dropped), and its task.
type H2Client = (
    hyper::client::conn::http2::SendRequest<http_body_util::Full<bytes::Bytes>>,
    tokio::task::JoinHandle<hyper::Result<()>>,
);

/// Over HTTP/2 (with this stream window, else hyper's), a SendStreamingMessage whose task
/// waits to be canceled: the response (headers read) and the client's connection.
async fn h2_waiting_stream(
    addr: std::net::SocketAddr,
    window: Option<u32>,
) -> (http::Response<hyper::body::Incoming>, H2Client) {
    h2_answer(addr, window, "SendStreamingMessage", "wait").await
}

/// `method` (SendMessage or SendStreamingMessage) of a message saying `text`, over HTTP/2 with
/// the client's stream windows at `window`: the response head, and the connection.
async fn h2_answer(
    addr: std::net::SocketAddr,
    window: Option<u32>,
    method: &str,
    text: &str,
) -> (http::Response<hyper::body::Incoming>, H2Client) {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
        .initial_stream_window_size(window)
        .handshake::<_, http_body_util::Full<bytes::Bytes>>(hyper_util::rt::TokioIo::new(tcp))
        .await
        .unwrap();
    let conn = tokio::spawn(conn);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method,
        "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}}})
    .to_string();
    let req = http::Request::post(format!("http://{addr}/"))
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .header("a2a-version", "1.0")
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
        .unwrap();
    let resp = tokio::time::timeout(Duration::from_secs(5), sender.send_request(req)).await.unwrap().unwrap();
    assert_eq!(resp.status(), 200);
    (resp, (sender, conn))
}

#[tokio::test]
async fn an_h2_client_that_keeps_its_stream_window_shut_is_dropped() {
    let s = start_idle(Duration::from_millis(300)).await;
    // A window of 0: the server may send headers, but no byte of any body.
    let (resp, (_sender, conn)) = h2_waiting_stream(s.addr, Some(0)).await;
    // The body is never read, so the window stays shut and the stream (open: the task waits)
    // starves. Two looks 300 ms apart see it: the server drops the connection.
    let ended = tokio::time::timeout(Duration::from_secs(3), conn).await;
    assert!(ended.is_ok(), "a connection whose stream the client starves is kept");
    drop(resp);
}

#[tokio::test]
async fn an_h2_client_that_never_opens_the_window_of_a_whole_answer_is_dropped() {
    let s = start_idle(Duration::from_millis(300)).await;
    // A finished task's answer waits whole for a window the client never opens: hyper never
    // asks the body for a byte, yet it holds the answer in memory.
    let (resp, (_sender, conn)) = h2_answer(s.addr, Some(0), "SendMessage", "hello").await;
    let ended = tokio::time::timeout(Duration::from_secs(3), conn).await;
    assert!(ended.is_ok(), "a connection whose answer the client never lets out is kept");
    drop(resp);
}

#[tokio::test]
async fn an_open_h2_stream_that_has_sent_all_it_had_keeps_its_connection() {
    use http_body_util::BodyExt;
    let s = start_idle(Duration::from_millis(200)).await;
    let (mut resp, (_sender, conn)) = h2_waiting_stream(s.addr, None).await;
    let first = tokio::time::timeout(Duration::from_secs(5), resp.body_mut().frame()).await.unwrap();
    assert!(first.is_some_and(|f| f.is_ok()));
    // Nothing more to send (the task waits): the stream is quiet, not starved.
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(!conn.is_finished(), "a quiet, healthy h2 stream lost its connection");
}

/// A SendMessage body of about `size` bytes (one long text part).
fn large_send_body(id: u32, size: usize) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "SendMessage",
           "params": {"message": {"messageId": format!("m{id}"), "role": "ROLE_USER",
                                  "parts": [{"text": "x".repeat(size)}]}}})
    .to_string()
}

/// A server whose largest body and body budget are both 1 MiB, a 600 KiB SendMessage body
/// split at three quarters (with another 600 KiB, more than the budget), and a connection that
/// has sent the head and the first part of it: what has arrived holds its share.
async fn a_budget_held() -> (Srv, String, usize, TcpStream) {
    let mut config = ServerConfig::default();
    config.limits.max_body_bytes = 1024 * 1024;
    config.limits.max_body_bytes_in_flight = 1024 * 1024;
    config.limits.body_read_timeout = Duration::from_secs(5);
    let srv = start_with(config).await;
    let large = large_send_body(1, 600 * 1024);
    let split = large.len() * 3 / 4;
    let mut holding = TcpStream::connect(srv.addr).await.unwrap();
    holding.write_all(format!("{}{}", head(large.len(), ""), &large[..split]).as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    (srv, large, split, holding)
}

#[tokio::test]
async fn large_bodies_in_flight_share_one_budget_and_the_rest_get_503() {
    // A: three quarters of a 600 KiB body sent.
    let (srv, large, split, mut a) = a_budget_held().await;
    let (front, back) = large.split_at(split);
    // B: another one does not fit: 503, with Retry-After, as a JSON-RPC error.
    let mut b = TcpStream::connect(srv.addr).await.unwrap();
    b.write_all(format!("{}{large}", head(large.len(), "")).as_bytes()).await.unwrap();
    let (status, headers, body) = read_response(&mut b).await.expect("an answer");
    assert_eq!(status, 503, "{headers}{body}");
    assert!(headers.contains("retry-after: 1"), "{headers}");
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["error"]["code"], -32603, "{body}");
    assert!(body.contains("maxBodyBytesInFlight"), "{body}");
    // Its body was read (and dropped), so its keep-alive connection serves on.
    assert!(!headers.contains("connection: close"), "{headers}");
    let small = send_body(3);
    b.write_all(format!("{}{small}", head(small.len(), "")).as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut b).await.expect("an answer").0, 200);
    // Announcing a large body holds nothing until its bytes arrive.
    let mut announced = TcpStream::connect(srv.addr).await.unwrap();
    announced.write_all(head(1024 * 1024, "").as_bytes()).await.unwrap();
    // Small bodies have a budget of their own: large ones do not starve them.
    let small = send_body(2);
    let mut c = TcpStream::connect(srv.addr).await.unwrap();
    c.write_all(format!("{}{small}", head(small.len(), "")).as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut c).await.expect("an answer").0, 200);
    // A finishes and is served; its share comes back with its answer.
    a.write_all(back.as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut a).await.expect("an answer").0, 200);
    let mut d = TcpStream::connect(srv.addr).await.unwrap();
    d.write_all(format!("{}{large}", head(large.len(), "")).as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut d).await.expect("an answer").0, 200);
    drop(announced);

    // A chunked body is counted the same way.
    let mut e = TcpStream::connect(srv.addr).await.unwrap();
    let chunked = "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    e.write_all(format!("{chunked}{:x}\r\n{front}\r\n", front.len()).as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut f = TcpStream::connect(srv.addr).await.unwrap();
    f.write_all(format!("{}{large}", head(large.len(), "")).as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut f).await.expect("an answer").0, 503);
    e.write_all(format!("{:x}\r\n{back}\r\n0\r\n\r\n", back.len()).as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut e).await.expect("an answer").0, 200);

    // HTTP+JSON is held to the same budget.
    let rest_large =
        json!({"message": {"messageId": "r1", "role": "ROLE_USER", "parts": [{"text": "x".repeat(600 * 1024)}]}})
            .to_string();
    let mut g = TcpStream::connect(srv.addr).await.unwrap();
    g.write_all(format!("{}{front}", head(large.len(), "")).as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rest_head = format!(
        "POST /message:send HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: {}\r\n\r\n",
        rest_large.len()
    );
    let mut h = TcpStream::connect(srv.addr).await.unwrap();
    h.write_all(format!("{rest_head}{rest_large}").as_bytes()).await.unwrap();
    let (status, headers, body) = read_response(&mut h).await.expect("an answer");
    assert_eq!(status, 503, "{headers}{body}");
    assert!(headers.contains("retry-after: 1"), "{headers}");
    g.write_all(back.as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut g).await.expect("an answer").0, 200);
}

#[tokio::test]
async fn a_client_waiting_for_100_continue_gets_the_503_before_it_uploads() {
    let (srv, large, split, mut holding) = a_budget_held().await;
    let back = &large[split..];
    // Headers only: no 100 Continue, the 503 at once, and the connection closes (its body was
    // never read).
    let mut waiting = TcpStream::connect(srv.addr).await.unwrap();
    waiting.write_all(head(large.len(), "Expect: 100-continue\r\n").as_bytes()).await.unwrap();
    let (status, headers, _) = read_response(&mut waiting).await.expect("an answer before the body");
    assert_eq!(status, 503, "{headers}");
    assert!(headers.contains("retry-after: 1") && headers.contains("connection: close"), "{headers}");
    // With room, the same request gets 100 Continue and is served.
    holding.write_all(back.as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut holding).await.expect("an answer").0, 200);
    let mut ok = TcpStream::connect(srv.addr).await.unwrap();
    ok.write_all(head(large.len(), "Expect: 100-continue\r\n").as_bytes()).await.unwrap();
    let mut interim = [0u8; 25];
    ok.read_exact(&mut interim).await.unwrap();
    assert!(interim.starts_with(b"HTTP/1.1 100 Continue\r\n\r\n"), "{}", String::from_utf8_lossy(&interim));
    ok.write_all(large.as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut ok).await.expect("an answer").0, 200);
}

/// At `max_connections` the server stops accepting: a further client waits (its request is not
/// answered) until a served connection closes, then is served; keep-alive connections under
/// the cap are served throughout.
#[tokio::test]
async fn past_the_connection_cap_a_client_waits_until_a_connection_closes() {
    let mut config = ServerConfig::default();
    config.limits.max_connections = 2;
    let srv = start_with(config).await;
    let mut served = Vec::new();
    for id in 0..2 {
        let mut s = TcpStream::connect(srv.addr).await.unwrap();
        let body = send_body(id);
        s.write_all(format!("{}{body}", head(body.len(), "")).as_bytes()).await.unwrap();
        assert_eq!(read_response(&mut s).await.unwrap().0, 200);
        served.push(s);
    }
    // The kernel completes the handshake (listen backlog); the server does not take it yet.
    let mut waiting = TcpStream::connect(srv.addr).await.unwrap();
    let body = send_body(7);
    waiting.write_all(format!("{}{body}", head(body.len(), "")).as_bytes()).await.unwrap();
    let mut byte = [0u8; 1];
    let early = tokio::time::timeout(Duration::from_millis(500), waiting.read(&mut byte)).await;
    assert!(early.is_err(), "a connection past the cap was served: {early:?}");
    // The connections being served still are.
    let body = send_body(2);
    served[1].write_all(format!("{}{body}", head(body.len(), "")).as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut served[1]).await.unwrap().0, 200);
    drop(served.remove(0));
    let (status, _, answer) = read_response(&mut waiting).await.expect("served once a slot is free");
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("\"m7\""), "{answer}");
}

#[tokio::test]
async fn an_h2_client_that_only_pings_is_closed_at_the_idle_timeout() {
    // The server answers each PING (a write of its own); that must not count as activity, or
    // a client pinging every 100 ms would hold its connection and slot for ever.
    let s = start_idle(Duration::from_millis(300)).await;
    let c = TcpStream::connect(s.addr).await.unwrap();
    let (mut read, mut write) = c.into_split();
    write.write_all(H2_PREFACE).await.unwrap();
    let pinging = tokio::spawn(async move {
        for n in 0u64.. {
            let mut ping = vec![0, 0, 8, 6, 0, 0, 0, 0, 0];
            ping.extend_from_slice(&n.to_be_bytes());
            if write.write_all(&ping).await.is_err() {
                return n;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        unreachable!()
    });
    let mut bytes = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(5), read.read_to_end(&mut bytes)).await;
    assert!(closed.is_ok(), "a connection kept alive by PINGs alone stays open");
    pinging.abort();
    let frames = h2_frames(&bytes);
    assert!(frames.iter().any(|&(kind, _)| kind == 7), "closed with a GOAWAY: {frames:?}");
    // The client's PINGs were answered (PING frames with the ACK flag), and yet it was closed.
    let acks = frames.iter().filter(|&&(kind, flags)| kind == 6 && flags & 1 == 1).count();
    assert!(acks >= 2, "{acks} PING acks: {frames:?}");
}

/// A JSON-RPC GetTask of `id`, over HTTP/2.
fn h2_get_task(addr: std::net::SocketAddr, id: &str) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    h2_rpc(addr, "GetTask", json!({"id": id}))
}

fn h2_rpc(
    addr: std::net::SocketAddr,
    method: &str,
    params: serde_json::Value,
) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    http::Request::post(format!("http://{addr}/"))
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
        .unwrap()
}

#[tokio::test]
async fn answers_a_client_does_not_read_hold_the_body_budget_and_the_rest_get_503() {
    let mut config = ServerConfig::default();
    config.limits.max_body_bytes = 1024 * 1024;
    config.limits.max_body_bytes_in_flight = 1024 * 1024;
    let srv = start_with(config).await;
    // A task whose every answer is about 600 KiB (its message, and the echo of it).
    let mut c = TcpStream::connect(srv.addr).await.unwrap();
    let large = large_send_body(1, 300 * 1024);
    c.write_all(format!("{}{large}", head(large.len(), "")).as_bytes()).await.unwrap();
    let (status, _, body) = read_response(&mut c).await.expect("an answer");
    assert_eq!(status, 200, "{}", &body[..body.len().min(300)]);
    let task: serde_json::Value = serde_json::from_str(&body).unwrap();
    let id = task["result"]["task"]["id"].as_str().unwrap().to_owned();
    assert!(body.len() > 512 * 1024, "{}", body.len());

    // An HTTP/2 client that asks for it again and again and reads nothing (its windows shut):
    // the first answer holds most of the 1 MiB budget until it is sent, so the next are refused
    // for now rather than held in memory too.
    let tcp = TcpStream::connect(srv.addr).await.unwrap();
    let (sender, conn) = hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
        .initial_stream_window_size(0)
        .handshake::<_, http_body_util::Full<bytes::Bytes>>(hyper_util::rt::TokioIo::new(tcp))
        .await
        .unwrap();
    let conn = tokio::spawn(conn);
    let mut held = Vec::new();
    let mut statuses = Vec::new();
    for _ in 0..4 {
        let mut sender = sender.clone();
        let resp = tokio::time::timeout(Duration::from_secs(5), sender.send_request(h2_get_task(srv.addr, &id)))
            .await
            .unwrap()
            .unwrap();
        statuses.push(resp.status().as_u16());
        held.push(resp);
    }
    assert_eq!(statuses, [200, 503, 503, 503]);
    // (Their bodies cannot be read through a shut window: the heads say enough.)
    assert_eq!(held[1].headers()["retry-after"], "1");
    assert_eq!(held[1].headers()["content-type"], "application/json");

    // Meanwhile a call that changes something is answered all the same, though its answer is
    // as large: refusing it would tell the client to send again what was done. And requests
    // are still read: answers have a budget of their own.
    let another = large_send_body(2, 300 * 1024);
    c.write_all(format!("{}{another}", head(another.len(), "")).as_bytes()).await.unwrap();
    let (status, _, body) = read_response(&mut c).await.expect("an answer");
    assert_eq!(status, 200, "{}", &body[..body.len().min(300)]);
    assert!(body.len() > 512 * 1024, "{}", body.len());

    // The client goes: its unsent answer gives its share back, and the task is served whole.
    drop((held, sender));
    conn.abort();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let get = json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": id}}).to_string();
    c.write_all(format!("{}{get}", head(get.len(), "")).as_bytes()).await.unwrap();
    let (status, _, again) = read_response(&mut c).await.expect("an answer");
    assert_eq!(status, 200);
    assert!(again.len() > 512 * 1024, "{}", again.len());
}

#[tokio::test]
async fn stream_events_a_client_does_not_read_hold_the_answer_budget_and_past_it_the_stream_ends() {
    use http_body_util::BodyExt;
    let mut config = ServerConfig::default();
    config.limits.max_body_bytes = 1024 * 1024;
    config.limits.max_body_bytes_in_flight = 1024 * 1024;
    let srv = start_with(config).await;
    // A task waiting for input whose snapshot, the first event of every stream on it, is about
    // 400 KiB (its first message).
    let ask = |n: u32| json!({"messageId": format!("m{n}"), "role": "ROLE_USER", "parts": [{"text": format!("input {}", "x".repeat(400 * 1024))}]});
    let mut c = TcpStream::connect(srv.addr).await.unwrap();
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": ask(1)}}).to_string();
    c.write_all(format!("{}{send}", head(send.len(), "")).as_bytes()).await.unwrap();
    let (status, _, body) = read_response(&mut c).await.expect("an answer");
    assert_eq!(status, 200, "{}", &body[..body.len().min(300)]);
    let task: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(task["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let id = task["result"]["task"]["id"].as_str().unwrap().to_owned();

    // An HTTP/2 client that subscribes again and again and reads little: 16 KiB of each
    // stream's window, a connection window that never runs out.
    let tcp = TcpStream::connect(srv.addr).await.unwrap();
    let (sender, conn) = hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
        .initial_stream_window_size(16 * 1024)
        .initial_connection_window_size(64 * 1024 * 1024)
        .handshake::<_, http_body_util::Full<bytes::Bytes>>(hyper_util::rt::TokioIo::new(tcp))
        .await
        .unwrap();
    let conn = tokio::spawn(conn);
    let subscribe = || {
        let mut sender = sender.clone();
        let request = h2_rpc(srv.addr, "SubscribeToTask", json!({"id": id}));
        async move {
            let resp =
                tokio::time::timeout(Duration::from_secs(5), sender.send_request(request)).await.unwrap().unwrap();
            assert_eq!(resp.status(), 200);
            resp
        }
    };
    // The first two snapshots take most of the 1 MiB budget until they are sent: held, unread.
    let held = [subscribe().await, subscribe().await];
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The third cannot be covered: its stream ends at once with Unavailable (the client may
    // subscribe again), instead of being held in memory too.
    let third = subscribe().await.into_body().collect();
    let third = tokio::time::timeout(Duration::from_secs(5), third).await.expect("the stream ends").unwrap();
    let text = String::from_utf8(third.to_bytes().to_vec()).unwrap();
    assert!(text.len() < 16 * 1024, "{}", &text[..300]);
    assert!(text.contains("maxBodyBytesInFlight") && text.contains("\"error\""), "{text}");

    // A write's stream still answers what it did, past the budget: its first event (the new
    // task) goes out uncovered.
    let mut sender2 = sender.clone();
    let request = h2_rpc(srv.addr, "SendStreamingMessage", json!({"message": ask(2)}));
    let resp = tokio::time::timeout(Duration::from_secs(5), sender2.send_request(request)).await.unwrap().unwrap();
    let mut body = resp.into_body();
    let mut first = Vec::new();
    while !first.ends_with(b"\n\n") {
        let frame = tokio::time::timeout(Duration::from_secs(5), body.frame()).await.unwrap().unwrap().unwrap();
        first.extend_from_slice(&frame.into_data().unwrap());
    }
    let first = String::from_utf8(first).unwrap();
    assert!(first.len() > 400 * 1024 && first.contains("\"task\""), "{}", &first[..first.len().min(300)]);

    // The client goes: the held snapshots give their shares back, and a new stream is served.
    drop((held, body));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut again = subscribe().await.into_body();
    let mut snapshot = Vec::new();
    while !snapshot.ends_with(b"\n\n") {
        let frame = tokio::time::timeout(Duration::from_secs(5), again.frame()).await.unwrap().unwrap().unwrap();
        snapshot.extend_from_slice(&frame.into_data().unwrap());
    }
    assert!(snapshot.len() > 400 * 1024, "{}", String::from_utf8_lossy(&snapshot[..300]));
    conn.abort();
}

/// One client opening many requests and never finishing their bodies (a few bytes each) holds
/// at most half of the small bodies' budget: its own requests past that are refused (503), and
/// another client's are served. (It spent the whole budget with about 2 MB of traffic, and every
/// client's requests were refused until its bodies timed out.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_cannot_spend_every_clients_body_budget() {
    use http_body_util::{BodyExt, StreamBody, combinators::UnsyncBoxBody};
    let mut config = ServerConfig::default();
    config.limits.max_body_bytes = 64 * 1024;
    // 160 KiB: 160 small bodies as counted, 80 for one client.
    config.limits.max_body_bytes_in_flight = 160 * 1024;
    config.limits.body_read_timeout = Duration::from_secs(20);
    let s = start_with(config).await;
    let mut open = Vec::new();
    let mut pending = Vec::new();
    // Two connections of 100 unfinished requests each (their 200 small bodies would be more
    // than the whole budget), from 127.0.0.1.
    for _ in 0..2 {
        let h2 = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .http2_only(true)
            .build_http::<UnsyncBoxBody<bytes::Bytes, std::convert::Infallible>>();
        for _ in 0..100 {
            let (tx, rx) = tokio::sync::mpsc::channel(1);
            tx.send(Ok(hyper::body::Frame::data(bytes::Bytes::from_static(b"{\"a\":")))).await.unwrap();
            let req = http::Request::post(format!("http://{}/", s.addr))
                .header("content-type", "application/json")
                .body(
                    StreamBody::new(futures_util::stream::unfold(rx, |mut rx| async move {
                        rx.recv().await.map(|frame| (frame, rx))
                    }))
                    .boxed_unsync(),
                )
                .unwrap();
            pending.push(tokio::spawn(h2.request(req)));
            open.push(tx);
        }
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    // Another client (another address) is served meanwhile.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
    let mut other = socket.connect(s.addr).await.unwrap();
    let body = send_body(1);
    other.write_all(format!("{}{body}", head(body.len(), "")).as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut other).await.unwrap().0, 200, "another client was refused");
    drop(open);
    for p in pending {
        p.abort();
    }
}
