//! The PostgreSQL store: several server instances share one database. The schema is created on
//! connect under a transaction-scoped advisory lock, so instances starting together do not race
//! on `CREATE TABLE IF NOT EXISTS` (which is not atomic against itself in PostgreSQL).
//!
//! Bodies are JSON *text*, not JSONB: JSONB refuses `\u0000` in strings and drops the sign of
//! `-0.0`, and a store must give back exactly what it was given. Key columns use the "C"
//! collation, so ids sort byte-wise, as in the other stores, whatever the database locale.

use super::log::{Commit, CommitOutcome, Lease, LogPage, Moved, PushDue, Versioned};
use super::sql::{Tables, change_body, db_error, seq_i64, seq_u64, sort_key_sql, task_body};
use super::{PushConfigStore, TaskStore, prepare_push_config};
use crate::error::Result;
use crate::model::{
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, Task, TaskPushNotificationConfig,
    trim_history,
};
use async_trait::async_trait;
use sqlx::Postgres;
use sqlx::postgres::{PgPool, PgPoolOptions};
use std::time::Duration;

/// Now, in ms since the epoch, by the database's clock: every instance reads leases by the
/// same clock, so their own clocks may disagree.
macro_rules! now_ms {
    () => {
        "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT"
    };
}

/// The states a lease is held in.
const ACTIVE: [&str; 2] = ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"];

/// Any constant unique to this crate: the advisory lock serialising schema creation.
const SCHEMA_LOCK: i64 = 0x00A2_A5C4_E3A0_0001;

const SCHEMA: &[&str] = &[
    r#"CREATE TABLE IF NOT EXISTS a2a_tasks (
        tenant TEXT COLLATE "C" NOT NULL,
        id TEXT COLLATE "C" NOT NULL,
        context_id TEXT COLLATE "C" NOT NULL,
        state TEXT NOT NULL,
        status_ts BIGINT,
        body TEXT NOT NULL,
        version BIGINT NOT NULL DEFAULT 0,
        body_seq BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant, id)
    )"#,
    // Databases made before the task log (existing bodies are current).
    "ALTER TABLE a2a_tasks ADD COLUMN IF NOT EXISTS version BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE a2a_tasks ADD COLUMN IF NOT EXISTS body_seq BIGINT NOT NULL DEFAULT 0",
    // Who runs the task's current turn, and until when (ms, the database's clock) unless renewed.
    "ALTER TABLE a2a_tasks ADD COLUMN IF NOT EXISTS owner TEXT",
    "ALTER TABLE a2a_tasks ADD COLUMN IF NOT EXISTS lease_until BIGINT",
    "CREATE INDEX IF NOT EXISTS a2a_tasks_leases ON a2a_tasks (lease_until) WHERE owner IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS a2a_tasks_owner ON a2a_tasks (owner) WHERE owner IS NOT NULL",
    // The task log: one row per change, in sequence (see store::log).
    r#"CREATE TABLE IF NOT EXISTS a2a_events (
        tenant TEXT COLLATE "C" NOT NULL,
        task_id TEXT COLLATE "C" NOT NULL,
        seq BIGINT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (tenant, task_id, seq)
    )"#,
    // Push notifications to deliver, queued with the event that caused them (see claim_push).
    r#"CREATE TABLE IF NOT EXISTS a2a_push_outbox (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        tenant TEXT COLLATE "C" NOT NULL,
        task_id TEXT COLLATE "C" NOT NULL,
        seq BIGINT NOT NULL,
        config_id TEXT COLLATE "C" NOT NULL,
        claimed_by TEXT,
        claim_until BIGINT,
        trace TEXT
    )"#,
    // Outboxes made before trace contexts were kept.
    "ALTER TABLE a2a_push_outbox ADD COLUMN IF NOT EXISTS trace TEXT",
    "CREATE INDEX IF NOT EXISTS a2a_push_outbox_task ON a2a_push_outbox (tenant, task_id, id)",
    // Every committed move of a task wakes the other instances (NOTIFY is delivered at commit,
    // so listeners never hear of a change they cannot read). The payload is only a pointer,
    // [tenant, id, version]; the tables are the truth. A pointer too long for NOTIFY (8000
    // bytes) is sent empty: listeners then catch up on every task they watch.
    r#"CREATE OR REPLACE FUNCTION a2a_notify_task() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE payload TEXT := json_build_array(NEW.tenant, NEW.id, NEW.version)::text;
    BEGIN
        IF octet_length(payload) > 7900 THEN payload := ''; END IF;
        PERFORM pg_notify('a2a_tasks', payload);
        RETURN NULL;
    END $$"#,
    "CREATE OR REPLACE TRIGGER a2a_tasks_notify AFTER INSERT OR UPDATE OF version ON a2a_tasks
        FOR EACH ROW EXECUTE FUNCTION a2a_notify_task()",
    concat!("CREATE INDEX IF NOT EXISTS a2a_tasks_list ON a2a_tasks (tenant, (", sort_key_sql!(), ") DESC, id DESC)"),
    concat!(
        "CREATE INDEX IF NOT EXISTS a2a_tasks_context ON a2a_tasks (tenant, context_id, (",
        sort_key_sql!(),
        ") DESC, id DESC)"
    ),
    r#"CREATE TABLE IF NOT EXISTS a2a_push_configs (
        tenant TEXT COLLATE "C" NOT NULL,
        task_id TEXT COLLATE "C" NOT NULL,
        id TEXT COLLATE "C" NOT NULL,
        seq BIGINT GENERATED ALWAYS AS IDENTITY,
        body TEXT NOT NULL,
        PRIMARY KEY (tenant, task_id, id)
    )"#,
    "CREATE INDEX IF NOT EXISTS a2a_push_configs_list ON a2a_push_configs (tenant, task_id, seq)",
];

