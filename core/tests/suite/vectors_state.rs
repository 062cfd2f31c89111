//! Runs tests/vectors/state: the transition table and the per-state operation errors.

use a2a_native::A2AError;
use a2a_native::model::{Message, Role, Task, TaskState, TaskStatus};
use a2a_native::task::state;
use serde_json::Value;

fn load() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/state/transitions.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("read state vectors")).expect("valid JSON")
}

fn st(name: &str) -> TaskState {
    TaskState::from_name(name).unwrap_or_else(|| panic!("unknown state {name}"))
}

fn task(state: TaskState, context: &str) -> Task {
    Task {
        id: "t1".into(),
        context_id: context.into(),
        status: TaskStatus::now(state),
        artifacts: vec![],
        history: vec![],
        metadata: None,
    }
}

fn outcome(r: Result<(), A2AError>) -> String {
    r.map_or_else(|e| e.kind.name().to_owned(), |()| "ok".to_owned())
}

#[test]
fn every_transition_matches_the_table() {
    let v = load();
    let states: Vec<TaskState> = v["states"].as_array().unwrap().iter().map(|s| st(s.as_str().unwrap())).collect();
    assert_eq!(states.len(), TaskState::ALL.len(), "vector lists every state");
    let mut checked = 0;
    for (from_name, allowed) in v["allowed"].as_object().unwrap() {
        let from = (from_name != "(new)").then(|| st(from_name));
        let allowed: Vec<TaskState> = allowed.as_array().unwrap().iter().map(|s| st(s.as_str().unwrap())).collect();
        for &to in &states {
            assert_eq!(state::can_transition(from, to), allowed.contains(&to), "{from_name} -> {to}");
            checked += 1;
        }
    }
    assert_eq!(checked, 10 * 9);
    for (class, members) in v["classes"].as_object().unwrap() {
        for &s in &states {
            let listed = members.as_array().unwrap().iter().any(|m| m == s.as_str());
            let actual = match class.as_str() {
                "terminal" => s.is_terminal(),
                "interrupted" => s.is_interrupted(),
                "active" => s.is_active(),
                other => panic!("unknown class {other}"),
            };
            assert_eq!(actual, listed, "{class} {s}");
        }
    }
}

#[test]
fn operations_get_the_spec_errors() {
    let v = load();
    for case in v["operations"].as_array().unwrap() {
        let t = task(st(case["state"].as_str().unwrap()), "c1");
        let msg = Message::text(Role::User, "hello");
        assert_eq!(outcome(state::check_message_for_task(&t, &msg)), case["message"], "message in {}", case["state"]);
        assert_eq!(outcome(state::check_cancel(&t)), case["cancel"], "cancel in {}", case["state"]);
        assert_eq!(outcome(state::check_subscribe(&t)), case["subscribe"], "subscribe in {}", case["state"]);
    }
    for case in v["context_checks"].as_array().unwrap() {
        let t = task(TaskState::InputRequired, case["task_context"].as_str().unwrap());
        let mut msg = Message::text(Role::User, "hello");
        msg.context_id = case["message_context"].as_str().unwrap().into();
        let result = state::check_message_for_task(&t, &msg);
        if let (Err(e), Some(field)) = (&result, case.get("field")) {
            assert_eq!(e.violations[0].field, field.as_str().unwrap(), "{}", case["name"]);
        }
        assert_eq!(outcome(result), case["expected"], "{}", case["name"]);
    }
}
