// Our client inside an application instrumented with @opentelemetry/api: a call made in the
// application's active span carries that span's W3C context (traceparent, tracestate, and the
// context's baggage), so the agent's request joins the application's trace. The API's context manager and propagator are
// process-global, hence a file (a process) of its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { context, createTraceState, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { AgentServer, Client } from '../index.js';
import { CARD } from './helpers.mjs';

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
// Once per process: the API refuses to replace a registered propagator.
propagation.setGlobalPropagator(new CompositePropagator({
  propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
}));

test("calls made in the application's active span carry its trace context", async () => {
  const seen = [];
  const agent = {
    async execute(ctx, events) {
      seen.push(ctx.traceContext);
      await events.complete('done');
    },
  };
  const server = new AgentServer(CARD, agent);
  await server.listen(0);
  try {
    const client = await Client.connect(server.url);
    const span = {
      traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1,
      traceState: createTraceState('vendor=1'),
    };
    const traceparent = `00-${span.traceId}-${span.spanId}-01`;
    let taskId;
    await context.with(trace.setSpanContext(context.active(), span), async () => {
      taskId = (await client.send('unary')).task.id;
      for await (const _ of client.stream('streamed'));
    });
    // Outside any span: nothing to carry.
    await client.send('plain');
    assert.deepEqual(seen, [{ traceparent, tracestate: 'vendor=1' }, { traceparent, tracestate: 'vendor=1' }, {}]);
    assert.ok(taskId);
  } finally {
    await server.close();
  }
});

test("execute runs in the request's OpenTelemetry context: the agent's spans join the caller's trace", async () => {
  const seen = [];
  const agent = {
    async execute(ctx, events) {
      await new Promise((r) => setTimeout(r, 5)); // still there after an await
      seen.push(trace.getSpanContext(context.active()));
      await events.complete('done');
    },
  };
  const server = new AgentServer(CARD, agent);
  await server.listen(0);
  try {
    const client = await Client.connect(server.url);
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    await context.with(trace.setSpanContext(context.active(), { traceId, spanId: 'b7ad6b7169203331', traceFlags: 1 }), () =>
      client.send('traced'));
    await client.send('plain');
    assert.equal(seen[0]?.traceId, traceId);
    assert.equal(seen[0]?.isRemote, true);
    assert.equal(seen[1], undefined, 'no context without a caller trace');
  } finally {
    await server.close();
  }
});

test("the application's baggage goes along and reaches the executor", async () => {
  const seen = [];
  const agent = {
    async execute(ctx, events) {
      seen.push(ctx.traceContext.baggage);
      await events.complete('done');
    },
  };
  const server = new AgentServer(CARD, agent);
  await server.listen(0);
  try {
    const client = await Client.connect(server.url);
    const withBaggage = propagation.setBaggage(context.active(), propagation.createBaggage({ user: { value: 'ada' } }));
    await context.with(withBaggage, () => client.send('with baggage'));
    await client.send('without');
    assert.deepEqual(seen, ['user=ada', undefined]);
  } finally {
    await server.close();
  }
});
