//! core's hosted server (`server::host`) serving a JavaScript executor. The options are core's
//! `ServerOptions`, read strictly there: a mistyped option is refused, naming it.

use crate::executor::{Dispatch, JsExecutor};
use crate::{errors, models};
use a2a_native::server::host::{HostedServer, ServerOptions};
use napi::Result;
use serde_json::Value;
use std::sync::{Arc, Mutex};

#[napi_derive::napi]
pub struct AgentServer {
    server: HostedServer,
    /// The executor of the running server, closed (its dispatch released) on `close()`.
    agent: Mutex<Option<Arc<JsExecutor>>>,
}

#[napi_derive::napi]
impl AgentServer {
    /// `cardJson`: the AgentCard; `optionsJson`: core's `ServerOptions` (store, bearerTokens,
    /// extendedCard, limits, security). Both are checked now.
    #[napi(constructor)]
    pub fn new(card_json: String, options_json: String) -> Result<Self> {
        let card: Value = models::value(&card_json)?;
        let options: Value = models::value(&options_json)?;
        let options = ServerOptions::from_value(options).map_err(errors::to_js)?;
        let server = HostedServer::new(card, options).map_err(errors::to_js)?;
        Ok(Self { server, agent: Mutex::default() })
    }

    /// Binds `host:port` and serves in the background; resolves to the bound port. Executions
    /// go through `dispatch` until `close()`.
    #[napi(
        ts_args_type = "host: string, port: number, dispatch: (callId: number, method: string, context: string) => void"
    )]
    pub async fn listen(&self, host: String, port: u16, dispatch: Dispatch) -> Result<u16> {
        crate::logging::install();
        let agent = Arc::new(JsExecutor::new(dispatch));
        match self.server.start(agent.clone(), &host, port).await {
            Ok(addr) => {
                *self.agent.lock().unwrap_or_else(|p| p.into_inner()) = Some(agent);
                Ok(addr.port())
            }
            Err(e) => {
                agent.close().await;
                Err(errors::to_js(e))
            }
        }
    }

    /// Stops accepting, ends open streams, aborts running executions and waits for the server
    /// to finish. Afterwards nothing of the server keeps Node's event loop alive.
    #[napi]
    pub async fn close(&self) -> Result<()> {
        if let Some(agent) = &*self.agent.lock().unwrap_or_else(|p| p.into_inner()) {
            agent.stopping.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let stopped = self.server.stop().await;
        let agent = self.agent.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(agent) = agent {
            agent.close().await;
        }
        stopped.map_err(errors::to_js)
    }

    /// The bound port (`null` when not listening).
    #[napi(getter)]
    pub fn port(&self) -> Option<u16> {
        self.server.addr().map(|a| a.port())
    }

    /// `http://host:port` (`null` when not listening).
    #[napi(getter)]
    pub fn url(&self) -> Option<String> {
        self.server.url()
    }

    /// `http://host:port/metrics` (`null` when not listening or without `metricsAddress`).
    #[napi(getter)]
    pub fn metrics_url(&self) -> Option<String> {
        self.server.metrics_url()
    }
}
