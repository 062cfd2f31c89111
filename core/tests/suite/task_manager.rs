//! The request handler and task manager without HTTP: blocking and streaming sends, direct
//! replies, multi-turn, cancel (the executor really stops; late events are refused),
//! subscribers, disconnects, executor errors, limits, and that live state is released.

use crate::support;

use a2a_native::model::{
    self, AgentCard, CancelTaskRequest, GetTaskRequest, Message, Part, Role, SendMessageConfiguration,
    SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task, TaskState,
};
use a2a_native::request::A2ARequest;
use a2a_native::server::{CallContext, EventStream, Limits, Reply, RequestHandler, ServerConfig, Stores};
use a2a_native::{A2AError, ErrorKind};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use support::agent::{Step, TestAgent};

/// Scripted by the first word of the message text: `message` replies directly; `complete` works,
/// returns the text as an artifact and completes; `input` asks, and completes when answered;
/// `linger` asks and takes a while to return, the answer takes longer still; `fail` errs;
/// `panic` panics;
/// `slow` works 300 ms before it completes; `wait` ignores cancellation and completes later
/// from elsewhere; `nothing` returns at once; `hang` works forever; `pause` works 300 ms and
/// returns with the task still working; `late` does too, with an artifact at the end. Anything else completes.
/// Its `cancel` takes a moment, as real agents do: CANCELED is written only after it returns.
fn agent() -> Arc<TestAgent> {
    let asks = Step::status(TaskState::InputRequired, "more please");
    Arc::new(
        TestAgent::new()
            .on("message", [Step::reply("you said {text}")])
            .on(
                "complete",
                [Step::working(), Step::artifact("out", "{text}"), Step::status(TaskState::Completed, "done")],
            )
            .on("input", [asks.clone()])
            .on("chat", [asks.clone()])
            .on_follow_up("chat", [asks.clone()])
            .on("bulky", [Step::artifact("out", &"{text}".repeat(60)), asks.clone()])
            .on_follow_up("bulky", [asks.clone()])
            .on_follow_up("input", [Step::complete()])
            .on("linger", [asks, Step::sleep(200)])
            .on_follow_up("linger", [Step::working(), Step::sleep(400), Step::complete()])
            .on("fail", [Step::fail("boom")])
            .on("regret", [Step::complete(), Step::fail("failed after the end")])
            .on("panic", [Step::working(), Step::Panic("oops".into())])
            .on("slow", [Step::working(), Step::sleep(300), Step::artifact("out", "late"), Step::complete()])
            .on("wait", [Step::working(), Step::complete_later(150), Step::Hang])
            .on("nothing", [])
            .on("quiet", [Step::sleep(300), Step::complete()])
            .on("mute", [Step::sleep(300)])
            .on("tardy", [Step::sleep(300), Step::reply("answered late")])
            .on("early", [Step::WorkingSince(Duration::from_millis(50)), Step::complete()])
            .on("hang", [Step::working(), Step::Hang])
            .on("pause", [Step::working(), Step::sleep(300)])
            .on("late", [Step::working(), Step::sleep(300), Step::artifact("out", "late")])
            .on("chatty", [Step::working(), Step::reply("halfway there"), Step::complete()])
            .on("askchat", [Step::status(TaskState::InputRequired, "which one?")])
            .on_follow_up("askchat", [Step::reply("noted"), Step::sleep(100), Step::complete()])
            .otherwise([Step::complete()])
            .cancel_delay(60),
    )
}

fn card(streaming: bool, push: bool) -> AgentCard {
    model::parse_value(json!({
        "name": "t", "description": "test agent", "version": "1",
        "supportedInterfaces": [{"url": "http://127.0.0.1/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": streaming, "pushNotifications": push},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    }))
    .unwrap()
}

fn handler_with(limits: Limits, streaming: bool) -> (RequestHandler, Arc<TestAgent>) {
    let agent = agent();
    let config = ServerConfig { limits, ..Default::default() };
    (RequestHandler::new(agent.clone(), card(streaming, true), Stores::memory(), config), agent)
}

fn handler() -> RequestHandler {
    handler_with(Limits::default(), true).0
}

fn msg(text: &str) -> Message {
    Message::text(Role::User, text)
}

async fn call(h: &RequestHandler, req: A2ARequest) -> Result<Value, A2AError> {
    match h.handle(&CallContext::default(), req).await? {
        Reply::Value(v) => Ok(v.to_value()),
        Reply::Empty => Ok(Value::Null),
        Reply::Stream(_) => panic!("unexpected stream"),
    }
}

async fn stream(h: &RequestHandler, req: A2ARequest) -> Result<EventStream, A2AError> {
    match h.handle(&CallContext::default(), req).await? {
        Reply::Stream(s) => Ok(s),
        _ => panic!("expected a stream"),
    }
}

async fn send(h: &RequestHandler, m: Message) -> Result<Value, A2AError> {
    call(h, A2ARequest::SendMessage(SendMessageRequest::new(m))).await
}

async fn send_task(h: &RequestHandler, m: Message) -> Task {
    let v = send(h, m).await.unwrap();
    serde_json::from_value(v["task"].clone()).unwrap_or_else(|e| panic!("not a task reply: {v} ({e})"))
}

async fn get(h: &RequestHandler, id: &str) -> Result<Task, A2AError> {
    let req = GetTaskRequest { id: id.into(), ..Default::default() };
    call(h, A2ARequest::GetTask(req)).await.map(|v| serde_json::from_value(v).unwrap())
}

async fn collect(mut s: EventStream) -> Vec<StreamResponse> {
    let mut out = Vec::new();
    while let Some(e) = tokio::time::timeout(Duration::from_secs(5), s.next()).await.expect("stream stalled") {
        out.push(e);
    }
    out
}

fn kinds(events: &[StreamResponse]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            StreamResponse::Task(t) => format!("task:{}", t.status.state),
            StreamResponse::Message(_) => "message".into(),
            StreamResponse::StatusUpdate(u) => format!("status:{}", u.status.state),
            StreamResponse::ArtifactUpdate(_) => "artifact".into(),
        })
        .collect()
}

/// Sends `text` with returnImmediately: the new task's id (its execution still runs).
async fn started(h: &RequestHandler, text: &str) -> String {
    let mut req = SendMessageRequest::new(msg(text));
    req.configuration = Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
    let v = call(h, A2ARequest::SendMessage(req)).await.unwrap();
    v["task"]["id"].as_str().unwrap().to_owned()
}

/// Waits until the manager holds no task in memory.
async fn settled(h: &RequestHandler) {
    for _ in 0..200 {
        if h.live_tasks() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("{} live tasks never released", h.live_tasks());
}

#[tokio::test]
async fn blocking_send_returns_the_completed_task_and_stores_it() {
    let h = handler();
    let task = send_task(&h, msg("complete this")).await;
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts.len(), 1);
    assert_eq!(task.artifacts[0].parts[0].as_text(), Some("complete this"));
    assert_eq!(task.history[0].text_content(), "complete this");
    assert_eq!(task.history[0].task_id, task.id);
    assert!(!task.context_id.is_empty());
    assert_eq!(get(&h, &task.id).await.unwrap(), task);
    // The reply took the finished task from the live entry: a message that follows it is
    // checked against the stored task, and refused as continuing a terminal one.
    let mut again = msg("more");
    again.task_id = task.id.clone();
    assert_eq!(send(&h, again).await.unwrap_err().kind, ErrorKind::UnsupportedOperation);
    assert_eq!(get(&h, &task.id).await.unwrap(), task);
    settled(&h).await;
}

#[tokio::test]
async fn direct_message_reply_creates_no_task() {
    let h = handler();
    let v = send(&h, msg("message hi")).await.unwrap();
    assert_eq!(v["message"]["parts"][0]["text"], "you said message hi");
    assert_eq!(v["message"]["role"], "ROLE_AGENT");
    assert!(v["message"].get("taskId").is_none());
    settled(&h).await;
}

#[tokio::test]
async fn return_immediately_answers_before_the_task_ends() {
    let h = handler();
    let mut req = SendMessageRequest::new(msg("slow"));
    req.configuration = Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
    let v = call(&h, A2ARequest::SendMessage(req)).await.unwrap();
    let task: Task = serde_json::from_value(v["task"].clone()).unwrap();
    assert!(task.status.state.is_active(), "{:?}", task.status.state);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(get(&h, &task.id).await.unwrap().status.state, TaskState::Completed);
}

#[tokio::test]
async fn input_required_then_follow_up_on_the_same_task() {
    let h = handler();
    let first = send_task(&h, msg("input")).await;
    assert_eq!(first.status.state, TaskState::InputRequired);
    assert_eq!(first.status.message.as_ref().unwrap().text_content(), "more please");
    let mut follow = msg("more");
    follow.task_id = first.id.clone();
    let second = send_task(&h, follow).await;
    assert_eq!(second.id, first.id);
    assert_eq!(second.context_id, first.context_id);
    assert_eq!(second.status.state, TaskState::Completed);
    let texts: Vec<_> = second.history.iter().map(Message::text_content).collect();
    assert_eq!(texts, ["input", "more please", "more"]);
    // Completed now: another message is refused, as is a contradicting contextId.
    let mut again = msg("more");
    again.task_id = first.id.clone();
    assert_eq!(send(&h, again).await.unwrap_err().kind, ErrorKind::UnsupportedOperation);
}

#[tokio::test]
async fn a_follow_up_waits_for_its_own_turn_not_the_end_of_the_previous_one() {
    // The first turn's execution returns after its INPUT_REQUIRED was answered, while the
    // second turn runs: the second (blocking or streaming) waiter must not stop at that end.
    let h = handler();
    let first = send_task(&h, msg("linger")).await;
    assert_eq!(first.status.state, TaskState::InputRequired);
    let mut follow = msg("linger");
    follow.task_id = first.id.clone();
    assert_eq!(send_task(&h, follow).await.status.state, TaskState::Completed);

    let first = send_task(&h, msg("linger")).await;
    let mut follow = msg("linger");
    follow.task_id = first.id.clone();
    let events =
        collect(stream(&h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(follow))).await.unwrap()).await;
    match events.last() {
        Some(StreamResponse::StatusUpdate(e)) => assert_eq!(e.status.state, TaskState::Completed),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_subscription_outlives_an_earlier_turn_ending_while_the_task_works_on() {
    // The spec ends a subscription at a terminal or interrupted state. The first turn's
    // execution returning while the follow-up's runs is neither: the subscriber must see
    // the follow-up through to COMPLETED.
    let h = handler();
    let first = send_task(&h, msg("linger")).await;
    assert_eq!(first.status.state, TaskState::InputRequired);
    let mut follow = SendMessageRequest::new(Message { task_id: first.id.clone(), ..msg("linger") });
    follow.configuration = Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
    call(&h, A2ARequest::SendMessage(follow)).await.unwrap();
    let sub = A2ARequest::SubscribeToTask(SubscribeToTaskRequest { id: first.id.clone(), ..Default::default() });
    let events = collect(stream(&h, sub).await.unwrap()).await;
    assert_eq!(kinds(&events).last().map(String::as_str), Some("status:TASK_STATE_COMPLETED"), "{events:?}");
}

#[tokio::test]
async fn a_stream_outlives_its_execution_when_a_follow_up_holds_the_task() {
    // The first message's execution returns with the task WORKING while a follow-up's runs:
    // its stream goes on to the follow-up's COMPLETED, as a subscription does.
    let h = handler();
    let mut s = stream(&h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(msg("pause")))).await.unwrap();
    let first = s.next().await.unwrap();
    let id = first.task_id().unwrap().to_owned();
    let mut follow = SendMessageRequest::new(Message { task_id: id, ..msg("linger") });
    follow.configuration = Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
    call(&h, A2ARequest::SendMessage(follow)).await.unwrap();
    let events = collect(s).await;
    assert_eq!(kinds(&events).last().map(String::as_str), Some("status:TASK_STATE_COMPLETED"), "{events:?}");
}

