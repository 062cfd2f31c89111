//! The gRPC binding of the server end to end, with a raw HTTP/2 client (hyper) framing protobuf
//! messages by hand: bad input gets the right gRPC status (malformed protobuf, bad framing,
//! unknown methods, oversized or compressed messages, an expired `grpc-timeout`), a stream the
//! client leaves does not leak, service parameters travel as metadata, and a card that declares
//! no GRPC interface is not served over gRPC. The happy paths of every operation run in
//! `client.rs` and `tck_untested.rs` (BIND-EQUIV) over gRPC too.

use crate::support;

use a2a_native::grpc::{self, convert, frame, pb, status};
use a2a_native::model::{self, AgentCard};
use a2a_native::request::Method;
use a2a_native::server::{RequestHandler, Server, ServerConfig, Stores};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use prost::Message;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use support::agent::TestAgent;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

struct Srv {
    base: String,
    handler: Arc<RequestHandler>,
    h2: Client<HttpConnector, Full<Bytes>>,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

fn card(base: &str, grpc: bool, required_extension: bool) -> AgentCard {
    let mut interfaces =
        vec![json!({"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"})];
    if grpc {
        interfaces.push(json!({"url": grpc::target_of(base), "protocolBinding": "GRPC", "protocolVersion": "1.0"}));
    }
    let extensions = json!([
        {"uri": "urn:a2a-native:test:opt"},
        {"uri": "urn:a2a-native:test:req", "required": required_extension},
    ]);
    model::parse_value(json!({
        "name": "grpc test agent", "description": "d", "version": "1",
        "supportedInterfaces": interfaces,
        "capabilities": {"streaming": true, "extensions": extensions},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    }))
    .unwrap()
}

async fn start_with(grpc: bool, required_extension: bool) -> Srv {
    let mut config = ServerConfig::default();
    config.limits.max_body_bytes = 4096;
    start_configured(grpc, required_extension, config).await
}

async fn start_configured(grpc: bool, required_extension: bool, config: ServerConfig) -> Srv {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let handler = Arc::new(RequestHandler::new(
        Arc::new(TestAgent::standard()),
        card(&base, grpc, required_extension),
        Stores::memory(),
        config,
    ));
    let server = Server::new(handler.clone()).shutdown_timeout(Duration::from_secs(2));
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.serve(listener, async {
        let _ = stopped.await;
    }));
    let h2 = Client::builder(TokioExecutor::new()).http2_only(true).build_http();
    Srv { base, handler, h2, stop: Some(stop), task }
}

async fn start() -> Srv {
    start_with(true, false).await
}

/// What came back: HTTP status, headers, the messages, and the gRPC status (from the trailers
/// or, for a trailers-only answer, the headers).
struct Answer {
    http: u16,
    headers: http::HeaderMap,
    messages: Vec<Bytes>,
    status: status::Status,
}

impl Answer {
    fn code(&self) -> &'static str {
        status::name(self.status.code)
    }
    fn reason(&self) -> String {
        status::to_error(&self.status).kind.spec().reason.to_owned()
    }
}

impl Srv {
    async fn raw(&self, path: &str, headers: &[(&str, &str)], body: Bytes) -> http::Response<hyper::body::Incoming> {
        let content_type = headers.iter().find(|(k, _)| *k == "content-type").map_or("application/grpc", |(_, v)| *v);
        let mut req = http::Request::post(format!("{}{path}", self.base))
            .header("content-type", content_type)
            .header("te", "trailers");
        for (k, v) in headers.iter().filter(|(k, _)| *k != "content-type") {
            req = req.header(*k, *v);
        }
        let req = req.body(Full::new(body)).unwrap();
        tokio::time::timeout(Duration::from_secs(10), self.h2.request(req)).await.expect("no hang").unwrap()
    }

    async fn call(&self, path: &str, headers: &[(&str, &str)], body: Bytes) -> Answer {
        let resp = self.raw(path, headers, body).await;
        let http = resp.status().as_u16();
        let (head, mut body) = resp.into_parts();
        let mut messages = Vec::new();
        let mut status = status::from_headers(&head.headers);
        let mut decoder = frame::Decoder::new(1 << 20);
        while status.is_none() {
            let Some(f) = tokio::time::timeout(Duration::from_secs(10), body.frame()).await.expect("no hang") else {
                break;
            };
            match f.unwrap().into_data() {
                Ok(data) => {
                    decoder.push(&data);
                    while let Some(m) = decoder.next_message().unwrap() {
                        messages.push(m);
                    }
                }
                Err(f) => status = status::from_headers(&f.into_trailers().unwrap()),
            }
        }
        Answer { http, headers: head.headers, messages, status: status.expect("a grpc-status") }
    }

