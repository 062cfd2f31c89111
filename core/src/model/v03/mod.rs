//! The A2A 0.3 JSON-RPC wire form and its conversion to and from the 1.0 models.
//!
//! The types follow the 0.3 JSON Schema (`spec/0.3.0/a2a.json`, normative for 0.3 JSON-RPC):
//! camelCase names, `kind` discriminators (`task`, `message`, `status-update`,
//! `artifact-update`; parts `text` / `file` / `data`), lowercase/kebab enums, OpenAPI-style
//! security schemes with a `type` discriminator. The schema's `required` members are enforced
//! when reading through [`crate::model::parse_value`]; [`Validate`] adds what serde cannot check
//! (non-empty ids, at least one part, ...). Errors name the field by JSON path. One exception:
//! a missing `kind` is implied where the type is known, because the 0.3 spec's own
//! `message/send` example leaves it out and the official SDK accepts that. Unknown members
//! are ignored; 0.3 timestamps and file bytes are parsed on input, so bad ones are reported
//! there, and written back normalised (UTC `Z`; padded standard base64).
//!
//! Conversions (`From` / `TryFrom` both ways) are lossless wherever 1.0 and 0.3 both have a
//! place for the data. Where they do not, the choice is documented on the impl; in short:
//!
//! - A 1.0 data part holding a non-object value becomes `{"value": X}` with
//!   `metadata.data_part_compat = true` ([`DATA_PART_COMPAT_KEY`], the convention of the
//!   official Python SDK's 0.3 compat layer); the reverse conversion unwraps it.
//! - 1.0 `filename` / `mediaType` on text and data parts (0.3 has no such members there) travel
//!   in part metadata under [`PART_FIELDS_KEY`] and are restored.
//! - `final` (0.3 status-update) does not exist in 1.0: it is dropped going to 1.0, and going
//!   to 0.3 it is given by the caller ([`TaskStatusUpdateEvent::from_v10`]) or by [`is_final`].
//! - 0.3 push auth `schemes[]` → 1.0 `scheme`: the first scheme is kept, the rest dropped.
//! - Agent cards: see [`AgentCard`]'s conversions (interfaces, OAuth flow priority, dropped fields).
//! - 1.0 `tenant` has no 0.3 counterpart and is dropped; 0.3 request `metadata` is dropped
//!   where the 1.0 request has none (GetTask, SubscribeToTask, push-config get/list/delete).
//!
//! [`to_v10`] / [`to_v03`] convert JSON by type name: the entry point of the language-neutral
//! vectors in `tests/vectors/v03`, run by every implementation.

use super::validate::{each, join, non_empty_list, non_negative, required};
use super::wire::{self, Timestamp};
use super::{self as m, Struct, Validate, parse_value, to_value};
use crate::error::{A2AError, Result};
use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// Metadata key on a 0.3 DataPart whose `data` is `{"value": X}` wrapping a 1.0 non-object
/// value X. Same key and shape as the official Python SDK, so each side unwraps the other's.
pub const DATA_PART_COMPAT_KEY: &str = "data_part_compat";

/// Metadata key on 0.3 text and data parts carrying the 1.0 part's `filename` / `mediaType`
/// (`{"filename": "...", "mediaType": "..."}`), which 0.3 only has on file parts.
pub const PART_FIELDS_KEY: &str = "a2a_native_part";

/// The `protocolVersion` written on 0.3 agent cards (the 0.3 schema's default).
pub const PROTOCOL_VERSION: &str = "0.3.0";

// ---------------------------------------------------------------------------------------------
// Methods
// ---------------------------------------------------------------------------------------------

/// The 0.3 JSON-RPC methods, each with the 1.0 method it corresponds to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    MessageSend,
    MessageStream,
    TasksGet,
    TasksCancel,
    TasksResubscribe,
    PushConfigSet,
    PushConfigGet,
    PushConfigList,
    PushConfigDelete,
    GetAuthenticatedExtendedCard,
}

/// (method, 0.3 name, 1.0 name, params conversion type, result conversion type). The type
/// names are those of [`TYPE_NAMES`]; `None` where the JSON is not an object conversion
/// (no params; list result is an array, see [`push_configs_to_v03`]; delete result is null).
type MethodRow = (Method, &'static str, &'static str, Option<&'static str>, Option<&'static str>);

const METHODS: &[MethodRow] = &[
    (
        Method::MessageSend,
        "message/send",
        "SendMessage",
        Some(SEND_PARAMS),
        Some("SendMessageResult/SendMessageResponse"),
    ),
    (Method::MessageStream, "message/stream", "SendStreamingMessage", Some(SEND_PARAMS), Some(STREAM_RESULT)),
    (Method::TasksGet, "tasks/get", "GetTask", Some("TaskQueryParams/GetTaskRequest"), Some("Task")),
    (Method::TasksCancel, "tasks/cancel", "CancelTask", Some("TaskIdParams/CancelTaskRequest"), Some("Task")),
    (
        Method::TasksResubscribe,
        "tasks/resubscribe",
        "SubscribeToTask",
        Some("TaskIdParams/SubscribeToTaskRequest"),
        Some(STREAM_RESULT),
    ),
    (
        Method::PushConfigSet,
        "tasks/pushNotificationConfig/set",
        "CreateTaskPushNotificationConfig",
        Some("TaskPushNotificationConfig"),
        Some("TaskPushNotificationConfig"),
    ),
    (
        Method::PushConfigGet,
        "tasks/pushNotificationConfig/get",
        "GetTaskPushNotificationConfig",
        Some("GetTaskPushNotificationConfigParams/GetTaskPushNotificationConfigRequest"),
        Some("TaskPushNotificationConfig"),
    ),
    (
        Method::PushConfigList,
        "tasks/pushNotificationConfig/list",
        "ListTaskPushNotificationConfigs",
        Some("ListTaskPushNotificationConfigParams/ListTaskPushNotificationConfigsRequest"),
        None,
    ),
    (
        Method::PushConfigDelete,
        "tasks/pushNotificationConfig/delete",
        "DeleteTaskPushNotificationConfig",
        Some("DeleteTaskPushNotificationConfigParams/DeleteTaskPushNotificationConfigRequest"),
        None,
    ),
    (
        Method::GetAuthenticatedExtendedCard,
        "agent/getAuthenticatedExtendedCard",
        "GetExtendedAgentCard",
        None,
        Some("AgentCard"),
    ),
];

const SEND_PARAMS: &str = "MessageSendParams/SendMessageRequest";
const STREAM_RESULT: &str = "StreamResult/StreamResponse";

impl Method {
    pub const ALL: [Method; 10] = [
        Method::MessageSend,
        Method::MessageStream,
        Method::TasksGet,
        Method::TasksCancel,
        Method::TasksResubscribe,
        Method::PushConfigSet,
        Method::PushConfigGet,
        Method::PushConfigList,
        Method::PushConfigDelete,
        Method::GetAuthenticatedExtendedCard,
    ];

    fn row(self) -> &'static MethodRow {
        METHODS.iter().find(|r| r.0 == self).expect("every method has a row")
    }
    /// The 0.3 JSON-RPC method name, e.g. `message/send`.
    pub fn name(self) -> &'static str {
        self.row().1
    }
    /// The 1.0 method (JSON-RPC name = gRPC rpc name), e.g. `SendMessage`.
    pub fn v10_name(self) -> &'static str {
        self.row().2
    }
    pub fn from_name(name: &str) -> Option<Self> {
        METHODS.iter().find(|r| r.1 == name).map(|r| r.0)
    }
    pub fn from_v10_name(name: &str) -> Option<Self> {
        METHODS.iter().find(|r| r.2 == name).map(|r| r.0)
    }
    /// Whether the method answers with an SSE stream.
    pub fn is_streaming(self) -> bool {
        matches!(self, Method::MessageStream | Method::TasksResubscribe)
    }
    /// The [`to_v10`] / [`to_v03`] type name of the params (`None`: the method takes none).
    pub fn params_type(self) -> Option<&'static str> {
        self.row().3
    }
    /// The [`to_v10`] / [`to_v03`] type name of the result. `None` for list (a bare array: see
    /// [`push_configs_to_v03`]) and delete (`null`).
    pub fn result_type(self) -> Option<&'static str> {
        self.row().4
    }
}

// ---------------------------------------------------------------------------------------------
// Wire helpers
// ---------------------------------------------------------------------------------------------

/// A `kind` member with one allowed value: always written; on input a wrong value is an
/// error, an absent one is taken as implied. The 0.3 schema lists `kind` as required, but the
/// 0.3 spec's own `message/send` example omits it and the official SDK accepts that, so a
/// compat server must too. (Results of several kinds still need it: see [`StreamResult`].)
macro_rules! kind_tag {
    ($(#[$meta:meta])* $name:ident = $wire:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name;

        impl $name {
            pub const WIRE: &'static str = $wire;
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($wire)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let got = String::deserialize(d)?;
                if got == $wire {
                    Ok($name)
                } else {
                    Err(de::Error::custom(format!("expected {:?}, got {got:?}", $wire)))
                }
            }
        }
    };
}

kind_tag!(
    /// `"kind": "task"`.
    TaskKind = "task"
);
kind_tag!(
    /// `"kind": "message"`.
    MessageKind = "message"
);
kind_tag!(
    /// `"kind": "status-update"`.
    StatusUpdateKind = "status-update"
);
kind_tag!(
    /// `"kind": "artifact-update"`.
    ArtifactUpdateKind = "artifact-update"
);

/// Optional arrays and strings: a `null` from a 0.3 peer reads as absent.
fn nullable<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// 0.3 timestamps are "ISO 8601 datetime strings". Read any RFC 3339 offset, and (leniently)
/// an offset-less `YYYY-MM-DDTHH:MM:SS[.f]`, taken as UTC, which some 0.3 peers write.
/// Written as 1.0 does: UTC with `Z`.
mod timestamp03 {
    use super::*;

    pub fn parse(text: &str) -> Result<Timestamp, String> {
        wire::timestamp::parse(text).or_else(|err| {
            chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").map(|n| n.and_utc()).map_err(|_| err)
        })
    }

    pub fn serialize<S: Serializer>(ts: &Option<Timestamp>, s: S) -> Result<S::Ok, S::Error> {
        match ts {
            Some(ts) => s.serialize_str(&wire::timestamp::format(ts)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Timestamp>, D::Error> {
        match Option::<String>::deserialize(d)? {
            Some(text) => parse(&text).map(Some).map_err(de::Error::custom),
            None => Ok(None),
        }
    }
}

/// Deserialises a nested value already buffered as JSON (a `kind`-dispatched result), keeping
/// the inner path in the message so the caller's error still names the field.
fn from_nested<T: DeserializeOwned, E: de::Error>(value: Value) -> Result<T, E> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let inner = e.into_inner().to_string();
        match inner.strip_prefix("missing field `").and_then(|r| r.split('`').next()) {
            Some(name) => E::custom(format!("missing field `{}`", join(&path, name))),
            None if path.is_empty() => E::custom(inner),
            None => E::custom(format!("{path}: {inner}")),
        }
    })
}

fn opt(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

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
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    pub state: TaskState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "timestamp03")]
    pub timestamp: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// A part, discriminated by `kind`: `text`, `file` or `data` (always written; when absent on
