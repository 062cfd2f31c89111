//! gRPC statuses: the numeric codes, `google.rpc.Status` with its `ErrorInfo` and `BadRequest`
//! details (spec §3.2.4: every A2A error carries an ErrorInfo), and their HTTP/2 header form
//! (`grpc-status`, percent-encoded `grpc-message`, base64 `grpc-status-details-bin`).
//!
//! The status of each A2A error comes from the one error table ([`crate::error::ERROR_TABLE`]).

use crate::error::{A2AError, BAD_REQUEST_TYPE, ERROR_DOMAIN, ERROR_INFO_TYPE, ErrorKind, FieldViolation};
use base64::Engine;
use serde_json::{Value, json};
use std::collections::HashMap;

/// `google.rpc.Status`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Status {
    #[prost(int32, tag = "1")]
    pub code: i32,
    #[prost(string, tag = "2")]
    pub message: String,
    #[prost(message, repeated, tag = "3")]
    pub details: Vec<Any>,
}

/// `google.protobuf.Any`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Any {
    #[prost(string, tag = "1")]
    pub type_url: String,
    #[prost(bytes = "vec", tag = "2")]
    pub value: Vec<u8>,
}

/// `google.rpc.ErrorInfo`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ErrorInfo {
    #[prost(string, tag = "1")]
    pub reason: String,
    #[prost(string, tag = "2")]
    pub domain: String,
    #[prost(map = "string, string", tag = "3")]
    pub metadata: HashMap<String, String>,
}

/// `google.rpc.BadRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BadRequest {
    #[prost(message, repeated, tag = "1")]
    pub field_violations: Vec<BadRequestFieldViolation>,
}

/// `google.rpc.BadRequest.FieldViolation`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BadRequestFieldViolation {
    #[prost(string, tag = "1")]
    pub field: String,
    #[prost(string, tag = "2")]
    pub description: String,
}

/// The gRPC status codes by name (grpc/doc/statuscodes.md), in code order.
const CODES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

pub const OK: i32 = 0;
pub const CANCELLED: i32 = 1;
pub const INVALID_ARGUMENT: i32 = 3;
pub const DEADLINE_EXCEEDED: i32 = 4;
pub const NOT_FOUND: i32 = 5;
pub const RESOURCE_EXHAUSTED: i32 = 8;
pub const UNIMPLEMENTED: i32 = 12;
pub const INTERNAL: i32 = 13;
pub const UNAVAILABLE: i32 = 14;

/// The numeric code of a status name (`"NOT_FOUND"` → 5); UNKNOWN (2) for a name not in the list.
pub fn code(name: &str) -> i32 {
    CODES.iter().position(|c| *c == name).map_or(2, |i| i as i32)
}

/// The name of a numeric code; `"UNKNOWN"` outside the list.
pub fn name(code: i32) -> &'static str {
    usize::try_from(code).ok().and_then(|i| CODES.get(i)).copied().unwrap_or("UNKNOWN")
}

/// The status an error is sent as: the table's code, the message, an ErrorInfo (reason, the
/// A2A domain, the error's metadata as strings) and a BadRequest when fields were named.
pub fn of_error(err: &A2AError) -> Status {
    let spec = err.kind.spec();
    let metadata = err
        .metadata
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
        .collect();
    let info = ErrorInfo { reason: spec.reason.to_owned(), domain: ERROR_DOMAIN.to_owned(), metadata };
    let mut details = vec![any(ERROR_INFO_TYPE, &info)];
    if !err.violations.is_empty() {
        let field_violations = err
            .violations
            .iter()
            .map(|v| BadRequestFieldViolation {
                field: field_path(&v.field, Case::Snake),
                description: v.description.clone(),
            })
            .collect();
        details.push(any(BAD_REQUEST_TYPE, &BadRequest { field_violations }));
    }
    bounded(Status { code: code(spec.grpc_status), message: cut(&err.message, MAX_MESSAGE).to_owned(), details })
}

#[derive(Clone, Copy)]
enum Case {
    Snake,
    Camel,
}

