//! The SQL layer SQLite and PostgreSQL share: row encoding and decoding (a corrupt row is an
//! Internal error naming it, never a panic), the ListTasks queries, and [`Tables`], every
//! statement the two write alike. Statements use `$N` placeholders, which both accept; what
//! differs (the commit, reading leases, claiming the outbox, the schema) stays in each store.

use super::log::{Change, LogEntry, PushDue};
use super::{
    PushConfigStore, after_key, decode_seq_cursor, decode_task_cursor, encode_seq_cursor, encode_task_cursor,
    push_page_size,
};
use crate::ErrorKind;
use crate::error::{A2AError, Result};
use crate::model::{
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, Task, TaskPushNotificationConfig,
    trim_history,
};
use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Type};

/// What ListTasks returns of a stored task: history trimmed, artifacts only when asked for.
pub fn shape_listed(task: &mut Task, req: &ListTasksRequest) {
    trim_history(task, req.history_length);
    if req.include_artifacts != Some(true) {
        // Empty vec: the `artifacts` key is then absent, as the spec requires.
        task.artifacts = Vec::new();
    }
}

pub fn task_body(task: &Task) -> Result<String> {
    serde_json::to_string(task).map_err(|e| A2AError::internal(format!("task {}: cannot encode: {e}", task.id)))
}

/// Decodes a stored task body; a corrupt row is an Internal error naming the task.
pub fn decode_task(tenant: &str, id: &str, body: &str) -> Result<Task> {
    let task: Task = serde_json::from_str(body)
        .map_err(|e| A2AError::internal(format!("stored task {id:?} (tenant {tenant:?}) is corrupt: {e}")))?;
    if task.id != id {
        return Err(A2AError::internal(format!(
            "stored task {id:?} (tenant {tenant:?}) is corrupt: its body has id {:?}",
            task.id
        )));
    }
    Ok(task)
}

/// The member of a stored config's body saying it was registered over 0.3 (the model's `v03`,
/// which is not a wire field).
const V03_MEMBER: &str = "a2aNativeV03";

pub fn config_body(config: &TaskPushNotificationConfig) -> Result<String> {
    let encode_error =
        |e: serde_json::Error| A2AError::internal(format!("push config {}: cannot encode: {e}", config.id));
    if !config.v03 {
        return serde_json::to_string(config).map_err(encode_error);
    }
    let mut body = serde_json::to_value(config).map_err(encode_error)?;
    body[V03_MEMBER] = true.into();
    Ok(body.to_string())
}

pub fn decode_config(tenant: &str, task_id: &str, id: &str, body: &str) -> Result<TaskPushNotificationConfig> {
    let corrupt = |e: serde_json::Error| {
        A2AError::internal(format!("stored push config {id:?} of task {task_id:?} (tenant {tenant:?}) is corrupt: {e}"))
    };
    let mut value: serde_json::Value = serde_json::from_str(body).map_err(corrupt)?;
    let v03 = value.as_object_mut().and_then(|o| o.remove(V03_MEMBER)) == Some(true.into());
    let mut config: TaskPushNotificationConfig = serde_json::from_value(value).map_err(corrupt)?;
    config.v03 = v03;
    // The key columns are the truth; the body only carries the rest.
    config.tenant = tenant.to_owned();
    config.task_id = task_id.to_owned();
    config.id = id.to_owned();
    Ok(config)
}

/// The total as the wire's int32 (saturating; a store never holds 2^31 tasks in practice).
pub fn total_i32(n: i64) -> i32 {
    i32::try_from(n.max(0)).unwrap_or(i32::MAX)
}

/// A database failure: Unavailable when the database cannot be reached (connection
/// refused or lost, pool exhausted), so clients may retry; Internal otherwise.
/// Whether a database error code names a condition that passes (worth a retry): SQLite's
/// (numeric) busy, locked, out of memory, I/O error or full disk; PostgreSQL's (SQLSTATE)
/// shutdown, connection failure, insufficient resources, serialization failure or deadlock.
fn passing(sqlite: bool, code: &str) -> bool {
    if sqlite {
        // Extended result codes keep the primary code in the low byte.
        code.parse::<i32>().is_ok_and(|c| matches!(c & 0xff, 5 | 6 | 7 | 10 | 13))
    } else {
        ["57P", "08", "53", "40001", "40P01"].iter().any(|p| code.starts_with(p))
    }
}

