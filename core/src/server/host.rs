//! What a binding's `AgentServer` is made of, decided once here: the options (one strict JSON
//! form, read the same in every language: an unknown or mistyped option is refused, naming
//! it), and the running server (start, stop, address), safe against concurrent calls.
//!
//! Options, camelCase (snake_case accepted too):
//! ```json
//! {"store": "sqlite:agent.db",
//!  "bearerTokens": {"secret": "alice"},
//!  "extendedCard": {...},
//!  "limits": {"maxBodyBytes": 8388608, "maxPartsPerMessage": 256, "maxHistoryLength": 1000,
//!             "maxStreamsPerTask": 64, "blockingTimeout": 600},
//!  "security": {... see SecuritySpec ...},
//!  "push": {"maxAttempts": 8, "timeout": 10, "initialBackoff": 0.5, "maxBackoff": 8},
//!  "metricsAddress": "127.0.0.1:9464"}
//! ```
//! `bearerTokens` may also be a list of `[token, principal]` pairs, or of tokens (each then
//! authenticates the principal `bearer-token`). `blockingTimeout` is in seconds.

use super::embedded;
use super::security::SecuritySpec;
use super::{ServerConfig, Stores};
use crate::error::{A2AError, ErrorKind, Result};
use crate::executor::AgentExecutor;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

pub use crate::error::{positive_seconds, seconds};

/// A hosted server's options (see the module's doc).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerOptions {
    /// `memory` (the default), `sqlite:PATH`, a `postgres://` URL.
    #[serde(default)]
    pub store: Option<String>,
    #[serde(default, alias = "bearer_tokens")]
    pub bearer_tokens: Option<BearerTokens>,
    #[serde(default, alias = "extended_card")]
    pub extended_card: Option<Value>,
    #[serde(default)]
    pub limits: LimitsSpec,
    #[serde(default)]
    pub security: SecuritySpec,
    /// How push notifications are delivered: attempts and their timing.
    #[serde(default)]
    pub push: PushSpec,
    /// Serve the card in strict A2A 1.0 form, without the 0.3 fields (a 1.0-only client that
    /// refuses unknown fields can read it; an old 0.3 client cannot).
    #[serde(default, alias = "strict_v1_card")]
    pub strict_v1_card: bool,
    /// The `memory` store's bounds: tasks kept at most (default 10,000; the oldest finished
    /// goes first, and with none finished a new task is refused, Unavailable) ...
    #[serde(default, alias = "max_tasks")]
    pub max_tasks: Option<usize>,
    /// ... and how long a finished task stays readable, in seconds (default 3600).
    #[serde(default, alias = "task_retention")]
    pub task_retention: Option<f64>,
    /// ... and about how many bytes of task contents it keeps at most (default 256 MiB; the
    /// oldest finished tasks make room, and a save that only live tasks would leave no room
    /// for is refused).
    #[serde(default, alias = "max_store_bytes")]
    pub max_store_bytes: Option<usize>,
    /// `host:port` to serve Prometheus/OpenMetrics text at `/metrics` on (port 0: any free
    /// port; see [`HostedServer::metrics_url`]). A listener of its own, so it is never public
    /// by accident. Absent: metrics are recorded but not served.
    #[serde(default, alias = "metrics_address")]
    pub metrics_address: Option<String>,
    /// The URL clients reach the server at (behind a proxy, in a container: an http(s) URL,
    /// perhaps with a path), which the card's interfaces name, and push notification tokens
    /// as their issuer. Absent: the bound address.
    #[serde(default, alias = "public_url")]
    pub public_url: Option<String>,
    /// Extension methods the agent's executor answers (`call_method`), each tied to an
    /// extension the card declares.
    #[serde(default)]
    pub methods: Vec<crate::methods::MethodSpec>,
    /// Profile extensions (URIs the card declares) whose rules the executor checks on each
    /// incoming message (`check_message`).
    #[serde(default, alias = "profile_checks")]
    pub profile_checks: Vec<String>,
    /// Origins whose web pages may call the agent (CORS): `https://app.example.com`, or `*`
    /// for any. None (the default): no cross-origin calls.
    #[serde(default, alias = "cors_origins")]
    pub cors_origins: Vec<String>,
}