/// A [`TaskStore`] and [`PushConfigStore`] in a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    tables: Tables<Postgres>,
    /// Fired after a commit of this process queued push notifications.
    queued: std::sync::Arc<tokio::sync::Notify>,
    /// The LISTEN side, started by [`TaskStore::moves`] when nobody listens yet.
    moves: std::sync::Arc<std::sync::Mutex<Option<tokio::sync::broadcast::Sender<Moved>>>>,
}

/// Moves buffered for a follower that has not caught up yet (it then reads the log anyway).
const MOVES_CAPACITY: usize = 4096;
/// How long the listener waits before listening again after its connection failed.
const RELISTEN_DELAY: Duration = Duration::from_millis(200);

/// Forwards NOTIFY pointers to `tx` for as long as anyone holds a receiver. A lost connection
/// is announced as [`Moved::Unknown`] (notices sent meanwhile are gone), then listened again.
async fn listen(pool: PgPool, tx: tokio::sync::broadcast::Sender<Moved>) {
    loop {
        if tx.receiver_count() == 0 {
            return;
        }
        let mut listener = match sqlx::postgres::PgListener::connect_with(&pool).await {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for task moves; retrying");
                tokio::time::sleep(RELISTEN_DELAY).await;
                continue;
            }
        };
        if let Err(e) = listener.listen("a2a_tasks").await {
            tracing::warn!(error = %e, "cannot listen for task moves; retrying");
            tokio::time::sleep(RELISTEN_DELAY).await;
            continue;
        }
        // Whatever happened while not listening is unknown.
        let _ = tx.send(Moved::Unknown);
        loop {
            match listener.try_recv().await {
                Ok(Some(notice)) => {
                    let _ = tx.send(parse_move(notice.payload()));
                }
                Ok(None) | Err(_) => {
                    tracing::warn!("lost the connection that listens for task moves; listening again");
                    let _ = tx.send(Moved::Unknown);
                    break;
                }
            }
            if tx.receiver_count() == 0 {
                return;
            }
        }
        tokio::time::sleep(RELISTEN_DELAY).await;
    }
}

