//! The response body of every A2A HTTP response: a whole buffer, or a Server-Sent Events
//! stream fed by an [`EventStream`].
//!
//! The SSE body frames each [`StreamResponse`] for its binding (a JSON-RPC response with the
//! request id, 1.0 or 0.3 form; or the bare StreamResponse for HTTP+JSON), sends a comment
//! every keep-alive period while the stream is idle so proxies do not cut it, and ends when the
//! event stream ends (the task ended), when an event cannot be written (after a final error
//! event), or when the server's shutdown token fires (after an UnavailableError event: the task
//! is not over; a backstop, as the request handler ends its streams that way first). Dropping
//! the body (client gone) drops the subscription, which never cancels the task.

use super::budget::{BodyBudget, BodyShare};
use crate::error::A2AError;
use crate::jsonrpc::{self, Id};
use crate::model::v03;
use crate::sse::{self, SseEvent};
use crate::task::call::{EventStream, StreamItem};
use bytes::Bytes;
use futures_core::Stream;
use hyper::body::{Body, Frame, SizeHint};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Interval, MissedTickBehavior};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// A response body: buffered bytes or an SSE stream. Its error type is `Infallible`: a failure
/// while streaming is written into the stream as an error event, never a broken body.
pub struct ResponseBody {
    kind: Kind,
}

/// A buffered answer's bytes with their share of the budget of unsent answers
/// ([`ResponseBody::hold`]). Every frame cut from them keeps the share held until the last one
/// is dropped: h2 may still hold frames (and so the whole buffer) after the body has ended.
struct Covered {
    bytes: Bytes,
    _share: BodyShare,
}

impl AsRef<[u8]> for Covered {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

/// `bytes` holding their size of `budget` until the last frame cut from them is dropped; given
/// back as they were when the budget cannot cover them now.
fn cover(budget: &BodyBudget, bytes: Bytes) -> Result<Bytes, Bytes> {
    let mut share = BodyShare::default();
    match budget.cover_answer(&mut share, bytes.len()) {
        Ok(()) => Ok(Bytes::from_owner(Covered { bytes, _share: share })),
        Err(_) => Err(bytes),
    }
}

/// A stream's hold on the budget of unsent answers: each event holds its size until it has
/// left, so streams a client opens and never reads (h2 lets it open hundreds, each starting
/// with a snapshot of the task) cannot fill memory. An event the budget cannot cover ends the
/// stream with Unavailable (the client may subscribe again), except the first of a write's
/// stream (SendStreamingMessage), which answers what was done and goes out uncovered, as a
/// unary write's answer does.
struct StreamBudget {
    budget: BodyBudget,
    first_goes_anyway: bool,
    sent: bool,
}

impl StreamBudget {
    /// The event's bytes, covered (or the first of a write's stream); the error that ends the
    /// stream when they cannot go.
    fn cover(&mut self, bytes: Bytes) -> Result<Bytes, A2AError> {
        let first = !std::mem::replace(&mut self.sent, true);
        match cover(&self.budget, bytes) {
            Ok(covered) => Ok(covered),
            Err(bytes) if first && self.first_goes_anyway => Ok(bytes),
            Err(_) => Err(self.budget.answers_spent()),
        }
    }
}

/// Buffered answers go out in frames of at most this size. hyper asks for the next frame only
/// once it has sent the last (HTTP/2: once the client's window took it), so the connection's
/// watchdog sees whether a client reads a large answer, and at most one frame per stream sits
/// in the connection's buffers beyond the budget.
pub(crate) const MAX_FRAME: usize = 16 * 1024;

/// The next frame of `bytes`, leaving the rest.
fn next_frame(bytes: &mut Option<Bytes>) -> Option<Bytes> {
    match bytes {
        Some(b) if b.len() > MAX_FRAME => Some(b.split_to(MAX_FRAME)),
        _ => bytes.take(),
    }
}

enum Kind {
    Full(Option<Bytes>),
    Sse(Box<SseBody>),
    Grpc(Box<GrpcBody>),
    /// Framed gRPC messages made elsewhere (the health service's `Watch`), then OK.
    GrpcMessages(Option<tokio::sync::mpsc::Receiver<Bytes>>),
}

impl ResponseBody {
    pub fn empty() -> Self {
        Self { kind: Kind::Full(None) }
    }

    pub fn full(bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        Self { kind: Kind::Full((!bytes.is_empty()).then_some(bytes)) }
    }

