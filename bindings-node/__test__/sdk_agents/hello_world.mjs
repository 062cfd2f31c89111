// The @a2a-js/sdk hello-world agent: every message gets one agent message back.
import { randomUUID } from 'node:crypto';
import { Role } from '@a2a-js/sdk';
import { AgentEvent } from '@a2a-js/sdk/server';

export class HelloWorldExecutor {
  async execute(requestContext, eventBus) {
    eventBus.publish(
      AgentEvent.message({
        messageId: randomUUID(),
        role: Role.ROLE_AGENT,
        parts: [{ content: { $case: 'text', value: 'Hello World' }, metadata: undefined, filename: '', mediaType: '' }],
        contextId: requestContext.contextId,
        taskId: '',
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      }),
    );
    eventBus.finished();
  }

  async cancelTask() {}
}