#[tokio::test]
async fn a_stream_ends_when_its_execution_returns_and_nothing_else_runs_the_task() {
    let h = handler();
    let s = stream(&h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(msg("pause")))).await.unwrap();
    assert_eq!(kinds(&collect(s).await), ["task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING"]);
}

#[tokio::test]
async fn a_stream_goes_on_while_its_execution_runs_though_a_later_one_returned() {
    // A follow-up's execution returns at once, the task still WORKING, while the first one
    // still runs: the first stream must stay open for that execution's artifact.
    let h = handler();
    let mut s = stream(&h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(msg("late")))).await.unwrap();
    let first = s.next().await.unwrap();
    let id = first.task_id().unwrap().to_owned();
    let mut follow = SendMessageRequest::new(Message { task_id: id, ..msg("nothing") });
    follow.configuration = Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
    call(&h, A2ARequest::SendMessage(follow)).await.unwrap();
    let events = collect(s).await;
    assert_eq!(kinds(&events).last().map(String::as_str), Some("artifact"), "{events:?}");
}

#[tokio::test]
async fn message_to_unknown_task_or_wrong_context_is_refused() {
    let h = handler();
    let mut m = msg("more");
    m.task_id = "nope".into();
    assert_eq!(send(&h, m).await.unwrap_err().kind, ErrorKind::TaskNotFound);
    let first = send_task(&h, msg("input")).await;
    let mut m = msg("more");
    m.task_id = first.id;
    m.context_id = "other".into();
    let err = send(&h, m).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidParams);
}

#[tokio::test]
async fn streaming_sends_the_task_first_then_updates_in_order_and_closes() {
    let h = handler();
    let s = stream(&h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(msg("complete")))).await.unwrap();
    let events = collect(s).await;
    assert_eq!(
        kinds(&events),
        ["task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "artifact", "status:TASK_STATE_COMPLETED"]
    );
    let id = events[0].task_id().unwrap().to_owned();
    assert!(events.iter().all(|e| e.task_id() == Some(&id)));
    settled(&h).await;
}

/// No client can grow one task without end: a message that would take it past
/// `limits.maxTaskBytes` is refused (InvalidRequest, naming the limit) and changes nothing;
/// other tasks go on.
#[tokio::test]
async fn a_message_that_would_overfill_its_task_is_refused() {
    let (h, _) = handler_with(Limits { max_task_bytes: 4_000, ..Default::default() }, true);
    let task = send_task(&h, msg("chat")).await;
    assert_eq!(task.status.state, TaskState::InputRequired);
    let follow_up = || {
        let mut m = msg(&format!("chat {}", "x".repeat(1_000)));
        m.task_id = task.id.clone();
        m
    };
    let mut accepted = 0;
    let refused = loop {
        match send(&h, follow_up()).await {
            Ok(_) => accepted += 1,
            Err(e) => break e,
        }
        assert!(accepted < 10, "never refused");
    };
    assert!(accepted >= 1, "a task below the limit takes messages");
    assert_eq!(refused.kind, ErrorKind::InvalidRequest, "{refused:?}");
    assert!(refused.message.contains("limits.maxTaskBytes 4000"), "{}", refused.message);
    let after = get(&h, &task.id).await.unwrap();
    assert_eq!(after.status.state, TaskState::InputRequired, "the refused message changed nothing");
    // Each accepted follow-up added itself and the question it answered.
    assert_eq!(after.history.len(), 1 + 2 * accepted);
    assert_eq!(send_task(&h, msg("chat")).await.status.state, TaskState::InputRequired, "other tasks go on");
    // A first message over the limit on its own makes no task, blocking or streaming.
    let count = |page: Value| page["tasks"].as_array().map_or(0, Vec::len);
    let before = count(call(&h, A2ARequest::ListTasks(Default::default())).await.unwrap());
    let big = || msg(&format!("chat {}", "y".repeat(5_000)));
    let refused = send(&h, big()).await.unwrap_err();
    assert_eq!(refused.kind, ErrorKind::InvalidRequest, "{refused:?}");
    assert!(refused.message.contains("limits.maxTaskBytes 4000"), "{}", refused.message);
    let refused = stream(&h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(big()))).await.err().unwrap();
    assert_eq!(refused.kind, ErrorKind::InvalidRequest, "{refused:?}");
    let after = count(call(&h, A2ARequest::ListTasks(Default::default())).await.unwrap());
    assert_eq!(after, before, "no task was made");

    // What the agent produced does not count: a client can always answer it.
    let bulky = send_task(&h, msg(&format!("bulky {}", "z".repeat(100)))).await;
    let output = serde_json::to_string(&bulky.artifacts).unwrap();
    assert!(output.len() > 4_000, "the agent's output is past the limit");
    let mut answer = msg("bulky yes");
    answer.task_id = bulky.id.clone();
    let answered = send(&h, answer).await.unwrap();
    assert_eq!(answered["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{answered}");
    settled(&h).await;
}

