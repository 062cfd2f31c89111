//! Runs tests/vectors/sse: every decode case whole, split in two at every position and one byte
//! at a time (the outcome must not depend on chunking); every encode case byte for byte.

use crate::common;

use a2a_native::sse::{self, SseDecoder, SseError, SseEvent};
use base64::Engine;
use serde_json::{Map, Value, json};

/// All cases of one kind ("decode" or "encode"), labelled `file: name`.
fn cases(kind: &str) -> Vec<(String, Map<String, Value>)> {
    let mut cases = Vec::new();
    for (file, value) in common::vector_files("sse") {
        for case in value.get(kind).and_then(Value::as_array).into_iter().flatten() {
            let case = case.as_object().unwrap_or_else(|| panic!("{file}: a {kind} case is not an object"));
            let name = case.get("name").and_then(Value::as_str).unwrap_or_else(|| panic!("{file}: case without name"));
            cases.push((format!("{file}: {name}"), case.clone()));
        }
    }
    assert!(!cases.is_empty(), "no {kind} vectors found");
    cases
}

/// The vector form of an event: only the fields it has.
fn event_json(event: &SseEvent) -> Value {
    let mut obj = Map::new();
    if let Some(name) = &event.event {
        obj.insert("event".into(), json!(name));
    }
    obj.insert("data".into(), json!(event.data));
    if let Some(id) = &event.id {
        obj.insert("id".into(), json!(id));
    }
    if let Some(retry) = event.retry {
        obj.insert("retry".into(), json!(retry));
    }
    Value::Object(obj)
}

fn outcome_json(outcome: &Result<SseEvent, SseError>) -> Value {
    match outcome {
        Ok(event) => event_json(event),
        Err(SseError::EventTooLarge { .. }) => json!({"error": "EventTooLarge"}),
        Err(SseError::UnterminatedEvent) => json!({"error": "UnterminatedEvent"}),
    }
}

/// Outcomes of decoding `chunks`, `finish` included, and the last event ID at the end.
fn decode<'a>(limit: usize, chunks: impl IntoIterator<Item = &'a [u8]>) -> (Vec<Value>, String) {
    let mut decoder = SseDecoder::new(limit);
    let mut outcomes = Vec::new();
    for chunk in chunks {
        outcomes.extend(decoder.push(chunk).iter().map(outcome_json));
    }
    let last_event_id = decoder.last_event_id().to_owned();
    if let Err(e) = decoder.finish() {
        outcomes.push(outcome_json(&Err(e)));
    }
    (outcomes, last_event_id)
}

#[test]
fn decode_vectors() {
    let cases = cases("decode");
    for (name, case) in &cases {
        let input = match (case.get("input"), case.get("input_base64")) {
            (Some(Value::String(text)), None) => text.as_bytes().to_vec(),
            (None, Some(Value::String(b64))) => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap_or_else(|e| panic!("{name}: bad input_base64: {e}")),
            _ => panic!("{name}: needs exactly one of input, input_base64"),
        };
        let limit = match case.get("max_event_bytes") {
            None => usize::MAX,
            Some(v) => v
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or_else(|| panic!("{name}: bad max_event_bytes")),
        };
        let expected = case.get("expected").and_then(Value::as_array).unwrap_or_else(|| panic!("{name}: no expected"));
        let expected_id =
            case.get("last_event_id").map(|v| v.as_str().unwrap_or_else(|| panic!("{name}: bad last_event_id")));
        let check = |(outcomes, last_id): (Vec<Value>, String), how: &str| {
            assert_eq!(&outcomes, expected, "case {name:?}, input {how}");
            if let Some(id) = expected_id {
                assert_eq!(last_id, id, "case {name:?}, input {how}: last event ID");
            }
        };

        check(decode(limit, [&input[..]]), "whole");
        for at in 0..=input.len() {
            check(decode(limit, [&input[..at], &input[at..]]), &format!("split at byte {at}"));
        }
        check(decode(limit, input.chunks(1)), "one byte at a time");
    }
    eprintln!("{} SSE decode vectors passed", cases.len());
}

#[test]
fn encode_vectors() {
    let cases = cases("encode");
    for (name, case) in &cases {
        let expected = case.get("expected").and_then(Value::as_str).unwrap_or_else(|| panic!("{name}: no expected"));
        let actual = match (case.get("event"), case.get("comment")) {
            (Some(event), None) => sse::encode(&event_from_json(name, event)),
            (None, Some(Value::String(text))) => sse::encode_comment(text),
            _ => panic!("{name}: needs exactly one of event, comment"),
        };
        assert_eq!(actual, expected, "case {name:?}");
    }
    eprintln!("{} SSE encode vectors passed", cases.len());
}

fn event_from_json(name: &str, value: &Value) -> SseEvent {
    let obj = value.as_object().unwrap_or_else(|| panic!("{name}: event is not an object"));
    let text = |key: &str| {
        obj.get(key).map(|v| v.as_str().unwrap_or_else(|| panic!("{name}: {key} is not a string")).to_owned())
    };
    if let Some(key) = obj.keys().find(|k| !["event", "data", "id", "retry"].contains(&k.as_str())) {
        panic!("{name}: unknown event key {key:?}");
    }
    SseEvent {
        event: text("event"),
        data: text("data").unwrap_or_else(|| panic!("{name}: event without data")),
        id: text("id"),
        retry: obj.get("retry").map(|v| v.as_u64().unwrap_or_else(|| panic!("{name}: bad retry"))),
    }
}
