//! The transport-free request handler: one typed A2A 1.0 request in, a typed reply out.
//! Both HTTP bindings (and the 0.3 adapter) call [`RequestHandler::handle`]; protocol
//! semantics (SPEC.md §2.2) are decided here and in [`crate::task::manager`], never in a binding.

use super::config::{Limits, ServerConfig};
use crate::error::Result;
use crate::executor::AgentExecutor;
use crate::model::{AgentCard, StreamResponse};
use crate::request::A2ARequest;
use crate::store::{PushConfigStore, TaskStore};
use crate::task::manager::TaskManager;
use std::sync::Arc;
use serde_json::Value;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// What the transport learned about the caller, beyond the request itself.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// Extension URIs the client asked for (`A2A-Extensions`) that the agent declares.
    pub extensions: Vec<String>,
}

/// The outcome of one request.
pub enum Reply {
    /// A result object in 1.0 ProtoJSON (Task, SendMessageResponse, ListTasksResponse, ...).
    Value(Value),
    /// `google.protobuf.Empty` (DeleteTaskPushNotificationConfig).
    Empty,
    /// Server-sent events, closed by the server when the task ends.
    Stream(EventStream),
}

/// The events of one stream, in order. Dropping it unsubscribes; it never cancels the task.
pub struct EventStream {
    rx: mpsc::Receiver<StreamResponse>,
}

impl EventStream {
    pub(crate) fn new(rx: mpsc::Receiver<StreamResponse>) -> Self {
        Self { rx }
    }
    /// The next event; `None` when the stream is over.
    pub async fn next(&mut self) -> Option<StreamResponse> {
        self.rx.recv().await
    }
}

impl futures_core::Stream for EventStream {
    type Item = StreamResponse;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<StreamResponse>> {
        self.rx.poll_recv(cx)
    }
}

/// The task and push-config stores a server works on.
#[derive(Clone)]
pub struct Stores {
    pub tasks: Arc<dyn TaskStore>,
    pub push: Arc<dyn PushConfigStore>,
}

impl Stores {
    /// A bounded in-memory store for both.
    pub fn memory() -> Self {
        let store = Arc::new(crate::store::MemoryStore::new(Default::default()));
        Self { tasks: store.clone(), push: store }
    }
}

/// Answers A2A requests for one agent.
pub struct RequestHandler {
    card: AgentCard,
    extended_card: Option<AgentCard>,
    stores: Stores,
    limits: Limits,
    manager: TaskManager,
}

impl RequestHandler {
    pub fn new(agent: Arc<dyn AgentExecutor>, card: AgentCard, stores: Stores, config: ServerConfig) -> Self {
        let manager = TaskManager::new(agent, stores.clone(), &config);
        Self { card, extended_card: None, stores, limits: config.limits, manager }
    }

    /// The card GetExtendedAgentCard serves (declare `capabilities.extendedAgentCard` too).
    pub fn with_extended_card(mut self, card: AgentCard) -> Self {
        self.extended_card = Some(card);
        self
    }

    /// The public agent card.
    pub fn card(&self) -> &AgentCard {
        &self.card
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Serves one request.
    pub async fn handle(&self, ctx: &CallContext, req: A2ARequest) -> Result<Reply> {
        let _ = (ctx, req, &self.extended_card, &self.stores, &self.manager);
        todo!()
    }

    /// Ends every open stream cleanly and flushes pending push notifications (graceful shutdown).
    pub async fn shutdown(&self) {
        todo!()
    }
}