    async fn send(&self, method: Method, params: serde_json::Value, headers: &[(&str, &str)]) -> Answer {
        let body = frame::encode(&convert::encode_params(method, params).unwrap());
        self.call(&grpc::path(method), headers, body).await
    }

    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        let _ = tokio::time::timeout(Duration::from_secs(10), self.task).await;
    }
}

fn msg(text: &str) -> serde_json::Value {
    json!({"message": {"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": text}]}})
}

#[tokio::test]
async fn a_unary_call_and_its_metadata() {
    let s = start().await;
    let a = s.send(Method::SendMessage, msg("hello"), &[("a2a-extensions", "urn:a2a-native:test:opt, urn:x")]).await;
    assert_eq!((a.http, a.code()), (200, "OK"), "{:?}", a.status);
    assert_eq!(a.headers.get("content-type").unwrap(), "application/grpc");
    // Only the declared extension is activated, and echoed as response metadata.
    assert_eq!(a.headers.get("a2a-extensions").unwrap(), "urn:a2a-native:test:opt");
    let reply = pb::SendMessageResponse::decode(a.messages[0].clone()).unwrap();
    let Some(pb::send_message_response::Payload::Task(task)) = reply.payload else { panic!("{reply:?}") };
    assert_eq!(task.status.unwrap().state(), pb::TaskState::Completed);
    // A stream's head waits for the executor's first event: its activations are echoed too.
    let a = s.send(Method::SendStreamingMessage, msg("hello"), &[("a2a-extensions", "urn:a2a-native:test:opt")]).await;
    assert_eq!(a.headers.get("a2a-extensions").unwrap(), "urn:a2a-native:test:opt");
    assert!(a.messages.len() >= 2, "{:?}", a.messages);
    s.stop().await;
}

#[tokio::test]
async fn malformed_protobuf_and_framing_are_invalid_argument() {
    let s = start().await;
    let path = grpc::path(Method::SendMessage);
    // Not protobuf: a field header announcing more bytes than there are.
    let a = s.call(&path, &[], frame::encode(&[0x0a, 0xff, 0x01, 0x02])).await;
    assert_eq!((a.http, a.code(), a.reason().as_str()), (200, "INVALID_ARGUMENT", "JSON_PARSE"), "{:?}", a.status);
    // Valid protobuf, invalid A2A: a message without parts, named in a BadRequest.
    let a = s.send(Method::SendMessage, json!({"message": {"messageId": "m", "role": "ROLE_USER"}}), &[]).await;
    assert_eq!(a.code(), "INVALID_ARGUMENT");
    let err = status::to_error(&a.status);
    assert!(err.violations.iter().any(|v| v.field.contains("parts")), "{err:?}");
    // Field paths on the wire are the proto's (`google.rpc.BadRequest`: `message_id`, not the
    // JSON `messageId`); our client reads them back in JSON form, as the other bindings send.
    let a = s
        .send(
            Method::SendMessage,
            json!({"message": {"messageId": "", "role": "ROLE_USER", "parts": [{"text": "x"}]}}),
            &[],
        )
        .await;
    let wire: Vec<String> = a
        .status
        .details
        .iter()
        .filter(|d| d.type_url.ends_with("google.rpc.BadRequest"))
        .flat_map(|d| <status::BadRequest as prost::Message>::decode(d.value.as_slice()).unwrap().field_violations)
        .map(|v| v.field)
        .collect();
    assert_eq!(wire, ["message.message_id"], "{:?}", a.status);
    assert_eq!(status::to_error(&a.status).violations[0].field, "message.messageId");
    // Framing: cut short, empty, two messages in a unary call.
    let framing: [(&[u8], &str); 3] =
        [(&[0, 0, 0, 0, 9, 1], "cut short"), (&[], "has none"), (&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0], "has more")];
    for (body, says) in framing {
        let a = s.call(&path, &[], Bytes::copy_from_slice(body)).await;
        assert_eq!(a.code(), "INVALID_ARGUMENT", "{body:?}: {:?}", a.status);
        assert!(status::to_error(&a.status).message.contains(says), "{body:?}: {:?}", a.status);
    }
    s.stop().await;
}

