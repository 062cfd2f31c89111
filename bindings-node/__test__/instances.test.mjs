// Two servers on one PostgreSQL database act as one agent: a subscriber on B follows a task
// that runs on A, and a cancel on B aborts A's executor and ends every stream CANCELED.
// tests/pg.sh provides the database under tests/run-all.sh (A2A_TEST_POSTGRES_URL);
// A2A_REQUIRE_POSTGRES=1 makes its absence a failure.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Client } from '../index.js';
import { collect, kind, within, withServer } from './helpers.mjs';

const url = process.env.A2A_TEST_POSTGRES_URL;
const skip = !url && process.env.A2A_REQUIRE_POSTGRES !== '1' && 'no PostgreSQL (set A2A_TEST_POSTGRES_URL)';

function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** "hold": working, then waits until its signal aborts (recorded in `sawAbort`); "steps":
 * working, waits for `go` (bounded), two artifact chunks with short sleeps, completed.
 * `ran` lists the texts `execute` was called with. */
class HoldOrSteps {
  constructor() {
    this.ran = [];
    this.cancelHooks = 0;
    this.holding = deferred();
    this.sawAbort = deferred();
    this.go = deferred();
  }

  async execute(context, events) {
    const text = context.text;
    this.ran.push(text);
    await events.working();
    if (text === 'hold') {
      this.holding.resolve();
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, 30_000);
        const aborted = () => {
          clearTimeout(timer);
          this.sawAbort.resolve(context.signal.reason);
          resolve();
        };
        if (context.signal.aborted) aborted();
        else context.signal.addEventListener('abort', aborted, { once: true });
      });
      return;
    }
    await Promise.race([this.go.promise, sleep(10_000)]);
    await sleep(50);
    await events.artifact('a', { artifactId: 'steps', name: 'steps' });
    await sleep(50);
    await events.artifact('b', { artifactId: 'steps', append: true, lastChunk: true });
    await events.complete();
  }

  async cancel() {
    this.cancelHooks += 1;
  }
}

const state = (event) => (event.task ?? event.statusUpdate)?.status.state;

test('two servers on PostgreSQL: subscribe on B to a task on A; cancel on B aborts A', { skip, timeout: 60_000 }, () => {
  assert.ok(url, 'A2A_REQUIRE_POSTGRES=1 but A2A_TEST_POSTGRES_URL is not set');
  const onA = new HoldOrSteps();
  const onB = new HoldOrSteps();
  return withServer(onA, (a) =>
    withServer(onB, async (b) => {
      const clientA = await Client.connect(a.url);
      const clientB = await Client.connect(b.url);
      const now = { configuration: { returnImmediately: true } };

      // 1. A subscriber on B follows a task that runs on A to its end.
      const { task } = await clientA.send('steps', now);
      const subB = clientB.subscribe(task.id);
      assert.equal((await within(10_000, subB.next(), 'B subscribe')).value.task.id, task.id);
      onA.go.resolve();
      const rest = await within(15_000, collect(subB), "B's stream");
      assert.equal(state(rest.at(-1) ?? {}), 'TASK_STATE_COMPLETED', JSON.stringify(rest));
      const chunks = rest.filter((e) => kind(e) === 'artifactUpdate').map((e) => e.artifactUpdate.artifact.parts[0].text);
      assert.deepEqual(chunks, ['a', 'b'], JSON.stringify(rest));
      assert.equal((await clientB.getTask(task.id)).status.state, 'TASK_STATE_COMPLETED');

      // 2. A cancel on B aborts A's executor; the streams on A and on B end CANCELED.
      const { task: held } = await clientA.send('hold', now);
      await within(10_000, onA.holding.promise, "A's executor");
      const subs = [clientA.subscribe(held.id), clientB.subscribe(held.id)];
      for (const sub of subs) {
        assert.equal((await within(10_000, sub.next(), 'subscribe')).value.task.id, held.id);
      }
      const canceled = await clientB.cancel(held.id);
      assert.equal(canceled.status.state, 'TASK_STATE_CANCELED');
      for (const sub of subs) {
        const events = await within(15_000, collect(sub), 'a stream');
        assert.equal(state(events.at(-1) ?? {}), 'TASK_STATE_CANCELED', JSON.stringify(events));
      }
      const reason = await within(5000, onA.sawAbort.promise, "A's abort signal");
      assert.equal(reason.name, 'AbortError');
      assert.equal((await clientA.getTask(held.id)).status.state, 'TASK_STATE_CANCELED');
      assert.deepEqual(onA.ran, ['steps', 'hold']);
      assert.deepEqual(onB.ran, []);
    }, { store: url }), { store: url });
});
