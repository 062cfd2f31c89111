//! The transport-free request handler: one typed A2A 1.0 request in, a typed reply out.
//! Both HTTP bindings (and the 0.3 adapter) call [`RequestHandler::handle`]; protocol
//! semantics (SPEC.md §2.2) are decided here and in [`crate::task::manager`], never in a binding.

use crate::error::{A2AError, ErrorKind, Result};
use crate::executor::AgentExecutor;
use crate::model::{
    self, AgentCard, ListTaskPushNotificationConfigsResponse, ListTasksResponse, SendMessageRequest,
    SendMessageResponse, Task, TaskPushNotificationConfig,
};
use crate::request::A2ARequest;
use crate::store::Stores;
use crate::task::call::{CallContext, EventStream};
use crate::task::config::{Limits, ServerConfig};
use crate::task::manager::{Sent, TaskManager};
use serde_json::Value;
use std::sync::Arc;

/// The outcome of one request.
pub enum Reply {
    /// A result, typed: each binding writes it once in its own form (no JSON tree between).
    Value(Payload),
    /// `google.protobuf.Empty` (DeleteTaskPushNotificationConfig).
    Empty,
    /// Server-sent events, closed by the server when the task ends.
    Stream(EventStream),
}

/// The result of a unary operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    Sent(Box<SendMessageResponse>),
    Task(Box<Task>),
    Tasks(ListTasksResponse),
    PushConfig(TaskPushNotificationConfig),
    PushConfigs(ListTaskPushNotificationConfigsResponse),
    Card(Box<AgentCard>),
}

impl serde::Serialize for Payload {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Payload::Sent(r) => r.serialize(s),
            Payload::Task(t) => t.serialize(s),
            Payload::Tasks(l) => l.serialize(s),
            Payload::PushConfig(c) => c.serialize(s),
            Payload::PushConfigs(l) => l.serialize(s),
            Payload::Card(c) => c.serialize(s),
        }
    }
}

impl Payload {
    /// The result in 1.0 ProtoJSON, as a JSON value.
    pub fn to_value(&self) -> Value {
        model::to_value(self)
    }

    /// The task and context ids the result names (for tracing), `""` where it names none.
    pub fn ids(&self) -> (&str, &str) {
        match self {
            Payload::Sent(r) => match &**r {
                SendMessageResponse::Task(t) => (&t.id, &t.context_id),
                SendMessageResponse::Message(m) => (&m.task_id, &m.context_id),
            },
            Payload::Task(t) => (&t.id, &t.context_id),
            _ => ("", ""),
        }
    }
}

/// Answers A2A requests for one agent.
pub struct RequestHandler {
    card: AgentCard,
    extended_card: Option<AgentCard>,
    authenticator: Option<Arc<dyn super::auth::Authenticator>>,
    stores: Stores,
    limits: Limits,
    visibility: super::TaskVisibility,
    scopes: super::auth::RequiredScopes,
    /// Scopes per skill, from the public card's skills and then the extended card's.
    skills: super::auth::SkillScopes,
    /// Re-signs the extended card after skills are left out of it for a caller.
    card_signer: Option<Arc<crate::signing::CardSigner>>,
    push_signer: Option<Arc<crate::push::PushSigner>>,
    shutdown_grace: std::time::Duration,
    manager: TaskManager,
    metrics: Arc<crate::metrics::Metrics>,
    /// The agent, for its extension methods (the manager runs its executions).
    agent: Arc<dyn AgentExecutor>,
    methods: Vec<crate::methods::MethodSpec>,
    profile_checks: Vec<String>,
    /// The card's required extensions: active on every request, so their profiles apply.
    required_extensions: Vec<String>,
    /// What large request bodies may hold at once, shared by every service made for it.
    bodies: super::budget::BodyBudget,
    /// What buffered answers not yet sent may hold at once: a budget of the same size, apart,
    /// so that answers a client is slow to read never stop requests from being read.
    answers: super::budget::BodyBudget,
}

/// How long a refused write keeps a server unready (see [`RequestHandler::ready`]): long enough
/// for a load balancer to notice, short enough that a server with no traffic sent its way
/// (which writes nothing to prove the store well) is tried again soon.
const WRITE_FAILURE_HOLD: std::time::Duration = std::time::Duration::from_secs(10);