/// The task an agent's first status brings into being is SUBMITTED no later than that status:
/// a task's status times never run backwards on its stream (it happened 1 ms apart when the
/// agent stamped its event just before the task was made).
#[tokio::test]
async fn status_times_never_run_backwards_on_a_stream() {
    let h = handler();
    let s = stream(&h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(msg("early")))).await.unwrap();
    let events = collect(s).await;
    assert_eq!(
        kinds(&events),
        ["task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "status:TASK_STATE_COMPLETED"]
    );
    let times: Vec<_> = events
        .iter()
        .map(|e| match e {
            StreamResponse::Task(t) => t.status.timestamp.unwrap(),
            StreamResponse::StatusUpdate(u) => u.status.timestamp.unwrap(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    settled(&h).await;
}

/// A stream whose client reads nothing while the agent sends far more events than the task's
/// bus and the stream's queue hold falls behind the bus; it is then filled from the log, so the
/// client still gets every event once, in order, and the stream ends at the terminal state.
#[tokio::test]
async fn a_stream_that_fell_far_behind_gets_every_event_once_in_order() {
    const ARTIFACTS: usize = 400;
    let steps = std::iter::once(Step::working())
        .chain((0..ARTIFACTS).map(|i| Step::artifact(&format!("n{i}"), "x")))
        .chain([Step::complete()]);
    let agent = Arc::new(TestAgent::new().on("flood", steps));
    let h = RequestHandler::new(agent, card(true, false), Stores::memory(), ServerConfig::default());
    let mut s = stream(&h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(msg("flood")))).await.unwrap();
    let first = s.next().await.unwrap();
    let id = first.task_id().unwrap().to_owned();
    // The rest is not read until the agent is done: every event is committed while the stream waits.
    for _ in 0..500 {
        if get(&h, &id).await.unwrap().status.state == TaskState::Completed {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let events: Vec<StreamResponse> = std::iter::once(first).chain(collect(s).await).collect();
    let names: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamResponse::ArtifactUpdate(a) => Some(a.artifact.name.as_str()),
            _ => None,
        })
        .collect();
    let expected: Vec<String> = (0..ARTIFACTS).map(|i| format!("n{i}")).collect();
    assert_eq!(names, expected);
    let k = kinds(&events);
    assert_eq!(k.len(), ARTIFACTS + 3, "{k:?}");
    assert_eq!(k[..2], ["task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING"]);
    assert_eq!(k[k.len() - 1], "status:TASK_STATE_COMPLETED");
    settled(&h).await;
}

/// A subscriber that fell behind while a blocking send finished the task (the reply took the
/// task from the live entry): the log holds only the newest entries, so the gap is filled with
/// the stored task, read again from the store, and the stream ends at the terminal state.
#[tokio::test]
async fn a_lagging_subscriber_gets_the_final_task_after_a_blocking_send_took_it() {
    const ARTIFACTS: usize = 300;
    let steps = [Step::working(), Step::sleep(200)]
        .into_iter()
        .chain((0..ARTIFACTS).map(|i| Step::artifact(&format!("n{i}"), "x")))
        .chain([Step::complete()]);
    let agent = Arc::new(TestAgent::new().on("flood", steps));
    let store = Arc::new(a2a_native::store::MemoryStore::new(a2a_native::store::MemoryLimits {
        max_log_entries: 8,
        ..Default::default()
    }));
    let stores = Stores { tasks: store.clone(), push: store };
    let h = Arc::new(RequestHandler::new(agent, card(true, false), stores, ServerConfig::default()));
    let sender = tokio::spawn({
        let h = h.clone();
        async move { send_task(&h, msg("flood")).await }
    });
    let id = loop {
        let listed = call(&h, A2ARequest::ListTasks(Default::default())).await.unwrap();
        if let Some(id) = listed["tasks"][0]["id"].as_str() {
            break id.to_owned();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let sub = stream(&h, A2ARequest::SubscribeToTask(SubscribeToTaskRequest { id: id.clone(), ..Default::default() }))
        .await
        .unwrap();
    // Not read until the blocking send has its reply: the stream falls far behind meanwhile.
    let done = sender.await.unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    let events = collect(sub).await;
    let last = events.last().expect("events");
    let final_state = match last {
        StreamResponse::Task(t) => t.status.state,
        StreamResponse::StatusUpdate(u) => u.status.state,
        other => panic!("ends with {other:?}"),
    };
    assert_eq!(final_state, TaskState::Completed, "{:?}", kinds(&events));
    // Every artifact reached the subscriber: as its own event, or inside the task that filled the gap.
    let mut seen = std::collections::BTreeSet::new();
    for event in &events {
        match event {
            StreamResponse::ArtifactUpdate(a) => seen.extend([a.artifact.name.clone()]),
            StreamResponse::Task(t) => seen.extend(t.artifacts.iter().map(|a| a.name.clone())),
            _ => {}
        }
    }
    assert_eq!(seen.len(), ARTIFACTS, "{:?}", kinds(&events));
    settled(&h).await;
}

/// A long stream read slower than the agent writes (an LLM's answer in thousands of chunks, to
/// a client that reads later) loses nothing on the default memory store: the stream falls
/// behind the live bus and catches up from the log, event for event (the log kept only 1,000
/// entries, and the middle of the answer was replaced by a snapshot).
#[tokio::test]
async fn a_slow_reader_of_a_long_stream_gets_every_event_from_the_memory_store() {
    const CHUNKS: usize = 3000;
    let chunks = (0..CHUNKS).map(|i| Step::Chunk {
        id: Some("answer".into()),
        text: format!("t{i} "),
        append: i > 0,
        last: i + 1 == CHUNKS,
    });
    let steps = [Step::working()].into_iter().chain(chunks).chain([Step::complete()]);
    let agent = Arc::new(TestAgent::new().on("tokens", steps));
    let h = RequestHandler::new(agent, card(true, false), Stores::memory(), ServerConfig::default());
    let s = stream(&h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(msg("tokens")))).await.unwrap();
    let id = loop {
        let listed = call(&h, A2ARequest::ListTasks(Default::default())).await.unwrap();
        if let Some(id) = listed["tasks"][0]["id"].as_str() {
            break id.to_owned();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    // Not read until the agent is done: the stream is far behind the bus by then.
    for _ in 0..500 {
        if get(&h, &id).await.is_ok_and(|t| t.status.state == TaskState::Completed) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let events = collect(s).await;
    let texts: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            StreamResponse::ArtifactUpdate(u) => match &u.artifact.parts[0].content {
                model::PartContent::Text(t) => Some(t.clone()),
                other => panic!("{other:?}"),
            },
            _ => None,
        })
        .collect();
    let expected: Vec<String> = (0..CHUNKS).map(|i| format!("t{i} ")).collect();
    assert!(texts == expected, "{} chunks of {CHUNKS} arrived in order; {:?}", texts.len(), &kinds(&events)[..8]);
    let snapshots = events.iter().filter(|e| matches!(e, StreamResponse::Task(_))).count();
    assert_eq!(snapshots, 1, "only the opening snapshot");
    match events.last() {
        Some(StreamResponse::StatusUpdate(u)) => assert_eq!(u.status.state, TaskState::Completed),
        other => panic!("ends with {other:?}"),
    }
}

/// Tasks are private to their principal: the partition is the tenant, U+001F, the principal.
/// A tenant with that character (or any control character) is refused, so an anonymous caller
/// cannot name a principal's partition as its tenant and read its tasks.
#[tokio::test]
async fn a_tenant_with_a_control_character_is_refused_so_no_partition_can_be_named() {
    let h = handler();
    let alice =
        CallContext { principal: Some(a2a_native::auth::Principal::named("alice", vec![])), ..Default::default() };
    let reply = h.handle(&alice, A2ARequest::SendMessage(SendMessageRequest::new(msg("complete")))).await.unwrap();
    let Reply::Value(v) = reply else { panic!("a blocking send answers a value") };
    let id = v.to_value()["task"]["id"].as_str().unwrap().to_owned();
    for tenant in ["\u{1f}alice", "a\nb", "\u{0}"] {
        let get = GetTaskRequest { id: id.clone(), tenant: tenant.into(), ..Default::default() };
        let e = call(&h, A2ARequest::GetTask(get)).await.unwrap_err();
        assert_eq!((e.kind, e.violations[0].field.as_str()), (ErrorKind::InvalidParams, "tenant"), "{tenant:?}: {e}");
        let list = model::ListTasksRequest { tenant: tenant.into(), ..Default::default() };
        let e = call(&h, A2ARequest::ListTasks(list)).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidParams, "{tenant:?}: {e}");
    }
    // Alice still reads her task; anonymous callers do not find it.
    let get = || A2ARequest::GetTask(GetTaskRequest { id: id.clone(), ..Default::default() });
    assert!(h.handle(&alice, get()).await.is_ok());
    assert_eq!(call(&h, get()).await.unwrap_err().kind, ErrorKind::TaskNotFound);
}

/// A data part or metadata may nest 31 arrays and objects deep; deeper is refused naming the
/// field. What is accepted is stored and read back whole, from SQLite too, whose copy sits
/// several levels deeper than the request had it (a value that serde_json could parse in the
/// request but not in the store made its task, and every list page holding it, unreadable).
/// After a clean shutdown the SQLite file alone holds every task: its WAL was folded in, so
/// copying (or backing up) the `.db` file without the `-wal` beside it loses nothing.
#[tokio::test]
async fn a_clean_shutdown_leaves_the_sqlite_file_whole() {
    let dir = std::env::temp_dir().join(format!("a2a-checkpoint-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("t.db");
    let stores = Stores::open(&format!("sqlite:{}", db.display())).await.unwrap();
    let h = RequestHandler::new(agent(), card(true, false), stores, ServerConfig::default());
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(send_task(&h, msg("complete")).await.id);
    }
    h.shutdown().await;
    let copy = dir.join("copy.db");
    std::fs::copy(&db, &copy).unwrap();
    let stores = Stores::open(&format!("sqlite:{}", copy.display())).await.unwrap();
    let again = RequestHandler::new(agent(), card(true, false), stores, ServerConfig::default());
    for id in &ids {
        assert_eq!(get(&again, id).await.unwrap().status.state, TaskState::Completed, "{id} is in the file alone");
    }
    drop((h, again));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn values_nest_at_most_31_deep_and_what_is_accepted_reads_back_from_sqlite() {
    const MAX: usize = a2a_native::model::MAX_VALUE_DEPTH;
    assert_eq!(MAX, 31);
    let nested = |depth: usize| -> Value { (1..depth).fold(json!([]), |inner, _| json!([inner])) };
    let metadata = |depth: usize| json!({"m": nested(depth - 1)});
    let dir = tempfile::tempdir().unwrap();
    let stores = Stores::open(&format!("sqlite:{}", dir.path().join("t.db").display())).await.unwrap();
    let h = RequestHandler::new(agent(), card(true, false), stores, ServerConfig::default());
    // Read without validation: the server is what must refuse.
    let message = |data: Value, meta: Value| -> Message {
        serde_json::from_value(json!({"messageId": "m", "role": "ROLE_USER", "metadata": meta,
            "parts": [{"data": data, "metadata": meta}]}))
        .unwrap()
    };

    let task = send_task(&h, message(nested(MAX), metadata(MAX))).await;
    let stored = model::to_value(&get(&h, &task.id).await.unwrap());
    assert_eq!(stored["history"][0]["parts"][0]["data"], nested(MAX));
    assert_eq!(stored["history"][0]["metadata"], metadata(MAX));
    let listed = call(&h, A2ARequest::ListTasks(Default::default())).await.unwrap();
    assert_eq!(listed["tasks"][0]["id"], task.id.as_str());

    // Requests are validated as they are read from the wire (every binding reads them so).
    let read = |data: Value, meta: Value| {
        let params = json!({"message": model::to_value(&message(data, meta))});
        A2ARequest::from_params(a2a_native::request::Method::SendMessage, params, "")
    };
    assert!(read(nested(MAX), metadata(MAX)).is_ok());
    for (data, meta, field) in [
        (nested(MAX + 1), metadata(2), "message.parts[0].data"),
        (nested(2), metadata(MAX + 1), "message.metadata"),
        (nested(123), metadata(2), "message.parts[0].data"),
    ] {
        let e = read(data, meta).unwrap_err();
        assert_eq!((e.kind, e.violations[0].field.as_str()), (ErrorKind::InvalidParams, field), "{e}");
    }
    // Every request's own metadata too: CancelTask's goes to the executor's `cancel`.
    let cancel = |meta: Value| {
        let params = json!({"id": task.id, "metadata": meta});
        A2ARequest::from_params(a2a_native::request::Method::CancelTask, params, "")
    };
    assert!(cancel(metadata(MAX)).is_ok());
    let e = cancel(metadata(MAX + 1)).unwrap_err();
    assert_eq!((e.kind, e.violations[0].field.as_str()), (ErrorKind::InvalidParams, "metadata"), "{e}");
}

#[tokio::test]
async fn streaming_direct_reply_is_one_message() {
    let h = handler();
    let s = stream(&h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(msg("message x")))).await.unwrap();
    assert_eq!(kinds(&collect(s).await), ["message"]);
}

/// A Message the agent sends once its task exists: a task's stream carries status and artifact
/// updates only (a2a-sdk's server refuses such a stream), so it goes out as a status update of
/// the task's state carrying the message, which then joins the task's history.
#[tokio::test]
async fn a_message_after_the_task_exists_goes_out_as_a_status_update() {
    let h = handler();
    let events = collect(stream_send(&h, msg("chatty x")).await).await;
    assert_eq!(
        kinds(&events),
        [
            "task:TASK_STATE_SUBMITTED",
            "status:TASK_STATE_WORKING",
            "status:TASK_STATE_WORKING",
            "status:TASK_STATE_COMPLETED"
        ]
    );
    let StreamResponse::StatusUpdate(said) = &events[2] else { unreachable!() };
    assert_eq!(said.status.state, TaskState::Working);
    let message = said.status.message.as_ref().expect("the message");
    assert_eq!((message.role, message.text_content().as_str()), (Role::Agent, "halfway there"));
    let StreamResponse::Task(task) = &events[0] else { unreachable!() };
    let got = get(&h, &task.id).await.unwrap();
    assert_eq!(got.status.state, TaskState::Completed);
    assert!(got.history.iter().any(|m| m.role == Role::Agent && m.text_content() == "halfway there"), "{got:?}");
}

/// The same in a turn that answers a question: the task is working again, so the message goes
/// out WORKING (as INPUT_REQUIRED it ended the caller's wait while the agent worked on).
#[tokio::test]
async fn a_message_in_a_turn_that_answers_a_question_is_a_working_update() {
    let h = handler();
    let asked = send(&h, msg("askchat")).await.unwrap();
    assert_eq!(asked["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{asked}");
    let mut answer = msg("askchat again");
    answer.task_id = asked["task"]["id"].as_str().unwrap().to_owned();
    let done = send(&h, answer).await.unwrap();
    assert_eq!(done["task"]["status"]["state"], "TASK_STATE_COMPLETED", "the wait went on to the end: {done}");
}

#[tokio::test]
async fn streaming_needs_the_capability() {
    let (h, _) = handler_with(Limits::default(), false);
    let err = stream(&h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(msg("x")))).await.err().unwrap();
    assert_eq!(err.kind, ErrorKind::UnsupportedOperation);
}

#[tokio::test]
async fn cancel_stops_the_executor_and_wins_over_a_late_completion() {
    let (h, agent) = handler_with(Limits::default(), true);
    let id = started(&h, "wait").await;
    let cancel = || A2ARequest::CancelTask(CancelTaskRequest { id: id.clone(), ..Default::default() });
    let task: Task = serde_json::from_value(call(&h, cancel()).await.unwrap()).unwrap();
    assert_eq!(task.status.state, TaskState::Canceled);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(agent.ended("wait"), "the executor's future was not stopped");
    // The agent's detached completion arrives after the cancel and is refused.
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(get(&h, &id).await.unwrap().status.state, TaskState::Canceled);
    // Idempotent in effect: canceling again is TaskNotCancelable and leaves the task CANCELED.
    assert_eq!(call(&h, cancel()).await.unwrap_err().kind, ErrorKind::TaskNotCancelable);
    assert_eq!(get(&h, &id).await.unwrap().status.state, TaskState::Canceled);
    settled(&h).await;
}

/// A CancelTask whose caller hangs up while the agent's `cancel` runs (it takes 60 ms here)
/// still ends the task CANCELED: the execution was stopped when the cancel began, so nothing
/// else would ever end the task, and a later cancel would find it WORKING.
#[tokio::test]
async fn a_cancel_whose_caller_hangs_up_still_ends_the_task_canceled() {
    let h = handler();
    let id = started(&h, "hang").await;
    let cancel = A2ARequest::CancelTask(CancelTaskRequest { id: id.clone(), ..Default::default() });
    // The request is dropped after 20 ms, inside the agent's 60 ms cancel.
    assert!(tokio::time::timeout(Duration::from_millis(20), call(&h, cancel)).await.is_err());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(get(&h, &id).await.unwrap().status.state, TaskState::Canceled);
    settled(&h).await;
}

#[tokio::test]
async fn streams_of_a_canceled_task_end_with_the_canceled_event() {
    let h = handler();
    let id = started(&h, "wait").await;
    let sub = stream(&h, A2ARequest::SubscribeToTask(SubscribeToTaskRequest { id: id.clone(), ..Default::default() }))
        .await
        .unwrap();
    let collected = tokio::spawn(collect(sub));
    tokio::time::sleep(Duration::from_millis(20)).await;
    call(&h, A2ARequest::CancelTask(CancelTaskRequest { id, ..Default::default() })).await.unwrap();
    let events = collected.await.unwrap();
    assert_eq!(kinds(&events).last().map(String::as_str), Some("status:TASK_STATE_CANCELED"), "{:?}", kinds(&events));
    settled(&h).await;
}

#[tokio::test]
async fn cancel_of_a_completed_or_unknown_task_is_refused() {
    let h = handler();
    let done = send_task(&h, msg("complete")).await;
    let cancel = |id: &str| A2ARequest::CancelTask(CancelTaskRequest { id: id.into(), ..Default::default() });
    assert_eq!(call(&h, cancel(&done.id)).await.unwrap_err().kind, ErrorKind::TaskNotCancelable);
    assert_eq!(call(&h, cancel("nope")).await.unwrap_err().kind, ErrorKind::TaskNotFound);
}

#[tokio::test]
async fn subscribers_each_get_the_snapshot_then_every_event_in_order() {
    let h = handler();
    let id = started(&h, "slow").await;
    let sub = || A2ARequest::SubscribeToTask(SubscribeToTaskRequest { id: id.clone(), ..Default::default() });
    let (a, b, c) =
        (stream(&h, sub()).await.unwrap(), stream(&h, sub()).await.unwrap(), stream(&h, sub()).await.unwrap());
    drop(c); // one subscriber leaving affects nobody else
    let (a, b) = tokio::join!(collect(a), collect(b));
    assert!(matches!(a[0], StreamResponse::Task(_)));
    assert_eq!(kinds(&a)[1..], ["artifact", "status:TASK_STATE_COMPLETED"]);
    assert_eq!(a, b);
    // Terminal now: subscribing is refused.
    assert_eq!(stream(&h, sub()).await.err().unwrap().kind, ErrorKind::UnsupportedOperation);
    settled(&h).await;
}

#[tokio::test]
async fn a_client_leaving_the_stream_does_not_stop_the_work() {
    let h = handler();
    let mut s = stream(&h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(msg("slow")))).await.unwrap();
    let first = s.next().await.unwrap();
    let id = first.task_id().unwrap().to_owned();
    drop(s);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let task = get(&h, &id).await.unwrap();
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts.len(), 1);
    settled(&h).await;
}

#[tokio::test]
async fn executor_error_or_silence_ends_the_task_failed() {
    let h = handler();
    let task = send_task(&h, msg("fail")).await;
    assert_eq!(task.status.state, TaskState::Failed);
    assert_eq!(task.status.message.unwrap().text_content(), "boom");
    let task = send_task(&h, msg("nothing")).await;
    assert_eq!(task.status.state, TaskState::Failed);
    // An executor that fails after it ended its task leaves the end as it was.
    let task = send_task(&h, msg("regret")).await;
    settled(&h).await;
    let stored = get(&h, &task.id).await.unwrap();
    assert_eq!(stored.status.state, TaskState::Completed, "{stored:?}");
}

#[tokio::test]
async fn an_executor_that_panics_fails_its_task_and_the_server_goes_on() {
    let h = handler();
    let task = send_task(&h, msg("panic")).await;
    assert_eq!(task.status.state, TaskState::Failed);
    // The panic's own words stay in the log: they may say anything.
    assert_eq!(task.status.message.unwrap().text_content(), "the executor panicked");
    // Streaming too: the stream ends with FAILED.
    let events =
        collect(stream(&h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(msg("panic")))).await.unwrap())
            .await;
    assert_eq!(kinds(&events).last().map(String::as_str), Some("status:TASK_STATE_FAILED"), "{events:?}");
    assert_eq!(send_task(&h, msg("complete")).await.status.state, TaskState::Completed);
    settled(&h).await;
}

/// A panic in the server's own handling of an execution (here in the store, as the agent's
/// artifact is written) fails the task instead of leaving it WORKING with nothing running it:
/// the blocking send answers at once, streams end, and the server goes on.
#[tokio::test]
async fn a_panic_in_the_servers_own_work_fails_the_task() {
    let store = Arc::new(support::store::Faulty::new(Arc::new(a2a_native::store::MemoryStore::default())));
    let stores = Stores { tasks: store.clone(), push: Stores::memory().push };
    let h = Arc::new(RequestHandler::new(agent(), card(true, true), stores, ServerConfig::default()));
    support::store::Faulty::set(&store.panic_on_artifact, true);
    let task = tokio::time::timeout(Duration::from_secs(5), send_task(&h, msg("complete"))).await.expect("answered");
    assert_eq!(task.status.state, TaskState::Failed, "{task:?}");
    assert_eq!(task.status.message.unwrap().text_content(), "an internal error ended the task");
    assert_eq!(get(&h, &task.id).await.unwrap().status.state, TaskState::Failed);

    support::store::Faulty::set(&store.panic_on_artifact, true);
    let events = tokio::time::timeout(Duration::from_secs(5), collect(stream_send(&h, msg("complete")).await))
        .await
        .expect("the stream ended");
    assert_eq!(kinds(&events).last().map(String::as_str), Some("status:TASK_STATE_FAILED"), "{events:?}");
    assert_eq!(send_task(&h, msg("complete")).await.status.state, TaskState::Completed);
    settled(&h).await;
}

/// A blocking send whose wait ends before the agent says anything gets the task, SUBMITTED
/// with its message, not an error: its id is what the caller follows the work by. The agent's
/// events go on from there; an agent that then returns without one fails the task.
#[tokio::test]
async fn a_wait_that_ends_before_the_agent_speaks_answers_with_the_submitted_task() {
    let (h, _) = handler_with(Limits { blocking_timeout: Duration::from_millis(100), ..Default::default() }, true);
    let task = send_task(&h, msg("quiet")).await;
    assert_eq!(task.status.state, TaskState::Submitted, "{task:?}");
    assert_eq!(task.history.len(), 1, "the caller's message is in the task");
    assert_eq!(task.history[0].text_content(), "quiet");
    let mut state = TaskState::Submitted;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        state = get(&h, &task.id).await.unwrap().status.state;
        if state == TaskState::Completed {
            break;
        }
    }
    assert_eq!(state, TaskState::Completed, "the agent's late events reach the task");

    let task = send_task(&h, msg("mute")).await;
    assert_eq!(task.status.state, TaskState::Submitted);
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        state = get(&h, &task.id).await.unwrap().status.state;
        if state == TaskState::Failed {
            break;
        }
    }
    let failed = get(&h, &task.id).await.unwrap();
    assert_eq!(failed.status.state, TaskState::Failed, "an agent that never spoke fails its task");
    assert_eq!(failed.status.message.unwrap().text_content(), "the agent returned without a reply");

    // An agent that then answers with a direct reply completes the task its caller holds.
    let task = send_task(&h, msg("tardy")).await;
    assert_eq!(task.status.state, TaskState::Submitted);
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        state = get(&h, &task.id).await.unwrap().status.state;
        if state != TaskState::Submitted {
            break;
        }
    }
    let answered = get(&h, &task.id).await.unwrap();
    assert_eq!(answered.status.state, TaskState::Completed, "{answered:?}");
    let reply = answered.status.message.expect("the reply is the status message");
    assert_eq!(reply.text_content(), "answered late");
    assert_eq!((reply.task_id.as_str(), reply.context_id.as_str()), (task.id.as_str(), task.context_id.as_str()));
    settled(&h).await;
}

