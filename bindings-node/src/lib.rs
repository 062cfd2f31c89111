//! The native half of the npm package `a2a-native` (loaded by `lib/native.js`).
//!
//! One file per core module, each a few lines that convert and delegate: [`models`] (ProtoJSON
//! text <-> core models, read and validated by the core; 0.3 conversion), [`task`] (the state
//! table), [`errors`] (core errors -> the `A2AError` subclasses built by the JS layer),
//! [`executor`] (a JavaScript executor behind core's trait, and the event sink it reports
//! through), [`server`] and [`client`], [`signing`] (signed cards, signed push verification),
//! [`logging`] (core's log events on standard error). The public, typed API is the hand-written JS layer in
//! `lib/` with `index.d.ts`.
//!
//! Models cross the boundary as JSON text: `JSON.parse` / `JSON.stringify` in V8 and serde in
//! Rust are each faster than building objects one napi call per field.
//!
//! The one tokio runtime is napi's (the core never creates one). Every call that waits is an
//! `async fn` (a Promise in JavaScript): Rust works on the runtime and never blocks the event
//! loop; JavaScript executors run on the main thread, called through a threadsafe function.

// napi-derive registers exports only outside `cfg(test)`, so a test build (clippy
// --all-targets) would see every export as unused.
#![cfg_attr(test, allow(dead_code))]

mod client;
mod credentials;
mod errors;
mod executor;
mod logging;
mod models;
mod server;
mod signing;
mod task;

/// The crate version (the npm package's too).
#[napi_derive::napi]
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Rust's allocations in this module (not V8's): glibc malloc was ~17% of the runtime threads'
/// time under load; mimalloc cut the process's CPU per request by about an eighth.
#[global_allocator]
static ALLOCATOR: a2a_native::alloc::MiMalloc = a2a_native::alloc::MiMalloc;
