//! core's task state table (`task::state`), for JavaScript code that reasons about states and
//! for the shared state vectors.

use crate::errors;
use a2a_native::model::TaskState;
use a2a_native::task::state;
use napi::Result;

fn parse(name: &str) -> Result<TaskState> {
    TaskState::from_short_name(name).ok_or_else(|| errors::invalid("state", format!("unknown task state {name:?}")))
}

/// Whether a task may move from `from` (`null`: a task being created) to `to`.
#[napi_derive::napi]
pub fn can_transition(from: Option<String>, to: String) -> Result<bool> {
    let from = from.as_deref().map(parse).transpose()?;
    Ok(state::can_transition(from, parse(&to)?))
}

/// `"terminal"`, `"interrupted"`, `"active"`, or `"unspecified"`.
#[napi_derive::napi]
pub fn state_class(state: String) -> Result<&'static str> {
    let s = parse(&state)?;
    Ok(if s.is_terminal() {
        "terminal"
    } else if s.is_interrupted() {
        "interrupted"
    } else if s.is_active() {
        "active"
    } else {
        "unspecified"
    })
}
