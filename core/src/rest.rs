//! The HTTP+JSON (REST) binding of A2A 1.0, framework-free: [`route`] turns an HTTP method, path,
//! query and body into a typed [`A2ARequest`]; [`request_for`] is its inverse for the client.
//!
//! Routes (the proto's `google.api.http` annotations, each also under a `/{tenant}` prefix):
//!
//! | HTTP | path | operation |
//! |---|---|---|
//! | POST | `/message:send` | SendMessage (body = SendMessageRequest) |
//! | POST | `/message:stream` | SendStreamingMessage |
//! | GET | `/tasks/{id}` | GetTask (`?historyLength`) |
//! | GET | `/tasks` | ListTasks (query, see below) |
//! | POST | `/tasks/{id}:cancel` | CancelTask (body optional: `{metadata}`) |
//! | GET, POST | `/tasks/{id}:subscribe` | SubscribeToTask (the proto says GET, the 1.0 prose POST) |
//! | POST | `/tasks/{taskId}/pushNotificationConfigs` | CreateTaskPushNotificationConfig |
//! | GET | `/tasks/{taskId}/pushNotificationConfigs` | ListTaskPushNotificationConfigs (`?pageSize&pageToken`) |
//! | GET | `/tasks/{taskId}/pushNotificationConfigs/{id}` | GetTaskPushNotificationConfig |
//! | DELETE | `/tasks/{taskId}/pushNotificationConfigs/{id}` | DeleteTaskPushNotificationConfig |
//! | GET | `/extendedAgentCard` | GetExtendedAgentCard |
//!
//! Path rules:
//! - `path` is the raw (still percent-encoded) path relative to the interface URL; a server
//!   mounted under a prefix strips it first. The path is split on `/` *before* decoding, so an
//!   id may hold `/` as `%2F`. An empty segment (`//`, trailing `/`) matches nothing.
//! - `:cancel` / `:subscribe` is split off at the last `:` of the final segment, before decoding,
//!   so ids containing `:` are sent as `%3A` ([`request_for`] does). A final segment whose text
//!   after its last `:` is not one of these verbs is an id (`GET /tasks/a:b` gets task `a:b`).
//! - Literal segments (`tasks`, `message:send`, …) are compared undecoded and case-sensitively.
//! - Tenant ambiguity: `/tasks/x` could be GetTask `x` or ListTasks for tenant `tasks`, and
//!   `/tasks/extendedAgentCard` likewise. The untenanted reading is tried first and wins when
//!   it fits the path *and* the HTTP method; the tenanted reading is used otherwise. So a tenant
//!   literally named `tasks` cannot use `GET /tasks/tasks` (ListTasks) or
//!   `GET /tasks/extendedAgentCard`: a documented limitation; every other tenant is unambiguous.
//!
//! Fields bound by the path (`tenant`, `id`, `taskId`) win over the same field in the body or
//! query; a non-empty, different value there is InvalidParams naming the field. Body and query
//! values otherwise fill the request exactly as JSON-RPC `params` would: POST routes read the
//! body (empty = `{}`), GET and DELETE routes read the query. Query names are the JSON names
//! (`pageSize`) or the proto names (`page_size`, which the Python SDK sends); `tenant` is accepted
//! too (the Python SDK also sends it there). Unknown keys are ignored (the server reads
//! `A2A-Version` with [`query_param`]). No 1.0 query field is repeated, so a key given twice is
//! InvalidParams and commas stay part of the value. Empty values count as absent.
//!
//! Errors are a [`RestError`]: no such path (404, MethodNotFound body), known path but another
//! HTTP method (405 + `Allow`), or a matched route whose body or query is invalid (400:
//! JSONParse for unparseable JSON, InvalidParams naming the field otherwise).

pub mod vectors;

use crate::error::{A2AError, ErrorKind};
use crate::model::{self, wire};
use crate::request::{A2ARequest, Method};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::{Map, Value};
use std::fmt;

/// Why a request did not become an [`A2ARequest`].
#[derive(Debug, Clone, PartialEq)]
pub enum RestError {
    /// No A2A operation lives at this path: HTTP 404 (MethodNotFound).
    NotFound(A2AError),
    /// The path names operations, but none for this HTTP method: HTTP 405 with `Allow`.
    /// (The error is boxed to keep `Result<A2ARequest, RestError>` small.)
    MethodNotAllowed { allowed: Vec<&'static str>, error: Box<A2AError> },
    /// The route matched; its body or query is invalid (JSONParse or InvalidParams: HTTP 400).
    Invalid(A2AError),
}

impl RestError {
    pub fn http_status(&self) -> u16 {
        match self {
            RestError::NotFound(_) => 404,
            RestError::MethodNotAllowed { .. } => 405,
            RestError::Invalid(e) => e.http_status(),
        }
    }

    pub fn error(&self) -> &A2AError {
        match self {
            RestError::NotFound(e) | RestError::Invalid(e) => e,
            RestError::MethodNotAllowed { error, .. } => error,
        }
    }

