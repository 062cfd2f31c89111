//! Runs executors and applies their events: one writer per task.
//!
//! Each execution runs in its own tokio task, so a client that disconnects never stops the
//! work and never loses the terminal state. Its events arrive on a channel and are applied
//! in order under the task's lock: checked against the state machine, persisted, then
//! published on the task's bus (streams, blocking waiters) and queued for push delivery.
//! Cancel fires the task's token (the executor sees it, and its future is dropped), asks the
//! executor's `cancel`, and sets CANCELED; anything the agent sends afterwards is refused by
//! the state machine, because terminal states are final.

use super::events::{BusItem, Key, LiveGuard, Registry, Slot};
use super::state;
use crate::error::{A2AError, ErrorKind, Result};
use crate::executor::{AgentExecutor, EventSink, ExecutorError, RequestContext};
use crate::model::{
    self, Message, Role, SendMessageRequest, SendMessageResponse, StreamResponse, Struct, Task, TaskState, TaskStatus,
};
use crate::push::PushSender;
use crate::server::config::{Limits, ServerConfig};
use crate::server::handler::{CallContext, EventStream, Stores};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// Events an executor may have in flight before `send` waits (backpressure on the agent).
const SINK_CAPACITY: usize = 64;
/// Events a stream may have buffered towards a slow client before it waits on the bus.
const STREAM_CAPACITY: usize = 64;
/// How long the executor's `cancel` may take before CANCELED is set regardless.
const CANCEL_GRACE: Duration = Duration::from_secs(5);
/// Ids of executions (one per message), so a waiter stops at its own execution's end only.
static NEXT_EXECUTION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What SendMessage produced.
pub enum Sent {
    Reply(Box<SendMessageResponse>),
    Stream(EventStream),
}

/// Runs the agent for every task of one server.
pub struct TaskManager {
    inner: Arc<Inner>,
}

struct Inner {
    agent: Arc<dyn AgentExecutor>,
    stores: Stores,
    limits: Limits,
    push: Option<PushSender>,
    live: Registry,
    /// Fired at shutdown: open streams end cleanly.
    shutdown: CancellationToken,
}

fn key(tenant: &str, id: &str) -> Key {
    (tenant.to_owned(), id.to_owned())
}

impl TaskManager {
    /// `push_enabled`: the card declares push notifications (configs are then delivered).
    pub fn new(agent: Arc<dyn AgentExecutor>, stores: Stores, config: &ServerConfig, push_enabled: bool) -> Self {
        let push = push_enabled.then(|| PushSender::new(config.push.clone()));
        let inner = Inner {
            agent,
            stores,
            limits: config.limits.clone(),
            push,
            live: Registry::default(),
            shutdown: CancellationToken::new(),
        };
        Self { inner: Arc::new(inner) }
    }

    /// The push sender, when push is enabled (to check webhook URLs at config creation).
    pub fn push_sender(&self) -> Option<&PushSender> {
        self.inner.push.as_ref()
    }

    /// Tasks currently held in memory (running, streamed or awaited).
    pub fn live_tasks(&self) -> usize {
        self.inner.live.len()
    }