/// A blocking send runs its execution in the request's own task while it waits: a caller that
/// hangs up half way must leave that execution running to its end.
#[tokio::test]
async fn a_blocking_send_whose_caller_hangs_up_leaves_its_work_running() {
    let h = handler();
    let sent = send(&h, msg("slow"));
    assert!(tokio::time::timeout(Duration::from_millis(100), sent).await.is_err(), "slow answers after 300 ms");
    let list = call(&h, A2ARequest::ListTasks(Default::default())).await.unwrap();
    let id = list["tasks"][0]["id"].as_str().unwrap_or_else(|| panic!("one task: {list}")).to_owned();
    for _ in 0..100 {
        let task = get(&h, &id).await.unwrap();
        if task.status.state == TaskState::Completed {
            assert_eq!(task.artifacts.len(), 1, "the work went on to its artifact");
            settled(&h).await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the task never completed: {:?}", get(&h, &id).await);
}

#[tokio::test]
async fn limits_on_parts_streams_and_history() {
    let limits =
        Limits { max_parts_per_message: 2, max_streams_per_task: 1, max_history_length: 1, ..Default::default() };
    let (h, _) = handler_with(limits, true);
    let mut m = msg("complete");
    m.parts = vec![Part::text("a"), Part::text("b"), Part::text("c")];
    let err = send(&h, m).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidParams);
    assert!(err.message.contains("at most 2"), "{}", err.message);

    let mut req = SendMessageRequest::new(msg("slow"));
    req.configuration = Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
    let id = call(&h, A2ARequest::SendMessage(req)).await.unwrap()["task"]["id"].as_str().unwrap().to_owned();
    let sub = || A2ARequest::SubscribeToTask(SubscribeToTaskRequest { id: id.clone(), ..Default::default() });
    let open = stream(&h, sub()).await.unwrap();
    // A limit of the moment, not a property of the task: Unavailable (503), not UnsupportedOperation.
    assert_eq!(stream(&h, sub()).await.err().unwrap().kind, ErrorKind::Unavailable);
    drop(open);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let _again = stream(&h, sub()).await.unwrap();

    // History is capped at 1 whatever the client asks.
    let first = send_task(&h, msg("input")).await;
    let req = GetTaskRequest { id: first.id.clone(), history_length: Some(50), ..Default::default() };
    let task: Task = serde_json::from_value(call(&h, A2ARequest::GetTask(req)).await.unwrap()).unwrap();
    assert_eq!(task.history.len(), 1);
    let req = GetTaskRequest { id: first.id, history_length: Some(-1), ..Default::default() };
    assert_eq!(call(&h, A2ARequest::GetTask(req)).await.unwrap_err().kind, ErrorKind::InvalidParams);
}

/// An executor's A2A error raised before its first event is the request's answer, on a blocking
/// send and a stream alike, and no task is made (as the official SDKs answer); raised once the
/// task exists (here after WORKING), it fails the task like any error. InternalError is no
/// refusal: a FAILED task too, as is the sink's refusal of one of the agent's events passed on.
#[tokio::test]
async fn an_executor_refusal_before_the_task_exists_is_the_callers_error() {
    let refuse = |kind| Step::Refuse(kind, "only text/plain is read".into());
    let agent = Arc::new(
        TestAgent::new()
            .on("png", [refuse(ErrorKind::ContentTypeNotSupported)])
            .on("late", [Step::working(), refuse(ErrorKind::ContentTypeNotSupported)])
            .on("internal", [refuse(ErrorKind::Internal)])
            .on("stale", [Step::PassOnRefusal]),
    );
    let h = RequestHandler::new(agent, card(true, false), Stores::memory(), ServerConfig::default());
    let e = send(&h, msg("png")).await.unwrap_err();
    assert_eq!((e.kind, e.message.as_str()), (ErrorKind::ContentTypeNotSupported, "only text/plain is read"));
    let mut streamed = stream(&h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(msg("png")))).await.unwrap();
    match tokio::time::timeout(Duration::from_secs(5), streamed.next_item()).await.unwrap() {
        Some(a2a_native::server::StreamItem::Error(e)) => assert_eq!(e.kind, ErrorKind::ContentTypeNotSupported),
        Some(a2a_native::server::StreamItem::Event { event, .. }) => panic!("{event:?}"),
        None => panic!("the stream ended without the error"),
    }
    let listed = call(&h, A2ARequest::ListTasks(Default::default())).await.unwrap();
    assert_eq!(listed["tasks"].as_array().map_or(0, Vec::len), 0, "no task was made: {listed}");

    for text in ["late", "internal"] {
        let task = send_task(&h, msg(text)).await;
        assert_eq!(task.status.state, TaskState::Failed, "{text}");
        assert!(task.status.message.unwrap().text_content().contains("only text/plain"), "{text}");
    }
    // The sink's refusal of the agent's own event, passed on: the agent's fault, not the
    // caller's (an InvalidParams answer would blame the request).
    let task = send_task(&h, msg("stale")).await;
    assert_eq!(task.status.state, TaskState::Failed);
    assert!(task.status.message.unwrap().text_content().contains("another-task"));
}

