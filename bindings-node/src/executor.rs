//! A JavaScript executor behind core's [`AgentExecutor`] trait, and the event sinks it
//! reports through.
//!
//! The JS layer (`lib/executor.js`) gives the server one `dispatch(callId, method, context)`
//! function, called here through a threadsafe function without waiting for a return value.
//! Every running call has an entry in [`CALLS`]: the executor's events go to its sink through
//! `sink*(callId, ...)`, and the JS layer ends the call with `finishCall(callId, failure)` (`null`
//! when done, else the failure's message, which core turns into a FAILED status). Per request
//! this costs one crossing into JavaScript and plain function calls back: no JS object wrapping
//! a Rust sink and no Promise for Rust to await, whose napi references, callbacks and
//! finalizers were a measurable share of the JS thread's time under load.
//! When the task is canceled (or core drops the work, or the server closes), `dispatch(callId,
//! "abort")` fires the execution's `AbortSignal`; Rust does not wait for JavaScript to notice.

use crate::{errors, models};
use a2a_native::error::{A2AError, ErrorKind};
use a2a_native::executor::{self as core, ExecutorError, RequestContext};
use a2a_native::model::StreamResponse;
use napi::bindgen_prelude::{FnArgs, FromNapiValue};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Result, Status};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock, Mutex, RwLock};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// `(callId, method, context JSON)`; for "abort", the reason (empty: the task was canceled);
/// for "timeout" (the execution's time ran out), the reason.
pub type DispatchArgs = FnArgs<(u32, String, String)>;
/// The JS layer's dispatch function; it returns nothing and reports through [`finish_call`].
pub type Dispatch = ThreadsafeFunction<DispatchArgs, Nothing, DispatchArgs, Status, false>;

/// What `dispatch` returns: `undefined`. Anything else means a broken seam, and the call fails
/// rather than waiting for a `finishCall` that may never come.
pub struct Nothing;

impl FromNapiValue for Nothing {
    unsafe fn from_napi_value(env: napi::sys::napi_env, value: napi::sys::napi_value) -> Result<Self> {
        napi::assert_type_of!(env, value, napi::ValueType::Undefined).map(|()| Nothing)
    }
}

/// Running calls of every server in the process, by call id.
static CALLS: LazyLock<Mutex<HashMap<u32, Arc<Call>>>> = LazyLock::new(Mutex::default);
static NEXT_CALL: AtomicU32 = AtomicU32::new(1);

fn calls() -> std::sync::MutexGuard<'static, HashMap<u32, Arc<Call>>> {
    CALLS.lock().unwrap_or_else(|p| p.into_inner())
}

/// One running execute / cancel: its sink, and where its outcome goes.
struct Call {
    /// Every event is sent at once when the sink has room (the `sink*` function returns
    /// `true`); else it is queued and the JS layer awaits `sinkFlush` (the backpressure).
    sink: core::QueuedSink,
    settled: Mutex<Option<oneshot::Sender<Option<ExecutorError>>>>,
}

/// The call `id`'s entry; a call that has ended takes no more events (as core's sink refuses
/// them once the executor has returned).
fn call(id: u32) -> Result<Arc<Call>> {
    calls().get(&id).cloned().ok_or_else(|| {
        errors::to_js(A2AError::new(ErrorKind::UnsupportedOperation, "the task no longer accepts events"))
    })
}

/// Removes the call's entry when `run` ends, however it ends.
struct Registered(u32);

impl Drop for Registered {
    fn drop(&mut self) {
        calls().remove(&self.0);
    }
}

/// Core's executor trait, filled by the JS layer's dispatch function.
pub struct JsExecutor {
    /// Taken on close, so the threadsafe function (which keeps Node's event loop alive) is
    /// released as soon as the last running call ends: nothing waits for a garbage collector.
    dispatch: RwLock<Option<Arc<Dispatch>>>,
    closed: CancellationToken,
    /// Set as the server begins to stop: core then stops what still runs, and the AbortSignal
    /// says the server closed, not that the task was canceled.
    pub stopping: std::sync::atomic::AtomicBool,
    /// Running calls, so that `close` returns once each has been told to abort.
    calls: TaskTracker,
}

