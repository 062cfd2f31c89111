//! Runs executors and applies their events: one writer per task.
//!
//! Each execution runs in its own tokio task, so a client that disconnects never stops the
//! work and never loses the terminal state. Its events arrive on a channel and are applied
//! in order under the task's lock: checked against the state machine, committed to the task's
//! log with the new state (version-checked, see [`crate::store::log`]), and only then
//! published on the task's bus (streams, blocking waiters) and queued for push delivery. What
//! could not be stored is never shown: waiters and streams end with the store's error.
//! Events already queued when the manager wakes are committed together (one transaction).
//! Cancel fires the task's token (the executor sees it, and its future is dropped), asks the
//! executor's `cancel`, and sets CANCELED; anything the agent sends afterwards is refused by
//! the state machine, because terminal states are final.

use super::call::{CallContext, EventStream, StreamItem};
use super::config::{Limits, ServerConfig};
use super::events::{BusItem, Key, Live, LiveGuard, Registry, Slot};
use super::state;
use crate::error::{A2AError, ErrorKind, Result};
use crate::executor::{AgentExecutor, EventSink, ExecutorError, RequestContext};
use crate::model::{
    self, Message, Role, SendMessageRequest, SendMessageResponse, StreamResponse, Struct, Task, TaskState, TaskStatus,
};
use crate::push::{Payload, PushSender};
use crate::store::log::{Change, Commit, CommitOutcome, LogEntry, Owner, apply_to};
use crate::store::{Stores, weight};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;
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
/// How often open streams are checked against the store, in case a notice of another
/// instance's change was missed (notices are only wake-ups; the log is the truth).
const SAFETY_POLL: Duration = Duration::from_secs(5);
/// Most events committed in one transaction.
const BATCH: usize = 64;
/// Log entries read per query when a stream catches up.
const LOG_PAGE: usize = 256;
/// Ids of executions (one per message), so a waiter stops at its own execution's end only.
static NEXT_EXECUTION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
/// The "execution" whose end another instance announced (see [`crate::store::Moved::TurnEnded`]):
/// no waiter waits for it, and a stream ends on it as on a local one's end.
const ELSEWHERE: u64 = 0;

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
    /// The tasks forwarding the bus to client streams: shutdown waits for them to hand over
    /// what was published before it (a final FAILED), before the server ends the bodies.
    streams: tokio_util::task::TaskTracker,
    /// This instance, as task leases name it.
    instance: String,
    lease: Duration,
    /// The store keeps the push outbox (push notifications are queued with their events);
    /// otherwise they go to the sender's in-memory queue.
    outbox: bool,
    /// The outbox deliverer, awaited at shutdown so its last deliveries settle.
    deliverer: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Set at shutdown: when the deliveries under way are given up.
    push_deadline: std::sync::OnceLock<tokio::time::Instant>,
    metrics: Arc<crate::metrics::Metrics>,
    /// Tasks a change of which could not be stored (a full disk), in a store no other process
    /// writes (no leases): their last stored state may still be active with nothing to end it. Shutdown
    /// ends them FAILED, or, when it cannot, does not mark the stop clean, so that the next
    /// start does. `None` once more than [`MAX_UNSETTLED`] were noted: then the stop is never
    /// marked clean.
    unsettled: std::sync::Mutex<Option<std::collections::HashSet<Key>>>,
    /// When the store last refused a write, and why; cleared by the next write it takes.
    write_failure: std::sync::Mutex<Option<(std::time::Instant, String)>>,
    /// `write_failure` holds one.
    write_failed: std::sync::atomic::AtomicBool,
}

/// How many tasks [`Inner::unsettled`] names at most.
const MAX_UNSETTLED: usize = 10_000;

fn key(tenant: &str, id: &str) -> Key {
    (tenant.to_owned(), id.to_owned())
}

impl TaskManager {
    /// `push_enabled`: the card declares push notifications (configs are then delivered).
    pub fn new(agent: Arc<dyn AgentExecutor>, stores: Stores, config: &ServerConfig, push_enabled: bool) -> Self {
        let push = push_enabled.then(|| PushSender::new(config.push.clone(), config.metrics.clone()));
        let moves = stores.tasks.moves();
        let leases = stores.tasks.leases();
        let outbox = push.is_some() && stores.tasks.outbox() && tokio::runtime::Handle::try_current().is_ok();
        let inner = Inner {
            agent,
            stores,
            limits: config.limits.clone(),
            push,
            live: Registry::default(),
            shutdown: CancellationToken::new(),
            streams: tokio_util::task::TaskTracker::new(),
            instance: crate::model::wire::id_text(uuid::Uuid::new_v4()),
            lease: config.lease,
            outbox,
            deliverer: Default::default(),
            push_deadline: Default::default(),
            metrics: config.metrics.clone(),
            unsettled: std::sync::Mutex::new(Some(Default::default())),
            write_failure: Default::default(),
            write_failed: Default::default(),
        };
        let inner = Arc::new(inner);
        if let Some(moves) = moves {
            tokio::spawn(follow_moves(Arc::downgrade(&inner), moves, inner.shutdown.clone()));
        }
        if outbox {
            let deliverer = tokio::spawn(deliver_outbox(Arc::downgrade(&inner), inner.shutdown.clone()));
            *inner.deliverer.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(deliverer);
        }
        if leases && tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(keep_leases(Arc::downgrade(&inner), config.reap_interval, inner.shutdown.clone()));
        }
        Self { inner }
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
    pub async fn send(
        &self,
        call: CallContext,
        partition: &str,
        req: SendMessageRequest,
        streaming: bool,
    ) -> Result<Sent> {
        let inner = &self.inner;
        let tenant = partition.to_owned();
        let (return_immediately, history_length) = (req.return_immediately(), req.history_length());
        let SendMessageRequest { mut message, configuration, metadata, tenant: req_tenant, .. } = req;
        // Refuse a bad webhook before anything changes.
        let push_config = configuration.as_ref().and_then(|c| c.task_push_notification_config.clone());
        if let Some(config) = &push_config {
            let push = inner.push.as_ref().ok_or_else(|| A2AError::of(ErrorKind::PushNotificationNotSupported))?;
            push.check_config(config, "configuration.taskPushNotificationConfig")?;
        }
        let execution = NEXT_EXECUTION.fetch_add(1, Ordering::Relaxed);
        let (guard, prior, stream_slot, mut claim) = if message.task_id.is_empty() {
            // The message a new task starts with is held by it too: one over the limit alone
            // would make a task that no later message could continue.
            check_first_message(&message, inner.limits.max_task_bytes)?;
            // Time-ordered ids (UUIDv7, 74 random bits): a new task's rows land at the end of
            // the stores' indexes instead of on a random page each.
            let id = crate::model::wire::id_text(uuid::Uuid::now_v7());
            if message.context_id.is_empty() {
                message.context_id = crate::model::wire::id_text(uuid::Uuid::now_v7());
            }
            message.task_id = id.clone();
            let guard = inner.live.acquire(key(&tenant, &id));
            let stream_slot = if streaming { Some(inner.open_stream(&guard)?) } else { None };
            let claim = TurnClaim::new(inner, &guard, execution);
            let mut slot = guard.slot.lock().await;
            slot.loaded = true;
            slot.turn = Some(execution);
            slot.pushed_from_start = push_config.is_some();
            drop(slot);
            (guard, None, stream_slot, claim)
        } else {
            let guard = inner.live.acquire(key(&tenant, &message.task_id));
            // Before the turn is taken: a refusal here changes nothing.
            let stream_slot = if streaming { Some(inner.open_stream(&guard)?) } else { None };
            let claim = TurnClaim::new(inner, &guard, execution);
            let mut slot = guard.slot.lock().await;
            // A conflict means another writer moved the task meanwhile: check again against
            // what it wrote (a second try normally wins; a third conflict is reported).
            let mut attempts = 0;
            loop {
                inner.load(&guard, &mut slot).await?;
                let task = slot.task.as_ref().ok_or_else(|| A2AError::task_not_found(&message.task_id))?;
                state::check_message_for_task(task, &message)?;
                inner.check_turn_free(&guard, &mut slot).await?;
                let base = slot.version;
                let task = slot.task.as_mut().ok_or_else(|| A2AError::task_not_found(&message.task_id))?;
                // Read again when the store was: the task may have ended meanwhile.
                state::check_message_for_task(task, &message)?;
                check_room(task, &message, inner.limits.max_task_bytes)?;
                message.context_id = task.context_id.clone();
                let change = Change::UserMessage(message.clone());
                apply_to(task, &change);
                // This message's execution holds the task from now (a second message waits its turn).
                let previous_turn = slot.turn.replace(execution);
                // A task the caller has continued is no longer one a blocking wait made up.
                let was_placeholder = std::mem::take(&mut slot.placeholder);
                let committed = inner
                    .commit_applied(&guard, &mut slot, base, vec![LogEntry { seq: base + 1, change }], false)
                    .await;
                if !matches!(committed, Ok(true)) {
                    // Not taken: the turn (and the mark) stay as they were.
                    slot.turn = previous_turn;
                    slot.placeholder = was_placeholder;
                }
                if committed? {
                    break;
                }
                attempts += 1;
                if attempts == 3 {
                    return Err(A2AError::new(
                        ErrorKind::Unavailable,
                        format!("task {} keeps changing under this message; try again", message.task_id),
                    ));
                }
            }
            let prior = (slot.task.clone(), slot.version);
            drop(slot);
            (guard, Some(prior), stream_slot, claim)
        };
        let (task_id, context_id) = (message.task_id.clone(), message.context_id.clone());
        // Subscribe before anything else can happen to the task (a CancelTask while the push
        // config below is stored), and before the agent starts, so no event can be missed.
        let rx = guard.bus.subscribe();

        if let Some(mut config) = push_config {
            config.task_id = task_id.clone();
            // Named by its task when the sender gave no id, as the official SDKs' servers do: a
            // 0.3 client reads it back with `tasks/pushNotificationConfig/get {id: taskId}`.
            if config.id.is_empty() {
                config.id = task_id.clone();
            }
            if let Err(e) = inner.stores.push.create(&tenant, config).await {
                // No execution will run this turn: free it for the next message (the claim
                // does it if this request is dropped before).
                let mut slot = guard.slot.lock().await;
                inner.end_turn(&guard, &mut slot, execution).await;
                claim.disarm();
                return Err(e);
            }
        }

        let (prior, seen) = match prior {
            Some((task, version)) => (task, version),
            None => (None, 0),
        };
        let message = Arc::new(message);
        let ctx = RequestContext {
            task_id,
            context_id,
            message: Some((*message).clone()),
            task: prior.clone(),
            configuration,
            metadata,
            tenant: req_tenant,
            principal: call.principal,
            extensions: call.extensions,
            skills: call.skills,
            trace: call.trace,
            cancelled: guard.cancel_token().child_token(),
            activation: call.activation,
        };
        let mut run = inner.clone().execution(guard.share(), ctx, message.clone(), execution);
        claim.disarm();

        if streaming {
            // The stream is forwarded by a task of its own: the execution gets one too.
            run.detach();
            let first: Vec<StreamItem> = prior.map(|t| item(Some(seen), StreamResponse::Task(t))).into_iter().collect();
            let opened = Opened { first, seen, slot: stream_slot, execution: Some(execution), history_length };
            return Ok(Sent::Stream(inner.clone().stream(guard, rx, opened)));
        }
        let wait = inner.wait(&guard, rx, execution, &message, return_immediately, history_length);
        run.beside(wait).await.map(|r| Sent::Reply(Box::new(r)))
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
        // One cancel of a task at a time, held until its end is written (by the task below).
        let one_at_a_time = guard.cancelling.clone().lock_owned().await;
        let (snapshot, elsewhere) = {
            let mut slot = guard.slot.lock().await;
            if inner.stores.tasks.leases() && slot.turn.is_none() {
                // Who runs it is only known from the store: read it fresh.
                slot.unload();
            }
            inner.load(&guard, &mut slot).await?;
            let task = slot.task.as_ref().ok_or_else(|| A2AError::task_not_found(id))?;
            state::check_cancel(task)?;
            let elsewhere = slot.lease.as_ref().is_some_and(|l| l.live && l.owner != inner.instance);
            (task.clone(), elsewhere)
        };
        // From here the cancel runs to its end in a task of its own: the caller may hang up or
        // time out, but a task whose execution was stopped must still be written CANCELED.
        guard.cancel();
        let inner = inner.clone();
        let (id, tenant, call) = (id.to_owned(), tenant.to_owned(), call.clone());
        let finish = async move {
            let _one_at_a_time = one_at_a_time;
            if !elsewhere {
                inner.run_agent_cancel(&guard, &call, &tenant, snapshot, metadata).await;
            }
            // Elsewhere: the instance running the task calls its executor's `cancel` when it
            // sees CANCELED.
            inner.write_canceled(&guard, &id).await
        };
        tokio::spawn(finish.in_current_span())
            .await
            .unwrap_or_else(|e| Err(A2AError::internal(format!("the cancel did not finish: {e}"))))
    }

