//! An in-process store, bounded so a long-running server never grows without limit.
//!
//! Limits ([`MemoryLimits`]): at most `max_tasks` tasks and about `max_bytes` of their contents
//! (all tenants together; [`super::weight`] counts them); a terminal task
//! (COMPLETED, FAILED, CANCELED, REJECTED) expires `terminal_ttl` after it was first saved in a
//! terminal state. Expired tasks are purged lazily by the next call (amortised O(log n) each),
//! so there is no background thread and no runtime. A new task at the cap evicts the oldest
//! terminal task, and a save that would pass the byte budget evicts the oldest terminal tasks
//! until it fits; when every task is still live the save is refused with `Unavailable`: an
//! active task is never dropped behind its owner's back.
//!
//! Layout: per tenant, a map id → task and an ordered index (newest first) so ListTasks is a
//! range scan from the cursor; one expiry queue in terminal order, which is also eviction order
//! (the TTL is the same for all, so deadlines grow with the queue's sequence numbers).
//! One std mutex guards it all; it is never held across an await point (nothing here awaits).

use super::log::{Commit, CommitOutcome, LogEntry, LogPage, Versioned, apply_to};
use super::weight;
use super::{
    PushConfigStore, TaskStore, decode_seq_cursor, decode_task_cursor, encode_seq_cursor, encode_task_cursor,
    matches_filters, prepare_push_config, push_page_size, sort_key,
};
use crate::error::{A2AError, ErrorKind, Result};
use crate::model::{
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, Task, TaskPushNotificationConfig,
};
use async_trait::async_trait;
use foldhash::HashMap;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Bounds of a [`MemoryStore`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryLimits {
    /// Tasks kept at most, over all tenants (at least 1).
    pub max_tasks: usize,
    /// About how many bytes of task contents (messages, parts, artifacts, metadata, and the
    /// logs kept for resuming streams) are kept at most, over all tenants. Without it the task
    /// cap alone would let callers fill memory with large messages (10,000 tasks of 8 MiB).
    pub max_bytes: usize,
    /// How long a terminal task stays readable after it was first saved terminal.
    pub terminal_ttl: Duration,
    /// Push configs per task at most; more are refused with `InvalidRequest` (it lasts until
    /// one is deleted: not worth a retry, so not `Unavailable`).
    pub max_push_configs_per_task: usize,
    /// Log entries kept per task (the newest; they go with the task). A stream resuming from
    /// before them, or one whose client fell that far behind, goes on from the task's snapshot
    /// instead of the events it missed.
    pub max_log_entries: usize,
    /// About how many bytes of log entries are kept per task (the newest, as above). When the
    /// store's byte budget is full of unfinished tasks, a task's own log makes room before its
    /// change is refused.
    pub max_log_bytes: usize,
}

impl Default for MemoryLimits {
    fn default() -> Self {
        Self {
            max_tasks: 10_000,
            max_bytes: 256 * 1024 * 1024,
            terminal_ttl: Duration::from_secs(3600),
            max_push_configs_per_task: super::MAX_PUSH_CONFIGS_PER_TASK,
            // A live stream whose client reads slower than the agent writes catches up from the
            // log: 1,000 entries lost the middle of long token streams (an LLM's answer in
            // thousands of chunks). 8 MiB holds about 30,000 small chunks.
            max_log_entries: 100_000,
            max_log_bytes: 8 * 1024 * 1024,
        }
    }
}

/// The bounded in-memory [`TaskStore`] and [`PushConfigStore`].
#[derive(Debug)]
pub struct MemoryStore {
    limits: MemoryLimits,
    inner: Mutex<Inner>,
    /// `Inner::push_tasks`: while it is 0, listing a task's push configs (done on every
    /// commit, to notify them) needs no lock, which every request would otherwise contend for.
    push_tasks: Arc<AtomicUsize>,
}

/// Internal sizes, for tests that prove memory stays flat.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryStoreSizes {
    pub tasks: usize,
    pub index: usize,
    pub expiry: usize,
    pub tenants: usize,
    pub push_tasks: usize,
    pub push_configs: usize,
}

#[derive(Debug, Default)]
struct Inner {
    tenants: HashMap<String, TenantTasks>,
    len: usize,
    /// What the entries weigh together (`Entry::weight`).
    bytes: usize,
    /// Terminal tasks by the order they became terminal: expiry and eviction order.
    expiry: BTreeMap<u64, Expiry>,
    next_expiry_seq: u64,
    /// tenant → task id → configs.
    push: HashMap<String, HashMap<String, PushList>>,
    /// How many tasks have push configs. Shared with [`MemoryStore::push_tasks`], which reads
    /// it without the lock; changed only under it.
    push_tasks: Arc<AtomicUsize>,
    next_push_seq: i64,
    /// Added to the clock, so tests can move time forward.
    skew: Duration,
}

#[derive(Debug, Default)]
struct TenantTasks {
    tasks: HashMap<String, Entry>,
    /// (sort key, id), both descending: iteration order is ListTasks order.
    order: BTreeSet<(Reverse<i64>, Reverse<String>)>,
}

#[derive(Debug)]
struct Entry {
    task: Task,
    key: i64,
    /// The task's place in the expiry queue, once it is terminal.
    expiry: Option<u64>,
    /// The sequence number of the last change applied.
    version: u64,
    /// The newest log entries, at most `max_log_entries` (older ones are dropped first).
    log: VecDeque<LogEntry>,
    /// What the task and its log weigh ([`weight`]), kept as they change.
    task_bytes: usize,
    log_bytes: usize,
}

