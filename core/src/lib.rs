//! a2a-native: the Agent2Agent (A2A) protocol in Rust.
//!
//! The crate holds the whole protocol and no FFI: models ([`model`], 1.0 plus the 0.3 wire form),
//! errors ([`error`]), the protocol bindings' wire forms ([`jsonrpc`], [`rest`], [`grpc`]), Server-Sent Events
//! ([`sse`]), the task state machine ([`task`]) and task stores ([`store`]). The server
//! (feature `server`), the client (feature `client`) and the bindings build on these modules and
//! never re-decide protocol semantics.

#[cfg(feature = "mimalloc")]
pub mod alloc;
#[cfg(any(feature = "server", feature = "client"))]
pub mod auth;
#[cfg(feature = "client")]
pub mod client;
pub mod error;
#[cfg(feature = "server")]
pub mod executor;
#[cfg(feature = "grpc")]
pub mod grpc;
#[cfg(all(feature = "server", unix))]
pub mod inbox;
pub mod jsonrpc;
#[cfg(feature = "otlp")]
pub mod log_forward;
#[cfg(feature = "server")]
pub mod methods;
#[cfg(feature = "server")]
pub mod metrics;
pub mod model;
#[cfg(feature = "otlp")]
mod otlp_metrics;
#[cfg(feature = "server")]
pub mod push;
pub mod request;
pub mod rest;
#[cfg(feature = "server")]
pub mod server;
#[cfg(any(feature = "server", feature = "client"))]
pub mod signing;
pub mod sse;
pub mod store;
pub mod task;
#[cfg(feature = "otlp")]
pub mod telemetry;
#[cfg(any(feature = "server", feature = "client"))]
pub mod trace_context;
pub mod vectors;

pub use error::{A2AError, ErrorKind, Result};
