//! The gRPC binding (package `lf.a2a.v1`, service `A2AService`) on the HTTP listener: an
//! HTTP/2 `POST /lf.a2a.v1.A2AService/<Method>` with `content-type: application/grpc` carries
//! one framed protobuf request; the answer is one framed message (or, for the two streaming
//! methods, one per event) and the status in the trailers, or a trailers-only status on error.
//!
//! It is a third adapter in front of the same [`super::RequestHandler`]: authentication (the
//! `authorization` / API-key metadata are HTTP/2 headers, read by the same authenticator),
//! scopes, tenancy (the request's `tenant` field), limits and the event log behave as on the
//! two JSON bindings.
//!
//! Decisions:
//! - Statuses come from the error table, with an `ErrorInfo` (and `BadRequest` for named
//!   fields) in `grpc-status-details-bin`. Transport-level refusals: an unknown method or
//!   service is UNIMPLEMENTED; a message over `Limits::max_body_bytes` (once inflated, too) is
//!   RESOURCE_EXHAUSTED; a gzip message (`grpc-encoding: gzip`) is read, one of another
//!   encoding is UNIMPLEMENTED, a compressed one without an encoding INTERNAL (every answer
//!   says `grpc-accept-encoding: gzip, identity`; answers go uncompressed); bytes that are not
//!   one well-framed protobuf message are INVALID_ARGUMENT. gRPC over HTTP/1 is refused (505, UNIMPLEMENTED).
//! - `grpc-timeout` bounds the call: DEADLINE_EXCEEDED when it passes (a stream ends then too;
//!   the task goes on, as when any client leaves).
//! - Service parameters are lowercase metadata: `a2a-version` (missing = 1.0: the gRPC service
//!   of 0.3 is another package, so a call here is 1.0 by its path; an explicit 0.3 is
//!   VersionNotSupported) and `a2a-extensions`, echoed in the response headers when activated.
//! - Served only when the card declares a `GRPC` interface.
//! - The agent's extension methods are served too, under [`grpc::EXTENSION_SERVICE`]
//!   (`/a2anative.v1.ExtensionMethods/<name>`, a `google.protobuf.Value` in and out).
//! - The standard health service (`grpc.health.v1.Health`) is served beside it, without
//!   credentials: [`super::grpc_health`].

use super::body::{ResponseBody, SseOptions};
use super::handler::{Payload, Reply};
use super::headers::{self, Version};
use super::service::{Announced, App, BoxError, await_head, call_context, echo_extensions, read_body};
use crate::error::{A2AError, ErrorKind};
use crate::grpc::{self, convert, frame, status};
use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue};
use http::request::Parts;
use http::{Method as Verb, Response, StatusCode};
use hyper::body::Body;
use std::time::Duration;

/// What a path names: a core A2A method, or one of the agent's extension methods.
#[derive(Clone, Copy)]
enum Target<'a> {
    Core(crate::request::Method),
    Extension(&'a crate::methods::MethodSpec),
}

/// A refusal: the error, and the gRPC code when it is not the table's for the error's kind.
struct Refusal {
    code: Option<i32>,
    error: A2AError,
}

impl From<A2AError> for Refusal {
    fn from(error: A2AError) -> Self {
        Self { code: None, error }
    }
}

pub(super) async fn serve<B>(app: &App, parts: Parts, body: B) -> Response<ResponseBody>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let requested = app.extensions.requested(&parts.headers, None);
    let activation = app.extensions.activation(&requested);
    let mut resp = match answer(app, &parts, body, &requested, &activation).await {
        Ok(resp) => resp,
        Err(refusal) => refuse(refusal),
    };
    echo_extensions(&mut resp, &parts.headers, &activation.active());
    resp
}