    /// SendMessage / SendStreamingMessage (spec §2.2). `streaming` picks the reply shape.
    /// `partition` is the store partition (see [`CallContext::partition`]); the executor sees
    /// the request's own tenant.
    pub async fn send(&self, call: &CallContext, partition: &str, req: SendMessageRequest, streaming: bool) -> Result<Sent> {
        let inner = &self.inner;
        let tenant = partition.to_owned();
        let mut message = req.message.clone();
        // Refuse a bad webhook before anything changes.
        let push_config = req.configuration.as_ref().and_then(|c| c.task_push_notification_config.clone());
        if let Some(config) = &push_config {
            let push = inner.push.as_ref().ok_or_else(|| A2AError::of(ErrorKind::PushNotificationNotSupported))?;
            push.check_url(&config.url, "configuration.taskPushNotificationConfig.url")?;
        }
        let (guard, prior) = if message.task_id.is_empty() {
            let id = uuid::Uuid::new_v4().to_string();
            if message.context_id.is_empty() {
                message.context_id = uuid::Uuid::new_v4().to_string();
            }
            message.task_id = id.clone();
            let guard = inner.live.acquire(key(&tenant, &id));
            guard.slot.lock().await.loaded = true;
            (guard, None)
        } else {
            let guard = inner.live.acquire(key(&tenant, &message.task_id));
            let mut slot = guard.slot.lock().await;
            inner.load(&guard.key, &mut slot).await?;
            let task = slot.task.as_mut().ok_or_else(|| A2AError::task_not_found(&message.task_id))?;
            state::check_message_for_task(task, &message)?;
            message.context_id = task.context_id.clone();
            // Keep history in turn order: the agent's question comes before the answer.
            if let Some(question) = task.status.message.take() {
                task.history.push(question);
            }
            task.history.push(message.clone());
            inner.stores.tasks.save(&tenant, task).await?;
            let prior = task.clone();
            drop(slot);
            (guard, Some(prior))
        };
        let (task_id, context_id) = (message.task_id.clone(), message.context_id.clone());

        if let Some(mut config) = push_config {
            config.task_id = task_id.clone();
            inner.stores.push.create(&tenant, config).await?;
        }
        let stream_slot = if streaming { Some(inner.open_stream(&guard)?) } else { None };

        // Subscribe before the agent starts, so no event can be missed.
        let rx = guard.bus.subscribe();
        let ctx = RequestContext {
            task_id,
            context_id,
            message: Some(message.clone()),
            task: prior.clone(),
            configuration: req.configuration.clone(),
            metadata: req.metadata.clone(),
            tenant: req.tenant.clone(),
            principal: call.principal.clone(),
            extensions: call.extensions.clone(),
            skills: call.skills.clone(),
            cancelled: guard.cancel.child_token(),
        };
        let execution = NEXT_EXECUTION.fetch_add(1, Ordering::Relaxed);
        inner.clone().spawn_execution(guard.share(), ctx, message, execution);

        if streaming {
            let first = prior.map(|t| StreamResponse::Task(inner.capped(t, None)));
            return Ok(Sent::Stream(inner.clone().stream(guard, rx, first, stream_slot, Some(execution))));
        }
        inner
            .wait(&guard, rx, execution, req.return_immediately(), req.history_length())
            .await
            .map(|r| Sent::Reply(Box::new(r)))
    }

    /// CancelTask: stops the executor and ends the task CANCELED. Any terminal task, CANCELED
    /// included, gives TaskNotCancelable (the spec's error table says "already completed,
    /// failed, or canceled"; the official SDKs and the TCK agree): a repeat is idempotent in
    /// effect, the task stays CANCELED, and the caller learns it was already over.
    pub async fn cancel(
        &self,
        call: &CallContext,
        partition: &str,
        tenant: &str,
        id: &str,
        metadata: Option<Struct>,
    ) -> Result<Task> {
        let inner = &self.inner;
        let guard = inner.live.acquire(key(partition, id));
        let snapshot = {
            let mut slot = guard.slot.lock().await;
            inner.load(&guard.key, &mut slot).await?;
            let task = slot.task.as_ref().ok_or_else(|| A2AError::task_not_found(id))?;
            state::check_cancel(task)?;
            task.clone()
        };
        guard.cancel.cancel();

        let (tx, rx) = mpsc::channel(SINK_CAPACITY);
        let sink = EventSink::new(tx, snapshot.id.clone(), snapshot.context_id.clone());
        let ctx = RequestContext {
            task_id: snapshot.id.clone(),
            context_id: snapshot.context_id.clone(),
            message: None,
            task: Some(snapshot.clone()),
            configuration: None,
            metadata,
            tenant: tenant.to_owned(),
            principal: call.principal.clone(),
            extensions: call.extensions.clone(),
            skills: call.skills.clone(),
            cancelled: guard.cancel.clone(),
        };
        let agent = inner.agent.clone();
        let agent_cancel = async move { agent.cancel(ctx, sink).await };
        let outcome = tokio::time::timeout(CANCEL_GRACE, inner.drive(&guard, Box::pin(agent_cancel), rx, None)).await;
        if !matches!(outcome, Ok(Ok(()))) {
            tracing::warn!(task_id = id, "executor cancel failed or timed out; canceling anyway");
        }

        let mut slot = guard.slot.lock().await;
        let task = slot.task.as_ref().ok_or_else(|| A2AError::task_not_found(id))?;
        if !task.status.state.is_terminal() {
            let status = StreamResponse::StatusUpdate(model::TaskStatusUpdateEvent {
                task_id: task.id.clone(),
                context_id: task.context_id.clone(),
                status: TaskStatus::now(TaskState::Canceled),
                metadata: None,
            });
            inner.apply_locked(&guard, &mut slot, status, None).await;
        }
        let task = slot.task.clone().ok_or_else(|| A2AError::task_not_found(id))?;
        if task.status.state != TaskState::Canceled {
            // The agent finished first (its terminal event won the lock): not cancelable.
            return Err(A2AError::task_not_cancelable(id, task.status.state.as_str()));
        }
        Ok(inner.capped(task, None))
    }