#[tokio::test]
async fn unknown_methods_and_services_are_unimplemented() {
    let s = start().await;
    for path in ["/lf.a2a.v1.A2AService/Nope", "/a2a.v1.A2AService/SendMessage", "/grpc.health.v1.Health/List"] {
        let a = s.call(path, &[], frame::encode(&[])).await;
        assert_eq!((a.http, a.code()), (200, "UNIMPLEMENTED"), "{path}: {:?}", a.status);
    }
    // A codec other than protobuf is a gRPC call all the same: refused with a gRPC status (its
    // JSON is never read as protobuf), not routed as HTTP+JSON to a 404.
    let path = grpc::path(Method::GetTask);
    for content_type in ["application/grpc+json", "application/grpc+cbor"] {
        let a = s.call(&path, &[("content-type", content_type)], frame::encode(br#"{"id":"x"}"#)).await;
        assert_eq!((a.http, a.code()), (200, "UNIMPLEMENTED"), "{content_type}: {:?}", a.status);
        assert!(a.status.message.contains("protobuf"), "{:?}", a.status);
    }
    let a = s.call(&path, &[("content-type", "application/grpc+proto")], frame::encode(&[])).await;
    assert_ne!(a.code(), "UNIMPLEMENTED", "{:?}", a.status);
    s.stop().await;
}

#[tokio::test]
async fn oversized_and_compressed_messages_are_refused() {
    let s = start().await;
    let path = grpc::path(Method::SendMessage);
    // A real message over the 4 KiB limit.
    let a = s.send(Method::SendMessage, msg(&"x".repeat(8000)), &[]).await;
    assert_eq!(a.code(), "RESOURCE_EXHAUSTED", "{:?}", a.status);
    assert!(a.status.message.contains("larger than 4096 bytes"), "the message's limit: {:?}", a.status);
    // A length prefix announcing 1 GiB, with a few bytes behind it.
    let a = s.call(&path, &[], Bytes::from_static(&[0, 0x40, 0, 0, 0, 1, 2, 3])).await;
    assert_eq!(a.code(), "RESOURCE_EXHAUSTED", "{:?}", a.status);
    // gzip is read (Java clients compress when told to): a gzip message is served, and one over
    // the limit once inflated is refused as one over it on the wire.
    let plain = convert::encode_params(Method::SendMessage, msg("zipped")).unwrap();
    let gzip = |message: &[u8]| {
        use std::io::Write;
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(message).unwrap();
        let mut framed = frame::encode(&z.finish().unwrap()).to_vec();
        framed[0] = 1;
        Bytes::from(framed)
    };
    let a = s.call(&path, &[("grpc-encoding", "gzip")], gzip(&plain)).await;
    assert_eq!(a.code(), "OK", "{:?}", a.status);
    assert_eq!(a.messages.len(), 1);
    let big = convert::encode_params(Method::SendMessage, msg(&"y".repeat(8000))).unwrap();
    let packed = gzip(&big);
    assert!(packed.len() < 4096, "small on the wire");
    let a = s.call(&path, &[("grpc-encoding", "gzip")], packed).await;
    assert_eq!(a.code(), "RESOURCE_EXHAUSTED", "{:?}", a.status);
    // An encoding this server does not read: UNIMPLEMENTED, and the answer says which would do
    // (gRPC's compression.md).
    let mut compressed = frame::encode(&plain).to_vec();
    compressed[0] = 1;
    let a = s.call(&path, &[("grpc-encoding", "snappy")], Bytes::from(compressed.clone())).await;
    assert_eq!(a.code(), "UNIMPLEMENTED", "{:?}", a.status);
    assert_eq!(a.headers.get("grpc-accept-encoding").unwrap(), "gzip, identity");
    // gzip named but not gzip inside: a broken peer.
    let a = s.call(&path, &[("grpc-encoding", "gzip")], Bytes::from(compressed.clone())).await;
    assert_eq!(a.code(), "INTERNAL", "{:?}", a.status);
    // Compressed without naming an encoding, or a flag that is neither 0 nor 1: a broken peer.
    let a = s.call(&path, &[], Bytes::from(compressed.clone())).await;
    assert_eq!(a.code(), "INTERNAL", "{:?}", a.status);
    compressed[0] = 2;
    let a = s.call(&path, &[("grpc-encoding", "identity")], Bytes::from(compressed)).await;
    assert_eq!(a.code(), "INTERNAL", "{:?}", a.status);
    // The server is fine afterwards.
    assert_eq!(s.send(Method::SendMessage, msg("hello"), &[]).await.code(), "OK");
    s.stop().await;
}

/// A length prefix over the limit is refused as soon as it arrives, though the rest of the
/// body never does (it was answered when the body read timed out, 30 s later).
#[tokio::test]
async fn a_message_announced_over_the_limit_is_refused_before_its_body() {
    use futures_util::StreamExt;
    type Chunk = Result<hyper::body::Frame<Bytes>, std::convert::Infallible>;
    type Held = http_body_util::StreamBody<futures_util::stream::BoxStream<'static, Chunk>>;
    let s = start().await;
    let h2: Client<HttpConnector, Held> = Client::builder(TokioExecutor::new()).http2_only(true).build_http();
    // Whole in one chunk, and split inside the prefix.
    for chunks in [vec![&[0u8, 0x40, 0, 0, 0, 1, 2][..]], vec![&[0u8, 0x40][..], &[0, 0, 0, 1, 2][..]]] {
        let frames: Vec<Chunk> =
            chunks.into_iter().map(|c| Ok(hyper::body::Frame::data(Bytes::copy_from_slice(c)))).collect();
        let held = futures_util::stream::iter(frames).chain(futures_util::stream::pending()).boxed();
        let req = http::Request::post(format!("{}{}", s.base, grpc::path(Method::SendMessage)))
            .header("content-type", "application/grpc")
            .body(http_body_util::StreamBody::new(held))
            .unwrap();
        let resp =
            tokio::time::timeout(Duration::from_secs(5), h2.request(req)).await.expect("refused at once").unwrap();
        let status = status::from_headers(resp.headers()).expect("a trailers-only answer");
        assert_eq!(status::name(status.code), "RESOURCE_EXHAUSTED", "{status:?}");
    }
    s.stop().await;
}

#[tokio::test]
async fn an_expired_deadline_is_deadline_exceeded() {
    let s = start().await;
    // "slow" takes 300 ms; the call allows 50.
    let a = s.send(Method::SendMessage, msg("slow"), &[("grpc-timeout", "50m")]).await;
    assert_eq!(a.code(), "DEADLINE_EXCEEDED", "{:?}", a.status);
    // A stream past its deadline ends with the same status after the events it got.
    let a = s.send(Method::SendStreamingMessage, msg("wait"), &[("grpc-timeout", "200m")]).await;
    assert_eq!(a.code(), "DEADLINE_EXCEEDED", "{:?}", a.status);
    assert!(!a.messages.is_empty());
    // A deadline over before the call begins is exceeded, however quick the call: nothing is
    // done (the task is not made).
    for over in ["0n", "0S", "1n"] {
        let a = s.send(Method::SendMessage, msg("direct"), &[("grpc-timeout", over)]).await;
        assert_eq!(a.code(), "DEADLINE_EXCEEDED", "{over}: {:?}", a.status);
        let a = s.send(Method::GetExtendedAgentCard, json!({}), &[("grpc-timeout", over)]).await;
        assert_eq!(a.code(), "DEADLINE_EXCEEDED", "{over}: {:?}", a.status);
    }
    // One deadline for the whole call: its body's wait counts against it too (the body comes
    // 150 ms late, then the call takes 300 ms: over a deadline of 400 ms).
    let message = frame::encode(&convert::encode_params(Method::SendMessage, msg("slow")).unwrap());
    let late = http_body_util::StreamBody::new(Box::pin(futures_util::stream::once(async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        Ok::<_, std::convert::Infallible>(hyper::body::Frame::data(message))
    })));
    let req = http::Request::post(format!("{}{}", s.base, grpc::path(Method::SendMessage)))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("grpc-timeout", "400m")
        .body(late)
        .unwrap();
    let h2 = Client::builder(TokioExecutor::new()).http2_only(true).build_http();
    let resp = tokio::time::timeout(Duration::from_secs(5), h2.request(req)).await.unwrap().unwrap();
    // A refusal is trailers-only: the status is in the head.
    let (head, body) = resp.into_parts();
    let trailers = body.collect().await.unwrap().trailers().cloned();
    let status = status::from_headers(&head.headers).or_else(|| trailers.as_ref().and_then(status::from_headers));
    assert_eq!(status.map(|s| status::name(s.code)), Some("DEADLINE_EXCEEDED"), "{head:?} {trailers:?}");
    // A malformed timeout is refused.
    let a = s.send(Method::SendMessage, msg("hello"), &[("grpc-timeout", "soon")]).await;
    assert_eq!(a.code(), "INVALID_ARGUMENT", "{:?}", a.status);
    s.stop().await;
}

#[tokio::test]
async fn a_stream_the_client_leaves_is_released_and_the_task_goes_on() {
    let s = start().await;
    let resp = s
        .raw(
            &grpc::path(Method::SendStreamingMessage),
            &[],
            frame::encode(&convert::encode_params(Method::SendStreamingMessage, msg("wait")).unwrap()),
        )
        .await;
    let mut body = resp.into_body();
    let mut decoder = frame::Decoder::new(1 << 20);
    let first = loop {
        let data = body.frame().await.unwrap().unwrap().into_data().unwrap();
        decoder.push(&data);
        if let Some(m) = decoder.next_message().unwrap() {
            break m;
        }
    };
    let event = convert::decode_event(&first).unwrap();
    let task_id = match event {
        model::StreamResponse::Task(t) => t.id,
        other => panic!("{other:?}"),
    };
    drop(body); // the client cancels the call (RST_STREAM)
    // The task is still running and can be canceled; then nothing is held for it.
    let got = s.send(Method::GetTask, json!({"id": task_id}), &[]).await;
    assert_eq!(got.code(), "OK");
    let canceled = s.send(Method::CancelTask, json!({"id": task_id}), &[]).await;
    assert_eq!(canceled.code(), "OK", "{:?}", canceled.status);
    for _ in 0..100 {
        if s.handler.live_tasks() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(s.handler.live_tasks(), 0, "a left stream still holds its task");
    s.stop().await;
}

#[tokio::test]
async fn at_shutdown_a_stream_whose_task_goes_on_ends_unavailable() {
    // Not OK, which a client reads as the stream's end: the task goes on (the agent returned
    // with it WORKING), so a retryable status.
    let mut s = start().await;
    let sent = s.send(Method::SendMessage, msg("idle"), &[]).await;
    assert_eq!(sent.code(), "OK", "{:?}", sent.status);
    let reply = convert::decode_result(Method::SendMessage, &sent.messages[0]).unwrap();
    assert_eq!(reply["task"]["status"]["state"], "TASK_STATE_WORKING", "{reply}");
    let stop = s.stop.take().unwrap();
    let (answer, ()) = tokio::join!(s.send(Method::SubscribeToTask, json!({"id": reply["task"]["id"]}), &[]), async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let _ = stop.send(());
    });
    assert_eq!(answer.messages.len(), 1, "the snapshot");
    assert_eq!((answer.code(), answer.reason()), ("UNAVAILABLE", "UNAVAILABLE".to_owned()), "{:?}", answer.status);
    let _ = tokio::time::timeout(Duration::from_secs(10), s.task).await;
}

#[tokio::test]
async fn service_parameters_are_checked_as_metadata() {
    let s = start_with(true, true).await;
    // A required extension not activated.
    let a = s.send(Method::SendMessage, msg("hello"), &[]).await;
    assert_eq!((a.code(), a.reason().as_str()), ("FAILED_PRECONDITION", "EXTENSION_SUPPORT_REQUIRED"));
    let ok = s.send(Method::SendMessage, msg("hello"), &[("a2a-extensions", "urn:a2a-native:test:req")]).await;
    assert_eq!(ok.code(), "OK", "{:?}", ok.status);
    // Versions: 0.3 is another package; an unknown one is refused; 1.x is served.
    let req = ("a2a-extensions", "urn:a2a-native:test:req");
    for (v, want) in [("0.3", "VERSION_NOT_SUPPORTED"), ("9.0", "VERSION_NOT_SUPPORTED")] {
        let a = s.send(Method::GetTask, json!({"id": "x"}), &[("a2a-version", v), req]).await;
        assert_eq!(a.reason(), want, "{v}");
        // What this service speaks: naming 0.3 too sent a client that followed it back here.
        let supported = status::to_error(&a.status).metadata.get("supportedVersions").cloned();
        assert_eq!(supported, Some(json!("1.0")), "{v}");
    }
    let a = s.send(Method::GetTask, json!({"id": "x"}), &[("a2a-version", "1.1"), req]).await;
    assert_eq!(a.code(), "NOT_FOUND");
    s.stop().await;
}

#[tokio::test]
async fn a_card_without_a_grpc_interface_is_not_served_over_grpc() {
    let s = start_with(false, false).await;
    let a = s.send(Method::SendMessage, msg("hello"), &[]).await;
    assert_eq!(a.code(), "UNIMPLEMENTED", "{:?}", a.status);
    // The health service is about the process: served all the same.
    let a = s.call("/grpc.health.v1.Health/Check", &[], health_request("")).await;
    assert_eq!((a.code(), health_status(&a.messages[0])), ("OK", 1), "{:?}", a.status);
    s.stop().await;
}

#[tokio::test]
async fn grpc_over_http1_gets_a_status_not_a_broken_connection() {
    let s = start().await;
    let h1 = reqwest::Client::builder().http1_only().build().unwrap();
    // gRPC needs HTTP/2 (a success's status travels in trailers): refused before anything runs,
    // with the status readable in the headers, and the connection kept.
    for _ in 0..2 {
        let body = frame::encode(&convert::encode_params(Method::SendMessage, msg("hello")).unwrap());
        let resp = h1
            .post(format!("{}{}", s.base, grpc::path(Method::SendMessage)))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(body.to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 505);
        assert_eq!(resp.headers().get("grpc-status").unwrap(), "12");
        assert_eq!(resp.headers().get("grpc-message").unwrap(), "gRPC requires HTTP/2");
        assert!(resp.bytes().await.unwrap().is_empty());
    }
    assert_eq!(s.handler.live_tasks(), 0);
    let listed = s.send(Method::ListTasks, json!({}), &[]).await;
    let listed = pb::ListTasksResponse::decode(listed.messages[0].clone()).unwrap();
    assert!(listed.tasks.is_empty(), "nothing ran: {listed:?}");
    s.stop().await;
}

#[tokio::test]
async fn a_refused_caller_holding_its_body_open_is_answered_at_once() {
    use a2a_native::server::{BearerTokens, Principal};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let bearer = BearerTokens::new().with_token("secret", Principal::named("alice", Vec::new()));
    let handler = RequestHandler::new(
        Arc::new(TestAgent::standard()),
        card(&base, true, false),
        Stores::memory(),
        ServerConfig::default(),
    )
    .with_authenticator(Arc::new(bearer));
    let server = Server::new(Arc::new(handler)).shutdown_timeout(Duration::from_secs(2));
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.serve(listener, async {
        let _ = stopped.await;
    }));
    // A request whose body never ends, with a wrong token: UNAUTHENTICATED at once, not after
    // the body read's timeout.
    type Endless = http_body_util::StreamBody<
        futures_util::stream::Pending<Result<hyper::body::Frame<Bytes>, std::convert::Infallible>>,
    >;
    let h2: Client<HttpConnector, Endless> = Client::builder(TokioExecutor::new()).http2_only(true).build_http();
    let req = http::Request::post(format!("{base}{}", grpc::path(Method::GetTask)))
        .header("content-type", "application/grpc")
        .header("authorization", "Bearer wrong")
        .body(http_body_util::StreamBody::new(futures_util::stream::pending()))
        .unwrap();
    let resp = tokio::time::timeout(Duration::from_secs(5), h2.request(req)).await.expect("answered at once").unwrap();
    assert_eq!(resp.headers().get("grpc-status").unwrap(), "16");
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
}

