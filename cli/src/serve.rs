//! `a2a serve`: runs a built-in agent on both HTTP bindings, with the chosen task store.

use crate::agents;
use crate::security::SecurityArgs;
use a2a_native::executor::AgentExecutor;
use a2a_native::model::{self, AgentCard};
use a2a_native::push::PrivateTargets;
use a2a_native::server::{RequestHandler, Server, ServerConfig, Stores};
use clap::Args;
use serde_json::json;
use std::sync::Arc;

#[derive(Args)]
pub struct ServeArgs {
    /// Run the echo agent (the default): each message becomes a task whose artifact echoes it.
    #[arg(long, conflicts_with = "conformance")]
    echo: bool,
    /// Run the agent the official A2A TCK scripts by messageId prefix (tck-complete-task, ...).
    /// Implies --allow-private-webhooks (every private address, unless a list is given), since the TCK's webhook receiver is on loopback.
    #[arg(long)]
    conformance: bool,
    /// Task store: `memory`, `sqlite:PATH` or a `postgres://` URL.
    #[arg(long, default_value = "sqlite:a2a-tasks.db")]
    pub store: String,
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    #[arg(long, default_value_t = 41241)]
    port: u16,
    /// The base URL the agent card advertises (default: http://HOST:PORT).
    #[arg(long)]
    public_url: Option<String>,
    /// Declare the 0.3 JSON-RPC interface in the card, with the 0.3 fields old clients read
    /// (the default for --echo; the --conformance card is strictly 1.0 unless this is given).
    /// 0.3 requests are answered either way.
    #[arg(long)]
    advertise_v03: bool,
    /// Serve the card in strict A2A 1.0 form: no 0.3 fields beside the 1.0 ones, for 1.0
    /// clients that refuse unknown fields (0.3 requests are still answered).
    #[arg(long)]
    strict_v1_card: bool,
    /// Let web pages of this origin call the agent across origins (CORS), as a browser
    /// names it: `https://app.example.com`, `http://localhost:5173`; `*` for any (repeatable).
    /// Without it, browsers block pages of other origins.
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    cors_origins: Vec<String>,
    /// Turn capabilities off in the card (comma-separated: streaming, push, extended-card);
    /// the server then answers those operations with the spec's "not supported" errors.
    #[arg(long, value_delimiter = ',', value_parser = ["streaming", "push", "extended-card"])]
    disable: Vec<String>,
    /// Declare an extension as required: requests that do not ask for it (A2A-Extensions)
    /// get ExtensionSupportRequired (-32008).
    #[arg(long, value_name = "URI")]
    require_extension: Vec<String>,
    /// With a store several instances share (a postgres:// URL): how long this instance's hold on a
    /// task it runs lasts unless renewed (it renews every third of it). A task whose instance
    /// stops renewing is ended FAILED by any instance's reaper.
    #[arg(long, value_name = "MS", default_value_t = 6000, value_parser = clap::value_parser!(u64).range(30..))]
    lease_ms: u64,
    /// How often this instance looks for tasks whose instance was lost (their lease expired).
    #[arg(long, value_name = "MS", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(10..))]
    reap_interval_ms: u64,
    /// With --store memory: tasks kept at most (default 10000; at the cap the oldest finished
    /// task makes room, and with none finished a new task is refused, Unavailable).
    #[arg(long, value_name = "N")]
    max_tasks: Option<usize>,
    /// With --store memory: seconds a finished task stays readable (default 3600).
    #[arg(long, value_name = "SECS")]
    task_retention: Option<f64>,
    /// With --store memory: about how many bytes of task contents are kept at most (default
    /// 268435456, 256 MiB; the oldest finished tasks make room, else a save is refused).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    max_store_bytes: Option<u64>,
    /// Largest request body accepted, in bytes: 413 (JSON-RPC -32600) beyond it (default 8388608).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    max_body_bytes: Option<u64>,
    /// Bytes that request bodies larger than 64 KiB may hold at once, server-wide, until their
    /// requests are answered (a body can grow about 20-fold when parsed): beyond it 503 with
    /// Retry-After; buffered answers not yet sent have a budget of the same size, past which a
    /// read gets 503 (default 67108864, and never less than --max-body-bytes).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    max_body_bytes_in_flight: Option<u64>,
    /// About how many bytes of the client's messages one task may hold: a message that would
    /// take a task past it is refused (-32600 / 400), so no client grows one task without end;
    /// the agent's output does not count (default 67108864).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    max_task_bytes: Option<u64>,
    /// Most parts in one message: InvalidParams beyond it (default 256).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_parts_per_message: Option<u64>,
    /// Most history messages any read returns; a larger or absent historyLength is capped
    /// (default 1000).
    #[arg(long, value_name = "N")]
    max_history_length: Option<u64>,
    /// Most streams open at once on one task (SendStreamingMessage and SubscribeToTask): the
    /// next is refused with Unavailable, 503 (default 64).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_streams_per_task: Option<u64>,
    /// Largest request head (request line and headers) accepted, in bytes: 431 beyond it
    /// (default 65536, at least 8192).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(8192..))]
    max_header_bytes: Option<u64>,
    /// Seconds a client may take to send its first byte or finish its TLS handshake, and on
    /// HTTP/1 to send a request head once begun: 408 and the connection closed beyond it
    /// (default 30).
    #[arg(long, value_name = "SECS")]
    header_read_timeout: Option<f64>,
    /// Seconds a request body may take to arrive: 408 and the connection closed beyond it
    /// (default 30).
    #[arg(long, value_name = "SECS")]
    body_read_timeout: Option<f64>,
    /// Seconds a connection may stay open with no request in flight (an open stream is one)
    /// before it is closed (HTTP/2: GOAWAY), or wait for a client that stopped reading before
    /// it is dropped (default 120).
    #[arg(long, value_name = "SECS")]
    idle_timeout: Option<f64>,
    /// Seconds running tasks get to finish when the server stops gracefully (SIGTERM, Ctrl-C)
    /// before they end FAILED (default 1). A second signal stops at once.
    #[arg(long, value_name = "SECS")]
    shutdown_grace: Option<f64>,
    /// Most requests one HTTP/2 connection may have open at once (default 100; more are
    /// refused with REFUSED_STREAM, which clients retry).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_streams_per_connection: Option<u32>,
    /// Most connections served at once; at the cap the server stops accepting until one
    /// closes, and new clients wait in the listen backlog (default 4096).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_connections: Option<u64>,
    /// Attempts per push notification, the first included: a delivery that fails (a connection
    /// error, a timeout, a 5xx or 429) is retried until this many were made (default 4; 1: no
    /// retry).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    push_max_attempts: Option<u32>,
    /// Seconds one push delivery attempt may take, connecting included (default 10).
    #[arg(long, value_name = "SECS")]
    push_timeout: Option<f64>,
    /// Seconds before the first push retry (default 0.5); each wait doubles up to
    /// --push-max-backoff (default 8). The defaults retry for about 3.5 s in all: raise them for
    /// webhooks that may be down longer, e.g. --push-max-attempts 10 retries for about 45 s.
    #[arg(long, value_name = "SECS")]
    push_initial_backoff: Option<f64>,
    /// Longest wait between two push attempts, in seconds (default 8).
    #[arg(long, value_name = "SECS")]
    push_max_backoff: Option<f64>,
    /// Serve Prometheus/OpenMetrics text at http://ADDR/metrics (e.g. 127.0.0.1:9464): request
    /// counts and latency by binding, method and outcome, open streams, task states, events
    /// applied, push outcomes, store latency. Its own address, so it is never public by accident.
    #[arg(long, value_name = "ADDR")]
    metrics: Option<String>,
    /// Logs on stderr as text or as JSON lines (with the request's span fields). Traces are
    /// exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set.
    #[arg(long, value_enum, default_value_t)]
    pub log_format: crate::telemetry::LogFormat,
    #[command(flatten)]
    pub security: SecurityArgs,
}

