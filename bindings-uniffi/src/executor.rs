//! A Kotlin/Swift `AgentExecutor` (a foreign async trait) behind core's executor trait, and the
//! [`EventSink`] it reports through.
//!
//! `execute` runs as a Kotlin coroutine / Swift task that Rust awaits on the binding's runtime.
//! When the task is canceled, Rust stops awaiting and drops the foreign future: uniffi then
//! cancels the coroutine (Kotlin gets `CancellationException`, Swift sees `Task.isCancelled`),
//! the `cancel` hook runs, and core sets CANCELED. A thrown exception fails the task with its
//! message (core's rule).

use crate::convert::{Path, ToCore, ToRecord, to_core};
use crate::errors::{A2aException, Result};
use crate::models_gen::*;
use crate::runtime::run;
use a2a_native::executor::{self as core, ExecutorError};
use a2a_native::model;
use std::sync::Arc;

/// What the executor knows about the call it serves.
#[derive(Debug, Clone, uniffi::Record)]
pub struct RequestContext {
    /// The task this work belongs to: existing, or the id a new task will get.
    pub task_id: String,
    pub context_id: String,
    /// The client's message (`null` for cancel).
    pub message: Option<Message>,
    /// The task this message continues, the message already in its history (`null` for a new task).
    pub task: Option<A2ATask>,
    pub configuration: Option<SendMessageConfiguration>,
    /// The request's metadata, as JSON text.
    pub metadata: Option<String>,
    pub tenant: String,
    /// The authenticated caller's name (`null` when anonymous); the task belongs to it.
    pub principal: Option<String>,
    /// The authenticated caller's scopes.
    pub scopes: Vec<String>,
    /// The extension URIs activated for this call.
    pub extensions: Vec<String>,
    /// Ids of the card's skills the caller may use, in card order: skills without
    /// `securityRequirements` and those whose scopes the caller holds (a message names no skill).
    pub skills: Vec<String>,
    /// The text parts of `message`, joined (empty without a message).
    pub text: String,
    /// The W3C trace context this work continues (the caller's `traceparent` and `tracestate`
    /// as received; `null` without one): extract it with OpenTelemetry's propagator so the
    /// agent's spans join the caller's trace.
    pub traceparent: Option<String>,
    pub tracestate: Option<String>,
    /// The caller's W3C baggage, as received.
    pub baggage: Option<String>,
}

/// An agent, implemented in Kotlin (`suspend fun`) or Swift (`async`).
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait AgentExecutor: Send + Sync {
    /// Does the work for `context.message`, reporting through `events`. Returning ends the
    /// work; throwing fails the task with the exception's message.
    async fn execute(&self, context: RequestContext, events: Arc<EventSink>) -> Result<()>;
    /// Asked to cancel `context.task_id` (the running `execute` has been canceled already).
    /// The task ends CANCELED whatever this does.
    async fn cancel(&self, context: RequestContext, events: Arc<EventSink>) -> Result<()>;
}

/// Core's executor, filled by a foreign one and the server's extension handlers.
pub struct ForeignExecutor(pub Arc<dyn AgentExecutor>, pub crate::extensions::Handlers);

fn context(ctx: &core::RequestContext) -> RequestContext {
    RequestContext {
        task_id: ctx.task_id.clone(),
        context_id: ctx.context_id.clone(),
        message: ctx.message.clone().to_record(),
        task: ctx.task.clone().to_record(),
        configuration: ctx.configuration.clone().to_record(),
        metadata: ctx.metadata.clone().to_record(),
        tenant: ctx.tenant.clone(),
        principal: ctx.principal.as_ref().map(|p| p.name.clone()),
        scopes: ctx.principal.as_ref().map(|p| p.scopes.clone()).unwrap_or_default(),
        extensions: ctx.extensions.clone(),
        skills: ctx.skills.clone(),
        text: ctx.text(),
        traceparent: ctx.trace.traceparent.clone(),
        tracestate: ctx.trace.tracestate.clone(),
        baggage: ctx.trace.baggage.clone(),
    }
}

/// A plain exception arrives as InternalError (uniffi's unexpected callback error), which
/// fails the task; a typed one (`a2aError`, an `A2aException` of another kind) thrown before the
/// first event refuses the request (core's `ExecutorError::refusal`).
fn failure(e: A2aException) -> ExecutorError {
    let A2aException::Failure { name, detail, .. } = e;
    ExecutorError::from_host(Some(&name), detail)
}

