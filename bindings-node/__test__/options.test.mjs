// Options are read by core, strictly and alike in every language: a mistyped one is refused,
// naming it (before, Node silently dropped it: `bearerToken` for `bearerTokens` started an open
// server). The options Node lacked (extendedCard, limits) work as in Python.
import assert from 'node:assert/strict';
import test from 'node:test';
import { AgentServer, Client, InvalidParamsError } from '../index.js';
import { CARD, Echo, withServer } from './helpers.mjs';

test('a mistyped server option is refused, naming it', () => {
  for (const [options, name] of [
    [{ bearerToken: 'secret' }, /bearerToken/],
    [{ limits: { maxBodyByte: 10 } }, /maxBodyByte/],
    [{ security: { apiKey: {} } }, /apiKey/],
    [{ store: 5 }, /store/],
  ]) {
    assert.throws(() => new AgentServer(CARD, new Echo(), options), (e) => e instanceof InvalidParamsError && name.test(e.message), JSON.stringify(options));
  }
});

test('a mistyped client option is refused, naming it', async () => {
  await withServer(new Echo(), async (server) => {
    await assert.rejects(Client.connect(server.url, { timout: 5 }), (e) => e instanceof InvalidParamsError && /timout/.test(e.message));
    assert.throws(() => Client.fromCard(CARD, { bearer: 'x' }), InvalidParamsError);
  });
});

test('limits are enforced and the extended card is served', async () => {
  const card = { ...CARD, capabilities: { ...CARD.capabilities, extendedAgentCard: true } };
  const server = new AgentServer(card, new Echo(), {
    bearerTokens: { t: 'ada' },
    limits: { maxPartsPerMessage: 2 },
    extendedCard: { ...card, description: 'for callers who signed in' },
  });
  await server.listen(0);
  try {
    const client = await Client.connect(server.url, { bearerToken: 't' });
    const { task } = await client.send('hi');
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    // Three parts where the server allows two.
    const parts = [{ text: 'a' }, { text: 'b' }, { text: 'c' }];
    await assert.rejects(client.send({ messageId: 'm-parts', role: 'ROLE_USER', parts }), InvalidParamsError);
    const extended = await client.getExtendedCard();
    assert.equal(extended.description, 'for callers who signed in');
  } finally {
    await server.close();
  }
});

test('allowV03, extensions and timeout (seconds) are client options; listAllTasks pages', async () => {
  const seen = [];
  const agent = {
    async execute(context, events) {
      seen.push(context.extensions);
      await events.complete();
    },
  };
  const card = { ...CARD, capabilities: { ...CARD.capabilities, extensions: [{ uri: 'urn:ext:a' }] } };
  const server = new AgentServer(card, agent);
  await server.listen(0);
  try {
    const client = await Client.connect(server.url, { allowV03: false, extensions: ['urn:ext:a'], timeout: 5 });
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await client.send(`t${i}`)).task.id);
    assert.deepEqual(seen[0], ['urn:ext:a'], 'the extension reached the executor');
    const all = [];
    for await (const task of client.listAllTasks({ pageSize: 2 })) all.push(task.id);
    assert.equal(all.length, 5);
    assert.deepEqual(new Set(all), new Set(ids));
  } finally {
    await server.close();
  }
});

