//! The task state machine: one transition table, and the spec errors that follow from a
//! task's state (message to a terminal task, cancel or subscribe of a terminal task, a
//! taskId/contextId mismatch).
//!
//! The spec gives no formal table (SPEC.md §4); this one follows its rules: terminal states
//! are final; interrupted states resume to WORKING on a new message (or by themselves, e.g.
//! after out-of-band credentials); any live state may end in a terminal state (cancel, failure,
//! rejection); UNSPECIFIED is never a real state.

use crate::error::{A2AError, Result};
use crate::model::{Message, Task, TaskState};

impl TaskState {
    /// COMPLETED, FAILED, CANCELED, REJECTED: the task never changes again.
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected)
    }

    /// INPUT_REQUIRED, AUTH_REQUIRED: the agent waits for the client; a blocking send returns.
    pub fn is_interrupted(self) -> bool {
        matches!(self, TaskState::InputRequired | TaskState::AuthRequired)
    }

    /// SUBMITTED or WORKING.
    pub fn is_active(self) -> bool {
        matches!(self, TaskState::Submitted | TaskState::Working)
    }

    /// Whether a blocking SendMessage returns at this state.
    pub fn ends_blocking_wait(self) -> bool {
        self.is_terminal() || self.is_interrupted()
    }

    /// Whether a task's event stream closes at this state: terminal states, and INPUT_REQUIRED
    /// as the official SDKs do (SPEC §7). At AUTH_REQUIRED the agent SHOULD keep streams open
    /// and MAY resume on its own once credentials arrive out of band, so the server keeps them
    /// open and the client reads on.
    pub fn ends_stream(self) -> bool {
        self.is_terminal() || self == TaskState::InputRequired
    }

    /// `"terminal"`, `"interrupted"`, `"active"` or `"unspecified"`: the class a host
    /// language's callers test instead of listing states.
    pub fn class(self) -> &'static str {
        if self.is_terminal() {
            "terminal"
        } else if self.is_interrupted() {
            "interrupted"
        } else if self.is_active() {
            "active"
        } else {
            "unspecified"
        }
    }

    /// A state by any of core's spellings (`input_required`, `input-required`,
    /// `TASK_STATE_INPUT_REQUIRED`); InvalidParams naming `state` otherwise.
    pub fn named(name: &str) -> Result<Self> {
        Self::from_short_name(name)
            .ok_or_else(|| A2AError::invalid_field("state", format!("unknown task state {name:?}")))
    }
}

/// Whether a task may move from `from` to `to`. `from = None` is a task being created.
///
/// Same-state moves are allowed for live states (a WORKING update carrying a new status
/// message is still WORKING) and refused for terminal ones.
pub fn can_transition(from: Option<TaskState>, to: TaskState) -> bool {
    use TaskState::*;
    if to == Unspecified {
        return false;
    }
    match from {
        // A task may be created in any real state: REJECTED/COMPLETED straight away are legal.
        None => true,
        Some(Unspecified) => false,
        Some(s) if s.is_terminal() => false,
        // Nothing goes back to SUBMITTED once work started.
        Some(Working | InputRequired | AuthRequired) if to == Submitted => false,
        Some(_) => true,
    }
}

/// Checks a transition, naming both states in the error.
pub fn check_transition(task_id: &str, from: Option<TaskState>, to: TaskState) -> Result<()> {
    if can_transition(from, to) {
        return Ok(());
    }
    let from_name = from.map_or("(new)", TaskState::as_str);
    Err(A2AError::new(
        crate::ErrorKind::InvalidAgentResponse,
        format!("invalid task state transition {from_name} -> {to} for task {task_id}"),
    )
    .with_meta("taskId", task_id))
}

/// What a client message naming an existing task gets: UnsupportedOperation for a terminal
/// task (tasks are not restartable; follow-ups start a new task in the same context), an
/// InvalidParams for a contextId that contradicts the task's.
pub fn check_message_for_task(task: &Task, message: &Message) -> Result<()> {
    if task.status.state.is_terminal() {
        return Err(A2AError::unsupported_operation(format!(
            "Task {} is in terminal state {} and cannot accept messages; start a new task in context {}",
            task.id, task.status.state, task.context_id
        ))
        .with_meta("taskId", &task.id));
    }
    if !message.context_id.is_empty() && !task.context_id.is_empty() && message.context_id != task.context_id {
        return Err(A2AError::invalid_field(
            "message.contextId",
            format!("contextId {} does not match task {} (context {})", message.context_id, task.id, task.context_id),
        ));
    }
    Ok(())
}

