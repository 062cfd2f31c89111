// tests/vectors/scenario through the Node binding: a scripted JavaScript executor hosted by our
// server, driven by our JavaScript client (send and stream); the reply and the event sequence
// must be the ones the vector gives, as in core and every binding.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import test from 'node:test';
import { AgentServer, Client } from '../index.js';
import { CARD } from './helpers.mjs';

const { cases } = JSON.parse(readFileSync(new URL('../../tests/vectors/scenario/basic.json', import.meta.url), 'utf8'));

/** Plays the steps of the case the message names (its text is the case's name). */
const scripted = {
  async execute(context, events) {
    const { steps } = cases.find((c) => c.name === context.text);
    for (const step of steps) {
      if ('status' in step) await events.status(step.status, step.text);
      else if ('artifact' in step) await events.artifact(step.artifact, { artifactId: step.id, append: step.append, lastChunk: step.lastChunk });
      else if ('message' in step) await events.message(step.message);
      else if ('sleepMs' in step) await new Promise((r) => setTimeout(r, step.sleepMs));
      else if ('raise' in step) throw new Error(step.raise);
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

function reply(r) {
  if (!r.task) return { message: texts(r.message.parts) };
  const t = r.task;
  return { task: short(t.status.state), artifacts: (t.artifacts ?? []).map((a) => texts(a.parts)), statusText: texts(t.status.message?.parts) };
}

test('scenario vectors through our server and client', async () => {
  const server = new AgentServer(CARD, scripted);
  await server.listen(0);
  try {
    const client = await Client.connect(server.url);
    for (const c of cases) {
      const got = reply(await client.send(c.name));
      for (const [key, want] of Object.entries(c.send)) assert.deepEqual(got[key], want, `${c.name}: send ${key}`);
      const events = [];
      for await (const e of client.stream(c.name)) events.push(event(e));
      assert.deepEqual(events, c.stream, `${c.name}: stream`);
    }
  } finally {
    await server.close();
  }
});
