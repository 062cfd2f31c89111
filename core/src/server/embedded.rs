//! A server for an agent hosted by a binding (Python, Node, Kotlin/Swift): the card comes as
//! JSON, possibly without `supportedInterfaces` (the port is not known when it is written),
//! and the security as a [`SecuritySpec`]. Each binding opens the store, binds the listener
//! and then calls [`server`]; [`check`] lets it refuse bad input when the object is created.

use super::security::{SecurityConfig, SecuritySpec};
use super::{RequestHandler, Server, ServerConfig, Stores};
use crate::error::{A2AError, Result};
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
    declare_interfaces(&mut card, base);
    crate::model::parse_value_at(card, at)
}

/// The public card of a server that serves `extended` (when given): one whose capabilities
/// leave `extendedAgentCard` out declare it, since an extended card would otherwise never be
/// served; one that says `false` contradicts the option and is refused.
fn public_card(card: &Value, base: &str, extended: Option<&Value>) -> Result<AgentCard> {
    let mut card = card.clone();
    if extended.is_some() {
        let capabilities = card.get_mut("capabilities").and_then(Value::as_object_mut);
        let given = |c: &serde_json::Map<String, Value>| {
            c.get("extendedAgentCard").or_else(|| c.get("extended_agent_card")).cloned()
        };
        match capabilities.as_ref().and_then(|c| given(c)) {
            Some(Value::Bool(false)) => {
                return Err(crate::error::A2AError::invalid_field(
                    "extendedCard",
                    "the card's capabilities.extendedAgentCard is false, so it would never be served",
                ));
            }
            Some(_) => {}
            None => declare_extended(&mut card),
        }
    }
    self::card(&card, base, "")
}

/// Sets `capabilities.extendedAgentCard` when the card leaves it out: on the public card of a
/// server with an extended card, and on the extended card itself, which a client SHOULD take
/// in the public card's place (and would then think there is none).
fn declare_extended(card: &mut Value) {
    if let Some(c) = card.get_mut("capabilities").and_then(Value::as_object_mut)
        && !c.contains_key("extendedAgentCard")
        && !c.contains_key("extended_agent_card")
    {
        c.insert("extendedAgentCard".into(), Value::Bool(true));
    }
}

/// Fills in the server's interfaces when the card declares none (JSON-RPC at `{base}/`,
/// HTTP+JSON at `{base}`, gRPC at its `host:port`, A2A 1.0).
fn declare_interfaces(card: &mut Value, base: &str) {
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
}

fn secured(mut card: AgentCard, security: &SecurityConfig) -> Result<AgentCard> {
    security.apply_to_card(&mut card)?;
    Ok(card)
}

/// Checks the cards, the security and the extension methods before anything is bound.
pub fn check(card: &Value, extended: Option<&Value>, security: &SecuritySpec, server: &ServerConfig) -> Result<()> {
    let base = "http://127.0.0.1:0";
    let config = security.build(base).map_err(|e| e.under("security"))?;
    let card = secured(public_card(card, base, extended)?, &config)?;
    crate::methods::check(&server.methods, &card)?;
    crate::methods::check_profiles(&server.profile_checks, &card)?;
    // A scope on a misspelt operation (`CancelTasks`, a 0.3 `tasks/cancel`) would guard nothing.
    for method in security.required_scopes.keys() {
        let known = method == "*"
            || crate::request::Method::from_name(method).is_some()
            || server.methods.iter().any(|m| m.name == *method);
        if !known {
            let why = format!(
                "{method:?} is no operation of this server: an A2A 1.0 operation name (SendMessage, CancelTask, ...), \
                 `*` for all, or an extension method it serves"
            );
            return Err(A2AError::invalid_field(format!("security.requiredScopes.{method}"), why));
        }
    }
    if let Some(extended) = extended {
        secured(self::card(extended, base, "extendedCard")?, &config)?;
    }
    Ok(())
}

/// The base URL a server bound to `addr` serves at.
pub fn base_url(addr: SocketAddr, security: &SecuritySpec) -> String {
    format!("{}://{addr}", if security.tls_on() { "https" } else { "http" })
}

/// The server for `agent` serving at `base` (its bound address, or the public URL it is reached
/// at): cards with interfaces and security declared,
/// authentication, scopes, push signing, task visibility and TLS as `security` says.
pub fn server(
    agent: Arc<dyn AgentExecutor>,
    card: &Value,
    extended: Option<&Value>,
    stores: Stores,
    mut config: ServerConfig,
    security: &SecuritySpec,
    base: &str,
) -> Result<Server> {
    let security = security.build(base).map_err(|e| e.under("security"))?;
    security.configure(&mut config);
    let card = secured(public_card(card, base, extended)?, &security)?;
    crate::methods::check(&config.methods, &card)?;
    crate::methods::check_profiles(&config.profile_checks, &card)?;
    let mut handler = RequestHandler::new(agent, card, stores, config);
    if let Some(extended) = extended {
        let mut extended = extended.clone();
        declare_extended(&mut extended);
        handler = handler.with_extended_card(secured(self::card(&extended, base, "extendedCard")?, &security)?);
    }
    let mut server = Server::new(Arc::new(security.secure(handler)));
    if let Some(tls) = security.tls_config()? {
        server = server.tls(tls);
    }
    Ok(server)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_server_given_an_extended_card_declares_it_unless_its_card_says_no() {
        let card = |capabilities: Value| {
            json!({"name": "a", "description": "d", "version": "1", "capabilities": capabilities,
                "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]})
        };
        let extended = card(json!({}));
        let base = "http://127.0.0.1:1";
        let declared =
            |c: &Value, e: Option<&Value>| public_card(c, base, e).map(|c| c.capabilities.extended_agent_card);
        assert_eq!(declared(&card(json!({"streaming": true})), Some(&extended)).unwrap(), Some(true));
        assert_eq!(declared(&card(json!({})), None).unwrap(), None, "nothing to serve: left alone");
        assert_eq!(declared(&card(json!({"extendedAgentCard": true})), Some(&extended)).unwrap(), Some(true));
        assert_eq!(declared(&card(json!({"extended_agent_card": true})), Some(&extended)).unwrap(), Some(true));
        for no in [json!({"extendedAgentCard": false}), json!({"extended_agent_card": false})] {
            let refused = declared(&card(no), Some(&extended)).unwrap_err();
            assert_eq!(refused.violations[0].field, "extendedCard");
        }
    }
}
