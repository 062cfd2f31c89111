// Shared pieces of the node:test suites: a card, the Echo agent, a server per test, a child
// process.
import { spawn } from 'node:child_process';
import { AgentServer } from '../index.js';

export const CARD = {
  name: 'node-test-agent',
  description: 'a JavaScript executor on the a2a-native server',
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 's', name: 's', description: 'd', tags: ['t'] }],
};

/** Echo; "ask" asks for more input (the answer completes); "boom" throws synchronously;
 * "reject" rejects later; "slow" waits to be canceled; "chunks" streams an artifact in
 * pieces; "reply" answers with a message. `aborted` resolves when a slow run sees its signal. */
export class Echo {
  constructor() {
    this.aborted = new Promise((resolve) => (this.sawAbort = resolve));
    this.cancels = 0;
  }

  execute(context, events) {
    const text = context.text;
    if (text === 'boom') throw new Error('the agent blew up'); // synchronous, not a rejection
    return this.run(context, events, text);
  }

  async run(context, events, text) {
    if (text === 'reply') return events.message('a direct reply');
    if (text === 'reject') {
      await new Promise((r) => setTimeout(r, 5));
      throw new TypeError('rejected later');
    }
    if (text === 'ask') return events.inputRequired('what is your name?');
    if (context.task && text) return events.complete(`hello ${text}`);
    await events.working();
    if (text === 'slow') {
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, 30_000);
        context.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          this.sawAbort(context.signal.reason);
          resolve();
        });
      });
      return;
    }
    if (text === 'chunks') {
      await events.artifact('a', { artifactId: 'art', name: 'c' });
      await events.artifact('b', { artifactId: 'art', append: true, lastChunk: true });
    } else {
      await events.artifact(context.message.parts, { name: 'echo', lastChunk: true });
    }
    await events.complete();
  }

  async cancel() {
    this.cancels += 1;
  }
}

/** Runs `fn(server)` with a listening server, closing it afterwards. */
export async function withServer(executor, fn, options) {
  const server = new AgentServer(CARD, executor, options);
  await server.listen(0);
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

export async function collect(iterable) {
  const out = [];
  for await (const ev of iterable) out.push(ev);
  return out;
}

export const kind = (event) => Object.keys(event).find((k) => ['task', 'message', 'statusUpdate', 'artifactUpdate'].includes(k));

export function within(ms, promise, what = 'operation') {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Runs `source` (an ES module) in a child Node process: `{ code, stdout, stderr, out }`, `out`
 *  being both streams as they came. Rejects if it has not exited within `ms`. */
export function runChild(source, ms = 15_000) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], { stdio: ['ignore', 'pipe', 'pipe'] });
    let [stdout, stderr, out] = ['', '', ''];
    child.stdout.on('data', (d) => ((stdout += d), (out += d)));
    child.stderr.on('data', (d) => ((stderr += d), (out += d)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the child did not exit within ${ms} ms; output: ${out}`));
    }, ms);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, out });
    });
  });
}