/// A streamed send's Task events carry no more history than it asked for, as a blocking send's
/// reply does (the spec's historyLength: the server MUST NOT return more), for a new task and
/// for a continued one; without a length they carry the task's history.
#[tokio::test]
async fn a_streamed_send_trims_its_task_events_to_the_history_length_asked() {
    let h = handler();
    let streamed = |m: Message, history_length: Option<i32>| {
        let mut req = SendMessageRequest::new(m);
        req.configuration = Some(SendMessageConfiguration { history_length, ..Default::default() });
        let h = &h;
        async move { collect(stream(h, A2ARequest::SendStreamingMessage(req)).await.unwrap()).await }
    };
    let histories = |events: &[StreamResponse]| -> Vec<usize> {
        let tasks = events.iter().filter_map(|e| if let StreamResponse::Task(t) = e { Some(t) } else { None });
        tasks.map(|t| t.history.len()).collect()
    };

    let full = streamed(msg("chat"), None).await;
    assert_eq!(histories(&full), [1], "{full:?}");
    let none = streamed(msg("chat"), Some(0)).await;
    assert_eq!(histories(&none), [0], "{none:?}");
    let task_id = match &none[0] {
        StreamResponse::Task(t) => t.id.clone(),
        other => panic!("{other:?}"),
    };

    // The continued task holds the first question, its answer and this message by now.
    let mut follow = msg("chat more");
    follow.task_id = task_id.clone();
    let one = streamed(follow, Some(1)).await;
    assert_eq!(histories(&one), [1], "{one:?}");
    let mut follow = msg("chat again");
    follow.task_id = task_id;
    let all = streamed(follow, None).await;
    assert!(histories(&all).iter().all(|&n| n >= 3), "{all:?}");
}

#[tokio::test]
async fn many_tasks_release_their_live_state() {
    let h = handler();
    let sends = (0..200).map(|i| send_task(&h, msg(&format!("complete {i}"))));
    let tasks = futures_util::future::join_all(sends).await;
    assert!(tasks.iter().all(|t| t.status.state == TaskState::Completed));
    settled(&h).await;
}

#[tokio::test]
async fn push_notifications_follow_the_task_in_order_with_token_and_auth() {
    push_follows_the_task(Stores::memory()).await;
}

/// The same through the SQLite store's push outbox (queued with each event, then delivered).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_notifications_through_the_outbox_follow_the_task_in_order() {
    let dir = tempfile::tempdir().unwrap();
    push_follows_the_task(Stores::open(&format!("sqlite:{}", dir.path().join("t.db").display())).await.unwrap()).await;
}

/// A config registered over 0.3 is sent the task in its 0.3 form, as 0.3 servers send and 0.3
/// receivers read: the task as it stood after each commit (events committed together are one
/// state), never the same state twice, from the memory store and through the outbox alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_registered_over_v03_is_sent_the_v03_task() {
    push_to_a_v03_config_sends_the_task(Stores::memory()).await;
    let dir = tempfile::tempdir().unwrap();
    let stores = Stores::open(&format!("sqlite:{}", dir.path().join("t.db").display())).await.unwrap();
    push_to_a_v03_config_sends_the_task(stores).await;
}

