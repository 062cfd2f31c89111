// The official @a2a-js/sdk client (npm) against a JavaScript executor on our AgentServer:
// send, stream, multi-turn, cancel (reaching the AbortSignal), subscribe; both bindings.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';

import { CancelTaskRequest, GetTaskRequest, SendMessageRequest, SubscribeToTaskRequest, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { TaskNotFoundError as SdkTaskNotFoundError } from '@a2a-js/sdk/errors';

import { AgentServer } from '../index.js';
import { CARD, Echo, collect, within } from './helpers.mjs';

const request = (text, extra = {}) =>
  SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra } });
const texts = (parts = []) => parts.filter((p) => p.content?.$case === 'text').map((p) => p.content.value);
const stateOf = (ev) => {
  const p = ev.payload;
  return p.$case === 'task' || p.$case === 'statusUpdate' ? p.value.status.state : undefined;
};

for (const binding of ['JSONRPC', 'HTTP+JSON']) {
  describe(`@a2a-js/sdk client over ${binding}`, () => {
    let server;
    let agent;
    let client;

    before(async () => {
      agent = new Echo();
      server = new AgentServer(CARD, agent);
      await server.listen(0);
      const factory = new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding] }),
      );
      client = await factory.createFromUrl(server.url);
      assert.equal(client.transport.protocolName.toUpperCase(), binding);
    });

    after(() => server.close());

    test('send', async () => {
      const task = await client.sendMessage(request('hello sdk'));
      assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
      assert.deepEqual(texts(task.artifacts[0].parts), ['hello sdk']);
      const got = await client.getTask(GetTaskRequest.fromJSON({ id: task.id }));
      assert.equal(got.id, task.id);
      const reply = await client.sendMessage(request('reply'));
      assert.deepEqual(texts(reply.parts), ['a direct reply']);
    });

    test('stream', async () => {
      const events = await within(10_000, collect(client.sendMessageStream(request('chunks'))), 'stream');
      assert.equal(events[0].payload.$case, 'task');
      const arts = events.filter((e) => e.payload.$case === 'artifactUpdate').map((e) => e.payload.value);
      assert.deepEqual(arts.map((a) => texts(a.artifact.parts)[0]), ['a', 'b']);
      assert.equal(stateOf(events.at(-1)), TaskState.TASK_STATE_COMPLETED);
    });

    test('multi-turn input-required', async () => {
      const task = await client.sendMessage(request('ask'));
      assert.equal(task.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      const done = await client.sendMessage(request('Grace', { taskId: task.id, contextId: task.contextId }));
      assert.equal(done.id, task.id);
      assert.equal(done.status.state, TaskState.TASK_STATE_COMPLETED);
      assert.deepEqual(texts(done.status.message.parts), ['hello Grace']);
    });

    test('cancel reaches the AbortSignal; subscribe sees it', async () => {
      const stream = client.sendMessageStream(request('slow'))[Symbol.asyncIterator]();
      const first = (await stream.next()).value;
      const taskId = first.payload.value.id;
      assert.equal(stateOf((await stream.next()).value), TaskState.TASK_STATE_WORKING);
      const sub = client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: taskId }))[Symbol.asyncIterator]();
      assert.equal((await sub.next()).value.payload.value.id, taskId);
      const canceled = await client.cancelTask(CancelTaskRequest.fromJSON({ id: taskId }));
      assert.equal(canceled.status.state, TaskState.TASK_STATE_CANCELED);
      await within(5000, agent.aborted, 'the abort signal');
      const rest = await within(5000, collect({ [Symbol.asyncIterator]: () => sub }), 'subscription');
      assert.equal(stateOf(rest.at(-1)), TaskState.TASK_STATE_CANCELED);
      const restMain = await within(5000, collect({ [Symbol.asyncIterator]: () => stream }), 'stream');
      assert.equal(stateOf(restMain.at(-1)), TaskState.TASK_STATE_CANCELED);
    });

    test('errors reach the official client as its own classes', async () => {
      const err = await client.getTask(GetTaskRequest.fromJSON({ id: 'missing' })).catch((e) => e);
      assert.ok(err instanceof SdkTaskNotFoundError || err?.cause instanceof SdkTaskNotFoundError, String(err));
    });
  });
}
