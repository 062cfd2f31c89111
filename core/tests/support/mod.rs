//! What the integration tests share: `tests/suite/main.rs` and `tests/trace_context.rs` include
//! it with `mod support;` (a folder, so that it is no test target of its own).
//! - [`agent`]: the one test agent, [`agent::TestAgent`], scripted per message.
//! - [`client`]: for the client tests, our server in-process with that agent, and a raw HTTP/1.1
//!   server that misbehaves on purpose.
//! - [`store`]: a task store that fails or stalls some commits on request.
#![allow(dead_code)]

pub mod agent;
pub mod client;
pub mod store;
