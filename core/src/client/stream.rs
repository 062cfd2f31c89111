//! Streams of A2A events (SendStreamingMessage, SubscribeToTask) as a `futures` [`Stream`] of
//! `Result<StreamResponse, A2AError>`, with reconnection.
//!
//! A `Source` is one HTTP response being read: body chunks go through the incremental SSE
//! decoder of [`crate::sse`] (each event bounded by `max_event_bytes`), and each event is
//! decoded by its binding (JSON-RPC 1.0 or 0.3, or HTTP+JSON). The [`EventStream`] on top
//! decides when the stream is over and repairs dropped connections.
//!
//! When it ends:
//! - after a Task or status update whose state is terminal or INPUT_REQUIRED, or a 0.3 status
//!   update marked `final`. At AUTH_REQUIRED the server keeps the stream open while the agent
//!   runs (it may go on once credentials arrive out of band), and so do we, until the server
//!   closes it; but a resubscribed stream ends there, as nothing may run the task any more (a
//!   restarted server, an execution that returned while we were away) and a subscription to
//!   it would wait for the next message. One exception: the opening Task
//!   snapshot of a SubscribeToTask, or of a SendStreamingMessage continuing a task, shows the
//!   task as it was *before* the call (a task waiting for this very message, or for credentials
//!   that arrive out of band), so it ends the stream only if terminal;
//! - after a Message, unless task events came before it (a message-only exchange);
//! - after an error item (a JSON-RPC error event, a `google.rpc.Status` event, an event that is
//!   not valid, an event larger than the limit): the error is the last item. Except
//!   UnavailableError once the task id is known (our server ends its open streams with it when
//!   it shuts down; a store briefly away): that is followed as a drop, below;
//! - when the server closes the stream cleanly (the server decides: SDK servers also close it
//!   when the agent returns and leaves the task active).
//!
//! Reconnection: when the connection drops (reset, a body cut in the middle of an event, or no
//! data for `stream_idle_timeout`) and the task id is known (from the request or from an event), the stream is re-opened with
//! SubscribeToTask (`tasks/resubscribe` in 0.3), up to `stream_reconnects` times in a row with
//! backoff; the count starts again whenever a new event comes through. If the task ended in
//! the meantime, the server refuses the subscription (UnsupportedOperation) and the task is
//! read once with GetTask instead. A 0.3 agent is asked first (GetTask before each
//! `tasks/resubscribe`): its resubscription opens with no snapshot, and a2a-sdk 0.3 holds one
//! to an ended task open with keep-alives only.
//!
//! No gap with our server: every event carries its SSE `id` (its place in the task's log), and
//! the resubscription sends the last one as `Last-Event-ID`; the server then replays exactly
//! the events after it. Servers that keep no log ignore the header and send a snapshot:
//!
//! No duplicates: a resubscription starts with the Task snapshot. It is surfaced (as a `task`
//! event) only if it carries something not surfaced yet: a status different from the last
//! status surfaced (state, message or timestamp), or an artifact id never seen; then it ends
//! the stream like any event. Otherwise it is skipped (it ends nothing: its state was already
//! surfaced), and the stream continues with the live events, which are new by construction.
//! Such a server keeps no per-event replay log (the spec defines none), so intermediate status
//! messages sent while disconnected can be missed there; the snapshot carries their net effect.

use super::transport::{self, Config, Transport};
use crate::error::{A2AError, ErrorKind, Result};
use crate::jsonrpc::Id;
use crate::model::{self, GetTaskRequest, StreamResponse, SubscribeToTaskRequest, Task, TaskState, TaskStatus};
use crate::request::A2ARequest;
use crate::sse::SseDecoder;
use futures_core::Stream;
use std::collections::{HashSet, VecDeque};
use std::hash::BuildHasher;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tracing::Instrument;

/// One decoded SSE event: a stream event (with the 0.3 `final` flag), or an error item.
// Events are the common case and are moved once each; boxing them would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Decoded {
    Event(StreamResponse, bool),
    Error(A2AError),
}

/// How the events of a stream are framed.
#[derive(Debug, Clone)]
pub(crate) enum Framing {
    /// JSON-RPC responses carrying the request's id; 0.3 results when `v03`.
    JsonRpc { id: Id, v03: bool },
    /// Bare StreamResponse objects (HTTP+JSON).
    Rest,
}

