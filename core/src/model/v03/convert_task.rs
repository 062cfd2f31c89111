//! Conversions between 0.3 and 1.0 of task states, roles, messages, tasks, artifacts, events
//! and method results.

use super::kind::{ArtifactUpdateKind, MessageKind, StatusUpdateKind, TaskKind};
use super::task::{
    Artifact, Message, Role, SendMessageResult, StreamResult, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use super::util::{opt, within};
use crate::error::{A2AError, Result};
use crate::model as m;

// ---------------------------------------------------------------------------------------------
// Conversions: enums
// ---------------------------------------------------------------------------------------------

impl From<TaskState> for m::TaskState {
    fn from(s: TaskState) -> Self {
        match s {
            TaskState::Submitted => m::TaskState::Submitted,
            TaskState::Working => m::TaskState::Working,
            TaskState::InputRequired => m::TaskState::InputRequired,
            TaskState::Completed => m::TaskState::Completed,
            TaskState::Canceled => m::TaskState::Canceled,
            TaskState::Failed => m::TaskState::Failed,
            TaskState::Rejected => m::TaskState::Rejected,
            TaskState::AuthRequired => m::TaskState::AuthRequired,
            TaskState::Unknown => m::TaskState::Unspecified,
        }
    }
}

impl From<m::TaskState> for TaskState {
    fn from(s: m::TaskState) -> Self {
        match s {
            m::TaskState::Submitted => TaskState::Submitted,
            m::TaskState::Working => TaskState::Working,
            m::TaskState::InputRequired => TaskState::InputRequired,
            m::TaskState::Completed => TaskState::Completed,
            m::TaskState::Canceled => TaskState::Canceled,
            m::TaskState::Failed => TaskState::Failed,
            m::TaskState::Rejected => TaskState::Rejected,
            m::TaskState::AuthRequired => TaskState::AuthRequired,
            m::TaskState::Unspecified => TaskState::Unknown,
        }
    }
}

impl From<Role> for m::Role {
    fn from(r: Role) -> Self {
        match r {
            Role::User => m::Role::User,
            Role::Agent => m::Role::Agent,
        }
    }
}

impl TryFrom<m::Role> for Role {
    type Error = A2AError;
    /// `ROLE_UNSPECIFIED` has no 0.3 spelling (1.0 validation rejects it in messages anyway).
    fn try_from(r: m::Role) -> Result<Self> {
        match r {
            m::Role::User => Ok(Role::User),
            m::Role::Agent => Ok(Role::Agent),
            m::Role::Unspecified => {
                Err(A2AError::invalid_field("role", "ROLE_UNSPECIFIED has no 0.3 form (user or agent)"))
            }
        }
    }
}

/// Whether a 0.3 status-update for a task entering `state` should carry `final: true`:
/// terminal states, and INPUT_REQUIRED because the 0.3 SDKs end the stream there too.
/// AUTH_REQUIRED is not final: the spec asks agents to keep streams open while they wait.
pub fn is_final(state: m::TaskState) -> bool {
    state.is_terminal() || state == m::TaskState::InputRequired
}

// ---------------------------------------------------------------------------------------------
// Conversions: messages, tasks, artifacts, events, results
// ---------------------------------------------------------------------------------------------

impl From<Message> for m::Message {
    fn from(x: Message) -> Self {
        m::Message {
            message_id: x.message_id,
            context_id: x.context_id.unwrap_or_default(),
            task_id: x.task_id.unwrap_or_default(),
            role: x.role.into(),
            parts: x.parts.into_iter().map(Into::into).collect(),
            metadata: x.metadata,
            extensions: x.extensions,
            reference_task_ids: x.reference_task_ids,
        }
    }
}

impl TryFrom<m::Message> for Message {
    type Error = A2AError;
    fn try_from(x: m::Message) -> Result<Self> {
        Ok(Message {
            kind: MessageKind,
            message_id: x.message_id,
            context_id: opt(x.context_id),
            task_id: opt(x.task_id),
            role: x.role.try_into()?,
            parts: x.parts.into_iter().map(Into::into).collect(),
            metadata: x.metadata,
            extensions: x.extensions,
            reference_task_ids: x.reference_task_ids,
        })
    }
}

impl From<TaskStatus> for m::TaskStatus {
    fn from(s: TaskStatus) -> Self {
        m::TaskStatus { state: s.state.into(), message: s.message.map(Into::into), timestamp: s.timestamp }
    }
}

impl TryFrom<m::TaskStatus> for TaskStatus {
    type Error = A2AError;
    fn try_from(s: m::TaskStatus) -> Result<Self> {
        let message = s.message.map(Message::try_from).transpose().map_err(|e| within("message", e))?;
        Ok(TaskStatus { state: s.state.into(), message, timestamp: s.timestamp })
    }
}

impl From<Artifact> for m::Artifact {
    fn from(a: Artifact) -> Self {
        m::Artifact {
            artifact_id: a.artifact_id,
            name: a.name.unwrap_or_default(),
            description: a.description.unwrap_or_default(),
            parts: a.parts.into_iter().map(Into::into).collect(),
            metadata: a.metadata,
            extensions: a.extensions,
        }
    }
}

impl From<m::Artifact> for Artifact {
    fn from(a: m::Artifact) -> Self {
        Artifact {
            artifact_id: a.artifact_id,
            name: opt(a.name),
            description: opt(a.description),
            parts: a.parts.into_iter().map(Into::into).collect(),
            metadata: a.metadata,
            extensions: a.extensions,
        }
    }
}

impl From<Task> for m::Task {
    fn from(t: Task) -> Self {
        m::Task {
            id: t.id,
            context_id: t.context_id,
            status: t.status.into(),
            artifacts: t.artifacts.into_iter().map(Into::into).collect(),
            history: t.history.into_iter().map(Into::into).collect(),
            metadata: t.metadata,
        }
    }
}

impl TryFrom<m::Task> for Task {
    type Error = A2AError;
    fn try_from(t: m::Task) -> Result<Self> {
        let history = t
            .history
            .into_iter()
            .enumerate()
            .map(|(i, msg)| Message::try_from(msg).map_err(|e| within(&format!("history[{i}]"), e)))
            .collect::<Result<_>>()?;
        Ok(Task {
            kind: TaskKind,
            id: t.id,
            context_id: t.context_id,
            status: t.status.try_into().map_err(|e| within("status", e))?,
            artifacts: t.artifacts.into_iter().map(Into::into).collect(),
            history,
            metadata: t.metadata,
        })
    }
}

impl From<TaskStatusUpdateEvent> for m::TaskStatusUpdateEvent {
    /// `final` is dropped: 1.0 signals the end of a stream by closing it.
    fn from(e: TaskStatusUpdateEvent) -> Self {
        m::TaskStatusUpdateEvent {
            task_id: e.task_id,
            context_id: e.context_id,
            status: e.status.into(),
            metadata: e.metadata,
        }
    }
}

impl TaskStatusUpdateEvent {
    /// The 0.3 event for a 1.0 one, with `final` as given (see [`is_final`] for the usual rule).
    pub fn from_v10(e: m::TaskStatusUpdateEvent, r#final: bool) -> Result<Self> {
        Ok(TaskStatusUpdateEvent {
            kind: StatusUpdateKind,
            task_id: e.task_id,
            context_id: e.context_id,
            status: e.status.try_into().map_err(|e| within("status", e))?,
            r#final,
            metadata: e.metadata,
        })
    }
}

impl TryFrom<m::TaskStatusUpdateEvent> for TaskStatusUpdateEvent {
    type Error = A2AError;
    /// `final` from [`is_final`] of the new state.
    fn try_from(e: m::TaskStatusUpdateEvent) -> Result<Self> {
        let r#final = is_final(e.status.state);
        Self::from_v10(e, r#final)
    }
}

impl From<TaskArtifactUpdateEvent> for m::TaskArtifactUpdateEvent {
    fn from(e: TaskArtifactUpdateEvent) -> Self {
        m::TaskArtifactUpdateEvent {
            task_id: e.task_id,
            context_id: e.context_id,
            artifact: e.artifact.into(),
            append: e.append.unwrap_or(false),
            last_chunk: e.last_chunk.unwrap_or(false),
            metadata: e.metadata,
        }
    }
}

impl From<m::TaskArtifactUpdateEvent> for TaskArtifactUpdateEvent {
    /// `append` / `lastChunk` are written only when true (absent and false mean the same).
    fn from(e: m::TaskArtifactUpdateEvent) -> Self {
        TaskArtifactUpdateEvent {
            kind: ArtifactUpdateKind,
            task_id: e.task_id,
            context_id: e.context_id,
            artifact: e.artifact.into(),
            append: e.append.then_some(true),
            last_chunk: e.last_chunk.then_some(true),
            metadata: e.metadata,
        }
    }
}

impl From<SendMessageResult> for m::SendMessageResponse {
    fn from(r: SendMessageResult) -> Self {
        match r {
            SendMessageResult::Task(t) => m::SendMessageResponse::Task(t.into()),
            SendMessageResult::Message(msg) => m::SendMessageResponse::Message(msg.into()),
        }
    }
}

impl TryFrom<m::SendMessageResponse> for SendMessageResult {
    type Error = A2AError;
    fn try_from(r: m::SendMessageResponse) -> Result<Self> {
        Ok(match r {
            m::SendMessageResponse::Task(t) => SendMessageResult::Task(t.try_into()?),
            m::SendMessageResponse::Message(msg) => SendMessageResult::Message(msg.try_into()?),
        })
    }
}

impl From<StreamResult> for m::StreamResponse {
    fn from(r: StreamResult) -> Self {
        match r {
            StreamResult::Task(t) => m::StreamResponse::Task(t.into()),
            StreamResult::Message(msg) => m::StreamResponse::Message(msg.into()),
            StreamResult::StatusUpdate(e) => m::StreamResponse::StatusUpdate(e.into()),
            StreamResult::ArtifactUpdate(e) => m::StreamResponse::ArtifactUpdate(e.into()),
        }
    }
}

impl StreamResult {
    /// The 0.3 stream result for a 1.0 event; `final` applies to a status update only.
    pub fn from_v10(r: m::StreamResponse, r#final: bool) -> Result<Self> {
        Ok(match r {
            m::StreamResponse::Task(t) => StreamResult::Task(t.try_into()?),
            m::StreamResponse::Message(msg) => StreamResult::Message(msg.try_into()?),
            m::StreamResponse::StatusUpdate(e) => {
                StreamResult::StatusUpdate(TaskStatusUpdateEvent::from_v10(e, r#final)?)
            }
            m::StreamResponse::ArtifactUpdate(e) => StreamResult::ArtifactUpdate(e.into()),
        })
    }
}

impl TryFrom<m::StreamResponse> for StreamResult {
    type Error = A2AError;
    /// A status update's `final` from [`is_final`].
    fn try_from(r: m::StreamResponse) -> Result<Self> {
        let r#final = match &r {
            m::StreamResponse::StatusUpdate(e) => is_final(e.status.state),
            _ => false,
        };
        Self::from_v10(r, r#final)
    }
}
