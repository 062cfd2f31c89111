//! What serde cannot check: REQUIRED strings that are present but empty, REQUIRED repeated
//! fields with no element, enums left UNSPECIFIED, numeric ranges. Each failure is an
//! InvalidParams error naming the field by its JSON path.

use super::card::*;
use super::requests::*;
use super::task::*;
use crate::error::{A2AError, Result};
use serde_json::Value;

/// How deeply a `google.protobuf.Value` (a data part, any `metadata`) may nest: arrays and
/// objects, the outermost one counted. What is accepted on one binding must be readable on all
/// three: protobuf decoders (prost, and the C++, Java and Go runtimes) stop at 100 nested
/// messages, a JSON object costs three of them (Struct, map entry, Value), and the deepest
/// place such a value sits is five messages in (a part of a task's status message, in a stream
/// event or a list page). So 31 levels (`grpc::direct`'s tests check it), where any depth
/// would be refused or unreadable somewhere. Stores keep these values a few levels deeper
/// still, well inside serde_json's limit of 128.
pub const MAX_VALUE_DEPTH: usize = 31;

/// A value that can check the spec's REQUIRED rules on itself. `at` is the JSON path of `self`.
pub trait Validate {
    fn validate_at(&self, at: &str) -> Result<()>;
    fn validate(&self) -> Result<()> {
        self.validate_at("")
    }
}

// The helpers below are shared with the 0.3 types in v03.rs.

/// The JSON path of `field` inside the value at `at` (either may be empty).
pub(super) fn join(at: &str, field: &str) -> String {
    match (at.is_empty(), field.is_empty()) {
        (true, _) => field.to_owned(),
        (false, true) => at.to_owned(),
        (false, false) => format!("{at}.{field}"),
    }
}

pub(super) fn required(at: &str, field: &str, value: &str) -> Result<()> {
    if value.is_empty() {
        return Err(A2AError::invalid_field(join(at, field), "is required and must not be empty"));
    }
    Ok(())
}

pub(super) fn non_empty_list<T>(at: &str, field: &str, list: &[T]) -> Result<()> {
    if list.is_empty() {
        return Err(A2AError::invalid_field(join(at, field), "is required and must have at least one element"));
    }
    Ok(())
}

/// Validates `item`, a value inside another, whose JSON path `path` gives. The path is written
/// out only when the value fails: the check then runs again to name the field. Every request
/// is validated and almost all are valid, so the common path formats no path at all.
pub(super) fn child<T: Validate + ?Sized>(item: &T, path: impl FnOnce() -> String) -> Result<()> {
    match item.validate_at("") {
        Ok(()) => Ok(()),
        Err(_) => item.validate_at(&path()),
    }
}

pub(super) fn each<T: Validate>(at: &str, field: &str, list: &[T]) -> Result<()> {
    for (i, item) in list.iter().enumerate() {
        child(item, || format!("{}[{i}]", join(at, field)))?;
    }
    Ok(())
}

/// Whether `value` nests at most `limit` arrays and objects deep. A loop, not recursion: this
/// runs before anything else has bounded the value.
fn nests_within(value: &Value, limit: usize) -> bool {
    let nested = |v: &&Value| v.is_array() || v.is_object();
    let mut stack: Vec<(&Value, usize)> = std::iter::once(value).filter(nested).map(|v| (v, 1)).collect();
    while let Some((v, depth)) = stack.pop() {
        if depth > limit {
            return false;
        }
        match v {
            Value::Array(items) => stack.extend(items.iter().filter(nested).map(|c| (c, depth + 1))),
            Value::Object(map) => stack.extend(map.values().filter(nested).map(|c| (c, depth + 1))),
            _ => {}
        }
    }
    true
}

fn too_deep(at: &str, field: &str) -> A2AError {
    A2AError::invalid_field(join(at, field), format!("nests more than {MAX_VALUE_DEPTH} arrays and objects deep"))
}

/// A data part's value, within [`MAX_VALUE_DEPTH`].
fn shallow_value(at: &str, field: &str, value: &Value) -> Result<()> {
    if nests_within(value, MAX_VALUE_DEPTH) { Ok(()) } else { Err(too_deep(at, field)) }
}

/// A `metadata` object (itself the outermost level), within [`MAX_VALUE_DEPTH`].
fn shallow_metadata(at: &str, metadata: Option<&serde_json::Map<String, Value>>) -> Result<()> {
    match metadata {
        Some(m) if !m.values().all(|v| nests_within(v, MAX_VALUE_DEPTH - 1)) => Err(too_deep(at, "metadata")),
        _ => Ok(()),
    }
}

pub(super) fn non_negative(at: &str, field: &str, value: Option<i32>) -> Result<()> {
    match value {
        Some(n) if n < 0 => Err(A2AError::invalid_field(join(at, field), format!("must not be negative (got {n})"))),
        _ => Ok(()),
    }
}

