//! Runs tests/vectors/sse: every decode case whole, split in two at every position and one byte
//! at a time (the outcome must not depend on chunking); every encode case byte for byte.

use crate::common;

use a2a_native::sse;
use base64::Engine;
use serde_json::{Map, Value};

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

/// Outcomes of decoding `chunks`, `finish` included, and the last event ID at the end.
fn decode<'a>(limit: Option<u64>, chunks: impl IntoIterator<Item = &'a [u8]>) -> (Vec<Value>, String) {
    let mut out = sse::vectors::decode(limit, chunks);
    let outcomes = out["outcomes"].as_array_mut().map(std::mem::take).unwrap_or_default();
    (outcomes, out["last_event_id"].as_str().unwrap_or_default().to_owned())
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
        let limit =
            case.get("max_event_bytes").map(|v| v.as_u64().unwrap_or_else(|| panic!("{name}: bad max_event_bytes")));
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
        let actual = sse::vectors::encode(&Value::Object(case.clone())).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(actual, expected, "case {name:?}");
    }
    eprintln!("{} SSE encode vectors passed", cases.len());
}