impl Framing {
    pub(crate) fn is_v03(&self) -> bool {
        matches!(self, Framing::JsonRpc { v03: true, .. })
    }

    fn decode(&self, event: &crate::sse::SseEvent) -> Decoded {
        match self {
            Framing::JsonRpc { id, v03 } => transport::jsonrpc::decode_event(id, *v03, event),
            Framing::Rest => transport::rest::decode_event(event),
        }
    }
}

/// What reading a source gave.
#[allow(clippy::large_enum_variant)]
enum Next {
    /// An event, its 0.3 `final` flag, and its SSE `id` if it had one.
    Event(StreamResponse, bool, Option<String>),
    Error(A2AError),
    /// The connection broke (or went idle) before the stream's end.
    Dropped(A2AError),
    /// The server closed the stream cleanly.
    Ended,
}

/// One streaming HTTP response being read: an SSE body, or the messages of a gRPC stream.
pub(crate) struct Source {
    resp: Option<reqwest::Response>,
    grpc: Option<transport::grpc::Reader>,
    decoder: SseDecoder,
    /// Decoded events with their SSE ids.
    pending: VecDeque<(Option<String>, Decoded)>,
    framing: Framing,
    idle_timeout: Option<Duration>,
    url: String,
}

impl Source {
    pub(crate) fn new(resp: reqwest::Response, framing: Framing, config: &Config) -> Self {
        Self {
            url: resp.url().to_string(),
            resp: Some(resp),
            grpc: None,
            decoder: SseDecoder::new(config.max_event_bytes),
            pending: VecDeque::new(),
            framing,
            idle_timeout: config.stream_idle_timeout,
        }
    }

    /// A stream of one already decoded event (a JSON answer where a stream was expected).
    pub(crate) fn single(event: Decoded, framing: Framing) -> Self {
        Self {
            resp: None,
            grpc: None,
            decoder: SseDecoder::new(1),
            pending: VecDeque::from([(None, event)]),
            framing,
            idle_timeout: None,
            url: String::new(),
        }
    }

    /// The messages of a gRPC stream (they carry no event ids: a resumed gRPC stream starts
    /// from the task's snapshot).
    pub(crate) fn grpc(reader: transport::grpc::Reader, config: &Config) -> Self {
        Self {
            url: reader.url().to_owned(),
            resp: None,
            grpc: Some(reader),
            decoder: SseDecoder::new(1),
            pending: VecDeque::new(),
            framing: Framing::Rest,
            idle_timeout: config.stream_idle_timeout,
        }
    }

    async fn next_grpc(&mut self) -> Next {
        use transport::grpc::Item;
        let Some(reader) = self.grpc.as_mut() else { return Next::Ended };
        let item = match self.idle_timeout {
            Some(idle) => match tokio::time::timeout(idle, reader.next()).await {
                Ok(item) => item,
                Err(_) => {
                    self.grpc = None;
                    let msg = format!("no data on the gRPC stream from {} for {idle:?}", self.url);
                    return Next::Dropped(A2AError::new(ErrorKind::Timeout, msg));
                }
            },
            None => reader.next().await,
        };
        match item {
            Item::Event(event) => Next::Event(event, false, None),
            Item::Error(e) => Next::Error(e),
            Item::Dropped(e) => Next::Dropped(e),
            Item::Ended => Next::Ended,
        }
    }

