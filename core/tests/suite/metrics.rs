//! The metrics endpoint against real traffic: requests on the three bindings counted by
//! method and outcome (errors by their ErrorInfo reason, refusals before routing included),
//! the open-streams gauge while a stream lives and after it ends, task states, events applied,
//! store latency; and the endpoint's own answers (only GET /metrics, OpenMetrics text).

use crate::support;

use a2a_native::client::{Binding, CardCache, Client, StaticBearer};
use a2a_native::model::{CancelTaskRequest, GetTaskRequest, Message, Role, SendMessageRequest, SendMessageResponse};
use a2a_native::server::{BearerTokens, Principal, RequestHandler, Server, ServerConfig, Stores, serve_metrics};
use std::sync::Arc;
use std::time::Duration;
use support::agent::TestAgent;
use support::client::{Opts, test_card};
use tokio::net::TcpListener;

struct Running {
    base: String,
    metrics_url: String,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn start() -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card = test_card(&base, &Opts::default());
    let handler = RequestHandler::new(Arc::new(TestAgent::standard()), card, Stores::memory(), ServerConfig::default())
        .with_authenticator(Arc::new(BearerTokens::new().with_token("good", Principal::named("tester", vec![]))));
    let server = Server::new(Arc::new(handler));
    let metrics_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let metrics_url = format!("http://{}/metrics", metrics_listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let stopped = futures_util::FutureExt::shared(async move {
        let _ = stopped.await;
    });
    tokio::spawn(serve_metrics(metrics_listener, server.metrics(), stopped.clone()));
    tokio::spawn(server.serve(listener, stopped));
    Running { base, metrics_url, _stop: stop }
}

async fn client(base: &str, binding: Binding, token: &str) -> Client {
    Client::builder()
        .preferred_binding(binding)
        .credentials(Arc::new(StaticBearer::new(token)))
        .timeout(Duration::from_secs(10))
        .card_cache(Arc::new(CardCache::new()))
        .connect(base)
        .await
        .unwrap()
}

async fn scrape(url: &str) -> String {
    let resp = reqwest::get(url).await.unwrap();
    assert_eq!(resp.status(), 200);
    let kind = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
    resp.text().await.unwrap()
}

/// The value of the sample `name{labels}` (labels as written, in order), 0 when absent.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')))
        .map_or(0.0, |v| v.trim().parse().unwrap())
}

