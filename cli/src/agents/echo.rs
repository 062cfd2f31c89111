//! The echo agent: every message becomes a task with one artifact holding a copy of the
//! message's parts, then COMPLETED. The benchmark's reference servers do exactly the same.

use a2a_native::executor::{AgentExecutor, EventSink, ExecutorError, RequestContext};

pub struct Echo;

#[async_trait::async_trait]
impl AgentExecutor for Echo {
    async fn execute(&self, ctx: RequestContext, events: EventSink) -> Result<(), ExecutorError> {
        let parts = ctx.message.map(|m| m.parts).unwrap_or_default();
        events.artifact_parts("echo", parts).await?;
        events.complete(None).await?;
        Ok(())
    }
}
