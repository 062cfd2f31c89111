// Interop: the official `@a2a-js/sdk` 1.x client (A2A 1.0) against the server at
// A2A_INTEROP_URL running the `--conformance` agent (behaviour chosen by messageId prefix).
// Every scenario runs on JSON-RPC, HTTP+JSON and gRPC (@grpc/grpc-js, the SDK's
// GrpcTransportFactory), chosen with the factory's `preferredTransports`. Run: A2A_INTEROP_URL=http://127.0.0.1:PORT node --test
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomUUID } from 'node:crypto';

import {
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTasksRequest,
  Role,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  TaskPushNotificationConfig,
  TaskState,
} from '@a2a-js/sdk';
import { Client, ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import * as grpc from '@grpc/grpc-js';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import {
  TaskNotFoundError,
  TaskNotCancelableError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';

const BASE_URL = (process.env.A2A_INTEROP_URL || '').replace(/\/+$/, '');
if (!BASE_URL) {
  console.error('A2A_INTEROP_URL is not set (e.g. http://127.0.0.1:8080)');
  process.exit(2);
}
const TIMEOUT_MS = 20000;
const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
const stateName = (s) => TaskState[s] ?? String(s);

// Requests are built with the SDK's generated `fromJSON` from ProtoJSON, which fills every
// field the way its `toJSON` expects (partial objects serialise an absent enum as
// "UNRECOGNIZED" and an absent int as null).
function userMessage(prefix, text = 'hello', extra = {}) {
  return {
    messageId: `${prefix}-${randomUUID()}`,
    role: 'ROLE_USER',
    parts: [{ text }],
    ...extra,
  };
}
const sendRequest = (message, configuration) =>
  SendMessageRequest.fromJSON({ message, ...(configuration ? { configuration } : {}) });
const getTask = (client, json) => client.getTask(GetTaskRequest.fromJSON(json));
const cancelTask = (client, id) => client.cancelTask(CancelTaskRequest.fromJSON({ id }));
const listTasks = (client, json) => client.listTasks(ListTasksRequest.fromJSON(json));
const subscribe = (client, id) => client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id }));

const textsOf = (parts = []) =>
  parts.filter((p) => p.content?.$case === 'text').map((p) => p.content.value);

const isMessage = (result) => 'messageId' in result && !('status' in result);

function withTimeout(promise, ms = TIMEOUT_MS, what = 'operation') {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

async function collect(iterable, what = 'stream') {
  const run = async () => {
    const out = [];
    for await (const ev of iterable) out.push(ev);
    return out;
  };
  return withTimeout(run(), TIMEOUT_MS, what);
}

async function makeClient(binding) {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      // Adds gRPC to the default JSON-RPC and HTTP+JSON factories (the card's GRPC interface is
      // host:port, which grpc-js dials in the clear here).
      transports: [new GrpcTransportFactory({ grpcChannelCredentials: grpc.credentials.createInsecure() })],
      preferredTransports: [binding],
    }),
  );
  const client = await factory.createFromUrl(BASE_URL);
  assert.equal(
    client.transport.protocolName.toUpperCase(),
    binding,
    `factory picked ${client.transport.protocolName}`,
  );
  assert.equal(client.protocolVersion, '1.0');
  return client;
}

async function sendForTask(client, msg, configuration) {
  const result = await withTimeout(
    client.sendMessage(sendRequest(msg, configuration)),
    TIMEOUT_MS,
    'sendMessage',
  );
  assert.ok(!isMessage(result), `expected a Task, got ${JSON.stringify(result)}`);
  return result;
}

