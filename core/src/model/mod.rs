//! A2A 1.0 types exactly as the JSON bindings put them on the wire (ProtoJSON: camelCase
//! names, enum names as strings, oneofs as single-member wrappers, base64 bytes, RFC 3339 UTC
//! timestamps). Unknown fields are ignored (spec §1: SHOULD be ignored for forward
//! compatibility). REQUIRED fields are enforced when reading through [`parse`] / [`parse_value`],
//! which also run [`Validate`]; errors name the offending field by JSON path.
//!
//! [`v03`] holds the 0.3 wire form and the conversion both ways.

mod card;
pub mod duplicates;
pub mod dynamic;
mod requests;
mod task;
pub mod v03;
mod validate;
pub mod wire;

pub use card::*;
pub use requests::*;
pub use task::*;
pub use validate::{MAX_VALUE_DEPTH, Validate};
pub use wire::Timestamp;

use crate::error::{A2AError, Result};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Reads a `T` from JSON bytes and validates it. Syntax errors are JSONParse; shape and
/// REQUIRED-field errors are InvalidParams naming the field. One pass: no intermediate `Value`.
pub fn parse<T: DeserializeOwned + Validate>(bytes: &[u8]) -> Result<T> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        // Let serde_json describe the syntax error, or name the wrong JSON kind.
        _ => return parse_value(serde_json::from_slice(bytes).map_err(parse_error)?),
    }
    // Fast path: plain serde. Only a failed read is parsed again with path tracking, which
    // costs ~30% on every field but is needed just to name the offending one.
    let parsed: T = match serde_json::from_slice(bytes) {
        Ok(parsed) => parsed,
        Err(e) if e.is_syntax() || e.is_eof() => return Err(parse_error(e)),
        Err(plain) => {
            let mut de = serde_json::Deserializer::from_slice(bytes);
            // Both passes read the same bytes the same way; should they ever disagree, report
            // the first error without a path rather than panic on client input.
            return Err(match serde_path_to_error::deserialize::<_, T>(&mut de) {
                Err(e) => shape_error("", e),
                Ok(_) => A2AError::invalid_field("", plain.to_string()),
            });
        }
    };
    parsed.validate()?;
    Ok(parsed)
}

fn parse_error(e: serde_json::Error) -> A2AError {
    A2AError::invalid_json(&e)
}

/// Reads a `T` from an already parsed JSON value and validates it.
pub fn parse_value<T: DeserializeOwned + Validate>(value: Value) -> Result<T> {
    parse_value_at(value, "")
}

/// Like [`parse_value`], with `at` prefixed to every reported field path (e.g. `params`).
pub fn parse_value_at<T: DeserializeOwned + Validate>(value: Value, at: &str) -> Result<T> {
    // Every model is a proto message, i.e. a JSON object; serde would also take an array.
    if !value.is_object() {
        return Err(A2AError::invalid_field(at, format!("expected a JSON object, got {}", json_kind(&value))));
    }
    // ProtoJSON reads a `null` member as the field's default (absent), which serde does for
    // optional fields only (a2a-sdk's ParseDict takes `"contextId": null`).
    let mut value = value;
    drop_null_members(&mut value);
    let parsed: T = serde_path_to_error::deserialize(value).map_err(|e| shape_error(at, e))?;
    parsed.validate_at(at)?;
    Ok(parsed)
}

/// Members whose value is `null` taken out of every object, except where any JSON is the
/// content (a data part's `data`, and `Struct`s: `metadata`, an extension's `params`, a
/// signature's `header`), whose nulls are values.
fn drop_null_members(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, v| !v.is_null() || key == "data");
            for (key, v) in map.iter_mut() {
                if !matches!(key.as_str(), "data" | "metadata" | "params" | "header") {
                    drop_null_members(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null_members),
        _ => {}
    }
}