/// (Also run on PostgreSQL by `instances.rs`.)
pub(crate) async fn push_to_a_v03_config_sends_the_task(stores: Stores) {
    let mut config = ServerConfig::default();
    config.push.allow_private_targets = a2a_native::push::PrivateTargets::All;
    let h = RequestHandler::new(agent(), card(true, true), stores, config);
    let (url, got) = support::webhook().await;
    // WORKING, then 300 ms later the artifact and COMPLETED: two commits.
    let mut req = SendMessageRequest::new(msg("slow"));
    req.configuration = Some(SendMessageConfiguration {
        task_push_notification_config: Some(model::TaskPushNotificationConfig {
            url,
            token: "tok03".into(),
            v03: true,
            ..Default::default()
        }),
        ..Default::default()
    });
    let v = call(&h, A2ARequest::SendMessage(req)).await.unwrap();
    let id = v["task"]["id"].as_str().unwrap().to_owned();
    // The config keeps its origin in the store.
    let stored = call(
        &h,
        A2ARequest::ListTaskPushNotificationConfigs(model::ListTaskPushNotificationConfigsRequest {
            task_id: id.clone(),
            ..Default::default()
        }),
    )
    .await
    .unwrap();
    assert_eq!(stored["configs"].as_array().unwrap().len(), 1, "{stored}");
    let completed =
        |got: &[(http::HeaderMap, Value)]| got.last().is_some_and(|(_, b)| b["status"]["state"] == "completed");
    for _ in 0..200 {
        if completed(&got.lock().unwrap()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let got = got.lock().unwrap();
    assert!(completed(&got), "{got:?}");
    for (headers, body) in got.iter() {
        assert_eq!((body["kind"].as_str(), body["id"].as_str()), (Some("task"), Some(id.as_str())), "{body}");
        assert_eq!(headers["x-a2a-notification-token"], "tok03");
        a2a_native::model::parse_value::<a2a_native::model::v03::Task>(body.clone()).unwrap();
    }
    let states: Vec<&str> = got.iter().map(|(_, b)| b["status"]["state"].as_str().unwrap()).collect();
    assert_eq!((states.first(), states.last()), (Some(&"working"), Some(&"completed")), "{got:?}");
    assert!(got.windows(2).all(|w| w[0].1 != w[1].1), "the same state twice: {got:?}");
    let last = &got.last().unwrap().1;
    assert_eq!(last["artifacts"][0]["parts"][0]["kind"], "text", "{last}");
    assert_eq!(last["history"][0]["role"], "user", "{last}");
}

async fn push_follows_the_task(stores: Stores) {
    let mut config = ServerConfig::default();
    config.push.allow_private_targets = a2a_native::push::PrivateTargets::All;
    let agent = agent();
    let h = RequestHandler::new(agent, card(true, true), stores, config);
    let (url, got) = support::webhook().await;
    let mut req = SendMessageRequest::new(msg("complete"));
    req.configuration = Some(SendMessageConfiguration {
        task_push_notification_config: Some(model::TaskPushNotificationConfig {
            url,
            token: "tok".into(),
            authentication: Some(model::AuthenticationInfo { scheme: "Bearer".into(), credentials: "secret".into() }),
            ..Default::default()
        }),
        ..Default::default()
    });
    let v = call(&h, A2ARequest::SendMessage(req)).await.unwrap();
    assert_eq!(v["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    for _ in 0..200 {
        if got.lock().unwrap().len() >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let got = got.lock().unwrap();
    let keys: Vec<_> = got.iter().map(|(_, b)| b.as_object().unwrap().keys().next().unwrap().clone()).collect();
    assert_eq!(keys, ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]);
    assert_eq!(got[3].1["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED");
    let (headers, _) = &got[0];
    assert_eq!(headers["content-type"], "application/a2a+json");
    assert_eq!(headers["x-a2a-notification-token"], "tok");
    assert_eq!(headers["authorization"], "Bearer secret");
}

/// Through the outbox, a webhook that never answers (each try waits for the push timeout, and
/// is tried again) holds up no other task's notifications: they waited for the slowest
/// delivery of a whole round (a cluster probe: 16 s between a healthy task's events), and on
/// SQLite a task with more queued than a claim takes hid every other task's from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_that_never_answers_holds_up_no_other_tasks_notifications() {
    let dir = tempfile::tempdir().unwrap();
    let stores = Stores::open(&format!("sqlite:{}", dir.path().join("t.db").display())).await.unwrap();
    let mut config = ServerConfig::default();
    config.push.allow_private_targets = a2a_native::push::PrivateTargets::All;
    // `many`: more events than the outbox takes at once, all queued behind one stuck head.
    let many = [Step::working()].into_iter().chain((0..40).map(|i| Step::artifact(&format!("a{i}"), "x")));
    let agent = Arc::new(
        TestAgent::new().on("many", many.chain([Step::complete()])).otherwise([Step::working(), Step::complete()]),
    );
    let h = RequestHandler::new(agent, card(true, true), stores, config);
    // Takes connections and requests, answers none.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}/hook", silent.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((conn, _)) = silent.accept().await {
            held.push(conn);
        }
    });
    let (url, got) = support::webhook().await;
    let send = |text: &str, url: String| {
        let mut req = SendMessageRequest::new(msg(text));
        req.configuration = Some(SendMessageConfiguration {
            task_push_notification_config: Some(model::TaskPushNotificationConfig { url, ..Default::default() }),
            ..Default::default()
        });
        A2ARequest::SendMessage(req)
    };
    for (text, url) in [("many", silent_url.clone()), ("done", silent_url), ("done", url)] {
        assert_eq!(call(&h, send(text, url)).await.unwrap()["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    }
    let began = std::time::Instant::now();
    while got.lock().unwrap().len() < 3 && began.elapsed() < Duration::from_secs(8) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let n = got.lock().unwrap().len();
    assert_eq!(n, 3, "the healthy task's notifications, within {:?}", began.elapsed());
}

#[tokio::test]
async fn a_loopback_webhook_is_refused_unless_allowed() {
    let h = handler();
    let mut req = SendMessageRequest::new(msg("complete"));
    req.configuration = Some(SendMessageConfiguration {
        task_push_notification_config: Some(model::TaskPushNotificationConfig {
            url: "http://127.0.0.1:9/hook".into(),
            ..Default::default()
        }),
        ..Default::default()
    });
    let err = call(&h, A2ARequest::SendMessage(req)).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidParams);
    settled(&h).await;
}

#[tokio::test]
async fn push_configs_are_bounded_and_must_fit_their_headers() {
    use model::{AuthenticationInfo, TaskPushNotificationConfig};
    let h = handler();
    let task = send_task(&h, msg("input")).await;
    let ok = || TaskPushNotificationConfig {
        task_id: task.id.clone(),
        url: "https://hooks.example.com/a2a".into(),
        ..Default::default()
    };
    let auth =
        |credentials: &str| Some(AuthenticationInfo { scheme: "Bearer".into(), credentials: credentials.into() });
    let refused = [
        ("url", TaskPushNotificationConfig { url: format!("https://hooks.example.com/{}", "a".repeat(5000)), ..ok() }),
        ("id", TaskPushNotificationConfig { id: "i".repeat(300), ..ok() }),
        ("token", TaskPushNotificationConfig { token: "t".repeat(5000), ..ok() }),
        ("token", TaskPushNotificationConfig { token: "tok\r\nX-Injected: 1".into(), ..ok() }),
        ("authentication.credentials", TaskPushNotificationConfig { authentication: auth(&"c".repeat(9000)), ..ok() }),
        ("authentication.credentials", TaskPushNotificationConfig { authentication: auth("a\nb"), ..ok() }),
        (
            "authentication.scheme",
            TaskPushNotificationConfig {
                authentication: Some(AuthenticationInfo { scheme: "B".repeat(65), credentials: String::new() }),
                ..ok()
            },
        ),
    ];
    for (field, config) in refused {
        let err = call(&h, A2ARequest::CreateTaskPushNotificationConfig(config.clone())).await.unwrap_err();
        assert_eq!((err.kind, err.message.contains(field)), (ErrorKind::InvalidParams, true), "{field}: {err}");
        // The same config given with a message is refused under the configuration's path.
        let mut req = SendMessageRequest::new(msg("complete"));
        req.configuration = Some(SendMessageConfiguration {
            task_push_notification_config: Some(TaskPushNotificationConfig { task_id: String::new(), ..config }),
            ..Default::default()
        });
        let err = call(&h, A2ARequest::SendMessage(req)).await.unwrap_err();
        let path = format!("configuration.taskPushNotificationConfig.{field}");
        assert_eq!((err.kind, err.message.contains(&path)), (ErrorKind::InvalidParams, true), "{path}: {err}");
    }
    // At the bounds, accepted.
    let at_bounds =
        TaskPushNotificationConfig { token: "t".repeat(4096), authentication: auth(&"c".repeat(8192)), ..ok() };
    call(&h, A2ARequest::CreateTaskPushNotificationConfig(at_bounds)).await.unwrap();
}

/// Starts a `hang` task (returning at once) and subscribes to it.
async fn hang_and_subscribe(h: &RequestHandler) -> (Task, EventStream) {
    let mut req = SendMessageRequest::new(msg("hang"));
    req.configuration = Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
    let task: Task =
        serde_json::from_value(call(h, A2ARequest::SendMessage(req)).await.unwrap()["task"].clone()).unwrap();
    let sub =
        stream(h, A2ARequest::SubscribeToTask(SubscribeToTaskRequest { id: task.id.clone(), ..Default::default() }))
            .await
            .unwrap();
    (task, sub)
}

#[tokio::test]
async fn graceful_shutdown_ends_what_is_still_running_failed() {
    let agent = agent();
    let config = ServerConfig { shutdown_grace: Duration::from_millis(100), ..Default::default() };
    let h = RequestHandler::new(agent, card(true, false), Stores::memory(), config);
    let (task, sub) = hang_and_subscribe(&h).await;
    let started = std::time::Instant::now();
    h.shutdown().await;
    assert!(started.elapsed() < Duration::from_secs(3), "the grace is bounded");
    let events = collect(sub).await;
    let last = events.last().unwrap();
    assert!(matches!(last, StreamResponse::StatusUpdate(e) if e.status.state == TaskState::Failed), "{events:?}");
    let ended = get(&h, &task.id).await.unwrap();
    assert_eq!(ended.status.state, TaskState::Failed);
    assert!(ended.status.message.unwrap().text_content().contains("shut down"));
}

#[tokio::test]
async fn graceful_shutdown_ends_a_streaming_send_still_running_failed() {
    // The stream that started the execution (which runs beside it) gets the FAILED status too,
    // not the retryable error of a stream whose task goes on.
    let agent = agent();
    let config = ServerConfig { shutdown_grace: Duration::from_millis(100), ..Default::default() };
    let h = RequestHandler::new(agent, card(true, false), Stores::memory(), config);
    let mut sub = stream_send(&h, msg("hang")).await;
    let first = sub.next().await.unwrap();
    let StreamResponse::Task(task) = first else { panic!("{first:?}") };
    h.shutdown().await;
    let events = collect(sub).await;
    let last = events.last().unwrap();
    assert!(matches!(last, StreamResponse::StatusUpdate(e) if e.status.state == TaskState::Failed), "{events:?}");
    assert_eq!(get(&h, &task.id).await.unwrap().status.state, TaskState::Failed);
}

#[tokio::test]
async fn an_executor_that_never_returns_is_stopped_at_the_executor_timeout() {
    let limits = Limits { executor_timeout: Some(Duration::from_millis(200)), ..Limits::default() };
    let (h, agent) = handler_with(limits, true);
    let (task, sub) = hang_and_subscribe(&h).await;
    let events = collect(sub).await;
    assert!(matches!(events.last(), Some(StreamResponse::StatusUpdate(e)) if e.status.state == TaskState::Failed));
    let ended = get(&h, &task.id).await.unwrap();
    let text = ended.status.message.unwrap().text_content();
    assert!(text.contains("did not return within 0.2 s"), "{text}");
    assert!(agent.ended("hang"), "the executor's work was dropped");
    // The server goes on: the next message is served, and work within the limit is not cut.
    assert_eq!(send_task(&h, msg("complete quickly")).await.status.state, TaskState::Completed);
}

/// A second server of the same process on the same SQLite file (a hot reload, a blue/green swap,
/// a test suite) leaves the first one's running tasks alone: they were not left by a process
/// that is gone. (It ended them FAILED as interrupted by a restart.)
#[tokio::test]
async fn a_second_store_of_the_process_on_the_file_ends_none_of_the_firsts_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let spec = format!("sqlite:{}", dir.path().join("tasks.db").display());
    let first = RequestHandler::new(agent(), card(true, false), Stores::open(&spec).await.unwrap(), Default::default());
    let mut req = SendMessageRequest::new(msg("hang"));
    req.configuration = Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
    let id = call(&first, A2ARequest::SendMessage(req)).await.unwrap()["task"]["id"].as_str().unwrap().to_owned();

    let second =
        RequestHandler::new(agent(), card(true, false), Stores::open(&spec).await.unwrap(), Default::default());
    assert_eq!(second.recover_interrupted().await, 0);
    assert_eq!(get(&first, &id).await.unwrap().status.state, TaskState::Working);
    assert_eq!(get(&second, &id).await.unwrap().status.state, TaskState::Working, "the same file");
}

#[tokio::test]
async fn tasks_left_active_by_a_previous_run_end_failed_at_start() {
    use a2a_native::store::{Change, Commit, LogEntry, SqliteStore, TaskStore};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    // What a crashed run left: one task WORKING, one waiting for input.
    let before = SqliteStore::open(&path).await.unwrap();
    for (id, state) in [("working", TaskState::Working), ("asking", TaskState::InputRequired)] {
        let task = Task {
            id: id.into(),
            context_id: "c".into(),
            status: model::TaskStatus::now(state),
            artifacts: vec![],
            history: vec![msg("hi")],
            metadata: None,
        };
        let entries = [LogEntry { seq: 1, change: Change::Event(StreamResponse::Task(task.clone())) }];
        before.commit("", Commit { snapshot: true, ..Commit::logged(&task, 0, &entries) }).await.unwrap();
    }
    before.close().await;

    let store = Arc::new(SqliteStore::open(&path).await.unwrap());
    let stores = Stores { tasks: store.clone(), push: store.clone() };
    let agent = agent();
    let h = RequestHandler::new(agent, card(true, false), stores, ServerConfig::default());
    assert_eq!(h.recover_interrupted().await, 1);
    let ended = get(&h, "working").await.unwrap();
    assert_eq!(ended.status.state, TaskState::Failed);
    assert!(ended.status.message.unwrap().text_content().contains("restart"));
    assert_eq!(get(&h, "asking").await.unwrap().status.state, TaskState::InputRequired, "an interrupted task waits on");
    let log = store.log_after("", "working", 0, 10).await.unwrap();
    assert_eq!(log.entries.len(), 2, "the failure is in the log");
    assert_eq!(h.recover_interrupted().await, 0, "once");
    store.close().await;
}

/// After a graceful stop no turn was running (the shutdown ended those that were): a task left
/// WORKING by its agent waits for its next message across the restart, as on PostgreSQL. Only a
/// run that did not stop cleanly leaves tasks to end as interrupted.
#[tokio::test]
async fn after_a_graceful_stop_tasks_left_active_wait_on() {
    use a2a_native::store::{Change, Commit, LogEntry, SqliteStore, TaskStore};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let working = Task {
        id: "idle".into(),
        context_id: "c".into(),
        status: model::TaskStatus::now(TaskState::Working),
        artifacts: vec![],
        history: vec![msg("hi")],
        metadata: None,
    };
    let entries = [LogEntry { seq: 1, change: Change::Event(StreamResponse::Task(working.clone())) }];
    let open = |path: std::path::PathBuf| async move {
        let store = Arc::new(SqliteStore::open(&path).await.unwrap());
        let stores = Stores { tasks: store.clone(), push: store.clone() };
        (store.clone(), RequestHandler::new(agent(), card(true, false), stores, ServerConfig::default()))
    };
    let (store, h) = open(path.clone()).await;
    store.commit("", Commit { snapshot: true, ..Commit::logged(&working, 0, &entries) }).await.unwrap();
    h.shutdown().await;
    store.close().await;
    drop(h);
    let (store, h) = open(path.clone()).await;
    assert_eq!(h.recover_interrupted().await, 0, "stopped cleanly: nothing was interrupted");
    assert_eq!(get(&h, "idle").await.unwrap().status.state, TaskState::Working);
    // This run ends without a graceful stop (a crash): the next one ends what it left active.
    store.close().await;
    drop(h);
    let (store, h) = open(path.clone()).await;
    assert_eq!(h.recover_interrupted().await, 1);
    assert_eq!(get(&h, "idle").await.unwrap().status.state, TaskState::Failed);
    // Two stores of one process on the file (a server restarted beside the first): the first
    // one's graceful stop does not speak for the second, which then dies.
    let second = Task { id: "idle2".into(), ..working.clone() };
    let entries = [LogEntry { seq: 1, change: Change::Event(StreamResponse::Task(second.clone())) }];
    store.commit("", Commit { snapshot: true, ..Commit::logged(&second, 0, &entries) }).await.unwrap();
    let (other, other_h) = open(path.clone()).await;
    h.shutdown().await;
    store.close().await;
    drop(h);
    other.close().await;
    drop(other_h);
    let (store, h) = open(path).await;
    assert_eq!(h.recover_interrupted().await, 1, "the second store's task was left to end");
    assert_eq!(get(&h, "idle2").await.unwrap().status.state, TaskState::Failed);
    store.close().await;
}

/// A blocking send's first commit that ends the task, which nobody could watch, is not logged on
/// the SQL stores (`Commit::log`): a resume from before it gets the task snapshot, and ends.
/// Tasks that live on, and streaming sends, are logged from their first event.
#[tokio::test]
async fn a_resume_from_before_an_unlogged_first_commit_gets_the_snapshot() {
    use a2a_native::store::{SqliteStore, TaskStore};
    let store = Arc::new(SqliteStore::open_in_memory().await.unwrap());
    let stores = Stores { tasks: store.clone(), push: store.clone() };
    let agent = agent();
    let h = RequestHandler::new(agent, card(true, false), stores, ServerConfig::default());

    let done = send_task(&h, msg("complete")).await;
    assert_eq!(done.status.state, TaskState::Completed);
    assert!(store.log_after("", &done.id, 0, 10).await.unwrap().entries.is_empty(), "nobody watched: not logged");
    // A client claiming to have seen event 1 (it cannot have) gets the whole task, then the end.
    let call = CallContext { last_event_id: Some(1), ..CallContext::default() };
    let sub = A2ARequest::SubscribeToTask(SubscribeToTaskRequest { id: done.id.clone(), ..Default::default() });
    let Reply::Stream(stream) = h.handle(&call, sub).await.unwrap() else { panic!("expected a stream") };
    assert_eq!(kinds(&collect(stream).await), ["task:TASK_STATE_COMPLETED"]);

    // A task that waits for input is logged from its first event.
    let asking = send_task(&h, msg("input")).await;
    assert_eq!(asking.status.state, TaskState::InputRequired);
    let log = store.log_after("", &asking.id, 0, 10).await.unwrap().entries;
    assert_eq!(log.first().map(|e| e.seq), Some(1), "{log:?}");

    // So is a streaming send.
    let mut events = collect(stream_send(&h, msg("complete")).await).await.into_iter();
    let Some(StreamResponse::Task(task)) = events.next() else { panic!("the task first") };
    let log = store.log_after("", &task.id, 0, 10).await.unwrap().entries;
    assert_eq!(log.first().map(|e| e.seq), Some(1), "{log:?}");
}

async fn stream_send(h: &RequestHandler, m: Message) -> EventStream {
    stream(h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(m))).await.unwrap()
}