/// input, implied by the single content member present).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind")]
pub enum Part {
    #[serde(rename = "text")]
    Text(TextPart),
    #[serde(rename = "file")]
    File(FilePart),
    #[serde(rename = "data")]
    Data(DataPart),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextPart {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilePart {
    pub file: FileContent,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

/// `data` must be a JSON object in 0.3.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DataPart {
    pub data: Struct,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

/// A file's content: inline bytes or a URI (exactly one).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum FileContent {
    Bytes(FileWithBytes),
    Uri(FileWithUri),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileWithBytes {
    /// Decoded on input (base64, either alphabet); written as padded standard base64.
    #[serde(serialize_with = "ser_b64")]
    pub bytes: Vec<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileWithUri {
    pub uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

fn ser_b64<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&wire::b64_encode(bytes))
}

/// base64 text decoded while reading, so a bad value is reported at its own path.
struct B64(Vec<u8>);

impl<'de> Deserialize<'de> for B64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        wire::b64_decode(&text).map(B64).map_err(de::Error::custom)
    }
}

/// Every member optional: which ones a part needs depends on `kind`, checked after reading.
/// Derived, so errors inside (e.g. `file.bytes`) keep their path.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PartWire {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    file: Option<FileContent>,
    #[serde(default)]
    data: Option<Struct>,
    #[serde(default)]
    metadata: Option<Struct>,
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use de::Error;
        let w = PartWire::deserialize(d)?;
        let missing = |name: &str| D::Error::custom(format!("missing field `{name}`"));
        // No kind: implied by the one content member present (as the 0.3 Python SDK reads it).
        let implied = match (&w.text, &w.file, &w.data) {
            (Some(_), None, None) => Some("text"),
            (None, Some(_), None) => Some("file"),
            (None, None, Some(_)) => Some("data"),
            _ => None,
        };
        match w.kind.as_deref().or(implied) {
            Some("text") => {
                Ok(Part::Text(TextPart { text: w.text.ok_or_else(|| missing("text"))?, metadata: w.metadata }))
            }
            Some("file") => {
                Ok(Part::File(FilePart { file: w.file.ok_or_else(|| missing("file"))?, metadata: w.metadata }))
            }
            Some("data") => {
                Ok(Part::Data(DataPart { data: w.data.ok_or_else(|| missing("data"))?, metadata: w.metadata }))
            }
            Some(other) => Err(D::Error::custom(format!("unknown part kind {other:?}; expected text, file or data"))),
            None => Err(missing("kind")),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileWire {
    #[serde(default)]
    bytes: Option<B64>,
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    mime_type: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

impl<'de> Deserialize<'de> for FileContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use de::Error;
        let w = FileWire::deserialize(d)?;
        match (w.bytes, w.uri) {
            (Some(B64(bytes)), None) => {
                Ok(FileContent::Bytes(FileWithBytes { bytes, mime_type: w.mime_type, name: w.name }))
            }
            (None, Some(uri)) => Ok(FileContent::Uri(FileWithUri { uri, mime_type: w.mime_type, name: w.name })),
            (Some(_), Some(_)) => Err(D::Error::custom("a file must have exactly one of bytes, uri (found both)")),
            (None, None) => Err(D::Error::custom("a file must have exactly one of bytes, uri (found neither)")),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
// Request params and push-notification configuration
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSendParams {
    pub message: Message,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<MessageSendConfiguration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSendConfiguration {
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub accepted_output_modes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "wire::int32_opt")]
    pub history_length: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notification_config: Option<PushNotificationConfig>,
    /// Absent means blocking (what the 0.3 SDK servers do).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocking: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskQueryParams {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "wire::int32_opt")]
    pub history_length: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushNotificationConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<PushNotificationAuthenticationInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushNotificationAuthenticationInfo {
    pub schemes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// The params of `tasks/pushNotificationConfig/set` and the result of set and get.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    pub task_id: String,
    pub push_notification_config: PushNotificationConfig,
}

/// Also reads the plain `TaskIdParams` form the schema allows (no config id).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskPushNotificationConfigParams {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notification_config_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigParams {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteTaskPushNotificationConfigParams {
    pub id: String,
    pub push_notification_config_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

// ---------------------------------------------------------------------------------------------
// Agent card
// ---------------------------------------------------------------------------------------------

/// The 0.3 agent card. `provider` and `signatures` have the same shape as in 1.0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    pub protocol_version: String,
    pub name: String,
    pub description: String,
    /// The preferred endpoint; serves `preferredTransport`.
    pub url: String,
    /// Absent means `JSONRPC`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_transport: Option<String>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub additional_interfaces: Vec<AgentInterface>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<m::AgentProvider>,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    pub capabilities: AgentCapabilities,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "BTreeMap::is_empty")]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<SecurityRequirement>,
    pub default_input_modes: Vec<String>,
    pub default_output_modes: Vec<String>,
    pub skills: Vec<AgentSkill>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_authenticated_extended_card: Option<bool>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<m::AgentCardSignature>,
}

/// OpenAPI security requirement: scheme name → scopes.
pub type SecurityRequirement = BTreeMap<String, Vec<String>>;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    pub url: String,
    /// `JSONRPC`, `GRPC`, `HTTP+JSON` or a custom name.
    pub transport: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// Removed in 1.0: dropped by the conversion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_transition_history: Option<bool>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<AgentExtension>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    pub id: String,
    pub name: String,
    pub description: String,
    pub tags: Vec<String>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub input_modes: Vec<String>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub output_modes: Vec<String>,
    #[serde(default, deserialize_with = "nullable", skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<SecurityRequirement>,
}

/// OpenAPI 3.0 security scheme, discriminated by `type`.
// Unboxed like the 1.0 oneof: a card holds a handful of schemes.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type")]
pub enum SecurityScheme {
    #[serde(rename = "apiKey")]
    ApiKey(ApiKeySecurityScheme),
    #[serde(rename = "http")]
    Http(HttpAuthSecurityScheme),
    #[serde(rename = "oauth2")]
    OAuth2(OAuth2SecurityScheme),
    #[serde(rename = "openIdConnect")]
    OpenIdConnect(OpenIdConnectSecurityScheme),
    #[serde(rename = "mutualTLS")]
    MutualTls(MutualTlsSecurityScheme),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeySecurityScheme {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `query`, `header` or `cookie` (1.0 `location`).
    #[serde(rename = "in")]
    pub location: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub scheme: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bearer_format: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuth2SecurityScheme {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub flows: OAuthFlows,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oauth2_metadata_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenIdConnectSecurityScheme {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub open_id_connect_url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct MutualTlsSecurityScheme {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Any number of flows at once (OpenAPI); 1.0 allows exactly one.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthFlows {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_code: Option<AuthorizationCodeOAuthFlow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_credentials: Option<ClientCredentialsOAuthFlow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implicit: Option<ImplicitOAuthFlow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<PasswordOAuthFlow>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationCodeOAuthFlow {
    pub authorization_url: String,
    pub token_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    pub scopes: m::Scopes,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCredentialsOAuthFlow {
    pub token_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    pub scopes: m::Scopes,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImplicitOAuthFlow {
    pub authorization_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    pub scopes: m::Scopes,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PasswordOAuthFlow {
    pub token_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    pub scopes: m::Scopes,
}

/// Every member optional; which ones are required depends on `type`, checked after reading.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SecuritySchemeWire {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default, rename = "in")]
    location: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    scheme: Option<String>,
    #[serde(default)]
    bearer_format: Option<String>,
    #[serde(default)]
    flows: Option<OAuthFlows>,
    #[serde(default)]
    oauth2_metadata_url: Option<String>,
    #[serde(default)]
    open_id_connect_url: Option<String>,
}

impl<'de> Deserialize<'de> for SecurityScheme {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use de::Error;
        let w = SecuritySchemeWire::deserialize(d)?;
        let missing = |name: &str| D::Error::custom(format!("missing field `{name}`"));
        let description = w.description;
        Ok(match w.kind.as_deref() {
            Some("apiKey") => SecurityScheme::ApiKey(ApiKeySecurityScheme {
                description,
                location: w.location.ok_or_else(|| missing("in"))?,
                name: w.name.ok_or_else(|| missing("name"))?,
            }),
            Some("http") => SecurityScheme::Http(HttpAuthSecurityScheme {
                description,
                scheme: w.scheme.ok_or_else(|| missing("scheme"))?,
                bearer_format: w.bearer_format,
            }),
            Some("oauth2") => SecurityScheme::OAuth2(OAuth2SecurityScheme {
                description,
                flows: w.flows.ok_or_else(|| missing("flows"))?,
                oauth2_metadata_url: w.oauth2_metadata_url,
            }),
            Some("openIdConnect") => SecurityScheme::OpenIdConnect(OpenIdConnectSecurityScheme {
                description,
                open_id_connect_url: w.open_id_connect_url.ok_or_else(|| missing("openIdConnectUrl"))?,
            }),
            Some("mutualTLS") => SecurityScheme::MutualTls(MutualTlsSecurityScheme { description }),
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "unknown security scheme type {other:?}; expected apiKey, http, oauth2, openIdConnect or mutualTLS"
                )));
            }
            None => return Err(missing("type")),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Validation (what serde cannot check)
// ---------------------------------------------------------------------------------------------

/// A conversion error raised inside a nested value: prefix its field path with `at`.
fn within(at: &str, err: A2AError) -> A2AError {
    match err.violations.as_slice() {
        [v] => A2AError::invalid_field(join(at, &v.field), v.description.clone()),
        _ => err,
    }
}

impl Validate for Message {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "messageId", &self.message_id)?;
        non_empty_list(at, "parts", &self.parts)?;
        each(at, "parts", &self.parts)
    }
}

impl Validate for Part {
    fn validate_at(&self, at: &str) -> Result<()> {
        if let Part::File(FilePart { file: FileContent::Uri(f), .. }) = self {
            required(&join(at, "file"), "uri", &f.uri)?;
        }
        Ok(())
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

impl Validate for MessageSendParams {
    fn validate_at(&self, at: &str) -> Result<()> {
        self.message.validate_at(&join(at, "message"))?;
        if let Some(c) = &self.configuration {
            let at = join(at, "configuration");
            non_negative(&at, "historyLength", c.history_length)?;
            if let Some(p) = &c.push_notification_config {
                p.validate_at(&join(&at, "pushNotificationConfig"))?;
            }
        }
        Ok(())
    }
}

impl Validate for PushNotificationConfig {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "url", &self.url)?;
        if let Some(auth) = &self.authentication {
            // 1.0 needs one scheme to build the Authorization header.
            let at = join(at, "authentication");
            non_empty_list(&at, "schemes", &auth.schemes)?;
            required(&at, "schemes[0]", &auth.schemes[0])?;
        }
        Ok(())
    }
}

impl Validate for TaskPushNotificationConfig {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "taskId", &self.task_id)?;
        self.push_notification_config.validate_at(&join(at, "pushNotificationConfig"))
    }
}

impl Validate for TaskQueryParams {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "id", &self.id)?;
        non_negative(at, "historyLength", self.history_length)
    }
}

impl Validate for TaskIdParams {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "id", &self.id)
    }
}

impl Validate for GetTaskPushNotificationConfigParams {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "id", &self.id)
    }
}

impl Validate for ListTaskPushNotificationConfigParams {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "id", &self.id)
    }
}

impl Validate for DeleteTaskPushNotificationConfigParams {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "id", &self.id)?;
        required(at, "pushNotificationConfigId", &self.push_notification_config_id)
    }
}

impl Validate for AgentCard {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "protocolVersion", &self.protocol_version)?;
        required(at, "name", &self.name)?;
        required(at, "description", &self.description)?;
        required(at, "url", &self.url)?;
        for (i, iface) in self.additional_interfaces.iter().enumerate() {
            let at = format!("{}[{i}]", join(at, "additionalInterfaces"));
            required(&at, "url", &iface.url)?;
            required(&at, "transport", &iface.transport)?;
        }
        if let Some(p) = &self.provider {
            p.validate_at(&join(at, "provider"))?;
        }
        required(at, "version", &self.version)?;
        for (i, ext) in self.capabilities.extensions.iter().enumerate() {
            required(&format!("{}[{i}]", join(at, "capabilities.extensions")), "uri", &ext.uri)?;
        }
        for (name, scheme) in &self.security_schemes {
            scheme.validate_at(&format!("{}.{name}", join(at, "securitySchemes")))?;
        }
        each(at, "skills", &self.skills)?;
        each(at, "signatures", &self.signatures)
    }
}