impl Entry {
    fn weight(&self) -> usize {
        self.task_bytes + self.log_bytes
    }
}

#[derive(Debug)]
struct Expiry {
    /// `None` when the TTL is too large to represent: never expires (but may be evicted).
    deadline: Option<Instant>,
    tenant: String,
    id: String,
}

#[derive(Debug, Default)]
struct PushList {
    by_seq: BTreeMap<i64, TaskPushNotificationConfig>,
    by_id: HashMap<String, i64>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new(MemoryLimits::default())
    }
}

impl MemoryStore {
    pub fn new(limits: MemoryLimits) -> Self {
        let limits = MemoryLimits { max_tasks: limits.max_tasks.max(1), ..limits };
        let inner = Inner::default();
        let push_tasks = inner.push_tasks.clone();
        Self { limits, inner: Mutex::new(inner), push_tasks }
    }

    pub fn limits(&self) -> &MemoryLimits {
        &self.limits
    }

    /// Tasks currently held (expired ones may linger until the next call purges them).
    pub fn len(&self) -> usize {
        self.lock().len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[doc(hidden)]
    pub fn internal_sizes(&self) -> MemoryStoreSizes {
        let inner = self.lock();
        MemoryStoreSizes {
            tasks: inner.tenants.values().map(|t| t.tasks.len()).sum(),
            index: inner.tenants.values().map(|t| t.order.len()).sum(),
            expiry: inner.expiry.len(),
            tenants: inner.tenants.len(),
            push_tasks: inner.push.values().map(HashMap::len).sum(),
            push_configs: inner.push.values().flat_map(HashMap::values).map(|l| l.by_seq.len()).sum(),
        }
    }

    /// Moves this store's clock forward (tests of the TTL).
    #[doc(hidden)]
    pub fn advance_clock(&self, by: Duration) {
        self.lock().skew += by;
    }

    /// A poisoned lock is taken over rather than turned into a panic per call: nothing below is
    /// expected to panic while holding it, and a store that answers beats one that never does.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The state, purged of expired tasks first (the lazy expiry every call pays a little for).
    fn lock_purged(&self) -> MutexGuard<'_, Inner> {
        let mut inner = self.lock();
        inner.purge_expired();
        inner
    }
}

impl Inner {
    fn now(&self) -> Instant {
        Instant::now() + self.skew
    }

    fn purge_expired(&mut self) {
        let now = self.now();
        while let Some(entry) = self.expiry.first_entry() {
            if entry.get().deadline.is_none_or(|d| d > now) {
                break;
            }
            let Expiry { tenant, id, .. } = entry.remove();
            self.remove_task(&tenant, &id, true);
        }
    }

    /// Makes room for a change to `keep` by removing a terminal task, handed to `dropped` so
    /// the caller frees it after the lock: the oldest of `keep`'s own partition (its tenant and
    /// caller), else the oldest of a partition holding more tasks than that one. So a caller
    /// with many tasks makes room among its own, and cannot drop another's finished tasks (nor
    /// then lock it out). `false` if there is none it may remove.
    /// Without `fair` (the byte budget, which counts bytes, not tasks): the oldest of any.
    fn evict_oldest_terminal(&mut self, keep: (&str, &str), fair: bool, dropped: &mut Vec<Entry>) -> bool {
        let held = |inner: &Self, partition: &str| inner.tenants.get(partition).map_or(0, |t| t.tasks.len());
        let mine = held(self, keep.0);
        let others = || self.expiry.iter().filter(|(_, e)| (e.tenant.as_str(), e.id.as_str()) != keep);
        let found = if fair {
            others()
                .find(|(_, e)| e.tenant == keep.0)
                .or_else(|| others().find(|(_, e)| held(self, &e.tenant) > mine))
                .map(|(key, _)| *key)
        } else {
            others().next().map(|(key, _)| *key)
        };
        let Some(key) = found else { return false };
        let Expiry { tenant, id, .. } = self.expiry.remove(&key).expect("just seen");
        dropped.extend(self.remove_task(&tenant, &id, true));
        true
    }

    /// Makes room by dropping the oldest entry of `this` task's log (a stream from before it
    /// goes on from the task's snapshot). `false` if its log is empty.
    fn trim_log(&mut self, (tenant, id): (&str, &str)) -> bool {
        let Some(entry) = self.tenants.get_mut(tenant).and_then(|t| t.tasks.get_mut(id)) else { return false };
        let Some(dropped) = entry.log.pop_front() else { return false };
        let bytes = weight::change(&dropped.change);
        entry.log_bytes = entry.log_bytes.saturating_sub(bytes);
        self.bytes = self.bytes.saturating_sub(bytes);
        true
    }

    /// Removes a task from every structure. Expiry and eviction also drop its push configs
    /// (the memory they hold must go too); an explicit delete leaves them to `delete_all`,
    /// as the other stores do.
    fn remove_task(&mut self, tenant: &str, id: &str, with_push_configs: bool) -> Option<Entry> {
        let tasks = self.tenants.get_mut(tenant)?;
        let entry = tasks.tasks.remove(id)?;
        tasks.order.remove(&(Reverse(entry.key), Reverse(id.to_owned())));
        if tasks.tasks.is_empty() {
            self.tenants.remove(tenant);
        }
        if let Some(seq) = entry.expiry {
            self.expiry.remove(&seq);
        }
        self.len -= 1;
        self.bytes = self.bytes.saturating_sub(entry.weight());
        if with_push_configs {
            self.remove_push_list(tenant, id);
        }
        Some(entry)
    }

