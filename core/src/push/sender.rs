//! Delivers StreamResponse events to registered webhooks (spec §9).
//!
//! The task manager calls [`PushSender::enqueue`] on its hot path, so enqueue never blocks and
//! never waits on the network: it checks the target, serialises the event once and appends it to
//! the queue of its task. One short-lived worker per task with queued notifications delivers them
//! in order (a later event is not sent before an earlier one is delivered or given up on), while
//! different tasks proceed concurrently: at most `max_concurrent_deliveries` requests at once,
//! at most `max_concurrent_per_origin` of them to one origin, and at most
//! `max_concurrent_per_partition` for one partition's tasks (tenant and principal), so webhooks
//! that never answer, or one caller's many, cannot take every slot. The queue is bounded across
//! all tasks: when full, new notifications are dropped and logged, never buffered without limit. A worker exits as soon as
//! its task's queue is empty, so idle tasks cost nothing.
//!
//! Each delivery is a POST of the event's JSON (of the 0.3 task, for a config registered over
//! 0.3: see [`Payload`]) with `Content-Type: application/a2a+json` (`application/json` for 0.3), the config's token
//! (`X-A2A-Notification-Token`) and authentication (`Authorization`, when it has credentials).
//! Connection errors, timeouts, 5xx and 429 are retried with jittered exponential backoff; other
//! answers are final. The SSRF guard (see [`super::guard`]) refuses non-public targets (unless allowed)
//! both by URL and after DNS resolution; redirects are not followed and proxies are not used,
//! since either would let a request reach an address the guard never saw.

use super::guard::{self, GuardedResolver, PrivateTargets};
use crate::error::{A2AError, Result};
use crate::model::{StreamResponse, Task, TaskPushNotificationConfig};
use bytes::Bytes;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue, RETRY_AFTER};
use reqwest::{StatusCode, Url};
use std::collections::VecDeque;
use std::collections::hash_map::{Entry, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The media type of a push notification body.
const A2A_JSON: &str = "application/a2a+json";
/// The header carrying the config's `token` (0.3's name; 1.0 SDKs still send it).
const TOKEN_HEADER: HeaderName = HeaderName::from_static("x-a2a-notification-token");

/// What one notification carries.
#[derive(Debug, Clone, Copy)]
pub enum Payload<'a> {
    /// The event, a 1.0 StreamResponse.
    Event(&'a StreamResponse),
    /// For a config registered over 0.3 (its `v03`): the task as it stood after the event, in
    /// its 0.3 form, which 0.3 servers send and 0.3 receivers read.
    TaskV03(&'a Task),
}

impl Payload<'_> {
    fn task_id(&self) -> Option<&str> {
        match self {
            Payload::Event(event) => event.task_id(),
            Payload::TaskV03(task) => Some(&task.id),
        }
    }

    fn body(&self) -> std::result::Result<Vec<u8>, String> {
        let body = match self {
            Payload::Event(event) => serde_json::to_vec(event),
            Payload::TaskV03(task) => {
                let task = crate::model::v03::Task::try_from((*task).clone()).map_err(|e| e.message)?;
                serde_json::to_vec(&task)
            }
        };
        body.map_err(|e| e.to_string())
    }
}

/// How the sender delivers.
#[derive(Debug, Clone)]
pub struct PushSenderConfig {
    /// Per-attempt timeout (connect + response).
    pub timeout: Duration,
    /// Attempts per notification, the first included.
    pub max_attempts: u32,
    /// Delay before the first retry; doubled each retry up to `max_backoff`.
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// Notifications waiting across all tasks; beyond it new ones are dropped (and logged).
    pub queue_capacity: usize,
    /// Loopback, private, link-local and other non-public targets allowed anyway: none (the
    /// default), all (tests, intranets), or an allow-list of names, addresses and ranges.
    pub allow_private_targets: PrivateTargets,
    /// Requests in flight at once across all tasks (outbound connections are finite).
    pub max_concurrent_deliveries: usize,
    /// Requests in flight at once to one origin (scheme, host and port), so webhooks that
    /// never answer hold at most this many of `max_concurrent_deliveries` and the other
    /// targets still get theirs.
    pub max_concurrent_per_origin: usize,
    /// Requests in flight at once for the tasks of one partition (tenant and principal), so one
    /// caller's webhooks, however many origins they name, leave the rest of
    /// `max_concurrent_deliveries` to the others. Tasks of no tenant and no principal (an open
    /// server) are everyone's, and have no such cap.
    pub max_concurrent_per_partition: usize,
    /// Signs each notification (a JWT in `A2A-Notification-Signature`); `None`: unsigned.
    pub signer: Option<Arc<super::PushSigner>>,
}

impl Default for PushSenderConfig {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            max_attempts: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            queue_capacity: 10_000,
            allow_private_targets: PrivateTargets::Blocked,
            max_concurrent_deliveries: 64,
            max_concurrent_per_origin: 16,
            max_concurrent_per_partition: 32,
            signer: None,
        }
    }
}

/// Counts of what happened to notifications since the sender was created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PushStats {
    /// Answered 2xx.
    pub delivered: u64,
    /// Given up: retries exhausted, or a final non-2xx answer.
    pub failed: u64,
    /// Refused by the SSRF guard (by URL or after DNS resolution); never sent.
    pub refused: u64,
    /// Never attempted: queue full, sender shut down, invalid header values, or still queued
    /// when the shutdown deadline passed.
    pub dropped: u64,
}

/// Sends push notifications in the background. Cheap to clone.
#[derive(Clone)]
pub struct PushSender {
    inner: Arc<Inner>,
}

struct Inner {
    config: PushSenderConfig,
    state: Mutex<State>,
    /// Every worker; `shutdown` waits on it.
    tracker: TaskTracker,
    /// Cancelled when the shutdown deadline passes: workers stop and drop what is left.
    cancel: CancellationToken,
    permits: Semaphore,
    /// Per partition and per origin: a delivery takes its partition's, then its origin's, then
    /// a shared permit.
    origins: KeyedPermits,
    partitions: KeyedPermits,
    /// Built on first delivery, so construction needs no runtime. `None`: the build failed.
    client: OnceLock<Option<reqwest::Client>>,
    resolver: GuardedResolver,
    delivered: AtomicU64,
    failed: AtomicU64,
    refused: AtomicU64,
    dropped: AtomicU64,
    /// The same outcomes, as the server's `a2a_push_notifications_total{outcome}`.
    metrics: Arc<crate::metrics::Metrics>,
}

