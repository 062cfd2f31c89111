// Extension methods written in JavaScript: declared in `executor.methods`, served over
// JSON-RPC and HTTP+JSON by our server, called with client.call; and what is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  AgentServer,
  Client,
  ExtensionSupportRequiredError,
  InternalError,
  InvalidParamsError,
  MethodNotFoundError,
  TaskNotFoundError,
  UnauthenticatedError,
} from '../index.js';
import { CARD } from './helpers.mjs';

const SEARCH = 'https://example.com/ext/task-search/v1';
const AUDIT = 'https://example.com/ext/audit/v1';

const card = ({ auditRequired = false } = {}) => ({
  ...CARD,
  capabilities: { streaming: true, extensions: [{ uri: SEARCH, description: 'search' }, { uri: AUDIT, required: auditRequired }] },
});

function searching() {
  const contexts = [];
  return {
    contexts,
    async execute(context, events) {
      await events.complete('done');
    },
    methods: {
      'tasks/search': {
        extension: SEARCH,
        async handler(params, context) {
          contexts.push(context);
          if (params.query === 'missing') throw new TaskNotFoundError("no task matches 'missing'");
          if (params.query === 'boom') throw new Error('the index is down');
          return { matches: [params.query.toUpperCase()], caller: context.principal?.name ?? null, self: this === undefined ? 'none' : 'executor' };
        },
      },
      'audit/log': { extension: AUDIT, path: '/audit:log', handler: async () => ({ logged: true }) },
    },
  };
}

test('the client calls a JavaScript extension method over every binding', async () => {
  const agent = searching();
  const server = new AgentServer(card(), agent);
  await server.listen(0);
  try {
    for (const binding of ['JSONRPC', 'HTTP+JSON', 'GRPC']) {
      const client = await Client.connect(server.url, { binding });
      assert.deepEqual(await client.call('tasks/search', { query: 'open' }, { extensions: [SEARCH] }), { matches: ['OPEN'], caller: null, self: 'executor' });
      assert.deepEqual(client.lastActivated, [SEARCH]);
      const context = agent.contexts.at(-1);
      assert.deepEqual([context.method, context.extension, context.extensions], ['tasks/search', SEARCH, [SEARCH]]);
      await assert.rejects(client.call('tasks/search', { query: 'missing' }), (e) => e instanceof TaskNotFoundError && /missing/.test(e.message));
      await assert.rejects(client.call('tasks/search', { query: 'boom' }), (e) => e instanceof InternalError && /index is down/.test(e.message));
      await assert.rejects(client.call('tasks/nosuch', {}), MethodNotFoundError);
      assert.equal((await client.send('hi')).task.status.state, 'TASK_STATE_COMPLETED');
    }
    const resp = await fetch(`${server.url}/audit:log`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(resp.status, 200);
    assert.deepEqual(await resp.json(), { logged: true });
    assert.ok(resp.headers.get('a2a-extensions').includes(AUDIT));
  } finally {
    await server.close();
  }
});

test('a handler that throws something with no name or string form is InternalError, and the process goes on', async () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  const throwing = { get name() { throw new Error('no name'); }, toString() { throw new Error('no string'); } };
  const agent = {
    async execute(context, events) { await events.complete('done'); },
    methods: {
      'tasks/search': {
        extension: SEARCH,
        async handler(params) {
          throw params.query === 'revoked' ? proxy : throwing;
        },
      },
    },
  };
  const server = new AgentServer(card(), agent);
  await server.listen(0);
  try {
    const client = await Client.connect(server.url);
    for (const query of ['revoked', 'throwing']) {
      await assert.rejects(client.call('tasks/search', { query }), InternalError, query);
    }
    assert.equal((await client.send('hi')).task.status.state, 'TASK_STATE_COMPLETED');
  } finally {
    await server.close();
  }
});

test('a required extension must be requested, and auth applies', async () => {
  const server = new AgentServer(card({ auditRequired: true }), searching(), { bearerTokens: { s3cret: 'alice' } });
  await server.listen(0);
  try {
    const anonymous = await Client.connect(server.url);
    await assert.rejects(anonymous.call('tasks/search', { query: 'q' }, { extensions: [AUDIT] }), UnauthenticatedError);
    const client = await Client.connect(server.url, { bearerToken: 's3cret' });
    await assert.rejects(client.call('tasks/search', { query: 'q' }), ExtensionSupportRequiredError);
    const result = await client.call('tasks/search', { query: 'q' }, { extensions: [AUDIT] });
    assert.equal(result.caller, 'alice');
    assert.deepEqual(new Set(client.lastActivated), new Set([AUDIT, SEARCH]));
  } finally {
    await server.close();
  }
});

