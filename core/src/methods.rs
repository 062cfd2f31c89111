//! Extension methods, and profile checks.
//!
//! Extension methods: RPC methods an A2A extension defines (a "method extension", e.g. a
//! `tasks/search`) that an agent serves beside the core ones.
//!
//! A server's options declare each one ([`MethodSpec`]: its JSON-RPC name, the extension URI it
//! belongs to, its HTTP+JSON path); the agent's executor answers them
//! ([`crate::executor::AgentExecutor::call_method`], given a [`MethodCall`]). The declarations
//! are checked when the server is made ([`check`]): a name or path that a core method has, a
//! name declared twice, or an extension the card does not declare is refused. A call goes
//! through the same authentication, scopes, limits and tracing as a core method; a required
//! extension the request does not list is ExtensionSupportRequired, as for every call.

use crate::auth::Principal;
use crate::error::{A2AError, Result};
use crate::model::AgentCard;
use crate::trace_context::TraceParent;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One extension method, as a server's options declare it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MethodSpec {
    /// The JSON-RPC method name (`tasks/search`).
    pub name: String,
    /// The extension URI the method belongs to; the card must declare it.
    pub extension: String,
    /// The HTTP+JSON path (`POST`, JSON params in, JSON result out) under each HTTP+JSON
    /// interface's base; `/` + `name` is served too (clients know the name only).
    #[serde(default)]
    pub path: Option<String>,
}

impl MethodSpec {
    /// The HTTP+JSON path, with its leading `/`.
    pub fn http_path(&self) -> String {
        match &self.path {
            Some(p) if p.starts_with('/') => p.clone(),
            Some(p) => format!("/{p}"),
            None => format!("/{}", self.name),
        }
    }
}

/// One call of an extension method, as the executor gets it.
#[derive(Debug, Clone)]
pub struct MethodCall {
    pub method: String,
    pub extension: String,
    /// The request's `params` (JSON-RPC) or body (HTTP+JSON); `null` when absent.
    pub params: Value,
    pub tenant: String,
    /// The authenticated caller (`None` when anonymous).
    pub principal: Option<Principal>,
    /// Extension URIs the client asked for that the agent declares.
    pub extensions: Vec<String>,
    pub trace: TraceParent,
}

impl MethodCall {
    /// What a host-language handler is given: one JSON object (camelCase).
    pub fn view(&self) -> Value {
        json!({
            "method": self.method,
            "extension": self.extension,
            "params": self.params,
            "tenant": self.tenant,
            "principal": self.principal.as_ref().map(|p| json!({"name": p.name, "scopes": p.scopes})),
            "extensions": self.extensions,
            "traceContext": self.trace,
        })
    }
}

/// A profile extension's check of one incoming message (see `profileChecks` in the server
/// options): asked of the executor when the request activates the extension (the client asks
/// for it and the card declares it, or the card requires it).
#[derive(Debug, Clone)]
pub struct MessageCheck {
    /// The extension whose rules the message must follow.
    pub extension: String,
    pub message: crate::model::Message,
}

impl MessageCheck {
    /// What a host-language check is given: one JSON object (camelCase).
    pub fn view(&self) -> Value {
        json!({"extension": self.extension, "message": self.message})
    }
}

/// A failed profile check as the client gets it: InvalidParams naming the extension and the
/// rule (the check's own message). An A2A error of another kind is kept as it is.
pub fn profile_violation(extension: &str, rule: impl Into<String>) -> A2AError {
    let rule = rule.into();
    A2AError::new(
        crate::error::ErrorKind::InvalidParams,
        format!("the message breaks a rule of the extension {extension}: {rule}"),
    )
    .with_meta("extension", extension)
    .with_meta("rule", rule)
}

/// Refuses profile checks for extensions the card does not declare, and a second check of one
/// extension (which would never run: one check answers for an extension).
pub fn check_profiles(profiles: &[String], card: &AgentCard) -> Result<()> {
    for (i, uri) in profiles.iter().enumerate() {
        if profiles[..i].contains(uri) {
            return Err(A2AError::invalid_field(
                format!("profileChecks[{i}]"),
                format!("{uri:?} has a check already: one check per extension"),
            ));
        }
        if !card.capabilities.extensions.iter().any(|e| &e.uri == uri) {
            return Err(A2AError::invalid_field(
                format!("profileChecks[{i}]"),
                format!("the card's capabilities.extensions do not declare {uri:?}"),
            ));
        }
    }
    Ok(())
}

/// Refuses declarations that cannot be served alongside the core methods of `card`'s agent.
pub fn check(methods: &[MethodSpec], card: &AgentCard) -> Result<()> {
    let declared: Vec<&str> = card.capabilities.extensions.iter().map(|e| e.uri.as_str()).collect();
    for (i, m) in methods.iter().enumerate() {
        let field = |f: &str| format!("methods[{i}].{f}");
        if m.name.is_empty() || m.name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(A2AError::invalid_field(field("name"), "a method name without spaces"));
        }
        if crate::request::Method::from_name(&m.name).is_some()
            || crate::model::v03::Method::from_name(&m.name).is_some()
        {
            return Err(A2AError::invalid_field(field("name"), format!("{:?} is a core A2A method", m.name)));
        }
        if m.name.starts_with("rpc.") {
            // JSON-RPC 2.0 §4: names beginning "rpc." are the protocol's own.
            return Err(A2AError::invalid_field(field("name"), "names beginning \"rpc.\" are JSON-RPC's own"));
        }
        if methods[..i].iter().any(|o| o.name == m.name) {
            return Err(A2AError::invalid_field(field("name"), format!("{:?} is declared twice", m.name)));
        }
        if !declared.contains(&m.extension.as_str()) {
            return Err(A2AError::invalid_field(
                field("extension"),
                format!("the card's capabilities.extensions do not declare {:?}", m.extension),
            ));
        }
        for path in [m.http_path(), format!("/{}", m.name)] {
            // A core operation answers POST at this path (its body aside).
            let core_route = matches!(
                crate::rest::route("POST", &path, None, b"{}"),
                Ok(_) | Err(crate::rest::RestError::Invalid(_))
            );
            // The JSON-RPC endpoint and the card's paths are core routes too, on another verb
            // or binding: a method there could never be reached.
            let other_core = path == "/"
                || path.trim_end_matches('/').ends_with(crate::model::WELL_KNOWN_PATH)
                || path.trim_end_matches('/').ends_with(crate::model::LEGACY_WELL_KNOWN_PATH);
            if path.contains(['?', '#', ' ']) || core_route || other_core {
                return Err(A2AError::invalid_field(field("path"), format!("{path:?} is a core HTTP+JSON route")));
            }
            if methods[..i].iter().any(|o| o.http_path() == path || format!("/{}", o.name) == path) {
                return Err(A2AError::invalid_field(field("path"), format!("{path:?} is declared twice")));
            }
        }
    }
    Ok(())
}
