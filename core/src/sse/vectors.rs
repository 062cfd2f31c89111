//! The codec in the form of the shared vectors (`tests/vectors/sse`, described in its README),
//! so that core and every binding run those vectors through this one codec: a binding hands
//! over its host's bytes and strings and compares the JSON that comes back.

use super::{SseDecoder, SseError, SseEvent, encode as encode_event, encode_comment};
use crate::error::{A2AError, ErrorKind};
use serde_json::{Map, Value, json};

/// Decodes `chunks` in order and then ends the stream: `{"outcomes": [...], "last_event_id":
/// "..."}`, each outcome an event (only the fields it had) or `{"error": "EventTooLarge"}` /
/// `{"error": "UnterminatedEvent"}`. No `max_event_bytes` means no limit.
pub fn decode<'a>(max_event_bytes: Option<u64>, chunks: impl IntoIterator<Item = &'a [u8]>) -> Value {
    let limit = max_event_bytes.map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let mut decoder = SseDecoder::new(limit);
    let mut outcomes = Vec::new();
    for chunk in chunks {
        outcomes.extend(decoder.push(chunk).iter().map(outcome));
    }
    let last_event_id = decoder.last_event_id().to_owned();
    if let Err(e) = decoder.finish() {
        outcomes.push(outcome(&Err(e)));
    }
    json!({"outcomes": outcomes, "last_event_id": last_event_id})
}

/// Encodes an `encode` case: its `event` (an object as in `decode`'s outcomes, `data`
/// required) or its `comment`. A case that is neither is InvalidParams.
pub fn encode(case: &Value) -> Result<String, A2AError> {
    match (case.get("event"), case.get("comment")) {
        (Some(event), None) => Ok(encode_event(&event_from(event)?)),
        (None, Some(Value::String(text))) => Ok(encode_comment(text)),
        _ => Err(invalid("an encode case has exactly one of `event` and `comment` (a string)")),
    }
}

fn outcome(outcome: &Result<SseEvent, SseError>) -> Value {
    match outcome {
        Ok(event) => {
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
        Err(SseError::EventTooLarge { .. }) => json!({"error": "EventTooLarge"}),
        Err(SseError::UnterminatedEvent) => json!({"error": "UnterminatedEvent"}),
    }
}

fn event_from(value: &Value) -> Result<SseEvent, A2AError> {
    let obj = value.as_object().ok_or_else(|| invalid("`event` is not an object"))?;
    if let Some(key) = obj.keys().find(|k| !["event", "data", "id", "retry"].contains(&k.as_str())) {
        return Err(invalid(format!("unknown event key {key:?}")));
    }
    let text = |key: &str| -> Result<Option<String>, A2AError> {
        obj.get(key)
            .map(|v| v.as_str().map(str::to_owned).ok_or_else(|| invalid(format!("`{key}` is not a string"))))
            .transpose()
    };
    let retry = obj
        .get("retry")
        .map(|v| v.as_u64().ok_or_else(|| invalid("`retry` is not an unsigned integer")))
        .transpose()?;
    Ok(SseEvent {
        event: text("event")?,
        data: text("data")?.ok_or_else(|| invalid("an event needs `data`"))?,
        id: text("id")?,
        retry,
    })
}

fn invalid(message: impl Into<String>) -> A2AError {
    A2AError::new(ErrorKind::InvalidParams, message)
}
