//! One client connection: served by hyper until it ends, the server closes it (graceful
//! shutdown), or it has stayed quiet for `limits.idleTimeout`:
//! - idle: no request in flight (an open stream counts as one until its body ends), none
//!   begun, and (HTTP/1) no byte written (hyper may still be writing out an answer whose body
//!   it has finished reading). Without that bound, an HTTP/2 client that sent its preface, a
//!   TLS client that finished its handshake, or an HTTP/1 keep-alive client would hold a
//!   descriptor for as long as it liked while asking nothing. Closed gracefully (HTTP/2: GOAWAY);
//! - stalled: a write to the socket has waited that long for the client to read, or a
//!   response body is owed by hyper (its head is out and it was never polled, or it gave a
//!   frame and has been neither asked for more nor dropped since), with no body on
//!   the connection asked for anything and (HTTP/1) no byte written meanwhile (HTTP/2: the
//!   client keeps its flow-control windows shut; a client that reads slowly still asks for
//!   frames). A client that stops reading a stream or a large answer would otherwise hold the
//!   connection, its streams' slots and what is buffered for it for ever. Dropped at once:
//!   nothing more can be sent on it.
//!
//! On HTTP/1 a request head must also arrive within the header read timeout once it has begun
//! (the wait for a connection's first byte is the listener's): else the client gets 408 and
//! the connection closes. hyper's own header timeout closes without a word, and a client
//! then cannot tell a timeout from a crash.
//!
//! The same bound ends a graceful close that the client does not help finish. A client that
//! reads one stream of a connection while it starves another keeps the connection; the starved
//! stream is held until the connection ends (its answer counts against the server's budget of
//! bodies in flight). PINGs and other control frames keep nothing: on HTTP/2 only requests and
//! the answers' progress count (see [`Activity::quiet_for`]).

use http::{Request, Response};
use hyper::body::Incoming;
use hyper::body::{Body, Frame, SizeHint};
use hyper_util::rt::TokioExecutor;
use hyper_util::server::conn::auto;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How long an idle connection asked to close (HTTP/2: GOAWAY) may take to do so.
const IDLE_CLOSE: Duration = Duration::from_secs(5);

/// Serves `io` with `service` until the connection ends. When `closing` is cancelled, or the
/// connection was idle for `quiet`, it is asked to finish: HTTP/1 closes once no request is
/// in flight, HTTP/2 sends GOAWAY and ends when its open streams have. A connection that
/// stalled for `quiet` is dropped; an HTTP/1 request head that takes longer than `head` to
/// arrive is answered 408 and the connection closed.
pub(crate) async fn serve<I, S, B>(
    builder: &auto::Builder<TokioExecutor>,
    io: I,
    service: S,
    quiet: Duration,
    head: Duration,
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
    let activity = Arc::new(Activity::default());
    let service = Counted { inner: service, activity: activity.clone() };
    let io = Watched { io, activity: activity.clone(), preface: 0 };
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    // How long the graceful close may take once asked for.
    let mut finish = quiet;
    tokio::select! {
        served = conn.as_mut() => return served,
        () = closing.cancelled() => {}
        () = activity.slow_head(head) => {
            tracing::debug!("answering 408: a request head took longer than {} s", head.as_secs_f64());
            // hyper reads as soon as it is polled; that read writes the 408 and fails.
            activity.head_expired.store(true, Ordering::Release);
            return tokio::time::timeout(Duration::from_secs(1), conn).await.unwrap_or(Ok(()));
        }
        how = activity.quiet_for(quiet) => {
            tracing::debug!("closing a connection {how:?} for {} s", quiet.as_secs_f64());
            if how == Quiet::Stalled {
                return Ok(());
            }
            // Idle: nothing is in flight to finish. A client that sends nothing more after the
            // GOAWAY held its connection slot (`maxConnections`) for another whole idle timeout.
            finish = quiet.min(IDLE_CLOSE);
        }
    }
    conn.as_mut().graceful_shutdown();
    // HTTP/2's graceful close waits for the client to answer a PING after the GOAWAY: a client
    // that never does (or keeps nothing in flight) is dropped once quiet for `finish`.
    tokio::select! {
        served = conn => served,
        _ = activity.quiet_for(finish) => Ok(()),
    }
}

