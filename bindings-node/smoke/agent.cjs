// The same smoke run from CommonJS: `require('a2a-native')` (Node 20.19+ and 22.12+ load the ES
// module package synchronously). Prints `smoke ok (cjs): <native package path>`.
const { AgentServer, Client, TaskNotFoundError } = require('a2a-native');

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

async function main() {
  const server = new AgentServer(card, echo);
  await server.listen(0);
  try {
    const client = await Client.connect(server.url);
    const { task } = await client.send('hello');
    if (task.status.state !== 'TASK_STATE_COMPLETED') throw new Error(`unexpected task: ${JSON.stringify(task)}`);
    const events = [];
    for await (const event of client.stream('streamed')) events.push(event);
    if (events.at(-1).statusUpdate?.status.state !== 'TASK_STATE_COMPLETED') {
      throw new Error(`unexpected stream: ${JSON.stringify(events)}`);
    }
    await client.getTask('no-such-task').then(
      () => { throw new Error('getTask of an unknown id succeeded'); },
      (e) => { if (!(e instanceof TaskNotFoundError)) throw e; },
    );
  } finally {
    await server.close();
  }
  console.log(`smoke ok (cjs): ${require.resolve('a2a-native-linux-x64-gnu')}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
