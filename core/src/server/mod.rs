//! The A2A server: both HTTP bindings (JSON-RPC and HTTP+JSON) and SSE on one listener, the
//! agent card, protocol-version and extension headers, limits, graceful shutdown.

pub mod config;
pub mod handler;

pub use config::{Limits, ServerConfig};
pub use handler::{CallContext, EventStream, Reply, RequestHandler, Stores};
