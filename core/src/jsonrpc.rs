//! The JSON-RPC 2.0 binding of A2A: the request envelope in, typed [`A2ARequest`]s out, and the
//! response envelope both ways (the server writes it, the client reads it).
//!
//! Parsing is two steps so that the server can route A2A 0.3 method names to the 0.3 adapter
//! before the 1.0 parameters are read:
//!
//! ```text
//! parse_envelope(body) ─▶ Envelope {id, method, params}
//!        │                    ├─ is_v03_method(&method) ─▶ 0.3 adapter (model::v03)
//!        │                    └─ parse_v10(envelope) ─▶ Call {id, method_name, request}
//!        └─ parse_request(body) does both for 1.0-only callers
//! ```
//!
//! Errors follow JSON-RPC 2.0 §5.1 exactly: invalid JSON is -32700 with id `null`; a batch (A2A
//! never uses them), a non-object, `jsonrpc` other than `"2.0"`, a missing or non-string
//! `method` and an id that is an object, array or boolean are -32600; an unknown method is
//! -32601; missing, non-object or invalid `params` are -32602 naming the field under `params.`.
//! The id is echoed whenever it could be read, else it is `null`. Nothing here panics on any input.

pub mod vectors;

use crate::error::{A2AError, ErrorKind, FieldViolation};
use crate::model::{self, Validate};
pub use crate::request::{A2ARequest, Method};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};
use std::fmt;

/// The only `jsonrpc` value allowed.
pub const VERSION: &str = "2.0";

/// The A2A 0.3 method names (spec §12), for routing to the 0.3 adapter.
pub const V03_METHODS: &[&str] = &[
    "message/send",
    "message/stream",
    "tasks/get",
    "tasks/cancel",
    "tasks/resubscribe",
    "tasks/pushNotificationConfig/set",
    "tasks/pushNotificationConfig/get",
    "tasks/pushNotificationConfig/list",
    "tasks/pushNotificationConfig/delete",
    "agent/getAuthenticatedExtendedCard",
];

/// Whether `name` is an A2A 0.3 JSON-RPC method name.
pub fn is_v03_method(name: &str) -> bool {
    V03_METHODS.contains(&name)
}

/// A request id: a string, a number or `null` (JSON-RPC 2.0 §4). A number keeps the JSON text it
/// was sent as, so it echoes back exactly: `1e2` stays `1e2`, and an integer beyond `u64` is
/// not rounded to a double (a client that reads ids as big integers, as Python does, would not
/// recognise the rounded one).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Id {
    String(String),
    Number(NumberText),
    Null,
}

/// The text of a JSON number, checked to be one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NumberText(Box<str>);

impl NumberText {
    /// `text` if it is a JSON number (RFC 8259 §6), however large.
    pub fn parse(text: &str) -> Option<Self> {
        is_json_number(text.as_bytes()).then(|| Self(text.into()))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&Number> for NumberText {
    fn from(n: &Number) -> Self {
        Self(n.to_string().into())
    }
}

/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
fn is_json_number(b: &[u8]) -> bool {
    let digits = |i: usize| b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = usize::from(b.first() == Some(&b'-'));
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i += digits(i),
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        let n = digits(i + 1);
        if n == 0 {
            return false;
        }
        i += 1 + n;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let n = digits(i);
        if n == 0 {
            return false;
        }
        i += n;
    }
    i == b.len()
}

impl Id {
    /// The id a JSON value stands for; `None` for the types an id may not have.
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::String(s) => Some(Id::String(s.clone())),
            Value::Number(n) => Some(Id::Number(n.into())),
            Value::Null => Some(Id::Null),
            Value::Bool(_) | Value::Array(_) | Value::Object(_) => None,
        }
    }

    /// The id an `id` member's JSON text stands for; `Ok(None)` for the types an id may not
    /// have, `Err` for text no value holds (a string with a lone surrogate escape).
    fn from_raw(raw: &RawValue) -> Result<Option<Self>, serde_json::Error> {
        let text = raw.get();
        Ok(match text.as_bytes().first() {
            Some(b'"') => Some(Id::String(serde_json::from_str(text)?)),
            Some(b'n') => (text == "null").then_some(Id::Null),
            _ => NumberText::parse(text).map(Id::Number),
        })
    }

    /// The id as a JSON value; a number beyond `f64` (`1e400`) becomes `null`.
    pub fn to_value(&self) -> Value {
        match self {
            Id::String(s) => Value::String(s.clone()),
            Id::Number(n) => serde_json::from_str(n.as_str()).unwrap_or(Value::Null),
            Id::Null => Value::Null,
        }
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id::String(s.to_owned())
    }
}
impl From<String> for Id {
    fn from(s: String) -> Self {
        Id::String(s)
    }
}
impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Id::Number(NumberText(n.to_string().into()))
    }
}
impl From<u64> for Id {
    fn from(n: u64) -> Self {
        Id::Number(NumberText(n.to_string().into()))
    }
}

