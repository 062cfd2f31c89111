// A JavaScript executor served by our server, driven by our JavaScript client, end to end.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  A2AError,
  AgentServer,
  Client,
  ContentTypeNotSupportedError,
  ERRORS,
  InternalError,
  InvalidParamsError,
  TaskNotCancelableError,
  TaskNotFoundError,
  TransportError,
  UnauthenticatedError,
  errorTable,
  normalize,
  userMessage,
} from '../index.js';
import { CARD, Echo, collect, kind, within, withServer } from './helpers.mjs';

test('send: blocking send, get, list, direct reply', () =>
  withServer(new Echo(), async (server) => {
    assert.equal(server.url, `http://127.0.0.1:${server.port}`);
    const client = await Client.connect(server.url);
    assert.equal(client.card.name, 'node-test-agent');
    assert.equal(client.binding, 'JSONRPC');
    const { task } = await client.send('hi there');
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    assert.deepEqual(task.artifacts[0].parts, [{ text: 'hi there' }]);
    // The executor gave no artifact id: core gave it a fresh UUID.
    assert.match(task.artifacts[0].artifactId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal((await client.getTask(task.id)).id, task.id);
    const listed = await client.listTasks();
    assert.deepEqual(listed.tasks.map((t) => t.id), [task.id]);
    const reply = await client.send('reply');
    assert.deepEqual(reply.message.parts, [{ text: 'a direct reply' }]);
  }));

test('agent events are read by core as in every language', () => {
  const refused = [];
  const strict = {
    async execute(context, events) {
      for (const attempt of [() => events.artifact([]), () => events.status('finished')]) {
        try {
          await attempt();
        } catch (e) {
          assert.ok(e instanceof InvalidParamsError, String(e));
          refused.push(e.message);
        }
      }
      await events.artifact('kept', { name: 'out' });
      // A Message object without role or messageId is the agent's, with a fresh id.
      await events.complete({ parts: [{ text: 'done' }] });
    },
  };
  return withServer(strict, async (server) => {
    const { task } = await (await Client.connect(server.url)).send('go');
    assert.equal(refused.length, 2, refused.join('; '));
    assert.match(refused[0], /artifact\.parts/);
    assert.match(refused[1], /state/);
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(task.status.message.role, 'ROLE_AGENT');
    assert.ok(task.status.message.messageId);
    assert.deepEqual(task.artifacts.map((a) => a.name), ['out']);
  });
});

test('stream: for await over HTTP+JSON, artifact chunks in order, ends with the task', () =>
  withServer(new Echo(), async (server) => {
    const client = await Client.connect(server.url, { binding: 'HTTP+JSON' });
    assert.equal(client.binding, 'HTTP+JSON');
    const events = await within(10_000, collect(client.stream('chunks')), 'stream');
    const kinds = events.map(kind);
    assert.equal(kinds[0], 'task');
    assert.equal(kinds.at(-1), 'statusUpdate');
    const arts = events.filter((e) => e.artifactUpdate).map((e) => e.artifactUpdate);
    assert.deepEqual(arts.map((a) => a.artifact.parts[0].text), ['a', 'b']);
    assert.ok(arts[1].append && arts[1].lastChunk);
    assert.equal(events.at(-1).statusUpdate.status.state, 'TASK_STATE_COMPLETED');
  }));

test('gRPC: the server serves it, the client speaks it when asked (call, stream, error)', () =>
  withServer(new Echo(), async (server) => {
    const client = await Client.connect(server.url, { binding: 'GRPC' });
    assert.equal(client.binding, 'GRPC');
    assert.equal(client.url, `127.0.0.1:${server.port}`);
    const { task } = await client.send('over grpc');
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    assert.deepEqual(task.artifacts[0].parts, [{ text: 'over grpc' }]);
    const events = await within(10_000, collect(client.stream('chunks')), 'gRPC stream');
    assert.equal(kind(events[0]), 'task');
    const arts = events.filter((e) => e.artifactUpdate).map((e) => e.artifactUpdate.artifact.parts[0].text);
    assert.deepEqual(arts, ['a', 'b']);
    assert.equal(events.at(-1).statusUpdate.status.state, 'TASK_STATE_COMPLETED');
    await assert.rejects(client.getTask('no-such-task'), TaskNotFoundError);
  }));

test('the memory store bounds and the listener limits are options', async () => {
  const server = new AgentServer(CARD, new Echo(), { maxTasks: 2, taskRetention: 60, limits: { bodyReadTimeout: 5 } });
  await server.listen(0);
  try {
    const client = await Client.connect(server.url);
    const ids = [];
    for (const n of [0, 1, 2]) ids.push((await client.send(`t${n}`)).task.id);
    const listed = (await client.listTasks()).tasks.map((t) => t.id);
    assert.equal(listed.length, 2);
    assert.ok(!listed.includes(ids[0]));
  } finally {
    await server.close();
  }
  assert.throws(() => new AgentServer(CARD, new Echo(), { maxTasks: 0 }), InvalidParamsError);
  assert.throws(() => new AgentServer(CARD, new Echo(), { store: 'sqlite:/tmp/x.db', maxTasks: 3 }), /memory store only/);
});

test('an executor that never returns ends FAILED at limits.executorTimeout; the server goes on', async () => {
  const reasons = [];
  const stuck = {
    async execute(context, events) {
      await events.working();
      // Its signal says why it stops: a TimeoutError, not the AbortError of a cancel.
      await new Promise((resolve) => context.signal.addEventListener('abort', () => resolve(reasons.push(context.signal.reason))));
      await new Promise(() => {});
    },
  };
  await withServer(stuck, async (server) => {
    const client = await Client.connect(server.url);
    for (const _ of [0, 1]) {
      const task = (await within(10_000, client.send('hi'), 'the reply')).task;
      assert.equal(task.status.state, 'TASK_STATE_FAILED');
      assert.match(task.status.message.parts[0].text, /did not return within 0\.3 s/);
    }
    await within(5000, (async () => { while (reasons.length < 2) await new Promise((r) => setTimeout(r, 10)); })(), 'the aborts');
    assert.deepEqual(reasons.map((r) => r.name), ['TimeoutError', 'TimeoutError']);
    assert.match(reasons[0].message, /executorTimeout/);
  }, { limits: { executorTimeout: 0.3 } });
  assert.throws(() => new AgentServer(CARD, stuck, { limits: { executorTimeout: 0 } }), InvalidParamsError);
});

test('metricsAddress serves the requests, by binding, method and outcome, at metricsUrl', async () => {
  const server = new AgentServer(CARD, new Echo(), { metricsAddress: '127.0.0.1:0' });
  assert.equal(server.metricsUrl, null);
  await server.listen(0);
  try {
    assert.match(server.metricsUrl, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const client = await Client.connect(server.url);
    await client.send('hello');
    await assert.rejects(client.getTask('missing'), TaskNotFoundError);
    const resp = await fetch(server.metricsUrl);
    assert.match(resp.headers.get('content-type'), /^application\/openmetrics-text/);
    const text = await resp.text();
    assert.ok(text.includes('a2a_server_requests_total{binding="jsonrpc",method="SendMessage",outcome="OK"} 1'), text);
    assert.ok(text.includes('a2a_server_requests_total{binding="jsonrpc",method="GetTask",outcome="TASK_NOT_FOUND"} 1'), text);
    assert.ok(text.endsWith('# EOF\n'));
  } finally {
    await server.close();
  }
  assert.equal(server.metricsUrl, null);
});

test("the caller's W3C trace context reaches the executor as context.traceContext", async () => {
  const seen = [];
  const agent = {
    async execute(context, events) {
      seen.push(context.traceContext);
      await events.complete('done');
    },
  };
  const server = new AgentServer(CARD, agent);
  await server.listen(0);
  try {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    await (await Client.connect(server.url, { headers: { traceparent, tracestate: 'v=1' } })).send('traced');
    await (await Client.connect(server.url)).send('plain');
    await (await Client.connect(server.url, { headers: { traceparent: 'not-one' } })).send('malformed');
    assert.deepEqual(seen, [{ traceparent, tracestate: 'v=1' }, {}, {}]);
  } finally {
    await server.close();
  }
});

test('multi-turn: input-required, then the answer completes the same task', () =>
  withServer(new Echo(), async (server) => {
    const client = await Client.connect(server.url);
    const { task } = await client.send('ask');
    assert.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED');
    assert.deepEqual(task.status.message.parts, [{ text: 'what is your name?' }]);
    const { task: task2 } = await client.send('Ada', { taskId: task.id, contextId: task.contextId });
    assert.equal(task2.id, task.id);
    assert.equal(task2.status.state, 'TASK_STATE_COMPLETED');
    assert.deepEqual(task2.status.message.parts, [{ text: 'hello Ada' }]);
  }));

test('cancel reaches the AbortSignal and the executor; both streams end CANCELED', () => {
  const agent = new Echo();
  return withServer(agent, async (server) => {
    const client = await Client.connect(server.url);
    const stream = client.stream('slow');
    const first = (await stream.next()).value;
    const taskId = first.task.id;
    const working = (await stream.next()).value; // the executor is now waiting
    assert.equal(working.statusUpdate.status.state, 'TASK_STATE_WORKING');
    const sub = client.subscribe(taskId);
    assert.equal((await sub.next()).value.task.id, taskId);
    const canceled = await client.cancel(taskId);
    assert.equal(canceled.status.state, 'TASK_STATE_CANCELED');
    const reason = await within(5000, agent.aborted, 'the abort signal');
    assert.equal(reason.name, 'AbortError');
    assert.equal(reason.message, 'the task was canceled');
    assert.equal(agent.cancels, 1);
    for (const rest of [await collect(stream), await collect(sub)]) {
      assert.equal(rest.at(-1)?.statusUpdate?.status.state, 'TASK_STATE_CANCELED', JSON.stringify(rest));
    }
    assert.equal((await client.getTask(taskId)).status.state, 'TASK_STATE_CANCELED');
    await assert.rejects(client.cancel(taskId), (e) => e instanceof TaskNotCancelableError && e.code === -32002);
  });
});

test("closing the server aborts a running execution, giving the server's close as the reason", async () => {
  const agent = new Echo();
  const server = new AgentServer(CARD, agent);
  await server.listen(0);
  const client = await Client.connect(server.url);
  const stream = client.stream('slow');
  await stream.next();
  assert.equal((await stream.next()).value.statusUpdate.status.state, 'TASK_STATE_WORKING');
  const closing = server.close();
  const reason = await within(5000, agent.aborted, 'the abort signal');
  assert.equal(reason.name, 'AbortError');
  assert.equal(reason.message, 'the server closed');
  await closing;
  assert.equal(agent.cancels, 0);
});

test('an A2AError thrown before the first event is the caller\'s error and makes no task; after one, or InternalError, fails the task', () => {
  const picky = {
    async execute(context, events) {
      if (context.text === 'late') await events.working();
      if (context.text === 'png' || context.text === 'late') throw new ContentTypeNotSupportedError('only text/plain is read');
      if (context.text === 'internal') throw new InternalError('our own fault');
      await events.complete('ok');
    },
  };
  return withServer(picky, async (server) => {
    const client = await Client.connect(server.url);
    await assert.rejects(client.send('png'), (e) => e instanceof ContentTypeNotSupportedError && e.message === 'only text/plain is read');
    await assert.rejects(collect(client.stream('png')), ContentTypeNotSupportedError);
    assert.deepEqual((await client.listTasks({})).tasks ?? [], []);
    for (const text of ['late', 'internal']) {
      assert.equal((await client.send(text)).task.status.state, 'TASK_STATE_FAILED', text);
    }
  });
});

test('a synchronous throw and a rejected promise each fail the task; the process survives', () =>
  withServer(new Echo(), async (server) => {
    const client = await Client.connect(server.url);
    const thrown = (await client.send('boom')).task;
    assert.equal(thrown.status.state, 'TASK_STATE_FAILED');
    assert.deepEqual(thrown.status.message.parts, [{ text: 'the agent blew up' }]);
    const rejected = (await client.send('reject')).task;
    assert.equal(rejected.status.state, 'TASK_STATE_FAILED');
    assert.deepEqual(rejected.status.message.parts, [{ text: 'rejected later' }]);
    // Not an async function, and throws something that is not an Error; or something that has
    // no string form at all, or an Error whose message is not a string.
    const bare = Object.create(null);
    const odd = new Error();
    odd.message = { not: 'a string' };
    for (const [thrownValue, text] of [['a string', 'a string'], [bare, 'the executor failed with a value that has no string form'], [odd, 'Error']]) {
      const server2 = new AgentServer(CARD, { execute() { throw thrownValue; } });
      await server2.listen(0);
      try {
        const c = await Client.connect(server2.url);
        const { task } = await c.send('x');
        assert.equal(task.status.state, 'TASK_STATE_FAILED');
        assert.deepEqual(task.status.message.parts, [{ text }]);
      } finally {
        await server2.close();
      }
    }
    assert.equal((await client.send('still alive')).task.status.state, 'TASK_STATE_COMPLETED');
  }));

test('errors map to A2AError subclasses with .code, spec name, metadata and violations', () =>
  withServer(new Echo(), async (server) => {
    const client = await Client.connect(server.url);
    const err = await client.getTask('no-such-task').then(
      () => assert.fail('expected TaskNotFoundError'),
      (e) => e,
    );
    assert.ok(err instanceof TaskNotFoundError && err instanceof A2AError && err instanceof Error);
    assert.deepEqual([err.code, err.name, err.reason, err.httpStatus], [-32001, 'TaskNotFoundError', 'TASK_NOT_FOUND', 404]);
    assert.equal(err.metadata.taskId, 'no-such-task');
    // A bad request is refused locally, naming the field.
    const bad = await client.send({ messageId: '', role: 'ROLE_USER', parts: [{ text: 'x' }] }).catch((e) => e);
    assert.ok(bad instanceof InvalidParamsError, String(bad));
    assert.equal(bad.violations[0].field, 'message.messageId');
    // Values JSON cannot carry are typed errors too, not crashes.
    const cyclic = {};
    cyclic.self = cyclic;
    await assert.rejects(client.send({ messageId: 'm', role: 'ROLE_USER', parts: [{ data: cyclic }] }), InvalidParamsError);
    assert.throws(() => new AgentServer({ name: 'no card' }, new Echo()), InvalidParamsError);
    assert.throws(() => new AgentServer(CARD, {}), TypeError);
    await assert.rejects(Client.connect(server.url, { binding: 'SOAP' }), InvalidParamsError);
    // The server is gone: the client's failure to reach it is a TransportError.
    await server.close();
    const gone = await client.getTask('any').catch((e) => e);
    assert.ok(gone instanceof TransportError, String(gone));
    assert.equal(gone.code, -31502);
  }));

test('events sent as StreamResponse objects get the ids they leave out', async () => {
  const agent = {
    async execute(_context, events) {
      await events.send({ artifactUpdate: { artifact: { artifactId: 'a', parts: [{ text: 'raw' }] } } });
      await events.send({ statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } });
    },
  };
  await withServer(agent, async (server) => {
    const { task } = await (await Client.connect(server.url)).send('x');
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    assert.deepEqual(task.artifacts[0].parts, [{ text: 'raw' }]);
  });
});

test('executor misuse is a typed rejection in the executor, not a crash', async () => {
  const seen = [];
  let leaked;
  const agent = {
    async execute(_context, events) {
      leaked = events;
      for (const attempt of [() => events.status('no-such-state'), () => events.artifact([]), () => events.send({ nothing: 1 })]) {
        seen.push(await attempt().then(() => null, (e) => e));
      }
      await events.complete();
    },
  };
  await withServer(agent, async (server) => {
    const client = await Client.connect(server.url);
    assert.equal((await client.send('x')).task.status.state, 'TASK_STATE_COMPLETED');
    // The sink closes once execute's promise has settled on the Rust side (shortly after the
    // reply, which the COMPLETED status already released): from then on a late send is refused,
    // typed.
    let late = null;
    for (let i = 0; i < 100 && late === null; i++) {
      late = await leaked.working().then(() => null, (e) => e);
      if (late === null) await new Promise((r) => setTimeout(r, 20));
    }
    seen.push(late);
  });
  assert.equal(seen.length, 4);
  for (const e of seen.slice(0, 3)) assert.ok(e instanceof InvalidParamsError, String(e));
  assert.ok(seen[3] instanceof A2AError, String(seen[3]));
});

test('the generated error classes match the core table', () => {
  const table = errorTable();
  assert.ok(table.length > 10);
  for (const row of table) {
    const kind = ERRORS[row.name];
    assert.ok(kind?.prototype instanceof A2AError, row.name);
    assert.deepEqual([kind.code, kind.reason, kind.httpStatus, kind.grpcStatus], [row.code, row.reason, row.httpStatus, row.grpcStatus]);
    const e = new kind();
    assert.deepEqual([e.name, e.code, e.message], [row.name, row.code, row.defaultMessage]);
  }
  assert.deepEqual(normalize('Message', userMessage('hi')).parts, [{ text: 'hi' }]);
});

test('credentials: bearer tokens required; push config CRUD', () =>
  withServer(
    new Echo(),
    async (server) => {
      const anonymous = await Client.connect(server.url); // the card is public
      await assert.rejects(anonymous.send('hi'), UnauthenticatedError);
      const client = await Client.connect(server.url, { bearerToken: 's3cret', headers: { 'x-trace': '1' } });
      const { task } = await client.send('hi');
      // `.invalid` never resolves: nothing is delivered anywhere.
      const created = await client.createPushConfig({ taskId: task.id, url: 'https://push.invalid/hook', token: 't' });
      assert.ok(created.id);
      assert.equal((await client.getPushConfig(task.id, created.id)).token, 't');
      assert.deepEqual((await client.listPushConfigs(task.id)).configs.map((c) => c.id), [created.id]);
      await client.deletePushConfig(task.id, created.id);
      assert.deepEqual((await client.listPushConfigs(task.id)).configs ?? [], []);
      // Page by page.
      for (const id of ['c0', 'c1', 'c2']) await client.createPushConfig({ taskId: task.id, id, url: 'https://push.invalid/hook' });
      const first = await client.listPushConfigs(task.id, { pageSize: 2 });
      assert.equal(first.configs.length, 2);
      assert.ok(first.nextPageToken);
      const rest = await client.listPushConfigs(task.id, { pageSize: 2, pageToken: first.nextPageToken });
      assert.deepEqual([...first.configs, ...rest.configs].map((c) => c.id).sort(), ['c0', 'c1', 'c2']);
      assert.ok(!rest.nextPageToken);
    },
    { bearerTokens: ['s3cret'] },
  ));

test('tasks belong to the principal that made them, and the executor knows who called', () =>
  withServer(
    {
      async execute(context, events) {
        await events.complete(context.principal ? context.principal.name : 'anonymous');
      },
    },
    async (server) => {
      const ada = await Client.connect(server.url, { bearerToken: 'tok-ada' });
      const bob = await Client.connect(server.url, { bearerToken: 'tok-bob' });
      const { task } = await ada.send('hi');
      assert.deepEqual(task.status.message.parts, [{ text: 'ada' }]);
      await assert.rejects(bob.getTask(task.id), (e) => e.name === 'TaskNotFoundError');
      assert.deepEqual((await bob.listTasks()).tasks ?? [], []);
      assert.deepEqual((await ada.listTasks()).tasks.map((t) => t.id), [task.id]);
    },
    { bearerTokens: { 'tok-ada': 'ada', 'tok-bob': 'bob' } },
  ));

test('a flood of events (far more than the sink holds) arrives whole and in order', () => {
  const flood = {
    async execute(_context, events) {
      await events.working();
      // Not awaited one by one: the sink fills and the later promises wait for room.
      const sends = [];
      for (let i = 0; i < 500; i++) {
        sends.push(events.artifact(String(i), { artifactId: 'flood', append: i > 0, lastChunk: i === 499 }));
      }
      await Promise.all(sends);
      await events.complete();
    },
  };
  return withServer(flood, async (server) => {
    const client = await Client.connect(server.url);
    const events = await within(20_000, collect(client.stream('go')), 'flood');
    const chunks = events.filter((e) => e.artifactUpdate).map((e) => e.artifactUpdate.artifact.parts[0].text);
    assert.deepEqual(chunks, Array.from({ length: 500 }, (_, i) => String(i)));
    assert.equal(events.at(-1).statusUpdate.status.state, 'TASK_STATE_COMPLETED');
  });
});

test('200 concurrent streams all end COMPLETED', () =>
  withServer(new Echo(), async (server) => {
    const client = await Client.connect(server.url);
    const one = async (i) => (await collect(client.stream(`n${i}`))).at(-1).statusUpdate.status.state;
    const states = await within(60_000, Promise.all(Array.from({ length: 200 }, (_, i) => one(i))), '200 streams');
    assert.deepEqual(states, Array(200).fill('TASK_STATE_COMPLETED'));
  }));

test('agent calls agent in one process (our client inside an executor)', async () => {
  const inner = new AgentServer(CARD, new Echo());
  await inner.listen(0);
  const caller = {
    async execute(context, events) {
      const client = await Client.connect(inner.url);
      const { task } = await client.send(`relay: ${context.text}`);
      await events.artifact(`the other agent said '${task.artifacts[0].parts[0].text}'`, { lastChunk: true });
      await events.complete();
    },
  };
  try {
    await withServer(caller, async (outer) => {
      const client = await Client.connect(outer.url);
      const replies = await Promise.all(Array.from({ length: 5 }, (_, i) => client.send(`q${i}`)));
      replies.forEach(({ task }, i) => {
        assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
        assert.equal(task.artifacts[0].parts[0].text, `the other agent said 'relay: q${i}'`);
      });
    });
  } finally {
    await inner.close();
  }
});

test('leaving a for-await loop early closes the stream; the task goes on', () =>
  withServer(new Echo(), async (server) => {
    const client = await Client.connect(server.url);
    let taskId;
    for await (const ev of client.stream('chunks')) {
      taskId = ev.task.id;
      break;
    }
    const deadline = Date.now() + 5000;
    let task;
    do task = await client.getTask(taskId);
    while (task.status.state !== 'TASK_STATE_COMPLETED' && Date.now() < deadline);
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
  }));

test('a signal first read after the cancel is already aborted', async () => {
  let release;
  const released = new Promise((r) => (release = r));
  let seen;
  const done = new Promise((resolve) => {
    seen = resolve;
  });
  const agent = {
    async execute(context, events) {
      await events.working();
      await released; // the task is canceled meanwhile; the signal was never read
      seen([context.signal.aborted, context.signal.reason?.name]);
    },
  };
  await withServer(agent, async (server) => {
    const client = await Client.connect(server.url);
    const { task } = await client.send('x', { configuration: { returnImmediately: true } });
    assert.equal((await client.cancel(task.id)).status.state, 'TASK_STATE_CANCELED');
    await new Promise((r) => setTimeout(r, 50)); // the abort call reaches JavaScript
    release();
    assert.deepEqual(await within(5000, done, 'the executor'), [true, 'AbortError']);
  });
});

test('the native seam survives a dispatch function that throws or returns a value', async () => {
  // Below the JS layer (which never throws and returns nothing): a synchronous throw fails the
  // task, and so does a return value other than undefined, instead of a fatal exception.
  const { native } = await import('../lib/native.js');
  for (const [dispatch, expected] of [
    [() => { throw new Error('thrown at the seam'); }, /thrown at the seam/],
    [() => 42, /JavaScript executor failed/],
  ]) {
    const server = new native.AgentServer(JSON.stringify(CARD), '{}');
    const port = await server.listen('127.0.0.1', 0, dispatch);
    try {
      const client = await Client.connect(`http://127.0.0.1:${port}`);
      const { task } = await client.send('x');
      assert.equal(task.status.state, 'TASK_STATE_FAILED');
      assert.match(task.status.message.parts[0].text, expected);
    } finally {
      await server.close();
    }
  }
});

test('next() called several times at once on a new stream sends its message once', async () => {
  let executions = 0;
  const agent = { async execute(ctx, events) { executions++; await events.complete('done'); } };
  await withServer(agent, async (server) => {
    const client = await Client.connect(server.url);
    const stream = client.stream('hello once');
    const firsts = await Promise.all([stream.next(), stream.next(), stream.next()]);
    const ids = new Set(firsts.filter((r) => !r.done).map((r) => r.value.task?.id ?? r.value.statusUpdate?.taskId));
    assert.equal(ids.size, 1, JSON.stringify(firsts));
    await stream.close();
    assert.equal(executions, 1);
    assert.equal((await client.listTasks()).tasks.length, 1);
  });
});

test('next() calls made before the earlier ones settle are answered in call order', async () => {
  const agent = {
    async execute(ctx, events) {
      await events.working();
      for (let i = 0; i < 3; i++) await events.artifact(`e${i}`, { artifactId: `a${i}` });
      await events.complete('done');
    },
  };
  await withServer(agent, async (server) => {
    for (const binding of ['JSONRPC', 'HTTP+JSON']) {
      const client = await Client.connect(server.url, { binding });
      const stream = client.stream('in order');
      const reads = await Promise.all(Array.from({ length: 8 }, () => stream.next()));
      const kinds = reads.map((r) => (r.done ? 'done' : kind(r.value)));
      // Every event before the first `done`, and nothing after it.
      const firstDone = kinds.indexOf('done');
      assert.ok(firstDone > 0 && kinds.slice(firstDone).every((k) => k === 'done'), `${binding}: ${kinds}`);
      const artifacts = reads.filter((r) => !r.done && r.value.artifactUpdate).map((r) => r.value.artifactUpdate.artifact.artifactId);
      assert.deepEqual(artifacts, ['a0', 'a1', 'a2'], `${binding}: ${kinds}`);
      assert.equal(reads[firstDone - 1].value.statusUpdate?.status.state, 'TASK_STATE_COMPLETED', `${binding}: ${kinds}`);
    }
  });
});

test('bad options of send and stream reject (on the first next() for a stream) instead of throwing', () =>
  withServer(new Echo(), async (server) => {
    const client = await Client.connect(server.url);
    const sent = client.send('x', { noSuchOption: true });
    assert.ok(sent instanceof Promise);
    await assert.rejects(sent, TypeError);
    const stream = client.stream('x', { noSuchOption: 1 });
    await assert.rejects(stream.next(), TypeError);
  }));

test('listen() takes an integer port from 0 to 65535 only', async () => {
  const server = new AgentServer(CARD, new Echo());
  await assert.rejects(server.listen(8080.5), TypeError);
  await assert.rejects(server.listen(NaN), TypeError);
  await assert.rejects(server.listen('80'), TypeError);
  await assert.rejects(server.listen(-1), RangeError);
  await assert.rejects(server.listen(65536), RangeError);
  assert.equal(server.port, null);
});

test('NaN, Infinity and lone surrogates are InvalidParamsError naming where they are, not silently null', async () => {
  const message = { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] };
  for (const bad of [NaN, Infinity, -Infinity]) {
    assert.throws(() => normalize('Message', { ...message, metadata: { scores: [1, { score: bad }] } }),
      (e) => e instanceof InvalidParamsError && e.violations[0].field === 'value.metadata.scores.1.score', String(bad));
  }
  // null itself is JSON.
  assert.deepEqual(normalize('Message', { ...message, metadata: { n: null } }).metadata, { n: null });
  assert.throws(() => normalize('Message', { ...message, parts: [{ text: '😀'.slice(1) }] }),
    (e) => e instanceof InvalidParamsError && e.message.includes('surrogate'));
  await assert.rejects(Client.connect('http://127.0.0.1:9/', { timeout: NaN }), InvalidParamsError);
});