/// [`parse_value_at`] straight from JSON text, with no [`Value`] tree between: the server's
/// hot path. Text that does not read cleanly this way goes through [`parse_value_at`], so the
/// result and every error are exactly its; except a member given twice (which serde refuses
/// and a `Value` would keep the last of), refused as InvalidParams naming it.
pub fn parse_raw_at<T: DeserializeOwned + Validate>(raw: &serde_json::value::RawValue, at: &str) -> Result<T> {
    let text = raw.get();
    if text.starts_with('{') {
        let mut de = serde_json::Deserializer::from_str(text);
        if let Ok(parsed) = T::deserialize(&mut de) {
            parsed.validate_at(at)?;
            return Ok(parsed);
        }
    }
    if let Some(path) = duplicates::first_duplicate(text.as_bytes()) {
        let field = if at.is_empty() { path } else { format!("{at}.{path}") };
        return Err(A2AError::invalid_field(field, "is given more than once"));
    }
    // Valid JSON already (it is a RawValue).
    let value: Value = serde_json::from_str(text).map_err(|e| A2AError::invalid_field(at, e.to_string()))?;
    parse_value_at(value, at)
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn shape_error(at: &str, err: serde_path_to_error::Error<serde_json::Error>) -> A2AError {
    let inner = err.inner().to_string();
    // serde reports a missing field at the parent's path; name the field itself.
    let mut path = err.path().to_string();
    if path == "." {
        path.clear();
    }
    if let Some(name) = inner.strip_prefix("missing field `").and_then(|r| r.split('`').next()) {
        path = if path.is_empty() { name.to_owned() } else { format!("{path}.{name}") };
    }
    let field = match (at.is_empty(), path.is_empty()) {
        (true, _) => path,
        (false, true) => at.to_owned(),
        (false, false) => format!("{at}.{path}"),
    };
    let description = if inner.starts_with("missing field") { "is required".to_owned() } else { inner };
    A2AError::invalid_field(field, description)
}

/// Writes any model as a JSON value. Serialising our own types cannot fail.
pub fn to_value<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("models serialise to JSON")
}

