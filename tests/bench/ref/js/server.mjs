// Benchmark reference server: the `--echo` agent on the official `@a2a-js/sdk` (1.x) + express.
//
// Every message creates a Task with one artifact (name "echo") whose parts are a copy of the
// message's parts, then the task is COMPLETED. Streaming yields task, artifactUpdate,
// statusUpdate(COMPLETED).
//
// Speaks A2A 1.0: JSON-RPC on POST / (SendMessage, SendStreamingMessage, ...; send
// `A2A-Version: 1.0`; a request without it is treated as 0.3 and answered -32009
// VersionNotSupported, the compat layer being off), HTTP+JSON under /rest (POST /rest/message:send, ...), card at
// /.well-known/agent-card.json. InMemoryTaskStore, one process.
//
//   node server.mjs [PORT]        # or PORT=... node server.mjs; default 9002
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import express from 'express';

import { AGENT_CARD_PATH, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import {
  UserBuilder,
  agentCardHandler,
  jsonRpcHandler,
  restHandler,
} from '@a2a-js/sdk/server/express';

/** The card, its interfaces at `base`. (Exported, with the executor, for ../js_compat.) */
export const agentCardAt = (base) => ({
  name: 'echo (@a2a-js/sdk reference)',
  description: 'Echo agent for benchmarks, built on the official @a2a-js/sdk.',
  version: '1.0.0',
  supportedInterfaces: [
    { url: `${base}/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
    { url: `${base}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: '' },
  ],
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'echo',
      name: 'echo',
      description: 'Returns the message parts as an artifact.',
      tags: ['echo', 'benchmark'],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    },
  ],
  securitySchemes: {},
  securityRequirements: [],
  signatures: [],
});

/** @type {import('@a2a-js/sdk/server').AgentExecutor} */
export const echoExecutor = {
  async execute(requestContext, eventBus) {
    const { taskId, contextId } = requestContext;
    const message = requestContext.userMessage;
    if (!requestContext.task) {
      eventBus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined },
          artifacts: [],
          history: [message],
          metadata: undefined,
        }),
      );
    }
    eventBus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: randomUUID(),
          name: 'echo',
          description: '',
          parts: message.parts,
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: {
          state: TaskState.TASK_STATE_COMPLETED,
          message: undefined,
          timestamp: new Date().toISOString(),
        },
        metadata: undefined,
      }),
    );
    eventBus.finished();
  },
  async cancelTask(taskId, eventBus) {
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: '',
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() },
        metadata: undefined,
      }),
    );
    eventBus.finished();
  },
};

// Served only when run, not when imported.
if (import.meta.url === pathToFileURL(process.argv[1]).href) {
const port = Number(process.argv[2] ?? process.env.PORT ?? 9002);
const host = process.env.HOST ?? '127.0.0.1';
const base = `http://${host}:${port}`;
const agentCard = agentCardAt(base);
const requestHandler = new DefaultRequestHandler(agentCard, new InMemoryTaskStore(), echoExecutor);

const app = express();
app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
app.use('/rest', restHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
app.use('/', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));

app.listen(port, host, () => {
  console.log(`echo reference (@a2a-js/sdk) listening on ${base}`);
});
}
