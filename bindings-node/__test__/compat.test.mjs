// Unchanged @a2a-js/sdk agents (sdk_agents/) on the SDK's own server (express) and on ours,
// driven by the SDK's client: one scripted conversation must give equivalent answers (the same
// events, states, messages and artifacts; only generated ids and timestamps differ). Then what a
// foreign executor may do wrong: throw, publish a non-event, never return.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import express from 'express';

import { AGENT_CARD_PATH, CancelTaskRequest, GetTaskRequest, Message, SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';

import { AgentServer } from '../index.js';
import { fromSdkExecutor, fromSdk, toSdk } from '../lib/compat.js';
import { agentCard } from './sdk_agents/card.mjs';
import { HelloWorldExecutor } from './sdk_agents/hello_world.mjs';
import { LongRunningExecutor } from './sdk_agents/long_running.mjs';
import { MultiTurnExecutor } from './sdk_agents/multi_turn.mjs';
import { StreamingExecutor } from './sdk_agents/streaming.mjs';
import { collect, within } from './helpers.mjs';

/** The agent on the SDK's DefaultRequestHandler and express. */
async function sdkHost(name, executor) {
  const app = express();
  const http = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${http.address().port}`;
  const handler = new DefaultRequestHandler(agentCard(name, `${url}/`), new InMemoryTaskStore(), executor);
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return { url, close: () => { http.closeAllConnections(); return new Promise((r) => http.close(r)); } };
}

/** The same agent, unchanged, on our server. */
async function ourHost(name, executor, options) {
  // Without interfaces: ours declares its own (the port is known only once it listens).
  const server = new AgentServer({ ...agentCard(name, ''), supportedInterfaces: [] }, executor, options);
  await server.listen(0);
  return { url: server.url, close: () => server.close() };
}

const VOLATILE = new Set(['id', 'messageId', 'contextId', 'taskId', 'timestamp']);
/** ProtoJSON without what each run generates. */
function stable(value) {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k, v]) => !VOLATILE.has(k) && !(k === 'artifactId' && v.length === 36))
        .map(([k, v]) => [k, stable(v)]),
    );
  }
  return value;
}

/** The SDK's server also appends the current status message to a task's history; ours (like
 * the Python SDK's) keeps it in `status.message` until a newer status replaces it. Compared
 * without that copy. */
function withoutStatusEcho(value) {
  if (Array.isArray(value)) return value.map(withoutStatusEcho);
  if (value && typeof value === 'object') {
    const out = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutStatusEcho(v)]));
    const last = out.history?.at(-1);
    if (out.status?.message && last && JSON.stringify(last) === JSON.stringify(out.status.message)) {
      out.history = out.history.slice(0, -1);
    }
    return out;
  }
  return value;
}

const msg = (text, extra = {}) =>
  SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra } });
const reply = (r) => (r.status ? { task: Task.toJSON(r) } : { message: Message.toJSON(r) });
const streamed = async (client, request) =>
  (await within(20_000, collect(client.sendMessageStream(request)), 'stream')).map((e) => StreamResponse.toJSON(e));

async function client(url) {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ['JSONRPC'] }));
  return factory.createFromUrl(url);
}

async function conversation(host) {
  const seen = {};
  let h = await host('hello', new HelloWorldExecutor());
  let c = await client(h.url);
  seen.hello = reply(await c.sendMessage(msg('hi')));
  seen['hello stream'] = await streamed(c, msg('hi'));
  await h.close();

  h = await host('words', new StreamingExecutor());
  c = await client(h.url);
  seen.words = reply(await c.sendMessage(msg('one two three')));
  seen['words stream'] = await streamed(c, msg('one two three'));
  await h.close();

  h = await host('greeter', new MultiTurnExecutor());
  c = await client(h.url);
  const first = await c.sendMessage(msg('hello'));
  const second = await c.sendMessage(msg('Ada', { taskId: first.id, contextId: first.contextId }));
  seen['multi-turn'] = [reply(first), reply(second)];
  const streamFirst = await streamed(c, msg('hello'));
  const t = streamFirst[0].task;
  seen['multi-turn stream'] = [streamFirst, await streamed(c, msg('Ada', { taskId: t.id, contextId: t.contextId }))];
  seen['multi-turn task'] = Task.toJSON(await c.getTask(GetTaskRequest.fromJSON({ id: first.id })));
  await h.close();

  h = await host('long', new LongRunningExecutor());
  c = await client(h.url);
  const started = await c.sendMessage(SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'go' }] }, configuration: { returnImmediately: true } }));
  const sub = c.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: started.id }))[Symbol.asyncIterator]();
  await within(10_000, sub.next(), 'the subscription');
  seen['cancel reply'] = Task.toJSON(await c.cancelTask(CancelTaskRequest.fromJSON({ id: started.id })));
  const rest = await within(10_000, collect({ [Symbol.asyncIterator]: () => sub }), 'the subscription');
  seen['cancel stream end'] = StreamResponse.toJSON(rest.at(-1));
  seen['cancel task'] = Task.toJSON(await c.getTask(GetTaskRequest.fromJSON({ id: started.id })));
  await h.close();
  return withoutStatusEcho(stable(seen));
}

test('the same conversation gives the same answers on the SDK server and on ours', async () => {
  const theirs = await conversation(sdkHost);
  const ours = await conversation(ourHost);
  assert.deepEqual(Object.keys(ours), Object.keys(theirs));
  // One deliberate difference: when a message continues a task, our core moves the status
  // message it answers ("What is your name?") into the history, before the new message; the
  // SDK's server copies it there and also keeps it as the status message. So the snapshot that
  // starts the continuation's stream differs in `status.message` alone.
  const [ourFirst, theirFirst] = [ours['multi-turn stream'][1][0].task, theirs['multi-turn stream'][1][0].task];
  assert.equal(ourFirst.status.message, undefined);
  assert.deepEqual(theirFirst.status.message, ourFirst.history.at(-2));
  delete theirFirst.status.message;
  for (const step of Object.keys(theirs)) assert.deepEqual(ours[step], theirs[step], `${step}: ours ${JSON.stringify(ours[step])}\n theirs ${JSON.stringify(theirs[step])}`);
  assert.deepEqual(ours.hello, { message: { role: 'ROLE_AGENT', parts: [{ text: 'Hello World' }] } });
  assert.deepEqual(ours['words stream'].map((e) => Object.keys(e)[0]), ['task', 'statusUpdate', 'artifactUpdate', 'artifactUpdate', 'artifactUpdate', 'statusUpdate']);
  assert.equal(ours['multi-turn'][1].task.status.state, 'TASK_STATE_COMPLETED');
  assert.deepEqual(ours['multi-turn'][1].task.artifacts[0].parts, [{ text: 'Hello, Ada!' }]);
  assert.equal(ours['cancel task'].status.state, 'TASK_STATE_CANCELED');
});

test('models convert both ways without loss', () => {
  const task = {
    id: 't1', contextId: 'c1',
    status: { state: 'TASK_STATE_WORKING', timestamp: '2026-01-02T03:04:05.678Z' },
    history: [{ messageId: 'm1', role: 'ROLE_USER', referenceTaskIds: ['t0'], extensions: ['urn:x'], parts: [
      { text: 'hi', mediaType: 'text/plain', metadata: { k: [1, 'two', null, { n: true }] } },
      { raw: 'AP9ieXRlcw==', filename: 'b.bin' },
      { url: 'https://example.com/f', mediaType: 'image/png' },
      { data: { a: { b: [1.5] } } },
    ] }],
    artifacts: [{ artifactId: 'a1', name: 'n', description: 'd', parts: [{ text: 'x' }] }],
  };
  const sdk = toSdk('Task', task);
  assert.equal(sdk.history[0].parts[1].content.$case, 'raw');
  assert.deepEqual(fromSdk('Task', sdk), task);
});

class Throws {
  async execute() {
    throw new Error('the model is down');
  }
  async cancelTask() {}
}
class PublishesJunk {
  async execute(ctx, bus) {
    try {
      bus.publish({ kind: 'task', data: 'not a task' });
    } catch {
      // swallowed: the task must fail all the same
    }
    bus.finished();
  }
  async cancelTask() {}
}
class NeverReturns {
  execute() {
    return new Promise(() => {});
  }
  async cancelTask() {}
}

for (const [Agent, says] of [
  [Throws, 'the model is down'],
  [PublishesJunk, 'not a task, message, statusUpdate or artifactUpdate event'],
  [NeverReturns, 'did not return within 0.5 s'],
]) {
  test(`a faulty SDK executor (${Agent.name}) fails its task and the server lives on`, async () => {
    const h = await ourHost('faulty', fromSdkExecutor(new Agent(), { executorTimeout: 0.5 }));
    try {
      const c = await client(h.url);
      for (let i = 0; i < 2; i++) {
        const task = await within(10_000, c.sendMessage(msg('hi')), 'the reply');
        const json = Task.toJSON(task);
        assert.equal(json.status.state, 'TASK_STATE_FAILED');
        assert.ok(json.status.message.parts[0].text.includes(says), json.status.message.parts[0].text);
      }
    } finally {
      await h.close();
    }
  });
}

test('the SDK executor sees the caller, tenant and user input', async () => {
  const seen = [];
  const executor = {
    async execute(ctx, bus) {
      seen.push(ctx);
      bus.finished();
    },
    async cancelTask() {},
  };
  const h = await ourHost('who', executor, { bearerTokens: { s3cret: 'alice' } });
  try {
    const res = await fetch(`${h.url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: 'Bearer s3cret' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hey' }] } } }),
    });
    assert.equal(res.status, 200);
    await res.json();
    const [ctx] = seen;
    assert.equal(ctx.context.user.isAuthenticated, true);
    assert.equal(ctx.context.user.userName, 'alice');
    assert.equal(ctx.userMessage.parts[0].content.value, 'hey');
    assert.equal(ctx.userMessage.taskId, ctx.taskId);
    assert.equal(ctx.task, undefined);
  } finally {
    await h.close();
  }
});
