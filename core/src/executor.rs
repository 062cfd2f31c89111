//! The seam an agent fills: [`AgentExecutor`] (execute / cancel) and the [`EventSink`] it
//! reports through. Same shape as the official SDKs' executors, so code moves over easily.
//!
//! The executor never touches the store or the wire. Every event it sends goes to the task
//! manager, which applies it through the state machine (one writer per task), persists it,
//! and fans it out to streams, blocking waiters and push notifications.

use crate::error::{A2AError, ErrorKind, Result};
use crate::model::{
    Artifact, Message, Part, Role, SendMessageConfiguration, StreamResponse, Struct, Task, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use async_trait::async_trait;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn closed() -> A2AError {
    A2AError::new(ErrorKind::UnsupportedOperation, "the task no longer accepts events")
}

/// An event after one that ended the task (a second `complete`), or after a direct reply:
/// refused, as a2a-sdk's TaskUpdater refuses it, rather than dropped without a word.
fn ended() -> A2AError {
    A2AError::new(
        ErrorKind::UnsupportedOperation,
        "the task already ended, or the agent answered with a message: no more events are taken",
    )
}

/// Whether `event` puts its task in a terminal state.
fn ends_task(event: &StreamResponse) -> bool {
    match event {
        StreamResponse::Task(t) => t.status.state.is_terminal(),
        StreamResponse::StatusUpdate(e) => e.status.state.is_terminal(),
        _ => false,
    }
}

/// What an executor returns when it cannot go on. The manager turns it into a FAILED status
/// carrying `message` (as an agent message), unless the task already ended; or, for a
/// [`refusal`](ExecutorError::refusal) before the task exists, into the request's error.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ExecutorError {
    pub message: String,
    /// The A2A error the executor refuses the request with (never InternalError). Raised before
    /// its first event, when no task exists yet, it is the caller's answer (a JSON-RPC error, an
    /// HTTP or gRPC status; a stream's error event) and no task is made, as a2a-sdk answers an
    /// executor's A2A error (@a2a-js/sdk fails the task): e.g. ContentTypeNotSupported for an
    /// input the agent does not read. Once the task exists, it fails the task like any error (its caller may already
    /// hold the task, and others may follow it).
    pub refusal: Option<Box<A2AError>>,
}

impl ExecutorError {
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into(), refusal: None }
    }

    /// The executor refuses the request with `error` (see [`ExecutorError::refusal`]'s field);
    /// an InternalError is a failure like any other.
    pub fn refusal(error: A2AError) -> Self {
        let message = error.message.clone();
        Self { message, refusal: (error.kind != ErrorKind::Internal).then(|| Box::new(error)) }
    }

    /// A host language's failure: `message`, and the name of the A2A error it raised when it
    /// raised one (`ContentTypeNotSupportedError`: a refusal; an unknown name is InternalError).
    pub fn from_host(error_name: Option<&str>, message: impl Into<String>) -> Self {
        match error_name {
            Some(name) => Self::refusal(A2AError::new(ErrorKind::from_host(name), message)),
            None => Self::new(message),
        }
    }
}

/// An A2A error met on the way (a sink's refusal, with `?`) fails the task with its message: it
/// is no refusal of the request (that is [`ExecutorError::refusal`]).
impl From<A2AError> for ExecutorError {
    fn from(e: A2AError) -> Self {
        Self::new(e.message)
    }
}

/// An agent: runs the work for a message, and stops it on request.
#[async_trait]
pub trait AgentExecutor: Send + Sync + 'static {
    /// Does the work asked by `ctx.message`, reporting through `events`. Returning closes the
    /// sink; an error becomes a FAILED status. When `ctx.cancelled` fires the task is already
    /// being canceled: stop promptly (the future is dropped soon after in any case).
    async fn execute(&self, ctx: RequestContext, events: EventSink) -> std::result::Result<(), ExecutorError>;

    /// Asked to cancel the task `ctx.task_id`. The running `execute` (if any) has been told
    /// through its `cancelled` token. The manager sets CANCELED afterwards whatever this does;
    /// the default does nothing more.
    async fn cancel(&self, ctx: RequestContext, events: EventSink) -> std::result::Result<(), ExecutorError> {
        let _ = (ctx, events);
        Ok(())
    }

    /// Answers an extension method the server's options declare ([`crate::methods`]): its
    /// result, or an error from the one table (sent as the binding sends any error). The
    /// default serves none.
    async fn call_method(&self, call: crate::methods::MethodCall) -> Result<serde_json::Value> {
        Err(A2AError::method_not_found(&call.method))
    }

    /// Checks an incoming message against the rules of a profile extension the server's
    /// options list (`profileChecks`), when the request activates it. An error refuses the
    /// message before any task is made (see [`crate::methods::profile_violation`]). The default
    /// accepts every message.
    async fn check_message(&self, check: crate::methods::MessageCheck) -> Result<()> {
        let _ = check;
        Ok(())
    }
}

/// Everything an executor knows about the call it serves.
#[derive(Debug, Clone)]
pub struct RequestContext {
    /// The task this work belongs to: existing, or the id a new task will get.
    pub task_id: String,
    pub context_id: String,
    /// The client's message (`None` for cancel).
    pub message: Option<Message>,
    /// The task this message continues, with the message already in its history (`None` for
    /// a new task; for cancel, the task being canceled).
    pub task: Option<Task>,
    pub configuration: Option<SendMessageConfiguration>,
    /// The request's metadata.
    pub metadata: Option<Struct>,
    pub tenant: String,
    /// The authenticated caller (`None` for an anonymous call). The task belongs to it.
    pub principal: Option<crate::auth::Principal>,
    /// Extension URIs the client asked for and the agent declares (the activated ones).
    pub extensions: Vec<String>,
    /// The ids of the card's skills the caller may use, in card order: skills without
    /// `securityRequirements`, and those whose requirements the caller's scopes meet. A message
    /// names no skill, so an agent with scoped skills picks among these.
    pub skills: Vec<String>,
    /// The W3C trace context this work continues: the execution span's when this process
    /// exports traces, else the caller's (`traceparent` / `tracestate` as received). An executor
    /// in another language gives it to its own OpenTelemetry, so its spans join the trace.
    pub trace: crate::trace_context::TraceParent,
    /// Fires when the task is canceled.
    pub cancelled: CancellationToken,
    /// The request's extension activation; the executor marks through its sink.
    pub activation: Activation,
}

