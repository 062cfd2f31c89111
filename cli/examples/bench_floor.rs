//! The floor the benchmark measures our server against: a bare hyper server on one port that
//! reads each request's body, parses it (JSON, or the gRPC frame and its protobuf
//! SendMessageRequest) and writes a fixed SendMessage result (a completed task echoing one
//! text part), with no protocol logic, store or executor. What ours costs above it is the
//! price of being A2A. `tests/bench/run.sh` and `tests/bench/grpc.sh` run it beside ours.
//!
//!     cargo run --release -p a2a-native-cli --example bench_floor -- PORT

use a2a_native::grpc::{frame, pb};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use prost::Message;
use std::convert::Infallible;
use std::sync::LazyLock;

/// The answer `a2a serve --echo` gives a one-part "hello", byte for byte in size (ids are UUIDs,
/// the status has its timestamp, the history holds the message): a floor that wrote less would
/// be cheaper for its smaller writes alone.
const TASK: &str = r#"{"id":"01a21d51-b5cb-77af-81b3-c20bd6bac9fa","contextId":"01a21d51-b5cb-77af-81b3-c20c48450680","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-11-27T14:03:43.947Z"},"artifacts":[{"artifactId":"8d9e7eb0-f0d3-44e6-bae8-ebeeee46966c","name":"echo","parts":[{"text":"hello"}]}],"history":[{"messageId":"bench-3-12345","contextId":"01a21d51-b5cb-77af-81b3-c20c48450680","taskId":"01a21d51-b5cb-77af-81b3-c20bd6bac9fa","role":"ROLE_USER","parts":[{"text":"hello"}]}]}"#;

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

async fn answer(req: Request<hyper::body::Incoming>) -> Result<Response<Body>, Infallible> {
    let grpc = req.headers().get("content-type").is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"));
    let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    if grpc {
        let parsed = frame::single_message(&body, 1 << 20, frame::Encoding::Identity)
            .ok()
            .and_then(|m| pb::SendMessageRequest::decode(m).ok());
        // Read once: the floor writes a fixed answer (encoding it each time, as JSON-RPC's is
        // formatted each time), and reading it from JSON per call had cost it a JSON parse.
        static REPLY: LazyLock<pb::SendMessageResponse> =
            LazyLock::new(|| serde_json::from_str(&format!(r#"{{"task":{TASK}}}"#)).expect("the fixed answer"));
        let mut trailers = http::HeaderMap::new();
        trailers.insert("grpc-status", http::HeaderValue::from_static(if parsed.is_some() { "0" } else { "3" }));
        // In frames under h2's 256-byte chain threshold, as ours sends a message this size, so
        // that the head, the message and the trailers leave in one write.
        let message = frame::encode(&REPLY.encode_to_vec());
        let pieces = (0..message.len()).step_by(255).map(move |at| message.slice(at..message.len().min(at + 255)));
        let frames = futures_util::stream::iter(
            pieces.map(hyper::body::Frame::data).chain([hyper::body::Frame::trailers(trailers)]).map(Ok),
        );
        let mut resp = Response::new(http_body_util::StreamBody::new(frames).boxed());
        resp.headers_mut().insert("content-type", http::HeaderValue::from_static("application/grpc"));
        return Ok(resp);
    }
    let parsed: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let id = parsed.get("id").cloned().unwrap_or_default();
    let out = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"task":{TASK}}}}}"#);
    let mut resp = Response::new(Full::new(Bytes::from(out)).boxed());
    resp.headers_mut().insert("content-type", http::HeaderValue::from_static("application/json"));
    Ok(resp)
}

#[tokio::main]
async fn main() {
    // With no subscriber set, tracing's `log` feature (on in this workspace) turns every span
    // h2 opens into a `log` record: about 15% of the gRPC floor's instructions. Ours has a
    // subscriber filtering those spans out at their call site; so does the floor, for a fair floor.
    tracing::subscriber::set_global_default(tracing::subscriber::NoSubscriber::default()).expect("the only subscriber");
    let port: u16 = std::env::args().nth(1).and_then(|p| p.parse().ok()).unwrap_or(9100);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("bind");
    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    loop {
        let (tcp, _) = listener.accept().await.expect("accept");
        let _ = tcp.set_nodelay(true);
        let builder = builder.clone();
        tokio::spawn(async move {
            let _ = builder.serve_connection(TokioIo::new(tcp), hyper::service::service_fn(answer)).await;
        });
    }
}
