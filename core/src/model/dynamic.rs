//! Models by name, for code that only has a type name and JSON: the shared test vectors and
//! the bindings (which run the same vectors through their own languages).

use super::*;
use crate::error::{A2AError, Result};
use serde_json::Value;

macro_rules! registry {
    ($( $name:literal => $ty:ty ),* $(,)?) => {
        /// Every 1.0 model type a vector may name.
        pub const TYPE_NAMES: &[&str] = &[$( $name ),*];

        /// Reads `json` as the named type (validating REQUIRED fields) and writes it back in
        /// canonical form: the round trip every implementation must agree on.
        pub fn normalize(type_name: &str, json: Value) -> Result<Value> {
            match type_name {
                $( $name => parse_value::<$ty>(json).map(|v| to_value(&v)), )*
                other => Err(A2AError::invalid_field("type", format!("unknown model type {other:?}"))),
            }
        }
    };
}

registry! {
    "Task" => Task,
    "TaskStatus" => TaskStatus,
    "Message" => Message,
    "Part" => Part,
    "Artifact" => Artifact,
    "TaskStatusUpdateEvent" => TaskStatusUpdateEvent,
    "TaskArtifactUpdateEvent" => TaskArtifactUpdateEvent,
    "SendMessageResponse" => SendMessageResponse,
    "StreamResponse" => StreamResponse,
    "AgentCard" => AgentCard,
    "AgentInterface" => AgentInterface,
    "AgentProvider" => AgentProvider,
    "AgentSkill" => AgentSkill,
    "AgentCardSignature" => AgentCardSignature,
    "SecurityScheme" => SecurityScheme,
    "OAuthFlows" => OAuthFlows,
    "SendMessageRequest" => SendMessageRequest,
    "GetTaskRequest" => GetTaskRequest,
    "ListTasksRequest" => ListTasksRequest,
    "ListTasksResponse" => ListTasksResponse,
    "CancelTaskRequest" => CancelTaskRequest,
    "SubscribeToTaskRequest" => SubscribeToTaskRequest,
    "TaskPushNotificationConfig" => TaskPushNotificationConfig,
    "GetTaskPushNotificationConfigRequest" => GetTaskPushNotificationConfigRequest,
    "DeleteTaskPushNotificationConfigRequest" => DeleteTaskPushNotificationConfigRequest,
    "ListTaskPushNotificationConfigsRequest" => ListTaskPushNotificationConfigsRequest,
    "ListTaskPushNotificationConfigsResponse" => ListTaskPushNotificationConfigsResponse,
    "GetExtendedAgentCardRequest" => GetExtendedAgentCardRequest,
}
