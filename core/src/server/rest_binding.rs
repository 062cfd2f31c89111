//! The HTTP+JSON (REST) binding of A2A 1.0 over HTTP: [`crate::rest::route`] reads the
//! request, the handler answers, and the result is the JSON body, `{}` for
//! `google.protobuf.Empty`, or an SSE stream of bare StreamResponse objects.
//!
//! Decisions:
//! - Errors are `google.rpc.Status` bodies (`A2AError::to_http_body`) with the table's HTTP
//!   status; 404 for unknown paths and 405 with `Allow` for a known path with another method
//!   (from [`crate::rest::RestError`]); 413 for a body over `Limits::max_body_bytes` and 415
//!   for a non-JSON `Content-Type` on a non-empty body (both InvalidRequest, `code` = the HTTP
//!   status sent).
//! - Response media type: `application/json`, unless the client named
//!   `application/a2a+json` (in `Accept` or its own `Content-Type`). The spec says a2a+json
//!   SHOULD be used (a2a-sdk 1.3 answers it on success), but the TCK's HTTP+JSON requirement
//!   says the binding MUST use `application/json` and checks for that string, so plain JSON
//!   is the default, and a client that asks for a2a+json gets it.
//! - Versions: no `A2A-Version` is served as 1.0 (these paths only exist in 1.0; the 0.3 REST
//!   paths under `/v1/...` are not served, so they are 404); `1.x` is 1.0; an explicit `0.3` is
//!   VersionNotSupported (400), since this server speaks 0.3 over JSON-RPC only; anything else
//!   is VersionNotSupported too.
//! - Extensions: as in JSON-RPC: a missing `required` one is 400 ExtensionSupportRequired;
//!   activated ones are echoed in `A2A-Extensions`.

use super::body::{Framing, ResponseBody};
use super::handler::Reply;
use super::headers::{self, Version};
use super::service::{
    App, BoxError, await_head, call_context, echo_extensions, json_response, serialized_response, status,
};
use crate::error::{A2AError, ErrorKind};
use crate::rest;
use bytes::Bytes;
use http::header::{ALLOW, HeaderValue};
use http::request::Parts;
use http::{Response, StatusCode};
use hyper::body::Body;
use serde_json::json;

pub(super) async fn serve<B>(app: &App, parts: Parts, path: &str, body: B) -> Response<ResponseBody>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let requested = app.extensions.requested(&parts.headers, parts.uri.query());
    let activation = app.extensions.activation(&requested);
    let media = headers::rest_media_type(&parts.headers);
    let mut resp = match answer(app, &parts, path, body, &requested, &activation, media).await {
        Ok(resp) => resp,
        Err((code, err)) => error_response(code, &err, media),
    };
    echo_extensions(&mut resp, &parts.headers, &activation.active());
    resp
}

type Failure = (StatusCode, A2AError);

async fn answer<B>(
    app: &App,
    parts: &Parts,
    path: &str,
    body: B,
    requested: &[String],
    activation: &crate::executor::Activation,
    media: &'static str,
) -> Result<Response<ResponseBody>, Failure>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let fail = |e: A2AError| (status(e.http_status()), e);
    let speaks = headers::Speaks::V10;
    let version = headers::requested_version(&parts.headers, parts.uri.query(), speaks).map_err(fail)?;
    if version.explicit && version.version == Version::V03 {
        return Err(fail(
            speaks.refuse("0.3", "A2A 0.3 is served over JSON-RPC only; send A2A-Version: 1.0 to use HTTP+JSON"),
        ));
    }
    tracing::Span::current().record("version", "1.0");
    // The body's share of the in-flight budget is kept until the answer is made.
    let (bytes, _share) = app.read_json_body(&parts.headers, body).await.map_err(|e| (e.status, e.error))?;
    if !bytes.iter().all(u8::is_ascii_whitespace) && !headers::is_json_body(&parts.headers) {
        let shown = parts.headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("?");
        let shown: String = shown.chars().take(100).collect();
        return Err((
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            A2AError::new(
                crate::ErrorKind::ContentTypeNotSupported,
                format!("Content-Type {shown:?} is not supported; send {} or {}", headers::A2A_JSON, headers::JSON),
            ),
        ));
    }
    let extension = app.handler.method_at(path).filter(|(_, tenant)| {
        // A tenanted reading never shadows a core route taking POST (`/tasks/x:cancel` is
        // CancelTask); one that names only other methods (`/acme/tasks/search`: GET) does not.
        parts.method == http::Method::POST
            && (tenant.is_none()
                || !matches!(rest::route("POST", path, None, b""), Ok(_) | Err(rest::RestError::Invalid(_))))
    });
    if let Some((spec, tenant)) = extension {
        app.extensions.check_required(requested).map_err(fail)?;
        let mut params = if bytes.iter().all(u8::is_ascii_whitespace) {
            serde_json::Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .map_err(|e| fail(A2AError::new(ErrorKind::InvalidRequest, format!("the body is not JSON: {e}"))))?
        };
        // The path's tenant, percent-decoded and checked against the body's, as on the core routes.
        if let Some(tenant) = tenant {
            if params.is_null() {
                params = json!({});
            }
            let Some(fields) = params.as_object_mut() else {
                return Err(fail(A2AError::invalid_field("tenant", "a tenant in the path needs an object body")));
            };
            rest::bind(fields, "tenant", tenant).map_err(fail)?;
        }
        // Calling an extension's method activates that extension.
        activation.force(&spec.extension);
        let ctx = call_context(activation, parts);
        let result = app.call_method(&ctx, spec, params).await.map_err(fail)?;
        return Ok(json_response(StatusCode::OK, media, &result));
    }
    let request = match rest::route(parts.method.as_str(), path, parts.uri.query(), &bytes) {
        Ok(r) => r,
        Err(e) => {
            let mut resp = json_response(status(e.http_status()), media, &e.to_http_body());
            if let Some(allow) = e.allow().and_then(|a| HeaderValue::from_str(&a).ok()) {
                resp.headers_mut().insert(ALLOW, allow);
            }
            return Ok(resp);
        }
    };
    app.extensions.check_required(requested).map_err(fail)?;
    let ctx = call_context(activation, parts);
    match app.call(&ctx, request).await.map_err(fail)? {
        Reply::Value(v) => Ok(serialized_response(StatusCode::OK, media, &v)),
        // google.protobuf.Empty is `{}` in ProtoJSON.
        Reply::Empty => Ok(json_response(StatusCode::OK, media, &json!({}))),
        Reply::Stream(mut events) => {
            await_head(&mut events, None).await;
            Ok(app.sse_response(events, Framing::Rest))
        }
    }
}

/// A `google.rpc.Status` body whose `code` is the HTTP status actually sent.
fn error_response(code: StatusCode, err: &A2AError, media: &'static str) -> Response<ResponseBody> {
    crate::metrics::outcome(err.kind.spec().reason);
    let mut body = err.to_http_body();
    body["error"]["code"] = code.as_u16().into();
    json_response(code, media, &body)
}
