//! The native half of the Python package `a2a_native`: the private module `a2a_native._native`.
//!
//! One file per core module, each a few lines that convert and delegate: [`models`] (ProtoJSON
//! values <-> Python dicts, read and validated by the core), [`errors`] (core errors -> the
//! `A2AError` subclasses), [`executor`] (a Python `AgentExecutor` behind core's trait, and the
//! event sink it reports through), [`server`] and [`client`];
//! [`logging`] forwards Rust `tracing` events to Python's `logging`. The public, typed API is the
//! hand-written Python layer in `python/a2a_native/`.
//!
//! The one tokio runtime is [`runtime`]'s (the core never creates one). Every call that waits
//! returns an asyncio awaitable: Rust works on the runtime without the GIL, and Python executors
//! run as asyncio tasks on the loop that started the server, asked through its [`inbox`]. Runtime
//! threads use Python only through [`runtime::attach`], which is closed at exit (the package's
//! `atexit` hook).

use pyo3::prelude::*;

mod client;
mod credentials;
mod errors;
mod executor;
mod inbox;
mod logging;
mod models;
mod push_verify;
mod runtime;
mod server;
mod signing;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<client::Client>()?;
    m.add_class::<client::Feed>()?;
    m.add_class::<server::AgentServer>()?;
    m.add_class::<push_verify::PushVerifier>()?;
    m.add_class::<executor::EventSink>()?;
    m.add_class::<executor::Completion>()?;
    m.add_function(wrap_pyfunction!(errors::error_table, m)?)?;
    m.add_function(wrap_pyfunction!(models::validate, m)?)?;
    m.add_function(wrap_pyfunction!(models::convert, m)?)?;
    m.add_function(wrap_pyfunction!(models::sse_decode, m)?)?;
    m.add_function(wrap_pyfunction!(models::sse_encode, m)?)?;
    m.add_function(wrap_pyfunction!(models::vector_check, m)?)?;
    m.add_function(wrap_pyfunction!(logging::sync_level, m)?)?;
    m.add_function(wrap_pyfunction!(signing::canonicalize, m)?)?;
    m.add_function(wrap_pyfunction!(signing::sign_card, m)?)?;
    m.add_function(wrap_pyfunction!(signing::verify_card, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::shutdown, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
