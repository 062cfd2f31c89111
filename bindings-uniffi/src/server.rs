//! core's hosted server (`server::host`) serving a Kotlin/Swift executor on the binding's
//! runtime. The record below is converted to core's `ServerOptions`, which decides everything.

use crate::convert::{Path, ToCore};
use crate::errors::Result;
use crate::executor::{AgentExecutor, ForeignExecutor};
use crate::extensions::{ExtensionMethod, ExtensionProfile, Handlers};
use crate::models_gen::AgentCard;
use crate::runtime::run;
use a2a_native::model;
use a2a_native::server::host::{HostedServer, ServerOptions as CoreOptions};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// How the server runs. Every member is optional; the names are core's, and durations are
/// Kotlin `java.time.Duration` / Swift `TimeInterval`.
#[derive(uniffi::Record, Default)]
pub struct ServerOptions {
    /// `memory` (default), `sqlite:PATH` or a `postgres://` URL.
    #[uniffi(default)]
    pub store: Option<String>,
    /// When set, every call needs `Authorization: Bearer <one of these>` (the card says so);
    /// each authenticates the principal `bearer-token`.
    /// An empty list is refused: it would serve everyone.
    #[uniffi(default)]
    pub bearer_tokens: Option<Vec<String>>,
    /// Bearer tokens, each naming the principal it authenticates (tasks belong to principals).
    #[uniffi(default)]
    pub bearer_token_principals: Option<HashMap<String, String>>,
    /// Served to authenticated callers by GetExtendedAgentCard.
    #[uniffi(default)]
    pub extended_card: Option<AgentCard>,
    /// Limits on what one client can make the server hold (core's `limits`).
    #[uniffi(default)]
    pub limits: Option<ServerLimits>,
    /// How often and how long a failing webhook is retried (core's `push`).
    #[uniffi(default)]
    pub push: Option<PushOptions>,
    /// The memory store's cap on tasks (default 10,000).
    #[uniffi(default)]
    pub max_tasks: Option<u64>,
    /// How long the memory store keeps a finished task (default 1 h).
    #[uniffi(default)]
    pub task_retention: Option<Duration>,
    /// About how many bytes of task contents the memory store keeps (default 256 MiB).
    #[uniffi(default)]
    pub max_store_bytes: Option<u64>,
    /// API keys, JWT/JWKS, TLS and mTLS, scopes per operation, card and push signing keys, task
    /// visibility, private webhook targets: the core's `SecuritySpec` as JSON
    /// (`{"apiKeys": {"KEY": "principal"}, "allowPrivateWebhooks": ["127.0.0.1", "10.0.0.0/8"], ...}`;
    /// `allowPrivateWebhooks` is `true` for any target, or a list of host names, addresses and
    /// CIDR ranges that may be private).
    #[uniffi(default)]
    pub security: Option<String>,
    /// Serve the card in strict A2A 1.0 form, without the 0.3 fields a declared 0.3 interface
    /// adds (for 1.0 clients that refuse unknown fields).
    #[uniffi(default)]
    pub strict_v1_card: bool,
    /// Origins whose web pages may call the agent across origins (CORS), as a browser names
    /// them (`https://app.example.com`), or `*` for any; none by default.
    #[uniffi(default)]
    pub cors_origins: Vec<String>,
    /// `host:port` (port 0: any) to serve Prometheus/OpenMetrics text at `/metrics` on, a
    /// listener of its own (see `metricsUrl`).
    #[uniffi(default)]
    pub metrics_address: Option<String>,
    /// The http(s) URL clients reach the server at (behind a proxy or in a container), which
    /// the card's interfaces name; by default the bound address.
    #[uniffi(default)]
    pub public_url: Option<String>,
    /// Extension methods the agent serves beside the core ones (JSON-RPC, and HTTP+JSON at
    /// `POST {base}/{name}` or the method's `path`), each tied to an extension the card declares.
    #[uniffi(default)]
    pub methods: Vec<ExtensionMethod>,
    /// Profile extensions' checks of incoming messages.
    #[uniffi(default)]
    pub profile_checks: Vec<ExtensionProfile>,
}

