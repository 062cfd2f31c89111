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
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
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
    S::Future: Unpin + Send + 'static,
    S::Error: Into<BoxError>,
    B: Body + Unpin + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let activity = Arc::new(Activity::new());
    let service = Counted { inner: service, activity: activity.clone() };
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    tokio::select! {
        served = conn.as_mut() => return served,
        () = closing.cancelled() => {}
        () = activity.idle_for(idle) => tracing::debug!("closing a connection idle for {} s", idle.as_secs_f64()),
    }
    conn.as_mut().graceful_shutdown();
    // HTTP/2's graceful close waits for the client to answer a PING after the GOAWAY: a client
    // that never does (or keeps nothing in flight) is dropped once idle for as long again.
    tokio::select! {
        served = conn => served,
        () = activity.idle_for(idle) => Ok(()),
    }
}

/// What one connection has in flight (the low 32 bits) and how many requests it has begun
/// (the high 32, wrapping): one atomic add per request and one per answer, no clock, no
/// wake-up. The watchdog looks every `idle`: two looks that find nothing in flight and no
/// request begun in between close the connection, between `idle` and twice that after its
/// last request ended.
struct Activity(AtomicU64);

const BEGUN: u64 = 1 << 32;
const IN_FLIGHT: u64 = BEGUN - 1;

impl Activity {
    fn new() -> Self {
        Self(AtomicU64::new(0))
    }

    /// Completes once nothing has been in flight for at least `idle`.
    async fn idle_for(&self, idle: Duration) {
        let mut last = self.0.load(Ordering::Acquire);
        loop {
            tokio::time::sleep(idle).await;
            let now = self.0.load(Ordering::Acquire);
            if now == last && now & IN_FLIGHT == 0 {
                return;
            }
            last = now;
        }
    }
}

/// Counts the requests in flight on one connection: from the call until the response body
/// ends or is dropped (a stream is in flight while it is open).
struct Counted<S> {
    inner: S,
    activity: Arc<Activity>,
}

/// One request in flight; counted down when dropped.
struct Busy(Arc<Activity>);

impl Busy {
    fn new(activity: &Arc<Activity>) -> Self {
        activity.0.fetch_add(BEGUN + 1, Ordering::AcqRel);
        Self(activity.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl<S, R, B> hyper::service::Service<R> for Counted<S>
where
    S: hyper::service::Service<R, Response = Response<B>>,
    S::Future: Unpin,
{
    type Response = Response<Held<B>>;
    type Error = S::Error;
    type Future = CountedCall<S::Future>;

    fn call(&self, req: R) -> Self::Future {
        CountedCall { busy: Some(Busy::new(&self.activity)), answer: self.inner.call(req) }
    }
}

/// A call in flight; its response body takes over the count.
pub(crate) struct CountedCall<F> {
    busy: Option<Busy>,
    answer: F,
}

impl<F, B, E> Future for CountedCall<F>
where
    F: Future<Output = Result<Response<B>, E>> + Unpin,
{
    type Output = Result<Response<Held<B>>, E>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let response = std::task::ready!(Pin::new(&mut this.answer).poll(cx))?;
        let busy = this.busy.take().expect("a call is answered once");
        Poll::Ready(Ok(response.map(|body| Held { body, _busy: busy })))
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
