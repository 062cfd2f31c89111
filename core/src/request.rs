//! The 11 A2A 1.0 operations as one typed request, shared by both HTTP bindings.
//!
//! [`crate::jsonrpc`] and [`crate::rest`] each turn bytes into an [`A2ARequest`]; the server
//! dispatches on it without knowing which binding it came from, and the client builds one and
//! hands it to whichever binding the agent card chose.

use crate::error::{A2AError, Result};
use crate::model::{self, *};
use serde::{Serialize, Serializer};
use serde_json::Value;
use std::fmt;

/// The A2A service, as the spec's proto names it (`rpc.service` in traces; the gRPC service).
pub const SERVICE: &str = "lf.a2a.v1.A2AService";

/// An A2A 1.0 operation. [`Method::as_str`] is both the JSON-RPC `method` and the gRPC rpc name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    SendMessage,
    SendStreamingMessage,
    GetTask,
    ListTasks,
    CancelTask,
    SubscribeToTask,
    CreateTaskPushNotificationConfig,
    GetTaskPushNotificationConfig,
    ListTaskPushNotificationConfigs,
    DeleteTaskPushNotificationConfig,
    GetExtendedAgentCard,
}

impl Method {
    pub const ALL: [Method; 11] = [
        Method::SendMessage,
        Method::SendStreamingMessage,
        Method::GetTask,
        Method::ListTasks,
        Method::CancelTask,
        Method::SubscribeToTask,
        Method::CreateTaskPushNotificationConfig,
        Method::GetTaskPushNotificationConfig,
        Method::ListTaskPushNotificationConfigs,
        Method::DeleteTaskPushNotificationConfig,
        Method::GetExtendedAgentCard,
    ];

    /// The wire name (spec §2; note the plural in `ListTaskPushNotificationConfigs`).
    pub fn as_str(self) -> &'static str {
        match self {
            Method::SendMessage => "SendMessage",
            Method::SendStreamingMessage => "SendStreamingMessage",
            Method::GetTask => "GetTask",
            Method::ListTasks => "ListTasks",
            Method::CancelTask => "CancelTask",
            Method::SubscribeToTask => "SubscribeToTask",
            Method::CreateTaskPushNotificationConfig => "CreateTaskPushNotificationConfig",
            Method::GetTaskPushNotificationConfig => "GetTaskPushNotificationConfig",
            Method::ListTaskPushNotificationConfigs => "ListTaskPushNotificationConfigs",
            Method::DeleteTaskPushNotificationConfig => "DeleteTaskPushNotificationConfig",
            Method::GetExtendedAgentCard => "GetExtendedAgentCard",
        }
    }

    /// `lf.a2a.v1.A2AService/SendMessage`: `{rpc.service}/{rpc.method}`, the name OpenTelemetry's
    /// RPC conventions give a call's spans (and the gRPC path, without its leading `/`).
    pub fn rpc_name(self) -> &'static str {
        static NAMES: std::sync::LazyLock<Vec<(Method, String)>> = std::sync::LazyLock::new(|| {
            Method::ALL.into_iter().map(|m| (m, format!("{SERVICE}/{}", m.as_str()))).collect()
        });
        NAMES.iter().find(|(m, _)| *m == self).map_or("a2a.request", |(_, name)| name.as_str())
    }

    /// The method with this exact (case-sensitive) wire name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == name)
    }

    /// Whether the answer is an SSE stream of `StreamResponse` rather than one JSON body.
    pub fn is_streaming(self) -> bool {
        matches!(self, Method::SendStreamingMessage | Method::SubscribeToTask)
    }

    /// Whether the operation only reads (changes nothing), so a client may safely send it again.
    pub fn is_read(self) -> bool {
        matches!(
            self,
            Method::GetTask
                | Method::ListTasks
                | Method::SubscribeToTask
                | Method::GetTaskPushNotificationConfig
                | Method::ListTaskPushNotificationConfigs
                | Method::GetExtendedAgentCard
        )
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One A2A 1.0 request with its typed parameters. Both send operations take the same
/// parameters; the variant says which one was called.
#[derive(Debug, Clone, PartialEq)]
pub enum A2ARequest {
    SendMessage(SendMessageRequest),
    SendStreamingMessage(SendMessageRequest),
    GetTask(GetTaskRequest),
    ListTasks(ListTasksRequest),
    CancelTask(CancelTaskRequest),
    SubscribeToTask(SubscribeToTaskRequest),
    /// The proto takes the config itself as the create request.
    CreateTaskPushNotificationConfig(TaskPushNotificationConfig),
    GetTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest),
    ListTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest),
    DeleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest),
    GetExtendedAgentCard(GetExtendedAgentCardRequest),
}

