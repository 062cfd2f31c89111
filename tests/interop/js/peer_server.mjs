// Interop peer: the same small agent on the official @a2a-js/sdk 1.x (express), for our
// client to drive. Behaviour by message text, as in ../peers/python_v1_server.py:
//   "need-input ..." INPUT_REQUIRED, the next message completes; "slow ..." WORKING then
//   COMPLETED after 3 s (cancel stops it); "reply-message" a direct Message; else an "echo"
//   artifact copying the parts, then COMPLETED.
// A2A 1.0 JSON-RPC on POST /, HTTP+JSON under /rest, card at /.well-known/agent-card.json;
// streaming on, push notifications off (the client must get PushNotificationNotSupported);
// with GRPC_PORT, the SDK's gRPC service (@grpc/grpc-js) there too, declared on the card.
//
//   node tests/interop/js/peer_server.mjs PORT [GRPC_PORT]
import { randomUUID } from 'node:crypto';
import express from 'express';
import * as grpc from '@grpc/grpc-js';

import { AGENT_CARD_PATH, TaskState, Role } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import { A2AService, grpcService } from '@a2a-js/sdk/server/grpc';

const port = Number(process.argv[2]);
const grpcPort = process.argv[3] ? Number(process.argv[3]) : undefined;
const base = `http://127.0.0.1:${port}`;

const agentCard = {
  name: 'interop peer (@a2a-js/sdk)',
  description: 'A small agent on the official @a2a-js/sdk, driven by a2a-native tests.',
  version: '1.0.0',
  supportedInterfaces: [
    { url: `${base}/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
    { url: `${base}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: '' },
    ...(grpcPort ? [{ url: `127.0.0.1:${grpcPort}`, protocolBinding: 'GRPC', protocolVersion: '1.0', tenant: '' }] : []),
  ],
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'echo',
      name: 'echo',
      description: 'Echoes, asks for input, or works slowly.',
      tags: ['echo'],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    },
  ],
  securitySchemes: {},
  securityRequirements: [],
  signatures: [],
};

// Whole messages: the SDK's protobuf encoder (gRPC) needs every repeated field present.
const agentMessage = (text, taskId = '', contextId = '') => ({
  messageId: randomUUID(),
  taskId,
  contextId,
  role: Role.ROLE_AGENT,
  parts: [{ content: { $case: 'text', value: text } }],
  extensions: [],
  referenceTaskIds: [],
  metadata: undefined,
});

const status = (state, text, taskId, contextId) => ({
  state,
  message: text ? agentMessage(text, taskId, contextId) : undefined,
  timestamp: new Date().toISOString(),
});

const canceled = new Set();

/** @type {import('@a2a-js/sdk/server').AgentExecutor} */
const executor = {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const message = ctx.userMessage;
    const text = message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : p.text ?? '')).join(' ');
    if (text.startsWith('reply-message')) {
      bus.publish(AgentEvent.message(agentMessage('a direct reply', '', contextId)));
      bus.finished();
      return;
    }
    const update = (state, text) =>
      bus.publish(
        AgentEvent.statusUpdate({ taskId, contextId, status: status(state, text, taskId, contextId), metadata: undefined }),
      );
    if (!ctx.task) {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: status(TaskState.TASK_STATE_SUBMITTED),
          artifacts: [],
          history: [message],
          metadata: undefined,
        }),
      );
      if (text.startsWith('need-input')) {
        update(TaskState.TASK_STATE_INPUT_REQUIRED, 'what else?');
        bus.finished();
        return;
      }
    }
    update(TaskState.TASK_STATE_WORKING);
    if (text.startsWith('slow')) {
      for (let i = 0; i < 30 && !canceled.has(taskId); i++) await new Promise((r) => setTimeout(r, 100));
      if (canceled.has(taskId)) {
        bus.finished();
        return;
      }
    }
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: { artifactId: randomUUID(), name: 'echo', description: '', parts: message.parts, metadata: undefined, extensions: [] },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    update(TaskState.TASK_STATE_COMPLETED);
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    canceled.add(taskId);
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', status: status(TaskState.TASK_STATE_CANCELED), metadata: undefined }));
    bus.finished();
  },
};

const requestHandler = new DefaultRequestHandler(agentCard, new InMemoryTaskStore(), executor);
const app = express();
app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
app.use('/rest', restHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
app.use('/', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
app.listen(port, '127.0.0.1', () => console.log(`interop peer (@a2a-js/sdk) on ${base}`));
if (grpcPort) {
  const server = new grpc.Server();
  server.addService(A2AService, grpcService({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  server.bindAsync(`127.0.0.1:${grpcPort}`, grpc.ServerCredentials.createInsecure(), (err) => {
    if (err) throw err;
    console.log(`interop peer (@a2a-js/sdk) gRPC on 127.0.0.1:${grpcPort}`);
  });
}