impl RequestContext {
    /// The text of the client's message (empty if none).
    pub fn text(&self) -> String {
        self.message.as_ref().map(Message::text_content).unwrap_or_default()
    }

    /// What a host-language executor is given, as one JSON object (camelCase, models in their
    /// ProtoJSON form): the bindings hand this over instead of each building its own.
    pub fn view(&self) -> ContextView<'_> {
        ContextView {
            task_id: &self.task_id,
            context_id: &self.context_id,
            message: self.message.as_ref(),
            task: self.task.as_ref(),
            configuration: self.configuration.as_ref(),
            metadata: self.metadata.as_ref(),
            tenant: &self.tenant,
            principal: self.principal.as_ref().map(|p| PrincipalView { name: &p.name, scopes: &p.scopes }),
            extensions: &self.extensions,
            skills: &self.skills,
            trace_context: &self.trace,
        }
    }
}

/// [`RequestContext::view`]: every field but the cancellation token, which each binding turns
/// into its language's own signal.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextView<'a> {
    pub task_id: &'a str,
    pub context_id: &'a str,
    pub message: Option<&'a Message>,
    pub task: Option<&'a Task>,
    pub configuration: Option<&'a SendMessageConfiguration>,
    pub metadata: Option<&'a Struct>,
    pub tenant: &'a str,
    pub principal: Option<PrincipalView<'a>>,
    pub extensions: &'a [String],
    pub skills: &'a [String],
    pub trace_context: &'a crate::trace_context::TraceParent,
}

/// The caller in a [`ContextView`]: its name and granted scopes (never a credential).
#[derive(Debug, serde::Serialize)]
pub struct PrincipalView<'a> {
    pub name: &'a str,
    pub scopes: &'a [String],
}

