// The shared vectors (tests/vectors) through this binding: model round trips and errors, 0.3
// conversion both ways, and the state table, the last also end to end (a JavaScript executor
// puts a live task in each state; our client tries message / cancel / subscribe on it).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';

import { A2AError, AgentServer, Client, canTransition, errorTable, normalize, stateClass, v03ToV10, v10ToV03 } from '../index.js';
import { CARD } from './helpers.mjs';
import { call, native } from '../lib/native.js';

const VECTORS = new URL('../../tests/vectors/', import.meta.url);
const load = (dir) =>
  readdirSync(new URL(dir, VECTORS))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(new URL(`${dir}${f}`, VECTORS), 'utf8'))]);

function expectError(fn, expected, what) {
  let err;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof A2AError, `${what}: expected an A2AError, got ${err}`);
  assert.equal(err.code, expected.code, `${what}: ${err.message}`);
  if ('field' in expected) assert.equal(err.violations[0]?.field ?? '', expected.field, `${what}: ${err.message}`);
}

describe('model vectors', () => {
  for (const [file, { groups }] of load('model/')) {
    test(file, () => {
      let cases = 0;
      for (const { type, valid = [], invalid = [] } of groups) {
        for (const c of valid) {
          assert.deepEqual(normalize(type, c.input), c.canonical ?? c.input, `${file} ${type} ${c.name}`);
          cases++;
        }
        for (const c of invalid) {
          expectError(() => normalize(type, c.input), c.error, `${file} ${type} ${c.name}`);
          cases++;
        }
      }
      assert.ok(cases > 0);
    });
  }
});

describe('0.3 conversion vectors', () => {
  for (const [file, { cases }] of load('v03/')) {
    test(file, () => {
      for (const c of cases) {
        const what = `${file} ${c.type} ${c.name}`;
        if (c.error) {
          if (c.direction === 'to_v03') expectError(() => v10ToV03(c.type, c.v10), c.error, what);
          else expectError(() => v03ToV10(c.type, c.v03), c.error, what);
          continue;
        }
        if (c.direction !== 'to_v03') assert.deepEqual(v03ToV10(c.type, c.v03), c.v10, `${what} (to 1.0)`);
        if (c.direction !== 'to_v10') assert.deepEqual(v10ToV03(c.type, c.v10), c.v03, `${what} (to 0.3)`);
      }
    });
  }
});

const STATES = JSON.parse(readFileSync(new URL('state/transitions.json', VECTORS), 'utf8'));

describe('state vectors', () => {
  test('every transition and class matches the table', () => {
    let checked = 0;
    for (const [from, allowed] of Object.entries(STATES.allowed)) {
      for (const to of STATES.states) {
        assert.equal(canTransition(from === '(new)' ? null : from, to), allowed.includes(to), `${from} -> ${to}`);
        checked++;
      }
    }
    assert.equal(checked, 10 * 9);
    for (const state of STATES.states) {
      const listed = Object.entries(STATES.classes).find(([, members]) => members.includes(state))?.[0] ?? 'unspecified';
      assert.equal(stateClass(state), listed, state);
    }
    assert.throws(() => stateClass('TASK_STATE_NOPE'), A2AError);
  });

  describe('operations on a live task in each state', () => {
    // The first message's text names the state to report; active states then wait for a
    // cancel, so the task stays in them while the client probes.
    const agent = {
      async execute(context, events) {
        if (context.task) return; // a probe message: nothing more to do
        const state = context.text;
        await events.status(state);
        if (stateClass(state) === 'active') {
          await new Promise((resolve) => {
            const timer = setTimeout(resolve, 20_000);
            context.signal.addEventListener('abort', () => resolve(clearTimeout(timer)));
          });
        }
      },
    };
    let server;
    let client;
    before(async () => {
      server = new AgentServer(CARD, agent);
      await server.listen(0);
      client = await Client.connect(server.url);
    });
    after(() => server.close());

    async function taskIn(state, contextId) {
      const { task } = await client.send(state, { contextId, configuration: { returnImmediately: true } });
      const deadline = Date.now() + 5000;
      let current = task;
      while (current.status.state !== state && Date.now() < deadline) current = await client.getTask(task.id);
      assert.equal(current.status.state, state);
      return current;
    }
    const outcome = (promise) => promise.then(() => 'ok', (e) => (e instanceof A2AError ? e.name : String(e)));
    const immediately = { configuration: { returnImmediately: true } };

    for (const op of STATES.operations) {
      test(op.state, async () => {
        let task = await taskIn(op.state);
        const message = await outcome(client.send('probe', { taskId: task.id, contextId: task.contextId, ...immediately }));
        assert.equal(message, op.message, `message in ${op.state}`);
        task = await taskIn(op.state);
        assert.equal(await outcome(client.cancel(task.id)), op.cancel, `cancel in ${op.state}`);
        task = await taskIn(op.state);
        const stream = client.subscribe(task.id);
        const subscribe = await outcome(stream.next());
        await stream.close();
        assert.equal(subscribe, op.subscribe, `subscribe in ${op.state}`);
        if (stateClass(op.state) === 'active') await client.cancel(task.id);
      });
    }

    for (const c of STATES.context_checks) {
      test(`context: ${c.name}`, async () => {
        const task = await taskIn('TASK_STATE_INPUT_REQUIRED', c.task_context);
        const sent = client.send('probe', { taskId: task.id, contextId: c.message_context || undefined, ...immediately });
        assert.equal(await outcome(sent), c.expected);
        if (c.field) assert.equal((await sent.catch((e) => e)).violations[0].field, c.field);
      });
    }
  });
});

