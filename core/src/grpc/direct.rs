//! The messages every call answers with (tasks, messages, stream events), converted from the
//! model field for field instead of through ProtoJSON text: that route cost a SendMessage over
//! gRPC about 27k instructions, most of what it costs beyond the JSON bindings. The result is
//! the message the ProtoJSON route gives (checked by `same_as_the_protojson_route` below and by
//! the vectors), so [`super::convert`] stays the one mapping for everything else.
//!
//! The other way, a SendMessage request becomes the model's the same way when it is plain
//! ([`send_message_request`]); anything the ProtoJSON route must judge (a part with no content,
//! an enum number A2A does not define, an empty `Value`, a push config) takes that route, so
//! every refusal is exactly its.
//!
//! Two differences are deliberate, both in `google.protobuf.Value`s (metadata, data parts): a
//! JSON `null` is written as `null_value`, its canonical form (pbjson left the value empty,
//! which strict readers such as Go's protojson refuse), and an integer beyond ±2^53 goes as
//! the nearest double (pbjson refused it, and the whole answer failed).

use super::pb;
use crate::model::{
    Artifact, Message, Part, PartContent, Role, SendMessageConfiguration, SendMessageRequest, SendMessageResponse,
    StreamResponse, Struct, Task, TaskArtifactUpdateEvent, TaskStatus, TaskStatusUpdateEvent,
};
use bytes::Bytes;
use pbjson_types::value::Kind;
use serde_json::Value;

/// A message's protobuf bytes.
pub fn encode(message: &impl prost::Message) -> Bytes {
    Bytes::from(message.encode_to_vec())
}

fn value(v: &Value) -> pbjson_types::Value {
    let kind = match v {
        Value::Null => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(*b),
        // Every JSON number is representable as f64 (the nearest one beyond 2^53).
        Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or_default()),
        Value::String(s) => Kind::StringValue(s.clone()),
        Value::Array(items) => Kind::ListValue(pbjson_types::ListValue { values: items.iter().map(value).collect() }),
        Value::Object(map) => Kind::StructValue(structure(map)),
    };
    pbjson_types::Value { kind: Some(kind) }
}

fn structure(map: &Struct) -> pbjson_types::Struct {
    pbjson_types::Struct { fields: map.iter().map(|(k, v)| (k.clone(), value(v))).collect() }
}

fn metadata(m: &Option<Struct>) -> Option<pbjson_types::Struct> {
    m.as_ref().map(structure)
}

impl From<&Part> for pb::Part {
    fn from(p: &Part) -> Self {
        let content = match &p.content {
            PartContent::Text(t) => pb::part::Content::Text(t.clone()),
            PartContent::Raw(r) => pb::part::Content::Raw(r.clone()),
            PartContent::Url(u) => pb::part::Content::Url(u.clone()),
            PartContent::Data(d) => pb::part::Content::Data(value(d)),
        };
        Self {
            metadata: metadata(&p.metadata),
            filename: p.filename.clone(),
            media_type: p.media_type.clone(),
            content: Some(content),
        }
    }
}

impl From<&Message> for pb::Message {
    fn from(m: &Message) -> Self {
        Self {
            message_id: m.message_id.clone(),
            context_id: m.context_id.clone(),
            task_id: m.task_id.clone(),
            role: m.role.number(),
            parts: m.parts.iter().map(Into::into).collect(),
            metadata: metadata(&m.metadata),
            extensions: m.extensions.clone(),
            reference_task_ids: m.reference_task_ids.clone(),
        }
    }
}

impl From<&Artifact> for pb::Artifact {
    fn from(a: &Artifact) -> Self {
        Self {
            artifact_id: a.artifact_id.clone(),
            name: a.name.clone(),
            description: a.description.clone(),
            parts: a.parts.iter().map(Into::into).collect(),
            metadata: metadata(&a.metadata),
            extensions: a.extensions.clone(),
        }
    }
}

impl From<&TaskStatus> for pb::TaskStatus {
    fn from(s: &TaskStatus) -> Self {
        Self {
            state: s.state.number(),
            message: s.message.as_ref().map(Into::into),
            timestamp: s.timestamp.map(Into::into),
        }
    }
}

impl From<&Task> for pb::Task {
    fn from(t: &Task) -> Self {
        Self {
            id: t.id.clone(),
            context_id: t.context_id.clone(),
            status: Some((&t.status).into()),
            artifacts: t.artifacts.iter().map(Into::into).collect(),
            history: t.history.iter().map(Into::into).collect(),
            metadata: metadata(&t.metadata),
        }
    }
}

impl From<&TaskStatusUpdateEvent> for pb::TaskStatusUpdateEvent {
    fn from(e: &TaskStatusUpdateEvent) -> Self {
        Self {
            task_id: e.task_id.clone(),
            context_id: e.context_id.clone(),
            status: Some((&e.status).into()),
            metadata: metadata(&e.metadata),
        }
    }
}

