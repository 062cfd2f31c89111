// The installed packages, used as the README says, from an ES module: an agent on AgentServer,
// driven by Client (send, stream, a typed error). Run by __test__/dist.test.mjs in a fresh project
// that has only the two tarballs installed; prints `smoke ok (esm): <native package path>`.
import { createRequire } from 'node:module';
import { AgentServer, Client, TaskNotFoundError } from 'a2a-native';

const echo = {
  async execute(context, events) {
    await events.artifact(context.text, { name: 'echo', lastChunk: true });
    await events.complete();
  },
};
const card = {
  name: 'smoke', description: 'echoes', version: '1.0.0', capabilities: { streaming: true },
  defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'echoes', tags: ['echo'] }],
};

const server = new AgentServer(card, echo);
await server.listen(0);
try {
  const client = await Client.connect(server.url);
  const { task } = await client.send('hello');
  if (task.status.state !== 'TASK_STATE_COMPLETED' || task.artifacts[0].parts[0].text !== 'hello') {
    throw new Error(`unexpected task: ${JSON.stringify(task)}`);
  }
  const events = [];
  for await (const event of client.stream('streamed')) events.push(event);
  if (!events[0].task || events.at(-1).statusUpdate?.status.state !== 'TASK_STATE_COMPLETED') {
    throw new Error(`unexpected stream: ${JSON.stringify(events)}`);
  }
  await client.getTask('no-such-task').then(
    () => { throw new Error('getTask of an unknown id succeeded'); },
    (e) => { if (!(e instanceof TaskNotFoundError)) throw e; },
  );
} finally {
  await server.close();
}
console.log(`smoke ok (esm): ${createRequire(import.meta.url).resolve('a2a-native-linux-x64-gnu')}`);
