// A long-running agent that stops when canceled (the SDK's pattern: cancelTask marks the task,
// the running execute sees it).
import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent } from '@a2a-js/sdk/server';

const text = (value) => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: '' });

export class LongRunningExecutor {
  canceled = new Set();

  async execute(ctx, eventBus) {
    const { taskId, contextId } = ctx;
    eventBus.publish(AgentEvent.task({
      id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined },
      artifacts: [], history: [ctx.userMessage], metadata: undefined,
    }));
    eventBus.publish(AgentEvent.statusUpdate({
      taskId, contextId, metadata: undefined,
      status: { state: TaskState.TASK_STATE_WORKING, message: { messageId: randomUUID(), role: Role.ROLE_AGENT, parts: [text('working')], contextId, taskId, metadata: undefined, extensions: [], referenceTaskIds: [] }, timestamp: new Date().toISOString() },
    }));
    for (let i = 0; i < 600 && !this.canceled.has(taskId); i++) await new Promise((r) => setTimeout(r, 100));
    eventBus.finished();
  }

  async cancelTask(taskId, eventBus) {
    this.canceled.add(taskId);
    eventBus.publish(AgentEvent.statusUpdate({
      taskId, contextId: '', metadata: undefined,
      status: { state: TaskState.TASK_STATE_CANCELED, message: { messageId: randomUUID(), role: Role.ROLE_AGENT, parts: [text('canceled on request')], contextId: '', taskId, metadata: undefined, extensions: [], referenceTaskIds: [] }, timestamp: new Date().toISOString() },
    }));
    eventBus.finished();
  }
}
