//! The JSON-RPC binding, client side, for A2A 1.0 and 0.3.
//!
//! 1.0: the envelope of [`crate::jsonrpc`] with the 1.0 method names and params. 0.3: the 0.3
//! method names of [`v03::Method`] (`message/send`, `tasks/resubscribe`, ...), params converted
//! down with [`v03::to_v03`] and results (and stream events) converted up with
//! [`v03::to_v10`], so callers only ever see 1.0 types. Operations 0.3 lacks (ListTasks) are
//! UnsupportedOperation before anything is sent.
//!
//! Every response must carry the request's id; an error response with id `null` (the server
//! could not read the id) is accepted as the answer, anything else with another id is
//! InvalidAgentResponse. A non-2xx answer whose body is a JSON-RPC error (a 401 from our server,
//! for one) is that error; otherwise the HTTP status and body are mapped by
//! [`A2AError::from_http`].

use super::{EVENT_STREAM, JSON, Transport, agent_fault, invalid_response, is_event_stream};
use crate::client::ProtocolVersion;
use crate::client::stream::{Decoded, Framing, Source};
use crate::error::{A2AError, Result};
use crate::jsonrpc::{self, Id};
use crate::model::{self, StreamResponse, v03};
use crate::request::{A2ARequest, Method};
use crate::sse::SseEvent;
use http::HeaderValue;
use serde_json::{Map, Value};

/// The 0.3 method for a 1.0 operation, or UnsupportedOperation.
pub(crate) fn v03_method(method: Method) -> Result<v03::Method> {
    v03::Method::from_v10_name(method.as_str()).ok_or_else(|| {
        A2AError::unsupported_operation(format!(
            "{method} is not part of A2A 0.3, which this client speaks to the agent (the agent declares \
             only 0.3 interfaces, or 0.3 was asked for)"
        ))
        .with_meta("method", method.as_str())
    })
}

/// The request body in the endpoint's protocol version.
fn encode(t: &Transport, req: &A2ARequest, id: &Id) -> Result<Vec<u8>> {
    match t.endpoint.version {
        ProtocolVersion::V10 => Ok(jsonrpc::request_for(id, req)),
        ProtocolVersion::V03 => {
            let method = v03_method(req.method())?;
            let params = match method.params_type() {
                // agent/getAuthenticatedExtendedCard takes no params.
                None => Value::Object(Map::new()),
                Some(type_name) => v03::to_v03(type_name, req.params())?,
            };
            Ok(jsonrpc::request(id, method.name(), params))
        }
    }
}

/// Puts the violations of a result conversion under `at`.
fn under(at: &str, mut err: A2AError) -> A2AError {
    for v in &mut err.violations {
        v.field = if v.field.is_empty() { at.to_owned() } else { format!("{at}.{}", v.field) };
    }
    if let Some(v) = err.violations.first() {
        err.message = format!("{}: {}", v.field, v.description);
    }
    err
}

/// A 0.3 result in its 1.0 form.
fn v03_result(method: v03::Method, value: Value) -> Result<Value> {
    let converted = match method {
        v03::Method::PushConfigDelete => return Ok(Value::Null),
        // A bare array in 0.3, without pagination.
        v03::Method::PushConfigList => match value {
            Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| {
                    model::parse_value_at::<v03::TaskPushNotificationConfig>(item, &format!("result[{i}]"))
                })
                .collect::<Result<Vec<_>>>()
                .map(|configs| model::to_value(&v03::push_configs_to_v10(configs))),
            _ => Err(A2AError::invalid_field("result", "expected an array of push notification configs")),
        },
        _ => match method.result_type() {
            Some(type_name) => v03::to_v10(type_name, value).map_err(|e| under("result", e)),
            None => Ok(value),
        },
    };
    converted.map_err(agent_fault)
}

/// The id check described in the module docs.
fn check_id(response: &jsonrpc::Response, sent: &Id) -> Result<()> {
    if response.id == *sent || (response.id == Id::Null && response.outcome.is_err()) {
        return Ok(());
    }
    Err(invalid_response(format!("the response id {} does not match the request id {sent}", response.id))
        .with_meta("responseId", response.id.to_string()))
}

