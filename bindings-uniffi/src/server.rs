//! core's [`Server`] serving a Kotlin/Swift executor: bind (port 0 picks one), serve on the
//! binding's runtime, stop gracefully. The card's interfaces are filled in with the bound
//! address when it declares none.

use crate::errors::{Result, io};
use crate::executor::{AgentExecutor, ForeignExecutor};
use crate::json::ProtoJson;
use crate::models_gen::AgentCard;
use crate::runtime::run;
use a2a_native::server::security::SecuritySpec;
use a2a_native::server::{ServerConfig, Stores, embedded};

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

/// How the server runs. Every member is optional.
#[derive(uniffi::Record, Default)]
pub struct ServerOptions {
    /// `memory` (default), `sqlite:PATH` or a `postgres://` URL.
    #[uniffi(default)]
    pub store: Option<String>,
    /// When set, every call needs `Authorization: Bearer <one of these>` (the card says so).
    #[uniffi(default)]
    pub bearer_tokens: Vec<String>,
    /// Served to authenticated callers by GetExtendedAgentCard.
    #[uniffi(default)]
    pub extended_card: Option<AgentCard>,
    /// How long a blocking SendMessage waits for the task to settle.
    #[uniffi(default)]
    pub blocking_timeout_ms: Option<u64>,
    #[uniffi(default)]
    pub max_body_bytes: Option<u64>,
    /// API keys, JWT/JWKS, TLS and mTLS, scopes per operation, card and push signing keys, task
    /// visibility, private webhook targets: the core's `SecuritySpec` as JSON
    /// (`{"apiKeys": {"KEY": "principal"}, "allowPrivateWebhooks": ["127.0.0.1", "10.0.0.0/8"], ...}`;
    /// `allowPrivateWebhooks` is `true` for any target, or a list of host names, addresses and
    /// CIDR ranges that may be private).
    #[uniffi(default)]
    pub security_json: Option<String>,
}

struct Running {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// The security the options describe (`bearer_tokens` are the principal "bearer-token").
fn security_spec(options: &ServerOptions) -> Result<SecuritySpec> {
    let value = match &options.security_json {
        Some(text) => serde_json::from_str(text)
            .map_err(|e| a2a_native::A2AError::invalid_field("securityJson", e.to_string()))?,
        None => serde_json::json!({}),
    };
    let mut spec = SecuritySpec::from_value(value)?;
    spec.bearer_tokens.extend(options.bearer_tokens.iter().map(|t| (t.clone(), "bearer-token".to_owned())));
    Ok(spec)
}

/// An A2A server for one executor: JSON-RPC and HTTP+JSON on one port, plus the agent card.
#[derive(uniffi::Object)]
pub struct AgentServer {
    card: AgentCard,
    executor: Arc<dyn AgentExecutor>,
    options: ServerOptions,
    security: SecuritySpec,
    config: ServerConfig,
    running: Mutex<Option<Running>>,
}

impl AgentServer {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Running>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[uniffi::export]
impl AgentServer {
    /// Checks the card (and the options) now; nothing is bound until `start`.
    #[uniffi::constructor(default(options = None))]
    pub fn new(card: AgentCard, executor: Arc<dyn AgentExecutor>, options: Option<ServerOptions>) -> Result<Arc<Self>> {
        let options = options.unwrap_or_default();
        let security = security_spec(&options)?;
        let extended = options.extended_card.as_ref().map(|c| c.write("")).transpose()?;
        embedded::check(&card.write("")?, extended.as_ref(), &security)?;
        let mut config = ServerConfig::default();
        if let Some(ms) = options.blocking_timeout_ms {
            config.limits.blocking_timeout = Duration::from_millis(ms);
        }
        if let Some(n) = options.max_body_bytes {
            config.limits.max_body_bytes = usize::try_from(n).unwrap_or(usize::MAX);
        }
        Ok(Arc::new(Self { card, executor, options, security, config, running: Mutex::new(None) }))
    }

    /// Binds `host:port` (0 picks a free port) and serves in the background; returns the port.
    #[uniffi::method(default(host = "127.0.0.1", port = 0))]
    pub async fn start(&self, host: String, port: u16) -> Result<u16> {
        if self.lock().is_some() {
            return Err(a2a_native::A2AError::unsupported_operation("the server is already running").into());
        }
        let store = self.options.store.clone().unwrap_or_else(|| "memory".into());
        let spec = self.security.clone();
        let (card, extended) = (self.card.clone(), self.options.extended_card.clone());
        let (config, agent) = (self.config.clone(), Arc::new(ForeignExecutor(self.executor.clone())));
        let running = run(async move {
            let stores = Stores::open(&store).await?;
            let listener = tokio::net::TcpListener::bind((host.as_str(), port)).await.map_err(io)?;
            let addr = listener.local_addr().map_err(io)?;
            let extended = extended.map(|c| c.write("")).transpose()?;
            let server = embedded::server(agent, &card.write("")?, extended.as_ref(), stores, config, &spec, addr)?;
            let (stop, stopped) = oneshot::channel::<()>();
            let done = tokio::spawn(server.serve(listener, async move {
                let _ = stopped.await;
            }));
            Ok::<_, crate::errors::A2aException>(Running { addr, stop, done })
        })
        .await?;
        let port = running.addr.port();
        *self.lock() = Some(running);
        Ok(port)
    }

    /// Stops accepting, ends open streams and waits for the server to finish.
    pub async fn stop(&self) -> Result<()> {
        let Some(r) = self.lock().take() else { return Ok(()) };
        let _ = r.stop.send(());
        match run(r.done).await {
            Ok(result) => result.map_err(io),
            Err(e) => Err(a2a_native::A2AError::internal(e.to_string()).into()),
        }
    }

    /// The bound port (`null` when not running).
    pub fn port(&self) -> Option<u16> {
        self.lock().as_ref().map(|r| r.addr.port())
    }

    /// `http://host:port` (`null` when not running).
    pub fn url(&self) -> Option<String> {
        self.lock().as_ref().map(|r| embedded::base_url(r.addr, &self.security))
    }
}
