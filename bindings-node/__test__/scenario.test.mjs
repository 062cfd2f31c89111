// tests/vectors/scenario through the Node binding: a scripted JavaScript executor hosted by our
// server, driven by our JavaScript client (send and stream); the reply and the event sequence
// must be the ones the vector gives, turn after turn on the same task where a case continues
// (`next`), as in core and every binding.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import test from 'node:test';
import { AgentServer, Client } from '../index.js';
import { CARD } from './helpers.mjs';

const { cases } = JSON.parse(readFileSync(new URL('../../tests/vectors/scenario/basic.json', import.meta.url), 'utf8'));

/** A case and the turns that continue it. */
function turns(c) {
  const chain = [c];
  while (chain.at(-1).next) chain.push(chain.at(-1).next);
  return chain;
}

const steps = new Map(cases.flatMap(turns).map((t) => [t.name, t.steps]));

/** The history of the task the message continues, as the vectors write it. */
const history = (context) =>
  (context.task?.history ?? []).map((m) => `${m.role.replace(/^ROLE_/, '').toLowerCase()}:${texts(m.parts)}`).join('|');

/** Plays the steps of the turn the message names (its text is the turn's name). */
const scripted = {
  async execute(context, events) {
    for (const step of steps.get(context.text)) {
      if ('status' in step) await events.status(step.status, step.text);
      else if ('history' in step) await events.artifact(history(context));
      else if ('artifact' in step) await events.artifact(step.artifact, { artifactId: step.id, append: step.append, lastChunk: step.lastChunk });
      else if ('message' in step) await events.message(step.message);
      else if ('sleepMs' in step) await new Promise((r) => setTimeout(r, step.sleepMs));
      else if ('raise' in step) throw new Error(step.raise);
      else if ('waitForCancel' in step) {
        // An already aborted signal fires no more 'abort' events.
        if (!context.signal.aborted) await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
      }
      else throw new Error(`unknown step ${JSON.stringify(step)}`);
    }
  },
};

const short = (state) => state.replace(/^TASK_STATE_/, '').toLowerCase();
const texts = (parts) => (parts ?? []).filter((p) => 'text' in p).map((p) => p.text).join('');

function event(e) {
  if (e.task) return { task: short(e.task.status.state) };
  if (e.statusUpdate) return { status: short(e.statusUpdate.status.state) };
  if (e.artifactUpdate) return { artifact: texts(e.artifactUpdate.artifact.parts) };
  return { message: texts(e.message.parts) };
}

/** The task and context ids of an event or reply. */
function ids(e) {
  if (e.task) return [e.task.id, e.task.contextId];
  const update = e.statusUpdate ?? e.artifactUpdate;
  return update ? [update.taskId, update.contextId] : ['', ''];
}

function reply(r) {
  if (!r.task) return { message: texts(r.message.parts) };
  const t = r.task;
  return { task: short(t.status.state), artifacts: (t.artifacts ?? []).map((a) => texts(a.parts)), statusText: texts(t.status.message?.parts) };
}

// A case that waits (a broken returnImmediately or cancel) fails here, not after minutes.
test('scenario vectors through our server and client', { timeout: 120_000 }, async () => {
  const server = new AgentServer(CARD, scripted);
  await server.listen(0);
  try {
    const client = await Client.connect(server.url);
    for (const c of cases) {
      // Each turn continues the task the one before it started (send, then stream).
      let task = ['', ''];
      for (const turn of turns(c)) {
        const where = `${c.name} / ${turn.name}`;
        const configuration = 'cancelAfter' in c ? { returnImmediately: true } : undefined;
        let answer = await client.send(turn.name, { taskId: task[0], contextId: task[1], configuration });
        if ('cancelAfter' in c) {
          // Answered at once: a task that is still running.
          assert.ok(['submitted', 'working'].includes(reply(answer).task), `${where}: the returnImmediately reply is ${JSON.stringify(reply(answer))}`);
          answer = { task: await client.cancel(ids(answer)[0]) };
        }
        if (task[0]) assert.deepEqual(ids(answer), task, `${where}: send answered for another task`);
        task = ids(answer);
        const got = reply(answer);
        for (const [key, want] of Object.entries(turn.send)) assert.deepEqual(got[key], want, `${where}: send ${key}`);
      }
      task = ['', ''];
      for (const turn of turns(c)) {
        const where = `${c.name} / ${turn.name}`;
        const raw = [];
        for await (const e of client.stream(turn.name, { taskId: task[0], contextId: task[1] })) {
          raw.push(e);
          if (raw.length === c.cancelAfter) await client.cancel(ids(raw[0])[0]);
        }
        if (task[0]) assert.deepEqual(ids(raw[0]), task, `${where}: stream of another task`);
        if (raw.length) task = ids(raw[0]);
        assert.deepEqual(raw.map(event), turn.stream, `${where}: stream`);
      }
    }
  } finally {
    await server.close();
  }
});