test('an AbortSignal ends a call, a stream being opened or read, and is checked before sending', () => {
  const echo = new Echo();
  return withServer(echo, async (server) => {
    const client = await Client.connect(server.url);
    // A blocking send of a task that never ends: the abort ends the call now, with its reason;
    // the request is dropped, and the task goes on (it is there to cancel).
    const controller = new AbortController();
    const sent = client.send('slow', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('the user gave up')), 200);
    await assert.rejects(within(5_000, sent, 'aborted send'), { message: 'the user gave up' });
    const { tasks } = await client.listTasks({}, { signal: new AbortController().signal });
    assert.equal(tasks.length, 1);
    assert.equal(tasks[0].status.state, 'TASK_STATE_WORKING');

    // Already aborted: nothing is sent (no second task), the default reason is an AbortError.
    const fired = AbortSignal.abort();
    await assert.rejects(client.send('hello', { signal: fired }), { name: 'AbortError' });
    await assert.rejects(client.getTask(tasks[0].id, { signal: fired }), { name: 'AbortError' });
    await assert.rejects(client.send('hello', { signal: 'soon' }), TypeError);
    assert.equal((await client.listTasks()).tasks.length, 1);

    // A stream being read: the pending read rejects with the reason, then the stream is done.
    const reading = new AbortController();
    const stream = client.subscribe(tasks[0].id, { signal: reading.signal });
    const first = await within(5_000, stream.next(), 'subscribe');
    assert.equal(first.value.task.id, tasks[0].id);
    const pending = stream.next();
    reading.abort();
    await assert.rejects(within(5_000, pending, 'aborted read'), { name: 'AbortError' });
    assert.deepEqual(await stream.next(), { done: true, value: undefined });

    // A signal left unfired changes nothing.
    const kept = new AbortController();
    const { task } = await client.send('hi', { signal: kept.signal });
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    const events = await collect(client.stream('hi', { signal: kept.signal }));
    assert.equal(events.at(-1).statusUpdate?.status.state ?? events.at(-1).task?.status.state, 'TASK_STATE_COMPLETED');
    await client.cancel(tasks[0].id);
  });
});