    fn schedule_expiry(&mut self, tenant: &str, id: &str, ttl: Duration) -> u64 {
        let seq = self.next_expiry_seq;
        self.next_expiry_seq += 1;
        let deadline = self.now().checked_add(ttl);
        self.expiry.insert(seq, Expiry { deadline, tenant: tenant.to_owned(), id: id.to_owned() });
        seq
    }

    fn remove_push_list(&mut self, tenant: &str, task_id: &str) {
        if let Some(lists) = self.push.get_mut(tenant) {
            if lists.remove(task_id).is_some() {
                self.push_tasks.fetch_sub(1, Ordering::Release);
            }
            if lists.is_empty() {
                self.push.remove(tenant);
            }
        }
    }
}

/// A copy of the stored task with only what the caller will return: cloning a long history
/// only to drop most of it would be wasted work.
fn copy_task(task: &Task, history_length: Option<i32>, with_artifacts: bool) -> Task {
    let keep = match history_length {
        None => task.history.len(),
        Some(n) => usize::try_from(n.max(0)).unwrap_or(0).min(task.history.len()),
    };
    Task {
        id: task.id.clone(),
        context_id: task.context_id.clone(),
        status: task.status.clone(),
        artifacts: if with_artifacts { task.artifacts.clone() } else { Vec::new() },
        history: task.history[task.history.len() - keep..].to_vec(),
        metadata: task.metadata.clone(),
    }
}

impl MemoryStore {
    /// Puts a task at `version`: `Whole` replaces the stored task, `Changes` applies log
    /// entries to it in place (no copy of a large task per event). Keeps the index, the expiry
    /// queue and the cap in step. `expected`: the version the task must be at (0: absent;
    /// `None`: any).
    fn put(&self, tenant: &str, task: &Task, expected: Option<u64>, update: Update<'_>) -> Result<CommitOutcome> {
        let key = sort_key(task);
        let terminal = task.status.state.is_terminal();
        // Copied and weighed before locking, so the lock is held only for the map updates: a
        // whole save, or the first commit of a new task (expected at version 0), keeps the task
        // as it is. Under load the lock is contended by every request, so its time is everybody's.
        let new_task = matches!(update, Update::Whole) || expected == Some(0);
        let mut owned = new_task.then(|| task.clone());
        let whole_bytes = new_task.then(|| weight::task(task));
        // Declared before the guard, so evicted tasks are freed after the lock is released.
        let mut evicted = Vec::new();
        let mut guard = self.lock_purged();
        let inner = &mut *guard;
        let current = inner.tenants.get(tenant).and_then(|t| t.tasks.get(&task.id)).map(|e| e.version);
        let fits = match (expected, current) {
            (None, _) => true,
            (Some(0), None) => true,
            (Some(e), Some(v)) => e == v && e != 0,
            (Some(_), None) => false,
        };
        if !fits {
            return Ok(CommitOutcome::Conflict);
        }
        let exists = current.is_some();
        let this = (tenant, task.id.as_str());
        // The byte budget, by what this save may add at most: older finished tasks make room.
        let old_task_bytes = inner.tenants.get(tenant).and_then(|t| t.tasks.get(&task.id)).map_or(0, |e| e.task_bytes);
        // One walk of what is new: the whole task when it is new, else the changes (counted
        // twice when they are logged too).
        let whole = || whole_bytes.unwrap_or_else(|| weight::task(task));
        let (new_task_bytes, growth) = match update {
            Update::Whole => {
                let whole = whole();
                (whole, whole.saturating_sub(old_task_bytes))
            }
            Update::Changes { entries, log } => {
                let changes = || entries.iter().map(|e| weight::change(&e.change)).sum::<usize>();
                match (exists, log) {
                    (false, log) => {
                        let whole = whole();
                        (whole, whole + if log { changes() } else { 0 })
                    }
                    (true, log) => (0, changes() * if log { 2 } else { 1 }),
                }
            }
        };
        if growth > self.limits.max_bytes {
            // More than the whole budget on its own: no eviction makes room, now or later. Checked
            // before any eviction, so a refused change takes no finished task's place.
            return Err(A2AError::invalid_request(format!(
                "this task change takes about {growth} bytes in memory, more than the task store holds in all \
                 (maxStoreBytes {})",
                self.limits.max_bytes
            )));
        }
        if !exists && inner.len >= self.limits.max_tasks && !inner.evict_oldest_terminal(this, true, &mut evicted) {
            return Err(A2AError::new(
                ErrorKind::Unavailable,
                format!(
                    "task store is full: {} tasks, none of them finished, or finished but of callers that hold fewer",
                    self.limits.max_tasks
                ),
            ));
        }
        // A change that only ends a task (status updates, the last terminal) always goes in:
        // it is small, and it makes the task one that gives its room back. Refused, a task the
        // store was too full to take further would stay unfinished, holding its room for ever.
        let only_ends = exists
            && terminal
            && matches!(&update, Update::Changes { entries, .. }
                if entries.iter().all(|e| matches!(e.change, super::Change::Event(crate::model::StreamResponse::StatusUpdate(_)))));
        while inner.bytes + growth > self.limits.max_bytes && !only_ends {
            if !inner.evict_oldest_terminal(this, false, &mut evicted) && !inner.trim_log(this) {
                if inner.expiry.is_empty() {
                    return Err(A2AError::new(
                        ErrorKind::Unavailable,
                        format!(
                            "task store is full: about {} bytes (maxStoreBytes), held by tasks that have not finished",
                            self.limits.max_bytes
                        ),
                    ));
                }
                break; // only this task is left to evict: a finished task's last save goes in
            }
        }
        // Terminal since when: the first terminal save starts the clock; a later save of a
        // terminal task keeps it (a task cannot leave a terminal state, so this is rare).
        let previous_expiry = inner.tenants.get(tenant).and_then(|t| t.tasks.get(&task.id)).and_then(|e| e.expiry);
        let expiry = match (terminal, previous_expiry) {
            (true, Some(seq)) => Some(seq),
            (true, None) => Some(inner.schedule_expiry(tenant, &task.id, self.limits.terminal_ttl)),
            (false, Some(seq)) => {
                inner.expiry.remove(&seq);
                None
            }
            (false, None) => None,
        };
        let (max_log, max_log_bytes) = (self.limits.max_log_entries, self.limits.max_log_bytes);
        let tasks = inner.tenants.entry(tenant.to_owned()).or_default();
        let entry = match tasks.tasks.get_mut(&task.id) {
            Some(entry) => {
                if entry.key != key {
                    tasks.order.remove(&(Reverse(entry.key), Reverse(task.id.clone())));
                    tasks.order.insert((Reverse(key), Reverse(task.id.clone())));
                }
                entry.key = key;
                entry.expiry = expiry;
                entry
            }
            None => {
                tasks.order.insert((Reverse(key), Reverse(task.id.clone())));
                inner.len += 1;
                let entry = Entry {
                    task: owned.take().unwrap_or_else(|| task.clone()),
                    key,
                    expiry,
                    version: 0,
                    log: VecDeque::new(),
                    task_bytes: 0,
                    log_bytes: 0,
                };
                tasks.tasks.entry(task.id.clone()).or_insert(entry)
            }
        };
        let before = entry.weight();
        if !exists || matches!(update, Update::Whole) {
            entry.task_bytes = new_task_bytes;
        }
        match update {
            Update::Whole => {
                // A new entry took the copy already; an existing one takes it here.
                if let Some(task) = owned.take() {
                    entry.task = task;
                }
                entry.version += 1;
            }
            Update::Changes { entries, log } => {
                // Unlogged (see `Commit::log`), a new task that ends at once costs no copy of
                // its events: with the task itself, they were most of a blocking send's work here.
                let keep = if log { max_log } else { 0 };
                for logged in entries {
                    // Weighed only where it counts (a new task's changes are in its whole weight).
                    let bytes = if exists || keep > 0 { weight::change(&logged.change) } else { 0 };
                    if exists {
                        apply_to(&mut entry.task, &logged.change);
                        entry.task_bytes += bytes;
                    }
                    entry.version = logged.seq;
                    if keep == 0 {
                        continue;
                    }
                    entry.log.push_back(logged.clone());
                    entry.log_bytes += bytes;
                    while entry.log.len() > keep || entry.log_bytes > max_log_bytes {
                        let Some(dropped) = entry.log.pop_front() else { break };
                        entry.log_bytes = entry.log_bytes.saturating_sub(weight::change(&dropped.change));
                    }
                }
            }
        }
        inner.bytes = inner.bytes.saturating_sub(before) + entry.weight();
        Ok(CommitOutcome::Committed)
    }
}