impl RequestHandler {
    pub fn new(agent: Arc<dyn AgentExecutor>, card: AgentCard, stores: Stores, config: ServerConfig) -> Self {
        let push_enabled = card.capabilities.push_notifications == Some(true);
        let manager = TaskManager::new(agent.clone(), stores.clone(), &config, push_enabled);
        Self {
            agent,
            methods: config.methods,
            profile_checks: config.profile_checks,
            required_extensions: card
                .capabilities
                .extensions
                .iter()
                .filter(|e| e.required)
                .map(|e| e.uri.clone())
                .collect(),
            skills: super::auth::SkillScopes::from_cards([&card]),
            card_signer: None,
            card,
            extended_card: None,
            authenticator: None,
            stores,
            bodies: super::budget::BodyBudget::for_limits(&config.limits),
            answers: super::budget::BodyBudget::for_limits(&config.limits),
            limits: config.limits,
            visibility: config.task_visibility,
            scopes: super::auth::RequiredScopes::default(),
            push_signer: config.push.signer.clone(),
            shutdown_grace: config.shutdown_grace,
            manager,
            metrics: config.metrics,
        }
    }

    /// The extension method named `name` (JSON-RPC), if the agent serves one.
    pub fn method(&self, name: &str) -> Option<&crate::methods::MethodSpec> {
        self.methods.iter().find(|m| m.name == name)
    }

