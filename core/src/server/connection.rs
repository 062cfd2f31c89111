//! One client connection: served by hyper until it ends, the server closes it (graceful
//! shutdown), or it has stayed idle for `limits.idleTimeout`, with no request in flight (an
//! open stream counts as one until its body ends). Without that bound, an HTTP/2 client
//! that sent its preface, a TLS client that finished its handshake, or an HTTP/1 keep-alive
//! client would hold a descriptor for as long as it liked while asking nothing. The same
//! bound ends a graceful close that the client does not help finish.

use http::{Request, Response};
use hyper::body::Incoming;
use hyper::body::{Body, Frame, SizeHint};
use hyper_util::rt::TokioExecutor;
use hyper_util::server::conn::auto;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Serves `io` with `service` until the connection ends. When `closing` is cancelled, or the
/// connection was idle for `idle`, it is asked to finish: HTTP/1 closes once no request is
/// in flight, HTTP/2 sends GOAWAY and ends when its open streams have.
pub(crate) async fn serve<I, S, B>(
    builder: &auto::Builder<TokioExecutor>,
    io: I,
    service: S,
    idle: Duration,
    closing: CancellationToken,
) -> Result<(), BoxError>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::Service<Request<Incoming>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Body + Unpin + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let (in_flight, watch) = watch::channel(0usize);
    let service = Counted { inner: service, in_flight: Arc::new(in_flight) };
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    tokio::select! {
        served = conn.as_mut() => return served,
        () = closing.cancelled() => {}
        () = idle_for(watch.clone(), idle) => tracing::debug!("closing a connection idle for {} s", idle.as_secs_f64()),
    }
    conn.as_mut().graceful_shutdown();
    // HTTP/2's graceful close waits for the client to answer a PING after the GOAWAY: a client
    // that never does (or keeps nothing in flight) is dropped once idle for as long again.
    tokio::select! {
        served = conn => served,
        () = idle_for(watch, idle) => Ok(()),
    }
}

/// Completes once no request has been in flight for `idle` (never, if the service is gone).
async fn idle_for(mut in_flight: watch::Receiver<usize>, idle: Duration) {
    loop {
        if in_flight.wait_for(|n| *n == 0).await.is_err() {
            return std::future::pending().await;
        }
        tokio::select! {
            () = tokio::time::sleep(idle) => {
                if *in_flight.borrow() == 0 {
                    return;
                }
            }
            changed = in_flight.changed() => {
                if changed.is_err() {
                    return std::future::pending().await;
                }
            }
        }
    }
}

/// Counts the requests in flight on one connection: from the call until the response body
/// ends or is dropped (a stream is in flight while it is open).
struct Counted<S> {
    inner: S,
    in_flight: Arc<watch::Sender<usize>>,
}

/// One request in flight; counted down when dropped.
struct Busy(Arc<watch::Sender<usize>>);

impl Busy {
    fn new(in_flight: &Arc<watch::Sender<usize>>) -> Self {
        in_flight.send_modify(|n| *n += 1);
        Self(in_flight.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

impl<S, R, B> hyper::service::Service<R> for Counted<S>
where
    S: hyper::service::Service<R, Response = Response<B>>,
    S::Future: Send + 'static,
{
    type Response = Response<Held<B>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn call(&self, req: R) -> Self::Future {
        let busy = Busy::new(&self.in_flight);
        let answer = self.inner.call(req);
        Box::pin(async move { Ok(answer.await?.map(|body| Held { body, _busy: busy })) })
    }
}

/// A response body that keeps its request counted as in flight until it ends.
pub(crate) struct Held<B> {
    body: B,
    _busy: Busy,
}

impl<B: Body + Unpin> Body for Held<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
