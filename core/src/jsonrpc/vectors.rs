//! The JSON-RPC codec checked against the shared vectors (`tests/vectors/jsonrpc`, described in
//! its README), so that core and every binding run those vectors through this one codec: a
//! binding hands over a case as its host holds it and gets back `Ok` or what differed.

use super::{Id, is_v03_method, parse_envelope, parse_response, parse_v10};
use crate::error::A2AError;
use serde_json::Value;

/// Checks one case of a vector file of `kind` `"request"` (what a server reads) or
/// `"response"` (what a client reads); `Err` says what differed from the case's `expected`.
pub fn check(kind: &str, case: &Value) -> Result<(), String> {
    match kind {
        "request" => check_request(case),
        "response" => check_response(case),
        other => Err(format!("unknown kind of jsonrpc vector {other:?}")),
    }
}

/// The bytes a case sends: `body_text` verbatim, else `body` serialised.
fn body_bytes(case: &Value) -> Vec<u8> {
    match case.get("body_text").and_then(Value::as_str) {
        Some(text) => text.as_bytes().to_vec(),
        None => serde_json::to_vec(&case["body"]).unwrap_or_default(),
    }
}

fn want_code(want: &Value) -> Option<i64> {
    want.get("code").and_then(Value::as_i64)
}

/// Ids compare as JSON values, except that a float and an integer of one value are one id
/// (`1e3` and `1000`: a host's JSON reader may keep either form). Two integers compare
/// exactly, so an id rounded beyond 2^53 still shows.
fn same_id(got: Option<&Value>, want: Option<&Value>) -> bool {
    match (got, want) {
        (Some(Value::Number(a)), Some(Value::Number(b))) if a.is_f64() || b.is_f64() => a.as_f64() == b.as_f64(),
        (a, b) => a == b,
    }
}

/// Ids compare as JSON values: `1e3` sent is `1000.0` expected (ids keep their text).
fn check_request(case: &Value) -> Result<(), String> {
    let expected = &case["expected"];
    let bytes = body_bytes(case);
    let parsed = parse_envelope(&bytes).and_then(|env| {
        if expected.get("is_v03_method").is_some() && !is_v03_method(&env.method) {
            return Err(env.error(A2AError::internal("expected a 0.3 method name")));
        }
        parse_v10(env)
    });
    match (parsed, expected.get("error")) {
        (Ok(call), None) => {
            let params = call.request.params();
            if Some(call.method_name.as_str()) != expected["method"].as_str() || params != expected["params"] {
                return Err(format!(
                    "got {} {params}\n  expected {} {}",
                    call.method_name, expected["method"], expected["params"]
                ));
            }
            let notification = expected.get("notification").and_then(Value::as_bool).unwrap_or(false);
            let want_id = if notification { None } else { Some(expected["id"].clone()) };
            if !same_id(call.id.as_ref().map(Id::to_value).as_ref(), want_id.as_ref()) {
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
            let bytes = e.to_bytes();
            let written: Value = serde_json::from_slice(&bytes).unwrap_or_default();
            let ok = Some(i64::from(e.error.code())) == want_code(want)
                && same_id(Some(&e.id.to_value()), want.get("id"))
                && same_id(written.get("id"), want.get("id"))
                && echoes_id_text(case, &bytes)
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
    match (parse_response(&body_bytes(case)), expected.get("invalid")) {
        (Err(e), Some(want)) if Some(i64::from(e.code())) == want_code(want) => Ok(()),
        (Err(e), _) => Err(format!("error {e}; expected {expected}")),
        (Ok(r), Some(_)) => Err(format!("accepted as {r:?}; expected {expected}")),
        (Ok(r), None) => {
            if !same_id(Some(&r.id.to_value()), expected.get("id")) {
                return Err(format!("id {}, expected {}", r.id, expected["id"]));
            }
            match (&r.outcome, expected.get("error")) {
                (Ok(result), None) if *result == expected["result"] => Ok(()),
                (Err(e), Some(want))
                    if Some(i64::from(e.code())) == want_code(want)
                        && want.get("reason").is_none_or(|r| r.as_str() == Some(e.kind.spec().reason)) =>
                {
                    Ok(())
                }
                (outcome, _) => Err(format!("got {outcome:?}; expected {expected}")),
            }
        }
    }
}