/// How a connection went quiet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quiet {
    Idle,
    Stalled,
}

/// What one connection is doing, in a few atomics touched once per request, answer, body
/// poll or socket write (no clock, no wake-up): the watchdog looks every period and compares.
#[derive(Default)]
struct Activity {
    /// Requests in flight (the low 32 bits) and requests begun (the high 32, wrapping).
    requests: AtomicU64,
    /// Whether the last socket write found the client's buffer full.
    blocked: AtomicBool,
    /// How many times a blocked write went through.
    unblocked: AtomicU64,
    /// Response bodies hyper owes a poll or their end: not yet polled since their head went
    /// out, or their last poll gave a frame (hyper asks for more, or drops a finished body, as
    /// soon as it has sent what it has).
    owed: AtomicU64,
    /// How many times hyper polled a response body of this connection.
    body_polls: AtomicU64,
    /// How many socket writes moved bytes.
    written: AtomicU64,
    /// 0 (not known yet), [`HTTP1`] or [`HTTP2`]: read from the first bytes (HTTP/2's preface).
    protocol: AtomicU8,
    /// Bytes other than blank lines came while no request was in flight: a request head began
    /// arriving when this many requests had begun (plus one; 0 = none yet).
    head: AtomicU64,
    /// The head took too long: the next read answers 408 and fails.
    head_expired: AtomicBool,
}

/// What the watchdog saw at one look.
struct Look {
    requests: u64,
    blocked: bool,
    unblocked: u64,
    owed: bool,
    body_polls: u64,
    written: u64,
}

const BEGUN: u64 = 1 << 32;
const IN_FLIGHT: u64 = BEGUN - 1;

/// [`Activity::protocol`]: not known yet (0), HTTP/1 or HTTP/2.
const HTTP1: u8 = 1;
const HTTP2: u8 = 2;

impl Activity {
    /// Completes once the connection has been idle or stalled for at least `period` (at most a
    /// quarter more: it looks every quarter, and each of four looks in a row must agree).
    ///
    /// On HTTP/2 the socket's writes do not count as activity: the server writes there of its
    /// own accord (PING and SETTINGS acknowledgements), so a client that pings every second
    /// would otherwise hold its connection, its slot and what it never reads for ever. Progress
    /// there is seen in the body polls instead: answers go out in frames of at most
    /// `body::MAX_FRAME`, and hyper asks for the next one only once the client's window took the last.
    async fn quiet_for(&self, period: Duration) -> Quiet {
        let look = || Look {
            requests: self.requests.load(Ordering::Acquire),
            blocked: self.blocked.load(Ordering::Acquire),
            unblocked: self.unblocked.load(Ordering::Acquire),
            owed: self.owed.load(Ordering::Acquire) > 0,
            body_polls: self.body_polls.load(Ordering::Acquire),
            written: self.written.load(Ordering::Acquire),
        };
        let mut last = look();
        let (mut stalled, mut idle) = (0, 0);
        loop {
            tokio::time::sleep(period / 4).await;
            let now = look();
            let wrote = now.written != last.written && self.protocol.load(Ordering::Acquire) != HTTP2;
            let write_stalled = now.blocked && last.blocked && now.unblocked == last.unblocked;
            // Owed and never asked again, with nothing written meanwhile (HTTP/1: a client
            // draining its write buffer slowly makes writes, and is kept).
            let body_starved = now.owed && last.owed && now.body_polls == last.body_polls && !wrote;
            stalled = if write_stalled || body_starved { stalled + 1 } else { 0 };
            idle = if now.requests == last.requests && now.requests & IN_FLIGHT == 0 && !wrote { idle + 1 } else { 0 };
            if stalled == 4 {
                return Quiet::Stalled;
            }
            if idle == 4 {
                return Quiet::Idle;
            }
            last = now;
        }
    }

    /// Completes once a request head (on HTTP/1, or before the protocol is known) has been
    /// arriving for at least `timeout` (at most a quarter more: it looks every quarter).
    async fn slow_head(&self, timeout: Duration) {
        let (mut pending, mut looks) = (0, 0);
        loop {
            tokio::time::sleep(timeout / 4).await;
            let protocol = self.protocol.load(Ordering::Acquire);
            if protocol == HTTP2 {
                // HTTP/2 has no request heads to time (hyper bounds its frames): stop looking.
                return std::future::pending().await;
            }
            let head = self.head.load(Ordering::Acquire);
            let begun = self.requests.load(Ordering::Acquire) >> 32;
            // No request has begun since the head started to come (or, protocol not known
            // yet, since the first bytes of what may be either).
            let waiting = head != 0 && head - 1 == begun;
            if waiting && head == pending {
                looks += 1;
                if looks == 4 {
                    return;
                }
            } else {
                (pending, looks) = (if waiting { head } else { 0 }, 0);
            }
        }
    }