/// Lets the process hold as many descriptors as its hard limit allows, as Go's runtime and most
/// servers do: each connection holds one (up to --max-connections, default 4096), and the usual
/// soft limit of 1024 would refuse connections (EMFILE) long before the cap.
fn raise_descriptor_limit() {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: plain calls on a local struct of the type they take.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 || limit.rlim_cur >= limit.rlim_max {
            return;
        }
        let soft = limit.rlim_cur;
        limit.rlim_cur = limit.rlim_max;
        // Refused where the hard limit is more than the kernel allows (macOS); the soft one stays.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } == 0 {
            tracing::debug!(from = soft, to = limit.rlim_max, "open file limit raised");
        }
    }
}

/// A write past a file-size limit (`ulimit -f`, systemd's `LimitFSIZE=`) fails with EFBIG,
/// which the store reports as a failed write (Unavailable), instead of killing the process
/// with SIGXFSZ at once, as it does by default: then every restart died again at its next write.
fn ignore_file_size_signal() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to ignore, before any thread of ours cares.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

pub async fn run(args: ServeArgs) -> Result<(), String> {
    ignore_file_size_signal();
    let public_url = match &args.public_url {
        Some(url) => Some(a2a_native::server::host::public_base(url, "--public-url").map_err(|e| e.message)?),
        None => None,
    };
    let max_bytes = args.max_store_bytes.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let memory = a2a_native::server::host::memory_limits(&args.store, args.max_tasks, args.task_retention, max_bytes)
        .map_err(|e| format!("--max-tasks / --task-retention / --max-store-bytes: {}", e.message))?;
    let (agent, name): (Arc<dyn AgentExecutor>, &str) = if args.conformance {
        (Arc::new(agents::conformance::Conformance), "a2a-native conformance agent")
    } else {
        (Arc::new(agents::echo::Echo), "a2a-native echo agent")
    };
    let mut config = ServerConfig {
        lease: std::time::Duration::from_millis(args.lease_ms),
        reap_interval: std::time::Duration::from_millis(args.reap_interval_ms),
        ..ServerConfig::default()
    };
    let bytes = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    if let Some(n) = args.max_body_bytes {
        config.limits.max_body_bytes = bytes(n);
    }
    if let Some(n) = args.max_body_bytes_in_flight {
        if bytes(n) < config.limits.max_body_bytes {
            return Err(format!(
                "--max-body-bytes-in-flight: at least --max-body-bytes ({} bytes): one largest body must fit",
                config.limits.max_body_bytes
            ));
        }
        config.limits.max_body_bytes_in_flight = bytes(n);
    }
    if let Some(n) = args.max_task_bytes {
        config.limits.max_task_bytes = bytes(n);
    }
    if let Some(n) = args.max_header_bytes {
        config.limits.max_header_bytes = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(n) = args.max_parts_per_message {
        config.limits.max_parts_per_message = bytes(n);
    }
    if let Some(n) = args.max_history_length {
        config.limits.max_history_length = bytes(n);
    }
    if let Some(n) = args.max_streams_per_task {
        config.limits.max_streams_per_task = bytes(n);
    }
    let seconds = |secs, flag| a2a_native::server::host::positive_seconds(secs, flag).map_err(|e| e.message);
    if let Some(secs) = args.header_read_timeout {
        config.limits.header_read_timeout = seconds(secs, "--header-read-timeout")?;
    }
    if let Some(secs) = args.body_read_timeout {
        config.limits.body_read_timeout = seconds(secs, "--body-read-timeout")?;
    }
    if let Some(secs) = args.idle_timeout {
        config.limits.idle_timeout = seconds(secs, "--idle-timeout")?;
    }
    if let Some(n) = args.max_streams_per_connection {
        config.limits.max_streams_per_connection = n;
    }
    if let Some(secs) = args.shutdown_grace {
        config.shutdown_grace = a2a_native::error::seconds(secs, "--shutdown-grace").map_err(|e| e.message)?;
    }
    if let Some(n) = args.max_connections {
        config.limits.max_connections = usize::try_from(n).unwrap_or(usize::MAX);
    }
    let push = a2a_native::server::host::PushSpec {
        max_attempts: args.push_max_attempts,
        timeout: args.push_timeout,
        initial_backoff: args.push_initial_backoff,
        max_backoff: args.push_max_backoff,
    };
    // Named as the flags: `maxBackoff` is `--push-max-backoff`.
    let flag = |name: &str| {
        let kebab: String = name
            .chars()
            .flat_map(|c| [(c.is_uppercase()).then_some('-'), Some(c.to_ascii_lowercase())])
            .flatten()
            .collect();
        format!("--push-{kebab}")
    };
    push.apply(&mut config.push, flag).map_err(|e| e.message)?;
    // Checked before the store opens and the port is bound, as the other flags are.
    let cors = a2a_native::server::cors::Cors::new(&args.cors_origins).map_err(|e| {
        format!("--cors-origin: {}", e.violations.first().map_or(e.message.as_str(), |v| &v.description))
    })?;
    raise_descriptor_limit();

    let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
        .await
        .map_err(|e| format!("cannot listen on {}:{}: {e}", args.host, args.port))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let scheme = if args.security.tls_on() { "https" } else { "http" };
    let unreachable_card = public_url.is_none() && addr.ip().is_unspecified();
    let base = public_url.unwrap_or_else(|| format!("{scheme}://{addr}"));
    let security = args.security.config(base.trim_end_matches('/'))?;
    let tls = security.tls_config().map_err(|e| e.message)?;
    security.configure(&mut config);
    // The TCK's webhook receiver is on loopback; an explicit --allow-private-webhooks list wins.
    if args.conformance && args.security.allow_private_webhooks.is_none() {
        config.push.allow_private_targets = PrivateTargets::All;
    }
    // The conformance card is strictly 1.0 (the TCK validates it against the 1.0 schema, which
    // forbids the 0.3 fields a 0.3 interface would add); 0.3 requests are still answered.
    let v03 = !args.conformance || args.advertise_v03;
    let shape = CardShape { v03, disabled: &args.disable, required: &args.require_extension };
    let mut public = card(name, base.trim_end_matches('/'), false, &shape)?;
    let mut extended = card(name, base.trim_end_matches('/'), true, &shape)?;
    security.apply_to_card(&mut public).map_err(|e| e.message)?;
    security.apply_to_card(&mut extended).map_err(|e| e.message)?;
    // Last, after the bind and every check of the flags: a refused start (a port in use, a bad
    // flag) leaves no store file behind, and holds no SQLite file's lock meanwhile.
    let stores = Stores::open_with(&args.store, memory).await.map_err(|e| e.message)?;
    let handler = security.secure(RequestHandler::new(agent, public, stores, config).with_extended_card(extended));

    let mut server = Server::new(Arc::new(handler)).strict_v1_card(args.strict_v1_card).cors(cors);
    if let Some(tls) = tls {
        server = server.tls(tls);
    }
    // Bound before the announcement, so a port taken fails the start before it is announced.
    let metrics = match &args.metrics {
        Some(addr) => Some(serve_metrics(addr, server.metrics()).await?),
        None => None,
    };
    // Before the announcement: whoever reads it may send SIGTERM at once.
    let log = args.log_format;
    let shutdown = shutdown_signal(log);
    log.say(
        "INFO",
        &format!(
            "{name} serving A2A 1.0 (and 0.3) at {base}/ (card: {base}/.well-known/agent-card.json, store: {})",
            a2a_native::store::redacted(&args.store)
        ),
    );
    if unreachable_card {
        log.say(
            "WARN",
            &format!(
                "listening on every address without --public-url: the card names {addr}, which other machines \
                 cannot reach; give --public-url"
            ),
        );
    }
    if let Some((_, bound)) = &metrics {
        log.say("INFO", &format!("metrics at http://{bound}{}", a2a_native::server::metrics_endpoint::METRICS_PATH));
    }
    server.serve(listener, shutdown).await.map_err(|e| e.to_string())
}

/// Serves the metrics on `addr` in the background until the returned sender is dropped; the
/// bound address.
async fn serve_metrics(
    addr: &str,
    metrics: Arc<a2a_native::metrics::Metrics>,
) -> Result<(tokio::sync::oneshot::Sender<()>, std::net::SocketAddr), String> {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let bound = a2a_native::server::start_metrics(addr, metrics, async move {
        let _ = stopped.await;
    })
    .await
    .map_err(|e| format!("--metrics: {}", e.message))?;
    Ok((stop, bound))
}

/// The public card: JSON-RPC 1.0, HTTP+JSON, gRPC (at the base URL's host:port), then JSON-RPC
/// 0.3 on the JSON-RPC URL.
/// What the command line changes in the built-in card.
struct CardShape<'a> {
    v03: bool,
    disabled: &'a [String],
    required: &'a [String],
}