/// How [`MemoryStore::put`] changes the stored task.
enum Update<'a> {
    Whole,
    /// `log`: keep the entries in the task's log ([`Commit::log`]).
    Changes {
        entries: &'a [LogEntry],
        log: bool,
    },
}

#[async_trait]
impl TaskStore for MemoryStore {
    async fn commit(&self, tenant: &str, commit: Commit<'_>) -> Result<CommitOutcome> {
        self.put(
            tenant,
            commit.task,
            Some(commit.expected),
            Update::Changes { entries: commit.entries, log: commit.log },
        )
    }

    async fn load(&self, tenant: &str, id: &str) -> Result<Option<Versioned>> {
        let inner = self.lock_purged();
        let entry = inner.tenants.get(tenant).and_then(|t| t.tasks.get(id));
        Ok(entry.map(|e| Versioned { task: e.task.clone(), version: e.version, lease: None }))
    }

    async fn log_after(&self, tenant: &str, id: &str, after: u64, limit: usize) -> Result<LogPage> {
        let inner = self.lock_purged();
        let Some(entry) = inner.tenants.get(tenant).and_then(|t| t.tasks.get(id)) else {
            return Ok(LogPage { entries: Vec::new(), complete: true });
        };
        let first_kept = entry.log.front().map_or(entry.version + 1, |e| e.seq);
        // Sequence numbers ascend: the first entry after `after` is found, not scanned for (a
        // long log is read in pages by streams catching up).
        let from = entry.log.partition_point(|e| e.seq <= after);
        let entries: Vec<LogEntry> = entry.log.range(from..).take(limit).cloned().collect();
        Ok(LogPage { complete: after + 1 >= first_kept || entry.version <= after, entries })
    }

    async fn save(&self, tenant: &str, task: &Task) -> Result<()> {
        self.put(tenant, task, None, Update::Whole).map(|_| ())
    }