    pub fn into_error(self) -> A2AError {
        match self {
            RestError::NotFound(e) | RestError::Invalid(e) => e,
            RestError::MethodNotAllowed { error, .. } => *error,
        }
    }

    /// The `Allow` header of a 405 (`"GET, POST"`).
    pub fn allow(&self) -> Option<String> {
        match self {
            RestError::MethodNotAllowed { allowed, .. } => Some(allowed.join(", ")),
            _ => None,
        }
    }

    /// The `google.rpc.Status` body, its `code` being the HTTP status actually sent.
    pub fn to_http_body(&self) -> Value {
        let mut body = self.error().to_http_body();
        body["error"]["code"] = self.http_status().into();
        body
    }
}

impl fmt::Display for RestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}: {}", self.http_status(), self.error())
    }
}

impl std::error::Error for RestError {}

impl From<RestError> for A2AError {
    fn from(e: RestError) -> Self {
        e.into_error()
    }
}

/// The shapes of path the binding knows, before the HTTP method picks the operation.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Resource {
    MessageSend,
    MessageStream,
    Tasks,
    Task,
    TaskCancel,
    TaskSubscribe,
    PushConfigs,
    PushConfig,
    ExtendedCard,
}

impl Resource {
    fn operations(self) -> &'static [(&'static str, Method)] {
        match self {
            Resource::MessageSend => &[("POST", Method::SendMessage)],
            Resource::MessageStream => &[("POST", Method::SendStreamingMessage)],
            Resource::Tasks => &[("GET", Method::ListTasks)],
            Resource::Task => &[("GET", Method::GetTask)],
            Resource::TaskCancel => &[("POST", Method::CancelTask)],
            Resource::TaskSubscribe => &[("GET", Method::SubscribeToTask), ("POST", Method::SubscribeToTask)],
            Resource::PushConfigs => {
                &[("GET", Method::ListTaskPushNotificationConfigs), ("POST", Method::CreateTaskPushNotificationConfig)]
            }
            Resource::PushConfig => {
                &[("GET", Method::GetTaskPushNotificationConfig), ("DELETE", Method::DeleteTaskPushNotificationConfig)]
            }
            Resource::ExtendedCard => &[("GET", Method::GetExtendedAgentCard)],
        }
    }
}

/// A path that fits a resource; captures are still percent-encoded.
struct PathMatch<'a> {
    resource: Resource,
    tenant: Option<&'a str>,
    task: Option<&'a str>,
    config: Option<&'a str>,
}

fn match_untenanted<'a>(segments: &[&'a str]) -> Option<PathMatch<'a>> {
    let m = |resource, task, config| Some(PathMatch { resource, tenant: None, task, config });
    match *segments {
        ["message:send"] => m(Resource::MessageSend, None, None),
        ["message:stream"] => m(Resource::MessageStream, None, None),
        ["extendedAgentCard"] => m(Resource::ExtendedCard, None, None),
        ["tasks"] => m(Resource::Tasks, None, None),
        ["tasks", last] => match last.rsplit_once(':') {
            Some(("", "cancel" | "subscribe")) => None,
            Some((id, "cancel")) => m(Resource::TaskCancel, Some(id), None),
            Some((id, "subscribe")) => m(Resource::TaskSubscribe, Some(id), None),
            _ => m(Resource::Task, Some(last), None),
        },
        ["tasks", task, "pushNotificationConfigs"] => m(Resource::PushConfigs, Some(task), None),
        ["tasks", task, "pushNotificationConfigs", config] => m(Resource::PushConfig, Some(task), Some(config)),
        _ => None,
    }
}

/// The readings of a path, untenanted first (see the module docs).
fn match_path<'a>(segments: &[&'a str]) -> Vec<PathMatch<'a>> {
    let mut found: Vec<PathMatch<'a>> = match_untenanted(segments).into_iter().collect();
    if let Some((tenant, rest)) = segments.split_first()
        && let Some(m) = match_untenanted(rest)
    {
        found.push(PathMatch { tenant: Some(tenant), ..m });
    }
    found
}

/// Bounds what a peer's text puts into an error message.
fn shown(text: &str) -> String {
    text.chars().take(200).collect()
}

