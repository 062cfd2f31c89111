//! `a2a`: the command-line tool for A2A developers. For now it checks A2A JSON documents
//! against the models; `serve`, `card`, `send` and friends arrive with the server and client.

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
