//! a2a-native for Kotlin and Swift (uniffi): the A2A client and an embeddable agent server.
//!
//! One file per concern, each a few lines that convert and delegate to the core:
//! [`models_gen`] (the A2A records and enums, GENERATED from the spec's proto by
//! `tools/generate.py`, with their conversions to and from core's types, built on
//! [`convert`]), [`models`] (the exported JSON helpers: validation, the records' round trip,
//! 0.3), [`errors`] (one `A2aException` carrying the spec code), [`client`] (+ its event
//! streams), [`credentials`], [`executor`] (a Kotlin/Swift executor as a foreign async trait),
//! [`extensions`] (extension methods and profile checks as foreign traits), [`logging`] (core's
//! log events to standard error or the host's logging) and [`server`].
//! [`runtime`] owns the one tokio runtime.

uniffi::setup_scaffolding!();

mod client;
mod convert;
mod credentials;
mod errors;
mod executor;
mod extensions;
mod logging;
mod models;
#[rustfmt::skip]
mod models_gen;
mod runtime;
mod server;
mod signing;
mod trace;

pub use errors::A2aException;
