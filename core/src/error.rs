//! One error type for the whole protocol, and the one table that maps each spec error to its
//! JSON-RPC code, HTTP status, gRPC status name and `ErrorInfo.reason`.
//!
//! Every binding renders errors from [`A2AError`]: JSON-RPC as `{code, message, data: [Any…]}`,
//! HTTP+JSON as a `google.rpc.Status` body (`{"error": {code, status, message, details}}`).
//! Nothing else in the crate invents codes or statuses.

use serde_json::{Map, Value, json};
use std::fmt;

/// `ErrorInfo.domain` for every A2A error (spec §5.2).
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";
pub const BAD_REQUEST_TYPE: &str = "type.googleapis.com/google.rpc.BadRequest";

/// The kinds of error the protocol knows. `code()`, `http_status()` and friends read the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    JsonParse,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    Internal,
    TaskNotFound,
    TaskNotCancelable,
    PushNotificationNotSupported,
    UnsupportedOperation,
    ContentTypeNotSupported,
    InvalidAgentResponse,
    ExtendedAgentCardNotConfigured,
    ExtensionSupportRequired,
    VersionNotSupported,
    /// Missing or invalid credentials (HTTP 401). Not an A2A error code of its own.
    Unauthenticated,
    /// Authenticated but not allowed (HTTP 403). Never used where it would reveal that a task exists.
    PermissionDenied,
    /// A limit of this server was reached (store full, too many streams). HTTP 503.
    Unavailable,
    /// Client side: the peer could not be reached or the exchange broke off (connection
    /// refused or reset, TLS failure, a body cut short). Never sent by a server.
    Transport,
    /// Client side: the peer did not answer within the configured timeout. Never sent by a server.
    Timeout,
}

/// One row of the mapping table.
pub struct ErrorSpec {
    pub kind: ErrorKind,
    /// The spec's name for the error, as the official SDKs spell their exception classes.
    pub name: &'static str,
    pub jsonrpc_code: i32,
    pub http_status: u16,
    pub grpc_status: &'static str,
    /// `ErrorInfo.reason`: UPPER_SNAKE_CASE of the name without `Error`.
    pub reason: &'static str,
    pub default_message: &'static str,
}

macro_rules! table {
    ($( $kind:ident, $name:literal, $code:literal, $http:literal, $grpc:literal, $reason:literal, $msg:literal; )*) => {
        /// The single source of truth for error mappings (spec §5.1; auth codes are ours, see below).
        pub const ERROR_TABLE: &[ErrorSpec] = &[
            $( ErrorSpec { kind: ErrorKind::$kind, name: $name, jsonrpc_code: $code, http_status: $http,
                           grpc_status: $grpc, reason: $reason, default_message: $msg }, )*
        ];
    };
}

/// [`ERROR_TABLE`] as JSON, the form the bindings' generators read (`core/error-table.json`,
/// kept current by a core test): one object per row, in table order.
pub fn table_json() -> serde_json::Value {
    ERROR_TABLE
        .iter()
        .map(|r| {
            serde_json::json!({
                "kind": format!("{:?}", r.kind),
                "name": r.name,
                "jsonrpcCode": r.jsonrpc_code,
                "httpStatus": r.http_status,
                "grpcStatus": r.grpc_status,
                "reason": r.reason,
                "defaultMessage": r.default_message,
            })
        })
        .collect()
}