/// core's `limits`: what one client can make the server hold. Every member is optional
/// (absent: core's default). Serialized as core's `limits` JSON: the same names, durations in
/// seconds.
#[derive(uniffi::Record, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerLimits {
    /// How long a blocking SendMessage waits for the task to settle.
    #[uniffi(default)]
    #[serde(serialize_with = "seconds")]
    pub blocking_timeout: Option<Duration>,
    #[uniffi(default)]
    pub max_body_bytes: Option<u64>,
    /// Bytes that request bodies larger than 64 KiB may hold at once, server-wide, until their
    /// requests are answered (503 with Retry-After beyond it; default 64 MiB, never less than
    /// `maxBodyBytes`).
    #[uniffi(default)]
    pub max_body_bytes_in_flight: Option<u64>,
    #[uniffi(default)]
    pub max_parts_per_message: Option<u64>,
    #[uniffi(default)]
    pub max_history_length: Option<u64>,
    /// About how many bytes of the client's messages one task may hold: a message that would
    /// take it past is refused (default 64 MiB; the agent's output does not count).
    #[uniffi(default)]
    pub max_task_bytes: Option<u64>,
    #[uniffi(default)]
    pub max_streams_per_task: Option<u64>,
    /// Largest request head accepted (431 beyond it; default 64 KiB).
    #[uniffi(default)]
    pub max_header_bytes: Option<u64>,
    /// How long a client may take to send its first byte, and on HTTP/1 a request head once
    /// begun (408 beyond it; default 30 s).
    #[uniffi(default)]
    #[serde(serialize_with = "seconds")]
    pub header_read_timeout: Option<Duration>,
    /// How long a request body may take to arrive (408 beyond it; default 30 s).
    #[uniffi(default)]
    #[serde(serialize_with = "seconds")]
    pub body_read_timeout: Option<Duration>,
    /// How long a connection may stay open with no request in flight before it is closed (an
    /// open stream counts; default 120 s).
    #[uniffi(default)]
    #[serde(serialize_with = "seconds")]
    pub idle_timeout: Option<Duration>,
    /// How long `execute` may run before it is canceled and its task ends FAILED (default: no
    /// limit); bounds executors that never return.
    #[uniffi(default)]
    #[serde(serialize_with = "seconds")]
    pub executor_timeout: Option<Duration>,
    /// Most connections served at once; at the cap accepting waits until one closes (default
    /// 4096).
    #[uniffi(default)]
    pub max_connections: Option<u64>,
    /// How long running executions get to finish at a graceful stop before their tasks end
    /// FAILED (default 1 s).
    #[uniffi(default)]
    #[serde(serialize_with = "seconds")]
    pub shutdown_grace: Option<Duration>,
    /// Most requests one HTTP/2 connection may have open at once (default 100).
    #[uniffi(default)]
    pub max_streams_per_connection: Option<u32>,
}

/// core's `push`: how push notifications are delivered. A delivery that fails (a connection
/// error, a timeout, a 5xx or 429) is retried after about `initialBackoff`, each wait doubling
/// up to `maxBackoff`, until `maxAttempts` attempts were made (default: 4 over about 3.5 s).
#[derive(uniffi::Record, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PushOptions {
    /// Attempts per notification, the first included (default 4; 1: no retry).
    #[uniffi(default)]
    pub max_attempts: Option<u32>,
    /// How long one attempt may take, connecting included (default 10 s).
    #[uniffi(default)]
    #[serde(serialize_with = "seconds")]
    pub timeout: Option<Duration>,
    /// The wait before the first retry (default 0.5 s).
    #[uniffi(default)]
    #[serde(serialize_with = "seconds")]
    pub initial_backoff: Option<Duration>,
    /// The longest wait between two attempts (default 8 s).
    #[uniffi(default)]
    #[serde(serialize_with = "seconds")]
    pub max_backoff: Option<Duration>,
}

/// A duration as core's options read it: seconds.
fn seconds<S: serde::Serializer>(d: &Option<Duration>, s: S) -> std::result::Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&d.map(|d| d.as_secs_f64()), s)
}

/// A card as core's JSON; core checks it with the options (its refusals name the card's fields
/// from the card's top, as for a card given as JSON).
fn card_value(card: AgentCard) -> Result<serde_json::Value> {
    let card: model::AgentCard = card.to_core(&Path::TOP)?;
    Ok(model::to_value(&card))
}

