//! The one test agent of the integration tests: [`TestAgent`], scripted per message.
//!
//! A script is a list of [`Step`]s, picked by the message text: a whole text given to
//! [`TestAgent::on_text`] first, then its first word: rules added with [`TestAgent::on`] apply to
//! any turn, [`TestAgent::on_follow_up`] to a message for an existing task (and wins there); any
//! other text runs [`TestAgent::otherwise`]. Texts are templates: `{text}` (the message text),
//! `{principal}` (the caller's name, `anonymous` without one), `{extensions}` and `{skills}`
//! (the activated extension URIs and the skills the caller may use, comma-separated),
//! `{history}` (the task's earlier turns, `user:hi|agent:name?`).
//!
//! Extension methods and profile checks are answered by the closures given to
//! [`TestAgent::answering`] and [`TestAgent::checking`] (by default as any executor answers).
//!
//! ```ignore
//! let agent = Arc::new(
//!     TestAgent::new()
//!         .on("ask", [Step::status(TaskState::InputRequired, "which city?")])
//!         .on("hold", [Step::working(), Step::UntilCanceled])
//!         .otherwise([Step::working(), Step::artifact("echo", "echo: {text}"), Step::complete()]),
//! );
//! let handler = RequestHandler::new(agent.clone(), card, Stores::memory(), config);
//! // ... later: what it ran, whether a "hold" run has stopped, whether `cancel` was called.
//! assert!(agent.ended("hold") && !agent.cancels().is_empty());
//! ```
//!
//! [`TestAgent::standard`] is the vocabulary the HTTP server and client tests share.

use a2a_native::executor::{AgentExecutor, EventSink, ExecutorError, RequestContext};
use a2a_native::methods::{MessageCheck, MethodCall};
use a2a_native::model::{Artifact, Message, Part, Role, StreamResponse, TaskState};
use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// One thing the agent does; a script runs its steps in order.
#[derive(Debug, Clone)]
pub enum Step {
    /// A status update, with an agent message of this text (a template) or none.
    Status(TaskState, Option<String>),
    /// A whole artifact named `.0`, of one text part `.1` (a template), with a fresh id.
    Artifact(String, String),
    /// An artifact update of one text part (a template), unnamed: of the artifact `id` (none:
    /// a fresh id per chunk), appended to it or not, its last chunk or not.
    Chunk {
        id: Option<String>,
        text: String,
        append: bool,
        last: bool,
    },
    /// A direct reply (an agent message of this text, a template) instead of a task.
    Reply(String),
    Sleep(Duration),
    /// Returns an executor error with this message (the task ends FAILED with it).
    Fail(String),
    /// Returns a refusal: this A2A error (the request's answer while no task exists).
    Refuse(a2a_native::ErrorKind, String),
    /// Sends a status naming another task and passes the sink's refusal on as its own, as an
    /// agent in another language does with the exception it got.
    PassOnRefusal,
    /// Panics with this message (a bug in the agent).
    Panic(String),
    /// Waits until the task is canceled, then goes on (and returns).
    UntilCanceled,
    /// Waits for this signal (as an OAuth callback would reach the agent out of band); when the
    /// task is canceled first, the run ends there.
    UntilSignal(Arc<Notify>),
    /// Never returns and ignores cancellation: only dropping the work stops it.
    Hang,
    /// Completes the task from a detached task after this long, whatever happened meanwhile.
    CompleteLater(Duration),
    /// A WORKING status stamped this long before it is sent (an agent that made its event
    /// earlier, or a clock a little behind).
    WorkingSince(Duration),
}

