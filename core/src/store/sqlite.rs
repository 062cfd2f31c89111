//! The embedded SQLite store, the default of `a2a serve`: one file, WAL journal (readers never
//! wait for the writer), a busy timeout so concurrent writers queue instead of failing, and the
//! schema created on open. Tasks are stored whole as JSON text; the columns beside the body are
//! only what ListTasks filters and sorts on.

use super::log::{Commit, CommitOutcome, LogEntry, LogPage, PushDue, Versioned};
use super::rows::{
    PageRow, change_body, config_body, db_error, decode_change, decode_config, decode_task, finish_page, fold, seq_i64,
    seq_u64, sort_key_sql, task_body, task_count_query, task_page_query,
};
use super::{
    PushConfigStore, TaskStore, after_key, decode_seq_cursor, decode_task_cursor, encode_seq_cursor,
    prepare_push_config, push_page_size, sort_key,
};
use crate::error::Result;
use crate::model::{
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, Task, TaskPushNotificationConfig,
    trim_history,
};
use async_trait::async_trait;
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
    pool: SqlitePool,
    /// Task commits go through one writer (group commit, see `sqlite_writer`).
    writer: super::sqlite_writer::Writer,
    /// Whether any push config was ever stored: until then a commit queues no notification and
    /// skips the outbox statement. Set before a config is written, so no commit after it misses it
    /// (this store is the file's one user: `single_process`).
    has_push_configs: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl SqliteStore {
    /// Opens (creating if missing) the database file at `path` and its schema.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self> {
        let options = SqliteConnectOptions::new()
            .filename(path.as_ref())
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // NORMAL is durable across application crashes in WAL mode; only an OS crash may
            // lose the last transactions.
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(|e| db_error(&format!("cannot open {}", path.as_ref().display()), e))?;
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
            let writer = SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .connect_with(options)
                .await
                .map_err(|e| db_error("open the writer connection", e))?;
            (writer, Some(pool.clone()))
        };
        Ok(Self {
            pool,
            writer: super::sqlite_writer::Writer::start(writer_pool, checkpoints),
            has_push_configs: std::sync::Arc::new(has_push_configs.into()),
        })
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Closes every connection (checkpointing the WAL); later calls fail.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

