//! tests/vectors/scenario: a scripted executor hosted by our server, driven by our client
//! (SendMessage and SendStreamingMessage); the reply and the event sequence must be the ones
//! the vector gives, turn after turn on the same task where a case continues (`next`). Every
//! binding runs the same file through its own server and client.

use crate::support::agent::{Step, TestAgent};
use a2a_native::client::Client;
use a2a_native::model::{
    self, CancelTaskRequest, Message, Role, SendMessageConfiguration, SendMessageRequest, TaskState,
};
use a2a_native::server::host::{HostedServer, ServerOptions};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

fn cases() -> Vec<Value> {
    let path = format!("{}/../tests/vectors/scenario/basic.json", env!("CARGO_MANIFEST_DIR"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

/// A case and the turns that continue it.
fn turns(case: &Value) -> impl Iterator<Item = &Value> {
    std::iter::successors(Some(case), |turn| turn.get("next"))
}

/// A step as the vectors write it, as the test agent's step. The agent's texts are templates,
/// so a vector's text may hold no `{` (no binding's player reads one).
fn step(step: &Value) -> Step {
    let text = |key: &str| {
        let text = step[key].as_str().map(str::to_owned);
        assert!(!text.as_ref().is_some_and(|t| t.contains('{')), "a vector text with a brace: {step}");
        text
    };
    let flag = |key: &str| step[key].as_bool().unwrap_or(false);
    if let Some(state) = text("status") {
        let state = TaskState::from_short_name(&state).expect("a state name");
        Step::Status(state, text("text"))
    } else if let Some(part) = text("artifact").or_else(|| step.get("history").map(|_| "{history}".into())) {
        Step::Chunk { id: text("id"), text: part, append: flag("append"), last: flag("lastChunk") }
    } else if let Some(reply) = text("message") {
        Step::Reply(reply)
    } else if let Some(ms) = step["sleepMs"].as_u64() {
        Step::sleep(ms)
    } else if let Some(failure) = text("raise") {
        Step::Fail(failure)
    } else if step.get("waitForCancel").is_some() {
        Step::UntilCanceled
    } else {
        panic!("unknown step {step}")
    }
}

/// `TASK_STATE_INPUT_REQUIRED` -> `input_required`.
fn short(state: &Value) -> String {
    state.as_str().unwrap_or_default().trim_start_matches("TASK_STATE_").to_ascii_lowercase()
}

fn texts(parts: &Value) -> String {
    parts.as_array().into_iter().flatten().filter_map(|p| p["text"].as_str()).collect()
}

/// A StreamResponse (ProtoJSON) as the vectors write it.
fn event(e: &Value) -> Value {
    if let Some(t) = e.get("task") {
        json!({"task": short(&t["status"]["state"])})
    } else if let Some(u) = e.get("statusUpdate") {
        json!({"status": short(&u["status"]["state"])})
    } else if let Some(u) = e.get("artifactUpdate") {
        json!({"artifact": texts(&u["artifact"]["parts"])})
    } else {
        json!({"message": texts(&e["message"]["parts"])})
    }
}

/// A SendMessage reply as the vectors write it (only the keys the vector names are compared).
fn reply(r: &Value) -> Value {
    match r.get("task") {
        Some(t) => json!({
            "task": short(&t["status"]["state"]),
            "artifacts": t["artifacts"].as_array().into_iter().flatten().map(|a| texts(&a["parts"])).collect::<Vec<_>>(),
            "statusText": texts(&t["status"]["message"]["parts"]),
        }),
        None => json!({"message": texts(&r["message"]["parts"])}),
    }
}

/// The task and context ids an event or reply (ProtoJSON) belongs to.
fn ids(e: &Value) -> (String, String) {
    let of = |v: &Value, id: &str| {
        (v[id].as_str().unwrap_or_default().to_owned(), v["contextId"].as_str().unwrap_or_default().to_owned())
    };
    match (e.get("task"), e.get("statusUpdate").or_else(|| e.get("artifactUpdate"))) {
        (Some(task), _) => of(task, "id"),
        (None, Some(update)) => of(update, "taskId"),
        (None, None) => Default::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenario_vectors_through_our_server_and_client() {
    // A case that waits (a broken returnImmediately or cancel) fails here, not after minutes.
    tokio::time::timeout(Duration::from_secs(120), play_every_case()).await.expect("the scenarios took over 120 s");
}

async fn play_every_case() {
    let cases = cases();
    // Each turn's message text is its name, which picks its steps.
    let agent =
        cases.iter().flat_map(turns).fold(TestAgent::new().otherwise([Step::fail("no such scenario")]), |a, t| {
            a.on_text(t["name"].as_str().unwrap(), t["steps"].as_array().unwrap().iter().map(step))
        });
    let card = json!({
        "name": "scenarios", "description": "Plays tests/vectors/scenario.", "version": "1.0.0",
        "capabilities": {"streaming": true}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "play", "name": "Play", "description": "Plays a scenario.", "tags": ["test"]}]
    });
    let server = HostedServer::new(card, ServerOptions::default()).unwrap();
    server.start(Arc::new(agent), "127.0.0.1", 0).await.unwrap();
    let client = Client::builder()
        .card_cache(std::sync::Arc::new(a2a_native::client::CardCache::new()))
        .connect(&server.url().unwrap())
        .await
        .unwrap();
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        // Each turn continues the task the one before it started (SendMessage, then streaming).
        let request = |turn: &Value, (task_id, context_id): &(String, String)| {
            let mut message = Message::text(Role::User, turn["name"].as_str().unwrap());
            (message.task_id, message.context_id) = (task_id.clone(), context_id.clone());
            SendMessageRequest::new(message)
        };
        let cancel = |id: String| client.cancel_task(CancelTaskRequest { id, ..Default::default() });
        let mut task = (String::new(), String::new());
        for turn in turns(case) {
            let mut request = request(turn, &task);
            if case.get("cancelAfter").is_some() {
                request.configuration =
                    Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
            }
            let mut got = model::to_value(&client.send_message(request).await.unwrap());
            if case.get("cancelAfter").is_some() {
                // Answered at once: a task that is still running.
                let state = reply(&got)["task"].clone();
                if state != "submitted" && state != "working" {
                    failures.push(format!("{name}: the returnImmediately reply is {state}, want a running task"));
                }
                got = json!({"task": model::to_value(&cancel(ids(&got).0).await.unwrap())});
            }
            let turn_name = turn["name"].as_str().unwrap();
            if !task.0.is_empty() && ids(&got) != task {
                failures.push(format!("{name} / {turn_name}: send answered for task {:?}, want {task:?}", ids(&got)));
            }
            task = ids(&got);
            let got = reply(&got);
            for (key, want) in turn["send"].as_object().unwrap() {
                if &got[key] != want {
                    failures.push(format!("{name} / {turn_name}: send {key} = {}, want {want}", got[key]));
                }
            }
        }
        let mut task = (String::new(), String::new());
        for turn in turns(case) {
            let mut stream = client.send_streaming_message(request(turn, &task)).await.unwrap();
            let mut events = Vec::new();
            while let Some(e) = stream.next().await {
                let e = model::to_value(&e.unwrap());
                if events.is_empty() {
                    if !task.0.is_empty() && ids(&e) != task {
                        failures.push(format!(
                            "{name} / {}: stream of task {:?}, want {task:?}",
                            turn["name"],
                            ids(&e)
                        ));
                    }
                    task = ids(&e);
                }
                events.push(event(&e));
                if case["cancelAfter"].as_u64() == Some(events.len() as u64) {
                    cancel(task.0.clone()).await.unwrap();
                }
            }
            if Value::from(events.clone()) != turn["stream"] {
                failures.push(format!(
                    "{name} / {}: stream {}, want {}",
                    turn["name"],
                    Value::from(events),
                    turn["stream"]
                ));
            }
        }
    }
    server.stop().await.unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
