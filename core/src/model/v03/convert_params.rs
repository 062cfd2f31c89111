//! Conversions between 0.3 and 1.0 of request params and push-notification configuration.

use super::params::{
    DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams, ListTaskPushNotificationConfigParams,
    MessageSendConfiguration, MessageSendParams, PushNotificationAuthenticationInfo, PushNotificationConfig,
    TaskIdParams, TaskPushNotificationConfig, TaskQueryParams,
};
use super::util::{opt, within};
use crate::error::{A2AError, Result};
use crate::model as m;

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
            v03: true,
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