/// The id as JSON text (`"abc"`, `7`, `null`), for logs.
impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::String(s) => write!(f, "{}", Value::String(s.clone())),
            Id::Number(n) => f.write_str(n.as_str()),
            Id::Null => f.write_str("null"),
        }
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Id::String(v) => s.serialize_str(v),
            // The text is a JSON number (checked when made): written as it came. An integer
            // that fits 64 bits (nearly every id) writes the same text without an allocation.
            Id::Number(n) => {
                let text = n.as_str();
                match (text.parse::<u64>(), text.parse::<i64>()) {
                    (Ok(u), _) => s.serialize_u64(u),
                    (_, Ok(i)) if text != "-0" => s.serialize_i64(i),
                    _ => match RawValue::from_string(text.to_owned()) {
                        Ok(raw) => raw.serialize(s),
                        Err(_) => s.serialize_unit(),
                    },
                }
            }
            Id::Null => s.serialize_unit(),
        }
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        Id::from_value(&value)
            .ok_or_else(|| serde::de::Error::custom("a JSON-RPC id must be a string, a number or null"))
    }
}

/// A well-formed JSON-RPC request whose method has not been interpreted yet.
#[derive(Debug, Clone)]
pub struct Envelope {
    /// `None` for a notification (no `id` member); `Some(Id::Null)` for an explicit `null`.
    pub id: Option<Id>,
    pub method: String,
    /// `None` when `params` was absent or `null`. Kept as text: the 1.0 parameters are read
    /// from it in one pass, with no JSON tree between.
    pub params: Option<Box<RawValue>>,
}

impl Envelope {
    /// `params` as a JSON value (`None` when absent or `null`).
    pub fn params_value(&self) -> Option<Value> {
        // A RawValue holds valid JSON.
        self.params.as_ref().and_then(|p| serde_json::from_str(p.get()).ok())
    }

    pub fn is_notification(&self) -> bool {
        self.id.is_none()
    }
    /// An error answer to this request (for the 0.3 adapter and the server's own checks).
    pub fn error(&self, error: A2AError) -> ErrorResponse {
        ErrorResponse::to_request(&self.id, error)
    }
}

/// A parsed A2A 1.0 call.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// `None` = a notification: JSON-RPC says the server sends no response.
    pub id: Option<Id>,
    /// The method name as received (always the wire name of `request.method()` here).
    pub method_name: String,
    pub request: A2ARequest,
}

impl Call {
    pub fn method(&self) -> Method {
        self.request.method()
    }
    pub fn is_notification(&self) -> bool {
        self.id.is_none()
    }
    /// The id a response carries (`null` for a notification, should one be written anyway).
    pub fn response_id(&self) -> Id {
        self.id.clone().unwrap_or(Id::Null)
    }
    /// An error answer to this call.
    pub fn error(&self, error: A2AError) -> ErrorResponse {
        ErrorResponse::to_request(&self.id, error)
    }
}

/// A request that failed before it reached a handler, with the id to answer with.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorResponse {
    /// The request's id when it could be read, else `Id::Null`.
    pub id: Id,
    /// The request was a well-formed notification (no `id`): JSON-RPC says not to answer. Never
    /// set for -32700 / -32600, which are always answered (with id `null`).
    pub notification: bool,
    /// Boxed to keep `Result<_, ErrorResponse>` small on the success path.
    pub error: Box<A2AError>,
}

impl ErrorResponse {
    fn null(error: A2AError) -> Self {
        Self { id: Id::Null, notification: false, error: Box::new(error) }
    }
    fn to_request(id: &Option<Id>, error: A2AError) -> Self {
        Self { id: id.clone().unwrap_or(Id::Null), notification: id.is_none(), error: Box::new(error) }
    }
    /// The JSON-RPC error response, ready to send.
    pub fn to_bytes(&self) -> Vec<u8> {
        error(&self.id, &self.error)
    }
    pub fn to_value(&self) -> Value {
        error_value(&self.id, &self.error)
    }
}

impl fmt::Display for ErrorResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (id {})", self.error, self.id)
    }
}

impl std::error::Error for ErrorResponse {}

impl From<ErrorResponse> for A2AError {
    fn from(r: ErrorResponse) -> Self {
        *r.error
    }
}

/// InvalidRequest naming the envelope member at fault (`""` = the body itself).
fn invalid_request(field: &str, description: &str) -> A2AError {
    let message = if field.is_empty() { description.to_owned() } else { format!("{field}: {description}") };
    let mut err = A2AError::invalid_request(message);
    err.violations.push(FieldViolation { field: field.to_owned(), description: description.to_owned() });
    err
}

/// The members of a request object as text, read in one pass over the body.
#[derive(Deserialize)]
struct Members<'a> {
    #[serde(default, borrow, deserialize_with = "member")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "member")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "member")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "member")]
    params: Option<&'a RawValue>,
}

