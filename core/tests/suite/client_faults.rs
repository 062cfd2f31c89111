//! The client against servers that misbehave on purpose (a scripted raw HTTP/1.1 server on
//! 127.0.0.1:0): streams cut short (resumed with SubscribeToTask, without duplicates), invalid
//! JSON, wrong JSON-RPC ids, 500/503 (retried only for idempotent calls), slow answers (typed
//! timeouts), oversized SSE events, malformed cards; plus the card cache (ETag / 304 /
//! max-age), the 0.2 card path, the 0.3 wire form, and credentials on the wire.

use crate::support;

use a2a_native::ErrorKind;
use a2a_native::client::{ApiKey, Binding, CardCache, Client, ProtocolVersion, RetryPolicy};
use a2a_native::model::{
    GetTaskRequest, Message, Role, SendMessageRequest, SendMessageResponse, StreamResponse, TaskState,
};
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::client::{Action, Opts, Recorded, kinds, raw_card, raw_server, sse, start, v03_card};

const CARD: &str = "/.well-known/agent-card.json";

fn fast() -> RetryPolicy {
    RetryPolicy { max_retries: 2, initial_backoff: Duration::from_millis(10), max_backoff: Duration::from_millis(50) }
}

async fn connect(base: &str, binding: Binding) -> Client {
    Client::builder()
        .preferred_binding(binding)
        .retry_policy(fast())
        .timeout(Duration::from_secs(5))
        .card_cache(Arc::new(CardCache::new()))
        .connect(base)
        .await
        .unwrap()
}

fn send(text: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::text(Role::User, text))
}

fn get(id: &str) -> GetTaskRequest {
    GetTaskRequest { id: id.into(), ..Default::default() }
}

fn task(state: &str, ts: &str) -> Value {
    json!({"id": "t1", "contextId": "c1", "status": {"state": state, "timestamp": ts}})
}

fn status(state: &str, ts: &str) -> Value {
    json!({"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": state, "timestamp": ts}}})
}

fn artifact() -> Value {
    json!({"artifactUpdate": {"taskId": "t1", "contextId": "c1", "artifact": {"artifactId": "a1", "parts": [{"text": "x"}]}}})
}

/// Frames a StreamResponse for the request's binding (JSON-RPC envelope, or bare).
fn frame(req: &Recorded, value: Value) -> Vec<u8> {
    if req.path() == "/" { sse(&req.rpc_result(value)) } else { sse(&value) }
}

/// The operation a request is, for either binding.
fn op(req: &Recorded) -> String {
    if req.path() == "/" {
        return req.rpc_method();
    }
    match (req.method.as_str(), req.path()) {
        ("GET", CARD) => "card".into(),
        ("POST", "/message:stream") => "SendStreamingMessage".into(),
        ("POST", "/message:send") => "SendMessage".into(),
        (_, p) if p.ends_with(":subscribe") => "SubscribeToTask".into(),
        ("GET", p) if p.starts_with("/tasks/") => "GetTask".into(),
        other => format!("{other:?}"),
    }
}

fn card_for(req: &Recorded, binding: Binding) -> Action {
    Action::json(200, &raw_card(&req.base(), binding.as_str()))
}

async fn collect_items(stream: a2a_native::client::EventStream) -> Vec<Result<StreamResponse, a2a_native::A2AError>> {
    tokio::time::timeout(Duration::from_secs(10), stream.collect::<Vec<_>>()).await.expect("stream stalled")
}

/// The events of a streaming send of "go" to the agent at `base`, every one of them good.
async fn streamed(base: &str, binding: Binding) -> Vec<StreamResponse> {
    let client = connect(base, binding).await;
    let items = collect_items(client.send_streaming_message(send("go")).await.unwrap()).await;
    items.into_iter().map(|i| i.unwrap()).collect()
}

/// How a first stream stops before its task ends.
#[derive(Clone, Copy, Debug)]
enum Stop {
    /// Cut in the middle of an event.
    Cut,
    /// The UnavailableError a server shutting down ends its open streams with (a rolling
    /// restart): the task goes on.
    Unavailable,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_stream_resumes_with_subscribe_to_task_without_duplicates() {
    for (binding, stop) in
        [Binding::JsonRpc, Binding::HttpJson].into_iter().flat_map(|b| [(b, Stop::Cut), (b, Stop::Unavailable)])
    {
        let server = raw_server(move |req, _| match op(req).as_str() {
            "card" => card_for(req, binding),
            "SendStreamingMessage" => Action::stream(vec![
                frame(req, json!({"task": task("TASK_STATE_SUBMITTED", "2025-01-01T00:00:01Z")})),
                frame(req, status("TASK_STATE_WORKING", "2025-01-01T00:00:02Z")),
                match stop {
                    Stop::Cut => b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"res".to_vec(),
                    Stop::Unavailable => unavailable_event(req),
                },
            ]),
            // The snapshot holds what was already seen: skipped; then the live events.
            "SubscribeToTask" => Action::stream(vec![
                frame(req, json!({"task": task("TASK_STATE_WORKING", "2025-01-01T00:00:02Z")})),
                frame(req, artifact()),
                frame(req, status("TASK_STATE_COMPLETED", "2025-01-01T00:00:03Z")),
            ]),
            other => panic!("unexpected {other}"),
        })
        .await;
        let events = streamed(&server.base, binding).await;
        assert_eq!(
            kinds(&events),
            ["task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "artifact:a1", "status:TASK_STATE_COMPLETED"],
            "{binding:?} {stop:?}"
        );
        let ops: Vec<String> = server.requests().iter().map(op).collect();
        assert_eq!(ops, ["card", "SendStreamingMessage", "SubscribeToTask"], "{binding:?} {stop:?}");
        let subscribe = &server.requests()[2];
        assert_eq!(subscribe.header("a2a-version"), Some("1.0"));
        if binding == Binding::JsonRpc {
            assert_eq!(subscribe.json()["params"]["id"], "t1");
        } else {
            assert_eq!(subscribe.path(), "/tasks/t1:subscribe");
        }
    }
}

/// An update without its contextId (as @a2a-js/sdk agents publish a cancel's last status) is
/// taken, with the task's context filled in, on both bindings; a stream's other checks hold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_without_its_context_gets_the_tasks() {
    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let server = raw_server(move |req, _| match op(req).as_str() {
            "card" => card_for(req, binding),
            "SendStreamingMessage" => Action::stream(vec![
                frame(req, json!({"task": task("TASK_STATE_WORKING", "2025-01-01T00:00:01Z")})),
                frame(req, json!({"artifactUpdate": {"taskId": "t1", "artifact": {"artifactId": "a1", "parts": [{"text": "x"}]}}})),
                frame(req, json!({"statusUpdate": {"taskId": "t1", "contextId": "", "status": {"state": "TASK_STATE_CANCELED"}}})),
            ]),
            other => panic!("unexpected {other}"),
        })
        .await;
        let events = streamed(&server.base, binding).await;
        assert_eq!(
            kinds(&events),
            ["task:TASK_STATE_WORKING", "artifact:a1", "status:TASK_STATE_CANCELED"],
            "{binding:?}"
        );
        for event in &events[1..] {
            let context = match event {
                StreamResponse::StatusUpdate(e) => &e.context_id,
                StreamResponse::ArtifactUpdate(e) => &e.context_id,
                other => panic!("{other:?}"),
            };
            assert_eq!(context, "c1", "{binding:?}");
        }
    }
}