impl From<&TaskArtifactUpdateEvent> for pb::TaskArtifactUpdateEvent {
    fn from(e: &TaskArtifactUpdateEvent) -> Self {
        Self {
            task_id: e.task_id.clone(),
            context_id: e.context_id.clone(),
            artifact: Some((&e.artifact).into()),
            append: e.append,
            last_chunk: e.last_chunk,
            metadata: metadata(&e.metadata),
        }
    }
}

impl From<&SendMessageResponse> for pb::SendMessageResponse {
    fn from(r: &SendMessageResponse) -> Self {
        use pb::send_message_response::Payload;
        let payload = match r {
            SendMessageResponse::Task(t) => Payload::Task(t.into()),
            SendMessageResponse::Message(m) => Payload::Message(m.into()),
        };
        Self { payload: Some(payload) }
    }
}

impl From<&StreamResponse> for pb::StreamResponse {
    fn from(e: &StreamResponse) -> Self {
        use pb::stream_response::Payload;
        let payload = match e {
            StreamResponse::Task(t) => Payload::Task(t.into()),
            StreamResponse::Message(m) => Payload::Message(m.into()),
            StreamResponse::StatusUpdate(s) => Payload::StatusUpdate(s.into()),
            StreamResponse::ArtifactUpdate(a) => Payload::ArtifactUpdate(a.into()),
        };
        Self { payload: Some(payload) }
    }
}

/// A plain SendMessage request as the model's (not validated yet); `None` when the ProtoJSON
/// route must read it (see the module docs).
pub fn send_message_request(r: pb::SendMessageRequest) -> Option<SendMessageRequest> {
    let configuration = match r.configuration {
        None => None,
        Some(c) if c.task_push_notification_config.is_some() => return None,
        Some(c) => Some(SendMessageConfiguration {
            accepted_output_modes: c.accepted_output_modes,
            task_push_notification_config: None,
            history_length: c.history_length,
            return_immediately: c.return_immediately,
        }),
    };
    Some(SendMessageRequest {
        tenant: r.tenant,
        message: message_in(r.message?)?,
        configuration,
        metadata: struct_in_opt(r.metadata)?,
    })
}

fn message_in(m: pb::Message) -> Option<Message> {
    // ProtoJSON leaves out empty fields, so the route refuses these as missing, in its words.
    if m.message_id.is_empty() || m.parts.is_empty() {
        return None;
    }
    Some(Message {
        message_id: m.message_id,
        context_id: m.context_id,
        task_id: m.task_id,
        // 0 is the proto's default, which ProtoJSON leaves out: the route's "is required".
        role: Role::from_number(m.role.into()).filter(|r| *r != Role::Unspecified)?,
        parts: m.parts.into_iter().map(part_in).collect::<Option<_>>()?,
        metadata: struct_in_opt(m.metadata)?,
        extensions: m.extensions,
        reference_task_ids: m.reference_task_ids,
    })
}

fn part_in(p: pb::Part) -> Option<Part> {
    let content = match p.content? {
        pb::part::Content::Text(t) => PartContent::Text(t),
        pb::part::Content::Raw(r) => PartContent::Raw(r),
        pb::part::Content::Url(u) => PartContent::Url(u),
        pb::part::Content::Data(d) => PartContent::Data(value_in(d)?),
    };
    Some(Part { content, metadata: struct_in_opt(p.metadata)?, filename: p.filename, media_type: p.media_type })
}

/// `Some(None)` for no struct; `None` when one of its values needs the ProtoJSON route.
fn struct_in_opt(s: Option<pbjson_types::Struct>) -> Option<Option<Struct>> {
    match s {
        None => Some(None),
        Some(s) => struct_in(s).map(Some),
    }
}

fn struct_in(s: pbjson_types::Struct) -> Option<Struct> {
    s.fields.into_iter().map(|(k, v)| Some((k, value_in(v)?))).collect()
}