test('core method names and undeclared extensions are refused when the server is made', () => {
  const handler = async () => null;
  const base = { async execute() {} };
  assert.throws(() => new AgentServer(card(), { ...base, methods: { SendMessage: { extension: SEARCH, handler } } }), (e) => e instanceof InvalidParamsError && /core A2A method/.test(e.message));
  assert.throws(() => new AgentServer(card(), { ...base, methods: { 'x/y': { extension: 'urn:nobody', handler } } }), (e) => e instanceof InvalidParamsError && /do not declare/.test(e.message));
  assert.throws(() => new AgentServer(card(), { ...base, methods: { 'x/y': { extension: SEARCH } } }), TypeError);
});

// The Timestamp extension of the A2A samples (a2a-samples/samples/extensions/timestamp/v1): a
// client that asks for it gets an RFC 3339 UTC timestamp in the metadata of every Message and
// Artifact; the agent activates it only then, and only then is it echoed.
const TIMESTAMP = 'https://github.com/a2aproject/a2a-samples/samples/extensions/timestamp/v1';
const TIMESTAMP_KEY = 'github.com/a2aproject/a2a-samples/samples/extensions/timestamp/v1/timestamp';
const UNUSED = 'https://example.com/ext/declared-but-never-used/v1';

test('the timestamp extension is activated only when asked for', async () => {
  const agent = {
    async execute(context, events) {
      const stamp = events.activateExtension(TIMESTAMP);
      const metadata = () => (stamp ? { [TIMESTAMP_KEY]: new Date().toISOString() } : undefined);
      await events.artifact(context.text, { name: 'echo', metadata: metadata() });
      await events.complete({ parts: [{ text: 'done' }], ...(stamp ? { metadata: metadata() } : {}) });
    },
  };
  const server = new AgentServer({ ...CARD, capabilities: { extensions: [{ uri: TIMESTAMP }, { uri: UNUSED }] } }, agent);
  await server.listen(0);
  try {
    const send = (extensions) =>
      fetch(`${server.url}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...(extensions ? { 'a2a-extensions': extensions } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { role: 'ROLE_USER', messageId: 'm', parts: [{ text: 'hi' }] } } }),
      });
    let resp = await send(`${TIMESTAMP}, ${UNUSED}`);
    assert.equal(resp.headers.get('a2a-extensions'), TIMESTAMP);
    let { task } = (await resp.json()).result;
    for (const meta of [task.artifacts[0].metadata, task.status.message.metadata]) {
      assert.match(meta[TIMESTAMP_KEY], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    }
    resp = await send(UNUSED);
    assert.equal(resp.headers.get('a2a-extensions'), null);
    ({ task } = (await resp.json()).result);
    assert.equal(task.artifacts[0].metadata, undefined);
    assert.equal(task.status.message.metadata, undefined);
  } finally {
    await server.close();
  }
});

const ORDERS = 'https://example.com/ext/order-profile/v1';

test('a profile check refuses a message that breaks its rule', async () => {
  const agent = {
    async execute(context, events) {
      await events.complete('accepted');
    },
    profiles: {
      [ORDERS](message) {
        const data = (message.parts ?? []).filter((p) => 'data' in p).map((p) => p.data);
        if (!data.some((d) => typeof d?.orderId === 'string')) throw new Error('every message carries a DataPart {"orderId": string}');
      },
    },
  };
  const server = new AgentServer({ ...CARD, capabilities: { extensions: [{ uri: ORDERS }] } }, agent);
  await server.listen(0);
  try {
    const client = await Client.connect(server.url, { extensions: [ORDERS] });
    await assert.rejects(client.send('no order here'), (e) => e instanceof InvalidParamsError && e.message.includes(ORDERS) && e.message.includes('orderId'));
    assert.equal((await client.listTasks()).tasks?.length ?? 0, 0);
    const ok = await client.send({ role: 'ROLE_USER', messageId: 'm1', parts: [{ data: { orderId: 'o-1' } }] });
    assert.equal(ok.task.status.state, 'TASK_STATE_COMPLETED');
    const plain = await Client.connect(server.url);
    assert.equal((await plain.send('no order here')).task.status.state, 'TASK_STATE_COMPLETED');
  } finally {
    await server.close();
  }
  assert.throws(() => new AgentServer(CARD, agent), (e) => e instanceof InvalidParamsError && /do not declare/.test(e.message));
});

test("a handler's signal is aborted when its caller leaves", async () => {
  let aborted = null;
  const agent = {
    async execute(context, events) { await events.complete('done'); },
    methods: {
      'tasks/search': {
        extension: SEARCH,
        handler: (params, context) =>
          new Promise((resolve) => {
            context.signal.addEventListener('abort', () => {
              aborted = context.signal.reason;
              resolve(null);
            });
          }),
      },
    },
  };
  const server = new AgentServer(card(), agent);
  await server.listen(0);
  try {
    const client = await Client.connect(server.url, { timeout: 0.3 });
    await assert.rejects(client.call('tasks/search', { query: 'slow' }, { extensions: [SEARCH] }));
    for (let i = 0; i < 100 && aborted === null; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(aborted instanceof DOMException, String(aborted));
    assert.equal(aborted.name, 'AbortError');
  } finally {
    await server.close();
  }
});