fn card(name: &str, base: &str, extended: bool, shape: &CardShape) -> Result<AgentCard, String> {
    let v03 = shape.v03;
    let on = |capability: &str| !shape.disabled.iter().any(|d| d == capability);
    let extensions: Vec<_> = shape
        .required
        .iter()
        .map(|uri| json!({"uri": uri, "description": "required by the command line", "required": true}))
        .collect();
    let mut capabilities = json!({
        "streaming": on("streaming"),
        "pushNotifications": on("push"),
        "extendedAgentCard": on("extended-card"),
    });
    if !extensions.is_empty() {
        capabilities["extensions"] = json!(extensions);
    }
    let mut interfaces = vec![
        json!({"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}),
        json!({"url": base, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}),
        json!({"url": a2a_native::grpc::target_of(base), "protocolBinding": "GRPC", "protocolVersion": "1.0"}),
    ];
    if v03 {
        interfaces.push(json!({"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}));
    }
    let mut skills = vec![json!({
        "id": "echo", "name": "Echo", "description": "Answers every message (scripted by messageId prefix in conformance mode).",
        "tags": ["echo", "conformance"], "examples": ["hello"]
    })];
    if extended {
        skills.push(json!({
            "id": "extended", "name": "Extended skill", "description": "Only listed on the extended agent card.",
            "tags": ["extended"]
        }));
    }
    let card = json!({
        "name": name,
        "description": "A built-in agent of a2a-native, the Rust A2A implementation.",
        "version": env!("CARGO_PKG_VERSION"),
        "supportedInterfaces": interfaces,
        "provider": {"organization": "a2a-native", "url": "https://example.invalid/a2a-native"},
        "capabilities": capabilities,
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": skills
    });
    model::parse_value(card).map_err(|e| format!("built-in card: {e}"))
}

/// Ctrl-C or SIGTERM: stop accepting, let in-flight requests finish, close streams. The handlers
/// are installed by this call, not when the future is first polled: a signal that comes before
/// the server's loop first polls it must still stop the server gracefully (the default action
/// would kill it).
fn shutdown_signal(log: crate::telemetry::LogFormat) -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let (mut term, mut int) = {
        use tokio::signal::unix::{SignalKind, signal};
        (signal(SignalKind::terminate()).ok(), signal(SignalKind::interrupt()).ok())
    };
    async move {
        #[cfg(unix)]
        {
            /// A signal that could not be installed never arrives.
            async fn recv(signal: &mut Option<tokio::signal::unix::Signal>) {
                match signal {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                () = recv(&mut term) => {}
                () = recv(&mut int) => {}
            }
            // A second signal stops at once, as operators expect of a second Ctrl-C when the
            // in-flight work takes longer than they will wait.
            tokio::spawn(async move {
                tokio::select! {
                    () = recv(&mut term) => {}
                    () = recv(&mut int) => {}
                }
                log.say("WARN", "a second signal: stopping now, without waiting for in-flight requests");
                std::process::exit(130);
            });
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        log.say("INFO", "shutting down: finishing in-flight requests (a second signal stops at once)");
    }
}
