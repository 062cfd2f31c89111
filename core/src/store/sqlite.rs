//! The embedded SQLite store, the default of `a2a serve`: one file, WAL journal (readers never
//! wait for the writer), a busy timeout so concurrent writers queue instead of failing, and the
//! schema created on open. Tasks are stored whole as JSON text; the columns beside the body are
//! only what ListTasks filters and sorts on.

use super::log::{Commit, CommitOutcome, LogPage, PushDue, Versioned};
use super::sql::{Tables, change_body, db_error, seq_i64, seq_u64, sort_key_sql, task_body};
use super::{PushConfigStore, TaskStore, prepare_push_config};
use crate::error::Result;
use crate::model::{
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, Task, TaskPushNotificationConfig,
    trim_history,
};
use async_trait::async_trait;
use sqlx::Sqlite;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use std::path::Path;
use std::time::Duration;

/// Now, in ms since the epoch (the claim clock of the push outbox).
macro_rules! now_ms {
    () => {
        "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
    };
}

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS a2a_tasks (
        tenant TEXT NOT NULL,
        id TEXT NOT NULL,
        context_id TEXT NOT NULL,
        state TEXT NOT NULL,
        status_ts INTEGER,
        body TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 0,
        body_seq INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant, id)
    )",
    // The task log: one row per change, in sequence (see store::log).
    "CREATE TABLE IF NOT EXISTS a2a_events (
        tenant TEXT NOT NULL,
        task_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (tenant, task_id, seq)
    ) WITHOUT ROWID",
    concat!("CREATE INDEX IF NOT EXISTS a2a_tasks_list ON a2a_tasks (tenant, ", sort_key_sql!(), " DESC, id DESC)"),
    // Listing one conversation (contextId) is the common filtered query.
    concat!(
        "CREATE INDEX IF NOT EXISTS a2a_tasks_context ON a2a_tasks (tenant, context_id, ",
        sort_key_sql!(),
        " DESC, id DESC)"
    ),
    // Push notifications to deliver, queued with the event that caused them (see claim_push).
    "CREATE TABLE IF NOT EXISTS a2a_push_outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        tenant TEXT NOT NULL,
        task_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        config_id TEXT NOT NULL,
        claimed_by TEXT,
        claim_until INTEGER,
        trace TEXT
    )",
    "CREATE INDEX IF NOT EXISTS a2a_push_outbox_task ON a2a_push_outbox (tenant, task_id, id)",
    // AUTOINCREMENT: sequence numbers are never reused, so a page cursor never skips a newcomer.
    // What a run says for the next one (`stopped_cleanly`: see SqliteStore::checkpoint).
    "CREATE TABLE IF NOT EXISTS a2a_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS a2a_push_configs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        tenant TEXT NOT NULL,
        task_id TEXT NOT NULL,
        id TEXT NOT NULL,
        body TEXT NOT NULL,
        UNIQUE (tenant, task_id, id)
    )",
];

/// A [`TaskStore`] and [`PushConfigStore`] in one SQLite database.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    tables: Tables<Sqlite>,
    /// Task commits go through one writer (group commit, see `sqlite_writer`).
    writer: super::sqlite_writer::Writer,
    /// Whether any push config was ever stored: until then a commit queues no notification and
    /// skips the outbox statement. Set before a config is written, so no commit after it misses it
    /// (this store is the file's one user: `single_process`).
    has_push_configs: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The file's lock, held until the store is closed or dropped (none for a pool given to
    /// [`Self::with_pool`]).
    /// (Shared by clones, as the pool is.)
    lock: std::sync::Arc<std::sync::Mutex<Option<std::sync::Arc<FileLock>>>>,
    /// Whether this store found the file unused (it took the lock; no other store of this
    /// process held it) and not stopped cleanly: then the tasks it finds active were left by a
    /// process that is gone mid-turn. A second server of the same process on the file (a hot
    /// reload, a test) must not end the first one's running tasks as interrupted; after a clean
    /// stop (see `checkpoint`) no turn was running, and a task left active waits for its next
    /// message.
    first_user: bool,
}