    /// SubscribeToTask: the current Task first, then every live event until the task ends.
    /// With `last_event_id` (a reconnecting SSE stream) the changes logged after that id come
    /// first instead of the snapshot (the snapshot, if the log no longer holds them), so the
    /// client sees no gap and no duplicate; a task that ended after that id still replays its
    /// last events.
    pub async fn subscribe(&self, tenant: &str, id: &str, last_event_id: Option<u64>) -> Result<EventStream> {
        let inner = &self.inner;
        let guard = inner.live.acquire(key(tenant, id));
        let (rx, snapshot, version, last_event_id) = {
            let mut slot = guard.slot.lock().await;
            inner.load(&guard, &mut slot).await?;
            let task = slot.task.as_ref().ok_or_else(|| A2AError::task_not_found(id))?;
            // An id this task never had (a stream of another task, another server): the
            // stream starts afresh, with the snapshot.
            let last_event_id = last_event_id.filter(|&after| after <= slot.version);
            if last_event_id.is_none_or(|after| after == slot.version) {
                state::check_subscribe(task)?;
            }
            let snapshot = last_event_id.is_none().then(|| task.clone());
            (guard.bus.subscribe(), snapshot, slot.version, last_event_id)
        };
        let open = inner.open_stream(&guard)?;
        let first = match (snapshot, last_event_id) {
            (Some(task), _) => vec![item(Some(version), StreamResponse::Task(task))],
            (None, Some(after)) => inner.replay(&guard, after, version).await?,
            (None, None) => Vec::new(),
        };
        let opened = Opened { first, seen: version, slot: Some(open), execution: None, history_length: None };
        Ok(inner.clone().stream(guard, rx, opened))
    }

    /// Why the store refused the last write, if it did within `within` and has taken none
    /// since: a store that answers reads but refuses writes (a full disk) cannot serve calls.
    pub fn write_failure(&self, within: Duration) -> Option<String> {
        let last = self.inner.write_failure.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        last.as_ref().filter(|(at, _)| at.elapsed() < within).map(|(_, why)| why.clone())
    }

    /// Ends the tasks a previous process left SUBMITTED or WORKING in a store only one process
    /// uses (SQLite): nothing runs them any more. Each ends FAILED with a status message saying
    /// so (logged, streamed, pushed like any event). Returns how many were ended.
    pub async fn recover_interrupted(&self) -> usize {
        let inner = &self.inner;
        if !inner.stores.tasks.single_process() {
            return 0;
        }
        let mut ended = 0;
        loop {
            let found = match inner.stores.tasks.active_tasks(256).await {
                Ok(found) => found,
                Err(e) => {
                    tracing::error!(error = %e, "could not look for tasks interrupted by a restart");
                    return ended;
                }
            };
            let mut progress = false;
            for (tenant, id) in found {
                let guard = inner.live.acquire(key(&tenant, &id));
                if guard.executions.load(Ordering::Acquire) > 0 {
                    continue;
                }
                let mut slot = guard.slot.lock().await;
                if inner.load(&guard, &mut slot).await.is_err() {
                    continue;
                }
                if slot.task.as_ref().is_some_and(|t| t.status.state.is_active()) {
                    let text = "interrupted by a restart of the server; send the message again".to_owned();
                    let failed = inner.status_event(&guard, TaskState::Failed, Some(text));
                    if inner.apply_locked(&guard, &mut slot, vec![failed], None).await.is_ok() {
                        ended += 1;
                        progress = true;
                    }
                }
            }
            if !progress {
                break;
            }
        }
        if ended > 0 {
            tracing::warn!(
                tasks = ended,
                "ended tasks left active by a previous run (FAILED: interrupted by a restart)"
            );
        }
        ended
    }

    /// Graceful shutdown: running executions get `grace` to finish; those still running then
    /// are stopped and their tasks end FAILED (said in the status message), so no task is left
    /// active with nothing running it. Then every open stream ends, and push notifications are
    /// delivered as far as `deadline` allows.
    pub async fn shutdown(&self, grace: Duration, deadline: Duration) {
        let until = tokio::time::Instant::now() + grace;
        let running = || self.inner.live.running();
        // Whether every task a turn was running has been ended here (see `stopped_cleanly`).
        let mut all_ended = true;
        while !running().is_empty() && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for guard in running() {
            guard.cancel();
            let mut slot = guard.slot.lock().await;
            let text = "the server shut down before the task finished".to_owned();
            // `write_end` reads the task first when the entry holds none (a send's entry may
            // have forgotten it), and writes nothing to a task that has ended.
            let active = |t: &Task| t.status.state.is_active();
            match self.inner.write_end(&guard, &mut slot, TaskState::Failed, Some(text), active).await {
                // Ended here, or nothing to end: an execution that stored no task yet, or a new
                // turn of a task waiting for input whose agent has said nothing yet. Whoever
                // still waits on a task that is not over is answered now (a blocking send
                // waited until its connection was cut at the deadline, and got no answer).
                Ok(()) | Err(A2AError { kind: ErrorKind::TaskNotFound, .. }) => {
                    if !slot.task.as_ref().is_some_and(|t| t.status.state.is_terminal()) {
                        guard.publish(BusItem::Failed(Arc::new(server_shutting_down())));
                    }
                }
                Err(e) => {
                    all_ended = false;
                    tracing::warn!(task_id = %guard.key.1, error = %e, "could not end a task at shutdown")
                }
            }
        }
        // Tasks whose change could not be stored may be left active in the store: ended now,
        // or left for the next start (no clean stop).
        let unsettled = self.inner.unsettled.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        match unsettled {
            None => all_ended = false,
            Some(keys) => {
                for key in keys {
                    let guard = self.inner.live.acquire(key);
                    let mut slot = guard.slot.lock().await;
                    slot.unload();
                    let text = "the server could not store this task's progress; send the message again".to_owned();
                    let active = |t: &Task| t.status.state.is_active();
                    match self.inner.write_end(&guard, &mut slot, TaskState::Failed, Some(text), active).await {
                        Ok(()) | Err(A2AError { kind: ErrorKind::TaskNotFound, .. }) => {}
                        Err(e) => {
                            all_ended = false;
                            tracing::warn!(task_id = %guard.key.1, error = %e, "could not end a task at shutdown");
                        }
                    }
                }
            }
        }
        // The executions just stopped end as soon as they are polled again (their work is
        // dropped then, which is how an executor in another language hears of it): waited for,
        // briefly, so that none is dropped after the binding that hosts the executor has
        // stopped listening (a Python coroutine then ran on after the server stopped).
        let settle = tokio::time::Instant::now() + EXECUTIONS_SETTLE;
        while !running().is_empty() && tokio::time::Instant::now() < settle {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let _ = self.inner.push_deadline.set(tokio::time::Instant::now() + deadline);
        self.inner.shutdown.cancel();
        // Each stream now queues what it still has and its end; only one whose client has
        // stopped reading (its queue full) can take longer, and is not waited for.
        self.inner.streams.close();
        let _ = tokio::time::timeout(STREAMS_HANDOVER, self.inner.streams.wait()).await;
        if let Some(push) = &self.inner.push {
            push.shutdown(deadline).await;
        }
        let deliverer = self.inner.deliverer.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        if let Some(deliverer) = deliverer {
            let _ = deliverer.await;
        }
        // Only when nothing runs: a turn begun after the first look (its request came in as
        // the stop began) or a task that could not be ended is left for the next start to end.
        if all_ended
            && running().is_empty()
            && let Err(e) = self.inner.stores.tasks.stopped_cleanly().await
        {
            tracing::warn!(error = %e, "could not record the clean stop in the task store");
        }
        if let Err(e) = self.inner.stores.tasks.checkpoint().await {
            tracing::warn!(error = %e, "could not checkpoint the task store at shutdown");
        }
    }
}

/// What a stream still open at shutdown ends with (the task is not over).
pub(crate) fn server_shutting_down() -> A2AError {
    A2AError::new(
        ErrorKind::Unavailable,
        "the server is shutting down before the task ended: subscribe to the task again to follow it",
    )
}

/// How long shutdown waits for open streams to queue their last events.
const STREAMS_HANDOVER: Duration = Duration::from_millis(500);

/// How long shutdown waits for the executions it stopped to end.
const EXECUTIONS_SETTLE: Duration = Duration::from_millis(500);

/// How many times ending a task (cancel, shutdown) is tried when other writers keep moving it.
const MAX_END_WRITES: usize = 32;

/// Notifications an instance delivers at once at most.
const OUTBOX_BATCH: usize = 32;
/// How often the outbox is looked at when nothing woke the deliverer (another instance's
/// notifications, claims that lapsed).
const OUTBOX_POLL: Duration = Duration::from_secs(1);

/// Delivers the store's push outbox: claims the due notifications (the oldest of each task),
/// sends them (tasks in parallel, each task's in order), and removes each once settled. Runs
/// on every instance, so notifications survive the instance that produced them: a claim whose
/// instance died lapses after twice the lease and is delivered by another (at least once). A
/// claimer renews its claims while it delivers, and gives back what it could not deliver when
/// it shuts down.
///
/// Deliveries run side by side, up to [`OUTBOX_BATCH`], and each that ends makes room for the
/// next claim at once: a webhook that never answers holds one place while it is retried, not
/// every other task's notifications (they waited for the slowest of a whole round: 16 s per
/// event behind one dead webhook).
async fn deliver_outbox(inner: std::sync::Weak<Inner>, shutdown: CancellationToken) {
    use futures_util::StreamExt;
    let Some(hold) = inner.upgrade().map(|i| (i.lease * 2).max(Duration::from_secs(1))) else { return };
    // Each delivery yields its outbox entry's id when it ends.
    let mut running = futures_util::stream::FuturesUnordered::new();
    let mut held: Vec<i64> = Vec::new();
    // One delivery with its retries can outlast its claim: the claims held are renewed every
    // third of it, or another instance would send the same notifications meanwhile.
    let mut renew = tokio::time::interval_at(tokio::time::Instant::now() + hold / 3, hold / 3);
    renew.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let Some(strong) = inner.upgrade() else { return };
        let Some(push) = strong.push.clone() else { return };
        let queued = strong.stores.tasks.outbox_queued();
        if running.len() < OUTBOX_BATCH {
            match strong.stores.tasks.claim_push(&strong.instance, hold, OUTBOX_BATCH - running.len()).await {
                Ok(due) => {
                    for due in due {
                        held.push(due.id);
                        running.push(deliver_due(push.clone(), strong.stores.tasks.clone(), due));
                    }
                }
                Err(e) => tracing::warn!(error = %e, "could not read the push outbox"),
            }
        }
        let more = async {
            match &queued {
                Some(queued) => tokio::select! {
                    () = queued.notified() => {}
                    () = tokio::time::sleep(OUTBOX_POLL) => {}
                },
                None => tokio::time::sleep(OUTBOX_POLL).await,
            }
        };
        tokio::select! {
            Some(id) = running.next() => held.retain(|h| *h != id),
            _ = renew.tick(), if !held.is_empty() => {
                // Entries delivered meanwhile are gone from the outbox; renewing them is a no-op.
                if let Err(e) = strong.stores.tasks.renew_push_claims(&strong.instance, hold, &held).await {
                    tracing::warn!(error = %e, "could not renew push notification claims");
                }
            }
            // New notifications, or the poll: room is looked for again.
            () = more => {}
            () = shutdown.cancelled() => {
                // Deliveries under way may finish until the shutdown's deadline; what is not
                // delivered then goes back to the outbox for another instance now, rather
                // than when the claims lapse.
                let until = strong.push_deadline.get().copied().unwrap_or_else(tokio::time::Instant::now);
                let _ = tokio::time::timeout_at(until, async {
                    while let Some(id) = running.next().await {
                        held.retain(|h| *h != id);
                    }
                })
                .await;
                if !held.is_empty()
                    && let Err(e) = strong.stores.tasks.release_push_claims(&strong.instance, &held).await
                {
                    tracing::warn!(error = %e, "could not release push notification claims at shutdown");
                }
                return;
            }
        }
    }
}