// Transport / Timeout are the client's own failures: no peer ever sends them, but the bindings
// expose `.code`, so they get codes beside the auth ones, outside the JSON-RPC reserved range.
// Unauthenticated / PermissionDenied have no JSON-RPC code in the spec; they normally never reach
// JSON-RPC because the HTTP layer answers 401/403 first. When a JSON-RPC body must carry one, we use
// codes outside the JSON-RPC reserved range so no peer confuses them with a spec error.
table! {
    JsonParse, "JSONParseError", -32700, 400, "INVALID_ARGUMENT", "JSON_PARSE", "Invalid JSON payload";
    InvalidRequest, "InvalidRequestError", -32600, 400, "INVALID_ARGUMENT", "INVALID_REQUEST", "Request payload validation error";
    MethodNotFound, "MethodNotFoundError", -32601, 404, "UNIMPLEMENTED", "METHOD_NOT_FOUND", "Method not found";
    InvalidParams, "InvalidParamsError", -32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS", "Invalid parameters";
    Internal, "InternalError", -32603, 500, "INTERNAL", "INTERNAL", "Internal error";
    TaskNotFound, "TaskNotFoundError", -32001, 404, "NOT_FOUND", "TASK_NOT_FOUND", "Task not found";
    TaskNotCancelable, "TaskNotCancelableError", -32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE", "Task cannot be canceled";
    PushNotificationNotSupported, "PushNotificationNotSupportedError", -32003, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", "Push Notification is not supported";
    UnsupportedOperation, "UnsupportedOperationError", -32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", "This operation is not supported";
    ContentTypeNotSupported, "ContentTypeNotSupportedError", -32005, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED", "Incompatible content types";
    InvalidAgentResponse, "InvalidAgentResponseError", -32006, 500, "INTERNAL", "INVALID_AGENT_RESPONSE", "Invalid agent response";
    ExtendedAgentCardNotConfigured, "ExtendedAgentCardNotConfiguredError", -32007, 400, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "Extended agent card is not configured";
    ExtensionSupportRequired, "ExtensionSupportRequiredError", -32008, 400, "FAILED_PRECONDITION", "EXTENSION_SUPPORT_REQUIRED", "A required extension was not requested";
    VersionNotSupported, "VersionNotSupportedError", -32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED", "Protocol version is not supported";
    Unauthenticated, "UnauthenticatedError", -31401, 401, "UNAUTHENTICATED", "UNAUTHENTICATED", "Authentication required";
    PermissionDenied, "PermissionDeniedError", -31403, 403, "PERMISSION_DENIED", "PERMISSION_DENIED", "Permission denied";
    Unavailable, "UnavailableError", -32603, 503, "UNAVAILABLE", "UNAVAILABLE", "Service unavailable";
    Transport, "TransportError", -31502, 502, "UNAVAILABLE", "TRANSPORT", "The agent could not be reached";
    Timeout, "TimeoutError", -31504, 504, "DEADLINE_EXCEEDED", "TIMEOUT", "The agent did not answer in time";
}

impl ErrorKind {
    pub fn spec(self) -> &'static ErrorSpec {
        ERROR_TABLE.iter().find(|row| row.kind == self).expect("every ErrorKind has a table row")
    }
    pub fn code(self) -> i32 {
        self.spec().jsonrpc_code
    }
    pub fn http_status(self) -> u16 {
        self.spec().http_status
    }
    pub fn name(self) -> &'static str {
        self.spec().name
    }
    /// The kind a received JSON-RPC code stands for. Unavailable shares -32603 with Internal;
    /// Internal wins. Unknown codes are `None`.
    pub fn from_code(code: i32) -> Option<Self> {
        ERROR_TABLE.iter().find(|row| row.jsonrpc_code == code).map(|row| row.kind)
    }
    /// The kind of the error class a binding names (`TaskNotFoundError`): a host-language
    /// handler's error on its way back.
    pub fn from_name(name: &str) -> Option<Self> {
        ERROR_TABLE.iter().find(|row| row.name == name).map(|row| row.kind)
    }
    /// The kind a host-language handler's error names (an A2A error class's name); any other
    /// failure is Internal.
    pub fn from_host(name: &str) -> Self {
        Self::from_name(name).unwrap_or(ErrorKind::Internal)
    }
    /// The kind an `ErrorInfo.reason` stands for.
    pub fn from_reason(reason: &str) -> Option<Self> {
        ERROR_TABLE.iter().find(|row| row.reason == reason).map(|row| row.kind)
    }
}

/// A field that failed validation, rendered as a `google.rpc.BadRequest` field violation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldViolation {
    /// Path in the JSON form, e.g. `message.parts[0]`.
    pub field: String,
    pub description: String,
}

/// An A2A protocol error: a kind from the table, a human message and optional details.
#[derive(Debug, Clone, PartialEq)]
pub struct A2AError {
    pub kind: ErrorKind,
    pub message: String,
    /// `ErrorInfo.metadata` (string map), e.g. `{"taskId": "…"}`.
    pub metadata: Map<String, Value>,
    pub violations: Vec<FieldViolation>,
    /// Details received from a peer that are neither ErrorInfo nor BadRequest, kept verbatim.
    pub extra_details: Vec<Value>,
}

impl fmt::Display for A2AError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.kind.name(), self.kind.code(), self.message)
    }
}

impl std::error::Error for A2AError {}

pub type Result<T, E = A2AError> = std::result::Result<T, E>;