impl JsExecutor {
    pub fn new(dispatch: Dispatch) -> Self {
        Self {
            dispatch: RwLock::new(Some(Arc::new(dispatch))),
            closed: CancellationToken::new(),
            stopping: Default::default(),
            calls: TaskTracker::new(),
        }
    }

    /// Stops calling JavaScript: new calls fail, running ones are aborted; resolves once every
    /// running call's AbortSignal has fired.
    pub async fn close(&self) {
        self.closed.cancel();
        self.dispatch.write().unwrap_or_else(|p| p.into_inner()).take();
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
        let (settled, outcome) = oneshot::channel();
        let entry = Arc::new(Call { sink: core::QueuedSink::new(sink), settled: Mutex::new(Some(settled)) });
        let id = {
            let mut calls = calls();
            // Ids wrap after 2^32 calls: skip one still held by a call that never ended.
            loop {
                let id = NEXT_CALL.fetch_add(1, Ordering::Relaxed);
                if let std::collections::hash_map::Entry::Vacant(slot) = calls.entry(id) {
                    slot.insert(entry);
                    break id;
                }
            }
        };
        let _registered = Registered(id);
        let mut guard = AbortOnDrop(Some((dispatch.clone(), id)), &self.stopping, ctx.cancelled.clone());
        // With a return-value callback a synchronous throw (or a return value that is not
        // `undefined`) comes back here as an `Err` instead of becoming a fatal exception.
        let status = dispatch.call_with_return_value(
            (id, method.to_owned(), context_json(&ctx)).into(),
            ThreadsafeFunctionCallMode::NonBlocking,
            move |returned: Result<Nothing>, _| {
                if let Err(e) = returned {
                    finish_call(id, Some(format!("the JavaScript executor failed: {}", e.reason)), None);
                }
                Ok(())
            },
        );
        if status != Status::Ok {
            guard.0 = None;
            return Err(ExecutorError::new(format!("the JavaScript executor could not be called: {status}")));
        }
        let watch_cancel = method == "execute";
        let outcome = tokio::select! {
            r = outcome => r,
            // The task is being canceled (core sets CANCELED): not a failure of the agent.
            () = ctx.cancelled.cancelled(), if watch_cancel => return Ok(()),
            () = self.closed.cancelled() => {
                // Waits for JavaScript to have run the abort, so `close()` resolves after it.
                guard.0 = None;
                let _ = dispatch.call_async_catch((id, "abort".to_owned(), SERVER_CLOSED.to_owned()).into()).await;
                return Err(ExecutorError::new(SERVER_CLOSED));
            }
        };
        guard.0 = None;
        match outcome {
            Ok(None) => Ok(()),
            Ok(Some(e)) => Err(e),
            // Not reached: the sender stays in CALLS until this function's `Registered` drops.
            Err(_) => Err(ExecutorError::new("the JavaScript executor never finished")),
        }
    }
}

/// Ends call `callId`: `failure` is `null` when the executor finished, else its message, with
/// `errorName` when it threw an A2AError (a refusal of the request: core's
/// `ExecutorError::refusal`). A call that already ended is ignored.
#[napi_derive::napi]
pub fn finish_call(call_id: u32, failure: Option<String>, error_name: Option<String>) {
    let entry = calls().get(&call_id).cloned();
    if let Some(entry) = entry
        && let Some(settled) = entry.settled.lock().unwrap_or_else(|p| p.into_inner()).take()
    {
        let _ = settled.send(failure.map(|message| ExecutorError::from_host(error_name.as_deref(), message)));
    }
}

/// Extension-method calls waiting for [`finish_method`], by call id (the ids [`CALLS`] uses).
static METHODS: LazyLock<Mutex<HashMap<u32, oneshot::Sender<a2a_native::Result<serde_json::Value>>>>> =
    LazyLock::new(Mutex::default);

fn methods() -> std::sync::MutexGuard<'static, HashMap<u32, oneshot::Sender<a2a_native::Result<serde_json::Value>>>> {
    METHODS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Ends the extension-method call `callId`: its result as JSON, or the name of an A2A error