/// A NOTIFY payload `[tenant, id, version]` (a commit), or `[tenant, id, version,
/// "turn-ended"]` (a lease given back); anything else is [`Moved::Unknown`].
fn parse_move(payload: &str) -> Moved {
    if let Ok((tenant, id, version, what)) = serde_json::from_str::<(String, String, i64, String)>(payload)
        && what == "turn-ended"
    {
        return Moved::TurnEnded { tenant, id, version: seq_u64(version) };
    }
    match serde_json::from_str::<(String, String, i64)>(payload) {
        Ok((tenant, id, version)) => Moved::Task { tenant, id, version: seq_u64(version) },
        Err(_) => Moved::Unknown,
    }
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user:pass@host:port/db`) and creates the schema if needed.
    pub async fn connect(url: &str) -> Result<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(10)
            // Fail promptly when the database is unreachable (the request gets Unavailable).
            .acquire_timeout(Duration::from_secs(2))
            // No ping before each use: a connection the database dropped fails its query once
            // (Unavailable), and the pool replaces it.
            .test_before_acquire(false)
            .connect(url)
            .await;
        let pool = match pool {
            Ok(pool) => pool,
            // The pool says only that it timed out; one connection of its own says why
            // (refused, unknown host, authentication failed, no such database).
            Err(sqlx::Error::PoolTimedOut) => {
                use sqlx::Connection;
                let why = tokio::time::timeout(Duration::from_secs(2), sqlx::PgConnection::connect(url)).await;
                let e = match why {
                    Ok(Err(e)) => e,
                    _ => sqlx::Error::PoolTimedOut,
                };
                return Err(db_error("cannot connect to PostgreSQL", e));
            }
            // The URL is left out of the message: it may hold a password.
            Err(e) => return Err(db_error("cannot connect to PostgreSQL", e)),
        };
        Self::with_pool(pool).await
    }

    /// Uses an existing pool (own limits, TLS, search_path…), creating the schema if needed.
    pub async fn with_pool(pool: PgPool) -> Result<Self> {
        let mut tx = pool.begin().await.map_err(|e| db_error("schema", e))?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(SCHEMA_LOCK)
            .execute(&mut *tx)
            .await
            .map_err(|e| db_error("schema lock", e))?;
        for statement in SCHEMA {
            sqlx::query(*statement).execute(&mut *tx).await.map_err(|e| db_error("schema", e))?;
        }
        tx.commit().await.map_err(|e| db_error("schema", e))?;
        Ok(Self { tables: Tables { pool }, queued: Default::default(), moves: Default::default() })
    }

    pub fn pool(&self) -> &PgPool {
        &self.tables.pool
    }

    /// Closes every connection; later calls fail.
    pub async fn close(&self) {
        self.tables.pool.close().await;
    }
}

#[async_trait]
impl TaskStore for PostgresStore {
    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.tables.pool).await.map(drop).map_err(|e| db_error("ping", e))
    }

    async fn commit(&self, tenant: &str, commit: Commit<'_>) -> Result<CommitOutcome> {
        let task = commit.task;
        let version = seq_i64(commit.version());
        let snapshot = commit.snapshot || commit.expected == 0;
        let body = if snapshot { Some(task_body(task)?) } else { None };
        let logged = if commit.log { commit.entries } else { &[] };
        let mut seqs = Vec::with_capacity(logged.len());
        let mut bodies = Vec::with_capacity(logged.len());
        for entry in logged {
            seqs.push(seq_i64(entry.seq));
            bodies.push(change_body(&entry.change)?);
        }
        let ts = task.status.timestamp.map(|t| t.timestamp_millis());
        // The writer says who holds the task from now (nobody: None).
        let (owner, lease_ms) = match commit.owner {
            Some(o) => (Some(o.id), i64::try_from(o.lease.as_millis()).unwrap_or(i64::MAX)),
            None => (None, 0),
        };
        let pushed: Vec<i64> = if commit.push {
            logged.iter().filter(|e| e.change.event().is_some()).map(|e| seq_i64(e.seq)).collect()
        } else {
            Vec::new()
        };
        // Another instance's live lease is never overwritten: it runs the task (a turn taken
        // there while an execution here waited in AUTH_REQUIRED, or a cancel sent here). Only
        // the writer's own lease, or a lapsed one, is set or cleared; a message that would take
        // the turn over a live one conflicts instead (the writer then reads who runs it). "Now"
        // is read once, so every test in the statement agrees on whether a lease lapsed.
        // One statement, so one round trip in autocommit: the version-checked task write, then
        // (only if it wrote) the log entries and each event's notification for every push
        // config of the task, in event then config order. $1..$5 are the tail's, $6.. the head's.
        let head = if commit.expected == 0 {
            concat!(
                "INSERT INTO a2a_tasks (tenant, id, context_id, state, status_ts, body, version, body_seq, owner, lease_until)
                 VALUES ($1, $2, $6, $7, $8, $9, $10, $10, $11, CASE WHEN $11::TEXT IS NULL THEN NULL ELSE ",
                now_ms!(),
                " + $12 END) ON CONFLICT (tenant, id) DO NOTHING RETURNING 1"
            )
        } else {
            concat!(
                "UPDATE a2a_tasks SET context_id = $6, state = $7, status_ts = $8, version = $10,
                    body = COALESCE($9, body), body_seq = CASE WHEN $9 IS NULL THEN body_seq ELSE $10 END,
                    owner = CASE WHEN owner IS DISTINCT FROM $15::TEXT AND lease_until >= c.now THEN owner ELSE $11 END,
                    lease_until = CASE WHEN owner IS DISTINCT FROM $15::TEXT AND lease_until >= c.now THEN lease_until
                                       WHEN $11::TEXT IS NOT NULL THEN c.now + $12 END
                 FROM (SELECT ",
                now_ms!(),
                " AS now) AS c
                 WHERE tenant = $1 AND id = $2 AND version = $13
                   AND (NOT $14 OR owner IS NULL OR lease_until < c.now)
                   AND (NOT $16 OR owner IS NULL OR owner = $15 OR lease_until < c.now)
                 RETURNING 1"
            )
        };
        // Only the parts this commit needs: a blocking send's first commit is the task row alone.
        let log = if seqs.is_empty() {
            ""
        } else {
            ", logged AS (INSERT INTO a2a_events (tenant, task_id, seq, body)
                SELECT $1, $2, s, b FROM UNNEST($3::BIGINT[], $4::TEXT[]) AS e(s, b) WHERE EXISTS (SELECT 1 FROM moved))"
        };
        // The trace context is the last parameter, bound only with notifications to queue.
        let trace_param = if commit.expected != 0 { 17 } else { 13 };
        let (queue, queued) = if pushed.is_empty() {
            (String::new(), "0")
        } else {
            (
                format!(
                    ", queued AS (INSERT INTO a2a_push_outbox (tenant, task_id, seq, config_id, trace)
                SELECT $1, $2, e.s, c.id, ${trace_param}::TEXT FROM UNNEST($5::BIGINT[]) AS e(s)
                JOIN a2a_push_configs c ON c.tenant = $1 AND c.task_id = $2
                WHERE EXISTS (SELECT 1 FROM moved) ORDER BY e.s, c.seq RETURNING 1)"
                ),
                "(SELECT COUNT(*) FROM queued)",
            )
        };
        let sql = format!("WITH moved AS ({head}){log}{queue} SELECT (SELECT COUNT(*) FROM moved), {queued}::BIGINT");
        let mut query = sqlx::query_as::<_, (i64, i64)>(sqlx::AssertSqlSafe(sql))
            .bind(tenant)
            .bind(&task.id)
            .bind(&seqs)
            .bind(&bodies)
            .bind(&pushed)
            .bind(&task.context_id)
            .bind(task.status.state.as_str())
            .bind(ts)
            .bind(body.as_deref())
            .bind(version)
            .bind(owner)
            .bind(lease_ms);
        if commit.expected != 0 {
            let takes_turn = commit.owner.is_some()
                && commit.entries.iter().any(|e| matches!(e.change, super::Change::UserMessage(_)));
            query =
                query.bind(seq_i64(commit.expected)).bind(commit.orphaned_only).bind(commit.writer).bind(takes_turn);
        }
        if !pushed.is_empty() {
            query = query.bind(commit.trace);
        }
        let (moved, queued) =
            query.fetch_one(self.pool()).await.map_err(|e| db_error(&format!("commit task {:?}", task.id), e))?;
        if moved == 0 {
            return Ok(CommitOutcome::Conflict);
        }
        if queued > 0 {
            self.queued.notify_one();
        }
        Ok(CommitOutcome::Committed)
    }

    async fn load(&self, tenant: &str, id: &str) -> Result<Option<Versioned>> {
        let row: Option<(String, i64, i64, Option<String>, Option<bool>)> = sqlx::query_as(concat!(
            "SELECT body, body_seq, version, owner, lease_until >= ",
            now_ms!(),
            " FROM a2a_tasks WHERE tenant = $1 AND id = $2"
        ))
        .bind(tenant)
        .bind(id)
        .fetch_optional(self.pool())
        .await
        .map_err(|e| db_error(&format!("get task {id:?}"), e))?;
        let Some((body, body_seq, version, owner, live)) = row else { return Ok(None) };
        let task = Tables::current(self.pool(), tenant, id, &body, body_seq, version).await?;
        let lease = owner.map(|owner| Lease { owner, live: live.unwrap_or(false) });
        Ok(Some(Versioned { task, version: seq_u64(version), lease }))
    }

    fn leases(&self) -> bool {
        true
    }

    async fn renew_leases(&self, owner: &str, lease: Duration, tasks: &[(String, String)]) -> Result<()> {
        if tasks.is_empty() {
            return Ok(());
        }
        let (tenants, ids): (Vec<&str>, Vec<&str>) = tasks.iter().map(|(t, i)| (t.as_str(), i.as_str())).unzip();
        sqlx::query(concat!(
            "UPDATE a2a_tasks SET lease_until = ",
            now_ms!(),
            " + $1 WHERE owner = $2 AND (tenant, id) IN (SELECT * FROM UNNEST($3::TEXT[], $4::TEXT[]))"
        ))
        .bind(i64::try_from(lease.as_millis()).unwrap_or(i64::MAX))
        .bind(owner)
        .bind(&tenants)
        .bind(&ids)
        .execute(self.pool())
        .await
        .map_err(|e| db_error("renew leases", e))?;
        Ok(())
    }

    async fn release_lease(&self, tenant: &str, id: &str, owner: &str) -> Result<()> {
        // Announced (`Moved::TurnEnded`), so other instances end their streams of the task as
        // this one does; a pointer too long for NOTIFY goes empty, as the trigger's do.
        sqlx::query(
            "WITH released AS (
                UPDATE a2a_tasks SET owner = NULL, lease_until = NULL
                WHERE tenant = $1 AND id = $2 AND owner = $3 RETURNING tenant, id, version
             ), notice AS (
                SELECT json_build_array(tenant, id, version, 'turn-ended')::text AS payload FROM released
             )
             SELECT pg_notify('a2a_tasks', CASE WHEN octet_length(payload) > 7900 THEN '' ELSE payload END)
             FROM notice",
        )
        .bind(tenant)
        .bind(id)
        .bind(owner)
        .execute(self.pool())
        .await
        .map_err(|e| db_error(&format!("release the lease of task {id:?}"), e))?;
        Ok(())
    }

    fn outbox(&self) -> bool {
        true
    }

    fn outbox_queued(&self) -> Option<std::sync::Arc<tokio::sync::Notify>> {
        Some(self.queued.clone())
    }

    async fn claim_push(&self, claimer: &str, hold: Duration, limit: usize) -> Result<Vec<PushDue>> {
        // Per task only its oldest entry (ids grow in commit order), and only if unclaimed or
        // its claim lapsed; the claim condition is checked again on the row being updated, so
        // two instances never both claim one entry.
        let claimed: Vec<(i64, String, String, i64, String, Option<String>)> = sqlx::query_as(concat!(
            "UPDATE a2a_push_outbox o SET claimed_by = $1, claim_until = ",
            now_ms!(),
            " + $2
             FROM (SELECT x.id FROM a2a_push_outbox x
                   JOIN (SELECT MIN(id) AS id FROM a2a_push_outbox GROUP BY tenant, task_id) h ON h.id = x.id
                   WHERE x.claimed_by IS NULL OR x.claim_until < ",
            now_ms!(),
            " LIMIT $3) pick
             WHERE o.id = pick.id AND (o.claimed_by IS NULL OR o.claim_until < ",
            now_ms!(),
            ") RETURNING o.id, o.tenant, o.task_id, o.seq, o.config_id, o.trace"
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
            " + $1 WHERE claimed_by = $2 AND id = ANY($3)"
        ))
        .bind(i64::try_from(hold.as_millis()).unwrap_or(i64::MAX))
        .bind(claimer)
        .bind(ids)
        .execute(self.pool())
        .await
        .map_err(|e| db_error("renew push notification claims", e))?;
        Ok(())
    }

    async fn release_push_claims(&self, claimer: &str, ids: &[i64]) -> Result<()> {
        sqlx::query(
            "UPDATE a2a_push_outbox SET claimed_by = NULL, claim_until = NULL WHERE claimed_by = $1 AND id = ANY($2)",
        )
        .bind(claimer)
        .bind(ids)
        .execute(self.pool())
        .await
        .map_err(|e| db_error("release push notification claims", e))?;
        Ok(())
    }

    async fn finish_push(&self, id: i64) -> Result<()> {
        self.tables.finish_push(id).await
    }

    async fn orphaned_tasks(&self, limit: usize) -> Result<Vec<(String, String)>> {
        sqlx::query_as(concat!(
            "SELECT tenant, id FROM a2a_tasks WHERE owner IS NOT NULL AND lease_until < ",
            now_ms!(),
            " AND state = ANY($1) LIMIT $2"
        ))
        .bind(&ACTIVE[..])
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(self.pool())
        .await
        .map_err(|e| db_error("look for orphaned tasks", e))
    }

    async fn log_after(&self, tenant: &str, id: &str, after: u64, limit: usize) -> Result<LogPage> {
        let entries = Tables::entries(self.pool(), tenant, id, after, u64::MAX >> 1, limit).await?;
        Ok(LogPage { entries, complete: true })
    }

    async fn save(&self, tenant: &str, task: &Task) -> Result<()> {
        self.tables.save(tenant, task).await
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
        // REPEATABLE READ: PostgreSQL's default (READ COMMITTED) gives each statement its own.
        self.tables.list(tenant, req, Some("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")).await
    }

    fn moves(&self) -> Option<tokio::sync::broadcast::Receiver<Moved>> {
        let mut moves = self.moves.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tx) = moves.as_ref().filter(|tx| tx.receiver_count() > 0) {
            return Some(tx.subscribe());
        }
        // The first follower (or the first since the last one left, and its listener with it).
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("no tokio runtime: task moves of other instances will not be heard");
            return None;
        };
        let (tx, rx) = tokio::sync::broadcast::channel(MOVES_CAPACITY);
        runtime.spawn(listen(self.pool().clone(), tx.clone()));
        *moves = Some(tx);
        Some(rx)
    }
}

#[async_trait]
impl PushConfigStore for PostgresStore {
    async fn create(&self, tenant: &str, config: TaskPushNotificationConfig) -> Result<TaskPushNotificationConfig> {
        self.tables.create_config(tenant, prepare_push_config(tenant, config)?).await
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