impl SqliteStore {
    /// The log entries of a task after `after` (and up to `upto`), oldest first.
    async fn entries<'e, E: sqlx::SqliteExecutor<'e>>(
        executor: E,
        tenant: &str,
        id: &str,
        after: u64,
        upto: u64,
        limit: usize,
    ) -> Result<Vec<LogEntry>> {
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "SELECT seq, body FROM a2a_events WHERE tenant = ? AND task_id = ? AND seq > ? AND seq <= ?
             ORDER BY seq LIMIT ?",
        )
        .bind(tenant)
        .bind(id)
        .bind(seq_i64(after))
        .bind(seq_i64(upto))
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(executor)
        .await
        .map_err(|e| db_error(&format!("read the log of task {id:?}"), e))?;
        rows.iter().map(|(seq, body)| decode_change(tenant, id, *seq, body)).collect()
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
            sqlx::query_as("SELECT body, body_seq, version FROM a2a_tasks WHERE tenant = ? AND id = ?")
                .bind(tenant)
                .bind(id)
                .fetch_optional(&self.pool)
                .await
                .map_err(|e| db_error(&format!("get task {id:?}"), e))?;
        let Some((body, body_seq, version)) = row else { return Ok(None) };
        let entries = if version > body_seq {
            Self::entries(&self.pool, tenant, id, seq_u64(body_seq), seq_u64(version), usize::MAX).await?
        } else {
            Vec::new()
        };
        Ok(Some(Versioned { task: fold(tenant, id, &body, &entries)?, version: seq_u64(version), lease: None }))
    }

    async fn log_after(&self, tenant: &str, id: &str, after: u64, limit: usize) -> Result<LogPage> {
        let entries = Self::entries(&self.pool, tenant, id, after, u64::MAX >> 1, limit).await?;
        Ok(LogPage { entries, complete: true })
    }

    async fn save(&self, tenant: &str, task: &Task) -> Result<()> {
        let body = task_body(task)?;
        let ts = task.status.timestamp.map(|t| t.timestamp_millis());
        sqlx::query(
            "INSERT INTO a2a_tasks (tenant, id, context_id, state, status_ts, body, version, body_seq)
             VALUES (?, ?, ?, ?, ?, ?, 1, 1)
             ON CONFLICT (tenant, id) DO UPDATE SET context_id = excluded.context_id, state = excluded.state,
                status_ts = excluded.status_ts, body = excluded.body, version = a2a_tasks.version + 1,
                body_seq = a2a_tasks.version + 1",
        )
        .bind(tenant)
        .bind(&task.id)
        .bind(&task.context_id)
        .bind(task.status.state.as_str())
        .bind(ts)
        .bind(body)
        .execute(&self.pool)
        .await
        .map_err(|e| db_error(&format!("save task {:?}", task.id), e))?;
        debug_assert_eq!(ts.unwrap_or(super::NO_TIMESTAMP), sort_key(task));
        Ok(())
    }

    fn single_process(&self) -> bool {
        true
    }

    fn outbox(&self) -> bool {
        true
    }

    fn outbox_queued(&self) -> Option<std::sync::Arc<tokio::sync::Notify>> {
        Some(self.writer.queued.clone())
    }

    async fn claim_push(&self, claimer: &str, hold: Duration, limit: usize) -> Result<Vec<PushDue>> {
        // Per task only its oldest entry, and only if unclaimed or its claim lapsed.
        let claimed: Vec<(i64, String, String, i64, String, Option<String>)> = sqlx::query_as(concat!(
            "UPDATE a2a_push_outbox SET claimed_by = ?, claim_until = ",
            now_ms!(),
            " + ? WHERE id IN (SELECT MIN(id) FROM a2a_push_outbox GROUP BY tenant, task_id)
               AND (claimed_by IS NULL OR claim_until < ",
            now_ms!(),
            ") AND id IN (SELECT id FROM a2a_push_outbox WHERE claimed_by IS NULL OR claim_until < ",
            now_ms!(),
            " ORDER BY id LIMIT ?) RETURNING id, tenant, task_id, seq, config_id, trace"
        ))
        .bind(claimer)
        .bind(i64::try_from(hold.as_millis()).unwrap_or(i64::MAX))
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await
        .map_err(|e| db_error("claim push notifications", e))?;
        let mut due = Vec::with_capacity(claimed.len());
        for (id, tenant, task_id, seq, config_id, trace) in claimed {
            let event: Option<String> =
                sqlx::query_scalar("SELECT body FROM a2a_events WHERE tenant = ? AND task_id = ? AND seq = ?")
                    .bind(&tenant)
                    .bind(&task_id)
                    .bind(seq)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(|e| db_error("read a push notification's event", e))?;
            let config = PushConfigStore::get(self, &tenant, &task_id, &config_id).await?;
            let event = event.map(|b| decode_change(&tenant, &task_id, seq, &b)).transpose()?;
            match (config, event.and_then(|e| e.change.event().cloned())) {
                (Some(config), Some(event)) => due.push(PushDue { id, tenant, config, event, trace }),
                // The task or the config is gone: nothing to deliver.
                _ => self.finish_push(id).await?,
            }
        }
        Ok(due)
    }

    async fn finish_push(&self, id: i64) -> Result<()> {
        sqlx::query("DELETE FROM a2a_push_outbox WHERE id = ?")
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(|e| db_error("finish a push notification", e))?;
        Ok(())
    }

    async fn active_tasks(&self, limit: usize) -> Result<Vec<(String, String)>> {
        sqlx::query_as("SELECT tenant, id FROM a2a_tasks WHERE state IN (?, ?) LIMIT ?")
            .bind(crate::model::TaskState::Submitted.as_str())
            .bind(crate::model::TaskState::Working.as_str())
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&self.pool)
            .await
            .map_err(|e| db_error("list active tasks", e))
    }

    async fn get(&self, tenant: &str, id: &str, history_length: Option<i32>) -> Result<Option<Task>> {
        let Some(Versioned { mut task, .. }) = self.load(tenant, id).await? else { return Ok(None) };
        trim_history(&mut task, history_length);
        Ok(Some(task))
    }

    async fn delete(&self, tenant: &str, id: &str) -> Result<()> {
        let mut tx = self.pool.begin().await.map_err(|e| db_error(&format!("delete task {id:?}"), e))?;
        for sql in [
            "DELETE FROM a2a_tasks WHERE tenant = ? AND id = ?",
            "DELETE FROM a2a_events WHERE tenant = ? AND task_id = ?",
            "DELETE FROM a2a_push_outbox WHERE tenant = ? AND task_id = ?",
        ] {
            sqlx::query(sql)
                .bind(tenant)
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(|e| db_error(&format!("delete task {id:?}"), e))?;
        }
        tx.commit().await.map_err(|e| db_error(&format!("delete task {id:?}"), e))?;
        Ok(())
    }

    async fn list(&self, tenant: &str, req: &ListTasksRequest) -> Result<ListTasksResponse> {
        let page_size = req.effective_page_size();
        let cursor = decode_task_cursor(&req.page_token)?;
        let after = after_key(req);
        // One read transaction: the count, the page and the logs see the same snapshot.
        let mut tx = self.pool.begin().await.map_err(|e| db_error("list tasks", e))?;
        let total: i64 = task_count_query(tenant, req, after)
            .build_query_scalar()
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| db_error("count tasks", e))?;
        let rows: Vec<PageRow> = task_page_query(tenant, req, after, cursor, page_size)
            .build_query_as()
            .fetch_all(&mut *tx)
            .await
            .map_err(|e| db_error("list tasks", e))?;
        let mut tasks = Vec::with_capacity(rows.len());
        for (id, body, key, body_seq, version) in rows {
            let task = if version > body_seq {
                let entries =
                    Self::entries(&mut *tx, tenant, &id, seq_u64(body_seq), seq_u64(version), usize::MAX).await?;
                fold(tenant, &id, &body, &entries)?
            } else {
                decode_task(tenant, &id, &body)?
            };
            tasks.push((task, key));
        }
        tx.commit().await.map_err(|e| db_error("list tasks", e))?;
        Ok(finish_page(req, page_size, tasks, total))
    }
}

