//! `a2a`: the command-line tool for A2A developers: `serve` runs a built-in agent, `validate`
//! checks A2A JSON documents against the models. The client commands arrive with the client.

mod agents;
mod bench;
mod serve;

use a2a_native::model::dynamic;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "a2a", version, about = "Serve, inspect and talk to A2A agents")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve a built-in agent over JSON-RPC, HTTP+JSON and SSE (A2A 1.0, and 0.3 for old clients).
    Serve(serve::ServeArgs),
    /// Load-test an A2A server with JSON-RPC SendMessage (throughput, p50/p99 latency).
    Bench(bench::BenchArgs),
    /// Check a JSON file (or `-` for stdin) against an A2A 1.0 type and print its canonical form.
    Validate {
        /// The model type, e.g. AgentCard, Task, SendMessageRequest.
        #[arg(value_parser = clap::builder::PossibleValuesParser::new(dynamic::TYPE_NAMES))]
        type_name: String,
        file: String,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Serve(args) => {
            init_tracing();
            run_async("a2a serve", serve::run(args))
        }
        Command::Bench(args) => run_async("a2a bench", bench::run(args)),
        Command::Validate { type_name, file } => {
            let bytes = if file == "-" {
                let mut buf = Vec::new();
                std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf).map(|_| buf)
            } else {
                std::fs::read(&file)
            };
            let bytes = match bytes {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("cannot read {file}: {e}");
                    return ExitCode::from(2);
                }
            };
            let result = serde_json::from_slice(&bytes)
                .map_err(a2a_native::A2AError::from)
                .and_then(|v| dynamic::normalize(&type_name, v));
            match result {
                Ok(canonical) => {
                    println!("{}", serde_json::to_string_pretty(&canonical).expect("JSON value"));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// Runs `work` on a multi-threaded tokio runtime; an error is printed and exits non-zero.
fn run_async(what: &str, work: impl std::future::Future<Output = Result<(), String>>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(work) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{what}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Logs to stderr; `RUST_LOG` picks the level (default: warnings, and info for a2a-native).
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,a2a_native=info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}