    /// SubscribeToTask: the current Task first, then every live event until the task ends.
    pub async fn subscribe(&self, tenant: &str, id: &str) -> Result<EventStream> {
        let inner = &self.inner;
        let guard = inner.live.acquire(key(tenant, id));
        let (rx, snapshot) = {
            let mut slot = guard.slot.lock().await;
            inner.load(&guard.key, &mut slot).await?;
            let task = slot.task.as_ref().ok_or_else(|| A2AError::task_not_found(id))?;
            state::check_subscribe(task)?;
            (guard.bus.subscribe(), task.clone())
        };
        let open = inner.open_stream(&guard)?;
        let first = Some(StreamResponse::Task(inner.capped(snapshot, None)));
        Ok(inner.clone().stream(guard, rx, first, Some(open), None))
    }

    /// Ends every open stream and delivers what push notifications it can within `deadline`.
    pub async fn shutdown(&self, deadline: Duration) {
        self.inner.shutdown.cancel();
        if let Some(push) = &self.inner.push {
            push.shutdown(deadline).await;
        }
    }
}

/// Counts an open stream; the count drops with the value.
pub(crate) struct StreamSlot(LiveGuard);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.streams.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Inner {
    /// Reads the task from the store the first time its live entry is used.
    async fn load(&self, key: &Key, slot: &mut Slot) -> Result<()> {
        if !slot.loaded {
            slot.task = self.stores.tasks.get(&key.0, &key.1, None).await?;
            slot.loaded = true;
        }
        Ok(())
    }

    /// A task as replies carry it: history trimmed to the request's length and the server cap.
    fn capped(&self, mut task: Task, history_length: Option<i32>) -> Task {
        let cap = i32::try_from(self.limits.max_history_length).unwrap_or(i32::MAX);
        model::trim_history(&mut task, Some(history_length.map_or(cap, |n| n.min(cap))));
        task
    }

    fn open_stream(&self, guard: &LiveGuard) -> Result<StreamSlot> {
        let open = guard.streams.fetch_add(1, Ordering::AcqRel) + 1;
        let slot = StreamSlot(guard.share());
        if open > self.limits.max_streams_per_task {
            return Err(A2AError::unsupported_operation(format!(
                "task {} already has {} open streams (limit {})",
                guard.key.1,
                open - 1,
                self.limits.max_streams_per_task
            )));
        }
        Ok(slot)
    }

