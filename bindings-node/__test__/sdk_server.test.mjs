// Our JavaScript Client against an official @a2a-js/sdk server (express), in this process.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import express from 'express';

import { AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';

import { Client, PushNotificationNotSupportedError, TaskNotFoundError } from '../index.js';
import { collect, within } from './helpers.mjs';

const textPart = (value) => ({ content: { $case: 'text', value } });

/** The peer: "ask" asks for input (the next message completes); "wait" works until canceled;
 * anything else is echoed as an artifact, then COMPLETED. */
function sdkExecutor() {
  const canceled = new Set();
  const status = (state, text) => ({
    state,
    message: text ? { messageId: randomUUID(), role: Role.ROLE_AGENT, parts: [textPart(text)] } : undefined,
    timestamp: new Date().toISOString(),
  });
  return {
    async execute(ctx, bus) {
      const { taskId, contextId, userMessage } = ctx;
      const text = userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      const update = (state, t) => bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(state, t), metadata: undefined }));
      if (!ctx.task) {
        bus.publish(AgentEvent.task({ id: taskId, contextId, status: status(TaskState.TASK_STATE_SUBMITTED), artifacts: [], history: [userMessage], metadata: undefined }));
        if (text === 'ask') {
          update(TaskState.TASK_STATE_INPUT_REQUIRED, 'and then?');
          return bus.finished();
        }
      }
      update(TaskState.TASK_STATE_WORKING);
      if (text === 'wait') {
        while (!canceled.has(taskId)) await new Promise((r) => setTimeout(r, 20));
        return bus.finished();
      }
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: randomUUID(), name: 'echo', description: '', parts: userMessage.parts, metadata: undefined, extensions: [] },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      update(TaskState.TASK_STATE_COMPLETED, ctx.task ? `got ${text}` : undefined);
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      canceled.add(taskId);
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', status: status(TaskState.TASK_STATE_CANCELED), metadata: undefined }));
      bus.finished();
    },
  };
}

async function startSdkServer() {
  const app = express();
  const http = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${http.address().port}`;
  const card = {
    name: 'sdk peer',
    description: 'an @a2a-js/sdk agent driven by a2a-native',
    version: '1.0.0',
    supportedInterfaces: [
      { url: `${base}/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
      { url: `${base}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: '' },
    ],
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'echo', description: 'echo', tags: ['echo'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    securitySchemes: {},
    securityRequirements: [],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), sdkExecutor());
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.use('/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return {
    base,
    close: () => new Promise((r) => http.close(r)),
    http,
  };
}

for (const binding of ['JSONRPC', 'HTTP+JSON']) {
  describe(`our Client against an @a2a-js/sdk server over ${binding}`, () => {
    let peer;
    let client;

    before(async () => {
      peer = await startSdkServer();
      client = await Client.connect(peer.base, { binding });
      assert.equal(client.binding, binding);
      assert.equal(client.protocolVersion, '1.0');
    });

    after(async () => {
      peer.http.closeAllConnections();
      await peer.close();
    });

    test('send, get', async () => {
      const { task } = await client.send('hello peer');
      assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
      assert.deepEqual(task.artifacts[0].parts, [{ text: 'hello peer' }]);
      assert.equal((await client.getTask(task.id)).status.state, 'TASK_STATE_COMPLETED');
    });

    test('stream', async () => {
      const events = await within(10_000, collect(client.stream('streamed')), 'stream');
      assert.ok('task' in events[0], JSON.stringify(events[0]));
      const art = events.find((e) => e.artifactUpdate);
      assert.deepEqual(art.artifactUpdate.artifact.parts, [{ text: 'streamed' }]);
      assert.equal(events.at(-1).statusUpdate.status.state, 'TASK_STATE_COMPLETED');
    });

    test('multi-turn', async () => {
      const { task } = await client.send('ask');
      assert.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED');
      const { task: done } = await client.send('more', { taskId: task.id, contextId: task.contextId });
      assert.equal(done.status.state, 'TASK_STATE_COMPLETED');
      assert.deepEqual(done.status.message.parts, [{ text: 'got more' }]);
    });

    test('cancel', async () => {
      const { task } = await client.send('wait', { configuration: { returnImmediately: true } });
      const canceled = await client.cancel(task.id);
      assert.equal(canceled.status.state, 'TASK_STATE_CANCELED');
    });

    test('errors', async () => {
      await assert.rejects(client.getTask('missing'), (e) => e instanceof TaskNotFoundError && e.code === -32001);
      await assert.rejects(
        client.createPushConfig({ taskId: 'missing', url: 'https://push.invalid/x' }),
        (e) => e instanceof PushNotificationNotSupportedError && e.code === -32003,
      );
    });
  });
}