    /// The extension method served at the HTTP+JSON path `path` (under a base), if any: its
    /// declared path, or `/` + its name (where clients that know only the name call it); each
    /// also under a `/{tenant}` prefix, as the core routes are (the tenant's raw path segment is
    /// returned; the HTTP+JSON binding decodes it, and prefers a core route that the path names).
    pub fn method_at<'p>(&self, path: &'p str) -> Option<(&crate::methods::MethodSpec, Option<&'p str>)> {
        let at = |path: &str| {
            self.methods.iter().find(|m| m.http_path() == path || path.strip_prefix('/') == Some(m.name.as_str()))
        };
        if let Some(spec) = at(path) {
            return Some((spec, None));
        }
        let (tenant, rest) = path.strip_prefix('/')?.split_once('/')?;
        let tenant = Some(tenant).filter(|t| !t.is_empty())?;
        at(&format!("/{rest}")).map(|spec| (spec, Some(tenant)))
    }

    /// Calls the extension method `spec` with `params`: the caller's scopes are checked as for
    /// a core method (scopes named by the method's name), then the agent answers.
    pub async fn call_method(
        &self,
        ctx: &CallContext,
        spec: &crate::methods::MethodSpec,
        params: Value,
    ) -> Result<Value> {
        self.scopes.check(&spec.name, ctx.principal.as_ref())?;
        let tenant = params.get("tenant").and_then(Value::as_str).unwrap_or_default().to_owned();
        let call = crate::methods::MethodCall {
            method: spec.name.clone(),
            extension: spec.extension.clone(),
            params,
            tenant,
            principal: ctx.principal.clone(),
            extensions: ctx.extensions.clone(),
            trace: ctx.trace.clone(),
        };
        self.agent.call_method(call).await
    }

    /// The card GetExtendedAgentCard serves (declare `capabilities.extendedAgentCard` too).
    pub fn with_extended_card(mut self, card: AgentCard) -> Self {
        self.skills = super::auth::SkillScopes::from_cards([&self.card, &card]);
        self.extended_card = Some(card);
        self
    }

    /// The key the served cards are signed with: the extended card is signed again when skills
    /// are left out of it for a caller (its signatures would no longer match).
    pub fn with_card_signer(mut self, signer: Arc<crate::signing::CardSigner>) -> Self {
        self.card_signer = Some(signer);
        self
    }

    /// Authenticates callers (see [`super::auth`] for the policy the server applies).
    /// The signer of push notifications, when they are signed.
    pub fn push_signer(&self) -> Option<&Arc<crate::push::PushSigner>> {
        self.push_signer.as_ref()
    }

    /// Scopes each operation needs beyond authentication (403 when the caller lacks one).
    pub fn with_required_scopes(mut self, scopes: super::auth::RequiredScopes) -> Self {
        self.scopes = scopes;
        self
    }

    pub fn with_authenticator(mut self, authenticator: Arc<dyn super::auth::Authenticator>) -> Self {
        self.authenticator = Some(authenticator);
        self
    }

    pub fn authenticator(&self) -> Option<&Arc<dyn super::auth::Authenticator>> {
        self.authenticator.as_ref()
    }

    /// Every skill needs an authenticated caller, but nothing authenticates: each message will
    /// be refused (fail closed). Worth a warning when the server starts.
    pub(crate) fn skills_unreachable(&self) -> bool {
        self.authenticator.is_none() && self.skills.all_need_authentication()
    }

    /// The public agent card.
    pub fn card(&self) -> &AgentCard {
        &self.card
    }

    /// The metrics this handler's requests, tasks and pushes are recorded in.
    pub fn metrics(&self) -> &Arc<crate::metrics::Metrics> {
        &self.metrics
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub(crate) fn body_budget(&self) -> &super::budget::BodyBudget {
        &self.bodies
    }

    pub(crate) fn answer_budget(&self) -> &super::budget::BodyBudget {
        &self.answers
    }

    /// Tasks currently held in memory by running work, streams or waiters.
    pub fn live_tasks(&self) -> usize {
        self.manager.live_tasks()
    }

    /// Whether this server can serve calls now: its task store answers (within 2 s). The
    /// store's own words (a database's, which may name users or hosts) are logged, not returned:
    /// readiness probes are public.
    pub async fn ready(&self) -> Result<()> {
        // A store that answers but refused the last write (a full disk, a file-size limit):
        // not ready until a write succeeds again, or for [`WRITE_FAILURE_HOLD`] after it.
        // The store's words stay in the log (where the failed commit put them): this answer is public.
        if self.manager.write_failure(WRITE_FAILURE_HOLD).is_some() {
            return Err(A2AError::new(ErrorKind::Unavailable, "the task store refused a write (see the server's log)"));
        }
        match tokio::time::timeout(std::time::Duration::from_secs(2), self.stores.tasks.ping()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "not ready: the task store does not answer");
                Err(A2AError::new(ErrorKind::Unavailable, "the task store does not answer"))
            }
            Err(_) => Err(A2AError::new(ErrorKind::Unavailable, "the task store did not answer within 2 s")),
        }
    }

    /// Serves one request.
    pub async fn handle(&self, ctx: &CallContext, req: A2ARequest) -> Result<Reply> {
        self.scopes.check(req.method().as_str(), ctx.principal.as_ref())?;
        // A push config given with a message is created as CreateTaskPushNotificationConfig's
        // is, so it needs that operation's scopes too.
        if let A2ARequest::SendMessage(r) | A2ARequest::SendStreamingMessage(r) = &req
            && r.configuration.as_ref().is_some_and(|c| c.task_push_notification_config.is_some())
        {
            self.scopes
                .check(crate::request::Method::CreateTaskPushNotificationConfig.as_str(), ctx.principal.as_ref())?;
        }
        // A partition joins tenant and principal with U+001F (`CallContext::partition`): a
        // tenant holding it would let an anonymous caller name a principal's partition.
        if req.tenant().chars().any(char::is_control) {
            return Err(A2AError::invalid_field("tenant", "must not contain control characters"));
        }
        let tenant = ctx.partition(req.tenant(), self.visibility);
        // Push configs are stored under the partition; callers see the tenant they asked for
        // (the partition's principal part is ours, never shown).
        let asked = req.tenant().to_owned();
        let shown = |mut config: TaskPushNotificationConfig| {
            config.tenant.clone_from(&asked);
            config
        };
        // Read back (Get, List), a config leaves out its webhook's credentials: they are a
        // secret for the webhook, not for whoever can read the task (the spec's topics).
        let read_back = |config: TaskPushNotificationConfig| {
            let mut config = shown(config);
            if let Some(auth) = config.authentication.as_mut() {
                auth.credentials.clear();
            }
            config
        };
        // The two sends are boxed: theirs is by far the largest future of this match, and
        // unboxed it made this whole future that size, copied at every layer that moves it
        // (`App::call` boxes it: about 7,500 instructions of memcpy per SendMessage, 7% of all).
        match req {
            A2ARequest::SendMessage(r) => {
                let ctx = ctx.with_skills(self.skills.check("SendMessage", ctx.principal.as_ref())?);
                Box::pin(self.send(ctx, r, false)).await
            }
            A2ARequest::SendStreamingMessage(r) => {
                self.require_streaming()?;
                let ctx = ctx.with_skills(self.skills.check("SendStreamingMessage", ctx.principal.as_ref())?);
                Box::pin(self.send(ctx, r, true)).await
            }
            A2ARequest::GetTask(r) => {
                non_negative_history(r.history_length, "historyLength")?;
                let started = std::time::Instant::now();
                let task = self.stores.tasks.get(&tenant, &r.id, Some(self.history_cap(r.history_length))).await;
                self.metrics.store("get", started);
                let task = task?.ok_or_else(|| A2AError::task_not_found(&r.id))?;
                Ok(Reply::Value(Payload::Task(Box::new(task))))
            }
            A2ARequest::ListTasks(mut r) => {
                non_negative_history(r.history_length, "historyLength")?;
                r.history_length = Some(self.history_cap(r.history_length));
                let started = std::time::Instant::now();
                let page = self.stores.tasks.list(&tenant, &r).await;
                self.metrics.store("list", started);
                Ok(Reply::Value(Payload::Tasks(page?)))
            }
            A2ARequest::CancelTask(r) => {
                let ctx = ctx.with_skills(self.skills.permitted(ctx.principal.as_ref()));
                let task = self.manager.cancel(&ctx, &tenant, &r.tenant, &r.id, r.metadata).await?;
                Ok(Reply::Value(Payload::Task(Box::new(task))))
            }
            A2ARequest::SubscribeToTask(r) => {
                self.require_streaming()?;
                Ok(Reply::Stream(self.manager.subscribe(&tenant, &r.id, ctx.last_event_id).await?))
            }
            A2ARequest::CreateTaskPushNotificationConfig(config) => {
                let push = self.manager.push_sender().ok_or_else(push_not_supported)?;
                self.require_task(&tenant, &config.task_id).await?;
                push.check_config(&config, "")?;
                let stored = self.stores.push.create(&tenant, config).await?;
                Ok(Reply::Value(Payload::PushConfig(shown(stored))))
            }
            A2ARequest::GetTaskPushNotificationConfig(r) => {
                self.manager.push_sender().ok_or_else(push_not_supported)?;
                let config = self.stores.push.get(&tenant, &r.task_id, &r.id).await?;
                let Some(config) = config else {
                    // The spec has no error of its own for a missing config: TaskNotFound, whose
                    // message says which is missing, the task or (of a task the caller may
                    // see) its config.
                    self.require_task(&tenant, &r.task_id).await?;
                    return Err(A2AError::push_config_not_found(&r.task_id, &r.id));
                };
                Ok(Reply::Value(Payload::PushConfig(read_back(config))))
            }
            A2ARequest::ListTaskPushNotificationConfigs(r) => {
                self.manager.push_sender().ok_or_else(push_not_supported)?;
                self.require_task(&tenant, &r.task_id).await?;
                let mut page = self.stores.push.list(&tenant, &r.task_id, r.page_size, &r.page_token).await?;
                page.configs = page.configs.into_iter().map(read_back).collect();
                Ok(Reply::Value(Payload::PushConfigs(page)))
            }
            A2ARequest::DeleteTaskPushNotificationConfig(r) => {
                self.manager.push_sender().ok_or_else(push_not_supported)?;
                // Idempotent for configs, but an unknown task is TaskNotFound as in every other call.
                self.require_task(&tenant, &r.task_id).await?;
                self.stores.push.delete(&tenant, &r.task_id, &r.id).await?;
                Ok(Reply::Empty)
            }
            A2ARequest::GetExtendedAgentCard(_) => {
                if self.card.capabilities.extended_agent_card != Some(true) {
                    return Err(A2AError::unsupported_operation("this agent declares no extended agent card"));
                }
                // Spec §2.2: authenticated with a scheme from the public card.
                if !self.card.security_schemes.is_empty() && ctx.principal.is_none() {
                    return Err(super::auth::unauthenticated("the extended agent card needs an authenticated caller"));
                }
                let card = self
                    .extended_card
                    .as_ref()
                    .ok_or_else(|| A2AError::of(ErrorKind::ExtendedAgentCardNotConfigured))?;
                Ok(Reply::Value(Payload::Card(Box::new(self.extended_card_for(card, ctx.principal.as_ref())?))))
            }
        }
    }

    /// `Limits::max_parts_per_message`, for a message of `parts` parts.
    pub(crate) fn check_parts(&self, parts: usize) -> Result<()> {
        if parts > self.limits.max_parts_per_message {
            return Err(A2AError::invalid_field(
                "message.parts",
                format!("{parts} parts; this server accepts at most {}", self.limits.max_parts_per_message),
            ));
        }
        Ok(())
    }

    async fn send(&self, ctx: CallContext, r: SendMessageRequest, streaming: bool) -> Result<Reply> {
        self.check_parts(r.message.parts.len())?;
        non_negative_history(r.history_length(), "configuration.historyLength")?;
        self.check_profiles(&ctx, &r.message).await?;
        let partition = ctx.partition(&r.tenant, self.visibility);
        Ok(match self.manager.send(ctx, &partition, r, streaming).await? {
            Sent::Reply(reply) => Reply::Value(Payload::Sent(reply)),
            Sent::Stream(stream) => Reply::Stream(stream),
        })
    }

    /// The profile checks the request activates, in the server's order; the first refusal
    /// refuses the message. A check's error of another kind than the table's InvalidParams is
    /// sent as it is.
    async fn check_profiles(&self, ctx: &CallContext, message: &crate::model::Message) -> Result<()> {
        for uri in &self.profile_checks {
            if !ctx.extensions.contains(uri) && !self.required_extensions.contains(uri) {
                continue;
            }
            let check = crate::methods::MessageCheck { extension: uri.clone(), message: message.clone() };
            // A check's plain refusal (InvalidParams without a rule) names the rule in its
            // message: it becomes the profile violation, for every binding alike.
            match self.agent.check_message(check).await {
                Err(e) if e.kind == ErrorKind::InvalidParams && !e.metadata.contains_key("rule") => {
                    return Err(crate::methods::profile_violation(uri, e.message));
                }
                other => other?,
            }
            ctx.activation.force(uri);
        }
        Ok(())
    }

    /// The extended card as `principal` sees it (spec §8: it may differ per caller): only the
    /// skills it may use, signed again when some were left out. A card needs at least one
    /// skill, so a caller who may use none of its skills is refused as SendMessage would be.
    fn extended_card_for(&self, card: &AgentCard, principal: Option<&super::auth::Principal>) -> Result<AgentCard> {
        let permitted = self.skills.check("GetExtendedAgentCard", principal)?;
        if card.skills.iter().all(|s| permitted.contains(&s.id)) {
            return Ok(card.clone());
        }
        let mut card = card.clone();
        card.skills.retain(|s| permitted.contains(&s.id));
        if card.skills.is_empty() {
            return Err(A2AError::new(
                ErrorKind::PermissionDenied,
                "none of the extended agent card's skills is open to the caller",
            ));
        }
        card.signatures.clear();
        if let Some(signer) = &self.card_signer {
            signer.sign(&mut card)?;
        }
        Ok(card)
    }

    fn require_streaming(&self) -> Result<()> {
        if self.card.capabilities.streaming != Some(true) {
            return Err(A2AError::unsupported_operation("this agent does not support streaming"));
        }
        Ok(())
    }

    async fn require_task(&self, tenant: &str, id: &str) -> Result<()> {
        let started = std::time::Instant::now();
        let task = self.stores.tasks.get(tenant, id, Some(0)).await;
        self.metrics.store("get", started);
        match task? {
            Some(_) => Ok(()),
            None => Err(A2AError::task_not_found(id)),
        }
    }

    /// The history length a read returns: the request's, capped by the server's limit.
    fn history_cap(&self, asked: Option<i32>) -> i32 {
        let cap = i32::try_from(self.limits.max_history_length).unwrap_or(i32::MAX);
        asked.map_or(cap, |n| n.min(cap))
    }

    /// Ends the tasks a previous run of this server left active (see
    /// [`TaskManager::recover_interrupted`]); [`super::Server`] calls it before it accepts.
    pub async fn recover_interrupted(&self) -> usize {
        self.manager.recover_interrupted().await
    }

    /// Graceful shutdown: running tasks get the configured grace to finish (then end FAILED),
    /// every open stream ends cleanly, and pending push notifications are flushed.
    pub async fn shutdown(&self) {
        self.manager.shutdown(self.shutdown_grace, std::time::Duration::from_secs(5)).await;
    }
}

fn push_not_supported() -> A2AError {
    A2AError::of(ErrorKind::PushNotificationNotSupported)
}

fn non_negative_history(n: Option<i32>, field: &str) -> Result<()> {
    match n {
        Some(n) if n < 0 => Err(A2AError::invalid_field(field, "historyLength must not be negative")),
        _ => Ok(()),
    }
}
