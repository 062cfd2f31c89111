//! A JavaScript executor behind core's [`AgentExecutor`] trait, and the [`EventSink`] it
//! reports through.
//!
//! The JS layer (`lib/executor.js`) gives the server one `dispatch(callId, method, context,
//! sink)` function, called here through a threadsafe function with `call_async_catch`: a
//! synchronous throw comes back as an `Err`, never a crash. For `execute` / `cancel` it returns
//! a Promise of `null` (done) or the failure's message, which core turns into a FAILED status.
//! When the task is canceled (or core drops the work, or the server closes), `dispatch(callId,
//! "abort")` fires the execution's `AbortSignal`; Rust does not wait for JavaScript to notice.

use crate::{errors, models};
use a2a_native::executor::{self as core, ExecutorError, RequestContext};
use a2a_native::model::{Artifact, Message, Role, StreamResponse, TaskState};
use napi::bindgen_prelude::{FnArgs, Promise};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Result, Status};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// `(callId, method, context JSON, sink)`; `sink` is absent for "abort".
pub type DispatchArgs = FnArgs<(u32, String, String, Option<EventSink>)>;
/// The JS layer's dispatch function: a Promise of `null` or a failure message.
pub type Dispatch =
    ThreadsafeFunction<DispatchArgs, Promise<Option<String>>, DispatchArgs, Status, false>;

/// Core's executor trait, filled by the JS layer's dispatch function.
pub struct JsExecutor {
    /// Taken on close, so the threadsafe function (which keeps Node's event loop alive) is
    /// released as soon as the last running call ends: nothing waits for a garbage collector.
    dispatch: RwLock<Option<Arc<Dispatch>>>,
    closed: CancellationToken,
    /// Running calls, so that `close` returns once each has been told to abort.
    calls: TaskTracker,
    next_call: AtomicU32,
}

impl JsExecutor {
    pub fn new(dispatch: Dispatch) -> Self {
        Self {
            dispatch: RwLock::new(Some(Arc::new(dispatch))),
            closed: CancellationToken::new(),
            calls: TaskTracker::new(),
            next_call: AtomicU32::new(1),
        }
    }

    /// Stops calling JavaScript: new calls fail, running ones are aborted; resolves once every
    /// running call's AbortSignal has fired.
    pub async fn close(&self) {
        self.closed.cancel();
        self.dispatch
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        self.calls.close();
        self.calls.wait().await;
    }

    async fn run(
        &self,
        method: &'static str,
        ctx: RequestContext,
        sink: core::EventSink,
    ) -> std::result::Result<(), ExecutorError> {
        // Counted before the dispatch is read, so a concurrent `close` waits for this call.
        let _running = self.calls.token();
        let dispatch = self
            .dispatch
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| ExecutorError::new("the server is closed"))?;
        let id = self.next_call.fetch_add(1, Ordering::Relaxed);
        let args = (
            id,
            method.to_owned(),
            context_json(&ctx),
            Some(EventSink::new(sink)),
        );
        let mut guard = AbortOnDrop(Some((dispatch.clone(), id)));
        let call = async {
            let promise = dispatch.call_async_catch(args.into()).await?;
            promise.await
        };
        let watch_cancel = method == "execute";
        let outcome = tokio::select! {
            r = call => r,
            // The task is being canceled (core sets CANCELED): not a failure of the agent.
            () = ctx.cancelled.cancelled(), if watch_cancel => return Ok(()),
            () = self.closed.cancelled() => {
                // Waits for JavaScript to have run the abort, so `close()` resolves after it.
                guard.0 = None;
                let _ = dispatch.call_async_catch((id, "abort".to_owned(), String::new(), None).into()).await;
                return Err(ExecutorError::new("the server closed"));
            }
        };
        guard.0 = None;
        match outcome {
            Ok(None) => Ok(()),
            Ok(Some(message)) => Err(ExecutorError::new(message)),
            Err(e) => Err(ExecutorError::new(format!(
                "the JavaScript executor failed: {}",
                e.reason
            ))),
        }
    }
}

#[async_trait::async_trait]
impl core::AgentExecutor for JsExecutor {
    async fn execute(
        &self,
        ctx: RequestContext,
        events: core::EventSink,
    ) -> std::result::Result<(), ExecutorError> {
        self.run("execute", ctx, events).await
    }
    async fn cancel(
        &self,
        ctx: RequestContext,
        events: core::EventSink,
    ) -> std::result::Result<(), ExecutorError> {
        self.run("cancel", ctx, events).await
    }
}

/// Fires the call's AbortSignal unless it finished (a cancel, or core dropping the work).
struct AbortOnDrop(Option<(Arc<Dispatch>, u32)>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some((dispatch, id)) = self.0.take() {
            // With a return-value callback a throw is handed to it (and ignored), not raised.
            dispatch.call_with_return_value(
                (id, "abort".to_owned(), String::new(), None).into(),
                ThreadsafeFunctionCallMode::NonBlocking,
                |_, _| Ok(()),
            );
        }
    }
}