/// Core's `ServerOptions` (read strictly there) from the record, and the extension handlers.
fn core_options(options: &ServerOptions) -> Result<(CoreOptions, Handlers)> {
    let security: serde_json::Value = match &options.security {
        Some(text) => {
            serde_json::from_str(text).map_err(|e| a2a_native::A2AError::invalid_field("security", e.to_string()))?
        }
        None => serde_json::json!({}),
    };
    // Absent from core's options unless given, so that core refuses a given empty one.
    let tokens = (options.bearer_tokens.is_some() || options.bearer_token_principals.is_some()).then(|| {
        let any = options.bearer_tokens.iter().flatten().map(|t| (t.clone(), "bearer-token".to_owned()));
        any.chain(options.bearer_token_principals.iter().flatten().map(|(t, p)| (t.clone(), p.clone())))
            .collect::<Vec<_>>()
    });
    // Cards go in as core's JSON, which core checks with the rest of the options.
    let extended = options.extended_card.clone().map(card_value).transpose()?;
    let (handlers, methods, profiles) = Handlers::new(&options.methods, &options.profile_checks);
    let value = serde_json::json!({
        "store": options.store,
        "bearerTokens": tokens,
        "extendedCard": extended,
        "limits": options.limits.as_ref().unwrap_or(&ServerLimits::default()),
        "push": options.push.as_ref().unwrap_or(&PushOptions::default()),
        "maxTasks": options.max_tasks,
        "taskRetention": options.task_retention.map(|d| d.as_secs_f64()),
        "maxStoreBytes": options.max_store_bytes,
        "security": security,
        "strictV1Card": options.strict_v1_card,
        "corsOrigins": options.cors_origins,
        "metricsAddress": options.metrics_address,
        "publicUrl": options.public_url,
        "methods": methods,
        "profileChecks": profiles,
    });
    Ok((CoreOptions::from_value(value)?, handlers))
}

/// The servers started and not stopped: a running server serves until `stop` (or the process
/// ends), as a JVM's servers do, whether or not the program still holds its object. (Freed by
/// a garbage collection, the object took its server down with it, at an unpredictable time.)
fn serving() -> std::sync::MutexGuard<'static, Vec<Arc<HostedServer>>> {
    static SERVING: std::sync::Mutex<Vec<Arc<HostedServer>>> = std::sync::Mutex::new(Vec::new());
    SERVING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// An A2A server for one executor: JSON-RPC, HTTP+JSON and gRPC on one port, plus the agent card.
/// Once started it serves until `stop`, whether or not the program keeps this object.
#[derive(uniffi::Object)]
pub struct AgentServer {
    server: Arc<HostedServer>,
    executor: Arc<dyn AgentExecutor>,
    handlers: Handlers,
}

impl Drop for AgentServer {
    fn drop(&mut self) {
        if self.server.addr().is_some() {
            tracing::warn!(
                "an AgentServer was freed (closed, or collected) while it serves: it serves on until the process \
                 ends; keep it and call stop() to stop it"
            );
        }
    }
}

#[uniffi::export]
impl AgentServer {
    /// Checks the card (and the options) now; nothing is bound until `start`.
    #[uniffi::constructor(default(options = None))]
    pub fn new(card: AgentCard, executor: Arc<dyn AgentExecutor>, options: Option<ServerOptions>) -> Result<Arc<Self>> {
        let (options, handlers) = core_options(&options.unwrap_or_default())?;
        let server = Arc::new(HostedServer::new(card_value(card)?, options)?);
        Ok(Arc::new(Self { server, executor, handlers }))
    }

    /// Binds `host:port` (0 picks a free port) and serves in the background; returns the port.
    /// A second start while running is refused.
    #[uniffi::method(default(host = "127.0.0.1", port = 0))]
    pub async fn start(&self, host: String, port: u16) -> Result<u16> {
        crate::logging::install();
        let (server, agent) =
            (self.server.clone(), Arc::new(ForeignExecutor(self.executor.clone(), self.handlers.clone())));
        let started = server.clone();
        let addr = run(async move { started.start(agent, &host, port).await }).await?;
        serving().push(server);
        Ok(addr.port())
    }

    /// Stops accepting, ends open streams and waits for the server to finish.
    pub async fn stop(&self) -> Result<()> {
        let server = self.server.clone();
        serving().retain(|s| !Arc::ptr_eq(s, &server));
        Ok(run(async move { server.stop().await }).await?)
    }

    /// The bound port (`null` when not running).
    pub fn port(&self) -> Option<u16> {
        self.server.addr().map(|a| a.port())
    }

    /// `http://host:port` (`null` when not running).
    pub fn url(&self) -> Option<String> {
        self.server.url()
    }

    /// `http://host:port/metrics` (`null` when not running or without `metricsAddress`).
    pub fn metrics_url(&self) -> Option<String> {
        self.server.metrics_url()
    }
}
