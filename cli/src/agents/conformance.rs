//! The conformance agent: behaviour scripted by the message's `messageId` prefix, as the
//! official A2A TCK (a2aproject/a2a-tck) drives it.
//!
//! Anything unscripted behaves as the TCK's reference agent does: the task goes to WORKING
//! and stays there, so the TCK can list it, cancel it and send follow-ups to it.
//! `tck-stream-*` works, adds one artifact and completes; `test-resubscribe-message-id-*`
//! stays WORKING for 2 × `TCK_STREAMING_TIMEOUT` seconds (default 2) before completing, long
//! enough for the TCK to resubscribe (its SUT_REQUIREMENTS.md).

use a2a_native::executor::{AgentExecutor, EventSink, ExecutorError, RequestContext};
use a2a_native::model::{Message, Part, PartContent, Role, TaskState};
use serde_json::json;
use std::time::Duration;

pub struct Conformance;

/// How long `tck-delayed-complete` works unless the message says `delay_ms=N`.
const DEFAULT_DELAY: Duration = Duration::from_secs(2);

#[async_trait::async_trait]
impl AgentExecutor for Conformance {
    async fn execute(&self, ctx: RequestContext, events: EventSink) -> Result<(), ExecutorError> {
        let message_id = ctx.message.as_ref().map(|m| m.message_id.clone()).unwrap_or_default();
        let text = ctx.text();
        // Every message is dispatched on its own prefix, follow-ups included: a follow-up
        // `tck-input-required` keeps the task waiting, anything else goes on to complete it.
        let script = SCRIPTS.iter().find(|(prefix, _)| message_id.starts_with(prefix)).map(|(_, s)| *s);
        match script.unwrap_or(Script::Default) {
            Script::Complete => {
                events.working().await?;
                events.status_text(TaskState::Completed, "Hello from TCK").await?;
            }
            Script::Delayed => {
                events.working().await?;
                tokio::select! {
                    () = tokio::time::sleep(delay(&text)) => {}
                    () = ctx.cancelled.cancelled() => return Ok(()),
                }
                events.status_text(TaskState::Completed, "done after a delay").await?;
            }
            Script::Artifact(kind) => {
                events.working().await?;
                events.artifact_parts(format!("{kind}-artifact"), vec![artifact_part(kind)]).await?;
                events.complete(None).await?;
            }
            Script::MessageResponse => {
                events.message(Message::text(Role::Agent, "Direct message response")).await?;
            }
            Script::InputRequired => {
                events.working().await?;
                events.status_text(TaskState::InputRequired, "Please provide more input.").await?;
            }
            Script::Reject => events.status_text(TaskState::Rejected, "rejected").await?,
            Script::Fail => events.status_text(TaskState::Failed, "failed on purpose").await?,
            Script::Echo => {
                // The echo goes in an artifact, never verbatim into history: the TCK's history
                // checks compare every history text.
                events.working().await?;
                events.artifact_parts("echo", vec![Part::text(format!("echo: {text}"))]).await?;
                events.status_text(TaskState::Completed, format!("echoed {message_id}")).await?;
            }
            Script::Resubscribe => {
                events.working().await?;
                tokio::select! {
                    () = tokio::time::sleep(resubscribe_window()) => {}
                    () = ctx.cancelled.cancelled() => return Ok(()),
                }
                events.artifact_parts("echo", vec![Part::text(format!("echo: {text}"))]).await?;
                events.complete(None).await?;
            }
            Script::Default => {
                events.working().await?;
                // With `delay_ms=N` the turn lasts that long before it returns, the task still
                // WORKING (for tests of a turn that ends without a final state).
                if text.split_whitespace().any(|w| w.starts_with("delay_ms=")) {
                    tokio::select! {
                        () = tokio::time::sleep(delay(&text)) => {}
                        () = ctx.cancelled.cancelled() => {}
                    }
                }
            }
        }
        Ok(())
    }

    async fn cancel(&self, _ctx: RequestContext, events: EventSink) -> Result<(), ExecutorError> {
        events.canceled(Some(Message::text(Role::Agent, "canceled"))).await?;
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Script {
    Complete,
    Delayed,
    Artifact(&'static str),
    MessageResponse,
    InputRequired,
    Reject,
    Fail,
    Echo,
    Resubscribe,
    Default,
}

/// Longest prefixes first: `tck-artifact-file-url` must not match `tck-artifact-file`.
const SCRIPTS: &[(&str, Script)] = &[
    ("tck-complete-task", Script::Complete),
    ("tck-delayed-complete", Script::Delayed),
    ("tck-artifact-file-url", Script::Artifact("file-url")),
    ("tck-artifact-file", Script::Artifact("file")),
    ("tck-artifact-text", Script::Artifact("text")),
    ("tck-artifact-data", Script::Artifact("data")),
    ("tck-message-response", Script::MessageResponse),
    ("tck-input-required", Script::InputRequired),
    ("tck-reject-task", Script::Reject),
    ("tck-fail-task", Script::Fail),
    ("tck-stream", Script::Echo),
    ("test-resubscribe-message-id", Script::Resubscribe),
];

/// 2 × `TCK_STREAMING_TIMEOUT` (seconds, default 2), as the TCK's SUT requirements ask.
fn resubscribe_window() -> Duration {
    let timeout = std::env::var("TCK_STREAMING_TIMEOUT").ok().and_then(|v| v.parse::<f64>().ok());
    Duration::from_secs_f64(2.0 * timeout.filter(|t| t.is_finite() && *t > 0.0).unwrap_or(2.0))
}

fn delay(text: &str) -> Duration {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix("delay_ms=")?.parse().ok())
        .map_or(DEFAULT_DELAY, Duration::from_millis)
}

fn artifact_part(kind: &str) -> Part {
    match kind {
        "file" => Part {
            filename: "output.txt".into(),
            media_type: "text/plain".into(),
            ..Part::new(PartContent::Raw(b"tck".to_vec()))
        },
        "file-url" => Part {
            filename: "output.txt".into(),
            media_type: "text/plain".into(),
            ..Part::new(PartContent::Url("https://example.com/output.txt".into()))
        },
        "data" => Part::data(json!({"key": "value", "count": 42})),
        _ => Part::text("Generated text content"),
    }
}
