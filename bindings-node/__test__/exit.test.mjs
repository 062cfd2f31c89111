// The process exits on its own after close(): nothing native keeps Node's event loop alive
// (no threadsafe function, stream or timer left behind), and nothing waits for a GC.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { runChild } from './helpers.mjs';

const INDEX = fileURLToPath(new URL('../index.js', import.meta.url));
const HELPERS = fileURLToPath(new URL('./helpers.mjs', import.meta.url));

test('a process that served a send and a stream exits on its own after close()', async () => {
  const started = Date.now();
  const { code, out } = await runChild(`
    import { AgentServer, Client } from ${JSON.stringify(INDEX)};
    import { CARD, Echo } from ${JSON.stringify(HELPERS)};
    const server = new AgentServer(CARD, new Echo());
    await server.listen(0);
    const client = await Client.connect(server.url);
    const { task } = await client.send('once');
    for await (const ev of client.stream('twice')) {}
    await server.close();
    console.log('served', task.status.state);
  `);
  assert.equal(code, 0, out);
  assert.match(out, /served TASK_STATE_COMPLETED/);
  assert.ok(Date.now() - started < 8000);
});

test('close() also ends an executor that never returns, and the process exits', async () => {
  const { code, out } = await runChild(`
    import { AgentServer, Client } from ${JSON.stringify(INDEX)};
    import { CARD } from ${JSON.stringify(HELPERS)};
    let aborted = false;
    const server = new AgentServer(CARD, {
      async execute(context, events) {
        await events.working();
        await new Promise(() => context.signal.addEventListener('abort', () => { aborted = true; }));
      },
    });
    await server.listen(0);
    const client = await Client.connect(server.url);
    const { task } = await client.send('hang', { configuration: { returnImmediately: true } });
    await server.close();
    console.log('closed', task.status.state, 'aborted', aborted);
  `);
  assert.equal(code, 0, out);
  assert.match(out, /closed TASK_STATE_WORKING aborted true/);
});

test('an unawaited event refused after a cancel does not end the process', async () => {
  const { code, out } = await runChild(`
    import { AgentServer, Client } from ${JSON.stringify(INDEX)};
    import { CARD } from ${JSON.stringify(HELPERS)};
    let refusedWhenAwaited = '';
    const server = new AgentServer(CARD, {
      async execute(context, events) {
        if (context.text === 'still serving') return events.complete('yes');
        await events.working();
        // Progress from a timer, not awaited (as bus.publish is used with @a2a-js/sdk).
        const timer = setInterval(() => events.artifact('progress'), 20);
        await new Promise((resolve) => context.signal.addEventListener('abort', resolve));
        await new Promise((resolve) => setTimeout(resolve, 100));
        clearInterval(timer);
        // Awaited, a late event still rejects.
        try { await events.artifact('late'); } catch (e) { refusedWhenAwaited = e.name; }
      },
    });
    await server.listen(0);
    const client = await Client.connect(server.url);
    const { task } = await client.send('tick', { configuration: { returnImmediately: true } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await client.cancel(task.id);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = await client.send('still serving');
    await server.close();
    console.log('survived', after.task.status.state, refusedWhenAwaited);
  `);
  assert.equal(code, 0, out);
  assert.match(out, /survived TASK_STATE_\w+ UnsupportedOperationError/);
});

test('a listening server dropped by user code is not garbage collected', async () => {
  const { code, out } = await runChild(`
    import v8 from 'node:v8';
    import vm from 'node:vm';
    import { AgentServer, Client } from ${JSON.stringify(INDEX)};
    import { CARD, Echo } from ${JSON.stringify(HELPERS)};
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc');
    const url = await (async () => {
      const server = new AgentServer(CARD, new Echo()); // no reference kept
      await server.listen(0);
      return server.url;
    })();
    const client = await Client.connect(url);
    for (let i = 0; i < 20; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 10));
      await Promise.all(Array.from({ length: 10 }, () => client.send('still here')));
    }
    console.log('served after gc');
    process.exit(0);
  `);
  assert.equal(code, 0, out);
  assert.match(out, /served after gc/);
});

test('a client with a credentials function, still referenced, does not keep the process alive', async () => {
  const { code, out } = await runChild(`
    import { AgentServer, Client } from ${JSON.stringify(INDEX)};
    import { CARD, Echo } from ${JSON.stringify(HELPERS)};
    const server = new AgentServer(CARD, new Echo(), { bearerTokens: { t: 'ada' } });
    await server.listen(0);
    globalThis.client = await Client.connect(server.url, { credentials: async () => ({ authorization: 'Bearer t' }) });
    const { task } = await globalThis.client.send('once');
    await server.close();
    console.log('served', task.status.state);
  `);
  assert.equal(code, 0, out);
  assert.match(out, /served TASK_STATE_COMPLETED/);
});