/// A caller's id as an error repeats it: its first 256 characters at most, so an 8 MB id
/// does not come back twice in a 16 MB answer.
pub(crate) fn echoed(id: &str) -> &str {
    match id.char_indices().nth(256) {
        Some((end, _)) => &id[..end],
        None => id,
    }
}

/// HTTP's reason phrase for `status` (`Payload Too Large`), in the builds that speak HTTP.
#[cfg(any(feature = "server", feature = "client", feature = "grpc"))]
fn reason_phrase(status: u16) -> &'static str {
    http::StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or("")
}

#[cfg(not(any(feature = "server", feature = "client", feature = "grpc")))]
fn reason_phrase(_status: u16) -> &'static str {
    ""
}

/// A peer's error answer that is no `google.rpc.Status`, as a message: its status with the
/// reason phrase, and its text; a web page (a proxy's, a web framework's) as its words only,
/// both cut to 300 characters, so a whole HTML page is not what the caller reads.
fn peer_text(status: u16, body: &[u8]) -> String {
    let reason = reason_phrase(status);
    let text = String::from_utf8_lossy(&body[..body.len().min(64 * 1024)]);
    let text = text.trim();
    let words = if text.starts_with('<') {
        // Tags out, entities as spaces, whitespace collapsed.
        let mut out = String::with_capacity(text.len());
        let mut in_tag = false;
        for c in text.chars() {
            match c {
                '<' => in_tag = true,
                '>' if in_tag => {
                    in_tag = false;
                    out.push(' ');
                }
                _ if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.replace("&nbsp;", " ").split_whitespace().collect::<Vec<_>>().join(" ")
    } else {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let cut: String = words.chars().take(300).collect();
    let more = if cut.len() < words.len() { "…" } else { "" };
    let head = if reason.is_empty() { format!("HTTP {status}") } else { format!("HTTP {status} {reason}") };
    if cut.is_empty() { head } else { format!("{head}: {cut}{more}") }
}

impl A2AError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), metadata: Map::new(), violations: Vec::new(), extra_details: Vec::new() }
    }
    /// The error with the table's standard message.
    pub fn of(kind: ErrorKind) -> Self {
        Self::new(kind, kind.spec().default_message)
    }
    pub fn with_meta(mut self, key: &str, value: impl Into<String>) -> Self {
        self.metadata.insert(key.to_owned(), Value::String(value.into()));
        self
    }
    pub fn code(&self) -> i32 {
        self.kind.code()
    }
    pub fn http_status(&self) -> u16 {
        self.kind.http_status()
    }

    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::JsonParse, message)
    }
    /// JSON text that does not read: JSONParseError with serde_json's account, naming the one
    /// case it leaves obscure. `"\ud800"` alone is JSON grammar but no Unicode text, and
    /// JavaScript's `JSON.stringify` writes it for a string holding half a surrogate pair.
    pub fn invalid_json(e: &serde_json::Error) -> Self {
        let hint = if e.to_string().contains("hex escape") {
            " (a \\u escape of half a UTF-16 surrogate pair, \\ud800 to \\udfff, without its other half, is no Unicode text)"
        } else {
            ""
        };
        Self::parse_error(format!("Invalid JSON payload: {e}{hint}"))
    }
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidRequest, message)
    }
    pub fn method_not_found(method: &str) -> Self {
        Self::new(ErrorKind::MethodNotFound, format!("Method not found: {method}")).with_meta("method", method)
    }
    /// InvalidParams naming the offending field.
    pub fn invalid_field(field: impl Into<String>, description: impl Into<String>) -> Self {
        let field = field.into();
        let description = description.into();
        let message = if field.is_empty() { description.clone() } else { format!("{field}: {description}") };
        let mut err = Self::new(ErrorKind::InvalidParams, message);
        err.violations.push(FieldViolation { field, description });
        err
    }
    /// The same error for settings read as the member `prefix` of larger ones: each violation's
    /// field (and the message's, which starts with it) gets `prefix.` in front.
    pub fn under(mut self, prefix: &str) -> Self {
        for v in &mut self.violations {
            if v.field == prefix || v.field.starts_with(&format!("{prefix}.")) {
                continue;
            }
            let field = if v.field.is_empty() { prefix.to_owned() } else { format!("{prefix}.{}", v.field) };
            if let Some(rest) = self.message.strip_prefix(&format!("{}: ", v.field)) {
                self.message = format!("{field}: {rest}");
            }
            v.field = field;
        }
        self
    }
    /// Options (or any settings) read from their JSON form: InvalidParams naming the path of
    /// what is wrong, an unknown key included. The path is in camelCase whichever spelling was
    /// given, as core's range checks name fields (`limits.blockingTimeout` for
    /// `limits.blocking_timeout` too), and what was expected is said in JSON's terms.
    pub fn from_options<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T> {
        let kind = match &value {
            Value::Object(_) | Value::Null => None,
            Value::Array(_) => Some("a list"),
            Value::String(_) => Some("a string"),
            Value::Number(_) => Some("a number"),
            Value::Bool(_) => Some("a boolean"),
        };
        if let Some(kind) = kind {
            return Err(Self::invalid_field("", format!("options must be an object of named options, not {kind}")));
        }
        serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { camel_path(&path) };
            Self::invalid_field(path, plain_expectation(&e.into_inner().to_string()))
        })
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }
    pub fn task_not_found(task_id: &str) -> Self {
        let id = echoed(task_id);
        Self::new(ErrorKind::TaskNotFound, format!("Task not found: {id}")).with_meta("taskId", id)
    }
    /// TaskNotFound for a config its task (which exists) does not have: the spec has no error
    /// of its own for it.
    pub fn push_config_not_found(task_id: &str, config_id: &str) -> Self {
        let (task, config) = (echoed(task_id), echoed(config_id));
        Self::new(ErrorKind::TaskNotFound, format!("Task {task} has no push notification config {config}"))
            .with_meta("taskId", task)
            .with_meta("pushNotificationConfigId", config)
    }
    pub fn task_not_cancelable(task_id: &str, state: &str) -> Self {
        let id = echoed(task_id);
        Self::new(ErrorKind::TaskNotCancelable, format!("Task {id} cannot be canceled in state {state}"))
            .with_meta("taskId", id)
    }
    pub fn unsupported_operation(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::UnsupportedOperation, message)
    }

    /// `ErrorInfo` and (for validation errors) `BadRequest` details, as ProtoJSON `Any` objects.
    pub fn details(&self) -> Vec<Value> {
        let spec = self.kind.spec();
        let mut details = vec![json!({
            "@type": ERROR_INFO_TYPE,
            "reason": spec.reason,
            "domain": ERROR_DOMAIN,
            "metadata": self.metadata,
        })];
        if !self.violations.is_empty() {
            let violations: Vec<Value> =
                self.violations.iter().map(|v| json!({"field": v.field, "description": v.description})).collect();
            details.push(json!({"@type": BAD_REQUEST_TYPE, "fieldViolations": violations}));
        }
        details.extend(self.extra_details.iter().cloned());
        details
    }

    /// The JSON-RPC `error` object (1.0: `data` is an array of `Any` details).
    pub fn to_jsonrpc(&self) -> Value {
        json!({"code": self.code(), "message": self.message, "data": self.details()})
    }

    /// The HTTP+JSON body: the JSON form of `google.rpc.Status`, wrapped in `error`.
    pub fn to_http_body(&self) -> Value {
        let spec = self.kind.spec();
        json!({"error": {
            "code": spec.http_status,
            "status": spec.grpc_status,
            "message": self.message,
            "details": self.details(),
        }})
    }

    /// Rebuilds an error received as a JSON-RPC `error` object. Unknown codes become Internal
    /// with the peer's code kept in metadata, so nothing the peer said is lost.
    pub fn from_jsonrpc(error: &Value) -> Self {
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(-32603);
        let message = error.get("message").and_then(Value::as_str).unwrap_or("").to_owned();
        let kind = i32::try_from(code).ok().and_then(ErrorKind::from_code);
        let mut err = Self::new(kind.unwrap_or(ErrorKind::Internal), message);
        if kind.is_none() {
            err = err.with_meta("peerCode", code.to_string());
        }
        match error.get("data") {
            Some(Value::Array(items)) => {
                err.absorb_details(items);
                // Codes some kinds share (-32603: Internal and Unavailable): the ErrorInfo's
                // reason tells them apart, when it names a kind of that very code.
                let reason = items
                    .iter()
                    .find(|i| i.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE))
                    .and_then(|i| i.get("reason")?.as_str());
                if let Some(named) = reason.and_then(ErrorKind::from_reason)
                    && i64::from(named.spec().jsonrpc_code) == code
                {
                    err.kind = named;
                }
            }
            Some(Value::Null) | None => {}
            // 0.3 peers put free-form data here.
            Some(other) => err.extra_details.push(other.clone()),
        }
        err
    }

    /// Rebuilds an error from an HTTP status and a `google.rpc.Status` body (or whatever the peer sent).
    pub fn from_http(status: u16, body: &[u8]) -> Self {
        let parsed: Option<Value> = serde_json::from_slice(body).ok();
        let status_obj = parsed.as_ref().and_then(|v| v.get("error")).filter(|e| e.is_object());
        let message = status_obj
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| peer_text(status, body));
        let details: Vec<Value> =
            status_obj.and_then(|e| e.get("details")).and_then(Value::as_array).cloned().unwrap_or_default();
        let reason_kind = details.iter().find_map(|d| {
            (d.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE))
                .then(|| d.get("reason").and_then(Value::as_str).and_then(ErrorKind::from_reason))
                .flatten()
        });
        let kind = reason_kind.unwrap_or(match status {
            400 => ErrorKind::InvalidParams,
            413 => ErrorKind::InvalidRequest,
            401 => ErrorKind::Unauthenticated,
            403 => ErrorKind::PermissionDenied,
            404 => ErrorKind::TaskNotFound,
            503 => ErrorKind::Unavailable,
            _ => ErrorKind::Internal,
        });
        let mut err = Self::new(kind, message);
        err.absorb_details(&details);
        err
    }

    fn absorb_details(&mut self, items: &[Value]) {
        for item in items {
            match item.get("@type").and_then(Value::as_str) {
                Some(ERROR_INFO_TYPE) => {
                    if let Some(Value::Object(meta)) = item.get("metadata") {
                        self.metadata.extend(meta.clone());
                    }
                }
                Some(BAD_REQUEST_TYPE) => {
                    for v in item.get("fieldViolations").and_then(Value::as_array).into_iter().flatten() {
                        self.violations.push(FieldViolation {
                            field: v.get("field").and_then(Value::as_str).unwrap_or("").to_owned(),
                            description: v.get("description").and_then(Value::as_str).unwrap_or("").to_owned(),
                        });
                    }
                }
                _ => self.extra_details.push(item.clone()),
            }
        }
    }
}

