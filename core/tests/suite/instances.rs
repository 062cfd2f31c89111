//! Several server instances on one PostgreSQL database acting as one agent: two request
//! handlers, each with its own connection pool (as two processes would have), share tasks.
//! A subscriber on one instance sees what the other's executor does, a cancel on one stops the
//! executor on the other and ends every stream CANCELED, and a task continues on either.
//!
//! Needs `A2A_TEST_POSTGRES_URL` (`tests/pg.sh start`); skipped without it unless
//! `A2A_REQUIRE_POSTGRES=1`.
#![cfg(feature = "postgres")]

use crate::support;

use a2a_native::model::{
    self, AgentCard, CancelTaskRequest, GetTaskRequest, Message, Role, SendMessageConfiguration, SendMessageRequest,
    StreamResponse, SubscribeToTaskRequest, Task, TaskState,
};
use a2a_native::request::A2ARequest;
use a2a_native::server::{CallContext, EventStream, Reply, RequestHandler, ServerConfig, Stores};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use support::agent::{Step, TestAgent};

/// `steps`: works, streams two chunks a moment apart, completes. `hold`: works until canceled.
/// `auth`: asks for authorization, goes on working a moment later (in-task auth), returns.
/// `ask`: needs input; the answer completes it. `park`: leaves the task WORKING and returns
/// (nothing runs it any more). Anything else completes with "thanks".
fn agent() -> Arc<TestAgent> {
    Arc::new(
        TestAgent::new()
            .on(
                "steps",
                [
                    Step::working(),
                    Step::sleep(150),
                    Step::artifact("out", "chunk 0"),
                    Step::sleep(150),
                    Step::artifact("out", "chunk 1"),
                    Step::complete(),
                ],
            )
            .on("hold", [Step::working(), Step::UntilCanceled])
            // Writes every few milliseconds: a cancel through another instance usually reaches
            // it as its own next write refused for the version, before the store's notice.
            .on(
                "chatter",
                std::iter::once(Step::working())
                    .chain((0..400).flat_map(|_| [Step::sleep(5), Step::artifact("out", "more")])),
            )
            .on("ask", [Step::status(TaskState::InputRequired, "which city?")])
            .on("park", [Step::working()])
            .on(
                "auth",
                [
                    Step::status(TaskState::AuthRequired, "sign in"),
                    Step::sleep(400),
                    // The first write after another instance moved the task conflicts (and is
                    // dropped, the task reloaded); the second is written.
                    Step::working(),
                    Step::sleep(100),
                    Step::working(),
                    Step::sleep(100),
                ],
            )
            .otherwise([Step::status(TaskState::Completed, "thanks")]),
    )
}