    /// Runs `execute` in its own tokio task; the caller's connection does not own it.
    fn spawn_execution(self: Arc<Self>, guard: LiveGuard, ctx: RequestContext, user_message: Message, execution: u64) {
        let span = tracing::info_span!("a2a.execute", task_id = %ctx.task_id, context_id = %ctx.context_id);
        tokio::spawn(
            async move {
                let (tx, rx) = mpsc::channel(SINK_CAPACITY);
                let sink = EventSink::new(tx, ctx.task_id.clone(), ctx.context_id.clone());
                let cancelled = ctx.cancelled.clone();
                let agent = self.agent.clone();
                let execute = Box::pin(async move { agent.execute(ctx, sink).await });
                let run = self.drive(&guard, execute, rx, Some(&user_message));
                let outcome = tokio::select! {
                    outcome = run => Some(outcome),
                    // Cancel drops the agent's future: the work really stops.
                    () = cancelled.cancelled() => None,
                };
                // Canceled whichever branch won: an executor may return promptly when told to stop.
                let canceled = cancelled.is_cancelled();
                let mut slot = guard.slot.lock().await;
                match outcome {
                    Some(Err(e)) => {
                        let failed = self.status_event(&guard, TaskState::Failed, Some(e.message));
                        self.apply_locked(&guard, &mut slot, failed, Some(&user_message)).await;
                    }
                    Some(Ok(())) if slot.task.is_none() && !slot.replied_with_message => {
                        let text = "the agent returned without a reply".to_owned();
                        let failed = self.status_event(&guard, TaskState::Failed, Some(text));
                        self.apply_locked(&guard, &mut slot, failed, Some(&user_message)).await;
                    }
                    _ => {}
                }
                drop(slot);
                // A canceled execution does not end anyone's wait: `cancel` writes CANCELED next,
                // and that terminal event is what streams and waiters must see last.
                if !canceled {
                    guard.publish(BusItem::ExecutionEnded(execution));
                }
            }
            .instrument(span),
        );
    }

    fn status_event(&self, guard: &LiveGuard, state: TaskState, text: Option<String>) -> StreamResponse {
        let message = text.map(|t| {
            let mut m = Message::text(Role::Agent, t);
            m.task_id = guard.key.1.clone();
            m
        });
        StreamResponse::StatusUpdate(model::TaskStatusUpdateEvent {
            task_id: guard.key.1.clone(),
            context_id: String::new(),
            status: TaskStatus { message, ..TaskStatus::now(state) },
            metadata: None,
        })
    }

    /// Applies the sink's events while `work` runs, then what is left in the channel.
    async fn drive(
        &self,
        guard: &LiveGuard,
        work: std::pin::Pin<Box<dyn std::future::Future<Output = std::result::Result<(), ExecutorError>> + Send + '_>>,
        mut rx: mpsc::Receiver<StreamResponse>,
        user_message: Option<&Message>,
    ) -> std::result::Result<(), ExecutorError> {
        let mut work = work;
        let outcome = loop {
            tokio::select! {
                biased;
                Some(event) = rx.recv() => self.apply(guard, event, user_message).await,
                outcome = &mut work => break outcome,
            }
        };
        drop(work);
        // Events the agent sent just before returning are still applied, in order.
        rx.close();
        while let Some(event) = rx.recv().await {
            self.apply(guard, event, user_message).await;
        }
        outcome
    }

    async fn apply(&self, guard: &LiveGuard, event: StreamResponse, user_message: Option<&Message>) {
        let mut slot = guard.slot.lock().await;
        self.apply_locked(guard, &mut slot, event, user_message).await;
    }

