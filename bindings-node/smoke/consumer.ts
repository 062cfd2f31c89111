// A TypeScript consumer of the installed package, compiled (strict, NodeNext) by
// __test__/dist.test.mjs: the declarations resolve from node_modules and type an agent and a client.
import { AgentServer, Client, TaskNotFoundError, type AgentExecutor, type RequestContext, type EventQueue } from 'a2a-native';
import type { Task, StreamResponse } from 'a2a-native/models';

const echo: AgentExecutor = {
  async execute(context: RequestContext, events: EventQueue): Promise<void> {
    await events.artifact(context.text, { name: 'echo', lastChunk: true });
    await events.complete();
  },
};

export async function run(card: ConstructorParameters<typeof AgentServer>[0]): Promise<string> {
  const server = new AgentServer(card, echo, { maxTasks: 100 });
  await server.listen(0);
  if (server.url === null) throw new Error('listening, yet no url');
  const client = await Client.connect(server.url);
  const reply = await client.send('hello');
  const task: Task | undefined = reply.task;
  const seen: StreamResponse[] = [];
  for await (const event of client.stream('again')) seen.push(event);
  try {
    await client.getTask('missing');
  } catch (e) {
    if (e instanceof TaskNotFoundError) console.log(e.code, e.reason);
  }
  await server.close();
  return `${task?.status.state} ${seen.length}`;
}