/// Turns an HTTP request into a typed A2A request. `path` must not include the query (if it
/// does and `query` is `None`, it is split off); `body` is ignored by GET and DELETE routes.
pub fn route(method: &str, path: &str, query: Option<&str>, body: &[u8]) -> Result<A2ARequest, RestError> {
    let (path, query) = match path.split_once('?') {
        Some((p, q)) => (p, query.or(Some(q))),
        None => (path, query),
    };
    let segments: Vec<&str> = match path.strip_prefix('/') {
        Some(rest) => rest.split('/').collect(),
        None => Vec::new(),
    };
    let found =
        if segments.is_empty() || segments.iter().any(|s| s.is_empty()) { Vec::new() } else { match_path(&segments) };
    // HEAD is GET without the body (RFC 9110 §9.3.2), for every GET but a stream's.
    let head = method == "HEAD";
    let wanted = if head { "GET" } else { method };
    for m in &found {
        let op = m.resource.operations().iter().find(|&&(verb, op)| verb == wanted && !(head && op.is_streaming()));
        if let Some(&(_, op)) = op {
            return build(op, wanted, m, query, body).map_err(RestError::Invalid);
        }
    }
    if found.is_empty() {
        let error = A2AError::new(ErrorKind::MethodNotFound, format!("no A2A operation at {}", shown(path)))
            .with_meta("path", shown(path));
        return Err(RestError::NotFound(error));
    }
    let mut allowed: Vec<&'static str> = Vec::new();
    for &(verb, op) in found.iter().flat_map(|m| m.resource.operations()) {
        let verbs: &[&'static str] = if verb == "GET" && !op.is_streaming() { &["GET", "HEAD"] } else { &[verb] };
        for verb in verbs {
            if !allowed.contains(verb) {
                allowed.push(verb);
            }
        }
    }
    let error = A2AError::new(
        ErrorKind::MethodNotFound,
        format!("HTTP method {} is not allowed on {}; allowed: {}", shown(method), shown(path), allowed.join(", ")),
    );
    Err(RestError::MethodNotAllowed { allowed, error: Box::new(error) })
}

fn build(
    op: Method,
    http_method: &str,
    m: &PathMatch<'_>,
    query: Option<&str>,
    body: &[u8],
) -> Result<A2ARequest, A2AError> {
    let bound = m.tenant.is_some() || m.task.is_some() || m.config.is_some();
    if http_method == "POST" && !bound && body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
        // The common case (`POST /message:send`): the body alone is the request, read in one
        // pass. Invalid JSON falls through to `body_object`, which reports it.
        if let Ok(raw) = serde_json::from_slice::<&serde_json::value::RawValue>(body) {
            return A2ARequest::from_raw_params(op, raw, "");
        }
    }
    let mut fields = if http_method == "POST" { body_object(body)? } else { query_object(op, query.unwrap_or(""))? };
    if let Some(tenant) = m.tenant {
        bind(&mut fields, "tenant", tenant)?;
    }
    // The proto names the task `id` where the task is the resource, `taskId` where a config is.
    let task_field = match op {
        Method::GetTask | Method::CancelTask | Method::SubscribeToTask => "id",
        _ => "taskId",
    };
    if let Some(task) = m.task {
        bind(&mut fields, task_field, task)?;
    }
    if let Some(config) = m.config {
        bind(&mut fields, "id", config)?;
    }
    A2ARequest::from_params(op, Value::Object(fields), "")
}

/// Puts a decoded path capture into `field`; a different non-empty value already there is an error.
/// Sets `field` from its percent-encoded path segment `raw`; a different non-empty value the
/// body gave is InvalidParams. (Extension methods' tenants are bound by it too.)
pub(crate) fn bind(fields: &mut Map<String, Value>, field: &str, raw: &str) -> Result<(), A2AError> {
    let value = percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| A2AError::invalid_field(field, "is not valid UTF-8 once percent-decoded"))?
        .into_owned();
    if let Some(Value::String(given)) = fields.get(field)
        && !given.is_empty()
        && *given != value
    {
        return Err(A2AError::invalid_field(
            field,
            format!("{:?} does not match {:?} in the path", shown(given), shown(&value)),
        ));
    }
    fields.insert(field.to_owned(), Value::String(value));
    Ok(())
}

fn body_object(body: &[u8]) -> Result<Map<String, Value>, A2AError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice(body) {
        Ok(Value::Object(obj)) => match crate::model::duplicates::first_duplicate(body) {
            Some(path) => Err(A2AError::invalid_field(path, "is given more than once")),
            None => Ok(obj),
        },
        Ok(_) => Err(A2AError::invalid_field("", "the request body must be a JSON object")),
        Err(e) => Err(A2AError::invalid_json(&e)),
    }
}

/// How a query value becomes JSON for the model to read.
#[derive(Clone, Copy)]
enum Kind {
    /// Strings, and int32 and Timestamp fields, which the model reads from strings.
    Text,
    /// `true` / `false`.
    Bool,
    /// A proto enum: a name, or a number.
    Enum,
}

/// (JSON name, proto name, kind) of the query fields of each GET/DELETE operation.
fn query_fields(op: Method) -> &'static [(&'static str, &'static str, Kind)] {
    const TENANT: (&str, &str, Kind) = ("tenant", "tenant", Kind::Text);
    const PAGE_SIZE: (&str, &str, Kind) = ("pageSize", "page_size", Kind::Text);
    const PAGE_TOKEN: (&str, &str, Kind) = ("pageToken", "page_token", Kind::Text);
    const HISTORY: (&str, &str, Kind) = ("historyLength", "history_length", Kind::Text);
    match op {
        Method::GetTask => &[TENANT, HISTORY],
        Method::ListTasks => &[
            TENANT,
            ("contextId", "context_id", Kind::Text),
            ("status", "status", Kind::Enum),
            PAGE_SIZE,
            PAGE_TOKEN,
            HISTORY,
            ("statusTimestampAfter", "status_timestamp_after", Kind::Text),
            ("includeArtifacts", "include_artifacts", Kind::Bool),
        ],
        Method::ListTaskPushNotificationConfigs => &[TENANT, PAGE_SIZE, PAGE_TOKEN],
        _ => &[TENANT],
    }
}