/// Notifications are ordered per task: tenant + task id.
type TaskKey = (String, String);

#[derive(Default)]
struct State {
    /// Queued notifications per task. A key is present exactly while its worker runs; the
    /// worker removes it (under this lock) when it finds the queue empty.
    queues: HashMap<TaskKey, VecDeque<Job>>,
    /// Queued plus in flight, across all tasks; bounded by `queue_capacity`.
    pending: usize,
    closed: bool,
    /// The last enqueue was dropped (queue full or closed).
    dropping: bool,
}

/// One notification, ready to send.
struct Job {
    url: Url,
    body: Bytes,
    /// `application/a2a+json`; `application/json` for a 0.3 payload, as 0.3 senders post it
    /// (0.3 receivers' JSON parsers, Express's `express.json()` among them, read no other).
    content_type: &'static str,
    token: Option<HeaderValue>,
    authorization: Option<HeaderValue>,
    /// The trace context (`traceparent`, ...) of the execution that produced the event, so the
    /// receiver's spans join the task's trace.
    trace: http::HeaderMap,
    task_id: String,
    config_id: String,
    /// The config's partition (tenant and principal): whose share of the permits it takes.
    partition: String,
}

/// Permits per key (an origin, a partition), made on first use and forgotten with their last
/// holder, so the map holds only keys with work under way.
struct KeyedPermits {
    per_key: usize,
    map: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl KeyedPermits {
    fn new(per_key: usize) -> Self {
        Self { per_key: per_key.max(1), map: Mutex::default() }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Semaphore>>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for one of `key`'s permits. The holder is made before the wait, so a wait that
    /// is given up (a shutdown) still forgets the key.
    async fn acquire(&self, key: &str) -> KeyedPermit<'_> {
        let semaphore =
            self.lock().entry(key.to_owned()).or_insert_with(|| Arc::new(Semaphore::new(self.per_key))).clone();
        let mut held = KeyedPermit { owner: self, key: key.to_owned(), semaphore, permit: None };
        held.permit = Some(held.semaphore.clone().acquire_owned().await.expect("the semaphore is never closed"));
        held
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

struct KeyedPermit<'a> {
    owner: &'a KeyedPermits,
    key: String,
    semaphore: Arc<Semaphore>,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl Drop for KeyedPermit<'_> {
    fn drop(&mut self) {
        drop(self.permit.take());
        let mut map = self.owner.lock();
        // Clones are made under this lock: two left (the map's and this one) means no other.
        if Arc::strong_count(&self.semaphore) == 2 {
            map.remove(&self.key);
        }
    }
}

/// Why a config cannot be delivered to.
enum Unsendable {
    Refused(String),
    Invalid(String),
}

impl Job {
    fn new(
        config: &TaskPushNotificationConfig,
        payload: Payload<'_>,
        task_id: &str,
        allowed: &PrivateTargets,
    ) -> std::result::Result<Self, Unsendable> {
        let url = guard::check_url(&config.url, allowed).map_err(Unsendable::Refused)?;
        let sensitive = |value: &str, what: &str| {
            let mut value = HeaderValue::from_str(value)
                .map_err(|_| Unsendable::Invalid(format!("{what} is not a valid header value")))?;
            value.set_sensitive(true);
            Ok(value)
        };
        let token = match config.token.as_str() {
            "" => None,
            token => Some(sensitive(token, "token")?),
        };
        let authorization = match &config.authentication {
            None => None,
            // A scheme without credentials says nothing a receiver could check: no header (as
            // the official SDKs send none).
            Some(auth) if auth.credentials.is_empty() => None,
            Some(auth) => Some(sensitive(format!("{} {}", auth.scheme, auth.credentials).trim(), "authentication")?),
        };
        let body =
            payload.body().map_err(|e| Unsendable::Invalid(format!("the notification does not serialise: {e}")))?;
        let content_type = match payload {
            Payload::Event(_) => A2A_JSON,
            Payload::TaskV03(_) => "application/json",
        };
        let mut trace = http::HeaderMap::new();
        crate::trace_context::inject_current(&mut trace);
        Ok(Job {
            url,
            body: body.into(),
            content_type,
            token,
            authorization,
            trace,
            task_id: task_id.to_owned(),
            config_id: config.id.clone(),
            partition: config.tenant.clone(),
        })
    }
}

/// What one attempt came to.
enum Attempt {
    Delivered,
    /// Worth another try, after `after` if the receiver said (Retry-After).
    Retry {
        reason: String,
        after: Option<Duration>,
    },
    Failed(String),
    Refused(String),
}

impl PushSender {
    /// `metrics`: where delivery outcomes are counted besides [`PushSender::stats`].
    pub fn new(config: PushSenderConfig, metrics: Arc<crate::metrics::Metrics>) -> Self {
        Self::with_resolver(config, GuardedResolver::default(), metrics)
    }

    fn with_resolver(
        config: PushSenderConfig,
        mut resolver: GuardedResolver,
        metrics: Arc<crate::metrics::Metrics>,
    ) -> Self {
        // The resolver applies the same allow-list as the URL check.
        resolver.allowed = Arc::new(config.allow_private_targets.clone());
        let permits = Semaphore::new(config.max_concurrent_deliveries.max(1));
        let origins = KeyedPermits::new(config.max_concurrent_per_origin);
        let partitions = KeyedPermits::new(config.max_concurrent_per_partition);
        Self {
            inner: Arc::new(Inner {
                config,
                state: Mutex::default(),
                tracker: TaskTracker::new(),
                cancel: CancellationToken::new(),
                permits,
                origins,
                partitions,
                client: OnceLock::new(),
                resolver,
                delivered: AtomicU64::new(0),
                failed: AtomicU64::new(0),
                refused: AtomicU64::new(0),
                dropped: AtomicU64::new(0),
                metrics,
            }),
        }
    }

    /// Checks a config when it is created (CreateTaskPushNotificationConfig, or in a
    /// SendMessage's configuration at `at`): each value within its bound in bytes (id 256,
    /// url 4096, token 4096, authentication scheme 64 and credentials 8192: a store keeps
    /// what a client sends, and every notification carries it), the token and credentials
    /// fit an HTTP header (so an accepted config can be delivered), and the URL as
    /// [`Self::check_url`] checks it. InvalidParams naming the field on refusal.
    pub fn check_config(&self, config: &TaskPushNotificationConfig, at: &str) -> Result<()> {
        let field = |name: &str| if at.is_empty() { name.to_owned() } else { format!("{at}.{name}") };
        let auth = config.authentication.as_ref();
        let (scheme, credentials) = auth.map_or(("", ""), |a| (a.scheme.as_str(), a.credentials.as_str()));
        let fields = [
            ("id", config.id.as_str(), 256, false),
            ("url", config.url.as_str(), 4096, false),
            ("token", config.token.as_str(), 4096, true),
            ("authentication.scheme", scheme, 64, true),
            ("authentication.credentials", credentials, 8192, true),
        ];
        for (name, value, max, in_header) in fields {
            if value.len() > max {
                return Err(A2AError::invalid_field(field(name), format!("at most {max} bytes")));
            }
            if in_header && HeaderValue::from_str(value).is_err() {
                return Err(A2AError::invalid_field(field(name), "must fit an HTTP header (no control characters)"));
            }
        }
        self.check_url(&config.url, &field("url"))
    }

    /// Checks a webhook URL when a config is created: http(s) only, and no non-public target
    /// unless allowed. InvalidParams naming `field` on refusal.
    ///
    /// Names are resolved only at delivery time (and checked again then), so a name is
    /// accepted here even if it resolves to a private address.
    pub fn check_url(&self, url: &str, field: &str) -> Result<()> {
        guard::check_url(url, &self.inner.config.allow_private_targets)
            .map(drop)
            .map_err(|reason| A2AError::invalid_field(field, reason))
    }

    /// Queues `event` for delivery to `config.url`. Never blocks; per-task order is kept.
    ///
    /// Must be called inside a tokio runtime (the worker is spawned on it). A notification that
    /// cannot be queued (queue full, shut down, refused target) is logged and dropped.
    pub fn enqueue(&self, config: &TaskPushNotificationConfig, payload: Payload<'_>) {
        let inner = &self.inner;
        let task_id = payload.task_id().unwrap_or(&config.task_id);
        let Some(job) = self.job(config, payload, task_id) else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            inner.settle(&inner.dropped, "dropped");
            let config_id = &config.id;
            tracing::warn!(task_id, config_id, "push notification dropped: enqueue outside a tokio runtime");
            return;
        };
        let key = (config.tenant.clone(), task_id.to_owned());
        let mut state = inner.lock();
        if state.closed || state.pending >= inner.config.queue_capacity {
            // Warn once per overflow episode; the rest of a burst goes to debug (and the stats).
            let first = !std::mem::replace(&mut state.dropping, true);
            let why = if state.closed { "sender shut down" } else { "queue full" };
            drop(state);
            inner.settle(&inner.dropped, "dropped");
            let (config_id, capacity) = (&config.id, inner.config.queue_capacity);
            if first {
                tracing::warn!(task_id, config_id, capacity, "push notification dropped: {why}");
            } else {
                tracing::debug!(task_id, config_id, capacity, "push notification dropped: {why}");
            }
            return;
        }
        state.dropping = false;
        state.pending += 1;
        match state.queues.entry(key) {
            Entry::Occupied(mut queue) => queue.get_mut().push_back(job),
            Entry::Vacant(slot) => {
                let key = slot.key().clone();
                slot.insert(VecDeque::from([job]));
                // Spawned under the lock, so `shutdown` (which closes under it) sees this worker.
                let worker = Worker { inner: self.inner.clone(), key, in_flight: false, finished: false };
                inner.tracker.spawn_on(worker.run(), &runtime);
            }
        }
    }

    /// Delivers `event` to `config` now, with the configured retries, and answers when that is
    /// settled: delivered, or given up (refused target, final error, retries exhausted). For a
    /// caller that keeps its own durable queue (the stores' push outbox) and deletes an entry
    /// only once it is settled. `false`: not settled (the sender is shutting down).
    /// `trace` is the context of the work that produced the event (kept in the outbox); the
    /// current one when `None`.
    pub async fn deliver_now(
        &self,
        config: &TaskPushNotificationConfig,
        payload: Payload<'_>,
        trace: Option<crate::trace_context::TraceParent>,
    ) -> bool {
        let inner = &self.inner;
        let task_id = payload.task_id().unwrap_or(&config.task_id);
        // A config that can never be delivered to is settled (counted and logged by `job`).
        let Some(mut job) = self.job(config, payload, task_id) else { return true };
        if let Some(trace) = trace {
            job.trace = trace.headers();
        }
        tokio::select! {
            () = inner.deliver(&job) => true,
            () = inner.cancel.cancelled() => false,
        }
    }

    /// The notification to send, or `None` (counted and logged) when its config can never be
    /// delivered to: a refused target or an invalid header value.
    fn job(&self, config: &TaskPushNotificationConfig, payload: Payload<'_>, task_id: &str) -> Option<Job> {
        let inner = &self.inner;
        match Job::new(config, payload, task_id, &inner.config.allow_private_targets) {
            Ok(job) => Some(job),
            Err(Unsendable::Refused(reason)) => {
                inner.settle(&inner.refused, "refused");
                tracing::warn!(task_id, config_id = %config.id, %reason, "push notification refused: target not allowed");
                None
            }
            Err(Unsendable::Invalid(reason)) => {
                inner.settle(&inner.dropped, "dropped");
                tracing::warn!(task_id, config_id = %config.id, %reason, "push notification dropped: invalid config");
                None
            }
        }
    }

    /// Waits up to `deadline` for queued notifications to go out. New ones are refused from the
    /// start; what is still undelivered at the deadline is dropped (and logged).
    pub async fn shutdown(&self, deadline: Duration) {
        let inner = &self.inner;
        inner.lock().closed = true;
        inner.tracker.close();
        if tokio::time::timeout(deadline, inner.tracker.wait()).await.is_err() {
            let left = inner.lock().pending;
            tracing::warn!(left, "push sender: shutdown deadline passed; undelivered notifications dropped");
            inner.cancel.cancel();
            inner.tracker.wait().await;
        }
    }

    /// Notifications queued or in flight right now.
    pub fn queued(&self) -> usize {
        self.inner.lock().pending
    }

    /// What happened to notifications so far.
    pub fn stats(&self) -> PushStats {
        let inner = &self.inner;
        PushStats {
            delivered: inner.delivered.load(Ordering::Relaxed),
            failed: inner.failed.load(Ordering::Relaxed),
            refused: inner.refused.load(Ordering::Relaxed),
            dropped: inner.dropped.load(Ordering::Relaxed),
        }
    }
}

impl std::fmt::Debug for PushSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushSender").field("config", &self.inner.config).field("queued", &self.queued()).finish()
    }
}

