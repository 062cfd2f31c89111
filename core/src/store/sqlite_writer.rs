//! Group commit for the SQLite store: one writer task owns the database's single write lock
//! and commits the pending task commits of many tasks in one transaction.
//!
//! SQLite lets one connection write at a time. With every request committing on its own
//! pooled connection, writers queue on the lock through the busy handler, which sleeps (1, 2,
//! 5 ms ...) between tries: throughput collapses long before the disk is busy. Here callers
//! hand their encoded commit to the writer and wait for its answer; the writer takes whatever
//! is queued (up to [`BATCH`]), runs each version-checked commit in one transaction, commits
//! once, and answers each caller. A commit is still acknowledged only once it is durable, and
//! a conflict in one commit touches no other. If the batch fails as a whole, each commit is
//! tried again on its own, so one bad commit cannot fail its neighbours.

use super::log::CommitOutcome;
use super::rows::db_error;
use crate::error::{A2AError, ErrorKind, Result};
use sqlx::sqlite::SqlitePool;
use tokio::sync::{mpsc, oneshot};

/// Most commits in one transaction.
const BATCH: usize = 128;

/// One task commit, encoded for the writer.
pub(super) struct Encoded {
    pub tenant: String,
    pub id: String,
    pub context_id: String,
    pub state: &'static str,
    pub status_ts: Option<i64>,
    /// The whole body, when the commit stores it (always for a new task).
    pub body: Option<String>,
    /// 0: the task must not exist yet.
    pub expected: i64,
    pub version: i64,
    /// (seq, change body) of each log entry.
    pub entries: Vec<(i64, String)>,
    /// Sequence numbers of the events to queue push notifications for.
    pub pushed: Vec<i64>,
}

/// A commit and where its answer goes.
struct Job {
    commit: Encoded,
    reply: oneshot::Sender<Result<CommitOutcome>>,
}

/// The writer's queue.
#[derive(Debug, Clone)]
pub(super) struct Writer {
    jobs: mpsc::Sender<Job>,
}

impl Writer {
    /// Starts the writer on `pool` (one connection: the writer's own). It stops when every
    /// handle is dropped.
    pub fn start(pool: SqlitePool) -> Self {
        let (jobs, rx) = mpsc::channel(4 * BATCH);
        tokio::spawn(run(pool, rx));
        Self { jobs }
    }

    pub async fn commit(&self, commit: Encoded) -> Result<CommitOutcome> {
        let (reply, answer) = oneshot::channel();
        let job = Job { commit, reply };
        let gone = || A2AError::new(ErrorKind::Unavailable, "task store: the SQLite writer has stopped");
        self.jobs.send(job).await.map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

async fn run(pool: SqlitePool, mut jobs: mpsc::Receiver<Job>) {
    while let Some(first) = jobs.recv().await {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        match write(&pool, &batch).await {
            Ok(outcomes) => {
                for (job, outcome) in batch.into_iter().zip(outcomes) {
                    let _ = job.reply.send(Ok(outcome));
                }
            }
            Err(_) if batch.len() > 1 => {
                // Find the one that fails: each on its own.
                for job in batch {
                    let outcome = write(&pool, std::slice::from_ref(&job)).await.map(|o| o[0]);
                    let _ = job.reply.send(outcome);
                }
            }
            Err(e) => {
                for job in batch {
                    let _ = job.reply.send(Err(e.clone()));
                }
            }
        }
    }
    pool.close().await;
}

/// Writes `batch` in one transaction: each commit version-checked on its own.
async fn write(pool: &SqlitePool, batch: &[Job]) -> Result<Vec<CommitOutcome>> {
    let mut tx = pool.begin().await.map_err(|e| db_error("commit", e))?;
    let mut outcomes = Vec::with_capacity(batch.len());
    for job in batch {
        outcomes.push(write_one(&mut tx, &job.commit).await?);
    }
    tx.commit().await.map_err(|e| db_error("commit", e))?;
    Ok(outcomes)
}

async fn write_one(tx: &mut sqlx::SqliteConnection, job: &Encoded) -> Result<CommitOutcome> {
    let what = || format!("commit task {:?}", job.id);
    let moved = if job.expected == 0 {
        sqlx::query(
            "INSERT INTO a2a_tasks (tenant, id, context_id, state, status_ts, body, version, body_seq)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, id) DO NOTHING",
        )
        .bind(&job.tenant)
        .bind(&job.id)
        .bind(&job.context_id)
        .bind(job.state)
        .bind(job.status_ts)
        .bind(job.body.as_deref())
        .bind(job.version)
        .bind(job.version)
        .execute(&mut *tx)
        .await
    } else {
        sqlx::query(
            "UPDATE a2a_tasks SET context_id = ?, state = ?, status_ts = ?, version = ?,
                body = COALESCE(?, body), body_seq = CASE WHEN ? IS NULL THEN body_seq ELSE ? END
             WHERE tenant = ? AND id = ? AND version = ?",
        )
        .bind(&job.context_id)
        .bind(job.state)
        .bind(job.status_ts)
        .bind(job.version)
        .bind(job.body.as_deref())
        .bind(job.body.as_deref())
        .bind(job.version)
        .bind(&job.tenant)
        .bind(&job.id)
        .bind(job.expected)
        .execute(&mut *tx)
        .await
    }
    .map_err(|e| db_error(&what(), e))?;
    if moved.rows_affected() == 0 {
        return Ok(CommitOutcome::Conflict);
    }
    if !job.entries.is_empty() {
        let mut qb = sqlx::QueryBuilder::new("INSERT INTO a2a_events (tenant, task_id, seq, body) ");
        qb.push_values(&job.entries, |mut row, (seq, body)| {
            row.push_bind(&job.tenant).push_bind(&job.id).push_bind(*seq).push_bind(body);
        });
        qb.build().execute(&mut *tx).await.map_err(|e| db_error(&what(), e))?;
    }
    if !job.pushed.is_empty() {
        // Each event, for each of the task's push configs, in event then config order.
        let mut qb = sqlx::QueryBuilder::new("INSERT INTO a2a_push_outbox (tenant, task_id, seq, config_id) SELECT ");
        qb.push_bind(&job.tenant).push(", ").push_bind(&job.id).push(", e.column1, c.id FROM (");
        qb.push_values(&job.pushed, |mut row, seq| {
            row.push_bind(*seq);
        });
        qb.push(") AS e JOIN a2a_push_configs c ON c.tenant = ")
            .push_bind(&job.tenant)
            .push(" AND c.task_id = ")
            .push_bind(&job.id)
            .push(" ORDER BY e.column1, c.seq");
        qb.build().execute(&mut *tx).await.map_err(|e| db_error(&what(), e))?;
    }
    Ok(CommitOutcome::Committed)
}