impl From<serde_json::Error> for A2AError {
    fn from(err: serde_json::Error) -> Self {
        if err.is_syntax() || err.is_eof() || err.is_io() {
            Self::parse_error(format!("Invalid JSON payload: {err}"))
        } else {
            Self::invalid_field("", err.to_string())
        }
    }
}

/// serde's "expected ..." in JSON's terms, not Rust's: `expected struct JwtSpec` is
/// `expected an object`, `expected usize` `expected a whole number, 0 or more`.
fn plain_expectation(message: &str) -> String {
    let Some((head, expected)) = message.rsplit_once(", expected ") else { return message.to_owned() };
    let plain = match expected {
        e if e.starts_with("struct ") || e == "a map" => "an object",
        "usize" | "u64" | "u32" | "u16" | "u8" => "a whole number, 0 or more",
        "isize" | "i64" | "i32" | "i16" | "i8" => "a whole number",
        "f64" | "f32" => "a number",
        "path string" => "a string (a file path)",
        "a sequence" => "a list",
        e if e.starts_with("a tuple of size ") || e.starts_with("tuple of ") => "a list of two strings",
        _ => return message.to_owned(),
    };
    format!("{head}, expected {plain}")
}

/// `limits.blocking_timeout` as `limits.blockingTimeout`: each member name that is a
/// snake_case identifier is written in camelCase. Below a member whose keys are the caller's
/// own (a header's name, a token, a card), nothing is rewritten.
fn camel_path(path: &str) -> String {
    let snake = |name: &str| {
        name.contains('_') && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    };
    let camel = |name: &str| {
        let mut parts = name.split('_');
        let first = parts.next().unwrap_or_default().to_owned();
        parts.fold(first, |mut out, part| {
            let mut chars = part.chars();
            if let Some(c) = chars.next() {
                out.extend(c.to_uppercase());
                out.push_str(chars.as_str());
            }
            out
        })
    };
    const FREE_KEYS: [&str; 6] = ["headers", "bearerTokens", "apiKeys", "requiredScopes", "extendedCard", "jwks"];
    let mut free = false;
    let names = path.split('.').map(|name| {
        let name = if free || !snake(name) { name.to_owned() } else { camel(name) };
        free = free || FREE_KEYS.contains(&name.as_str());
        name
    });
    names.collect::<Vec<_>>().join(".")
}

