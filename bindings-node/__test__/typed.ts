// Type-checked (tsc --noEmit, strict) by test.sh, never run: the declarations describe an API
// a TypeScript user can write an agent and a client against. `@ts-expect-error` lines must fail.
import {
  A2AError,
  AgentServer,
  Client,
  TaskNotFoundError,
  normalize,
  userMessage,
  type AgentExecutor,
  type Message,
  type StreamResponse,
  type Task,
  type TaskState,
} from '../index.js';

const echo: AgentExecutor = {
  async execute(context, events) {
    const text: string = context.text;
    if (context.signal.aborted) return;
    const first: Message = context.userMessage;
    await events.working('on it');
    // The README's quick start: execute's context always has the message.
    await events.artifact(context.message.parts, { name: 'echo', lastChunk: true });
    await events.artifact(first.parts ?? text, { name: 'echo', lastChunk: true });
    await events.status('input-required', { parts: [{ text: 'more?' }] });
    // Events sent whole leave out the task's ids (the sink fills them in).
    await events.send({ artifactUpdate: { artifact: { artifactId: 'a', parts: [{ text }] }, lastChunk: true } });
    await events.send({ statusUpdate: { status: { state: 'TASK_STATE_WORKING' } } });
    // @ts-expect-error an artifact needs its parts
    await events.send({ artifactUpdate: { artifact: { artifactId: 'a' } } });
    await events.complete();
    // @ts-expect-error not a state
    await events.status('sleeping');
  },
  async cancel(context, events) {
    // @ts-expect-error cancel's context may have no message
    context.message.parts;
    await events.canceled();
  },
};

async function main(): Promise<void> {
  const server = new AgentServer(
    { name: 'a', description: 'b', version: '1', capabilities: { streaming: true }, defaultInputModes: [], defaultOutputModes: [], skills: [] },
    echo,
    { store: 'memory', bearerTokens: ['t'] },
  );
  const port: number = await server.listen(0, '127.0.0.1');
  const client = await Client.connect(server.url ?? `http://127.0.0.1:${port}`, { bearerToken: 't', binding: 'HTTP+JSON', timeout: 5000 });
  const reply = await client.send('hi', { configuration: { returnImmediately: true } });
  const state: TaskState | undefined = reply.task?.status.state;
  for await (const event of client.stream(userMessage('hello'))) {
    const e: StreamResponse = event;
    if (e.statusUpdate) console.log(e.statusUpdate.status.state);
  }
  try {
    const task: Task = await client.getTask('x', { historyLength: 1 });
    console.log(task.id, state);
  } catch (e) {
    if (e instanceof TaskNotFoundError) {
      const code: number = e.code;
      const name: 'TaskNotFoundError' = e.name;
      console.log(code, name, e.metadata.taskId, e.violations.map((v) => v.field));
    } else if (e instanceof A2AError) {
      console.log(e.reason, e.httpStatus);
    }
  }
  // ListTasks takes a state by either name, as the executor's status does.
  await client.listTasks({ status: 'input-required', pageSize: 5 });
  for await (const t of client.listAllTasks({ status: 'TASK_STATE_COMPLETED' })) console.log(t.id);
  // @ts-expect-error not a state
  await client.listTasks({ status: 'done' });
  console.log(normalize('Message', userMessage('x')));
  await Client.connect('http://x', { binding: 'GRPC' });
  // @ts-expect-error binding names are checked
  await Client.connect('http://x', { binding: 'SOAP' });
  await server.close();
}

void main;

// An unchanged @a2a-js/sdk executor and card type-check as they are.
import type { AgentExecutor as SdkAgentExecutor } from '@a2a-js/sdk/server';
import type { AgentCard as SdkAgentCard } from '@a2a-js/sdk';
import { fromSdkExecutor } from '../compat.js';

declare const sdkExecutor: SdkAgentExecutor;
declare const sdkCard: SdkAgentCard;
export const hostsSdk = new AgentServer(sdkCard, sdkExecutor);
export const wrapped: AgentExecutor = fromSdkExecutor(sdkExecutor, { executorTimeout: 30 });