/// An SSE event with an `id:` line.
fn with_id(id: u64, event: Vec<u8>) -> Vec<u8> {
    [format!("id: {id}\n").into_bytes(), event].concat()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_stream_resumes_after_the_last_event_id() {
    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let server = raw_server(move |req, _| match op(req).as_str() {
            "card" => card_for(req, binding),
            "SendStreamingMessage" => Action::stream(vec![
                with_id(1, frame(req, json!({"task": task("TASK_STATE_SUBMITTED", "2025-01-01T00:00:01Z")}))),
                with_id(2, frame(req, status("TASK_STATE_WORKING", "2025-01-01T00:00:02Z"))),
                b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"res".to_vec(),
            ]),
            // A server with a log replays exactly what came after the id it is given.
            "SubscribeToTask" if req.header("last-event-id") == Some("2") => Action::stream(vec![
                with_id(3, frame(req, artifact())),
                with_id(4, frame(req, status("TASK_STATE_COMPLETED", "2025-01-01T00:00:03Z"))),
            ]),
            other => panic!("unexpected {other} (last-event-id {:?})", req.header("last-event-id")),
        })
        .await;
        let events = streamed(&server.base, binding).await;
        assert_eq!(
            kinds(&events),
            ["task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "artifact:a1", "status:TASK_STATE_COMPLETED"],
            "{binding:?}"
        );
        assert_eq!(
            server.requests().iter().map(op).collect::<Vec<_>>(),
            ["card", "SendStreamingMessage", "SubscribeToTask"]
        );
        assert_eq!(server.requests()[1].header("last-event-id"), None, "a fresh stream sends none");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resubscription_snapshot_with_news_is_surfaced() {
    let server = raw_server(|req, _| match op(req).as_str() {
        "card" => card_for(req, Binding::JsonRpc),
        "SendStreamingMessage" => Action::stream(vec![
            frame(req, json!({"task": task("TASK_STATE_SUBMITTED", "2025-01-01T00:00:01Z")})),
            frame(req, status("TASK_STATE_WORKING", "2025-01-01T00:00:02Z")),
            b"data: {\"jsonrpc\":".to_vec(),
        ]),
        // Cut before the end; the task moved on meanwhile.
        "SubscribeToTask" => {
            Action::stream(vec![frame(req, json!({"task": task("TASK_STATE_INPUT_REQUIRED", "2025-01-01T00:00:05Z")}))])
        }
        other => panic!("unexpected {other}"),
    })
    .await;
    let client = connect(&server.base, Binding::JsonRpc).await;
    let events: Vec<_> = collect_items(client.send_streaming_message(send("go")).await.unwrap())
        .await
        .into_iter()
        .map(|i| i.unwrap())
        .collect();
    assert_eq!(
        kinds(&events),
        ["task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "task:TASK_STATE_INPUT_REQUIRED"]
    );
    assert_eq!(server.requests().len(), 3, "the stream ended at the interrupted state");
}

/// A server answering ListTasks with empty pages, each with a fresh next page token, ends
/// `list_all_tasks` with InvalidAgentResponse after 16 such pages; tasks on a page in between
/// reset the count; a token handed back unchanged ends the listing at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_all_tasks_ends_on_endless_empty_pages() {
    let server = raw_server(|req, n| match op(req).as_str() {
        "card" => card_for(req, Binding::JsonRpc),
        // Request 1 is the card: pages 1..; page 10 holds a task; page 30 repeats its token.
        "ListTasks" => {
            let tasks = if n == 10 { vec![task("TASK_STATE_COMPLETED", "2025-01-01T00:00:00Z")] } else { vec![] };
            let token = if n == 30 { req.json()["params"]["pageToken"].clone() } else { json!(format!("p{n}")) };
            Action::json(
                200,
                &req.rpc_result(json!({"tasks": tasks, "nextPageToken": token, "pageSize": 50, "totalSize": 1})),
            )
        }
        other => panic!("unexpected {other}"),
    })
    .await;
    let client = connect(&server.base, Binding::JsonRpc).await;
    let mut pager = Box::pin(client.list_all_tasks(Default::default()));
    let mut items = Vec::new();
    let all = async {
        while let Some(item) = pager.next().await {
            items.push(item);
        }
    };
    tokio::time::timeout(Duration::from_secs(10), all).await.expect("the listing never ended");
    // Asked again after its end (as a binding's iterator may be): still the end, not a panic.
    assert!(pager.next().await.is_none());
    assert_eq!(items.len(), 2, "the task, then the error");
    assert!(items[0].is_ok());
    let e = items[1].as_ref().unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidAgentResponse, "{e}");
    // 9 empty pages, the task's page, then 16 empty pages.
    assert_eq!(server.requests().iter().filter(|r| op(r) == "ListTasks").count(), 26);
}

/// Redirects are followed within the agent's origin only: a request carries credentials (here
/// an API key in a header of its own, which reqwest would not strip), so a redirect to another
/// host or port is not followed and the call fails with the redirect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_followed_only_within_the_origin() {
    let elsewhere =
        raw_server(|req, _| Action::json(200, &req.rpc_result(task("TASK_STATE_COMPLETED", "2025-01-01T00:00:00Z"))))
            .await;
    let away = format!("{}/", elsewhere.base);
    let redirect =
        |to: String| Action::Respond { status: 307, headers: vec![("location".into(), to)], body: Vec::new() };
    let server = raw_server(move |req, _| match (req.method.as_str(), req.path()) {
        ("GET", CARD) => card_for(req, Binding::JsonRpc),
        ("POST", "/") if req.rpc_method() == "GetTask" => redirect(format!("{}/moved", req.base())),
        ("POST", "/") => redirect(away.clone()),
        ("POST", "/moved") => Action::json(200, &req.rpc_result(task("TASK_STATE_COMPLETED", "2025-01-01T00:00:00Z"))),
        other => panic!("unexpected {other:?}"),
    })
    .await;
    let client = Client::builder()
        .credentials(Arc::new(ApiKey::header("x-secret-key", "s3cret")))
        .retry_policy(fast())
        .card_cache(Arc::new(CardCache::new()))
        .connect(&server.base)
        .await
        .unwrap();
    // The same origin: followed, with the key.
    assert_eq!(client.get_task(get("t1")).await.unwrap().id, "t1");
    let moved: Vec<_> = server.requests().into_iter().filter(|r| r.path() == "/moved").collect();
    assert_eq!(moved.len(), 1);
    assert_eq!(moved[0].header("x-secret-key"), Some("s3cret"));
    // Another origin: not followed; the key never reaches it.
    assert!(client.send_message(send("hi")).await.is_err());
    assert!(elsewhere.requests().is_empty(), "the other origin was called");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_ended_while_disconnected_is_read_with_get_task() {
    let server = raw_server(|req, _| match op(req).as_str() {
        "card" => card_for(req, Binding::JsonRpc),
        "SendStreamingMessage" => {
            Action::stream(vec![frame(req, status("TASK_STATE_WORKING", "2025-01-01T00:00:02Z")), b"data: {".to_vec()])
        }
        "SubscribeToTask" => Action::json(200, &req.rpc_error(-32004, "Task t1 is in a terminal state")),
        "GetTask" => Action::json(200, &req.rpc_result(task("TASK_STATE_COMPLETED", "2025-01-01T00:00:09Z"))),
        other => panic!("unexpected {other}"),
    })
    .await;
    let client = connect(&server.base, Binding::JsonRpc).await;
    let events: Vec<_> = collect_items(client.send_streaming_message(send("go")).await.unwrap())
        .await
        .into_iter()
        .map(|i| i.unwrap())
        .collect();
    assert_eq!(kinds(&events), ["status:TASK_STATE_WORKING", "task:TASK_STATE_COMPLETED"]);
    let ops: Vec<String> = server.requests().iter().map(op).collect();
    assert_eq!(ops, ["card", "SendStreamingMessage", "SubscribeToTask", "GetTask"]);
}

/// The error event our server ends an open stream with when it shuts down, in the request's
/// binding.
fn unavailable_event(req: &Recorded) -> Vec<u8> {
    let err = a2a_native::A2AError::new(ErrorKind::Unavailable, "the server is shutting down");
    if req.path() == "/" {
        sse(&json!({"jsonrpc": "2.0", "id": req.json()["id"], "error": err.to_jsonrpc()}))
    } else {
        sse(&err.to_http_body())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_mid_stream_is_followed_only_when_unavailable_with_a_task() {
    // An UnavailableError once the task is known is followed like a cut (see
    // `a_cut_stream_resumes_with_subscribe_to_task_without_duplicates`). Before any event there
    // is no task to follow: the error is the stream's last item. Any other error ends the
    // stream too.
    for (kind, code) in [(ErrorKind::Unavailable, -32603), (ErrorKind::Internal, -32603)] {
        let server = raw_server(move |req, _| match op(req).as_str() {
            "card" => card_for(req, Binding::JsonRpc),
            "SendStreamingMessage" if kind == ErrorKind::Unavailable => Action::stream(vec![unavailable_event(req)]),
            "SendStreamingMessage" => Action::stream(vec![
                frame(req, status("TASK_STATE_WORKING", "2025-01-01T00:00:02Z")),
                sse(&req.rpc_error(code, "the agent broke")),
            ]),
            other => panic!("unexpected {other}"),
        })
        .await;
        let client = connect(&server.base, Binding::JsonRpc).await;
        let items = collect_items(client.send_streaming_message(send("go")).await.unwrap()).await;
        let last = items.last().expect("an item").as_ref().unwrap_err();
        assert_eq!(last.kind, kind, "{items:?}");
        let ops: Vec<String> = server.requests().iter().map(op).collect();
        assert_eq!(ops, ["card", "SendStreamingMessage"], "{kind:?}: no resubscription");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_close_ends_the_stream_even_with_the_task_active() {
    // SDK servers close the stream when the agent returns, the task still WORKING: that is the
    // end of this stream, not a drop, so no resubscription (which could wait forever).
    let server = raw_server(|req, _| match op(req).as_str() {
        "card" => card_for(req, Binding::JsonRpc),
        "SendStreamingMessage" => Action::stream(vec![
            frame(req, json!({"task": task("TASK_STATE_SUBMITTED", "2025-01-01T00:00:01Z")})),
            frame(req, status("TASK_STATE_WORKING", "2025-01-01T00:00:02Z")),
        ]),
        other => panic!("unexpected {other}"),
    })
    .await;
    let client = connect(&server.base, Binding::JsonRpc).await;
    let events: Vec<_> = collect_items(client.send_streaming_message(send("go")).await.unwrap())
        .await
        .into_iter()
        .map(|i| i.unwrap())
        .collect();
    assert_eq!(kinds(&events), ["task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING"]);
    let ops: Vec<String> = server.requests().iter().map(op).collect();
    assert_eq!(ops, ["card", "SendStreamingMessage"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnection_is_bounded_and_a_cut_without_a_task_is_an_error() {
    // Every subscription is cut again before anything new: three attempts, then an error.
    let server = raw_server(|req, _| match op(req).as_str() {
        "card" => card_for(req, Binding::JsonRpc),
        "SendStreamingMessage" => {
            Action::stream(vec![frame(req, status("TASK_STATE_WORKING", "2025-01-01T00:00:02Z")), b"data: {".to_vec()])
        }
        "SubscribeToTask" => Action::stream(vec![
            frame(req, json!({"task": task("TASK_STATE_WORKING", "2025-01-01T00:00:02Z")})),
            b"data: {".to_vec(),
        ]),
        other => panic!("unexpected {other}"),
    })
    .await;
    let client = Client::builder()
        .retry_policy(fast())
        .stream_reconnects(3)
        .timeout(Duration::from_secs(5))
        .connect(&server.base)
        .await
        .unwrap();
    let items = collect_items(client.send_streaming_message(send("go")).await.unwrap()).await;
    assert_eq!(items.len(), 2, "{items:?}");
    assert!(items[0].is_ok());
    let err = items[1].as_ref().unwrap_err();
    assert_eq!(err.kind, ErrorKind::Transport, "{err}");
    assert!(err.message.contains("3 reconnection attempts"), "{err}");
    assert_eq!(server.requests().iter().filter(|r| op(r) == "SubscribeToTask").count(), 3);

    // Cut before any event: no task to resubscribe to, so a typed error.
    let server = raw_server(|req, _| match op(req).as_str() {
        "card" => card_for(req, Binding::JsonRpc),
        _ => Action::stream(vec![b"data: {\"jsonrpc\":".to_vec()]),
    })
    .await;
    let client = connect(&server.base, Binding::JsonRpc).await;
    let items = collect_items(client.send_streaming_message(send("go")).await.unwrap()).await;
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].as_ref().unwrap_err().kind, ErrorKind::Transport);
}

/// A body that cannot be JSON for a plain reason says that reason: empty, compressed though
/// no compression was asked for, a web page; a card redirect that is not followed names where
/// it led.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_answer_says_why() {
    let gzip = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    let with = |headers: &[(&str, &str)], body: Vec<u8>| Action::Respond {
        status: 200,
        headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        body,
    };
    let answers = vec![
        (with(&[("content-type", "application/json")], Vec::new()), "the body is empty"),
        (
            with(&[("content-type", "application/json"), ("content-encoding", "gzip")], gzip.clone()),
            "compressed (Content-Encoding: gzip)",
        ),
        (with(&[("content-type", "application/json")], gzip), "gzip data, with no Content-Encoding"),
        (with(&[("content-type", "text/html")], b"<html>login</html>".to_vec()), "a web page (text/html)"),
    ];
    for (answer, says) in answers {
        // The card.
        let card_answer = answer.clone();
        let server = raw_server(move |_, _| card_answer.clone()).await;
        let err = Client::builder().card_cache(Arc::new(CardCache::new())).connect(&server.base).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidAgentResponse, "{err}");
        assert!(err.message.contains(says), "card: {err}");
        // A JSON-RPC answer (an empty one is no answer), and an HTTP+JSON one.
        for binding in [Binding::JsonRpc, Binding::HttpJson] {
            if binding == Binding::HttpJson && says == "the body is empty" {
                continue; // an empty HTTP+JSON body is `{}`
            }
            let answer = answer.clone();
            let server = raw_server(move |req, _| match op(req).as_str() {
                "card" => card_for(req, binding),
                _ => answer.clone(),
            })
            .await;
            let err = connect(&server.base, binding).await.get_task(get("t1")).await.unwrap_err();
            assert_eq!(err.kind, ErrorKind::InvalidAgentResponse, "{binding:?}: {err}");
            assert!(err.message.contains(says), "{binding:?}: {err}");
        }
    }
    let server = raw_server(|req, _| Action::Respond {
        status: 302,
        headers: vec![("location".into(), req.path().to_owned())],
        body: Vec::new(),
    })
    .await;
    let err = Client::builder().card_cache(Arc::new(CardCache::new())).connect(&server.base).await.unwrap_err();
    assert!(err.message.contains(&format!("a redirect to \"{CARD}\" not followed")), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_json_and_wrong_ids_are_invalid_agent_responses() {
    let server = raw_server(|req, _| match (op(req).as_str(), req.json()["params"]["id"].as_str()) {
        ("card", _) => card_for(req, Binding::JsonRpc),
        ("GetTask", Some("garbage")) => Action::text(200, "this is not json"),
        ("GetTask", Some("wrong-id")) => Action::json(
            200,
            &json!({"jsonrpc": "2.0", "id": 424242, "result": task("TASK_STATE_COMPLETED", "2025-01-01T00:00:00Z")}),
        ),
        ("GetTask", Some("bad-task")) => Action::json(200, &req.rpc_result(json!({"id": "t1"}))),
        ("SendStreamingMessage", _) if req.json()["params"]["message"]["parts"][0]["text"] == "plain" => {
            Action::json(200, &req.rpc_error(-32001, "no such task"))
        }
        ("SendStreamingMessage", _) => Action::stream(vec![sse(
            &json!({"jsonrpc": "2.0", "id": 999, "result": status("TASK_STATE_WORKING", "2025-01-01T00:00:00Z")}),
        )]),
        other => panic!("unexpected {other:?}"),
    })
    .await;
    let client = connect(&server.base, Binding::JsonRpc).await;
    let err = client.get_task(get("garbage")).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidAgentResponse, "{err}");
    let err = client.get_task(get("wrong-id")).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidAgentResponse, "{err}");
    assert!(err.message.contains("424242"), "{err}");
    let err = client.get_task(get("bad-task")).await.unwrap_err();
    assert_eq!(
        (err.kind, err.violations[0].field.as_str()),
        (ErrorKind::InvalidAgentResponse, "result.status"),
        "{err}"
    );
    // A stream event with another id is an error item that ends the stream.
    let items = collect_items(client.send_streaming_message(send("go")).await.unwrap()).await;
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].as_ref().unwrap_err().kind, ErrorKind::InvalidAgentResponse);
    // A plain JSON-RPC error answering a streaming call is a typed error.
    let err = client.send_streaming_message(send("plain")).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::TaskNotFound, "{err}");

    // HTTP+JSON: a body that is not JSON.
    let server = raw_server(|req, _| match op(req).as_str() {
        "card" => card_for(req, Binding::HttpJson),
        _ => Action::Respond {
            status: 200,
            headers: vec![("content-type".into(), "application/a2a+json".into())],
            body: b"{".to_vec(),
        },
    })
    .await;
    let client = connect(&server.base, Binding::HttpJson).await;
    assert_eq!(client.get_task(get("t1")).await.unwrap_err().kind, ErrorKind::InvalidAgentResponse);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_idempotent_calls_are_retried() {
    // GetTask "busy": always 503; "broken": always 500; others succeed. SendMessage: 503.
    let server = raw_server(|req, _| match op(req).as_str() {
        "card" => card_for(req, Binding::JsonRpc),
        "GetTask" if req.json()["params"]["id"] == "broken" => Action::text(500, "boom"),
        "GetTask" if req.json()["params"]["id"] == "busy" => Action::text(503, "busy"),
        "GetTask" => Action::json(200, &req.rpc_result(task("TASK_STATE_COMPLETED", "2025-01-01T00:00:00Z"))),
        "SendMessage" => Action::text(503, "busy"),
        other => panic!("unexpected {other}"),
    })
    .await;
    let gets = |server: &support::client::RawServer| server.requests().iter().filter(|r| op(r) == "GetTask").count();
    let client = connect(&server.base, Binding::JsonRpc).await;
    client.get_task(get("t1")).await.unwrap();
    assert_eq!(gets(&server), 1);

    let err = client.get_task(get("busy")).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Unavailable, "{err}");
    assert_eq!(gets(&server), 1 + 3, "one attempt and two retries");

    let err = client.get_task(get("broken")).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Internal, "{err}");
    assert_eq!(gets(&server), 4 + 1, "500 is not retried");

    let err = client.send_message(send("hi")).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Unavailable);
    assert_eq!(server.requests().iter().filter(|r| op(r) == "SendMessage").count(), 1, "SendMessage is never retried");

    let no_retries =
        Client::builder().max_retries(0).card_cache(Arc::new(CardCache::new())).connect(&server.base).await.unwrap();
    no_retries.get_task(get("busy")).await.unwrap_err();
    assert_eq!(gets(&server), 5 + 1);

    // 503 twice, then success: the call succeeds after two retries.
    let counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = counter.clone();
    let server = raw_server(move |req, _| match op(req).as_str() {
        "card" => card_for(req, Binding::HttpJson),
        "GetTask" if seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 2 => {
            Action::Respond { status: 503, headers: vec![("retry-after".into(), "0".into())], body: b"{}".to_vec() }
        }
        "GetTask" => Action::json(200, &task("TASK_STATE_COMPLETED", "2025-01-01T00:00:00Z")),
        other => panic!("unexpected {other}"),
    })
    .await;
    let client = connect(&server.base, Binding::HttpJson).await;
    assert_eq!(client.get_task(get("t1")).await.unwrap().status.state, TaskState::Completed);
    assert_eq!(counter.load(std::sync::atomic::Ordering::SeqCst), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_answers_time_out_with_a_typed_error() {
    let server = raw_server(|req, _| match op(req).as_str() {
        "card" => card_for(req, Binding::JsonRpc),
        "GetTask" => Action::Delay(Duration::from_secs(5), Box::new(Action::text(200, "late"))),
        // A stream that starts, then goes silent.
        "SendStreamingMessage" => Action::Stream {
            parts: vec![
                (Duration::ZERO, frame(req, status("TASK_STATE_WORKING", "2025-01-01T00:00:00Z"))),
                (Duration::from_secs(5), Vec::new()),
            ],
        },
        "SendMessage" => Action::Delay(Duration::from_secs(5), Box::new(Action::text(200, "late"))),
        other => panic!("unexpected {other}"),
    })
    .await;
    let client = Client::builder()
        .timeout(Duration::from_millis(300))
        .stream_idle_timeout(Some(Duration::from_millis(300)))
        .stream_reconnects(0)
        .max_retries(0)
        .card_cache(Arc::new(CardCache::new()))
        .connect(&server.base)
        .await
        .unwrap();
    let started = Instant::now();
    let err = client.get_task(get("t1")).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Timeout, "{err}");
    let err = client.send_message(send("hi")).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Timeout, "{err}");
    let items = collect_items(client.send_streaming_message(send("go")).await.unwrap()).await;
    assert_eq!(items.len(), 2);
    assert_eq!(items[1].as_ref().unwrap_err().kind, ErrorKind::Timeout);
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_event_is_a_typed_error() {
    let server = raw_server(|req, _| match op(req).as_str() {
        "card" => card_for(req, Binding::JsonRpc),
        _ => {
            let mut big = status("TASK_STATE_WORKING", "2025-01-01T00:00:00Z");
            big["statusUpdate"]["metadata"] = json!({"pad": "x".repeat(8192)});
            Action::stream(vec![frame(req, big), frame(req, status("TASK_STATE_COMPLETED", "2025-01-01T00:00:01Z"))])
        }
    })
    .await;
    let client = Client::builder()
        .max_event_bytes(4096)
        .card_cache(Arc::new(CardCache::new()))
        .connect(&server.base)
        .await
        .unwrap();
    let items = collect_items(client.send_streaming_message(send("go")).await.unwrap()).await;
    assert_eq!(items.len(), 1, "{items:?}");
    let err = items[0].as_ref().unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidAgentResponse);
    assert!(err.message.contains("larger than 4096"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_card_names_the_field() {
    let server = raw_server(|req, _| {
        let mut card = raw_card(&req.base(), "JSONRPC");
        card["supportedInterfaces"][0].as_object_mut().unwrap().remove("protocolBinding");
        Action::json(200, &card)
    })
    .await;
    let err = Client::builder().card_cache(Arc::new(CardCache::new())).connect(&server.base).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidAgentResponse);
    assert_eq!(err.violations[0].field, "supportedInterfaces[0].protocolBinding");
    assert!(err.message.contains("supportedInterfaces[0].protocolBinding"), "{err}");

    let server = raw_server(|_, _| Action::text(200, "<html>")).await;
    let err = Client::builder().card_cache(Arc::new(CardCache::new())).connect(&server.base).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidAgentResponse, "{err}");
}

/// Every connect asks: a cached card (by its ETag) is revalidated, and a 304 reuses it, whatever
/// `max-age` the agent gave (even one beyond any clock); `no-store` keeps nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_cache_revalidates_with_etag_on_every_connect() {
    const HUGE: &str = "max-age=18446744073709551615";
    let server = raw_server(|req, _| {
        if req.header("if-none-match") == Some("\"v1\"") {
            return Action::Respond {
                status: 304,
                headers: vec![("etag".into(), "\"v1\"".into()), ("cache-control".into(), HUGE.into())],
                body: Vec::new(),
            };
        }
        let body = raw_card(&req.base(), "JSONRPC").to_string().into_bytes();
        let store = if req.path().contains("no-store") { "no-store" } else { HUGE };
        Action::Respond {
            status: 200,
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("etag".into(), "\"v1\"".into()),
                ("cache-control".into(), store.into()),
            ],
            body,
        }
    })
    .await;
    let cache = Arc::new(CardCache::new());
    let first = Client::builder().card_cache(cache.clone()).connect(&server.base).await.unwrap();
    for _ in 0..2 {
        let again = Client::builder().card_cache(cache.clone()).connect(&server.base).await.unwrap();
        assert_eq!(first.card(), again.card());
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].header("if-none-match"), None);
    for later in &requests[1..] {
        assert_eq!(later.header("if-none-match"), Some("\"v1\""), "revalidated with the ETag");
    }
    // A fresh cache fetches plainly.
    Client::builder().card_cache(Arc::new(CardCache::new())).connect(&server.base).await.unwrap();
    assert_eq!(server.requests()[3].header("if-none-match"), None);
    // no-store: nothing kept, nothing revalidated.
    let cache = Arc::new(CardCache::new());
    let url = format!("{}/no-store/card.json", server.base);
    Client::builder().card_cache(cache.clone()).connect(&url).await.unwrap();
    assert_eq!(cache.len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_0_2_card_path_is_tried_after_404() {
    let server = raw_server(|req, _| match req.path() {
        "/.well-known/agent.json" => Action::json(200, &raw_card(&req.base(), "HTTP+JSON")),
        _ => Action::json(404, &json!({"error": {"code": 404, "message": "not here"}})),
    })
    .await;
    let client = Client::builder().card_cache(Arc::new(CardCache::new())).connect(&server.base).await.unwrap();
    assert_eq!(client.binding(), Binding::HttpJson);
    let paths: Vec<String> = server.requests().iter().map(|r| r.path().to_owned()).collect();
    assert_eq!(paths, [CARD, "/.well-known/agent.json"]);

    // Neither path: the error says where it looked, and that no card is served there (not the
    // TaskNotFound a 404 means from an operation), without quoting a web page.
    let page = format!("<!doctype html><html><body>{}</body></html>", "Not Found ".repeat(40));
    let server = raw_server(move |_, _| Action::text(404, &page)).await;
    let err = Client::builder().card_cache(Arc::new(CardCache::new())).connect(&server.base).await.unwrap_err();
    assert!(err.message.contains("/.well-known/agent.json"), "{err}");
    assert!(err.message.starts_with(&format!("no agent card at {}{CARD} (nor at", server.base)), "{err}");
    assert!(err.message.contains("HTTP 404 Not Found") && !err.message.contains("<html"), "{err}");
    assert_eq!(err.kind, ErrorKind::InvalidAgentResponse, "{err}");
    assert_eq!(server.requests().len(), 2);
    // A short text answer is quoted; a 401 stays Unauthenticated.
    let server = raw_server(|_, _| Action::text(401, "sign in first")).await;
    let err = Client::builder().card_cache(Arc::new(CardCache::new())).connect(&server.base).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Unauthenticated, "{err}");
    assert!(err.message.contains("HTTP 401 Unauthorized (\"sign in first\")"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a2a_0_3_on_the_wire() {
    let server = raw_server(|req, _| match (req.path(), req.rpc_method().as_str()) {
        (CARD, _) => Action::json(200, &v03_card(&format!("{}/rpc", req.base()))),
        ("/rpc", "message/send") => Action::json(
            200,
            &req.rpc_result(json!({"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "completed"},
                                   "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": "ok"}]}]})),
        ),
        ("/rpc", "message/stream") => Action::stream(vec![
            sse(&req.rpc_result(json!({"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "submitted"}}))),
            sse(&req.rpc_result(json!({"kind": "status-update", "taskId": "t1", "contextId": "c1", "status": {"state": "working"}, "final": false}))),
            sse(&req.rpc_result(json!({"kind": "status-update", "taskId": "t1", "contextId": "c1", "status": {"state": "input-required"}, "final": true}))),
        ]),
        ("/rpc", "tasks/get") => Action::json(200, &req.rpc_error(-32001, "Task not found")),
        other => panic!("unexpected {other:?}"),
    })
    .await;
    let client = Client::builder()
        .extensions(["urn:x"])
        .card_cache(Arc::new(CardCache::new()))
        .connect(&server.base)
        .await
        .unwrap();
    assert_eq!(
        (client.protocol_version(), client.url()),
        (ProtocolVersion::V03, format!("{}/rpc", server.base).as_str())
    );

    let task = match client.send_message(send("hi")).await.unwrap() {
        SendMessageResponse::Task(t) => t,
        other => panic!("{other:?}"),
    };
    assert_eq!((task.status.state, task.artifacts[0].parts[0].as_text()), (TaskState::Completed, Some("ok")));
    let sent = server.requests().into_iter().find(|r| r.rpc_method() == "message/send").unwrap();
    assert_eq!(sent.header("a2a-version"), None, "0.3 calls carry no A2A-Version");
    assert_eq!(sent.header("x-a2a-extensions"), Some("urn:x"));
    let message = &sent.json()["params"]["message"];
    assert_eq!((message["kind"].as_str(), message["role"].as_str()), (Some("message"), Some("user")));
    assert_eq!(message["parts"][0], json!({"kind": "text", "text": "hi"}));

    let items = collect_items(client.send_streaming_message(send("go")).await.unwrap()).await;
    let events: Vec<_> = items.into_iter().map(|i| i.unwrap()).collect();
    assert_eq!(
        kinds(&events),
        ["task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "status:TASK_STATE_INPUT_REQUIRED"]
    );
    assert_eq!(client.get_task(get("t1")).await.unwrap_err().kind, ErrorKind::TaskNotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_written_0_3_card_in_front_of_our_server() {
    let agent = start(Opts::default()).await;
    let target = format!("{}/", agent.base);
    let front = raw_server(move |_, _| Action::json(200, &v03_card(&target))).await;
    let client = Client::builder().card_cache(Arc::new(CardCache::new())).connect(&front.base).await.unwrap();
    assert_eq!((client.binding(), client.protocol_version()), (Binding::JsonRpc, ProtocolVersion::V03));
    assert_eq!(client.card().name, "legacy");
    match client.send_message(send("hello")).await.unwrap() {
        SendMessageResponse::Task(t) => assert_eq!(t.status.state, TaskState::Completed),
        other => panic!("{other:?}"),
    }
    let items = collect_items(client.send_streaming_message(send("input")).await.unwrap()).await;
    let events: Vec<_> = items.into_iter().map(|i| i.unwrap()).collect();
    assert!(kinds(&events).last().unwrap().ends_with("TASK_STATE_INPUT_REQUIRED"), "{:?}", kinds(&events));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_and_extra_headers_on_the_wire() {
    let server = raw_server(|req, _| match op(req).as_str() {
        "card" => card_for(req, Binding::HttpJson),
        _ => Action::json(200, &task("TASK_STATE_COMPLETED", "2025-01-01T00:00:00Z")),
    })
    .await;
    let header_key = Client::builder()
        .credentials(Arc::new(ApiKey::header("X-API-Key", "k1")))
        .header("x-trace", "abc")
        .card_cache(Arc::new(CardCache::new()))
        .connect(&server.base)
        .await
        .unwrap();
    header_key.get_task(get("t1")).await.unwrap();
    let query_key = Client::builder()
        .credentials(Arc::new(ApiKey::query("key", "k 2")))
        .from_card(header_key.card().clone())
        .unwrap();
    query_key.get_task(get("t1")).await.unwrap();
    // A configured header of the provider's name is replaced, not sent beside it (two
    // credentials are ambiguous, and servers refuse them).
    let both = Client::builder()
        .credentials(Arc::new(ApiKey::header("X-API-Key", "k3")))
        .header("x-api-key", "configured")
        .from_card(header_key.card().clone())
        .unwrap();
    both.get_task(get("t1")).await.unwrap();
    let requests = server.requests();
    let third = &requests[3];
    let keys: Vec<&str> =
        third.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("x-api-key")).map(|(_, v)| v.as_str()).collect();
    assert_eq!(keys, ["k3"]);
    let card = &requests[0];
    assert_eq!(card.header("x-api-key"), None, "the public card is fetched without credentials");
    assert_eq!(card.header("x-trace"), Some("abc"));
    let first = &requests[1];
    assert_eq!((first.header("x-api-key"), first.header("x-trace")), (Some("k1"), Some("abc")));
    assert_eq!(first.header("a2a-version"), Some("1.0"));
    let second = &requests[2];
    assert_eq!(second.target, "/tasks/t1?key=k+2");
}

/// Our client reads on past AUTH_REQUIRED (the agent may resume once credentials arrive out of
/// band), but not on a resubscribed stream: after a drop nothing may run the task any more (a
/// restarted server, an execution that returned meanwhile), and a subscription to it would
/// wait for the next message, so the stream ends there instead of hanging.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resubscribed_stream_ends_at_auth_required() {
    let server = raw_server(|req, _| match op(req).as_str() {
        "card" => card_for(req, Binding::JsonRpc),
        "SendStreamingMessage" => Action::stream(vec![
            frame(req, json!({"task": task("TASK_STATE_SUBMITTED", "2025-01-01T00:00:01Z")})),
            frame(req, status("TASK_STATE_AUTH_REQUIRED", "2025-01-01T00:00:02Z")),
            b"data: {".to_vec(),
        ]),
        // The snapshot, then nothing for a long time (a server keeping the subscription open).
        "SubscribeToTask" => Action::Stream {
            parts: vec![
                (Duration::ZERO, frame(req, json!({"task": task("TASK_STATE_AUTH_REQUIRED", "2025-01-01T00:00:02Z")}))),
                (Duration::from_secs(60), b": still here\n\n".to_vec()),
            ],
        },
        other => panic!("unexpected {other}"),
    })
    .await;
    let client =
        Client::builder().retry_policy(fast()).timeout(Duration::from_secs(5)).connect(&server.base).await.unwrap();
    let stream = client.send_streaming_message(send("go")).await.unwrap();
    let items = tokio::time::timeout(Duration::from_secs(10), collect_items(stream)).await.expect("the stream ended");
    let events: Vec<_> = items.into_iter().map(|i| i.unwrap()).collect();
    assert_eq!(kinds(&events).last().map(String::as_str), Some("status:TASK_STATE_AUTH_REQUIRED"), "{events:?}");
    assert_eq!(server.requests().iter().filter(|r| op(r) == "SubscribeToTask").count(), 1);
}

/// A 0.3 resubscription opens with no snapshot, and a2a-sdk 0.3 holds one to a task that
/// ended open for ever with keep-alives only: our stream, cut after its agent failed, waited
/// there for good. Against a 0.3 agent the task is read first; ended, it is the stream's end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_0_3_stream_cut_after_its_task_ended_reads_the_task_instead_of_waiting() {
    let server = raw_server(|req, _| match (req.path(), req.rpc_method().as_str()) {
        (CARD, _) => Action::json(200, &v03_card(&format!("{}/rpc", req.base()))),
        ("/rpc", "message/stream") => Action::stream(vec![
            sse(&req.rpc_result(json!({"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "submitted"}}))),
            sse(&req.rpc_result(json!({"kind": "status-update", "taskId": "t1", "contextId": "c1", "status": {"state": "working"}, "final": false}))),
            b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"res".to_vec(),
        ]),
        ("/rpc", "tasks/get") => Action::json(
            200,
            &req.rpc_result(json!({"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "failed"}})),
        ),
        ("/rpc", "tasks/resubscribe") => Action::Stream {
            parts: (0..200).map(|_| (Duration::from_millis(100), b": ping\n\n".to_vec())).collect(),
        },
        other => panic!("unexpected {other:?}"),
    })
    .await;
    let client = Client::builder()
        .retry_policy(fast())
        .card_cache(Arc::new(CardCache::new()))
        .connect(&server.base)
        .await
        .unwrap();
    let items = collect_items(client.send_streaming_message(send("go")).await.unwrap()).await;
    let events: Vec<_> = items.into_iter().map(|i| i.unwrap()).collect();
    assert_eq!(kinds(&events), ["task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "task:TASK_STATE_FAILED"]);
    let ops: Vec<String> = server.requests().iter().map(|r| r.rpc_method()).filter(|m| !m.is_empty()).collect();
    assert!(!ops.iter().any(|m| m == "tasks/resubscribe"), "{ops:?}");
}

/// What the 0.3 schema allows and a2a-sdk 0.3 serves is read, public card and extended card
/// alike: no `protocolVersion` (the schema's default), an empty description, no input modes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lean_0_3_cards_are_read_public_and_extended_alike() {
    let server = raw_server(|req, _| {
        let mut card = v03_card(&format!("{}/rpc", req.base()));
        card.as_object_mut().unwrap().remove("protocolVersion");
        card["description"] = json!("");
        card["defaultInputModes"] = json!([]);
        match (req.path(), req.rpc_method().as_str()) {
            (CARD, _) => Action::json(200, &card),
            ("/rpc", "agent/getAuthenticatedExtendedCard") => Action::json(200, &req.rpc_result(card)),
            other => panic!("unexpected {other:?}"),
        }
    })
    .await;
    let client = Client::builder().card_cache(Arc::new(CardCache::new())).connect(&server.base).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V03);
    assert_eq!(client.card().description, "");
    let extended = client.get_extended_agent_card().await.unwrap();
    assert!(extended.default_input_modes.is_empty(), "{extended:?}");
}

/// An agent URL without a scheme (`localhost:9999` parses as the scheme `localhost`) is said as
/// such, and one of another scheme names it.
#[tokio::test]
async fn a_url_without_a_scheme_says_what_to_write() {
    let Err(e) = Client::builder().connect("localhost:9999").await else { panic!("connected") };
    assert_eq!(e.kind, ErrorKind::InvalidParams);
    assert!(e.message.contains("has no scheme: write http://localhost:9999"), "{e}");
    let Err(e) = Client::builder().connect("ftp://h/").await else { panic!("connected") };
    assert!(e.message.contains(r#"the scheme "ftp" is not http or https"#), "{e}");
}
