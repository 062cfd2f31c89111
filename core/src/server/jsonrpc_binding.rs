//! The JSON-RPC binding over HTTP: `POST` of one JSON-RPC request, answered with one JSON-RPC
//! response (`application/json`) or, for the streaming methods, an SSE stream of them.
//!
//! Decisions (see also the module docs of [`super`]):
//! - HTTP status: every JSON-RPC error (parse, envelope, params, A2A errors) is sent with 200,
//!   as the official SDKs do; the error is in the body. Only transport-level refusals use
//!   other statuses, still with a JSON-RPC error body (id `null`): 415 and -32005 (ContentTypeNotSupported, as
//!   the TCK expects) for a
//!   `Content-Type` that is not JSON (a missing one is accepted), 413 for a body over
//!   `Limits::max_body_bytes`.
//! - Versions: the request names its version with `A2A-Version` (header or query). A 0.3
//!   method name (`message/send`, …) with no version, or with `0.3`, goes to the 0.3 adapter; with
//!   an explicit `1.x` it is MethodNotFound (-32601). A 1.0 method name with an explicit `0.3`
//!   is MethodNotFound too; with *no* version it is served as 1.0. That last case is lenient on
//!   purpose: the spec reads a missing header as 0.3, under which a 1.0 name simply does not
//!   exist, so answering it as 1.0 helps clients that forget the header and harms none (the
//!   official Python SDK answers VersionNotSupported instead). An unknown version is -32009.
//! - Extensions: a card extension marked `required` that the request does not list in
//!   `A2A-Extensions` is -32008 before the handler runs; activated extensions are echoed in the
//!   `A2A-Extensions` response header (on errors too).
//! - Notifications (no `id`) are executed and answered `204 No Content`, as JSON-RPC asks for no
//!   response; a streaming notification's stream is dropped (the task goes on).
//! - Streams: `text/event-stream`, one `data:` per event holding a JSON-RPC response with the
//!   request's id; an error before the stream starts is an ordinary JSON response.

use super::body::{Framing, ResponseBody};
use super::handler::Reply;
use super::headers::{self, Version};
use super::service::{App, BoxError, await_head, bytes_response, call_context, echo_extensions, no_content};
use crate::error::A2AError;
use crate::executor::Activation;
use crate::jsonrpc::{self, Envelope, ErrorResponse, Id};
use crate::model::v03;
use crate::request::Method;
use crate::task::call::CallContext;
use bytes::Bytes;
use http::request::Parts;
use http::{Response, StatusCode};
use hyper::body::Body;
use serde_json::{Value, json};

pub(super) async fn serve<B>(app: &App, parts: Parts, body: B) -> Response<ResponseBody>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let query = parts.uri.query();
    let requested = app.extensions.requested(&parts.headers, query);
    let activation = app.extensions.activation(&requested);
    let mut resp = answer(app, &parts, body, &requested, &activation).await;
    echo_extensions(&mut resp, &parts.headers, &activation.active());
    resp
}