/// An executor's handle for reporting events. Cheap to clone; every clone feeds the same
/// task. Sends fail with a typed error once the task has ended or the manager has closed it.
#[derive(Debug, Clone)]
pub struct EventSink {
    tx: mpsc::Sender<StreamResponse>,
    task_id: String,
    context_id: String,
    activation: Activation,
    /// An event that ends the task was sent (shared by the clones).
    ended: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// No event was sent yet to a task that does not exist yet: a Message now is the direct
    /// reply that answers the request instead of a task, and ends the execution too (shared).
    may_reply: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// An event was refused to the executor (shared): what it then raises is most likely that
    /// refusal passed on, a fault of the agent's, never the request's answer.
    refused: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Set by the task manager once the task is terminal, whoever ended it (a cancel, another
    /// message's turn): this execution's events would be dropped, so they are refused.
    task_ended: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl EventSink {
    pub(crate) fn new(tx: mpsc::Sender<StreamResponse>, task_id: String, context_id: String) -> Self {
        Self {
            tx,
            task_id,
            context_id,
            activation: Default::default(),
            ended: Default::default(),
            may_reply: Default::default(),
            refused: Default::default(),
            task_ended: None,
        }
    }

    /// Refuses events once `ended` is set (the task manager's mark of a terminal task).
    pub(crate) fn ended_with(mut self, ended: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Self {
        self.task_ended = Some(ended);
        self
    }

    /// Set once an event is refused to the executor (see `refused`).
    pub(crate) fn refusals(&self) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
        self.refused.clone()
    }

    /// For an execution whose task comes into being with its first event (a new task).
    pub(crate) fn for_new_task(self, new: bool) -> Self {
        self.may_reply.store(new, std::sync::atomic::Ordering::Release);
        self
    }

    /// Lets `event` through unless no task would take it (see [`EventSink::check`]) or an
    /// earlier one ended the task (or was a direct reply); an ending one is noted.
    fn admit(&self, event: &StreamResponse) -> Result<()> {
        use std::sync::atomic::Ordering;
        let admitted = self.admit_unnoted(event);
        if admitted.is_err() {
            self.refused.store(true, Ordering::Release);
        }
        admitted
    }

    fn admit_unnoted(&self, event: &StreamResponse) -> Result<()> {
        use std::sync::atomic::Ordering;
        self.check(event)?;
        if self.task_ended.as_ref().is_some_and(|e| e.load(Ordering::Acquire)) {
            return Err(ended());
        }
        let reply = self.may_reply.swap(false, Ordering::AcqRel) && matches!(event, StreamResponse::Message(_));
        let already = if ends_task(event) || reply {
            self.ended.swap(true, Ordering::AcqRel)
        } else {
            self.ended.load(Ordering::Acquire)
        };
        if already { Err(ended()) } else { Ok(()) }
    }

    /// Refuses, to the executor, an event naming another task and a status that is no state
    /// (UNSPECIFIED), as a2a-sdk refuses a task id that does not match. Passed on, the manager
    /// dropped such an event with only a warning in the log (except as a new task's first
    /// event, where a Task snapshot was given this task's id and a direct Message lost its task
    /// id), while the executor went on as if it had been sent: a terminal one even marked this
    /// sink ended, so the task stayed SUBMITTED, or ended FAILED for the next event.
    fn check(&self, event: &StreamResponse) -> Result<()> {
        let (task_id, state) = match event {
            StreamResponse::Task(t) => (&t.id, Some(t.status.state)),
            StreamResponse::Message(m) => (&m.task_id, None),
            StreamResponse::StatusUpdate(e) => (&e.task_id, Some(e.status.state)),
            StreamResponse::ArtifactUpdate(e) => (&e.task_id, None),
        };
        if !task_id.is_empty() && *task_id != self.task_id {
            return Err(A2AError::invalid_field(
                "taskId",
                format!("the event names task {task_id:?}, but this executor serves task {:?}", self.task_id),
            ));
        }
        if state == Some(TaskState::Unspecified) {
            return Err(A2AError::invalid_field("status.state", "TASK_STATE_UNSPECIFIED is not a state to report"));
        }
        Ok(())
    }

    /// Takes back [`EventSink::admit`]'s note for an event that was not sent after all. (An
    /// admitted event found `ended` unset: set now by a Message, that Message was the reply.)
    fn unadmit(&self, event: &StreamResponse) {
        use std::sync::atomic::Ordering;
        if ends_task(event) {
            self.ended.store(false, Ordering::Release);
        } else if matches!(event, StreamResponse::Message(_)) && self.ended.swap(false, Ordering::AcqRel) {
            self.may_reply.store(true, Ordering::Release);
        }
    }

    pub(crate) fn with_activation(mut self, activation: Activation) -> Self {
        self.activation = activation;
        self
    }

    /// Marks the extension `uri` activated for this request: it is echoed in the response's
    /// `A2A-Extensions` (a response whose headers are still to be sent: a blocking
    /// SendMessage's; a stream's headers leave before the executor runs). Only an extension
    /// the client asked for and the agent declares can be; whether `uri` is one.
    pub fn activate_extension(&self, uri: &str) -> bool {
        self.activation.activate(uri)
    }

    pub fn task_id(&self) -> &str {
        &self.task_id
    }
    pub fn context_id(&self) -> &str {
        &self.context_id
    }

    /// Sends any event. Ids left empty are filled in with this task's.
    pub async fn send(&self, event: StreamResponse) -> Result<()> {
        self.admit(&event)?;
        let event = self.fill_ids(event);
        self.tx.send(event).await.map_err(|_| closed())
    }

    /// Sends without waiting when there is room: `Ok(None)` when sent, `Ok(Some(event))` when
    /// the sink is full (send that with [`EventSink::send`]). Bindings use it so that a host
    /// language's `await events.…()` crosses back into its event loop only under backpressure.
    pub fn try_send(&self, event: StreamResponse) -> Result<Option<StreamResponse>> {
        self.admit(&event)?;
        match self.tx.try_send(self.fill_ids(event)) {
            Ok(()) => Ok(None),
            Err(mpsc::error::TrySendError::Full(event)) => {
                self.unadmit(&event);
                Ok(Some(event))
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Err(closed()),
        }
    }

    fn fill_ids(&self, mut event: StreamResponse) -> StreamResponse {
        let is_message = matches!(event, StreamResponse::Message(_));
        let (task_id, context_id) = match &mut event {
            StreamResponse::Task(t) => (&mut t.id, &mut t.context_id),
            StreamResponse::Message(m) => (&mut m.task_id, &mut m.context_id),
            StreamResponse::StatusUpdate(e) => (&mut e.task_id, &mut e.context_id),
            StreamResponse::ArtifactUpdate(e) => (&mut e.task_id, &mut e.context_id),
        };
        if task_id.is_empty() && !is_message {
            *task_id = self.task_id.clone();
        }
        if context_id.is_empty() {
            *context_id = self.context_id.clone();
        }
        event
    }

    /// A new status, with an optional agent message.
    pub async fn status(&self, state: TaskState, message: Option<Message>) -> Result<()> {
        self.send(self.status_event(state, message)).await
    }

    /// The event [`EventSink::status`] sends.
    pub fn status_event(&self, state: TaskState, message: Option<Message>) -> StreamResponse {
        let message = message.map(|m| self.own_message(m));
        let status = TaskStatus { message, ..TaskStatus::now(state) };
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            status,
            metadata: None,
        })
    }

    /// A status with an agent message of one text part.
    pub async fn status_text(&self, state: TaskState, text: impl Into<String>) -> Result<()> {
        self.status(state, Some(Message::text(Role::Agent, text))).await
    }

    pub async fn working(&self) -> Result<()> {
        self.status(TaskState::Working, None).await
    }
    pub async fn complete(&self, message: Option<Message>) -> Result<()> {
        self.status(TaskState::Completed, message).await
    }
    pub async fn fail(&self, message: Option<Message>) -> Result<()> {
        self.status(TaskState::Failed, message).await
    }
    pub async fn reject(&self, message: Option<Message>) -> Result<()> {
        self.status(TaskState::Rejected, message).await
    }
    pub async fn input_required(&self, message: Option<Message>) -> Result<()> {
        self.status(TaskState::InputRequired, message).await
    }
    pub async fn auth_required(&self, message: Option<Message>) -> Result<()> {
        self.status(TaskState::AuthRequired, message).await
    }
    pub async fn canceled(&self, message: Option<Message>) -> Result<()> {
        self.status(TaskState::Canceled, message).await
    }

    /// [`EventSink::status_event`] as a host language gives it: the state by core's one table
    /// of names ([`TaskState::from_short_name`]), the message as
    /// [`EventSink::agent_message_from_value`] reads it. InvalidParams naming what is wrong.
    pub fn status_event_from_value(&self, state: &str, message: Option<serde_json::Value>) -> Result<StreamResponse> {
        let state = TaskState::named(state)?;
        let message = message.map(|m| self.agent_message_from_value(m)).transpose()?;
        Ok(self.status_event(state, message))
    }

    /// Any event as a host language gives it (StreamResponse ProtoJSON), with the ids it leaves
    /// out (absent or empty) this task's, as [`EventSink::send`] fills them in, before it is
    /// read and checked as a request's would be.
    pub fn event_from_value(&self, mut value: serde_json::Value) -> Result<StreamResponse> {
        if let Some(obj) = value.as_object_mut() {
            for (kind, task_key) in [("task", "id"), ("statusUpdate", "taskId"), ("artifactUpdate", "taskId")] {
                if let Some(event) = obj.get_mut(kind) {
                    fill_missing(event, task_key, "task_id", || self.task_id.clone());
                    fill_missing(event, "contextId", "context_id", || self.context_id.clone());
                }
            }
            if let Some(message) = obj.get_mut("message") {
                fill_missing(message, "contextId", "context_id", || self.context_id.clone());
            }
        }
        crate::model::parse_value(value)
    }

    /// [`Self::event_from_value`] for an event a binding built field by field: its ids left
    /// empty are this task's, then it is checked as a request's would be.
    pub fn checked_event(&self, event: StreamResponse) -> Result<StreamResponse> {
        let event = self.fill_ids(event);
        crate::model::Validate::validate_at(&event, "")?;
        Ok(event)
    }

    /// An agent message as a host language gives it: a string is one agent text part; an
    /// object is a Message (ProtoJSON) whose missing `role` is the agent's and missing
    /// `messageId` a fresh one, checked as a request's message is. The same in every language.
    pub fn agent_message_from_value(&self, value: serde_json::Value) -> Result<Message> {
        let mut value = match value {
            serde_json::Value::String(text) => return Ok(self.own_message(Message::text(Role::Agent, text))),
            other => other,
        };
        if let Some(obj) = value.as_object_mut() {
            obj.entry("role").or_insert_with(|| "ROLE_AGENT".into());
        }
        fill_missing_id(&mut value, "messageId", "message_id");
        Ok(self.own_message(crate::model::parse_value_at(value, "message")?))
    }

    /// A new artifact, or (with `append`) more parts for an earlier one with the same id.
    pub async fn artifact(&self, artifact: Artifact, append: bool, last_chunk: bool) -> Result<()> {
        self.send(self.artifact_event(artifact, append, last_chunk)).await
    }

    /// [`EventSink::artifact_event`] of an artifact a host language gives as ProtoJSON: one
    /// without `artifactId` (or with an empty one) gets a fresh id before it is validated, so
    /// no binding fills ids itself.
    pub fn artifact_event_from_value(
        &self,
        mut artifact: serde_json::Value,
        append: bool,
        last_chunk: bool,
    ) -> Result<StreamResponse> {
        fill_missing_id(&mut artifact, "artifactId", "artifact_id");
        let artifact: Artifact = crate::model::parse_value_at(artifact, "artifact")?;
        Ok(self.artifact_event(artifact, append, last_chunk))
    }

    /// [`Self::artifact_event`] for an artifact a binding built field by field: checked as a
    /// request's would be, once an artifact without an id has its fresh one.
    pub fn checked_artifact_event(&self, artifact: Artifact, append: bool, last_chunk: bool) -> Result<StreamResponse> {
        let event = self.artifact_event(artifact, append, last_chunk);
        if let StreamResponse::ArtifactUpdate(update) = &event {
            crate::model::Validate::validate_at(&update.artifact, "artifact")?;
        }
        Ok(event)
    }

    /// The event [`EventSink::artifact`] sends.
    /// An artifact without an id gets a fresh one (in every language: the bindings leave it to
    /// this).
    pub fn artifact_event(&self, mut artifact: Artifact, append: bool, last_chunk: bool) -> StreamResponse {
        if artifact.artifact_id.is_empty() {
            artifact.artifact_id = crate::model::wire::id_text(uuid::Uuid::new_v4());
        }
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            artifact,
            append,
            last_chunk,
            metadata: None,
        })
    }

    /// A whole artifact made of `parts`, with a fresh id.
    pub async fn artifact_parts(&self, name: impl Into<String>, parts: Vec<Part>) -> Result<()> {
        let artifact = Artifact {
            artifact_id: crate::model::wire::id_text(uuid::Uuid::new_v4()),
            name: name.into(),
            description: String::new(),
            parts,
            metadata: None,
            extensions: Vec::new(),
        };
        self.artifact(artifact, false, true).await
    }

    /// A direct reply instead of a task. Only valid as the first and only event of a new
    /// task's work; later it is added to the task's history.
    pub async fn message(&self, message: Message) -> Result<()> {
        self.send(StreamResponse::Message(message)).await
    }

    /// Stamps an agent message with this task's ids.
    fn own_message(&self, mut m: Message) -> Message {
        if m.task_id.is_empty() {
            m.task_id = self.task_id.clone();
        }
        if m.context_id.is_empty() {
            m.context_id = self.context_id.clone();
        }
        m
    }
}