impl Step {
    pub fn working() -> Self {
        Step::Status(TaskState::Working, None)
    }
    /// COMPLETED, without a message.
    pub fn complete() -> Self {
        Step::Status(TaskState::Completed, None)
    }
    /// A status with an agent message of this text.
    pub fn status(state: TaskState, text: &str) -> Self {
        Step::Status(state, Some(text.to_owned()))
    }
    pub fn artifact(name: &str, text: &str) -> Self {
        Step::Artifact(name.to_owned(), text.to_owned())
    }
    pub fn reply(text: &str) -> Self {
        Step::Reply(text.to_owned())
    }
    pub fn sleep(ms: u64) -> Self {
        Step::Sleep(Duration::from_millis(ms))
    }
    pub fn fail(message: &str) -> Self {
        Step::Fail(message.to_owned())
    }
    pub fn complete_later(ms: u64) -> Self {
        Step::CompleteLater(Duration::from_millis(ms))
    }
}

/// One execution the agent saw, and whether it has ended (returned, or its future dropped).
#[derive(Debug, Clone)]
pub struct Run {
    pub ctx: RequestContext,
    pub ended: bool,
}

type MethodAnswer = dyn Fn(MethodCall) -> a2a_native::Result<serde_json::Value> + Send + Sync;
type MessageRule = dyn Fn(MessageCheck) -> a2a_native::Result<()> + Send + Sync;

/// The scriptable agent. Keep an `Arc` of it to read what it saw.
pub struct TestAgent {
    texts: HashMap<String, Vec<Step>>,
    rules: HashMap<String, Vec<Step>>,
    follow_ups: HashMap<String, Vec<Step>>,
    otherwise: Vec<Step>,
    cancel_delay: Duration,
    /// Whether it activates the extensions a request offers (see [`TestAgent::passive`]).
    activates: bool,
    runs: Mutex<Vec<Run>>,
    cancels: Mutex<Vec<RequestContext>>,
    methods: Option<Box<MethodAnswer>>,
    checks: Option<Box<MessageRule>>,
}

impl Default for TestAgent {
    fn default() -> Self {
        Self::new()
    }
}

impl TestAgent {
    /// No rules; every message completes the task (no message).
    pub fn new() -> Self {
        Self {
            texts: HashMap::new(),
            rules: HashMap::new(),
            follow_ups: HashMap::new(),
            otherwise: vec![Step::complete()],
            cancel_delay: Duration::ZERO,
            activates: true,
            runs: Mutex::default(),
            cancels: Mutex::default(),
            methods: None,
            checks: None,
        }
    }

    /// `direct` replies "direct reply"; `extensions` replies with the activated extensions;
    /// `whoami` completes with the caller's name; `input` asks "more please"; `wait` works until
    /// canceled; `slow` works 300 ms, then completes with an artifact "slow result"; anything
    /// else works, echoes "echo: TEXT" in an artifact and completes with "done".
    pub fn standard() -> Self {
        Self::new()
            .on("direct", [Step::reply("direct reply")])
            .on("extensions", [Step::reply("{extensions}")])
            .on("whoami", [Step::status(TaskState::Completed, "{principal}")])
            .on("input", [Step::status(TaskState::InputRequired, "more please")])
            .on("wait", [Step::working(), Step::UntilCanceled])
            // Returns with the task WORKING: nothing here runs it any more (as when another
            // instance runs it, or a later turn will).
            .on("idle", [Step::working()])
            .on("slow", [Step::working(), Step::sleep(300), Step::artifact("slow", "slow result"), Step::complete()])
            .otherwise([
                Step::working(),
                Step::artifact("echo", "echo: {text}"),
                Step::status(TaskState::Completed, "done"),
            ])
    }

    /// Messages of exactly this text run `steps` (before any rule by first word).
    pub fn on_text(mut self, text: &str, steps: impl IntoIterator<Item = Step>) -> Self {
        self.texts.insert(text.to_owned(), steps.into_iter().collect());
        self
    }

    /// Messages whose first word is `word` run `steps` (on any turn).
    pub fn on(mut self, word: &str, steps: impl IntoIterator<Item = Step>) -> Self {
        self.rules.insert(word.to_owned(), steps.into_iter().collect());
        self
    }

