//! A server for an agent hosted by a binding (Python, Node, Kotlin/Swift): the card comes as
//! JSON, possibly without `supportedInterfaces` (the port is not known when it is written),
//! and the security as a [`SecuritySpec`]. Each binding opens the store, binds the listener
//! and then calls [`server`]; [`check`] lets it refuse bad input when the object is created.

use super::security::{SecurityConfig, SecuritySpec};
use super::{RequestHandler, Server, ServerConfig, Stores};
use crate::error::Result;
use crate::executor::AgentExecutor;
use crate::model::AgentCard;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;

/// The card read from JSON, with the server's interfaces filled in when it declares none
/// (JSON-RPC at `{base}/`, HTTP+JSON at `{base}`, gRPC at its `host:port`, A2A 1.0).
/// `at` names the option it came from in errors (`extendedCard`; empty for the card itself).
pub fn card(card: &Value, base: &str, at: &str) -> Result<AgentCard> {
    let mut card = card.clone();
    let empty = card.get("supportedInterfaces").and_then(Value::as_array).is_none_or(Vec::is_empty);
    if empty && let Some(obj) = card.as_object_mut() {
        obj.insert(
            "supportedInterfaces".into(),
            serde_json::json!([
                {"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": base, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                {"url": crate::grpc::target_of(base), "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            ]),
        );
    }
    crate::model::parse_value_at(card, at)
}

fn secured(card_json: &Value, base: &str, security: &SecurityConfig, at: &str) -> Result<AgentCard> {
    let mut card = card(card_json, base, at)?;
    security.apply_to_card(&mut card)?;
    Ok(card)
}

/// Checks the cards, the security and the extension methods before anything is bound.
pub fn check(card: &Value, extended: Option<&Value>, security: &SecuritySpec, server: &ServerConfig) -> Result<()> {
    let base = "http://127.0.0.1:0";
    let config = security.build(base)?;
    let card = secured(card, base, &config, "")?;
    crate::methods::check(&server.methods, &card)?;
    crate::methods::check_profiles(&server.profile_checks, &card)?;
    if let Some(extended) = extended {
        secured(extended, base, &config, "extendedCard")?;
    }
    Ok(())
}

/// The base URL a server bound to `addr` serves at.
pub fn base_url(addr: SocketAddr, security: &SecuritySpec) -> String {
    format!("{}://{addr}", if security.tls_on() { "https" } else { "http" })
}

/// The server for `agent` bound at `addr`: cards with interfaces and security declared,
/// authentication, scopes, push signing, task visibility and TLS as `security` says.
pub fn server(
    agent: Arc<dyn AgentExecutor>,
    card: &Value,
    extended: Option<&Value>,
    stores: Stores,
    mut config: ServerConfig,
    security: &SecuritySpec,
    addr: SocketAddr,
) -> Result<Server> {
    let base = base_url(addr, security);
    let security = security.build(&base)?;
    security.configure(&mut config);
    let card = secured(card, &base, &security, "")?;
    crate::methods::check(&config.methods, &card)?;
    crate::methods::check_profiles(&config.profile_checks, &card)?;
    let mut handler = RequestHandler::new(agent, card, stores, config);
    if let Some(extended) = extended {
        handler = handler.with_extended_card(secured(extended, &base, &security, "extendedCard")?);
    }
    let mut server = Server::new(Arc::new(security.secure(handler)));
    if let Some(tls) = security.tls_config()? {
        server = server.tls(tls);
    }
    Ok(server)
}
