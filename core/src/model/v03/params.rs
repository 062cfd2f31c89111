//! Request params and push-notification configuration.

use super::task::Message;
use super::util::nullable;
use crate::error::Result;
use crate::model::validate::{join, non_empty_list, non_negative, required};
use crate::model::wire;
use crate::model::{Struct, Validate};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------------
// Request params and push-notification configuration
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct MessageSendParams {
    pub message: Message,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<MessageSendConfiguration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
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
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct TaskQueryParams {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "wire::int32_opt")]
    pub history_length: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
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
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct PushNotificationAuthenticationInfo {
    pub schemes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// The params of `tasks/pushNotificationConfig/set` and the result of set and get.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    pub task_id: String,
    pub push_notification_config: PushNotificationConfig,
}

/// Also reads the plain `TaskIdParams` form the schema allows (no config id).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct GetTaskPushNotificationConfigParams {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notification_config_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigParams {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[serde(rename_all = "camelCase")]
pub struct DeleteTaskPushNotificationConfigParams {
    pub id: String,
    pub push_notification_config_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

// ---------------------------------------------------------------------------------------------
// Validation (what serde cannot check)
// ---------------------------------------------------------------------------------------------

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

crate::model::wire::json_objects!(
    MessageSendParams,
    MessageSendConfiguration,
    TaskQueryParams,
    TaskIdParams,
    PushNotificationConfig,
    PushNotificationAuthenticationInfo,
    TaskPushNotificationConfig,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    DeleteTaskPushNotificationConfigParams
);
crate::model::wire::json_objects!(serialize: MessageSendParams, MessageSendConfiguration, TaskQueryParams, TaskIdParams, PushNotificationConfig, PushNotificationAuthenticationInfo, TaskPushNotificationConfig, GetTaskPushNotificationConfigParams, ListTaskPushNotificationConfigParams, DeleteTaskPushNotificationConfigParams);
