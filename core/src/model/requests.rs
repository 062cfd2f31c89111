//! Request and response messages of the 11 operations (spec §2.1), and push-notification
//! configuration (§3.4), which doubles as the create request.

use super::task::{Message, Struct, Task, TaskState};
use super::wire::{self, Timestamp, is_false};
use serde::{Deserialize, Deserializer, Serialize};

fn state_filter<'de, D: Deserializer<'de>>(d: D) -> Result<Option<TaskState>, D::Error> {
    // UNSPECIFIED (the proto default) means "no filter".
    Ok(Option::<TaskState>::deserialize(d)?.filter(|s| *s != TaskState::Unspecified))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    pub message: Message,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

impl SendMessageRequest {
    pub fn new(message: Message) -> Self {
        Self { tenant: String::new(), message, configuration: None, metadata: None }
    }
    /// Whether the caller asked not to wait for a terminal or interrupted state.
    pub fn return_immediately(&self) -> bool {
        self.configuration.as_ref().is_some_and(|c| c.return_immediately)
    }
    pub fn history_length(&self) -> Option<i32> {
        self.configuration.as_ref().and_then(|c| c.history_length)
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    #[serde(alias = "accepted_output_modes", default, skip_serializing_if = "Vec::is_empty")]
    pub accepted_output_modes: Vec<String>,
    #[serde(alias = "task_push_notification_config", default, skip_serializing_if = "Option::is_none")]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    #[serde(alias = "history_length", default, skip_serializing_if = "Option::is_none", with = "wire::int32_opt")]
    pub history_length: Option<i32>,
    #[serde(alias = "return_immediately", default, skip_serializing_if = "is_false")]
    pub return_immediately: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequest {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    pub id: String,
    #[serde(alias = "history_length", default, skip_serializing_if = "Option::is_none", with = "wire::int32_opt")]
    pub history_length: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    #[serde(alias = "context_id", default, skip_serializing_if = "String::is_empty")]
    pub context_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "state_filter")]
    pub status: Option<TaskState>,
    #[serde(alias = "page_size", default, skip_serializing_if = "Option::is_none", with = "wire::int32_opt")]
    pub page_size: Option<i32>,
    #[serde(alias = "page_token", default, skip_serializing_if = "String::is_empty")]
    pub page_token: String,
    #[serde(alias = "history_length", default, skip_serializing_if = "Option::is_none", with = "wire::int32_opt")]
    pub history_length: Option<i32>,
    #[serde(
        alias = "status_timestamp_after",
        default,
        skip_serializing_if = "Option::is_none",
        with = "wire::timestamp::option"
    )]
    pub status_timestamp_after: Option<Timestamp>,
    #[serde(alias = "include_artifacts", default, skip_serializing_if = "Option::is_none")]
    pub include_artifacts: Option<bool>,
}

impl ListTasksRequest {
    pub const DEFAULT_PAGE_SIZE: i32 = 50;
    pub const MAX_PAGE_SIZE: i32 = 100;
    /// The page size to use: the request's, or the default of 50.
    pub fn effective_page_size(&self) -> usize {
        self.page_size.unwrap_or(Self::DEFAULT_PAGE_SIZE).clamp(1, Self::MAX_PAGE_SIZE) as usize
    }
}

/// All four members are REQUIRED on the wire, so they are always written, even when empty.
/// Reading is lenient because ProtoJSON encoders leave default values out.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    #[serde(default)]
    pub tasks: Vec<Task>,
    #[serde(alias = "next_page_token", default)]
    pub next_page_token: String,
    #[serde(alias = "page_size", default, with = "wire::int32")]
    pub page_size: i32,
    #[serde(alias = "total_size", default, with = "wire::int32")]
    pub total_size: i32,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct CancelTaskRequest {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct SubscribeToTaskRequest {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    pub id: String,
}

/// Where and how to deliver push notifications for a task. Also the create request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    #[serde(alias = "task_id", default, skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
    /// Registered over A2A 0.3: its notifications carry the task in its 0.3 form, which is what
    /// 0.3 servers send and 0.3 receivers read, not a 1.0 StreamResponse. Not a wire field;
    /// the stores keep it.
    #[serde(skip)]
    pub v03: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct AuthenticationInfo {
    /// One IANA HTTP auth scheme (`Bearer`, `Basic`, …), matched case-insensitively.
    pub scheme: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub credentials: String,
}

/// Get and Delete of a push config take the same fields.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfigRef {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    #[serde(alias = "task_id")]
    pub task_id: String,
    pub id: String,
}

pub type GetTaskPushNotificationConfigRequest = TaskPushNotificationConfigRef;
pub type DeleteTaskPushNotificationConfigRequest = TaskPushNotificationConfigRef;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsRequest {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    #[serde(alias = "task_id")]
    pub task_id: String,
    #[serde(alias = "page_size", default, skip_serializing_if = "is_zero", with = "wire::int32")]
    pub page_size: i32,
    #[serde(alias = "page_token", default, skip_serializing_if = "String::is_empty")]
    pub page_token: String,
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsResponse {
    #[serde(default)]
    pub configs: Vec<TaskPushNotificationConfig>,
    #[serde(alias = "next_page_token", default)]
    pub next_page_token: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct GetExtendedAgentCardRequest {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tenant: String,
}

crate::model::wire::json_objects!(
    SendMessageRequest,
    SendMessageConfiguration,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    CancelTaskRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    AuthenticationInfo,
    TaskPushNotificationConfigRef,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    GetExtendedAgentCardRequest
);
crate::model::wire::json_objects!(serialize: SendMessageRequest, SendMessageConfiguration, GetTaskRequest, ListTasksRequest, ListTasksResponse, CancelTaskRequest, SubscribeToTaskRequest, TaskPushNotificationConfig, AuthenticationInfo, TaskPushNotificationConfigRef, ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, GetExtendedAgentCardRequest);
