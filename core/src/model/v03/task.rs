//! Tasks, their status and state, messages, artifacts, stream events and method results.

use super::kind::{ArtifactUpdateKind, MessageKind, StatusUpdateKind, TaskKind};
use super::part::Part;
use super::util::{from_nested, nullable, timestamp03};
use crate::error::Result;
use crate::model::validate::{each, join, non_empty_list, required};
use crate::model::wire::Timestamp;
use crate::model::{Struct, Validate};
use serde::de;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Tasks, messages, parts, artifacts, events
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskState {
    Submitted,
    Working,
    InputRequired,
    Completed,
    Canceled,
    Failed,
    Rejected,
    AuthRequired,
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Agent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct Task {
    #[serde(default)]
    pub kind: TaskKind,
    pub id: String,
    /// REQUIRED in 0.3; a 1.0 task without one is written with `""`.
    pub context_id: String,
    pub status: TaskStatus,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
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
    #[serde(default, skip_serializing_if = "Option::is_none", with = "timestamp03")]
    pub timestamp: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct Message {
    #[serde(default)]
    pub kind: MessageKind,
    pub message_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    pub role: Role,
    pub parts: Vec<Part>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub reference_task_ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    pub artifact_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub parts: Vec<Part>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    #[serde(default)]
    pub kind: StatusUpdateKind,
    pub task_id: String,
    pub context_id: String,
    pub status: TaskStatus,
    /// REQUIRED in 0.3: the last event of this stream.
    pub r#final: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    #[serde(default)]
    pub kind: ArtifactUpdateKind,
    pub task_id: String,
    pub context_id: String,
    pub artifact: Artifact,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_chunk: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

/// The `result` of `message/send`: a bare Task or Message, told apart by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SendMessageResult {
    Task(Task),
    Message(Message),
}

/// The `result` of each `message/stream` / `tasks/resubscribe` event, told apart by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum StreamResult {
    Task(Task),
    Message(Message),
    StatusUpdate(TaskStatusUpdateEvent),
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

/// Reads `kind` first, then the member it names (the discriminator may come last).
fn read_kind<'de, D: Deserializer<'de>>(d: D, allowed: &[&str]) -> Result<(String, Value), D::Error> {
    use de::Error;
    let value = Value::deserialize(d)?;
    if !value.is_object() {
        return Err(D::Error::custom(format!("expected an object with \"kind\" one of {}", allowed.join(", "))));
    }
    match value.get("kind") {
        None | Some(Value::Null) => Err(D::Error::custom("missing field `kind`")),
        Some(Value::String(k)) if allowed.contains(&k.as_str()) => Ok((k.clone(), value)),
        Some(other) => Err(D::Error::custom(format!("kind: expected one of {}, got {other}", allowed.join(", ")))),
    }
}

impl<'de> Deserialize<'de> for SendMessageResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (kind, value) = read_kind(d, &[TaskKind::WIRE, MessageKind::WIRE])?;
        if kind == TaskKind::WIRE {
            from_nested(value).map(SendMessageResult::Task)
        } else {
            from_nested(value).map(SendMessageResult::Message)
        }
    }
}

impl<'de> Deserialize<'de> for StreamResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let kinds = [TaskKind::WIRE, MessageKind::WIRE, StatusUpdateKind::WIRE, ArtifactUpdateKind::WIRE];
        let (kind, value) = read_kind(d, &kinds)?;
        match kind.as_str() {
            TaskKind::WIRE => from_nested(value).map(StreamResult::Task),
            MessageKind::WIRE => from_nested(value).map(StreamResult::Message),
            StatusUpdateKind::WIRE => from_nested(value).map(StreamResult::StatusUpdate),
            _ => from_nested(value).map(StreamResult::ArtifactUpdate),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Validation (what serde cannot check)
// ---------------------------------------------------------------------------------------------

impl Validate for Message {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "messageId", &self.message_id)?;
        non_empty_list(at, "parts", &self.parts)?;
        each(at, "parts", &self.parts)
    }
}

impl Validate for Artifact {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "artifactId", &self.artifact_id)?;
        non_empty_list(at, "parts", &self.parts)?;
        each(at, "parts", &self.parts)
    }
}

impl Validate for TaskStatus {
    fn validate_at(&self, at: &str) -> Result<()> {
        match &self.message {
            Some(msg) => msg.validate_at(&join(at, "message")),
            None => Ok(()),
        }
    }
}

impl Validate for Task {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "id", &self.id)?;
        self.status.validate_at(&join(at, "status"))?;
        each(at, "artifacts", &self.artifacts)?;
        each(at, "history", &self.history)
    }
}

impl Validate for TaskStatusUpdateEvent {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "taskId", &self.task_id)?;
        required(at, "contextId", &self.context_id)?;
        self.status.validate_at(&join(at, "status"))
    }
}

impl Validate for TaskArtifactUpdateEvent {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "taskId", &self.task_id)?;
        required(at, "contextId", &self.context_id)?;
        self.artifact.validate_at(&join(at, "artifact"))
    }
}

impl Validate for SendMessageResult {
    fn validate_at(&self, at: &str) -> Result<()> {
        match self {
            SendMessageResult::Task(t) => t.validate_at(at),
            SendMessageResult::Message(msg) => msg.validate_at(at),
        }
    }
}

impl Validate for StreamResult {
    fn validate_at(&self, at: &str) -> Result<()> {
        match self {
            StreamResult::Task(t) => t.validate_at(at),
            StreamResult::Message(msg) => msg.validate_at(at),
            StreamResult::StatusUpdate(e) => e.validate_at(at),
            StreamResult::ArtifactUpdate(e) => e.validate_at(at),
        }
    }
}

crate::model::wire::json_objects!(Task, TaskStatus, Message, Artifact, TaskStatusUpdateEvent, TaskArtifactUpdateEvent);
crate::model::wire::json_objects!(serialize: Task, TaskStatus, Message, Artifact, TaskStatusUpdateEvent, TaskArtifactUpdateEvent);