    /// Takes the buffered answer's size from `budget` until its last byte has left (or its
    /// connection is gone); Unavailable when the budget cannot cover it now, and the answer is
    /// left as it was. A stream takes each event's size as it writes it (see [`StreamBudget`]);
    /// `read` (asked only of a stream): the call changes nothing, so even its first event may
    /// be refused.
    pub(crate) fn hold(&mut self, budget: &BodyBudget, read: impl FnOnce() -> bool) -> Result<(), A2AError> {
        let stream = || Some(StreamBudget { budget: budget.clone(), first_goes_anyway: !read(), sent: false });
        let bytes = match &mut self.kind {
            Kind::Full(bytes) => bytes,
            Kind::Grpc(body) if body.events.is_none() => &mut body.message,
            Kind::Grpc(body) => {
                body.budget = stream();
                return Ok(());
            }
            Kind::Sse(body) => {
                body.budget = stream();
                return Ok(());
            }
            // A few bytes each, a message a second at most.
            Kind::GrpcMessages(_) => return Ok(()),
        };
        let Some(answer) = bytes.take_if(|b| !b.is_empty()) else { return Ok(()) };
        let (answer, covered) = match cover(budget, answer) {
            Ok(covered) => (covered, Ok(())),
            Err(answer) => (answer, Err(budget.answers_spent())),
        };
        *bytes = Some(answer);
        covered
    }

    pub(crate) fn sse(events: EventStream, framing: Framing, options: SseOptions) -> Self {
        let keep_alive = options.keep_alive.filter(|d| !d.is_zero()).map(|period| {
            let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
            interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
            interval
        });
        Self {
            kind: Kind::Sse(Box::new(SseBody {
                events,
                framing,
                keep_alive,
                shutdown: options.shutdown.map(|t| Box::pin(t.cancelled_owned())),
                span: options.span,
                done: false,
                budget: None,
            })),
        }
    }
}

impl ResponseBody {
    /// A unary gRPC answer: one framed message, then the OK status in the trailers.
    pub(crate) fn grpc_unary(message: Bytes) -> Self {
        Self {
            kind: Kind::Grpc(Box::new(GrpcBody {
                message: Some(message),
                events: None,
                trailers: Some(crate::grpc::status::ok_trailers()),
                deadline: None,
                shutdown: None,
                span: tracing::Span::none(),
                budget: None,
            })),
        }
    }

    /// A server-streaming gRPC answer of framed messages as `messages` gives them, ended with
    /// OK when its sender is dropped.
    pub(crate) fn grpc_messages(messages: tokio::sync::mpsc::Receiver<Bytes>) -> Self {
        Self { kind: Kind::GrpcMessages(Some(messages)) }
    }

    /// A server-streaming gRPC answer: one `StreamResponse` message per event, then the status
    /// in the trailers (OK when the stream ended with the task, the error that ended it
    /// otherwise). `deadline`: the call's `grpc-timeout`, after which it ends DEADLINE_EXCEEDED.
    pub(crate) fn grpc_stream(events: EventStream, deadline: Option<Duration>, options: SseOptions) -> Self {
        Self {
            kind: Kind::Grpc(Box::new(GrpcBody {
                message: None,
                events: Some(events),
                trailers: None,
                deadline: deadline.map(|d| Box::pin(tokio::time::sleep(d))),
                shutdown: options.shutdown.map(|t| Box::pin(t.cancelled_owned())),
                span: options.span,
                budget: None,
            })),
        }
    }
}

impl std::fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            Kind::Full(b) => write!(f, "ResponseBody::Full({} bytes)", b.as_ref().map_or(0, Bytes::len)),
            Kind::Sse(_) => f.write_str("ResponseBody::Sse"),
            Kind::Grpc(_) | Kind::GrpcMessages(_) => f.write_str("ResponseBody::Grpc"),
        }
    }
}

/// How SSE events are written.
#[derive(Debug, Clone)]
pub(crate) enum Framing {
    /// `data: {"jsonrpc":"2.0","id":…,"result":<StreamResponse>}`.
    JsonRpc(Id),
    /// `data: {"jsonrpc":"2.0","id":…,"result":<0.3 Task | Message | status-update | artifact-update>}`;
    /// a status update carries `final: true` at terminal states and INPUT_REQUIRED ([`v03::is_final`]).
    JsonRpcV03(Id),
    /// `data: <StreamResponse>` (HTTP+JSON).
    Rest,
}

