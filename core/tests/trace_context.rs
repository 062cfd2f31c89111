//! W3C trace context through the client: inside a traced span, with the application's W3C
//! propagator installed (as `a2a serve` and host OpenTelemetry setups do), every call carries a
//! `traceparent` of the caller's trace (its parent is the client's own `a2a.client` span, a
//! child of the caller's); outside the caller's span, the client's span starts a new trace. (The server side, push
//! notifications included, is tested with the real binary in cli/tests/telemetry.rs.)

mod support;

use a2a_native::client::{CardCache, Client};
use a2a_native::model::{GetTaskRequest, Message, Role, SendMessageRequest};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use support::client::{Action, raw_card, raw_server};
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

#[tokio::test(flavor = "current_thread")]
async fn client_calls_carry_the_callers_trace_context() {
    opentelemetry::global::set_text_map_propagator(opentelemetry_sdk::propagation::TraceContextPropagator::new());
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let subscriber =
        tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let _default = tracing::subscriber::set_default(subscriber);

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

    let span = tracing::info_span!("caller");
    let trace_id = span.context().span().span_context().trace_id().to_string();
    async {
        client.send_message(SendMessageRequest::new(Message::text(Role::User, "hi"))).await.unwrap();
        client.get_task(GetTaskRequest { id: "t1".into(), ..Default::default() }).await.unwrap();
    }
    .instrument(span)
    .await;
    // Outside the caller's span: the client's own span starts a trace of its own.
    client.get_task(GetTaskRequest { id: "t1".into(), ..Default::default() }).await.unwrap();

    let calls: Vec<Option<String>> = server
        .requests()
        .iter()
        .filter(|r| r.path() == "/")
        .map(|r| r.header("traceparent").map(str::to_owned))
        .collect();
    assert_eq!(calls.len(), 3, "{calls:?}");
    for traceparent in &calls[..2] {
        let traceparent = traceparent.as_deref().expect("a traced call carries traceparent");
        assert!(traceparent.starts_with(&format!("00-{trace_id}-")), "{traceparent} not in trace {trace_id}");
    }
    let own = calls[2].as_deref().expect("the client's span is propagated");
    assert!(!own.contains(&trace_id), "{own}");
}
