//! The A2A server: both HTTP bindings (JSON-RPC and HTTP+JSON) and SSE on one listener, the
//! agent card, protocol-version and extension headers, limits, graceful shutdown.
//!
//! ```no_run
//! # async fn run(handler: std::sync::Arc<a2a_native::server::RequestHandler>) -> std::io::Result<()> {
//! use a2a_native::server::Server;
//! let bound = Server::new(handler).bind("127.0.0.1:8080").await?;
//! let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
//! bound.serve(async { let _ = stopped.await; }).await
//! # }
//! ```
//!
//! Layout: [`service`] routes a request (card, JSON-RPC path, HTTP+JSON prefix); [`card`] serves
//! the card with caching and 0.3 compat fields; `jsonrpc_binding` (with the 0.3 adapter in
//! `v03`) and `rest_binding` adapt bytes to [`RequestHandler::handle`]; [`headers`] reads
//! `A2A-Version`, `A2A-Extensions` and content types; [`body`] writes JSON and SSE bodies.

pub mod auth;
pub mod body;
mod budget;
pub mod card;
mod connection;
pub mod cors;
pub mod embedded;
mod grpc_binding;
mod grpc_health;
pub mod handler;
pub mod headers;
pub mod host;
mod jsonrpc_binding;
pub mod jwt;
pub mod metrics_endpoint;
mod rest_binding;
pub mod security;
pub mod service;
pub mod tls;
mod v03;

pub use crate::store::Stores;
pub use crate::task::call::{CallContext, EventStream, StreamItem};
pub use crate::task::config::{Limits, ServerConfig, TaskVisibility};
pub use auth::{AnyOf, ApiKeys, Authenticator, BearerTokens, KeyLocation, Principal, RequiredScopes, SkillScopes};
pub use body::ResponseBody;
pub use handler::{Payload, Reply, RequestHandler};
pub use jwt::{JwtBearer, JwtConfig, KeySource};
pub use metrics_endpoint::{serve_metrics, start_metrics};
pub use service::{A2AService, HttpOptions};
pub use tls::{MutualTls, PeerCertificate};

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// The smallest `Limits::max_header_bytes` (hyper's smallest HTTP/1 read buffer).
pub const MIN_HEADER_BYTES: usize = 8192;

/// Serves one agent over HTTP/1.1 and HTTP/2 (h2c, by prior knowledge or upgrade-free
/// detection) on a TCP listener.
pub struct Server {
    handler: Arc<RequestHandler>,
    options: HttpOptions,
    shutdown_timeout: Duration,
    tls: Option<tokio_rustls::TlsAcceptor>,
}

/// Whether the client sends anything within `within` (a closed connection sends nothing).
async fn first_byte(stream: &tokio::net::TcpStream, within: Duration) -> bool {
    let mut byte = [0u8; 1];
    matches!(tokio::time::timeout(within, stream.peek(&mut byte)).await, Ok(Ok(n)) if n > 0)
}

impl Server {
    pub fn new(handler: Arc<RequestHandler>) -> Self {
        Self { handler, options: HttpOptions::default(), shutdown_timeout: Duration::from_secs(10), tls: None }
    }

    /// Terminates TLS with `config` (see [`tls::server_config`]): HTTPS only, HTTP/2 by ALPN,
    /// and `Strict-Transport-Security` on every response.
    pub fn tls(mut self, config: Arc<rustls::ServerConfig>) -> Self {
        self.tls = Some(tokio_rustls::TlsAcceptor::from(config));
        self.options.hsts = Some(http::HeaderValue::from_static("max-age=31536000"));
        self
    }

    /// `Cache-Control: max-age` of the agent card (default 300 s).
    pub fn card_max_age(mut self, max_age: Duration) -> Self {
        self.options.card_max_age = max_age;
        self
    }

    /// Serves the card in strict A2A 1.0 form, without the 0.3 fields a declared 0.3 interface
    /// adds by default (for 1.0 clients that refuse unknown fields; old 0.3 clients then cannot
    /// read the card, though 0.3 requests are still answered).
    pub fn strict_v1_card(mut self, strict: bool) -> Self {
        self.options.strict_v1_card = strict;
        self
    }