/// CancelTask of a task in a terminal state: TaskNotCancelable.
pub fn check_cancel(task: &Task) -> Result<()> {
    if task.status.state.is_terminal() {
        return Err(A2AError::task_not_cancelable(&task.id, task.status.state.as_str()));
    }
    Ok(())
}

/// SubscribeToTask of a task in a terminal state: UnsupportedOperation.
pub fn check_subscribe(task: &Task) -> Result<()> {
    if task.status.state.is_terminal() {
        return Err(A2AError::unsupported_operation(format!(
            "Task {} is in terminal state {}; there is nothing to subscribe to",
            task.id, task.status.state
        ))
        .with_meta("taskId", &task.id));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use crate::model::{Role, TaskStatus};
    use TaskState::*;

    fn task(state: TaskState) -> Task {
        Task {
            id: "t1".into(),
            context_id: "c1".into(),
            status: TaskStatus::now(state),
            artifacts: vec![],
            history: vec![],
            metadata: None,
        }
    }

    #[test]
    fn classes_partition_the_real_states() {
        for &s in TaskState::ALL {
            let classes = [s.is_terminal(), s.is_interrupted(), s.is_active()].iter().filter(|b| **b).count();
            assert_eq!(classes, usize::from(s != Unspecified), "{s}");
        }
        let named = |name: &str| TaskState::named(name).map(TaskState::class);
        assert_eq!(named("input-required").unwrap(), "interrupted");
        assert_eq!(named("TASK_STATE_COMPLETED").unwrap(), "terminal");
        assert_eq!(named("working").unwrap(), "active");
        assert_eq!(Unspecified.class(), "unspecified");
        assert_eq!(named("asleep").unwrap_err().violations[0].field, "state");
    }

    #[test]
    fn terminal_states_are_final() {
        for &from in TaskState::ALL.iter().filter(|s| s.is_terminal()) {
            for &to in TaskState::ALL {
                assert!(!can_transition(Some(from), to), "{from} -> {to}");
            }
        }
    }

    #[test]
    fn live_states_move_as_the_spec_says() {
        assert!(can_transition(Some(Submitted), Working));
        assert!(can_transition(Some(Working), Working));
        assert!(can_transition(Some(Working), InputRequired));
        assert!(can_transition(Some(InputRequired), Working));
        assert!(can_transition(Some(AuthRequired), Working));
        assert!(can_transition(Some(InputRequired), Canceled));
        assert!(!can_transition(Some(Working), Submitted));
        assert!(!can_transition(Some(Working), Unspecified));
        assert!(can_transition(None, Rejected));
        assert!(!can_transition(None, Unspecified));
        assert_eq!(check_transition("t", Some(Completed), Working).unwrap_err().kind, ErrorKind::InvalidAgentResponse);
    }

    #[test]
    fn spec_errors_by_state() {
        let mut msg = Message::text(Role::User, "more");
        assert_eq!(check_message_for_task(&task(Completed), &msg).unwrap_err().kind, ErrorKind::UnsupportedOperation);
        assert!(check_message_for_task(&task(InputRequired), &msg).is_ok());
        msg.context_id = "other".into();
        let err = check_message_for_task(&task(InputRequired), &msg).unwrap_err();
        assert_eq!((err.kind, err.violations[0].field.as_str()), (ErrorKind::InvalidParams, "message.contextId"));
        assert_eq!(check_cancel(&task(Canceled)).unwrap_err().kind, ErrorKind::TaskNotCancelable);
        assert!(check_cancel(&task(Working)).is_ok());
        assert_eq!(check_subscribe(&task(Failed)).unwrap_err().kind, ErrorKind::UnsupportedOperation);
        assert!(check_subscribe(&task(AuthRequired)).is_ok());
    }
}