/// Whether an encoded item ends its stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ends {
    No,
    /// An error event: the call's refusal or failure, for the client.
    Error,
    /// An event this binding cannot write: sent as an error instead (a server fault).
    Unwritable,
}

impl Framing {
    /// The SSE text of one item (with `id:` when the event has a place in the task's log), and
    /// whether it ends the stream.
    fn encode(&self, item: StreamItem) -> (String, Ends) {
        let (id, event) = match item {
            StreamItem::Event { id, event } => (id, event),
            StreamItem::Error(err) => return (sse::encode(&SseEvent::data(self.error_text(&err))), Ends::Error),
        };
        let data = match self {
            // On failure (never for the crate's models): a google.rpc.Status, as an HTTP+JSON
            // error body would be.
            Framing::Rest => serde_json::to_string(&event)
                .map_err(|e| A2AError::internal(format!("cannot serialise the event: {e}")).to_http_body().to_string()),
            Framing::JsonRpc(id) => Ok(utf8(jsonrpc::success(id, &event))),
            Framing::JsonRpcV03(id) => match v03::StreamResult::try_from(event) {
                Ok(result) => Ok(utf8(jsonrpc::success(id, &result))),
                Err(e) => {
                    let err = A2AError::internal(format!("this event has no A2A 0.3 form: {}", e.message));
                    Err(utf8(jsonrpc::error(id, &err)))
                }
            },
        };
        match data {
            Ok(text) => {
                let mut event = SseEvent::data(text);
                event.id = id.map(|id| id.to_string());
                (sse::encode(&event), Ends::No)
            }
            Err(text) => (sse::encode(&SseEvent::data(text)), Ends::Unwritable),
        }
    }

    /// An error event in this binding's form.
    fn error_text(&self, err: &A2AError) -> String {
        match self {
            Framing::Rest => err.to_http_body().to_string(),
            Framing::JsonRpc(id) | Framing::JsonRpcV03(id) => utf8(jsonrpc::error(id, err)),
        }
    }
}

fn utf8(bytes: Vec<u8>) -> String {
    // serde_json writes UTF-8.
    String::from_utf8(bytes).unwrap_or_default()
}

/// Stream settings the transport passes in.
#[derive(Clone)]
pub(crate) struct SseOptions {
    pub keep_alive: Option<Duration>,
    pub shutdown: Option<CancellationToken>,
    /// The request's span, entered while events are written.
    pub span: tracing::Span,
}

struct SseBody {
    events: EventStream,
    framing: Framing,
    keep_alive: Option<Interval>,
    shutdown: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    span: tracing::Span,
    done: bool,
    /// Set by [`ResponseBody::hold`].
    budget: Option<StreamBudget>,
}

impl SseBody {
    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.done {
            return Poll::Ready(None);
        }
        match Pin::new(&mut self.events).poll_next(cx) {
            Poll::Ready(Some(event)) => {
                let _entered = self.span.enter();
                if let StreamItem::Error(e) = &event {
                    tracing::debug!(code = e.code(), error = ?e.message, "stream ended by an error event");
                }
                let (text, ends) = self.framing.encode(event);
                match ends {
                    Ends::No => {}
                    Ends::Error => self.done = true,
                    Ends::Unwritable => {
                        tracing::warn!("stream ended by an event that could not be written");
                        self.done = true;
                    }
                }
                if let Some(k) = &mut self.keep_alive {
                    k.reset();
                }
                let mut bytes = Bytes::from(text);
                if let Some(budget) = &mut self.budget {
                    bytes = budget.cover(bytes).unwrap_or_else(|e| {
                        tracing::warn!("stream ended: {}", e.message);
                        self.done = true;
                        Bytes::from(self.framing.encode(StreamItem::Error(e)).0)
                    });
                }
                return Poll::Ready(Some(Ok(Frame::data(bytes))));
            }
            Poll::Ready(None) => {
                self.done = true;
                return Poll::Ready(None);
            }
            Poll::Pending => {}
        }
        if let Some(shutdown) = &mut self.shutdown
            && shutdown.as_mut().poll(cx).is_ready()
        {
            // A backstop (the handler ends its streams first, the same way): not a clean end.
            self.done = true;
            let err = crate::task::manager::server_shutting_down();
            let (text, _) = self.framing.encode(StreamItem::Error(err));
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from(text)))));
        }
        if let Some(k) = &mut self.keep_alive
            && k.poll_tick(cx).is_ready()
        {
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b": keep-alive\n\n")))));
        }
        Poll::Pending
    }
}