    /// Whether no request is in flight: what is read now is the next request's head.
    fn between_requests(&self) -> bool {
        self.requests.load(Ordering::Acquire) & IN_FLIGHT == 0
    }

    /// Notes that `bytes`, read between requests, begin a request head unless they are blank
    /// lines (RFC 9112 §2.2: a server ignores empty lines before a request line, and some
    /// clients send one after a body).
    fn read_between_requests(&self, bytes: &[u8]) {
        if bytes.iter().any(|b| !matches!(b, b'\r' | b'\n')) {
            let begun = self.requests.load(Ordering::Acquire) >> 32;
            self.head.store(begun + 1, Ordering::Release);
        }
    }

    /// Notes a socket write (or flush: `moved` is `None`): whether it found the client's
    /// buffer full, and whether it moved bytes.
    fn wrote<T>(&self, poll: &Poll<T>, moved: Option<usize>) {
        if poll.is_pending() {
            self.blocked.store(true, Ordering::Release);
            return;
        }
        if self.blocked.load(Ordering::Relaxed) {
            self.blocked.store(false, Ordering::Release);
            self.unblocked.fetch_add(1, Ordering::AcqRel);
        }
        if moved.is_some_and(|n| n > 0) {
            self.written.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// How many bytes a write moved (`None` when it did not complete).
fn moved(poll: &Poll<std::io::Result<usize>>) -> Option<usize> {
    match poll {
        Poll::Ready(Ok(n)) => Some(*n),
        _ => None,
    }
}

/// The connection's socket, with its reads and writes noted in its [`Activity`].
struct Watched<I> {
    io: I,
    activity: Arc<Activity>,
    /// How many bytes of HTTP/2's preface the first bytes matched; [`DECIDED`] once the
    /// protocol is known.
    preface: usize,
}

/// What every HTTP/2 connection starts with (RFC 9113 §3.4); anything else is HTTP/1.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const DECIDED: usize = usize::MAX;
/// At most this much of a request head is read through our own buffer (to look at it).
const HEAD_READ: usize = 4096;

impl<I: hyper::rt::Read + hyper::rt::Write + Unpin> Watched<I> {
    /// Reads into `buf` through a buffer of ours of at most `N` bytes, to look at what came.
    fn poll_read_seen<const N: usize>(
        &mut self,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
        seen: impl FnOnce(&mut Self, &[u8]),
    ) -> Poll<std::io::Result<()>> {
        // Left uninitialised (hyper's ReadBuf tracks what was filled): zeroing 4 KiB at every
        // read between requests cost 3% of a whole request.
        let mut ours = [const { std::mem::MaybeUninit::<u8>::uninit() }; N];
        let wanted = N.min(buf.remaining());
        if wanted == 0 {
            return Pin::new(&mut self.io).poll_read(cx, buf);
        }
        let mut read = hyper::rt::ReadBuf::uninit(&mut ours[..wanted]);
        std::task::ready!(Pin::new(&mut self.io).poll_read(cx, read.unfilled()))?;
        let got = read.filled();
        buf.put_slice(got);
        seen(self, got);
        Poll::Ready(Ok(()))
    }

    /// Notes the first bytes: the protocol, once they match HTTP/2's preface or stop matching it.
    fn first_bytes(&mut self, got: &[u8]) {
        if got.is_empty() {
            return;
        }
        let rest = &PREFACE[self.preface..];
        // Timed from the first byte: a client that stops inside the preface is timed too.
        self.activity.read_between_requests(got);
        if rest.starts_with(got) {
            self.preface += got.len();
            if self.preface == PREFACE.len() {
                self.preface = DECIDED;
                self.activity.protocol.store(HTTP2, Ordering::Release);
            }
        } else {
            self.preface = DECIDED;
            self.activity.protocol.store(HTTP1, Ordering::Release);
        }
    }

    /// The 408 of a request head that took too long, then the connection's end: written only
    /// when hyper has nothing unsent (else it would cut into an answer), and followed by a FIN.
    fn answer_408(&mut self, cx: &mut Context<'_>) -> std::io::Error {
        if !self.activity.blocked.load(Ordering::Acquire) {
            let date = chrono::Utc::now().format("%a, %d %b %Y %H:%M:%S GMT");
            let answer = format!(
                "HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\ndate: {date}\r\n\r\n"
            );
            if let Poll::Ready(Ok(_)) = Pin::new(&mut self.io).poll_write(cx, answer.as_bytes()) {
                let _ = Pin::new(&mut self.io).poll_flush(cx);
                let _ = Pin::new(&mut self.io).poll_shutdown(cx);
            }
        }
        std::io::Error::new(std::io::ErrorKind::TimedOut, "the request head did not arrive in time")
    }
}

impl<I: hyper::rt::Read + hyper::rt::Write + Unpin> hyper::rt::Read for Watched<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        // Set only by `slow_head`, which never fires on HTTP/2.
        if this.activity.head_expired.load(Ordering::Acquire) {
            return Poll::Ready(Err(this.answer_408(cx)));
        }
        if this.preface != DECIDED {
            return this.poll_read_seen::<{ PREFACE.len() }>(cx, buf, Self::first_bytes);
        }
        if this.activity.protocol.load(Ordering::Relaxed) != HTTP1 {
            return Pin::new(&mut this.io).poll_read(cx, buf);
        }
        if this.activity.between_requests() {
            return this.poll_read_seen::<HEAD_READ>(cx, buf, |this, got| this.activity.read_between_requests(got));
        }
        Pin::new(&mut this.io).poll_read(cx, buf)
    }
}

impl<I: hyper::rt::Write + Unpin> hyper::rt::Write for Watched<I> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let poll = Pin::new(&mut self.io).poll_write(cx, buf);
        self.activity.wrote(&poll, moved(&poll));
        poll
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let poll = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.activity.wrote(&poll, moved(&poll));
        poll
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let poll = Pin::new(&mut self.io).poll_flush(cx);
        self.activity.wrote(&poll, None);
        poll
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
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
        activity.requests.fetch_add(BEGUN + 1, Ordering::AcqRel);
        Self(activity.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.requests.fetch_sub(1, Ordering::AcqRel);
    }
}