/// class (anything else is InternalError) and a message.
#[napi_derive::napi]
pub fn finish_method(call_id: u32, result_json: Option<String>, error: Option<String>, message: Option<String>) {
    let Some(tx) = methods().remove(&call_id) else { return };
    let outcome = match error {
        Some(name) => Err(A2AError::new(ErrorKind::from_host(&name), message.unwrap_or_default())),
        None => match result_json.as_deref() {
            None => Ok(serde_json::Value::Null),
            Some(json) => serde_json::from_str(json)
                .map_err(|e| A2AError::internal(format!("the method's result is not JSON: {e}"))),
        },
    };
    let _ = tx.send(outcome);
}

impl JsExecutor {
    /// `dispatch(callId, "method", view)`; the JS layer answers with [`finish_method`].
    async fn call_method(&self, call: a2a_native::methods::MethodCall) -> a2a_native::Result<serde_json::Value> {
        self.ask("method", call.view()).await
    }

    /// `dispatch(callId, kind, view)` for an extension method ("method") or a profile check
    /// ("check"); the JS layer answers with [`finish_method`].
    async fn ask(&self, kind: &str, view: serde_json::Value) -> a2a_native::Result<serde_json::Value> {
        let _running = self.calls.token();
        let closed = || A2AError::new(ErrorKind::Unavailable, "the server is closed");
        let dispatch = self.dispatch.read().unwrap_or_else(|p| p.into_inner()).clone().ok_or_else(closed)?;
        let (tx, rx) = oneshot::channel();
        let id = NEXT_CALL.fetch_add(1, Ordering::Relaxed);
        methods().insert(id, tx);
        // If this future is dropped before the answer (the client went away), the call is
        // forgotten and its handler's AbortSignal fired.
        struct Pending(u32, Arc<Dispatch>);
        impl Drop for Pending {
            fn drop(&mut self) {
                if methods().remove(&self.0).is_some() {
                    self.1.call_with_return_value(
                        (self.0, "abort".to_owned(), "the caller left".to_owned()).into(),
                        ThreadsafeFunctionCallMode::NonBlocking,
                        |_: Result<Nothing>, _| Ok(()),
                    );
                }
            }
        }
        let _pending = Pending(id, dispatch.clone());
        let status = dispatch.call_with_return_value(
            (id, kind.to_owned(), view.to_string()).into(),
            ThreadsafeFunctionCallMode::NonBlocking,
            move |returned: Result<Nothing>, _| {
                if let Err(e) = returned {
                    finish_method(id, None, Some("InternalError".into()), Some(e.reason));
                }
                Ok(())
            },
        );
        if status != Status::Ok {
            return Err(A2AError::internal(format!("the JavaScript handler could not be called: {status}")));
        }
        tokio::select! {
            r = rx => r.unwrap_or_else(|_| Err(A2AError::internal("the method's handler ended without an answer"))),
            () = self.closed.cancelled() => Err(closed()),
        }
    }
}

#[async_trait::async_trait]
impl core::AgentExecutor for JsExecutor {
    async fn execute(&self, ctx: RequestContext, events: core::EventSink) -> std::result::Result<(), ExecutorError> {
        self.run("execute", ctx, events).await
    }
    async fn cancel(&self, ctx: RequestContext, events: core::EventSink) -> std::result::Result<(), ExecutorError> {
        self.run("cancel", ctx, events).await
    }
    async fn call_method(&self, call: a2a_native::methods::MethodCall) -> a2a_native::Result<serde_json::Value> {
        JsExecutor::call_method(self, call).await
    }
    async fn check_message(&self, check: a2a_native::methods::MessageCheck) -> a2a_native::Result<()> {
        self.ask("check", check.view()).await.map(drop)
    }
}

/// The abort reason (and failure) of an execution the server's close stops.
const SERVER_CLOSED: &str = "the server closed";

/// The abort reason of an execution core dropped neither for a cancel nor for the server's
/// close: its time ran out (the JS layer makes it a `TimeoutError`, as `AbortSignal.timeout`).
const RAN_OUT: &str = "the execution ran past limits.executorTimeout";