/// One process per database file. A second process on the same file would take it for its
/// own: at start it ends every active task as interrupted (the first one's running tasks
/// among them), and its writes move tasks under the first one's feet. So opening takes an
/// exclusive lock on `PATH.lock` (advisory, `flock`), given back when the process ends or the
/// store is closed or dropped; another process is refused at once. Stores of one process share the
/// lock (a server restarted in the same process opens the file again before the old store is
/// gone).
#[derive(Debug)]
pub(crate) struct FileLock(#[allow(dead_code)] std::fs::File);

/// The locks this process holds, by the lock file's canonical path.
static HELD: std::sync::LazyLock<
    std::sync::Mutex<std::collections::HashMap<std::path::PathBuf, std::sync::Weak<FileLock>>>,
> = std::sync::LazyLock::new(Default::default);

impl FileLock {
    /// The lock, and whether this process took it just now (no store of it held it).
    fn take(db: &Path) -> Result<(std::sync::Arc<Self>, bool)> {
        // Named after the file a symbolic link leads to: two names of one file (the default
        // `a2a-tasks.db` linked to a volume, say) are one lock. (Two hard links stay two names.)
        // A link whose file does not exist yet (a first start on an empty volume) is named
        // after where it leads, as the file will be.
        let linked = std::fs::read_link(db).ok().map(|to| match db.parent() {
            Some(dir) if to.is_relative() => dir.join(to),
            _ => to,
        });
        let named = linked.as_deref().unwrap_or(db);
        let resolved = std::fs::canonicalize(named).ok().or_else(|| {
            let dir = named.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            Some(std::fs::canonicalize(dir).ok()?.join(named.file_name()?))
        });
        let db = resolved.as_deref().unwrap_or(db);
        let mut name = db.as_os_str().to_owned();
        name.push(".lock");
        let path = std::path::PathBuf::from(name);
        let cannot = |e: std::io::Error| {
            crate::A2AError::new(
                crate::ErrorKind::Unavailable,
                format!("task store: cannot lock {}: {e}", path.display()),
            )
        };
        let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(cannot)?;
        let key = std::fs::canonicalize(&path).map_err(cannot)?;
        let mut held = HELD.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // An entry no store holds any more is a lock being dropped on another thread: its
        // `Drop` unlocks and removes it as soon as it gets the registry. Wait for that, or this
        // open would find the file still locked by its closing descriptor.
        while held.get(&key).is_some_and(|lock| lock.strong_count() == 0) {
            drop(held);
            std::thread::yield_now();
            held = HELD.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        if let Some(lock) = held.get(&key).and_then(std::sync::Weak::upgrade) {
            return Ok((lock, false));
        }
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(crate::A2AError::new(
                    crate::ErrorKind::Unavailable,
                    format!(
                        "task store: {} is in use by another process (it holds {}); a SQLite file serves one \
                         process: stop the other, or use PostgreSQL for several instances",
                        db.display(),
                        path.display()
                    ),
                ));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(cannot(e)),
        }
        let lock = std::sync::Arc::new(Self(file));
        held.insert(key, std::sync::Arc::downgrade(&lock));
        Ok((lock, true))
    }
}

impl Drop for FileLock {
    /// Unlocks and leaves the registry under its lock; an open of the same file meanwhile
    /// waits for this (see [`FileLock::take`]).
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = self.0.unlock();
        held.retain(|_, lock| lock.strong_count() > 0);
    }
}

/// A pool of up to `connections` connections to a database file. A connection is never reused
/// with a transaction still counted open: after a failed COMMIT (a full disk) SQLite has rolled
/// the transaction back, sqlx's own ROLLBACK then fails too, and sqlx goes on counting one
/// open. The next `begin` on that connection would be a SAVEPOINT, never committed: every
/// later write acknowledged and lost, the write lock held for good. Such a connection is
/// closed instead (SQLite rolls back whatever it held) and the pool opens a fresh one. A
/// transaction merely dropped is closed too; that only happens on error paths.
fn file_pool(connections: u32) -> SqlitePoolOptions {
    use sqlx::Connection;
    SqlitePoolOptions::new()
        .max_connections(connections)
        .after_release(|conn, _| Box::pin(async move { Ok(!conn.is_in_transaction()) }))
}