/// A cancel whose CANCELED could not be stored leaves the task working with its execution
/// stopped; a message that arrived meanwhile (or later) runs normally, not stopped before it
/// starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_cancel_that_could_not_be_stored_the_next_message_runs() {
    let store = support::store::Faulty::new(Arc::new(a2a_native::store::MemoryStore::default()));
    support::store::Faulty::set(&store.fail_cancels, true);
    let stores = Stores { tasks: Arc::new(store), push: Stores::memory().push };
    let h = Arc::new(RequestHandler::new(agent(), card(true, true), stores, ServerConfig::default()));
    let id = started(&h, "hang").await;
    let cancel = A2ARequest::CancelTask(CancelTaskRequest { id: id.clone(), ..Default::default() });
    let canceling = tokio::spawn({
        let h = h.clone();
        async move { call(&h, cancel).await }
    });
    // Inside the failing CANCELED write (after the agent's 60 ms cancel).
    tokio::time::sleep(Duration::from_millis(150)).await;
    let mut next = msg("complete");
    next.task_id = id.clone();
    let follow_up = tokio::spawn({
        let h = h.clone();
        async move { tokio::time::timeout(Duration::from_secs(5), send(&h, next)).await }
    });
    let err = canceling.await.unwrap().unwrap_err();
    assert_eq!(err.kind, ErrorKind::Unavailable, "{err:?}");
    let done = follow_up.await.unwrap().expect("the message ran").unwrap();
    let task: Task = serde_json::from_value(done["task"].clone()).unwrap();
    assert_eq!(task.status.state, TaskState::Completed);
    settled(&h).await;
}

/// A client resuming with the id of an event of an earlier turn, while a later turn runs, gets
/// the events since, the earlier INPUT_REQUIRED among them, and follows the task on to its end:
/// an interrupted state that is not the task's latest does not end the stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_from_an_earlier_turn_follows_the_task_past_its_old_input_required() {
    let h = handler();
    let first = send_task(&h, msg("linger")).await;
    assert_eq!(first.status.state, TaskState::InputRequired);
    let mut next = SendMessageRequest::new(Message { task_id: first.id.clone(), ..msg("go on") });
    next.configuration = Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
    call(&h, A2ARequest::SendMessage(next)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let call = CallContext { last_event_id: Some(1), ..CallContext::default() };
    let sub = A2ARequest::SubscribeToTask(SubscribeToTaskRequest { id: first.id.clone(), ..Default::default() });
    let Reply::Stream(stream) = h.handle(&call, sub).await.unwrap() else { panic!("expected a stream") };
    let seen = kinds(&collect(stream).await);
    assert!(seen.contains(&"status:TASK_STATE_INPUT_REQUIRED".to_owned()), "{seen:?}");
    assert_eq!(seen.last().map(String::as_str), Some("status:TASK_STATE_COMPLETED"), "{seen:?}");
}

/// Works, then waits for `go` before completing, and keeps what its completion came to.
struct Racer {
    go: Arc<tokio::sync::Notify>,
    outcome: Arc<std::sync::Mutex<Option<Result<(), A2AError>>>>,
}

#[async_trait::async_trait]
impl a2a_native::executor::AgentExecutor for Racer {
    async fn execute(
        &self,
        ctx: a2a_native::executor::RequestContext,
        events: a2a_native::executor::EventSink,
    ) -> Result<(), a2a_native::executor::ExecutorError> {
        if ctx.task.is_some() {
            // The second message on the task: completes it at once.
            events.complete(None).await?;
            return Ok(());
        }
        events.working().await?;
        self.go.notified().await;
        let done = events.complete(None).await;
        *self.outcome.lock().unwrap() = Some(done);
        Ok(())
    }
}

