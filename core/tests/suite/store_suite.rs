//! One behaviour suite for every task store: each case runs once per store as its own test,
//! named `<store>::<case>`, so a failure names both.
//!
//! PostgreSQL runs against a real server: set `A2A_TEST_POSTGRES_URL` (`tests/pg.sh start`
//! prints it). Without it the PostgreSQL cases print a skip notice and pass, unless
//! `A2A_REQUIRE_POSTGRES=1` (CI), which makes a missing URL fail. Every case works under its own
//! random tenant prefix, so the cases can share one database and run in parallel.

use a2a_native::ErrorKind;
use a2a_native::model::{
    Artifact, ListTasksRequest, Message, Part, Role, Task, TaskPushNotificationConfig, TaskState, TaskStatus, Timestamp,
};
use a2a_native::store::{PushConfigStore, TaskStore};
use std::sync::Arc;

/// A store under test, seen only through the traits (which also proves they are object-safe).
struct Harness {
    tasks: Arc<dyn TaskStore>,
    push: Arc<dyn PushConfigStore>,
    prefix: String,
    cleanup: Option<Box<dyn FnOnce() + Send>>,
    #[cfg(feature = "postgres")]
    postgres: Option<a2a_native::store::PostgresStore>,
}

impl Harness {
    fn new<S: TaskStore + PushConfigStore + 'static>(store: S) -> Self {
        let store = Arc::new(store);
        Self {
            tasks: store.clone(),
            push: store,
            prefix: format!("t{}-", uuid::Uuid::new_v4().simple()),
            cleanup: None,
            #[cfg(feature = "postgres")]
            postgres: None,
        }
    }

    /// After a passing case: the shared PostgreSQL database keeps nothing of it (a failing
    /// case leaves its rows behind to look at).
    async fn finish(self) {
        #[cfg(feature = "postgres")]
        if let Some(store) = &self.postgres {
            let pattern = format!("{}%", self.prefix);
            for sql in [
                "DELETE FROM a2a_tasks WHERE tenant LIKE $1",
                "DELETE FROM a2a_push_configs WHERE tenant LIKE $1",
                "DELETE FROM a2a_events WHERE tenant LIKE $1",
            ] {
                sqlx::query(sql).bind(&pattern).execute(store.pool()).await.expect("clean up");
            }
        }
    }

    /// A tenant name private to this test.
    fn tenant(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(cleanup) = self.cleanup.take() {
            cleanup();
        }
    }
}

async fn memory() -> Option<Harness> {
    Some(Harness::new(a2a_native::store::MemoryStore::default()))
}

#[cfg(feature = "sqlite")]
async fn sqlite() -> Option<Harness> {
    // A real file: WAL and several pooled connections are what `a2a serve` runs on.
    let dir = tempfile::tempdir().expect("temp dir");
    let store = a2a_native::store::SqliteStore::open(&dir.path().join("tasks.db")).await.expect("open sqlite");
    let mut harness = Harness::new(store);
    harness.cleanup = Some(Box::new(move || drop(dir)));
    Some(harness)
}

#[cfg(feature = "postgres")]
async fn postgres() -> Option<Harness> {
    let url = match std::env::var("A2A_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => {
            if std::env::var("A2A_REQUIRE_POSTGRES").as_deref() == Ok("1") {
                panic!(
                    "A2A_REQUIRE_POSTGRES=1 but A2A_TEST_POSTGRES_URL is not set (run `eval \"$(tests/pg.sh start)\"`)"
                );
            }
            eprintln!(
                "\n**********\n** SKIPPED: PostgreSQL store test (A2A_TEST_POSTGRES_URL is not set; \
                 `eval \"$(tests/pg.sh start)\"` starts one)\n**********"
            );
            return None;
        }
    };
    let store = a2a_native::store::PostgresStore::connect(&url).await.expect("connect to PostgreSQL");
    let mut harness = Harness::new(store.clone());
    harness.postgres = Some(store);
    Some(harness)
}

macro_rules! suite {
    ($(#[$attr:meta])* $store:ident: $($case:ident),* $(,)?) => {
        $(#[$attr])*
        mod $store {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    if let Some(harness) = super::$store().await {
                        super::cases::$case(&harness).await;
                        harness.finish().await;
                    }
                }
            )*
        }
    };
}