#[cfg(feature = "sqlite")]
fn is_sqlite(e: &dyn sqlx::error::DatabaseError) -> bool {
    e.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some()
}

#[cfg(not(feature = "sqlite"))]
fn is_sqlite(_: &dyn sqlx::error::DatabaseError) -> bool {
    false
}

pub fn db_error(what: &str, e: sqlx::Error) -> A2AError {
    let unreachable = matches!(
        e,
        sqlx::Error::Io(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed
            | sqlx::Error::Tls(_)
            | sqlx::Error::Protocol(_)
    ) || matches!(&e, sqlx::Error::Database(d) if d.code().is_some_and(|c| passing(is_sqlite(&**d), &c)));
    let kind = if unreachable { ErrorKind::Unavailable } else { ErrorKind::Internal };
    A2AError::new(kind, format!("task store: {what}: {e}"))
}

/// The ListTasks sort key in SQL; must agree with [`NO_TIMESTAMP`](super::NO_TIMESTAMP) (checked by a test) and
/// be spelled exactly like this in the list index, or the index would not serve the query.
macro_rules! sort_key_sql {
    () => {
        "COALESCE(status_ts, -9223372036854775807)"
    };
}
pub(crate) use sort_key_sql;

/// `WHERE` of both ListTasks queries (count and page): tenant scope plus the filters.
/// Built from constant fragments; every value is a bind parameter.
pub fn push_task_filters<DB>(qb: &mut sqlx::QueryBuilder<DB>, tenant: &str, req: &ListTasksRequest, after: Option<i64>)
where
    DB: sqlx::Database,
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    qb.push(" WHERE tenant = ").push_bind(tenant.to_owned());
    if !req.context_id.is_empty() {
        qb.push(" AND context_id = ").push_bind(req.context_id.clone());
    }
    if let Some(state) = req.status {
        qb.push(" AND state = ").push_bind(state.as_str().to_owned());
    }
    if let Some(after) = after {
        qb.push(" AND status_ts >= ").push_bind(after);
    }
}

/// The page query: filters, then the cursor, newest first, one row more than the page so
/// the caller knows whether another page follows.
pub fn task_page_query<DB>(
    tenant: &str,
    req: &ListTasksRequest,
    after: Option<i64>,
    cursor: Option<(i64, String)>,
    page_size: usize,
) -> sqlx::QueryBuilder<DB>
where
    DB: sqlx::Database,
    <DB as sqlx::Database>::Arguments: Default,
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let mut qb = sqlx::QueryBuilder::new(concat!(
        "SELECT id, body, ",
        sort_key_sql!(),
        " AS k, body_seq, version FROM a2a_tasks"
    ));
    push_task_filters(&mut qb, tenant, req, after);
    if let Some((key, id)) = cursor {
        qb.push(concat!(" AND (", sort_key_sql!(), ", id) < (")).push_bind(key).push(", ").push_bind(id).push(")");
    }
    qb.push(concat!(" ORDER BY ", sort_key_sql!(), " DESC, id DESC LIMIT "))
        .push_bind(i64::try_from(page_size + 1).unwrap_or(i64::MAX));
    qb
}

pub fn task_count_query<DB>(tenant: &str, req: &ListTasksRequest, after: Option<i64>) -> sqlx::QueryBuilder<DB>
where
    DB: sqlx::Database,
    <DB as sqlx::Database>::Arguments: Default,
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let mut qb = sqlx::QueryBuilder::new("SELECT COUNT(*) FROM a2a_tasks");
    push_task_filters(&mut qb, tenant, req, after);
    qb
}

/// A listed row: id, body, sort key, the version of the body, the task's version.
pub type PageRow = (String, String, i64, i64, i64);

/// Turns page rows (their tasks already folded up to date) into the response's tasks and
/// next-page token.
pub fn finish_page(req: &ListTasksRequest, page_size: usize, rows: Vec<(Task, i64)>, total: i64) -> ListTasksResponse {
    let mut response = ListTasksResponse { total_size: total_i32(total), ..Default::default() };
    let more = rows.len() > page_size;
    for (mut task, key) in rows.into_iter().take(page_size) {
        shape_listed(&mut task, req);
        if more && response.tasks.len() + 1 == page_size {
            response.next_page_token = encode_task_cursor(key, &task.id);
        }
        response.tasks.push(task);
    }
    // The page size used (the proto's words; a2a-sdk agrees), not how many came back.
    response.page_size = i32::try_from(page_size).unwrap_or(i32::MAX);
    response
}