#[tokio::test]
async fn an_execution_whose_task_another_turn_ended_is_refused_its_events() {
    // Two messages on one WORKING task run side by side (one instance accepts both); the second
    // completes the task, so the first one's completion would be dropped: it is refused instead,
    // as any event after the task's end, not taken in silence.
    let go = Arc::new(tokio::sync::Notify::new());
    let outcome = Arc::new(std::sync::Mutex::new(None));
    let racer = Arc::new(Racer { go: go.clone(), outcome: outcome.clone() });
    let h = RequestHandler::new(racer, card(true, false), Stores::memory(), ServerConfig::default());
    let mut first = SendMessageRequest::new(msg("first"));
    first.configuration = Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
    let task: Task =
        serde_json::from_value(call(&h, A2ARequest::SendMessage(first)).await.unwrap()["task"].clone()).unwrap();
    assert_eq!(task.status.state, TaskState::Working);
    let mut second = msg("second");
    second.task_id = task.id.clone();
    assert_eq!(send_task(&h, second).await.status.state, TaskState::Completed);
    go.notify_one();
    for _ in 0..200 {
        if outcome.lock().unwrap().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let refused = outcome.lock().unwrap().take().expect("the first execution completed").unwrap_err();
    assert_eq!(refused.kind, ErrorKind::UnsupportedOperation, "{refused:?}");
    assert_eq!(get(&h, &task.id).await.unwrap().status.state, TaskState::Completed);
}

#[tokio::test]
async fn a_request_the_full_store_refused_leaves_no_task_behind_later() {
    // Two tasks fill the store, neither finished: a third request is refused (its first event
    // cannot be stored). Its execution must not go on and store its task once room is made:
    // its caller was told it failed, and that task would take a place others were refused.
    let store = Arc::new(a2a_native::store::MemoryStore::new(a2a_native::store::MemoryLimits {
        max_tasks: 2,
        ..Default::default()
    }));
    let stores = Stores { tasks: store.clone(), push: store };
    let h = RequestHandler::new(agent(), card(true, true), stores, ServerConfig::default());
    let mut working = Vec::new();
    for _ in 0..2 {
        let mut req = SendMessageRequest::new(msg("hang"));
        req.configuration = Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
        let task: Task =
            serde_json::from_value(call(&h, A2ARequest::SendMessage(req)).await.unwrap()["task"].clone()).unwrap();
        working.push(task.id);
    }
    // `slow` works, then 300 ms later sends an artifact and completes.
    let refused = send(&h, msg("slow")).await.unwrap_err();
    assert_eq!(refused.kind, ErrorKind::Unavailable, "{refused:?}");
    for id in &working {
        call(&h, A2ARequest::CancelTask(CancelTaskRequest { id: id.clone(), ..Default::default() })).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
    let listed = call(&h, A2ARequest::ListTasks(Default::default())).await.unwrap();
    let ids: Vec<&str> = listed["tasks"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "only the two tasks that were answered: {listed}");
    assert!(ids.iter().all(|id| working.iter().any(|w| w == id)), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_cancels_of_one_task_run_the_executors_cancel_once() {
    // A cancel with side effects (a refund, a release) must not run once per caller: the first
    // cancel runs it and ends the task; the others, sent meanwhile, then find it ended.
    let (h, agent) = handler_with(Limits::default(), true);
    let h = Arc::new(h);
    let mut req = SendMessageRequest::new(msg("hang"));
    req.configuration = Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
    let task: Task =
        serde_json::from_value(call(&h, A2ARequest::SendMessage(req)).await.unwrap()["task"].clone()).unwrap();
    let cancels = (0..8).map(|_| {
        let (h, id) = (h.clone(), task.id.clone());
        tokio::spawn(
            async move { call(&h, A2ARequest::CancelTask(CancelTaskRequest { id, ..Default::default() })).await },
        )
    });
    let answers: Vec<Result<Value, A2AError>> =
        futures_util::future::join_all(cancels).await.into_iter().map(Result::unwrap).collect();
    let canceled =
        answers.iter().filter(|a| a.as_ref().is_ok_and(|t| t["status"]["state"] == "TASK_STATE_CANCELED")).count();
    assert_eq!(canceled, 1, "{answers:?}");
    assert!(
        answers.iter().filter_map(|a| a.as_ref().err()).all(|e| e.kind == ErrorKind::TaskNotCancelable),
        "{answers:?}"
    );
    assert_eq!(agent.cancels().len(), 1, "the executor's cancel ran once");
    assert_eq!(get(&h, &task.id).await.unwrap().status.state, TaskState::Canceled);
}

/// Streams `chunks` artifact chunks of `size` bytes, then completes.
struct Flood {
    chunks: usize,
    size: usize,
}

#[async_trait::async_trait]
impl a2a_native::executor::AgentExecutor for Flood {
    async fn execute(
        &self,
        ctx: a2a_native::executor::RequestContext,
        events: a2a_native::executor::EventSink,
    ) -> Result<(), a2a_native::executor::ExecutorError> {
        if ctx.text() == "small" {
            events.complete(None).await?;
            return Ok(());
        }
        events.working().await?;
        // The task is stored before the flood (its first commit alone).
        tokio::time::sleep(Duration::from_millis(50)).await;
        let chunk = "z".repeat(self.size);
        for i in 0..self.chunks {
            let artifact = model::Artifact {
                artifact_id: "big".into(),
                name: String::new(),
                description: String::new(),
                parts: vec![Part::text(chunk.clone())],
                metadata: None,
                extensions: Vec::new(),
            };
            events.artifact(artifact, i > 0, i + 1 == self.chunks).await?;
        }
        events.complete(None).await?;
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_the_full_store_cannot_take_further_ends_failed_and_gives_its_room_back() {
    // The store (500 KB) cannot hold the agent's 2 MB artifact: once it refuses a change, the
    // agent's work stops and the task ends FAILED saying why, instead of going on with holes in
    // its artifact, or staying unfinished and holding the store full for every later task.
    let store = Arc::new(a2a_native::store::MemoryStore::new(a2a_native::store::MemoryLimits {
        max_bytes: 500_000,
        ..Default::default()
    }));
    let stores = Stores { tasks: store.clone(), push: store };
    let flood = Arc::new(Flood { chunks: 200, size: 10_000 });
    let h = RequestHandler::new(flood, card(true, false), stores, ServerConfig::default());
    let events =
        collect(stream(&h, A2ARequest::SendStreamingMessage(SendMessageRequest::new(msg("big")))).await.unwrap()).await;
    let task_id = events.iter().find_map(|e| e.task_id().map(str::to_owned)).expect("the task came to be");
    let mut task = get(&h, &task_id).await.unwrap();
    for _ in 0..100 {
        if task.status.state.is_terminal() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        task = get(&h, &task_id).await.unwrap();
    }
    assert_eq!(task.status.state, TaskState::Failed, "{:?}", task.status);
    let said = serde_json::to_string(&task.status.message).unwrap();
    assert!(said.contains("task store"), "{said}");
    // Its room is given back: the next task is served.
    let next = send_task(&h, msg("small")).await;
    assert_eq!(next.status.state, TaskState::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_answers_a_blocking_send_whose_agent_said_nothing_yet() {
    // No task yet (the agent sent no event): nothing to end FAILED, but the caller is answered
    // at once with Unavailable, not left waiting until its connection is cut.
    let agent = Arc::new(TestAgent::new().on("silent", [Step::Hang]).otherwise([Step::complete()]));
    let config = ServerConfig { shutdown_grace: Duration::from_millis(100), ..Default::default() };
    let h = Arc::new(RequestHandler::new(agent, card(true, false), Stores::memory(), config));
    let sending = {
        let h = h.clone();
        tokio::spawn(async move { send(&h, msg("silent")).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = std::time::Instant::now();
    h.shutdown().await;
    let answer = tokio::time::timeout(Duration::from_secs(3), sending).await.expect("answered at shutdown").unwrap();
    let e = answer.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unavailable, "{e:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_earlier_turns_failure_does_not_fail_the_turn_that_took_the_task() {
    // The first turn asks for input and runs on; the answer starts a second turn; the first
    // one then fails. The task is the second turn's now: it completes, not FAILED by the first.
    let asks = Step::status(TaskState::InputRequired, "more please");
    let agent = Arc::new(
        TestAgent::new()
            .on("stay", [asks, Step::sleep(200), Step::fail("the first turn failed late")])
            .on_follow_up("stay", [Step::working(), Step::sleep(500), Step::complete()]),
    );
    let h = RequestHandler::new(agent, card(true, false), Stores::memory(), ServerConfig::default());
    let first = send_task(&h, msg("stay")).await;
    assert_eq!(first.status.state, TaskState::InputRequired);
    let mut answer = msg("stay");
    answer.task_id = first.id.clone();
    let done = send_task(&h, answer).await;
    assert_eq!(done.status.state, TaskState::Completed, "{:?}", done.status);
    assert_eq!(get(&h, &first.id).await.unwrap().status.state, TaskState::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_answers_a_blocking_send_on_a_task_that_was_waiting_for_input() {
    // The answer's turn has said nothing yet (the task is still INPUT_REQUIRED, so there is
    // nothing to end FAILED): its caller is answered Unavailable at once all the same.
    let asks = Step::status(TaskState::InputRequired, "more please");
    let agent = Arc::new(TestAgent::new().on("ask", [asks]).on_follow_up("ask", [Step::Hang]));
    let config = ServerConfig { shutdown_grace: Duration::from_millis(100), ..Default::default() };
    let h = Arc::new(RequestHandler::new(agent, card(true, false), Stores::memory(), config));
    let asked = send_task(&h, msg("ask")).await;
    let mut answer = msg("ask");
    answer.task_id = asked.id.clone();
    let sending = {
        let h = h.clone();
        tokio::spawn(async move { send(&h, answer).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    h.shutdown().await;
    let answered = tokio::time::timeout(Duration::from_secs(3), sending).await.expect("answered at shutdown").unwrap();
    assert_eq!(answered.unwrap_err().kind, ErrorKind::Unavailable);
}

/// A task whose end could not be stored (a full disk) is not left active for ever: the
/// server's stop ends it FAILED once the store takes writes again (it stayed WORKING, even
/// across a graceful restart, which skips the recovery of interrupted tasks).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_end_could_not_be_stored_is_ended_at_shutdown() {
    let memory = Arc::new(a2a_native::store::MemoryStore::default());
    let store = Arc::new(support::store::Faulty::new(memory.clone()));
    support::store::Faulty::set(&store.fail_ends, true);
    let stores = Stores { tasks: store.clone(), push: Stores::memory().push };
    let h = Arc::new(RequestHandler::new(agent(), card(true, true), stores, ServerConfig::default()));
    let id = started(&h, "slow").await;
    // Its completion (after 300 ms) is refused, and FAILED after it too.
    tokio::time::sleep(Duration::from_millis(600)).await;
    use a2a_native::store::TaskStore;
    let stuck = memory.get("", &id, None).await.unwrap().unwrap();
    assert_eq!(stuck.status.state, TaskState::Working);
    // Reads work, writes do not: not ready (a load balancer sends its calls elsewhere).
    let unready = h.ready().await.unwrap_err();
    assert!(unready.message.contains("refused a write"), "{unready}");
    support::store::Faulty::set(&store.fail_ends, false);
    let other = started(&h, "complete").await;
    assert!(!other.is_empty());
    for _ in 0..100 {
        if h.ready().await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(h.ready().await.is_ok(), "ready again once a write went through");
    h.shutdown().await;
    let ended = memory.get("", &id, None).await.unwrap().unwrap();
    assert_eq!(ended.status.state, TaskState::Failed, "{ended:?}");
    assert!(ended.status.message.unwrap().text_content().contains("could not store"));
}
