//! Models by name, for code that only has a type name and JSON: the shared test vectors and
//! the bindings (which run the same vectors through their own languages).

use super::*;
use crate::error::{A2AError, Result};
use serde_json::Value;

/// The paths of the members of `json` that `T` has no field for (see [`unknown_fields`]).
pub(crate) fn ignored<T: serde::de::DeserializeOwned>(json: &Value) -> Vec<String> {
    let mut paths = Vec::new();
    // serde_ignored writes `parts.0.txt`, and `?` for an optional field's `Some`: written as
    // core's other errors name a field (`parts[0].txt`).
    let _ = serde_ignored::deserialize::<_, _, T>(json, |path| {
        let mut field = String::new();
        for step in path.to_string().split('.').filter(|s| *s != "?") {
            if step.bytes().all(|b| b.is_ascii_digit()) {
                field.push_str(&format!("[{step}]"));
            } else {
                if !field.is_empty() {
                    field.push('.');
                }
                field.push_str(step);
            }
        }
        paths.push(field)
    });
    paths
}

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

        /// The paths (`message.parts[0].txt`) of the members of `json` that the named type
        /// has no field for: [`normalize`] drops them, as the spec asks of a reader, and a
        /// validator warns of them. Empty for an unknown type or JSON that does not read.
        pub fn unknown_fields(type_name: &str, json: &Value) -> Vec<String> {
            match type_name {
                $( $name => ignored::<$ty>(json), )*
                _ => Vec::new(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_fields_are_named_by_their_path() {
        let message = json!({"messageId": "m", "role": "ROLE_USER", "partz": [],
            "parts": [{"text": "hi", "mediaTyp": "text/plain"}], "metadata": {"free": 1}});
        let mut found = unknown_fields("Message", &message);
        found.sort();
        assert_eq!(found, ["parts[0].mediaTyp", "partz"]);
        let request = json!({"message": message, "configuration": {"blocking": true}});
        let found = unknown_fields("SendMessageRequest", &request);
        assert!(found.contains(&"configuration.blocking".to_owned()), "{found:?}");
        assert!(unknown_fields("Message", &json!({"messageId": "m", "role": "ROLE_USER", "parts": []})).is_empty());
        // snake_case spellings are the proto's own names, not unknown.
        assert!(unknown_fields("Message", &json!({"message_id": "m", "role": "ROLE_USER", "parts": []})).is_empty());
    }
}