#[tokio::test]
async fn large_messages_past_the_body_budget_are_unavailable() {
    let mut config = ServerConfig::default();
    config.limits.max_body_bytes = 200_000;
    config.limits.max_body_bytes_in_flight = 200_000;
    let s = Arc::new(start_configured(true, false, config).await);
    let large = |word: &str| msg(&format!("{word} {}", "x".repeat(150_000)));
    // A slow call holds its 150 kB share until it is answered (300 ms).
    let slow = tokio::spawn({
        let s = s.clone();
        async move { s.send(Method::SendMessage, large("slow"), &[]).await.code() }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let refused = s.send(Method::SendMessage, large("echo"), &[]).await;
    assert_eq!(refused.code(), "UNAVAILABLE", "{:?}", refused.status);
    assert!(refused.status.message.contains("maxBodyBytesInFlight"), "{:?}", refused.status);
    // Small messages have a budget of their own.
    assert_eq!(s.send(Method::SendMessage, msg("hello"), &[]).await.code(), "OK");
    assert_eq!(slow.await.unwrap(), "OK");
    assert_eq!(s.send(Method::SendMessage, large("echo"), &[]).await.code(), "OK", "its share came back");
    Arc::into_inner(s).expect("the only holder").stop().await;
}

#[tokio::test]
async fn stream_messages_a_client_does_not_read_hold_the_answer_budget() {
    let mut config = ServerConfig::default();
    config.limits.max_body_bytes = 600_000;
    config.limits.max_body_bytes_in_flight = 1024 * 1024;
    let s = start_configured(true, false, config).await;
    // A task waiting for input whose snapshot, every stream's first message, is about 400 kB.
    let sent = s.send(Method::SendMessage, msg(&format!("input {}", "x".repeat(400_000))), &[]).await;
    assert_eq!(sent.code(), "OK", "{:?}", sent.status);
    let reply = convert::decode_result(Method::SendMessage, &sent.messages[0]).unwrap();
    let id = reply["task"]["id"].as_str().unwrap().to_owned();

    // A client that subscribes again and again and reads 16 KiB of each stream.
    let tcp = tokio::net::TcpStream::connect(s.base.trim_start_matches("http://")).await.unwrap();
    let (sender, conn) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .initial_stream_window_size(16 * 1024)
        .initial_connection_window_size(64 * 1024 * 1024)
        .handshake::<_, Full<Bytes>>(hyper_util::rt::TokioIo::new(tcp))
        .await
        .unwrap();
    let conn = tokio::spawn(conn);
    let subscribe = || {
        let mut sender = sender.clone();
        let body = frame::encode(&convert::encode_params(Method::SubscribeToTask, json!({"id": id})).unwrap());
        let req = http::Request::post(format!("{}{}", s.base, grpc::path(Method::SubscribeToTask)))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(Full::new(body))
            .unwrap();
        async move { tokio::time::timeout(Duration::from_secs(5), sender.send_request(req)).await.unwrap().unwrap() }
    };
    // Two snapshots take most of the 1 MiB budget while unread; the third stream ends at once,
    // UNAVAILABLE, with no message.
    let held = [subscribe().await, subscribe().await];
    tokio::time::sleep(Duration::from_millis(200)).await;
    let third = tokio::time::timeout(Duration::from_secs(5), subscribe().await.into_body().collect())
        .await
        .expect("the stream ends")
        .unwrap();
    let trailers = third.trailers().cloned().expect("a status");
    let status = status::from_headers(&trailers).unwrap();
    assert_eq!(status::name(status.code), "UNAVAILABLE", "{status:?}");
    assert!(status.message.contains("maxBodyBytesInFlight"), "{status:?}");
    assert!(third.to_bytes().is_empty(), "no message");
    // The client goes: their shares come back, and a new stream gets its snapshot.
    drop(held);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut again = subscribe().await.into_body();
    let mut decoder = frame::Decoder::new(1 << 20);
    let first = loop {
        let data = tokio::time::timeout(Duration::from_secs(5), again.frame()).await.unwrap().unwrap().unwrap();
        decoder.push(&data.into_data().unwrap());
        if let Some(m) = decoder.next_message().unwrap() {
            break m;
        }
    };
    assert!(first.len() > 400_000, "{}", first.len());
    conn.abort();
    s.stop().await;
}

/// A gRPC peer that compresses its answers with gzip whatever the client asked (as grpcio
/// servers configured with compression do, a2a-sdk's among them): our client reads them, on a
/// unary call and on a stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_reads_a_peer_that_answers_in_gzip() {
    use a2a_native::client::{Binding, CardCache, Client as A2aClient};
    use a2a_native::model::{GetTaskRequest, StreamResponse, SubscribeToTaskRequest};
    use http_body_util::{StreamBody, combinators::BoxBody};
    use hyper::body::Frame;
    use std::convert::Infallible;

    fn gzip(message: &[u8]) -> Bytes {
        use std::io::Write;
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(message).unwrap();
        let mut framed = frame::encode(&z.finish().unwrap()).to_vec();
        framed[0] = 1;
        Bytes::from(framed)
    }
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = json!({"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}});
    let accepted = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = accepted.clone();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else { return };
            let (task, seen) = (task.clone(), seen.clone());
            let service = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let (task, seen) = (task.clone(), seen.clone());
                async move {
                    let path = req.uri().path().to_owned();
                    let body: BoxBody<Bytes, Infallible> = if path.ends_with("agent-card.json") {
                        let card = json!({
                            "name": "gz", "description": "d", "version": "1",
                            "supportedInterfaces": [{"url": format!("{addr}"), "protocolBinding": "GRPC", "protocolVersion": "1.0"}],
                            "capabilities": {"streaming": true}, "defaultInputModes": ["text/plain"],
                            "defaultOutputModes": ["text/plain"], "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
                        });
                        let resp = hyper::Response::builder().header("content-type", "application/json");
                        return Ok::<_, Infallible>(
                            resp.body(Full::new(Bytes::from(card.to_string())).boxed()).unwrap(),
                        );
                    } else {
                        if let Some(v) = req.headers().get("grpc-accept-encoding") {
                            seen.lock().unwrap().push(v.to_str().unwrap().to_owned());
                        }
                        let message = if path.ends_with("/GetTask") {
                            convert::encode_result(Method::GetTask, &task).unwrap()
                        } else {
                            convert::encode_event(&StreamResponse::Task(serde_json::from_value(task).unwrap())).unwrap()
                        };
                        let mut trailers = http::HeaderMap::new();
                        trailers.insert("grpc-status", "0".parse().unwrap());
                        let frames = vec![Ok(Frame::data(gzip(&message))), Ok(Frame::trailers(trailers))];
                        BodyExt::boxed(StreamBody::new(futures_util::stream::iter(frames)))
                    };
                    let resp = hyper::Response::builder()
                        .header("content-type", "application/grpc")
                        .header("grpc-encoding", "gzip");
                    Ok(resp.body(body).unwrap())
                }
            });
            tokio::spawn(async move {
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(hyper_util::rt::TokioIo::new(tcp), service)
                    .await;
            });
        }
    });
    let client = A2aClient::builder()
        .card_cache(Arc::new(CardCache::new()))
        .preferred_binding(Binding::Grpc)
        .connect(&format!("http://{addr}"))
        .await
        .unwrap();
    let got = client.get_task(GetTaskRequest { id: "t1".into(), ..Default::default() }).await.unwrap();
    assert_eq!(got.id, "t1");
    let mut stream =
        client.subscribe_to_task(SubscribeToTaskRequest { id: "t1".into(), ..Default::default() }).await.unwrap();
    match stream.next().await {
        Some(Ok(StreamResponse::Task(t))) => assert_eq!(t.id, "t1"),
        other => panic!("{other:?}"),
    }
    // The client says it reads gzip.
    assert!(accepted.lock().unwrap().iter().all(|v| v.contains("gzip")), "{:?}", accepted.lock().unwrap());
}