/// A member that is there, `null` included (an `Option` would read `null` as absent, and
/// `"id": null` is not a notification).
fn member<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Reads the JSON-RPC envelope of a request body. See the module docs for the errors.
///
/// A well-formed request is read in one pass, its `params` kept as text. Any body that does not
/// read that way (invalid JSON, not an object, a member given twice) goes through
/// [`parse_envelope_value`], which gives every error; a member given twice (anywhere in the
/// body) is refused, InvalidParams under `params`, else InvalidRequest.
pub fn parse_envelope(body: &[u8]) -> Result<Envelope, ErrorResponse> {
    // serde would read a struct from an array too; a batch must get its own error.
    let object = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    if let Some(Ok(members)) = object.then(|| serde_json::from_slice::<Members<'_>>(body)) {
        let read = |raw: Option<&RawValue>| raw.map(|r| serde_json::from_str::<Value>(r.get())).transpose();
        // Valid JSON that no value holds (`"method": 1e400`, beyond f64; a lone surrogate
        // escape) goes the slow way, which refuses the whole body. The id is read from its
        // text, so any number echoes.
        let id = members.id.map(Id::from_raw).transpose();
        if let (Ok(jsonrpc), Ok(method), Ok(id)) = (read(members.jsonrpc), read(members.method), id) {
            let params = members.params.filter(|p| p.get() != "null").map(RawValue::to_owned);
            return check_members(id, jsonrpc.as_ref(), method.as_ref(), params);
        }
    }
    let value: Value = serde_json::from_slice(body).map_err(|e| ErrorResponse::null(A2AError::invalid_json(&e)))?;
    if let Some(path) = crate::model::duplicates::first_duplicate(body) {
        // Answered with the id the body's last `id` gives (an `id` given twice: none).
        let id = match value.get("id").map(Id::from_value) {
            Some(Some(id)) if path != "id" => id,
            _ => Id::Null,
        };
        let error = match path.strip_prefix("params.") {
            Some(_) => A2AError::invalid_field(path, "is given more than once"),
            None => invalid_request(&path, "is given more than once"),
        };
        return Err(ErrorResponse { id, notification: false, error: Box::new(error) });
    }
    parse_envelope_value(value)
}

/// The id of the request in `body`, as an answer to it carries it: `Id::Null` when it has none
/// or cannot be read.
pub fn id_of(body: &[u8]) -> Id {
    match parse_envelope(body) {
        Ok(envelope) => envelope.id.unwrap_or(Id::Null),
        Err(refused) => refused.id,
    }
}

/// [`parse_envelope`] for a body that is already a JSON value.
pub fn parse_envelope_value(value: Value) -> Result<Envelope, ErrorResponse> {
    let mut obj = match value {
        Value::Object(obj) => obj,
        Value::Array(_) => {
            return Err(ErrorResponse::null(A2AError::invalid_request("batch requests are not supported")));
        }
        _ => return Err(ErrorResponse::null(invalid_request("", "a JSON-RPC request must be a JSON object"))),
    };
    // Writing a Value as text cannot fail.
    let params = obj.remove("params").filter(|p| !p.is_null()).and_then(|p| serde_json::value::to_raw_value(&p).ok());
    let id = obj.get("id").map(Id::from_value);
    check_members(id, obj.get("jsonrpc"), obj.get("method"), params)
}

/// Checks the `id` (`None` when absent, `Some(None)` when of a type no id has), `jsonrpc` and
/// `method` members of a request object.
fn check_members(
    id: Option<Option<Id>>,
    jsonrpc: Option<&Value>,
    method: Option<&Value>,
    params: Option<Box<RawValue>>,
) -> Result<Envelope, ErrorResponse> {
    // The id first, so that every later error can echo it.
    let id = match id {
        None => None,
        Some(Some(id)) => Some(id),
        Some(None) => return Err(ErrorResponse::null(invalid_request("id", "must be a string, a number or null"))),
    };
    let fail =
        |error| Err(ErrorResponse { id: id.clone().unwrap_or(Id::Null), notification: false, error: Box::new(error) });
    if jsonrpc.and_then(Value::as_str) != Some(VERSION) {
        return fail(invalid_request("jsonrpc", "must be \"2.0\""));
    }
    let method = match method {
        Some(Value::String(m)) => m.clone(),
        Some(_) => return fail(invalid_request("method", "must be a string")),
        None => return fail(invalid_request("method", "is required")),
    };
    Ok(Envelope { id, method, params })
}

/// Interprets an envelope as an A2A 1.0 call: the method must be one of the 11 and `params` must
/// be valid for it. `GetExtendedAgentCard` may leave `params` out.
pub fn parse_v10(envelope: Envelope) -> Result<Call, ErrorResponse> {
    let Some(method) = Method::from_name(&envelope.method) else {
        return Err(envelope.error(method_not_found(&envelope.method)));
    };
    let read = match &envelope.params {
        Some(p) => A2ARequest::from_raw_params(method, p, "params"),
        None if method == Method::GetExtendedAgentCard => {
            A2ARequest::from_params(method, Value::Object(Map::new()), "params")
        }
        None => return Err(ErrorResponse::to_request(&envelope.id, A2AError::invalid_field("params", "is required"))),
    };
    match read {
        Ok(request) => Ok(Call { id: envelope.id, method_name: envelope.method, request }),
        Err(e) => Err(ErrorResponse::to_request(&envelope.id, e)),
    }
}

/// [`parse_envelope`] then [`parse_v10`]: for endpoints that speak 1.0 only.
pub fn parse_request(body: &[u8]) -> Result<Call, ErrorResponse> {
    parse_envelope(body).and_then(parse_v10)
}

fn method_not_found(name: &str) -> A2AError {
    // The name comes from the peer: bound what is echoed back.
    let shown: String = name.chars().take(128).collect();
    let mut err = A2AError::method_not_found(&shown);
    if is_v03_method(name) {
        err.message.push_str(" (an A2A 0.3 method; this endpoint speaks A2A 1.0)");
    }
    err
}