impl SqliteStore {
    /// Opens (creating if missing) the database file at `path` and its schema. The file is this
    /// process's alone: another process that has it open is refused (see [`FileLock`]).
    /// `:memory:` is [`SqliteStore::open_in_memory`].
    pub async fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        if path == Path::new(":memory:") {
            return Self::open_in_memory().await;
        }
        if path.as_os_str().is_empty() {
            return Err(crate::A2AError::invalid_field("store", "sqlite:PATH needs a file path"));
        }
        let (lock, fresh) = FileLock::take(path)?;
        let mut store = Self::open_file(path).await?;
        if fresh {
            // Claims on the push outbox were taken by a process that is gone (the lock was
            // free): its notifications are due now, not when those claims would lapse.
            sqlx::query(
                "UPDATE a2a_push_outbox SET claimed_by = NULL, claim_until = NULL WHERE claimed_by IS NOT NULL",
            )
            .execute(&store.tables.pool)
            .await
            .map_err(|e| db_error("release the push claims of a previous run", e))?;
        }
        // Taken back at once, by every store that opens the file: a process that dies from now
        // on did not stop cleanly.
        let stopped_cleanly = sqlx::query("DELETE FROM a2a_meta WHERE key = 'stopped_cleanly' RETURNING key")
            .fetch_optional(&store.tables.pool)
            .await
            .map_err(|e| db_error("read how the previous run stopped", e))?
            .is_some();
        store.lock = std::sync::Arc::new(std::sync::Mutex::new(Some(lock)));
        store.first_user = fresh && !stopped_cleanly;
        Ok(store)
    }

    async fn open_file(path: &Path) -> Result<Self> {
        /// Bytes the WAL file is cut back to once checkpointed (`journal_size_limit`).
        const WAL_SIZE_LIMIT: u64 = 64 * 1024 * 1024;
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // NORMAL is durable across application crashes in WAL mode; only an OS crash may
            // lose the last transactions.
            .synchronous(SqliteSynchronous::Normal)
            // A WAL that readers kept from being folded in grows past what a checkpoint needs
            // (to hundreds of MB under steady reads and writes) and SQLite never shrinks it: the
            // next reset truncates it to this size instead.
            .pragma("journal_size_limit", WAL_SIZE_LIMIT.to_string())
            .busy_timeout(Duration::from_secs(10));
        // A connection of an open given up a moment ago (its caller dropped the future) may
        // still be finishing on its own thread, holding the lock that switching to WAL needs;
        // SQLite answers that switch BUSY at once instead of waiting `busy_timeout`. Such a
        // lock lasts milliseconds (another process is kept out by the file lock), so the open
        // is retried for a moment before it is refused.
        let mut attempts = 0;
        let pool = loop {
            match file_pool(4).connect_with(options.clone()).await {
                // SQLITE_BUSY, or one of its extended codes (the low byte is the primary code).
                Err(sqlx::Error::Database(e))
                    if e.code().and_then(|c| c.parse::<i32>().ok()).is_some_and(|c| c & 0xff == 5) && attempts < 40 =>
                {
                    attempts += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                opened => break opened.map_err(|e| db_error(&format!("cannot open {}", path.display()), e))?,
            }
        };
        Self::with_pool(pool).await
    }

    /// A private database in memory, gone when the store is dropped (tests, demos).
    pub async fn open_in_memory() -> Result<Self> {
        // Each connection to ":memory:" is its own database: keep exactly one, forever.
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(SqliteConnectOptions::new().in_memory(true))
            .await
            .map_err(|e| db_error("cannot open an in-memory database", e))?;
        Self::with_pool(pool).await
    }

    /// Uses an existing pool, creating the schema if needed.
    pub async fn with_pool(pool: SqlitePool) -> Result<Self> {
        let mut tx = pool.begin().await.map_err(|e| db_error("schema", e))?;
        for statement in SCHEMA {
            sqlx::query(*statement).execute(&mut *tx).await.map_err(|e| db_error("schema", e))?;
        }
        // Databases made before the task log: add its columns (existing bodies are current).
        for column in ["version", "body_seq"] {
            let present: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pragma_table_info('a2a_tasks') WHERE name = ?")
                .bind(column)
                .fetch_one(&mut *tx)
                .await
                .map_err(|e| db_error("schema", e))?;
            if present == 0 {
                let sql = format!("ALTER TABLE a2a_tasks ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0");
                sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut *tx).await.map_err(|e| db_error("schema", e))?;
            }
        }
        // Outboxes made before trace contexts were kept.
        let traced: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM pragma_table_info('a2a_push_outbox') WHERE name = 'trace'")
                .fetch_one(&mut *tx)
                .await
                .map_err(|e| db_error("schema", e))?;
        if traced == 0 {
            sqlx::query("ALTER TABLE a2a_push_outbox ADD COLUMN trace TEXT")
                .execute(&mut *tx)
                .await
                .map_err(|e| db_error("schema", e))?;
        }
        // Every column this version reads and writes: a table of another shape (a file of a
        // newer or foreign schema) is refused now, naming what is missing, instead of failing
        // every write later while the server says it is ready.
        for (table, columns) in [
            ("a2a_tasks", "tenant, id, context_id, state, status_ts, body, version, body_seq"),
            ("a2a_events", "tenant, task_id, seq, body"),
            ("a2a_push_outbox", "id, tenant, task_id, seq, config_id, claimed_by, claim_until, trace"),
        ] {
            let probe = format!("SELECT {columns} FROM {table} LIMIT 0");
            sqlx::query(sqlx::AssertSqlSafe(probe)).execute(&mut *tx).await.map_err(|e| {
                db_error(&format!("the file's {table} table is not of this version's shape ({columns})"), e)
            })?;
        }
        let has_push_configs: bool = sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM a2a_push_configs)")
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| db_error("schema", e))?;
        tx.commit().await.map_err(|e| db_error("schema", e))?;
        // The writer's own connection, to the same database. An in-memory database is private
        // to its one connection: there the writer shares the pool (of one).
        let options = (*pool.connect_options()).clone();
        let shared =
            options.get_filename() == std::path::Path::new(":memory:") || pool.options().get_max_connections() == 1;
        let (writer_pool, checkpoints) = if shared {
            (pool.clone(), None)
        } else {
            // A larger page cache: the writer touches the same index pages batch after batch.
            let options = options.pragma("wal_autocheckpoint", "0").pragma("cache_size", "-16384");
            let writer = file_pool(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .connect_with(options)
                .await
                .map_err(|e| db_error("open the writer connection", e))?;
            (writer, Some(pool.clone()))
        };
        Ok(Self {
            tables: Tables { pool },
            writer: super::sqlite_writer::Writer::start(writer_pool, checkpoints),
            has_push_configs: std::sync::Arc::new(has_push_configs.into()),
            lock: Default::default(),
            first_user: true,
        })
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.tables.pool
    }

    /// Closes every connection (checkpointing the WAL); later calls fail.
    /// Closes the connections and gives the file's lock back: the file may be opened again,
    /// by this process or another, as a file no server uses.
    pub async fn close(&self) {
        self.tables.pool.close().await;
        let lock = self.lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        drop(lock);
    }
}

