//! Core's integration tests, one module per area, built as one test binary: each binary links
//! the whole crate and its dependencies, so one instead of thirty saves CI minutes.
//! `trace_context.rs` stays its own binary: it installs a process-wide propagator.

#[path = "../common/mod.rs"]
mod common;
#[path = "../support/mod.rs"]
mod support;

mod auth_jwt;
mod card_signing;
mod client;
mod client_faults;
mod client_oauth;
mod error_table;
mod extension_methods;
mod fuzz_bodies;
mod grpc_server;
mod instances;
mod layering;
mod listener;
mod metrics;
mod proptest_bindings;
mod proptest_model;
mod proto_model;
mod push_signing;
mod server_http;
mod skill_scopes;
mod store_suite;
mod task_manager;
mod tck_untested;
mod tls;
mod vectors_jsonrpc;
mod vectors_model;
mod vectors_options;
mod vectors_rest;
mod vectors_scenario;
mod vectors_sse;
mod vectors_state;
mod vectors_v03;