/// A public URL (`field`, as the caller names it) without its trailing slash, checked: an
/// absolute http(s) URL with no query or fragment.
pub fn public_base(given: &str, field: &str) -> Result<String> {
    let bad = |why: &str| A2AError::invalid_field(field, format!("{given:?} {why}"));
    let url: http::Uri = given.parse().map_err(|e| bad(&format!("is not a URL: {e}")))?;
    if !matches!(url.scheme_str(), Some("http" | "https")) || url.host().is_none_or(str::is_empty) {
        return Err(bad("is not an http(s) URL with a host"));
    }
    if url.query().is_some() || given.contains('#') {
        return Err(bad("has a query or fragment"));
    }
    Ok(given.trim_end_matches('/').to_owned())
}

/// The forms `bearerTokens` takes.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    untagged,
    expecting = "an object of token to principal, a list of [token, principal] pairs, or a list of tokens"
)]
pub enum BearerTokens {
    /// token -> principal name.
    Map(BTreeMap<String, String>),
    /// `[token, principal]` pairs.
    Pairs(Vec<(String, String)>),
    /// Tokens that all authenticate the principal `bearer-token`.
    Tokens(Vec<String>),
}

/// [`super::Limits`], every field optional (absent: core's default).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LimitsSpec {
    #[serde(default, alias = "max_body_bytes")]
    pub max_body_bytes: Option<usize>,
    #[serde(default, alias = "max_body_bytes_in_flight")]
    pub max_body_bytes_in_flight: Option<usize>,
    #[serde(default, alias = "max_parts_per_message")]
    pub max_parts_per_message: Option<usize>,
    #[serde(default, alias = "max_history_length")]
    pub max_history_length: Option<usize>,
    #[serde(default, alias = "max_task_bytes")]
    pub max_task_bytes: Option<usize>,
    #[serde(default, alias = "max_streams_per_task")]
    pub max_streams_per_task: Option<usize>,
    /// Seconds.
    #[serde(default, alias = "blocking_timeout")]
    pub blocking_timeout: Option<f64>,
    #[serde(default, alias = "max_header_bytes")]
    pub max_header_bytes: Option<usize>,
    /// Seconds.
    #[serde(default, alias = "header_read_timeout")]
    pub header_read_timeout: Option<f64>,
    /// Seconds.
    #[serde(default, alias = "body_read_timeout")]
    pub body_read_timeout: Option<f64>,
    /// Seconds.
    #[serde(default, alias = "idle_timeout")]
    pub idle_timeout: Option<f64>,
    /// Seconds.
    #[serde(default, alias = "executor_timeout")]
    pub executor_timeout: Option<f64>,
    #[serde(default, alias = "max_connections")]
    pub max_connections: Option<usize>,
    /// Seconds running executions get to finish at a graceful stop before their tasks end
    /// FAILED (default 1).
    #[serde(default, alias = "shutdown_grace")]
    pub shutdown_grace: Option<f64>,
    /// Most requests one HTTP/2 connection may have open at once (default 100).
    #[serde(default, alias = "max_streams_per_connection")]
    pub max_streams_per_connection: Option<u32>,
}

/// [`crate::push::PushSenderConfig`]'s delivery settings, every field optional (absent:
/// core's default). Seconds for durations. A delivery that fails (a connection error, a timeout,
/// a 5xx or 429) is tried again after about `initialBackoff` (or the answer's `Retry-After`),
/// each wait doubling up to `maxBackoff`, until `maxAttempts` attempts were made: by default 4
/// attempts over about 3.5 s. Raise them for webhooks that may be down for longer (a redeploy).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PushSpec {
    /// Attempts per notification, the first included (default 4; 1: no retry).
    #[serde(default, alias = "max_attempts")]
    pub max_attempts: Option<u32>,
    /// Seconds one attempt may take, connecting included (default 10).
    #[serde(default)]
    pub timeout: Option<f64>,
    /// Seconds before the first retry (default 0.5).
    #[serde(default, alias = "initial_backoff")]
    pub initial_backoff: Option<f64>,
    /// Longest wait between two attempts, in seconds (default 8).
    #[serde(default, alias = "max_backoff")]
    pub max_backoff: Option<f64>,
}