/// Applies `$body` to the parameters of whichever variant `$req` is.
macro_rules! each_variant {
    ($req:expr, $p:ident => $body:expr) => {
        match $req {
            A2ARequest::SendMessage($p) | A2ARequest::SendStreamingMessage($p) => $body,
            A2ARequest::GetTask($p) => $body,
            A2ARequest::ListTasks($p) => $body,
            A2ARequest::CancelTask($p) => $body,
            A2ARequest::SubscribeToTask($p) => $body,
            A2ARequest::CreateTaskPushNotificationConfig($p) => $body,
            A2ARequest::GetTaskPushNotificationConfig($p) | A2ARequest::DeleteTaskPushNotificationConfig($p) => $body,
            A2ARequest::ListTaskPushNotificationConfigs($p) => $body,
            A2ARequest::GetExtendedAgentCard($p) => $body,
        }
    };
}

impl A2ARequest {
    pub fn method(&self) -> Method {
        match self {
            A2ARequest::SendMessage(_) => Method::SendMessage,
            A2ARequest::SendStreamingMessage(_) => Method::SendStreamingMessage,
            A2ARequest::GetTask(_) => Method::GetTask,
            A2ARequest::ListTasks(_) => Method::ListTasks,
            A2ARequest::CancelTask(_) => Method::CancelTask,
            A2ARequest::SubscribeToTask(_) => Method::SubscribeToTask,
            A2ARequest::CreateTaskPushNotificationConfig(_) => Method::CreateTaskPushNotificationConfig,
            A2ARequest::GetTaskPushNotificationConfig(_) => Method::GetTaskPushNotificationConfig,
            A2ARequest::ListTaskPushNotificationConfigs(_) => Method::ListTaskPushNotificationConfigs,
            A2ARequest::DeleteTaskPushNotificationConfig(_) => Method::DeleteTaskPushNotificationConfig,
            A2ARequest::GetExtendedAgentCard(_) => Method::GetExtendedAgentCard,
        }
    }

    /// The request's `tenant` (`""` when none was given).
    pub fn tenant(&self) -> &str {
        each_variant!(self, p => &p.tenant)
    }

    /// Sets `tenant`, as a client must when the chosen `AgentInterface` declares one (spec §2.1).
    pub fn set_tenant(&mut self, tenant: impl Into<String>) {
        let tenant = tenant.into();
        each_variant!(self, p => p.tenant = tenant)
    }

    pub fn is_streaming(&self) -> bool {
        self.method().is_streaming()
    }

    /// Reads `method`'s parameters from JSON and validates them. `at` prefixes every reported
    /// field path (`"params"` for JSON-RPC, `""` for HTTP+JSON).
    pub fn from_params(method: Method, params: Value, at: &str) -> Result<Self> {
        Self::read(method, params, at)
    }

    /// [`A2ARequest::from_params`] for a request a client's caller wrote: a member the request
    /// type does not define is refused, naming it (`contextID`), where a server ignores it as
    /// the spec asks of a reader. Sent on, such a typo would change the call without a word
    /// (ListTasks with `contextID` lists every task).
    ///
    /// ListTasks' `status` may also be a short state name (`canceled`, `input-required`), as
    /// in an executor's status events: core's one table of state names reads it.
    pub fn from_caller_params(method: Method, mut params: Value) -> Result<Self> {
        if method == Method::ListTasks
            && let Some(status) = params.get_mut("status")
            && let Some(state) = status.as_str().and_then(model::TaskState::from_short_name)
        {
            *status = Value::from(state.as_str());
        }
        Self::read(method, Strict(params), "")
    }

    /// A ListTasksRequest a client's caller wrote, read as [`A2ARequest::from_caller_params`]
    /// reads one (unknown members refused, short state names taken): what the bindings' pagers
    /// (`list_all_tasks`) start from.
    pub fn list_tasks_from_caller(params: Value) -> Result<model::ListTasksRequest> {
        match Self::from_caller_params(Method::ListTasks, params)? {
            A2ARequest::ListTasks(req) => Ok(req),
            _ => unreachable!("read as ListTasks"),
        }
    }

    /// [`A2ARequest::from_params`] from the parameters' JSON text, with no `Value` between
    /// (see [`model::parse_raw_at`]); same result, same errors.
    pub fn from_raw_params(method: Method, params: &serde_json::value::RawValue, at: &str) -> Result<Self> {
        Self::read(method, params, at)
    }

