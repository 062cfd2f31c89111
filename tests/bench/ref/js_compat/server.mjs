// Benchmark server: the @a2a-js/sdk reference agent (../js/server.mjs), its executor and card
// unchanged, hosted by a2a-native through the Node binding (AgentServer takes an @a2a-js/sdk
// executor as it is; see bindings-node/lib/compat.js). Set beside `js` (the same executor on
// the SDK's own server) for issue 19's comparison. A2A_NATIVE_MODULE may name the .node file.
//
//   node server.mjs PORT
import { AgentServer } from '../../../../bindings-node/index.js';
import { agentCardAt, echoExecutor } from '../js/server.mjs';

const port = Number(process.argv[2] ?? process.env.PORT ?? 9004);
const host = process.env.HOST ?? '127.0.0.1';
const server = new AgentServer(agentCardAt(`http://${host}:${port}`), echoExecutor);
await server.listen(port, host);
console.log(`echo (@a2a-js/sdk executor on a2a-native) listening on ${server.url}`);