async function waitState(client, id, states, ms = TIMEOUT_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    const task = await getTask(client, { id });
    if (states.has(task.status.state)) return task;
    if (Date.now() > deadline) {
      throw new Error(`task ${id} still ${stateName(task.status.state)} after ${ms} ms`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function finalState(events) {
  let state = TaskState.TASK_STATE_UNSPECIFIED;
  for (const ev of events) {
    const p = ev.payload;
    if (p?.$case === 'task') state = p.value.status.state;
    if (p?.$case === 'statusUpdate') state = p.value.status.state;
  }
  return state;
}

function isA(err, cls) {
  return err instanceof cls || err?.cause instanceof cls;
}

// A webhook receiver on 127.0.0.1 recording every POST.
function startReceiver() {
  const posts = [];
  const waiters = new Set();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      posts.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end();
      for (const w of waiters) w();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}/webhook`,
        posts,
        close: () => new Promise((r) => server.close(r)),
        async waitFor(pred, ms = 15000) {
          const deadline = Date.now() + ms;
          for (;;) {
            const hit = posts.find((p) => {
              try {
                return pred(JSON.parse(p.body));
              } catch {
                return false;
              }
            });
            if (hit) return hit;
            if (Date.now() > deadline) {
              throw new Error(
                `no matching push within ${ms} ms; got ${posts.length}: ` +
                  posts.map((p) => p.body.slice(0, 300)).join('; '),
              );
            }
            await new Promise((r) => {
              const w = () => {
                waiters.delete(w);
                r();
              };
              waiters.add(w);
              setTimeout(w, 200);
            });
          }
        },
      });
    });
  });
}

function checkPush(p, token, credentials, taskId) {
  const ctype = String(p.headers['content-type'] || '').split(';')[0].trim().toLowerCase();
  assert.equal(ctype, 'application/a2a+json', 'push Content-Type');
  assert.equal(p.headers['authorization'], `Bearer ${credentials}`);
  assert.equal(p.headers['x-a2a-notification-token'], token);
  const body = JSON.parse(p.body);
  const members = ['task', 'message', 'statusUpdate', 'artifactUpdate'].filter((k) => k in body);
  assert.equal(members.length, 1, `push body is not a StreamResponse: ${p.body}`);
  const sr = StreamResponse.fromJSON(body);
  const v = sr.payload.value;
  assert.equal(sr.payload.$case === 'task' ? v.id : v.taskId, taskId);
}

const pushCompleted = (body) =>
  (body.statusUpdate?.status ?? body.task?.status ?? {}).state === 'TASK_STATE_COMPLETED';

test('card resolution', async () => {
  const res = await fetch(`${BASE_URL}/.well-known/agent-card.json`);
  assert.equal(res.status, 200);
  const card = await res.json();
  for (const k of [
    'name',
    'description',
    'supportedInterfaces',
    'version',
    'capabilities',
    'defaultInputModes',
    'defaultOutputModes',
    'skills',
  ]) {
    assert.ok(k in card, `agent card lacks ${k}`);
  }
  assert.equal(card.capabilities.streaming, true);
  assert.equal(card.capabilities.pushNotifications, true);
  const ifaces = card.supportedInterfaces.map((i) => `${i.protocolBinding}@${i.protocolVersion}`);
  assert.ok(ifaces.includes('JSONRPC@1.0'), ifaces.join());
  assert.ok(ifaces.includes('HTTP+JSON@1.0'), ifaces.join());
  assert.ok(ifaces.includes('GRPC@1.0'), ifaces.join());
  const client = await new ClientFactory().createFromUrl(BASE_URL);
  assert.ok(['JSONRPC', 'HTTP+JSON'].includes(client.transport.protocolName.toUpperCase()));
});

for (const binding of ['JSONRPC', 'HTTP+JSON', 'GRPC']) {
  describe(binding, () => {
    let client;
    let receiver;
    before(async () => {
      client = await makeClient(binding);
      receiver = await startReceiver();
    });
    after(async () => {
      await receiver?.close();
    });

    test('extended agent card', async (t) => {
      const card = await client.getAgentCard();
      assert.ok(card.name);
      assert.ok(card.supportedInterfaces?.length);
    });

    test('send (blocking) completes', async () => {
      const task = await sendForTask(client, userMessage('tck-complete-task', 'hi'));
      assert.ok(task.id && task.contextId);
      assert.equal(stateName(task.status.state), 'TASK_STATE_COMPLETED');
      assert.equal(task.status.message?.role, Role.ROLE_AGENT);
      assert.ok(textsOf(task.status.message?.parts).includes('Hello from TCK'));
    });

    for (const prefix of [
      'tck-artifact-text',
      'tck-artifact-file',
      'tck-artifact-file-url',
      'tck-artifact-data',
    ]) {
      test(`artifact kind ${prefix}`, async () => {
        const task = await sendForTask(client, userMessage(prefix, 'make an artifact'));
        assert.equal(stateName(task.status.state), 'TASK_STATE_COMPLETED');
        assert.equal(task.artifacts.length, 1);
        const part = task.artifacts[0].parts[0];
        const c = part.content;
        if (prefix === 'tck-artifact-text') assert.equal(c.$case, 'text');
        if (prefix === 'tck-artifact-file') {
          assert.equal(c.$case, 'raw');
          assert.ok(c.value.length > 0);
          assert.equal(part.mediaType, 'text/plain');
          assert.ok(part.filename);
        }
        if (prefix === 'tck-artifact-file-url') assert.equal(c.$case, 'url');
        if (prefix === 'tck-artifact-data') {
          assert.equal(c.$case, 'data');
          assert.deepEqual(c.value, { key: 'value', count: 42 });
        }
      });
    }

    test('send returnImmediately', async () => {
      const task = await sendForTask(client, userMessage('tck-delayed-complete', 'delay_ms=1500'), {
        returnImmediately: true,
      });
      assert.ok(
        [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(task.status.state),
        `returnImmediately returned ${stateName(task.status.state)}`,
      );
      const done = await waitState(client, task.id, TERMINAL);
      assert.equal(stateName(done.status.state), 'TASK_STATE_COMPLETED');
    });

    test('direct message response', async () => {
      const result = await client.sendMessage(sendRequest(userMessage('tck-message-response', 'ping-js')));
      assert.ok(isMessage(result), `expected a Message, got ${JSON.stringify(result)}`);
      assert.equal(result.role, Role.ROLE_AGENT);
      assert.ok(result.contextId);
      assert.ok(!result.taskId);
      assert.ok(textsOf(result.parts).includes('Direct message response'));
    });

    test('stream: task, then updates, ends COMPLETED', async () => {
      const events = await collect(
        client.sendMessageStream(sendRequest(userMessage('tck-stream', 'stream-js'))),
      );
      assert.ok(events.length >= 2, `only ${events.length} events`);
      assert.equal(events[0].payload?.$case, 'task', 'first event must be the Task');
      const taskId = events[0].payload.value.id;
      const kinds = events.map((e) => e.payload?.$case);
      assert.ok(kinds.includes('artifactUpdate'), kinds.join());
      assert.ok(!kinds.includes('message'), kinds.join());
      for (const ev of events.slice(1)) {
        const v = ev.payload.value;
        assert.equal(ev.payload.$case === 'task' ? v.id : v.taskId, taskId);
      }
      const arts = events.filter((e) => e.payload.$case === 'artifactUpdate');
      assert.ok(arts.some((e) => textsOf(e.payload.value.artifact.parts).some((t) => t.includes('stream-js'))));
      // The last event is the terminal status (a server MAY resend a final Task snapshot).
      assert.ok(['statusUpdate', 'task'].includes(kinds.at(-1)), kinds.join());
      assert.equal(stateName(finalState(events)), 'TASK_STATE_COMPLETED');
    });

    test('stream: direct message is the only event', async () => {
      const events = await collect(
        client.sendMessageStream(sendRequest(userMessage('tck-message-response', 'ping-s'))),
      );
      assert.equal(events.length, 1);
      assert.equal(events[0].payload.$case, 'message');
    });

    test('get with historyLength', async () => {
      const task = await sendForTask(client, userMessage('tck-complete-task', 'history-js'));
      const full = await getTask(client, { id: task.id });
      assert.equal(full.id, task.id);
      assert.ok(full.history.length >= 1);
      assert.ok(
        full.history.some((m) => m.role === Role.ROLE_USER && textsOf(m.parts).includes('history-js')),
      );
      const one = await getTask(client, { id: task.id, historyLength: 1 });
      assert.equal(one.history.length, 1);
      assert.deepEqual(one.history[0], full.history.at(-1));
      const zero = await getTask(client, { id: task.id, historyLength: 0 });
      assert.equal(zero.history.length, 0);
    });

    test('get unknown task -> TaskNotFoundError', async () => {
      await assert.rejects(getTask(client, { id: 'no-such-task-js' }), (e) =>
        isA(e, TaskNotFoundError),
      );
    });

    test('cancel a running task', async () => {
      const task = await sendForTask(client, userMessage('tck-delayed-complete', 'delay_ms=15000'), {
        returnImmediately: true,
      });
      assert.ok(!TERMINAL.has(task.status.state));
      let canceled = await cancelTask(client, task.id);
      assert.equal(canceled.id, task.id);
      if (canceled.status.state !== TaskState.TASK_STATE_CANCELED) {
        canceled = await waitState(client, task.id, TERMINAL, 5000);
      }
      assert.equal(stateName(canceled.status.state), 'TASK_STATE_CANCELED');
      // Re-cancel: TaskNotCancelable (terminal) or, read as idempotent, the CANCELED task.
      try {
        const again = await cancelTask(client, task.id);
        assert.equal(stateName(again.status.state), 'TASK_STATE_CANCELED');
      } catch (e) {
        assert.ok(isA(e, TaskNotCancelableError), `re-cancel failed with ${e}`);
      }
    });

    test('multi-turn input-required', async () => {
      const first = await sendForTask(client, userMessage('tck-input-required', 'start'));
      assert.equal(stateName(first.status.state), 'TASK_STATE_INPUT_REQUIRED');
      assert.equal(first.status.message?.role, Role.ROLE_AGENT);
      const second = await sendForTask(
        client,
        userMessage('tck-complete-task', 'more input', { taskId: first.id, contextId: first.contextId }),
      );
      assert.equal(second.id, first.id);
      assert.equal(stateName(second.status.state), 'TASK_STATE_COMPLETED');
    });

    test('subscribe to a running task', async () => {
      const task = await sendForTask(client, userMessage('tck-delayed-complete', 'delay_ms=2000'), {
        returnImmediately: true,
      });
      const events = await collect(subscribe(client, task.id), 'subscribe');
      assert.ok(events.length >= 2, `only ${events.length} events`);
      assert.equal(events[0].payload.$case, 'task', 'first event must be the Task snapshot');
      assert.equal(events[0].payload.value.id, task.id);
      assert.ok(!TERMINAL.has(events[0].payload.value.status.state));
      assert.equal(stateName(finalState(events)), 'TASK_STATE_COMPLETED');
    });

    test('subscribe to a terminal task fails', async () => {
      const task = await sendForTask(client, userMessage('tck-complete-task'));
      await assert.rejects(collect(subscribe(client, task.id)), (e) =>
        isA(e, UnsupportedOperationError),
      );
    });

    test('push notification via send configuration', async () => {
      const token = `tok-js-${binding}`;
      const creds = `secret-js-${binding}`;
      receiver.posts.length = 0;
      const task = await sendForTask(client, userMessage('tck-complete-task'), {
        taskPushNotificationConfig: {
          url: receiver.url,
          token,
          authentication: { scheme: 'Bearer', credentials: creds },
        },
      });
      await receiver.waitFor(pushCompleted);
      const mine = receiver.posts.filter((p) => p.body.includes(task.id));
      assert.ok(mine.length >= 1);
      for (const p of mine) checkPush(p, token, creds, task.id);
    });

    test('push config CRUD on a running task', async () => {
      receiver.posts.length = 0;
      const task = await sendForTask(client, userMessage('tck-delayed-complete', 'delay_ms=2000'), {
        returnImmediately: true,
      });
      const token = `crud-js-${binding}`;
      const creds = `crud-secret-js-${binding}`;
      const created = await client.createTaskPushNotificationConfig(
        TaskPushNotificationConfig.fromJSON({
          taskId: task.id,
          url: receiver.url,
          token,
          authentication: { scheme: 'Bearer', credentials: creds },
        }),
      );
      assert.ok(created.id, 'server must assign a config id');
      assert.equal(created.taskId, task.id);
      const got = await client.getTaskPushNotificationConfig(
        GetTaskPushNotificationConfigRequest.fromJSON({ taskId: task.id, id: created.id }),
      );
      assert.equal(got.url, receiver.url);
      const listed = await client.listTaskPushNotificationConfig(
        ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: task.id }),
      );
      assert.ok(listed.configs.some((c) => c.id === created.id));
      await receiver.waitFor(pushCompleted);
      for (const p of receiver.posts.filter((p) => p.body.includes(task.id))) {
        checkPush(p, token, creds, task.id);
      }
      await client.deleteTaskPushNotificationConfig(
        DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId: task.id, id: created.id }),
      );
      const after = await client.listTaskPushNotificationConfig(
        ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: task.id }),
      );
      assert.ok(!after.configs.some((c) => c.id === created.id));
    });

    test('list tasks', async () => {
      const t1 = await sendForTask(client, userMessage('tck-stream', 'first'));
      await new Promise((r) => setTimeout(r, 20)); // distinct status timestamps (ms precision)
      const t2 = await sendForTask(
        client,
        userMessage('tck-stream', 'second', { contextId: t1.contextId }),
      );
      assert.equal(t2.contextId, t1.contextId);
      const listed = await listTasks(client, { contextId: t1.contextId });
      assert.deepEqual(new Set(listed.tasks.map((t) => t.id)), new Set([t1.id, t2.id]));
      assert.equal(listed.tasks[0].id, t2.id, 'newest first');
      assert.equal(listed.nextPageToken, '');
      assert.ok(listed.tasks.every((t) => t.artifacts.length === 0));
      const withArt = await listTasks(client, { contextId: t1.contextId, includeArtifacts: true });
      assert.ok(withArt.tasks.every((t) => t.artifacts.length === 1));
      const page1 = await listTasks(client, { contextId: t1.contextId, pageSize: 1 });
      assert.equal(page1.tasks.length, 1);
      assert.ok(page1.nextPageToken);
      const page2 = await listTasks(client, {
        contextId: t1.contextId,
        pageSize: 1,
        pageToken: page1.nextPageToken,
      });
      assert.equal(page2.tasks.length, 1);
      assert.notEqual(page2.tasks[0].id, page1.tasks[0].id);
    });
  });
}

// The SDK's v0.3 compat transport: 0.3 method names (`message/send`, ...) and 0.3 payloads
// on POST <base>/, with the header `A2A-Version: 0.3` (the Client stamps the transport's
// version on every call). Built directly, so it does not depend on the card's 0.3 fields.
describe('0.3 compat (LegacyJsonRpcTransport)', () => {
  let client;
  before(async () => {
    const card = await (await fetch(`${BASE_URL}/.well-known/agent-card.json`)).json();
    client = new Client(new LegacyJsonRpcTransport({ endpoint: `${BASE_URL}/` }), card);
    assert.equal(client.protocolVersion, '0.3');
  });

  test('send (blocking) completes', async () => {
    const task = await sendForTask(client, userMessage('tck-complete-task', 'hi-03'));
    assert.equal(stateName(task.status.state), 'TASK_STATE_COMPLETED');
  });

  test('stream ends COMPLETED', async () => {
    const events = await collect(
      client.sendMessageStream(sendRequest(userMessage('tck-stream', 'stream-03'))),
    );
    assert.equal(events[0].payload?.$case, 'task');
    assert.equal(stateName(finalState(events)), 'TASK_STATE_COMPLETED');
  });

  test('get task', async () => {
    const task = await sendForTask(client, userMessage('tck-complete-task', 'get-03'));
    const got = await getTask(client, { id: task.id, historyLength: 1 });
    assert.equal(got.id, task.id);
    assert.equal(stateName(got.status.state), 'TASK_STATE_COMPLETED');
    assert.ok(got.history.length <= 1);
  });
});
