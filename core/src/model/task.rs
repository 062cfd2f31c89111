//! The objects work is made of (spec §3.1–3.3): Task, its status and state, Message, Part,
//! Artifact, the two streaming events and the oneof wrappers that carry them.

use super::wire::{self, Timestamp, is_false, proto_enum, proto_oneof};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A `google.protobuf.Struct`: a free JSON object.
pub type Struct = Map<String, Value>;

proto_enum! {
    /// The lifecycle state of a task. See [`crate::task::state`] for the transitions.
    TaskState {
        Unspecified = 0 => "TASK_STATE_UNSPECIFIED",
        Submitted = 1 => "TASK_STATE_SUBMITTED",
        Working = 2 => "TASK_STATE_WORKING",
        Completed = 3 => "TASK_STATE_COMPLETED",
        Failed = 4 => "TASK_STATE_FAILED",
        Canceled = 5 => "TASK_STATE_CANCELED",
        InputRequired = 6 => "TASK_STATE_INPUT_REQUIRED",
        Rejected = 7 => "TASK_STATE_REJECTED",
        AuthRequired = 8 => "TASK_STATE_AUTH_REQUIRED",
    }
}

impl TaskState {
    /// The one table of the names the bindings accept for a state: its ProtoJSON name
    /// (`TASK_STATE_INPUT_REQUIRED`), or its short form in any case with `_` or `-`
    /// (`input_required`, `input-required`, `INPUT_REQUIRED`). Unspecified is no state to set.
    pub fn from_short_name(name: &str) -> Option<Self> {
        if let Some(state) = Self::from_name(name) {
            return Some(state);
        }
        let wire = format!("TASK_STATE_{}", name.to_ascii_uppercase().replace('-', "_"));
        Self::from_name(&wire).filter(|s| *s != TaskState::Unspecified)
    }

    /// The short form: `input_required`.
    pub fn short_name(self) -> String {
        self.as_str().trim_start_matches("TASK_STATE_").to_ascii_lowercase()
    }
}

proto_enum! {
    /// Who sent a message.
    Role {
        Unspecified = 0 => "ROLE_UNSPECIFIED",
        User = 1 => "ROLE_USER",
        Agent = 2 => "ROLE_AGENT",
    }
}

/// A unit of work, identified by a server-generated id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub id: String,
    #[serde(alias = "context_id", default, skip_serializing_if = "String::is_empty")]
    pub context_id: String,
    pub status: TaskStatus,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    pub state: TaskState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "wire::timestamp::option")]
    pub timestamp: Option<Timestamp>,
}

impl TaskStatus {
    /// A status in `state`, stamped now.
    pub fn now(state: TaskState) -> Self {
        Self { state, message: None, timestamp: Some(wire::now()) }
    }
}

/// One turn of communication between a client and an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct Message {
    #[serde(alias = "message_id")]
    pub message_id: String,
    #[serde(alias = "context_id", default, skip_serializing_if = "String::is_empty")]
    pub context_id: String,
    #[serde(alias = "task_id", default, skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    pub role: Role,
    pub parts: Vec<Part>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    #[serde(alias = "reference_task_ids", default, skip_serializing_if = "Vec::is_empty")]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// A message of one text part with a fresh UUID id.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Self {
            message_id: crate::model::wire::id_text(uuid::Uuid::new_v4()),
            context_id: String::new(),
            task_id: String::new(),
            role,
            parts: vec![Part::text(text)],
            metadata: None,
            extensions: Vec::new(),
            reference_task_ids: Vec::new(),
        }
    }

    /// The text of all text parts, joined by newlines.
    pub fn text_content(&self) -> String {
        self.parts.iter().filter_map(|p| p.as_text()).collect::<Vec<_>>().join("\n")
    }
}

/// The content of a [`Part`]: exactly one of these (`oneof content`).
#[derive(Debug, Clone, PartialEq)]
pub enum PartContent {
    Text(String),
    /// Inline bytes (base64 on the wire).
    Raw(Vec<u8>),
    /// A reference to file content.
    Url(String),
    /// Any JSON value, including null.
    Data(Value),
}

/// A piece of content in a message or artifact.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub content: PartContent,
    pub metadata: Option<Struct>,
    pub filename: String,
    pub media_type: String,
}