/// Sends one claimed notification and removes it from the outbox once settled; its id.
async fn deliver_due(push: PushSender, store: Arc<dyn crate::store::TaskStore>, due: crate::store::PushDue) -> i64 {
    let trace = due.trace.as_deref().and_then(|t| serde_json::from_str(t).ok());
    let payload = match (&due.task, due.config.v03) {
        (Some(task), true) => Some(Payload::TaskV03(task)),
        (None, true) => None,
        _ => Some(Payload::Event(&due.event)),
    };
    let settled = match payload {
        Some(payload) => push.deliver_now(&due.config, payload, trace).await,
        None => true, // nothing new for a 0.3 receiver (see `PushDue::task`)
    };
    if settled && let Err(e) = store.finish_push(due.id).await {
        tracing::warn!(error = %e, "could not remove a delivered push notification from the outbox");
    }
    due.id
}

/// The lease duties of an instance on a shared store: renew the leases it holds every third
/// of the lease, and every `reap_interval` end the tasks whose owner stopped renewing (FAILED,
/// "the instance running it was lost"), whichever instance that owner was.
async fn keep_leases(inner: std::sync::Weak<Inner>, reap_interval: Duration, shutdown: CancellationToken) {
    let Some(lease) = inner.upgrade().map(|i| i.lease) else { return };
    let mut renew = tokio::time::interval(lease / 3);
    let mut reap = tokio::time::interval(reap_interval.max(Duration::from_millis(10)));
    for timer in [&mut renew, &mut reap] {
        timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    }
    // When this instance last failed to renew: the store was out of its reach, and most
    // likely out of every instance's (a database restart, a failover). Leases ran out meanwhile
    // though their owners live; reaping resumes only two leases after that, once every owner
    // that came through has renewed (each renews every third of a lease; the rest is margin
    // for an owner slow to reconnect).
    let mut unreachable: Option<tokio::time::Instant> = None;
    loop {
        let renewing = tokio::select! {
            _ = renew.tick() => true,
            _ = reap.tick() => false,
            () = shutdown.cancelled() => return,
        };
        let Some(inner) = inner.upgrade() else { return };
        if renewing {
            // Only what runs here: a lease whose execution is gone must lapse.
            let running: Vec<(String, String)> = inner.live.running().iter().map(|g| g.key.clone()).collect();
            if running.is_empty() {
                // Nothing to renew, but whether the store is in reach all the same: an instance
                // that runs nothing must not reap the moment a database outage ends, before the
                // owners that came through it have renewed.
                if let Err(e) = inner.stores.tasks.ping().await {
                    tracing::debug!(error = %e, "the task store is out of reach");
                    unreachable = Some(tokio::time::Instant::now());
                }
            } else if let Err(e) = inner.stores.tasks.renew_leases(&inner.instance, inner.lease, &running).await {
                tracing::warn!(error = %e, "could not renew task leases");
                unreachable = Some(tokio::time::Instant::now());
            }
        } else if unreachable.is_none_or(|at| at.elapsed() >= 2 * lease) && !inner.reap().await {
            unreachable = Some(tokio::time::Instant::now());
        }
    }
}

/// Brings the live tasks of this instance up to date with what other instances commit: each
/// notice of a move (and, every [`SAFETY_POLL`], each task with open streams) makes the task's
/// live entry read the log after its version and publish what it finds.
async fn follow_moves(
    inner: std::sync::Weak<Inner>,
    mut moves: broadcast::Receiver<crate::store::Moved>,
    shutdown: CancellationToken,
) {
    use crate::store::Moved;
    let mut poll = tokio::time::interval(SAFETY_POLL);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let (moved, polled) = tokio::select! {
            moved = moves.recv() => match moved {
                Ok(m) => (m, false),
                Err(broadcast::error::RecvError::Lagged(_)) => (Moved::Unknown, false),
                Err(broadcast::error::RecvError::Closed) => return,
            },
            _ = poll.tick() => (Moved::Unknown, true),
            () = shutdown.cancelled() => return,
        };
        let Some(inner) = inner.upgrade() else { return };
        match moved {
            Moved::Task { tenant, id, version } => {
                if let Some(guard) = inner.live.get(&(tenant, id)) {
                    inner.follow(&guard, Some(version)).await;
                }
            }
            // The instance that ran the task's turn returned with the task still active: this
            // one's streams of it end as that instance's did (the turn is over; the next
            // message starts another), once they have what the turn committed.
            Moved::TurnEnded { tenant, id, version } => {
                if let Some(guard) = inner.live.get(&(tenant, id)) {
                    inner.follow(&guard, Some(version)).await;
                    // Under the slot's lock: a turn this instance took meanwhile (its execution
                    // not counted yet) must not see its own stream ended.
                    let slot = guard.slot.lock().await;
                    if slot.turn.is_none() && guard.executions.load(Ordering::Acquire) == 0 {
                        guard.publish(BusItem::ExecutionEnded(ELSEWHERE));
                    }
                }
            }
            Moved::Unknown => {
                for guard in inner.live.all() {
                    if !polled || guard.streams.load(Ordering::Acquire) > 0 {
                        inner.follow(&guard, None).await;
                    }
                }
            }
        }
    }
}

/// A message's turn, taken before its execution is spawned: if the request is dropped in
/// between (its caller hung up during a store write), the turn is ended, or it would name an
/// execution that never runs, and no other could end it or give the task's lease back.
struct TurnClaim {
    inner: Arc<Inner>,
    live: Arc<Live>,
    execution: u64,
    armed: bool,
}

impl TurnClaim {
    fn new(inner: &Arc<Inner>, guard: &LiveGuard, execution: u64) -> Self {
        Self { inner: inner.clone(), live: guard.live(), execution, armed: true }
    }

    /// The execution was spawned (it ends its turn itself), or the turn was ended here.
    fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for TurnClaim {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        // A hold on the same entry: the request's own guard is dropped after this claim, so the
        // entry is still there (and no later message can have a fresh one meanwhile).
        let Some(guard) = self.inner.live.get(&self.live.key).filter(|g| Arc::ptr_eq(&g.live(), &self.live)) else {
            return;
        };
        let (inner, execution) = (self.inner.clone(), self.execution);
        runtime.spawn(async move {
            let mut slot = guard.slot.lock().await;
            // Only a turn this message took and left (a refusal before it gave it back).
            if slot.turn == Some(execution) {
                // Its commit may have reached the store (and taken the lease) though the
                // request never saw it: read the task again, and give the lease back.
                slot.unload();
                slot.lease = Some(crate::store::Lease { owner: inner.instance.clone(), live: true });
                inner.end_turn(&guard, &mut slot, execution).await;
            }
        });
    }
}