/// Delivers one task's queue in order, then exits. Its `Drop` accounts for what is left if it
/// is stopped early (shutdown deadline, runtime shut down), so the key never stays orphaned.
struct Worker {
    inner: Arc<Inner>,
    key: TaskKey,
    in_flight: bool,
    finished: bool,
}

impl Worker {
    async fn run(mut self) {
        let inner = self.inner.clone();
        loop {
            let job = {
                let mut state = inner.lock();
                match state.queues.get_mut(&self.key).and_then(VecDeque::pop_front) {
                    Some(job) => job,
                    None => {
                        state.queues.remove(&self.key);
                        self.finished = true;
                        return;
                    }
                }
            };
            self.in_flight = true;
            tokio::select! {
                biased;
                () = inner.cancel.cancelled() => return,
                () = inner.deliver(&job) => {}
            }
            self.in_flight = false;
            inner.lock().pending -= 1;
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let mut state = self.inner.lock();
        let lost = state.queues.remove(&self.key).map_or(0, |queue| queue.len()) + usize::from(self.in_flight);
        state.pending = state.pending.saturating_sub(lost);
        drop(state);
        self.inner.settle_many(&self.inner.dropped, lost as u64, "dropped");
        if lost > 0 && !self.inner.cancel.is_cancelled() {
            tracing::warn!(task_id = %self.key.1, lost, "push worker stopped early; notifications dropped");
        }
    }
}

impl Inner {
    /// Counts a notification's outcome (delivered, failed, refused, dropped).
    fn settle(&self, counter: &AtomicU64, outcome: &'static str) {
        self.settle_many(counter, 1, outcome);
    }

