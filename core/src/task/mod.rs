//! Tasks: the state machine (`state`), and with the `server` feature the manager that runs
//! executors and applies their events (`manager`) and the per-task event fan-out (`events`).

#[cfg(feature = "server")]
pub mod call;
#[cfg(feature = "server")]
pub mod config;
#[cfg(feature = "server")]
pub(crate) mod events;
#[cfg(feature = "server")]
pub mod manager;
pub mod state;