async fn answer<B>(
    app: &App,
    parts: &Parts,
    body: B,
    requested: &[String],
    activation: &crate::executor::Activation,
) -> Result<Response<ResponseBody>, Refusal>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    if !app.serves_grpc {
        return Err(unimplemented("this agent's card declares no GRPC interface"));
    }
    let content_type = parts.headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !grpc::is_grpc_content_type(content_type) {
        return Err(unimplemented(
            "this server reads gRPC messages in protobuf only (application/grpc or application/grpc+proto)",
        ));
    }
    let target = match grpc::extension_of_path(parts.uri.path()) {
        Some(name) => Target::Extension(
            app.handler.method(name).ok_or_else(|| unimplemented(&format!("unknown extension method {name}")))?,
        ),
        None => Target::Core(match grpc::method_of_path(parts.uri.path()) {
            Some(Ok(method)) => method,
            Some(Err(name)) => return Err(unimplemented(&format!("unknown method {}/{name}", grpc::SERVICE))),
            None => {
                let shown: String = parts.uri.path().chars().take(200).collect();
                return Err(unimplemented(&format!("unknown service or method {shown}")));
            }
        }),
    };
    let span = tracing::Span::current();
    let name = match target {
        Target::Core(method) => method.as_str(),
        Target::Extension(spec) => spec.name.as_str(),
    };
    span.record("method", name);
    if let Target::Core(method) = target {
        crate::metrics::observe(|o| o.method.set(method.as_str()));
    }
    if parts.method != Verb::POST {
        return Err(A2AError::invalid_request(format!("gRPC calls are sent with POST, not {}", parts.method)).into());
    }
    let speaks = headers::Speaks::V10;
    let version = headers::requested_version(&parts.headers, None, speaks)?;
    if version.explicit && version.version == Version::V03 {
        return Err(speaks.refuse("0.3", "this is the A2A 1.0 gRPC service (lf.a2a.v1)").into());
    }
    span.record("version", "1.0");
    // One deadline for the whole call, from its arrival.
    let deadline = grpc_timeout(&parts.headers)?.map(|d| tokio::time::Instant::now() + d);
    let limit = app.max_body_bytes();
    let read = read_body(
        &parts.headers,
        body,
        limit.saturating_add(frame::PREFIX),
        app.body_read_timeout(),
        app.handler.body_budget(),
        // The message's length prefix: a message announced over the limit is refused at once.
        Announced::Prefix(frame::PREFIX, |p| u32::from_be_bytes([p[1], p[2], p[3], p[4]]) as usize + frame::PREFIX),
    );
    let read = within(deadline, read).await?;
    // The body's share of the in-flight budget is kept until the answer is made.
    let (bytes, _share) = read.map_err(|e| match e.status {
        // Said with the message's limit (the body's counts the 5-byte frame prefix too).
        StatusCode::PAYLOAD_TOO_LARGE => Refusal {
            code: Some(status::RESOURCE_EXHAUSTED),
            error: A2AError::invalid_request(format!("the gRPC message is larger than {limit} bytes"))
                .with_meta("maxBodyBytes", limit.to_string()),
        },
        StatusCode::REQUEST_TIMEOUT => Refusal { code: Some(status::DEADLINE_EXCEEDED), error: e.error },
        _ => e.error.into(),
    })?;
    let encoding = frame::Encoding::of(&parts.headers);
    let message = frame::single_message(&bytes, limit, encoding).map_err(|e| {
        let code = match e {
            // gRPC's compression rules: an encoding this server does not know is UNIMPLEMENTED
            // (the answer names the ones it accepts); a compressed message without an encoding,
            // or a flag that is neither, or gzip that does not inflate, is a broken peer: INTERNAL.
            frame::FrameError::Compressed if encoding == frame::Encoding::Unknown => status::UNIMPLEMENTED,
            frame::FrameError::Compressed | frame::FrameError::BadFlag(_) | frame::FrameError::Corrupt(_) => {
                status::INTERNAL
            }
            frame::FrameError::TooLarge { .. } => status::RESOURCE_EXHAUSTED,
            frame::FrameError::Truncated | frame::FrameError::Missing | frame::FrameError::Extra => {
                status::INVALID_ARGUMENT
            }
        };
        Refusal { code: Some(code), error: A2AError::invalid_request(e.to_string()) }
    })?;
    let method = match target {
        Target::Core(method) => method,
        Target::Extension(spec) => {
            let params = convert::decode_value(&message)?;
            app.extensions.check_required(requested)?;
            // Calling an extension's method activates that extension.
            activation.force(&spec.extension);
            let ctx = call_context(activation, parts);
            let call = app.call_method(&ctx, spec, params);
            let result = within(deadline, call).await??;
            return Ok(grpc_response(ResponseBody::grpc_unary(frame::encode(&convert::encode_value(&result)?))));
        }
    };
    if matches!(method, crate::request::Method::SendMessage | crate::request::Method::SendStreamingMessage) {
        app.handler.check_parts(convert::count_message_parts(&message))?;
    }
    let request = convert::decode_request(method, &message)?;
    app.extensions.check_required(requested)?;
    let ctx = call_context(activation, parts);
    let call = app.call(&ctx, request);
    let reply = within(deadline, call).await??;
    // What is left of the call's deadline once the stream is open: the head's wait and the
    // stream both keep to it.
    let left = || deadline.map(|at| at.saturating_duration_since(tokio::time::Instant::now()));
    let body = match reply {
        Reply::Value(v) => ResponseBody::grpc_unary(frame::encode(&encode_reply(method, &v)?)),
        Reply::Empty => ResponseBody::grpc_unary(frame::encode(&[])),
        Reply::Stream(mut events) => {
            await_head(&mut events, left()).await;
            let options =
                SseOptions { keep_alive: None, shutdown: Some(app.shutdown.clone()), span: tracing::Span::current() };
            ResponseBody::grpc_stream(events, left(), options)
        }
    };
    Ok(grpc_response(body))
}