test('a credentials function gives each request its headers, plain or async', async () => {
  await withServer(new Echo(), async (server) => {
    // An open server to resolve the card; a guarded one for the calls (same card, other URL).
    const guarded = new AgentServer(CARD, new Echo(), { bearerTokens: { 'tok-2': 'ada' } });
    await guarded.listen(0);
    try {
      const seen = [];
      let n = 0;
      const credentials = async (method, url) => {
        seen.push([method, url]);
        n += 1;
        return { Authorization: `Bearer tok-${n}` }; // 'tok-1' refused, 'tok-2' accepted
      };
      const client = await Client.connect(guarded.url, { credentials });
      await assert.rejects(client.send('first'), /bearer token is not valid/);
      const { task } = await client.send('second');
      assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
      assert.deepEqual(seen.map(([m]) => m), ['SendMessage', 'SendMessage']);
      assert.ok(seen.every(([, url]) => url.startsWith(guarded.url.replace(/\/$/, ''))), JSON.stringify(seen));
      // A plain (not async) function works the same.
      const plain = await Client.connect(guarded.url, { credentials: () => ({ authorization: 'Bearer tok-2' }) });
      assert.equal((await plain.send('hi')).task.status.state, 'TASK_STATE_COMPLETED');
    } finally {
      await guarded.close();
    }
    // A failing provider fails the call before it is sent; a bad header is named.
    const sealed = new Error('vault is sealed');
    const throwing = await Client.connect(server.url, { credentials: () => { throw sealed; } });
    await assert.rejects(throwing.send('x'), (e) => /credentials function failed: vault is sealed$/.test(e.message) && e.cause === sealed);
    const rejecting = await Client.connect(server.url, { credentials: async () => Promise.reject(new Error('expired')) });
    await assert.rejects(rejecting.send('x'), /credentials function failed.*expired/);
    const badHeader = await Client.connect(server.url, { credentials: () => ({ 'bad header': 'x' }) });
    await assert.rejects(badHeader.send('x'), (e) => e instanceof InvalidParamsError && /bad header/.test(e.message));
    const notHeaders = await Client.connect(server.url, { credentials: () => ({ n: 5 }) });
    await assert.rejects(notHeaders.send('x'), /object of string headers/);
    assert.throws(() => Client.fromCard(CARD, { credentials: 'token' }), TypeError);
    // A provider that never answers gets the call's timeout, not a hang.
    const never = await Client.connect(server.url, { timeout: 0.3, credentials: () => new Promise(() => {}) });
    await assert.rejects(never.send('x'), (e) => e.name === 'TimeoutError' && /credentials provider gave no headers/.test(e.message));
  });
});

test('strictV1Card serves the 1.0 card without the 0.3 fields a 0.3 interface adds', async () => {
  const supportedInterfaces = ['1.0', '0.3'].map((v) => ({ url: 'http://127.0.0.1:9/', protocolBinding: 'JSONRPC', protocolVersion: v }));
  for (const strict of [false, true]) {
    const server = new AgentServer({ ...CARD, supportedInterfaces }, new Echo(), { strictV1Card: strict });
    await server.listen(0);
    try {
      const served = await (await fetch(`${server.url}/.well-known/agent-card.json`)).json();
      assert.equal('protocolVersion' in served, !strict, JSON.stringify(served));
      assert.equal('preferredTransport' in served, !strict);
      assert.equal(served.supportedInterfaces.length, 2);
    } finally {
      await server.close();
    }
  }
});

