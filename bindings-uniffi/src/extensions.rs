//! Extension methods and profile checks written in Kotlin/Swift: foreign handlers given in the
//! server's options, called by core (`AgentExecutor::call_method` / `check_message`) through
//! [`crate::executor::ForeignExecutor`]. Core decides routing, auth, activation and errors.

use crate::convert::ToRecord;
use crate::errors::Result;
use crate::models_gen::Message;
use a2a_native::A2AError;
use a2a_native::methods::{MessageCheck, MethodCall, MethodSpec, profile_violation};
use std::collections::HashMap;
use std::sync::Arc;

/// What an extension method's handler knows about the call it serves.
#[derive(Debug, Clone, uniffi::Record)]
pub struct MethodContext {
    pub method: String,
    /// The URI of the extension the method belongs to.
    pub extension: String,
    pub tenant: String,
    /// The authenticated caller's name (`null` when anonymous) and scopes.
    pub principal: Option<String>,
    pub scopes: Vec<String>,
    /// Extension URIs the client asked for that the agent declares.
    pub extensions: Vec<String>,
    /// The caller's W3C trace context, as received.
    pub traceparent: Option<String>,
    pub tracestate: Option<String>,
    pub baggage: Option<String>,
}

/// The handler of one extension method (Kotlin `suspend fun`, Swift `async`).
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait MethodHandler: Send + Sync {
    /// `params`: the request's params as JSON text (`null` when absent). Returns the result as
    /// JSON text. An `A2aException` thrown is sent as that error; anything else as InternalError.
    async fn call(&self, params: String, context: MethodContext) -> Result<String>;
}

/// The rules of a profile extension, checked on every incoming message of a request that
/// activates it (the client asks for it, or the card requires it), before any task is made.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait ProfileCheck: Send + Sync {
    /// `null` when the message follows the rules; else the rule it breaks, sent as
    /// InvalidParamsError naming the extension. An `A2aException` thrown is sent as it is.
    async fn check(&self, message: Message) -> Result<Option<String>>;
}

/// One extension method: its JSON-RPC name, the extension URI the card declares for it, its
/// HTTP+JSON path under the interface's base (`/` + name when absent), and its handler.
#[derive(uniffi::Record)]
pub struct ExtensionMethod {
    pub name: String,
    pub extension: String,
    #[uniffi(default)]
    pub path: Option<String>,
    pub handler: Arc<dyn MethodHandler>,
}

/// A profile extension's check (the URI must be declared by the card).
#[derive(uniffi::Record)]
pub struct ExtensionProfile {
    pub extension: String,
    pub check: Arc<dyn ProfileCheck>,
}

/// The handlers a server was given, by method name and by extension URI.
#[derive(Default, Clone)]
pub struct Handlers {
    methods: HashMap<String, Arc<dyn MethodHandler>>,
    checks: HashMap<String, Arc<dyn ProfileCheck>>,
}

impl Handlers {
    /// The handlers, and what core's options declare of them.
    pub fn new(methods: &[ExtensionMethod], profiles: &[ExtensionProfile]) -> (Self, Vec<MethodSpec>, Vec<String>) {
        let specs = methods
            .iter()
            .map(|m| MethodSpec { name: m.name.clone(), extension: m.extension.clone(), path: m.path.clone() })
            .collect();
        let uris = profiles.iter().map(|p| p.extension.clone()).collect();
        let handlers = Self {
            methods: methods.iter().map(|m| (m.name.clone(), m.handler.clone())).collect(),
            checks: profiles.iter().map(|p| (p.extension.clone(), p.check.clone())).collect(),
        };
        (handlers, specs, uris)
    }

    pub async fn call(&self, call: MethodCall) -> a2a_native::Result<serde_json::Value> {
        let handler = self.methods.get(&call.method).ok_or_else(|| A2AError::method_not_found(&call.method))?;
        let context = MethodContext {
            method: call.method.clone(),
            extension: call.extension.clone(),
            tenant: call.tenant.clone(),
            principal: call.principal.as_ref().map(|p| p.name.clone()),
            scopes: call.principal.as_ref().map(|p| p.scopes.clone()).unwrap_or_default(),
            extensions: call.extensions.clone(),
            traceparent: call.trace.traceparent.clone(),
            tracestate: call.trace.tracestate.clone(),
            baggage: call.trace.baggage.clone(),
        };
        let text = handler.call(call.params.to_string(), context).await.map_err(A2AError::from)?;
        serde_json::from_str(&text)
            .map_err(|e| A2AError::internal(format!("the method's result is not JSON text: {e}")))
    }

    pub async fn check(&self, check: MessageCheck) -> a2a_native::Result<()> {
        let Some(rules) = self.checks.get(&check.extension) else { return Ok(()) };
        let message = check.message.clone().to_record();
        match rules.check(message).await {
            Ok(None) => Ok(()),
            Ok(Some(rule)) => Err(profile_violation(&check.extension, rule)),
            Err(e) => Err(A2AError::from(e)),
        }
    }
}