fn context_json(ctx: &RequestContext) -> String {
    fn opt<T: serde::Serialize>(v: &Option<T>) -> Value {
        v.as_ref().map_or(Value::Null, a2a_native::model::to_value)
    }
    json!({
        "taskId": ctx.task_id,
        "contextId": ctx.context_id,
        "message": opt(&ctx.message),
        "task": opt(&ctx.task),
        "configuration": opt(&ctx.configuration),
        "metadata": opt(&ctx.metadata),
        "tenant": ctx.tenant,
        "principal": ctx.principal.as_ref().map(|p| json!({"name": p.name, "scopes": p.scopes})),
        "extensions": ctx.extensions,
        "skills": ctx.skills,
    })
    .to_string()
}

/// Events that found the sink full, waiting for [`EventSink::flush`] (in order).
#[derive(Default)]
struct Backlog {
    queue: VecDeque<StreamResponse>,
    flushing: bool,
}

/// Core's event sink. Every method sends at once when the sink has room and returns `true`;
/// when it is full the event is queued and it returns `false`: the JS layer then awaits
/// `flush()` (the backpressure). A round trip through the runtime costs far more than the
/// send, so the common case makes none.
#[napi_derive::napi]
pub struct EventSink {
    inner: core::EventSink,
    backlog: Mutex<Backlog>,
    turn: tokio::sync::Mutex<()>,
}

fn agent_message(text: Option<String>, json: Option<String>) -> Result<Option<Message>> {
    match (text, json) {
        (_, Some(json)) => models::parse(&json).map(Some),
        (Some(text), None) => Ok(Some(Message::text(Role::Agent, text))),
        (None, None) => Ok(None),
    }
}

impl EventSink {
    fn new(inner: core::EventSink) -> Self {
        Self {
            inner,
            backlog: Mutex::default(),
            turn: tokio::sync::Mutex::new(()),
        }
    }

    fn deliver(&self, event: StreamResponse) -> Result<bool> {
        let mut backlog = self.backlog.lock().unwrap_or_else(|p| p.into_inner());
        let event = if backlog.queue.is_empty() && !backlog.flushing {
            match self.inner.try_send(event).map_err(errors::to_js)? {
                None => return Ok(true),
                Some(event) => event,
            }
        } else {
            event
        };
        backlog.queue.push_back(event);
        Ok(false)
    }
}

#[napi_derive::napi]
impl EventSink {
    #[napi(getter)]
    pub fn task_id(&self) -> String {
        self.inner.task_id().to_owned()
    }
    #[napi(getter)]
    pub fn context_id(&self) -> String {
        self.inner.context_id().to_owned()
    }

    /// A status update; `state` is a ProtoJSON name (`TASK_STATE_WORKING`); the message is
    /// given as text (one agent text part) or as Message JSON.
    #[napi]
    pub fn status(
        &self,
        state: String,
        text: Option<String>,
        message_json: Option<String>,
    ) -> Result<bool> {
        let state = TaskState::from_name(&state)
            .ok_or_else(|| errors::invalid("state", format!("unknown task state {state:?}")))?;
        let message = agent_message(text, message_json)?;
        self.deliver(self.inner.status_event(state, message))
    }

    /// An artifact (Artifact JSON; the JS layer gives it an id), or with `append` more parts
    /// for an earlier one with the same id.
    #[napi]
    pub fn artifact(&self, artifact_json: String, append: bool, last_chunk: bool) -> Result<bool> {
        let artifact: Artifact = models::parse(&artifact_json)?;
        self.deliver(self.inner.artifact_event(artifact, append, last_chunk))
    }

    /// A direct reply (text, or Message JSON) instead of a task.
    #[napi]
    pub fn message(&self, text: Option<String>, message_json: Option<String>) -> Result<bool> {
        let message = agent_message(text, message_json)?
            .ok_or_else(|| errors::invalid("message", "a message needs text or a Message"))?;
        self.deliver(StreamResponse::Message(message))
    }

    /// Any event, as StreamResponse JSON.
    #[napi]
    pub fn send(&self, event_json: String) -> Result<bool> {
        self.deliver(models::parse(&event_json)?)
    }

    /// Sends the queued events in order, waiting for room. One flush at a time sends (the
    /// others wait for their turn and find their events sent).
    #[napi]
    pub async fn flush(&self) -> Result<()> {
        let _turn = self.turn.lock().await;
        loop {
            let event = {
                let mut backlog = self.backlog.lock().unwrap_or_else(|p| p.into_inner());
                backlog.flushing = !backlog.queue.is_empty();
                match backlog.queue.pop_front() {
                    Some(event) => event,
                    None => return Ok(()),
                }
            };
            if let Err(e) = self.inner.send(event).await {
                let mut backlog = self.backlog.lock().unwrap_or_else(|p| p.into_inner());
                backlog.queue.clear();
                backlog.flushing = false;
                return Err(errors::to_js(e));
            }
        }
    }
}