#[async_trait]
impl TaskStore for SqliteStore {
    async fn commit(&self, tenant: &str, commit: Commit<'_>) -> Result<CommitOutcome> {
        let task = commit.task;
        let snapshot = commit.snapshot || commit.expected == 0;
        let logged = if commit.log { commit.entries } else { &[] };
        let mut entries = Vec::with_capacity(logged.len());
        for entry in logged {
            entries.push((seq_i64(entry.seq), change_body(&entry.change)?));
        }
        let pushed = if commit.push && self.has_push_configs.load(std::sync::atomic::Ordering::Acquire) {
            logged.iter().filter(|e| e.change.event().is_some()).map(|e| seq_i64(e.seq)).collect()
        } else {
            Vec::new()
        };
        let encoded = super::sqlite_writer::Encoded {
            tenant: tenant.to_owned(),
            id: task.id.clone(),
            context_id: task.context_id.clone(),
            state: task.status.state.as_str(),
            status_ts: task.status.timestamp.map(|t| t.timestamp_millis()),
            body: if snapshot { Some(task_body(task)?) } else { None },
            expected: seq_i64(commit.expected),
            version: seq_i64(commit.version()),
            entries,
            pushed,
            trace: commit.trace.map(str::to_owned),
        };
        self.writer.commit(encoded).await
    }

    async fn load(&self, tenant: &str, id: &str) -> Result<Option<Versioned>> {
        let row: Option<(String, i64, i64)> =
            sqlx::query_as("SELECT body, body_seq, version FROM a2a_tasks WHERE tenant = $1 AND id = $2")
                .bind(tenant)
                .bind(id)
                .fetch_optional(self.pool())
                .await
                .map_err(|e| db_error(&format!("get task {id:?}"), e))?;
        let Some((body, body_seq, version)) = row else { return Ok(None) };
        let task = Tables::current(self.pool(), tenant, id, &body, body_seq, version).await?;
        // No lease: this store is the file's one user (single_process).
        Ok(Some(Versioned { task, version: seq_u64(version), lease: None }))
    }

    async fn log_after(&self, tenant: &str, id: &str, after: u64, limit: usize) -> Result<LogPage> {
        let entries = Tables::entries(self.pool(), tenant, id, after, u64::MAX >> 1, limit).await?;
        Ok(LogPage { entries, complete: true })
    }

    async fn save(&self, tenant: &str, task: &Task) -> Result<()> {
        self.tables.save(tenant, task).await
    }

