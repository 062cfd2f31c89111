// A streaming agent: a task, WORKING with a message, one artifact streamed word by word, then
// COMPLETED with a message.
import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent } from '@a2a-js/sdk/server';

const text = (value) => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: '' });
const agentMessage = (ctx, value) => ({
  messageId: randomUUID(), role: Role.ROLE_AGENT, parts: [text(value)], contextId: ctx.contextId, taskId: ctx.taskId,
  metadata: undefined, extensions: [], referenceTaskIds: [],
});

export class StreamingExecutor {
  async execute(ctx, eventBus) {
    const { taskId, contextId } = ctx;
    const status = (state, message) => AgentEvent.statusUpdate({
      taskId, contextId, status: { state, message, timestamp: new Date().toISOString() }, metadata: undefined,
    });
    eventBus.publish(AgentEvent.task(ctx.task ?? {
      id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined },
      artifacts: [], history: [ctx.userMessage], metadata: undefined,
    }));
    eventBus.publish(status(TaskState.TASK_STATE_WORKING, agentMessage(ctx, 'streaming your words')));
    const words = ctx.userMessage.parts.map((p) => p.content?.value ?? '').join(' ').split(/\s+/).filter(Boolean);
    for (const [i, word] of words.entries()) {
      eventBus.publish(AgentEvent.artifactUpdate({
        taskId, contextId,
        artifact: { artifactId: 'words', name: 'words', description: '', parts: [text(word)], metadata: undefined, extensions: [] },
        append: i > 0, lastChunk: i === words.length - 1, metadata: undefined,
      }));
      await new Promise((r) => setTimeout(r, 10));
    }
    eventBus.publish(status(TaskState.TASK_STATE_COMPLETED, agentMessage(ctx, `streamed ${words.length} words`)));
    eventBus.finished();
  }

  async cancelTask() {}
}