/// Gives a host's object without an id (`name`, or its snake_case `alias`; absent or empty) a
/// fresh UUID, before it is read and validated.
fn fill_missing_id(value: &mut serde_json::Value, name: &str, alias: &str) {
    fill_missing(value, name, alias, || crate::model::wire::id_text(uuid::Uuid::new_v4()));
}

/// Sets a host's object's string member `name` (or its snake_case `alias`) when it is absent,
/// null or empty (a value of another type is left for the reader to refuse).
fn fill_missing(value: &mut serde_json::Value, name: &str, alias: &str, text: impl FnOnce() -> String) {
    let missing = |v: Option<&serde_json::Value>| match v {
        None | Some(serde_json::Value::Null) => true,
        Some(serde_json::Value::String(s)) => s.is_empty(),
        Some(_) => false,
    };
    if let Some(obj) = value.as_object_mut()
        && missing(obj.get(name))
        && !obj.contains_key(alias)
    {
        obj.insert(name.into(), text().into());
    }
}

/// How long a host crossing stays awake instead of sleeping: the worker waiting for a host's
/// answer ([`spin_then_await`]), and a host's loop looking for its next job.
pub const HOST_SPIN: std::time::Duration = std::time::Duration::from_micros(150);

/// Awaits `rx`, the answer of a host language's thread (Python's event loop), first re-polling
/// it for up to [`HOST_SPIN`] between the worker's other tasks (`yield_now`) instead of letting
/// an idle worker sleep. A sleeping worker costs a wake-up on the host's answer, and on a
/// virtual machine that is tens of microseconds, as long as a short executor's whole run; a
/// busy worker loses nothing, as its other tasks run in between. A slower host (an agent that
/// awaits a model) is then awaited as usual. `None`: the host dropped its end unanswered.
pub async fn spin_then_await<T>(rx: &mut tokio::sync::oneshot::Receiver<T>) -> Option<T> {
    use tokio::sync::oneshot::error::TryRecvError;
    // One waiter spins at a time: under load the worker has other work anyway, and many
    // spinners would each cost a turn of the scheduler.
    let spinning = Spinner::claim();
    let until = std::time::Instant::now() + if spinning.is_some() { HOST_SPIN } else { std::time::Duration::ZERO };
    loop {
        match rx.try_recv() {
            Ok(value) => return Some(value),
            Err(TryRecvError::Closed) => return None,
            Err(TryRecvError::Empty) if std::time::Instant::now() < until => tokio::task::yield_now().await,
            Err(TryRecvError::Empty) => {
                drop(spinning);
                return rx.await.ok();
            }
        }
    }
}