#[derive(Serialize)]
struct SuccessOut<'a, T> {
    jsonrpc: &'static str,
    id: &'a Id,
    result: T,
}

#[derive(Serialize)]
struct ErrorOut<'a> {
    jsonrpc: &'static str,
    id: &'a Id,
    error: Value,
}

#[derive(Serialize)]
struct RequestOut<'a, T> {
    jsonrpc: &'static str,
    id: &'a Id,
    method: &'a str,
    params: T,
}

/// A success response. Written directly, without an intermediate `Value`. A result that cannot
/// be serialised (never the case for the crate's models) becomes an InternalError response.
pub fn success(id: &Id, result: impl Serialize) -> Vec<u8> {
    // A task with one turn is most of a kilobyte: grown from serde_json's 128 bytes, it was
    // copied three times on the way.
    let mut out = Vec::with_capacity(1024);
    match serde_json::to_writer(&mut out, &SuccessOut { jsonrpc: VERSION, id, result }) {
        Ok(()) => out,
        Err(e) => error(id, &A2AError::internal(format!("cannot serialise the result: {e}"))),
    }
}

/// [`success`] as a JSON value (e.g. to wrap in an SSE event by other means).
pub fn success_value(id: &Id, result: impl Serialize) -> Value {
    match serde_json::to_value(result) {
        Ok(result) => serde_json::json!({"jsonrpc": VERSION, "id": id.to_value(), "result": result}),
        Err(e) => error_value(id, &A2AError::internal(format!("cannot serialise the result: {e}"))),
    }
}

/// An error response; `error.data` is the 1.0 array of `Any` details.
pub fn error(id: &Id, err: &A2AError) -> Vec<u8> {
    // Serialising a `Value` cannot fail.
    serde_json::to_vec(&ErrorOut { jsonrpc: VERSION, id, error: err.to_jsonrpc() }).unwrap_or_default()
}

/// [`error`] as a JSON value. An id is taken as a value here ([`Id::to_value`]), which a
/// number beyond f64 is not.
pub fn error_value(id: &Id, err: &A2AError) -> Value {
    serde_json::json!({"jsonrpc": VERSION, "id": id.to_value(), "error": err.to_jsonrpc()})
}

/// A request body for the client side. `method` is a string so the 0.3 client can use it too.
/// Params that cannot be serialised (impossible for the crate's models) are written as `null`,
/// which any server rejects as InvalidParams.
pub fn request(id: &Id, method: &str, params: impl Serialize) -> Vec<u8> {
    serde_json::to_vec(&RequestOut { jsonrpc: VERSION, id, method, params }).unwrap_or_else(|_| {
        serde_json::to_vec(&RequestOut { jsonrpc: VERSION, id, method, params: () }).unwrap_or_default()
    })
}

/// The request body for an A2A 1.0 call.
pub fn request_for(id: &Id, req: &A2ARequest) -> Vec<u8> {
    request(id, req.method().as_str(), req)
}

/// A response as the client reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub id: Id,
    /// `result`, or the peer's `error` rebuilt with [`A2AError::from_jsonrpc`].
    pub outcome: Result<Value, A2AError>,
}

impl Response {
    /// The result read as `T` and validated. A result that does not fit `T` is the agent's fault:
    /// InvalidAgentResponse, naming the field under `result.`.
    pub fn into_result<T: DeserializeOwned + Validate>(self) -> Result<T, A2AError> {
        let value = self.outcome?;
        model::parse_value_at(value, "result").map_err(|mut e| {
            e.kind = ErrorKind::InvalidAgentResponse;
            e
        })
    }
}

/// Reads a JSON-RPC response (a whole body, or one SSE `data` of a stream). Malformed responses
/// are -32700 (not JSON) or -32600 (not a response object) errors; an `error` member is returned
/// as `outcome`, not as this function's error.
pub fn parse_response(bytes: &[u8]) -> Result<Response, A2AError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| A2AError::invalid_json(&e))?;
    parse_response_value(value)
}