/// A gRPC response body: data frames of framed messages, then one trailers frame with the
/// status. `trailers` is `None` while events may still come, `Some` once the status is known,
/// taken when sent.
struct GrpcBody {
    /// The framed message being sent, or what is left of it (see `next_piece`).
    message: Option<Bytes>,
    events: Option<EventStream>,
    trailers: Option<http::HeaderMap>,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    shutdown: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    span: tracing::Span,
    /// A stream's, set by [`ResponseBody::hold`].
    budget: Option<StreamBudget>,
}

/// h2 writes a DATA frame of 256 bytes or more straight from the `Bytes` it is given (no copy
/// into its buffer), and then must flush it before it queues the next frame: a unary answer of
/// a few hundred bytes took two writes, the second only for the trailers, and the client two
/// reads. A message up to
/// `COALESCE_MAX` goes out as DATA frames under `H2_CHAIN_THRESHOLD`, which h2 copies into its
/// buffer, so the head, the message and the trailers leave in one write. Larger messages go
/// whole: copying them would cost more than the write it saves.
const H2_CHAIN_THRESHOLD: usize = 256;
const COALESCE_MAX: usize = 1024;

impl GrpcBody {
    /// The next DATA frame's bytes of the message being sent, if one is.
    fn next_piece(&mut self) -> Option<Bytes> {
        let len = self.message.as_ref()?.len();
        if !(H2_CHAIN_THRESHOLD..=COALESCE_MAX).contains(&len) {
            return next_frame(&mut self.message);
        }
        self.message.as_mut().map(|m| m.split_to(H2_CHAIN_THRESHOLD - 1))
    }

    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        use crate::grpc::{convert, frame, status};
        if let Some(piece) = self.next_piece() {
            return Poll::Ready(Some(Ok(Frame::data(piece))));
        }
        if let Some(events) = &mut self.events {
            let ended = match Pin::new(events).poll_next(cx) {
                Poll::Ready(Some(StreamItem::Event { event, .. })) => {
                    let encoded = self.span.in_scope(|| convert::encode_event(&event));
                    let budget = &mut self.budget;
                    let framed = encoded.and_then(|bytes| {
                        let framed = frame::encode(&bytes);
                        match budget {
                            Some(budget) => budget.cover(framed),
                            None => Ok(framed),
                        }
                    });
                    match framed {
                        Ok(framed) => {
                            self.message = Some(framed);
                            let piece = self.next_piece().unwrap_or_default();
                            return Poll::Ready(Some(Ok(Frame::data(piece))));
                        }
                        Err(e) => Some(status::error_trailers(&e)),
                    }
                }
                Poll::Ready(Some(StreamItem::Error(e))) => Some(status::error_trailers(&e)),
                Poll::Ready(None) => Some(status::ok_trailers()),
                Poll::Pending => {
                    if self.shutdown.as_mut().is_some_and(|s| s.as_mut().poll(cx).is_ready()) {
                        Some(status::error_trailers(&crate::task::manager::server_shutting_down()))
                    } else if self.deadline.as_mut().is_some_and(|d| d.as_mut().poll(cx).is_ready()) {
                        let e = A2AError::new(crate::ErrorKind::Timeout, "the call's deadline (grpc-timeout) passed");
                        Some(status::error_trailers(&e))
                    } else {
                        None
                    }
                }
            };
            match ended {
                Some(trailers) => {
                    // Dropping the stream unsubscribes; the task goes on.
                    self.events = None;
                    self.trailers = Some(trailers);
                }
                None => return Poll::Pending,
            }
        }
        Poll::Ready(self.trailers.take().map(|t| Ok(Frame::trailers(t))))
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.kind {
            Kind::Full(bytes) => Poll::Ready(next_frame(bytes).map(|b| Ok(Frame::data(b)))),
            Kind::Sse(body) => body.poll_frame(cx),
            Kind::Grpc(body) => body.poll_frame(cx),
            Kind::GrpcMessages(messages) => {
                let Some(rx) = messages else { return Poll::Ready(None) };
                match rx.poll_recv(cx) {
                    Poll::Ready(Some(message)) => Poll::Ready(Some(Ok(Frame::data(message)))),
                    Poll::Ready(None) => {
                        *messages = None;
                        Poll::Ready(Some(Ok(Frame::trailers(crate::grpc::status::ok_trailers()))))
                    }
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Full(bytes) => bytes.is_none(),
            Kind::Sse(body) => body.done,
            Kind::Grpc(body) => body.message.is_none() && body.events.is_none() && body.trailers.is_none(),
            Kind::GrpcMessages(messages) => messages.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Sse(_) | Kind::Grpc(_) | Kind::GrpcMessages(_) => SizeHint::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    /// The DATA frames of a unary gRPC answer, and whether trailers followed them.
    async fn frames(message: Bytes) -> (Vec<Bytes>, bool) {
        let mut body = ResponseBody::grpc_unary(message);
        let (mut data, mut trailers) = (Vec::new(), false);
        while let Some(frame) = body.frame().await {
            match frame.unwrap().into_data() {
                Ok(bytes) => data.push(bytes),
                Err(frame) => trailers = frame.is_trailers(),
            }
        }
        assert!(body.is_end_stream());
        (data, trailers)
    }

    #[tokio::test]
    async fn a_short_grpc_message_leaves_in_frames_h2_copies_and_a_long_one_whole() {
        let message = |len: usize| Bytes::from((0..len).map(|i| i as u8).collect::<Vec<u8>>());
        for len in [5, 255, 256, 700, COALESCE_MAX] {
            let (data, trailers) = frames(message(len)).await;
            assert!(trailers, "{len}: the status follows the message");
            assert!(data.iter().all(|d| d.len() < H2_CHAIN_THRESHOLD), "{len}: {:?}", data.iter().map(Bytes::len));
            assert_eq!(data.concat(), message(len), "{len}: the message, in order");
        }
        let (data, trailers) = frames(message(COALESCE_MAX + 1)).await;
        assert!(trailers);
        assert_eq!(data, vec![message(COALESCE_MAX + 1)], "beyond COALESCE_MAX the message goes whole");
        // A large one goes in frames of MAX_FRAME, in order.
        let (data, trailers) = frames(message(2 * MAX_FRAME + 7)).await;
        assert!(trailers);
        assert_eq!(data.iter().map(Bytes::len).collect::<Vec<_>>(), [MAX_FRAME, MAX_FRAME, 7]);
        assert_eq!(data.concat(), message(2 * MAX_FRAME + 7));
    }

    #[test]
    fn an_error_event_ends_a_stream_as_written_not_as_unwritable() {
        let event = crate::model::StreamResponse::Message(crate::model::Message::text(crate::model::Role::Agent, "hi"));
        for framing in [Framing::Rest, Framing::JsonRpc(crate::jsonrpc::Id::String("r1".into()))] {
            let (text, ends) = framing.encode(StreamItem::Event { id: Some(3), event: event.clone() });
            assert_eq!(ends, Ends::No);
            assert!(text.starts_with("id: 3\n") || text.contains("\nid: 3\n"), "{text}");
            let refusal = A2AError::new(crate::ErrorKind::ContentTypeNotSupported, "no images");
            let (text, ends) = framing.encode(StreamItem::Error(refusal));
            // The client's answer, written whole: not the server fault an unwritable event is.
            assert_eq!(ends, Ends::Error);
            assert!(text.contains("no images"), "{text}");
        }
    }

    #[tokio::test]
    async fn a_held_answer_keeps_its_share_until_its_last_frame_is_dropped() {
        let budget = BodyBudget::new(100 * 1024);
        let answer = Bytes::from(vec![7u8; 80 * 1024]);
        let mut body = ResponseBody::full(answer.clone());
        body.hold(&budget, || true).unwrap();
        // A second answer of the same size does not fit beside it, and is left as it was.
        let mut second = ResponseBody::full(answer.clone());
        assert_eq!(second.hold(&budget, || true).unwrap_err().kind, crate::ErrorKind::Unavailable);
        assert_eq!(second.collect().await.unwrap().to_bytes(), answer);
        // Frames of MAX_FRAME, the whole answer in order; the body ends before its frames do.
        let mut frames = Vec::new();
        while let Some(frame) = body.frame().await {
            frames.push(frame.unwrap().into_data().unwrap());
        }
        drop(body);
        assert_eq!(frames.iter().map(Bytes::len).max(), Some(MAX_FRAME));
        assert_eq!(frames.concat(), answer);
        let last = frames.pop().unwrap();
        drop(frames);
        // One frame still held (as h2 may hold it): the share is still taken.
        assert!(ResponseBody::full(answer.clone()).hold(&budget, || true).is_err());
        drop(last);
        ResponseBody::full(answer).hold(&budget, || true).expect("the share came back with the last frame");
    }
}