    /// Messages for an existing task whose first word is `word` run `steps`.
    pub fn on_follow_up(mut self, word: &str, steps: impl IntoIterator<Item = Step>) -> Self {
        self.follow_ups.insert(word.to_owned(), steps.into_iter().collect());
        self
    }

    /// What messages no rule matches run.
    pub fn otherwise(mut self, steps: impl IntoIterator<Item = Step>) -> Self {
        self.otherwise = steps.into_iter().collect();
        self
    }

    /// Extension methods are answered by `answer`.
    pub fn answering(
        mut self,
        answer: impl Fn(MethodCall) -> a2a_native::Result<serde_json::Value> + Send + Sync + 'static,
    ) -> Self {
        self.methods = Some(Box::new(answer));
        self
    }

    /// Messages that activate a profile extension are checked by `rule`.
    pub fn checking(mut self, rule: impl Fn(MessageCheck) -> a2a_native::Result<()> + Send + Sync + 'static) -> Self {
        self.checks = Some(Box::new(rule));
        self
    }

    /// Activates no extension itself: only those the server activates are echoed (by default
    /// it uses every extension it is offered).
    pub fn passive(mut self) -> Self {
        self.activates = false;
        self
    }

    /// How long `cancel` takes (the manager writes CANCELED after it returns). Default: none.
    pub fn cancel_delay(mut self, ms: u64) -> Self {
        self.cancel_delay = Duration::from_millis(ms);
        self
    }

    /// Every execution so far, in the order they started.
    pub fn runs(&self) -> Vec<Run> {
        self.runs.lock().unwrap().clone()
    }

    /// Whether an execution of a message whose first word is `word` has ended.
    pub fn ended(&self, word: &str) -> bool {
        self.runs().iter().any(|r| r.ended && first_word(&r.ctx.text()) == word)
    }

    /// The contexts of the calls to `cancel`, in order.
    pub fn cancels(&self) -> Vec<RequestContext> {
        self.cancels.lock().unwrap().clone()
    }

    fn script(&self, ctx: &RequestContext) -> &[Step] {
        let text = ctx.text();
        if let Some(steps) = self.texts.get(&text) {
            return steps;
        }
        let word = first_word(&text);
        let follow_up = ctx.task.as_ref().and_then(|_| self.follow_ups.get(word));
        follow_up.or_else(|| self.rules.get(word)).unwrap_or(&self.otherwise)
    }
}

fn first_word(text: &str) -> &str {
    text.split_whitespace().next().unwrap_or("")
}

/// Fills a text template from the request.
/// In one pass: a filled-in value (a message text, say) is never read as a template itself.
fn fill(template: &str, ctx: &RequestContext) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let (name, after) = rest[start + 1..].split_once('}').unwrap_or(("", ""));
        let value = match name {
            "principal" => ctx.principal.as_ref().map_or("anonymous", |p| p.name.as_str()).to_owned(),
            "extensions" => ctx.extensions.join(","),
            "skills" => ctx.skills.join(","),
            "text" => ctx.text(),
            "history" => history(ctx),
            _ => {
                // Not a placeholder: the brace is text.
                out.push('{');
                rest = &rest[start + 1..];
                continue;
            }
        };
        out.push_str(&value);
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The task's earlier turns, `role:text` joined by `|`.
fn history(ctx: &RequestContext) -> String {
    let role = |m: &Message| if m.role == Role::User { "user" } else { "agent" };
    let history = ctx.task.iter().flat_map(|t| &t.history);
    history.map(|m| format!("{}:{}", role(m), m.text_content())).collect::<Vec<_>>().join("|")
}

/// Marks its run ended when dropped: on return, or when the work is dropped mid-way.
struct Ending<'a>(&'a Mutex<Vec<Run>>, usize);