test('corsOrigins let web pages of those origins call the agent (CORS)', async () => {
  const page = 'http://localhost:5173';
  await withServer(new Echo(), async (server) => {
    const preflight = (origin) => fetch(`${server.url}/`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    let resp = await preflight(page);
    assert.equal(resp.status, 204);
    assert.equal(resp.headers.get('access-control-allow-origin'), page);
    resp = await fetch(`${server.url}/.well-known/agent-card.json`, { headers: { origin: page } });
    assert.equal(resp.headers.get('access-control-allow-origin'), page);
    resp = await preflight('https://elsewhere.example');
    assert.equal(resp.status, 403);
    assert.equal(resp.headers.get('access-control-allow-origin'), null);
  }, { corsOrigins: [page] });
  assert.throws(() => new AgentServer(CARD, new Echo(), { corsOrigins: ['https://app.example.com/'] }),
    (e) => e instanceof InvalidParamsError && /corsOrigins/.test(e.message));
});

test('listAllTasks stops when a server hands back the page token it was given', async () => {
  const { createServer } = await import('node:http');
  let calls = 0;
  // A JSON-RPC agent whose every ListTasks page is one task and the same next-page token.
  const stuck = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      calls += 1;
      const { id } = JSON.parse(body);
      const task = { id: `t${calls}`, contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } };
      const result = { tasks: [task], nextPageToken: 'again', pageSize: 1, totalSize: 99 };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result }));
    });
  });
  await new Promise((resolve) => stuck.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${stuck.address().port}/`;
    const card = { ...CARD, supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] };
    const client = Client.fromCard(card);
    const ids = [];
    for await (const task of client.listAllTasks({ pageSize: 1 })) ids.push(task.id);
    // The first page, then the page asked for with 'again', which answers 'again' once more.
    assert.deepEqual(ids, ['t1', 't2']);
    assert.equal(calls, 2);
  } finally {
    stuck.close();
  }
});

test("a request's misspelt member, a message of the wrong type and options beside a whole request are refused", async () => {
  await withServer(new Echo(), async (server) => {
    const client = await Client.connect(server.url);
    await client.send('one');
    // Sent on, `contextID` would list every task: core refuses it, naming it.
    await assert.rejects(client.listTasks({ contextID: 'c' }), (e) => e instanceof InvalidParamsError && /contextID/.test(e.message));
    await assert.rejects(
      async () => client.send('x', { configuration: { returnImmediatly: true } }),
      (e) => e instanceof InvalidParamsError && /configuration\.returnImmediatly/.test(e.message),
    );
    for (const bad of [42, null, undefined, ['x']]) {
      await assert.rejects(async () => client.send(bad), (e) => e instanceof TypeError && /message must be/.test(e.message), String(bad));
    }
    const request = { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } };
    await assert.rejects(async () => client.send(request, { metadata: { k: 1 } }), (e) => e instanceof TypeError && /metadata given beside it/.test(e.message));
    assert.equal((await client.send(request)).task.status.state, 'TASK_STATE_COMPLETED');
  });
});

test('option errors speak of the options, never of Rust types; listTasks takes short state names', async () => {
  for (const [options, field, says] of [
    [{ bearerTokens: 'secret' }, 'bearerTokens', /an object of token to principal/],
    [{ limits: { blocking_timeout: 'soon' } }, 'limits.blockingTimeout', /invalid type/],
    [{ taskRetention: -1 }, 'taskRetention', /0 or more/],
    [{ metricsAddress: 'not an address' }, 'metricsAddress', /host:port/],
    ['JSONRPC', '', /options must be an object/],
  ]) {
    assert.throws(
      () => new AgentServer(CARD, new Echo(), options),
      (e) => e instanceof InvalidParamsError && e.violations[0].field === field && says.test(e.message) && !/untagged|Duration/.test(e.message),
      JSON.stringify(options),
    );
  }
  await withServer(new Echo(), async (server) => {
    await assert.rejects(Client.connect(server.url, 'JSONRPC'), (e) => e instanceof InvalidParamsError && /options must be an object of named options, not a string/.test(e.message));
    await assert.rejects(Client.connect(server.url, { connectTimeout: 0 }), (e) => e instanceof InvalidParamsError && e.violations[0].field === 'connectTimeout');
    const client = await Client.connect(server.url, { connectTimeout: 2, streamIdleTimeout: 30 });
    const { task } = await client.send('one');
    for (const [status, found] of [['completed', true], ['TASK_STATE_COMPLETED', true], ['canceled', false]]) {
      const { tasks } = await client.listTasks({ status });
      assert.equal(tasks.some((t) => t.id === task.id), found, status);
      // The pager reads its request as listTasks does.
      const all = [];
      for await (const t of client.listAllTasks({ status })) all.push(t.id);
      assert.equal(all.includes(task.id), found, `listAllTasks ${status}`);
    }
    // A misspelt member would list every task: refused, naming it.
    await assert.rejects(
      (async () => { for await (const _ of client.listAllTasks({ contextID: 'c' })); })(),
      (e) => e instanceof InvalidParamsError && /contextID/.test(e.message),
    );
  });
});

test('fromCard reads a 0.3 card as connect does', () => {
  // The card an @a2a-js/sdk 0.3 agent serves (no supportedInterfaces): spoken to in 0.3.
  const card03 = {
    name: 'old', description: 'a 0.3 agent', version: '1', url: 'http://127.0.0.1:9/',
    protocolVersion: '0.3.0', preferredTransport: 'JSONRPC',
    capabilities: {}, defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
    skills: [{ id: 's', name: 's', description: 'd', tags: ['t'] }],
  };
  const client = Client.fromCard(card03);
  assert.deepEqual([client.url, client.protocolVersion], ['http://127.0.0.1:9/', '0.3']);
  assert.throws(() => Client.fromCard({ ...card03, skills: 'none' }), InvalidParamsError);
});