impl PushSpec {
    /// Sets the given settings on `push`; InvalidParams when one is out of range, naming it as
    /// `field` spells a member's name (`push.maxAttempts` in options, a flag in `a2a serve`).
    pub fn apply(&self, push: &mut crate::push::PushSenderConfig, field: impl Fn(&str) -> String) -> Result<()> {
        if let Some(n) = self.max_attempts {
            if n == 0 {
                return Err(A2AError::invalid_field(field("maxAttempts"), "at least 1: the first attempt counts"));
            }
            push.max_attempts = n;
        }
        if let Some(secs) = self.timeout {
            push.timeout = positive_seconds(secs, &field("timeout"))?;
        }
        if let Some(secs) = self.initial_backoff {
            push.initial_backoff = positive_seconds(secs, &field("initialBackoff"))?;
        }
        if let Some(secs) = self.max_backoff {
            push.max_backoff = positive_seconds(secs, &field("maxBackoff"))?;
        }
        if push.max_backoff < push.initial_backoff {
            let why = format!("at least the first retry's wait ({} s)", push.initial_backoff.as_secs_f64());
            return Err(A2AError::invalid_field(field("maxBackoff"), why));
        }
        Ok(())
    }
}

impl ServerOptions {
    /// Reads the JSON form; InvalidParams naming what is wrong (an unknown key included).
    pub fn from_value(value: Value) -> Result<Self> {
        let mut options: Self = A2AError::from_options(value)?;
        let value_given = options.bearer_tokens.is_some();
        // One place for the tokens: the security's.
        let tokens = match options.bearer_tokens.take() {
            None => Vec::new(),
            Some(BearerTokens::Map(m)) => m.into_iter().collect(),
            Some(BearerTokens::Pairs(p)) => p,
            Some(BearerTokens::Tokens(t)) => t.into_iter().map(|t| (t, "bearer-token".to_owned())).collect(),
        };
        if value_given && let Some(why) = super::security::credentials_problem(tokens.iter().map(|(t, _)| t.as_str())) {
            return Err(A2AError::invalid_field("bearerTokens", why));
        }
        options.security.bearer_tokens.extend(tokens);
        options.config()?;
        options.public_base()?;
        options.metrics_address()?;
        super::cors::Cors::new(&options.cors_origins)?;
        Ok(options)
    }

    /// `metricsAddress`, checked as `host:port` (a port number, a host before it): a typo is
    /// refused when the server is made, not at its start.
    pub fn metrics_address(&self) -> Result<Option<&str>> {
        let Some(at) = self.metrics_address.as_deref() else { return Ok(None) };
        let well_formed = at.rsplit_once(':').is_some_and(|(host, port)| {
            let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
            !host.is_empty() && !host.contains(['/', ' ']) && port.parse::<u16>().is_ok()
        });
        if !well_formed {
            return Err(A2AError::invalid_field(
                "metricsAddress",
                format!("{at:?} is not host:port (e.g. 127.0.0.1:9464)"),
            ));
        }
        Ok(Some(at))
    }

    /// `publicUrl` without a trailing slash, checked: an absolute http(s) URL with no query or
    /// fragment. `None` when not given.
    pub fn public_base(&self) -> Result<Option<String>> {
        self.public_url.as_deref().map(|given| public_base(given, "publicUrl")).transpose()
    }

    /// The store spec (`memory` when none was given).
    pub fn store(&self) -> &str {
        self.store.as_deref().unwrap_or("memory")
    }

    /// The memory store's bounds; refused with another store (which keeps tasks until they
    /// are deleted), so a setting is never silently ignored.
    pub fn memory_limits(&self) -> Result<crate::store::MemoryLimits> {
        memory_limits(self.store(), self.max_tasks, self.task_retention, self.max_store_bytes)
    }