impl<S, R, B: Body> hyper::service::Service<R> for Counted<S>
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

impl<F, B: Body, E> Future for CountedCall<F>
where
    F: Future<Output = Result<Response<B>, E>> + Unpin,
{
    type Output = Result<Response<Held<B>>, E>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let response = std::task::ready!(Pin::new(&mut this.answer).poll(cx))?;
        let busy = this.busy.take().expect("a call is answered once");
        Poll::Ready(Ok(response.map(|body| {
            let mut held = Held { body, busy, owed: false };
            // Once the head is out, hyper owes a body with anything in it its first poll.
            held.set_owed(!held.body.is_end_stream());
            held
        })))
    }
}

/// A response body that keeps its request counted as in flight until it ends, and notes
/// whether hyper owes it a poll, or its end.
pub(crate) struct Held<B> {
    body: B,
    busy: Busy,
    owed: bool,
}

impl<B> Held<B> {
    fn set_owed(&mut self, owed: bool) {
        if owed != self.owed {
            self.owed = owed;
            let counter = &self.busy.0.owed;
            if owed {
                counter.fetch_add(1, Ordering::AcqRel);
            } else {
                counter.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }
}

impl<B> Drop for Held<B> {
    fn drop(&mut self) {
        self.set_owed(false);
    }
}

impl<B: Body + Unpin> Body for Held<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        self.busy.0.body_polls.fetch_add(1, Ordering::Relaxed);
        let poll = Pin::new(&mut self.body).poll_frame(cx);
        // A frame given: hyper asks for the next one, or drops the body, once it has sent this.
        // Over HTTP/2 it holds the frame until the client's window has room, so a window that
        // stays shut (even the last frame's: a whole answer held in memory) leaves this owed.
        let owed = matches!(&poll, Poll::Ready(Some(Ok(_))));
        self.set_owed(owed);
        poll
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