/// Fires the call's AbortSignal unless it finished (a cancel, the server stopping, or core
/// dropping the work at its time limit), with a reason that says which.
struct AbortOnDrop<'a>(Option<(Arc<Dispatch>, u32)>, &'a std::sync::atomic::AtomicBool, CancellationToken);

impl Drop for AbortOnDrop<'_> {
    fn drop(&mut self) {
        if let Some((dispatch, id)) = self.0.take() {
            let (method, why) = if self.1.load(Ordering::Relaxed) {
                ("abort", SERVER_CLOSED)
            } else if self.2.is_cancelled() {
                ("abort", "")
            } else {
                ("timeout", RAN_OUT)
            };
            // With a return-value callback a throw is handed to it (and ignored), not raised.
            dispatch.call_with_return_value(
                (id, method.to_owned(), why.to_owned()).into(),
                ThreadsafeFunctionCallMode::NonBlocking,
                |_: Result<Nothing>, _| Ok(()),
            );
        }
    }
}

/// The context as the JS layer reads it (`JSON.parse`): core's view, written in one pass.
fn context_json(ctx: &RequestContext) -> String {
    serde_json::to_string(&ctx.view()).expect("the context serialises to JSON")
}

/// An agent message as the JS layer passes it (text, or Message JSON), for core to read.
fn agent_message(text: Option<String>, json: Option<String>) -> Result<Option<serde_json::Value>> {
    match (text, json) {
        (_, Some(json)) => serde_json::from_str(&json).map(Some).map_err(|e| errors::invalid("message", e.to_string())),
        (text, None) => Ok(text.map(serde_json::Value::String)),
    }
}

/// A status update for call `callId`: `state` and the message (text, or Message JSON) read
/// by core as in every language.
#[napi_derive::napi]
pub fn sink_status(call_id: u32, state: String, text: Option<String>, message_json: Option<String>) -> Result<bool> {
    let sink = &call(call_id)?.sink;
    let event =
        sink.sink().status_event_from_value(&state, agent_message(text, message_json)?).map_err(errors::to_js)?;
    sink.deliver(event).map_err(errors::to_js)
}

/// An artifact (Artifact JSON; core gives one without an id a fresh one), or with `append` more parts for an
/// earlier one with the same id.
#[napi_derive::napi]
pub fn sink_artifact(call_id: u32, artifact_json: String, append: bool, last_chunk: bool) -> Result<bool> {
    let sink = &call(call_id)?.sink;
    let artifact = serde_json::from_str(&artifact_json).map_err(|e| errors::invalid("artifact", e.to_string()))?;
    sink.deliver(sink.sink().artifact_event_from_value(artifact, append, last_chunk).map_err(errors::to_js)?)
        .map_err(errors::to_js)
}

/// A direct reply (text, or Message JSON) instead of a task.
#[napi_derive::napi]
pub fn sink_message(call_id: u32, text: Option<String>, message_json: Option<String>) -> Result<bool> {
    let sink = &call(call_id)?.sink;
    let message = agent_message(text, message_json)?
        .ok_or_else(|| errors::invalid("message", "a message needs text or a Message"))?;
    let message = sink.sink().agent_message_from_value(message).map_err(errors::to_js)?;
    sink.deliver(StreamResponse::Message(message)).map_err(errors::to_js)
}

/// Any event, as StreamResponse JSON.
#[napi_derive::napi]
pub fn sink_send(call_id: u32, event_json: String) -> Result<bool> {
    let sink = &call(call_id)?.sink;
    let event = sink.sink().event_from_value(models::value(&event_json)?).map_err(errors::to_js)?;
    sink.deliver(event).map_err(errors::to_js)
}

/// Marks an extension the client asked for (and the card declares) as activated for call
/// `callId`'s request; whether `uri` is one that can be.
#[napi_derive::napi]
pub fn sink_activate(call_id: u32, uri: String) -> Result<bool> {
    Ok(call(call_id)?.sink.sink().activate_extension(&uri))
}

/// Resolves once the events call `callId` queued while its sink was full are sent.
#[napi_derive::napi]
pub async fn sink_flush(call_id: u32) -> Result<()> {
    call(call_id)?.sink.flush().await.map_err(errors::to_js)
}