    fn settle_many(&self, counter: &AtomicU64, n: u64, outcome: &'static str) {
        counter.fetch_add(n, Ordering::Relaxed);
        self.metrics.push(outcome, n);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent at every unlock, so a panic elsewhere cannot corrupt it.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn client(&self) -> Option<&reqwest::Client> {
        self.client
            .get_or_init(|| {
                let mut builder = reqwest::Client::builder()
                    .connect_timeout(self.config.timeout)
                    .redirect(reqwest::redirect::Policy::none())
                    .no_proxy()
                    .user_agent(concat!("a2a-native/", env!("CARGO_PKG_VERSION")));
                if self.config.allow_private_targets != PrivateTargets::All {
                    builder = builder.dns_resolver(self.resolver.clone());
                }
                builder
                    .build()
                    .map_err(|e| tracing::error!(error = %e, "push sender: cannot build its HTTP client"))
                    .ok()
            })
            .as_ref()
    }

    /// Delivers `job` with retries; logs and counts the outcome.
    /// Delivers `job` in a span of its own (`a2a.push`, a client span): a child of the
    /// execution whose event it carries, so a trace shows each delivery, its attempts and its
    /// outcome, and the receiver's spans hang under the delivery.
    async fn deliver(&self, job: &Job) {
        use tracing::Instrument;
        let span = tracing::debug_span!(
            "a2a.push",
            otel.kind = "client",
            task_id = %job.task_id,
            config_id = %job.config_id,
            host = job.url.host_str().unwrap_or(""),
            attempts = tracing::field::Empty,
            outcome = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        crate::trace_context::continue_trace(&span, &job.trace);
        let (outcome, attempts) = self.deliver_in_span(job).instrument(span.clone()).await;
        span.record("outcome", outcome);
        span.record("attempts", i64::from(attempts));
        if outcome != "delivered" {
            // Failed, refused or dropped: the notification did not arrive.
            span.record("otel.status_code", "ERROR");
        }
    }

    /// [`Inner::deliver`]'s work: the outcome settled, and the attempts it took.
    async fn deliver_in_span(&self, job: &Job) -> (&'static str, u32) {
        let (task_id, config_id, host) = (&job.task_id, &job.config_id, job.url.host_str().unwrap_or(""));
        let Some(client) = self.client() else {
            self.settle(&self.failed, "failed");
            return ("failed", 0);
        };
        // One token per notification, reused by its retries (same jti: receivers drop repeats).
        let signature = match &self.config.signer {
            None => None,
            Some(signer) => match signer.sign(job.url.as_str(), task_id, &job.body).map(HeaderValue::try_from) {
                Ok(Ok(value)) => Some(value),
                _ => {
                    self.settle(&self.dropped, "dropped");
                    tracing::error!(task_id, config_id, "push notification not signed; not sent");
                    return ("dropped", 0);
                }
            },
        };
        let attempts = self.config.max_attempts.max(1);
        let mut backoff = self.config.initial_backoff;
        for attempt in 1..=attempts {
            let outcome = {
                // The narrow permits first, so waiting for them holds none of the shared ones; the
                // partition's before the origin's, so a caller at its cap holds no permit of an
                // origin other callers use. The partition "" (no tenant, no principal: an open
                // server, or shared visibility) is everyone's: no cap of its own.
                let _partition = match job.partition.as_str() {
                    "" => None,
                    partition => Some(self.partitions.acquire(partition).await),
                };
                let _origin = self.origins.acquire(&job.url.origin().ascii_serialization()).await;
                let _permit = self.permits.acquire().await.expect("the semaphore is never closed");
                self.attempt(client, job, signature.as_ref()).await
            };
            match outcome {
                Attempt::Delivered => {
                    self.settle(&self.delivered, "delivered");
                    tracing::debug!(task_id, config_id, host, attempt, "push notification delivered");
                    return ("delivered", attempt);
                }
                Attempt::Refused(reason) => {
                    self.settle(&self.refused, "refused");
                    tracing::warn!(task_id, config_id, %reason, "push notification refused: target not allowed");
                    return ("refused", attempt);
                }
                Attempt::Failed(reason) => {
                    self.settle(&self.failed, "failed");
                    tracing::warn!(task_id, config_id, host, %reason, "push notification failed; not retried");
                    return ("failed", attempt);
                }
                Attempt::Retry { reason, .. } if attempt == attempts => {
                    self.settle(&self.failed, "failed");
                    tracing::warn!(task_id, config_id, host, attempts, %reason, "push notification failed; giving up");
                    return ("failed", attempt);
                }
                Attempt::Retry { reason, after } => {
                    let delay = after.map_or_else(|| jittered(backoff), |after| after.min(self.config.max_backoff));
                    tracing::debug!(task_id, config_id, host, attempt, %reason, ?delay, "push attempt failed; retrying");
                    tokio::time::sleep(delay).await;
                    backoff = backoff.saturating_mul(2).min(self.config.max_backoff);
                }
            }
        }
        // Not reached: the last attempt settles in the loop.
        ("failed", attempts)
    }

    async fn attempt(&self, client: &reqwest::Client, job: &Job, signature: Option<&HeaderValue>) -> Attempt {
        let mut request = client
            .post(job.url.clone())
            .timeout(self.config.timeout)
            .header(CONTENT_TYPE, HeaderValue::from_static(job.content_type))
            .body(job.body.clone());
        if let Some(token) = &job.token {
            request = request.header(TOKEN_HEADER, token.clone());
        }
        // The delivery span's context when this process traces (it descends from the
        // execution's); else the execution's as it came.
        let mut trace = job.trace.clone();
        crate::trace_context::inject_current(&mut trace);
        for (name, value) in &trace {
            request = request.header(name, value);
        }
        if let Some(authorization) = &job.authorization {
            request = request.header(AUTHORIZATION, authorization.clone());
        }
        if let Some(signature) = signature {
            request = request.header(super::SIGNATURE_HEADER, signature.clone());
        }
        // The response body is not read: the status is the whole answer.
        match request.send().await {
            Ok(response) => {
                let status = response.status();
                if status.is_success() {
                    Attempt::Delivered
                } else if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
                    let after = response
                        .headers()
                        .get(RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(Duration::from_secs);
                    Attempt::Retry { reason: format!("HTTP {status}"), after }
                } else {
                    Attempt::Failed(format!("HTTP {status}"))
                }
            }
            Err(error) => {
                if let Some(refused) = guard::find_refused(&error) {
                    Attempt::Refused(refused.to_string())
                } else if error.is_timeout() {
                    Attempt::Retry { reason: format!("no answer within {:?}", self.config.timeout), after: None }
                } else if error.is_builder() {
                    Attempt::Failed(error_chain(&error.without_url()))
                } else {
                    Attempt::Retry { reason: error_chain(&error.without_url()), after: None }
                }
            }
        }
    }
}

/// Between half and all of `delay`, so retries from many tasks do not arrive in lockstep.
fn jittered(delay: Duration) -> Duration {
    use std::hash::{BuildHasher, Hasher};
    // A fresh RandomState is seeded differently each time: enough randomness for jitter.
    let random = std::collections::hash_map::RandomState::new().build_hasher().finish();
    delay / 2 + delay.mul_f64((random % 1024) as f64 / 2048.0)
}

/// An error and its sources, one line (reqwest's own message alone says little).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AuthenticationInfo, TaskState, TaskStatus, TaskStatusUpdateEvent};
    use http_body_util::{BodyExt, Full};
    use hyper::body::Incoming;
    use hyper::service::service_fn;
    use hyper::{Request, Response};
    use hyper_util::rt::TokioIo;
    use std::collections::HashSet;
    use std::convert::Infallible;
    use std::sync::atomic::AtomicUsize;
    use std::time::Instant;

    /// One request as the receiver saw it.
    #[derive(Clone)]
    struct Received {
        method: String,
        headers: http::HeaderMap,
        body: Bytes,
    }

    impl Received {
        fn json(&self) -> serde_json::Value {
            serde_json::from_slice(&self.body).unwrap()
        }
        /// (task id, sequence number) of a status event built by [`event`].
        fn task_seq(&self) -> (String, usize) {
            let update = &self.json()["statusUpdate"];
            let seq = update["contextId"].as_str().unwrap().trim_start_matches("seq-").parse().unwrap();
            (update["taskId"].as_str().unwrap().to_owned(), seq)
        }
    }

    /// Decides the answer to the `n`-th request (from 0): status and how long to wait first.
    type Script = dyn Fn(usize, &Received) -> (u16, Duration) + Send + Sync;

    struct ReceiverState {
        script: Box<Script>,
        log: Mutex<Vec<Received>>,
        in_flight: AtomicUsize,
        max_in_flight: AtomicUsize,
        /// Requests in flight per task, and the most ever seen for one task.
        per_task: Mutex<HashMap<String, usize>>,
        max_per_task: AtomicUsize,
    }

    /// A loopback HTTP/1.1 webhook receiver answering as `script` says.
    struct Receiver {
        url: String,
        port: u16,
        state: Arc<ReceiverState>,
    }

    impl Receiver {
        async fn start(script: impl Fn(usize, &Received) -> (u16, Duration) + Send + Sync + 'static) -> Self {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            let state = Arc::new(ReceiverState {
                script: Box::new(script),
                log: Mutex::default(),
                in_flight: AtomicUsize::new(0),
                max_in_flight: AtomicUsize::new(0),
                per_task: Mutex::default(),
                max_per_task: AtomicUsize::new(0),
            });
            let shared = state.clone();
            tokio::spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    let state = shared.clone();
                    tokio::spawn(async move {
                        let service = service_fn(move |request| Self::answer(state.clone(), request));
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
            });
            Receiver { url: format!("http://127.0.0.1:{port}/hook"), port, state }
        }

