//! W3C trace context through the client: inside a traced span, with the application's W3C
//! propagator installed (as `a2a serve` and host OpenTelemetry setups do), every call carries a
//! `traceparent` of the caller's trace (its parent is the client's own `a2a.client` span, a
//! child of the caller's); outside the caller's span, the client's span starts a new trace.
//! A host language's caller (`with_caller`) is passed through untraced, and is the client
//! span's parent when traced. (The server side, push
//! notifications included, is tested with the real binary in cli/tests/telemetry.rs.)

mod support;

use a2a_native::client::{CardCache, Client};
use a2a_native::model::{GetTaskRequest, Message, Role, SendMessageRequest};
use a2a_native::trace_context::{TraceParent, with_caller};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use support::client::{Action, raw_card, raw_server};
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

const HOST_PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

#[tokio::test(flavor = "current_thread")]
async fn client_calls_carry_the_callers_trace_context() {
    let server = raw_server(|req, _| {
        if req.path() == "/.well-known/agent-card.json" {
            return Action::json(200, &raw_card(&req.base(), "JSONRPC"));
        }
        let task = json!({"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}});
        let result = if req.rpc_method() == "SendMessage" { json!({"task": task}) } else { task };
        Action::json(200, &req.rpc_result(result))
    })
    .await;
    let client = Client::builder()
        .timeout(Duration::from_secs(5))
        .card_cache(Arc::new(CardCache::new()))
        .connect(&server.base)
        .await
        .unwrap();
    let get = || client.get_task(GetTaskRequest { id: "t1".into(), ..Default::default() });

    // A host language's caller (a binding passes its OpenTelemetry context per call): this
    // process does not trace yet, so the caller's context goes out as it came.
    let host = TraceParent::from_text(Some(HOST_PARENT), Some("vendor=1"), Some("user=ada"));
    with_caller(host.clone(), get()).await.unwrap();

    opentelemetry::global::set_text_map_propagator(opentelemetry_sdk::propagation::TraceContextPropagator::new());
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let subscriber =
        tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let _default = tracing::subscriber::set_default(subscriber);

    let span = tracing::info_span!("caller");
    let trace_id = span.context().span().span_context().trace_id().to_string();
    async {
        client.send_message(SendMessageRequest::new(Message::text(Role::User, "hi"))).await.unwrap();
        client.get_task(GetTaskRequest { id: "t1".into(), ..Default::default() }).await.unwrap();
    }
    .instrument(span)
    .await;
    // Outside the caller's span: the client's own span starts a trace of its own.
    get().await.unwrap();
    // Now traced, the host caller is the parent of the client's span, which goes out.
    with_caller(host, get()).await.unwrap();

    let calls: Vec<Option<String>> = server
        .requests()
        .iter()
        .filter(|r| r.path() == "/")
        .map(|r| r.header("traceparent").map(str::to_owned))
        .collect();
    assert_eq!(calls.len(), 5, "{calls:?}");
    assert_eq!(calls[0].as_deref(), Some(HOST_PARENT), "passed through untraced");
    let requests = server.requests();
    let tracestates: Vec<Option<&str>> =
        requests.iter().filter(|r| r.path() == "/").map(|r| r.header("tracestate")).collect();
    assert_eq!(tracestates[0], Some("vendor=1"));
    let calls = &calls[1..];
    let host = calls[3].as_deref().expect("the host caller's trace goes out");
    let (host_trace, host_span) = (&HOST_PARENT[3..35], &HOST_PARENT[36..52]);
    assert!(host.starts_with(&format!("00-{host_trace}-")), "{host}");
    assert!(!host.contains(host_span), "the client's own span is the parent now: {host}");
    assert_eq!(tracestates[4], Some("vendor=1"), "the host's tracestate goes on");
    let baggage: Vec<Option<&str>> = requests.iter().filter(|r| r.path() == "/").map(|r| r.header("baggage")).collect();
    assert_eq!(
        (baggage[0], baggage[4]),
        (Some("user=ada"), Some("user=ada")),
        "the host's baggage goes on, traced or not"
    );
    for traceparent in &calls[..2] {
        let traceparent = traceparent.as_deref().expect("a traced call carries traceparent");
        assert!(traceparent.starts_with(&format!("00-{trace_id}-")), "{traceparent} not in trace {trace_id}");
    }
    let own = calls[2].as_deref().expect("the client's span is propagated");
    assert!(!own.contains(&trace_id), "{own}");
}