/// A log entry's stored body.
pub fn change_body(change: &Change) -> Result<String> {
    serde_json::to_string(change).map_err(|e| A2AError::internal(format!("cannot encode a log entry: {e}")))
}

pub fn decode_change(tenant: &str, id: &str, seq: i64, body: &str) -> Result<LogEntry> {
    let change: Change = serde_json::from_str(body).map_err(|e| {
        A2AError::internal(format!("log entry {seq} of task {id:?} (tenant {tenant:?}) is corrupt: {e}"))
    })?;
    Ok(LogEntry { seq: u64::try_from(seq).unwrap_or(0), change })
}

/// A stored body brought up to date with the log entries after it.
pub fn fold(tenant: &str, id: &str, body: &str, entries: &[LogEntry]) -> Result<Task> {
    let mut task = decode_task(tenant, id, body)?;
    for entry in entries {
        super::log::apply_to(&mut task, &entry.change);
    }
    Ok(task)
}

/// Sequence numbers as SQL integers (a task never has 2^63 changes).
pub fn seq_i64(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

pub fn seq_u64(seq: i64) -> u64 {
    u64::try_from(seq).unwrap_or(0)
}

/// The tables of a SQL store, and the statements its backends share.
#[derive(Debug)]
pub struct Tables<DB: Database> {
    pub pool: Pool<DB>,
}

impl<DB: Database> Clone for Tables<DB> {
    fn clone(&self) -> Self {
        Self { pool: self.pool.clone() }
    }
}

impl<DB> Tables<DB>
where
    DB: Database,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    DB::Arguments: IntoArguments<DB> + Default,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    String: for<'q> Encode<'q, DB> + for<'r> Decode<'r, DB> + Type<DB>,
    i64: for<'q> Encode<'q, DB> + for<'r> Decode<'r, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    usize: ColumnIndex<DB::Row>,
{
    /// The log entries of a task after `after` (and up to `upto`), oldest first.
    pub async fn entries<'e, E: Executor<'e, Database = DB>>(
        executor: E,
        tenant: &str,
        id: &str,
        after: u64,
        upto: u64,
        limit: usize,
    ) -> Result<Vec<LogEntry>> {
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "SELECT seq, body FROM a2a_events WHERE tenant = $1 AND task_id = $2 AND seq > $3 AND seq <= $4
             ORDER BY seq LIMIT $5",
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

    /// A task row's body brought up to date with the log entries written after it.
    pub async fn current<'e, E: Executor<'e, Database = DB>>(
        executor: E,
        tenant: &str,
        id: &str,
        body: &str,
        body_seq: i64,
        version: i64,
    ) -> Result<Task> {
        if version > body_seq {
            let entries = Self::entries(executor, tenant, id, seq_u64(body_seq), seq_u64(version), usize::MAX).await?;
            fold(tenant, id, body, &entries)
        } else {
            decode_task(tenant, id, body)
        }
    }

    /// Writes a whole task outside the log (version and body both move on by one).
    pub async fn save(&self, tenant: &str, task: &Task) -> Result<()> {
        let ts = task.status.timestamp.map(|t| t.timestamp_millis());
        debug_assert_eq!(ts.unwrap_or(super::NO_TIMESTAMP), super::sort_key(task));
        sqlx::query(
            "INSERT INTO a2a_tasks (tenant, id, context_id, state, status_ts, body, version, body_seq)
             VALUES ($1, $2, $3, $4, $5, $6, 1, 1)
             ON CONFLICT (tenant, id) DO UPDATE SET context_id = excluded.context_id, state = excluded.state,
                status_ts = excluded.status_ts, body = excluded.body, version = a2a_tasks.version + 1,
                body_seq = a2a_tasks.version + 1",
        )
        .bind(tenant)
        .bind(task.id.as_str())
        .bind(task.context_id.as_str())
        .bind(task.status.state.as_str())
        .bind(ts)
        .bind(task_body(task)?)
        .execute(&self.pool)
        .await
        .map_err(|e| db_error(&format!("save task {:?}", task.id), e))?;
        Ok(())
    }

    /// Removes a task, its log and its queued notifications, in one transaction.
    pub async fn delete(&self, tenant: &str, id: &str) -> Result<()> {
        let failed = |e| db_error(&format!("delete task {id:?}"), e);
        let mut tx = self.pool.begin().await.map_err(failed)?;
        for sql in [
            "DELETE FROM a2a_tasks WHERE tenant = $1 AND id = $2",
            "DELETE FROM a2a_events WHERE tenant = $1 AND task_id = $2",
            "DELETE FROM a2a_push_outbox WHERE tenant = $1 AND task_id = $2",
        ] {
            sqlx::query(sql).bind(tenant).bind(id).execute(&mut *tx).await.map_err(failed)?;
        }
        tx.commit().await.map_err(failed)
    }

    /// ListTasks in one read transaction, so the count, the page and the logs see one state.
    /// `isolation` is a statement run first in it, for a database that needs one to say so.
    pub async fn list(
        &self,
        tenant: &str,
        req: &ListTasksRequest,
        isolation: Option<&'static str>,
    ) -> Result<ListTasksResponse> {
        let page_size = req.effective_page_size();
        let cursor = decode_task_cursor(&req.page_token)?;
        let after = after_key(req);
        let failed = |e| db_error("list tasks", e);
        let mut tx = self.pool.begin().await.map_err(failed)?;
        if let Some(isolation) = isolation {
            sqlx::query(isolation).execute(&mut *tx).await.map_err(failed)?;
        }
        let total: i64 = task_count_query(tenant, req, after)
            .build_query_scalar()
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| db_error("count tasks", e))?;
        let rows: Vec<PageRow> = task_page_query(tenant, req, after, cursor, page_size)
            .build_query_as()
            .fetch_all(&mut *tx)
            .await
            .map_err(failed)?;
        let mut tasks = Vec::with_capacity(rows.len());
        for (id, body, key, body_seq, version) in rows {
            tasks.push((Self::current(&mut *tx, tenant, &id, &body, body_seq, version).await?, key));
        }
        tx.commit().await.map_err(failed)?;
        Ok(finish_page(req, page_size, tasks, total))
    }

    /// Turns claimed outbox rows into deliveries; a row whose task or config is gone is
    /// finished at once (nothing to deliver).
    pub async fn due(
        &self,
        configs: &dyn PushConfigStore,
        claimed: Vec<(i64, String, String, i64, String, Option<String>)>,
    ) -> Result<Vec<PushDue>> {
        let mut due = Vec::with_capacity(claimed.len());
        for (id, tenant, task_id, seq, config_id, trace) in claimed {
            let event: Option<String> =
                sqlx::query_scalar("SELECT body FROM a2a_events WHERE tenant = $1 AND task_id = $2 AND seq = $3")
                    .bind(tenant.as_str())
                    .bind(task_id.as_str())
                    .bind(seq)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(|e| db_error("read a push notification's event", e))?;
            let config = configs.get(&tenant, &task_id, &config_id).await?;
            let event = event.map(|b| decode_change(&tenant, &task_id, seq, &b)).transpose()?;
            match (config, event.and_then(|e| e.change.event().cloned())) {
                (Some(config), Some(event)) => {
                    let task = if config.v03 { self.task_at(&tenant, &task_id, &config_id, seq).await? } else { None };
                    due.push(PushDue { id, tenant, config, event, task, trace })
                }
                _ => self.finish_push(id).await?,
            }
        }
        Ok(due)
    }

    /// What a config registered over 0.3 is sent for its outbox row at log entry `seq`: the task
    /// as it stood after that entry. When the stored body is already past it (the entries were
    /// committed together), that state is gone: the task as it stands is sent once, for the
    /// config's last row the body covers, and `None` for the others (nothing new to send).
    async fn task_at(&self, tenant: &str, id: &str, config_id: &str, seq: i64) -> Result<Option<Task>> {
        let row: Option<(String, i64, i64)> =
            sqlx::query_as("SELECT body, body_seq, version FROM a2a_tasks WHERE tenant = $1 AND id = $2")
                .bind(tenant)
                .bind(id)
                .fetch_optional(&self.pool)
                .await
                .map_err(|e| db_error(&format!("get task {id:?}"), e))?;
        let Some((body, body_seq, version)) = row else { return Ok(None) };
        if body_seq > seq {
            let later: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM a2a_push_outbox WHERE tenant = $1 AND task_id = $2 AND config_id = $3
                 AND seq > $4 AND seq <= $5",
            )
            .bind(tenant)
            .bind(id)
            .bind(config_id)
            .bind(seq)
            .bind(body_seq)
            .fetch_one(&self.pool)
            .await
            .map_err(|e| db_error("read the push outbox", e))?;
            if later > 0 {
                return Ok(None);
            }
        }
        let upto = if body_seq <= seq { seq.min(version) } else { version };
        Self::current(&self.pool, tenant, id, &body, body_seq, upto).await.map(Some)
    }

    pub async fn finish_push(&self, id: i64) -> Result<()> {
        sqlx::query("DELETE FROM a2a_push_outbox WHERE id = $1")
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(|e| db_error("finish a push notification", e))?;
        Ok(())
    }

    /// Stores a push config already checked by `prepare_push_config`; on conflict only the body
    /// changes, so the row keeps its sequence number (its place in the list). A new one past
    /// [`super::MAX_PUSH_CONFIGS_PER_TASK`] is refused (a replacement is not new); two creates
    /// racing at the cap may both pass it.
    pub async fn create_config(
        &self,
        tenant: &str,
        config: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig> {
        let limit = super::MAX_PUSH_CONFIGS_PER_TASK;
        // `WHERE` keeps SQLite from reading `ON CONFLICT` as a join's `ON`.
        let written: Option<String> = sqlx::query_scalar(
            "INSERT INTO a2a_push_configs (tenant, task_id, id, body) SELECT $1, $2, $3, $4
             WHERE (SELECT count(*) FROM a2a_push_configs WHERE tenant = $1 AND task_id = $2 AND id <> $3) < $5
             ON CONFLICT (tenant, task_id, id) DO UPDATE SET body = excluded.body RETURNING id",
        )
        .bind(tenant)
        .bind(config.task_id.as_str())
        .bind(config.id.as_str())
        .bind(config_body(&config)?)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_optional(&self.pool)
        .await
        .map_err(|e| db_error(&format!("save push config {:?}", config.id), e))?;
        if written.is_none() {
            return Err(super::too_many_push_configs(&config.task_id, limit));
        }
        Ok(config)
    }

    pub async fn get_config(
        &self,
        tenant: &str,
        task_id: &str,
        id: &str,
    ) -> Result<Option<TaskPushNotificationConfig>> {
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

    pub async fn list_configs(
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

    /// Deletes one push config of a task, or (`id` None) all of them.
    pub async fn delete_configs(&self, tenant: &str, task_id: &str, id: Option<&str>) -> Result<()> {
        let query = match id {
            Some(id) => sqlx::query("DELETE FROM a2a_push_configs WHERE tenant = $1 AND task_id = $2 AND id = $3")
                .bind(tenant)
                .bind(task_id)
                .bind(id),
            None => sqlx::query("DELETE FROM a2a_push_configs WHERE tenant = $1 AND task_id = $2")
                .bind(tenant)
                .bind(task_id),
        };
        query.execute(&self.pool).await.map_err(|e| match id {
            Some(id) => db_error(&format!("delete push config {id:?}"), e),
            None => db_error(&format!("delete push configs of task {task_id:?}"), e),
        })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::passing;

    #[test]
    fn conditions_that_pass_are_told_from_the_rest() {
        // SQLite: busy, busy (extended: recovery), locked, I/O error, full; not a constraint.
        for code in ["5", "261", "6", "10", "13"] {
            assert!(passing(true, code), "{code}");
        }
        assert!(!passing(true, "19") && !passing(true, "2067"), "constraints are not");
        // PostgreSQL: disk full, too many connections, serialization failure, deadlock,
        // shutdown, connection failure; not a unique violation (also all digits).
        for code in ["53100", "53300", "40001", "40P01", "57P01", "08006"] {
            assert!(passing(false, code), "{code}");
        }
        assert!(!passing(false, "23505") && !passing(false, "42P01"));
    }
}