#[async_trait::async_trait]
impl core::AgentExecutor for ForeignExecutor {
    async fn execute(
        &self,
        ctx: core::RequestContext,
        events: core::EventSink,
    ) -> std::result::Result<(), ExecutorError> {
        let cancelled = ctx.cancelled.clone();
        let record = context(&ctx);
        let sink = Arc::new(EventSink { inner: events });
        tokio::select! {
            outcome = self.0.execute(record, sink) => outcome.map_err(failure),
            // Dropping the foreign future cancels the coroutine; core sets CANCELED.
            () = cancelled.cancelled() => Ok(()),
        }
    }

    async fn cancel(
        &self,
        ctx: core::RequestContext,
        events: core::EventSink,
    ) -> std::result::Result<(), ExecutorError> {
        let record = context(&ctx);
        self.0.cancel(record, Arc::new(EventSink { inner: events })).await.map_err(failure)
    }

    async fn call_method(&self, call: a2a_native::methods::MethodCall) -> a2a_native::Result<serde_json::Value> {
        self.1.call(call).await
    }

    async fn check_message(&self, check: a2a_native::methods::MessageCheck) -> a2a_native::Result<()> {
        self.1.check(check).await
    }
}

/// The executor's handle for reporting events on its task. Each call returns at once while
/// the task's queue has room, and waits only when it is full.
#[derive(uniffi::Object)]
pub struct EventSink {
    inner: core::EventSink,
}

impl EventSink {
    async fn deliver(&self, event: model::StreamResponse) -> Result<()> {
        match self.inner.try_send(event)? {
            None => Ok(()),
            Some(event) => {
                let sink = self.inner.clone();
                Ok(run(async move { sink.send(event).await }).await?)
            }
        }
    }
}

fn agent_text(text: String) -> model::Message {
    model::Message::text(model::Role::Agent, text)
}

#[uniffi::export]
impl EventSink {
    pub fn task_id(&self) -> String {
        self.inner.task_id().to_owned()
    }
    pub fn context_id(&self) -> String {
        self.inner.context_id().to_owned()
    }

    /// Marks an extension the client asked for (and the card declares) as activated: it is
    /// echoed in the response's A2A-Extensions. Whether `uri` is one that can be.
    pub fn activate_extension(&self, uri: String) -> bool {
        self.inner.activate_extension(&uri)
    }

    /// A status update, with an optional agent message.
    #[uniffi::method(default(message = None))]
    pub async fn status(&self, state: TaskState, message: Option<Message>) -> Result<()> {
        let message = message.map(to_core).transpose()?;
        let state = state.to_core(&Path::TOP)?;
        self.deliver(self.inner.status_event(state, message)).await
    }

    /// A status update whose message is one agent text part.
    pub async fn status_text(&self, state: TaskState, text: String) -> Result<()> {
        let state = state.to_core(&Path::TOP)?;
        self.deliver(self.inner.status_event(state, Some(agent_text(text)))).await
    }

    /// An artifact (a fresh id when `artifact_id` is empty); `append` adds parts to an earlier one.
    #[uniffi::method(default(append = false, last_chunk = false))]
    pub async fn artifact(&self, artifact: Artifact, append: bool, last_chunk: bool) -> Result<()> {
        // Without an id, core gives the artifact a fresh one.
        let artifact = artifact.to_core(&Path::Root("artifact"))?;
        let event = self.inner.checked_artifact_event(artifact, append, last_chunk)?;
        self.deliver(event).await
    }

    /// A whole artifact of one text part.
    pub async fn artifact_text(&self, name: String, text: String) -> Result<()> {
        let artifact = model::Artifact {
            // Core's artifact_event gives it a fresh id.
            artifact_id: String::new(),
            name,
            description: String::new(),
            parts: vec![model::Part::text(text)],
            metadata: None,
            extensions: Vec::new(),
        };
        self.deliver(self.inner.artifact_event(artifact, false, true)).await
    }

    /// A direct reply instead of a task (only as the first and only event of new work).
    pub async fn message(&self, message: Message) -> Result<()> {
        let message = to_core(message)?;
        self.deliver(model::StreamResponse::Message(message)).await
    }

    /// A direct reply of one agent text part.
    pub async fn message_text(&self, text: String) -> Result<()> {
        self.deliver(model::StreamResponse::Message(agent_text(text))).await
    }

    /// Any event; ids left empty are this task's.
    pub async fn send(&self, event: StreamResponse) -> Result<()> {
        let event = self.inner.checked_event(event.to_core(&Path::TOP)?)?;
        self.deliver(event).await
    }
}
