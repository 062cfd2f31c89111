//! The task log: a task is its latest state plus the ordered changes applied to it, each with a
//! per-task sequence number (1, 2, 3, ...). The task's *version* is the sequence number of its
//! last change; a store moves a task only from the version the writer read (optimistic
//! concurrency), so no writer silently overwrites another.
//!
//! [`apply`] is the one definition of what a change does to a task: the task manager applies it
//! to its live copy, the memory store to its stored copy, and the SQL stores when they fold the
//! changes logged after the last stored snapshot (they do not rewrite a large task body for
//! every small event: see [`SnapshotPolicy`]).

use crate::model::{Artifact, Message, StreamResponse, Task};
use serde::{Deserialize, Serialize};

/// One change to a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Change {
    /// An applied event, as streams and push notifications carry it. A `Task` event with no
    /// task before it creates the task.
    Event(StreamResponse),
    /// A client's message continuing the task: the status message it answers and the message
    /// itself join the history. Not streamed (clients never saw their own messages as events).
    UserMessage(Message),
}

impl Change {
    /// The event streams carry, if this change is one.
    pub fn event(&self) -> Option<&StreamResponse> {
        match self {
            Change::Event(e) => Some(e),
            Change::UserMessage(_) => None,
        }
    }
}

/// A change and its place in the task's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    pub seq: u64,
    pub change: Change,
}

/// A task and its version (the sequence number of the last change it includes).
#[derive(Debug, Clone, PartialEq)]
pub struct Versioned {
    pub task: Task,
    pub version: u64,
    /// Who runs the task's current turn, in stores several processes share (PostgreSQL).
    pub lease: Option<Lease>,
}

/// The instance running a task's current turn, as the store last heard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub owner: String,
    /// The owner renewed it in time (false: the owner is presumed dead).
    pub live: bool,
}

/// The instance committing a change while it runs the task, and how long its hold lasts
/// without renewal. Stores shared by several processes record it while the task is SUBMITTED
/// or WORKING and clear it otherwise (an interrupted or ended task is held by nobody).
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    pub id: &'a str,
    pub lease: std::time::Duration,
}

/// What a store is asked to write for one task, atomically.
#[derive(Debug, Clone, Copy)]
pub struct Commit<'a> {
    /// The task's state after `entries`.
    pub task: &'a Task,
    /// The version the writer started from; 0 means the task must not exist yet.
    pub expected: u64,
    /// The changes, with sequence numbers `expected + 1`, `expected + 2`, ...
    pub entries: &'a [LogEntry],
    /// Whether to store the whole task body now (SQL stores); otherwise only the log grows and
    /// the listing columns (state, timestamp) move. The memory store always has the whole task.
    pub snapshot: bool,
    /// The instance that runs the task (see [`Owner`]).
    pub owner: Option<Owner<'a>>,
    /// The instance writing. Stores shared by several instances set or clear only the writer's
    /// own lease (or a lapsed one) and keep another instance's live one: that instance runs the
    /// task (a cancel sent here, an execution here that outlived its turn).
    pub writer: Option<&'a str>,
    /// Commit only if nobody holds a live lease on the task (a reaper ending a dead owner's
    /// task must not overrule an owner that renewed meanwhile).
    pub orphaned_only: bool,
    /// Push notifications are enabled: stores with an outbox queue each event for every push
    /// config of the task, in the same transaction.
    pub push: bool,
    /// The W3C trace context of the work that made this commit (a `TraceParent` as JSON), kept
    /// with its queued push notifications so their deliveries continue the task's trace.
    pub trace: Option<&'a str>,
    /// Append `entries` to the log. `false` only for a task's first commit that ends it and that
    /// no one could have watched (a blocking send: no stream, no push config, and no one else
    /// knows the task's id yet): no event id of it was ever seen, so none can be resumed from.
    /// Every store then writes just the body; a replay from before it gets the task snapshot.
    pub log: bool,
}

impl<'a> Commit<'a> {
    /// A plain commit of `entries` from `expected`: logged, no body snapshot, no owner or
    /// writer, no push notifications (change a field with `Commit { snapshot: true, ..c }`).
    pub fn logged(task: &'a Task, expected: u64, entries: &'a [LogEntry]) -> Self {
        Commit {
            task,
            expected,
            entries,
            snapshot: false,
            owner: None,
            writer: None,
            orphaned_only: false,
            push: false,
            trace: None,
            log: true,
        }
    }

