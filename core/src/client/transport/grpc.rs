//! The gRPC binding, client side (A2A 1.0, service `lf.a2a.v1.A2AService`): one HTTP/2
//! connection pool per interface (h2c for `http://` / `grpc://`, TLS with ALPN `h2` for
//! `https://` / `grpcs://`; a bare `host:port`, the card's usual form for gRPC, is TLS when the
//! card's other interfaces are `https`). Requests are framed protobuf messages converted from
//! the typed request ([`crate::grpc::convert`]); the status comes in the trailers (or in the
//! headers of a trailers-only answer) and errors are rebuilt from its `ErrorInfo`.
//!
//! Service parameters (`a2a-version`, `a2a-extensions`), credentials and extra headers travel
//! as metadata, exactly the headers the HTTP bindings send; `grpc-timeout` carries the call's
//! timeout. Credentials that go in the query string cannot be sent over gRPC and are refused.

use super::{Transport, agent_fault, invalid_response, timed_out};
use crate::client::stream::Source;
use crate::error::{A2AError, ErrorKind, Result};
use crate::grpc::{self, convert, frame, status};
use crate::model::StreamResponse;
use crate::request::A2ARequest;
use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

type Connector = hyper_rustls::HttpsConnector<HttpConnector>;

/// PEM material for the channel's TLS (the HTTP bindings' reqwest client gets the same).
#[derive(Clone, Default)]
pub(crate) struct TlsMaterial {
    pub roots_pem: Vec<Vec<u8>>,
    pub identity_pem: Option<Vec<u8>>,
}

/// HTTP/2 connections to one gRPC interface.
pub(crate) struct Channel {
    client: HttpClient<Connector, Full<Bytes>>,
    /// `http://host:port` or `https://host:port`.
    origin: String,
}

impl Channel {
    pub fn new(url: &str, secure_default: bool, tls: &TlsMaterial, connect_timeout: Duration) -> Result<Self> {
        let (secure, rest) = match url.split_once("://") {
            Some((scheme, rest)) => match scheme.to_ascii_lowercase().as_str() {
                "http" | "grpc" => (false, rest),
                "https" | "grpcs" => (true, rest),
                other => {
                    return Err(A2AError::invalid_field("url", format!("a gRPC interface URL with scheme {other:?}")));
                }
            },
            None => (secure_default, url),
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.is_empty() {
            return Err(A2AError::invalid_field("url", format!("the gRPC interface URL {url:?} names no host")));
        }
        let origin = format!("{}://{authority}", if secure { "https" } else { "http" });
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(connect_timeout));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(rustls_config(tls)?)
            .https_or_http()
            .enable_http2()
            .wrap_connector(http);
        let client = HttpClient::builder(TokioExecutor::new()).http2_only(true).build(connector);
        Ok(Self { client, origin })
    }
}

/// The TLS settings: the platform's trust store (as reqwest uses it) plus any extra roots, and
/// a client certificate for mTLS.
fn rustls_config(tls: &TlsMaterial) -> Result<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let bad = |what: &str, e: &dyn std::fmt::Display| A2AError::invalid_field("tls", format!("{what}: {e}"));
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut roots = Vec::new();
    for pem in &tls.roots_pem {
        for cert in CertificateDer::pem_slice_iter(pem) {
            roots.push(cert.map_err(|e| bad("a CA certificate", &e))?);
        }
    }
    let verifier = rustls_platform_verifier::Verifier::new_with_extra_roots(roots, provider.clone())
        .map_err(|e| bad("the platform's trust store", &e))?;
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad("TLS versions", &e))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier));
    let config = match &tls.identity_pem {
        Some(pem) => {
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem)
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| bad("the client certificate", &e))?;
            let key = PrivateKeyDer::from_pem_slice(pem).map_err(|e| bad("the client key", &e))?;
            builder.with_client_auth_cert(certs, key).map_err(|e| bad("the client identity", &e))?
        }
        None => builder.with_no_client_auth(),
    };
    // ALPN (h2) is set by the connector.
    Ok(config)
}

fn channel(t: &Transport) -> Result<&Channel> {
    t.grpc.as_ref().ok_or_else(|| A2AError::internal("no gRPC channel for this interface"))
}

/// One outgoing gRPC call: its path, what its credentials and retries go by, and its message.
struct Outbound<'a> {
    path: String,
    call: super::Call<'a>,
    /// Extensions requested for this call, beside the configured ones.
    extensions: &'a [String],
    message: Bytes,
}