impl Drop for Ending<'_> {
    fn drop(&mut self) {
        if let Ok(mut runs) = self.0.lock() {
            runs[self.1].ended = true;
        }
    }
}

#[async_trait]
impl AgentExecutor for TestAgent {
    async fn execute(&self, ctx: RequestContext, events: EventSink) -> Result<(), ExecutorError> {
        let _ending = {
            let mut runs = self.runs.lock().unwrap();
            runs.push(Run { ctx: ctx.clone(), ended: false });
            Ending(&self.runs, runs.len() - 1)
        };
        // It uses every extension it is offered (echoed in the response's A2A-Extensions).
        for uri in ctx.extensions.iter().filter(|_| self.activates) {
            events.activate_extension(uri);
        }
        for step in self.script(&ctx) {
            match step {
                Step::Status(state, None) => events.status(*state, None).await?,
                Step::Status(state, Some(text)) => events.status_text(*state, fill(text, &ctx)).await?,
                Step::Artifact(name, text) => {
                    events.artifact_parts(name.clone(), vec![Part::text(fill(text, &ctx))]).await?
                }
                Step::Chunk { id, text, append, last } => {
                    let artifact = Artifact {
                        artifact_id: id.clone().unwrap_or_default(),
                        name: String::new(),
                        description: String::new(),
                        parts: vec![Part::text(fill(text, &ctx))],
                        metadata: None,
                        extensions: Vec::new(),
                    };
                    events.artifact(artifact, *append, *last).await?
                }
                Step::Reply(text) => events.message(Message::text(Role::Agent, fill(text, &ctx))).await?,
                Step::Sleep(d) => tokio::time::sleep(*d).await,
                Step::WorkingSince(ago) => {
                    let mut event = events.status_event(TaskState::Working, None);
                    if let StreamResponse::StatusUpdate(e) = &mut event {
                        e.status.timestamp = e.status.timestamp.map(|t| t - chrono::TimeDelta::from_std(*ago).unwrap());
                    }
                    events.send(event).await?
                }
                Step::Fail(message) => return Err(ExecutorError::new(message.clone())),
                Step::PassOnRefusal => {
                    let mut event = events.status_event(TaskState::Working, None);
                    if let StreamResponse::StatusUpdate(e) = &mut event {
                        e.task_id = "another-task".into();
                    }
                    let refused = events.send(event).await.expect_err("an event of another task is refused");
                    return Err(ExecutorError::refusal(refused));
                }
                Step::Refuse(kind, message) => {
                    return Err(ExecutorError::refusal(a2a_native::A2AError::new(*kind, message.clone())));
                }
                Step::Panic(message) => panic!("{message}"),
                Step::UntilCanceled => ctx.cancelled.cancelled().await,
                Step::UntilSignal(signal) => tokio::select! {
                    _ = signal.notified() => {}
                    _ = ctx.cancelled.cancelled() => return Ok(()),
                },
                Step::Hang => std::future::pending::<()>().await,
                Step::CompleteLater(d) => {
                    let (late, d) = (events.clone(), *d);
                    tokio::spawn(async move {
                        tokio::time::sleep(d).await;
                        let _ = late.complete(None).await;
                    });
                }
            }
        }
        Ok(())
    }

    async fn cancel(&self, ctx: RequestContext, _events: EventSink) -> Result<(), ExecutorError> {
        self.cancels.lock().unwrap().push(ctx);
        if !self.cancel_delay.is_zero() {
            tokio::time::sleep(self.cancel_delay).await;
        }
        Ok(())
    }

    async fn call_method(&self, call: MethodCall) -> a2a_native::Result<serde_json::Value> {
        match &self.methods {
            Some(answer) => answer(call),
            None => Err(a2a_native::A2AError::method_not_found(&call.method)),
        }
    }

    async fn check_message(&self, check: MessageCheck) -> a2a_native::Result<()> {
        self.checks.as_ref().map_or(Ok(()), |rule| rule(check))
    }
}
