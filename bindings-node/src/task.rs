//! core's task state table (`task::state`), for JavaScript code that reasons about states and
//! for the shared state vectors.

use crate::errors;
use a2a_native::model::TaskState;
use a2a_native::task::state;
use napi::Result;

/// Whether a task may move from `from` (`null`: a new task) to `to`, by core's table.
#[napi_derive::napi]
pub fn can_transition(from: Option<String>, to: String) -> Result<bool> {
    let from = from.as_deref().map(TaskState::named).transpose().map_err(errors::to_js)?;
    Ok(state::can_transition(from, TaskState::named(&to).map_err(errors::to_js)?))
}

/// `"terminal"`, `"interrupted"`, `"active"` or `"unspecified"`.
#[napi_derive::napi]
pub fn state_class(state: String) -> Result<&'static str> {
    TaskState::named(&state).map(TaskState::class).map_err(errors::to_js)
}