impl<'a> Outbound<'a> {
    fn of(req: &A2ARequest) -> Result<Self> {
        let method = req.method();
        Ok(Self {
            path: grpc::path(method),
            call: super::Call {
                name: method.as_str(),
                idempotent: super::is_idempotent(method),
                streaming: method.is_streaming(),
            },
            extensions: &[],
            message: frame::encode(&convert::encode_request(req)?),
        })
    }
}

/// Sends one call and returns the response head (with its body unread). Idempotent calls are
/// retried after a connect error, as on the HTTP bindings.
async fn exchange(t: &Transport, call: &Outbound<'_>, timeout: Option<Duration>) -> Result<http::Response<Incoming>> {
    let channel = channel(t)?;
    let path = &call.path;
    let out = t
        .request_for(reqwest::Method::POST, path.clone(), call.call, call.extensions, grpc::CONTENT_TYPE, None)
        .await?;
    if out.url.contains('?') {
        return Err(A2AError::invalid_field(
            "credentials",
            "credentials that go in the query string cannot be sent over gRPC",
        ));
    }
    let url = format!("{}{path}", channel.origin);
    let policy = t.config().retry;
    let mut attempt = 0u32;
    loop {
        let mut request = http::Request::post(&url)
            .body(Full::new(call.message.clone()))
            .map_err(|e| A2AError::invalid_field("url", format!("{url}: {e}")))?;
        let headers = request.headers_mut();
        headers.extend(out.headers.clone());
        headers.remove(ACCEPT);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(grpc::CONTENT_TYPE));
        headers.insert("te", HeaderValue::from_static("trailers"));
        headers.insert("grpc-accept-encoding", HeaderValue::from_static(frame::ACCEPT_ENCODING));
        if let Some(timeout) = timeout {
            // At most 8 digits: milliseconds, or seconds for long timeouts.
            let value = match timeout.as_millis() {
                ms if ms < 100_000_000 => format!("{ms}m"),
                _ => format!("{}S", timeout.as_secs().min(99_999_999)),
            };
            headers.insert("grpc-timeout", HeaderValue::from_str(&value).expect("digits and a unit"));
        }
        match channel.client.request(request).await {
            Ok(resp) => return Ok(resp),
            Err(e) if e.is_connect() && out.idempotent && attempt < policy.max_retries => {
                let delay = policy.delay(attempt, None);
                tracing::debug!(error = %e, attempt, ?delay, "retrying after a connect error");
                tokio::time::sleep(delay).await;
                attempt += 1;
            }
            Err(e) => return Err(transport_error(&e, &url)),
        }
    }
}

fn transport_error(err: &dyn std::error::Error, url: &str) -> A2AError {
    let mut message = format!("gRPC call to {url} failed: {err}");
    let mut source = err.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    A2AError::new(ErrorKind::Transport, message).with_meta("url", url)
}

/// The failure a response head already shows: a trailers-only status, or an answer that is
/// not gRPC at all (a proxy's error page).
fn refused(resp: &http::Response<Incoming>) -> Option<A2AError> {
    if let Some(s) = status::from_headers(resp.headers()) {
        return Some(if s.code == status::OK {
            invalid_response("the agent answered OK with no message")
        } else {
            status::to_error(&s)
        });
    }
    let grpc = resp.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(grpc::is_grpc_content_type);
    if resp.status() != http::StatusCode::OK || !grpc {
        let kind = match resp.status().as_u16() {
            401 => ErrorKind::Unauthenticated,
            403 => ErrorKind::PermissionDenied,
            502..=504 => ErrorKind::Unavailable,
            _ => ErrorKind::InvalidAgentResponse,
        };
        return Some(A2AError::new(kind, format!("not a gRPC answer: HTTP {}", resp.status())));
    }
    None
}

/// One unary call: the result as ProtoJSON.
pub(super) async fn call(t: &Transport, req: &A2ARequest) -> Result<Value> {
    let (message, _) = unary(t, &Outbound::of(req)?).await?;
    convert::decode_result(req.method(), &message).map_err(agent_fault)
}

/// An extension method over gRPC (see [`grpc::extension_path`]): `params` and the result
/// travel as `google.protobuf.Value`. Returns the result and the extensions the agent echoed.
pub(super) async fn call_method(
    t: &Transport,
    name: &str,
    params: Value,
    extensions: &[String],
) -> Result<(Value, Vec<String>)> {
    let call = Outbound {
        path: grpc::extension_path(name),
        call: super::Call { name, idempotent: false, streaming: false },
        extensions,
        message: frame::encode(&convert::encode_value(&params)?),
    };
    let (message, activated) = unary(t, &call).await?;
    Ok((convert::decode_value(&message).map_err(agent_fault)?, activated))
}

