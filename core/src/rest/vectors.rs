//! The HTTP+JSON router checked against the shared vectors (`tests/vectors/rest`, described in
//! its README), so that core and every binding run those vectors through this one router: a
//! binding hands over a case as its host holds it and gets back `Ok` or what differed.

use super::route;
use serde_json::Value;

/// Checks one case (method, path, query and body in, an operation with its params or an
/// error out); `Err` says what differed from the case's `expected`.
pub fn check(case: &Value) -> Result<(), String> {
    let body = match (case.get("body_text").and_then(Value::as_str), case.get("body")) {
        (Some(text), _) => text.as_bytes().to_vec(),
        (None, Some(json)) => serde_json::to_vec(json).unwrap_or_default(),
        (None, None) => Vec::new(),
    };
    let (Some(method), Some(path)) = (case["method"].as_str(), case["path"].as_str()) else {
        return Err("a rest case has a method and a path".into());
    };
    let result = route(method, path, case.get("query").and_then(Value::as_str), &body);
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
            let ok = Some(i64::from(e.error().code())) == want["code"].as_i64()
                && want.get("http_status").is_none_or(|s| s.as_u64() == Some(u64::from(e.http_status())))
                && want.get("field").is_none_or(|f| field == f.as_str())
                && want.get("allow").is_none_or(|a| allow.as_deref() == a.as_str())
                && e.to_http_body()["error"]["code"] == e.http_status();
            if ok { Ok(()) } else { Err(format!("got {e} field {field:?} allow {allow:?}; expected {want}")) }
        }
    }
}
