//! core's [`Server`] serving a JavaScript executor: bind (port 0 picks one), serve on the
//! runtime, stop gracefully. The agent card's interfaces are filled in with the bound address
//! when the card declares none.

use crate::errors;
use crate::executor::{Dispatch, JsExecutor};
use a2a_native::model::AgentCard;
use a2a_native::server::{BearerTokens, Principal, RequestHandler, Server, ServerConfig, Stores};
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
    /// (token, the principal it names).
    bearer_tokens: Vec<(String, String)>,
    running: Arc<Mutex<Option<Running>>>,
}

/// The card with the server's interfaces filled in (when it declares none), and with bearer
/// tokens the HTTP bearer scheme declared and required.
fn card_for(card: &Value, base: &str, bearer: bool) -> Result<AgentCard> {
    a2a_native::server::card::embedded_card(card, base, bearer).map_err(errors::to_js)
}

fn handler(
    agent: Arc<JsExecutor>,
    card: AgentCard,
    stores: Stores,
    tokens: Vec<(String, String)>,
) -> RequestHandler {
    let handler = RequestHandler::new(agent, card, stores, ServerConfig::default());
    if tokens.is_empty() {
        return handler;
    }
    let auth = tokens.into_iter().fold(BearerTokens::new(), |auth, (token, name)| {
        auth.with_token(token, Principal { name, scopes: Vec::new() })
    });
    handler.with_authenticator(Arc::new(auth))
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
    #[napi(constructor)]
    pub fn new(card_json: String, store: String, bearer_tokens: Vec<Vec<String>>) -> Result<Self> {
        let card: Value = serde_json::from_str(&card_json).map_err(|e| errors::to_js(e.into()))?;
        let bearer_tokens = bearer_tokens
            .into_iter()
            .map(|pair| match <[String; 2]>::try_from(pair) {
                Ok([token, name]) => Ok((token, name)),
                Err(_) => Err(errors::invalid("bearerTokens", "each entry is [token, principal]")),
            })
            .collect::<Result<Vec<_>>>()?;
        card_for(&card, "http://127.0.0.1:0", !bearer_tokens.is_empty())?; // fill in later
        Ok(Self {
            card,
            store,
            bearer_tokens,
            running: Arc::default(),
        })
    }

    /// Binds `host:port` and serves in the background; resolves to the bound port. Executions
    /// go through `dispatch` until `close()`.
    #[napi(
        ts_args_type = "host: string, port: number, dispatch: (callId: number, method: string, context: string, sink: EventSink | null) => Promise<string | null>"
    )]
    pub async fn listen(&self, host: String, port: u16, dispatch: Dispatch) -> Result<u16> {
        if self.lock().is_some() {
            return Err(errors::invalid("", "the server is already listening"));
        }
        let agent = Arc::new(JsExecutor::new(dispatch));
        let stores = Stores::open(&self.store).await.map_err(errors::to_js)?;
        let listener = tokio::net::TcpListener::bind((host.as_str(), port))
            .await
            .map_err(errors::io)?;
        let addr = listener.local_addr().map_err(errors::io)?;
        let tokens = self.bearer_tokens.clone();
        let card = card_for(&self.card, &format!("http://{addr}"), !tokens.is_empty())?;
        let handler = handler(agent.clone(), card, stores, tokens);
        let (stop, stopped) = oneshot::channel::<()>();
        let done = tokio::spawn(Server::new(Arc::new(handler)).serve(listener, async move {
            let _ = stopped.await;
        }));
        let lost = {
            let mut running = self.lock();
            if running.is_some() {
                Some((agent, stop))
            } else {
                *running = Some(Running {
                    addr,
                    agent,
                    stop,
                    done,
                });
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
            served
                .map_err(|e| errors::io(std::io::Error::other(e)))?
                .map_err(errors::io)?;
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
        self.lock().as_ref().map(|r| format!("http://{}", r.addr))
    }
}