/// Sends a unary call and reads its one message (and the extensions echoed in its head).
async fn unary(t: &Transport, call: &Outbound<'_>) -> Result<(Bytes, Vec<String>)> {
    let timeout = t.config().timeout;
    let limit = t.config().max_response_bytes;
    let work = async {
        let resp = exchange(t, call, Some(timeout)).await?;
        if let Some(err) = refused(&resp) {
            return Err(err);
        }
        let activated = super::echoed_extensions(resp.headers());
        let encoding = frame::Encoding::of(resp.headers());
        let mut body = resp.into_body();
        let mut decoder = frame::Decoder::new(limit).with_encoding(encoding);
        let mut message = None;
        let mut trailers = None;
        while let Some(next) = body.frame().await {
            let next = next.map_err(|e| transport_error(&e, &t.endpoint.url))?;
            match next.into_data() {
                Ok(data) => {
                    decoder.push(&data);
                    while let Some(m) = decoder.next_message().map_err(|e| invalid_response(e.to_string()))? {
                        if message.replace(m).is_some() {
                            return Err(invalid_response("two messages in the answer to a unary call"));
                        }
                    }
                }
                Err(frame) => trailers = frame.into_trailers().ok(),
            }
        }
        let status = trailers
            .as_ref()
            .and_then(status::from_headers)
            .ok_or_else(|| invalid_response("the gRPC answer ended without a grpc-status"))?;
        if status.code != status::OK {
            return Err(status::to_error(&status));
        }
        let message = message.ok_or_else(|| invalid_response("the agent answered OK with no message"))?;
        Ok((message, activated))
    };
    tokio::time::timeout(timeout, work).await.unwrap_or_else(|_| Err(timed_out(&t.endpoint.url, timeout)))
}

/// Opens a server-streaming call; an error before the first message is returned here.
pub(super) async fn open_stream(t: &Transport, req: &A2ARequest) -> Result<Source> {
    let timeout = t.config().timeout;
    let head = tokio::time::timeout(timeout, exchange(t, &Outbound::of(req)?, None)).await;
    let resp = head.unwrap_or_else(|_| Err(timed_out(&t.endpoint.url, timeout)))?;
    if let Some(err) = refused(&resp) {
        return Err(err);
    }
    Ok(Source::grpc(Reader::new(resp, t), t.config()))
}

/// What a stream's body gave next.
// Events are the common case and move once each; boxing them would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Item {
    Event(StreamResponse),
    /// The status ended the stream with an error, or an event was not valid.
    Error(A2AError),
    /// The connection broke before the status.
    Dropped(A2AError),
    /// The status was OK.
    Ended,
}

/// Reads the `StreamResponse` messages of one server-streaming call.
pub(crate) struct Reader {
    body: Option<Incoming>,
    decoder: frame::Decoder,
    url: String,
}

impl Reader {
    fn new(resp: http::Response<Incoming>, t: &Transport) -> Self {
        let decoder =
            frame::Decoder::new(t.config().max_event_bytes).with_encoding(frame::Encoding::of(resp.headers()));
        Self { body: Some(resp.into_body()), decoder, url: t.endpoint.url.clone() }
    }

    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    pub(crate) async fn next(&mut self) -> Item {
        loop {
            match self.decoder.next_message() {
                Ok(Some(m)) => {
                    return match convert::decode_event_value(&m).and_then(|v| super::parse_event(v, "")) {
                        Ok(event) => Item::Event(event),
                        Err(e) => {
                            self.body = None;
                            Item::Error(agent_fault(e))
                        }
                    };
                }
                Ok(None) => {}
                Err(e) => {
                    self.body = None;
                    return Item::Error(invalid_response(e.to_string()));
                }
            }
            let Some(body) = self.body.as_mut() else { return Item::Ended };
            match body.frame().await {
                None => {
                    self.body = None;
                    let err =
                        A2AError::new(ErrorKind::Transport, format!("the gRPC stream from {} was cut off", self.url));
                    return Item::Dropped(err);
                }
                Some(Err(e)) => {
                    self.body = None;
                    return Item::Dropped(transport_error(&e, &self.url));
                }
                Some(Ok(f)) => match f.into_data() {
                    Ok(data) => self.decoder.push(&data),
                    Err(f) => {
                        self.body = None;
                        let status = f.into_trailers().ok().as_ref().and_then(status::from_headers);
                        return match status {
                            Some(s) if s.code == status::OK && !self.decoder.has_partial() => Item::Ended,
                            Some(s) if s.code != status::OK => Item::Error(status::to_error(&s)),
                            _ => Item::Error(invalid_response("the gRPC stream ended without a valid status")),
                        };
                    }
                },
            }
        }
    }
}
