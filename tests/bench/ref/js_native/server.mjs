// Benchmark server: the echo agent written in JavaScript on a2a-native (bindings-node), so the
// same async agent can be measured hosted by our Rust server (this file) and by the official
// @a2a-js/sdk on express (../js/server.mjs).
//
// Every message creates a Task with one artifact (name "echo") copying the message's parts, then
// COMPLETED. A2A 1.0 JSON-RPC on POST /, HTTP+JSON at the root, card at
// /.well-known/agent-card.json, memory store (bounded), one process. A2A_NATIVE_MODULE may name
// the .node file to load (run.sh points it at a release build).
//
//   node server.mjs PORT
import { AgentServer } from '../../../../bindings-node/index.js';

const card = {
  name: 'echo (a2a-native Node binding)',
  description: 'Echo agent for benchmarks: a JavaScript executor on the a2a-native server.',
  version: '1.0.0',
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'echo', description: 'Returns the message parts as an artifact.', tags: ['echo', 'benchmark'] }],
};

const echo = {
  async execute(context, events) {
    await events.artifact(context.message.parts, { name: 'echo', lastChunk: true });
    await events.complete();
  },
};

const port = Number(process.argv[2] ?? process.env.PORT ?? 9003);
const server = new AgentServer(card, echo);
await server.listen(port, process.env.HOST ?? '127.0.0.1');
console.log(`echo (a2a-native Node binding) listening on ${server.url}`);