    /// The one writer: state machine, store, bus, push, in that order, under the task's lock.
    async fn apply_locked(&self, guard: &LiveGuard, slot: &mut Slot, event: StreamResponse, user_message: Option<&Message>) {
        let (tenant, task_id) = (&guard.key.0, &guard.key.1);
        if slot.replied_with_message {
            tracing::warn!(task_id, "event after a direct Message reply ignored");
            return;
        }
        let Some(task) = slot.task.as_mut() else {
            // The first event of a new task: a direct reply, or the task comes into being.
            if let StreamResponse::Message(mut m) = event {
                m.task_id.clear();
                slot.replied_with_message = true;
                guard.publish(BusItem::DirectReply(Arc::new(m)));
                return;
            }
            let context_id = user_message.map(|m| m.context_id.clone()).unwrap_or_default();
            let mut task = match &event {
                StreamResponse::Task(t) => t.clone(),
                _ => Task {
                    id: String::new(),
                    context_id: String::new(),
                    status: TaskStatus::now(TaskState::Submitted),
                    artifacts: Vec::new(),
                    history: Vec::new(),
                    metadata: None,
                },
            };
            task.id = task_id.clone();
            task.context_id = context_id;
            if let Some(m) = user_message
                && !task.history.iter().any(|h| h.message_id == m.message_id)
            {
                task.history.insert(0, m.clone());
            }
            if let Err(e) = self.stores.tasks.save(tenant, &task).await {
                tracing::error!(task_id, error = %e, "could not store the new task");
            }
            let snapshot = StreamResponse::Task(task.clone());
            self.notify(tenant, &snapshot).await;
            guard.publish(BusItem::Event(Arc::new(snapshot)));
            slot.task = Some(task);
            if matches!(event, StreamResponse::Task(_)) {
                return;
            }
            return Box::pin(self.apply_locked(guard, slot, event, user_message)).await;
        };

        let event = match with_ids(event, task) {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!(task_id, error = %e, "agent event refused");
                return;
            }
        };
        let from = task.status.state;
        let refused = match &event {
            StreamResponse::Task(t) => state::check_transition(task_id, Some(from), t.status.state).err(),
            StreamResponse::StatusUpdate(e) => state::check_transition(task_id, Some(from), e.status.state).err(),
            _ if from.is_terminal() => Some(A2AError::new(
                ErrorKind::InvalidAgentResponse,
                format!("task {task_id} is {from}; no more artifacts or messages"),
            )),
            _ => None,
        };
        if let Some(e) = refused {
            tracing::warn!(task_id, error = %e, "agent event refused");
            return;
        }
        match &event {
            StreamResponse::Task(t) => {
                let history = std::mem::take(&mut task.history);
                *task = t.clone();
                if task.history.is_empty() {
                    task.history = history;
                }
            }
            StreamResponse::Message(m) => task.history.push(m.clone()),
            StreamResponse::StatusUpdate(e) => {
                // As the official SDKs do: the status message being replaced joins the history.
                if let Some(old) = task.status.message.take() {
                    task.history.push(old);
                }
                task.status = e.status.clone();
                if let Some(meta) = &e.metadata {
                    task.metadata.get_or_insert_with(Default::default).extend(meta.clone());
                }
            }
            StreamResponse::ArtifactUpdate(e) => merge_artifact(task, &e.artifact, e.append),
        }
        if let Err(e) = self.stores.tasks.save(tenant, task).await {
            tracing::error!(task_id, error = %e, "could not store a task update");
        }
        self.notify(tenant, &event).await;
        guard.publish(BusItem::Event(Arc::new(event)));
    }

    /// Queues `event` for every push config of its task.
    async fn notify(&self, tenant: &str, event: &StreamResponse) {
        let (Some(push), Some(task_id)) = (&self.push, event.task_id()) else { return };
        match self.stores.push.list(tenant, task_id, 0, "").await {
            Ok(page) => {
                for config in &page.configs {
                    push.enqueue(config, event);
                }
            }
            Err(e) => tracing::error!(task_id, error = %e, "could not read push configs"),
        }
    }

    /// A blocking SendMessage: waits for a terminal or interrupted state (or, with
    /// `return_immediately`, for the task to exist), then answers with the task.
    async fn wait(
        &self,
        guard: &LiveGuard,
        mut rx: broadcast::Receiver<BusItem>,
        execution: u64,
        return_immediately: bool,
        history_length: Option<i32>,
    ) -> Result<SendMessageResponse> {
        let deadline = tokio::time::sleep(self.limits.blocking_timeout);
        tokio::pin!(deadline);
        loop {
            let item = tokio::select! {
                item = rx.recv() => item,
                () = &mut deadline => break,
            };
            match item {
                Ok(BusItem::DirectReply(m)) => return Ok(SendMessageResponse::Message(Arc::unwrap_or_clone(m))),
                Ok(BusItem::Event(_)) if return_immediately => break,
                Ok(BusItem::Event(e)) if ends_wait(&e) => break,
                Ok(BusItem::Event(_)) => {}
                Ok(BusItem::ExecutionEnded(id)) if id == execution => break,
                // An earlier turn of this task ending late.
                Ok(BusItem::ExecutionEnded(_)) => {}
                Err(broadcast::error::RecvError::Closed) => break,
                // Fell behind: the snapshot below is the truth; keep waiting unless it ends the wait.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let slot = guard.slot.lock().await;
                    if slot.task.as_ref().is_some_and(|t| t.status.state.ends_blocking_wait()) {
                        break;
                    }
                }
            }
        }
        let slot = guard.slot.lock().await;
        match &slot.task {
            Some(task) => Ok(SendMessageResponse::Task(self.capped(task.clone(), history_length))),
            None => Err(A2AError::internal("the agent produced no task")),
        }
    }

    /// Forwards the bus to one client stream until the task ends, the client leaves, or the
    /// server shuts down. The stream's own tokio task holds the live entry.
    fn stream(
        self: Arc<Self>,
        guard: LiveGuard,
        mut rx: broadcast::Receiver<BusItem>,
        first: Option<StreamResponse>,
        open: Option<StreamSlot>,
        execution: Option<u64>,
    ) -> EventStream {
        let (tx, out) = mpsc::channel(STREAM_CAPACITY);
        tokio::spawn(async move {
            let _open = open;
            if let Some(first) = first
                && tx.send(first).await.is_err()
            {
                return;
            }
            loop {
                let item = tokio::select! {
                    item = rx.recv() => item,
                    () = self.shutdown.cancelled() => return,
                    () = tx.closed() => return,
                };
                let event = match item {
                    Ok(BusItem::DirectReply(m)) => {
                        let _ = tx.send(StreamResponse::Message(Arc::unwrap_or_clone(m))).await;
                        return;
                    }
                    Ok(BusItem::Event(e)) => Arc::unwrap_or_clone(e),
                    // A SendStreamingMessage stream ends with its own execution; a subscription with any.
                    Ok(BusItem::ExecutionEnded(id)) if execution.is_none_or(|e| e == id) => return,
                    Ok(BusItem::ExecutionEnded(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let slot = guard.slot.lock().await;
                        match &slot.task {
                            Some(t) => StreamResponse::Task(self.capped(t.clone(), None)),
                            None => continue,
                        }
                    }
                };
                let done = ends_stream(&event);
                if tx.send(event).await.is_err() || done {
                    return;
                }
            }
        });
        EventStream::new(out)
    }
}

