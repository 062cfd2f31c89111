//! Task and push-config storage: the [`TaskStore`] and [`PushConfigStore`] traits, and three
//! backends that pass one shared behaviour suite (`core/tests/suite/store_suite.rs`):
//! [`MemoryStore`] (bounded: cap + TTL), [`SqliteStore`] (the embedded default of `a2a serve`)
//! and [`PostgresStore`] (several server instances sharing one database).
//!
//! Every key includes the tenant: the same task id in two tenants is two tasks, and nothing one
//! tenant does is visible to another.
//!
//! ListTasks order is the status timestamp, newest first, ties broken by task id descending
//! (byte order), tasks without a timestamp last. All stores sort and filter on the timestamp in
//! whole milliseconds, the precision the spec asks for; finer digits are kept in the task but
//! do not affect listing (a `statusTimestampAfter` filter compares at millisecond precision, so
//! it never hides a task that matches). Page tokens are opaque cursors: the sort key of the last
//! task returned, so pages stay stable while tasks are added or removed.

use crate::error::{A2AError, Result};
use crate::model::{
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, Task, TaskPushNotificationConfig,
};
use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
pub use log::{Change, Commit, CommitOutcome, Lease, LogEntry, LogPage, Moved, Owner, PushDue, Versioned};

pub mod log;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
mod sqlite_writer;
pub(crate) mod weight;

#[doc(hidden)]
pub use memory::MemoryStoreSizes;
pub use memory::{MemoryLimits, MemoryStore};
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;