    fn read(method: Method, params: impl Params, at: &str) -> Result<Self> {
        Ok(match method {
            Method::SendMessage => A2ARequest::SendMessage(params.parse(at)?),
            Method::SendStreamingMessage => A2ARequest::SendStreamingMessage(params.parse(at)?),
            Method::GetTask => A2ARequest::GetTask(params.parse(at)?),
            Method::ListTasks => A2ARequest::ListTasks(params.parse(at)?),
            Method::CancelTask => A2ARequest::CancelTask(params.parse(at)?),
            Method::SubscribeToTask => A2ARequest::SubscribeToTask(params.parse(at)?),
            Method::CreateTaskPushNotificationConfig => {
                let config: model::TaskPushNotificationConfig = params.parse(at)?;
                // Required here only: the same message inside SendMessage is for a task to come.
                if config.task_id.is_empty() {
                    let field = if at.is_empty() { "taskId".to_owned() } else { format!("{at}.taskId") };
                    return Err(A2AError::invalid_field(field, "is required"));
                }
                A2ARequest::CreateTaskPushNotificationConfig(config)
            }
            Method::GetTaskPushNotificationConfig => A2ARequest::GetTaskPushNotificationConfig(params.parse(at)?),
            Method::ListTaskPushNotificationConfigs => A2ARequest::ListTaskPushNotificationConfigs(params.parse(at)?),
            Method::DeleteTaskPushNotificationConfig => A2ARequest::DeleteTaskPushNotificationConfig(params.parse(at)?),
            Method::GetExtendedAgentCard => A2ARequest::GetExtendedAgentCard(params.parse(at)?),
        })
    }

    /// The parameters in canonical ProtoJSON (what JSON-RPC `params` carries).
    pub fn params(&self) -> Value {
        each_variant!(self, p => model::to_value(p))
    }
}

/// Where a request's parameters are read from: a JSON tree, or JSON text.
trait Params {
    fn parse<T: serde::de::DeserializeOwned + model::Validate>(self, at: &str) -> Result<T>;
}

/// Parameters whose unknown members are refused (see [`A2ARequest::from_caller_params`]).
struct Strict(Value);

impl Params for Strict {
    fn parse<T: serde::de::DeserializeOwned + model::Validate>(self, at: &str) -> Result<T> {
        if let Some(path) = model::dynamic::ignored::<T>(&self.0).first() {
            let field = if at.is_empty() { path.clone() } else { format!("{at}.{path}") };
            return Err(A2AError::invalid_field(field, "no such field in this request (a misspelling?)"));
        }
        self.0.parse(at)
    }
}

impl Params for Value {
    fn parse<T: serde::de::DeserializeOwned + model::Validate>(self, at: &str) -> Result<T> {
        model::parse_value_at(self, at)
    }
}

impl Params for &serde_json::value::RawValue {
    fn parse<T: serde::de::DeserializeOwned + model::Validate>(self, at: &str) -> Result<T> {
        model::parse_raw_at(self, at)
    }
}

/// Serialises as the parameters alone (the JSON-RPC `params` object).
impl Serialize for A2ARequest {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        each_variant!(self, p => p.serialize(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn method_names_round_trip() {
        for m in Method::ALL {
            assert_eq!(Method::from_name(m.as_str()), Some(m));
            assert_eq!(m.to_string(), m.as_str());
        }
        assert_eq!(Method::from_name("getTask"), None);
        assert_eq!(Method::from_name("tasks/get"), None);
        let streaming: Vec<_> = Method::ALL.into_iter().filter(|m| m.is_streaming()).collect();
        assert_eq!(streaming, [Method::SendStreamingMessage, Method::SubscribeToTask]);
    }

    #[test]
    fn every_method_parses_and_reports_tenant() {
        let msg = json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]});
        let cases = [
            (Method::SendMessage, json!({"tenant": "t", "message": msg})),
            (Method::SendStreamingMessage, json!({"tenant": "t", "message": msg})),
            (Method::GetTask, json!({"tenant": "t", "id": "x"})),
            (Method::ListTasks, json!({"tenant": "t"})),
            (Method::CancelTask, json!({"tenant": "t", "id": "x"})),
            (Method::SubscribeToTask, json!({"tenant": "t", "id": "x"})),
            (Method::CreateTaskPushNotificationConfig, json!({"tenant": "t", "taskId": "x", "url": "https://h/"})),
            (Method::GetTaskPushNotificationConfig, json!({"tenant": "t", "taskId": "x", "id": "c"})),
            (Method::ListTaskPushNotificationConfigs, json!({"tenant": "t", "taskId": "x"})),
            (Method::DeleteTaskPushNotificationConfig, json!({"tenant": "t", "taskId": "x", "id": "c"})),
            (Method::GetExtendedAgentCard, json!({"tenant": "t"})),
        ];
        for (method, params) in cases {
            let mut req = A2ARequest::from_params(method, params.clone(), "params").unwrap();
            assert_eq!(req.method(), method);
            assert_eq!(req.tenant(), "t");
            assert_eq!(req.params(), params, "{method}");
            assert_eq!(serde_json::to_value(&req).unwrap(), params);
            req.set_tenant("");
            assert_eq!(req.tenant(), "");
            assert!(req.params().get("tenant").is_none());
        }
    }

    #[test]
    fn invalid_params_name_the_field_under_at() {
        let err = A2ARequest::from_params(Method::GetTask, json!({}), "params").unwrap_err();
        assert_eq!(err.violations[0].field, "params.id");
        let err = A2ARequest::from_params(Method::GetTask, json!([]), "").unwrap_err();
        assert_eq!(err.violations[0].field, "");
    }
}