/// Whether a blocking send returns at this event.
fn ends_wait(event: &StreamResponse) -> bool {
    match event {
        StreamResponse::Task(t) => t.status.state.ends_blocking_wait(),
        StreamResponse::StatusUpdate(e) => e.status.state.ends_blocking_wait(),
        _ => false,
    }
}

/// Whether a stream closes after this event: terminal states, and INPUT_REQUIRED as the
/// official SDKs do (SPEC §7); AUTH_REQUIRED keeps the stream open.
fn ends_stream(event: &StreamResponse) -> bool {
    let state = match event {
        StreamResponse::Task(t) => t.status.state,
        StreamResponse::StatusUpdate(e) => e.status.state,
        _ => return false,
    };
    state.is_terminal() || state == TaskState::InputRequired
}

/// Stamps the task's ids on an agent event; an event for another task is refused.
fn with_ids(mut event: StreamResponse, task: &Task) -> Result<StreamResponse> {
    let (task_id, context_id) = match &mut event {
        StreamResponse::Task(t) => (&mut t.id, &mut t.context_id),
        StreamResponse::Message(m) => (&mut m.task_id, &mut m.context_id),
        StreamResponse::StatusUpdate(e) => (&mut e.task_id, &mut e.context_id),
        StreamResponse::ArtifactUpdate(e) => (&mut e.task_id, &mut e.context_id),
    };
    if !task_id.is_empty() && *task_id != task.id {
        return Err(A2AError::new(ErrorKind::InvalidAgentResponse, format!("event names task {task_id}")));
    }
    *task_id = task.id.clone();
    *context_id = task.context_id.clone();
    if let StreamResponse::StatusUpdate(e) = &mut event
        && let Some(m) = &mut e.status.message
    {
        m.task_id = task.id.clone();
        m.context_id = task.context_id.clone();
    }
    Ok(event)
}

/// Adds an artifact, or with `append` extends the one with the same id.
fn merge_artifact(task: &mut Task, artifact: &model::Artifact, append: bool) {
    match task.artifacts.iter_mut().find(|a| a.artifact_id == artifact.artifact_id) {
        Some(existing) if append => existing.parts.extend(artifact.parts.iter().cloned()),
        Some(existing) => *existing = artifact.clone(),
        None => task.artifacts.push(artifact.clone()),
    }
}
