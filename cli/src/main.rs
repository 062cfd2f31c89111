//! `a2a`: the command-line tool for A2A developers: `serve` runs a built-in agent; `card`,
//! `send`, `get`, `cancel`, `list`, `subscribe` and `push` talk to any A2A agent (1.0, or 0.3
//! by automatic fallback); `bench` load-tests a server; `validate` checks A2A JSON documents.

/// `println!` that ends the process quietly when standard output's reader has gone (`a2a list |
/// head`), with the status SIGPIPE would give (141). SIGPIPE itself stays ignored: a client whose
/// peer hangs up (a TLS server refusing its certificate) reports that, instead of dying without a
/// word from a write to the closed socket.
macro_rules! outln {
    ($($arg:tt)*) => { $crate::print::line(format_args!($($arg)*)) };
}

mod agents;
mod bench;
mod print;
mod security;
mod serve;
mod talk;
mod telemetry;

use a2a_native::model::dynamic;
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

/// The server's allocator: a request allocates and frees many small objects across threads
/// (a profile showed about 16% of a SendMessage in glibc malloc/free).
#[global_allocator]
static ALLOCATOR: a2a_native::alloc::MiMalloc = a2a_native::alloc::MiMalloc;

#[derive(Parser)]
#[command(name = "a2a", version, about = "Serve, inspect and talk to A2A agents")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    conn: talk::Connection,
}

#[derive(Subcommand)]
enum Command {
    /// Serve a built-in agent over JSON-RPC, HTTP+JSON (with SSE) and gRPC on one port (A2A 1.0, and
    /// 0.3 over JSON-RPC for old clients).
    Serve(Box<serve::ServeArgs>),
    /// Show an agent's card (resolved from its base URL).
    Card {
        url: String,
        /// The extended card (GetExtendedAgentCard; needs credentials the agent accepts).
        #[arg(long)]
        extended: bool,
        /// Verify the card's signatures against this JWKS (a file or an http(s) URL): exit 1
        /// unless one verifies (ES256, RS256 or EdDSA).
        #[arg(long, value_name = "JWKS")]
        verify: Option<String>,
    },
    /// Send a message and print the reply (--stream: the events as they happen).
    Send(talk::SendArgs),
    /// Show a task.
    Get {
        url: String,
        task_id: String,
        /// Most recent history messages to include (0: none).
        #[arg(long)]
        history: Option<i32>,
    },
    /// Cancel a task.
    Cancel { url: String, task_id: String },
    /// List tasks (newest first), with filters and paging.
    List(talk::ListArgs),
    /// Follow a running task's events.
    Subscribe { url: String, task_id: String },
    /// Manage a task's push notification webhooks.
    #[command(subcommand)]
    Push(talk::PushCommand),
    /// Load-test an A2A server with JSON-RPC SendMessage (throughput, p50/p99 latency).
    /// --bearer, --api-key (with --api-key-header) and --header go with every request.
    Bench(bench::BenchArgs),
    /// Check a JSON file (or `-` for stdin) against an A2A 1.0 type and print its canonical form.
    Validate {
        /// The model type, e.g. AgentCard, Task, SendMessageRequest.
        #[arg(value_parser = clap::builder::PossibleValuesParser::new(dynamic::TYPE_NAMES))]
        type_name: String,
        file: String,
        /// Fail (exit 1) when the file has members the type does not define, or a member twice
        /// in one object; without it they are only warned of on stderr (a reader ignores
        /// unknown members, as the spec asks; of a member given twice, it keeps the last).
        #[arg(long)]
        strict: bool,
    },
}

/// The client's options (global, so they may follow any command) that mean nothing to
/// `a2a serve`: given to it, they are refused rather than ignored (`--bearer` there used to
/// start an open server whose author believed it guarded).
const CLIENT_ONLY: [(&str, &str); 13] = [
    ("bearer", "--bearer (the server's is --bearer-token)"),
    ("api_key_header", "--api-key-header"),
    ("headers", "--header"),
    ("a2a_version", "--a2a-version"),
    ("transport", "--transport"),
    ("timeout", "--timeout"),
    ("connect_timeout", "--connect-timeout"),
    ("stream_idle_timeout", "--stream-idle-timeout"),
    ("extensions", "--extension (the server's is --require-extension)"),
    ("json", "--json (the server's is --log-format json)"),
    ("ca_cert", "--ca-cert"),
    ("client_cert", "--client-cert"),
    ("client_key", "--client-key"),
];