/// Reads a whole JSON-RPC response: its result, or its error.
/// `void_result`: the call has no result (0.3 push-config delete), and the official 0.3 SDK
/// leaves `"result": null` out entirely (it drops null members), so a bare success is read as null.
pub(super) async fn read_response(
    t: &Transport,
    resp: &mut reqwest::Response,
    id: &Id,
    void_result: bool,
) -> Result<Value> {
    let status = resp.status().as_u16();
    let form = super::BodyForm::of(resp.headers());
    let body = t.read_body(resp).await?;
    let parsed = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(mut obj)) if void_result && !obj.contains_key("result") && !obj.contains_key("error") => {
            obj.insert("result".into(), Value::Null);
            jsonrpc::parse_response_value(Value::Object(obj))
        }
        _ => jsonrpc::parse_response(&body),
    };
    match parsed {
        Ok(r) => {
            check_id(&r, id)?;
            r.outcome
        }
        Err(_) if !(200..300).contains(&status) => Err(A2AError::from_http(status, &body)),
        Err(e) => {
            let why = form.unreadable(&body).unwrap_or(e.message);
            Err(invalid_response(format!("the answer is not a JSON-RPC response: {why}")))
        }
    }
}

pub(super) async fn call(t: &Transport, req: &A2ARequest) -> Result<Value> {
    let id = t.next_id();
    let body = encode(t, req, &id)?;
    let out = t.request(reqwest::Method::POST, t.endpoint.url.clone(), req.method(), JSON, Some((JSON, body))).await?;
    let mut resp = t.send(&out).await?;
    let void_result = t.endpoint.version == ProtocolVersion::V03
        && req.method() == crate::request::Method::DeleteTaskPushNotificationConfig;
    let value = read_response(t, &mut resp, &id, void_result).await?;
    match t.endpoint.version {
        ProtocolVersion::V10 => Ok(value),
        ProtocolVersion::V03 => v03_result(v03_method(req.method())?, value),
    }
}

pub(super) async fn open_stream(t: &Transport, req: &A2ARequest, resume: Option<HeaderValue>) -> Result<Source> {
    let id = t.next_id();
    let body = encode(t, req, &id)?;
    let mut out = t
        .request(reqwest::Method::POST, t.endpoint.url.clone(), req.method(), EVENT_STREAM, Some((JSON, body)))
        .await?;
    if let Some(value) = resume {
        out.headers.insert("last-event-id", value);
    }
    let mut resp = t.send(&out).await?;
    let framing = Framing::JsonRpc { id: id.clone(), v03: t.endpoint.version == ProtocolVersion::V03 };
    if resp.status().is_success() && is_event_stream(&resp) {
        return Ok(Source::new(resp, framing, t.config()));
    }
    // A plain JSON answer to a streaming call: an error (returned as such), or a peer that
    // answered with one result instead of a stream (one event).
    let value = read_response(t, &mut resp, &id, false).await?;
    Ok(Source::single(decode_result(value, framing.is_v03()), framing))
}

/// One SSE event of a JSON-RPC stream.
pub(crate) fn decode_event(id: &Id, v03: bool, event: &SseEvent) -> Decoded {
    let response = match jsonrpc::parse_response(event.data.as_bytes()) {
        Ok(r) => r,
        Err(e) => {
            // Some servers put a bare JSON-RPC error object in an `event: error`.
            if event.event.as_deref() == Some("error")
                && let Ok(value) = serde_json::from_str::<Value>(&event.data)
                && value.get("code").is_some_and(Value::is_i64)
            {
                return Decoded::Error(A2AError::from_jsonrpc(&value));
            }
            return Decoded::Error(invalid_response(format!(
                "a stream event is not a JSON-RPC response: {}",
                e.message
            )));
        }
    };
    if let Err(e) = check_id(&response, id) {
        return Decoded::Error(e);
    }
    match response.outcome {
        Ok(value) => decode_result(value, v03),
        Err(e) => Decoded::Error(e),
    }
}

