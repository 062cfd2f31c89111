// The core's log events reach standard error (a line each) at the level setLogLevel gives,
// warnings and errors by default; checked in child processes, whose stderr is the native one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { InvalidParamsError, setLogLevel } from '../index.js';
import { runChild } from './helpers.mjs';

const INDEX = fileURLToPath(new URL('../index.js', import.meta.url));
const HELPERS = fileURLToPath(new URL('./helpers.mjs', import.meta.url));

/** A child whose executor's cancel hook throws (the core warns of it), at `level` if given. */
const failingCancel = (level) => `
  import { AgentServer, Client, setLogLevel } from ${JSON.stringify(INDEX)};
  import { CARD } from ${JSON.stringify(HELPERS)};
  ${level ? `setLogLevel(${JSON.stringify(level)});` : ''}
  let started;
  const running = new Promise((resolve) => (started = resolve));
  const server = new AgentServer(CARD, {
    async execute(context, events) {
      await events.working();
      started(context.taskId);
      await new Promise((resolve) => context.signal.addEventListener('abort', resolve));
    },
    async cancel() { throw new Error('cancel hook boom'); },
  });
  await server.listen(0);
  const client = await Client.connect(server.url);
  await client.send('work', { configuration: { returnImmediately: true } });
  const canceled = await client.cancel(await running);
  await server.close();
  console.log('ended', canceled.status.state);
`;

test('warnings reach standard error by default, as a line naming the logger', async () => {
  const { code, stdout, stderr, out } = await runChild(failingCancel());
  assert.equal(code, 0, out);
  assert.match(stdout, /ended TASK_STATE_CANCELED/);
  assert.match(stderr, /^WARN a2a_native\.task\.manager: executor cancel failed; canceling anyway .*cancel hook boom/m);
  assert.doesNotMatch(stderr, /^INFO /m, 'nothing below the default level');
});

test("setLogLevel('off') silences them and 'info' adds the server's own", async () => {
  const quiet = await runChild(failingCancel('off'));
  assert.equal(quiet.code, 0, quiet.out);
  assert.doesNotMatch(quiet.stderr, /cancel hook boom/);
  const chatty = await runChild(failingCancel('INFO'));
  assert.equal(chatty.code, 0, chatty.out);
  assert.match(chatty.stderr, /^INFO a2a_native\.server: A2A server listening/m);
  assert.match(chatty.stderr, /cancel hook boom/);
});

test('an unknown level is InvalidParamsError', () => {
  assert.throws(() => setLogLevel('verbose'), (e) => e instanceof InvalidParamsError && /verbose/.test(e.message));
});