fn card() -> AgentCard {
    model::parse_value(json!({
        "name": "t", "description": "test agent", "version": "1",
        "supportedInterfaces": [{"url": "http://127.0.0.1/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    }))
    .unwrap()
}

struct Instance {
    handler: RequestHandler,
    /// Its executor: what ran here, and the calls of its `cancel` hook.
    agent: Arc<TestAgent>,
}

async fn instance() -> Option<Instance> {
    instance_with(ServerConfig::default()).await
}

async fn instance_with(config: ServerConfig) -> Option<Instance> {
    let url = match std::env::var("A2A_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => {
            assert_ne!(std::env::var("A2A_REQUIRE_POSTGRES").as_deref(), Ok("1"), "A2A_TEST_POSTGRES_URL is not set");
            eprintln!("SKIPPED: several instances need A2A_TEST_POSTGRES_URL (tests/pg.sh start)");
            return None;
        }
    };
    let stores = Stores::open(&url).await.expect("connect");
    let agent = agent();
    Some(Instance { handler: RequestHandler::new(agent.clone(), card(), stores, config), agent })
}

async fn pair() -> Option<(Instance, Instance)> {
    Some((instance().await?, instance().await?))
}

fn msg(text: &str) -> Message {
    Message::text(Role::User, text)
}

/// Tasks of each test in a tenant of their own.
fn tenant() -> String {
    format!("instances-{}", uuid::Uuid::new_v4().simple())
}

async fn call(h: &RequestHandler, req: A2ARequest) -> Value {
    match h.handle(&CallContext::default(), req).await.unwrap() {
        Reply::Value(v) => v.to_value(),
        _ => panic!("expected a value"),
    }
}

async fn open(h: &RequestHandler, req: A2ARequest) -> EventStream {
    match h.handle(&CallContext::default(), req).await.unwrap() {
        Reply::Stream(s) => s,
        _ => panic!("expected a stream"),
    }
}

fn send(tenant: &str, m: Message, return_immediately: bool) -> A2ARequest {
    let mut req = SendMessageRequest::new(m);
    req.tenant = tenant.to_owned();
    req.configuration = Some(SendMessageConfiguration { return_immediately, ..Default::default() });
    A2ARequest::SendMessage(req)
}

fn subscribe(tenant: &str, id: &str) -> A2ARequest {
    A2ARequest::SubscribeToTask(SubscribeToTaskRequest { tenant: tenant.into(), id: id.into() })
}

async fn collect(mut s: EventStream) -> Vec<StreamResponse> {
    let mut events = Vec::new();
    while let Some(e) = tokio::time::timeout(Duration::from_secs(10), s.next()).await.expect("stream stalled") {
        events.push(e);
    }
    events
}

fn state(event: &StreamResponse) -> Option<TaskState> {
    match event {
        StreamResponse::Task(t) => Some(t.status.state),
        StreamResponse::StatusUpdate(e) => Some(e.status.state),
        _ => None,
    }
}

fn task_of(v: Value) -> Task {
    serde_json::from_value(v["task"].clone()).unwrap_or_else(|e| panic!("not a task: {v} ({e})"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_on_b_sees_what_runs_on_a() {
    let Some((a, b)) = pair().await else { return };
    let tenant = tenant();
    let task = task_of(call(&a.handler, send(&tenant, msg("steps"), true)).await);
    let events = collect(open(&b.handler, subscribe(&tenant, &task.id)).await).await;
    assert!(matches!(events[0], StreamResponse::Task(_)), "a snapshot first: {events:?}");
    assert_eq!(state(events.last().unwrap()), Some(TaskState::Completed), "{events:?}");
    let chunks = events.iter().filter(|e| matches!(e, StreamResponse::ArtifactUpdate(_))).count();
    let in_snapshot = match &events[0] {
        StreamResponse::Task(t) => t.artifacts.iter().map(|a| a.parts.len()).sum::<usize>(),
        _ => 0,
    };
    assert_eq!(chunks + in_snapshot, 2, "every chunk, once: {events:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_on_b_stops_the_executor_on_a_and_ends_every_stream() {
    let Some((a, b)) = pair().await else { return };
    let tenant = tenant();
    let task = task_of(call(&a.handler, send(&tenant, msg("hold"), true)).await);
    let on_a = open(&a.handler, subscribe(&tenant, &task.id)).await;
    let on_b = open(&b.handler, subscribe(&tenant, &task.id)).await;
    let (on_a, on_b) = (tokio::spawn(collect(on_a)), tokio::spawn(collect(on_b)));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let cancel = CancelTaskRequest { tenant: tenant.clone(), id: task.id.clone(), metadata: None };
    let canceled: Task = serde_json::from_value(call(&b.handler, A2ARequest::CancelTask(cancel)).await).unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    for (name, stream) in [("A", on_a), ("B", on_b)] {
        let events = stream.await.unwrap();
        assert_eq!(state(events.last().unwrap()), Some(TaskState::Canceled), "{name}: {events:?}");
    }
    // The work stopped: it saw its cancellation, or its future was dropped.
    for _ in 0..50 {
        if a.agent.ended("hold") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(a.agent.ended("hold"), "A's executor was told to stop");
    assert!(!b.agent.ended("hold"), "B never ran it");
    for _ in 0..50 {
        if !a.agent.cancels().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!a.agent.cancels().is_empty(), "the cancel was routed to the executor running the task");
    assert!(b.agent.cancels().is_empty(), "not to the instance that took the request");
}

/// However A hears of a cancel taken by B (the store's notice, or its own next write refused
/// for the version), its executor's `cancel` runs: a cluster probe saw it skipped in 13 of 20
/// rounds when the executor wrote often.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_on_b_of_a_busy_task_calls_the_executors_cancel_on_a() {
    let Some((a, b)) = pair().await else { return };
    for round in 0..6 {
        let tenant = tenant();
        let task = task_of(call(&a.handler, send(&tenant, msg("chatter"), true)).await);
        tokio::time::sleep(Duration::from_millis(150)).await;
        let cancels = a.agent.cancels().len();
        let cancel = CancelTaskRequest { tenant: tenant.clone(), id: task.id.clone(), metadata: None };
        let canceled: Task = serde_json::from_value(call(&b.handler, A2ARequest::CancelTask(cancel)).await).unwrap();
        assert_eq!(canceled.status.state, TaskState::Canceled);
        for _ in 0..60 {
            if a.agent.cancels().len() > cancels {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(a.agent.cancels().len(), cancels + 1, "round {round}: A's executor's cancel ran");
    }
}

/// A subscriber on B whose instance reloads the task (a cancel there, refused as the task is
/// over) at about the moment A ends it still gets the end: the reload took the newer version
/// without publishing the entries before it, and B's wake-up from the store then found
/// nothing newer, so the stream waited for ever (a cluster probe saw 5 of 8 rounds stuck).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_on_b_as_a_ends_the_task_leaves_no_stream_of_b_behind() {
    let Some((a, b)) = pair().await else { return };
    let tenant = tenant();
    for round in 0..5 {
        let task = task_of(call(&a.handler, send(&tenant, msg("steps"), true)).await);
        let on_b = tokio::spawn(collect(open(&b.handler, subscribe(&tenant, &task.id)).await));
        let get = || {
            A2ARequest::GetTask(GetTaskRequest { tenant: tenant.clone(), id: task.id.clone(), history_length: None })
        };
        while serde_json::from_value::<Task>(call(&a.handler, get()).await).unwrap().status.state
            != TaskState::Completed
        {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let cancel = CancelTaskRequest { tenant: tenant.clone(), id: task.id.clone(), metadata: None };
        let refused = b.handler.handle(&CallContext::default(), A2ARequest::CancelTask(cancel)).await.err();
        assert_eq!(refused.map(|e| e.kind), Some(a2a_native::ErrorKind::TaskNotCancelable), "round {round}");
        let events = tokio::time::timeout(Duration::from_secs(8), on_b).await.expect("B's stream ended").unwrap();
        assert_eq!(state(events.last().unwrap()), Some(TaskState::Completed), "round {round}: {events:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_asked_on_a_is_answered_on_b() {
    let Some((a, b)) = pair().await else { return };
    let tenant = tenant();
    let task = task_of(call(&a.handler, send(&tenant, msg("ask"), false)).await);
    assert_eq!(task.status.state, TaskState::InputRequired);
    let mut answer = msg("Paris");
    answer.task_id = task.id.clone();
    let done = task_of(call(&b.handler, send(&tenant, answer, false)).await);
    assert_eq!(done.status.state, TaskState::Completed);
    let texts: Vec<String> = done.history.iter().map(Message::text_content).collect();
    assert_eq!(texts, ["ask", "which city?", "Paris"], "turns in order");
    // A reads the same task.
    let req = a2a_native::model::GetTaskRequest { tenant: tenant.clone(), id: task.id.clone(), history_length: None };
    let read: Task = serde_json::from_value(call(&a.handler, A2ARequest::GetTask(req)).await).unwrap();
    assert_eq!(read.status.state, TaskState::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_to_a_turn_running_on_another_instance_is_refused() {
    let Some((a, b)) = pair().await else { return };
    let tenant = tenant();
    let task = task_of(call(&a.handler, send(&tenant, msg("hold"), true)).await);
    let mut more = msg("more");
    more.task_id = task.id.clone();
    let err =
        b.handler.handle(&CallContext::default(), send(&tenant, more.clone(), false)).await.err().expect("refused");
    assert_eq!(err.kind, a2a_native::ErrorKind::UnsupportedOperation, "{err:?}");
    assert!(err.message.contains("another instance"), "{}", err.message);
    // A task whose execution returned with it still WORKING is held by nobody: B takes it.
    let parked = task_of(call(&a.handler, send(&tenant, msg("park"), false)).await);
    assert_eq!(parked.status.state, TaskState::Working);
    let mut next = msg("thanks");
    next.task_id = parked.id.clone();
    for _ in 0..50 {
        match b.handler.handle(&CallContext::default(), send(&tenant, next.clone(), false)).await {
            Ok(Reply::Value(v)) => {
                let v = v.to_value();
                assert_eq!(task_of(v).status.state, TaskState::Completed);
                let cancel = CancelTaskRequest { tenant: tenant.clone(), id: task.id.clone(), metadata: None };
                call(&a.handler, A2ARequest::CancelTask(cancel)).await;
                return;
            }
            // The lease is released just after the execution returns.
            Err(e) if e.kind == a2a_native::ErrorKind::UnsupportedOperation => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            other => panic!("{:?}", other.err()),
        }
    }
    panic!("the parked task stayed held");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_task_of_a_lost_instance_ends_failed_and_its_late_writes_are_refused() {
    use a2a_native::store::{Change, Commit, CommitOutcome, LogEntry, Owner, PostgresStore, TaskStore};
    let fast = ServerConfig {
        lease: Duration::from_millis(300),
        reap_interval: Duration::from_millis(100),
        ..Default::default()
    };
    let Some(b) = instance_with(fast).await else { return };
    let url = std::env::var("A2A_TEST_POSTGRES_URL").unwrap();
    let tenant = tenant();
    // An instance that started a task and died: its lease runs out and is never renewed.
    let ghost = PostgresStore::connect(&url).await.unwrap();
    let mut task = Task {
        id: uuid::Uuid::new_v4().to_string(),
        context_id: "c".into(),
        status: model::TaskStatus::now(TaskState::Working),
        artifacts: vec![],
        history: vec![msg("work")],
        metadata: None,
    };
    let created = [LogEntry { seq: 1, change: Change::Event(StreamResponse::Task(task.clone())) }];
    let owner = Some(Owner { id: "ghost", lease: Duration::from_millis(200) });
    let commit = Commit {
        task: &task,
        expected: 0,
        entries: &created,
        snapshot: true,
        owner,
        writer: None,
        orphaned_only: false,
        push: false,
        trace: None,
        log: true,
    };
    assert_eq!(ghost.commit(&tenant, commit).await.unwrap(), CommitOutcome::Committed);

    // A subscriber on B sees the task end FAILED once the lease expired and B's reaper ran.
    let started = std::time::Instant::now();
    let events = collect(open(&b.handler, subscribe(&tenant, &task.id)).await).await;
    let last = events.last().unwrap();
    assert_eq!(state(last), Some(TaskState::Failed), "{events:?}");
    let StreamResponse::StatusUpdate(update) = last else { panic!("{last:?}") };
    assert!(update.status.message.as_ref().unwrap().text_content().contains("lost"), "{update:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "found within lease + reap time");

    // The ghost comes back and writes as if nothing happened: fenced by the version.
    task.status = model::TaskStatus::now(TaskState::Completed);
    let late = [LogEntry { seq: 2, change: Change::Event(StreamResponse::Task(task.clone())) }];
    let commit = Commit {
        task: &task,
        expected: 1,
        entries: &late,
        snapshot: true,
        owner,
        writer: None,
        orphaned_only: false,
        push: false,
        trace: None,
        log: true,
    };
    assert_eq!(ghost.commit(&tenant, commit).await.unwrap(), CommitOutcome::Conflict);
    assert_eq!(ghost.load(&tenant, &task.id).await.unwrap().unwrap().task.status.state, TaskState::Failed);
}

/// Held by the tests that run instances with push on: every instance's deliverer claims from
/// the one outbox, so two such tests at once would deliver (and delay) each other's rows.
static PUSH_TESTS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A webhook receiver on loopback: the bodies it got, in arrival order.
async fn webhook() -> (String, Arc<std::sync::Mutex<Vec<Value>>>) {
    webhook_slow(|_| Duration::ZERO).await
}

/// [`webhook`] that answers its `n`th request (from 0) after `delay(n)`; a body is recorded as
/// soon as it has arrived.
async fn webhook_slow(delay: fn(usize) -> Duration) -> (String, Arc<std::sync::Mutex<Vec<Value>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let got = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = got.clone();
    tokio::spawn(async move {
        loop {
            let (mut tcp, _) = listener.accept().await.unwrap();
            let sink = sink.clone();
            tokio::spawn(async move {
                // One request per connection is enough here: read the head, then the body.
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let n = tcp.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    let Some((head, body)) = text.split_once("\r\n\r\n") else { continue };
                    let length: usize = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap())
                        })
                        .unwrap_or(0);
                    if body.len() < length {
                        continue;
                    }
                    let n = {
                        let mut got = sink.lock().unwrap();
                        got.push(serde_json::from_str(&body[..length]).unwrap());
                        got.len() - 1
                    };
                    tokio::time::sleep(delay(n)).await;
                    let _ = tcp.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await;
                    return;
                }
            });
        }
    });
    (url, got)
}

/// A config registered over 0.3 keeps that in PostgreSQL, and the shared outbox sends it the
/// 0.3 task, as the other stores do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_registered_over_v03_is_sent_the_v03_task_from_the_shared_outbox() {
    if instance().await.is_none() {
        return;
    }
    let _serial = PUSH_TESTS.lock().await;
    let url = std::env::var("A2A_TEST_POSTGRES_URL").unwrap();
    crate::task_manager::push_to_a_v03_config_sends_the_task(Stores::open(&url).await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_notifications_queued_by_a_lost_instance_are_delivered_by_another() {
    use a2a_native::store::{PostgresStore, TaskStore};
    // Skipped like every test here without a database (and failing instead under CI's rule).
    if instance().await.is_none() {
        return;
    }
    let _serial = PUSH_TESTS.lock().await;
    let url = std::env::var("A2A_TEST_POSTGRES_URL").unwrap();
    let tenant = tenant();
    let (hook, got) = webhook().await;
    const TRACE: &str = r#"{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}"#;
    // The producer: registers a webhook, commits three events with their notifications queued,
    // claims the first for delivery, and dies before sending anything.
    let ghost = PostgresStore::connect(&url).await.unwrap();
    let then = [TaskState::Working, TaskState::Completed];
    queue_notifications(&ghost, &tenant, &hook, &then, Some(TRACE)).await;
    let claimed = ghost.claim_push("ghost", Duration::from_millis(500), 10).await.unwrap();
    let claimed: Vec<_> = claimed.into_iter().filter(|d| d.tenant == tenant).collect();
    assert_eq!(claimed.len(), 1, "one at a time per task: {claimed:?}");
    assert!(matches!(claimed[0].event, StreamResponse::Task(_)), "the oldest first");
    assert_eq!(claimed[0].trace.as_deref(), Some(TRACE), "the commit's trace context is kept with it");

    // Another instance, with push on: delivers all three, in order, once the claim lapsed.
    let _b = push_instance(&url, Duration::from_millis(300)).await;
    let got = received(&got, 3, 5).await;
    assert_eq!(kinds(&got), ["task", "statusUpdate", "statusUpdate"], "{got:?}");
    assert_eq!(got[2]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED");
}

/// Registers `hook` for a new task and commits the task (WORKING) then one status update per
/// state of `then`, with their notifications queued in the outbox, as an instance that then
/// died would have. Returns the task's id.
async fn queue_notifications(
    store: &a2a_native::store::PostgresStore,
    tenant: &str,
    hook: &str,
    then: &[TaskState],
    trace: Option<&str>,
) -> String {
    use a2a_native::store::{Change, Commit, LogEntry, Owner, PushConfigStore, TaskStore};
    let id = uuid::Uuid::new_v4().to_string();
    let config = model::TaskPushNotificationConfig { task_id: id.clone(), url: hook.into(), ..Default::default() };
    store.create(tenant, config).await.unwrap();
    let mut task = Task {
        id: id.clone(),
        context_id: "c".into(),
        status: model::TaskStatus::now(TaskState::Working),
        artifacts: vec![],
        history: vec![msg("work")],
        metadata: None,
    };
    let mut entries = vec![LogEntry { seq: 1, change: Change::Event(StreamResponse::Task(task.clone())) }];
    for (seq, state) in (2..).zip(then) {
        let status = model::TaskStatus::now(*state);
        task.status = status.clone();
        let update =
            model::TaskStatusUpdateEvent { task_id: id.clone(), context_id: "c".into(), status, metadata: None };
        entries.push(LogEntry { seq, change: Change::Event(StreamResponse::StatusUpdate(update)) });
    }
    let commit = Commit {
        task: &task,
        expected: 0,
        entries: &entries,
        snapshot: true,
        owner: Some(Owner { id: "ghost", lease: Duration::from_millis(200) }),
        writer: None,
        orphaned_only: false,
        push: true,
        trace,
        log: true,
    };
    store.commit(tenant, commit).await.unwrap();
    id
}

/// An instance with push notifications on (to loopback webhooks) and the given lease.
async fn push_instance(url: &str, lease: Duration) -> RequestHandler {
    let mut config = ServerConfig { lease, ..Default::default() };
    config.push.allow_private_targets = a2a_native::push::PrivateTargets::All;
    let stores = Stores::open(url).await.unwrap();
    let mut push_card = card();
    push_card.capabilities.push_notifications = Some(true);
    RequestHandler::new(agent(), push_card, stores, config)
}

/// Waits (up to `secs`) until the webhook got `n` bodies.
async fn received(got: &std::sync::Mutex<Vec<Value>>, n: usize, secs: u64) -> Vec<Value> {
    for _ in 0..secs * 20 {
        if got.lock().unwrap().len() >= n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    got.lock().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_that_outlasts_its_claim_is_not_sent_again_by_another_instance() {
    if instance().await.is_none() {
        return;
    }
    let _serial = PUSH_TESTS.lock().await;
    let url = std::env::var("A2A_TEST_POSTGRES_URL").unwrap();
    let tenant = tenant();
    // The first notification takes 2.5 s to be answered: longer than A's claim (twice a 300 ms
    // lease, at least 1 s), so only A renewing it keeps B from claiming it again.
    let (hook, got) = webhook_slow(|n| if n == 0 { Duration::from_millis(2500) } else { Duration::ZERO }).await;
    let ghost = a2a_native::store::PostgresStore::connect(&url).await.unwrap();
    queue_notifications(&ghost, &tenant, &hook, &[TaskState::Completed], None).await;
    let _a = push_instance(&url, Duration::from_millis(300)).await;
    assert_eq!(received(&got, 1, 10).await.len(), 1, "A delivers the first");
    let _b = push_instance(&url, Duration::from_millis(300)).await;
    received(&got, 2, 10).await;
    // Anything sent twice would have arrived by now.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let got = got.lock().unwrap().clone();
    assert_eq!(kinds(&got), ["task", "statusUpdate"], "each once, in order: {got:?}");
}

/// The first key of each body: which kind of event it carries.
fn kinds(bodies: &[Value]) -> Vec<String> {
    bodies.iter().map(|b| b.as_object().unwrap().keys().next().unwrap().clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_gives_back_what_it_could_not_deliver() {
    if instance().await.is_none() {
        return;
    }
    let _serial = PUSH_TESTS.lock().await;
    let url = std::env::var("A2A_TEST_POSTGRES_URL").unwrap();
    let tenant = tenant();
    // The first request is never answered in time; the second (the same notification, sent by
    // B) is answered at once.
    let (hook, got) = webhook_slow(|n| if n == 0 { Duration::from_secs(60) } else { Duration::ZERO }).await;
    let ghost = a2a_native::store::PostgresStore::connect(&url).await.unwrap();
    queue_notifications(&ghost, &tenant, &hook, &[], None).await;
    // A 5 s lease: A's claim (10 s, renewed while it tries) would keep B out for long.
    let a = push_instance(&url, Duration::from_secs(5)).await;
    assert_eq!(received(&got, 1, 10).await.len(), 1, "A is delivering it");
    let _b = push_instance(&url, Duration::from_secs(5)).await;
    let started = std::time::Instant::now();
    // Waits out the 5 s push deadline, then gives the claim back.
    a.shutdown().await;
    let got = received(&got, 2, 20).await;
    let kinds = kinds(&got);
    assert_eq!(kinds.get(..2), Some(&["task".to_owned(), "task".to_owned()][..]), "B sent it again: {got:?}");
    // The ghost's task has no instance running it: a reaper may end it FAILED meanwhile, and
    // that is notified after the task (seen in CI under load).
    assert!(kinds[2..].iter().all(|k| k == "statusUpdate"), "{got:?}");
    assert!(
        started.elapsed() < Duration::from_millis(8500),
        "B took it when A gave it back, not when A's claim ran out: {:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_execution_that_outlives_its_turn_keeps_the_task() {
    let Some((a, b)) = pair().await else { return };
    let tenant = tenant();
    // Two executions of one task on A: `hold` keeps running, `park` returns first.
    let task = task_of(call(&a.handler, send(&tenant, msg("hold"), true)).await);
    let mut park = msg("park");
    park.task_id = task.id.clone();
    let parked = task_of(call(&a.handler, send(&tenant, park, false)).await);
    assert_eq!(parked.status.state, TaskState::Working);
    // `hold` still runs on A: B must not start a turn of its own beside it.
    let mut more = msg("thanks");
    more.task_id = task.id.clone();
    let err = b.handler.handle(&CallContext::default(), send(&tenant, more, false)).await.err().expect("refused");
    assert_eq!(err.kind, a2a_native::ErrorKind::UnsupportedOperation, "{err:?}");
    let url = std::env::var("A2A_TEST_POSTGRES_URL").unwrap();
    let store = a2a_native::store::PostgresStore::connect(&url).await.unwrap();
    let stored = a2a_native::store::TaskStore::load(&store, &tenant, &task.id).await.unwrap().unwrap();
    assert!(stored.lease.is_some_and(|l| l.live), "A still holds the task's lease");
    let cancel = CancelTaskRequest { tenant: tenant.clone(), id: task.id.clone(), metadata: None };
    call(&a.handler, A2ARequest::CancelTask(cancel)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_execution_back_from_auth_required_leaves_the_instance_that_took_the_task_holding_it() {
    let Some((a, b)) = pair().await else { return };
    let tenant = tenant();
    // On A the execution asks for authorization and keeps running (it works on in 400 ms).
    let task = task_of(call(&a.handler, send(&tenant, msg("auth"), false)).await);
    assert_eq!(task.status.state, TaskState::AuthRequired);
    // Meanwhile a message on B takes the task: B runs it from now.
    let mut hold = msg("hold");
    hold.task_id = task.id.clone();
    let taken = task_of(call(&b.handler, send(&tenant, hold, true)).await);
    assert_eq!(taken.id, task.id);
    // A's execution writes WORKING and returns: neither may take B's lease or give it away.
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(a.agent.ended("auth"), "A's execution returned");
    let mut more = msg("thanks");
    more.task_id = task.id.clone();
    let err = a.handler.handle(&CallContext::default(), send(&tenant, more, false)).await.err().expect("refused");
    assert_eq!(err.kind, a2a_native::ErrorKind::UnsupportedOperation, "B still runs it: {err:?}");
    let cancel = CancelTaskRequest { tenant: tenant.clone(), id: task.id.clone(), metadata: None };
    call(&b.handler, A2ARequest::CancelTask(cancel)).await;
}

/// Instance A, on a PostgreSQL store that can stall message commits, and instance B; a task
/// of a new tenant that asked A for input, with a subscriber keeping its live state on A; and
/// a follow-up to it on A, dropped by its caller after 100 ms while `stall` is set.
async fn a_message_dropped_on_a(
    stall: fn(&support::store::Faulty) -> &std::sync::atomic::AtomicBool,
) -> Option<Dropped> {
    use support::store::Faulty;
    let b = instance().await?;
    let url = std::env::var("A2A_TEST_POSTGRES_URL").unwrap();
    let pg = a2a_native::store::PostgresStore::connect(&url).await.unwrap();
    let store = Arc::new(Faulty::new(Arc::new(pg.clone())));
    let stores = Stores { tasks: store.clone(), push: Arc::new(pg) };
    let a = RequestHandler::new(agent(), card(), stores, ServerConfig::default());
    let tenant = tenant();
    let task = task_of(call(&a, send(&tenant, msg("ask"), false)).await);
    assert_eq!(task.status.state, TaskState::InputRequired);
    let watching = open(&a, subscribe(&tenant, &task.id)).await;
    Faulty::set(stall(&store), true);
    let mut dropped = msg("park");
    dropped.task_id = task.id.clone();
    let caller = CallContext::default();
    let gave_up = tokio::time::timeout(Duration::from_millis(100), a.handle(&caller, send(&tenant, dropped, false)));
    assert!(gave_up.await.is_err(), "dropped inside the stalled commit");
    Faulty::set(stall(&store), false);
    tokio::time::sleep(Duration::from_millis(200)).await;
    Some(Dropped { a, b, tenant, task, _watching: watching })
}

struct Dropped {
    a: RequestHandler,
    b: Instance,
    tenant: String,
    task: Task,
    _watching: EventStream,
}

/// A message whose caller hung up while its turn was being stored leaves no turn behind: the
/// instance then still sees that another one runs the task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_dropped_while_its_turn_is_stored_leaves_no_turn_behind() {
    // The subscriber stays bound: the task's live state (and any turn left in it) lives on.
    let Some(Dropped { a, b, tenant, task, _watching }) = a_message_dropped_on_a(|s| &s.slow_messages).await else {
        return;
    };
    // B takes the task; A must see that and refuse a message of its own.
    let mut hold = msg("hold");
    hold.task_id = task.id.clone();
    call(&b.handler, send(&tenant, hold, true)).await;
    let mut more = msg("thanks");
    more.task_id = task.id.clone();
    let err = a.handle(&CallContext::default(), send(&tenant, more, false)).await.err().expect("refused on A");
    assert_eq!(err.kind, a2a_native::ErrorKind::UnsupportedOperation, "B runs it: {err:?}");
    let cancel = CancelTaskRequest { tenant: tenant.clone(), id: task.id.clone(), metadata: None };
    call(&b.handler, A2ARequest::CancelTask(cancel)).await;
}

/// A message whose caller hung up after its turn was stored (the request never saw the commit)
/// gives the task's lease back: another instance takes the next message at once, not after the
/// lease lapses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_dropped_after_its_turn_was_stored_gives_the_lease_back() {
    let Some(Dropped { a: _a, b, tenant, task, _watching }) = a_message_dropped_on_a(|s| &s.slow_after_messages).await
    else {
        return;
    };
    let mut next = msg("thanks");
    next.task_id = task.id.clone();
    let done = task_of(call(&b.handler, send(&tenant, next, false)).await);
    assert_eq!(done.status.state, TaskState::Completed, "B took it at once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_longer_than_a_lease_fails_no_task_whose_instance_lives() {
    // Both instances lose the database for several leases; the leases run out by its clock
    // though every owner lives. B's reaper used to end A's running task FAILED ("instance
    // lost") the moment the database came back, before A could renew.
    use support::store::Faulty;
    if std::env::var("A2A_TEST_POSTGRES_URL").map_or(true, |u| u.is_empty()) {
        let _ = instance().await; // says SKIPPED, or fails when PostgreSQL is required
        return;
    }
    // A database of its own: the reapers of other tests' instances (which the simulated outage
    // does not reach) would rightly end a task whose lease they see run out.
    let shared = std::env::var("A2A_TEST_POSTGRES_URL").unwrap();
    let admin = sqlx::PgPool::connect(&shared).await.unwrap();
    let name = format!("a2a_outage_{}", uuid::Uuid::new_v4().simple());
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&admin).await.unwrap();
    let url = format!("{}/{name}", shared.rsplit_once('/').unwrap().0);
    let fast = ServerConfig {
        lease: Duration::from_millis(1000),
        reap_interval: Duration::from_millis(50),
        ..Default::default()
    };
    let mut faulty = Vec::new();
    let mut handlers = Vec::new();
    for _ in 0..2 {
        let pg = a2a_native::store::PostgresStore::connect(&url).await.unwrap();
        let store = Arc::new(Faulty::new(Arc::new(pg.clone())));
        let stores = Stores { tasks: store.clone(), push: Arc::new(pg) };
        handlers.push(RequestHandler::new(agent(), card(), stores, fast.clone()));
        faulty.push(store);
    }
    let (a, b) = (&handlers[0], &handlers[1]);
    let tenant = tenant();
    let task = task_of(call(a, send(&tenant, msg("hold"), true)).await);
    tokio::time::sleep(Duration::from_millis(300)).await;
    for store in &faulty {
        Faulty::set(&store.leases_down, true);
    }
    tokio::time::sleep(Duration::from_millis(3500)).await;
    for store in &faulty {
        Faulty::set(&store.leases_down, false);
    }
    // Past the hold-off (two leases) and many reaps after the database came back: A renewed.
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let get = |h| {
        let req =
            a2a_native::model::GetTaskRequest { tenant: tenant.clone(), id: task.id.clone(), history_length: None };
        call(h, A2ARequest::GetTask(req))
    };
    let read: Task = serde_json::from_value(get(b).await).unwrap();
    assert_eq!(read.status.state, TaskState::Working, "{read:?}");
    let cancel = CancelTaskRequest { tenant: tenant.clone(), id: task.id.clone(), metadata: None };
    call(b, A2ARequest::CancelTask(cancel)).await;
    drop(handlers);
    let _ = sqlx::query(sqlx::AssertSqlSafe(format!("DROP DATABASE {name} WITH (FORCE)"))).execute(&admin).await;
}