#[async_trait]
impl PushConfigStore for SqliteStore {
    async fn create(&self, tenant: &str, config: TaskPushNotificationConfig) -> Result<TaskPushNotificationConfig> {
        let config = prepare_push_config(tenant, config)?;
        self.has_push_configs.store(true, std::sync::atomic::Ordering::Release);
        // On conflict only the body changes: the row keeps its sequence number (list position).
        sqlx::query(
            "INSERT INTO a2a_push_configs (tenant, task_id, id, body) VALUES (?, ?, ?, ?)
             ON CONFLICT (tenant, task_id, id) DO UPDATE SET body = excluded.body",
        )
        .bind(tenant)
        .bind(&config.task_id)
        .bind(&config.id)
        .bind(config_body(&config)?)
        .execute(&self.pool)
        .await
        .map_err(|e| db_error(&format!("save push config {:?}", config.id), e))?;
        Ok(config)
    }

    async fn get(&self, tenant: &str, task_id: &str, id: &str) -> Result<Option<TaskPushNotificationConfig>> {
        let body: Option<String> =
            sqlx::query_scalar("SELECT body FROM a2a_push_configs WHERE tenant = ? AND task_id = ? AND id = ?")
                .bind(tenant)
                .bind(task_id)
                .bind(id)
                .fetch_optional(&self.pool)
                .await
                .map_err(|e| db_error(&format!("get push config {id:?}"), e))?;
        body.map(|b| decode_config(tenant, task_id, id, &b)).transpose()
    }

    async fn list(
        &self,
        tenant: &str,
        task_id: &str,
        page_size: i32,
        page_token: &str,
    ) -> Result<ListTaskPushNotificationConfigsResponse> {
        let page_size = push_page_size(page_size);
        let after = decode_seq_cursor(page_token)?.unwrap_or(i64::MIN);
        let rows: Vec<(i64, String, String)> = sqlx::query_as(
            "SELECT seq, id, body FROM a2a_push_configs WHERE tenant = ? AND task_id = ? AND seq > ?
             ORDER BY seq LIMIT ?",
        )
        .bind(tenant)
        .bind(task_id)
        .bind(after)
        .bind(page_size as i64 + 1)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| db_error(&format!("list push configs of task {task_id:?}"), e))?;
        let mut response = ListTaskPushNotificationConfigsResponse::default();
        let more = rows.len() > page_size;
        for (seq, id, body) in rows.into_iter().take(page_size) {
            response.configs.push(decode_config(tenant, task_id, &id, &body)?);
            if more && response.configs.len() == page_size {
                response.next_page_token = encode_seq_cursor(seq);
            }
        }
        Ok(response)
    }

    async fn delete(&self, tenant: &str, task_id: &str, id: &str) -> Result<()> {
        sqlx::query("DELETE FROM a2a_push_configs WHERE tenant = ? AND task_id = ? AND id = ?")
            .bind(tenant)
            .bind(task_id)
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(|e| db_error(&format!("delete push config {id:?}"), e))?;
        Ok(())
    }

    async fn delete_all(&self, tenant: &str, task_id: &str) -> Result<()> {
        sqlx::query("DELETE FROM a2a_push_configs WHERE tenant = ? AND task_id = ?")
            .bind(tenant)
            .bind(task_id)
            .execute(&self.pool)
            .await
            .map_err(|e| db_error(&format!("delete push configs of task {task_id:?}"), e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    #[tokio::test]
    async fn an_outbox_made_before_trace_contexts_gets_the_column() {
        let path = std::env::temp_dir().join(format!("a2a-store-{}.db", uuid::Uuid::new_v4()));
        let old = SqliteStore::open(&path).await.unwrap();
        sqlx::query("ALTER TABLE a2a_push_outbox DROP COLUMN trace").execute(&old.pool).await.unwrap();
        old.close().await;
        drop(old);
        let store = SqliteStore::open(&path).await.unwrap();
        let columns: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM pragma_table_info('a2a_push_outbox') WHERE name = 'trace'")
                .fetch_one(&store.pool)
                .await
                .unwrap();
        assert_eq!(columns, 1);
        store.close().await;
        let _ = std::fs::remove_file(&path);
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
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
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
        let qb = task_page_query::<sqlx::Sqlite>("t", &req, None, Some((5, "x".into())), 10);
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