    /// Its own file's one user, unless another store of this process opened the file first
    /// (see `first_user`).
    fn single_process(&self) -> bool {
        self.first_user
    }

    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.tables.pool).await.map(drop).map_err(|e| db_error("ping", e))
    }

    async fn stopped_cleanly(&self) -> Result<()> {
        // Only the process's one store of the file speaks for it: another store of this
        // process (a server restarted beside it) may still run turns.
        let alone = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .is_some_and(|l| std::sync::Arc::strong_count(l) == 1);
        if !alone {
            return Ok(());
        }
        sqlx::query("INSERT OR REPLACE INTO a2a_meta (key, value) VALUES ('stopped_cleanly', '1')")
            .execute(&self.tables.pool)
            .await
            .map(drop)
            .map_err(|e| db_error("record a clean stop", e))
    }

    async fn checkpoint(&self) -> Result<()> {
        // PASSIVE: never waits (a shutdown must not), and with the writer idle it copies every
        // frame into the database file. It says how far it got: (busy, frames, copied).
        let (busy, frames, copied): (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(PASSIVE)")
            .fetch_one(&self.tables.pool)
            .await
            .map_err(|e| db_error("checkpoint", e))?;
        // busy: another checkpoint was running (the writer's own), and this one did not run.
        if busy != 0 || copied < frames {
            return Err(crate::A2AError::new(
                crate::ErrorKind::Unavailable,
                format!(
                    "task store: the WAL was folded in only in part ({copied} of {frames} frames; a reader held the rest)"
                ),
            ));
        }
        Ok(())
    }

    fn outbox(&self) -> bool {
        true
    }

    fn outbox_queued(&self) -> Option<std::sync::Arc<tokio::sync::Notify>> {
        Some(self.writer.queued.clone())
    }

    async fn claim_push(&self, claimer: &str, hold: Duration, limit: usize) -> Result<Vec<PushDue>> {
        // Per task only its oldest entry, and only if unclaimed or its claim lapsed; the limit
        // counts those heads (it counted any unclaimed entries first: a task with more queued
        // behind its claimed head than the limit left every other task unclaimed).
        let claimed: Vec<(i64, String, String, i64, String, Option<String>)> = sqlx::query_as(concat!(
            "UPDATE a2a_push_outbox SET claimed_by = ?, claim_until = ",
            now_ms!(),
            " + ? WHERE id IN (SELECT x.id FROM a2a_push_outbox x
                   JOIN (SELECT MIN(id) AS id FROM a2a_push_outbox GROUP BY tenant, task_id) h ON h.id = x.id
                   WHERE x.claimed_by IS NULL OR x.claim_until < ",
            now_ms!(),
            " ORDER BY x.id LIMIT ?) RETURNING id, tenant, task_id, seq, config_id, trace"
        ))
        .bind(claimer)
        .bind(i64::try_from(hold.as_millis()).unwrap_or(i64::MAX))
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(self.pool())
        .await
        .map_err(|e| db_error("claim push notifications", e))?;
        self.tables.due(self, claimed).await
    }

    async fn renew_push_claims(&self, claimer: &str, hold: Duration, ids: &[i64]) -> Result<()> {
        sqlx::query(concat!(
            "UPDATE a2a_push_outbox SET claim_until = ",
            now_ms!(),
            " + $1 WHERE claimed_by = $2 AND id IN (SELECT value FROM json_each($3))"
        ))
        .bind(i64::try_from(hold.as_millis()).unwrap_or(i64::MAX))
        .bind(claimer)
        .bind(ids_json(ids))
        .execute(self.pool())
        .await
        .map_err(|e| db_error("renew push notification claims", e))?;
        Ok(())
    }

    async fn release_push_claims(&self, claimer: &str, ids: &[i64]) -> Result<()> {
        sqlx::query("UPDATE a2a_push_outbox SET claimed_by = NULL, claim_until = NULL WHERE claimed_by = $1 AND id IN (SELECT value FROM json_each($2))")
            .bind(claimer)
            .bind(ids_json(ids))
            .execute(self.pool())
            .await
            .map_err(|e| db_error("release push notification claims", e))?;
        Ok(())
    }

    async fn finish_push(&self, id: i64) -> Result<()> {
        self.tables.finish_push(id).await
    }

    async fn active_tasks(&self, limit: usize) -> Result<Vec<(String, String)>> {
        sqlx::query_as("SELECT tenant, id FROM a2a_tasks WHERE state IN (?, ?) LIMIT ?")
            .bind(crate::model::TaskState::Submitted.as_str())
            .bind(crate::model::TaskState::Working.as_str())
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(self.pool())
            .await
            .map_err(|e| db_error("list active tasks", e))
    }

    async fn get(&self, tenant: &str, id: &str, history_length: Option<i32>) -> Result<Option<Task>> {
        let Some(Versioned { mut task, .. }) = self.load(tenant, id).await? else { return Ok(None) };
        trim_history(&mut task, history_length);
        Ok(Some(task))
    }

    async fn delete(&self, tenant: &str, id: &str) -> Result<()> {
        self.tables.delete(tenant, id).await
    }

    async fn list(&self, tenant: &str, req: &ListTasksRequest) -> Result<ListTasksResponse> {
        self.tables.list(tenant, req, None).await
    }
}

