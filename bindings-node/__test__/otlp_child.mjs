// The application of otlp.test.mjs, run with the OTEL_* variables set: our client called in the
// application's span (through @opentelemetry/api), against the agent at `url`, or against a
// Node agent's server of its own when `url` is `-`.
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AgentServer, Client } from '../index.js';
import { CARD } from './helpers.mjs';

const [url, hook, traceId, spanId] = process.argv.slice(2);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

const agent = {
  async execute(ctx, events) {
    await events.working();
    await events.complete('done');
  },
};
const server = url === '-' ? new AgentServer(CARD, agent, { security: { allowPrivateWebhooks: true } }) : null;
if (server) await server.listen(0);
const client = await Client.connect(server ? server.url : url);
const app = trace.setSpanContext(context.active(), { traceId, spanId, traceFlags: 1 });
await context.with(app, () => client.send('traced', { configuration: { taskPushNotificationConfig: { url: hook } } }));
await new Promise((r) => setTimeout(r, 1000)); // the push notifications go out after the reply
if (server) await server.close();
