//! The client against our own server, in-process on 127.0.0.1:0: every operation over the three
//! bindings (JSON-RPC, HTTP+JSON and gRPC, A2A 1.0) and over A2A 0.3 JSON-RPC; streaming (ending at
//! INPUT_REQUIRED, multi-turn on one task), the pagination helper, cancel, subscribe, push
//! config CRUD, the extended card behind a bearer token, extensions, tenants, the card cache.
//! Misbehaving servers are in `client_faults.rs`.

use crate::support;

use a2a_native::ErrorKind;
use a2a_native::client::{Binding, CardCache, Client, ProtocolVersion, StaticBearer};
use a2a_native::model::{
    CancelTaskRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest, ListTasksRequest, Message, Role,
    SendMessageConfiguration, SendMessageRequest, SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef, TaskState,
};
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use support::client::{Opts, kinds, start};

const BINDINGS: [Binding; 3] = [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc];

async fn client(base: &str, binding: Binding) -> Client {
    let client = Client::builder()
        .preferred_binding(binding)
        .timeout(Duration::from_secs(10))
        .card_cache(Arc::new(CardCache::new()))
        .connect(base)
        .await
        .unwrap();
    assert_eq!(client.binding(), binding);
    assert_eq!(client.protocol_version(), ProtocolVersion::V10);
    client
}

fn send(text: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::text(Role::User, text))
}

/// A message continuing `task`.
fn follow_up(task: &Task, text: &str) -> SendMessageRequest {
    let mut m = Message::text(Role::User, text);
    m.task_id = task.id.clone();
    m.context_id = task.context_id.clone();
    SendMessageRequest::new(m)
}

fn returning_immediately(text: &str) -> SendMessageRequest {
    let mut req = send(text);
    req.configuration = Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
    req
}

fn task_of(reply: SendMessageResponse) -> Task {
    match reply {
        SendMessageResponse::Task(t) => t,
        SendMessageResponse::Message(m) => panic!("expected a task, got message {m:?}"),
    }
}

async fn collect(client_stream: a2a_native::client::EventStream) -> Vec<StreamResponse> {
    let items: Vec<_> =
        tokio::time::timeout(Duration::from_secs(10), client_stream.collect::<Vec<_>>()).await.expect("stream stalled");
    items.into_iter().map(|i| i.expect("stream item")).collect()
}

fn get(id: &str) -> GetTaskRequest {
    GetTaskRequest { id: id.into(), ..Default::default() }
}

