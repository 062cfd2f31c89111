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

mod card;
mod convert_card;
mod convert_params;
mod convert_part;
mod convert_task;
mod kind;
mod params;
mod part;
mod served_card;
mod task;
mod util;

pub use card::{
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill, ApiKeySecurityScheme,
    AuthorizationCodeOAuthFlow, ClientCredentialsOAuthFlow, HttpAuthSecurityScheme, ImplicitOAuthFlow,
    MutualTlsSecurityScheme, OAuth2SecurityScheme, OAuthFlows, OpenIdConnectSecurityScheme, PasswordOAuthFlow,
    SecurityRequirement, SecurityScheme,
};
pub use convert_params::{push_configs_to_v03, push_configs_to_v10};
pub use convert_task::is_final;
pub use kind::{ArtifactUpdateKind, MessageKind, StatusUpdateKind, TaskKind};
pub use params::{
    DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams, ListTaskPushNotificationConfigParams,
    MessageSendConfiguration, MessageSendParams, PushNotificationAuthenticationInfo, PushNotificationConfig,
    TaskIdParams, TaskPushNotificationConfig, TaskQueryParams,
};
pub use part::{DataPart, FileContent, FilePart, FileWithBytes, FileWithUri, Part, TextPart};
pub use served_card::{answered_in_v03, sdk_payload, signed_payloads, with_v03_fields};
pub use task::{
    Artifact, Message, Role, SendMessageResult, StreamResult, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};

use super::{self as m, Validate, parse_value, to_value};
use crate::error::{A2AError, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

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
mod tests;