    async fn get(&self, tenant: &str, id: &str, history_length: Option<i32>) -> Result<Option<Task>> {
        let inner = self.lock_purged();
        let entry = inner.tenants.get(tenant).and_then(|t| t.tasks.get(id));
        Ok(entry.map(|e| copy_task(&e.task, history_length, true)))
    }

    async fn delete(&self, tenant: &str, id: &str) -> Result<()> {
        // The task is freed after the lock (the guard is a temporary of this statement).
        let removed = self.lock_purged().remove_task(tenant, id, false);
        drop(removed);
        Ok(())
    }

    async fn list(&self, tenant: &str, req: &ListTasksRequest) -> Result<ListTasksResponse> {
        let page_size = req.effective_page_size();
        let cursor = decode_task_cursor(&req.page_token)?;
        let after = super::after_key(req);
        let with_artifacts = req.include_artifacts == Some(true);
        let inner = self.lock_purged();
        let mut response = ListTasksResponse {
            // The page size used (the proto's words; a2a-sdk agrees), not how many came back.
            page_size: i32::try_from(page_size).unwrap_or(i32::MAX),
            ..Default::default()
        };
        let Some(tasks) = inner.tenants.get(tenant) else { return Ok(response) };

        // The index is newest first, so a timestamp lower bound ends the scan early.
        let in_time = |k: &&(Reverse<i64>, Reverse<String>)| after.is_none_or(|a| k.0.0 >= a);
        let entry_of = |k: &(Reverse<i64>, Reverse<String>)| tasks.tasks.get(&k.1.0);
        let matching = |e: &&Entry| matches_filters(&e.task, e.key, req, after);

        let unfiltered = req.context_id.is_empty() && req.status.is_none() && after.is_none();
        let total = if unfiltered {
            tasks.tasks.len()
        } else {
            tasks.order.iter().take_while(in_time).filter_map(entry_of).filter(matching).count()
        };
        response.total_size = i32::try_from(total).unwrap_or(i32::MAX);

        let start = match cursor {
            Some((key, id)) => Bound::Excluded((Reverse(key), Reverse(id))),
            None => Bound::Unbounded,
        };
        let mut page: Vec<&Entry> = tasks
            .order
            .range((start, Bound::Unbounded))
            .take_while(in_time)
            .filter_map(entry_of)
            .filter(matching)
            .take(page_size + 1)
            .collect();
        if page.len() > page_size {
            page.truncate(page_size);
            let last = page[page_size - 1];
            response.next_page_token = encode_task_cursor(last.key, &last.task.id);
        }
        response.tasks = page.into_iter().map(|e| copy_task(&e.task, req.history_length, with_artifacts)).collect();
        Ok(response)
    }
}

#[async_trait]
impl PushConfigStore for MemoryStore {
    async fn create(&self, tenant: &str, config: TaskPushNotificationConfig) -> Result<TaskPushNotificationConfig> {
        let config = prepare_push_config(tenant, config)?;
        let mut guard = self.lock_purged();
        let inner = &mut *guard;
        let existing = inner.push.get(tenant).and_then(|l| l.get(&config.task_id));
        let known_task = existing.is_some();
        let replaces = existing.is_some_and(|l| l.by_id.contains_key(&config.id));
        if !replaces && existing.map_or(0, |l| l.by_seq.len()) >= self.limits.max_push_configs_per_task {
            let limit = self.limits.max_push_configs_per_task;
            return Err(super::too_many_push_configs(&config.task_id, limit));
        }
        // Configs of tasks this store no longer (or never) held must not pile up either.
        if !known_task && inner.push_tasks.load(Ordering::Relaxed) >= self.limits.max_tasks {
            return Err(A2AError::new(ErrorKind::Unavailable, "push config store is full"));
        }
        let list = inner.push.entry(tenant.to_owned()).or_default().entry(config.task_id.clone()).or_default();
        if let Some(seq) = list.by_id.get(&config.id) {
            list.by_seq.insert(*seq, config.clone());
            return Ok(config);
        }
        let seq = inner.next_push_seq;
        inner.next_push_seq += 1;
        list.by_id.insert(config.id.clone(), seq);
        list.by_seq.insert(seq, config.clone());
        if !known_task {
            inner.push_tasks.fetch_add(1, Ordering::Release);
        }
        Ok(config)
    }

    async fn get(&self, tenant: &str, task_id: &str, id: &str) -> Result<Option<TaskPushNotificationConfig>> {
        let inner = self.lock_purged();
        let list = inner.push.get(tenant).and_then(|l| l.get(task_id));
        Ok(list.and_then(|l| l.by_seq.get(l.by_id.get(id)?)).cloned())
    }

    async fn list(
        &self,
        tenant: &str,
        task_id: &str,
        page_size: i32,
        page_token: &str,
    ) -> Result<ListTaskPushNotificationConfigsResponse> {
        let page_size = push_page_size(page_size);
        let start = match decode_seq_cursor(page_token)? {
            Some(seq) => Bound::Excluded(seq),
            None => Bound::Unbounded,
        };
        let mut response = ListTaskPushNotificationConfigsResponse::default();
        if self.push_tasks.load(Ordering::Acquire) == 0 {
            return Ok(response);
        }
        let inner = self.lock_purged();
        let Some(list) = inner.push.get(tenant).and_then(|l| l.get(task_id)) else { return Ok(response) };
        let mut page: Vec<(&i64, &TaskPushNotificationConfig)> =
            list.by_seq.range((start, Bound::Unbounded)).take(page_size + 1).collect();
        if page.len() > page_size {
            page.truncate(page_size);
            response.next_page_token = encode_seq_cursor(*page[page_size - 1].0);
        }
        response.configs = page.into_iter().map(|(_, c)| c.clone()).collect();
        Ok(response)
    }