fn query_object(op: Method, query: &str) -> Result<Map<String, Value>, A2AError> {
    let known = query_fields(op);
    let mut fields = Map::new();
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        let Some(&(name, _, kind)) = known.iter().find(|(json, proto, _)| key == *json || key == *proto) else {
            continue;
        };
        if value.is_empty() {
            continue;
        }
        if fields.contains_key(name) {
            return Err(A2AError::invalid_field(name, "is given more than once"));
        }
        let json = match kind {
            Kind::Text => Value::String(value.into_owned()),
            Kind::Bool => match value.to_ascii_lowercase().as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => {
                    return Err(A2AError::invalid_field(
                        name,
                        format!("must be true or false, got {:?}", shown(&value)),
                    ));
                }
            },
            Kind::Enum => match value.parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => Value::String(value.into_owned()),
            },
        };
        fields.insert(name.to_owned(), json);
    }
    Ok(fields)
}

/// The first value of query parameter `name` (matched ASCII case-insensitively, as service
/// parameters are), decoded. For `A2A-Version` and `A2A-Extensions` given in the query.
pub fn query_param(query: &str, name: &str) -> Option<String> {
    form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.into_owned())
}

/// Everything but RFC 3986 unreserved characters is encoded in a path segment.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

fn segment(text: &str) -> String {
    utf8_percent_encode(text, SEGMENT).to_string()
}

/// The JSON body of `params` without the fields the path carries.
fn body_without<T: serde::Serialize>(params: &T, path_fields: &[&str]) -> Vec<u8> {
    let mut value = model::to_value(params);
    if let Value::Object(obj) = &mut value {
        for field in path_fields {
            obj.remove(*field);
        }
    }
    serde_json::to_vec(&value).unwrap_or_default()
}