/// [`parse_response`] for a response that is already a JSON value.
pub fn parse_response_value(value: Value) -> Result<Response, A2AError> {
    let mut obj = match value {
        Value::Object(obj) => obj,
        Value::Array(_) => return Err(A2AError::invalid_request("batch responses are not supported")),
        _ => return Err(invalid_request("", "a JSON-RPC response must be a JSON object")),
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some(VERSION) {
        return Err(invalid_request("jsonrpc", "must be \"2.0\""));
    }
    let id = match obj.get("id") {
        Some(v) => Id::from_value(v).ok_or_else(|| invalid_request("id", "must be a string, a number or null"))?,
        None => return Err(invalid_request("id", "is required in a response")),
    };
    // Some peers write `"error": null` next to a result; that is no error.
    let error = obj.remove("error").filter(|e| !e.is_null());
    let result = obj.remove("result");
    let outcome = match (result, error) {
        (Some(r), Some(_)) if !r.is_null() => {
            return Err(invalid_request("", "a response has either result or error, not both"));
        }
        (_, Some(e)) => {
            if !e.get("code").is_some_and(|c| c.is_i64() || c.is_u64()) {
                return Err(invalid_request("error.code", "must be an integer"));
            }
            Err(A2AError::from_jsonrpc(&e))
        }
        (Some(r), None) => Ok(r),
        (None, None) => return Err(invalid_request("", "a response needs result or error")),
    };
    Ok(Response { id, outcome })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{GetTaskRequest, Task};
    use serde_json::json;

    const MSG: &str = r#"{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}"#;

    fn body(id: &str, method: &str, params: &str) -> Vec<u8> {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#).into_bytes()
    }

    fn err_of(body: &[u8]) -> ErrorResponse {
        parse_request(body).unwrap_err()
    }

    #[test]
    fn parses_every_method() {
        let msg = format!(r#"{{"message":{MSG}}}"#);
        let cases: [(&str, String); 11] = [
            ("SendMessage", msg.clone()),
            ("SendStreamingMessage", msg),
            ("GetTask", r#"{"id":"t1","historyLength":2}"#.into()),
            ("ListTasks", r#"{"status":"TASK_STATE_WORKING","pageSize":10}"#.into()),
            ("CancelTask", r#"{"id":"t1","metadata":{"why":"x"}}"#.into()),
            ("SubscribeToTask", r#"{"id":"t1"}"#.into()),
            ("CreateTaskPushNotificationConfig", r#"{"taskId":"t1","url":"https://h/cb"}"#.into()),
            ("GetTaskPushNotificationConfig", r#"{"taskId":"t1","id":"c1"}"#.into()),
            ("ListTaskPushNotificationConfigs", r#"{"taskId":"t1","pageSize":5}"#.into()),
            ("DeleteTaskPushNotificationConfig", r#"{"taskId":"t1","id":"c1"}"#.into()),
            ("GetExtendedAgentCard", "{}".into()),
        ];
        for (name, params) in cases {
            let call = parse_request(&body("1", name, &params)).unwrap();
            assert_eq!(call.method().as_str(), name);
            assert_eq!(call.method_name, name);
            assert_eq!(call.id, Some(Id::from(1i64)));
            let expected: Value = serde_json::from_str(&params).unwrap();
            assert_eq!(call.request.params(), expected, "{name}");
        }
        // Both send methods share params but stay distinct.
        let send = parse_request(&body("1", "SendMessage", &format!(r#"{{"message":{MSG}}}"#))).unwrap();
        assert!(matches!(send.request, A2ARequest::SendMessage(_)) && !send.request.is_streaming());
        let stream = parse_request(&body("1", "SendStreamingMessage", &format!(r#"{{"message":{MSG}}}"#))).unwrap();
        assert!(matches!(stream.request, A2ARequest::SendStreamingMessage(_)) && stream.request.is_streaming());
    }

    #[test]
    fn ids_of_every_type_echo_back() {
        for raw in
            [r#""abc""#, r#""""#, "1", "0", "-5", "1.5", "1e3", "18446744073709551615", "-9223372036854775808", "null"]
        {
            let call = parse_request(&body(raw, "GetTask", r#"{"id":"t"}"#)).unwrap();
            let sent: Value = serde_json::from_str(raw).unwrap();
            assert_eq!(call.response_id().to_value(), sent, "{raw}");
            let out: Value = serde_json::from_slice(&success(&call.response_id(), json!({}))).unwrap();
            assert_eq!(out["id"], sent, "{raw}");
            let out: Value =
                serde_json::from_slice(&error(&call.response_id(), &A2AError::of(ErrorKind::Internal))).unwrap();
            assert_eq!(out["id"], sent, "{raw}");
        }
        // Integers come back digit for digit.
        let call = parse_request(&body("18446744073709551615", "GetTask", r#"{"id":"t"}"#)).unwrap();
        assert!(String::from_utf8(success(&call.response_id(), 1)).unwrap().contains(r#""id":18446744073709551615"#));
        let call = parse_request(&body("-5", "GetTask", r#"{"id":"t"}"#)).unwrap();
        assert!(String::from_utf8(success(&call.response_id(), 1)).unwrap().contains(r#""id":-5,"#));
        // Every number comes back as the text it was sent as: not rounded, not rewritten.
        for raw in ["123456789012345678901234567890", "-98765432109876543210", "1e2", "1.50", "-0", "2E-3"] {
            let call = parse_request(&body(raw, "GetTask", r#"{"id":"t"}"#)).unwrap();
            let answers =
                [success(&call.response_id(), 1), error(&call.response_id(), &A2AError::of(ErrorKind::Internal))];
            for out in answers {
                let out = String::from_utf8(out).unwrap();
                assert!(out.contains(&format!(r#""id":{raw},"#)), "{out}");
            }
            assert_eq!(call.response_id().to_string(), raw);
        }
    }

    #[test]
    fn an_id_no_string_holds_is_a_parse_error_as_on_the_slow_path() {
        for body in [
            &br#"{"jsonrpc":"2.0","id":"\ud800","method":"GetTask","params":{"id":"t"}}"#[..],
            br#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":"\ud800","method":"GetTask","params":{"id":"t"}}"#,
        ] {
            let err = err_of(body);
            assert_eq!((err.error.code(), &err.id), (-32700, &Id::Null), "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn number_text_is_checked() {
        for good in ["0", "-0", "7", "-12", "1.5", "1e9", "1E+9", "1e-9", "123456789012345678901234567890"] {
            assert!(NumberText::parse(good).is_some(), "{good}");
        }
        for bad in ["", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1 ", "0x10", "NaN", "1.5.5", "\"1\""] {
            assert!(NumberText::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn notifications_have_no_id() {
        let call = parse_request(br#"{"jsonrpc":"2.0","method":"GetTask","params":{"id":"t"}}"#).unwrap();
        assert!(call.is_notification());
        assert_eq!(call.response_id(), Id::Null);
        let err = err_of(br#"{"jsonrpc":"2.0","method":"Nope"}"#);
        assert!(err.notification);
        assert_eq!(err.error.code(), -32601);
        // An explicit null id is a request, not a notification.
        let call = parse_request(br#"{"jsonrpc":"2.0","id":null,"method":"GetTask","params":{"id":"t"}}"#).unwrap();
        assert_eq!(call.id, Some(Id::Null));
        // An id no f64 holds is still a request, answered with the id as sent.
        for id in ["1e400", "-1e400", "1E+999"] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"GetTask","params":{{"id":"t"}}}}"#);
            let call = parse_request(body.as_bytes()).unwrap();
            assert!(!call.is_notification());
            let out = String::from_utf8(success(&call.response_id(), 1)).unwrap();
            assert!(out.contains(&format!(r#""id":{id},"#)), "{out}");
        }
        // A member given twice goes the slow way; such an id no f64 holds is refused, not
        // taken for a notification.
        let err = err_of(br#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1e400,"method":"GetTask","params":{"id":"t"}}"#);
        assert_eq!((err.error.code(), &err.id, err.notification), (-32700, &Id::Null, false));
    }

    #[test]
    fn invalid_json_is_parse_error_with_null_id() {
        for bad in [&b""[..], b"{", b"{\"jsonrpc\":\"2.0\",\"id\":1,", b"\xff\xfe", b"nul", b"{\"a\":1} x"] {
            let err = err_of(bad);
            assert_eq!((err.error.code(), &err.id, err.notification), (-32700, &Id::Null, false), "{bad:?}");
        }
    }

    #[test]
    fn envelope_errors_are_invalid_request() {
        let cases: [(&[u8], Id, &str); 10] = [
            (b"[]", Id::Null, ""),
            (br#"[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}]"#, Id::Null, ""),
            (b"\"x\"", Id::Null, ""),
            (b"42", Id::Null, ""),
            (br#"{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask"}"#, Id::Null, "id"),
            (br#"{"jsonrpc":"2.0","id":[1],"method":"GetTask"}"#, Id::Null, "id"),
            (br#"{"jsonrpc":"2.0","id":true,"method":"GetTask"}"#, Id::Null, "id"),
            (br#"{"jsonrpc":"1.0","id":"a","method":"GetTask"}"#, Id::from("a"), "jsonrpc"),
            (br#"{"id":7,"method":"GetTask"}"#, Id::from(7i64), "jsonrpc"),
            (br#"{"jsonrpc":"2.0","id":7,"method":5}"#, Id::from(7i64), "method"),
        ];
        for (bad, id, field) in cases {
            let err = err_of(bad);
            assert_eq!(err.error.code(), -32600, "{}", String::from_utf8_lossy(bad));
            assert_eq!(err.id, id, "{}", String::from_utf8_lossy(bad));
            assert!(!err.notification);
            if !field.is_empty() {
                assert_eq!(err.error.violations[0].field, field);
            }
        }
        let batch = err_of(b"[]");
        assert_eq!(batch.error.message, "batch requests are not supported");
        let missing = err_of(br#"{"jsonrpc":"2.0","id":"x"}"#);
        assert_eq!((missing.error.code(), missing.error.violations[0].field.as_str()), (-32600, "method"));
        // Missing method on a would-be notification is still answered.
        assert!(!err_of(br#"{"jsonrpc":"2.0"}"#).notification);
    }

    #[test]
    fn unknown_and_legacy_methods() {
        let err = err_of(&body("1", "tasks/get", r#"{"id":"t"}"#));
        assert_eq!((err.error.code(), &err.id), (-32601, &Id::from(1i64)));
        assert!(err.error.message.contains("0.3"));
        assert_eq!(err.error.metadata["method"], "tasks/get");
        assert_eq!(err_of(&body("1", "getTask", "{}")).error.code(), -32601);
        assert_eq!(err_of(&body("1", "", "{}")).error.code(), -32601);
        let long = "x".repeat(10_000);
        assert!(err_of(&body("1", &long, "{}")).error.message.len() < 300);
        for name in V03_METHODS {
            assert!(is_v03_method(name));
            let env = parse_envelope(&body("\"a\"", name, "{}")).unwrap();
            assert_eq!(env.method, *name);
        }
        assert!(!is_v03_method("SendMessage"));
        assert!(!is_v03_method("tasks/list"));
    }

    #[test]
    fn one_pass_reading_gives_what_the_json_tree_gives() {
        let bodies: [&[u8]; 12] = [
            br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi \u00e9"}],"metadata":{"k":[1,2.5,null]}}}}"#,
            br#" {"params":{"id":"t"}, "method":"GetTask", "id":"x", "jsonrpc":"2.0"} "#,
            br#"{"jsonrpc":"2.0","id":null,"method":"GetTask","params":{"id":"t"}}"#,
            br#"{"jsonrpc":"2.0","method":"GetTask","params":{"id":"t"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":7}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t","historyLength":-1}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":1.5}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t","unknown":1}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[]}"#,
            br#"{"jsonrpc":"2.\u0030","id":1,"method":"Get\u0054ask","params":{"id":"t"}}"#,
            br#"{"jsonrpc":"2.0","id":{},"method":"GetTask","params":{"id":"t"}}"#,
        ];
        for body in bodies {
            let shown = String::from_utf8_lossy(body);
            // The reference: the whole body as a JSON tree, its params read from the tree.
            let tree: Value = serde_json::from_slice(body).unwrap();
            let reference = parse_envelope_value(tree.clone()).and_then(|env| {
                let method = Method::from_name(&env.method).unwrap();
                let params = tree["params"].clone();
                A2ARequest::from_params(method, params, "params")
                    .map(|request| Call { id: env.id.clone(), method_name: env.method.clone(), request })
                    .map_err(|e| ErrorResponse::to_request(&env.id, e))
            });
            assert_eq!(parse_request(body), reference, "{shown}");
        }
    }

    /// Readers differ on a member given twice (most keep the last, some the first), so a proxy
    /// and this server could read two different calls from one body: refused, naming it.
    #[test]
    fn a_member_given_twice_is_refused_wherever_it_is() {
        let cases: [(&[u8], ErrorKind, &str); 5] = [
            (br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"a"},"method":"CancelTask"}"#, ErrorKind::InvalidRequest, "method"),
            (br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"a"},"params":{"id":"b"}}"#, ErrorKind::InvalidRequest, "params"),
            (br#"{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"a"}}"#, ErrorKind::InvalidRequest, "jsonrpc"),
            (br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"a","id":"b"}}"#, ErrorKind::InvalidParams, "params.id"),
            (br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","role":"ROLE_AGENT","parts":[{"text":"x"}]}}}"#, ErrorKind::InvalidParams, "params.message.role"),
        ];
        for (body, kind, field) in cases {
            let refused = parse_request(body).unwrap_err();
            assert_eq!(refused.id, Id::Number(NumberText("1".into())), "{}", String::from_utf8_lossy(body));
            assert_eq!((refused.error.kind, refused.error.violations[0].field.as_str()), (kind, field));
        }
        // The id itself twice: answered without one.
        let refused = parse_request(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"GetTask","params":{"id":"a"}}"#);
        assert_eq!(refused.unwrap_err().id, Id::Null);
    }

    #[test]
    fn deeply_nested_bodies_are_refused_not_overflowed() {
        // Past serde_json's depth limit, in the envelope and in params: an error, never a crash.
        for deep in [format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)), "{\"a\":".repeat(100_000)] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{deep}}}}}"#);
            assert!(parse_request(body.as_bytes()).is_err());
            assert!(parse_request(deep.as_bytes()).is_err());
        }
    }

    #[test]
    fn params_errors_are_invalid_params() {
        let no_params = err_of(br#"{"jsonrpc":"2.0","id":1,"method":"GetTask"}"#);
        assert_eq!((no_params.error.code(), no_params.error.violations[0].field.as_str()), (-32602, "params"));
        let null_params = err_of(br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":null}"#);
        assert_eq!(null_params.error.violations[0].field, "params");
        for p in ["[]", "[1]", "\"x\"", "3", "true"] {
            let err = err_of(&body("1", "GetTask", p));
            assert_eq!((err.error.code(), err.error.violations[0].field.as_str()), (-32602, "params"), "{p}");
            assert_eq!(err.id, Id::from(1i64));
        }
        let cases = [
            ("GetTask", "{}", "params.id"),
            ("GetTask", r#"{"id":""}"#, "params.id"),
            ("GetTask", r#"{"id":"t","historyLength":-1}"#, "params.historyLength"),
            ("SendMessage", "{}", "params.message"),
            ("SendMessage", r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}"#, "params.message.parts"),
            ("ListTasks", r#"{"pageSize":0}"#, "params.pageSize"),
            ("ListTasks", r#"{"status":"DONE"}"#, "params.status"),
            ("CreateTaskPushNotificationConfig", r#"{"taskId":"t"}"#, "params.url"),
            ("GetTaskPushNotificationConfig", r#"{"taskId":"t"}"#, "params.id"),
            ("ListTaskPushNotificationConfigs", "{}", "params.taskId"),
        ];
        for (method, params, field) in cases {
            let err = err_of(&body("\"r\"", method, params));
            assert_eq!(err.error.code(), -32602, "{method} {params}");
            assert_eq!(err.error.violations[0].field, field, "{method} {params}");
            assert_eq!(err.id, Id::from("r"));
        }
    }

    #[test]
    fn extended_card_params_may_be_omitted() {
        for b in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":null}"#,
        ] {
            let call = parse_request(b).unwrap();
            assert_eq!(call.request, A2ARequest::GetExtendedAgentCard(Default::default()));
        }
        // Present but not an object is still an error.
        assert_eq!(err_of(&body("1", "GetExtendedAgentCard", "[]")).error.code(), -32602);
    }

    #[test]
    fn envelope_keeps_params_for_the_v03_adapter() {
        let env = parse_envelope(&body("\"a\"", "message/send", r#"{"message":{"kind":"message"}}"#)).unwrap();
        assert_eq!(env.params_value(), Some(json!({"message": {"kind": "message"}})));
        assert_eq!(env.id, Some(Id::from("a")));
        let err = env.error(A2AError::of(ErrorKind::VersionNotSupported));
        assert_eq!((err.id, err.error.code()), (Id::from("a"), -32009));
        let env = parse_envelope(br#"{"jsonrpc":"2.0","method":"x","extra":1}"#).unwrap();
        assert!(env.is_notification() && env.params.is_none());
    }

    #[test]
    fn writes_responses_and_requests() {
        let ok: Value = serde_json::from_slice(&success(&Id::from("a"), json!({"task": {}}))).unwrap();
        assert_eq!(ok, json!({"jsonrpc": "2.0", "id": "a", "result": {"task": {}}}));
        assert_eq!(success_value(&Id::Null, 5), json!({"jsonrpc": "2.0", "id": null, "result": 5}));
        let err = A2AError::task_not_found("t9");
        let out: Value = serde_json::from_slice(&error(&Id::from(3i64), &err)).unwrap();
        assert_eq!(out["error"]["code"], -32001);
        assert_eq!(out["error"]["data"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(out, error_value(&Id::from(3i64), &err));
        assert_eq!(err_of(b"[]").to_value()["error"]["code"], -32600);
        // A result serde cannot write becomes an internal error, not a panic.
        let bad: std::collections::HashMap<Vec<u8>, i32> = [(vec![1], 1)].into();
        let out: Value = serde_json::from_slice(&success(&Id::from(1i64), &bad)).unwrap();
        assert_eq!(out["error"]["code"], -32603);
        let out: Value = serde_json::from_slice(&request(&Id::from(1i64), "X", &bad)).unwrap();
        assert_eq!(out["params"], Value::Null);

        let req = A2ARequest::GetTask(GetTaskRequest { id: "t1".into(), ..Default::default() });
        let bytes = request_for(&Id::from("q"), &req);
        assert_eq!(
            serde_json::from_slice::<Value>(&bytes).unwrap(),
            json!({"jsonrpc": "2.0", "id": "q", "method": "GetTask", "params": {"id": "t1"}})
        );
        let call = parse_request(&bytes).unwrap();
        assert_eq!((call.id, call.request), (Some(Id::from("q")), req));
    }

    #[test]
    fn reads_responses() {
        let r = parse_response(
            br#"{"jsonrpc":"2.0","id":"a","result":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}"#,
        )
        .unwrap();
        assert_eq!(r.id, Id::from("a"));
        let task: Task = r.into_result().unwrap();
        assert_eq!(task.id, "t");

        let r = parse_response(&error(&Id::from(2i64), &A2AError::task_not_found("t"))).unwrap();
        assert_eq!(r.id, Id::from(2i64));
        assert_eq!(r.outcome.clone().unwrap_err(), A2AError::task_not_found("t"));
        assert_eq!(r.into_result::<Task>().unwrap_err().kind, ErrorKind::TaskNotFound);

        // A result that is not a valid model is the agent's fault.
        let r = parse_response(br#"{"jsonrpc":"2.0","id":1,"result":{"id":"t"}}"#).unwrap();
        let err = r.into_result::<Task>().unwrap_err();
        assert_eq!((err.kind, err.violations[0].field.as_str()), (ErrorKind::InvalidAgentResponse, "result.status"));

        // Null result (Delete returns Empty; some peers write null) and `"error": null` are fine.
        let r = parse_response(br#"{"jsonrpc":"2.0","id":null,"result":null,"error":null}"#).unwrap();
        assert_eq!((r.id, r.outcome), (Id::Null, Ok(Value::Null)));
        // 0.3 peers put free-form data in the error.
        let r = parse_response(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"gone","data":{"x":1}}}"#)
            .unwrap();
        assert_eq!(r.outcome.unwrap_err().kind, ErrorKind::TaskNotFound);
    }

    #[test]
    fn malformed_responses() {
        let cases: [(&[u8], i32); 12] = [
            (b"", -32700),
            (b"{", -32700),
            (b"[]", -32600),
            (b"1", -32600),
            (br#"{"id":1,"result":1}"#, -32600),
            (br#"{"jsonrpc":"2.0","result":1}"#, -32600),
            (br#"{"jsonrpc":"2.0","id":true,"result":1}"#, -32600),
            (br#"{"jsonrpc":"2.0","id":1}"#, -32600),
            (br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}"#, -32600),
            (br#"{"jsonrpc":"2.0","id":1,"error":"bad"}"#, -32600),
            (br#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#, -32600),
            (br#"{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}"#, -32600),
        ];
        for (bad, code) in cases {
            assert_eq!(parse_response(bad).unwrap_err().code(), code, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn id_serde() {
        let ids: Vec<Id> = serde_json::from_str(r#"["a", 1, -2, 2.5, null]"#).unwrap();
        assert_eq!(serde_json::to_string(&ids).unwrap(), r#"["a",1,-2,2.5,null]"#);
        assert!(serde_json::from_str::<Id>("true").is_err());
        assert!(serde_json::from_str::<Id>("{}").is_err());
        assert_eq!(Id::from("x").to_string(), "\"x\"");
        assert_eq!(Id::from(String::from("y")), Id::String("y".into()));
        assert_eq!(Id::from(7u64).to_string(), "7");
    }
}
