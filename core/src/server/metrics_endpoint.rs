//! `GET /metrics` on a listener of its own: the server's [`Metrics`] as OpenMetrics text, for
//! Prometheus to scrape. It is kept off the agent's port so that it is never public by
//! accident: bind it to loopback or an internal interface.

use crate::error::{A2AError, ErrorKind, Result};
use crate::metrics::{CONTENT_TYPE, Metrics};
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// The path served.
pub const METRICS_PATH: &str = "/metrics";

/// Binds `addr` (`host:port`; port 0: any) and serves `metrics` there in the background until
/// `shutdown` completes; the bound address. `a2a serve --metrics` and every binding's
/// `metricsAddress` start the endpoint this way.
pub async fn start_metrics(
    addr: &str,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<SocketAddr> {
    let cannot =
        |e: std::io::Error| A2AError::new(ErrorKind::Transport, format!("cannot serve metrics on {addr}: {e}"));
    let listener = TcpListener::bind(addr).await.map_err(cannot)?;
    let bound = listener.local_addr().map_err(cannot)?;
    tokio::spawn(serve_metrics(listener, metrics, shutdown));
    Ok(bound)
}

/// Connections served at once: scrapers are few. Past it a new connection is closed at once,
/// so a peer that opens thousands and sends nothing holds no more than this many descriptors
/// (the agent's listener shares the process's).
const MAX_CONNECTIONS: usize = 32;

/// How long one connection is kept at most, however it is used: a scrape takes milliseconds,
/// and a scraper that keeps its connection between scrapes opens another.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(60);

/// How long a request's head may take to arrive.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a connection may stay silent before its first byte (the head's time; short in
/// this module's tests, which wait it out).
#[cfg(not(test))]
const FIRST_BYTE_TIMEOUT: Duration = HEADER_READ_TIMEOUT;
#[cfg(test)]
const FIRST_BYTE_TIMEOUT: Duration = Duration::from_millis(300);

/// Serves `GET /metrics` until `shutdown` completes. Every connection is served in its own
/// task; a scrape is one small response, so nothing waits for open connections at shutdown.
pub async fn serve_metrics(listener: TcpListener, metrics: Arc<Metrics>, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of descriptors and the like: pause instead of spinning.
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let metrics = metrics.clone();
        tokio::spawn(async move {
            // The connection's first byte within the head's time: until it comes the builder
            // cannot tell HTTP/1 from HTTP/2, and no head timeout applies yet, so 32 peers
            // that connected and said nothing held every slot (and every scrape failed) for a
            // connection's whole lifetime.
            // (`peek`, not `readable`, which may answer before any byte came.)
            let mut first = [0u8; 1];
            if !matches!(tokio::time::timeout(FIRST_BYTE_TIMEOUT, stream.peek(&mut first)).await, Ok(Ok(1))) {
                return;
            }
            let service = hyper::service::service_fn(move |req| {
                let metrics = metrics.clone();
                async move { Ok::<_, Infallible>(answer(&req, &metrics)) }
            });
            // HTTP/1 only (what scrapers speak): an HTTP/2 preface begun and never finished
            // would wait with no head timeout.
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            let _ = tokio::time::timeout(CONNECTION_LIFETIME, connection).await;
            drop(slot);
        });
    }
}

fn answer(req: &Request<Incoming>, metrics: &Metrics) -> Response<Full<Bytes>> {
    let reply = |status: StatusCode, text: String| {
        let mut resp = Response::new(Full::new(Bytes::from(text)));
        *resp.status_mut() = status;
        resp
    };
    if req.uri().path() != METRICS_PATH {
        return reply(StatusCode::NOT_FOUND, format!("not found; metrics are at {METRICS_PATH}\n"));
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut resp = reply(StatusCode::METHOD_NOT_ALLOWED, "GET only\n".into());
        resp.headers_mut().insert(header::ALLOW, header::HeaderValue::from_static("GET, HEAD"));
        return resp;
    }
    let mut resp = reply(StatusCode::OK, metrics.encode());
    resp.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static(CONTENT_TYPE));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    /// Peers that connect and say nothing are let go after the head's time: 32 of them held
    /// all 32 slots, and every scrape failed, for a connection's whole lifetime (60 s).
    #[tokio::test]
    async fn silent_connections_do_not_hold_the_endpoint() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(serve_metrics(listener, Arc::new(Metrics::new()), std::future::pending()));
        let mut silent = Vec::new();
        for _ in 0..MAX_CONNECTIONS {
            silent.push(TcpStream::connect(addr).await.unwrap());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut refused = TcpStream::connect(addr).await.unwrap();
        let mut byte = [0u8; 1];
        assert!(matches!(refused.read(&mut byte).await, Ok(0) | Err(_)), "past the cap a connection is closed");
        tokio::time::sleep(FIRST_BYTE_TIMEOUT + Duration::from_millis(300)).await;
        let mut scrape = TcpStream::connect(addr).await.unwrap();
        scrape.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
        let mut answer = String::new();
        scrape.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
}