    /// The server settings the limits describe.
    pub fn config(&self) -> Result<ServerConfig> {
        let mut config = ServerConfig {
            methods: self.methods.clone(),
            profile_checks: self.profile_checks.clone(),
            ..Default::default()
        };
        let (l, s) = (&mut config.limits, &self.limits);
        if let Some(n) = s.max_body_bytes {
            if n == 0 {
                return Err(A2AError::invalid_field("limits.maxBodyBytes", "at least 1 byte: every call has a body"));
            }
            l.max_body_bytes = n;
        }
        if let Some(n) = s.max_body_bytes_in_flight {
            if n < l.max_body_bytes {
                let why =
                    format!("at least limits.maxBodyBytes ({} bytes): one largest body must fit", l.max_body_bytes);
                return Err(A2AError::invalid_field("limits.maxBodyBytesInFlight", why));
            }
            l.max_body_bytes_in_flight = n;
        }
        if let Some(n) = s.max_parts_per_message {
            if n == 0 {
                return Err(A2AError::invalid_field("limits.maxPartsPerMessage", "at least 1: a message has parts"));
            }
            l.max_parts_per_message = n;
        }
        l.max_history_length = s.max_history_length.unwrap_or(l.max_history_length);
        if let Some(n) = s.max_task_bytes {
            if n == 0 {
                return Err(A2AError::invalid_field("limits.maxTaskBytes", "at least 1 byte"));
            }
            l.max_task_bytes = n;
        }
        l.max_streams_per_task = s.max_streams_per_task.unwrap_or(l.max_streams_per_task);
        if let Some(secs) = s.blocking_timeout {
            l.blocking_timeout = seconds(secs, "limits.blockingTimeout")?;
        }
        if let Some(n) = s.max_header_bytes {
            if n < super::MIN_HEADER_BYTES {
                let why = format!("at least {} bytes", super::MIN_HEADER_BYTES);
                return Err(A2AError::invalid_field("limits.maxHeaderBytes", why));
            }
            l.max_header_bytes = n;
        }
        if let Some(secs) = s.header_read_timeout {
            l.header_read_timeout = positive_seconds(secs, "limits.headerReadTimeout")?;
        }
        if let Some(secs) = s.body_read_timeout {
            l.body_read_timeout = positive_seconds(secs, "limits.bodyReadTimeout")?;
        }
        if let Some(secs) = s.idle_timeout {
            l.idle_timeout = positive_seconds(secs, "limits.idleTimeout")?;
        }
        if let Some(secs) = s.executor_timeout {
            l.executor_timeout = Some(positive_seconds(secs, "limits.executorTimeout")?);
        }
        if let Some(n) = s.max_connections {
            if n == 0 {
                return Err(A2AError::invalid_field("limits.maxConnections", "at least 1"));
            }
            l.max_connections = n;
        }
        if let Some(n) = s.max_streams_per_connection {
            if n == 0 {
                return Err(A2AError::invalid_field("limits.maxStreamsPerConnection", "at least 1"));
            }
            l.max_streams_per_connection = n;
        }
        if let Some(secs) = s.shutdown_grace {
            config.shutdown_grace = seconds(secs, "limits.shutdownGrace")?;
        }
        self.push.apply(&mut config.push, |name| format!("push.{name}"))?;
        Ok(config)
    }
}

/// The bounds of a `memory` store from its options (maxTasks, taskRetention seconds,
/// maxStoreBytes); InvalidParams when they are out of range or `store` is not `memory`.
/// `a2a serve` uses it too.
pub fn memory_limits(
    store: &str,
    max_tasks: Option<usize>,
    retention: Option<f64>,
    max_bytes: Option<usize>,
) -> Result<crate::store::MemoryLimits> {
    let mut limits = crate::store::MemoryLimits::default();
    if store != "memory" {
        let given = [
            ("maxTasks", max_tasks.is_some()),
            ("taskRetention", retention.is_some()),
            ("maxStoreBytes", max_bytes.is_some()),
        ];
        if let Some((name, _)) = given.into_iter().find(|(_, set)| *set) {
            return Err(A2AError::invalid_field(
                name,
                "maxTasks, taskRetention and maxStoreBytes bound the memory store only",
            ));
        }
    }
    if let Some(n) = max_bytes {
        if n == 0 {
            return Err(A2AError::invalid_field("maxStoreBytes", "at least 1"));
        }
        limits.max_bytes = n;
    }
    if let Some(n) = max_tasks {
        if n == 0 {
            return Err(A2AError::invalid_field("maxTasks", "at least 1"));
        }
        limits.max_tasks = n;
    }
    if let Some(secs) = retention {
        limits.terminal_ttl = seconds(secs, "taskRetention")?;
    }
    Ok(limits)
}

struct Running {
    addr: SocketAddr,
    /// The metrics endpoint's address, when served.
    metrics: Option<SocketAddr>,
    stop: oneshot::Sender<()>,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
}

enum State {
    Stopped,
    /// Between a start's check and its bind: a second start is refused, not raced.
    Starting,
    Running(Running),
}

