//! The HTTP+JSON binding, client side (A2A 1.0): [`crate::rest::request_for`] builds the HTTP
//! request of each operation, bodies go as `application/a2a+json`, results come back as the
//! body and errors as `google.rpc.Status` bodies read by [`A2AError::from_http`]. Streams are
//! SSE events whose data is a bare StreamResponse, or a `google.rpc.Status` error object.

use super::{A2A_JSON, EVENT_STREAM, Transport, agent_fault, invalid_response, is_event_stream};
use crate::client::stream::{Decoded, Framing, Source};
use crate::error::{A2AError, Result};
use crate::request::A2ARequest;
use crate::sse::SseEvent;
use http::HeaderValue;
use serde_json::{Map, Value};

/// What a JSON answer is accepted as.
const ACCEPT_JSON: &str = "application/a2a+json, application/json";

fn verb(name: &str) -> reqwest::Method {
    match name {
        "GET" => reqwest::Method::GET,
        "DELETE" => reqwest::Method::DELETE,
        _ => reqwest::Method::POST,
    }
}

/// The interface URL joined with an operation path (which starts with `/`).
fn url_for(t: &Transport, path: &str) -> String {
    format!("{}{path}", t.endpoint.url.trim_end_matches('/'))
}

/// A 2xx JSON body (`{}` when empty).
fn json_body(form: &super::BodyForm, body: &[u8]) -> Result<Value> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_slice(body).map_err(|e| {
        let why = form.unreadable(body).unwrap_or_else(|| e.to_string());
        invalid_response(format!("the response body is not JSON: {why}"))
    })
}

pub(super) async fn call(t: &Transport, req: &A2ARequest) -> Result<Value> {
    let (name, path, body) = crate::rest::request_for(req);
    let out = t.request(verb(name), url_for(t, &path), req.method(), ACCEPT_JSON, body.map(|b| (A2A_JSON, b))).await?;
    let mut resp = t.send(&out).await?;
    let (status, form) = (resp.status().as_u16(), super::BodyForm::of(resp.headers()));
    let body = t.read_body(&mut resp).await?;
    if !(200..300).contains(&status) {
        return Err(A2AError::from_http(status, &body));
    }
    json_body(&form, &body)
}

pub(super) async fn open_stream(t: &Transport, req: &A2ARequest, resume: Option<HeaderValue>) -> Result<Source> {
    let (name, path, body) = crate::rest::request_for(req);
    let mut out =
        t.request(verb(name), url_for(t, &path), req.method(), EVENT_STREAM, body.map(|b| (A2A_JSON, b))).await?;
    if let Some(value) = resume {
        out.headers.insert("last-event-id", value);
    }
    let mut resp = t.send(&out).await?;
    if resp.status().is_success() && is_event_stream(&resp) {
        return Ok(Source::new(resp, Framing::Rest, t.config()));
    }
    let (status, form) = (resp.status().as_u16(), super::BodyForm::of(resp.headers()));
    let body = t.read_body(&mut resp).await?;
    if !(200..300).contains(&status) {
        return Err(A2AError::from_http(status, &body));
    }
    // One JSON result instead of a stream: one event.
    Ok(Source::single(decode_value(json_body(&form, &body)?), Framing::Rest))
}

/// One SSE event of an HTTP+JSON stream.
pub(crate) fn decode_event(event: &SseEvent) -> Decoded {
    match serde_json::from_str::<Value>(&event.data) {
        Ok(value) => decode_value(value),
        Err(e) => Decoded::Error(invalid_response(format!("a stream event is not JSON: {e}"))),
    }
}

fn decode_value(value: Value) -> Decoded {
    if let Some(error) = value.get("error").filter(|e| e.is_object()) {
        let status = error.get("code").and_then(Value::as_u64).and_then(|c| u16::try_from(c).ok()).unwrap_or(500);
        return Decoded::Error(A2AError::from_http(status, value.to_string().as_bytes()));
    }
    match super::parse_event(value, "") {
        Ok(event) => Decoded::Event(event, false),
        Err(e) => Decoded::Error(agent_fault(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::model::StreamResponse;
    use serde_json::json;

    #[test]
    fn stream_events_decode() {
        let ev = |v: Value| SseEvent::data(v.to_string());
        let task = json!({"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_SUBMITTED"}}});
        assert!(matches!(decode_event(&ev(task)), Decoded::Event(StreamResponse::Task(_), false)));
        let err = A2AError::task_not_found("t").to_http_body();
        match decode_event(&ev(err)) {
            Decoded::Error(e) => assert_eq!(e.kind, ErrorKind::TaskNotFound),
            other => panic!("{other:?}"),
        }
        match decode_event(&SseEvent::data("{nope")) {
            Decoded::Error(e) => assert_eq!(e.kind, ErrorKind::InvalidAgentResponse),
            other => panic!("{other:?}"),
        }
        match decode_event(&ev(json!({"task": {"id": "t"}}))) {
            Decoded::Error(e) => {
                assert_eq!((e.kind, e.violations[0].field.as_str()), (ErrorKind::InvalidAgentResponse, "task.status"))
            }
            other => panic!("{other:?}"),
        }
    }
}