    /// The version after this commit.
    pub fn version(&self) -> u64 {
        self.entries.last().map_or(self.expected, |e| e.seq)
    }
}

/// The answer to a [`Commit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitOutcome {
    /// Written.
    Committed,
    /// The task is not at the expected version (another writer moved it, or it exists already /
    /// no longer exists): nothing was written.
    Conflict,
}

/// Log entries after a sequence number, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogPage {
    pub entries: Vec<LogEntry>,
    /// False when the store no longer holds some of the entries asked for (the memory store
    /// keeps a bounded tail per task): the reader must start again from a snapshot.
    pub complete: bool,
}

/// A push notification due from a store's outbox: the oldest undelivered one of its task,
/// claimed by one instance for a while.
#[derive(Debug, Clone, PartialEq)]
pub struct PushDue {
    /// The outbox entry, to finish once delivered.
    pub id: i64,
    pub tenant: String,
    pub config: crate::model::TaskPushNotificationConfig,
    pub event: StreamResponse,
    /// For a config registered over 0.3 (its `v03`): the task as it stood after the event,
    /// which is what such a config is sent; `None`: nothing to send for this entry (see
    /// `Tables::task_at`), and it is finished as if delivered.
    pub task: Option<crate::model::Task>,
    /// The commit's trace context (see [`Commit::trace`]), as JSON.
    pub trace: Option<String>,
}

/// A task moved by some writer sharing the store (another instance), as the store heard of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Moved {
    /// The task is now at `version`.
    Task { tenant: String, id: String, version: u64 },
    /// The instance running the task's turn gave its lease back, the task at `version` and
    /// still active (its execution returned without ending or interrupting it): no instance
    /// runs it until a message starts the next turn.
    TurnEnded { tenant: String, id: String, version: u64 },
    /// Something may have moved that was not heard of (the listening connection was lost, or
    /// a notice was too long): whoever follows tasks should check each one.
    Unknown,
}

/// Applies one change. A change to no task creates it only from a `Task` event; anything else
/// on no task is ignored (a log never starts that way).
pub fn apply(task: &mut Option<Task>, change: &Change) {
    match task {
        Some(current) => apply_to(current, change),
        None => {
            if let Change::Event(StreamResponse::Task(t)) = change {
                *task = Some(t.clone());
            }
        }
    }
}

/// Applies one change to an existing task.
pub fn apply_to(current: &mut Task, change: &Change) {
    match change {
        Change::Event(StreamResponse::Task(t)) => {
            let history = std::mem::take(&mut current.history);
            *current = t.clone();
            if current.history.is_empty() {
                current.history = history;
            }
        }
        Change::Event(StreamResponse::Message(m)) => current.history.push(m.clone()),
        Change::Event(StreamResponse::StatusUpdate(e)) => {
            // As the official SDKs do: the status message being replaced joins the history.
            if let Some(old) = current.status.message.take() {
                current.history.push(old);
            }
            current.status = e.status.clone();
            if let Some(meta) = &e.metadata {
                current.metadata.get_or_insert_with(Default::default).extend(meta.clone());
            }
        }
        Change::Event(StreamResponse::ArtifactUpdate(e)) => merge_artifact(current, &e.artifact, e.append),
        Change::UserMessage(m) => {
            // Keep history in turn order: the agent's question comes before the answer.
            if let Some(question) = current.status.message.take() {
                current.history.push(question);
            }
            current.history.push(m.clone());
        }
    }
}

/// Adds an artifact, or with `append` extends the one with the same id.
fn merge_artifact(task: &mut Task, artifact: &Artifact, append: bool) {
    match task.artifacts.iter_mut().find(|a| a.artifact_id == artifact.artifact_id) {
        Some(existing) if append => existing.parts.extend(artifact.parts.iter().cloned()),
        Some(existing) => *existing = artifact.clone(),
        None => task.artifacts.push(artifact.clone()),
    }
}

/// When a SQL store rewrites a task's whole body: when the task is created or reaches a state
/// that ends a turn (so finished tasks read in one row), and otherwise once as many changes
/// were logged since the last body as the task has items (history messages and artifact
/// parts). Each body rewrite is then paid for by about as many events as the body holds, so
/// storing one event costs O(its size), not O(task size), and reading a task folds at most
/// about one body's worth of changes. Counting items, not bytes, keeps the manager from
/// serialising a task only to measure it.
#[derive(Debug, Clone, Copy, Default)]
pub struct SnapshotPolicy {
    /// Changes logged since the last body.
    since: usize,
}