/// An execution's future. It needs no task of its own while the request that started it
/// waits: [`Execution::beside`] polls it in the request's task, so a blocking SendMessage
/// hands nothing between tasks or threads (each hand-off woke a second worker thread, the
/// largest cost of a short request after the work itself). Whatever is left of it when that
/// wait ends, or when the request is dropped (its client hung up), runs in a task of its own:
/// the caller's connection never owns the execution.
struct Execution(Option<Pin<Box<dyn Future<Output = ()> + Send>>>);

impl Execution {
    fn new(run: impl Future<Output = ()> + Send + 'static) -> Self {
        Self(Some(Box::pin(run)))
    }

    /// `wait`'s outcome, polling the execution alongside until then.
    async fn beside<T>(mut self, wait: impl Future<Output = T>) -> T {
        let mut wait = std::pin::pin!(wait);
        let mut first = true;
        std::future::poll_fn(|cx| {
            // The wait first on every later wake: an agent that keeps producing (and spends the
            // task's cooperative budget) never holds up the answer it is owed. Not on the first,
            // where it could only arm its deadline's timer.
            if !std::mem::take(&mut first)
                && let Poll::Ready(answer) = wait.as_mut().poll(cx)
            {
                return Poll::Ready(answer);
            }
            // Then the execution, and the wait again: an agent that answers at once has
            // published its events by now.
            if let Some(run) = self.0.as_mut() {
                match std::panic::catch_unwind(AssertUnwindSafe(|| run.as_mut().poll(cx))) {
                    Ok(Poll::Pending) => {}
                    Ok(Poll::Ready(())) => self.0 = None,
                    // As a spawned task would: this execution ends; the request goes on.
                    Err(panic) => {
                        tracing::error!("{}", panicked("an execution", &*panic));
                        self.0 = None;
                    }
                }
            }
            wait.as_mut().poll(cx)
        })
        .await
    }

    /// Runs the rest in a task of its own.
    fn detach(&mut self) {
        if let Some(run) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(run);
        }
    }
}

impl Drop for Execution {
    fn drop(&mut self) {
        self.detach();
    }
}

/// What a caught panic says, for the log.
fn panicked(what: &str, panic: &(dyn std::any::Any + Send)) -> String {
    let detail = panic.downcast_ref::<&str>().copied().or_else(|| panic.downcast_ref::<String>().map(String::as_str));
    match detail {
        Some(detail) => format!("{what} panicked: {detail}"),
        None => format!("{what} panicked"),
    }
}

