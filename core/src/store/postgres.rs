//! The PostgreSQL store: several server instances share one database. The schema is created on
//! connect under a transaction-scoped advisory lock, so instances starting together do not race
//! on `CREATE TABLE IF NOT EXISTS` (which is not atomic against itself in PostgreSQL).
//!
//! Bodies are JSON *text*, not JSONB: JSONB refuses `\u0000` in strings and drops the sign of
//! `-0.0`, and a store must give back exactly what it was given. Key columns use the "C"
//! collation, so ids sort byte-wise, as in the other stores, whatever the database locale.

use super::rows::{
    config_body, db_error, decode_config, decode_task, finish_page, sort_key_sql, task_body, task_count_query,
    task_page_query,
};
use super::{
    PushConfigStore, TaskStore, after_key, decode_seq_cursor, decode_task_cursor, encode_seq_cursor,
    prepare_push_config, push_page_size,
};
use crate::error::Result;
use crate::model::{
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, Task, TaskPushNotificationConfig,
    trim_history,
};
use async_trait::async_trait;
use sqlx::postgres::{PgPool, PgPoolOptions};
use std::time::Duration;

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
        PRIMARY KEY (tenant, id)
    )"#,
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
    pool: PgPool,
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user:pass@host:port/db`) and creates the schema if needed.
    pub async fn connect(url: &str) -> Result<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(10)
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await
            // The URL is left out of the message: it may hold a password.
            .map_err(|e| db_error("cannot connect to PostgreSQL", e))?;
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
        Ok(Self { pool })
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Closes every connection; later calls fail.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

#[async_trait]
impl TaskStore for PostgresStore {
    async fn save(&self, tenant: &str, task: &Task) -> Result<()> {
        let body = task_body(task)?;
        sqlx::query(
            "INSERT INTO a2a_tasks (tenant, id, context_id, state, status_ts, body) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (tenant, id) DO UPDATE SET context_id = EXCLUDED.context_id, state = EXCLUDED.state,
                status_ts = EXCLUDED.status_ts, body = EXCLUDED.body",
        )
        .bind(tenant)
        .bind(&task.id)
        .bind(&task.context_id)
        .bind(task.status.state.as_str())
        .bind(task.status.timestamp.map(|t| t.timestamp_millis()))
        .bind(body)
        .execute(&self.pool)
        .await
        .map_err(|e| db_error(&format!("save task {:?}", task.id), e))?;
        Ok(())
    }

    async fn get(&self, tenant: &str, id: &str, history_length: Option<i32>) -> Result<Option<Task>> {
        let body: Option<String> = sqlx::query_scalar("SELECT body FROM a2a_tasks WHERE tenant = $1 AND id = $2")
            .bind(tenant)
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| db_error(&format!("get task {id:?}"), e))?;
        let Some(body) = body else { return Ok(None) };
        let mut task = decode_task(tenant, id, &body)?;
        trim_history(&mut task, history_length);
        Ok(Some(task))
    }

    async fn delete(&self, tenant: &str, id: &str) -> Result<()> {
        sqlx::query("DELETE FROM a2a_tasks WHERE tenant = $1 AND id = $2")
            .bind(tenant)
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(|e| db_error(&format!("delete task {id:?}"), e))?;
        Ok(())
    }

    async fn list(&self, tenant: &str, req: &ListTasksRequest) -> Result<ListTasksResponse> {
        let page_size = req.effective_page_size();
        let cursor = decode_task_cursor(&req.page_token)?;
        let after = after_key(req);
        // REPEATABLE READ: the count and the page see one snapshot.
        let mut tx = self.pool.begin().await.map_err(|e| db_error("list tasks", e))?;
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .execute(&mut *tx)
            .await
            .map_err(|e| db_error("list tasks", e))?;
        let total: i64 = task_count_query(tenant, req, after)
            .build_query_scalar()
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| db_error("count tasks", e))?;
        let rows: Vec<(String, String, i64)> = task_page_query(tenant, req, after, cursor, page_size)
            .build_query_as()
            .fetch_all(&mut *tx)
            .await
            .map_err(|e| db_error("list tasks", e))?;
        tx.commit().await.map_err(|e| db_error("list tasks", e))?;
        finish_page(tenant, req, page_size, rows, total)
    }
}

#[async_trait]
impl PushConfigStore for PostgresStore {
    async fn create(&self, tenant: &str, config: TaskPushNotificationConfig) -> Result<TaskPushNotificationConfig> {
        let config = prepare_push_config(tenant, config)?;
        // On conflict only the body changes: the row keeps its sequence number (list position).
        sqlx::query(
            "INSERT INTO a2a_push_configs (tenant, task_id, id, body) VALUES ($1, $2, $3, $4)
             ON CONFLICT (tenant, task_id, id) DO UPDATE SET body = EXCLUDED.body",
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
            sqlx::query_scalar("SELECT body FROM a2a_push_configs WHERE tenant = $1 AND task_id = $2 AND id = $3")
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
            "SELECT seq, id, body FROM a2a_push_configs WHERE tenant = $1 AND task_id = $2 AND seq > $3
             ORDER BY seq LIMIT $4",
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
        sqlx::query("DELETE FROM a2a_push_configs WHERE tenant = $1 AND task_id = $2 AND id = $3")
            .bind(tenant)
            .bind(task_id)
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(|e| db_error(&format!("delete push config {id:?}"), e))?;
        Ok(())
    }

    async fn delete_all(&self, tenant: &str, task_id: &str) -> Result<()> {
        sqlx::query("DELETE FROM a2a_push_configs WHERE tenant = $1 AND task_id = $2")
            .bind(tenant)
            .bind(task_id)
            .execute(&self.pool)
            .await
            .map_err(|e| db_error(&format!("delete push configs of task {task_id:?}"), e))?;
        Ok(())
    }
}