/// The HTTP request for an operation: (method, path and query, body). The path is relative to
/// the interface URL and starts with `/` (`/{tenant}` first when the request has a tenant); ids
/// are percent-encoded, so `route(request_for(r)) == r` for every valid request (the one
/// exception: a tenant named `tasks`, see the module docs). Ids `.` and `..` survive [`route`]
/// but URL libraries that normalise dot segments (WHATWG URL, even when encoded) mangle them.
pub fn request_for(req: &A2ARequest) -> (&'static str, String, Option<Vec<u8>>) {
    let mut path = String::new();
    if !req.tenant().is_empty() {
        path.push('/');
        path.push_str(&segment(req.tenant()));
    }
    let mut query = form_urlencoded::Serializer::new(String::new());
    let (method, body) = match req {
        A2ARequest::SendMessage(r) => {
            path.push_str("/message:send");
            ("POST", Some(body_without(r, &["tenant"])))
        }
        A2ARequest::SendStreamingMessage(r) => {
            path.push_str("/message:stream");
            ("POST", Some(body_without(r, &["tenant"])))
        }
        A2ARequest::GetTask(r) => {
            path.push_str(&format!("/tasks/{}", segment(&r.id)));
            if let Some(n) = r.history_length {
                query.append_pair("historyLength", &n.to_string());
            }
            ("GET", None)
        }
        A2ARequest::ListTasks(r) => {
            path.push_str("/tasks");
            if !r.context_id.is_empty() {
                query.append_pair("contextId", &r.context_id);
            }
            if let Some(state) = r.status {
                query.append_pair("status", state.as_str());
            }
            if let Some(n) = r.page_size {
                query.append_pair("pageSize", &n.to_string());
            }
            if !r.page_token.is_empty() {
                query.append_pair("pageToken", &r.page_token);
            }
            if let Some(n) = r.history_length {
                query.append_pair("historyLength", &n.to_string());
            }
            if let Some(ts) = &r.status_timestamp_after {
                query.append_pair("statusTimestampAfter", &wire::timestamp::format(ts));
            }
            if let Some(b) = r.include_artifacts {
                query.append_pair("includeArtifacts", if b { "true" } else { "false" });
            }
            ("GET", None)
        }
        A2ARequest::CancelTask(r) => {
            path.push_str(&format!("/tasks/{}:cancel", segment(&r.id)));
            ("POST", Some(body_without(r, &["tenant", "id"])))
        }
        A2ARequest::SubscribeToTask(r) => {
            path.push_str(&format!("/tasks/{}:subscribe", segment(&r.id)));
            ("GET", None)
        }
        A2ARequest::CreateTaskPushNotificationConfig(r) => {
            path.push_str(&format!("/tasks/{}/pushNotificationConfigs", segment(&r.task_id)));
            ("POST", Some(body_without(r, &["tenant", "taskId"])))
        }
        A2ARequest::GetTaskPushNotificationConfig(r) => {
            path.push_str(&format!("/tasks/{}/pushNotificationConfigs/{}", segment(&r.task_id), segment(&r.id)));
            ("GET", None)
        }
        A2ARequest::ListTaskPushNotificationConfigs(r) => {
            path.push_str(&format!("/tasks/{}/pushNotificationConfigs", segment(&r.task_id)));
            if r.page_size != 0 {
                query.append_pair("pageSize", &r.page_size.to_string());
            }
            if !r.page_token.is_empty() {
                query.append_pair("pageToken", &r.page_token);
            }
            ("GET", None)
        }
        A2ARequest::DeleteTaskPushNotificationConfig(r) => {
            path.push_str(&format!("/tasks/{}/pushNotificationConfigs/{}", segment(&r.task_id), segment(&r.id)));
            ("DELETE", None)
        }
        A2ARequest::GetExtendedAgentCard(_) => {
            path.push_str("/extendedAgentCard");
            ("GET", None)
        }
    };
    let query = query.finish();
    if !query.is_empty() {
        path.push('?');
        path.push_str(&query);
    }
    (method, path, body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;
    use serde_json::json;

    fn ok(method: &str, path: &str, query: Option<&str>, body: &str) -> A2ARequest {
        route(method, path, query, body.as_bytes()).unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    fn err(method: &str, path: &str, query: Option<&str>, body: &str) -> RestError {
        route(method, path, query, body.as_bytes()).unwrap_err()
    }

    /// (status, JSON-RPC code, first violation's field)
    fn err_summary(e: &RestError) -> (u16, i32, Option<&str>) {
        (e.http_status(), e.error().code(), e.error().violations.first().map(|v| v.field.as_str()))
    }

    const MSG: &str = r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#;

    #[test]
    fn every_route_with_and_without_tenant() {
        type Case<'a> = (&'a str, &'a str, Option<&'a str>, &'a str, Method, Value);
        let cases: [Case; 12] = [
            ("POST", "/message:send", None, MSG, Method::SendMessage, json!({})),
            ("POST", "/message:stream", None, MSG, Method::SendStreamingMessage, json!({})),
            ("GET", "/tasks/t1", Some("historyLength=3"), "", Method::GetTask, json!({"id": "t1", "historyLength": 3})),
            ("GET", "/tasks", Some("pageSize=5"), "", Method::ListTasks, json!({"pageSize": 5})),
            (
                "POST",
                "/tasks/t1:cancel",
                None,
                r#"{"metadata":{"a":1}}"#,
                Method::CancelTask,
                json!({"id": "t1", "metadata": {"a": 1}}),
            ),
            ("GET", "/tasks/t1:subscribe", None, "", Method::SubscribeToTask, json!({"id": "t1"})),
            ("POST", "/tasks/t1:subscribe", None, "", Method::SubscribeToTask, json!({"id": "t1"})),
            (
                "POST",
                "/tasks/t1/pushNotificationConfigs",
                None,
                r#"{"url":"https://h/cb","id":"c1"}"#,
                Method::CreateTaskPushNotificationConfig,
                json!({"taskId": "t1", "id": "c1", "url": "https://h/cb"}),
            ),
            (
                "GET",
                "/tasks/t1/pushNotificationConfigs/c1",
                None,
                "",
                Method::GetTaskPushNotificationConfig,
                json!({"taskId": "t1", "id": "c1"}),
            ),
            (
                "GET",
                "/tasks/t1/pushNotificationConfigs",
                Some("pageSize=2&pageToken=p"),
                "",
                Method::ListTaskPushNotificationConfigs,
                json!({"taskId": "t1", "pageSize": 2, "pageToken": "p"}),
            ),
            (
                "DELETE",
                "/tasks/t1/pushNotificationConfigs/c1",
                None,
                "",
                Method::DeleteTaskPushNotificationConfig,
                json!({"taskId": "t1", "id": "c1"}),
            ),
            ("GET", "/extendedAgentCard", None, "", Method::GetExtendedAgentCard, json!({})),
        ];
        for (verb, path, query, body, method, params) in cases {
            for tenant in [None, Some("acme"), Some("a%2Fb")] {
                let full = match tenant {
                    Some(t) => format!("/{t}{path}"),
                    None => path.to_owned(),
                };
                let req = ok(verb, &full, query, body);
                assert_eq!(req.method(), method, "{verb} {full}");
                let decoded = tenant.map(|t| t.replace("%2F", "/")).unwrap_or_default();
                assert_eq!(req.tenant(), decoded, "{verb} {full}");
                let mut got = req.params();
                got.as_object_mut().unwrap().remove("tenant");
                got.as_object_mut().unwrap().remove("message");
                assert_eq!(got, params, "{verb} {full}");
            }
        }
    }

    #[test]
    fn ids_are_decoded_after_splitting() {
        let req = ok("GET", "/tasks/a%2Fb%3Ac%20d%25", None, "");
        assert_eq!(req, A2ARequest::GetTask(GetTaskRequest { id: "a/b:c d%".into(), ..Default::default() }));
        // The verb is split at the last raw ':', so an encoded ':' stays in the id.
        let req = ok("POST", "/tasks/x%3Acancel:cancel", None, "");
        assert_eq!(req, A2ARequest::CancelTask(CancelTaskRequest { id: "x:cancel".into(), ..Default::default() }));
        let req = ok("GET", "/tasks/a:b:subscribe", None, "");
        assert_eq!(req, A2ARequest::SubscribeToTask(SubscribeToTaskRequest { id: "a:b".into(), ..Default::default() }));
        // An unknown verb is part of the id; '+' in a path is a plus.
        let req = ok("GET", "/tasks/a:b+c", None, "");
        assert_eq!(req, A2ARequest::GetTask(GetTaskRequest { id: "a:b+c".into(), ..Default::default() }));
        let req = ok("GET", "/t%C3%A9/tasks/%E2%9C%93/pushNotificationConfigs/c%2F1", None, "");
        assert_eq!(req.tenant(), "té");
        assert_eq!(req.params(), json!({"tenant": "té", "taskId": "✓", "id": "c/1"}));
        // Invalid UTF-8 after decoding names the field.
        let e = err("GET", "/tasks/%FF", None, "");
        assert_eq!(err_summary(&e), (400, -32602, Some("id")));
        let e = err("GET", "/%FF/tasks", None, "");
        assert_eq!(err_summary(&e), (400, -32602, Some("tenant")));
    }

    #[test]
    fn tenant_ambiguity_prefers_the_untenanted_reading() {
        assert_eq!(
            ok("GET", "/tasks/abc", None, ""),
            A2ARequest::GetTask(GetTaskRequest { id: "abc".into(), ..Default::default() })
        );
        let list = ok("GET", "/t1/tasks", None, "");
        assert_eq!(list, A2ARequest::ListTasks(ListTasksRequest { tenant: "t1".into(), ..Default::default() }));
        // Documented limitation: tenant "tasks" + ListTasks reads as GetTask "tasks".
        assert_eq!(ok("GET", "/tasks/tasks", None, "").method(), Method::GetTask);
        assert_eq!(ok("GET", "/tasks/extendedAgentCard", None, "").method(), Method::GetTask);
        // When the untenanted reading does not fit the HTTP method, the tenanted one is used.
        let send = ok("POST", "/tasks/message:send", None, MSG);
        assert_eq!((send.method(), send.tenant()), (Method::SendMessage, "tasks"));
        let get = ok("GET", "/tasks/tasks/x", None, "");
        assert_eq!(get.params(), json!({"tenant": "tasks", "id": "x"}));
        // Both readings wrong for the method: 405 listing the methods of both.
        let e = err("DELETE", "/tasks/message:send", None, "");
        assert_eq!(e.allow().as_deref(), Some("GET, HEAD, POST"));
    }

    #[test]
    fn unknown_paths_are_not_found() {
        for path in [
            "",
            "/",
            "tasks",
            "/nope",
            "/tasks/",
            "//tasks",
            "/tasks//x",
            "/v1/tasks/x/y",
            "/a/b/tasks",
            "/message:send/x",
            "/tasks/:cancel",
            "/t/tasks/x/pushNotificationConfigs/c/d",
            "/Tasks",
        ] {
            let e = err("GET", path, None, "");
            assert!(matches!(e, RestError::NotFound(_)), "{path}: {e}");
            assert_eq!((e.http_status(), e.error().code()), (404, -32601), "{path}");
            assert_eq!(e.to_http_body()["error"]["code"], 404);
        }
    }

    #[test]
    fn wrong_methods_are_405_with_allow() {
        let cases = [
            ("GET", "/message:send", "POST"),
            ("PUT", "/t/message:stream", "POST"),
            ("POST", "/tasks", "GET, HEAD"),
            ("DELETE", "/tasks/x", "GET, HEAD"),
            ("GET", "/tasks/x:cancel", "POST"),
            ("DELETE", "/tasks/x:subscribe", "GET, POST"),
            ("HEAD", "/tasks/x:subscribe", "GET, POST"),
            ("PUT", "/tasks/x/pushNotificationConfigs", "GET, HEAD, POST"),
            ("POST", "/tasks/x/pushNotificationConfigs/c", "GET, HEAD, DELETE"),
            ("POST", "/extendedAgentCard", "GET, HEAD"),
            ("get", "/tasks/x", "GET, HEAD"),
        ];
        for (verb, path, allow) in cases {
            let e = err(verb, path, None, "");
            assert_eq!(e.http_status(), 405, "{verb} {path}");
            assert_eq!(e.allow().as_deref(), Some(allow), "{verb} {path}");
            assert_eq!(e.to_http_body()["error"]["code"], 405);
            assert_eq!(A2AError::from(e).kind, ErrorKind::MethodNotFound);
        }
    }

    #[test]
    fn head_is_get_without_a_stream() {
        assert!(matches!(route("HEAD", "/tasks/x", None, b""), Ok(A2ARequest::GetTask(r)) if r.id == "x"));
        assert!(matches!(route("HEAD", "/tasks", Some("pageSize=5"), b""), Ok(A2ARequest::ListTasks(_))));
        assert!(matches!(route("HEAD", "/extendedAgentCard", None, b""), Ok(A2ARequest::GetExtendedAgentCard(_))));
        assert_eq!(err("HEAD", "/tasks/x:subscribe", None, "").http_status(), 405);
        assert_eq!(err("HEAD", "/message:send", None, "").http_status(), 405);
    }

    #[test]
    fn list_tasks_query() {
        let q = "contextId=c%201&status=TASK_STATE_WORKING&pageSize=10&pageToken=tok&historyLength=0\
                 &statusTimestampAfter=2025-01-02T03:04:05%2B02:00&includeArtifacts=true&A2A-Version=1.0&other=x";
        let req = ok("GET", "/tasks", Some(q), "");
        assert_eq!(
            req.params(),
            json!({
                "contextId": "c 1", "status": "TASK_STATE_WORKING", "pageSize": 10, "pageToken": "tok",
                "historyLength": 0, "statusTimestampAfter": "2025-01-02T01:04:05.000Z", "includeArtifacts": true
            })
        );
        // Proto (snake_case) names, enum numbers, '+' as space, empty values as absent.
        let req =
            ok("GET", "/tasks", Some("context_id=a+b&status=3&page_size=7&include_artifacts=FALSE&page_token="), "");
        assert_eq!(
            req.params(),
            json!({"contextId": "a b", "status": "TASK_STATE_COMPLETED", "pageSize": 7, "includeArtifacts": false})
        );
        // UNSPECIFIED means no filter.
        assert_eq!(ok("GET", "/tasks", Some("status=TASK_STATE_UNSPECIFIED"), "").params(), json!({}));
        // A comma is part of the value: no 1.0 query field is repeated.
        assert_eq!(ok("GET", "/tasks", Some("contextId=a,b"), "").params(), json!({"contextId": "a,b"}));
    }

    #[test]
    fn bad_query_values_name_the_field() {
        let cases = [
            ("status=DONE", "status"),
            ("status=working", "status"),
            ("status=99", "status"),
            ("pageSize=0", "pageSize"),
            ("pageSize=101", "pageSize"),
            ("pageSize=ten", "pageSize"),
            ("pageSize=1.5", "pageSize"),
            ("historyLength=-1", "historyLength"),
            ("statusTimestampAfter=yesterday", "statusTimestampAfter"),
            ("includeArtifacts=yes", "includeArtifacts"),
            ("pageSize=1&pageSize=2", "pageSize"),
            ("pageSize=1&page_size=2", "pageSize"),
        ];
        for (q, field) in cases {
            let e = err("GET", "/tasks", Some(q), "");
            assert_eq!(err_summary(&e), (400, -32602, Some(field)), "{q}: {e}");
        }
        let e = err("GET", "/tasks/x", Some("historyLength=abc"), "");
        assert_eq!(err_summary(&e), (400, -32602, Some("historyLength")));
        let e = err("GET", "/tasks/x/pushNotificationConfigs", Some("pageSize=-2"), "");
        assert_eq!(err_summary(&e), (400, -32602, Some("pageSize")));
    }

    #[test]
    fn query_in_path_and_tenant_in_query() {
        let req = ok("GET", "/tasks/x?historyLength=2", None, "");
        assert_eq!(req.params(), json!({"id": "x", "historyLength": 2}));
        // The Python SDK repeats the tenant in the query: agreeing is fine, untenanted paths take it.
        assert_eq!(ok("GET", "/t/tasks/x", Some("tenant=t"), "").tenant(), "t");
        assert_eq!(ok("GET", "/tasks/x", Some("tenant=t"), "").tenant(), "t");
        let e = err("GET", "/t/tasks/x", Some("tenant=u"), "");
        assert_eq!(err_summary(&e), (400, -32602, Some("tenant")));
        // Query parameters of POST routes are not read.
        assert_eq!(ok("POST", "/tasks/x:cancel", Some("tenant=u"), "").tenant(), "");
    }

    #[test]
    fn bodies() {
        // Cancel and subscribe take an optional body.
        for body in ["", "  \n", "{}"] {
            assert_eq!(ok("POST", "/tasks/x:cancel", None, body).params(), json!({"id": "x"}));
            assert_eq!(ok("POST", "/tasks/x:subscribe", None, body).params(), json!({"id": "x"}));
        }
        // Path fields win; agreeing body fields are fine, different ones are errors.
        assert_eq!(ok("POST", "/tasks/x:cancel", None, r#"{"id":"x","tenant":""}"#).params(), json!({"id": "x"}));
        let e = err("POST", "/tasks/x:cancel", None, r#"{"id":"y"}"#);
        assert_eq!(err_summary(&e), (400, -32602, Some("id")));
        let req = ok("POST", "/tasks/t1/pushNotificationConfigs", None, r#"{"taskId":"t1","url":"https://h"}"#);
        assert_eq!(req.params(), json!({"taskId": "t1", "url": "https://h"}));
        let e = err("POST", "/tasks/t1/pushNotificationConfigs", None, r#"{"taskId":"t2","url":"https://h"}"#);
        assert_eq!(err_summary(&e), (400, -32602, Some("taskId")));
        let e = err(
            "POST",
            "/acme/message:send",
            None,
            r#"{"tenant":"other","message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#,
        );
        assert_eq!(err_summary(&e), (400, -32602, Some("tenant")));
        // A body tenant on an untenanted path is kept.
        let req = ok(
            "POST",
            "/message:send",
            None,
            r#"{"tenant":"b","message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#,
        );
        assert_eq!(req.tenant(), "b");
        // Syntax errors are JSONParse; other shapes and model errors are InvalidParams.
        for bad in ["{", "{\"a\":}", "\u{feff}{}", "nul"] {
            assert_eq!(err_summary(&err("POST", "/message:send", None, bad)), (400, -32700, None), "{bad}");
        }
        assert_eq!(err_summary(&err("POST", "/message:send", None, "[]")), (400, -32602, Some("")));
        assert_eq!(err_summary(&err("POST", "/message:send", None, "")), (400, -32602, Some("message")));
        assert_eq!(
            err_summary(&err("POST", "/message:send", None, r#"{"message":{}}"#)),
            (400, -32602, Some("message.messageId"))
        );
        assert_eq!(
            err_summary(&err("POST", "/tasks/t/pushNotificationConfigs", None, "{}")),
            (400, -32602, Some("url"))
        );
        // GET ignores any body.
        assert_eq!(ok("GET", "/tasks/x", None, "garbage").params(), json!({"id": "x"}));
    }

    #[test]
    fn query_param_is_case_insensitive() {
        assert_eq!(query_param("a=1&a2a-version=1.0&A2A-Version=0.3", "A2A-Version").as_deref(), Some("1.0"));
        assert_eq!(query_param("A2A-Extensions=urn%3Ax%2Curn%3Ay", "a2a-extensions").as_deref(), Some("urn:x,urn:y"));
        assert_eq!(query_param("", "A2A-Version"), None);
    }

    #[test]
    fn request_for_builds_http_requests() {
        let req =
            A2ARequest::GetTask(GetTaskRequest { tenant: "a b".into(), id: "x/y:z".into(), history_length: Some(2) });
        assert_eq!(request_for(&req), ("GET", "/a%20b/tasks/x%2Fy%3Az?historyLength=2".to_owned(), None));
        let req = A2ARequest::CancelTask(CancelTaskRequest { id: "t".into(), ..Default::default() });
        assert_eq!(request_for(&req), ("POST", "/tasks/t:cancel".to_owned(), Some(b"{}".to_vec())));
        let req = A2ARequest::ListTasks(ListTasksRequest {
            context_id: "c&d".into(),
            status: Some(TaskState::Working),
            include_artifacts: Some(false),
            ..Default::default()
        });
        let (verb, path, body) = request_for(&req);
        assert_eq!(
            (verb, path.as_str(), body),
            ("GET", "/tasks?contextId=c%26d&status=TASK_STATE_WORKING&includeArtifacts=false", None)
        );
        let cfg = TaskPushNotificationConfig {
            tenant: "t".into(),
            task_id: "k".into(),
            url: "https://h".into(),
            ..Default::default()
        };
        let (verb, path, body) = request_for(&A2ARequest::CreateTaskPushNotificationConfig(cfg.clone()));
        assert_eq!((verb, path.as_str()), ("POST", "/t/tasks/k/pushNotificationConfigs"));
        assert_eq!(serde_json::from_slice::<Value>(&body.unwrap()).unwrap(), json!({"url": "https://h"}));
        let back = route(
            verb,
            &path,
            None,
            &request_for(&A2ARequest::CreateTaskPushNotificationConfig(cfg.clone())).2.unwrap(),
        );
        assert_eq!(back.unwrap(), A2ARequest::CreateTaskPushNotificationConfig(cfg));
        let del = A2ARequest::DeleteTaskPushNotificationConfig(TaskPushNotificationConfigRef {
            tenant: String::new(),
            task_id: "k".into(),
            id: "c~1.2_3-4".into(),
        });
        assert_eq!(request_for(&del), ("DELETE", "/tasks/k/pushNotificationConfigs/c~1.2_3-4".to_owned(), None));
    }
}