/// The one waiter of [`spin_then_await`] in the process that may spin, released when it stops
/// (or is dropped, as when the wait is canceled).
struct Spinner;

static SPINNER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl Spinner {
    fn claim() -> Option<Spinner> {
        use std::sync::atomic::Ordering;
        SPINNER.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok().then_some(Spinner)
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        SPINNER.store(false, std::sync::atomic::Ordering::Release);
    }
}

/// [`EventSink`] for a host language whose calls cannot each wait for room (a JavaScript
/// function, a Python method that returns an awaitable only when it must): [`QueuedSink::deliver`]
/// sends at once when the sink has room, and otherwise queues the event (in order) and returns
/// `false`; the host then awaits [`QueuedSink::flush`] (the backpressure). A round trip through
/// the runtime costs far more than the send, so the common case makes none.
pub struct QueuedSink {
    sink: EventSink,
    backlog: std::sync::Mutex<Backlog>,
    turn: tokio::sync::Mutex<()>,
}

/// Events that found the sink full, waiting for a flush (in order).
#[derive(Default)]
struct Backlog {
    queue: std::collections::VecDeque<StreamResponse>,
    flushing: bool,
    /// The task takes no more events: every later deliver and flush says so.
    closed: bool,
}

impl QueuedSink {
    pub fn new(sink: EventSink) -> Self {
        Self { sink, backlog: Default::default(), turn: tokio::sync::Mutex::new(()) }
    }

    /// The sink the events go to (its ids, its event builders).
    pub fn sink(&self) -> &EventSink {
        &self.sink
    }

