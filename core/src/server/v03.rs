//! The A2A 0.3 JSON-RPC adapter: 0.3 params in, a 1.0 [`A2ARequest`] for the one request
//! handler, the 1.0 result back out in its 0.3 form. Conversions are those of
//! [`crate::model::v03`]; streamed events are converted in [`super::body`].

use crate::error::{A2AError, ErrorKind, Result};
use crate::model::{self, ListTaskPushNotificationConfigsResponse, v03};
use crate::request::{A2ARequest, Method};
use serde_json::{Map, Value};

/// The 1.0 request for a 0.3 call. Invalid params are InvalidParams naming the field under
/// `params.` (as for 1.0 calls).
pub(crate) fn request_from_v03(method: v03::Method, params: Option<Value>) -> Result<A2ARequest> {
    let v10 = Method::from_name(method.v10_name())
        .ok_or_else(|| A2AError::internal(format!("no 1.0 method for {}", method.name())))?;
    let value = match method.params_type() {
        // agent/getAuthenticatedExtendedCard takes no params.
        None => Value::Object(Map::new()),
        Some(type_name) => {
            let params = params.ok_or_else(|| A2AError::invalid_field("params", "is required"))?;
            v03::to_v10(type_name, params).map_err(under_params)?
        }
    };
    let mut request = A2ARequest::from_params(v10, value, "params")?;
    // A webhook registered over 0.3 is sent what 0.3 receivers read (see the field; it does
    // not travel through the JSON of the conversion above).
    match &mut request {
        A2ARequest::CreateTaskPushNotificationConfig(config) => config.v03 = true,
        A2ARequest::SendMessage(r) | A2ARequest::SendStreamingMessage(r) => {
            if let Some(config) = r.configuration.as_mut().and_then(|c| c.task_push_notification_config.as_mut()) {
                config.v03 = true;
            }
        }
        _ => {}
    }
    Ok(request)
}

/// Puts the violations of a params conversion under `params.`.
fn under_params(mut err: A2AError) -> A2AError {
    if err.kind != ErrorKind::InvalidParams {
        return err;
    }
    for v in &mut err.violations {
        v.field = if v.field.is_empty() { "params".to_owned() } else { format!("params.{}", v.field) };
    }
    if let Some(v) = err.violations.first() {
        err.message = format!("{}: {}", v.field, v.description);
    }
    err
}

/// The 0.3 result for a 1.0 result of `method`. A result with no 0.3 form (e.g. a message with
/// ROLE_UNSPECIFIED) is an InternalError: the fault is the server's, not the client's.
pub(crate) fn result_to_v03(method: v03::Method, value: Value) -> Result<Value> {
    let converted = match method {
        // 0.3 lists are bare arrays without pagination.
        v03::Method::PushConfigList => model::parse_value::<ListTaskPushNotificationConfigsResponse>(value)
            .map(|r| model::to_value(&v03::push_configs_to_v03(r))),
        v03::Method::PushConfigDelete => Ok(Value::Null),
        v03::Method::GetAuthenticatedExtendedCard => model::parse_value::<model::AgentCard>(value)
            .and_then(|card| v03::answered_in_v03(&card))
            .map(|card| model::to_value(&card)),
        _ => match method.result_type() {
            Some(type_name) => v03::to_v03(type_name, value),
            None => Ok(value),
        },
    };
    converted.map_err(|e| A2AError::internal(format!("the result has no A2A 0.3 form: {}", e.message)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn params_convert_and_errors_name_params() {
        let req = request_from_v03(
            v03::Method::MessageSend,
            Some(json!({"message": {"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "hi"}]}})),
        )
        .unwrap();
        assert_eq!(req.method(), Method::SendMessage);
        let req = request_from_v03(v03::Method::TasksGet, Some(json!({"id": "t", "historyLength": 2}))).unwrap();
        assert_eq!(req.method(), Method::GetTask);
        let req = request_from_v03(v03::Method::GetAuthenticatedExtendedCard, None).unwrap();
        assert_eq!(req.method(), Method::GetExtendedAgentCard);

        let err = request_from_v03(v03::Method::TasksGet, None).unwrap_err();
        assert_eq!(err.violations[0].field, "params");
        let err = request_from_v03(v03::Method::TasksGet, Some(json!({}))).unwrap_err();
        assert_eq!((err.kind, err.violations[0].field.as_str()), (ErrorKind::InvalidParams, "params.id"));
    }

    #[test]
    fn push_configs_of_0_3_calls_are_marked_as_such() {
        let message =
            json!({"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "hi"}]});
        let config = json!({"url": "https://h/hook"});
        let sent = json!({"message": message, "configuration": {"pushNotificationConfig": config}});
        for method in [v03::Method::MessageSend, v03::Method::MessageStream] {
            let (A2ARequest::SendMessage(r) | A2ARequest::SendStreamingMessage(r)) =
                request_from_v03(method, Some(sent.clone())).unwrap()
            else {
                panic!("not a send")
            };
            assert!(r.configuration.unwrap().task_push_notification_config.unwrap().v03);
        }
        let set = json!({"taskId": "t", "pushNotificationConfig": config});
        let A2ARequest::CreateTaskPushNotificationConfig(c) =
            request_from_v03(v03::Method::PushConfigSet, Some(set)).unwrap()
        else {
            panic!("not a create")
        };
        assert!(c.v03);
    }

    #[test]
    fn results_convert() {
        let task = json!({"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}});
        let out = result_to_v03(v03::Method::MessageSend, json!({"task": task})).unwrap();
        assert_eq!((out["kind"].as_str(), out["status"]["state"].as_str()), (Some("task"), Some("completed")));
        let out = result_to_v03(v03::Method::TasksGet, task).unwrap();
        assert_eq!(out["kind"], "task");
        let out = result_to_v03(
            v03::Method::PushConfigList,
            json!({"configs": [{"id": "p", "taskId": "t", "url": "https://h/"}], "nextPageToken": ""}),
        )
        .unwrap();
        assert_eq!(out[0]["taskId"], "t");
        assert_eq!(out[0]["pushNotificationConfig"]["id"], "p");
        assert_eq!(result_to_v03(v03::Method::PushConfigDelete, json!({})).unwrap(), Value::Null);
        // A 1.0-only card: its JSON-RPC and HTTP+JSON endpoints answer 0.3 calls, so a 0.3
        // client asking for the extended card gets them (gRPC serves 1.0 only).
        let card = json!({
            "name": "a", "description": "d", "version": "1",
            "supportedInterfaces": [
                {"url": "http://h/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": "h:1", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
                {"url": "http://h/", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
            ],
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["t"]}]
        });
        let out = result_to_v03(v03::Method::GetAuthenticatedExtendedCard, card).unwrap();
        assert_eq!((out["url"].as_str(), out["preferredTransport"].as_str()), (Some("http://h/"), Some("JSONRPC")));
        assert_eq!(out["protocolVersion"], v03::PROTOCOL_VERSION);
        let transports: Vec<_> =
            out["additionalInterfaces"].as_array().unwrap().iter().map(|i| &i["transport"]).collect();
        assert_eq!(transports, ["JSONRPC", "HTTP+JSON"]);
        let err = result_to_v03(v03::Method::TasksGet, json!({"nope": 1})).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Internal);
    }
}