/// A `grpc.health.v1.HealthCheckRequest` naming `service`, framed.
fn health_request(service: &str) -> Bytes {
    let mut message = vec![0x0a, service.len() as u8];
    message.extend_from_slice(service.as_bytes());
    frame::encode(if service.is_empty() { &[] } else { &message })
}

/// The `status` of a `HealthCheckResponse` (1 SERVING, 2 NOT_SERVING, 3 SERVICE_UNKNOWN).
fn health_status(message: &[u8]) -> u8 {
    assert_eq!((message.len(), message[0]), (2, 0x08), "{message:?}");
    message[1]
}

#[tokio::test]
async fn the_grpc_health_service_answers_probes_without_credentials() {
    use a2a_native::server::{BearerTokens, Principal};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let bearer = BearerTokens::new().with_token("secret", Principal::named("alice", Vec::new()));
    // A card that requires a bearer token, and a GRPC interface: the probe needs neither
    // (without the interface the A2A service would answer UNIMPLEMENTED).
    let mut secured = model::to_value(&card(&base, true, false));
    secured["securitySchemes"] = json!({"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}});
    secured["securityRequirements"] = json!([{"schemes": {"bearer": {"list": []}}}]);
    let handler = Arc::new(
        RequestHandler::new(
            Arc::new(TestAgent::standard()),
            model::parse_value(secured).unwrap(),
            Stores::memory(),
            ServerConfig::default(),
        )
        .with_authenticator(Arc::new(bearer)),
    );
    let server = Server::new(handler.clone()).shutdown_timeout(Duration::from_secs(2));
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.serve(listener, async {
        let _ = stopped.await;
    }));
    let h2 = Client::builder(TokioExecutor::new()).http2_only(true).build_http();
    let s = Srv { base, handler, h2, stop: Some(stop), task };
    let check = "/grpc.health.v1.Health/Check";
    for service in ["", "lf.a2a.v1.A2AService"] {
        let a = s.call(check, &[], health_request(service)).await;
        assert_eq!(a.code(), "OK", "{service:?}: {:?}", a.status);
        assert_eq!(health_status(&a.messages[0]), 1, "{service:?} SERVING");
    }
    let a = s.call(check, &[], health_request("no.such.Service")).await;
    assert_eq!(a.code(), "NOT_FOUND", "{:?}", a.status);
    let a = s.call("/grpc.health.v1.Health/List", &[], health_request("")).await;
    assert_eq!(a.code(), "UNIMPLEMENTED", "{:?}", a.status);
    let a = s.call(check, &[], Bytes::from_static(b"\x00\x00\x00\x00\x02\xff\xff")).await;
    assert_eq!(a.code(), "INVALID_ARGUMENT", "{:?}", a.status);
    // The A2A service itself still wants credentials.
    let a = s.send(Method::GetTask, json!({"id": "x"}), &[]).await;
    assert_eq!(a.code(), "UNAUTHENTICATED", "{:?}", a.status);

    // Watch: the status at once, an unknown service as SERVICE_UNKNOWN (the stream stays
    // open), and NOT_SERVING as the server stops, then OK.
    let unknown = s.raw("/grpc.health.v1.Health/Watch", &[], health_request("no.such.Service")).await;
    let mut unknown = unknown.into_body();
    let first = tokio::time::timeout(Duration::from_secs(5), unknown.frame()).await.unwrap().unwrap().unwrap();
    let mut decoder = frame::Decoder::new(1 << 10);
    decoder.push(&first.into_data().unwrap());
    assert_eq!(health_status(&decoder.next_message().unwrap().unwrap()), 3);
    drop(unknown);
    let watch = s.raw("/grpc.health.v1.Health/Watch", &[], health_request("")).await;
    assert_eq!(watch.headers().get("content-type").unwrap(), "application/grpc");
    let mut body = watch.into_body();
    let mut statuses = Vec::new();
    let mut trailers = None;
    let mut decoder = frame::Decoder::new(1 << 10);
    let mut stop = s.stop;
    while trailers.is_none() {
        let f = tokio::time::timeout(Duration::from_secs(10), body.frame()).await.expect("no hang");
        let Some(f) = f else { break };
        match f.unwrap().into_data() {
            Ok(data) => {
                decoder.push(&data);
                while let Some(m) = decoder.next_message().unwrap() {
                    statuses.push(health_status(&m));
                }
                if let Some(stop) = stop.take() {
                    let _ = stop.send(());
                }
            }
            Err(f) => trailers = Some(f.into_trailers().unwrap()),
        }
    }
    assert_eq!(statuses, [1, 2], "SERVING, then NOT_SERVING at shutdown");
    assert_eq!(trailers.expect("trailers").get("grpc-status").unwrap(), "0");
    let _ = tokio::time::timeout(Duration::from_secs(10), s.task).await;
}