impl Validate for Message {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "messageId", &self.message_id)?;
        if self.role == Role::Unspecified {
            return Err(A2AError::invalid_field(join(at, "role"), "must be ROLE_USER or ROLE_AGENT"));
        }
        non_empty_list(at, "parts", &self.parts)?;
        shallow_metadata(at, self.metadata.as_ref())?;
        each(at, "parts", &self.parts)
    }
}

impl Validate for Part {
    fn validate_at(&self, at: &str) -> Result<()> {
        match &self.content {
            PartContent::Url(url) => required(at, "url", url)?,
            PartContent::Data(value) => shallow_value(at, "data", value)?,
            _ => {}
        }
        shallow_metadata(at, self.metadata.as_ref())
    }
}

impl Validate for Artifact {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "artifactId", &self.artifact_id)?;
        non_empty_list(at, "parts", &self.parts)?;
        shallow_metadata(at, self.metadata.as_ref())?;
        each(at, "parts", &self.parts)
    }
}

impl Validate for TaskStatus {
    fn validate_at(&self, at: &str) -> Result<()> {
        if self.state == TaskState::Unspecified {
            return Err(A2AError::invalid_field(join(at, "state"), "must not be TASK_STATE_UNSPECIFIED"));
        }
        if let Some(m) = &self.message {
            child(m, || join(at, "message"))?;
        }
        Ok(())
    }
}

impl Validate for Task {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "id", &self.id)?;
        child(&self.status, || join(at, "status"))?;
        shallow_metadata(at, self.metadata.as_ref())?;
        each(at, "artifacts", &self.artifacts)?;
        each(at, "history", &self.history)
    }
}

impl Validate for TaskStatusUpdateEvent {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "taskId", &self.task_id)?;
        required(at, "contextId", &self.context_id)?;
        shallow_metadata(at, self.metadata.as_ref())?;
        child(&self.status, || join(at, "status"))
    }
}

impl Validate for TaskArtifactUpdateEvent {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "taskId", &self.task_id)?;
        required(at, "contextId", &self.context_id)?;
        shallow_metadata(at, self.metadata.as_ref())?;
        child(&self.artifact, || join(at, "artifact"))
    }
}

impl Validate for SendMessageResponse {
    fn validate_at(&self, at: &str) -> Result<()> {
        match self {
            SendMessageResponse::Task(t) => child(t, || join(at, "task")),
            SendMessageResponse::Message(m) => child(m, || join(at, "message")),
        }
    }
}

impl Validate for StreamResponse {
    fn validate_at(&self, at: &str) -> Result<()> {
        let path = || join(at, self.member());
        match self {
            StreamResponse::Task(t) => child(t, path),
            StreamResponse::Message(m) => child(m, path),
            StreamResponse::StatusUpdate(e) => child(e, path),
            StreamResponse::ArtifactUpdate(e) => child(e, path),
        }
    }
}

impl Validate for AgentCard {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "name", &self.name)?;
        required(at, "description", &self.description)?;
        non_empty_list(at, "supportedInterfaces", &self.supported_interfaces)?;
        each(at, "supportedInterfaces", &self.supported_interfaces)?;
        if let Some(p) = &self.provider {
            child(p, || join(at, "provider"))?;
        }
        required(at, "version", &self.version)?;
        for (name, scheme) in &self.security_schemes {
            child(scheme, || format!("{}.{name}", join(at, "securitySchemes")))?;
        }
        non_empty_list(at, "defaultInputModes", &self.default_input_modes)?;
        non_empty_list(at, "defaultOutputModes", &self.default_output_modes)?;
        non_empty_list(at, "skills", &self.skills)?;
        each(at, "skills", &self.skills)?;
        each(at, "signatures", &self.signatures)
    }
}

impl Validate for AgentInterface {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "url", &self.url)?;
        required(at, "protocolBinding", &self.protocol_binding)?;
        required(at, "protocolVersion", &self.protocol_version)
    }
}

impl Validate for AgentProvider {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "url", &self.url)?;
        required(at, "organization", &self.organization)
    }
}

impl Validate for AgentSkill {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "id", &self.id)?;
        required(at, "name", &self.name)?;
        required(at, "description", &self.description)?;
        non_empty_list(at, "tags", &self.tags)
    }
}

impl Validate for AgentCardSignature {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "protected", &self.protected)?;
        required(at, "signature", &self.signature)
    }
}

impl Validate for SecurityScheme {
    fn validate_at(&self, at: &str) -> Result<()> {
        let at = join(at, self.member());
        match self {
            SecurityScheme::ApiKey(s) => {
                if !matches!(s.location.as_str(), "query" | "header" | "cookie") {
                    return Err(A2AError::invalid_field(join(&at, "location"), "must be query, header or cookie"));
                }
                required(&at, "name", &s.name)
            }
            SecurityScheme::HttpAuth(s) => required(&at, "scheme", &s.scheme),
            SecurityScheme::OAuth2(s) => child(&s.flows, || join(&at, "flows")),
            SecurityScheme::OpenIdConnect(s) => required(&at, "openIdConnectUrl", &s.open_id_connect_url),
            SecurityScheme::MutualTls(_) => Ok(()),
        }
    }
}