    async fn next(&mut self) -> Next {
        loop {
            match self.pending.pop_front() {
                Some((id, Decoded::Event(event, last))) => return Next::Event(event, last, id),
                Some((_, Decoded::Error(e))) => return Next::Error(e),
                None => {}
            }
            if self.grpc.is_some() {
                return self.next_grpc().await;
            }
            let Some(resp) = self.resp.as_mut() else { return Next::Ended };
            let chunk = match self.idle_timeout {
                Some(idle) => match tokio::time::timeout(idle, resp.chunk()).await {
                    Ok(chunk) => chunk,
                    Err(_) => {
                        self.resp = None;
                        let msg = format!("no data on the event stream from {} for {idle:?}", self.url);
                        return Next::Dropped(A2AError::new(ErrorKind::Timeout, msg));
                    }
                },
                None => resp.chunk().await,
            };
            match chunk {
                Ok(Some(bytes)) => {
                    for item in self.decoder.push(&bytes) {
                        // An oversized event is an error item (InvalidAgentResponse), which ends
                        // the stream: an event is missing and nothing can say which.
                        self.pending.push_back(match item {
                            Ok(event) => (event.id.clone(), self.framing.decode(&event)),
                            Err(e) => (None, Decoded::Error(e.into())),
                        });
                    }
                }
                Ok(None) => {
                    self.resp = None;
                    let decoder = std::mem::replace(&mut self.decoder, SseDecoder::new(1));
                    return match decoder.finish() {
                        Ok(()) => Next::Ended,
                        Err(e) => Next::Dropped(A2AError::new(
                            ErrorKind::Transport,
                            format!("the event stream from {} was cut off: {e}", self.url),
                        )),
                    };
                }
                Err(e) => {
                    self.resp = None;
                    let idle = self.idle_timeout.unwrap_or_default();
                    return Next::Dropped(transport::reqwest_error(&e, &self.url, idle));
                }
            }
        }
    }
}

/// The state of a state-bearing event, if it is one.
fn state_of(event: &StreamResponse) -> Option<model::TaskState> {
    match event {
        StreamResponse::Task(t) => Some(t.status.state),
        StreamResponse::StatusUpdate(e) => Some(e.status.state),
        _ => None,
    }
}

/// Follows one stream across reconnections (see the module docs).
struct Driver {
    transport: Arc<Transport>,
    source: Option<Source>,
    tenant: String,
    task_id: Option<String>,
    last_status: Option<TaskStatus>,
    /// The artifacts seen, by a keyed hash of their id: a server picks the ids, and a long
    /// stream of large unique ones kept as strings grew the client without bound.
    artifacts: HashSet<u64>,
    ids: std::collections::hash_map::RandomState,
    saw_task_event: bool,
    /// The next event of the current source is a resubscription's snapshot.
    expect_snapshot: bool,
    /// The next event is the opening snapshot of a call about an existing task.
    opening: bool,
    /// Reconnections since the last surfaced event.
    reconnects: u32,
    /// The stream was resubscribed at least once (see the module's "When it ends").
    resubscribed: bool,
    /// The task's context, from the first event that named it: an update that leaves it out
    /// gets it (see `transport::parse_event`).
    context_id: Option<String>,
    /// The SSE id of the last event that had one: sent as `Last-Event-ID` on resubscription,
    /// so a server that keeps an event log (ours) replays exactly what was missed.
    last_event_id: Option<String>,
    done: bool,
}

impl Driver {
    /// Whether a snapshot carries anything not surfaced yet.
    fn is_new(&self, task: &Task) -> bool {
        self.last_status.as_ref() != Some(&task.status)
            || task.artifacts.iter().any(|a| !self.artifacts.contains(&self.ids.hash_one(&a.artifact_id)))
    }

    fn record(&mut self, event: &mut StreamResponse) {
        if let Some(id) = event.task_id()
            && self.task_id.is_none()
        {
            self.task_id = Some(id.to_owned());
        }
        let context = match event {
            StreamResponse::Task(t) => Some(&mut t.context_id),
            StreamResponse::Message(m) => Some(&mut m.context_id),
            StreamResponse::StatusUpdate(e) => Some(&mut e.context_id),
            StreamResponse::ArtifactUpdate(e) => Some(&mut e.context_id),
        };
        if let Some(context) = context {
            match &self.context_id {
                Some(known) if context.is_empty() => known.clone_into(context),
                None if !context.is_empty() => self.context_id = Some(context.clone()),
                _ => {}
            }
        }
        match event {
            StreamResponse::Task(t) => {
                self.last_status = Some(t.status.clone());
                self.artifacts.extend(t.artifacts.iter().map(|a| self.ids.hash_one(&a.artifact_id)));
            }
            StreamResponse::StatusUpdate(e) => self.last_status = Some(e.status.clone()),
            StreamResponse::ArtifactUpdate(e) => {
                self.artifacts.insert(self.ids.hash_one(&e.artifact.artifact_id));
            }
            StreamResponse::Message(_) => {}
        }
    }

