//! core's embedded server (`server::embedded`) serving a JavaScript executor: bind (port 0
//! picks one), serve on the runtime, stop gracefully.

use crate::errors;
use crate::executor::{Dispatch, JsExecutor};
use a2a_native::server::security::SecuritySpec;
use a2a_native::server::{ServerConfig, Stores, embedded};
use napi::Result;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

struct Running {
    addr: SocketAddr,
    agent: Arc<JsExecutor>,
    stop: oneshot::Sender<()>,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
}

#[napi_derive::napi]
pub struct AgentServer {
    card: Value,
    store: String,
    /// Bearer tokens, API keys, JWT, TLS, scopes, signing keys (core's JSON form).
    security: SecuritySpec,
    running: Arc<Mutex<Option<Running>>>,
}

impl AgentServer {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Running>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[napi_derive::napi]
impl AgentServer {
    /// `cardJson`: the AgentCard (validated now); `store`: "memory", "sqlite:PATH" or a
    /// PostgreSQL URL; `bearerTokens`: `[token, principal name]` pairs.
    /// `securityJson`: core's `SecuritySpec` (bearerTokens, apiKeys, jwt, tls, requiredScopes,
    /// cardSigningKey, pushSigningKey, taskVisibility, allowPrivateWebhooks).
    #[napi(constructor)]
    pub fn new(card_json: String, store: String, security_json: String) -> Result<Self> {
        let card: Value = serde_json::from_str(&card_json).map_err(|e| errors::to_js(e.into()))?;
        let security: Value = serde_json::from_str(&security_json).map_err(|e| errors::to_js(e.into()))?;
        let security = SecuritySpec::from_value(security).map_err(errors::to_js)?;
        // Refuse bad input now; the interfaces are filled in once the port is known.
        embedded::check(&card, None, &security).map_err(errors::to_js)?;
        Ok(Self { card, store, security, running: Arc::default() })
    }

    /// Binds `host:port` and serves in the background; resolves to the bound port. Executions
    /// go through `dispatch` until `close()`.
    #[napi(
        ts_args_type = "host: string, port: number, dispatch: (callId: number, method: string, context: string) => void"
    )]
    pub async fn listen(&self, host: String, port: u16, dispatch: Dispatch) -> Result<u16> {
        if self.lock().is_some() {
            return Err(errors::invalid("", "the server is already listening"));
        }
        let agent = Arc::new(JsExecutor::new(dispatch));
        let stores = Stores::open(&self.store).await.map_err(errors::to_js)?;
        let listener = tokio::net::TcpListener::bind((host.as_str(), port)).await.map_err(errors::io)?;
        let addr = listener.local_addr().map_err(errors::io)?;
        let server =
            embedded::server(agent.clone(), &self.card, None, stores, ServerConfig::default(), &self.security, addr)
                .map_err(errors::to_js)?;
        let (stop, stopped) = oneshot::channel::<()>();
        let done = tokio::spawn(server.serve(listener, async move {
            let _ = stopped.await;
        }));
        let lost = {
            let mut running = self.lock();
            if running.is_some() {
                Some((agent, stop))
            } else {
                *running = Some(Running { addr, agent, stop, done });
                None
            }
        };
        if let Some((agent, stop)) = lost {
            // Another listen() won the race: this one's server stops again.
            let _ = stop.send(());
            agent.close().await;
            return Err(errors::invalid("", "the server is already listening"));
        }
        Ok(addr.port())
    }

    /// Stops accepting, ends open streams, aborts running executions and waits for the server
    /// to finish. Afterwards nothing of the server keeps Node's event loop alive.
    #[napi]
    pub async fn close(&self) -> Result<()> {
        let running = self.lock().take();
        if let Some(r) = running {
            let _ = r.stop.send(());
            let served = r.done.await;
            r.agent.close().await;
            served.map_err(|e| errors::io(std::io::Error::other(e)))?.map_err(errors::io)?;
        }
        Ok(())
    }

    /// The bound port (`null` when not listening).
    #[napi(getter)]
    pub fn port(&self) -> Option<u16> {
        self.lock().as_ref().map(|r| r.addr.port())
    }

    /// `http://host:port` (`null` when not listening).
    #[napi(getter)]
    pub fn url(&self) -> Option<String> {
        self.lock().as_ref().map(|r| embedded::base_url(r.addr, &self.security))
    }
}
