//! Runs tests/vectors/jsonrpc: request envelopes of every method, id and error path, and the
//! responses a client reads.

use crate::common;

use a2a_native::jsonrpc::{self, Id};
use serde_json::Value;

/// The bytes a case sends: `body_text` verbatim, else `body` serialised.
fn body_bytes(case: &Value) -> Vec<u8> {
    match case.get("body_text") {
        Some(text) => text.as_str().expect("body_text is a string").as_bytes().to_vec(),
        None => serde_json::to_vec(&case["body"]).unwrap(),
    }
}

/// Ids compare as JSON values: `1e3` sent is `1000.0` expected (ids keep their text).
fn id_value(id: &Id) -> Value {
    id.to_value()
}

fn check_request(case: &Value) -> Result<(), String> {
    let expected = &case["expected"];
    let bytes = body_bytes(case);
    let parsed = jsonrpc::parse_envelope(&bytes).and_then(|env| {
        if expected.get("is_v03_method").is_some() && !jsonrpc::is_v03_method(&env.method) {
            return Err(env.error(a2a_native::A2AError::internal("expected a 0.3 method name")));
        }
        jsonrpc::parse_v10(env)
    });
    match (parsed, expected.get("error")) {
        (Ok(call), None) => {
            let params = call.request.params();
            if call.method_name != expected["method"].as_str().unwrap() || params != expected["params"] {
                return Err(format!(
                    "got {} {params}\n  expected {} {}",
                    call.method_name, expected["method"], expected["params"]
                ));
            }
            let notification = expected.get("notification").and_then(Value::as_bool).unwrap_or(false);
            let want_id = if notification { None } else { Some(expected["id"].clone()) };
            if call.id.as_ref().map(id_value) != want_id {
                return Err(format!("id {:?}, expected {want_id:?}", call.id));
            }
            Ok(())
        }
        (Ok(call), Some(want)) => {
            Err(format!("accepted as {} {}; expected error {want}", call.method_name, call.request.params()))
        }
        (Err(e), None) => Err(format!("unexpected error {e}")),
        (Err(e), Some(want)) => {
            let field = e.error.violations.first().map(|v| v.field.as_str());
            let notification = want.get("notification").and_then(Value::as_bool).unwrap_or(false);
            let written: Value = serde_json::from_slice(&e.to_bytes()).unwrap();
            let ok = i64::from(e.error.code()) == want["code"].as_i64().unwrap()
                && id_value(&e.id) == want["id"]
                && written["id"] == want["id"]
                && echoes_id_text(case, &e.to_bytes())
                && written["error"]["code"] == want["code"]
                && e.notification == notification
                && want.get("field").is_none_or(|f| field == f.as_str());
            if ok {
                Ok(())
            } else {
                Err(format!("got {e} field {field:?} notification {}; expected {want}", e.notification))
            }
        }
    }
}

/// A number id sent as text (`body_text`) comes back as that very text: comparing values
/// would not see an integer beyond 64 bits rounded to the same double on both sides.
fn echoes_id_text(case: &Value, written: &[u8]) -> bool {
    let Some(text) = case.get("body_text").and_then(Value::as_str) else { return true };
    let Ok(members) = serde_json::from_str::<std::collections::HashMap<String, Box<serde_json::value::RawValue>>>(text)
    else {
        return true;
    };
    match members.get("id").map(|raw| raw.get()) {
        Some(id) if id.starts_with(|c: char| c == '-' || c.is_ascii_digit()) => {
            String::from_utf8_lossy(written).contains(&format!(r#""id":{id},"#))
        }
        _ => true,
    }
}

fn check_response(case: &Value) -> Result<(), String> {
    let expected = &case["expected"];
    match (jsonrpc::parse_response(&body_bytes(case)), expected.get("invalid")) {
        (Err(e), Some(want)) if i64::from(e.code()) == want["code"].as_i64().unwrap() => Ok(()),
        (Err(e), _) => Err(format!("error {e}; expected {expected}")),
        (Ok(r), Some(_)) => Err(format!("accepted as {r:?}; expected {expected}")),
        (Ok(r), None) => {
            if id_value(&r.id) != expected["id"] {
                return Err(format!("id {}, expected {}", r.id, expected["id"]));
            }
            match (&r.outcome, expected.get("error")) {
                (Ok(result), None) if *result == expected["result"] => Ok(()),
                (Err(e), Some(want))
                    if i64::from(e.code()) == want["code"].as_i64().unwrap()
                        && want.get("reason").is_none_or(|r| r.as_str() == Some(e.kind.spec().reason)) =>
                {
                    Ok(())
                }
                (outcome, _) => Err(format!("got {outcome:?}; expected {expected}")),
            }
        }
    }
}

#[test]
fn jsonrpc_vectors() {
    let mut failures = Vec::new();
    let mut count = 0;
    for (file, doc) in common::vector_files("jsonrpc") {
        let kind = doc["kind"].as_str().unwrap_or_else(|| panic!("{file}: kind"));
        for case in doc["cases"].as_array().unwrap_or_else(|| panic!("{file}: cases")) {
            count += 1;
            let name = format!("{file}/{}", case["name"].as_str().unwrap());
            let result = match kind {
                "request" => check_request(case),
                "response" => check_response(case),
                other => panic!("{file}: unknown kind {other}"),
            };
            if let Err(why) = result {
                failures.push(format!("{name}: {why}"));
            }
        }
    }
    assert!(count > 0, "no jsonrpc vectors found");
    assert!(failures.is_empty(), "{} of {count} jsonrpc vectors failed:\n{}", failures.len(), failures.join("\n"));
    println!("{count} jsonrpc vectors passed");
}

#[test]
fn every_method_has_a_vector() {
    let mut seen = std::collections::BTreeSet::new();
    for (_, doc) in common::vector_files("jsonrpc") {
        for case in doc["cases"].as_array().unwrap() {
            if let Some(m) = case["expected"].get("method").and_then(Value::as_str) {
                seen.insert(m.to_owned());
            }
        }
    }
    let missing: Vec<_> = jsonrpc::Method::ALL.iter().filter(|m| !seen.contains(m.as_str())).collect();
    assert!(missing.is_empty(), "methods without a valid vector: {missing:?}");
}
