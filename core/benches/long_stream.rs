//! Long artifact streams: an agent appends N chunks to one artifact; the time of the whole
//! turn (a blocking SendMessage through the request handler) for N = 1,000 and 8,000 on each
//! store, and the ratio between them (linear: about 8x; the target is at most 9x). Also the
//! bytes written per event in the 8,000-chunk turn: on SQLite what this process hands to
//! write(2) (WAL frames and checkpoints, /proc/self/io `wchar`), on PostgreSQL the WAL bytes it
//! generated (`pg_current_wal_lsn`; other sessions on the database would add theirs). Not criterion: one long run per point is the
//! measurement. `cargo bench -p a2a-native --bench long_stream`; PostgreSQL when
//! A2A_TEST_POSTGRES_URL is set (`tests/pg.sh start`).

use a2a_native::executor::{AgentExecutor, EventSink, ExecutorError, RequestContext};
use a2a_native::model::{self, AgentCard, Message, Part, Role, SendMessageRequest};
use a2a_native::request::A2ARequest;
use a2a_native::server::{CallContext, Reply, RequestHandler, ServerConfig, Stores};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Appends as many chunks as the message text says to one artifact, then completes. A text
/// starting with `paced` yields after each chunk, as an agent waiting on a model does: then each
/// chunk is committed on its own (the worst case), instead of in batches of what is queued.
struct Chunks;

#[async_trait::async_trait]
impl AgentExecutor for Chunks {
    async fn execute(&self, ctx: RequestContext, events: EventSink) -> Result<(), ExecutorError> {
        let text = ctx.text();
        let paced = text.starts_with("paced");
        let n: usize = text.trim_start_matches("paced").parse().unwrap_or(0);
        events.working().await?;
        for i in 0..n {
            let artifact = model::Artifact {
                artifact_id: "out".into(),
                name: String::new(),
                description: String::new(),
                parts: vec![Part::text(format!("chunk {i} of a long answer, some forty bytes"))],
                metadata: None,
                extensions: vec![],
            };
            let event = model::TaskArtifactUpdateEvent {
                task_id: String::new(),
                context_id: String::new(),
                artifact,
                append: i > 0,
                last_chunk: i + 1 == n,
                metadata: None,
            };
            events.send(model::StreamResponse::ArtifactUpdate(event)).await?;
            if paced {
                tokio::task::yield_now().await;
            }
        }
        events.complete(None).await?;
        Ok(())
    }
}

fn card() -> AgentCard {
    model::parse_value(json!({
        "name": "bench", "description": "long streams", "version": "1",
        "supportedInterfaces": [{"url": "http://127.0.0.1/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    }))
    .unwrap()
}

async fn turn(handler: &RequestHandler, n: usize, paced: bool) -> Duration {
    let started = Instant::now();
    let text = if paced { format!("paced{n}") } else { n.to_string() };
    let req = A2ARequest::SendMessage(SendMessageRequest::new(Message::text(Role::User, text)));
    match handler.handle(&CallContext::default(), req).await.expect("the turn") {
        Reply::Value(v) => {
            let v = v.to_value();
            assert_eq!(v["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{v}")
        }
        _ => panic!("not a task"),
    }
    started.elapsed()
}

/// Bytes written so far, by the measure of `store` (see the module's doc).
async fn written(store: &str, pg: Option<&sqlx::PgPool>) -> u64 {
    match (store, pg) {
        ("postgres", Some(pool)) => {
            let lsn: i64 = sqlx::query_scalar("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::BIGINT")
                .fetch_one(pool)
                .await
                .unwrap();
            lsn as u64
        }
        _ => std::fs::read_to_string("/proc/self/io")
            .ok()
            .and_then(|io| io.lines().find_map(|l| l.strip_prefix("wchar: ").and_then(|n| n.trim().parse().ok())))
            .unwrap_or(0),
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let dir = std::env::temp_dir().join(format!("a2a-long-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut stores = vec![("memory".to_owned(), "memory".to_owned())];
        stores.push(("sqlite".into(), format!("sqlite:{}", dir.join("bench.db").display())));
        if let Ok(url) = std::env::var("A2A_TEST_POSTGRES_URL") {
            stores.push(("postgres".into(), format!("postgres:{url}")));
        }
        let pg = match std::env::var("A2A_TEST_POSTGRES_URL") {
            Ok(url) => Some(sqlx::PgPool::connect(&url).await.unwrap()),
            Err(_) => None,
        };
        println!("| store | agent | 1,000 chunks | 8,000 chunks | ratio (linear: 8) | bytes written per event |");
        println!("|---|---|---|---|---|---|");
        for (name, spec) in stores {
            let handler = RequestHandler::new(
                Arc::new(Chunks),
                card(),
                Stores::open(&spec).await.unwrap(),
                ServerConfig::default(),
            );
            for paced in [false, true] {
                turn(&handler, 100, paced).await; // warm-up
                let small = turn(&handler, 1000, paced).await;
                let before = written(&name, pg.as_ref()).await;
                let large = turn(&handler, 8000, paced).await;
                let bytes = written(&name, pg.as_ref()).await.saturating_sub(before) / 8000;
                let bytes = if name == "memory" { "-".to_owned() } else { bytes.to_string() };
                println!(
                    "| {name} | {} | {:.3} s | {:.3} s | {:.1} | {bytes} |",
                    if paced { "paced (a commit per chunk)" } else { "as fast as it can" },
                    small.as_secs_f64(),
                    large.as_secs_f64(),
                    large.as_secs_f64() / small.as_secs_f64(),
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    });
}