fn send(text: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::text(Role::User, text))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_streams_tasks_and_refusals_are_counted() {
    let server = start().await;
    for (binding, name) in [(Binding::JsonRpc, "jsonrpc"), (Binding::HttpJson, "http+json"), (Binding::Grpc, "grpc")] {
        let client = client(&server.base, binding, "good").await;
        let SendMessageResponse::Task(task) = client.send_message(send("hello")).await.unwrap() else { panic!() };
        let e = client.get_task(GetTaskRequest { id: "missing".into(), ..Default::default() }).await.unwrap_err();
        assert_eq!(e.kind, a2a_native::ErrorKind::TaskNotFound);
        let text = scrape(&server.metrics_url).await;
        let ok = format!(r#"a2a_server_requests_total{{binding="{name}",method="SendMessage",outcome="OK"}}"#);
        assert_eq!(sample(&text, &ok), 1.0, "{name}:\n{text}");
        let missing =
            format!(r#"a2a_server_requests_total{{binding="{name}",method="GetTask",outcome="TASK_NOT_FOUND"}}"#);
        assert_eq!(sample(&text, &missing), 1.0, "{name}:\n{text}");
        let count = format!(r#"a2a_server_request_duration_seconds_count{{binding="{name}",method="SendMessage"}}"#);
        assert_eq!(sample(&text, &count), 1.0, "{name}");
        assert!(!task.id.is_empty());
    }

    // A stream is counted while it is open, and no longer once the task ends it.
    let client = client(&server.base, Binding::JsonRpc, "good").await;
    let mut stream = client.send_streaming_message(send("wait")).await.unwrap();
    let first = futures_util::StreamExt::next(&mut stream).await.unwrap().unwrap();
    let task_id = match first {
        a2a_native::model::StreamResponse::Task(t) => t.id,
        other => panic!("{other:?}"),
    };
    let text = scrape(&server.metrics_url).await;
    assert_eq!(sample(&text, "a2a_server_open_streams"), 1.0);
    // The stream's connection at least (the clients' pools may keep others open).
    assert!(sample(&text, "a2a_server_open_connections") >= 1.0, "{text}");
    client.cancel_task(CancelTaskRequest { id: task_id, ..Default::default() }).await.unwrap();
    while futures_util::StreamExt::next(&mut stream).await.is_some() {}
    drop(stream);
    let mut text = String::new();
    for _ in 0..50 {
        text = scrape(&server.metrics_url).await;
        if sample(&text, "a2a_server_open_streams") == 0.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(sample(&text, "a2a_server_open_streams"), 0.0, "{text}");
    assert_eq!(sample(&text, r#"a2a_server_streams_closed_total{how="ended"}"#), 1.0, "{text}");
    assert_eq!(sample(&text, r#"a2a_server_streams_closed_total{how="abandoned"}"#), 0.0, "{text}");

    // A stream its client leaves before the end is counted abandoned.
    let mut stream = client.send_streaming_message(send("wait")).await.unwrap();
    let Some(Ok(a2a_native::model::StreamResponse::Task(left))) = futures_util::StreamExt::next(&mut stream).await
    else {
        panic!()
    };
    drop(stream);
    for _ in 0..100 {
        text = scrape(&server.metrics_url).await;
        if sample(&text, r#"a2a_server_streams_closed_total{how="abandoned"}"#) == 1.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(sample(&text, r#"a2a_server_streams_closed_total{how="abandoned"}"#), 1.0, "{text}");
    assert_eq!(sample(&text, "a2a_server_open_streams"), 0.0, "{text}");
    client.cancel_task(CancelTaskRequest { id: left.id, ..Default::default() }).await.unwrap();
    let text = scrape(&server.metrics_url).await;

    // Three echo tasks completed, two canceled; their events were applied and committed.
    assert_eq!(sample(&text, r#"a2a_task_state_changes_total{state="TASK_STATE_CANCELED"}"#), 2.0, "{text}");
    assert!(sample(&text, r#"a2a_task_state_changes_total{state="TASK_STATE_COMPLETED"}"#) >= 3.0, "{text}");
    assert!(sample(&text, "a2a_task_events_applied_total") >= 12.0, "{text}");
    assert!(sample(&text, r#"a2a_store_operation_duration_seconds_count{operation="commit"}"#) >= 4.0, "{text}");
    // Reads are timed too: the three GetTasks above, and a ListTasks.
    assert_eq!(sample(&text, r#"a2a_store_operation_duration_seconds_count{operation="get"}"#), 3.0, "{text}");
    client.list_tasks(Default::default()).await.unwrap();
    let text = scrape(&server.metrics_url).await;
    assert_eq!(sample(&text, r#"a2a_store_operation_duration_seconds_count{operation="list"}"#), 1.0, "{text}");

    // Refused before routing: no method, the reason of the refusal.
    let bad = reqwest::Client::new()
        .post(format!("{}/", server.base))
        .bearer_auth("wrong")
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 401);
    let garbage = reqwest::Client::new()
        .post(format!("{}/", server.base))
        .bearer_auth("good")
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(garbage.status(), 200);
    let text = scrape(&server.metrics_url).await;
    let refused = r#"a2a_server_requests_total{binding="jsonrpc",method="unknown",outcome="UNAUTHENTICATED"}"#;
    assert_eq!(sample(&text, refused), 1.0, "{text}");
    let parse = r#"a2a_server_requests_total{binding="jsonrpc",method="unknown",outcome="JSON_PARSE"}"#;
    assert_eq!(sample(&text, parse), 1.0, "{text}");
    assert!(text.ends_with("# EOF\n"));
}

/// Connections that send nothing hold at most the endpoint's few places: past them a new one is
/// closed at once (it held a descriptor each for as long as the peer liked, which the agent's
/// own listener shares).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_to_the_endpoint_are_bounded() {
    use tokio::io::AsyncReadExt;
    let server = start().await;
    let addr = server.metrics_url.trim_start_matches("http://").trim_end_matches("/metrics").to_owned();
    let mut held = Vec::new();
    for _ in 0..32 {
        held.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut extra = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(Duration::from_secs(5), extra.read(&mut buf)).await;
    assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "a 33rd silent connection was kept: {read:?}");
    drop(held);
    // Their places free again once they close: a scrape is served.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(scrape(&server.metrics_url).await.ends_with("# EOF\n"));
}

#[tokio::test]
async fn the_endpoint_serves_get_metrics_only() {
    let server = start().await;
    let client = client(&server.base, Binding::JsonRpc, "good").await;
    client.send_message(send("hello")).await.unwrap();
    let http = reqwest::Client::new();
    let other = http.get(server.metrics_url.replace("/metrics", "/")).send().await.unwrap();
    assert_eq!(other.status(), 404);
    let post = http.post(&server.metrics_url).body("x").send().await.unwrap();
    assert_eq!(post.status(), 405);
    assert_eq!(post.headers()["allow"], "GET, HEAD");
    let text = scrape(&server.metrics_url).await;
    for family in [
        "# TYPE a2a_server_requests counter",
        "# TYPE a2a_server_request_duration_seconds histogram",
        "# TYPE a2a_server_open_streams gauge",
        "# TYPE a2a_task_state_changes counter",
        "# TYPE a2a_task_events_applied counter",
        "# TYPE a2a_store_operation_duration_seconds histogram",
    ] {
        assert!(text.contains(family), "{family} missing:\n{text}");
    }
}