/// Where tasks live. Implementations are cheap to share (`Arc<dyn TaskStore>`).
///
/// A task is its state plus a log of the changes applied to it ([`log`]): the task manager
/// writes only through [`TaskStore::commit`], which appends to the log and moves the state in
/// one transaction, version-checked.
#[async_trait]
pub trait TaskStore: Send + Sync {
    /// Appends `commit.entries` to the task's log and stores its new state, atomically, if the
    /// task is still at `commit.expected` (0: absent); otherwise writes nothing and answers
    /// [`CommitOutcome::Conflict`]. Errors are store failures (Unavailable when the database
    /// cannot be reached): nothing of the commit may then be assumed stored.
    async fn commit(&self, tenant: &str, commit: Commit<'_>) -> Result<CommitOutcome>;
    /// The whole task and its version; `None` if absent.
    async fn load(&self, tenant: &str, id: &str) -> Result<Option<Versioned>>;
    /// Up to `limit` log entries of the task with sequence numbers above `after`, oldest first.
    async fn log_after(&self, tenant: &str, id: &str, after: u64, limit: usize) -> Result<LogPage>;
    /// Stores the whole task outside the log (imports, tests): its version moves up by one
    /// with no log entry for it, so a writer that read it before must reload.
    async fn save(&self, tenant: &str, task: &Task) -> Result<()>;
    /// The task, its history trimmed to `history_length` (see [`crate::model::trim_history`]); `None` if absent.
    async fn get(&self, tenant: &str, id: &str, history_length: Option<i32>) -> Result<Option<Task>>;
    /// Removes the task and its log (not its push configs). Deleting a missing task is not an error.
    async fn delete(&self, tenant: &str, id: &str) -> Result<()>;
    /// Tasks moved by any process sharing this store, as they are committed, when the store
    /// can tell (PostgreSQL: LISTEN/NOTIFY); `None` for a store no other process writes to.
    /// Delivery is a wake-up, not the truth: a receiver that lags must treat it as
    /// [`Moved::Unknown`] and read the log.
    fn moves(&self) -> Option<tokio::sync::broadcast::Receiver<Moved>> {
        None
    }
    /// Whether one server process owns this store's tasks (an SQLite file): tasks it finds
    /// SUBMITTED or WORKING when it starts were left by a process that is gone, and are ended.
    fn single_process(&self) -> bool {
        false
    }
    /// Whether the store answers now (a database reachable): what a readiness probe asks.
    async fn ping(&self) -> Result<()> {
        Ok(())
    }
    /// Records, at the end of a graceful stop, that no turn was running when this process
    /// stopped (SQLite: the next start leaves the tasks left active waiting, instead of ending
    /// them as interrupted).
    async fn stopped_cleanly(&self) -> Result<()> {
        Ok(())
    }
    /// Makes what was written self-contained in the store's own files, at a clean shutdown
    /// (SQLite: the WAL folded into the database file, so a copy of the file alone is whole).
    async fn checkpoint(&self) -> Result<()> {
        Ok(())
    }
    /// Whether the store records who runs each task ([`Owner`], [`Lease`]): several processes
    /// share it, and each must renew its leases and end the tasks of owners that stopped.
    fn leases(&self) -> bool {
        false
    }
    /// Renews `owner`'s leases on `tasks` (tenant, id): those an execution of it runs now (its
    /// heartbeat). Its leases on other tasks lapse, so the reaper ends a task whose execution
    /// stopped without releasing it (its last write failed: the database was down).
    async fn renew_leases(&self, owner: &str, lease: std::time::Duration, tasks: &[(String, String)]) -> Result<()> {
        let _ = (owner, lease, tasks);
        Ok(())
    }
    /// Gives up `owner`'s hold on a task (its execution returned with the task still active).
    async fn release_lease(&self, tenant: &str, id: &str, owner: &str) -> Result<()> {
        let _ = (tenant, id, owner);
        Ok(())
    }
    /// Up to `limit` SUBMITTED or WORKING tasks whose owner's lease expired, as (tenant, id).
    async fn orphaned_tasks(&self, limit: usize) -> Result<Vec<(String, String)>> {
        let _ = limit;
        Ok(Vec::new())
    }
    /// Whether the store keeps a push outbox: notifications are queued by [`TaskStore::commit`]
    /// (with `push`) in the event's own transaction, survive the process that produced them, and
    /// are delivered by whichever instance claims them ([`TaskStore::claim_push`]).
    fn outbox(&self) -> bool {
        false
    }
    /// Claims up to `limit` due notifications for `claimer`, for `hold`: per task only the
    /// oldest undelivered one, so a task's notifications go out in order. A claim not finished
    /// within `hold` (its claimer died) is claimed again: at least once, not exactly once.
    async fn claim_push(&self, claimer: &str, hold: std::time::Duration, limit: usize) -> Result<Vec<PushDue>> {
        let _ = (claimer, hold, limit);
        Ok(Vec::new())
    }
    /// Extends `claimer`'s claims on the outbox entries `ids` to `hold` from now: a delivery
    /// still retrying keeps its entry, so no other instance sends it meanwhile.
    async fn renew_push_claims(&self, claimer: &str, hold: std::time::Duration, ids: &[i64]) -> Result<()> {
        let _ = (claimer, hold, ids);
        Ok(())
    }
    /// Gives up `claimer`'s claims on the outbox entries `ids` (deliveries stopped by a shutdown):
    /// another instance may claim them at once.
    async fn release_push_claims(&self, claimer: &str, ids: &[i64]) -> Result<()> {
        let _ = (claimer, ids);
        Ok(())
    }
    /// Fired when a commit of this process queued push notifications (the deliverer then
    /// claims them at once instead of at its next poll).
    fn outbox_queued(&self) -> Option<std::sync::Arc<tokio::sync::Notify>> {
        None
    }
    /// Removes a settled notification from the outbox.
    async fn finish_push(&self, id: i64) -> Result<()> {
        let _ = id;
        Ok(())
    }
    /// Up to `limit` tasks in SUBMITTED or WORKING state, as (tenant, id), over all tenants.
    async fn active_tasks(&self, limit: usize) -> Result<Vec<(String, String)>> {
        let _ = limit;
        Ok(Vec::new())
    }
    /// ListTasks (spec §2.2): filters, newest first, cursor pages, `totalSize` over all pages.
    /// `req.tenant` is ignored: `tenant` is the caller's scope.
    async fn list(&self, tenant: &str, req: &ListTasksRequest) -> Result<ListTasksResponse>;
}

/// Where push-notification configs live, per (tenant, task).
#[async_trait]
pub trait PushConfigStore: Send + Sync {
    /// Stores `config` under (`tenant`, `config.task_id`, `config.id`): a fresh UUID id when
    /// `config.id` is empty; an existing id is replaced in place (it keeps its list position).
    /// Returns the stored config, its `tenant` set to `tenant`.
    async fn create(&self, tenant: &str, config: TaskPushNotificationConfig) -> Result<TaskPushNotificationConfig>;
    async fn get(&self, tenant: &str, task_id: &str, id: &str) -> Result<Option<TaskPushNotificationConfig>>;
    /// The task's configs in creation order. `page_size` 0 (or less) means the default of
    /// [`PUSH_CONFIG_DEFAULT_PAGE_SIZE`]; larger sizes are capped at [`PUSH_CONFIG_MAX_PAGE_SIZE`].
    async fn list(
        &self,
        tenant: &str,
        task_id: &str,
        page_size: i32,
        page_token: &str,
    ) -> Result<ListTaskPushNotificationConfigsResponse>;
    /// Idempotent: deleting a missing config is not an error.
    async fn delete(&self, tenant: &str, task_id: &str, id: &str) -> Result<()>;
    /// Removes every config of the task (e.g. when the task is gone).
    async fn delete_all(&self, tenant: &str, task_id: &str) -> Result<()>;
}

/// Push configs one task may have, in every store: each event goes to every one of them, so
/// more would let one client multiply the server's deliveries. A new one past it is refused
/// with InvalidRequest (it lasts until one is deleted).
pub const MAX_PUSH_CONFIGS_PER_TASK: usize = 100;

/// The refusal of a push config past [`MAX_PUSH_CONFIGS_PER_TASK`] (or a store's own cap).
pub(crate) fn too_many_push_configs(task_id: &str, limit: usize) -> crate::error::A2AError {
    crate::error::A2AError::invalid_request(format!(
        "task {task_id} already has {limit} push notification configs, the most one task may have; delete one first"
    ))
}

pub const PUSH_CONFIG_DEFAULT_PAGE_SIZE: usize = 100;
pub const PUSH_CONFIG_MAX_PAGE_SIZE: usize = 100;

/// The sort key of a task without a status timestamp: below every real one (chrono's earliest
/// date is about -8.2e18 ms), and not `i64::MIN`, which SQL literals cannot spell as an integer.
pub(crate) const NO_TIMESTAMP: i64 = i64::MIN + 1;

/// The ListTasks sort key of a task: its status timestamp in ms since the epoch.
pub(crate) fn sort_key(task: &Task) -> i64 {
    task.status.timestamp.map_or(NO_TIMESTAMP, |t| t.timestamp_millis())
}

/// The lower bound of a `statusTimestampAfter` filter, in ms (floor: never hides a match).
pub(crate) fn after_key(req: &ListTasksRequest) -> Option<i64> {
    req.status_timestamp_after.map(|t| t.timestamp_millis())
}

/// A ListTasks cursor: the sort key and id of the last task of the previous page.
pub(crate) fn encode_task_cursor(key: i64, id: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{key}:{id}"))
}

/// `None` for the first page (empty token); InvalidParams naming `pageToken` if it is not ours.
pub(crate) fn decode_task_cursor(token: &str) -> Result<Option<(i64, String)>> {
    if token.is_empty() {
        return Ok(None);
    }
    let text = URL_SAFE_NO_PAD.decode(token).ok().and_then(|b| String::from_utf8(b).ok());
    let parsed = text.as_deref().and_then(|t| {
        let (key, id) = t.split_once(':')?;
        Some((key.parse::<i64>().ok()?, id.to_owned()))
    });
    parsed.map(Some).ok_or_else(bad_token)
}

/// A push-config list cursor: the creation sequence number of the last config returned.
pub(crate) fn encode_seq_cursor(seq: i64) -> String {
    URL_SAFE_NO_PAD.encode(format!("p:{seq}"))
}

pub(crate) fn decode_seq_cursor(token: &str) -> Result<Option<i64>> {
    if token.is_empty() {
        return Ok(None);
    }
    let text = URL_SAFE_NO_PAD.decode(token).ok().and_then(|b| String::from_utf8(b).ok());
    text.as_deref().and_then(|t| t.strip_prefix("p:")?.parse::<i64>().ok()).map(Some).ok_or_else(bad_token)
}

fn bad_token() -> A2AError {
    A2AError::invalid_field("pageToken", "is not a page token this server issued")
}

pub(crate) fn push_page_size(page_size: i32) -> usize {
    match usize::try_from(page_size) {
        Ok(0) | Err(_) => PUSH_CONFIG_DEFAULT_PAGE_SIZE,
        Ok(n) => n.min(PUSH_CONFIG_MAX_PAGE_SIZE),
    }
}

/// A push config ready to store: tenant set, id assigned when missing, task id required.
pub(crate) fn prepare_push_config(
    tenant: &str,
    mut config: TaskPushNotificationConfig,
) -> Result<TaskPushNotificationConfig> {
    if config.task_id.is_empty() {
        return Err(A2AError::invalid_field("taskId", "is required"));
    }
    if config.id.is_empty() {
        config.id = crate::model::wire::id_text(uuid::Uuid::new_v4());
    }
    config.tenant = tenant.to_owned();
    Ok(config)
}

/// Whether a task passes the ListTasks filters (context, state, timestamp lower bound).
pub(crate) fn matches_filters(task: &Task, key: i64, req: &ListTasksRequest, after: Option<i64>) -> bool {
    (req.context_id.is_empty() || task.context_id == req.context_id)
        && req.status.is_none_or(|s| task.status.state == s)
        && after.is_none_or(|a| key != NO_TIMESTAMP && key >= a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        for (key, id) in [(0, ""), (1_700_000_000_123, "a:b:c"), (NO_TIMESTAMP, "x"), (-5, "ü")] {
            assert_eq!(decode_task_cursor(&encode_task_cursor(key, id)).unwrap(), Some((key, id.to_owned())));
        }
        assert_eq!(decode_task_cursor("").unwrap(), None);
        for bad in ["!!", "bm9wZQ", "YWJjOmRlZg", &encode_seq_cursor(3)] {
            let err = decode_task_cursor(bad).unwrap_err();
            assert_eq!((err.kind, err.violations[0].field.as_str()), (ErrorKind::InvalidParams, "pageToken"));
        }
        assert_eq!(decode_seq_cursor(&encode_seq_cursor(42)).unwrap(), Some(42));
        assert!(decode_seq_cursor(&encode_task_cursor(1, "a")).is_err());
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    #[test]
    fn sql_sort_key_agrees_with_no_timestamp() {
        assert_eq!(sql::sort_key_sql!(), format!("COALESCE(status_ts, {NO_TIMESTAMP})"));
    }

    #[test]
    fn passwords_are_left_out_of_specs_shown() {
        assert_eq!(
            redacted("postgres://app:s3cret@db:5432/a2a?sslmode=require"),
            "postgres://app:***@db:5432/a2a?sslmode=require"
        );
        assert_eq!(redacted("postgresql://app:p@ss@db/a2a"), "postgresql://app:***@db/a2a");
        assert_eq!(redacted("postgres://app:pa/ss?x@db/a2a"), "postgres://app:***@db/a2a");
        for kept in ["postgres://app@db/a2a", "postgres://db/a2a", "sqlite:/tmp/a.db", "memory"] {
            assert_eq!(redacted(kept), kept);
        }
        let e = Stores::check("postgress://app:s3cret@db/a2a").unwrap_err();
        assert!(!e.message.contains("s3cret"), "{e}");
    }

    #[test]
    fn push_page_sizes() {
        assert_eq!(push_page_size(0), PUSH_CONFIG_DEFAULT_PAGE_SIZE);
        assert_eq!(push_page_size(-3), PUSH_CONFIG_DEFAULT_PAGE_SIZE);
        assert_eq!(push_page_size(7), 7);
        assert_eq!(push_page_size(100_000), PUSH_CONFIG_MAX_PAGE_SIZE);
    }
}

/// The task and push-config stores a server works on.
#[derive(Clone)]
pub struct Stores {
    pub tasks: std::sync::Arc<dyn TaskStore>,
    pub push: std::sync::Arc<dyn PushConfigStore>,
}

impl Stores {
    /// A bounded in-memory store for both.
    pub fn memory() -> Self {
        let store = std::sync::Arc::new(crate::store::MemoryStore::new(Default::default()));
        Self { tasks: store.clone(), push: store }
    }

    /// The stores a spec names: `memory`, `sqlite:PATH` or a `postgres://…` / `postgresql://…`
    /// URL (also taken behind a `postgres:` prefix), as `a2a serve --store` and the bindings take it.
    pub async fn open(spec: &str) -> Result<Self> {
        Self::open_with(spec, MemoryLimits::default()).await
    }

    /// [`Stores::open`], with these bounds for a `memory` store (the other stores keep what
    /// they are given until it is deleted).
    pub async fn open_with(spec: &str, memory: MemoryLimits) -> Result<Self> {
        match StoreSpec::parse(spec)? {
            StoreSpec::Memory => {
                let store = std::sync::Arc::new(crate::store::MemoryStore::new(memory));
                Ok(Self { tasks: store.clone(), push: store })
            }
            #[cfg(feature = "sqlite")]
            StoreSpec::Sqlite(path) => {
                let store = std::sync::Arc::new(crate::store::SqliteStore::open(path).await?);
                Ok(Self { tasks: store.clone(), push: store })
            }
            #[cfg(feature = "postgres")]
            StoreSpec::Postgres(url) => {
                let store = std::sync::Arc::new(crate::store::PostgresStore::connect(url).await?);
                Ok(Self { tasks: store.clone(), push: store })
            }
            #[allow(unreachable_patterns)]
            _ => Err(A2AError::invalid_field("store", format!("{:?}: this build has no such store", redacted(spec)))),
        }
    }

    /// Checks a spec without opening anything (a server refuses a bad one when it is made,
    /// not when it starts): its form, and for SQLite that the file's directory exists.
    pub fn check(spec: &str) -> Result<()> {
        let StoreSpec::Sqlite(path) = StoreSpec::parse(spec)? else { return Ok(()) };
        let bad = |why: String| A2AError::invalid_field("store", why);
        if path.is_empty() || path.ends_with('/') {
            return Err(bad(format!("{spec:?}: sqlite:PATH needs a file path")));
        }
        let dir = std::path::Path::new(path).parent().filter(|d| !d.as_os_str().is_empty());
        if let Some(dir) = dir.filter(|d| !d.is_dir()) {
            return Err(bad(format!("{spec:?}: the directory {} does not exist", dir.display())));
        }
        Ok(())
    }
}

/// `spec` for logs and messages: a URL's password replaced by `***` (a PostgreSQL URL may hold
/// one, and a banner or an error that repeats the spec must not).
pub fn redacted(spec: &str) -> String {
    let Some((scheme, rest)) = spec.split_once("://") else { return spec.to_owned() };
    // The last `@` ends the user information, whatever a password holds before it (a `/`
    // in it would end the authority for a parser, and the spec was shown whole).
    let Some((userinfo, after)) = rest.rsplit_once('@') else { return spec.to_owned() };
    match userinfo.split_once(':') {
        Some((user, _password)) => format!("{scheme}://{user}:***@{after}"),
        None => spec.to_owned(),
    }
}

/// A store spec, read.
enum StoreSpec<'a> {
    Memory,
    Sqlite(&'a str),
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Postgres(&'a str),
}

impl<'a> StoreSpec<'a> {
    fn parse(spec: &'a str) -> Result<Self> {
        if spec == "memory" {
            return Ok(Self::Memory);
        }
        if let Some(path) = spec.strip_prefix("sqlite:") {
            return Ok(Self::Sqlite(path));
        }
        if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
            return Ok(Self::Postgres(spec));
        }
        if let Some(url) = spec.strip_prefix("postgres:") {
            return Ok(Self::Postgres(url));
        }
        Err(A2AError::invalid_field(
            "store",
            format!("unknown store {:?}: use memory, sqlite:PATH or a postgres://… URL", redacted(spec)),
        ))
    }
}