    /// Lets web pages of `origins` (`https://app.example.com`, or `*` for any) call the agent
    /// across origins (CORS); none: no cross-origin calls (the default). An origin that is not
    /// `scheme://host[:port]` as a browser sends it is refused.
    pub fn cors_origins<S: AsRef<str>>(self, origins: &[S]) -> crate::error::Result<Self> {
        Ok(self.cors(cors::Cors::new(origins)?))
    }

    /// [`Server::cors_origins`], checked already.
    pub fn cors(mut self, cors: Option<cors::Cors>) -> Self {
        self.options.cors = cors;
        self
    }

    /// Period of `: keep-alive` comments on idle SSE streams (default 15 s; `None` = off).
    pub fn sse_keep_alive(mut self, period: Option<Duration>) -> Self {
        self.options.sse_keep_alive = period;
        self
    }

    /// How long graceful shutdown waits for open requests and streams (default 10 s) before
    /// closing the remaining connections.
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// The metrics this server records (serve them with [`serve_metrics`]).
    pub fn metrics(&self) -> Arc<crate::metrics::Metrics> {
        self.handler.metrics().clone()
    }

    /// The hyper service alone, to mount in another server.
    pub fn service(&self) -> A2AService {
        A2AService::new(self.handler.clone(), self.options.clone())
    }

    /// Binds `addr` (port 0 picks a free port; see [`BoundServer::local_addr`]).
    pub async fn bind(self, addr: impl ToSocketAddrs) -> io::Result<BoundServer> {
        let listener = TcpListener::bind(addr).await?;
        Ok(BoundServer { server: self, listener })
    }

