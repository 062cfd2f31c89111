//! The standard gRPC health service (`grpc.health.v1.Health`, as in grpc's `health.proto`) on
//! the agent's listener, for gRPC-only probes: Kubernetes' `grpc` probes, `grpc_health_probe`,
//! Envoy and client-side health checking.
//!
//! - The service `""` (the server as a whole) and `lf.a2a.v1.A2AService` are SERVING when the
//!   server can serve calls now, as `/readyz` says (its task store answers, it is not stopping),
//!   and NOT_SERVING otherwise. Any other name is NOT_FOUND for `Check` and SERVICE_UNKNOWN for
//!   `Watch`, as the protocol says.
//! - `Watch` sends the status at once and then whenever it changes (checked every
//!   [`WATCH_PERIOD`]); at shutdown it sends NOT_SERVING and ends.
//! - Public, like `/healthz` and the card: probes carry no credentials. Served whether or not
//!   the card declares a GRPC interface (the probe is about the process, not the binding).

use super::body::ResponseBody;
use super::service::{Announced, App, BoxError, read_body};
use crate::grpc::{frame, status};
use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue};
use http::request::Parts;
use http::{Method, Response};
use hyper::body::Body;
use prost::Message;
use std::time::Duration;

/// The path prefix of the service's two methods.
pub const SERVICE_PREFIX: &str = "/grpc.health.v1.Health/";
/// How often `Watch` looks at the status again.
const WATCH_PERIOD: Duration = Duration::from_secs(1);
/// A `HealthCheckRequest` is one short string.
const MAX_REQUEST_BYTES: usize = 4096;

#[derive(Clone, PartialEq, Message)]
struct HealthCheckRequest {
    #[prost(string, tag = "1")]
    service: String,
}

#[derive(Clone, PartialEq, Message)]
struct HealthCheckResponse {
    #[prost(int32, tag = "1")]
    status: i32,
}

const SERVING: i32 = 1;
const NOT_SERVING: i32 = 2;
const SERVICE_UNKNOWN: i32 = 3;

/// Whether `path` is one of the health service's.
pub fn is_health_path(path: &str) -> bool {
    path.starts_with(SERVICE_PREFIX)
}

/// Answers a call to the health service (an HTTP/2 gRPC request to [`SERVICE_PREFIX`]).
pub(super) async fn serve<B>(app: &App, parts: Parts, body: B) -> Response<ResponseBody>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let method = &parts.uri.path()[SERVICE_PREFIX.len()..];
    crate::metrics::observe(|o| {
        o.binding.set("health");
        o.method.set(if method == "Watch" { "GrpcWatch" } else { "GrpcCheck" });
    });
    let watch = match method {
        "Check" => false,
        "Watch" => true,
        other => {
            let shown: String = other.chars().take(100).collect();
            return refuse(status::UNIMPLEMENTED, format!("unknown method grpc.health.v1.Health/{shown}"));
        }
    };
    let content_type = parts.headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !crate::grpc::is_grpc_content_type(content_type) {
        return refuse(status::UNIMPLEMENTED, "this server reads gRPC messages in protobuf only".to_owned());
    }
    if parts.method != Method::POST {
        return refuse(status::INVALID_ARGUMENT, format!("gRPC calls are sent with POST, not {}", parts.method));
    }
    let read = read_body(
        &parts.headers,
        body,
        MAX_REQUEST_BYTES + frame::PREFIX,
        app.body_read_timeout(),
        app.handler.body_budget(),
        Announced::Nothing,
    )
    .await;
    let request = match read {
        Ok((bytes, _share)) => frame::single_message(&bytes, MAX_REQUEST_BYTES, frame::Encoding::of(&parts.headers))
            .map_err(|e| e.to_string())
            .and_then(|m| HealthCheckRequest::decode(m).map_err(|e| format!("not a HealthCheckRequest: {e}"))),
        Err(e) => Err(e.error.message),
    };
    let service = match request {
        Ok(request) => request.service,
        Err(why) => return refuse(status::INVALID_ARGUMENT, why),
    };
    let known = service.is_empty() || service == crate::grpc::SERVICE;
    if !watch {
        if !known {
            return refuse(status::NOT_FOUND, format!("no service named {:?} here", truncated(&service)));
        }
        return answer(ResponseBody::grpc_unary(encoded(serving(app).await)));
    }
    // Watches are public and long-lived: bounded, so they cannot pile up tasks, nor their
    // store pings (one a second each) become a load on the store.
    let Some(slot) = WatchSlot::take() else {
        return refuse(status::RESOURCE_EXHAUSTED, format!("at most {MAX_WATCHES} health watches at once"));
    };
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    let (handler, shutdown) = (app.handler.clone(), app.shutdown.clone());
    tokio::spawn(async move {
        let _slot = slot;
        if !known {
            // The protocol keeps the stream open: the service may be registered later.
            let _ = tx.send(encoded(SERVICE_UNKNOWN)).await;
            tokio::select! { () = tx.closed() => {}, () = shutdown.cancelled() => {} }
            return;
        }
        let mut last = None;
        loop {
            let now = if shutdown.is_cancelled() { NOT_SERVING } else { status_of(handler.ready().await) };
            if last != Some(now) && tx.send(encoded(now)).await.is_err() {
                return; // the client left
            }
            last = Some(now);
            if shutdown.is_cancelled() {
                return;
            }
            tokio::select! {
                () = tx.closed() => return,
                () = shutdown.cancelled() => {}
                () = tokio::time::sleep(WATCH_PERIOD) => {}
            }
        }
    });
    answer(ResponseBody::grpc_messages(rx))
}

/// Health watches open at once in this process, at most.
const MAX_WATCHES: usize = 64;
static WATCHES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One of the [`MAX_WATCHES`], given back when dropped.
struct WatchSlot;

impl WatchSlot {
    fn take() -> Option<Self> {
        use std::sync::atomic::Ordering;
        WATCHES
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < MAX_WATCHES).then_some(n + 1))
            .ok()
            .map(|_| WatchSlot)
    }
}

impl Drop for WatchSlot {
    fn drop(&mut self) {
        WATCHES.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// SERVING when the server can serve calls now (`/readyz`'s rule).
async fn serving(app: &App) -> i32 {
    if app.shutdown.is_cancelled() { NOT_SERVING } else { status_of(app.handler.ready().await) }
}

fn status_of(ready: crate::Result<()>) -> i32 {
    if ready.is_ok() { SERVING } else { NOT_SERVING }
}

fn encoded(status: i32) -> Bytes {
    frame::encode_message(&HealthCheckResponse { status })
}

fn truncated(s: &str) -> String {
    s.chars().take(100).collect()
}

fn answer(body: ResponseBody) -> Response<ResponseBody> {
    let mut resp = Response::new(body);
    resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(crate::grpc::CONTENT_TYPE));
    resp
}

/// A trailers-only answer with `code`; the message as `grpc-message`, without A2A details (this
/// is not an A2A service).
fn refuse(code: i32, message: String) -> Response<ResponseBody> {
    let status = status::Status { code, message, details: Vec::new() };
    let mut resp = answer(ResponseBody::empty());
    resp.headers_mut().extend(status::status_headers(&status));
    resp
}