    fn backlog(&self) -> std::sync::MutexGuard<'_, Backlog> {
        self.backlog.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends `event` now (`true`) or queues it behind the ones already waiting (`false`: await
    /// [`QueuedSink::flush`]). Errs when the task takes no more events.
    pub fn deliver(&self, event: StreamResponse) -> Result<bool> {
        let mut backlog = self.backlog();
        if backlog.closed {
            return Err(closed());
        }
        let event = if backlog.queue.is_empty() && !backlog.flushing {
            match self.sink.try_send(event)? {
                None => return Ok(true),
                Some(event) => event,
            }
        } else {
            event
        };
        // Queued events are sent by `flush`, past `EventSink::send`: admitted here, in order.
        self.sink.admit(&event)?;
        backlog.queue.push_back(event);
        Ok(false)
    }

    /// Sends the queued events in order, waiting for room. One flush at a time sends (the
    /// others wait for their turn and find their events sent). Cancel-safe: an event leaves
    /// the queue only once the sink has room for it, so a flush dropped while it waits (a host
    /// awaitable cancelled) loses nothing.
    pub async fn flush(&self) -> Result<()> {
        let _turn = self.turn.lock().await;
        loop {
            {
                let mut backlog = self.backlog();
                if backlog.closed {
                    return Err(closed());
                }
                backlog.flushing = !backlog.queue.is_empty();
                if backlog.queue.is_empty() {
                    return Ok(());
                }
            }
            let Ok(room) = self.sink.tx.reserve().await else {
                let mut backlog = self.backlog();
                backlog.queue.clear();
                backlog.flushing = false;
                backlog.closed = true;
                return Err(closed());
            };
            // Only this flush (it holds the turn) takes from the queue: the front is still there.
            if let Some(event) = self.backlog().queue.pop_front() {
                room.send(self.sink.fill_ids(event));
            }
        }
    }
}

/// The extensions activated for one request, echoed in its response's `A2A-Extensions`: those
/// the server requires (and the client listed), the one whose method was called, and those the
/// executor marks ([`EventSink::activate_extension`]) among the ones the client
/// asked for and the agent declares. Shared by the clones of one request's context.
#[derive(Debug, Clone, Default)]
pub struct Activation {
    offered: std::sync::Arc<[String]>,
    active: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Activation {
    /// `offered`: the requested extensions the agent declares (the executor may activate these).
    pub fn new(offered: Vec<String>) -> Self {
        Self { offered: offered.into(), active: Default::default() }
    }

    /// The extensions the executor may activate.
    pub fn offered(&self) -> &[String] {
        &self.offered
    }

    /// Activates `uri` if it is offered; whether it is (now) active.
    pub fn activate(&self, uri: &str) -> bool {
        if !self.offered.iter().any(|o| o == uri) {
            return false;
        }
        self.force(uri);
        true
    }

    /// Activates `uri` by the server's own decision (a required extension, a method's).
    pub fn force(&self, uri: &str) {
        let mut active = self.active.lock().unwrap_or_else(|p| p.into_inner());
        if !active.iter().any(|a| a == uri) {
            active.push(uri.to_owned());
        }
    }

    /// The active extensions, in activation order.
    pub fn active(&self) -> Vec<String> {
        self.active.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    /// After the event that ends the task, every way of sending refuses the next one (a second
    /// `complete`), on every clone; a full sink's `try_send` does not count as sent.
    #[tokio::test(flavor = "current_thread")]
    async fn events_after_the_one_that_ends_the_task_are_refused() {
        let (tx, mut rx) = mpsc::channel(1);
        let sink = EventSink::new(tx, "t".into(), "c".into());
        sink.send(sink.status_event(TaskState::Working, None)).await.unwrap();
        // Full: the ending event is handed back, not admitted; sent later, it ends the task.
        let done = sink.status_event(TaskState::Completed, None);
        let back = sink.try_send(done).unwrap().expect("the sink is full");
        rx.recv().await.unwrap();
        sink.clone().send(back).await.unwrap();
        for again in [sink.status_event(TaskState::Completed, None), sink.status_event(TaskState::Working, None)] {
            let e = sink.send(again.clone()).await.unwrap_err();
            assert_eq!(e.kind, ErrorKind::UnsupportedOperation);
            assert!(e.message.contains("already ended"), "{e}");
            assert!(sink.clone().try_send(again.clone()).is_err());
            assert!(QueuedSink::new(sink.clone()).deliver(again).is_err());
        }
    }

    /// A new task's first event that is a Message is the direct reply, which answers the request
    /// instead of a task: every event after it is refused (it was dropped by the manager with a
    /// warning only, while the executor's `complete()` resolved as if sent). On a task that
    /// exists, or after another event, a Message is one more message of the task.
    #[tokio::test(flavor = "current_thread")]
    async fn events_after_a_direct_reply_are_refused() {
        let reply = || StreamResponse::Message(Message::text(Role::Agent, "hello"));
        let (tx, _rx) = mpsc::channel(8);
        let sink = EventSink::new(tx, "t".into(), "c".into()).for_new_task(true);
        assert!(sink.try_send(reply()).unwrap().is_none());
        for after in [sink.status_event(TaskState::Completed, None), reply()] {
            let e = sink.clone().send(after.clone()).await.unwrap_err();
            assert_eq!(e.kind, ErrorKind::UnsupportedOperation);
            assert!(e.message.contains("answered with a message"), "{e}");
            assert!(QueuedSink::new(sink.clone()).deliver(after).is_err());
        }
        // A message of a task that exists, or after the task's first event, ends nothing.
        for new_task in [false, true] {
            let (tx, _rx) = mpsc::channel(8);
            let sink = EventSink::new(tx, "t".into(), "c".into()).for_new_task(new_task);
            if new_task {
                sink.send(sink.status_event(TaskState::Working, None)).await.unwrap();
            }
            sink.send(reply()).await.unwrap();
            sink.send(sink.status_event(TaskState::Completed, None)).await.unwrap();
        }
    }

    /// An event naming another task, or the UNSPECIFIED state, is refused to the executor by
    /// every way of sending, as InvalidParams, and does not end the sink: the right events go on.
    #[tokio::test(flavor = "current_thread")]
    async fn events_no_task_would_take_are_refused_to_the_executor() {
        let (tx, mut rx) = mpsc::channel(8);
        let sink = EventSink::new(tx, "t".into(), "c".into());
        let mut other = sink.status_event(TaskState::Completed, None);
        if let StreamResponse::StatusUpdate(e) = &mut other {
            e.task_id = "stale".into();
        }
        let mut message = Message::text(Role::Agent, "hi");
        message.task_id = "stale".into();
        let mut artifact = sink.artifact_event(
            Artifact {
                artifact_id: "a".into(),
                name: String::new(),
                description: String::new(),
                parts: vec![Part::text("x")],
                metadata: None,
                extensions: Vec::new(),
            },
            false,
            true,
        );
        if let StreamResponse::ArtifactUpdate(e) = &mut artifact {
            e.task_id = "stale".into();
        }
        let refused =
            [other, StreamResponse::Message(message), artifact, sink.status_event(TaskState::Unspecified, None)];
        for event in refused {
            let e = sink.send(event.clone()).await.unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidParams, "{e}");
            assert!(e.message.contains("stale") || e.message.contains("UNSPECIFIED"), "{e}");
            assert!(sink.try_send(event.clone()).is_err());
            assert!(QueuedSink::new(sink.clone()).deliver(event).is_err());
        }
        assert!(rx.try_recv().is_err(), "nothing refused reached the manager");
        // Not ended by the refused COMPLETED: the task's own events still go.
        sink.complete(None).await.unwrap();
        assert!(matches!(rx.recv().await, Some(StreamResponse::StatusUpdate(e)) if e.task_id == "t"));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn spin_then_await_gets_an_answer_given_before_during_or_after_the_spin() {
        use tokio::sync::oneshot;
        // Before: at once.
        let (tx, mut rx) = oneshot::channel();
        tx.send(1).unwrap();
        assert_eq!(spin_then_await(&mut rx).await, Some(1));
        // During: another task on the same (one) thread answers while the spin yields to it.
        let (tx, mut rx) = oneshot::channel();
        tokio::spawn(async move { tx.send(2).unwrap() });
        assert_eq!(spin_then_await(&mut rx).await, Some(2));
        // After: long past the spin, the answer is awaited as usual.
        let (tx, mut rx) = oneshot::channel();
        tokio::spawn(async move {
            tokio::time::sleep(HOST_SPIN * 20).await;
            tx.send(3).unwrap()
        });
        assert_eq!(spin_then_await(&mut rx).await, Some(3));
        // A host that drops its end: an error, during the spin or after it.
        let (tx, mut rx) = oneshot::channel::<u8>();
        drop(tx);
        assert_eq!(spin_then_await(&mut rx).await, None);
        let (tx, mut rx) = oneshot::channel::<u8>();
        tokio::spawn(async move {
            tokio::time::sleep(HOST_SPIN * 20).await;
            drop(tx)
        });
        assert_eq!(spin_then_await(&mut rx).await, None);
    }

    #[test]
    fn a_host_artifact_without_an_id_gets_one_and_a_bad_one_is_refused() {
        let (tx, _rx) = mpsc::channel(1);
        let sink = EventSink::new(tx, "t".into(), "c".into());
        let id_of = |v| match sink.artifact_event_from_value(v, false, true).unwrap() {
            StreamResponse::ArtifactUpdate(e) => e.artifact.artifact_id,
            other => panic!("{other:?}"),
        };
        let fresh = id_of(json!({"parts": [{"text": "x"}]}));
        assert_eq!(uuid::Uuid::parse_str(&fresh).map(|u| u.get_version_num()), Ok(4));
        assert_ne!(id_of(json!({"artifactId": "", "parts": [{"text": "x"}]})), "");
        assert_eq!(id_of(json!({"artifactId": "a1", "parts": [{"text": "x"}]})), "a1");
        let err = sink.artifact_event_from_value(json!({"parts": []}), false, true).unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidParams);
        assert!(err.violations[0].field.starts_with("artifact.parts"), "{err:?}");

        // The same for an artifact a binding built field by field.
        let built = |id: &str, parts| Artifact {
            artifact_id: id.into(),
            name: String::new(),
            description: String::new(),
            parts,
            metadata: None,
            extensions: Vec::new(),
        };
        match sink.checked_artifact_event(built("", vec![Part::text("x")]), true, false).unwrap() {
            StreamResponse::ArtifactUpdate(e) => {
                assert!(uuid::Uuid::parse_str(&e.artifact.artifact_id).is_ok());
                assert!(e.append && !e.last_chunk);
            }
            other => panic!("{other:?}"),
        }
        let err = sink.checked_artifact_event(built("a", Vec::new()), false, true).unwrap_err();
        assert_eq!((err.kind, err.violations[0].field.as_str()), (ErrorKind::InvalidParams, "artifact.parts"));
    }

    #[tokio::test]
    async fn a_queued_sink_keeps_the_order_when_the_sink_is_full() {
        let (tx, mut rx) = mpsc::channel(2);
        let queued = Arc::new(QueuedSink::new(EventSink::new(tx, "t".into(), "c".into())));
        let text =
            |n: usize| queued.sink().status_event(TaskState::Working, Some(Message::text(Role::Agent, n.to_string())));
        let sent: Vec<bool> = (0..6).map(|n| queued.deliver(text(n)).unwrap()).collect();
        assert_eq!(sent, [true, true, false, false, false, false], "two fit, the rest wait in order");
        // A reader that takes the events as room is made, while the host flushes.
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            while got.len() < 7 {
                got.push(rx.recv().await.unwrap());
            }
            (got, rx)
        });
        queued.flush().await.unwrap();
        // Delivered after the flush: sent now or queued, never ahead of what was queued before.
        if !queued.deliver(text(6)).unwrap() {
            queued.flush().await.unwrap();
        }
        let (got, rx) = reader.await.unwrap();
        let texts: Vec<String> = got
            .iter()
            .map(|e| match e {
                StreamResponse::StatusUpdate(u) => u.status.message.as_ref().unwrap().text_content(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(texts, ["0", "1", "2", "3", "4", "5", "6"]);
        drop(rx);
        assert!(queued.deliver(text(7)).is_err(), "a closed sink refuses");
        assert!(queued.flush().await.is_ok(), "nothing was queued");

        // A flush dropped while it waits for room loses nothing; once the task takes no more
        // events, every later deliver and flush says so.
        let (tx, mut rx) = mpsc::channel(1);
        let queued = QueuedSink::new(EventSink::new(tx, "t".into(), "c".into()));
        let event = || queued.sink().status_event(TaskState::Working, None);
        assert!(queued.deliver(event()).unwrap());
        assert!(!queued.deliver(event()).unwrap());
        let waited = tokio::time::timeout(std::time::Duration::from_millis(20), queued.flush()).await;
        assert!(waited.is_err(), "no room: the flush waits");
        rx.recv().await.unwrap();
        queued.flush().await.unwrap();
        assert!(rx.try_recv().is_ok(), "the queued event survived the dropped flush");
        assert!(queued.deliver(event()).unwrap());
        assert!(!queued.deliver(event()).unwrap(), "full again: queued");
        drop(rx);
        assert!(queued.flush().await.is_err(), "the queued event cannot go");
        assert!(queued.flush().await.is_err() && queued.deliver(event()).is_err(), "and it stays so");
    }

    #[test]
    fn a_host_message_or_status_reads_alike_in_every_language() {
        let (tx, _rx) = mpsc::channel(1);
        let sink = EventSink::new(tx, "t".into(), "c".into());
        let text = sink.agent_message_from_value(json!("hello")).unwrap();
        assert_eq!((text.role, text.text_content().as_str()), (Role::Agent, "hello"));
        assert_eq!((text.task_id.as_str(), text.context_id.as_str()), ("t", "c"));
        // A bare Message object: the agent's, with a fresh id.
        let bare = sink.agent_message_from_value(json!({"parts": [{"text": "x"}]})).unwrap();
        assert_eq!(bare.role, Role::Agent);
        assert!(uuid::Uuid::parse_str(&bare.message_id).is_ok(), "{bare:?}");
        let given = json!({"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "x"}]});
        let given = sink.agent_message_from_value(given).unwrap();
        assert_eq!((given.role, given.message_id.as_str()), (Role::User, "m1"));
        for bad in [json!({"parts": []}), json!(5), json!({"parts": [{"text": "x"}], "role": "ROLE_BOSS"})] {
            let err = sink.agent_message_from_value(bad.clone()).unwrap_err();
            assert_eq!(err.kind, ErrorKind::InvalidParams, "{bad}: {err:?}");
        }
        match sink.status_event_from_value("input-required", Some(json!("more?"))).unwrap() {
            StreamResponse::StatusUpdate(e) => {
                assert_eq!(e.status.state, TaskState::InputRequired);
                assert_eq!(e.status.message.unwrap().text_content(), "more?");
            }
            other => panic!("{other:?}"),
        }
        let err = sink.status_event_from_value("finished", None).unwrap_err();
        assert_eq!((err.kind, err.violations[0].field.as_str()), (ErrorKind::InvalidParams, "state"));
    }

    #[test]
    fn a_host_event_gets_the_ids_it_leaves_out() {
        let (tx, _rx) = mpsc::channel(1);
        let sink = EventSink::new(tx, "t".into(), "c".into());
        let status = json!({"statusUpdate": {"status": {"state": "TASK_STATE_COMPLETED"}}});
        match sink.event_from_value(status).unwrap() {
            StreamResponse::StatusUpdate(e) => assert_eq!((e.task_id.as_str(), e.context_id.as_str()), ("t", "c")),
            other => panic!("{other:?}"),
        }
        let artifact =
            json!({"artifactUpdate": {"taskId": "", "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}});
        match sink.event_from_value(artifact).unwrap() {
            StreamResponse::ArtifactUpdate(e) => assert_eq!((e.task_id.as_str(), e.context_id.as_str()), ("t", "c")),
            other => panic!("{other:?}"),
        }
        let task = json!({"task": {"status": {"state": "TASK_STATE_WORKING"}}});
        assert!(
            matches!(sink.event_from_value(task).unwrap(), StreamResponse::Task(t) if t.id == "t" && t.context_id == "c")
        );
        // A message gets the context only (a direct reply has no task); ids given stay.
        let message = json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}], "context_id": "mine"}});
        assert!(
            matches!(sink.event_from_value(message).unwrap(), StreamResponse::Message(m) if m.task_id.is_empty() && m.context_id == "mine")
        );
        // What is still wrong is named as in a request.
        let err = sink.event_from_value(json!({"statusUpdate": {}})).unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidParams);
        assert!(err.to_string().contains("status"), "{err}");
    }

    #[test]
    fn the_view_a_binding_hands_over_is_the_context_in_json_without_credentials() {
        let ctx = RequestContext {
            task_id: "t".into(),
            context_id: "c".into(),
            message: Some(Message::text(crate::model::Role::User, "hi")),
            task: None,
            configuration: None,
            metadata: None,
            tenant: "acme".into(),
            principal: Some(crate::auth::Principal::named("ada", vec!["read".into()])),
            extensions: vec!["https://ext".into()],
            skills: vec!["echo".into()],
            trace: crate::trace_context::TraceParent { traceparent: Some("00-ab-cd-01".into()), ..Default::default() },
            cancelled: CancellationToken::new(),
            activation: Default::default(),
        };
        let view = crate::model::to_value(&ctx.view());
        assert_eq!(view["taskId"], "t");
        assert_eq!(view["contextId"], "c");
        assert_eq!(view["message"]["parts"][0]["text"], "hi");
        assert_eq!(view["task"], json!(null));
        assert_eq!(view["tenant"], "acme");
        assert_eq!(view["principal"], json!({"name": "ada", "scopes": ["read"]}));
        assert_eq!((&view["extensions"], &view["skills"]), (&json!(["https://ext"]), &json!(["echo"])));
        assert_eq!(view["traceContext"], json!({"traceparent": "00-ab-cd-01"}));
        assert_eq!(view.as_object().unwrap().len(), 11, "{view}");
    }

    #[test]
    fn an_artifact_without_an_id_gets_a_fresh_one() {
        let (tx, _rx) = mpsc::channel(4);
        let sink = EventSink::new(tx, "t".into(), "c".into());
        let artifact = |id: &str| Artifact {
            artifact_id: id.into(),
            name: String::new(),
            description: String::new(),
            parts: vec![Part::text("x")],
            metadata: None,
            extensions: Vec::new(),
        };
        let ids: Vec<String> = [artifact(""), artifact(""), artifact("mine")]
            .into_iter()
            .map(|a| match sink.artifact_event(a, false, false) {
                StreamResponse::ArtifactUpdate(e) => e.artifact.artifact_id,
                other => panic!("{other:?}"),
            })
            .collect();
        assert!(!ids[0].is_empty() && ids[0] != ids[1], "{ids:?}");
        assert_eq!(ids[2], "mine");
    }
}