macro_rules! every_store {
    ($($case:ident),* $(,)?) => {
        suite!(memory: $($case),*);
        suite!(#[cfg(feature = "sqlite")] sqlite: $($case),*);
        suite!(#[cfg(feature = "postgres")] postgres: $($case),*);
    };
}

every_store!(
    save_get_upsert,
    get_missing_is_none,
    tenant_isolation,
    history_trimming,
    list_empty_tenant,
    list_filter_context,
    list_filter_status,
    list_filter_timestamp_after,
    list_filters_combined,
    list_order_newest_first,
    list_pagination_is_complete_and_stable,
    list_pagination_with_filter,
    list_pagination_ignores_later_inserts,
    list_history_length,
    list_include_artifacts,
    list_bad_page_token,
    delete_task,
    concurrent_writers,
    push_create_assigns_id,
    push_create_replaces_existing_id,
    push_create_requires_task_id,
    push_configs_per_task_are_capped,
    push_list_creation_order_and_pages,
    push_list_bad_page_token,
    push_delete_is_idempotent,
    push_delete_all,
    push_tenant_isolation,
    log_commit_load_and_replay,
    log_unlogged_first_commit_keeps_the_body_only,
    log_tail_is_folded_on_read,
    log_version_conflicts_write_nothing,
    log_concurrent_commits_one_winner,
    log_goes_with_the_task,
);

/// Builders shared by the cases.
mod fixtures {
    use super::*;

    const BASE_MS: i64 = 1_760_000_000_000;

    pub fn at(ms: i64) -> Timestamp {
        chrono::DateTime::from_timestamp_millis(BASE_MS + ms).expect("valid timestamp")
    }

    pub fn task(id: &str, context: &str, state: TaskState, ts: Option<i64>) -> Task {
        Task {
            id: id.into(),
            context_id: context.into(),
            status: TaskStatus { state, message: None, timestamp: ts.map(at) },
            artifacts: vec![],
            history: vec![],
            metadata: None,
        }
    }

    pub fn working(id: &str, ts: i64) -> Task {
        task(id, "ctx", TaskState::Working, Some(ts))
    }

    pub fn message(text: &str) -> Message {
        Message::text(Role::User, text)
    }

    pub fn artifact(id: &str) -> Artifact {
        Artifact {
            artifact_id: id.into(),
            name: format!("name of {id}"),
            description: String::new(),
            parts: vec![
                Part::text(format!("content of {id}")),
                Part::data(serde_json::json!({"n": -0.0, "s": "\u{0}"})),
            ],
            metadata: None,
            extensions: vec![],
        }
    }

    /// A task using every field, to prove the store gives back exactly what it was given.
    pub fn rich(id: &str) -> Task {
        let mut t = task(id, "ctx-rich", TaskState::InputRequired, Some(7));
        t.status.message = Some(message("what next?"));
        // Sub-millisecond digits must survive even though listing sorts on milliseconds.
        t.status.timestamp = Some(at(7) + chrono::Duration::nanoseconds(123_456));
        t.history = (0..5).map(|i| message(&format!("m{i}"))).collect();
        t.artifacts = vec![artifact("a1"), artifact("a2")];
        let mut meta = serde_json::Map::new();
        meta.insert("k".into(), serde_json::json!({"nested": [1, 2.5, "x", null, true]}));
        t.metadata = Some(meta);
        t
    }

    pub fn ids(tasks: &[Task]) -> Vec<String> {
        tasks.iter().map(|t| t.id.clone()).collect()
    }

    pub fn list_req() -> ListTasksRequest {
        ListTasksRequest::default()
    }

    pub fn config(task_id: &str, id: &str, url: &str) -> TaskPushNotificationConfig {
        TaskPushNotificationConfig { task_id: task_id.into(), id: id.into(), url: url.into(), ..Default::default() }
    }
}

mod cases {
    use super::fixtures::*;
    use super::*;
    use a2a_native::model::{StreamResponse, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
    use a2a_native::store::log::apply;
    use a2a_native::store::{Change, Commit, CommitOutcome, LogEntry};

    fn status(id: &str, state: TaskState) -> Change {
        Change::Event(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: id.into(),
            context_id: "ctx".into(),
            status: TaskStatus { state, message: Some(message(&format!("now {state}"))), timestamp: Some(at(50)) },
            metadata: None,
        }))
    }

    fn chunk(id: &str, n: usize) -> Change {
        let mut a = artifact("out");
        a.parts = vec![Part::text(format!("chunk {n}"))];
        Change::Event(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: id.into(),
            context_id: "ctx".into(),
            artifact: a,
            append: n > 0,
            last_chunk: false,
            metadata: None,
        }))
    }

    /// Applies `changes` after version `from` to `task`, as a writer does, and the entries to commit.
    fn advance(task: &mut Option<Task>, from: u64, changes: Vec<Change>) -> Vec<LogEntry> {
        changes
            .into_iter()
            .enumerate()
            .map(|(i, change)| {
                apply(task, &change);
                LogEntry { seq: from + 1 + i as u64, change }
            })
            .collect()
    }

    async fn commit(
        h: &Harness,
        tenant: &str,
        task: &Task,
        expected: u64,
        entries: &[LogEntry],
        snapshot: bool,
    ) -> CommitOutcome {
        commit_logged(h, tenant, task, expected, entries, snapshot, true).await
    }

    async fn commit_logged(
        h: &Harness,
        tenant: &str,
        task: &Task,
        expected: u64,
        entries: &[LogEntry],
        snapshot: bool,
        log: bool,
    ) -> CommitOutcome {
        h.tasks
            .commit(
                tenant,
                Commit {
                    task,
                    expected,
                    entries,
                    snapshot,
                    owner: None,
                    writer: None,
                    orphaned_only: false,
                    push: false,
                    trace: None,
                    log,
                },
            )
            .await
            .unwrap()
    }

    /// `Commit::log` false (a blocking send's task that ends in its first commit): the body and
    /// version are stored and the log holds nothing, so a replay from the start sees a gap and
    /// takes the snapshot. Later logged commits are logged as usual.
    pub async fn log_unlogged_first_commit_keeps_the_body_only(h: &Harness) {
        let tenant = h.tenant("a");
        let mut task = None;
        let first = advance(
            &mut task,
            0,
            vec![
                Change::Event(StreamResponse::Task(working("t", 1))),
                chunk("t", 0),
                status("t", TaskState::Completed),
            ],
        );
        let t = task.clone().unwrap();
        assert_eq!(commit_logged(h, &tenant, &t, 0, &first, false, false).await, CommitOutcome::Committed);
        let loaded = h.tasks.load(&tenant, "t").await.unwrap().unwrap();
        assert_eq!((loaded.version, &loaded.task), (3, &t));
        let page = h.tasks.log_after(&tenant, "t", 0, 100).await.unwrap();
        assert!(page.entries.is_empty(), "{page:?}");
        assert!(h.tasks.log_after(&tenant, "t", 3, 100).await.unwrap().complete);

        let more = advance(&mut task, 3, vec![chunk("t", 1)]);
        let t = task.clone().unwrap();
        assert_eq!(commit(h, &tenant, &t, 3, &more, false).await, CommitOutcome::Committed);
        let tail = h.tasks.log_after(&tenant, "t", 3, 100).await.unwrap();
        assert_eq!(tail.entries.iter().map(|e| e.seq).collect::<Vec<_>>(), [4]);
        assert!(tail.complete);
        assert_eq!(h.tasks.load(&tenant, "t").await.unwrap().unwrap().task, t);
    }

    pub async fn log_commit_load_and_replay(h: &Harness) {
        let tenant = h.tenant("a");
        let mut task = None;
        let first = advance(
            &mut task,
            0,
            vec![Change::Event(StreamResponse::Task(working("t", 1))), status("t", TaskState::Working), chunk("t", 0)],
        );
        let t = task.clone().unwrap();
        assert_eq!(commit(h, &tenant, &t, 0, &first, false).await, CommitOutcome::Committed);
        let loaded = h.tasks.load(&tenant, "t").await.unwrap().unwrap();
        assert_eq!((loaded.version, &loaded.task), (3, &t));

        // More changes without a body: the store folds them on read.
        let more = advance(&mut task, 3, vec![chunk("t", 1), Change::UserMessage(message("more")), chunk("t", 2)]);
        let t = task.clone().unwrap();
        assert_eq!(commit(h, &tenant, &t, 3, &more, false).await, CommitOutcome::Committed);
        let loaded = h.tasks.load(&tenant, "t").await.unwrap().unwrap();
        assert_eq!((loaded.version, &loaded.task), (6, &t));
        assert_eq!(loaded.task.artifacts[0].parts.len(), 3, "appended chunks");
        assert_eq!(h.tasks.get(&tenant, "t", None).await.unwrap(), Some(t.clone()));
        let listed =
            h.tasks.list(&tenant, &ListTasksRequest { include_artifacts: Some(true), ..list_req() }).await.unwrap();
        assert_eq!(listed.tasks, vec![t.clone()]);

        let all = h.tasks.log_after(&tenant, "t", 0, 100).await.unwrap();
        assert!(all.complete);
        let expected: Vec<LogEntry> = first.iter().chain(more.iter()).cloned().collect();
        assert_eq!(all.entries, expected, "the log is every change, in order");
        let tail = h.tasks.log_after(&tenant, "t", 4, 100).await.unwrap();
        assert_eq!(tail.entries.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![5, 6]);
        let page = h.tasks.log_after(&tenant, "t", 1, 2).await.unwrap();
        assert_eq!(page.entries.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![2, 3], "limit");
        assert!(h.tasks.log_after(&tenant, "t", 6, 100).await.unwrap().entries.is_empty());
        assert!(h.tasks.log_after(&tenant, "missing", 0, 100).await.unwrap().entries.is_empty());
        assert!(h.tasks.log_after(&h.tenant("b"), "t", 0, 100).await.unwrap().entries.is_empty(), "tenants apart");
    }

    pub async fn log_tail_is_folded_on_read(h: &Harness) {
        let tenant = h.tenant("a");
        let mut task = None;
        let created = advance(&mut task, 0, vec![Change::Event(StreamResponse::Task(working("long", 1)))]);
        commit(h, &tenant, &task.clone().unwrap(), 0, &created, true).await;
        // 300 chunks, one commit each, a body only now and then: what a writer's policy does.
        let mut policy = a2a_native::store::log::SnapshotPolicy::default();
        for (version, n) in (1..).zip(0..300) {
            let entries = advance(&mut task, version, vec![chunk("long", n)]);
            let t = task.clone().unwrap();
            let snapshot = policy.wants_snapshot(&t, false, 1);
            assert_eq!(commit(h, &tenant, &t, version, &entries, snapshot).await, CommitOutcome::Committed);
            policy.record(snapshot, 1);
        }
        let t = task.unwrap();
        assert_eq!(t.artifacts[0].parts.len(), 300);
        assert_eq!(h.tasks.get(&tenant, "long", None).await.unwrap(), Some(t.clone()));
        let req = ListTasksRequest { include_artifacts: Some(true), ..list_req() };
        assert_eq!(h.tasks.list(&tenant, &req).await.unwrap().tasks, vec![t]);
    }

    pub async fn log_version_conflicts_write_nothing(h: &Harness) {
        let tenant = h.tenant("a");
        let mut task = None;
        let created = advance(&mut task, 0, vec![Change::Event(StreamResponse::Task(working("t", 1)))]);
        let t1 = task.clone().unwrap();
        assert_eq!(commit(h, &tenant, &t1, 0, &created, true).await, CommitOutcome::Committed);
        // Creating it again: the task exists.
        assert_eq!(commit(h, &tenant, &t1, 0, &created, true).await, CommitOutcome::Conflict);
        let next = advance(&mut task, 1, vec![status("t", TaskState::Completed)]);
        let t2 = task.clone().unwrap();
        assert_eq!(commit(h, &tenant, &t2, 1, &next, false).await, CommitOutcome::Committed);
        // A writer still at version 1 (a zombie, a racing instance) is refused, and writes nothing.
        let mut stale = Some(t1.clone());
        let late = advance(&mut stale, 1, vec![status("t", TaskState::Failed), chunk("t", 0)]);
        for snapshot in [false, true] {
            assert_eq!(commit(h, &tenant, &stale.clone().unwrap(), 1, &late, snapshot).await, CommitOutcome::Conflict);
        }
        let loaded = h.tasks.load(&tenant, "t").await.unwrap().unwrap();
        assert_eq!((loaded.version, loaded.task), (2, t2));
        assert_eq!(h.tasks.log_after(&tenant, "t", 0, 100).await.unwrap().entries.len(), 2);
        // A version from the future, and a task that does not exist.
        assert_eq!(commit(h, &tenant, &stale.clone().unwrap(), 7, &late, false).await, CommitOutcome::Conflict);
        assert_eq!(commit(h, &h.tenant("b"), &stale.unwrap(), 1, &late, false).await, CommitOutcome::Conflict);
        assert_eq!(h.tasks.get(&h.tenant("b"), "t", None).await.unwrap(), None);
    }

    pub async fn log_concurrent_commits_one_winner(h: &Harness) {
        let tenant = h.tenant("a");
        let mut task = None;
        let created = advance(&mut task, 0, vec![Change::Event(StreamResponse::Task(working("t", 1)))]);
        commit(h, &tenant, &task.clone().unwrap(), 0, &created, true).await;
        let mut writers = tokio::task::JoinSet::new();
        for w in 0..8 {
            let (store, tenant, mut mine) = (h.tasks.clone(), tenant.clone(), task.clone());
            writers.spawn(async move {
                let entries = advance(&mut mine, 1, vec![status("t", TaskState::Working), chunk("t", w)]);
                let t = mine.unwrap();
                let outcome = store.commit(&tenant, Commit { snapshot: w % 2 == 0, ..Commit::logged(&t, 1, &entries) });
                (outcome.await.unwrap(), t)
            });
        }
        let mut winners = Vec::new();
        while let Some(done) = writers.join_next().await {
            let (outcome, t) = done.unwrap();
            if outcome == CommitOutcome::Committed {
                winners.push(t);
            }
        }
        assert_eq!(winners.len(), 1, "exactly one writer moves a task from one version");
        let loaded = h.tasks.load(&tenant, "t").await.unwrap().unwrap();
        assert_eq!((loaded.version, &loaded.task), (3, &winners[0]));
        assert_eq!(h.tasks.log_after(&tenant, "t", 0, 100).await.unwrap().entries.len(), 3);
    }

    pub async fn log_goes_with_the_task(h: &Harness) {
        let tenant = h.tenant("a");
        let mut task = None;
        let entries = advance(&mut task, 0, vec![Change::Event(StreamResponse::Task(working("t", 1))), chunk("t", 0)]);
        commit(h, &tenant, &task.clone().unwrap(), 0, &entries, true).await;
        h.tasks.delete(&tenant, "t").await.unwrap();
        assert!(h.tasks.log_after(&tenant, "t", 0, 100).await.unwrap().entries.is_empty());
        assert_eq!(h.tasks.load(&tenant, "t").await.unwrap(), None);
        // A new task under the same id starts a new log.
        assert_eq!(commit(h, &tenant, &task.unwrap(), 0, &entries, true).await, CommitOutcome::Committed);
        assert_eq!(h.tasks.log_after(&tenant, "t", 0, 100).await.unwrap().entries, entries);
    }
    use a2a_native::model::AuthenticationInfo;
    use std::collections::HashSet;

    pub async fn save_get_upsert(h: &Harness) {
        let tenant = h.tenant("a");
        let original = rich("task-1");
        h.tasks.save(&tenant, &original).await.unwrap();
        assert_eq!(h.tasks.get(&tenant, "task-1", None).await.unwrap(), Some(original.clone()));

        let mut updated = original.clone();
        updated.status = TaskStatus { state: TaskState::Completed, message: None, timestamp: Some(at(9)) };
        updated.artifacts.push(artifact("a3"));
        updated.history.push(message("done"));
        updated.context_id = "ctx-other".into();
        h.tasks.save(&tenant, &updated).await.unwrap();
        assert_eq!(h.tasks.get(&tenant, "task-1", None).await.unwrap(), Some(updated.clone()));

        // Upsert replaced the row: one task, listed with its new state and context.
        let listed = h.tasks.list(&tenant, &list_req()).await.unwrap();
        assert_eq!((listed.total_size, ids(&listed.tasks)), (1, vec!["task-1".to_owned()]));
        let by_state = ListTasksRequest { status: Some(TaskState::Completed), ..list_req() };
        assert_eq!(h.tasks.list(&tenant, &by_state).await.unwrap().total_size, 1);
        let old_state = ListTasksRequest { status: Some(TaskState::InputRequired), ..list_req() };
        assert_eq!(h.tasks.list(&tenant, &old_state).await.unwrap().total_size, 0);
        let old_context = ListTasksRequest { context_id: "ctx-rich".into(), ..list_req() };
        assert_eq!(h.tasks.list(&tenant, &old_context).await.unwrap().total_size, 0);
    }

    pub async fn get_missing_is_none(h: &Harness) {
        let tenant = h.tenant("a");
        assert_eq!(h.tasks.get(&tenant, "nope", None).await.unwrap(), None);
        h.tasks.save(&tenant, &working("x", 1)).await.unwrap();
        assert_eq!(h.tasks.get(&tenant, "X", None).await.unwrap(), None, "ids are case-sensitive");
        assert_eq!(h.tasks.get(&tenant, "x ", Some(3)).await.unwrap(), None);
    }

    pub async fn tenant_isolation(h: &Harness) {
        let (a, b) = (h.tenant("a"), h.tenant("b"));
        let in_a = task("same-id", "ctx-a", TaskState::Working, Some(1));
        let in_b = task("same-id", "ctx-b", TaskState::Completed, Some(2));
        h.tasks.save(&a, &in_a).await.unwrap();
        h.tasks.save(&b, &in_b).await.unwrap();
        h.tasks.save(&b, &working("only-b", 3)).await.unwrap();
        assert_eq!(h.tasks.get(&a, "same-id", None).await.unwrap(), Some(in_a.clone()));
        assert_eq!(h.tasks.get(&b, "same-id", None).await.unwrap(), Some(in_b.clone()));
        assert_eq!(h.tasks.get(&a, "only-b", None).await.unwrap(), None);
        assert_eq!(h.tasks.get(&h.tenant(""), "same-id", None).await.unwrap(), None);

        let listed_a = h.tasks.list(&a, &list_req()).await.unwrap();
        assert_eq!((listed_a.total_size, ids(&listed_a.tasks)), (1, vec!["same-id".to_owned()]));
        assert_eq!(listed_a.tasks[0].context_id, "ctx-a");
        assert_eq!(h.tasks.list(&b, &list_req()).await.unwrap().total_size, 2);

        h.tasks.delete(&a, "same-id").await.unwrap();
        assert_eq!(h.tasks.get(&a, "same-id", None).await.unwrap(), None);
        assert_eq!(h.tasks.get(&b, "same-id", None).await.unwrap(), Some(in_b));
    }

    pub async fn history_trimming(h: &Harness) {
        let tenant = h.tenant("a");
        let t = rich("t");
        h.tasks.save(&tenant, &t).await.unwrap();
        let texts = |task: &Task| task.history.iter().map(Message::text_content).collect::<Vec<_>>();
        let all = h.tasks.get(&tenant, "t", None).await.unwrap().unwrap();
        assert_eq!(texts(&all), ["m0", "m1", "m2", "m3", "m4"]);
        let none = h.tasks.get(&tenant, "t", Some(0)).await.unwrap().unwrap();
        assert!(none.history.is_empty());
        assert!(serde_json::to_value(&none).unwrap().get("history").is_none(), "history key absent");
        assert_eq!(none.artifacts, t.artifacts, "trimming history leaves the rest alone");
        let two = h.tasks.get(&tenant, "t", Some(2)).await.unwrap().unwrap();
        assert_eq!(texts(&two), ["m3", "m4"]);
        let more = h.tasks.get(&tenant, "t", Some(50)).await.unwrap().unwrap();
        assert_eq!(texts(&more).len(), 5);
        // Trimming is per read: the stored task keeps its whole history.
        assert_eq!(h.tasks.get(&tenant, "t", None).await.unwrap().unwrap(), t);
    }

    pub async fn list_empty_tenant(h: &Harness) {
        let listed = h.tasks.list(&h.tenant("nobody"), &list_req()).await.unwrap();
        assert!(listed.tasks.is_empty());
        // pageSize is the page size used (the default 50), as a2a-sdk and @a2a-js/sdk answer.
        assert_eq!((listed.next_page_token.as_str(), listed.page_size, listed.total_size), ("", 50, 0));
        let json = serde_json::to_value(&listed).unwrap();
        assert_eq!(json, serde_json::json!({"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}));
    }

    pub async fn list_filter_context(h: &Harness) {
        let tenant = h.tenant("a");
        for (i, ctx) in ["c1", "c2", "c1", "c3", "c1"].iter().enumerate() {
            h.tasks.save(&tenant, &task(&format!("t{i}"), ctx, TaskState::Working, Some(i as i64))).await.unwrap();
        }
        let req = ListTasksRequest { context_id: "c1".into(), ..list_req() };
        let listed = h.tasks.list(&tenant, &req).await.unwrap();
        assert_eq!(ids(&listed.tasks), ["t4", "t2", "t0"]);
        assert_eq!(listed.total_size, 3);
        let req = ListTasksRequest { context_id: "c9".into(), ..list_req() };
        assert_eq!(h.tasks.list(&tenant, &req).await.unwrap().total_size, 0);
    }

    pub async fn list_filter_status(h: &Harness) {
        let tenant = h.tenant("a");
        let states =
            [TaskState::Working, TaskState::Completed, TaskState::Working, TaskState::Failed, TaskState::Completed];
        for (i, state) in states.iter().enumerate() {
            h.tasks.save(&tenant, &task(&format!("t{i}"), "c", *state, Some(i as i64))).await.unwrap();
        }
        let req = ListTasksRequest { status: Some(TaskState::Completed), ..list_req() };
        let listed = h.tasks.list(&tenant, &req).await.unwrap();
        assert_eq!((ids(&listed.tasks), listed.total_size), (vec!["t4".to_owned(), "t1".to_owned()], 2));
        assert!(listed.tasks.iter().all(|t| t.status.state == TaskState::Completed));
        let req = ListTasksRequest { status: Some(TaskState::Canceled), ..list_req() };
        assert_eq!(h.tasks.list(&tenant, &req).await.unwrap().total_size, 0);
    }

    pub async fn list_filter_timestamp_after(h: &Harness) {
        let tenant = h.tenant("a");
        for i in 0..6 {
            h.tasks.save(&tenant, &working(&format!("t{i}"), i * 1000)).await.unwrap();
        }
        h.tasks.save(&tenant, &task("no-ts", "ctx", TaskState::Working, None)).await.unwrap();
        // Inclusive: a task stamped exactly at the bound is kept.
        let req = ListTasksRequest { status_timestamp_after: Some(at(3000)), ..list_req() };
        let listed = h.tasks.list(&tenant, &req).await.unwrap();
        assert_eq!((ids(&listed.tasks), listed.total_size), (vec!["t5".into(), "t4".into(), "t3".into()], 3));
        let req = ListTasksRequest { status_timestamp_after: Some(at(2999)), ..list_req() };
        assert_eq!(h.tasks.list(&tenant, &req).await.unwrap().total_size, 3);
        let req = ListTasksRequest { status_timestamp_after: Some(at(3001)), ..list_req() };
        assert_eq!(h.tasks.list(&tenant, &req).await.unwrap().total_size, 2);
        let req = ListTasksRequest { status_timestamp_after: Some(at(-1_000_000)), ..list_req() };
        assert_eq!(h.tasks.list(&tenant, &req).await.unwrap().total_size, 6, "tasks without a timestamp never match");
        let req = ListTasksRequest { status_timestamp_after: Some(at(10_000)), ..list_req() };
        let listed = h.tasks.list(&tenant, &req).await.unwrap();
        assert_eq!((listed.tasks.len(), listed.total_size, listed.next_page_token.as_str()), (0, 0, ""));
    }

    pub async fn list_filters_combined(h: &Harness) {
        let tenant = h.tenant("a");
        let rows = [
            ("t0", "c1", TaskState::Working, 0),
            ("t1", "c1", TaskState::Completed, 10),
            ("t2", "c2", TaskState::Completed, 20),
            ("t3", "c1", TaskState::Completed, 30),
            ("t4", "c1", TaskState::Completed, 40),
        ];
        for (id, ctx, state, ts) in rows {
            h.tasks.save(&tenant, &task(id, ctx, state, Some(ts))).await.unwrap();
        }
        let req = ListTasksRequest {
            context_id: "c1".into(),
            status: Some(TaskState::Completed),
            status_timestamp_after: Some(at(15)),
            ..list_req()
        };
        let listed = h.tasks.list(&tenant, &req).await.unwrap();
        assert_eq!((ids(&listed.tasks), listed.total_size), (vec!["t4".into(), "t3".into()], 2));
    }

    pub async fn list_order_newest_first(h: &Harness) {
        let tenant = h.tenant("a");
        // Saved in a scrambled order; equal timestamps tie-break by id, descending.
        for t in [
            working("a", 10),
            task("e", "ctx", TaskState::Working, None),
            working("b", 30),
            working("c", 20),
            task("f", "ctx", TaskState::Submitted, None),
            working("d", 30),
        ] {
            h.tasks.save(&tenant, &t).await.unwrap();
        }
        let listed = h.tasks.list(&tenant, &list_req()).await.unwrap();
        assert_eq!(ids(&listed.tasks), ["d", "b", "c", "a", "f", "e"]);
        // A status update moves a task to the front.
        h.tasks.save(&tenant, &working("a", 99)).await.unwrap();
        let listed = h.tasks.list(&tenant, &list_req()).await.unwrap();
        assert_eq!(ids(&listed.tasks), ["a", "d", "b", "c", "f", "e"]);
        assert_eq!(listed.total_size, 6);
    }

    /// The order the spec asks for, computed independently of any store.
    fn expected_order(tasks: &[Task]) -> Vec<String> {
        let mut sorted: Vec<&Task> = tasks.iter().collect();
        sorted.sort_by(|x, y| {
            let key = |t: &Task| t.status.timestamp.map(|ts| ts.timestamp_millis());
            // None < Some, so descending puts tasks without a timestamp last.
            key(y).cmp(&key(x)).then_with(|| y.id.cmp(&x.id))
        });
        sorted.into_iter().map(|t| t.id.clone()).collect()
    }

    async fn walk(h: &Harness, tenant: &str, base: ListTasksRequest) -> (Vec<usize>, Vec<String>) {
        let mut sizes = Vec::new();
        let mut seen = Vec::new();
        let mut req = base.clone();
        let expected_total = h.tasks.list(tenant, &base).await.unwrap().total_size;
        for _ in 0..100 {
            let page = h.tasks.list(tenant, &req).await.unwrap();
            // pageSize is the page size used (the proto's words; the official SDKs answer so),
            // not how many tasks this page holds.
            assert_eq!(page.page_size as usize, base.effective_page_size());
            assert!(page.tasks.len() <= base.effective_page_size());
            assert_eq!(page.total_size, expected_total, "totalSize counts every page, on every page");
            sizes.push(page.tasks.len());
            seen.extend(ids(&page.tasks));
            if page.next_page_token.is_empty() {
                return (sizes, seen);
            }
            req.page_token = page.next_page_token;
        }
        panic!("pagination did not end");
    }

    pub async fn list_pagination_is_complete_and_stable(h: &Harness) {
        let tenant = h.tenant("a");
        let mut all = Vec::new();
        for i in 0..23 {
            // Groups of three share a timestamp; two tasks have none.
            let ts = if i % 11 == 5 { None } else { Some((i / 3) as i64) };
            let t = task(&format!("task-{:02}", (i * 7) % 23), "ctx", TaskState::Working, ts);
            h.tasks.save(&tenant, &t).await.unwrap();
            all.push(t);
        }
        let req = ListTasksRequest { page_size: Some(5), ..list_req() };
        let (sizes, seen) = walk(h, &tenant, req).await;
        assert_eq!(sizes, [5, 5, 5, 5, 3]);
        let unique: HashSet<&String> = seen.iter().collect();
        assert_eq!(unique.len(), 23, "no duplicates, nothing missing");
        assert_eq!(seen, expected_order(&all));
        // One page of everything gives the same order.
        let one = h.tasks.list(&tenant, &ListTasksRequest { page_size: Some(100), ..list_req() }).await.unwrap();
        assert_eq!((ids(&one.tasks), one.next_page_token.as_str()), (seen.clone(), ""));
        // Exactly filled last page: no dangling empty page.
        let req = ListTasksRequest { page_size: Some(23), ..list_req() };
        let first = h.tasks.list(&tenant, &req).await.unwrap();
        assert_eq!((first.tasks.len(), first.next_page_token.as_str()), (23, ""));
        let (sizes, _) = walk(h, &tenant, ListTasksRequest { page_size: Some(1), ..list_req() }).await;
        assert_eq!(sizes.len(), 23);
    }

    pub async fn list_pagination_with_filter(h: &Harness) {
        let tenant = h.tenant("a");
        let mut completed = Vec::new();
        for i in 0..15 {
            let state = if i % 3 == 0 { TaskState::Working } else { TaskState::Completed };
            let t = task(&format!("t{i:02}"), "ctx", state, Some((i % 4) as i64));
            h.tasks.save(&tenant, &t).await.unwrap();
            if state == TaskState::Completed {
                completed.push(t);
            }
        }
        let req = ListTasksRequest { status: Some(TaskState::Completed), page_size: Some(4), ..list_req() };
        let (sizes, seen) = walk(h, &tenant, req).await;
        assert_eq!(sizes, [4, 4, 2]);
        assert_eq!(seen, expected_order(&completed));
    }

    pub async fn list_pagination_ignores_later_inserts(h: &Harness) {
        let tenant = h.tenant("a");
        for i in 0..6 {
            h.tasks.save(&tenant, &working(&format!("t{i}"), i * 10)).await.unwrap();
        }
        let first = h.tasks.list(&tenant, &ListTasksRequest { page_size: Some(3), ..list_req() }).await.unwrap();
        assert_eq!(ids(&first.tasks), ["t5", "t4", "t3"]);
        // A newer task and the removal of an already listed one do not shift the next page.
        h.tasks.save(&tenant, &working("newest", 1000)).await.unwrap();
        h.tasks.delete(&tenant, "t3").await.unwrap();
        let req = ListTasksRequest { page_size: Some(3), page_token: first.next_page_token, ..list_req() };
        let second = h.tasks.list(&tenant, &req).await.unwrap();
        assert_eq!(
            (ids(&second.tasks), second.next_page_token.as_str()),
            (vec!["t2".into(), "t1".into(), "t0".into()], "")
        );
    }

    pub async fn list_history_length(h: &Harness) {
        let tenant = h.tenant("a");
        h.tasks.save(&tenant, &rich("r")).await.unwrap();
        let listed = h.tasks.list(&tenant, &list_req()).await.unwrap();
        assert_eq!(listed.tasks[0].history.len(), 5);
        let req = ListTasksRequest { history_length: Some(1), ..list_req() };
        let listed = h.tasks.list(&tenant, &req).await.unwrap();
        assert_eq!(listed.tasks[0].history.iter().map(Message::text_content).collect::<Vec<_>>(), ["m4"]);
        let req = ListTasksRequest { history_length: Some(0), ..list_req() };
        let listed = h.tasks.list(&tenant, &req).await.unwrap();
        assert!(serde_json::to_value(&listed.tasks[0]).unwrap().get("history").is_none());
    }

    pub async fn list_include_artifacts(h: &Harness) {
        let tenant = h.tenant("a");
        let t = rich("r");
        h.tasks.save(&tenant, &t).await.unwrap();
        for include in [None, Some(false)] {
            let req = ListTasksRequest { include_artifacts: include, ..list_req() };
            let listed = h.tasks.list(&tenant, &req).await.unwrap();
            let json = serde_json::to_value(&listed).unwrap();
            assert!(json["tasks"][0].get("artifacts").is_none(), "artifacts key must be absent: {json}");
            assert_eq!(listed.tasks[0].history, t.history, "only artifacts are left out");
        }
        let req = ListTasksRequest { include_artifacts: Some(true), ..list_req() };
        let listed = h.tasks.list(&tenant, &req).await.unwrap();
        assert_eq!(listed.tasks, vec![t.clone()]);
        // GetTask always has them, and the stored task was not changed by listing.
        assert_eq!(h.tasks.get(&tenant, "r", None).await.unwrap().unwrap().artifacts, t.artifacts);
    }

    pub async fn list_bad_page_token(h: &Harness) {
        let tenant = h.tenant("a");
        h.tasks.save(&tenant, &working("t", 1)).await.unwrap();
        for token in ["not a token", "%%%", "bm9wZQ", "MTIzOg==x"] {
            let req = ListTasksRequest { page_token: token.into(), ..list_req() };
            let err = h.tasks.list(&tenant, &req).await.unwrap_err();
            assert_eq!(err.kind, ErrorKind::InvalidParams, "{token}");
            assert_eq!(err.violations[0].field, "pageToken");
        }
    }

    pub async fn delete_task(h: &Harness) {
        let tenant = h.tenant("a");
        h.tasks.save(&tenant, &working("gone", 1)).await.unwrap();
        h.tasks.save(&tenant, &working("kept", 2)).await.unwrap();
        h.tasks.delete(&tenant, "gone").await.unwrap();
        assert_eq!(h.tasks.get(&tenant, "gone", None).await.unwrap(), None);
        h.tasks.delete(&tenant, "gone").await.unwrap();
        h.tasks.delete(&h.tenant("other"), "kept").await.unwrap();
        let listed = h.tasks.list(&tenant, &list_req()).await.unwrap();
        assert_eq!((ids(&listed.tasks), listed.total_size), (vec!["kept".to_owned()], 1));
        // A deleted id can be used again.
        h.tasks.save(&tenant, &working("gone", 3)).await.unwrap();
        assert!(h.tasks.get(&tenant, "gone", None).await.unwrap().is_some());
    }

    pub async fn concurrent_writers(h: &Harness) {
        let tenant = h.tenant("a");
        let mut writers = tokio::task::JoinSet::new();
        for w in 0..8 {
            let (store, tenant) = (h.tasks.clone(), tenant.clone());
            writers.spawn(async move {
                for i in 0..10 {
                    store.save(&tenant, &working(&format!("w{w}-{i}"), i)).await.unwrap();
                    // Everyone also updates one shared task: last writer wins, nobody fails.
                    store.save(&tenant, &working("shared", w * 100 + i)).await.unwrap();
                }
            });
        }
        while let Some(done) = writers.join_next().await {
            done.unwrap();
        }
        let listed = h.tasks.list(&tenant, &ListTasksRequest { page_size: Some(100), ..list_req() }).await.unwrap();
        assert_eq!(listed.total_size, 81);
        assert_eq!(listed.tasks.len(), 81);
    }

    pub async fn push_create_assigns_id(h: &Harness) {
        let tenant = h.tenant("a");
        let mut request = config("task-1", "", "https://example.com/hook");
        request.token = "secret".into();
        request.authentication = Some(AuthenticationInfo { scheme: "Bearer".into(), credentials: "abc".into() });
        let created = h.push.create(&tenant, request.clone()).await.unwrap();
        assert!(!created.id.is_empty(), "an id is assigned");
        assert_eq!((created.tenant.as_str(), created.task_id.as_str()), (tenant.as_str(), "task-1"));
        assert_eq!(created.authentication, request.authentication);
        assert_eq!(created.token, "secret");
        let second = h.push.create(&tenant, config("task-1", "", "https://example.com/other")).await.unwrap();
        assert_ne!(second.id, created.id, "each create gets a fresh id");
        assert_eq!(h.push.get(&tenant, "task-1", &created.id).await.unwrap(), Some(created.clone()));
        assert_eq!(h.push.get(&tenant, "task-1", "missing").await.unwrap(), None);
        assert_eq!(h.push.get(&tenant, "task-2", &created.id).await.unwrap(), None, "scoped to its task");
        let explicit = h.push.create(&tenant, config("task-1", "mine", "https://example.com/3")).await.unwrap();
        assert_eq!(explicit.id, "mine");
    }

    pub async fn push_create_replaces_existing_id(h: &Harness) {
        let tenant = h.tenant("a");
        for id in ["c1", "c2", "c3"] {
            h.push.create(&tenant, config("t", id, &format!("https://example.com/{id}"))).await.unwrap();
        }
        let replaced = h.push.create(&tenant, config("t", "c2", "https://example.com/new")).await.unwrap();
        assert_eq!(h.push.get(&tenant, "t", "c2").await.unwrap(), Some(replaced));
        let listed = h.push.list(&tenant, "t", 0, "").await.unwrap();
        let urls: Vec<&str> = listed.configs.iter().map(|c| c.url.as_str()).collect();
        assert_eq!(urls, ["https://example.com/c1", "https://example.com/new", "https://example.com/c3"]);
    }

    /// One task has at most MAX_PUSH_CONFIGS_PER_TASK configs, in every store: the next new one
    /// is refused for good (InvalidRequest), a replacement still goes through, and another task
    /// is not affected.
    pub async fn push_configs_per_task_are_capped(h: &Harness) {
        let tenant = h.tenant("a");
        let limit = a2a_native::store::MAX_PUSH_CONFIGS_PER_TASK;
        for n in 0..limit {
            h.push.create(&tenant, config("t", &format!("c{n}"), "https://example.com/")).await.unwrap();
        }
        let refused = h.push.create(&tenant, config("t", "one-more", "https://example.com/")).await.unwrap_err();
        assert_eq!(refused.kind, ErrorKind::InvalidRequest, "{refused:?}");
        assert!(refused.message.contains("delete one first"), "{}", refused.message);
        assert!(h.push.get(&tenant, "t", "one-more").await.unwrap().is_none());
        h.push.create(&tenant, config("t", "c7", "https://example.com/replaced")).await.unwrap();
        assert_eq!(h.push.get(&tenant, "t", "c7").await.unwrap().unwrap().url, "https://example.com/replaced");
        h.push.create(&tenant, config("other", "c0", "https://example.com/")).await.unwrap();
        h.push.delete(&tenant, "t", "c0").await.unwrap();
        h.push.create(&tenant, config("t", "one-more", "https://example.com/")).await.unwrap();
    }

    pub async fn push_create_requires_task_id(h: &Harness) {
        let err = h.push.create(&h.tenant("a"), config("", "", "https://example.com/")).await.unwrap_err();
        assert_eq!((err.kind, err.violations[0].field.as_str()), (ErrorKind::InvalidParams, "taskId"));
    }

    pub async fn push_list_creation_order_and_pages(h: &Harness) {
        let tenant = h.tenant("a");
        // Ids in an order unrelated to creation order.
        let created: Vec<String> = ["z", "a", "m", "b", "y", "c", "x"].iter().map(|s| s.to_string()).collect();
        for id in &created {
            h.push.create(&tenant, config("t", id, "https://example.com/")).await.unwrap();
            h.push.create(&tenant, config("other-task", id, "https://example.com/")).await.unwrap();
        }
        let all = h.push.list(&tenant, "t", 0, "").await.unwrap();
        assert_eq!(all.configs.iter().map(|c| c.id.clone()).collect::<Vec<_>>(), created);
        assert_eq!(all.next_page_token, "");
        assert!(all.configs.iter().all(|c| c.task_id == "t" && c.tenant == tenant));

        let mut seen = Vec::new();
        let mut token = String::new();
        let mut pages = Vec::new();
        loop {
            let page = h.push.list(&tenant, "t", 3, &token).await.unwrap();
            pages.push(page.configs.len());
            seen.extend(page.configs.into_iter().map(|c| c.id));
            if page.next_page_token.is_empty() {
                break;
            }
            token = page.next_page_token;
        }
        assert_eq!((pages, seen), (vec![3, 3, 1], created));
        assert!(h.push.list(&tenant, "no-such-task", 0, "").await.unwrap().configs.is_empty());
    }

    pub async fn push_list_bad_page_token(h: &Harness) {
        let err = h.push.list(&h.tenant("a"), "t", 0, "garbage!").await.unwrap_err();
        assert_eq!((err.kind, err.violations[0].field.as_str()), (ErrorKind::InvalidParams, "pageToken"));
    }

    pub async fn push_delete_is_idempotent(h: &Harness) {
        let tenant = h.tenant("a");
        let kept = h.push.create(&tenant, config("t", "kept", "https://example.com/")).await.unwrap();
        h.push.create(&tenant, config("t", "gone", "https://example.com/")).await.unwrap();
        h.push.delete(&tenant, "t", "gone").await.unwrap();
        h.push.delete(&tenant, "t", "gone").await.unwrap();
        h.push.delete(&tenant, "no-such-task", "gone").await.unwrap();
        assert_eq!(h.push.get(&tenant, "t", "gone").await.unwrap(), None);
        assert_eq!(h.push.list(&tenant, "t", 0, "").await.unwrap().configs, vec![kept]);
        // The id is free again.
        h.push.create(&tenant, config("t", "gone", "https://example.com/again")).await.unwrap();
        assert_eq!(h.push.list(&tenant, "t", 0, "").await.unwrap().configs.len(), 2);
    }

    pub async fn push_delete_all(h: &Harness) {
        let tenant = h.tenant("a");
        for id in ["1", "2", "3"] {
            h.push.create(&tenant, config("t", id, "https://example.com/")).await.unwrap();
        }
        let other = h.push.create(&tenant, config("u", "1", "https://example.com/")).await.unwrap();
        h.push.delete_all(&tenant, "t").await.unwrap();
        h.push.delete_all(&tenant, "t").await.unwrap();
        assert!(h.push.list(&tenant, "t", 0, "").await.unwrap().configs.is_empty());
        assert_eq!(h.push.list(&tenant, "u", 0, "").await.unwrap().configs, vec![other]);
    }

    pub async fn push_tenant_isolation(h: &Harness) {
        let (a, b) = (h.tenant("a"), h.tenant("b"));
        let in_a = h.push.create(&a, config("t", "same", "https://a.example/")).await.unwrap();
        let in_b = h.push.create(&b, config("t", "same", "https://b.example/")).await.unwrap();
        assert_eq!((in_a.tenant.as_str(), in_b.tenant.as_str()), (a.as_str(), b.as_str()));
        assert_eq!(h.push.get(&a, "t", "same").await.unwrap(), Some(in_a.clone()));
        assert_eq!(h.push.get(&b, "t", "same").await.unwrap(), Some(in_b.clone()));
        h.push.delete(&a, "t", "same").await.unwrap();
        assert_eq!(h.push.get(&a, "t", "same").await.unwrap(), None);
        assert_eq!(h.push.list(&b, "t", 0, "").await.unwrap().configs, vec![in_b.clone()]);
        h.push.delete_all(&b, "t").await.unwrap();
        h.push.create(&a, config("t", "x", "https://a.example/")).await.unwrap();
        assert!(h.push.list(&b, "t", 0, "").await.unwrap().configs.is_empty());
    }
}