#[async_trait]
impl PushConfigStore for SqliteStore {
    async fn create(&self, tenant: &str, config: TaskPushNotificationConfig) -> Result<TaskPushNotificationConfig> {
        let config = prepare_push_config(tenant, config)?;
        // Set before the config is written, so no commit after it skips the outbox.
        self.has_push_configs.store(true, std::sync::atomic::Ordering::Release);
        self.tables.create_config(tenant, config).await
    }

    async fn get(&self, tenant: &str, task_id: &str, id: &str) -> Result<Option<TaskPushNotificationConfig>> {
        self.tables.get_config(tenant, task_id, id).await
    }

    async fn list(
        &self,
        tenant: &str,
        task_id: &str,
        page_size: i32,
        page_token: &str,
    ) -> Result<ListTaskPushNotificationConfigsResponse> {
        self.tables.list_configs(tenant, task_id, page_size, page_token).await
    }

    async fn delete(&self, tenant: &str, task_id: &str, id: &str) -> Result<()> {
        self.tables.delete_configs(tenant, task_id, Some(id)).await
    }

    async fn delete_all(&self, tenant: &str, task_id: &str) -> Result<()> {
        self.tables.delete_configs(tenant, task_id, None).await
    }
}

/// An id list as SQLite takes it (`json_each`): it has no array parameters.
fn ids_json(ids: &[i64]) -> String {
    serde_json::to_string(ids).unwrap_or_else(|_| "[]".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test database's file and the files SQLite and the store keep beside it.
    fn remove_db(path: &std::path::Path) {
        for suffix in ["", "-wal", "-shm", ".lock"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
    use crate::ErrorKind;
    use crate::model::{TaskState, TaskStatus};

    fn task(id: &str) -> Task {
        Task {
            id: id.into(),
            context_id: "c".into(),
            status: TaskStatus::now(TaskState::Working),
            artifacts: vec![],
            history: vec![],
            metadata: None,
        }
    }

    /// A file is one process's: a lock held elsewhere refuses the open; stores of this process
    /// share it; dropping the last gives it back.
    #[tokio::test]
    async fn a_database_file_serves_one_process() {
        let dir = std::env::temp_dir().join(format!("a2a-lock-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("tasks.db");
        let lock_path = dir.join("tasks.db.lock");
        // Another open file description of the lock file stands for another process.
        let other = || std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path).unwrap();
        let first = SqliteStore::open(&db).await.unwrap();
        assert!(matches!(other().try_lock(), Err(std::fs::TryLockError::WouldBlock)), "held while open");
        let second = SqliteStore::open(&db).await.expect("this process shares its lock");
        first.close().await;
        drop(first);
        assert!(matches!(other().try_lock(), Err(std::fs::TryLockError::WouldBlock)), "held while any store lives");
        second.close().await;
        drop(second);
        let elsewhere = other();
        elsewhere.try_lock().expect("given back with the last store");
        let err = SqliteStore::open(&db).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Unavailable);
        assert!(err.message.contains("in use by another process"), "{}", err.message);
        // Another name for the file (a symbolic link) is the same file: refused as well, also
        // when the link leads to a file not made yet.
        #[cfg(unix)]
        {
            let link = dir.join("link.db");
            std::os::unix::fs::symlink(&db, &link).unwrap();
            let err = SqliteStore::open(&link).await.unwrap_err();
            assert!(err.message.contains("in use by another process"), "{}", err.message);
            let (later, dangling) = (dir.join("later.db"), dir.join("dangling.db"));
            std::os::unix::fs::symlink("later.db", &dangling).unwrap();
            let lock = dir.join("later.db.lock");
            let held = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&lock).unwrap();
            held.try_lock().unwrap();
            let err = SqliteStore::open(&dangling).await.unwrap_err();
            assert!(err.message.contains("in use by another process"), "{}", err.message);
            drop(held);
            assert!(!later.exists() || later.is_file());
        }
        drop(elsewhere);
        SqliteStore::open(&db).await.expect("free again").close().await;
        // The forms that are no file.
        assert_eq!(SqliteStore::open("").await.unwrap_err().kind, ErrorKind::InvalidParams);
        let memory = SqliteStore::open(":memory:").await.unwrap();
        memory.save("t", &task("m")).await.unwrap();
        assert!(TaskStore::get(&memory, "t", "m", None).await.unwrap().is_some(), "one in-memory database, shared");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The state a failed COMMIT leaves (SQLite rolled back, sqlx still counting a transaction),
    /// here made by hand, then a raw BEGIN as the failed savepoint dance leaves it: the
    /// connection is not reused, so the next transaction really commits.
    #[tokio::test]
    async fn a_connection_whose_transaction_count_went_wrong_is_not_reused() {
        use sqlx::{Acquire, Connection};
        let path = std::env::temp_dir().join(format!("a2a-store-{}.db", uuid::Uuid::new_v4()));
        let options = SqliteConnectOptions::new().filename(&path).create_if_missing(true);
        let pool = file_pool(1).connect_with(options.clone()).await.unwrap();
        sqlx::query("CREATE TABLE t (x INTEGER)").execute(&pool).await.unwrap();
        {
            let mut conn = pool.acquire().await.unwrap();
            let mut tx = conn.begin().await.unwrap();
            sqlx::query("ROLLBACK").execute(&mut *tx).await.unwrap();
            assert!(tx.commit().await.is_err(), "COMMIT without a transaction fails");
            sqlx::query("BEGIN").execute(&mut *conn).await.unwrap();
            assert!(conn.is_in_transaction(), "sqlx still counts one");
        }
        let mut tx = pool.begin().await.unwrap();
        sqlx::query("INSERT INTO t VALUES (1)").execute(&mut *tx).await.unwrap();
        tx.commit().await.unwrap();
        // Seen from another connection: committed, and the write lock is free.
        let mut other = sqlx::SqliteConnection::connect_with(&options).await.unwrap();
        let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM t").fetch_one(&mut other).await.unwrap();
        assert_eq!(rows, 1, "the insert was committed");
        sqlx::query("INSERT INTO t VALUES (2)").execute(&mut other).await.unwrap();
        other.close().await.unwrap();
        pool.close().await;
        remove_db(&path);
    }

    #[tokio::test]
    async fn an_outbox_made_before_trace_contexts_gets_the_column() {
        let path = std::env::temp_dir().join(format!("a2a-store-{}.db", uuid::Uuid::new_v4()));
        let old = SqliteStore::open(&path).await.unwrap();
        sqlx::query("ALTER TABLE a2a_push_outbox DROP COLUMN trace").execute(old.pool()).await.unwrap();
        old.close().await;
        drop(old);
        let store = SqliteStore::open(&path).await.unwrap();
        let columns: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM pragma_table_info('a2a_push_outbox') WHERE name = 'trace'")
                .fetch_one(store.pool())
                .await
                .unwrap();
        assert_eq!(columns, 1);
        store.close().await;
        remove_db(&path);
    }

    /// The WAL is cut back once checkpointed.
    #[tokio::test]
    async fn the_wal_is_cut_back_once_checkpointed() {
        let path = std::env::temp_dir().join(format!("a2a-store-{}.db", uuid::Uuid::new_v4()));
        let store = SqliteStore::open(&path).await.unwrap();
        // The writer's connection is made from the same options.
        let limit: i64 = sqlx::query_scalar("PRAGMA journal_size_limit").fetch_one(store.pool()).await.unwrap();
        assert_eq!(limit, 64 * 1024 * 1024);
        store.close().await;
        remove_db(&path);
    }

    /// A file whose tables are of another shape is refused at open, naming what is wrong (it
    /// opened, said it was ready, and failed every write).
    #[tokio::test]
    async fn a_file_of_another_schema_is_refused_at_open() {
        let path = std::env::temp_dir().join(format!("a2a-store-{}.db", uuid::Uuid::new_v4()));
        {
            let options = SqliteConnectOptions::new().filename(&path).create_if_missing(true);
            let pool = SqlitePool::connect_with(options).await.unwrap();
            sqlx::query("CREATE TABLE a2a_tasks (tenant TEXT, id TEXT, context_id TEXT, state TEXT, status_ts INTEGER, content TEXT)")
                .execute(&pool)
                .await
                .unwrap();
            pool.close().await;
        }
        let Err(e) = SqliteStore::open(&path).await else { panic!("opened") };
        assert!(e.message.contains("a2a_tasks table is not of this version's shape"), "{e}");
        remove_db(&path);
    }

    /// A claim renewed outlives its first hold; one given back is claimed by another at once;
    /// only the claimer can do either.
    #[tokio::test]
    async fn outbox_claims_are_renewed_and_given_back() {
        use crate::model::StreamResponse;
        use crate::store::{Change, Commit, LogEntry};
        let path = std::env::temp_dir().join(format!("a2a-store-{}.db", uuid::Uuid::new_v4()));
        let store = SqliteStore::open(&path).await.unwrap();
        let config =
            TaskPushNotificationConfig { task_id: "t1".into(), url: "https://x/".into(), ..Default::default() };
        store.create("t", config).await.unwrap();
        let created = task("t1");
        let entries = [LogEntry { seq: 1, change: Change::Event(StreamResponse::Task(created.clone())) }];
        let commit = Commit {
            task: &created,
            expected: 0,
            entries: &entries,
            snapshot: true,
            owner: None,
            writer: None,
            orphaned_only: false,
            push: true,
            trace: None,
            log: true,
        };
        store.commit("t", commit).await.unwrap();
        let ids = |due: Vec<PushDue>| due.into_iter().map(|d| d.id).collect::<Vec<_>>();
        let claimed = ids(store.claim_push("a", Duration::from_millis(100), 10).await.unwrap());
        assert_eq!(claimed.len(), 1);
        store.renew_push_claims("b", Duration::from_millis(1), &claimed).await.unwrap();
        store.renew_push_claims("a", Duration::from_secs(60), &claimed).await.unwrap();
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(store.claim_push("b", Duration::from_secs(60), 10).await.unwrap().is_empty(), "renewed by a");
        store.release_push_claims("b", &claimed).await.unwrap();
        assert!(store.claim_push("b", Duration::from_secs(60), 10).await.unwrap().is_empty(), "not b's to give");
        store.release_push_claims("a", &claimed).await.unwrap();
        assert_eq!(ids(store.claim_push("b", Duration::from_secs(60), 10).await.unwrap()), claimed, "given back");
        // b's process dies with its claim (60 s): the next process finds it due at once.
        store.close().await;
        drop(store);
        let store = SqliteStore::open(&path).await.unwrap();
        assert_eq!(
            ids(store.claim_push("c", Duration::from_secs(60), 10).await.unwrap()),
            claimed,
            "due after a restart"
        );
        store.close().await;
        remove_db(&path);
    }

    #[tokio::test]
    async fn survives_a_restart() {
        let path = std::env::temp_dir().join(format!("a2a-store-{}.db", uuid::Uuid::new_v4()));
        let store = SqliteStore::open(&path).await.unwrap();
        let kept = task("kept");
        store.save("t", &kept).await.unwrap();
        let config =
            TaskPushNotificationConfig { task_id: "kept".into(), url: "https://x/".into(), ..Default::default() };
        let config = store.create("t", config).await.unwrap();
        store.close().await;
        drop(store);

        let reopened = SqliteStore::open(&path).await.unwrap();
        assert_eq!(TaskStore::get(&reopened, "t", "kept", None).await.unwrap(), Some(kept));
        assert_eq!(PushConfigStore::get(&reopened, "t", "kept", &config.id).await.unwrap(), Some(config));
        reopened.close().await;
        remove_db(&path);
    }

    #[tokio::test]
    async fn a_corrupt_row_is_an_internal_error_naming_the_task() {
        let store = SqliteStore::open_in_memory().await.unwrap();
        store.save("t", &task("bad")).await.unwrap();
        store.save("t", &task("good")).await.unwrap();
        sqlx::query("UPDATE a2a_tasks SET body = '{\"id\": 5' WHERE id = 'bad'").execute(store.pool()).await.unwrap();
        let err = TaskStore::get(&store, "t", "bad", None).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Internal);
        assert!(err.message.contains("\"bad\""), "{}", err.message);
        let err = TaskStore::list(&store, "t", &ListTasksRequest::default()).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Internal);
        sqlx::query("UPDATE a2a_tasks SET body = x'00ff' WHERE id = 'bad'").execute(store.pool()).await.unwrap();
        assert_eq!(TaskStore::get(&store, "t", "bad", None).await.unwrap_err().kind, ErrorKind::Internal);
    }

    #[tokio::test]
    async fn listing_uses_the_index() {
        let store = SqliteStore::open_in_memory().await.unwrap();
        let req = ListTasksRequest { page_token: super::super::encode_task_cursor(5, "x"), ..Default::default() };
        let qb = super::super::sql::task_page_query::<sqlx::Sqlite>("t", &req, None, Some((5, "x".into())), 10);
        let sql = format!("EXPLAIN QUERY PLAN {}", qb.sql().as_str());
        let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind("t")
            .bind(5i64)
            .bind("x")
            .bind(11i64)
            .fetch_all(store.pool())
            .await
            .unwrap();
        let plan: Vec<&str> = plan.iter().map(|r| r.3.as_str()).collect();
        assert!(plan.iter().any(|p| p.contains("a2a_tasks_list")), "{plan:?}");
        assert!(!plan.iter().any(|p| p.contains("TEMP B-TREE")), "sorts instead of scanning the index: {plan:?}");
    }
}
