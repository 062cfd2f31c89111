//! [`Faulty`]: a task store that passes everything to a real one, and on request makes some
//! commits fail or take their time, as a database under trouble would.

use a2a_native::model::{ListTasksRequest, ListTasksResponse, Task, TaskState};
use a2a_native::store::{Change, Commit, CommitOutcome, LogPage, Moved, PushDue, TaskStore, Versioned};
use a2a_native::{A2AError, ErrorKind, Result};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long a slowed commit waits.
pub const DELAY: Duration = Duration::from_millis(300);

/// Wraps `inner`. Each switch is off until set.
pub struct Faulty {
    pub inner: Arc<dyn TaskStore>,
    /// A commit that ends a task CANCELED waits [`DELAY`], then fails (Unavailable).
    pub fail_cancels: AtomicBool,
    /// A commit carrying a user message waits [`DELAY`] before it reaches the store (a request
    /// dropped meanwhile never does).
    pub slow_messages: AtomicBool,
    /// A commit carrying a user message waits [`DELAY`] after it reached the store (a request
    /// dropped meanwhile never sees that it did).
    pub slow_after_messages: AtomicBool,
    /// The next commit carrying an artifact panics (a bug in the server's own code, as the
    /// task manager sees it); the switch then turns itself off.
    pub panic_on_artifact: AtomicBool,
    /// Renewing leases and looking for orphans fail (Unavailable): the database is out of reach
    /// for the instances' lease keepers.
    pub leases_down: AtomicBool,
    /// A commit that ends a task fails (a full disk).
    pub fail_ends: AtomicBool,
}

impl Faulty {
    pub fn new(inner: Arc<dyn TaskStore>) -> Self {
        Self {
            inner,
            fail_cancels: AtomicBool::new(false),
            slow_messages: AtomicBool::new(false),
            slow_after_messages: AtomicBool::new(false),
            panic_on_artifact: AtomicBool::new(false),
            fail_ends: AtomicBool::new(false),
            leases_down: AtomicBool::new(false),
        }
    }

    pub fn set(switch: &AtomicBool, on: bool) {
        switch.store(on, Ordering::Release);
    }
}

fn on(switch: &AtomicBool) -> bool {
    switch.load(Ordering::Acquire)
}

#[async_trait::async_trait]
impl TaskStore for Faulty {
    async fn commit(&self, tenant: &str, commit: Commit<'_>) -> Result<CommitOutcome> {
        if on(&self.fail_ends) && commit.task.status.state.is_terminal() {
            return Err(A2AError::new(ErrorKind::Internal, "task store: commit: database or disk is full"));
        }
        if on(&self.fail_cancels) && commit.task.status.state == TaskState::Canceled {
            tokio::time::sleep(DELAY).await;
            return Err(A2AError::new(ErrorKind::Unavailable, "the store is down"));
        }
        let artifact = commit
            .entries
            .iter()
            .any(|e| matches!(e.change, Change::Event(a2a_native::model::StreamResponse::ArtifactUpdate(_))));
        if artifact && self.panic_on_artifact.swap(false, Ordering::AcqRel) {
            panic!("a store bug");
        }
        let message = commit.entries.iter().any(|e| matches!(e.change, Change::UserMessage(_)));
        if message && on(&self.slow_messages) {
            tokio::time::sleep(DELAY).await;
        }
        let outcome = self.inner.commit(tenant, commit).await;
        if message && on(&self.slow_after_messages) {
            tokio::time::sleep(DELAY).await;
        }
        outcome
    }
    async fn load(&self, tenant: &str, id: &str) -> Result<Option<Versioned>> {
        self.inner.load(tenant, id).await
    }
    async fn log_after(&self, tenant: &str, id: &str, after: u64, limit: usize) -> Result<LogPage> {
        self.inner.log_after(tenant, id, after, limit).await
    }
    async fn save(&self, tenant: &str, task: &Task) -> Result<()> {
        self.inner.save(tenant, task).await
    }
    async fn get(&self, tenant: &str, id: &str, history_length: Option<i32>) -> Result<Option<Task>> {
        self.inner.get(tenant, id, history_length).await
    }
    async fn delete(&self, tenant: &str, id: &str) -> Result<()> {
        self.inner.delete(tenant, id).await
    }
    fn moves(&self) -> Option<tokio::sync::broadcast::Receiver<Moved>> {
        self.inner.moves()
    }
    fn single_process(&self) -> bool {
        self.inner.single_process()
    }
    fn leases(&self) -> bool {
        self.inner.leases()
    }
    async fn renew_leases(&self, owner: &str, lease: Duration, tasks: &[(String, String)]) -> Result<()> {
        if self.leases_down.load(Ordering::SeqCst) {
            return Err(A2AError::new(ErrorKind::Unavailable, "the database is down"));
        }
        self.inner.renew_leases(owner, lease, tasks).await
    }
    async fn release_lease(&self, tenant: &str, id: &str, owner: &str) -> Result<()> {
        self.inner.release_lease(tenant, id, owner).await
    }
    async fn orphaned_tasks(&self, limit: usize) -> Result<Vec<(String, String)>> {
        if self.leases_down.load(Ordering::SeqCst) {
            return Err(A2AError::new(ErrorKind::Unavailable, "the database is down"));
        }
        self.inner.orphaned_tasks(limit).await
    }
    fn outbox(&self) -> bool {
        self.inner.outbox()
    }
    async fn claim_push(&self, claimer: &str, hold: Duration, limit: usize) -> Result<Vec<PushDue>> {
        self.inner.claim_push(claimer, hold, limit).await
    }
    async fn renew_push_claims(&self, claimer: &str, hold: Duration, ids: &[i64]) -> Result<()> {
        self.inner.renew_push_claims(claimer, hold, ids).await
    }
    async fn release_push_claims(&self, claimer: &str, ids: &[i64]) -> Result<()> {
        self.inner.release_push_claims(claimer, ids).await
    }
    fn outbox_queued(&self) -> Option<Arc<tokio::sync::Notify>> {
        self.inner.outbox_queued()
    }
    async fn finish_push(&self, id: i64) -> Result<()> {
        self.inner.finish_push(id).await
    }
    async fn active_tasks(&self, limit: usize) -> Result<Vec<(String, String)>> {
        self.inner.active_tasks(limit).await
    }
    async fn list(&self, tenant: &str, req: &ListTasksRequest) -> Result<ListTasksResponse> {
        self.inner.list(tenant, req).await
    }
}