impl Validate for AgentSkill {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "id", &self.id)?;
        required(at, "name", &self.name)?;
        required(at, "description", &self.description)
    }
}

impl Validate for SecurityScheme {
    fn validate_at(&self, at: &str) -> Result<()> {
        match self {
            SecurityScheme::ApiKey(s) => {
                if !matches!(s.location.as_str(), "query" | "header" | "cookie") {
                    return Err(A2AError::invalid_field(join(at, "in"), "must be query, header or cookie"));
                }
                required(at, "name", &s.name)
            }
            SecurityScheme::Http(s) => required(at, "scheme", &s.scheme),
            SecurityScheme::OAuth2(s) => {
                let at = join(at, "flows");
                if let Some(f) = &s.flows.authorization_code {
                    required(&join(&at, "authorizationCode"), "authorizationUrl", &f.authorization_url)?;
                    required(&join(&at, "authorizationCode"), "tokenUrl", &f.token_url)?;
                }
                if let Some(f) = &s.flows.client_credentials {
                    required(&join(&at, "clientCredentials"), "tokenUrl", &f.token_url)?;
                }
                if let Some(f) = &s.flows.implicit {
                    required(&join(&at, "implicit"), "authorizationUrl", &f.authorization_url)?;
                }
                if let Some(f) = &s.flows.password {
                    required(&join(&at, "password"), "tokenUrl", &f.token_url)?;
                }
                Ok(())
            }
            SecurityScheme::OpenIdConnect(s) => required(at, "openIdConnectUrl", &s.open_id_connect_url),
            SecurityScheme::MutualTls(_) => Ok(()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Conversions: enums
// ---------------------------------------------------------------------------------------------

impl From<TaskState> for m::TaskState {
    fn from(s: TaskState) -> Self {
        match s {
            TaskState::Submitted => m::TaskState::Submitted,
            TaskState::Working => m::TaskState::Working,
            TaskState::InputRequired => m::TaskState::InputRequired,
            TaskState::Completed => m::TaskState::Completed,
            TaskState::Canceled => m::TaskState::Canceled,
            TaskState::Failed => m::TaskState::Failed,
            TaskState::Rejected => m::TaskState::Rejected,
            TaskState::AuthRequired => m::TaskState::AuthRequired,
            TaskState::Unknown => m::TaskState::Unspecified,
        }
    }
}

impl From<m::TaskState> for TaskState {
    fn from(s: m::TaskState) -> Self {
        match s {
            m::TaskState::Submitted => TaskState::Submitted,
            m::TaskState::Working => TaskState::Working,
            m::TaskState::InputRequired => TaskState::InputRequired,
            m::TaskState::Completed => TaskState::Completed,
            m::TaskState::Canceled => TaskState::Canceled,
            m::TaskState::Failed => TaskState::Failed,
            m::TaskState::Rejected => TaskState::Rejected,
            m::TaskState::AuthRequired => TaskState::AuthRequired,
            m::TaskState::Unspecified => TaskState::Unknown,
        }
    }
}

impl From<Role> for m::Role {
    fn from(r: Role) -> Self {
        match r {
            Role::User => m::Role::User,
            Role::Agent => m::Role::Agent,
        }
    }
}

impl TryFrom<m::Role> for Role {
    type Error = A2AError;
    /// `ROLE_UNSPECIFIED` has no 0.3 spelling (1.0 validation rejects it in messages anyway).
    fn try_from(r: m::Role) -> Result<Self> {
        match r {
            m::Role::User => Ok(Role::User),
            m::Role::Agent => Ok(Role::Agent),
            m::Role::Unspecified => {
                Err(A2AError::invalid_field("role", "ROLE_UNSPECIFIED has no 0.3 form (user or agent)"))
            }
        }
    }
}

/// Whether a 0.3 status-update for a task entering `state` should carry `final: true`:
/// terminal states, and INPUT_REQUIRED because the 0.3 SDKs end the stream there too.
/// AUTH_REQUIRED is not final: the spec asks agents to keep streams open while they wait.
pub fn is_final(state: m::TaskState) -> bool {
    state.is_terminal() || state == m::TaskState::InputRequired
}

// ---------------------------------------------------------------------------------------------
// Conversions: parts
// ---------------------------------------------------------------------------------------------

/// Puts a 1.0 text/data part's `filename` / `mediaType` under [`PART_FIELDS_KEY`].
fn carry_part_fields(metadata: &mut Option<Struct>, filename: String, media_type: String) {
    if filename.is_empty() && media_type.is_empty() {
        return;
    }
    let mut fields = Struct::new();
    if !filename.is_empty() {
        fields.insert("filename".to_owned(), Value::String(filename));
    }
    if !media_type.is_empty() {
        fields.insert("mediaType".to_owned(), Value::String(media_type));
    }
    metadata.get_or_insert_with(Struct::new).insert(PART_FIELDS_KEY.to_owned(), Value::Object(fields));
}

/// Removes `key` from metadata, dropping the map when that empties it (we created it).
fn take_meta(metadata: &mut Option<Struct>, key: &str) -> Option<Value> {
    let map = metadata.as_mut()?;
    let value = map.remove(key)?;
    if map.is_empty() {
        *metadata = None;
    }
    Some(value)
}

/// The inverse of [`carry_part_fields`]; a value not of our shape is left alone.
fn restore_part_fields(metadata: &mut Option<Struct>) -> (String, String) {
    let ours = metadata.as_ref().and_then(|m| m.get(PART_FIELDS_KEY)).is_some_and(|v| {
        v.as_object()
            .is_some_and(|f| f.iter().all(|(k, v)| matches!(k.as_str(), "filename" | "mediaType") && v.is_string()))
    });
    if !ours {
        return Default::default();
    }
    let fields = take_meta(metadata, PART_FIELDS_KEY).expect("checked above");
    let get = |name: &str| fields.get(name).and_then(Value::as_str).unwrap_or_default().to_owned();
    (get("filename"), get("mediaType"))
}

/// A 0.3 data part's value in 1.0: unwraps `{"value": X}` when flagged with
/// [`DATA_PART_COMPAT_KEY`] = true (and only that exact shape).
fn unwrap_data(data: Struct, metadata: &mut Option<Struct>) -> Value {
    let flagged = metadata.as_ref().and_then(|m| m.get(DATA_PART_COMPAT_KEY)) == Some(&Value::Bool(true));
    if flagged && data.len() == 1 && data.contains_key("value") {
        take_meta(metadata, DATA_PART_COMPAT_KEY);
        return data.into_iter().next().expect("one member").1;
    }
    Value::Object(data)
}

impl From<Part> for m::Part {
    fn from(p: Part) -> Self {
        match p {
            Part::Text(TextPart { text, mut metadata }) => {
                let (filename, media_type) = restore_part_fields(&mut metadata);
                m::Part { content: m::PartContent::Text(text), metadata, filename, media_type }
            }
            Part::Data(DataPart { data, mut metadata }) => {
                let (filename, media_type) = restore_part_fields(&mut metadata);
                let content = m::PartContent::Data(unwrap_data(data, &mut metadata));
                m::Part { content, metadata, filename, media_type }
            }
            Part::File(FilePart { file, metadata }) => {
                let (content, mime_type, name) = match file {
                    FileContent::Bytes(f) => (m::PartContent::Raw(f.bytes), f.mime_type, f.name),
                    FileContent::Uri(f) => (m::PartContent::Url(f.uri), f.mime_type, f.name),
                };
                m::Part {
                    content,
                    metadata,
                    filename: name.unwrap_or_default(),
                    media_type: mime_type.unwrap_or_default(),
                }
            }
        }
    }
}

impl From<m::Part> for Part {
    /// Raw ↔ FileWithBytes, url ↔ FileWithUri (filename ↔ name, mediaType ↔ mimeType);
    /// text and data keep filename/mediaType in metadata; a non-object data value is wrapped.
    fn from(p: m::Part) -> Self {
        let m::Part { content, mut metadata, filename, media_type } = p;
        match content {
            m::PartContent::Text(text) => {
                carry_part_fields(&mut metadata, filename, media_type);
                Part::Text(TextPart { text, metadata })
            }
            m::PartContent::Data(value) => {
                carry_part_fields(&mut metadata, filename, media_type);
                let data = match value {
                    Value::Object(map) => map,
                    other => {
                        metadata
                            .get_or_insert_with(Struct::new)
                            .insert(DATA_PART_COMPAT_KEY.to_owned(), Value::Bool(true));
                        Struct::from_iter([("value".to_owned(), other)])
                    }
                };
                Part::Data(DataPart { data, metadata })
            }
            m::PartContent::Raw(bytes) => Part::File(FilePart {
                file: FileContent::Bytes(FileWithBytes { bytes, mime_type: opt(media_type), name: opt(filename) }),
                metadata,
            }),
            m::PartContent::Url(uri) => Part::File(FilePart {
                file: FileContent::Uri(FileWithUri { uri, mime_type: opt(media_type), name: opt(filename) }),
                metadata,
            }),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Conversions: messages, tasks, artifacts, events, results
// ---------------------------------------------------------------------------------------------

impl From<Message> for m::Message {
    fn from(x: Message) -> Self {
        m::Message {
            message_id: x.message_id,
            context_id: x.context_id.unwrap_or_default(),
            task_id: x.task_id.unwrap_or_default(),
            role: x.role.into(),
            parts: x.parts.into_iter().map(Into::into).collect(),
            metadata: x.metadata,
            extensions: x.extensions,
            reference_task_ids: x.reference_task_ids,
        }
    }
}

impl TryFrom<m::Message> for Message {
    type Error = A2AError;
    fn try_from(x: m::Message) -> Result<Self> {
        Ok(Message {
            kind: MessageKind,
            message_id: x.message_id,
            context_id: opt(x.context_id),
            task_id: opt(x.task_id),
            role: x.role.try_into()?,
            parts: x.parts.into_iter().map(Into::into).collect(),
            metadata: x.metadata,
            extensions: x.extensions,
            reference_task_ids: x.reference_task_ids,
        })
    }
}

impl From<TaskStatus> for m::TaskStatus {
    fn from(s: TaskStatus) -> Self {
        m::TaskStatus { state: s.state.into(), message: s.message.map(Into::into), timestamp: s.timestamp }
    }
}

impl TryFrom<m::TaskStatus> for TaskStatus {
    type Error = A2AError;
    fn try_from(s: m::TaskStatus) -> Result<Self> {
        let message = s.message.map(Message::try_from).transpose().map_err(|e| within("message", e))?;
        Ok(TaskStatus { state: s.state.into(), message, timestamp: s.timestamp })
    }
}

impl From<Artifact> for m::Artifact {
    fn from(a: Artifact) -> Self {
        m::Artifact {
            artifact_id: a.artifact_id,
            name: a.name.unwrap_or_default(),
            description: a.description.unwrap_or_default(),
            parts: a.parts.into_iter().map(Into::into).collect(),
            metadata: a.metadata,
            extensions: a.extensions,
        }
    }
}

impl From<m::Artifact> for Artifact {
    fn from(a: m::Artifact) -> Self {
        Artifact {
            artifact_id: a.artifact_id,
            name: opt(a.name),
            description: opt(a.description),
            parts: a.parts.into_iter().map(Into::into).collect(),
            metadata: a.metadata,
            extensions: a.extensions,
        }
    }
}

impl From<Task> for m::Task {
    fn from(t: Task) -> Self {
        m::Task {
            id: t.id,
            context_id: t.context_id,
            status: t.status.into(),
            artifacts: t.artifacts.into_iter().map(Into::into).collect(),
            history: t.history.into_iter().map(Into::into).collect(),
            metadata: t.metadata,
        }
    }
}

impl TryFrom<m::Task> for Task {
    type Error = A2AError;
    fn try_from(t: m::Task) -> Result<Self> {
        let history = t
            .history
            .into_iter()
            .enumerate()
            .map(|(i, msg)| Message::try_from(msg).map_err(|e| within(&format!("history[{i}]"), e)))
            .collect::<Result<_>>()?;
        Ok(Task {
            kind: TaskKind,
            id: t.id,
            context_id: t.context_id,
            status: t.status.try_into().map_err(|e| within("status", e))?,
            artifacts: t.artifacts.into_iter().map(Into::into).collect(),
            history,
            metadata: t.metadata,
        })
    }
}

impl From<TaskStatusUpdateEvent> for m::TaskStatusUpdateEvent {
    /// `final` is dropped: 1.0 signals the end of a stream by closing it.
    fn from(e: TaskStatusUpdateEvent) -> Self {
        m::TaskStatusUpdateEvent {
            task_id: e.task_id,
            context_id: e.context_id,
            status: e.status.into(),
            metadata: e.metadata,
        }
    }
}

impl TaskStatusUpdateEvent {
    /// The 0.3 event for a 1.0 one, with `final` as given (see [`is_final`] for the usual rule).
    pub fn from_v10(e: m::TaskStatusUpdateEvent, r#final: bool) -> Result<Self> {
        Ok(TaskStatusUpdateEvent {
            kind: StatusUpdateKind,
            task_id: e.task_id,
            context_id: e.context_id,
            status: e.status.try_into().map_err(|e| within("status", e))?,
            r#final,
            metadata: e.metadata,
        })
    }
}

impl TryFrom<m::TaskStatusUpdateEvent> for TaskStatusUpdateEvent {
    type Error = A2AError;
    /// `final` from [`is_final`] of the new state.
    fn try_from(e: m::TaskStatusUpdateEvent) -> Result<Self> {
        let r#final = is_final(e.status.state);
        Self::from_v10(e, r#final)
    }
}

impl From<TaskArtifactUpdateEvent> for m::TaskArtifactUpdateEvent {
    fn from(e: TaskArtifactUpdateEvent) -> Self {
        m::TaskArtifactUpdateEvent {
            task_id: e.task_id,
            context_id: e.context_id,
            artifact: e.artifact.into(),
            append: e.append.unwrap_or(false),
            last_chunk: e.last_chunk.unwrap_or(false),
            metadata: e.metadata,
        }
    }
}

impl From<m::TaskArtifactUpdateEvent> for TaskArtifactUpdateEvent {
    /// `append` / `lastChunk` are written only when true (absent and false mean the same).
    fn from(e: m::TaskArtifactUpdateEvent) -> Self {
        TaskArtifactUpdateEvent {
            kind: ArtifactUpdateKind,
            task_id: e.task_id,
            context_id: e.context_id,
            artifact: e.artifact.into(),
            append: e.append.then_some(true),
            last_chunk: e.last_chunk.then_some(true),
            metadata: e.metadata,
        }
    }
}

impl From<SendMessageResult> for m::SendMessageResponse {
    fn from(r: SendMessageResult) -> Self {
        match r {
            SendMessageResult::Task(t) => m::SendMessageResponse::Task(t.into()),
            SendMessageResult::Message(msg) => m::SendMessageResponse::Message(msg.into()),
        }
    }
}

impl TryFrom<m::SendMessageResponse> for SendMessageResult {
    type Error = A2AError;
    fn try_from(r: m::SendMessageResponse) -> Result<Self> {
        Ok(match r {
            m::SendMessageResponse::Task(t) => SendMessageResult::Task(t.try_into()?),
            m::SendMessageResponse::Message(msg) => SendMessageResult::Message(msg.try_into()?),
        })
    }
}

impl From<StreamResult> for m::StreamResponse {
    fn from(r: StreamResult) -> Self {
        match r {
            StreamResult::Task(t) => m::StreamResponse::Task(t.into()),
            StreamResult::Message(msg) => m::StreamResponse::Message(msg.into()),
            StreamResult::StatusUpdate(e) => m::StreamResponse::StatusUpdate(e.into()),
            StreamResult::ArtifactUpdate(e) => m::StreamResponse::ArtifactUpdate(e.into()),
        }
    }
}

impl StreamResult {
    /// The 0.3 stream result for a 1.0 event; `final` applies to a status update only.
    pub fn from_v10(r: m::StreamResponse, r#final: bool) -> Result<Self> {
        Ok(match r {
            m::StreamResponse::Task(t) => StreamResult::Task(t.try_into()?),
            m::StreamResponse::Message(msg) => StreamResult::Message(msg.try_into()?),
            m::StreamResponse::StatusUpdate(e) => {
                StreamResult::StatusUpdate(TaskStatusUpdateEvent::from_v10(e, r#final)?)
            }
            m::StreamResponse::ArtifactUpdate(e) => StreamResult::ArtifactUpdate(e.into()),
        })
    }
}

impl TryFrom<m::StreamResponse> for StreamResult {
    type Error = A2AError;
    /// A status update's `final` from [`is_final`].
    fn try_from(r: m::StreamResponse) -> Result<Self> {
        let r#final = match &r {
            m::StreamResponse::StatusUpdate(e) => is_final(e.status.state),
            _ => false,
        };
        Self::from_v10(r, r#final)
    }
}

// ---------------------------------------------------------------------------------------------
// Conversions: requests and push configuration
// ---------------------------------------------------------------------------------------------

impl From<MessageSendParams> for m::SendMessageRequest {
    /// `blocking` absent or true → `returnImmediately` false (the 0.3 SDK servers block
    /// unless `blocking` is explicitly false); `blocking: false` → `returnImmediately: true`.
    fn from(p: MessageSendParams) -> Self {
        m::SendMessageRequest {
            tenant: String::new(),
            message: p.message.into(),
            configuration: p.configuration.map(|c| m::SendMessageConfiguration {
                accepted_output_modes: c.accepted_output_modes,
                task_push_notification_config: c.push_notification_config.map(Into::into),
                history_length: c.history_length,
                return_immediately: c.blocking == Some(false),
            }),
            metadata: p.metadata,
        }
    }
}

impl TryFrom<m::SendMessageRequest> for MessageSendParams {
    type Error = A2AError;
    /// `tenant` is dropped. A configuration always states `blocking` explicitly, so no 0.3
    /// server has to guess its default; no configuration stays no configuration.
    fn try_from(r: m::SendMessageRequest) -> Result<Self> {
        Ok(MessageSendParams {
            message: r.message.try_into().map_err(|e| within("message", e))?,
            configuration: r.configuration.map(|c| MessageSendConfiguration {
                accepted_output_modes: c.accepted_output_modes,
                history_length: c.history_length,
                push_notification_config: c.task_push_notification_config.map(Into::into),
                blocking: Some(!c.return_immediately),
            }),
            metadata: r.metadata,
        })
    }
}

impl From<PushNotificationConfig> for m::TaskPushNotificationConfig {
    /// `schemes[]` → `scheme`: the first scheme is kept, any others are lost (1.0 has one).
    fn from(c: PushNotificationConfig) -> Self {
        m::TaskPushNotificationConfig {
            tenant: String::new(),
            id: c.id.unwrap_or_default(),
            task_id: String::new(),
            url: c.url,
            token: c.token.unwrap_or_default(),
            authentication: c.authentication.map(|a| m::AuthenticationInfo {
                scheme: a.schemes.into_iter().next().unwrap_or_default(),
                credentials: a.credentials.unwrap_or_default(),
            }),
        }
    }
}

impl From<m::TaskPushNotificationConfig> for PushNotificationConfig {
    /// `tenant` and `taskId` have no place in the nested 0.3 config and are dropped.
    fn from(c: m::TaskPushNotificationConfig) -> Self {
        PushNotificationConfig {
            id: opt(c.id),
            url: c.url,
            token: opt(c.token),
            authentication: c.authentication.map(|a| PushNotificationAuthenticationInfo {
                schemes: vec![a.scheme],
                credentials: opt(a.credentials),
            }),
        }
    }
}

impl From<TaskPushNotificationConfig> for m::TaskPushNotificationConfig {
    /// A config set without an id gets the task id as its id: the 0.3 SDKs' convention,
    /// which `tasks/pushNotificationConfig/get` without a config id relies on.
    fn from(t: TaskPushNotificationConfig) -> Self {
        let mut c = m::TaskPushNotificationConfig::from(t.push_notification_config);
        if c.id.is_empty() {
            c.id.clone_from(&t.task_id);
        }
        c.task_id = t.task_id;
        c
    }
}

impl From<m::TaskPushNotificationConfig> for TaskPushNotificationConfig {
    fn from(c: m::TaskPushNotificationConfig) -> Self {
        TaskPushNotificationConfig { task_id: c.task_id.clone(), push_notification_config: c.into() }
    }
}

/// The 0.3 `tasks/pushNotificationConfig/list` result (a bare array). `nextPageToken` is
/// dropped: 0.3 has no pagination, so a server answering 0.3 should list everything.
pub fn push_configs_to_v03(r: m::ListTaskPushNotificationConfigsResponse) -> Vec<TaskPushNotificationConfig> {
    r.configs.into_iter().map(Into::into).collect()
}

/// A 0.3 `tasks/pushNotificationConfig/list` result as the 1.0 response (no next page).
pub fn push_configs_to_v10(configs: Vec<TaskPushNotificationConfig>) -> m::ListTaskPushNotificationConfigsResponse {
    m::ListTaskPushNotificationConfigsResponse {
        configs: configs.into_iter().map(Into::into).collect(),
        next_page_token: String::new(),
    }
}

impl From<TaskQueryParams> for m::GetTaskRequest {
    /// `metadata` is dropped: GetTaskRequest has none.
    fn from(p: TaskQueryParams) -> Self {
        m::GetTaskRequest { tenant: String::new(), id: p.id, history_length: p.history_length }
    }
}

impl From<m::GetTaskRequest> for TaskQueryParams {
    fn from(r: m::GetTaskRequest) -> Self {
        TaskQueryParams { id: r.id, history_length: r.history_length, metadata: None }
    }
}

impl From<TaskIdParams> for m::CancelTaskRequest {
    fn from(p: TaskIdParams) -> Self {
        m::CancelTaskRequest { tenant: String::new(), id: p.id, metadata: p.metadata }
    }
}

impl From<m::CancelTaskRequest> for TaskIdParams {
    fn from(r: m::CancelTaskRequest) -> Self {
        TaskIdParams { id: r.id, metadata: r.metadata }
    }
}

impl From<TaskIdParams> for m::SubscribeToTaskRequest {
    /// `metadata` is dropped: SubscribeToTaskRequest has none.
    fn from(p: TaskIdParams) -> Self {
        m::SubscribeToTaskRequest { tenant: String::new(), id: p.id }
    }
}

impl From<m::SubscribeToTaskRequest> for TaskIdParams {
    fn from(r: m::SubscribeToTaskRequest) -> Self {
        TaskIdParams { id: r.id, metadata: None }
    }
}

impl From<GetTaskPushNotificationConfigParams> for m::GetTaskPushNotificationConfigRequest {
    /// No config id → the task id (see the set conversion); `metadata` is dropped.
    fn from(p: GetTaskPushNotificationConfigParams) -> Self {
        let id = p.push_notification_config_id.filter(|s| !s.is_empty()).unwrap_or_else(|| p.id.clone());
        m::TaskPushNotificationConfigRef { tenant: String::new(), task_id: p.id, id }
    }
}

impl From<m::GetTaskPushNotificationConfigRequest> for GetTaskPushNotificationConfigParams {
    fn from(r: m::GetTaskPushNotificationConfigRequest) -> Self {
        GetTaskPushNotificationConfigParams { id: r.task_id, push_notification_config_id: opt(r.id), metadata: None }
    }
}

impl From<DeleteTaskPushNotificationConfigParams> for m::DeleteTaskPushNotificationConfigRequest {
    /// `metadata` is dropped.
    fn from(p: DeleteTaskPushNotificationConfigParams) -> Self {
        m::TaskPushNotificationConfigRef { tenant: String::new(), task_id: p.id, id: p.push_notification_config_id }
    }
}

impl From<m::DeleteTaskPushNotificationConfigRequest> for DeleteTaskPushNotificationConfigParams {
    fn from(r: m::DeleteTaskPushNotificationConfigRequest) -> Self {
        DeleteTaskPushNotificationConfigParams { id: r.task_id, push_notification_config_id: r.id, metadata: None }
    }
}

impl From<ListTaskPushNotificationConfigParams> for m::ListTaskPushNotificationConfigsRequest {
    /// `metadata` is dropped.
    fn from(p: ListTaskPushNotificationConfigParams) -> Self {
        m::ListTaskPushNotificationConfigsRequest {
            tenant: String::new(),
            task_id: p.id,
            page_size: 0,
            page_token: String::new(),
        }
    }
}

impl From<m::ListTaskPushNotificationConfigsRequest> for ListTaskPushNotificationConfigParams {
    /// `pageSize` / `pageToken` are dropped (0.3 lists everything).
    fn from(r: m::ListTaskPushNotificationConfigsRequest) -> Self {
        ListTaskPushNotificationConfigParams { id: r.task_id, metadata: None }
    }
}

// ---------------------------------------------------------------------------------------------
// Conversions: agent card
// ---------------------------------------------------------------------------------------------

/// `Major.Minor` of a version string (`0.3.0` → `0.3`): what 1.0 interfaces declare.
fn major_minor(version: &str) -> String {
    version.split('.').take(2).collect::<Vec<_>>().join(".")
}

fn is_v03(protocol_version: &str) -> bool {
    protocol_version == "0.3" || protocol_version.starts_with("0.3.")
}

impl TryFrom<SecurityScheme> for m::SecurityScheme {
    type Error = A2AError;
    /// OAuth2: 1.0 holds exactly one flow. When a 0.3 scheme declares several, the first present
    /// in the order authorizationCode, clientCredentials, implicit, password (the 0.3 schema's
    /// order, which also puts the two flows 1.0 does not deprecate first) is kept, the others
    /// are dropped. A scheme with no flow at all cannot be converted.
    fn try_from(s: SecurityScheme) -> Result<Self> {
        Ok(match s {
            SecurityScheme::ApiKey(s) => m::SecurityScheme::ApiKey(m::ApiKeySecurityScheme {
                description: s.description.unwrap_or_default(),
                location: s.location,
                name: s.name,
            }),
            SecurityScheme::Http(s) => m::SecurityScheme::HttpAuth(m::HttpAuthSecurityScheme {
                description: s.description.unwrap_or_default(),
                scheme: s.scheme,
                bearer_format: s.bearer_format.unwrap_or_default(),
            }),
            SecurityScheme::OAuth2(s) => {
                let f = s.flows;
                let flows = if let Some(f) = f.authorization_code {
                    m::OAuthFlows::AuthorizationCode(m::AuthorizationCodeOAuthFlow {
                        authorization_url: f.authorization_url,
                        token_url: f.token_url,
                        refresh_url: f.refresh_url.unwrap_or_default(),
                        scopes: f.scopes,
                        pkce_required: false,
                    })
                } else if let Some(f) = f.client_credentials {
                    m::OAuthFlows::ClientCredentials(m::ClientCredentialsOAuthFlow {
                        token_url: f.token_url,
                        refresh_url: f.refresh_url.unwrap_or_default(),
                        scopes: f.scopes,
                    })
                } else if let Some(f) = f.implicit {
                    m::OAuthFlows::Implicit(m::ImplicitOAuthFlow {
                        authorization_url: f.authorization_url,
                        refresh_url: f.refresh_url.unwrap_or_default(),
                        scopes: f.scopes,
                    })
                } else if let Some(f) = f.password {
                    m::OAuthFlows::Password(m::PasswordOAuthFlow {
                        token_url: f.token_url,
                        refresh_url: f.refresh_url.unwrap_or_default(),
                        scopes: f.scopes,
                    })
                } else {
                    return Err(A2AError::invalid_field("flows", "declares no flow; 1.0 needs exactly one"));
                };
                m::SecurityScheme::OAuth2(m::OAuth2SecurityScheme {
                    description: s.description.unwrap_or_default(),
                    flows,
                    oauth2_metadata_url: s.oauth2_metadata_url.unwrap_or_default(),
                })
            }
            SecurityScheme::OpenIdConnect(s) => m::SecurityScheme::OpenIdConnect(m::OpenIdConnectSecurityScheme {
                description: s.description.unwrap_or_default(),
                open_id_connect_url: s.open_id_connect_url,
            }),
            SecurityScheme::MutualTls(s) => m::SecurityScheme::MutualTls(m::MutualTlsSecurityScheme {
                description: s.description.unwrap_or_default(),
            }),
        })
    }
}

impl From<m::SecurityScheme> for SecurityScheme {
    /// Losses: `pkceRequired` (authorization code) and the `deviceCode` flow have no 0.3 form;
    /// a deviceCode-only scheme becomes an oauth2 scheme with empty `flows`.
    fn from(s: m::SecurityScheme) -> Self {
        match s {
            m::SecurityScheme::ApiKey(s) => SecurityScheme::ApiKey(ApiKeySecurityScheme {
                description: opt(s.description),
                location: s.location,
                name: s.name,
            }),
            m::SecurityScheme::HttpAuth(s) => SecurityScheme::Http(HttpAuthSecurityScheme {
                description: opt(s.description),
                scheme: s.scheme,
                bearer_format: opt(s.bearer_format),
            }),
            m::SecurityScheme::OAuth2(s) => {
                let mut flows = OAuthFlows::default();
                match s.flows {
                    m::OAuthFlows::AuthorizationCode(f) => {
                        flows.authorization_code = Some(AuthorizationCodeOAuthFlow {
                            authorization_url: f.authorization_url,
                            token_url: f.token_url,
                            refresh_url: opt(f.refresh_url),
                            scopes: f.scopes,
                        })
                    }
                    m::OAuthFlows::ClientCredentials(f) => {
                        flows.client_credentials = Some(ClientCredentialsOAuthFlow {
                            token_url: f.token_url,
                            refresh_url: opt(f.refresh_url),
                            scopes: f.scopes,
                        })
                    }
                    m::OAuthFlows::Implicit(f) => {
                        flows.implicit = Some(ImplicitOAuthFlow {
                            authorization_url: f.authorization_url,
                            refresh_url: opt(f.refresh_url),
                            scopes: f.scopes,
                        })
                    }
                    m::OAuthFlows::Password(f) => {
                        flows.password = Some(PasswordOAuthFlow {
                            token_url: f.token_url,
                            refresh_url: opt(f.refresh_url),
                            scopes: f.scopes,
                        })
                    }
                    m::OAuthFlows::DeviceCode(_) => {}
                }
                SecurityScheme::OAuth2(OAuth2SecurityScheme {
                    description: opt(s.description),
                    flows,
                    oauth2_metadata_url: opt(s.oauth2_metadata_url),
                })
            }
            m::SecurityScheme::OpenIdConnect(s) => SecurityScheme::OpenIdConnect(OpenIdConnectSecurityScheme {
                description: opt(s.description),
                open_id_connect_url: s.open_id_connect_url,
            }),
            m::SecurityScheme::MutualTls(s) => {
                SecurityScheme::MutualTls(MutualTlsSecurityScheme { description: opt(s.description) })
            }
        }
    }
}

fn requirement_to_v10(r: SecurityRequirement) -> m::SecurityRequirement {
    m::SecurityRequirement { schemes: r.into_iter().map(|(k, list)| (k, m::StringList { list })).collect() }
}

fn requirement_to_v03(r: m::SecurityRequirement) -> SecurityRequirement {
    r.schemes.into_iter().map(|(k, v)| (k, v.list)).collect()
}

impl From<AgentExtension> for m::AgentExtension {
    fn from(e: AgentExtension) -> Self {
        m::AgentExtension {
            uri: e.uri,
            description: e.description.unwrap_or_default(),
            required: e.required.unwrap_or(false),
            params: e.params,
        }
    }
}

impl From<m::AgentExtension> for AgentExtension {
    fn from(e: m::AgentExtension) -> Self {
        AgentExtension {
            uri: e.uri,
            description: opt(e.description),
            required: e.required.then_some(true),
            params: e.params,
        }
    }
}

impl From<AgentSkill> for m::AgentSkill {
    fn from(s: AgentSkill) -> Self {
        m::AgentSkill {
            id: s.id,
            name: s.name,
            description: s.description,
            tags: s.tags,
            examples: s.examples,
            input_modes: s.input_modes,
            output_modes: s.output_modes,
            security_requirements: s.security.into_iter().map(requirement_to_v10).collect(),
        }
    }
}

impl From<m::AgentSkill> for AgentSkill {
    fn from(s: m::AgentSkill) -> Self {
        AgentSkill {
            id: s.id,
            name: s.name,
            description: s.description,
            tags: s.tags,
            examples: s.examples,
            input_modes: s.input_modes,
            output_modes: s.output_modes,
            security: s.security_requirements.into_iter().map(requirement_to_v03).collect(),
        }
    }
}

impl TryFrom<AgentCard> for m::AgentCard {
    type Error = A2AError;
    /// `url` + `preferredTransport` (default JSONRPC) become the first interface, then each
    /// `additionalInterfaces` entry not equal to it, all with protocolVersion = Major.Minor of
    /// the card's `protocolVersion` (`0.3`). `supportsAuthenticatedExtendedCard` →
    /// `capabilities.extendedAgentCard`; `stateTransitionHistory` is dropped; `security` →
    /// `securityRequirements`. Note: 1.0 requires ≥1 skill and input/output mode, 0.3 does not;
    /// such a card converts, but fails 1.0 validation.
    fn try_from(c: AgentCard) -> Result<Self> {
        let version = major_minor(&c.protocol_version);
        let mut interfaces = vec![m::AgentInterface {
            url: c.url,
            protocol_binding: c.preferred_transport.unwrap_or_else(|| m::binding::JSONRPC.to_owned()),
            tenant: String::new(),
            protocol_version: version.clone(),
        }];
        for i in c.additional_interfaces {
            if !interfaces.iter().any(|have| have.url == i.url && have.protocol_binding == i.transport) {
                interfaces.push(m::AgentInterface {
                    url: i.url,
                    protocol_binding: i.transport,
                    tenant: String::new(),
                    protocol_version: version.clone(),
                });
            }
        }
        let security_schemes = c
            .security_schemes
            .into_iter()
            .map(|(name, s)| {
                let s = m::SecurityScheme::try_from(s).map_err(|e| within(&format!("securitySchemes.{name}"), e))?;
                Ok((name, s))
            })
            .collect::<Result<_>>()?;
        Ok(m::AgentCard {
            name: c.name,
            description: c.description,
            supported_interfaces: interfaces,
            provider: c.provider,
            version: c.version,
            documentation_url: c.documentation_url,
            capabilities: m::AgentCapabilities {
                streaming: c.capabilities.streaming,
                push_notifications: c.capabilities.push_notifications,
                extensions: c.capabilities.extensions.into_iter().map(Into::into).collect(),
                extended_agent_card: c.supports_authenticated_extended_card,
            },
            security_schemes,
            security_requirements: c.security.into_iter().map(requirement_to_v10).collect(),
            default_input_modes: c.default_input_modes,
            default_output_modes: c.default_output_modes,
            skills: c.skills.into_iter().map(Into::into).collect(),
            signatures: c.signatures,
            icon_url: c.icon_url,
        })
    }
}

impl TryFrom<m::AgentCard> for AgentCard {
    type Error = A2AError;
    /// Only interfaces declaring protocolVersion 0.3 are usable by a 0.3 client: the first
    /// becomes `url` + `preferredTransport` (always written); when there are several, all of
    /// them (the first included, as the 0.3 schema recommends) are `additionalInterfaces`.
    /// Interfaces of other versions and every `tenant` are dropped; a card with no 0.3
    /// interface is an error. `protocolVersion` is written as [`PROTOCOL_VERSION`].
    /// `signatures` are copied, though they sign the 1.0 form and will not verify over this one.
    fn try_from(c: m::AgentCard) -> Result<Self> {
        let v03: Vec<&m::AgentInterface> =
            c.supported_interfaces.iter().filter(|i| is_v03(&i.protocol_version)).collect();
        let Some(first) = v03.first() else {
            return Err(A2AError::invalid_field(
                "supportedInterfaces",
                "no interface declares protocolVersion 0.3, so there is no 0.3 endpoint to describe",
            ));
        };
        let (url, preferred_transport) = (first.url.clone(), Some(first.protocol_binding.clone()));
        let additional_interfaces = if v03.len() > 1 {
            v03.iter().map(|i| AgentInterface { url: i.url.clone(), transport: i.protocol_binding.clone() }).collect()
        } else {
            Vec::new()
        };
        Ok(AgentCard {
            protocol_version: PROTOCOL_VERSION.to_owned(),
            name: c.name,
            description: c.description,
            url,
            preferred_transport,
            additional_interfaces,
            icon_url: c.icon_url,
            provider: c.provider,
            version: c.version,
            documentation_url: c.documentation_url,
            capabilities: AgentCapabilities {
                streaming: c.capabilities.streaming,
                push_notifications: c.capabilities.push_notifications,
                state_transition_history: None,
                extensions: c.capabilities.extensions.into_iter().map(Into::into).collect(),
            },
            security_schemes: c.security_schemes.into_iter().map(|(k, s)| (k, s.into())).collect(),
            security: c.security_requirements.into_iter().map(requirement_to_v03).collect(),
            default_input_modes: c.default_input_modes,
            default_output_modes: c.default_output_modes,
            skills: c.skills.into_iter().map(Into::into).collect(),
            supports_authenticated_extended_card: c.capabilities.extended_agent_card,
            signatures: c.signatures,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// JSON conversion by type name (vector runners in every language)
// ---------------------------------------------------------------------------------------------

/// Every conversion [`to_v10`] / [`to_v03`] know. The name is the 0.3 type when the 1.0 type
/// has the same name, else `<0.3 type>/<1.0 type>`. `TaskState` and `Role` take JSON strings;
/// the rest take objects.
pub const TYPE_NAMES: &[&str] = &[
    "TaskState",
    "Role",
    "Part",
    "Message",
    "TaskStatus",
    "Artifact",
    "Task",
    "TaskStatusUpdateEvent",
    "TaskArtifactUpdateEvent",
    "SendMessageResult/SendMessageResponse",
    STREAM_RESULT,
    SEND_PARAMS,
    "TaskQueryParams/GetTaskRequest",
    "TaskIdParams/CancelTaskRequest",
    "TaskIdParams/SubscribeToTaskRequest",
    "PushNotificationConfig/TaskPushNotificationConfig",
    "TaskPushNotificationConfig",
    "GetTaskPushNotificationConfigParams/GetTaskPushNotificationConfigRequest",
    "DeleteTaskPushNotificationConfigParams/DeleteTaskPushNotificationConfigRequest",
    "ListTaskPushNotificationConfigParams/ListTaskPushNotificationConfigsRequest",
    "SecurityScheme",
    "AgentCard",
];

/// InvalidRequest, so a runner can tell "no such conversion" from invalid content.
fn unknown_type(name: &str) -> A2AError {
    A2AError::invalid_request(format!("unknown 0.3 conversion type {name:?}"))
}

fn enum_value<T: DeserializeOwned>(value: Value) -> Result<T> {
    serde_json::from_value(value).map_err(|e| A2AError::invalid_field("", e.to_string()))
}

/// Reads 0.3 JSON as `A` (schema REQUIRED members and [`Validate`]), converts, writes 1.0 JSON.
fn up<A: DeserializeOwned + Validate, B: Serialize>(
    value: Value,
    convert: impl FnOnce(A) -> Result<B>,
) -> Result<Value> {
    Ok(to_value(&convert(parse_value::<A>(value)?)?))
}

/// Reads 1.0 JSON as `B` (validated as the 1.0 models are), converts, writes 0.3 JSON.
fn down<B: DeserializeOwned + Validate, A: Serialize>(
    value: Value,
    convert: impl FnOnce(B) -> Result<A>,
) -> Result<Value> {
    Ok(to_value(&convert(parse_value::<B>(value)?)?))
}

/// Converts 0.3 JSON of the named type ([`TYPE_NAMES`]) to its 1.0 JSON. Used by the v03
/// vector runners of every language. Invalid input is InvalidParams naming the field.
pub fn to_v10(type_name: &str, v03: Value) -> Result<Value> {
    match type_name {
        "TaskState" => Ok(to_value(&m::TaskState::from(enum_value::<TaskState>(v03)?))),
        "Role" => Ok(to_value(&m::Role::from(enum_value::<Role>(v03)?))),
        "Part" => up(v03, |x: Part| Ok(m::Part::from(x))),
        "Message" => up(v03, |x: Message| Ok(m::Message::from(x))),
        "TaskStatus" => up(v03, |x: TaskStatus| Ok(m::TaskStatus::from(x))),
        "Artifact" => up(v03, |x: Artifact| Ok(m::Artifact::from(x))),
        "Task" => up(v03, |x: Task| Ok(m::Task::from(x))),
        "TaskStatusUpdateEvent" => up(v03, |x: TaskStatusUpdateEvent| Ok(m::TaskStatusUpdateEvent::from(x))),
        "TaskArtifactUpdateEvent" => up(v03, |x: TaskArtifactUpdateEvent| Ok(m::TaskArtifactUpdateEvent::from(x))),
        "SendMessageResult/SendMessageResponse" => up(v03, |x: SendMessageResult| Ok(m::SendMessageResponse::from(x))),
        STREAM_RESULT => up(v03, |x: StreamResult| Ok(m::StreamResponse::from(x))),
        SEND_PARAMS => up(v03, |x: MessageSendParams| Ok(m::SendMessageRequest::from(x))),
        "TaskQueryParams/GetTaskRequest" => up(v03, |x: TaskQueryParams| Ok(m::GetTaskRequest::from(x))),
        "TaskIdParams/CancelTaskRequest" => up(v03, |x: TaskIdParams| Ok(m::CancelTaskRequest::from(x))),
        "TaskIdParams/SubscribeToTaskRequest" => up(v03, |x: TaskIdParams| Ok(m::SubscribeToTaskRequest::from(x))),
        "PushNotificationConfig/TaskPushNotificationConfig" => {
            up(v03, |x: PushNotificationConfig| Ok(m::TaskPushNotificationConfig::from(x)))
        }
        "TaskPushNotificationConfig" => {
            up(v03, |x: TaskPushNotificationConfig| Ok(m::TaskPushNotificationConfig::from(x)))
        }
        "GetTaskPushNotificationConfigParams/GetTaskPushNotificationConfigRequest" => {
            up(v03, |x: GetTaskPushNotificationConfigParams| Ok(m::GetTaskPushNotificationConfigRequest::from(x)))
        }
        "DeleteTaskPushNotificationConfigParams/DeleteTaskPushNotificationConfigRequest" => {
            up(v03, |x: DeleteTaskPushNotificationConfigParams| Ok(m::DeleteTaskPushNotificationConfigRequest::from(x)))
        }
        "ListTaskPushNotificationConfigParams/ListTaskPushNotificationConfigsRequest" => {
            up(v03, |x: ListTaskPushNotificationConfigParams| Ok(m::ListTaskPushNotificationConfigsRequest::from(x)))
        }
        "SecurityScheme" => up(v03, |x: SecurityScheme| m::SecurityScheme::try_from(x)),
        "AgentCard" => up(v03, |x: AgentCard| m::AgentCard::try_from(x)),
        other => Err(unknown_type(other)),
    }
}

/// Converts 1.0 JSON of the named type ([`TYPE_NAMES`]) to its 0.3 JSON. A status update's
/// `final` comes from [`is_final`]. Used by the v03 vector runners of every language.
pub fn to_v03(type_name: &str, v10: Value) -> Result<Value> {
    match type_name {
        "TaskState" => Ok(to_value(&TaskState::from(enum_value::<m::TaskState>(v10)?))),
        "Role" => Ok(to_value(&Role::try_from(enum_value::<m::Role>(v10)?)?)),
        "Part" => down(v10, |x: m::Part| Ok(Part::from(x))),
        "Message" => down(v10, |x: m::Message| Message::try_from(x)),
        "TaskStatus" => down(v10, |x: m::TaskStatus| TaskStatus::try_from(x)),
        "Artifact" => down(v10, |x: m::Artifact| Ok(Artifact::from(x))),
        "Task" => down(v10, |x: m::Task| Task::try_from(x)),
        "TaskStatusUpdateEvent" => down(v10, |x: m::TaskStatusUpdateEvent| TaskStatusUpdateEvent::try_from(x)),
        "TaskArtifactUpdateEvent" => down(v10, |x: m::TaskArtifactUpdateEvent| Ok(TaskArtifactUpdateEvent::from(x))),
        "SendMessageResult/SendMessageResponse" => {
            down(v10, |x: m::SendMessageResponse| SendMessageResult::try_from(x))
        }
        STREAM_RESULT => down(v10, |x: m::StreamResponse| StreamResult::try_from(x)),
        SEND_PARAMS => down(v10, |x: m::SendMessageRequest| MessageSendParams::try_from(x)),
        "TaskQueryParams/GetTaskRequest" => down(v10, |x: m::GetTaskRequest| Ok(TaskQueryParams::from(x))),
        "TaskIdParams/CancelTaskRequest" => down(v10, |x: m::CancelTaskRequest| Ok(TaskIdParams::from(x))),
        "TaskIdParams/SubscribeToTaskRequest" => down(v10, |x: m::SubscribeToTaskRequest| Ok(TaskIdParams::from(x))),
        "PushNotificationConfig/TaskPushNotificationConfig" => {
            down(v10, |x: m::TaskPushNotificationConfig| Ok(PushNotificationConfig::from(x)))
        }
        "TaskPushNotificationConfig" => {
            down(v10, |x: m::TaskPushNotificationConfig| Ok(TaskPushNotificationConfig::from(x)))
        }
        "GetTaskPushNotificationConfigParams/GetTaskPushNotificationConfigRequest" => {
            down(v10, |x: m::GetTaskPushNotificationConfigRequest| Ok(GetTaskPushNotificationConfigParams::from(x)))
        }
        "DeleteTaskPushNotificationConfigParams/DeleteTaskPushNotificationConfigRequest" => {
            down(v10, |x: m::DeleteTaskPushNotificationConfigRequest| {
                Ok(DeleteTaskPushNotificationConfigParams::from(x))
            })
        }
        "ListTaskPushNotificationConfigParams/ListTaskPushNotificationConfigsRequest" => {
            down(v10, |x: m::ListTaskPushNotificationConfigsRequest| Ok(ListTaskPushNotificationConfigParams::from(x)))
        }
        "SecurityScheme" => down(v10, |x: m::SecurityScheme| Ok(SecurityScheme::from(x))),
        "AgentCard" => down(v10, |x: m::AgentCard| AgentCard::try_from(x)),
        other => Err(unknown_type(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use serde_json::json;

    fn field_of(err: &A2AError) -> &str {
        err.violations.first().map(|v| v.field.as_str()).unwrap_or("<none>")
    }

    fn v03_err<T: DeserializeOwned + Validate + std::fmt::Debug>(value: Value) -> String {
        let err = parse_value::<T>(value).unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidParams, "{err}");
        field_of(&err).to_owned()
    }

    #[test]
    fn spec_style_message_send_params_convert() {
        // Verbatim from the 0.3 spec (which leaves out the message's `kind`).
        let params = json!({
            "message": {"role": "user", "parts": [{"kind": "text", "text": "tell me a joke"}],
                        "messageId": "9229e770-767c-417b-a0b0-f0741243c589"},
            "metadata": {}
        });
        let v10 = to_v10(SEND_PARAMS, params).unwrap();
        assert_eq!(
            v10,
            json!({"message": {"messageId": "9229e770-767c-417b-a0b0-f0741243c589", "role": "ROLE_USER",
                               "parts": [{"text": "tell me a joke"}]}, "metadata": {}})
        );
    }

    #[test]
    fn parts_map_both_ways() {
        let cases = [
            (json!({"kind": "text", "text": "hi"}), json!({"text": "hi"})),
            (
                json!({"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain", "name": "a.txt"}}),
                json!({"raw": "aGk=", "filename": "a.txt", "mediaType": "text/plain"}),
            ),
            (
                json!({"kind": "file", "file": {"uri": "https://x.example/a.pdf", "mimeType": "application/pdf"}, "metadata": {"k": 1}}),
                json!({"url": "https://x.example/a.pdf", "mediaType": "application/pdf", "metadata": {"k": 1}}),
            ),
            (json!({"kind": "data", "data": {"a": [1, 2]}}), json!({"data": {"a": [1, 2]}})),
            (
                json!({"kind": "data", "data": {"value": [1, 2]}, "metadata": {"data_part_compat": true}}),
                json!({"data": [1, 2]}),
            ),
            (
                json!({"kind": "text", "text": "x", "metadata": {"a2a_native_part": {"filename": "n.md", "mediaType": "text/markdown"}, "o": 1}}),
                json!({"text": "x", "filename": "n.md", "mediaType": "text/markdown", "metadata": {"o": 1}}),
            ),
            (
                json!({"kind": "data", "data": {"value": null}, "metadata": {"data_part_compat": true, "a2a_native_part": {"mediaType": "application/json"}}}),
                json!({"data": null, "mediaType": "application/json"}),
            ),
        ];
        for (v03, v10) in cases {
            assert_eq!(to_v10("Part", v03.clone()).unwrap(), v10, "to 1.0: {v03}");
            assert_eq!(to_v03("Part", v10.clone()).unwrap(), v03, "to 0.3: {v10}");
        }
    }

    #[test]
    fn foreign_uses_of_reserved_keys_are_left_alone() {
        // Not our shape: kept as plain metadata.
        let odd = json!({"kind": "text", "text": "x", "metadata": {"a2a_native_part": {"other": 1}}});
        assert_eq!(to_v10("Part", odd).unwrap(), json!({"text": "x", "metadata": {"a2a_native_part": {"other": 1}}}));
        let not_wrapped =
            json!({"kind": "data", "data": {"value": 1, "more": 2}, "metadata": {"data_part_compat": true}});
        assert_eq!(
            to_v10("Part", not_wrapped).unwrap(),
            json!({"data": {"value": 1, "more": 2}, "metadata": {"data_part_compat": true}})
        );
    }

    #[test]
    fn required_members_and_values_are_named() {
        let msg = |m: Value| json!({"message": m});
        let good =
            json!({"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "x"}]});
        let with = |key: &str, v: Value| {
            let mut m = good.clone();
            m[key] = v;
            msg(m)
        };
        let without = |key: &str| {
            let mut m = good.clone();
            m.as_object_mut().unwrap().remove(key);
            msg(m)
        };
        assert!(parse_value::<MessageSendParams>(msg(good.clone())).is_ok());
        assert_eq!(v03_err::<MessageSendParams>(json!({})), "message");
        assert!(parse_value::<MessageSendParams>(without("kind")).is_ok(), "kind is implied");
        assert_eq!(v03_err::<MessageSendParams>(with("kind", json!("task"))), "message.kind");
        assert_eq!(v03_err::<MessageSendParams>(without("messageId")), "message.messageId");
        assert_eq!(v03_err::<MessageSendParams>(with("messageId", json!(""))), "message.messageId");
        assert_eq!(v03_err::<MessageSendParams>(with("role", json!("ROLE_USER"))), "message.role");
        assert_eq!(v03_err::<MessageSendParams>(with("parts", json!([]))), "message.parts");
        assert!(parse_value::<MessageSendParams>(with("parts", json!([{"text": "x"}]))).is_ok(), "kind is implied");
        assert_eq!(
            v03_err::<MessageSendParams>(with("parts", json!([{"text": "x", "data": {}}]))),
            "message.parts[0].kind"
        );
        assert_eq!(v03_err::<MessageSendParams>(with("parts", json!([{"kind": "image"}]))), "message.parts[0]");
        assert_eq!(v03_err::<MessageSendParams>(with("parts", json!([{"kind": "text"}]))), "message.parts[0].text");
        assert_eq!(
            v03_err::<MessageSendParams>(with("parts", json!([{"kind": "data", "data": [1]}]))),
            "message.parts[0].data"
        );
        assert_eq!(
            v03_err::<MessageSendParams>(with("parts", json!([{"kind": "file", "file": {"bytes": "***"}}]))),
            "message.parts[0].file.bytes"
        );
        assert_eq!(
            v03_err::<MessageSendParams>(with("parts", json!([{"kind": "file", "file": {"bytes": "", "uri": "u"}}]))),
            "message.parts[0].file"
        );
        assert_eq!(
            v03_err::<MessageSendParams>(with("parts", json!([{"kind": "file", "file": {"uri": ""}}]))),
            "message.parts[0].file.uri"
        );
        let task = json!({"kind": "task", "id": "t", "contextId": "c", "status": {"state": "done"}});
        assert_eq!(v03_err::<Task>(task), "status.state");
        assert_eq!(v03_err::<Task>(json!({"kind": "task", "id": "t", "status": {"state": "working"}})), "contextId");
        let bad_ts = json!({"kind": "task", "id": "t", "contextId": "c", "status": {"state": "working", "timestamp": "yesterday"}});
        assert_eq!(v03_err::<Task>(bad_ts), "status.timestamp");
    }

    #[test]
    fn results_dispatch_on_kind() {
        let ev = json!({"kind": "status-update", "taskId": "t", "contextId": "c", "final": true, "status": {"state": "completed"}});
        assert!(matches!(parse_value::<StreamResult>(ev).unwrap(), StreamResult::StatusUpdate(e) if e.r#final));
        assert_eq!(v03_err::<StreamResult>(json!({"taskId": "t"})), "kind");
        assert_eq!(
            v03_err::<StreamResult>(
                json!({"kind": "status-update", "taskId": "t", "contextId": "c", "status": {"state": "working"}})
            ),
            "final"
        );
        assert_eq!(
            v03_err::<StreamResult>(
                json!({"kind": "status-update", "taskId": "t", "contextId": "c", "final": false, "status": {}})
            ),
            "status.state"
        );
        assert_eq!(v03_err::<SendMessageResult>(json!({"kind": "status-update"})), "");
        let msg =
            json!({"kind": "message", "messageId": "m", "role": "agent", "parts": [{"kind": "text", "text": "hi"}]});
        assert_eq!(to_v10("SendMessageResult/SendMessageResponse", msg).unwrap()["message"]["role"], "ROLE_AGENT");
    }

    #[test]
    fn final_follows_the_state_unless_given() {
        use m::TaskState as S;
        let finals: Vec<S> = S::ALL.iter().copied().filter(|s| is_final(*s)).collect();
        assert_eq!(finals, [S::Completed, S::Failed, S::Canceled, S::InputRequired, S::Rejected]);
        let ev = m::TaskStatusUpdateEvent {
            task_id: "t".into(),
            context_id: "c".into(),
            status: m::TaskStatus { state: S::Working, message: None, timestamp: None },
            metadata: None,
        };
        assert!(!TaskStatusUpdateEvent::try_from(ev.clone()).unwrap().r#final);
        assert!(TaskStatusUpdateEvent::from_v10(ev.clone(), true).unwrap().r#final);
        let streamed = StreamResult::from_v10(m::StreamResponse::StatusUpdate(ev), true).unwrap();
        assert_eq!(to_value(&streamed)["final"], true);
    }

    #[test]
    fn blocking_maps_to_return_immediately() {
        let params = |config: Value| {
            json!({"message": {"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "x"}]},
                   "configuration": config})
        };
        let ri = |config: Value| {
            to_v10(SEND_PARAMS, params(config)).unwrap()["configuration"].get("returnImmediately").cloned()
        };
        assert_eq!(ri(json!({})), None);
        assert_eq!(ri(json!({"blocking": true})), None);
        assert_eq!(ri(json!({"blocking": false})), Some(json!(true)));
        let back = to_v03(
            SEND_PARAMS,
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]},
                                              "configuration": {"historyLength": 2}}),
        )
        .unwrap();
        assert_eq!(back["configuration"], json!({"historyLength": 2, "blocking": true}));
        let none =
            to_v03(SEND_PARAMS, json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}}))
                .unwrap();
        assert!(none.get("configuration").is_none());
    }

    #[test]
    fn push_config_ids_and_schemes() {
        let set = json!({"taskId": "t1", "pushNotificationConfig": {"url": "https://h.example/cb",
                          "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "tok"}}});
        assert_eq!(
            to_v10("TaskPushNotificationConfig", set).unwrap(),
            json!({"id": "t1", "taskId": "t1", "url": "https://h.example/cb",
                   "authentication": {"scheme": "Bearer", "credentials": "tok"}})
        );
        let get = to_v10(
            "GetTaskPushNotificationConfigParams/GetTaskPushNotificationConfigRequest",
            json!({"id": "t1", "metadata": {"x": 1}}),
        )
        .unwrap();
        assert_eq!(get, json!({"taskId": "t1", "id": "t1"}));
        let bad = json!({"taskId": "t1", "pushNotificationConfig": {"url": "u", "authentication": {"schemes": []}}});
        assert_eq!(v03_err::<TaskPushNotificationConfig>(bad), "pushNotificationConfig.authentication.schemes");
    }

    fn card_v03() -> Value {
        json!({
            "protocolVersion": "0.3.0", "name": "A", "description": "d", "url": "https://a.example/rpc",
            "additionalInterfaces": [{"url": "https://a.example/rpc", "transport": "JSONRPC"},
                                     {"url": "https://a.example/rest", "transport": "HTTP+JSON"}],
            "version": "1", "capabilities": {"streaming": true, "stateTransitionHistory": true},
            "securitySchemes": {
                "o": {"type": "oauth2", "flows": {
                    "password": {"tokenUrl": "https://id.example/t", "scopes": {}},
                    "clientCredentials": {"tokenUrl": "https://id.example/t", "scopes": {"r": "read"}}}},
                "k": {"type": "apiKey", "in": "header", "name": "X-Key"}
            },
            "security": [{"o": ["r"]}, {"k": []}],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "sd", "tags": ["t"], "security": [{"k": []}]}],
            "supportsAuthenticatedExtendedCard": true
        })
    }

    #[test]
    fn card_converts_interfaces_security_and_flags() {
        let v10 = to_v10("AgentCard", card_v03()).unwrap();
        assert_eq!(
            v10["supportedInterfaces"],
            json!([{"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
                   {"url": "https://a.example/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"}])
        );
        assert_eq!(v10["capabilities"], json!({"streaming": true, "extendedAgentCard": true}));
        // clientCredentials outranks password.
        assert_eq!(
            v10["securitySchemes"]["o"],
            json!({"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": "https://id.example/t", "scopes": {"r": "read"}}}}})
        );
        assert_eq!(
            v10["securitySchemes"]["k"],
            json!({"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}})
        );
        assert_eq!(
            v10["securityRequirements"],
            json!([{"schemes": {"o": {"list": ["r"]}}}, {"schemes": {"k": {"list": []}}}])
        );
        assert_eq!(v10["skills"][0]["securityRequirements"], json!([{"schemes": {"k": {"list": []}}}]));
        // And back: preferredTransport written, the dropped password flow and flag stay dropped.
        let back = to_v03("AgentCard", v10).unwrap();
        assert_eq!(back["preferredTransport"], "JSONRPC");
        assert_eq!(back["additionalInterfaces"], card_v03()["additionalInterfaces"]);
        assert_eq!(back["capabilities"], json!({"streaming": true}));
        assert_eq!(back["supportsAuthenticatedExtendedCard"], true);
        assert!(back["securitySchemes"]["o"]["flows"].get("password").is_none());
    }

    #[test]
    fn card_without_a_03_interface_has_no_03_form() {
        let mut v10 = to_v10("AgentCard", card_v03()).unwrap();
        for i in v10["supportedInterfaces"].as_array_mut().unwrap() {
            i["protocolVersion"] = json!("1.0");
        }
        let err = to_v03("AgentCard", v10).unwrap_err();
        assert_eq!(field_of(&err), "supportedInterfaces");
        let mut empty_flows = card_v03();
        empty_flows["securitySchemes"]["o"]["flows"] = json!({});
        assert_eq!(field_of(&to_v10("AgentCard", empty_flows).unwrap_err()), "securitySchemes.o.flows");
        let mut bad_in = card_v03();
        bad_in["securitySchemes"]["k"]["in"] = json!("body");
        assert_eq!(field_of(&to_v10("AgentCard", bad_in).unwrap_err()), "securitySchemes.k.in");
    }

    #[test]
    fn device_code_and_pkce_have_no_03_form() {
        let v10 = json!({"oauth2SecurityScheme": {"flows": {"deviceCode": {
            "deviceAuthorizationUrl": "https://id.example/d", "tokenUrl": "https://id.example/t", "scopes": {}}}}});
        assert_eq!(to_v03("SecurityScheme", v10).unwrap(), json!({"type": "oauth2", "flows": {}}));
        let pkce = json!({"oauth2SecurityScheme": {"flows": {"authorizationCode": {
            "authorizationUrl": "https://id.example/a", "tokenUrl": "https://id.example/t", "scopes": {}, "pkceRequired": true}}}});
        let v03 = to_v03("SecurityScheme", pkce).unwrap();
        assert!(v03["flows"]["authorizationCode"].get("pkceRequired").is_none());
    }

    #[test]
    fn timestamps_accept_offsets_and_naive_utc() {
        for (text, want) in [
            ("2025-07-30T12:00:00.123+02:00", "2025-07-30T10:00:00.123Z"),
            ("2025-07-30T10:00:00.123456", "2025-07-30T10:00:00.123456Z"),
            ("2025-07-30T10:00:00Z", "2025-07-30T10:00:00.000Z"),
            ("2025-07-30T10:00:00", "2025-07-30T10:00:00.000Z"),
        ] {
            let v10 = to_v10("TaskStatus", json!({"state": "working", "timestamp": text})).unwrap();
            assert_eq!(v10, json!({"state": "TASK_STATE_WORKING", "timestamp": want}), "{text}");
        }
    }

    #[test]
    fn enums_map_both_ways() {
        assert_eq!(to_v10("TaskState", json!("unknown")).unwrap(), json!("TASK_STATE_UNSPECIFIED"));
        assert_eq!(to_v03("TaskState", json!("TASK_STATE_UNSPECIFIED")).unwrap(), json!("unknown"));
        assert_eq!(to_v03("TaskState", json!("TASK_STATE_INPUT_REQUIRED")).unwrap(), json!("input-required"));
        assert_eq!(to_v10("Role", json!("agent")).unwrap(), json!("ROLE_AGENT"));
        assert_eq!(field_of(&to_v03("Role", json!("ROLE_UNSPECIFIED")).unwrap_err()), "role");
        assert_eq!(to_v10("TaskState", json!("cancelled")).unwrap_err().kind, ErrorKind::InvalidParams);
    }

    #[test]
    fn unspecified_role_deep_in_a_task_is_named() {
        let task = m::Task {
            id: "t".into(),
            context_id: "c".into(),
            status: m::TaskStatus::now(m::TaskState::Working),
            artifacts: vec![],
            history: vec![m::Message::text(m::Role::User, "a"), m::Message::text(m::Role::Unspecified, "b")],
            metadata: None,
        };
        assert_eq!(field_of(&Task::try_from(task).unwrap_err()), "history[1].role");
    }

    #[test]
    fn method_table_is_complete_and_consistent() {
        assert_eq!(Method::ALL.len(), METHODS.len());
        for m in Method::ALL {
            assert_eq!(Method::from_name(m.name()), Some(m));
            assert_eq!(Method::from_v10_name(m.v10_name()), Some(m));
            for t in m.params_type().into_iter().chain(m.result_type()) {
                assert!(TYPE_NAMES.contains(&t), "{t}");
            }
        }
        assert_eq!(Method::from_name("tasks/resubscribe").map(Method::v10_name), Some("SubscribeToTask"));
        assert_eq!(Method::from_name("tasks/list"), None);
        assert!(Method::MessageStream.is_streaming() && !Method::MessageSend.is_streaming());
    }

    #[test]
    fn every_type_name_dispatches() {
        for name in TYPE_NAMES {
            for result in [to_v10(name, json!({})), to_v03(name, json!({}))] {
                // Fails on content, never on the name.
                if let Err(e) = result {
                    assert_eq!(e.kind, ErrorKind::InvalidParams, "{name}: {e}");
                }
            }
        }
        assert_eq!(to_v10("Nope", json!({})).unwrap_err().kind, ErrorKind::InvalidRequest);
        assert_eq!(to_v03("Nope", json!({})).unwrap_err().kind, ErrorKind::InvalidRequest);
    }

    mod roundtrip {
        //! 1.0 → 0.3 (JSON text) → 1.0 is the identity for generated tasks, messages and events.
        use super::*;
        use proptest::prelude::*;

        fn text() -> impl Strategy<Value = String> {
            prop_oneof![".{0,16}", "[a-z0-9-]{1,10}", Just("\"\\\n\u{0}é😀".to_owned())]
        }

        fn id() -> impl Strategy<Value = String> {
            "[A-Za-z0-9_.:-]{1,16}"
        }

        fn json_value() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(|n| json!(n)),
                (-1e9f64..1e9).prop_map(|f| json!(f)),
                text().prop_map(Value::String),
            ];
            leaf.prop_recursive(2, 12, 3, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                    prop::collection::btree_map("[a-z]{1,5}", inner, 0..3)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        /// Keys never contain `_`, so they cannot collide with the reserved metadata keys.
        fn object(min: usize) -> impl Strategy<Value = Option<Struct>> {
            prop::option::of(
                prop::collection::btree_map("[a-zA-Z]{1,8}", json_value(), min..3)
                    .prop_map(|m| m.into_iter().collect()),
            )
        }

        fn part() -> impl Strategy<Value = m::Part> {
            let content = prop_oneof![
                text().prop_map(m::PartContent::Text),
                prop::collection::vec(any::<u8>(), 0..24).prop_map(m::PartContent::Raw),
                "https://[a-z]{1,8}\\.example/[a-z0-9/]{0,8}".prop_map(m::PartContent::Url),
                json_value().prop_map(m::PartContent::Data),
            ];
            // Part metadata is absent or non-empty: an empty map next to a reserved key comes back absent.
            (
                content,
                object(1),
                prop::option::of("[a-z]{1,8}\\.[a-z]{2,3}"),
                prop::option::of("[a-z]{2,6}/[a-z+.-]{2,8}"),
            )
                .prop_map(|(content, metadata, filename, media_type)| m::Part {
                    content,
                    metadata,
                    filename: filename.unwrap_or_default(),
                    media_type: media_type.unwrap_or_default(),
                })
        }

        fn timestamp() -> impl Strategy<Value = Option<Timestamp>> {
            prop::option::of((0i64..4_102_444_800_000, 0u32..1000).prop_map(|(ms, us)| {
                chrono::DateTime::from_timestamp_millis(ms).unwrap() + chrono::Duration::microseconds(i64::from(us))
            }))
        }

        fn message() -> impl Strategy<Value = m::Message> {
            let role = prop_oneof![Just(m::Role::User), Just(m::Role::Agent)];
            (
                id(),
                prop::option::of(id()),
                prop::option::of(id()),
                role,
                prop::collection::vec(part(), 1..3),
                object(0),
                prop::collection::vec(id(), 0..2),
                prop::collection::vec(id(), 0..2),
            )
                .prop_map(
                    |(message_id, context_id, task_id, role, parts, metadata, extensions, reference_task_ids)| {
                        m::Message {
                            message_id,
                            context_id: context_id.unwrap_or_default(),
                            task_id: task_id.unwrap_or_default(),
                            role,
                            parts,
                            metadata,
                            extensions,
                            reference_task_ids,
                        }
                    },
                )
        }

        fn status() -> impl Strategy<Value = m::TaskStatus> {
            (prop::sample::select(m::TaskState::ALL.to_vec()), prop::option::of(message()), timestamp())
                .prop_map(|(state, message, timestamp)| m::TaskStatus { state, message, timestamp })
        }

        fn artifact() -> impl Strategy<Value = m::Artifact> {
            (
                id(),
                prop::option::of(text()),
                prop::option::of(text()),
                prop::collection::vec(part(), 1..3),
                object(0),
                prop::collection::vec(id(), 0..2),
            )
                .prop_map(|(artifact_id, name, description, parts, metadata, extensions)| m::Artifact {
                    artifact_id,
                    name: name.unwrap_or_default(),
                    description: description.unwrap_or_default(),
                    parts,
                    metadata,
                    extensions,
                })
        }

        fn task() -> impl Strategy<Value = m::Task> {
            (
                id(),
                prop::option::of(id()),
                status(),
                prop::collection::vec(artifact(), 0..2),
                prop::collection::vec(message(), 0..2),
                object(0),
            )
                .prop_map(|(id, context_id, status, artifacts, history, metadata)| m::Task {
                    id,
                    context_id: context_id.unwrap_or_default(),
                    status,
                    artifacts,
                    history,
                    metadata,
                })
        }

        fn stream_response() -> impl Strategy<Value = m::StreamResponse> {
            prop_oneof![
                task().prop_map(m::StreamResponse::Task),
                message().prop_map(m::StreamResponse::Message),
                (id(), id(), status(), object(0)).prop_map(|(task_id, context_id, status, metadata)| {
                    m::StreamResponse::StatusUpdate(m::TaskStatusUpdateEvent { task_id, context_id, status, metadata })
                }),
                (id(), id(), artifact(), any::<bool>(), any::<bool>(), object(0)).prop_map(
                    |(task_id, context_id, artifact, append, last_chunk, metadata)| {
                        m::StreamResponse::ArtifactUpdate(m::TaskArtifactUpdateEvent {
                            task_id,
                            context_id,
                            artifact,
                            append,
                            last_chunk,
                            metadata,
                        })
                    }
                ),
            ]
        }

        /// Writes the 0.3 form as text and reads it back through the validating parser.
        fn through_wire<T: Serialize + DeserializeOwned + Validate>(value: &T) -> T {
            let text = serde_json::to_string(value).unwrap();
            crate::model::parse::<T>(text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"))
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]

            #[test]
            fn messages(msg in message()) {
                let v03 = through_wire(&Message::try_from(msg.clone()).unwrap());
                prop_assert_eq!(m::Message::from(v03), msg);
            }

            #[test]
            fn tasks(task in task()) {
                let v03 = through_wire(&Task::try_from(task.clone()).unwrap());
                prop_assert_eq!(m::Task::from(v03), task);
            }

            #[test]
            fn stream_responses(event in stream_response(), fin in any::<bool>()) {
                let v03 = through_wire(&StreamResult::from_v10(event.clone(), fin).unwrap());
                prop_assert_eq!(m::StreamResponse::from(v03), event);
            }
        }
    }
}
