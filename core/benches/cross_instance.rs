//! Cross-instance latency: two request handlers on one PostgreSQL database (each with its own
//! pool and listener, as two processes have). An agent on A emits events 10 ms apart; a
//! subscriber on B times each one from just before the agent hands it over (so A's commit is
//! included) to its arrival on B. Prints p50/p99/max. Needs A2A_TEST_POSTGRES_URL
//! (`tests/pg.sh start`). `cargo bench -p a2a-native --bench cross_instance`.

use a2a_native::executor::{AgentExecutor, EventSink, ExecutorError, RequestContext};
use a2a_native::model::{self, AgentCard, Message, Part, Role, SendMessageConfiguration, SendMessageRequest};
use a2a_native::request::A2ARequest;
use a2a_native::server::{CallContext, Reply, RequestHandler, ServerConfig, Stores};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const EVENTS: usize = 200;

/// Waits for the subscriber, then emits EVENTS artifact chunks 10 ms apart, noting when each left.
struct Ticker {
    sent: Arc<Mutex<Vec<Instant>>>,
    go: Arc<tokio::sync::Notify>,
}

#[async_trait::async_trait]
impl AgentExecutor for Ticker {
    async fn execute(&self, _ctx: RequestContext, events: EventSink) -> Result<(), ExecutorError> {
        events.working().await?;
        self.go.notified().await;
        for i in 0..EVENTS {
            tokio::time::sleep(Duration::from_millis(10)).await;
            self.sent.lock().unwrap().push(Instant::now());
            events.artifact_parts(format!("a{i}"), vec![Part::text("tick")]).await?;
        }
        events.complete(None).await?;
        Ok(())
    }
}

fn card() -> AgentCard {
    model::parse_value(json!({
        "name": "bench", "description": "cross-instance latency", "version": "1",
        "supportedInterfaces": [{"url": "http://127.0.0.1/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    }))
    .unwrap()
}

fn main() {
    let Ok(url) = std::env::var("A2A_TEST_POSTGRES_URL") else {
        eprintln!("cross_instance: set A2A_TEST_POSTGRES_URL (tests/pg.sh start)");
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let go = Arc::new(tokio::sync::Notify::new());
        let spec = format!("postgres:{url}");
        let agent = Arc::new(Ticker { sent: sent.clone(), go: go.clone() });
        let a = RequestHandler::new(agent.clone(), card(), Stores::open(&spec).await.unwrap(), ServerConfig::default());
        let b = RequestHandler::new(agent, card(), Stores::open(&spec).await.unwrap(), ServerConfig::default());
        let mut req = SendMessageRequest::new(Message::text(Role::User, "go"));
        req.configuration = Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
        let Reply::Value(v) = a.handle(&CallContext::default(), A2ARequest::SendMessage(req)).await.unwrap() else {
            panic!("not a task")
        };
        let id = v.ids().0.to_owned();
        let sub = model::SubscribeToTaskRequest { id, ..Default::default() };
        let Reply::Stream(mut stream) = b.handle(&CallContext::default(), A2ARequest::SubscribeToTask(sub)).await.unwrap() else {
            panic!("not a stream")
        };
        stream.next().await.expect("the snapshot");
        go.notify_one();
        let mut arrived = Vec::new();
        while let Some(event) = tokio::time::timeout(Duration::from_secs(10), stream.next()).await.expect("stalled") {
            if matches!(event, model::StreamResponse::ArtifactUpdate(_)) {
                arrived.push(Instant::now());
            }
        }
        let sent = sent.lock().unwrap().clone();
        assert_eq!(arrived.len(), sent.len(), "every event arrived once");
        let mut ms: Vec<f64> = sent.iter().zip(&arrived).map(|(s, a)| (*a - *s).as_secs_f64() * 1000.0).collect();
        ms.sort_by(f64::total_cmp);
        let pct = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
        println!(
            "cross-instance latency over {} events (A's commit to B's subscriber): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            ms.len(),
            pct(0.5),
            pct(0.99),
            pct(1.0)
        );
    });
}