/// A field path in the form its binding names fields (`google.rpc.BadRequest`): proto names on
/// gRPC (`message.message_id`), JSON names elsewhere (`message.messageId`), as errors are made
/// in core. Members under `metadata`, `data` or `params` are the caller's own keys: kept.
fn field_path(path: &str, case: Case) -> String {
    let mut out = String::with_capacity(path.len() + 4);
    let mut verbatim = false;
    for (i, segment) in path.split('.').enumerate() {
        if i > 0 {
            out.push('.');
        }
        let (name, index) = segment.split_at(segment.find('[').unwrap_or(segment.len()));
        if verbatim {
            out.push_str(segment);
            continue;
        }
        match case {
            Case::Snake => {
                for c in name.chars() {
                    if c.is_ascii_uppercase() {
                        out.push('_');
                        out.push(c.to_ascii_lowercase());
                    } else {
                        out.push(c);
                    }
                }
            }
            Case::Camel => {
                let mut upper = false;
                for c in name.chars() {
                    match c {
                        '_' => upper = true,
                        c if upper => {
                            out.push(c.to_ascii_uppercase());
                            upper = false;
                        }
                        c => out.push(c),
                    }
                }
            }
        }
        out.push_str(index);
        verbatim = matches!(name, "metadata" | "data" | "params");
    }
    out
}

/// The most bytes of an error's message a status carries: it travels in headers (twice: in
/// `grpc-message` and in the details), and peers refuse header blocks past 8 KiB or so.
const MAX_MESSAGE: usize = 1024;
/// The most bytes of encoded details: what echoes the request (ids, field descriptions) is
/// given up, least useful first, until they fit.
const MAX_DETAILS: usize = 3072;