    fn ends_stream(&self, event: &StreamResponse, last: bool) -> bool {
        if last {
            return true;
        }
        match event {
            StreamResponse::Message(_) => !self.saw_task_event,
            // Where the server closes it: AUTH_REQUIRED keeps it open (the agent may resume),
            // unless resubscribed (then nothing may run the task: see the module doc).
            other => {
                state_of(other).is_some_and(|s| s.ends_stream() || (self.resubscribed && s == TaskState::AuthRequired))
            }
        }
    }

    async fn step(&mut self) -> Option<Result<StreamResponse>> {
        loop {
            if self.done {
                return None;
            }
            let next = match self.source.as_mut() {
                Some(source) => source.next().await,
                None => Next::Ended,
            };
            match next {
                Next::Event(mut event, last, id) => {
                    if let Some(id) = id {
                        // An empty id resets it (SSE).
                        self.last_event_id = (!id.is_empty()).then_some(id);
                    }
                    let opening = std::mem::take(&mut self.opening);
                    if std::mem::take(&mut self.expect_snapshot)
                        && let StreamResponse::Task(task) = &event
                        && !self.is_new(task)
                    {
                        if task.status.state == TaskState::AuthRequired {
                            // Nothing new, and nothing may run the task: the end (see above).
                            self.done = true;
                            return None;
                        }
                        tracing::debug!(task_id = %task.id, "resubscribed; the snapshot holds nothing new");
                        continue;
                    }
                    if let (Some(ours), Some(theirs)) = (&self.task_id, event.task_id())
                        && !theirs.is_empty()
                        && theirs != ours
                    {
                        // Another task's event (its end would end this stream): the agent is wrong.
                        self.done = true;
                        let why = format!("the stream of task {ours:?} carried an event of task {theirs:?}");
                        return Some(Err(A2AError::new(ErrorKind::InvalidAgentResponse, why)));
                    }
                    self.record(&mut event);
                    self.saw_task_event |= !matches!(event, StreamResponse::Message(_));
                    self.reconnects = 0;
                    let ends = match &event {
                        StreamResponse::Task(t) if opening => t.status.state.is_terminal(),
                        _ => self.ends_stream(&event, last),
                    };
                    if ends {
                        self.done = true;
                    }
                    return Some(Ok(event));
                }
                Next::Error(e) if self.expect_snapshot && e.kind == ErrorKind::UnsupportedOperation => {
                    // The task ended while we were away: read it once.
                    return self.final_snapshot().await;
                }
                // Retryable (a server shutting down before the task ended, a store briefly
                // away): followed as a drop, so the stream resumes where it was.
                Next::Error(e) if e.kind == ErrorKind::Unavailable && self.task_id.is_some() => {
                    if let Some(end) = self.resume(e).await {
                        return end;
                    }
                }
                Next::Error(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
                // The server ends its streams on purpose (SDK servers also when the agent
                // returns with the task still active): a clean close is the end, not a drop.
                Next::Ended => {
                    self.done = true;
                    return None;
                }
                Next::Dropped(cause) => {
                    if let Some(end) = self.resume(cause).await {
                        return end;
                    }
                }
            }
        }
    }

    /// After a drop: `None` once resubscribed (read on), else what the stream ends with.
    async fn resume(&mut self, cause: A2AError) -> Option<Option<Result<StreamResponse>>> {
        match self.reconnect(cause).await {
            Ok(true) => None,
            Ok(false) => Some(self.final_snapshot().await),
            Err(e) => {
                self.done = true;
                Some(Some(Err(e)))
            }
        }
    }

    /// Re-opens the stream with SubscribeToTask. `Ok(true)`: resumed; `Ok(false)`: the task has
    /// ended (subscription refused as UnsupportedOperation); `Err`: gave up.
    async fn reconnect(&mut self, cause: A2AError) -> Result<bool> {
        self.source = None;
        let Some(task_id) = self.task_id.clone() else { return Err(cause) };
        let config = self.transport.config();
        let mut last = cause;
        while self.reconnects < config.stream_reconnects {
            let delay = config.retry.backoff(self.reconnects);
            self.reconnects += 1;
            tracing::debug!(%task_id, attempt = self.reconnects, ?delay, error = %last, "stream dropped; resubscribing");
            tokio::time::sleep(delay).await;
            if self.transport.endpoint.version == super::ProtocolVersion::V03 {
                // A 0.3 resubscription opens with no snapshot, and a2a-sdk 0.3 holds one to a
                // task that ended open for ever with keep-alives only: so the task is read
                // first, and a subscription is made only while it can still move.
                match self.ended_meanwhile(&task_id).await {
                    Ok(true) => return Ok(false),
                    Ok(false) => {}
                    Err(e) if matches!(e.kind, ErrorKind::Transport | ErrorKind::Timeout | ErrorKind::Unavailable) => {
                        last = e;
                        continue;
                    }
                    Err(e) => return Err(e),
                }
            }
            let req = SubscribeToTaskRequest { tenant: self.tenant.clone(), id: task_id.clone() };
            let resume = self.transport.open_stream(A2ARequest::SubscribeToTask(req), self.last_event_id.as_deref());
            match resume.await {
                Ok(source) => {
                    self.source = Some(source);
                    self.expect_snapshot = true;
                    self.resubscribed = true;
                    return Ok(true);
                }
                Err(e) if e.kind == ErrorKind::UnsupportedOperation => return Ok(false),
                Err(e) if matches!(e.kind, ErrorKind::Transport | ErrorKind::Timeout | ErrorKind::Unavailable) => {
                    last = e
                }
                Err(e) => return Err(e),
            }
        }
        last.message = format!("{} (after {} reconnection attempts)", last.message, self.reconnects);
        Err(last)
    }

    /// Whether the task is now where a resubscribed stream would end (GetTask).
    async fn ended_meanwhile(&self, id: &str) -> Result<bool> {
        let req = A2ARequest::GetTask(GetTaskRequest {
            tenant: self.tenant.clone(),
            id: id.to_owned(),
            history_length: Some(0),
        });
        let value = self.transport.call(req).await?;
        let task = model::parse_value_at::<Task>(value, "result").map_err(transport::agent_fault)?;
        let state = task.status.state;
        Ok(state.ends_stream() || state == TaskState::AuthRequired)
    }

    /// The end of a stream whose task ended while disconnected: GetTask, surfaced if new.
    async fn final_snapshot(&mut self) -> Option<Result<StreamResponse>> {
        self.done = true;
        self.source = None;
        let id = self.task_id.clone()?;
        let req = A2ARequest::GetTask(GetTaskRequest { tenant: self.tenant.clone(), id, history_length: None });
        let task = match self.transport.call(req).await {
            Ok(value) => model::parse_value_at::<Task>(value, "result").map_err(transport::agent_fault),
            Err(e) => Err(e),
        };
        match task {
            Ok(task) if self.is_new(&task) => {
                let mut event = StreamResponse::Task(task);
                self.record(&mut event);
                Some(Ok(event))
            }
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// The events of one A2A stream. A `futures` [`Stream`] of `Result<StreamResponse, A2AError>`,
/// also readable with [`EventStream::next`]. It ends as the module docs say; dropping it closes
/// the connection (the task goes on).
pub struct EventStream {
    inner: Pin<Box<dyn Stream<Item = Result<StreamResponse>> + Send>>,
}

impl EventStream {
    /// `task_id`: the task the stream is about, when the request already names it.
    pub(crate) fn new(
        transport: Arc<Transport>,
        source: Source,
        tenant: String,
        task_id: Option<String>,
        span: tracing::Span,
    ) -> Self {
        let task_id = task_id.filter(|id| !id.is_empty());
        let opening = task_id.is_some();
        let driver = Driver {
            transport,
            source: Some(source),
            tenant,
            task_id,
            last_status: None,
            artifacts: HashSet::new(),
            ids: Default::default(),
            opening,
            saw_task_event: false,
            expect_snapshot: false,
            reconnects: 0,
            resubscribed: false,
            context_id: None,
            last_event_id: None,
            done: false,
        };
        let inner = futures_util::stream::unfold(driver, move |mut driver| {
            let span = span.clone();
            async move { driver.step().instrument(span).await.map(|item| (item, driver)) }
        });
        Self { inner: Box::pin(inner) }
    }

    /// The next event; `None` once the stream is over.
    pub async fn next(&mut self) -> Option<Result<StreamResponse>> {
        futures_util::StreamExt::next(&mut self.inner).await
    }
}

impl Stream for EventStream {
    type Item = Result<StreamResponse>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventStream")
    }
}
