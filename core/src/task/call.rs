//! What a call brings to the task layer (the caller, as the transport learned it) and what a
//! stream gives back: the seam between the transports (server) and the task manager.

use crate::error::A2AError;
use crate::executor::Activation;
use crate::model::StreamResponse;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// What the transport learned about the caller, beyond the request itself.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// Extension URIs the client asked for (`A2A-Extensions`) that the agent declares.
    pub extensions: Vec<String>,
    /// The authenticated caller, if the server has an authenticator and the request carried
    /// valid credentials.
    pub principal: Option<crate::auth::Principal>,
    /// The ids of the card's skills the caller may use (see `server::auth::SkillScopes`); set
    /// by the handler for the operations that run the executor.
    pub skills: Vec<String>,
    /// The SSE `Last-Event-ID` of a reconnecting stream (a sequence number this server sent):
    /// SubscribeToTask then replays what came after it instead of sending a snapshot.
    pub last_event_id: Option<u64>,
    /// The caller's W3C trace context, for executors that trace in another language.
    pub trace: crate::trace_context::TraceParent,
    /// What this request activates (echoed in the response's `A2A-Extensions`).
    pub activation: Activation,
}

impl CallContext {
    /// The store partition this call's tasks live in: the tenant, narrowed to the caller when
    /// tasks are private (the default), so a task of another principal is simply not found
    /// (spec §7: never reveal that it exists). Anonymous calls share the tenant's partition.
    pub fn partition(&self, tenant: &str, visibility: super::config::TaskVisibility) -> String {
        match (&self.principal, visibility) {
            (Some(p), super::config::TaskVisibility::PerPrincipal) if p.realm.is_empty() => {
                format!("{tenant}\u{1f}{}", p.name)
            }
            (Some(p), super::config::TaskVisibility::PerPrincipal) => {
                format!("{tenant}\u{1f}{}\u{1f}{}", p.realm, p.name)
            }
            _ => tenant.to_owned(),
        }
    }

    /// This context with the skills the caller may use, for the executor.
    pub(crate) fn with_skills(&self, skills: Vec<String>) -> Self {
        Self { skills, ..self.clone() }
    }
}

/// One item of a stream: an event, with its sequence number in the task's log when it has one
/// (SSE `id:`; a direct Message reply has none), or the error that ends the stream.
// Events are the common case and move once each; boxing them would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum StreamItem {
    Event { id: Option<u64>, event: StreamResponse },
    Error(A2AError),
}

/// The events of one stream, in order. Dropping it unsubscribes; it never cancels the task.
pub struct EventStream {
    rx: mpsc::Receiver<StreamItem>,
    /// Items already taken from `rx` by [`Self::first_within`], given out first.
    taken: std::collections::VecDeque<StreamItem>,
    /// How many items come before the executor's first (a continued task's snapshot).
    lead: usize,
    /// Counts this stream among the server's open ones while it lives.
    open: Option<crate::metrics::Open>,
}

impl EventStream {
    pub(crate) fn new(rx: mpsc::Receiver<StreamItem>) -> Self {
        Self { rx, taken: Default::default(), lead: 0, open: None }
    }
    /// A stream whose first `lead` items are sent before its executor runs.
    pub(crate) fn with_lead(mut self, lead: usize) -> Self {
        self.lead = lead;
        self
    }
    /// Waits up to `wait` for the executor's first item (those before it and it are kept, and
    /// given out first). The server calls it before sending a stream's response head, so
    /// extensions the executor activates as it starts are echoed in that head.
    pub(crate) async fn first_within(&mut self, wait: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + wait;
        while self.taken.len() <= self.lead {
            match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(item)) => self.taken.push_back(item),
                Ok(None) | Err(_) => return,
            }
        }
    }
    pub(crate) fn hold(&mut self, open: crate::metrics::Open) {
        self.open = Some(open);
    }
    /// The next event; `None` when the stream is over (or ended with an error).
    pub async fn next(&mut self) -> Option<StreamResponse> {
        match self.next_item().await? {
            StreamItem::Event { event, .. } => Some(event),
            StreamItem::Error(_) => None,
        }
    }
    /// The next item, with its id or error; `None` when the stream is over.
    pub async fn next_item(&mut self) -> Option<StreamItem> {
        let item = match self.taken.pop_front() {
            Some(item) => Some(item),
            None => self.rx.recv().await,
        };
        self.note_end(item.as_ref());
        item
    }

    /// Marks the stream ended (for the server's count of how streams close) at its end or at
    /// an error event that answers its call; not at Unavailable, which ends a stream the server
    /// could not go on with (it stops, its store is away): that one is abandoned.
    fn note_end(&mut self, item: Option<&StreamItem>) {
        let ended = match item {
            None => true,
            Some(StreamItem::Error(e)) => e.kind != crate::ErrorKind::Unavailable,
            Some(StreamItem::Event { .. }) => false,
        };
        if ended && let Some(open) = &mut self.open {
            open.ended();
        }
    }
}

impl futures_core::Stream for EventStream {
    type Item = StreamItem;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<StreamItem>> {
        let item = match self.taken.pop_front() {
            Some(item) => Some(item),
            None => std::task::ready!(self.rx.poll_recv(cx)),
        };
        self.note_end(item.as_ref());
        Poll::Ready(item)
    }
}