// The protocol vectors over HTTP, against a server hosting a JavaScript executor, as the Python
// binding runs them: every refused JSON-RPC request gets its code and id (a notification: no
// answer), every refused HTTP+JSON request its status, Allow header and ErrorInfo reason.
/** One HTTP/1.1 request sent byte for byte (node:http would upper-case the method). */
function raw(port, method, path, body) {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(body ?? '');
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n`
        + `Content-Length: ${payload.length}\r\nConnection: close\r\n\r\n`);
      socket.write(payload); // no half-close: the server would drop the connection unanswered
    });
    const chunks = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      let payloadText = rest.join('\r\n\r\n');
      if (headers['transfer-encoding'] === 'chunked') {
        let out = '';
        for (let at = 0; ;) {
          const eol = payloadText.indexOf('\r\n', at);
          const size = parseInt(payloadText.slice(at, eol), 16);
          if (!size) break;
          out += payloadText.slice(eol + 2, eol + 2 + size);
          at = eol + 2 + size + 2;
        }
        payloadText = out;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: payloadText });
    });
  });
}

const bodyOf = (c) => ('body_text' in c ? String(c.body_text) : 'body' in c ? JSON.stringify(c.body) : undefined);

describe('protocol vectors over HTTP', () => {
  let server;
  before(async () => {
    server = new AgentServer(CARD, { async execute(_context, events) { await events.complete(); } });
    await server.listen(0);
  });
  after(() => server.close());

  test('jsonrpc: every refused request gets its code and id', async () => {
    const failures = [];
    let checked = 0;
    for (const [file, doc] of load('jsonrpc/')) {
      if (doc.kind !== 'request') continue;
      for (const c of doc.cases) {
        const want = c.expected.error;
        // 0.3 method names go to the 0.3 adapter when the server speaks 0.3 (README).
        if (!want || c.expected.is_v03_method) continue;
        checked++;
        const { status, body } = await raw(server.port, 'POST', '/', bodyOf(c));
        if (want.notification) {
          if (status !== 204 || body) failures.push(`${file} ${c.name}: notification answered ${status}`);
          continue;
        }
        const reply = JSON.parse(body);
        if (reply.error?.code !== want.code || reply.id !== want.id) {
          failures.push(`${file} ${c.name}: got ${reply.error?.code} / ${JSON.stringify(reply.id)}, want ${want.code} / ${JSON.stringify(want.id)}`);
        }
      }
    }
    assert.ok(checked > 60, `${checked} cases`);
    assert.deepEqual(failures, []);
  });

  test('rest: every refused request gets its status, Allow and ErrorInfo reason', async () => {
    const reasons = new Map(errorTable().map((r) => [r.code, r.reason]));
    const failures = [];
    let checked = 0;
    for (const [file, doc] of load('rest/')) {
      for (const c of doc.cases) {
        const want = c.expected.error;
        // On this server `/` is also the JSON-RPC endpoint (POST), so other methods there get
        // 405 rather than the REST-only 404 the vector expects.
        if (!want || c.path === '' || c.path === '/') continue;
        checked++;
        const path = c.path + (c.query ? `?${c.query}` : '');
        const { status, headers, body } = await raw(server.port, c.method, path, bodyOf(c));
        if (status !== want.http_status) {
          failures.push(`${file} ${c.name}: HTTP ${status}, want ${want.http_status}`);
          continue;
        }
        if ('allow' in want && headers.allow !== want.allow) failures.push(`${file} ${c.name}: Allow ${headers.allow}, want ${want.allow}`);
        const details = JSON.parse(body).error?.details ?? [];
        const got = details.filter((d) => (d['@type'] ?? '').endsWith('ErrorInfo')).map((d) => d.reason);
        if (JSON.stringify(got) !== JSON.stringify([reasons.get(want.code)])) failures.push(`${file} ${c.name}: reasons ${got}, want ${reasons.get(want.code)}`);
      }
    }
    assert.ok(checked > 40, `${checked} cases`);
    assert.deepEqual(failures, []);
  });
});

// The options JSON the Node layer hands to core: accepted or refused as core says, naming the field.
describe('options vectors', () => {
  for (const [file, make] of [
    ['server.json', (card, options) => new AgentServer(card, { async execute() {} }, options)],
    ['client.json', (card, options) => Client.fromCard(card, options)],
  ]) {
    const doc = JSON.parse(readFileSync(new URL(`options/${file}`, VECTORS), 'utf8'));
    for (const c of doc.cases) {
      test(`${file}: ${c.name}`, () => {
        if (!('error' in c)) return void make(doc.card, c.options);
        assert.throws(() => make(doc.card, c.options), (e) => e instanceof A2AError && e.code === -32602 && e.message.startsWith(c.error), JSON.stringify(c));
      });
    }
  }
});

// Every JSON-RPC request and response case and every HTTP+JSON route case, accepted or refused,
// read from JavaScript and checked by the core codec this package ships (the refused ones also
// go over HTTP to a JS-hosted server above).
describe('wire vectors', () => {
  for (const folder of ['jsonrpc', 'rest']) {
    for (const [file, doc] of load(`${folder}/`)) {
      for (const c of doc.cases) {
        test(`${folder}/${file}: ${c.name}`, () => {
          assert.equal(native.vectorCheck(folder, doc.kind ?? '', JSON.stringify(c)), null);
        });
      }
    }
  }
  test('a case that does not hold says why', () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 't' } };
    const wrong = { name: 'x', body, expected: { method: 'GetTask', params: { id: 'u' }, id: 1 } };
    assert.match(native.vectorCheck('jsonrpc', 'request', JSON.stringify(wrong)), /expected "GetTask" \{"id":"u"\}/);
  });
});

// Core's SSE codec fed from JavaScript: every decode case whole, split in two at every byte and
// one byte at a time (the outcomes never depend on the chunking); every encode case byte for byte.
describe('sse vectors', () => {
  for (const [file, doc] of load('sse/')) {
    for (const c of doc.decode ?? []) {
      test(`${file}: decode ${c.name}`, () => {
        const data = 'input_base64' in c ? Buffer.from(c.input_base64, 'base64') : Buffer.from(c.input, 'utf8');
        const splits = [[data]];
        for (let at = 0; at <= data.length; at++) splits.push([data.subarray(0, at), data.subarray(at)]);
        splits.push([...data].map((b) => Buffer.from([b])));
        for (const chunks of splits) {
          const out = JSON.parse(native.sseDecode(chunks, c.max_event_bytes ?? null));
          assert.deepEqual(out.outcomes, c.expected, `${c.name}, chunks ${chunks.map((x) => x.length)}`);
          if ('last_event_id' in c) assert.equal(out.last_event_id, c.last_event_id, c.name);
        }
      });
    }
    for (const c of doc.encode ?? []) {
      test(`${file}: encode ${c.name}`, () => assert.equal(native.sseEncode(JSON.stringify(c)), c.expected));
    }
  }
  test('a case without event or comment is refused', () => {
    expectError(() => call(() => native.sseEncode('{"name":"neither"}')), { code: -32602 }, 'sseEncode');
  });
});