        async fn answer(
            state: Arc<ReceiverState>,
            request: Request<Incoming>,
        ) -> std::result::Result<Response<Full<Bytes>>, Infallible> {
            let (parts, body) = request.into_parts();
            let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
            let received = Received { method: parts.method.to_string(), headers: parts.headers, body };
            let task = serde_json::from_slice::<serde_json::Value>(&received.body)
                .ok()
                .and_then(|v| v["statusUpdate"]["taskId"].as_str().map(str::to_owned))
                .unwrap_or_default();
            let (status, delay) = {
                let mut log = state.log.lock().unwrap();
                let answer = (state.script)(log.len(), &received);
                log.push(received);
                answer
            };
            let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            state.max_in_flight.fetch_max(now, Ordering::SeqCst);
            let for_task = {
                let mut per_task = state.per_task.lock().unwrap();
                let n = per_task.entry(task.clone()).or_default();
                *n += 1;
                *n
            };
            state.max_per_task.fetch_max(for_task, Ordering::SeqCst);
            tokio::time::sleep(delay).await;
            *state.per_task.lock().unwrap().get_mut(&task).unwrap() -= 1;
            state.in_flight.fetch_sub(1, Ordering::SeqCst);
            Ok(Response::builder().status(status).body(Full::new(Bytes::new())).unwrap())
        }