fn value_in(v: pbjson_types::Value) -> Option<Value> {
    Some(match v.kind? {
        Kind::NullValue(_) => Value::Null,
        Kind::BoolValue(b) => Value::Bool(b),
        Kind::NumberValue(f) => super::convert::json_number(f)?,
        Kind::StringValue(s) => Value::String(s),
        Kind::ListValue(l) => Value::Array(l.values.into_iter().map(value_in).collect::<Option<_>>()?),
        Kind::StructValue(s) => Value::Object(struct_in(s)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model;
    use crate::request::Method;
    use prost::Message as _;
    use serde_json::json;

    /// The model's depth bound is what protobuf carries: a task whose every value (data and
    /// metadata, of parts in its history, artifacts and status message) nests as deep as the
    /// model allows reads back through protobuf, as a stream event and on a list page; one
    /// level more of objects would not.
    #[test]
    fn values_as_deep_as_the_model_allows_read_back_over_protobuf() {
        let task_with = |depth: usize, array: bool| -> Task {
            let deep = (1..depth).fold(json!(1), |v, _| if array { json!([v]) } else { json!({"a": v}) });
            let (data, meta) =
                if array { (json!([deep]), json!({"a": deep})) } else { (json!({"a": deep}), json!({"a": deep})) };
            let message = json!({"messageId": "m", "role": "ROLE_AGENT", "parts": [{"data": data, "metadata": meta}], "metadata": meta});
            let task = json!({"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED", "message": message},
                "artifacts": [{"artifactId": "a", "parts": [{"data": data, "metadata": meta}], "metadata": meta}],
                "history": [message]});
            serde_json::from_value(task).unwrap()
        };
        let reads_back = |task: &Task| {
            let event = pb::StreamResponse::from(&StreamResponse::Task(task.clone())).encode_to_vec();
            let page = json!({"tasks": [model::to_value(task)], "nextPageToken": "", "pageSize": 1, "totalSize": 1});
            let page = super::super::convert::encode_result(Method::ListTasks, &page).unwrap();
            pb::StreamResponse::decode(event.as_slice()).is_ok() && pb::ListTasksResponse::decode(page.as_ref()).is_ok()
        };
        for array in [false, true] {
            let task = task_with(model::MAX_VALUE_DEPTH, array);
            assert!(model::Validate::validate(&task).is_ok());
            assert!(reads_back(&task), "array {array}");
        }
        assert!(!reads_back(&task_with(model::MAX_VALUE_DEPTH + 1, false)), "the bound is not tight: raise it");
    }

    /// The message the ProtoJSON route of `convert` gives, and the direct one, as ProtoJSON:
    /// not bytes (a `Struct`'s fields are a HashMap, written in no fixed order), and an empty
    /// `Value` and a `null_value` both read `null`.
    fn same<M>(direct: M, value: &impl serde::Serialize)
    where
        M: prost::Message + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        let route: M = serde_json::from_slice(&serde_json::to_vec(value).unwrap()).unwrap();
        assert_eq!(serde_json::to_value(&direct).unwrap(), serde_json::to_value(&route).unwrap(), "{direct:?}");
        // Bytes too, where no HashMap is in the way.
        if !format!("{direct:?}").contains("Struct") {
            assert_eq!(direct.encode_to_vec(), route.encode_to_vec());
        }
    }

    fn task() -> Task {
        model::parse_value(json!({
            "id": "t1", "contextId": "c1",
            "status": {"state": "TASK_STATE_INPUT_REQUIRED", "timestamp": "2026-11-27T06:09:33.816123Z",
                "message": {"messageId": "q", "role": "ROLE_AGENT", "parts": [{"text": "and?"}]}},
            "artifacts": [{"artifactId": "a", "name": "n", "description": "d", "extensions": ["https://e/x"],
                "parts": [
                    {"text": "hi", "mediaType": "text/plain", "metadata": {}},
                    {"raw": "aGk=", "filename": "f.bin"},
                    {"url": "https://x/y"},
                    {"data": {"n": 1, "f": 2.5, "neg": -3, "l": [null, true, "s", {"deep": []}]}}
                ],
                "metadata": {"k": {"nested": [1, 2]}}}],
            "history": [{"messageId": "m", "contextId": "c1", "taskId": "t1", "role": "ROLE_USER",
                "parts": [{"text": "hello"}], "referenceTaskIds": ["t0"], "extensions": ["https://e/x"],
                "metadata": {"x": "y"}}],
            "metadata": {"a": 1, "b": null}
        }))
        .unwrap()
    }

    #[test]
    fn same_as_the_protojson_route() {
        let task = task();
        same(pb::Task::from(&task), &task);
        let sent = SendMessageResponse::Task(task.clone());
        same(pb::SendMessageResponse::from(&sent), &sent);
        let reply = SendMessageResponse::Message(task.history[0].clone());
        same(pb::SendMessageResponse::from(&reply), &reply);
        let plain = SendMessageResponse::Message(model::Message::text(model::Role::Agent, "hi"));
        same(pb::SendMessageResponse::from(&plain), &plain);
        let events = [
            StreamResponse::Task(task.clone()),
            StreamResponse::Message(task.history[0].clone()),
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: "t1".into(),
                context_id: "c1".into(),
                status: task.status.clone(),
                metadata: Some(Struct::new()),
            }),
            StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: "t1".into(),
                context_id: "c1".into(),
                artifact: task.artifacts[0].clone(),
                append: true,
                last_chunk: false,
                metadata: None,
            }),
        ];
        for event in &events {
            same(pb::StreamResponse::from(event), event);
        }
        // And what the direct message decodes to is the model's own value.
        let back = super::super::convert::decode_result(Method::GetTask, &encode(&pb::Task::from(&task))).unwrap();
        assert_eq!(model::parse_value::<Task>(back).unwrap(), task);
    }

    #[test]
    fn null_is_written_as_null_value() {
        let task: Task = model::parse_value(json!({"id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING"}, "metadata": {"n": null}}))
        .unwrap();
        assert_eq!(pb::Task::from(&task).metadata.unwrap().fields["n"].kind, Some(Kind::NullValue(0)));
    }

    #[test]
    fn integers_beyond_doubles_go_as_the_nearest_double() {
        let mut task = task();
        task.metadata = Some(json!({"big": 9007199254740993u64}).as_object().unwrap().clone());
        let message = pb::Task::from(&task);
        let big = &message.metadata.unwrap().fields["big"];
        assert_eq!(big.kind, Some(Kind::NumberValue(9007199254740992.0)));
    }
}