/// `status` with details that fit in [`MAX_DETAILS`]: first without the BadRequest, then with
/// the ErrorInfo's metadata values cut short, then without them. The reason always stays.
fn bounded(mut status: Status) -> Status {
    use prost::Message;
    let fits = |s: &Status| s.encoded_len() <= MAX_DETAILS;
    if fits(&status) {
        return status;
    }
    status.details.retain(|d| d.type_url != BAD_REQUEST_TYPE);
    for value_cap in [Some(64), None] {
        if fits(&status) {
            break;
        }
        for detail in &mut status.details {
            if let Ok(mut info) = ErrorInfo::decode(detail.value.as_slice()) {
                match value_cap {
                    Some(cap) => info.metadata.values_mut().for_each(|v| *v = cut(v, cap).to_owned()),
                    None => info.metadata.clear(),
                }
                detail.value = info.encode_to_vec();
            }
        }
    }
    status
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn any<M: prost::Message>(type_url: &str, message: &M) -> Any {
    Any { type_url: type_url.to_owned(), value: message.encode_to_vec() }
}

/// The error a peer's status stands for. The ErrorInfo's reason names the A2A error when its
/// domain is A2A's; otherwise the code picks the nearest kind, and the peer's status name is
/// kept in the metadata. Details of other types are kept as `{"@type", "value": base64}`.
pub fn to_error(status: &Status) -> A2AError {
    use prost::Message;
    let mut kind = None;
    let mut err = A2AError::new(ErrorKind::Internal, status.message.clone());
    for detail in &status.details {
        match detail.type_url.as_str() {
            ERROR_INFO_TYPE => {
                if let Ok(info) = ErrorInfo::decode(detail.value.as_slice()) {
                    if info.domain == ERROR_DOMAIN {
                        kind = kind.or_else(|| ErrorKind::from_reason(&info.reason));
                    }
                    for (k, v) in info.metadata {
                        err.metadata.insert(k, Value::String(v));
                    }
                }
            }
            BAD_REQUEST_TYPE => {
                if let Ok(bad) = BadRequest::decode(detail.value.as_slice()) {
                    err.violations.extend(bad.field_violations.into_iter().map(|v| FieldViolation {
                        field: field_path(&v.field, Case::Camel),
                        description: v.description,
                    }));
                }
            }
            other => err.extra_details.push(json!({
                "@type": other,
                "value": base64::engine::general_purpose::STANDARD.encode(&detail.value),
            })),
        }
    }
    err.kind = kind.unwrap_or_else(|| {
        err.metadata.insert("grpcStatus".to_owned(), Value::String(name(status.code).to_owned()));
        kind_of_code(status.code)
    });
    if err.message.is_empty() {
        err.message = format!("gRPC status {}", name(status.code));
    }
    err
}

/// The nearest error kind for a bare status code (a peer that sent no A2A ErrorInfo).
fn kind_of_code(code: i32) -> ErrorKind {
    match name(code) {
        "INVALID_ARGUMENT" | "OUT_OF_RANGE" => ErrorKind::InvalidParams,
        "NOT_FOUND" => ErrorKind::TaskNotFound,
        "UNIMPLEMENTED" => ErrorKind::UnsupportedOperation,
        "UNAUTHENTICATED" => ErrorKind::Unauthenticated,
        "PERMISSION_DENIED" => ErrorKind::PermissionDenied,
        "UNAVAILABLE" | "RESOURCE_EXHAUSTED" => ErrorKind::Unavailable,
        "DEADLINE_EXCEEDED" => ErrorKind::Timeout,
        _ => ErrorKind::Internal,
    }
}

/// `grpc-message`: percent-encoded UTF-8 (every byte outside printable ASCII, and `%`), with
/// a space at either end encoded too (a header value may not begin or end with one).
pub fn encode_message(message: &str) -> String {
    const SET: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS.add(b'%');
    // Bounded: a header line must stay small whatever the error says.
    let message = cut(message, MAX_MESSAGE);
    let body = message.trim_matches(' ');
    let (lead, trail) = if body.is_empty() {
        (message.len(), 0)
    } else {
        (message.len() - message.trim_start_matches(' ').len(), message.len() - message.trim_end_matches(' ').len())
    };
    format!("{}{}{}", "%20".repeat(lead), percent_encoding::utf8_percent_encode(body, SET), "%20".repeat(trail))
}

pub fn decode_message(value: &[u8]) -> String {
    percent_encoding::percent_decode(value).decode_utf8_lossy().into_owned()
}

/// `grpc-status-details-bin`: the encoded Status in base64 (sent unpadded; read either way).
pub fn encode_details(status: &Status) -> String {
    use prost::Message;
    base64::engine::general_purpose::STANDARD_NO_PAD.encode(status.encode_to_vec())
}

pub fn decode_details(value: &[u8]) -> Option<Status> {
    use prost::Message;
    let text: Vec<u8> = value.iter().copied().filter(|b| *b != b'=').collect();
    let bytes = base64::engine::general_purpose::STANDARD_NO_PAD.decode(text).ok()?;
    Status::decode(bytes.as_slice()).ok()
}

pub const STATUS_HEADER: &str = "grpc-status";
pub const MESSAGE_HEADER: &str = "grpc-message";
pub const DETAILS_HEADER: &str = "grpc-status-details-bin";

/// `grpc-status: 0`.
pub fn ok_trailers() -> http::HeaderMap {
    let mut h = http::HeaderMap::with_capacity(1);
    h.insert(STATUS_HEADER, http::HeaderValue::from_static("0"));
    h
}

/// The status of `err` as trailers (or, in a trailers-only answer, headers).
pub fn error_trailers(err: &A2AError) -> http::HeaderMap {
    status_headers(&of_error(err))
}

/// `grpc-status`, `grpc-message` and `grpc-status-details-bin` of `status`.
pub fn status_headers(status: &Status) -> http::HeaderMap {
    let mut h = http::HeaderMap::with_capacity(3);
    h.insert(STATUS_HEADER, http::HeaderValue::from(status.code));
    // Both values are ASCII by construction (percent-encoding, base64).
    if let Ok(v) = http::HeaderValue::from_str(&encode_message(&status.message)) {
        h.insert(MESSAGE_HEADER, v);
    }
    if !status.details.is_empty()
        && let Ok(v) = http::HeaderValue::from_str(&encode_details(status))
    {
        h.insert(DETAILS_HEADER, v);
    }
    h
}

/// The status in `headers` (trailers, or the headers of a trailers-only answer), if they
/// carry one. The details header wins when it decodes; its code must agree with grpc-status.
pub fn from_headers(headers: &http::HeaderMap) -> Option<Status> {
    let code: i32 = headers.get(STATUS_HEADER)?.to_str().ok()?.trim().parse().ok()?;
    let message = headers.get(MESSAGE_HEADER).map(|v| decode_message(v.as_bytes())).unwrap_or_default();
    let details = headers.get(DETAILS_HEADER).and_then(|v| decode_details(v.as_bytes())).filter(|s| s.code == code);
    Some(match details {
        Some(mut s) => {
            if s.message.is_empty() {
                s.message = message;
            }
            s
        }
        None => Status { code, message, details: Vec::new() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_status_is_a_grpc_code() {
        for row in crate::error::ERROR_TABLE {
            assert_eq!(name(code(row.grpc_status)), row.grpc_status, "{}", row.name);
        }
        assert_eq!(code("NOT_FOUND"), 5);
        assert_eq!(name(16), "UNAUTHENTICATED");
        assert_eq!(name(99), "UNKNOWN");
    }

    #[test]
    fn errors_round_trip_through_status_headers() {
        assert_eq!(field_path("message.parts[0].mediaType", Case::Snake), "message.parts[0].media_type");
        assert_eq!(
            field_path("configuration.taskPushNotificationConfig.url", Case::Snake),
            "configuration.task_push_notification_config.url"
        );
        assert_eq!(field_path("message.metadata.userId", Case::Snake), "message.metadata.userId", "a caller's key");
        assert_eq!(field_path("message.message_id", Case::Camel), "message.messageId");
        assert_eq!(field_path("history_length", Case::Camel), "historyLength");
        let err = A2AError::invalid_field("message.parts", "at least one part").with_meta("x", "1");
        let status = of_error(&err);
        assert_eq!(status.code, INVALID_ARGUMENT);
        let back = to_error(&decode_details(encode_details(&status).as_bytes()).unwrap());
        assert_eq!(back.kind, ErrorKind::InvalidParams);
        assert_eq!(back.message, err.message);
        assert_eq!(back.violations, err.violations);
        assert_eq!(back.metadata.get("x"), Some(&Value::String("1".into())));

        let not_found = to_error(&of_error(&A2AError::task_not_found("t1")));
        assert_eq!(not_found.kind, ErrorKind::TaskNotFound);
        assert_eq!(not_found.metadata.get("taskId"), Some(&Value::String("t1".into())));
    }

    #[test]
    fn foreign_statuses_keep_what_they_said() {
        let status = Status {
            code: 5,
            message: String::new(),
            details: vec![Any { type_url: "type.example/Other".into(), value: vec![1, 2] }],
        };
        let err = to_error(&status);
        assert_eq!(err.kind, ErrorKind::TaskNotFound);
        assert_eq!(err.metadata.get("grpcStatus"), Some(&Value::String("NOT_FOUND".into())));
        assert_eq!(err.extra_details[0]["@type"], "type.example/Other");
        assert!(err.message.contains("NOT_FOUND"));
    }

    #[test]
    fn headers_round_trip() {
        let err = A2AError::task_not_found("t 1");
        let back = to_error(&from_headers(&error_trailers(&err)).unwrap());
        assert_eq!((back.kind, back.message.as_str()), (ErrorKind::TaskNotFound, err.message.as_str()));
        assert_eq!(from_headers(&ok_trailers()).unwrap().code, OK);
        assert!(from_headers(&http::HeaderMap::new()).is_none());
    }

    #[test]
    fn messages_are_percent_encoded() {
        assert_eq!(encode_message("Task 100% gone\n é"), "Task 100%25 gone%0A %C3%A9");
        assert_eq!(decode_message(b"Task 100%25 gone%0A %C3%A9"), "Task 100% gone\n é");
        // Long messages are cut at a character boundary, at most 1024 bytes before encoding.
        let long = decode_message(encode_message(&"é".repeat(3000)).as_bytes());
        assert_eq!(long, "é".repeat(512));
        // A header value neither begins nor ends with a space.
        assert_eq!(encode_message(" Task not found: a "), "%20Task not found: a%20");
        assert_eq!(encode_message("  "), "%20%20");
        assert_eq!(decode_message(encode_message(" x  ").as_bytes()), " x  ");
    }

    #[test]
    fn statuses_that_echo_long_input_still_fit_in_a_header_block() {
        let huge = "z".repeat(50_000);
        let err = A2AError::invalid_field("message.contextId", format!("{huge} is not this task's context"))
            .with_meta("contextId", huge.clone())
            .with_meta("taskId", "t1");
        let headers = error_trailers(&err);
        let size: usize = headers.iter().map(|(k, v)| k.as_str().len() + v.len()).sum();
        assert!(size < 8192, "{size} bytes of status headers");
        let back = to_error(&from_headers(&headers).unwrap());
        assert_eq!(back.kind, ErrorKind::InvalidParams);
        assert_eq!(back.metadata.get("taskId"), Some(&Value::String("t1".into())), "short metadata stays");
        assert!(back.message.len() <= MAX_MESSAGE);
        // Small statuses are sent whole.
        let small = A2AError::invalid_field("message.parts", "at least one part").with_meta("x", "1");
        assert_eq!(to_error(&from_headers(&error_trailers(&small)).unwrap()).violations, small.violations);
    }
}