/// A time given in seconds that may be 0; InvalidParams naming `field` when it is negative or
/// not finite.
pub fn seconds(secs: f64, field: &str) -> Result<std::time::Duration> {
    std::time::Duration::try_from_secs_f64(secs)
        .map(|d| d.min(LONGEST))
        .map_err(|_| A2AError::invalid_field(field, "a finite number of seconds, 0 or more"))
}

/// The longest duration an option holds: longer ones (Kotlin's `Duration.INFINITE` as a
/// `java.time.Duration`, `Long.MAX_VALUE` seconds) mean "no limit" in practice, and taken as
/// given they overflowed the clock (`now + grace` panicked in a server's stop).
pub const LONGEST: std::time::Duration = std::time::Duration::from_secs(100 * 365 * 24 * 3600);

/// A timeout given in seconds that must be positive and finite; InvalidParams naming `field`
/// otherwise. `a2a serve` reads its flags with it too.
pub fn positive_seconds(secs: f64, field: &str) -> Result<std::time::Duration> {
    std::time::Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .map(|d| d.min(LONGEST))
        .ok_or_else(|| A2AError::invalid_field(field, "a positive, finite number of seconds"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn durations_past_a_century_are_a_century() {
        let huge = 9.2e18; // Long.MAX_VALUE seconds
        assert_eq!(super::seconds(huge, "x").unwrap(), super::LONGEST);
        assert_eq!(super::positive_seconds(huge, "x").unwrap(), super::LONGEST);
        // Added to the clock, it does not overflow.
        assert!(std::time::Instant::now().checked_add(super::LONGEST).is_some());
        assert_eq!(super::seconds(1.5, "x").unwrap(), std::time::Duration::from_millis(1500));
    }

    use super::*;

    #[test]
    fn json_that_does_not_read_says_why_and_names_a_lone_surrogate() {
        let lone = serde_json::from_str::<serde_json::Value>(r#"{"a": "x\ud800y"}"#).unwrap_err();
        let e = A2AError::invalid_json(&lone);
        assert_eq!(e.kind, ErrorKind::JsonParse);
        assert!(e.message.contains("surrogate"), "{}", e.message);
        let cut = serde_json::from_str::<serde_json::Value>(r#"{"a": 1"#).unwrap_err();
        let e = A2AError::invalid_json(&cut);
        assert!(
            e.message.starts_with("Invalid JSON payload: EOF") && !e.message.contains("surrogate"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_huge_id_is_echoed_cut_short() {
        let huge = "é".repeat(4_000_000);
        let err = A2AError::task_not_found(&huge);
        assert!(err.message.len() < 600, "{}", err.message.len());
        assert_eq!(err.metadata["taskId"].as_str().map(|s| s.chars().count()), Some(256));
        let short = A2AError::task_not_cancelable("t-1", "TASK_STATE_COMPLETED");
        assert_eq!(short.metadata["taskId"], "t-1");
        assert!(short.message.contains("t-1"));
    }

    #[test]
    fn table_has_every_kind_once_and_spec_codes() {
        use ErrorKind::*;
        let all = [
            JsonParse,
            InvalidRequest,
            MethodNotFound,
            InvalidParams,
            Internal,
            TaskNotFound,
            TaskNotCancelable,
            PushNotificationNotSupported,
            UnsupportedOperation,
            ContentTypeNotSupported,
            InvalidAgentResponse,
            ExtendedAgentCardNotConfigured,
            ExtensionSupportRequired,
            VersionNotSupported,
            Unauthenticated,
            PermissionDenied,
            Unavailable,
            Transport,
            Timeout,
        ];
        assert_eq!(all.len(), ERROR_TABLE.len());
        for kind in all {
            assert_eq!(ERROR_TABLE.iter().filter(|r| r.kind == kind).count(), 1, "{kind:?}");
        }
        let expected = [
            (TaskNotFound, -32001, 404),
            (TaskNotCancelable, -32002, 400),
            (PushNotificationNotSupported, -32003, 400),
            (UnsupportedOperation, -32004, 400),
            (ContentTypeNotSupported, -32005, 400),
            (InvalidAgentResponse, -32006, 500),
            (ExtendedAgentCardNotConfigured, -32007, 400),
            (ExtensionSupportRequired, -32008, 400),
            (VersionNotSupported, -32009, 400),
            (JsonParse, -32700, 400),
            (InvalidRequest, -32600, 400),
            (MethodNotFound, -32601, 404),
            (InvalidParams, -32602, 400),
            (Internal, -32603, 500),
        ];
        for (kind, code, http) in expected {
            assert_eq!((kind.code(), kind.http_status()), (code, http), "{kind:?}");
        }
        assert_eq!(ErrorKind::from_code(-32603), Some(Internal));
        // The client-side kinds read back from their own codes and reasons.
        for kind in [Transport, Timeout] {
            assert_eq!(ErrorKind::from_code(kind.code()), Some(kind));
            assert_eq!(ErrorKind::from_reason(kind.spec().reason), Some(kind));
            assert!(!(-32768..=-32000).contains(&kind.code()), "{kind:?} is outside the reserved range");
        }
    }

    #[test]
    fn jsonrpc_and_http_forms_round_trip() {
        let err = A2AError::task_not_found("t-1");
        let rpc = err.to_jsonrpc();
        assert_eq!(rpc["code"], -32001);
        assert_eq!(rpc["data"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(rpc["data"][0]["domain"], ERROR_DOMAIN);
        assert_eq!(A2AError::from_jsonrpc(&rpc), err);

        let body = err.to_http_body();
        assert_eq!(body["error"]["status"], "NOT_FOUND");
        assert_eq!(body["error"]["code"], 404);
        let back = A2AError::from_http(404, body.to_string().as_bytes());
        assert_eq!(back, err);

        // Kinds that share a JSON-RPC code come back by their ErrorInfo reason.
        let busy = A2AError::new(ErrorKind::Unavailable, "try again");
        assert_eq!(busy.to_jsonrpc()["code"], -32603);
        assert_eq!(A2AError::from_jsonrpc(&busy.to_jsonrpc()).kind, ErrorKind::Unavailable);
        let internal = A2AError::internal("broken");
        assert_eq!(A2AError::from_jsonrpc(&internal.to_jsonrpc()).kind, ErrorKind::Internal);
        // A reason of another code does not override the code.
        let mut odd = err.to_jsonrpc();
        odd["data"][0]["reason"] = json!("UNAVAILABLE");
        assert_eq!(A2AError::from_jsonrpc(&odd).kind, ErrorKind::TaskNotFound);
    }

    #[test]
    fn field_violations_travel_as_bad_request() {
        let err = A2AError::invalid_field("message.parts", "must have at least one element");
        let body = err.to_http_body();
        assert_eq!(body["error"]["details"][1]["fieldViolations"][0]["field"], "message.parts");
        assert_eq!(A2AError::from_http(400, body.to_string().as_bytes()), err);
    }

    #[test]
    fn unknown_peer_codes_are_kept() {
        let err = A2AError::from_jsonrpc(&json!({"code": -31999, "message": "odd", "data": {"x": 1}}));
        assert_eq!(err.kind, ErrorKind::Internal);
        assert_eq!(err.metadata["peerCode"], "-31999");
        assert_eq!(err.extra_details, vec![json!({"x": 1})]);
        let garbage = A2AError::from_http(502, b"<html>bad gateway</html>");
        assert_eq!(garbage.kind, ErrorKind::Internal);
        assert!(garbage.message.contains("bad gateway"));
        // A web framework's error page: its words, not its markup; a too-large body's status.
        let page = b"<!DOCTYPE html>\n<html><head><title>Error</title></head><body><pre>PayloadTooLargeError: request entity too large<br> &nbsp; &nbsp;at readStream (raw-body/index.js:163:17)</pre></body></html>";
        let err = A2AError::from_http(413, page);
        assert_eq!(err.kind, ErrorKind::InvalidRequest);
        assert_eq!(
            err.message,
            "HTTP 413 Payload Too Large: Error PayloadTooLargeError: request entity too large at readStream (raw-body/index.js:163:17)"
        );
        let long = "x ".repeat(1000);
        assert!(A2AError::from_http(500, long.as_bytes()).message.ends_with('…'));
        assert_eq!(A2AError::from_http(500, b"").message, "HTTP 500 Internal Server Error");
        assert_eq!(A2AError::from_http(599, b"odd").message, "HTTP 599: odd", "no reason phrase: none shown");
    }
}