async fn answer<B>(
    app: &App,
    parts: &Parts,
    body: B,
    requested: &[String],
    activation: &Activation,
) -> Response<ResponseBody>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let ctx = call_context(activation, parts);
    if !headers::is_json_body(&parts.headers) {
        let shown = parts.headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("?");
        let shown: String = shown.chars().take(100).collect();
        let err = A2AError::new(
            crate::ErrorKind::ContentTypeNotSupported,
            format!("Content-Type {shown:?} is not supported; send application/json"),
        );
        return rpc_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, &Id::Null, &err);
    }
    // The body's share of the in-flight budget is kept until the answer is made.
    let (bytes, _share) = match app.read_json_body(&parts.headers, body).await {
        Ok(b) => b,
        Err(e) => return rpc_error(e.status, &Id::Null, &e.error),
    };
    let envelope = match jsonrpc::parse_envelope(&bytes) {
        Ok(e) => e,
        Err(e) => return error_reply(&e),
    };
    let span = tracing::Span::current();
    span.record("method", bounded(&envelope.method).as_str());
    if let Some(method) = Method::from_name(&envelope.method) {
        crate::metrics::observe(|o| o.method.set(method.as_str()));
    }
    let requested_version =
        match headers::requested_version(&parts.headers, parts.uri.query(), headers::Speaks::V10AndV03) {
            Ok(v) => v,
            Err(e) => return error_reply(&envelope.error(e)),
        };
    let explicit = |v: Version| requested_version.explicit && requested_version.version == v;

    if let Some(method) = v03::Method::from_name(&envelope.method) {
        if explicit(Version::V10) {
            let err = method_not_found(&envelope.method, "an A2A 0.3 method, but the request asked for A2A 1.0");
            return error_reply(&envelope.error(err));
        }
        span.record("version", "0.3");
        return serve_v03(app, envelope, method, requested, ctx).await;
    }
    if explicit(Version::V03) {
        let why = if Method::from_name(&envelope.method).is_some() {
            "an A2A 1.0 method, but the request asked for A2A 0.3"
        } else {
            "not an A2A 0.3 method"
        };
        return error_reply(&envelope.error(method_not_found(&envelope.method, why)));
    }
    span.record("version", "1.0");
    if let Some(spec) = app.handler.method(&envelope.method) {
        return call_method(app, &ctx, spec, envelope, requested).await;
    }
    let call = match jsonrpc::parse_v10(envelope) {
        Ok(c) => c,
        Err(e) => return error_reply(&e),
    };
    if let Err(e) = app.extensions.check_required(requested) {
        return error_reply(&call.error(e));
    }
    let notification = call.is_notification();
    let id = call.response_id();
    let result = app.call(&ctx, call.request).await;
    if notification {
        return no_content();
    }
    match result {
        Ok(Reply::Value(v)) => ok(jsonrpc::success(&id, &v)),
        // google.protobuf.Empty is `{}` in ProtoJSON.
        Ok(Reply::Empty) => ok(jsonrpc::success(&id, json!({}))),
        Ok(Reply::Stream(mut events)) => {
            await_head(&mut events, None).await;
            app.sse_response(events, Framing::JsonRpc(id))
        }
        // A streaming call refused before its stream starts (unknown task, terminal task, ...)
        // is answered like any other call: a plain JSON-RPC error response, not a stream. The
        // official TCK reads any `text/event-stream` answer as an accepted stream (STREAM-SUB-003).
        Err(e) => rpc_error(handler_error_status(&e), &id, &e),
    }
}

/// An extension method (see [`crate::methods`]): its params as they are, its result as the
/// JSON-RPC result.
async fn call_method(
    app: &App,
    ctx: &CallContext,
    spec: &crate::methods::MethodSpec,
    envelope: Envelope,
    requested: &[String],
) -> Response<ResponseBody> {
    if let Err(e) = app.extensions.check_required(requested) {
        return error_reply(&envelope.error(e));
    }
    let notification = envelope.is_notification();
    let params = envelope.params_value().unwrap_or(Value::Null);
    if !matches!(params, Value::Object(_) | Value::Array(_) | Value::Null) {
        // JSON-RPC 2.0 §4.2: params, when present, are an object or an array. (A notification
        // is answered with nothing, its errors included.)
        if notification {
            return no_content();
        }
        let refused = A2AError::invalid_request("params: an object or an array (JSON-RPC 2.0 §4.2)");
        return error_reply(&envelope.error(refused));
    }
    // Calling an extension's method activates that extension (a call refused before it is
    // made activates nothing).
    ctx.activation.force(&spec.extension);
    let id = envelope.id.clone().unwrap_or(Id::Null);
    let result = app.call_method(ctx, spec, params).await;
    if notification {
        return no_content();
    }
    match result {
        Ok(v) => ok(jsonrpc::success(&id, &v)),
        Err(e) => rpc_error(handler_error_status(&e), &id, &e),
    }
}

