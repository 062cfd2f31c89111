//! The one test agent of the integration tests: [`TestAgent`], scripted per message.
//!
//! A script is a list of [`Step`]s, picked by the first word of the message text: rules added
//! with [`TestAgent::on`] apply to any turn, [`TestAgent::on_follow_up`] to a message for an
//! existing task (and wins there); any other word runs [`TestAgent::otherwise`]. Texts are
//! templates: `{text}` (the message text), `{principal}` (the caller's name, `anonymous`
//! without one), `{extensions}` and `{skills}` (the activated extension URIs and the skills
//! the caller may use, comma-separated).
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
use a2a_native::model::{Message, Part, Role, StreamResponse, TaskState};
use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// One thing the agent does; a script runs its steps in order.
#[derive(Debug, Clone)]
pub enum Step {
    /// A status update, with an agent message of this text (a template) or none.
    Status(TaskState, Option<String>),
    /// A whole artifact named `.0`, of one text part `.1` (a template), with a fresh id.
    Artifact(String, String),
    /// A direct reply (an agent message of this text, a template) instead of a task.
    Reply(String),
    Sleep(Duration),
    /// Returns an executor error with this message (the task ends FAILED with it).
    Fail(String),
    /// Panics with this message (a bug in the agent).
    Panic(String),
    /// Waits until the task is canceled, then goes on (and returns).
    UntilCanceled,
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

/// The scriptable agent. Keep an `Arc` of it to read what it saw.
pub struct TestAgent {
    rules: HashMap<String, Vec<Step>>,
    follow_ups: HashMap<String, Vec<Step>>,
    otherwise: Vec<Step>,
    cancel_delay: Duration,
    runs: Mutex<Vec<Run>>,
    cancels: Mutex<Vec<RequestContext>>,
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
            rules: HashMap::new(),
            follow_ups: HashMap::new(),
            otherwise: vec![Step::complete()],
            cancel_delay: Duration::ZERO,
            runs: Mutex::default(),
            cancels: Mutex::default(),
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
        let word = first_word(&text);
        let follow_up = ctx.task.as_ref().and_then(|_| self.follow_ups.get(word));
        follow_up.or_else(|| self.rules.get(word)).unwrap_or(&self.otherwise)
    }
}

fn first_word(text: &str) -> &str {
    text.split_whitespace().next().unwrap_or("")
}

/// Fills a text template from the request.
fn fill(template: &str, ctx: &RequestContext) -> String {
    let principal = ctx.principal.as_ref().map_or("anonymous", |p| p.name.as_str());
    template
        .replace("{principal}", principal)
        .replace("{extensions}", &ctx.extensions.join(","))
        .replace("{skills}", &ctx.skills.join(","))
        .replace("{text}", &ctx.text())
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
        for uri in &ctx.extensions {
            events.activate_extension(uri);
        }
        for step in self.script(&ctx) {
            match step {
                Step::Status(state, None) => events.status(*state, None).await?,
                Step::Status(state, Some(text)) => events.status_text(*state, fill(text, &ctx)).await?,
                Step::Artifact(name, text) => {
                    events.artifact_parts(name.clone(), vec![Part::text(fill(text, &ctx))]).await?
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
                Step::Panic(message) => panic!("{message}"),
                Step::UntilCanceled => ctx.cancelled.cancelled().await,
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
}