/// A unary result as the method's response message: the replies every call makes (tasks and
/// SendMessage's answer) field for field, the rest through ProtoJSON.
fn encode_reply(method: crate::request::Method, reply: &Payload) -> crate::Result<Bytes> {
    use crate::grpc::{direct, pb};
    match reply {
        Payload::Sent(sent) => Ok(direct::encode(&pb::SendMessageResponse::from(&**sent))),
        Payload::Task(task) => Ok(direct::encode(&pb::Task::from(&**task))),
        _ => convert::encode_result(method, reply),
    }
}

fn grpc_response(body: ResponseBody) -> Response<ResponseBody> {
    let mut resp = Response::new(body);
    resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(grpc::CONTENT_TYPE));
    resp.headers_mut().insert("grpc-accept-encoding", HeaderValue::from_static(frame::ACCEPT_ENCODING));
    resp
}

/// A trailers-only answer: HTTP 200, the status in the headers, no body.
fn refuse(refusal: Refusal) -> Response<ResponseBody> {
    crate::metrics::outcome(refusal.error.kind.spec().reason);
    let mut status = status::of_error(&refusal.error);
    if let Some(code) = refusal.code {
        status.code = code;
    }
    let mut resp = grpc_response(ResponseBody::empty());
    resp.headers_mut().extend(status::status_headers(&status));
    resp
}

/// A gRPC call refused with `error` after it was answered (see `service`'s budget of answers).
pub(super) fn refused(error: A2AError) -> Response<ResponseBody> {
    refuse(error.into())
}

/// A gRPC call over HTTP/1: 505, with the status (UNIMPLEMENTED) in the headers too, so that a
/// client reads why whichever it looks at.
pub(super) fn requires_http2() -> Response<ResponseBody> {
    let mut resp = refuse(unimplemented("gRPC requires HTTP/2"));
    *resp.status_mut() = StatusCode::HTTP_VERSION_NOT_SUPPORTED;
    resp
}

/// An authentication failure before routing, as a gRPC status.
pub(super) fn refuse_error(error: &A2AError) -> Response<ResponseBody> {
    refuse(Refusal { code: None, error: error.clone() })
}

fn unimplemented(what: &str) -> Refusal {
    Refusal { code: Some(status::UNIMPLEMENTED), error: A2AError::new(ErrorKind::MethodNotFound, what) }
}

fn deadline_passed() -> Refusal {
    A2AError::new(ErrorKind::Timeout, "the call's deadline (grpc-timeout) passed").into()
}

/// `work` bounded by the call's deadline: DEADLINE_EXCEEDED once it has passed, even for work
/// that would finish at once (`grpc-timeout: 0n` is over before the call begins).
async fn within<F: std::future::Future>(deadline: Option<tokio::time::Instant>, work: F) -> Result<F::Output, Refusal> {
    match deadline {
        Some(at) if tokio::time::Instant::now() >= at => Err(deadline_passed()),
        Some(at) => tokio::time::timeout_at(at, work).await.map_err(|_| deadline_passed()),
        None => Ok(work.await),
    }
}

/// `grpc-timeout`: at most 8 digits and a unit (H, M, S, m, u, n).
fn grpc_timeout(headers: &http::HeaderMap) -> Result<Option<Duration>, Refusal> {
    let Some(value) = headers.get("grpc-timeout") else { return Ok(None) };
    let bad = || Refusal {
        code: Some(status::INVALID_ARGUMENT),
        error: A2AError::invalid_request("grpc-timeout is not 1 to 8 digits and a unit (H, M, S, m, u, n)"),
    };
    let text = value.to_str().map_err(|_| bad())?;
    if text.len() < 2 || text.len() > 9 {
        return Err(bad());
    }
    let (digits, unit) = text.split_at(text.len() - 1);
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let d = match unit {
        "H" => Duration::from_secs(n.saturating_mul(3600)),
        "M" => Duration::from_secs(n.saturating_mul(60)),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return Err(bad()),
    };
    Ok(Some(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeout(v: &str) -> Result<Option<Duration>, ()> {
        let mut h = http::HeaderMap::new();
        h.insert("grpc-timeout", HeaderValue::from_str(v).unwrap());
        grpc_timeout(&h).map_err(|_| ())
    }

    #[test]
    fn grpc_timeouts() {
        assert_eq!(timeout("5S"), Ok(Some(Duration::from_secs(5))));
        assert_eq!(timeout("250m"), Ok(Some(Duration::from_millis(250))));
        assert_eq!(timeout("99999999n"), Ok(Some(Duration::from_nanos(99_999_999))));
        assert_eq!(timeout("1H"), Ok(Some(Duration::from_secs(3600))));
        assert!(timeout("5").is_err());
        assert!(timeout("123456789S").is_err());
        assert!(timeout("5x").is_err());
        assert!(timeout("-5S").is_err());
        assert!(timeout("+5S").is_err());
        assert_eq!(grpc_timeout(&http::HeaderMap::new()).ok().flatten(), None);
    }
}