/// A server for a binding's agent: its card and options checked at creation, started on a
/// host and port, stopped gracefully. One start at a time; a second is refused.
pub struct HostedServer {
    card: Value,
    options: ServerOptions,
    state: Mutex<State>,
}

fn already() -> A2AError {
    A2AError::new(ErrorKind::InvalidParams, "the server is already running")
}

/// Gives a dropped start's claim back (`Starting` becomes `Stopped`).
struct StartClaim<'a>(&'a HostedServer);

impl Drop for StartClaim<'_> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        if matches!(*state, State::Starting) {
            *state = State::Stopped;
        }
    }
}

/// The members of `card` no A2A card defines (their paths), leaving out the 0.3 card's top-level
/// members (`url`, `preferredTransport`, ...), which a card may carry for old clients.
fn unknown_card_members(card: &Value) -> Vec<String> {
    const V03: &[&str] = &[
        "protocolVersion",
        "url",
        "preferredTransport",
        "additionalInterfaces",
        "security",
        "supportsAuthenticatedExtendedCard",
    ];
    let mut unknown = crate::model::dynamic::unknown_fields("AgentCard", card);
    unknown.retain(|path| !V03.contains(&path.split(['.', '[']).next().unwrap_or_default()));
    unknown
}

impl HostedServer {
    /// Checks the card and the options now; the interfaces are filled in once the port is known.
    pub fn new(card: Value, options: ServerOptions) -> Result<Self> {
        Stores::check(options.store())?;
        options.memory_limits()?;
        // Options built in code, not read by `from_value`, are checked here too.
        options.config()?;
        options.public_base()?;
        options.metrics_address()?;
        super::cors::Cors::new(&options.cors_origins)?;
        embedded::check(&card, options.extended_card.as_ref(), &options.security, &options.config()?)?;
        Ok(Self { card, options, state: Mutex::new(State::Stopped) })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens the store, binds `host:port` (0: any free port) and serves in the background;
    /// the bound address.
    pub async fn start(&self, agent: Arc<dyn AgentExecutor>, host: &str, port: u16) -> Result<SocketAddr> {
        {
            let mut state = self.lock();
            if !matches!(*state, State::Stopped) {
                return Err(already());
            }
            *state = State::Starting;
        }
        // A caller that gives up on the start (a timeout, a canceled coroutine) drops this
        // future half way: the claim is then given back, or no start would ever succeed again.
        let claim = StartClaim(self);
        let started = self.bind_and_serve(agent, host, port).await;
        std::mem::forget(claim);
        let mut state = self.lock();
        match started {
            Ok(running) => {
                let addr = running.addr;
                *state = State::Running(running);
                Ok(addr)
            }
            Err(e) => {
                *state = State::Stopped;
                Err(e)
            }
        }
    }

    async fn bind_and_serve(&self, agent: Arc<dyn AgentExecutor>, host: &str, port: u16) -> Result<Running> {
        // At the start, when the host's log is set up: a warning at construction went nowhere.
        for (which, card) in [("card", Some(&self.card)), ("extendedCard", self.options.extended_card.as_ref())] {
            let unknown = card.map(unknown_card_members).unwrap_or_default();
            if !unknown.is_empty() {
                tracing::warn!(members = %unknown.join(", "), "the {which} has members A2A does not define; they are not served (a misspelling?)");
            }
        }
        let stores = Stores::open_with(self.options.store(), self.options.memory_limits()?).await?;
        let listener = tokio::net::TcpListener::bind((host, port))
            .await
            .map_err(|e| A2AError::new(ErrorKind::Transport, format!("cannot listen on {host}:{port}: {e}")))?;
        let addr = listener.local_addr().map_err(|e| A2AError::new(ErrorKind::Transport, e.to_string()))?;
        let o = &self.options;
        let base = match o.public_base()? {
            Some(public) => public,
            None => {
                if addr.ip().is_unspecified() {
                    tracing::warn!(%addr, "listening on every address without publicUrl: the card names {addr}, which other machines cannot reach; set publicUrl");
                }
                embedded::base_url(addr, &o.security)
            }
        };
        let server =
            embedded::server(agent, &self.card, o.extended_card.as_ref(), stores, o.config()?, &o.security, &base)?
                .strict_v1_card(o.strict_v1_card)
                .cors_origins(&o.cors_origins)?;
        let (stop, stopped) = oneshot::channel::<()>();
        let stopped = futures_util::FutureExt::shared(async move {
            let _ = stopped.await;
        });
        let metrics = match o.metrics_address()? {
            Some(at) => Some(super::start_metrics(at, server.metrics(), stopped.clone()).await?),
            None => None,
        };
        let done = tokio::spawn(server.serve(listener, stopped));
        Ok(Running { addr, metrics, stop, done })
    }

    /// Stops accepting, ends open streams, lets running requests finish, and waits for the
    /// server to be done. Stopping a stopped server does nothing.
    pub async fn stop(&self) -> Result<()> {
        let running = {
            let mut state = self.lock();
            // A start in progress keeps its claim (stop it once it has started).
            if !matches!(*state, State::Running(_)) {
                return Ok(());
            }
            match std::mem::replace(&mut *state, State::Stopped) {
                State::Running(r) => r,
                _ => return Ok(()),
            }
        };
        let _ = running.stop.send(());
        let served = running.done.await.map_err(|e| A2AError::internal(e.to_string()))?;
        // The spans of the last requests go to the collector now (a host often exits next),
        // for at most two seconds: a collector that is down does not hold the stop.
        #[cfg(feature = "otlp")]
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(2),
            tokio::task::spawn_blocking(crate::telemetry::flush_global),
        )
        .await;
        served.map_err(|e| A2AError::new(ErrorKind::Transport, format!("the server stopped with an error: {e}")))
    }