impl Validate for OAuthFlows {
    fn validate_at(&self, at: &str) -> Result<()> {
        let at = join(at, self.member());
        match self {
            OAuthFlows::AuthorizationCode(f) => {
                required(&at, "authorizationUrl", &f.authorization_url)?;
                required(&at, "tokenUrl", &f.token_url)
            }
            OAuthFlows::ClientCredentials(f) => required(&at, "tokenUrl", &f.token_url),
            OAuthFlows::DeviceCode(f) => {
                required(&at, "deviceAuthorizationUrl", &f.device_authorization_url)?;
                required(&at, "tokenUrl", &f.token_url)
            }
            OAuthFlows::Implicit(_) | OAuthFlows::Password(_) => Ok(()),
        }
    }
}

impl Validate for SendMessageRequest {
    fn validate_at(&self, at: &str) -> Result<()> {
        child(&self.message, || join(at, "message"))?;
        if self.message.role == Role::Agent {
            // Stored, it would read as the agent's own words in the task's history.
            return Err(A2AError::invalid_field(
                join(&join(at, "message"), "role"),
                "a client sends ROLE_USER (ROLE_AGENT is the agent's, server to client)",
            ));
        }
        shallow_metadata(at, self.metadata.as_ref())?;
        if let Some(c) = &self.configuration {
            let cat = join(at, "configuration");
            non_negative(&cat, "historyLength", c.history_length)?;
            if let Some(p) = &c.task_push_notification_config {
                child(p, || join(&cat, "taskPushNotificationConfig"))?;
            }
        }
        Ok(())
    }
}

impl Validate for GetTaskRequest {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "id", &self.id)?;
        non_negative(at, "historyLength", self.history_length)
    }
}

impl Validate for ListTasksRequest {
    fn validate_at(&self, at: &str) -> Result<()> {
        if let Some(n) = self.page_size
            && !(1..=ListTasksRequest::MAX_PAGE_SIZE).contains(&n)
        {
            return Err(A2AError::invalid_field(join(at, "pageSize"), format!("must be between 1 and 100 (got {n})")));
        }
        non_negative(at, "historyLength", self.history_length)
    }
}

impl Validate for ListTasksResponse {
    fn validate_at(&self, at: &str) -> Result<()> {
        each(at, "tasks", &self.tasks)
    }
}

impl Validate for CancelTaskRequest {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "id", &self.id)?;
        shallow_metadata(at, self.metadata.as_ref())
    }
}

impl Validate for SubscribeToTaskRequest {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "id", &self.id)
    }
}

impl Validate for TaskPushNotificationConfig {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "url", &self.url)?;
        if let Some(auth) = &self.authentication {
            required(&join(at, "authentication"), "scheme", &auth.scheme)?;
        }
        Ok(())
    }
}

impl Validate for TaskPushNotificationConfigRef {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "taskId", &self.task_id)?;
        required(at, "id", &self.id)
    }
}

impl Validate for ListTaskPushNotificationConfigsRequest {
    fn validate_at(&self, at: &str) -> Result<()> {
        required(at, "taskId", &self.task_id)?;
        if self.page_size < 0 {
            return Err(A2AError::invalid_field(join(at, "pageSize"), "must not be negative"));
        }
        Ok(())
    }
}

impl Validate for ListTaskPushNotificationConfigsResponse {
    fn validate_at(&self, at: &str) -> Result<()> {
        each(at, "configs", &self.configs)
    }
}

impl Validate for GetExtendedAgentCardRequest {
    fn validate_at(&self, _at: &str) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Paths are written only for a failing value (`child`); a failure deep inside still names
    /// the whole path, as when every level formatted its own.
    #[test]
    fn a_nested_failure_names_its_whole_path() {
        let field = |value: serde_json::Value, ty: &str| {
            let e = match ty {
                "send" => crate::model::parse_value::<SendMessageRequest>(value).unwrap_err(),
                _ => crate::model::parse_value::<StreamResponse>(value).unwrap_err(),
            };
            e.violations[0].field.clone()
        };
        let ok = json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a"}]});
        let mut bad = ok.clone();
        bad["parts"] = json!([{"text": "a"}, {"url": ""}]);
        assert_eq!(field(json!({"message": bad}), "send"), "message.parts[1].url");
        let event = json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING", "message": {"messageId": "", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}}}});
        assert_eq!(field(event, "stream"), "statusUpdate.status.message.messageId");
        let task = json!({"task": {"id": "t", "status": {"state": "TASK_STATE_WORKING"}, "history": [ok, {"messageId": "m2", "role": "ROLE_USER", "parts": []}]}});
        assert_eq!(field(task, "stream"), "task.history[1].parts");
    }
}
