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
use super::sql::db_error;
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
    /// The commit's trace context, kept with its push notifications.
    pub trace: Option<String>,
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
    /// Fired after a batch that queued push notifications.
    pub queued: std::sync::Arc<tokio::sync::Notify>,
}

impl Writer {
    /// Starts the writer on `pool` (one connection: the writer's own). It stops when every
    /// handle is dropped. `checkpoints`: where WAL checkpoints run (see [`Checkpoints`]),
    /// when the writer's connection does not run them itself.
    pub fn start(pool: SqlitePool, checkpoints: Option<SqlitePool>) -> Self {
        let (jobs, rx) = mpsc::channel(4 * BATCH);
        let queued = std::sync::Arc::new(tokio::sync::Notify::new());
        let checkpoints = checkpoints.map(Checkpoints::new);
        tokio::spawn(run(pool, rx, queued.clone(), checkpoints));
        Self { jobs, queued }
    }

    pub async fn commit(&self, commit: Encoded) -> Result<CommitOutcome> {
        let (reply, answer) = oneshot::channel();
        let job = Job { commit, reply };
        let gone = || A2AError::new(ErrorKind::Unavailable, "task store: the SQLite writer has stopped");
        self.jobs.send(job).await.map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

/// WAL checkpoints off the writer's path. SQLite's automatic checkpoint runs inside the
/// commit that crosses the threshold, fsyncing the database file while every queued commit
/// waits (the p99 of a busy server). The writer's connection has it off; instead, after every
/// [`Checkpoints::EVERY`] commits, or [`Checkpoints::EVERY_BYTES`] written, whichever comes
/// first (a few large commits grew the WAL to hundreds of MB), a PASSIVE checkpoint runs on a
/// reader connection, beside
/// the writer, which keeps committing meanwhile. The WAL file starts over only once a
/// checkpoint has caught up with its end, which a checkpoint racing the writer never does: so
/// when one finishes, the writer itself checkpoints the few frames written meanwhile (cheap,
/// and the WAL stays small).
struct Checkpoints {
    pool: SqlitePool,
    commits: usize,
    /// About what the commits since the last checkpoint wrote (their bodies and log entries).
    bytes: usize,
    running: std::sync::Arc<std::sync::atomic::AtomicBool>,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Checkpoints {
    /// About SQLite's default threshold (1,000 WAL pages): a commit writes a few pages.
    const EVERY: usize = 400;
    /// What the WAL is cut back to once checkpointed (`journal_size_limit`, 64 MiB), halved:
    /// a checkpoint then runs before the WAL outgrows it.
    const EVERY_BYTES: usize = 32 << 20;

    fn new(pool: SqlitePool) -> Self {
        Self { pool, commits: 0, bytes: 0, running: Default::default(), done: Default::default() }
    }

    /// Whether a background checkpoint finished since the last call.
    fn finished(&self) -> bool {
        self.done.swap(false, std::sync::atomic::Ordering::AcqRel)
    }

    fn committed(&mut self, commits: usize, bytes: usize) {
        use std::sync::atomic::Ordering;
        self.commits += commits;
        self.bytes = self.bytes.saturating_add(bytes);
        if (self.commits < Self::EVERY && self.bytes < Self::EVERY_BYTES) || self.running.swap(true, Ordering::AcqRel) {
            return;
        }
        (self.commits, self.bytes) = (0, 0);
        let (pool, running, done) = (self.pool.clone(), self.running.clone(), self.done.clone());
        tokio::spawn(async move {
            match sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").execute(&pool).await {
                Ok(_) => done.store(true, Ordering::Release),
                Err(e) => tracing::warn!(error = %e, "SQLite WAL checkpoint failed (the next one retries)"),
            }
            running.store(false, Ordering::Release);
        });
    }
}

async fn run(
    pool: SqlitePool,
    mut jobs: mpsc::Receiver<Job>,
    queued: std::sync::Arc<tokio::sync::Notify>,
    mut checkpoints: Option<Checkpoints>,
) {
    while let Some(first) = jobs.recv().await {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        if let Some(c) = checkpoints.as_mut() {
            if c.finished()
                && let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").execute(&pool).await
            {
                tracing::warn!(error = %e, "SQLite WAL checkpoint failed (the next one retries)");
            }
            let bytes = batch
                .iter()
                .map(|j| {
                    j.commit.body.as_ref().map_or(0, String::len)
                        + j.commit.entries.iter().map(|e| e.1.len()).sum::<usize>()
                })
                .sum();
            c.committed(batch.len(), bytes);
        }
        match write(&pool, &batch).await {
            Ok(outcomes) => {
                if outcomes.iter().any(|(_, pushed)| *pushed) {
                    queued.notify_one();
                }
                for (job, (outcome, _)) in batch.into_iter().zip(outcomes) {
                    let _ = job.reply.send(Ok(outcome));
                }
            }
            Err(_) if batch.len() > 1 => {
                // Find the one that fails: each on its own.
                for job in batch {
                    let outcome = write(&pool, std::slice::from_ref(&job)).await.map(|o| o[0]);
                    if outcome.as_ref().is_ok_and(|(_, pushed)| *pushed) {
                        queued.notify_one();
                    }
                    let _ = job.reply.send(outcome.map(|(o, _)| o));
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

/// Rows per multi-row INSERT: well under SQLite's 32,766 bound variables.
const ROWS_PER_INSERT: usize = 1000;

/// Writes `batch` in one transaction: each commit version-checked on its own. With each
/// outcome, whether it queued push notifications. Statements are shared across the batch
/// where they can be (one INSERT for all new tasks, one for all log entries, one for all push
/// notifications): each statement is a round trip to sqlx's SQLite worker thread, and that
/// round trip, not the disk, is what a busy writer spends its time on.
async fn write(pool: &SqlitePool, batch: &[Job]) -> Result<Vec<(CommitOutcome, bool)>> {
    let mut tx = pool.begin().await.map_err(|e| db_error("commit", e))?;
    let mut committed = vec![false; batch.len()];

    // New tasks: one INSERT; RETURNING says which did not exist yet.
    let new: Vec<&Encoded> = batch.iter().map(|j| &j.commit).filter(|c| c.expected == 0).collect();
    let mut created = std::collections::HashSet::new();
    for chunk in new.chunks(ROWS_PER_INSERT / 8) {
        let mut qb = sqlx::QueryBuilder::new(
            "INSERT INTO a2a_tasks (tenant, id, context_id, state, status_ts, body, version, body_seq) ",
        );
        qb.push_values(chunk, |mut row, c| {
            row.push_bind(&c.tenant)
                .push_bind(&c.id)
                .push_bind(&c.context_id)
                .push_bind(c.state)
                .push_bind(c.status_ts)
                .push_bind(c.body.as_deref())
                .push_bind(c.version)
                .push_bind(c.version);
        });
        qb.push(" ON CONFLICT (tenant, id) DO NOTHING RETURNING tenant, id");
        let rows: Vec<(String, String)> =
            qb.build_query_as().fetch_all(&mut *tx).await.map_err(|e| db_error("create tasks", e))?;
        created.extend(rows);
    }
    for (i, job) in batch.iter().enumerate() {
        let c = &job.commit;
        committed[i] = if c.expected == 0 {
            created.contains(&(c.tenant.clone(), c.id.clone()))
        } else {
            update(&mut tx, c).await?
        };
    }

    // Every committed commit's log entries: one INSERT per ROWS_PER_INSERT rows.
    let entries: Vec<(&Encoded, &(i64, String))> = batch
        .iter()
        .zip(&committed)
        .filter(|(_, ok)| **ok)
        .flat_map(|(j, _)| j.commit.entries.iter().map(move |e| (&j.commit, e)))
        .collect();
    for chunk in entries.chunks(ROWS_PER_INSERT / 4) {
        let mut qb = sqlx::QueryBuilder::new("INSERT INTO a2a_events (tenant, task_id, seq, body) ");
        qb.push_values(chunk, |mut row, (c, (seq, body))| {
            row.push_bind(&c.tenant).push_bind(&c.id).push_bind(*seq).push_bind(body);
        });
        qb.build().execute(&mut *tx).await.map_err(|e| db_error("append to task logs", e))?;
    }

    // Push notifications: each event, for each push config of its task, in order.
    let pushed: Vec<(&Encoded, i64)> = batch
        .iter()
        .zip(&committed)
        .filter(|(_, ok)| **ok)
        .flat_map(|(j, _)| j.commit.pushed.iter().map(move |seq| (&j.commit, *seq)))
        .collect();
    let mut queued_for = std::collections::HashSet::new();
    for chunk in pushed.chunks(ROWS_PER_INSERT / 4) {
        let mut qb = sqlx::QueryBuilder::new(
            "INSERT INTO a2a_push_outbox (tenant, task_id, seq, config_id, trace)
             SELECT e.column1, e.column2, e.column3, c.id, e.column4 FROM (",
        );
        qb.push_values(chunk, |mut row, (c, seq)| {
            row.push_bind(&c.tenant).push_bind(&c.id).push_bind(*seq).push_bind(c.trace.as_deref());
        });
        qb.push(
            ") AS e JOIN a2a_push_configs c ON c.tenant = e.column1 AND c.task_id = e.column2
             ORDER BY e.column1, e.column2, e.column3, c.seq RETURNING tenant, task_id",
        );
        let rows: Vec<(String, String)> =
            qb.build_query_as().fetch_all(&mut *tx).await.map_err(|e| db_error("queue push notifications", e))?;
        queued_for.extend(rows);
    }
    tx.commit().await.map_err(|e| db_error("commit", e))?;
    Ok(batch
        .iter()
        .zip(committed)
        .map(|(j, ok)| {
            let outcome = if ok { CommitOutcome::Committed } else { CommitOutcome::Conflict };
            (outcome, queued_for.contains(&(j.commit.tenant.clone(), j.commit.id.clone())))
        })
        .collect())
}

/// The version-checked move of an existing task: `false` when it is not at the expected version.
async fn update(tx: &mut sqlx::SqliteConnection, job: &Encoded) -> Result<bool> {
    let moved = sqlx::query(
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
    .map_err(|e| db_error(&format!("commit task {:?}", job.id), e))?;
    Ok(moved.rows_affected() == 1)
}