/// Counts a running execution; the count drops with the value.
struct Running(LiveGuard);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.executions.fetch_sub(1, Ordering::AcqRel);
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
    /// The agent's `cancel`, given [`CANCEL_GRACE`]; its events are applied like any
    /// execution's. A failure or a timeout is logged: the task is canceled anyway.
    async fn run_agent_cancel(
        &self,
        guard: &LiveGuard,
        call: &CallContext,
        tenant: &str,
        snapshot: Task,
        metadata: Option<Struct>,
    ) {
        let id = snapshot.id.clone();
        let (tx, rx) = mpsc::channel(SINK_CAPACITY);
        let sink = EventSink::new(tx, snapshot.id.clone(), snapshot.context_id.clone())
            .with_activation(call.activation.clone());
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
            trace: call.trace.clone().in_current_span(),
            cancelled: guard.cancel_token(),
            activation: call.activation.clone(),
        };
        let agent = self.agent.clone();
        let agent_cancel = async move { agent.cancel(ctx, sink).await };
        let outcome = self.drive(guard, Box::pin(agent_cancel), rx, None, tokio::time::sleep(CANCEL_GRACE)).await;
        match outcome {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                tracing::warn!(task_id = id, error = %e.message, "executor cancel failed; canceling anyway")
            }
            None => tracing::warn!(
                task_id = id,
                "executor cancel did not return within {} s; canceling anyway",
                CANCEL_GRACE.as_secs()
            ),
        }
    }

    /// Writes CANCELED unless the task has ended meanwhile (then TaskNotCancelable). A conflict
    /// (another instance's executor wrote first) reloads the task and tries again.
    async fn write_canceled(&self, guard: &LiveGuard, id: &str) -> Result<Task> {
        let mut slot = guard.slot.lock().await;
        let ended =
            self.write_end(guard, &mut slot, TaskState::Canceled, None, |task| !task.status.state.is_terminal());
        if let Err(e) = ended.await {
            // The execution was stopped but the task lives on: a later message may run it, and
            // one waiting for this lock now must not start stopped.
            guard.rearm_cancel();
            return Err(e);
        }
        if slot.task.as_ref().is_some_and(|t| t.status.state == TaskState::Canceled) {
            // Whatever started since another cancel re-armed the token stops too.
            guard.cancel();
        }
        let task = slot.task.clone().ok_or_else(|| A2AError::task_not_found(id))?;
        if task.status.state != TaskState::Canceled {
            // The agent finished first (its terminal event won the lock): not cancelable.
            return Err(A2AError::task_not_cancelable(id, task.status.state.as_str()));
        }
        Ok(self.capped(task, None))
    }

    /// Writes the terminal `state` (with `text` as its status message) while `wanted` holds for
    /// the task. A conflict means another writer moved the task first (an executor on another
    /// instance): the task was reloaded, so look again and retry. Each conflict is someone
    /// else's progress, so this ends; the bound only guards against a writer that never pauses.
    async fn write_end(
        &self,
        guard: &LiveGuard,
        slot: &mut Slot,
        state: TaskState,
        text: Option<String>,
        wanted: impl Fn(&Task) -> bool,
    ) -> Result<()> {
        for _ in 0..MAX_END_WRITES {
            self.load(guard, slot).await?;
            let task = slot.task.as_ref().ok_or_else(|| A2AError::task_not_found(&guard.key.1))?;
            if !wanted(task) {
                return Ok(());
            }
            let end = self.status_event(guard, state, text.clone());
            self.apply_locked(guard, slot, vec![end], None).await?;
        }
        Err(A2AError::new(
            ErrorKind::Unavailable,
            format!("task {} kept changing while it was being ended {state}; try again", guard.key.1),
        ))
    }

    /// Reads the task from the store the first time its live entry is used, or again after it
    /// was unloaded. What another writer logged past the version this instance's streams and
    /// waiters know (`Live::shown`) is published to them: a reload (to learn who runs the task,
    /// to cancel it) took the newer version without its entries, and a stream here, following
    /// the older one, then waited for ever (the store's wake-ups found nothing newer).
    async fn load(&self, guard: &LiveGuard, slot: &mut Slot) -> Result<()> {
        if !slot.loaded {
            let key = &guard.key;
            let started = std::time::Instant::now();
            let found = self.stores.tasks.load(&key.0, &key.1).await;
            self.metrics.store("load", started);
            let found = found?;
            slot.unload();
            slot.version = found.as_ref().map_or(0, |v| v.version);
            slot.lease = found.as_ref().and_then(|v| v.lease.clone());
            slot.task = found.map(|v| v.task);
            slot.loaded = true;
            let shown = guard.shown.load(Ordering::Acquire);
            if shown > 0 && slot.version > shown && guard.bus.receiver_count() > 0 {
                self.publish_logged(guard, shown, slot.version).await;
            }
        }
        Ok(())
    }

    /// Refuses a message to a task whose current turn runs on another live instance of this
    /// agent (UnsupportedOperation, saying so): two instances never run turns of one task at
    /// once, and the running one is not interrupted. On one instance a message to an active
    /// task is taken as before (the shared state vectors say so: a message to a SUBMITTED or
    /// WORKING task is accepted). A task waiting for input, or whose instance died, takes it.
    async fn check_turn_free(&self, guard: &LiveGuard, slot: &mut Slot) -> Result<()> {
        if slot.turn.is_some() || !self.stores.tasks.leases() {
            return Ok(());
        }
        // What another instance holds is only known from the store: read it fresh.
        slot.unload();
        self.load(guard, slot).await?;
        if slot.lease.as_ref().is_some_and(|l| l.live && l.owner != self.instance) {
            return Err(A2AError::unsupported_operation(format!(
                "task {} is still working on an earlier message on another instance of this agent; \
                 send this one when it asks for input, or start a new task",
                guard.key.1
            ))
            .with_meta("taskId", &guard.key.1));
        }
        Ok(())
    }

    /// Ends the tasks whose owner's lease expired (its instance is presumed lost): FAILED with
    /// a status message saying so, committed only if the lease is still expired then.
    /// `false` when the store was out of reach.
    async fn reap(&self) -> bool {
        let orphans = match self.stores.tasks.orphaned_tasks(100).await {
            Ok(orphans) => orphans,
            Err(e) => {
                tracing::warn!(error = %e, "could not look for tasks of lost instances");
                return false;
            }
        };
        for (tenant, id) in orphans {
            let guard = self.live.acquire(key(&tenant, &id));
            let mut slot = guard.slot.lock().await;
            slot.unload();
            if self.load(&guard, &mut slot).await.is_err() {
                continue;
            }
            let ours = slot.lease.as_ref().is_some_and(|l| l.owner == self.instance);
            if ours && guard.executions.load(Ordering::Acquire) > 0 {
                // It runs here: not lost, only late to renew (the renewer catches up).
                continue;
            }
            let orphaned = slot.lease.as_ref().is_some_and(|l| !l.live);
            if !orphaned || !slot.task.as_ref().is_some_and(|t| t.status.state.is_active()) {
                continue;
            }
            let owner = slot.lease.as_ref().map(|l| l.owner.clone()).unwrap_or_default();
            let text =
                "the instance of this agent that was running the task stopped renewing its hold on it (it was lost, \
                 or could not reach the task store); send the message again"
                    .to_owned();
            let failed = self.status_event(&guard, TaskState::Failed, Some(text));
            if self.apply_locked_as(&guard, &mut slot, vec![failed], None, true).await.is_ok() {
                tracing::warn!(task_id = id, owner, "ended a task whose instance was lost (lease expired)");
            }
        }
        true
    }

    /// The events logged after `after` up to `upto`, as a stream sends them; the task's
    /// snapshot at `upto` instead when the store no longer holds all of them.
    async fn replay(&self, guard: &LiveGuard, after: u64, upto: u64) -> Result<Vec<StreamItem>> {
        let (tenant, id) = (&guard.key.0, &guard.key.1);
        let mut items = Vec::new();
        let mut last = after;
        while last < upto {
            let page = self.stores.tasks.log_after(tenant, id, last, LOG_PAGE).await?;
            // Nor can a log that does not go on from `last` (see `Commit::log`).
            let gap = page.entries.first().is_none_or(|e| e.seq > last + 1);
            if !page.complete || gap {
                let mut slot = guard.slot.lock().await;
                // A finished task's reply may have taken it from the entry: read it again.
                self.load(guard, &mut slot).await?;
                let Some(task) = slot.task.clone() else { return Ok(Vec::new()) };
                return Ok(vec![item(Some(slot.version), StreamResponse::Task(self.capped(task, None)))]);
            }
            let end = page.entries.last().map_or(last, |e| e.seq);
            for entry in page.entries.into_iter().filter(|e| e.seq <= upto) {
                if let Change::Event(event) = entry.change {
                    items.push(item(Some(entry.seq), event));
                }
            }
            last = end;
        }
        Ok(items)
    }

    /// A task as replies carry it: history trimmed to the request's length and the server cap.
    fn capped(&self, mut task: Task, history_length: Option<i32>) -> Task {
        let cap = i32::try_from(self.limits.max_history_length).unwrap_or(i32::MAX);
        model::trim_history(&mut task, Some(history_length.map_or(cap, |n| n.min(cap))));
        task
    }

    /// A stream's item as its client gets it: a Task (the snapshot that opens the stream, or
    /// one an agent sent) is capped as a reply's task is, so that a SendStreamingMessage that
    /// asked for no history gets none (as a blocking one does, and the official SDKs' servers).
    fn capped_item(&self, it: StreamItem, history_length: Option<i32>) -> StreamItem {
        match it {
            StreamItem::Event { id, event: StreamResponse::Task(t) } => {
                item(id, StreamResponse::Task(self.capped(t, history_length)))
            }
            other => other,
        }
    }

    fn open_stream(&self, guard: &LiveGuard) -> Result<StreamSlot> {
        let open = guard.streams.fetch_add(1, Ordering::AcqRel) + 1;
        let slot = StreamSlot(guard.share());
        if open > self.limits.max_streams_per_task {
            // A limit of the moment, not a property of the task (UnsupportedOperation would
            // tell a client the task ended): unavailable, worth retrying once a stream closes.
            crate::metrics::observe(|o| o.shed.set(true));
            return Err(A2AError::new(
                ErrorKind::Unavailable,
                format!(
                    "task {} already has {} open streams (limits.maxStreamsPerTask {}); try again when one closes",
                    guard.key.1,
                    open - 1,
                    self.limits.max_streams_per_task
                ),
            ));
        }
        Ok(slot)
    }

    /// The run of `execute` for one message, counted as running from now. The caller's
    /// connection does not own it: see [`Execution`].
    fn execution(
        self: Arc<Self>,
        guard: LiveGuard,
        mut ctx: RequestContext,
        user_message: Arc<Message>,
        execution: u64,
    ) -> Execution {
        // DEBUG like the request span (see server::service): formatting it costs at INFO.
        let span = tracing::debug_span!(
            "a2a.execute",
            task_id = %ctx.task_id,
            context_id = %ctx.context_id,
            otel.status_code = tracing::field::Empty,
            otel.status_message = tracing::field::Empty,
        );
        guard.executions.fetch_add(1, Ordering::AcqRel);
        // The trace context the request came with: what push notifications carry when this
        // process does not trace itself (when it does, its own spans' context, which descends
        // from it). A spawned task would not inherit it: the execution carries it.
        let caller = ctx.trace.clone();
        let run = async move {
                let cancelled = ctx.cancelled.clone();
                let work = async {
                    // The executor's own spans (in any language) become children of this one.
                    ctx.trace = std::mem::take(&mut ctx.trace).in_current_span();
                    let running = Running(guard.share());
                    let (tx, rx) = mpsc::channel(SINK_CAPACITY);
                    let sink = EventSink::new(tx, ctx.task_id.clone(), ctx.context_id.clone())
                        .with_activation(ctx.activation.clone())
                        .for_new_task(ctx.task.is_none())
                        .ended_with(guard.ended.clone());
                    let sink_refused = sink.refusals();
                    let agent = self.agent.clone();
                    let limit = self.limits.executor_timeout;
                    let execute = Box::pin(async move {
                        // An agent that panics fails its task, like one that returns an error.
                        let run = async move {
                            let caught =
                                futures_util::FutureExt::catch_unwind(AssertUnwindSafe(agent.execute(ctx, sink)));
                            caught.await.unwrap_or_else(|panic| {
                                // The payload may say anything (paths, queries, secrets): logged, not
                                // shown to whoever reads the task.
                                tracing::error!("{}", panicked("the executor", &*panic));
                                Err(ExecutorError::new("the executor panicked"))
                            })
                        };
                        let Some(limit) = limit else { return run.await };
                        // Dropping the executor's future on timeout stops it (in any language).
                        tokio::time::timeout(limit, run).await.unwrap_or_else(|_| {
                            Err(ExecutorError::new(format!(
                                "the executor did not return within {} s (limits.executorTimeout)",
                                limit.as_secs_f64()
                            )))
                        })
                    });
                    // Cancel drops the agent's future: the work really stops.
                    let outcome = self.drive(&guard, execute, rx, Some(&*user_message), cancelled.cancelled()).await;
                    // Canceled whichever branch won: an executor may return promptly when told to stop.
                    let canceled = cancelled.is_cancelled();
                    let mut slot = guard.slot.lock().await;
                    let failed = match outcome {
                        // Refused before the task came to be: the caller's answer, and no task.
                        // Not after the sink refused one of the agent's events: the error is
                        // then most likely that refusal passed on (a fault of the agent's).
                        Some(Err(ExecutorError { refusal: Some(e), .. }))
                            if slot.task.is_none()
                                && !slot.replied_with_message
                                && slot.loaded
                                && !sink_refused.load(Ordering::Acquire) =>
                        {
                            guard.publish(BusItem::Failed(Arc::new(*e)));
                            None
                        }
                        // A task the agent already ended keeps its end; the failure is logged only.
                        Some(Err(e)) if slot.task.as_ref().is_some_and(|t| t.status.state.is_terminal()) => {
                            tracing::warn!(task_id = %guard.key.1, error = ?e.message, "the executor failed after its task ended");
                            None
                        }
                        // An earlier turn's execution, still running after a later message took
                        // the task (here, or on another instance): the task is that turn's now.
                        Some(Err(e))
                            if slot.turn.is_some_and(|t| t != execution)
                                || slot.lease.as_ref().is_some_and(|l| l.live && l.owner != self.instance) =>
                        {
                            tracing::warn!(task_id = %guard.key.1, error = ?e.message, "an earlier turn's executor failed; the task goes on with the later turn");
                            None
                        }
                        Some(Err(e)) => {
                            // For the operator: the task's status says it to the caller only.
                            tracing::warn!(task_id = %guard.key.1, error = ?e.message, "the executor failed; its task ends FAILED");
                            let span = tracing::Span::current();
                            span.record("otel.status_code", "ERROR");
                            span.record("otel.status_message", e.message.as_str());
                            Some(e.message)
                        }
                        // Nothing from the agent: no task, or only the one a blocking wait made.
                        Some(Ok(()))
                            if (slot.task.is_none() || slot.placeholder)
                                && !slot.replied_with_message
                                && slot.loaded =>
                        {
                            Some("the agent returned without a reply".to_owned())
                        }
                        _ => None,
                    };
                    if let Some(text) = failed {
                        let failed = self.status_event(&guard, TaskState::Failed, Some(text));
                        // A store failure was reported to the waiters by apply_locked.
                        let _ = self.apply_locked(&guard, &mut slot, vec![failed], Some(&*user_message)).await;
                    }
                    // Counted out before the turn ends (the lease goes with the last execution here)
                    // and before streams hear of the end, so they can tell whether anything still
                    // runs the task.
                    drop(running);
                    self.end_turn(&guard, &mut slot, execution).await;
                    drop(slot);
                    // A canceled execution does not end anyone's wait: `cancel` writes CANCELED next,
                    // and that terminal event is what streams and waiters must see last.
                    if !canceled {
                        guard.publish(BusItem::ExecutionEnded(execution));
                    }
                };
                if let Err(panic) = futures_util::FutureExt::catch_unwind(AssertUnwindSafe(work)).await {
                    tracing::error!("{}", panicked("the handling of an execution", &*panic));
                    self.recover(&guard, execution, &user_message, cancelled.is_cancelled()).await;
                }
            }
            .instrument(span);
        if caller == crate::trace_context::TraceParent::default() {
            // No context came with the request: nothing to carry (and no second box).
            return Execution::new(run);
        }
        // Boxed before it is wrapped: the wrapper then moves a pointer, not the whole future.
        Execution::new(crate::trace_context::in_caller_context(caller, Box::pin(run)))
    }

    /// After a panic in this server's own handling of an execution (a bug; the agent's panics
    /// are caught apart): the task, still active, fails instead of staying WORKING with
    /// nothing running it, and its turn ends and its waiters hear so, as when an execution
    /// returns. Best effort: the store may be what panicked.
    async fn recover(&self, guard: &LiveGuard, execution: u64, user_message: &Message, canceled: bool) {
        let mut slot = guard.slot.lock().await;
        // What was applied in memory may never have reached the store: start from the store.
        slot.unload();
        if let Err(e) = self.load(guard, &mut slot).await {
            tracing::error!(task_id = %guard.key.1, error = %e, "could not reload the task after the panic");
        }
        let active = slot.task.as_ref().is_none_or(|t| !t.status.state.is_terminal());
        if slot.loaded && active && !canceled && !slot.replied_with_message {
            let failed = self.status_event(guard, TaskState::Failed, Some("an internal error ended the task".into()));
            if let Err(e) = self.apply_locked(guard, &mut slot, vec![failed], Some(user_message)).await {
                tracing::error!(task_id = %guard.key.1, error = %e, "could not fail the task after the panic");
            }
        }
        self.end_turn(guard, &mut slot, execution).await;
        drop(slot);
        if !canceled {
            guard.publish(BusItem::ExecutionEnded(execution));
        }
    }

    /// When `execution` holds the task's turn (it returned, or never started, with the task
    /// still active), the next message may start a turn, here or on any instance. When no
    /// execution runs the task here any more, its lease is given back (an earlier message's
    /// execution still running here keeps it).
    async fn end_turn(&self, guard: &Live, slot: &mut Slot, execution: u64) {
        if slot.turn == Some(execution) {
            slot.turn = None;
        }
        if slot.turn.is_some() || guard.executions.load(Ordering::Acquire) > 0 {
            return;
        }
        if slot.lease.take().is_some_and(|l| l.owner == self.instance) && self.stores.tasks.leases() {
            let (tenant, id) = (&guard.key.0, &guard.key.1);
            if let Err(e) = self.stores.tasks.release_lease(tenant, id, &self.instance).await {
                tracing::warn!(task_id = id, error = %e, "could not release the task's lease");
            }
        }
    }

    /// A status of the server's own, with an agent message of this text.
    fn status_event(&self, guard: &LiveGuard, state: TaskState, text: Option<String>) -> StreamResponse {
        self.status_with(guard, state, text.map(|t| Message::text(Role::Agent, t)))
    }

    /// A status update of this task with `message` as its status message (its ids are the
    /// task's once applied).
    fn status_with(&self, guard: &LiveGuard, state: TaskState, message: Option<Message>) -> StreamResponse {
        let message = message.map(|mut m| {
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

    /// Applies the sink's events while `work` runs, then what is left in the channel. Events
    /// already waiting when the loop wakes are applied (and committed) as one batch.
    /// Runs the agent's `work`, applying its events as they come. When `stop` completes (the
    /// task is canceled, or an agent's cancel ran out of time) the agent's future is dropped,
    /// which really stops it, with the events it had not handed over yet: `None`. `stop` is
    /// looked at only between batches, never while one is being stored: a store write given
    /// up half way would leave the task changed in memory, perhaps committed, and unpublished.
    async fn drive(
        &self,
        guard: &LiveGuard,
        work: std::pin::Pin<Box<dyn std::future::Future<Output = std::result::Result<(), ExecutorError>> + Send + '_>>,
        mut rx: mpsc::Receiver<StreamResponse>,
        user_message: Option<&Message>,
        stop: impl std::future::Future<Output = ()>,
    ) -> Option<std::result::Result<(), ExecutorError>> {
        let mut work = work;
        tokio::pin!(stop);
        let outcome = loop {
            tokio::select! {
                biased;
                () = &mut stop => return None,
                Some(event) = rx.recv() => {
                    let batch = drain(&mut rx, event);
                    if let Err(e) = self.apply(guard, batch, user_message).await {
                        // The store refused the agent's events (it is full, say), and whoever
                        // waits was told so. Going on would leave holes in the task, or leave it
                        // unfinished for ever, holding its room: the work stops here, and the task
                        // ends FAILED saying why. A task never stored was canceled for it
                        // (`commit_applied`): nothing is left to end. An executor's `cancel` (no
                        // user message) always runs canceled: its failure is reported as such.
                        if guard.is_cancelled() && user_message.is_some() {
                            return None;
                        }
                        return Some(Err(ExecutorError::new(format!(
                            "the task store did not take the agent's events: {}",
                            e.message
                        ))));
                    }
                }
                outcome = &mut work => break outcome,
            }
        };
        drop(work);
        // Events the agent sent just before returning are still applied, in order.
        rx.close();
        while let Some(event) = rx.recv().await {
            let batch = drain(&mut rx, event);
            let _ = self.apply(guard, batch, user_message).await;
        }
        Some(outcome)
    }

    async fn apply(
        &self,
        guard: &LiveGuard,
        events: Vec<StreamResponse>,
        user_message: Option<&Message>,
    ) -> Result<()> {
        let mut slot = guard.slot.lock().await;
        self.apply_locked(guard, &mut slot, events, user_message).await
    }

    /// The one writer: state machine, then one commit of every accepted event, then bus and
    /// push, under the task's lock. A store failure is published to whoever waits on the task
    /// (and returned); a conflict (another writer moved the task) drops these events: the
    /// task is reloaded and what the other writer committed is published instead.
    async fn apply_locked(
        &self,
        guard: &LiveGuard,
        slot: &mut Slot,
        events: Vec<StreamResponse>,
        user_message: Option<&Message>,
    ) -> Result<()> {
        self.apply_locked_as(guard, slot, events, user_message, false).await
    }

    /// [`Inner::apply_locked`]; `orphaned_only`: as a reaper, which commits only if the task's
    /// lease is still expired.
    async fn apply_locked_as(
        &self,
        guard: &LiveGuard,
        slot: &mut Slot,
        events: Vec<StreamResponse>,
        user_message: Option<&Message>,
        orphaned_only: bool,
    ) -> Result<()> {
        let task_id = &guard.key.1;
        if let Err(e) = self.load(guard, slot).await {
            guard.publish(BusItem::Failed(Arc::new(e.clone())));
            return Err(e);
        }
        let mark_ended = |slot: &Slot| {
            if slot.task.as_ref().is_some_and(|t| t.status.state.is_terminal()) {
                guard.ended.store(true, Ordering::Release);
            }
        };
        mark_ended(slot);
        // The task a blocking wait made before the agent spoke (see `wait`).
        let mut placeholder = std::mem::take(&mut slot.placeholder);
        let base = slot.version;
        let mut entries: Vec<LogEntry> = Vec::with_capacity(events.len() + 1);
        for mut event in events {
            if slot.replied_with_message {
                tracing::warn!(task_id, "event after a direct Message reply ignored");
                continue;
            }
            if placeholder && let StreamResponse::Message(reply) = event {
                // The agent answers with a direct reply, but its caller already holds a task:
                // the reply completes that task, as the answer it is, instead of leaving it
                // SUBMITTED with nothing left to move it.
                event = self.status_with(guard, TaskState::Completed, Some(reply));
            }
            placeholder = false;
            let Some(task) = slot.task.as_mut() else {
                // The first event of a new task: a direct reply, or the task comes into being.
                if let StreamResponse::Message(mut m) = event {
                    m.task_id.clear();
                    slot.replied_with_message = true;
                    guard.publish(BusItem::DirectReply(Arc::new(m)));
                    continue;
                }
                let context_id = user_message.map(|m| m.context_id.clone()).unwrap_or_default();
                let mut task = match &event {
                    StreamResponse::Task(t) => t.clone(),
                    _ => Task {
                        id: String::new(),
                        context_id: String::new(),
                        status: submitted_before(&event),
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
                let seq = base + entries.len() as u64 + 1;
                entries.push(LogEntry { seq, change: Change::Event(StreamResponse::Task(task.clone())) });
                let created = slot.task.insert(task);
                if matches!(event, StreamResponse::Task(_)) {
                    continue;
                }
                if let Some(entry) = accept(created, event, base + entries.len() as u64 + 1) {
                    entries.push(entry);
                }
                continue;
            };
            if !task.status.state.is_terminal()
                && let StreamResponse::Message(m) = event
            {
                // A direct Message once the task exists: a task's stream carries status and
                // artifact updates only (spec §3.1.2; a2a-sdk's server refuses the stream). It
                // goes out as a WORKING status update that carries the message, so the words
                // reach the client in a shape every client reads. WORKING, not the task's
                // state: a task waiting for input that this turn answers is working again, and
                // an INPUT_REQUIRED update would end the caller's wait and stream.
                event = self.status_with(guard, TaskState::Working, Some(m));
            }
            if let Some(entry) = accept(task, event, base + entries.len() as u64 + 1) {
                entries.push(entry);
            }
        }
        if entries.is_empty() {
            return Ok(());
        }
        match self.commit_applied(guard, slot, base, entries, orphaned_only).await {
            Ok(_) => {
                mark_ended(slot);
                Ok(())
            }
            Err(e) => {
                guard.publish(BusItem::Failed(Arc::new(e.clone())));
                Err(e)
            }
        }
    }

    /// Counts committed events, and the state each status-bearing one sets.
    fn record_committed(&self, entries: &[LogEntry]) {
        let mut events = 0;
        for entry in entries {
            let Change::Event(event) = &entry.change else { continue };
            events += 1;
            match event {
                StreamResponse::Task(t) => self.metrics.task_state(t.status.state.as_str()),
                StreamResponse::StatusUpdate(u) => self.metrics.task_state(u.status.state.as_str()),
                _ => {}
            }
        }
        self.metrics.events_applied(events);
    }

    /// Commits `entries`, already applied to the slot's task (which moved from version `base`),
    /// then publishes them. `Ok(false)`: another writer moved the task first; nothing of
    /// `entries` was stored, the slot holds the stored task again, and the other writer's
    /// changes were published. On a store failure the slot is unloaded (the next use reloads).
    async fn commit_applied(
        &self,
        guard: &LiveGuard,
        slot: &mut Slot,
        base: u64,
        entries: Vec<LogEntry>,
        orphaned_only: bool,
    ) -> Result<bool> {
        let tenant = &guard.key.0;
        let Some(task) = slot.task.as_ref() else { return Ok(true) };
        let snapshot = slot.snapshots.wants_snapshot(task, base == 0, entries.len());
        // This instance holds the task while it is active and a turn or an execution of it runs
        // here (or its turn is just starting); an interrupted or ended task, or a reaper's
        // write, holds nobody. An execution outliving its turn (a later message's execution
        // ended first, or the task came back from AUTH_REQUIRED) still holds it.
        let starts_turn = entries.iter().any(|e| matches!(e.change, Change::UserMessage(_)));
        let runs_here = slot.turn.is_some() || guard.executions.load(Ordering::Acquire) > 0;
        // Never over another instance's live lease (a turn it took while an execution here
        // waited in AUTH_REQUIRED): that instance runs the task now.
        let foreign = slot.lease.as_ref().is_some_and(|l| l.live && l.owner != self.instance);
        let hold = !orphaned_only && runs_here && !foreign && (task.status.state.is_active() || starts_turn);
        let owner = hold.then(|| Owner { id: &self.instance, lease: self.lease });
        // A new task's first commit that nobody could watch (the streams of a streaming send
        // are open by now) and that ends it need not be logged: see `Commit::log`. A task that
        // lives on is logged from its start, so a subscriber can replay all of it.
        let log = base != 0
            || slot.pushed_from_start
            || guard.streams.load(Ordering::Acquire) > 0
            || !task.status.state.is_terminal();
        // Kept with the notifications an outbox queues, so their delivery continues this trace.
        let trace = self
            .outbox
            .then(crate::trace_context::TraceParent::current)
            .flatten()
            .and_then(|t| serde_json::to_string(&t).ok());
        let commit = Commit {
            task,
            expected: base,
            entries: &entries,
            snapshot,
            owner,
            writer: Some(&self.instance),
            orphaned_only,
            push: self.outbox,
            trace: trace.as_deref(),
            log,
        };
        let started = std::time::Instant::now();
        let committed = self.stores.tasks.commit(tenant, commit).await;
        self.metrics.store("commit", started);
        self.note_write(committed.as_ref().err());
        match committed {
            Ok(CommitOutcome::Committed) => {
                self.record_committed(&entries);
                slot.version = commit.version();
                slot.snapshots.record(snapshot, entries.len());
                if hold {
                    slot.lease = Some(crate::store::Lease { owner: self.instance.clone(), live: true });
                } else {
                    // Our own lease is cleared by this write; another instance's is kept.
                    slot.lease = slot.lease.take().filter(|l| l.owner != self.instance);
                    slot.turn = None;
                }
                if !self.outbox {
                    self.notify(tenant, &guard.key.1, &entries, slot.task.as_ref()).await;
                }
                for entry in entries {
                    guard.publish(BusItem::Entry(Arc::new(entry)));
                }
                Ok(true)
            }
            Ok(CommitOutcome::Conflict) => {
                tracing::warn!(task_id = %guard.key.1, version = base, "the task moved under this writer; reloading it");
                slot.unload();
                self.load(guard, slot).await?;
                self.publish_logged(guard, base, slot.version).await;
                self.stop_if_ended_elsewhere(guard, slot);
                Ok(false)
            }
            Err(e) => {
                tracing::error!(task_id = %guard.key.1, error = %e, "could not store a task change");
                self.note_unsettled(guard);
                slot.unload();
                if base == 0 && !orphaned_only {
                    // A task never stored, whose waiters are now told the request failed (a
                    // full store, say): its execution stops, and nothing it would send later
                    // may bring the task into being after all, in a place others were refused.
                    guard.ended.store(true, Ordering::Release);
                    guard.cancel();
                }
                Err(e)
            }
        }
    }

    /// Remembers whether the store took the last write (see [`TaskManager::write_failure`]).
    fn note_write(&self, failed: Option<&A2AError>) {
        // Only the store's own faults (a full disk, an IO error: Internal), not its refusals of
        // a change (a memory store at its caps says Unavailable, an oversized change
        // InvalidRequest), which any caller can provoke and which leave the store well.
        let failed = failed.filter(|e| e.kind == ErrorKind::Internal);
        // Every commit passes here: the lock is taken only while a failure is on record.
        if failed.is_none() && !self.write_failed.load(Ordering::Acquire) {
            return;
        }
        let mut last = self.write_failure.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *last = failed.map(|e| (std::time::Instant::now(), e.message.clone()));
        self.write_failed.store(last.is_some(), Ordering::Release);
    }

    /// Notes a task whose change could not be stored (see [`Inner::unsettled`]).
    fn note_unsettled(&self, guard: &LiveGuard) {
        if self.stores.tasks.leases() {
            // Shared: the reaper of any instance ends a task whose owner stopped renewing.
            return;
        }
        let mut unsettled = self.unsettled.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(keys) = unsettled.as_mut() {
            keys.insert(guard.key.clone());
            if keys.len() > MAX_UNSETTLED {
                *unsettled = None;
            }
        }
    }

    /// Applies and publishes what other writers logged after the live task's version (up to
    /// `version` when known). A task another writer ended stops the execution running here.
    async fn follow(&self, guard: &LiveGuard, version: Option<u64>) {
        let (tenant, id) = (&guard.key.0, &guard.key.1);
        let mut slot = guard.slot.lock().await;
        if !slot.loaded || slot.task.is_none() || version.is_some_and(|v| v <= slot.version) {
            return;
        }
        let from = slot.version;
        loop {
            let page = match self.stores.tasks.log_after(tenant, id, slot.version, LOG_PAGE).await {
                Ok(page) if page.complete => page,
                Ok(_) => {
                    slot.unload();
                    return;
                }
                Err(e) => {
                    tracing::warn!(task_id = id, error = %e, "could not read the task's log");
                    return;
                }
            };
            let full = page.entries.len() == LOG_PAGE;
            for entry in page.entries {
                if let Some(task) = slot.task.as_mut() {
                    apply_to(task, &entry.change);
                }
                slot.version = entry.seq;
                guard.publish(BusItem::Entry(Arc::new(entry)));
            }
            if !full {
                break;
            }
        }
        if slot.version > from {
            slot.snapshots = Default::default();
            self.stop_if_ended_elsewhere(guard, &slot);
        }
    }

    /// Another writer ended the task (a cancel on another instance): the execution running it
    /// here stops, and for a cancel the executor gets its `cancel` call (what it writes is
    /// refused: the task has ended). Whichever way this instance heard of it: a notice
    /// ([`Self::follow`]) or its own write refused for the version ([`Self::commit_applied`]).
    fn stop_if_ended_elsewhere(&self, guard: &LiveGuard, slot: &Slot) {
        if !slot.task.as_ref().is_some_and(|t| t.status.state.is_terminal()) || guard.is_cancelled() {
            return;
        }
        tracing::info!(task_id = %guard.key.1, "the task was ended by another instance; stopping its execution here");
        guard.cancel();
        if let Some(task) = slot.task.clone().filter(|t| t.status.state == TaskState::Canceled)
            && guard.executions.load(Ordering::Acquire) > 0
        {
            self.spawn_agent_cancel(guard, task);
        }
    }

    /// Calls the executor's `cancel` for a task canceled through another instance, in the
    /// background and within [`CANCEL_GRACE`]. The caller of that cancel is not known here.
    fn spawn_agent_cancel(&self, guard: &LiveGuard, task: Task) {
        let (tx, mut rx) = mpsc::channel(SINK_CAPACITY);
        let sink = EventSink::new(tx, task.id.clone(), task.context_id.clone());
        let ctx = RequestContext {
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            message: None,
            tenant: guard.key.0.split('\u{1f}').next().unwrap_or_default().to_owned(),
            task: Some(task),
            configuration: None,
            metadata: None,
            principal: None,
            extensions: Vec::new(),
            skills: Vec::new(),
            trace: Default::default(),
            cancelled: guard.cancel_token(),
            activation: Default::default(),
        };
        let agent = self.agent.clone();
        tokio::spawn(async move {
            let cancel = tokio::time::timeout(CANCEL_GRACE, agent.cancel(ctx, sink));
            tokio::pin!(cancel);
            loop {
                tokio::select! {
                    _ = &mut cancel => return,
                    // Its events come too late to apply: the task has ended.
                    Some(_) = rx.recv() => {}
                }
            }
        });
    }

    /// Publishes the changes logged after `after` up to `upto` (written by another writer).
    async fn publish_logged(&self, guard: &LiveGuard, after: u64, upto: u64) {
        let (tenant, id) = (&guard.key.0, &guard.key.1);
        let mut last = after;
        while last < upto {
            match self.stores.tasks.log_after(tenant, id, last, LOG_PAGE).await {
                Ok(page) if page.complete && !page.entries.is_empty() => {
                    for entry in page.entries {
                        if entry.seq > upto {
                            return;
                        }
                        last = entry.seq;
                        guard.publish(BusItem::Entry(Arc::new(entry)));
                    }
                }
                Ok(_) => return,
                Err(e) => {
                    tracing::warn!(task_id = id, error = %e, "could not read the task's log");
                    return;
                }
            }
        }
    }

    /// Queues the events of one commit, in order, for every push config of their task (read
    /// once per commit, not per event). A config registered over 0.3 gets the committed `task`
    /// once per commit instead (its events are not all the 0.3 receiver's to see).
    async fn notify(&self, tenant: &str, task_id: &str, entries: &[LogEntry], task: Option<&Task>) {
        let Some(push) = &self.push else { return };
        if !entries.iter().any(|e| matches!(e.change, Change::Event(_))) {
            return;
        }
        match self.stores.push.list(tenant, task_id, 0, "").await {
            Ok(page) => {
                for entry in entries {
                    let Change::Event(event) = &entry.change else { continue };
                    for config in page.configs.iter().filter(|c| !c.v03) {
                        push.enqueue(config, Payload::Event(event));
                    }
                }
                for config in page.configs.iter().filter(|c| c.v03) {
                    if let Some(task) = task {
                        push.enqueue(config, Payload::TaskV03(task));
                    }
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
        user_message: &Message,
        return_immediately: bool,
        history_length: Option<i32>,
    ) -> Result<SendMessageResponse> {
        let deadline = tokio::time::sleep(self.limits.blocking_timeout);
        tokio::pin!(deadline);
        loop {
            let item = tokio::select! {
                // The bus first: the deadline's timer is registered only when the wait has to
                // sleep (an agent that answered at once never needs it).
                biased;
                item = rx.recv() => item,
                () = &mut deadline => break,
            };
            match item {
                Ok(BusItem::DirectReply(m)) => return Ok(SendMessageResponse::Message(Arc::unwrap_or_clone(m))),
                Ok(BusItem::Failed(e)) => return Err(Arc::unwrap_or_clone(e)),
                Ok(BusItem::Entry(e)) => match e.change.event() {
                    Some(_) if return_immediately => break,
                    Some(event) if ends_wait(event) => break,
                    _ => {}
                },
                Ok(BusItem::ExecutionEnded(id)) if id == execution => break,
                // An earlier turn of this task ending late.
                Ok(BusItem::ExecutionEnded(_)) => {}
                Err(broadcast::error::RecvError::Closed) => break,
                // Fell behind: the snapshot below is the truth; keep waiting unless it ends the
                // wait, or this execution's end was among what was missed. It was counted
                // before this wait began, so none running means it returned; a canceled one
                // is followed by CANCELED, which comes next (or shows in the snapshot).
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let mut slot = guard.slot.lock().await;
                    self.load(guard, &mut slot).await?;
                    let ended_here = guard.executions.load(Ordering::Acquire) == 0 && !guard.is_cancelled();
                    if ended_here || slot.task.as_ref().is_some_and(|t| t.status.state.ends_blocking_wait()) {
                        break;
                    }
                }
            }
        }
        let mut slot = guard.slot.lock().await;
        // Another wait's reply may have taken the finished task from the entry.
        self.load(guard, &mut slot).await?;
        if slot.task.is_none() && !slot.replied_with_message {
            // The wait ended before the agent said anything: the task is made now, SUBMITTED
            // with the caller's message, so the caller has its id to follow, cancel or
            // continue; the agent's events go on from there (an agent that then returns
            // without one still fails it).
            let submitted = StreamResponse::Task(Task {
                id: guard.key.1.clone(),
                context_id: String::new(),
                status: TaskStatus::now(TaskState::Submitted),
                artifacts: Vec::new(),
                history: Vec::new(),
                metadata: None,
            });
            self.apply_locked(guard, &mut slot, vec![submitted], Some(user_message)).await?;
            slot.placeholder = true;
        }
        let task = if slot.task.as_ref().is_some_and(|t| t.status.state.is_terminal()) {
            // Final: nothing here changes it any more, so the reply takes it instead of a copy
            // (most of a task made and finished in one call); whoever uses the entry next
            // reads it from the store again.
            let task = slot.task.take();
            slot.unload();
            task
        } else {
            slot.task.clone()
        };
        match task {
            Some(task) => Ok(SendMessageResponse::Task(self.capped(task, history_length))),
            None => Err(A2AError::internal("the agent produced no task")),
        }
    }

    /// Forwards the bus to one client stream until the task ends, the client leaves, or the
    /// server shuts down. The stream's own tokio task holds the live entry. `opened.first` goes
    /// out first; `opened.seen` is the last sequence number it covers: later changes go out once
    /// each, in order, and a gap (the stream fell behind the bus) is filled from the log.
    fn stream(self: Arc<Self>, guard: LiveGuard, mut rx: broadcast::Receiver<BusItem>, opened: Opened) -> EventStream {
        let Opened { first, seen, slot: open, execution, history_length } = opened;
        // The stream knows the task at `seen`: a later reload publishes what comes after it.
        guard.shown.fetch_max(seen, Ordering::AcqRel);
        let (tx, out) = mpsc::channel(STREAM_CAPACITY);
        // A SendStreamingMessage's opening snapshot comes before its executor's events.
        let lead = if execution.is_some() { first.len() } else { 0 };
        let streams = self.streams.clone();
        streams.spawn(async move {
            let _open = open;
            let mut seen = seen;
            let last = first.len().saturating_sub(1);
            for (i, first) in first.into_iter().enumerate() {
                // An opening Task snapshot of a task waiting for input does not end the stream
                // (its next turn is what the stream is for); a terminal one may. A replayed
                // INPUT_REQUIRED ends it only as the latest state: one of an earlier turn, with
                // a later turn replayed after it, is history (a client resuming from before it
                // follows the task on, not back to a question already answered).
                let done = match &first {
                    StreamItem::Event { event: StreamResponse::Task(t), .. } if i == 0 => t.status.state.is_terminal(),
                    StreamItem::Event { event, .. } => ends_stream(event) && (i == last || ends_task(event)),
                    StreamItem::Error(_) => false,
                };
                if tx.send(self.capped_item(first, history_length)).await.is_err() || done {
                    return;
                }
            }
            loop {
                let received = tokio::select! {
                    // What was published before shutdown (a final FAILED) still goes out.
                    biased;
                    received = rx.recv() => received,
                    () = self.shutdown.cancelled() => {
                        // Streams of ended or interrupted tasks have closed by now: this task
                        // goes on (on another instance, or with a later turn). Not a clean end,
                        // which a client reads as the stream's end: a retryable error, so that
                        // it subscribes again, elsewhere or later. (A stream whose queue is
                        // full, its client far behind, just ends.)
                        let _ = tx.try_send(StreamItem::Error(server_shutting_down()));
                        return;
                    }
                    () = tx.closed() => return,
                };
                let entry = match received {
                    Ok(BusItem::DirectReply(m)) => {
                        let _ = tx.send(item_of(None, Arc::unwrap_or_clone(m))).await;
                        return;
                    }
                    Ok(BusItem::Failed(e)) => {
                        let _ = tx.send(StreamItem::Error(Arc::unwrap_or_clone(e))).await;
                        return;
                    }
                    Ok(BusItem::Entry(e)) => e,
                    // A stream (SendStreamingMessage or SubscribeToTask) ends when no execution
                    // runs the task here any more. One returning while another still runs (a
                    // later message's) is not the end: the spec ends streams only at terminal or
                    // interrupted states, which `ends_stream` sees. What was committed before
                    // this look may still be behind this item on the bus: it goes out first.
                    Ok(BusItem::ExecutionEnded(_)) => {
                        if guard.executions.load(Ordering::Acquire) > 0 {
                            continue;
                        }
                        let upto = guard.slot.lock().await.version;
                        let _ = self.catch_up(&guard, &tx, &mut seen, upto, history_length).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        // Catch up from the log up to what the task holds now.
                        let upto = guard.slot.lock().await.version;
                        match self.catch_up(&guard, &tx, &mut seen, upto, history_length).await {
                            Some(true) => continue,
                            _ => return,
                        }
                    }
                };
                if entry.seq <= seen {
                    continue;
                }
                if entry.seq > seen + 1 {
                    match self.catch_up(&guard, &tx, &mut seen, entry.seq - 1, history_length).await {
                        Some(true) => {}
                        _ => return,
                    }
                }
                seen = entry.seq;
                let Some(event) = entry.change.event() else { continue };
                let done = ends_stream(event);
                if tx.send(self.capped_item(item(Some(entry.seq), event.clone()), history_length)).await.is_err()
                    || done
                {
                    return;
                }
            }
        });
        EventStream::new(out).with_lead(lead)
    }

    /// Sends a stream what was logged after `seen` up to `upto`. `Some(true)`: go on;
    /// `Some(false)`: the stream is over (its task ended, or the client left); `None`: the log
    /// could not be read (the stream ends with that error).
    async fn catch_up(
        &self,
        guard: &LiveGuard,
        tx: &mpsc::Sender<StreamItem>,
        seen: &mut u64,
        upto: u64,
        history_length: Option<i32>,
    ) -> Option<bool> {
        if upto <= *seen {
            return Some(true);
        }
        let items = match self.replay(guard, *seen, upto).await {
            Ok(items) => items,
            Err(e) => {
                let _ = tx.send(StreamItem::Error(e)).await;
                return None;
            }
        };
        *seen = upto;
        for item in items {
            let done = matches!(&item, StreamItem::Event { event, .. } if ends_stream(event));
            if tx.send(self.capped_item(item, history_length)).await.is_err() || done {
                return Some(false);
            }
        }
        Some(true)
    }
}

/// The batch of events to apply: `first`, and those already queued behind it.
fn drain(rx: &mut mpsc::Receiver<StreamResponse>, first: StreamResponse) -> Vec<StreamResponse> {
    let mut batch = vec![first];
    while batch.len() < BATCH {
        match rx.try_recv() {
            Ok(event) => batch.push(event),
            Err(_) => break,
        }
    }
    batch
}

/// Checks an agent event against the task and applies it: the log entry `seq` to commit, or
/// `None` when the event is refused (logged; the agent is not told).
fn accept(task: &mut Task, event: StreamResponse, seq: u64) -> Option<LogEntry> {
    let task_id = task.id.as_str();
    let event = match with_ids(event, task) {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!(task_id, error = %e, "agent event refused");
            return None;
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
        // The state it already has: an executor's `cancel` reporting CANCELED after the
        // server wrote it (a race every cancel may run), not a mistake worth a warning.
        let again = matches!(&event, StreamResponse::StatusUpdate(u) if u.status.state == from);
        if again {
            tracing::debug!(task_id, error = %e, "agent event refused: the task is in that state already");
        } else {
            tracing::warn!(task_id, error = %e, "agent event refused");
        }
        return None;
    }
    let change = Change::Event(event);
    apply_to(task, &change);
    Some(LogEntry { seq, change })
}

/// [`check_room`] for the message that starts a task.
fn check_first_message(message: &Message, max_task_bytes: usize) -> Result<()> {
    let adds = weight::message(message);
    if adds <= max_task_bytes {
        return Ok(());
    }
    Err(A2AError::invalid_request(format!(
        "this message takes about {adds} bytes: more than one task holds (limits.maxTaskBytes {max_task_bytes})"
    )))
}

/// Refuses a message that would take the client's messages in `task` past `max_task_bytes`
/// (`Limits::max_task_bytes`): InvalidRequest, naming the way on (a new task can refer to this
/// one). What the agent produced does not count: a client must always be able to answer an
/// agent that asks for input.
fn check_room(task: &Task, message: &Message, max_task_bytes: usize) -> Result<()> {
    let from_client = task.history.iter().filter(|m| m.role == Role::User);
    let (held, adds) = (from_client.map(weight::message).sum::<usize>(), weight::message(message));
    if held.saturating_add(adds) <= max_task_bytes {
        return Ok(());
    }
    Err(A2AError::invalid_request(format!(
        "task {} holds about {held} bytes of the client's messages and this one about {adds}: more than one \
         task takes (limits.maxTaskBytes {max_task_bytes}); start a new task (referenceTaskIds can name this one)",
        task.id
    ))
    .with_meta("taskId", &task.id))
}

/// SUBMITTED for a task the agent's first `event` brings into being: stamped no later than
/// that event (the agent stamped its status before it reached here), so a task's status times
/// never run backwards.
fn submitted_before(event: &StreamResponse) -> TaskStatus {
    let mut status = TaskStatus::now(TaskState::Submitted);
    if let StreamResponse::StatusUpdate(e) = event
        && let Some(at) = e.status.timestamp
        && status.timestamp.is_some_and(|now| at < now)
    {
        status.timestamp = Some(at);
    }
    status
}

/// How a client stream opens: what goes out first and the last sequence number it covers, the
/// slot it holds, the execution it follows (SendStreamingMessage), and the history length its
/// Task events are trimmed to (besides the server's cap).
struct Opened {
    first: Vec<StreamItem>,
    seen: u64,
    slot: Option<StreamSlot>,
    execution: Option<u64>,
    history_length: Option<i32>,
}

fn item(id: Option<u64>, event: StreamResponse) -> StreamItem {
    StreamItem::Event { id, event }
}

fn item_of(id: Option<u64>, message: Message) -> StreamItem {
    item(id, StreamResponse::Message(message))
}

/// Whether a blocking send returns at this event.
fn ends_wait(event: &StreamResponse) -> bool {
    match event {
        StreamResponse::Task(t) => t.status.state.ends_blocking_wait(),
        StreamResponse::StatusUpdate(e) => e.status.state.ends_blocking_wait(),
        _ => false,
    }
}

/// Whether a stream closes after this event ([`TaskState::ends_stream`]).
fn ends_stream(event: &StreamResponse) -> bool {
    match event {
        StreamResponse::Task(t) => t.status.state.ends_stream(),
        StreamResponse::StatusUpdate(e) => e.status.state.ends_stream(),
        _ => false,
    }
}

/// Whether `event` puts its task in a terminal state: nothing follows it.
fn ends_task(event: &StreamResponse) -> bool {
    match event {
        StreamResponse::Task(t) => t.status.state.is_terminal(),
        StreamResponse::StatusUpdate(e) => e.status.state.is_terminal(),
        _ => false,
    }
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
    // Copied only where they differ: an EventSink's events carry the right ids already.
    set_if_other(task_id, &task.id);
    set_if_other(context_id, &task.context_id);
    if let StreamResponse::StatusUpdate(e) = &mut event
        && let Some(m) = &mut e.status.message
    {
        set_if_other(&mut m.task_id, &task.id);
        set_if_other(&mut m.context_id, &task.context_id);
    }
    Ok(event)
}

fn set_if_other(field: &mut String, value: &str) {
    if field != value {
        value.clone_into(field);
    }
}