        fn received(&self) -> Vec<Received> {
            self.state.log.lock().unwrap().clone()
        }

        fn count(&self) -> usize {
            self.state.log.lock().unwrap().len()
        }
    }

    fn fast() -> PushSenderConfig {
        PushSenderConfig {
            timeout: Duration::from_millis(200),
            max_attempts: 4,
            initial_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(20),
            queue_capacity: 1000,
            allow_private_targets: PrivateTargets::All,
            max_concurrent_deliveries: 64,
            max_concurrent_per_origin: 16,
            max_concurrent_per_partition: 32,
            signer: None,
        }
    }

    fn push_config(url: &str, task: &str) -> TaskPushNotificationConfig {
        TaskPushNotificationConfig { id: "cfg-1".into(), task_id: task.into(), url: url.into(), ..Default::default() }
    }

    /// A status update of `task`; `seq` travels in the context id.
    fn event(task: &str, seq: usize) -> StreamResponse {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: task.into(),
            context_id: format!("seq-{seq}"),
            status: TaskStatus { state: TaskState::Working, message: None, timestamp: None },
            metadata: None,
        })
    }

    const WAIT: Duration = Duration::from_secs(5);

    use super::super::guard::tests::allow_list;

    #[tokio::test]
    async fn delivers_body_and_headers() {
        let receiver = Receiver::start(|_, _| (200, Duration::ZERO)).await;
        let sender = PushSender::new(fast(), Default::default());
        let mut config = push_config(&receiver.url, "task-1");
        config.token = "tok-123".into();
        config.authentication = Some(AuthenticationInfo { scheme: "Bearer".into(), credentials: "secret-abc".into() });
        let first = event("task-1", 0);
        sender.enqueue(&config, Payload::Event(&first));
        let mut scheme_only = push_config(&receiver.url, "task-1");
        scheme_only.authentication = Some(AuthenticationInfo { scheme: "Bearer".into(), credentials: String::new() });
        sender.enqueue(&scheme_only, Payload::Event(&event("task-1", 1)));
        sender.shutdown(WAIT).await;

        let got = receiver.received();
        assert_eq!(got.len(), 2);
        let (with, without) = (&got[0], &got[1]);
        assert_eq!(with.method, "POST");
        assert_eq!(with.headers["content-type"], "application/a2a+json");
        assert_eq!(with.headers["x-a2a-notification-token"], "tok-123");
        assert_eq!(with.headers["authorization"], "Bearer secret-abc");
        assert_eq!(with.body, serde_json::to_vec(&first).unwrap());
        assert_eq!(
            with.json(),
            serde_json::json!({"statusUpdate": {
            "taskId": "task-1", "contextId": "seq-0", "status": {"state": "TASK_STATE_WORKING"}}})
        );
        assert_eq!(without.headers["content-type"], "application/a2a+json");
        assert!(without.headers.get("x-a2a-notification-token").is_none());
        assert!(without.headers.get("authorization").is_none(), "a scheme without credentials sends none");
        assert_eq!(sender.stats(), PushStats { delivered: 2, ..Default::default() });
    }

    /// Webhooks of one origin that answer slowly hold at most `max_concurrent_per_origin` of
    /// the shared permits: another origin's notification goes out meanwhile. (With only the
    /// shared cap, the slow ones held both permits and the fast one waited for them.)
    #[tokio::test]
    async fn a_slow_origin_holds_at_most_its_share_of_the_permits() {
        let slow = Receiver::start(|_, _| (200, Duration::from_millis(1500))).await;
        let fast_receiver = Receiver::start(|_, _| (200, Duration::ZERO)).await;
        let config = PushSenderConfig {
            max_concurrent_deliveries: 2,
            max_concurrent_per_origin: 1,
            timeout: Duration::from_secs(5),
            ..fast()
        };
        let sender = PushSender::new(config, Default::default());
        for task in ["s1", "s2", "s3"] {
            sender.enqueue(&push_config(&slow.url, task), Payload::Event(&event(task, 0)));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = std::time::Instant::now();
        sender.enqueue(&push_config(&fast_receiver.url, "f"), Payload::Event(&event("f", 0)));
        while fast_receiver.count() == 0 {
            assert!(started.elapsed() < Duration::from_secs(1), "the fast origin waited for the slow one");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(slow.state.max_in_flight.load(Ordering::SeqCst), 1);
        // The slow origin's three, one at a time.
        sender.shutdown(Duration::from_secs(10)).await;
        assert_eq!(sender.stats().delivered, 4);
        assert!(sender.inner.origins.is_empty(), "an origin outlived its deliveries");
    }

    /// One partition's webhooks (one caller's tasks) hold at most `max_concurrent_per_partition`
    /// of the shared permits, whatever origins they name: another partition's notification goes
    /// out meanwhile. (Without it, the slow ones held both permits and the other waited.)
    #[tokio::test]
    async fn one_partition_holds_at_most_its_share_of_the_permits() {
        let slow = Receiver::start(|_, _| (200, Duration::from_millis(1500))).await;
        let fast_receiver = Receiver::start(|_, _| (200, Duration::ZERO)).await;
        let config = PushSenderConfig {
            max_concurrent_deliveries: 2,
            max_concurrent_per_origin: 2,
            max_concurrent_per_partition: 1,
            timeout: Duration::from_secs(5),
            ..fast()
        };
        let sender = PushSender::new(config, Default::default());
        let owned_by = |url: &str, task: &str, partition: &str| TaskPushNotificationConfig {
            tenant: partition.into(),
            ..push_config(url, task)
        };
        for task in ["s1", "s2", "s3"] {
            sender.enqueue(&owned_by(&slow.url, task, "\u{1f}mallory"), Payload::Event(&event(task, 0)));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = std::time::Instant::now();
        sender.enqueue(&owned_by(&fast_receiver.url, "f", "\u{1f}alice"), Payload::Event(&event("f", 0)));
        while fast_receiver.count() == 0 {
            assert!(started.elapsed() < Duration::from_secs(1), "alice's notification waited for mallory's");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(slow.state.max_in_flight.load(Ordering::SeqCst), 1);
        sender.shutdown(Duration::from_secs(10)).await;
        assert_eq!(sender.stats().delivered, 4);
        assert!(sender.inner.partitions.is_empty(), "a partition outlived its deliveries");
        assert!(sender.inner.origins.is_empty(), "an origin outlived its deliveries");
    }

    /// Tasks of no tenant and no principal (an open server) are everyone's: their deliveries
    /// are not held to one partition's share.
    #[tokio::test]
    async fn the_anonymous_partition_has_no_cap_of_its_own() {
        let slow = Receiver::start(|_, _| (200, Duration::from_millis(300))).await;
        let config = PushSenderConfig { max_concurrent_per_partition: 1, timeout: Duration::from_secs(5), ..fast() };
        let sender = PushSender::new(config, Default::default());
        for task in ["a1", "a2", "a3"] {
            sender.enqueue(&push_config(&slow.url, task), Payload::Event(&event(task, 0)));
        }
        sender.shutdown(Duration::from_secs(10)).await;
        assert_eq!(sender.stats().delivered, 3);
        assert_eq!(slow.state.max_in_flight.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn retries_5xx_and_429_then_succeeds() {
        let receiver = Receiver::start(|n, _| (*[500, 429, 503].get(n).unwrap_or(&200), Duration::ZERO)).await;
        let sender = PushSender::new(fast(), Default::default());
        sender.enqueue(&push_config(&receiver.url, "t"), Payload::Event(&event("t", 0)));
        sender.shutdown(WAIT).await;
        assert_eq!(receiver.count(), 4);
        assert_eq!(sender.stats(), PushStats { delivered: 1, ..Default::default() });
    }

    #[tokio::test]
    async fn gives_up_after_max_attempts() {
        let receiver = Receiver::start(|_, _| (503, Duration::ZERO)).await;
        let sender = PushSender::new(PushSenderConfig { max_attempts: 3, ..fast() }, Default::default());
        sender.enqueue(&push_config(&receiver.url, "t"), Payload::Event(&event("t", 0)));
        sender.shutdown(WAIT).await;
        assert_eq!(receiver.count(), 3);
        assert_eq!(sender.stats(), PushStats { failed: 1, ..Default::default() });
    }

    #[tokio::test]
    async fn no_retry_on_4xx() {
        let receiver = Receiver::start(|n, _| (if n == 0 { 400 } else { 404 }, Duration::ZERO)).await;
        let sender = PushSender::new(fast(), Default::default());
        sender.enqueue(&push_config(&receiver.url, "t"), Payload::Event(&event("t", 0)));
        sender.enqueue(&push_config(&receiver.url, "t"), Payload::Event(&event("t", 1)));
        sender.shutdown(WAIT).await;
        assert_eq!(receiver.count(), 2, "one request per notification");
        assert_eq!(sender.stats(), PushStats { failed: 2, ..Default::default() });
    }

    #[tokio::test]
    async fn timeout_then_retry() {
        let receiver =
            Receiver::start(|n, _| (200, if n == 0 { Duration::from_secs(3) } else { Duration::ZERO })).await;
        let sender =
            PushSender::new(PushSenderConfig { timeout: Duration::from_millis(100), ..fast() }, Default::default());
        let started = Instant::now();
        sender.enqueue(&push_config(&receiver.url, "t"), Payload::Event(&event("t", 0)));
        sender.shutdown(WAIT).await;
        assert_eq!(receiver.count(), 2);
        assert_eq!(sender.stats(), PushStats { delivered: 1, ..Default::default() });
        assert!(started.elapsed() < Duration::from_secs(2), "the first attempt was cut at its timeout");
    }

    #[tokio::test]
    async fn per_task_order_kept_under_slow_receiver() {
        // Slow, uneven answers; the first attempt of every 5th event fails with 500.
        let first_attempts = Mutex::new(HashSet::new());
        let receiver = Receiver::start(move |n, received| {
            let (task, seq) = received.task_seq();
            let first = first_attempts.lock().unwrap().insert((task, seq));
            let status = if first && seq % 5 == 0 { 500 } else { 200 };
            (status, Duration::from_millis(1 + (n as u64 * 7) % 4))
        })
        .await;
        let sender = PushSender::new(fast(), Default::default());
        let tasks = ["a", "b", "c"];
        for seq in 0..30 {
            for task in tasks {
                sender.enqueue(&push_config(&receiver.url, task), Payload::Event(&event(task, seq)));
            }
        }
        sender.shutdown(WAIT).await;

        assert_eq!(sender.stats(), PushStats { delivered: 90, ..Default::default() });
        for task in tasks {
            let mut seqs: Vec<usize> =
                receiver.received().iter().map(Received::task_seq).filter(|(t, _)| t == task).map(|(_, s)| s).collect();
            assert!(seqs.windows(2).all(|w| w[0] <= w[1]), "task {task} out of order: {seqs:?}");
            seqs.dedup(); // retries repeat a number
            assert_eq!(seqs, (0..30).collect::<Vec<_>>());
        }
        assert_eq!(receiver.state.max_per_task.load(Ordering::SeqCst), 1, "one request at a time per task");
        assert!(receiver.state.max_in_flight.load(Ordering::SeqCst) >= 2, "tasks are delivered concurrently");
    }

    #[tokio::test]
    async fn queue_full_drops_new_notifications() {
        let receiver = Receiver::start(|_, _| (200, Duration::from_millis(20))).await;
        let sender = PushSender::new(PushSenderConfig { queue_capacity: 3, ..fast() }, Default::default());
        for seq in 0..10 {
            let task = ["a", "b"][seq % 2];
            sender.enqueue(&push_config(&receiver.url, task), Payload::Event(&event(task, seq)));
        }
        assert_eq!(sender.queued(), 3);
        assert_eq!(sender.stats().dropped, 7);
        sender.shutdown(WAIT).await;
        assert_eq!(receiver.count(), 3);
        assert_eq!(sender.queued(), 0);
        assert_eq!(sender.stats(), PushStats { delivered: 3, dropped: 7, ..Default::default() });
    }

    #[tokio::test]
    async fn workers_exit_when_queues_drain() {
        let receiver = Receiver::start(|_, _| (200, Duration::ZERO)).await;
        let sender = PushSender::new(fast(), Default::default());
        let enqueue_all = |round: usize| {
            for task in 0..20 {
                let task = format!("task-{task}");
                sender.enqueue(&push_config(&receiver.url, &task), Payload::Event(&event(&task, round)));
            }
        };
        enqueue_all(0);
        let inner = &sender.inner;
        assert_eq!(inner.tracker.len(), 20, "one worker per task with work");
        let drained = async {
            while !(inner.tracker.is_empty() && inner.lock().queues.is_empty()) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        tokio::time::timeout(WAIT, drained).await.expect("workers exit once their queues are empty");
        assert_eq!(sender.stats().delivered, 20);
        // A task seen again gets a fresh worker.
        enqueue_all(1);
        sender.shutdown(WAIT).await;
        assert_eq!(receiver.count(), 40);
        assert!(inner.lock().queues.is_empty());
    }

    #[tokio::test]
    async fn shutdown_stops_at_deadline() {
        let receiver = Receiver::start(|_, _| (200, Duration::from_secs(30))).await;
        let sender =
            PushSender::new(PushSenderConfig { timeout: Duration::from_secs(30), ..fast() }, Default::default());
        for seq in 0..3 {
            sender.enqueue(&push_config(&receiver.url, "t"), Payload::Event(&event("t", seq)));
        }
        let started = Instant::now();
        sender.shutdown(Duration::from_millis(100)).await;
        assert!(started.elapsed() < Duration::from_millis(500));
        assert_eq!(sender.queued(), 0);
        assert_eq!(sender.stats(), PushStats { dropped: 3, ..Default::default() });
        // Closed: nothing more is accepted.
        sender.enqueue(&push_config(&receiver.url, "t"), Payload::Event(&event("t", 3)));
        assert_eq!(sender.stats().dropped, 4);
        assert!(sender.inner.tracker.is_empty());
    }

    /// The sender's check is the guard's (tested there), refused as InvalidParams naming the
    /// config's field.
    #[test]
    fn check_url_is_the_guards_as_invalid_params() {
        let sender = PushSender::new(PushSenderConfig::default(), Default::default());
        let err = sender.check_url("http://127.0.0.1/", "taskPushNotificationConfig.url").unwrap_err();
        assert_eq!(err.kind, crate::ErrorKind::InvalidParams);
        assert_eq!(err.violations[0].field, "taskPushNotificationConfig.url");
        sender.check_url("https://example.com/hook", "url").unwrap();
        let open = PushSender::new(
            PushSenderConfig { allow_private_targets: allow_list(&["127.0.0.1"]), ..Default::default() },
            Default::default(),
        );
        open.check_url("http://127.0.0.1/", "url").unwrap();
    }

    #[tokio::test]
    async fn delivers_to_an_allowed_private_target_only() {
        let receiver = Receiver::start(|_, _| (200, Duration::ZERO)).await;
        let by_name = format!("http://hooks.internal:{}/hook", receiver.port);
        let resolver = || GuardedResolver {
            hosts: Arc::new(HashMap::from([("hooks.internal".to_owned(), vec!["127.0.0.1".parse().unwrap()])])),
            ..Default::default()
        };
        for (entries, url, delivered) in [
            (["127.0.0.1"], &receiver.url, true),
            (["127.0.0.0/30"], &by_name, true),
            (["hooks.internal"], &by_name, true),
            (["127.0.0.2"], &receiver.url, false),
            (["127.0.0.2"], &by_name, false),
            (["other.internal"], &by_name, false),
        ] {
            let config = PushSenderConfig { allow_private_targets: allow_list(&entries), ..fast() };
            let sender = PushSender::with_resolver(config, resolver(), Default::default());
            sender.enqueue(&push_config(url, "t"), Payload::Event(&event("t", 0)));
            sender.shutdown(WAIT).await;
            let stats = sender.stats();
            assert_eq!(
                (stats.delivered, stats.refused),
                (u64::from(delivered), u64::from(!delivered)),
                "{entries:?} {url}"
            );
        }
        assert_eq!(receiver.count(), 3);
    }

    #[tokio::test]
    async fn literal_private_target_refused_at_enqueue() {
        let receiver = Receiver::start(|_, _| (200, Duration::ZERO)).await;
        let sender = PushSender::new(
            PushSenderConfig { allow_private_targets: PrivateTargets::Blocked, ..fast() },
            Default::default(),
        );
        sender.enqueue(&push_config(&receiver.url, "t"), Payload::Event(&event("t", 0)));
        sender.shutdown(WAIT).await;
        assert_eq!(receiver.count(), 0);
        assert_eq!(sender.stats(), PushStats { refused: 1, ..Default::default() });
    }

    #[tokio::test]
    async fn name_resolving_to_loopback_refused_at_send_time() {
        // A public-looking name whose DNS answer is loopback (as in DNS rebinding).
        let receiver = Receiver::start(|_, _| (200, Duration::ZERO)).await;
        let resolver = GuardedResolver {
            hosts: Arc::new(HashMap::from([("rebind.test".to_owned(), vec!["127.0.0.1".parse().unwrap()])])),
            ..Default::default()
        };
        let lookups = resolver.lookups.clone();
        let sender = PushSender::with_resolver(
            PushSenderConfig { allow_private_targets: PrivateTargets::Blocked, ..fast() },
            resolver,
            Default::default(),
        );
        let url = format!("http://rebind.test:{}/hook", receiver.port);
        sender.check_url(&url, "url").expect("a name passes the synchronous check");
        sender.enqueue(&push_config(&url, "t"), Payload::Event(&event("t", 0)));
        sender.shutdown(WAIT).await;
        assert_eq!(receiver.count(), 0);
        assert_eq!(sender.stats(), PushStats { refused: 1, ..Default::default() });
        assert_eq!(lookups.load(Ordering::SeqCst), 1, "resolved once, not retried");
    }
}
