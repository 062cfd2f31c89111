//! Tasks: the state machine (`state`); the manager and event fan-out arrive with the server.

pub mod state;