/// Keeps only the `n` most recent history entries; `Some(0)` drops history entirely,
/// `None` keeps all (GetTask / SendMessage / ListTasks `historyLength`).
pub fn trim_history(task: &mut Task, history_length: Option<i32>) {
    if let Some(n) = history_length {
        let keep = usize::try_from(n.max(0)).unwrap_or(0);
        let len = task.history.len();
        if len > keep {
            task.history.drain(..len - keep);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn task_state_names_in_one_table() {
        for name in ["TASK_STATE_INPUT_REQUIRED", "input_required", "input-required", "INPUT_REQUIRED"] {
            assert_eq!(TaskState::from_short_name(name), Some(TaskState::InputRequired), "{name}");
        }
        for name in ["", "unspecified", "TASK_STATE_UNSPECIFIED_X", "inputrequired", "done"] {
            assert_eq!(TaskState::from_short_name(name), None, "{name}");
        }
        assert_eq!(TaskState::AuthRequired.short_name(), "auth_required");
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn missing_required_field_is_named() {
        let err =
            parse_value::<SendMessageRequest>(json!({"message": {"role": "ROLE_USER", "parts": [{"text": "hi"}]}}))
                .unwrap_err();
        assert_eq!(err.kind, crate::ErrorKind::InvalidParams);
        assert_eq!(err.violations[0].field, "message.messageId");
        let err = parse_value_at::<SendMessageRequest>(json!({}), "params").unwrap_err();
        assert_eq!(err.violations[0].field, "params.message");
    }

    #[test]
    fn empty_required_values_are_named() {
        let err = parse_value::<Message>(json!({"messageId": "m", "role": "ROLE_USER", "parts": []})).unwrap_err();
        assert_eq!(err.violations[0].field, "parts");
        let err = parse_value::<Message>(json!({"messageId": "", "role": "ROLE_USER", "parts": [{"text": "x"}]}))
            .unwrap_err();
        assert_eq!(err.violations[0].field, "messageId");
        let err = parse_value::<Message>(
            json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x", "url": "u"}]}),
        )
        .unwrap_err();
        assert_eq!(err.violations[0].field, "parts[0]");
    }

    #[test]
    fn unknown_fields_are_ignored_and_enums_read_by_number() {
        let m: Message =
            parse_value(json!({"messageId": "m", "role": 1, "parts": [{"text": "x", "future": 1}], "kind": "message"}))
                .unwrap();
        assert_eq!(m.role, Role::User);
        assert_eq!(to_value(&m), json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}));
    }

    #[test]
    fn messages_are_json_objects_never_arrays() {
        // serde's derive reads a struct from an array, member by member in order: each of these
        // used to pass for a valid request.
        let message = json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]});
        let cases = [
            (json!({"message": message, "configuration": []}), "configuration"),
            (json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [["x"]]}}), "message.parts[0]"),
            (json!({"message": ["m", "c", "t", "ROLE_USER", [{"text": "x"}]]}), "message"),
            (
                json!({"message": message, "configuration": {"taskPushNotificationConfig": ["u"]}}),
                "configuration.taskPushNotificationConfig",
            ),
        ];
        for (request, field) in cases {
            let text = request.to_string();
            for err in [
                parse_value::<SendMessageRequest>(request).unwrap_err(),
                parse::<SendMessageRequest>(text.as_bytes()).unwrap_err(),
            ] {
                assert_eq!(
                    (err.kind, err.violations[0].field.as_str()),
                    (crate::ErrorKind::InvalidParams, field),
                    "{text}: {err}"
                );
                assert!(err.violations[0].description.contains("expected a JSON object"), "{err}");
            }
        }
        let task = json!({"id": "t", "contextId": "c", "status": ["TASK_STATE_WORKING"]});
        assert_eq!(parse_value::<Task>(task).unwrap_err().violations[0].field, "status");
        // 0.3 messages too.
        let params = json!({"message": {"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "x"}]}, "configuration": []});
        assert!(serde_json::from_value::<v03::MessageSendParams>(params).is_err());
        // Objects read as before, on both paths.
        let ok = json!({"message": message, "configuration": {"returnImmediately": true}});
        assert!(
            parse::<SendMessageRequest>(ok.to_string().as_bytes()).unwrap().configuration.unwrap().return_immediately
        );
        assert_eq!(to_value(&parse_value::<SendMessageRequest>(ok.clone()).unwrap()), ok);
    }

    #[test]
    fn syntax_errors_are_parse_errors() {
        use crate::ErrorKind::*;
        assert_eq!(parse::<Task>(b"{\"id\":").unwrap_err().kind, JsonParse);
        assert_eq!(parse::<Task>(b"{\"id\":\"t\",\"status\":{\"state\":2}} x").unwrap_err().kind, JsonParse);
        assert_eq!(parse::<Task>(b" [1]").unwrap_err().kind, InvalidParams);
        assert_eq!(parse::<Task>(b"").unwrap_err().kind, JsonParse);
        let err = parse::<Task>(b"{\"id\":\"t\",\"status\":{\"state\":\"nope\"}}").unwrap_err();
        assert_eq!((err.kind, err.violations[0].field.as_str()), (InvalidParams, "status.state"));
        let ok: Task = parse(b" {\"id\":\"t\",\"status\":{\"state\":2}} ").unwrap();
        assert_eq!(ok.status.state, TaskState::Working);
    }

    #[test]
    fn history_trimming() {
        let msg = |i: usize| Message::text(Role::User, format!("m{i}"));
        let mut task = Task {
            id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus::now(TaskState::Working),
            artifacts: vec![],
            history: (0..5).map(msg).collect(),
            metadata: None,
        };
        let mut t2 = task.clone();
        trim_history(&mut t2, None);
        assert_eq!(t2.history.len(), 5);
        trim_history(&mut task, Some(2));
        assert_eq!(task.history.iter().map(Message::text_content).collect::<Vec<_>>(), ["m3", "m4"]);
        trim_history(&mut task, Some(0));
        assert!(task.history.is_empty());
        assert!(to_value(&task).get("history").is_none());
    }
}