/// Exit code 2 (said on stderr) when one of [`CLIENT_ONLY`] but `taken` was given to `command`
/// on the command line.
fn refuse_client_options(given: &clap::ArgMatches, command: &str, taken: &[&str]) -> Result<(), ExitCode> {
    for (id, flag) in CLIENT_ONLY.iter().filter(|(id, _)| !taken.contains(id)) {
        if given.value_source(id) == Some(ValueSource::CommandLine) {
            eprintln!("error: {flag} is an option of the client commands, not of a2a {command}");
            return Err(ExitCode::from(2));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // bench takes --json and the credentials; the others are the client commands' (it sends
    // raw requests).
    if let Some(("bench", given)) = matches.subcommand()
        && let Err(code) = refuse_client_options(given, "bench", &["json", "bearer", "api_key_header", "headers"])
    {
        return code;
    }
    if let (Some(("serve", given)), Command::Serve(args)) = (matches.subcommand(), &mut cli.command) {
        if let Err(code) = refuse_client_options(given, "serve", &[]) {
            return code;
        }
        // Leases are how instances sharing a PostgreSQL store take over each other's tasks; on
        // another store they would be ignored, which a flag must not be.
        let shared = args.store.starts_with("postgres:") || args.store.starts_with("postgresql:");
        for (id, flag) in [("lease_ms", "--lease-ms"), ("reap_interval_ms", "--reap-interval-ms")] {
            if !shared && given.value_source(id) == Some(ValueSource::CommandLine) {
                let store = a2a_native::store::redacted(&args.store);
                eprintln!("error: {flag} applies to a PostgreSQL store shared by several instances, not to {store}");
                return ExitCode::from(2);
            }
        }
        // The client's A2A_API_KEY reaches `serve --api-key` (one argument for both): a key
        // exported for talking to other agents would lock this server with it. The server
        // reads A2A_SERVE_API_KEY only.
        if given.value_source("api_key") == Some(ValueSource::EnvVariable) {
            args.security.api_key = std::env::var("A2A_SERVE_API_KEY").into_iter().collect();
        }
    }
    let conn = cli.conn;
    match cli.command {
        Command::Serve(args) => {
            let _telemetry = telemetry::init(a2a_native::log_forward::DEFAULT_FILTER, args.log_format);
            run_async("a2a serve", serve::run(*args))
        }
        Command::Bench(mut args) => {
            args.json = conn.json;
            match talk::request_headers(&conn) {
                Ok(headers) => run_async("a2a bench", bench::run(args, headers)),
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Card { url, extended, verify } => talk_async(talk::card(&url, extended, verify.as_deref(), &conn)),
        Command::Send(args) => talk_async(talk::send(args, &conn)),
        Command::Get { url, task_id, history } => talk_async(talk::get(&url, task_id, history, &conn)),
        Command::Cancel { url, task_id } => talk_async(talk::cancel(&url, task_id, &conn)),
        Command::List(args) => talk_async(talk::list(args, &conn)),
        Command::Subscribe { url, task_id } => talk_async(talk::subscribe(&url, task_id, &conn)),
        Command::Push(command) => talk_async(talk::push(command, &conn)),
        Command::Validate { type_name, file, strict } => {
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
            validate(&type_name, &bytes, strict)
        }
    }
}

/// `a2a validate`: the canonical form on stdout. Members the type does not define are named on
/// stderr (a reader ignores them, so a misspelt field is otherwise lost without a word), beside
/// a refusal too, where a misspelling is the likely cause; `strict` makes them an error.
fn validate(type_name: &str, bytes: &[u8], strict: bool) -> ExitCode {
    let value: serde_json::Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{}", a2a_native::A2AError::from(e));
            return ExitCode::FAILURE;
        }
    };
    let unknown = dynamic::unknown_fields(type_name, &value);
    let twice = a2a_native::model::duplicates::duplicate_keys(bytes);
    let level = if strict { "error" } else { "warning" };
    for path in &unknown {
        eprintln!("{level}: {type_name} has no field `{path}`; a reader ignores it (a misspelling?)");
    }
    for path in &twice {
        eprintln!("{level}: `{path}` is given twice; the last one counts here, but readers differ");
    }
    match dynamic::normalize(type_name, value) {
        Ok(_) if strict && !(unknown.is_empty() && twice.is_empty()) => ExitCode::FAILURE,
        Ok(canonical) => {
            outln!("{}", serde_json::to_string_pretty(&canonical).expect("JSON value"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
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
            eprintln!("{what}: {}", print::safe(&e));
            ExitCode::FAILURE
        }
    }
}

/// Runs a client command: an A2A error prints as `error: NameError (code): message` (and as
/// a JSON object on stdout with --json is left to the caller's exit code) and exits 1.
fn talk_async(work: impl std::future::Future<Output = Result<(), a2a_native::A2AError>>) -> ExitCode {
    init_client_tracing();
    run_async("error", async { work.await.map_err(|e| e.to_string()) })
}

/// Client commands log only warnings unless RUST_LOG says otherwise.
fn init_client_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}