fn artifact_text(task: &Task) -> String {
    task.artifacts.iter().flat_map(|a| a.parts.iter()).filter_map(|p| p.as_text()).collect::<Vec<_>>().join("|")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_and_get_over_both_bindings() {
    let server = start(Opts::default()).await;
    for binding in BINDINGS {
        let client = client(&server.base, binding).await;
        assert_eq!(client.card().name, "client test agent");
        let task = task_of(client.send_message(send("hello")).await.unwrap());
        assert_eq!(task.status.state, TaskState::Completed, "{binding:?}");
        assert_eq!(artifact_text(&task), "echo: hello");

        let again = client.get_task(get(&task.id)).await.unwrap();
        assert_eq!((again.id.as_str(), again.status.state), (task.id.as_str(), TaskState::Completed));
        let trimmed = client.get_task(GetTaskRequest { history_length: Some(0), ..get(&task.id) }).await.unwrap();
        assert!(trimmed.history.is_empty());

        let err = client.get_task(get("no-such-task")).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::TaskNotFound, "{binding:?}: {err}");

        match client.send_message(send("direct")).await.unwrap() {
            SendMessageResponse::Message(m) => assert_eq!(m.text_content(), "direct reply"),
            other => panic!("{binding:?}: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_end_at_input_required_and_continue_on_the_same_task() {
    let server = start(Opts::default()).await;
    for binding in BINDINGS {
        let client = client(&server.base, binding).await;
        let events = collect(client.send_streaming_message(send("input")).await.unwrap()).await;
        let last = kinds(&events).pop().unwrap();
        assert!(last.ends_with("TASK_STATE_INPUT_REQUIRED"), "{binding:?}: {:?}", kinds(&events));
        let task_id = events[0].task_id().unwrap().to_owned();
        let task = client.get_task(get(&task_id)).await.unwrap();
        assert_eq!(task.status.state, TaskState::InputRequired);

        // Second turn on the same task, streamed to the end.
        let events = collect(client.send_streaming_message(follow_up(&task, "more")).await.unwrap()).await;
        let k = kinds(&events);
        assert_eq!(k.last().unwrap(), "status:TASK_STATE_COMPLETED", "{binding:?}: {k:?}");
        assert_eq!(k[0], "task:TASK_STATE_INPUT_REQUIRED", "the opening snapshot does not end the stream");
        assert!(k.iter().any(|e| e.starts_with("artifact:")), "{k:?}");
        assert!(events.iter().all(|e| e.task_id() == Some(task_id.as_str())));
        let done = client.get_task(get(&task_id)).await.unwrap();
        assert_eq!((done.status.state, artifact_text(&done).as_str()), (TaskState::Completed, "echo: more"));

        // A message-only stream ends after the message.
        let events = collect(client.send_streaming_message(send("direct")).await.unwrap()).await;
        assert_eq!(kinds(&events), ["message"]);

        // The blocking send of a multi-turn exchange returns at INPUT_REQUIRED too.
        let first = task_of(client.send_message(send("input")).await.unwrap());
        assert_eq!(first.status.state, TaskState::InputRequired);
        let second = task_of(client.send_message(follow_up(&first, "again")).await.unwrap());
        assert_eq!((second.id.as_str(), second.status.state), (first.id.as_str(), TaskState::Completed));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_tasks_and_the_pagination_helper() {
    let server = start(Opts::default()).await;
    for binding in BINDINGS {
        let client = client(&server.base, binding).await;
        let context = uuid::Uuid::new_v4().to_string();
        let mut ids = Vec::new();
        for i in 0..5 {
            let mut req = send(&format!("task {i}"));
            req.message.context_id = context.clone();
            ids.push(task_of(client.send_message(req).await.unwrap()).id);
        }
        let filter = ListTasksRequest { context_id: context.clone(), page_size: Some(2), ..Default::default() };
        let page = client.list_tasks(filter.clone()).await.unwrap();
        assert_eq!(page.tasks.len(), 2, "{binding:?}");
        assert!(!page.next_page_token.is_empty());

        let all: Vec<Task> = client.list_all_tasks(filter).map(|t| t.unwrap()).collect().await;
        let mut got: Vec<String> = all.iter().map(|t| t.id.clone()).collect();
        got.sort();
        ids.sort();
        assert_eq!(got, ids, "{binding:?}: every task once");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_and_subscribe() {
    let server = start(Opts::default()).await;
    for binding in BINDINGS {
        let client = client(&server.base, binding).await;
        let task = task_of(client.send_message(returning_immediately("wait")).await.unwrap());
        // Wait until the agent is working, so the subscription sees a live task.
        for _ in 0..100 {
            if client.get_task(get(&task.id)).await.unwrap().status.state == TaskState::Working {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let mut stream = client
            .subscribe_to_task(SubscribeToTaskRequest { id: task.id.clone(), ..Default::default() })
            .await
            .unwrap();
        let first = stream.next().await.unwrap().unwrap();
        assert!(matches!(&first, StreamResponse::Task(t) if t.id == task.id), "{binding:?}: the snapshot comes first");

        let canceled =
            client.cancel_task(CancelTaskRequest { id: task.id.clone(), ..Default::default() }).await.unwrap();
        assert_eq!(canceled.status.state, TaskState::Canceled, "{binding:?}");
        let rest = collect(stream).await;
        assert_eq!(kinds(&rest).last().unwrap(), "status:TASK_STATE_CANCELED", "{binding:?}");

        let err =
            client.cancel_task(CancelTaskRequest { id: task.id.clone(), ..Default::default() }).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::TaskNotCancelable, "{binding:?}");
        // Subscribing to a terminal task is refused (before the stream, or as its only item).
        let err = match client
            .subscribe_to_task(SubscribeToTaskRequest { id: task.id.clone(), ..Default::default() })
            .await
        {
            Err(e) => e,
            Ok(mut s) => s.next().await.expect("one item").unwrap_err(),
        };
        assert_eq!(err.kind, ErrorKind::UnsupportedOperation, "{binding:?}: {err}");

        // A live subscription sees a task through to its end.
        let slow = task_of(client.send_message(returning_immediately("slow")).await.unwrap());
        let events = collect(
            client
                .subscribe_to_task(SubscribeToTaskRequest { id: slow.id.clone(), ..Default::default() })
                .await
                .unwrap(),
        )
        .await;
        let k = kinds(&events);
        assert!(k[0].starts_with("task:"), "{k:?}");
        assert_eq!(k.last().unwrap(), "status:TASK_STATE_COMPLETED", "{binding:?}: {k:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_config_crud() {
    let server = start(Opts::default()).await;
    for binding in BINDINGS {
        let client = client(&server.base, binding).await;
        let task = task_of(client.send_message(send("hello")).await.unwrap());
        let config = TaskPushNotificationConfig {
            id: "cfg-1".into(),
            task_id: task.id.clone(),
            url: "http://127.0.0.1:9/hook".into(),
            token: "tok".into(),
            ..Default::default()
        };
        let created = client.create_push_config(config.clone()).await.unwrap();
        assert_eq!(
            (created.id.as_str(), created.url.as_str(), created.task_id.as_str()),
            ("cfg-1", config.url.as_str(), task.id.as_str())
        );
        let r = TaskPushNotificationConfigRef { task_id: task.id.clone(), id: "cfg-1".into(), ..Default::default() };
        let got = client.get_push_config(r.clone()).await.unwrap();
        assert_eq!(got.url, config.url, "{binding:?}");
        let list = ListTaskPushNotificationConfigsRequest { task_id: task.id.clone(), ..Default::default() };
        assert_eq!(client.list_push_configs(list.clone()).await.unwrap().configs.len(), 1);
        client.delete_push_config(r.clone()).await.unwrap();
        assert!(client.list_push_configs(list).await.unwrap().configs.is_empty(), "{binding:?}");
        let err = client.get_push_config(r).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::TaskNotFound, "{binding:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extended_card_with_a_bearer_token() {
    let server = start(Opts { bearer: Some(("s3cret", false)), ..Default::default() }).await;
    for binding in BINDINGS {
        let anonymous = client(&server.base, binding).await;
        let err = anonymous.get_extended_agent_card().await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Unauthenticated, "{binding:?}: {err}");
        // Other calls need no credentials on this card (no securityRequirements).
        task_of(anonymous.send_message(send("hello")).await.unwrap());

        let authed = Client::builder()
            .card_cache(Arc::new(CardCache::new()))
            .preferred_binding(binding)
            .credentials(Arc::new(StaticBearer::new("s3cret")))
            .connect(&server.base)
            .await
            .unwrap();
        let card = authed.get_extended_agent_card().await.unwrap();
        assert_eq!(card.description, "the extended card", "{binding:?}");

        let wrong = Client::builder()
            .card_cache(Arc::new(CardCache::new()))
            .preferred_binding(binding)
            .credentials(Arc::new(StaticBearer::new("nope")))
            .connect(&server.base)
            .await
            .unwrap();
        assert_eq!(wrong.get_extended_agent_card().await.unwrap_err().kind, ErrorKind::Unauthenticated);
    }

    // A card that requires the token on every call.
    let server = start(Opts { bearer: Some(("s3cret", true)), ..Default::default() }).await;
    for binding in BINDINGS {
        let anonymous = client(&server.base, binding).await;
        assert_eq!(anonymous.send_message(send("hello")).await.unwrap_err().kind, ErrorKind::Unauthenticated);
        let authed = Client::builder()
            .card_cache(Arc::new(CardCache::new()))
            .preferred_binding(binding)
            .credentials(Arc::new(StaticBearer::new("s3cret")))
            .connect(&server.base)
            .await
            .unwrap();
        let task = task_of(authed.send_message(send("hello")).await.unwrap());
        let events = collect(authed.send_streaming_message(send("hi")).await.unwrap()).await;
        assert_eq!(kinds(&events).last().unwrap(), "status:TASK_STATE_COMPLETED");
        authed.get_task(get(&task.id)).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_header_activates_extensions() {
    let server = start(Opts::default()).await;
    for binding in BINDINGS {
        let with = Client::builder()
            .card_cache(Arc::new(CardCache::new()))
            .preferred_binding(binding)
            .extensions(["urn:a2a-native:test:opt", "urn:unknown"])
            .connect(&server.base)
            .await
            .unwrap();
        match with.send_message(send("extensions")).await.unwrap() {
            SendMessageResponse::Message(m) => assert_eq!(m.text_content(), "urn:a2a-native:test:opt", "{binding:?}"),
            other => panic!("{other:?}"),
        }
        let without = client(&server.base, binding).await;
        match without.send_message(send("extensions")).await.unwrap() {
            SendMessageResponse::Message(m) => assert_eq!(m.text_content(), ""),
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_interface_tenant_goes_into_every_request() {
    let server = start(Opts { tenant: Some("acme"), ..Default::default() }).await;
    for binding in BINDINGS {
        let client = client(&server.base, binding).await;
        assert_eq!(client.tenant(), "acme");
        let task = task_of(client.send_message(send("hello")).await.unwrap());
        assert_eq!(client.get_task(get(&task.id)).await.unwrap().id, task.id, "{binding:?}");
        let listed = client.list_tasks(ListTasksRequest::default()).await.unwrap();
        assert!(listed.tasks.iter().any(|t| t.id == task.id), "{binding:?}");
        let events = collect(client.send_streaming_message(send("hi")).await.unwrap()).await;
        let streamed = events[0].task_id().unwrap().to_owned();
        assert_eq!(client.get_task(get(&streamed)).await.unwrap().status.state, TaskState::Completed);

        // The same server without the tenant sees none of it.
        let mut card = server.card.clone();
        for i in &mut card.supported_interfaces {
            i.tenant.clear();
        }
        let untenanted = Client::builder().preferred_binding(binding).from_card(card).unwrap();
        assert_eq!(untenanted.get_task(get(&task.id)).await.unwrap_err().kind, ErrorKind::TaskNotFound, "{binding:?}");
        assert!(
            untenanted.list_tasks(ListTasksRequest::default()).await.unwrap().tasks.iter().all(|t| t.id != task.id)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_over_a2a_0_3() {
    let server = start(Opts { only_v03: true, bearer: Some(("s3cret", false)), ..Default::default() }).await;
    let client = Client::builder()
        .preferred_binding(Binding::HttpJson)
        .credentials(Arc::new(StaticBearer::new("s3cret")))
        .extensions(["urn:a2a-native:test:opt"])
        .card_cache(Arc::new(CardCache::new()))
        .connect(&server.base)
        .await
        .unwrap();
    assert_eq!((client.binding(), client.protocol_version()), (Binding::JsonRpc, ProtocolVersion::V03));

    let task = task_of(client.send_message(send("hello")).await.unwrap());
    assert_eq!((task.status.state, artifact_text(&task).as_str()), (TaskState::Completed, "echo: hello"));
    assert_eq!(client.get_task(get(&task.id)).await.unwrap().status.state, TaskState::Completed);
    assert_eq!(client.get_task(get("nope")).await.unwrap_err().kind, ErrorKind::TaskNotFound);
    match client.send_message(send("direct")).await.unwrap() {
        SendMessageResponse::Message(m) => {
            assert_eq!((m.role, m.text_content().as_str()), (Role::Agent, "direct reply"))
        }
        other => panic!("{other:?}"),
    }
    // Extensions travel as X-A2A-Extensions.
    match client.send_message(send("extensions")).await.unwrap() {
        SendMessageResponse::Message(m) => assert_eq!(m.text_content(), "urn:a2a-native:test:opt"),
        other => panic!("{other:?}"),
    }

    // Streaming, ending at input-required (0.3 `final`), then the second turn.
    let events = collect(client.send_streaming_message(send("input")).await.unwrap()).await;
    assert!(kinds(&events).last().unwrap().ends_with("TASK_STATE_INPUT_REQUIRED"), "{:?}", kinds(&events));
    let first = client.get_task(get(events[0].task_id().unwrap())).await.unwrap();
    let events = collect(client.send_streaming_message(follow_up(&first, "more")).await.unwrap()).await;
    assert_eq!(kinds(&events).last().unwrap(), "status:TASK_STATE_COMPLETED", "{:?}", kinds(&events));

    // Cancel and resubscribe.
    let waiting = task_of(client.send_message(returning_immediately("wait")).await.unwrap());
    for _ in 0..100 {
        if client.get_task(get(&waiting.id)).await.unwrap().status.state == TaskState::Working {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut stream = client
        .subscribe_to_task(SubscribeToTaskRequest { id: waiting.id.clone(), ..Default::default() })
        .await
        .unwrap();
    assert!(matches!(stream.next().await.unwrap().unwrap(), StreamResponse::Task(_)));
    let canceled =
        client.cancel_task(CancelTaskRequest { id: waiting.id.clone(), ..Default::default() }).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    assert_eq!(kinds(&collect(stream).await).last().unwrap(), "status:TASK_STATE_CANCELED");

    // Push configs.
    let config = TaskPushNotificationConfig {
        id: "c1".into(),
        task_id: task.id.clone(),
        url: "http://127.0.0.1:9/hook".into(),
        ..Default::default()
    };
    assert_eq!(client.create_push_config(config.clone()).await.unwrap().url, config.url);
    let r = TaskPushNotificationConfigRef { task_id: task.id.clone(), id: "c1".into(), ..Default::default() };
    assert_eq!(client.get_push_config(r.clone()).await.unwrap().id, "c1");
    let list = ListTaskPushNotificationConfigsRequest { task_id: task.id.clone(), ..Default::default() };
    assert_eq!(client.list_push_configs(list.clone()).await.unwrap().configs.len(), 1);
    client.delete_push_config(r).await.unwrap();
    assert!(client.list_push_configs(list).await.unwrap().configs.is_empty());

    // The extended card, and what 0.3 lacks.
    assert_eq!(client.get_extended_agent_card().await.unwrap().description, "the extended card");
    let err = client.list_tasks(ListTasksRequest::default()).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::UnsupportedOperation);
    assert!(err.message.contains("ListTasks") && err.message.contains("0.3"), "{err}");

    // A client may refuse 0.3.
    let err = Client::builder().allow_v03(false).from_card(client.card().clone()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::UnsupportedOperation);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_connect_asks_the_agent_and_a_cached_card_is_revalidated() {
    let server = start(Opts::default()).await;
    let cache = Arc::new(CardCache::new());
    let first = Client::builder().card_cache(cache.clone()).connect(&server.base).await.unwrap();
    assert_eq!(cache.len(), 1, "our server sends an ETag");
    // Unchanged: 304, the cached card.
    let again = Client::builder().card_cache(cache.clone()).connect(&server.base).await.unwrap();
    assert_eq!(again.card(), first.card());
    let base = server.base.clone();
    server.stop().await;
    // The server is gone: connecting fails although its card (max-age 300) is cached, instead of
    // handing out a client whose first call fails (or, with another agent now on the address,
    // the wrong card).
    let err = Client::builder().card_cache(cache.clone()).max_retries(0).connect(&base).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Transport, "{err}");
}

/// `call` and `stream`, the by-name entry points the bindings use: the same validation as a
/// server's, the same results as the typed methods, on every binding.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operations_by_name_validate_and_answer_as_the_typed_ones() {
    use serde_json::json;
    let server = start(Opts::default()).await;
    for binding in BINDINGS {
        let client = client(&server.base, binding).await;
        let message = json!({"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]});
        let sent = client.call("SendMessage", json!({ "message": message })).await.unwrap();
        let id = sent["task"]["id"].as_str().expect("a task").to_owned();
        assert_eq!(sent["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{binding:?}");
        let got = client.call("GetTask", json!({ "id": id })).await.unwrap();
        assert_eq!(got, a2a_native::model::to_value(&client.get_task(get(&id)).await.unwrap()));
        let listed = client.call("ListTasks", json!({"pageSize": 1})).await.unwrap();
        assert_eq!(listed["tasks"].as_array().map(Vec::len), Some(1));
        // A short state name, as executors' status events take, filters as the wire name does;
        // an unknown one is refused naming the field.
        for (status, found) in [("completed", true), ("TASK_STATE_COMPLETED", true), ("input-required", false)] {
            let listed = client.call("ListTasks", json!({"status": status})).await.unwrap();
            let ids: Vec<_> = listed["tasks"].as_array().unwrap().iter().map(|t| t["id"].clone()).collect();
            assert_eq!(ids.contains(&json!(id)), found, "{status}: {listed}");
        }
        let err = client.call("ListTasks", json!({"status": "done"})).await.unwrap_err();
        assert_eq!((err.kind, err.violations[0].field.as_str()), (ErrorKind::InvalidParams, "status"), "{err}");
        // The bindings' pagers start from the same reading.
        use a2a_native::request::A2ARequest;
        let req = A2ARequest::list_tasks_from_caller(json!({"status": "input-required"})).unwrap();
        assert_eq!(req.status, Some(TaskState::InputRequired));
        let err = A2ARequest::list_tasks_from_caller(json!({"contextID": "c"})).unwrap_err();
        assert_eq!(err.violations[0].field, "contextID", "{err}");

        let config = json!({"taskId": id, "id": "c1", "url": "https://push.example/hook"});
        assert_eq!(client.call("CreateTaskPushNotificationConfig", config).await.unwrap()["id"], "c1");
        let deleted = client.call("DeleteTaskPushNotificationConfig", json!({"taskId": id, "id": "c1"})).await;
        assert_eq!(deleted.unwrap(), serde_json::Value::Null);

        // Refused before anything is sent: the field is named, as a server names it.
        let err = client.call("GetTask", json!({})).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidParams);
        assert_eq!(err.violations[0].field, "id");
        assert_eq!(client.call("GetTasks", json!({})).await.unwrap_err().kind, ErrorKind::MethodNotFound);
        // A member the request does not define is the caller's typo, refused by its path: sent
        // on, `contextID` would list every task, and a misspelt configuration would be ignored.
        for (method, params, field) in [
            ("ListTasks", json!({"contextID": "c"}), "contextID"),
            (
                "SendMessage",
                json!({"message": message, "configuration": {"returnImmediatly": true}}),
                "configuration.returnImmediatly",
            ),
            (
                "SendStreamingMessage",
                json!({"message": message, "configuration": {"pushNotificationConfig": {}}}),
                "configuration.pushNotificationConfig",
            ),
            ("GetTask", json!({"id": id, "history": 1}), "history"),
        ] {
            let err = match method {
                "SendStreamingMessage" => match client.stream(method, params).await {
                    Ok(_) => panic!("{method} accepted"),
                    Err(e) => e,
                },
                _ => client.call(method, params).await.unwrap_err(),
            };
            assert_eq!(err.kind, ErrorKind::InvalidParams, "{method}: {err}");
            assert_eq!(err.violations[0].field, field, "{method}: {err}");
        }
        // The proto's own snake_case names are not typos.
        assert!(client.call("GetTask", json!({"id": id, "history_length": 1})).await.is_ok());
        let err = client.call("SubscribeToTask", json!({ "id": id })).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidRequest);
        assert_eq!(client.stream("GetTask", json!({ "id": id })).await.unwrap_err().kind, ErrorKind::InvalidRequest);

        let events = collect(client.stream("SendStreamingMessage", json!({ "message": message })).await.unwrap()).await;
        assert!(
            matches!(events.last(), Some(StreamResponse::StatusUpdate(u)) if u.status.state == TaskState::Completed)
        );
    }
}

/// A stream that carries another task's event is the agent's fault: the client says so, and
/// that task's end does not end this stream as if it were its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_of_another_task_on_a_stream_is_an_invalid_agent_response() {
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut conn, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 65536];
        let _ = conn.read(&mut buf).await.unwrap();
        let event =
            |result: serde_json::Value| format!("data: {}\n\n", json!({"jsonrpc": "2.0", "id": 1, "result": result}));
        let body = event(json!({"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}}))
            + &event(json!({"statusUpdate": {"taskId": "OTHER", "contextId": "c9",
                "status": {"state": "TASK_STATE_COMPLETED"}}}));
        let head =
            format!("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\n\r\n", body.len());
        conn.write_all((head + &body).as_bytes()).await.unwrap();
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let card: a2a_native::model::AgentCard = a2a_native::model::parse_value(json!({
        "name": "a", "description": "d", "version": "1", "capabilities": {"streaming": true},
        "supportedInterfaces": [{"url": format!("http://{addr}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    }))
    .unwrap();
    let client = Client::builder().stream_reconnects(0).from_card(card).unwrap();
    let message = json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]});
    let mut stream = client.stream("SendStreamingMessage", json!({ "message": message })).await.unwrap();
    assert!(matches!(stream.next().await, Some(Ok(StreamResponse::Task(t))) if t.id == "t1"));
    let err = stream.next().await.expect("an item").unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidAgentResponse, "{err}");
    assert!(err.message.contains("\"OTHER\""), "{err}");
    assert!(stream.next().await.is_none());
}

/// A read whose connection is closed before any answer (a keep-alive connection the server had
/// just closed) is repeated on a fresh connection, as idempotent calls are after a connect error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotent_call_lost_with_its_connection_is_retried() {
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = served.clone();
    tokio::spawn(async move {
        for n in 0.. {
            let (mut conn, _) = listener.accept().await.unwrap();
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = vec![0u8; 65536];
            let _ = conn.read(&mut buf).await;
            if n == 0 {
                continue; // dropped: closed with no answer
            }
            let body = json!({"jsonrpc": "2.0", "id": 1, "result":
                {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}})
            .to_string();
            let head =
                format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len());
            conn.write_all((head + &body).as_bytes()).await.unwrap();
        }
    });
    let card: a2a_native::model::AgentCard = a2a_native::model::parse_value(json!({
        "name": "a", "description": "d", "version": "1", "capabilities": {},
        "supportedInterfaces": [{"url": format!("http://{addr}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]
    }))
    .unwrap();
    let client = Client::builder().from_card(card).unwrap();
    let task = client.call("GetTask", json!({"id": "t1"})).await.unwrap();
    assert_eq!(task["id"], "t1");
    assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 2);
}