impl Part {
    pub fn new(content: PartContent) -> Self {
        Self { content, metadata: None, filename: String::new(), media_type: String::new() }
    }
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(PartContent::Text(text.into()))
    }
    pub fn data(value: Value) -> Self {
        Self::new(PartContent::Data(value))
    }
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(t) => Some(t),
            _ => None,
        }
    }
}

/// The wire shape of a Part when reading: every member optional, the oneof checked after.
#[derive(Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
struct PartWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    raw: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    /// `Some(Null)` when `"data": null` was sent: null is a valid `Value`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present_value")]
    data: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<Struct>,
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "string_or_null")]
    filename: String,
    #[serde(
        alias = "media_type",
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "string_or_null"
    )]
    media_type: String,
}

fn present_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

fn string_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        match &self.content {
            PartContent::Text(t) => map.serialize_entry("text", t)?,
            PartContent::Raw(b) => map.serialize_entry("raw", &wire::b64_encode(b))?,
            PartContent::Url(u) => map.serialize_entry("url", u)?,
            PartContent::Data(v) => map.serialize_entry("data", v)?,
        }
        if let Some(m) = &self.metadata {
            map.serialize_entry("metadata", m)?;
        }
        if !self.filename.is_empty() {
            map.serialize_entry("filename", &self.filename)?;
        }
        if !self.media_type.is_empty() {
            map.serialize_entry("mediaType", &self.media_type)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let wire = <PartWire as Deserialize>::deserialize(d)?;
        let mut set = Vec::with_capacity(1);
        if let Some(t) = wire.text {
            set.push(PartContent::Text(t));
        }
        if let Some(r) = wire.raw {
            set.push(PartContent::Raw(wire::b64_decode(&r).map_err(|e| D::Error::custom(format!("raw: {e}")))?));
        }
        if let Some(u) = wire.url {
            set.push(PartContent::Url(u));
        }
        if let Some(v) = wire.data {
            set.push(PartContent::Data(v));
        }
        if set.len() != 1 {
            return Err(D::Error::custom(format!(
                "a part must have exactly one of text, raw, url, data (found {})",
                set.len()
            )));
        }
        Ok(Part {
            content: set.pop().expect("checked length"),
            metadata: wire.metadata,
            filename: wire.filename,
            media_type: wire.media_type,
        })
    }
}

/// An output of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    #[serde(alias = "artifact_id")]
    pub artifact_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub parts: Vec<Part>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
}

/// A change of a task's status, streamed to subscribers and push receivers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    #[serde(alias = "task_id")]
    pub task_id: String,
    #[serde(alias = "context_id")]
    pub context_id: String,
    pub status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

/// A new or extended artifact of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    #[serde(alias = "task_id")]
    pub task_id: String,
    #[serde(alias = "context_id")]
    pub context_id: String,
    pub artifact: Artifact,
    #[serde(default, skip_serializing_if = "is_false")]
    pub append: bool,
    #[serde(alias = "last_chunk", default, skip_serializing_if = "is_false")]
    pub last_chunk: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

proto_oneof! {
    /// The reply to SendMessage: `{"task": …}` or `{"message": …}`.
    SendMessageResponse {
        Task(Task) => "task",
        Message(Message) => "message",
    }
}

proto_oneof! {
    /// One event of a stream (and the body of a push notification).
    StreamResponse {
        Task(Task) => "task",
        Message(Message) => "message",
        StatusUpdate(TaskStatusUpdateEvent) => "statusUpdate",
        ArtifactUpdate(TaskArtifactUpdateEvent) => "artifactUpdate",
    }
}

impl StreamResponse {
    /// The task this event belongs to, if any (a bare message may have none).
    pub fn task_id(&self) -> Option<&str> {
        let id = match self {
            StreamResponse::Task(t) => &t.id,
            StreamResponse::Message(m) => &m.task_id,
            StreamResponse::StatusUpdate(e) => &e.task_id,
            StreamResponse::ArtifactUpdate(e) => &e.task_id,
        };
        (!id.is_empty()).then_some(id.as_str())
    }
}

crate::model::wire::json_objects!(
    Task,
    TaskStatus,
    Message,
    Artifact,
    TaskStatusUpdateEvent,
    TaskArtifactUpdateEvent,
    PartWire
);
crate::model::wire::json_objects!(serialize: Task, TaskStatus, Message, Artifact, TaskStatusUpdateEvent, TaskArtifactUpdateEvent);