    /// The bound address, while running.
    pub fn addr(&self) -> Option<SocketAddr> {
        match &*self.lock() {
            State::Running(r) => Some(r.addr),
            _ => None,
        }
    }

    /// `http://host:port/metrics`, while running with `metricsAddress`.
    pub fn metrics_url(&self) -> Option<String> {
        match &*self.lock() {
            State::Running(Running { metrics: Some(at), .. }) => {
                Some(format!("http://{at}{}", super::metrics_endpoint::METRICS_PATH))
            }
            _ => None,
        }
    }

    /// `http(s)://host:port`, while running.
    pub fn url(&self) -> Option<String> {
        self.addr().map(|a| embedded::base_url(a, &self.options.security))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    #[test]
    fn a_mistyped_option_is_refused_by_name() {
        for (options, field) in [
            (json!({"bearerToken": "secret"}), "bearerToken"),
            (json!({"limits": {"maxBodyByte": 10}}), "maxBodyByte"),
            (json!({"security": {"apiKey": {}}}), "apiKey"),
            (json!({"store": 5}), "store"),
        ] {
            let e = ServerOptions::from_value(options.clone()).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidParams, "{options}");
            assert!(e.message.contains(field), "{options}: {}", e.message);
        }
    }

    /// What is wrong is said in the options' own terms, never in Rust's (an untagged enum, a
    /// `Duration` conversion, a stringified object), and fields are named in one spelling.
    #[test]
    fn option_errors_name_the_option_in_its_own_terms() {
        for (options, field, says) in [
            (json!({"bearerTokens": "secret"}), "bearerTokens", "list of tokens"),
            (json!({"limits": {"blocking_timeout": "x"}}), "limits.blockingTimeout", "invalid type"),
            (json!({"limits": {"blocking_timeout": -1}}), "limits.blockingTimeout", "0 or more"),
            (json!({"taskRetention": -1}), "taskRetention", "0 or more"),
            (json!({"metricsAddress": "9464"}), "metricsAddress", "host:port"),
            (json!({"metrics_address": "localhost:http"}), "metricsAddress", "host:port"),
            (json!("JSONRPC"), "", "options must be an object"),
            (json!([["t", "a"]]), "", "not a list"),
            (json!({"limits": {"maxBodyBytes": 1.5}}), "limits.maxBodyBytes", "expected a whole number, 0 or more"),
            (json!({"push": {"timeout": "10s"}}), "push.timeout", "expected a number"),
            // A key of the caller's own (an API key here) is kept as written, snake_case or not.
            (json!({"security": {"apiKeys": {"svc_key": 5}}}), "security.apiKeys.svc_key", "expected a string"),
            (json!({"security": {"jwt": "x"}}), "security.jwt", "expected an object"),
            (
                json!({"security": {"requiredScopes": {"CancelTask": "admin"}}}),
                "security.requiredScopes.CancelTask",
                "expected a list",
            ),
            (
                json!({"security": {"apiKeyLocation": {"in": "body", "name": "k"}}}),
                "security.apiKeyLocation.in",
                "header, query or cookie",
            ),
            (json!({"security": {"taskVisibility": "public"}}), "security.taskVisibility", "\"shared\""),
            (
                json!({"security": {"jwt": {"jwks": {"keys": []}, "issuers": ["i"], "audiences": ["a"], "leeway": -1}}}),
                "security.jwt.leeway",
                "a finite number of seconds, 0 or more",
            ),
        ] {
            let e = ServerOptions::from_value(options.clone())
                .and_then(|o| o.memory_limits().and_then(|_| HostedServer::new(a_card(), o)).map(drop))
                .unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidParams, "{options}");
            assert_eq!(e.violations[0].field, field, "{options}: {e}");
            assert!(e.message.contains(says), "{options}: {e}");
            for rust in ["untagged", "Duration", "struct ", "usize", "f64"] {
                assert!(!e.message.contains(rust), "{options}: {e}");
            }
            assert!(e.message.starts_with(&format!("{field}: ")) || field.is_empty(), "{options}: {e}");
        }
        for good in ["127.0.0.1:0", "localhost:9464", "[::1]:9464"] {
            assert!(ServerOptions::from_value(json!({"metricsAddress": good})).is_ok(), "{good}");
        }
    }

    /// The push delivery options reach the sender's config; out-of-range ones are refused by
    /// their path.
    #[test]
    fn push_delivery_options_set_the_senders_attempts_and_timing() {
        let options = ServerOptions::from_value(
            json!({"push": {"maxAttempts": 9, "timeout": 2.5, "initialBackoff": 0.25, "max_backoff": 30}}),
        )
        .unwrap();
        let push = options.config().unwrap().push;
        assert_eq!(push.max_attempts, 9);
        assert_eq!(push.timeout, Duration::from_millis(2500));
        assert_eq!(push.initial_backoff, Duration::from_millis(250));
        assert_eq!(push.max_backoff, Duration::from_secs(30));
        let defaults = ServerOptions::from_value(json!({})).unwrap().config().unwrap().push;
        assert_eq!(defaults.max_attempts, crate::push::PushSenderConfig::default().max_attempts);
        for (push, field) in [
            (json!({"maxAttempts": 0}), "push.maxAttempts"),
            (json!({"maxAttempts": -1}), "push.maxAttempts"),
            (json!({"timeout": 0}), "push.timeout"),
            (json!({"initialBackoff": -1}), "push.initialBackoff"),
            (json!({"maxBackoff": 0.1}), "push.maxBackoff"),
            (json!({"retries": 3}), "push.retries"),
        ] {
            let e = ServerOptions::from_value(json!({"push": push.clone()})).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidParams, "{push}");
            assert_eq!(e.violations[0].field, field, "{push}: {e}");
        }
    }

    struct Quiet;

    #[async_trait::async_trait]
    impl AgentExecutor for Quiet {
        async fn execute(
            &self,
            _: crate::executor::RequestContext,
            _: crate::executor::EventSink,
        ) -> std::result::Result<(), crate::executor::ExecutorError> {
            Ok(())
        }
    }

    /// A card's members that no A2A card has are named (as a reader drops them without a word),
    /// but not the 0.3 card's own, which a card may carry for old clients.
    #[test]
    fn members_a2a_does_not_define_are_named_and_the_0_3_cards_are_not() {
        let mut card = a_card();
        card["documentationURL"] = json!("https://x/");
        card["skills"][0]["tag"] = json!(["t"]);
        card["url"] = json!("https://x/");
        card["preferredTransport"] = json!("JSONRPC");
        card["protocolVersion"] = json!("0.3.0");
        assert_eq!(unknown_card_members(&card), ["documentationURL", "skills[0].tag"]);
        assert!(unknown_card_members(&a_card()).is_empty());
    }

    fn a_card() -> Value {
        json!({"name": "a", "description": "b", "version": "1", "capabilities": {},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]})
    }

    /// Behind a proxy the card names the public URL, not the bound address; a URL that is not
    /// an absolute http(s) one is refused naming the option.
    #[cfg(feature = "client")]
    #[tokio::test]
    async fn the_card_names_the_public_url_when_one_is_given() {
        let options = ServerOptions::from_value(json!({"publicUrl": "https://agent.example.com/a2a/"})).unwrap();
        let server = HostedServer::new(a_card(), options).unwrap();
        server.start(Arc::new(Quiet), "127.0.0.1", 0).await.unwrap();
        let card = crate::client::Client::connect(&server.url().unwrap()).await.unwrap().card().clone();
        let urls: Vec<_> = card.supported_interfaces.iter().map(|i| i.url.as_str()).collect();
        assert_eq!(urls, ["https://agent.example.com/a2a/", "https://agent.example.com/a2a", "agent.example.com"]);
        server.stop().await.unwrap();
        for bad in ["agent.example.com", "ftp://x/", "https://x/?a=1", "https://x/#f", "/a2a"] {
            let e = ServerOptions::from_value(json!({"public_url": bad})).unwrap_err();
            assert_eq!(e.violations[0].field, "publicUrl", "{bad}: {e}");
        }
    }

    /// Kotlin's `Duration.INFINITE` as a grace (2^63 seconds; more here): the stop panicked
    /// adding it to the clock, and reported a failure though the server had stopped.
    #[tokio::test]
    async fn an_endless_shutdown_grace_stops_cleanly() {
        let options = ServerOptions::from_value(json!({"limits": {"shutdownGrace": 1.8e19}})).unwrap();
        let server = HostedServer::new(a_card(), options).unwrap();
        server.start(Arc::new(Quiet), "127.0.0.1", 0).await.unwrap();
        server.stop().await.unwrap();
        assert!(server.addr().is_none());
    }

    #[test]
    fn a_bad_extended_card_is_named_as_the_option() {
        let card = json!({"name": "a", "description": "b", "version": "1", "capabilities": {},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]});
        let options = ServerOptions::from_value(json!({"extendedCard": {"description": "no name"}})).unwrap();
        let Err(e) = HostedServer::new(card, options) else { panic!("a card without a name was taken") };
        assert_eq!(e.violations[0].field, "extendedCard.name", "{e}");
    }

    #[test]
    fn both_spellings_and_every_token_form_are_read_alike() {
        let camel =
            ServerOptions::from_value(json!({"bearerTokens": {"t": "alice"}, "limits": {"maxBodyBytes": 10}})).unwrap();
        let snake =
            ServerOptions::from_value(json!({"bearer_tokens": [["t", "alice"]], "limits": {"max_body_bytes": 10}}))
                .unwrap();
        for o in [&camel, &snake] {
            assert_eq!(o.security.bearer_tokens.get("t").map(String::as_str), Some("alice"));
            assert_eq!(o.config().unwrap().limits.max_body_bytes, 10);
            assert_eq!(o.store(), "memory");
        }
        for empty in [json!([]), json!({})] {
            let e = ServerOptions::from_value(json!({"bearerTokens": empty})).unwrap_err();
            assert_eq!(e.violations[0].field, "bearerTokens", "{e}");
        }
        let list = ServerOptions::from_value(json!({"bearerTokens": ["t"]})).unwrap();
        assert_eq!(list.security.bearer_tokens.get("t").map(String::as_str), Some("bearer-token"));
        let e = ServerOptions::from_value(json!({"limits": {"blockingTimeout": -1}})).unwrap_err();
        assert!(e.message.contains("blockingTimeout"), "{}", e.message);
    }

    #[test]
    fn a_bad_store_is_refused_when_the_server_is_made() {
        let card = json!({"name": "a", "description": "d", "version": "1", "capabilities": {},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]});
        for store in ["sqlite:/no/such/dir/a.db", "sqlite:", "mongo://x", "memroy"] {
            let options = ServerOptions { store: Some(store.into()), ..Default::default() };
            let Err(e) = HostedServer::new(card.clone(), options) else { panic!("{store} accepted") };
            assert_eq!(e.kind, ErrorKind::InvalidParams, "{store}");
            assert_eq!(e.violations[0].field, "store", "{store}");
        }
        let dir = std::env::temp_dir().join("a.db");
        for store in ["memory".to_owned(), format!("sqlite:{}", dir.display()), "sqlite:relative.db".into()] {
            let options = ServerOptions { store: Some(store.clone()), ..Default::default() };
            HostedServer::new(card.clone(), options).unwrap_or_else(|e| panic!("{store}: {e}"));
        }
    }
}
