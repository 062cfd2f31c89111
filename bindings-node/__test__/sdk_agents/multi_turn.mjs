// A multi-turn agent: asks for the caller's name (INPUT_REQUIRED), then greets it.
import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent } from '@a2a-js/sdk/server';

const text = (value) => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: '' });

export class MultiTurnExecutor {
  async execute(ctx, eventBus) {
    const { taskId, contextId, userMessage } = ctx;
    const say = (value) => ({
      messageId: randomUUID(), role: Role.ROLE_AGENT, parts: [text(value)], contextId, taskId,
      metadata: undefined, extensions: [], referenceTaskIds: [],
    });
    const status = (state, message) => AgentEvent.statusUpdate({
      taskId, contextId, status: { state, message, timestamp: new Date().toISOString() }, metadata: undefined,
    });
    const task = ctx.task ?? {
      id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined },
      artifacts: [], history: [userMessage], metadata: undefined,
    };
    eventBus.publish(AgentEvent.task(task)); // the SDK wants a task first on every turn
    if (task.status.state !== TaskState.TASK_STATE_INPUT_REQUIRED) {
      eventBus.publish(status(TaskState.TASK_STATE_INPUT_REQUIRED, say('What is your name?')));
      eventBus.finished();
      return;
    }
    const asked = task.history.filter((m) => m.role === Role.ROLE_USER).length;
    const name = userMessage.parts.map((p) => p.content?.value ?? '').join('').trim();
    eventBus.publish(AgentEvent.artifactUpdate({
      taskId, contextId,
      artifact: { artifactId: randomUUID(), name: 'greeting', description: '', parts: [text(`Hello, ${name}!`)], metadata: undefined, extensions: [] },
      append: false, lastChunk: true, metadata: undefined,
    }));
    eventBus.publish(status(TaskState.TASK_STATE_COMPLETED, say(`greeted after ${asked} earlier user messages`)));
    eventBus.finished();
  }

  async cancelTask() {}
}