/// Below this many items a body is always rewritten: a small task costs one row either way.
const SMALL_TASK: usize = 16;

impl SnapshotPolicy {
    /// Whether the next commit of `entries` changes to `task` (its state after them) should
    /// store the whole body. `new`: the commit creates the task.
    pub fn wants_snapshot(&self, task: &Task, new: bool, entries: usize) -> bool {
        let state = task.status.state;
        let items = task.history.len() + task.artifacts.iter().map(|a| a.parts.len()).sum::<usize>();
        new || state.is_terminal() || state.is_interrupted() || items < SMALL_TASK || self.since + entries >= items
    }

    /// Records a commit of `entries` changes, with or without a body.
    pub fn record(&mut self, snapshot: bool, entries: usize) {
        self.since = if snapshot { 0 } else { self.since + entries };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Part, Role, TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent};

    fn task() -> Task {
        Task {
            id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus::now(TaskState::Submitted),
            artifacts: vec![],
            history: vec![Message::text(Role::User, "hi")],
            metadata: None,
        }
    }

    #[test]
    fn changes_fold_into_the_task() {
        let mut t = None;
        apply(&mut t, &Change::UserMessage(Message::text(Role::User, "ignored: no task yet")));
        assert!(t.is_none());
        apply(&mut t, &Change::Event(StreamResponse::Task(task())));
        let mut question = Message::text(Role::Agent, "which city?");
        question.task_id = "t".into();
        let status = TaskStatus { message: Some(question.clone()), ..TaskStatus::now(TaskState::InputRequired) };
        let update = TaskStatusUpdateEvent { task_id: "t".into(), context_id: "c".into(), status, metadata: None };
        apply(&mut t, &Change::Event(StreamResponse::StatusUpdate(update)));
        let answer = Message::text(Role::User, "Paris");
        apply(&mut t, &Change::UserMessage(answer.clone()));
        let chunk = |text: &str, append| {
            let artifact = Artifact {
                artifact_id: "a".into(),
                name: String::new(),
                description: String::new(),
                parts: vec![Part::text(text)],
                metadata: None,
                extensions: vec![],
            };
            Change::Event(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: "t".into(),
                context_id: "c".into(),
                artifact,
                append,
                last_chunk: false,
                metadata: None,
            }))
        };
        apply(&mut t, &chunk("one", false));
        apply(&mut t, &chunk("two", true));
        let t = t.unwrap();
        assert_eq!(t.history.len(), 3, "question and answer joined the history in turn order");
        assert_eq!(t.history[1], question);
        assert_eq!(t.history[2], answer);
        assert!(t.status.message.is_none());
        assert_eq!(t.artifacts[0].parts, vec![Part::text("one"), Part::text("two")]);
    }

    #[test]
    fn changes_round_trip_as_json() {
        let entry = LogEntry { seq: 7, change: Change::UserMessage(Message::text(Role::User, "x")) };
        let text = serde_json::to_string(&entry).unwrap();
        assert_eq!(serde_json::from_str::<LogEntry>(&text).unwrap(), entry);
        let entry = LogEntry { seq: 1, change: Change::Event(StreamResponse::Task(task())) };
        let text = serde_json::to_string(&entry).unwrap();
        assert!(text.contains("\"event\":{\"task\":"), "{text}");
        assert_eq!(serde_json::from_str::<LogEntry>(&text).unwrap(), entry);
    }

    #[test]
    fn snapshots_are_amortised() {
        let mut policy = SnapshotPolicy::default();
        let mut t = task();
        assert!(policy.wants_snapshot(&t, true, 1));
        t.status = TaskStatus::now(TaskState::Working);
        assert!(policy.wants_snapshot(&t, false, 1), "a small task is always stored whole");
        t.history = (0..100).map(|i| Message::text(Role::User, format!("m{i}"))).collect();
        policy.record(true, 1);
        // Changes are only logged until as many were logged as the task has items.
        let mut logged = 0;
        while !policy.wants_snapshot(&t, false, 1) {
            policy.record(false, 1);
            logged += 1;
        }
        assert_eq!(logged, 99);
        t.status = TaskStatus::now(TaskState::Completed);
        policy.record(false, 1);
        assert!(policy.wants_snapshot(&t, false, 1), "a turn's end stores the body");
    }
}