/// A 0.3 call: params up to 1.0, the one handler, the result back down to 0.3.
async fn serve_v03(
    app: &App,
    envelope: Envelope,
    method: v03::Method,
    requested: &[String],
    ctx: CallContext,
) -> Response<ResponseBody> {
    let notification = envelope.is_notification();
    let id = envelope.id.clone().unwrap_or(Id::Null);
    // A 0.3 streaming call is refused inside a stream: the official 0.3 clients read its answer
    // as SSE only (a plain JSON answer fails them with a content-type error, the A2A error
    // lost), and the official 0.3 server answers so. (1.0 refuses with a plain response, above.)
    let streaming = matches!(method, v03::Method::MessageStream | v03::Method::TasksResubscribe);
    let fail = |err: A2AError| match handler_error_status(&err) {
        _ if notification => no_content(),
        StatusCode::OK if streaming => sse_error(&id, &err),
        status => rpc_error(status, &id, &err),
    };
    let repeated = envelope.params.as_ref().and_then(|p| crate::model::duplicates::first_duplicate(p.get().as_bytes()));
    if let Some(path) = repeated {
        return fail(A2AError::invalid_field(format!("params.{path}"), "is given more than once"));
    }
    let request = match super::v03::request_from_v03(method, envelope.params_value()) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    if let Err(e) = app.extensions.check_required(requested) {
        return fail(e);
    }
    let result = app.call(&ctx, request).await;
    if notification {
        return no_content();
    }
    match result {
        Ok(Reply::Value(v)) => match super::v03::result_to_v03(method, v.to_value()) {
            Ok(v03) => ok(jsonrpc::success(&id, &v03)),
            Err(e) => fail(e),
        },
        Ok(Reply::Empty) => ok(jsonrpc::success(&id, Value::Null)),
        Ok(Reply::Stream(mut events)) => {
            await_head(&mut events, None).await;
            app.sse_response(events, Framing::JsonRpcV03(id))
        }
        Err(e) => fail(e),
    }
}

fn method_not_found(name: &str, why: &str) -> A2AError {
    let mut err = A2AError::method_not_found(&bounded(name));
    err.message.push_str(&format!(" ({why})"));
    err
}

/// A peer's method name, bounded before it is echoed or logged.
fn bounded(name: &str) -> String {
    name.chars().take(128).collect()
}

fn ok(body: Vec<u8>) -> Response<ResponseBody> {
    bytes_response(StatusCode::OK, headers::JSON, body)
}

/// JSON-RPC errors travel with 200, except authentication ones: standard web auth (and every
/// HTTP client's retry-with-credentials logic) expects 401 / 403.
fn handler_error_status(err: &A2AError) -> StatusCode {
    match err.kind {
        crate::ErrorKind::Unauthenticated | crate::ErrorKind::PermissionDenied => {
            super::service::status(err.http_status())
        }
        _ => StatusCode::OK,
    }
}

fn rpc_error(status: StatusCode, id: &Id, err: &A2AError) -> Response<ResponseBody> {
    crate::metrics::outcome(err.kind.spec().reason);
    bytes_response(status, headers::JSON, jsonrpc::error(id, err))
}

/// A stream of one event: the JSON-RPC error (a 0.3 streaming call refused).
fn sse_error(id: &Id, err: &A2AError) -> Response<ResponseBody> {
    crate::metrics::outcome(err.kind.spec().reason);
    let event = crate::sse::SseEvent::data(String::from_utf8_lossy(&jsonrpc::error(id, err)).into_owned());
    let mut resp = bytes_response(StatusCode::OK, "text/event-stream", crate::sse::encode(&event).into_bytes());
    resp.headers_mut().insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-cache"));
    resp
}

/// The answer to a request that failed before the handler: nothing for a notification.
fn error_reply(e: &ErrorResponse) -> Response<ResponseBody> {
    if e.notification {
        crate::metrics::outcome(e.error.kind.spec().reason);
        no_content()
    } else {
        rpc_error(StatusCode::OK, &e.id, &e.error)
    }
}