/// A stream result: a 1.0 StreamResponse, or a 0.3 `kind`-tagged object (whose `final` flag
/// is kept, as 1.0 has no place for it).
fn decode_result(value: Value, v03: bool) -> Decoded {
    if v03 {
        match model::parse_value_at::<v03::StreamResult>(value, "result") {
            Ok(result) => {
                let last = matches!(&result, v03::StreamResult::StatusUpdate(e) if e.r#final);
                Decoded::Event(StreamResponse::from(result), last)
            }
            Err(e) => Decoded::Error(agent_fault(e)),
        }
    } else {
        match super::parse_event(value, "result") {
            Ok(event) => Decoded::Event(event, false),
            Err(e) => Decoded::Error(agent_fault(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use serde_json::json;

    #[test]
    fn ids_must_match() {
        let sent = Id::from(7i64);
        let ok = jsonrpc::parse_response(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#).unwrap();
        assert!(check_id(&ok, &sent).is_ok());
        let null_err =
            jsonrpc::parse_response(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#).unwrap();
        assert!(check_id(&null_err, &sent).is_ok());
        let other = jsonrpc::parse_response(br#"{"jsonrpc":"2.0","id":8,"result":{}}"#).unwrap();
        assert_eq!(check_id(&other, &sent).unwrap_err().kind, ErrorKind::InvalidAgentResponse);
        let null_ok = jsonrpc::parse_response(br#"{"jsonrpc":"2.0","id":null,"result":{}}"#).unwrap();
        assert!(check_id(&null_ok, &sent).is_err());
    }

    #[test]
    fn stream_events_decode() {
        let id = Id::from(1i64);
        let ev = |data: Value| SseEvent::data(data.to_string());
        let status = json!({"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}});
        match decode_event(&id, false, &ev(json!({"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": status}}))) {
            Decoded::Event(StreamResponse::StatusUpdate(e), false) => assert_eq!(e.task_id, "t"),
            other => panic!("{other:?}"),
        }
        let v03 = json!({"kind": "status-update", "taskId": "t", "contextId": "c", "status": {"state": "input-required"}, "final": true});
        match decode_event(&id, true, &ev(json!({"jsonrpc": "2.0", "id": 1, "result": v03}))) {
            Decoded::Event(StreamResponse::StatusUpdate(e), true) => {
                assert_eq!(e.status.state, model::TaskState::InputRequired)
            }
            other => panic!("{other:?}"),
        }
        match decode_event(
            &id,
            false,
            &ev(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "gone"}})),
        ) {
            Decoded::Error(e) => assert_eq!(e.kind, ErrorKind::TaskNotFound),
            other => panic!("{other:?}"),
        }
        match decode_event(
            &id,
            false,
            &ev(json!({"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "t"}}})),
        ) {
            Decoded::Error(e) => {
                assert_eq!(e.kind, ErrorKind::InvalidAgentResponse);
                assert!(e.violations[0].field.starts_with("result.statusUpdate"), "{e}");
            }
            other => panic!("{other:?}"),
        }
        let bare = SseEvent {
            event: Some("error".into()),
            data: r#"{"code":-32603,"message":"boom"}"#.into(),
            id: None,
            retry: None,
        };
        match decode_event(&id, false, &bare) {
            Decoded::Error(e) => assert_eq!((e.kind, e.message.as_str()), (ErrorKind::Internal, "boom")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn v03_results_convert_up() {
        let task = json!({"kind": "task", "id": "t", "contextId": "c", "status": {"state": "completed"}});
        let v = v03_result(v03::Method::TasksGet, task).unwrap();
        assert_eq!(v["status"]["state"], "TASK_STATE_COMPLETED");
        let list = json!([{"taskId": "t", "pushNotificationConfig": {"id": "p", "url": "https://h/"}}]);
        let v = v03_result(v03::Method::PushConfigList, list).unwrap();
        assert_eq!(v["configs"][0]["id"], "p");
        let err = v03_result(v03::Method::PushConfigList, json!([{"taskId": "t"}])).unwrap_err();
        assert_eq!(
            (err.kind, err.violations[0].field.as_str()),
            (ErrorKind::InvalidAgentResponse, "result[0].pushNotificationConfig")
        );
        let err = v03_result(v03::Method::TasksGet, json!({"kind": "task", "id": "t"})).unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidAgentResponse);
        assert!(err.violations[0].field.starts_with("result"), "{err}");
        assert_eq!(v03_method(Method::ListTasks).unwrap_err().kind, ErrorKind::UnsupportedOperation);
    }
}
