//! Runs tests/vectors/rest: every HTTP+JSON route with and without a tenant, path decoding,
//! query and body handling, and every error (404, 405, 400).

use crate::common;

use a2a_native::request::Method;
use a2a_native::rest;
use serde_json::Value;

fn check(case: &Value) -> Result<(), String> {
    let body = match (case.get("body_text"), case.get("body")) {
        (Some(text), _) => text.as_str().expect("body_text is a string").as_bytes().to_vec(),
        (None, Some(json)) => serde_json::to_vec(json).unwrap(),
        (None, None) => Vec::new(),
    };
    let result = rest::route(
        case["method"].as_str().unwrap(),
        case["path"].as_str().unwrap(),
        case.get("query").and_then(Value::as_str),
        &body,
    );
    let expected = &case["expected"];
    match (result, expected.get("error")) {
        (Ok(req), None) => {
            let params = req.params();
            if req.method().as_str() != expected["operation"] || params != expected["params"] {
                return Err(format!(
                    "got {} {params}\n  expected {} {}",
                    req.method(),
                    expected["operation"],
                    expected["params"]
                ));
            }
            Ok(())
        }
        (Ok(req), Some(want)) => Err(format!("accepted as {} {}; expected {want}", req.method(), req.params())),
        (Err(e), None) => Err(format!("unexpected error {e}")),
        (Err(e), Some(want)) => {
            let field = e.error().violations.first().map(|v| v.field.as_str());
            let allow = e.allow();
            let ok = i64::from(e.error().code()) == want["code"].as_i64().unwrap()
                && want.get("http_status").is_none_or(|s| s.as_u64() == Some(u64::from(e.http_status())))
                && want.get("field").is_none_or(|f| field == f.as_str())
                && want.get("allow").is_none_or(|a| allow.as_deref() == a.as_str())
                && e.to_http_body()["error"]["code"] == e.http_status();
            if ok { Ok(()) } else { Err(format!("got {e} field {field:?} allow {allow:?}; expected {want}")) }
        }
    }
}

#[test]
fn rest_vectors() {
    let mut failures = Vec::new();
    let mut count = 0;
    for (file, doc) in common::vector_files("rest") {
        for case in doc["cases"].as_array().unwrap_or_else(|| panic!("{file}: cases")) {
            count += 1;
            if let Err(why) = check(case) {
                failures.push(format!("{file}/{}: {why}", case["name"].as_str().unwrap()));
            }
        }
    }
    assert!(count > 0, "no rest vectors found");
    assert!(failures.is_empty(), "{} of {count} rest vectors failed:\n{}", failures.len(), failures.join("\n"));
    println!("{count} rest vectors passed");
}

#[test]
fn every_operation_has_a_route_vector_with_and_without_tenant() {
    let mut seen = std::collections::BTreeSet::new();
    for (_, doc) in common::vector_files("rest") {
        for case in doc["cases"].as_array().unwrap() {
            if let Some(op) = case["expected"].get("operation").and_then(Value::as_str) {
                seen.insert((op.to_owned(), case["expected"]["params"].get("tenant").is_some()));
            }
        }
    }
    for m in Method::ALL {
        for tenant in [false, true] {
            assert!(seen.contains(&(m.as_str().to_owned(), tenant)), "{m} without a vector (tenant: {tenant})");
        }
    }
}