    /// Serves until `shutdown` completes, then shuts down gracefully: stops accepting, asks
    /// every connection to finish (HTTP/1 keep-alive ends, HTTP/2 sends GOAWAY), lets the
    /// handler end its streams ([`RequestHandler::shutdown`]), ends any SSE body still open,
    /// and waits for in-flight connections up to [`Server::shutdown_timeout`], after which
    /// the rest are dropped.
    pub async fn serve(self, listener: TcpListener, shutdown: impl Future<Output = ()>) -> io::Result<()> {
        let streams_done = CancellationToken::new();
        let options = HttpOptions { check_framing: true, ..self.options.clone() };
        let service = A2AService::with_shutdown(self.handler.clone(), options, streams_done.clone());
        let mut builder = auto::Builder::new(TokioExecutor::new());
        let max_header_bytes = self.handler.limits().max_header_bytes.max(MIN_HEADER_BYTES);
        // The HTTP/1 read buffer holds the request head (431 beyond it); bodies stream through it.
        // hyper's header timeout closes without an answer: `connection` times heads instead (408).
        builder.http1().timer(TokioTimer::new()).header_read_timeout(None).max_buf_size(max_header_bytes);
        builder
            .http2()
            .timer(TokioTimer::new())
            .max_header_list_size(u32::try_from(max_header_bytes).unwrap_or(u32::MAX))
            .max_concurrent_streams(self.handler.limits().max_streams_per_connection.max(1));
        // Cancelled at shutdown: every connection is asked to finish.
        let closing = CancellationToken::new();
        let idle = self.handler.limits().idle_timeout;
        let header_read_timeout = self.handler.limits().header_read_timeout;
        let mut connections = JoinSet::new();
        // Before the first request: what a previous run left active is ended, not resumed.
        self.handler.recover_interrupted().await;
        if let Ok(addr) = listener.local_addr() {
            tracing::info!(%addr, "A2A server listening");
        }
        if self.handler.skills_unreachable() {
            tracing::warn!(
                "every skill of the card declares securityRequirements but no authentication is configured: \
                 every message will be refused (401)"
            );
        }
        let metrics = self.handler.metrics().clone();
        let max_connections = self.handler.limits().max_connections.clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
        let slots = Arc::new(tokio::sync::Semaphore::new(max_connections));
        // When each kind of warning was last logged: at most one every 10 s while it lasts.
        let (mut cap_logged, mut accept_logged) = (None, None);
        let due = |at: &mut Option<tokio::time::Instant>| -> bool {
            let due = at.is_none_or(|at| at.elapsed() >= Duration::from_secs(10));
            if due {
                *at = Some(tokio::time::Instant::now());
            }
            due
        };
        tokio::pin!(shutdown);
        loop {
            // At the connection cap, stop accepting until one closes: new clients wait in the
            // listen backlog rather than each costing buffers and a descriptor.
            let slot = match slots.clone().try_acquire_owned() {
                Ok(slot) => slot,
                Err(_) => {
                    if due(&mut cap_logged) {
                        tracing::warn!(
                            max_connections,
                            "connection limit reached: new connections wait until one closes"
                        );
                    }
                    tokio::select! {
                        slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
                        () = &mut shutdown => break,
                    }
                }
            };
            tokio::select! {
                accepted = listener.accept() => {
                    let (stream, peer) = match accepted {
                        Ok(pair) => pair,
                        Err(e) => {
                            // Usually out of file descriptors: back off instead of spinning.
                            if due(&mut accept_logged) {
                                tracing::warn!("accept failed: {e}");
                            }
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    };
                    // A2A messages are small request/response pairs and SSE events: no Nagle delay.
                    let _ = stream.set_nodelay(true);
                    let (builder, service, closing) = (builder.clone(), service.for_peer(budget::client_of(peer.ip())), closing.clone());
                    let tls = self.tls.clone();
                    let open = metrics.open_connection();
                    connections.spawn(async move {
                        let _held = (slot, open);
                        let served = match tls {
                            None => {
                                // hyper's header timeout starts at the first byte: a connection
                                // that never sends one would hold its descriptor for ever (and
                                // one that has sent nothing when the server stops is closed).
                                let spoke = tokio::select! {
                                    spoke = first_byte(&stream, header_read_timeout) => spoke,
                                    () = closing.cancelled() => false,
                                };
                                if !spoke {
                                    return tracing::debug!(%peer, "closed: nothing sent within the header read timeout");
                                }
                                connection::serve(&builder, TokioIo::new(stream), service, idle, header_read_timeout, closing).await
                            }
                            Some(acceptor) => {
                                // A client that never finishes the handshake must not hold a slot.
                                let handshake = tokio::time::timeout(header_read_timeout, acceptor.accept(stream));
                                let stream = tokio::select! {
                                    done = handshake => match done {
                                        Ok(Ok(stream)) => stream,
                                        Ok(Err(e)) => return tracing::debug!(%peer, "TLS handshake failed: {e}"),
                                        Err(_) => return tracing::debug!(%peer, "TLS handshake timed out"),
                                    },
                                    () = closing.cancelled() => return,
                                };
                                let service = tls::with_peer_certificate(service, stream.get_ref().1);
                                connection::serve(&builder, TokioIo::new(stream), service, idle, header_read_timeout, closing).await
                            }
                        };
                        if let Err(e) = served {
                            tracing::debug!(%peer, "connection ended with an error: {e}");
                        }
                    });
                    // Reap finished connection tasks so the set does not grow.
                    while connections.try_join_next().is_some() {}
                }
                () = &mut shutdown => break,
            }
        }
        drop(listener);
        // Connections that ended since the last accept are still in the set until reaped.
        while connections.try_join_next().is_some() {}
        tracing::info!(open_connections = connections.len(), "shutting down");
        closing.cancel();
        let deadline = tokio::time::Instant::now() + self.shutdown_timeout;
        let handler = self.handler.clone();
        let end_streams = async {
            handler.shutdown().await;
            // Backstop: whatever SSE body is still open ends now.
            streams_done.cancel();
        };
        let drained = async {
            tokio::join!(end_streams, async { while connections.join_next().await.is_some() {} });
        };
        if tokio::time::timeout_at(deadline, drained).await.is_err() {
            streams_done.cancel();
            tracing::warn!(
                remaining = connections.len(),
                "shutdown deadline passed; closing the remaining connections"
            );
            connections.abort_all();
        }
        while connections.join_next().await.is_some() {}
        Ok(())
    }
}

/// A [`Server`] with its listener bound.
pub struct BoundServer {
    server: Server,
    listener: TcpListener,
}

impl BoundServer {
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// [`Server::serve`] on the bound listener.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) -> io::Result<()> {
        self.server.serve(self.listener, shutdown).await
    }
}