    async fn delete(&self, tenant: &str, task_id: &str, id: &str) -> Result<()> {
        let mut guard = self.lock_purged();
        let inner = &mut *guard;
        let Some(list) = inner.push.get_mut(tenant).and_then(|l| l.get_mut(task_id)) else { return Ok(()) };
        if let Some(seq) = list.by_id.remove(id) {
            list.by_seq.remove(&seq);
        }
        if list.by_seq.is_empty() {
            inner.remove_push_list(tenant, task_id);
        }
        Ok(())
    }

    async fn delete_all(&self, tenant: &str, task_id: &str) -> Result<()> {
        self.lock_purged().remove_push_list(tenant, task_id);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{TaskState, TaskStatus};

    fn task(id: &str, state: TaskState) -> Task {
        Task {
            id: id.into(),
            context_id: "ctx".into(),
            status: TaskStatus::now(state),
            artifacts: vec![],
            history: vec![],
            metadata: None,
        }
    }

    fn small(max_tasks: usize, ttl_secs: u64) -> MemoryStore {
        MemoryStore::new(MemoryLimits {
            max_tasks,
            terminal_ttl: Duration::from_secs(ttl_secs),
            max_push_configs_per_task: 3,
            max_log_entries: 8,
            max_log_bytes: usize::MAX,
            max_bytes: usize::MAX,
        })
    }

    /// A task carrying `bytes` of text in its history.
    fn heavy(id: &str, state: TaskState, bytes: usize) -> Task {
        let mut t = task(id, state);
        t.history.push(crate::model::Message::text(crate::model::Role::User, "x".repeat(bytes)));
        t
    }

    fn budget(max_bytes: usize) -> MemoryStore {
        MemoryStore::new(MemoryLimits { max_bytes, max_log_entries: 8, ..MemoryLimits::default() })
    }

    #[tokio::test]
    async fn the_byte_budget_evicts_the_oldest_finished_tasks() {
        let store = budget(350_000);
        for i in 0..6 {
            store.save("t", &heavy(&format!("done{i}"), TaskState::Completed, 100_000)).await.unwrap();
        }
        // Three fit (each weighs a little over 100 kB); the newest are kept.
        assert_eq!(store.len(), 3);
        assert!(TaskStore::get(&store, "t", "done0", None).await.unwrap().is_none());
        assert!(TaskStore::get(&store, "t", "done5", None).await.unwrap().is_some());
        assert!(store.lock().bytes <= 350_000, "{}", store.lock().bytes);
        // Deleting gives the bytes back.
        for i in 3..6 {
            TaskStore::delete(&store, "t", &format!("done{i}")).await.unwrap();
        }
        assert_eq!(store.lock().bytes, 0);
    }

    #[tokio::test]
    async fn a_save_only_live_tasks_leave_no_room_for_is_refused() {
        let store = budget(250_000);
        store.save("t", &heavy("live0", TaskState::Working, 100_000)).await.unwrap();
        store.save("t", &heavy("live1", TaskState::Working, 100_000)).await.unwrap();
        let err = store.save("t", &heavy("new", TaskState::Submitted, 100_000)).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Unavailable);
        assert!(err.message.contains("maxStoreBytes"), "{}", err.message);
        // A live task is never evicted; once one finishes, it makes room.
        assert_eq!(store.len(), 2);
        store.save("t", &heavy("live0", TaskState::Completed, 100_000)).await.unwrap();
        store.save("t", &heavy("new", TaskState::Submitted, 100_000)).await.unwrap();
        assert!(TaskStore::get(&store, "t", "live0", None).await.unwrap().is_none());
        assert!(TaskStore::get(&store, "t", "live1", None).await.unwrap().is_some());
        // A task larger than the whole budget can never fit: refused for what it is, not as a
        // store that is full for now.
        let err = store.save("t", &heavy("huge", TaskState::Submitted, 300_000)).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidRequest, "{err:?}");
        assert!(err.message.contains("more than the task store holds in all"), "{}", err.message);
        assert!(TaskStore::get(&store, "t", "new", None).await.unwrap().is_some(), "nothing evicted for it");
        // Not even at the task cap, where a new task first makes room by count.
        let store = MemoryStore::new(MemoryLimits { max_tasks: 1, max_bytes: 250_000, ..MemoryLimits::default() });
        store.save("t", &heavy("done", TaskState::Completed, 1_000)).await.unwrap();
        let err = store.save("t", &heavy("huge", TaskState::Submitted, 300_000)).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidRequest);
        assert!(TaskStore::get(&store, "t", "done", None).await.unwrap().is_some(), "the finished task stays");
    }

    /// Commits `n` logged artifact chunks of `bytes` each to the live task `id`, one commit per
    /// chunk, from its version `from`; every commit must go in.
    async fn chunks(store: &MemoryStore, id: &str, from: u64, n: u64, bytes: usize) {
        use crate::model::{Artifact, Part, StreamResponse, TaskArtifactUpdateEvent};
        use crate::store::log::{Change, Commit};
        let mut current = TaskStore::load(store, "t", id).await.unwrap().expect("stored").task;
        for seq in from + 1..=from + n {
            let artifact = Artifact {
                artifact_id: "a".into(),
                name: String::new(),
                description: String::new(),
                parts: vec![Part::text("x".repeat(bytes))],
                metadata: None,
                extensions: Vec::new(),
            };
            let event = TaskArtifactUpdateEvent {
                task_id: id.into(),
                context_id: current.context_id.clone(),
                artifact,
                append: seq > 1,
                last_chunk: false,
                metadata: None,
            };
            let change = Change::Event(StreamResponse::ArtifactUpdate(event));
            crate::store::log::apply_to(&mut current, &change);
            let entries = [LogEntry { seq, change }];
            let commit = Commit::logged(&current, seq - 1, &entries);
            assert_eq!(store.commit("t", commit).await.unwrap(), CommitOutcome::Committed, "chunk {seq}");
        }
    }

    #[tokio::test]
    async fn a_tasks_log_is_kept_up_to_its_byte_cap_then_the_newest() {
        let store = MemoryStore::new(MemoryLimits { max_log_bytes: 1_000_000, ..MemoryLimits::default() });
        store.save("t", &task("live", TaskState::Working)).await.unwrap();
        // 2,000 small chunks (more than the old cap of 1,000 entries) are all kept.
        chunks(&store, "live", 1, 2000, 10).await;
        let page = TaskStore::log_after(&store, "t", "live", 1, 5000).await.unwrap();
        assert!(page.complete && page.entries.len() == 2000, "{}", page.entries.len());
        // Large ones pass the byte cap: the oldest go, the newest stay, within the cap.
        chunks(&store, "live", 2001, 40, 50_000).await;
        let page = TaskStore::log_after(&store, "t", "live", 1, 5000).await.unwrap();
        assert!(!page.complete, "the start is gone");
        assert_eq!(page.entries.last().map(|e| e.seq), Some(2041));
        let kept: usize = page.entries.iter().map(|e| weight::change(&e.change)).sum();
        assert!(kept <= 1_000_000 && page.entries.len() >= 15, "{kept} bytes in {} entries", page.entries.len());
        // A page from the middle starts right after it.
        let tail = TaskStore::log_after(&store, "t", "live", 2035, 3).await.unwrap();
        assert_eq!(tail.entries.iter().map(|e| e.seq).collect::<Vec<_>>(), [2036, 2037, 2038]);
    }

    #[tokio::test]
    async fn a_live_tasks_own_log_makes_room_before_its_change_is_refused() {
        // A budget only the live task's log fills: its next chunks drop its oldest log entries
        // (a stream that far behind restarts from the snapshot) rather than fail the task.
        let store = MemoryStore::new(MemoryLimits { max_bytes: 200_000, ..MemoryLimits::default() });
        store.save("t", &task("live", TaskState::Working)).await.unwrap();
        chunks(&store, "live", 1, 120, 1_000).await;
        assert!(store.lock().bytes <= 200_000, "{}", store.lock().bytes);
        let page = TaskStore::log_after(&store, "t", "live", 1, 200).await.unwrap();
        assert!(!page.complete && page.entries.last().map(|e| e.seq) == Some(121), "{}", page.entries.len());
    }

    fn assert_flat(store: &MemoryStore, cap: usize) {
        let s = store.internal_sizes();
        assert!(s.tasks <= cap && s.index == s.tasks && s.expiry <= s.tasks, "{s:?}");
        assert!(s.tenants <= s.tasks.max(1) && s.push_tasks <= cap, "{s:?}");
        assert_eq!(store.len(), s.tasks);
    }

    #[tokio::test]
    async fn full_of_active_tasks_refuses_and_never_evicts_them() {
        let store = small(3, 3600);
        for i in 0..3 {
            store.save("t", &task(&format!("a{i}"), TaskState::Working)).await.unwrap();
        }
        let err = store.save("t", &task("new", TaskState::Submitted)).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Unavailable);
        assert!(err.message.contains("task store is full"), "{}", err.message);
        // Updating a task already held is always allowed, even at the cap.
        store.save("t", &task("a1", TaskState::Completed)).await.unwrap();
        // Now one task is terminal: it makes room for the new one.
        store.save("t", &task("new", TaskState::Submitted)).await.unwrap();
        assert!(TaskStore::get(&store, "t", "a1", None).await.unwrap().is_none());
        for id in ["a0", "a2", "new"] {
            assert!(TaskStore::get(&store, "t", id, None).await.unwrap().is_some(), "{id}");
        }
        assert_flat(&store, 3);
    }

    /// At the cap a new task takes the place of its own partition's oldest finished task, or
    /// of one of a partition holding more tasks: a caller with many tasks cannot drop another's
    /// finished ones (and then lock it out: a tenancy probe saw both).
    #[tokio::test]
    async fn oldest_terminal_task_is_evicted_first() {
        let store = small(3, 3600);
        store.save("t", &task("done1", TaskState::Completed)).await.unwrap();
        store.save("t", &task("live", TaskState::Working)).await.unwrap();
        store.save("u", &task("done2", TaskState::Failed)).await.unwrap();
        store.save("t", &task("x", TaskState::Submitted)).await.unwrap();
        assert!(TaskStore::get(&store, "t", "done1", None).await.unwrap().is_none());
        assert!(TaskStore::get(&store, "u", "done2", None).await.unwrap().is_some());
        // t holds two unfinished tasks, u one finished: t is refused, u's task stays.
        assert_eq!(store.save("t", &task("y", TaskState::Submitted)).await.unwrap_err().kind, ErrorKind::Unavailable);
        assert!(TaskStore::get(&store, "u", "done2", None).await.unwrap().is_some());
        // u makes room among its own.
        store.save("u", &task("w", TaskState::Submitted)).await.unwrap();
        assert!(TaskStore::get(&store, "u", "done2", None).await.unwrap().is_none());
        // A partition holding more than another gives up its finished tasks to it.
        store.save("u", &task("w", TaskState::Completed)).await.unwrap();
        store.save("v", &task("first", TaskState::Submitted)).await.unwrap();
        assert!(TaskStore::get(&store, "u", "w", None).await.unwrap().is_none());
        assert_eq!(store.internal_sizes().tenants, 2);
    }

    #[tokio::test]
    async fn terminal_tasks_expire_after_the_ttl_and_live_ones_do_not() {
        let store = small(100, 60);
        store.save("t", &task("done", TaskState::Canceled)).await.unwrap();
        store.save("t", &task("live", TaskState::InputRequired)).await.unwrap();
        store.advance_clock(Duration::from_secs(30));
        // Re-saving a terminal task does not restart its clock.
        store.save("t", &task("done", TaskState::Canceled)).await.unwrap();
        store.save("t", &task("late", TaskState::Rejected)).await.unwrap();
        store.advance_clock(Duration::from_secs(31));
        assert!(TaskStore::get(&store, "t", "done", None).await.unwrap().is_none());
        assert!(TaskStore::get(&store, "t", "late", None).await.unwrap().is_some());
        assert!(TaskStore::get(&store, "t", "live", None).await.unwrap().is_some());
        let listed = TaskStore::list(&store, "t", &ListTasksRequest::default()).await.unwrap();
        assert_eq!(listed.total_size, 2);
        store.advance_clock(Duration::from_secs(3600));
        assert_eq!(store.len(), 2, "purged lazily: nothing has touched the store yet");
        let listed = TaskStore::list(&store, "t", &ListTasksRequest::default()).await.unwrap();
        assert_eq!(listed.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["live"]);
        assert_flat(&store, 100);
        assert_eq!(store.internal_sizes().expiry, 0);
    }

    #[tokio::test]
    async fn expiry_drops_the_tasks_push_configs() {
        let store = small(10, 60);
        store.save("t", &task("done", TaskState::Completed)).await.unwrap();
        let config =
            TaskPushNotificationConfig { task_id: "done".into(), url: "https://x/".into(), ..Default::default() };
        store.create("t", config).await.unwrap();
        assert_eq!(store.internal_sizes().push_configs, 1);
        store.advance_clock(Duration::from_secs(61));
        assert!(PushConfigStore::list(&store, "t", "done", 0, "").await.unwrap().configs.is_empty());
        assert_eq!((store.internal_sizes().push_tasks, store.internal_sizes().push_configs), (0, 0));
    }

    #[tokio::test]
    async fn push_configs_are_bounded() {
        let store = small(2, 60);
        let config = |task: &str, id: &str| TaskPushNotificationConfig {
            task_id: task.into(),
            id: id.into(),
            url: "https://x/".into(),
            ..Default::default()
        };
        for id in ["a", "b", "c"] {
            store.create("t", config("task", id)).await.unwrap();
        }
        // Replacing an existing id is not a new config.
        store.create("t", config("task", "b")).await.unwrap();
        let full = store.create("t", config("task", "d")).await.unwrap_err();
        assert_eq!(full.kind, ErrorKind::InvalidRequest, "a lasting refusal, not one to retry: {full:?}");
        assert!(full.message.contains("delete one first"), "{}", full.message);
        store.create("t", config("task2", "a")).await.unwrap();
        assert_eq!(store.create("t", config("task3", "a")).await.unwrap_err().kind, ErrorKind::Unavailable);
        let s = store.internal_sizes();
        assert_eq!((s.push_tasks, s.push_configs), (2, 4));
    }

    #[tokio::test]
    async fn memory_stays_flat_under_churn() {
        const CAP: usize = 1_000;
        let store = small(CAP, 3600);
        let terminal = [TaskState::Completed, TaskState::Failed, TaskState::Canceled, TaskState::Rejected];
        for i in 0..50_000usize {
            let tenant = format!("tenant{}", i % 7);
            let id = format!("task-{i}");
            // Each task is created live, then finishes: the usual life of a task.
            store.save(&tenant, &task(&id, TaskState::Working)).await.unwrap();
            store.save(&tenant, &task(&id, terminal[i % 4])).await.unwrap();
            if i % 10 == 0 {
                let config =
                    TaskPushNotificationConfig { task_id: id.clone(), url: "https://x/".into(), ..Default::default() };
                store.create(&tenant, config).await.unwrap();
            }
            if i % 997 == 0 {
                assert_flat(&store, CAP);
            }
        }
        assert_flat(&store, CAP);
        let s = store.internal_sizes();
        assert_eq!((s.tasks, s.expiry), (CAP, CAP));
        assert!(s.push_configs <= CAP / 10 + 1, "{s:?}");
        // The newest tasks are the ones kept.
        assert!(TaskStore::get(&store, &format!("tenant{}", 49_999 % 7), "task-49999", None).await.unwrap().is_some());
        assert!(TaskStore::get(&store, "tenant0", "task-0", None).await.unwrap().is_none());
    }
}
