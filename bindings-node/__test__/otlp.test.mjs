// A Node agent's server exporting over OTLP, as an operator configures it (OTEL_* variables):
// one trace crosses the application's span → our client → our server (both spans named
// `lf.a2a.v1.A2AService/SendMessage`, OTel's RPC name) → the execution (`a2a.execute`) → the push webhook, and the metrics arrive.
// Export is set up once per process from the environment, so the application runs in a child
// process (otlp_child.mjs). The receiver decodes with OpenTelemetry's own OTLP messages, in
// Python (tests/otlp/receiver.py): skipped where no Python has opentelemetry-proto. The second
// test drives a Python agent (tests/otlp/python_agent.py) that opens its own span.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const APP_SPAN = '00f067aa0ba902b7';

/** A Python that can import OpenTelemetry's OTLP messages: the Python binding's venv first. */
function python() {
  for (const candidate of [`${repo}bindings-python/.venv/bin/python`, 'python3']) {
    if (candidate.startsWith('/') && !existsSync(candidate)) continue;
    const probe = spawnSync(candidate, ['-c', 'import opentelemetry.proto.collector.trace.v1.trace_service_pb2']);
    if (probe.status === 0) return candidate;
  }
  return null;
}

const py = python();
/** Whether that Python also has our package and OpenTelemetry's SDK (the Python agent's needs). */
const pyAgent = py !== null
  && spawnSync(py, ['-c', 'import a2a_native, opentelemetry.sdk.trace, opentelemetry.exporter.otlp.proto.http.trace_exporter']).status === 0;

/** Starts a Python script (its stdin held open: it runs until `stop`) and reads its first stdout line. */
async function started(args, env) {
  const proc = spawn(py, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
  const first = await createInterface({ input: proc.stdout })[Symbol.asyncIterator]().next();
  return { proc, line: first.value, stop: () => { proc.stdin.end(); proc.kill(); } };
}

/** Runs otlp_child.mjs (our Node client in the application's span) to its end. */
async function application(collector, url) {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./otlp_child.mjs', import.meta.url)), url, `${collector}/hook`, TRACE_ID, APP_SPAN], {
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: collector, OTEL_SERVICE_NAME: 'node-agent', OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_METRIC_EXPORT_INTERVAL: '200' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, output);
  return output;
}

/** What the receiver got, once `ready(got)` holds (or after 10 s). */
async function received(collector, ready) {
  let got;
  for (let i = 0; i < 200; i++) {
    got = await (await fetch(`${collector}/received`)).json();
    if (ready(got)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return got;
}

/** The one span named `name` under `parent` from `service`. */
function one(got, name, parent, service) {
  const found = got.spans.filter((s) => s.name === name && s.parent === parent && s.service === service);
  assert.equal(found.length, 1, `${name} under ${parent} from ${service}: ${JSON.stringify(got.spans)}`);
  return found[0];
}

const SEND = 'lf.a2a.v1.A2AService/SendMessage';
const skip = py ? false : 'no Python with opentelemetry-proto';

test('one trace crosses the Node client, our server, the execution and the webhook', { skip }, async () => {
  const receiver = await started([`${repo}tests/otlp/receiver.py`], {});
  try {
    const collector = `http://127.0.0.1:${receiver.line}`;
    const output = await application(collector, '-');
    const got = await received(
      collector,
      (g) => g.spans.some((s) => s.name === 'a2a.execute') && g.hooks.length
        && g.spans.filter((s) => s.name === 'a2a.push').length >= g.hooks.length,
    );
    const client = one(got, SEND, APP_SPAN, 'node-agent');
    const request = one(got, SEND, client.id, 'node-agent');
    const execute = one(got, 'a2a.execute', request.id, 'node-agent');
    for (const span of [client, request, execute]) assert.equal(span.trace, TRACE_ID);
    // OTLP span kinds: SERVER is 2, CLIENT is 3.
    assert.deepEqual([client.kind, request.kind], [3, 2]);
    assert.ok(got.hooks.length > 0, output);
    // Each delivery is an a2a.push client span under the execution; its webhook post names it.
    const pushes = got.spans.filter((s) => s.name === 'a2a.push');
    assert.ok(pushes.every((p) => p.parent === execute.id && p.trace === TRACE_ID && p.kind === 3), JSON.stringify(pushes));
    const pushIds = new Set(pushes.map((p) => `00-${TRACE_ID}-${p.id}-01`));
    for (const hook of got.hooks) assert.ok(pushIds.has(hook), `${hook} is no a2a.push span: ${JSON.stringify(pushes)}`);
    assert.ok(got.metrics.some((m) => m.name === 'a2a.server.requests' && m.service === 'node-agent'), JSON.stringify(got.metrics));
  } finally {
    receiver.stop();
  }
});

test('one trace crosses the Node client, a Python agent on our server, its own span and the webhook', { skip: pyAgent ? false : 'no Python with a2a_native and the OpenTelemetry SDK' }, async () => {
  const receiver = await started([`${repo}tests/otlp/receiver.py`], {});
  let agent;
  try {
    const collector = `http://127.0.0.1:${receiver.line}`;
    agent = await started([`${repo}tests/otlp/python_agent.py`], {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector, OTEL_SERVICE_NAME: 'python-agent', OTEL_BSP_SCHEDULE_DELAY: '50',
    });
    await application(collector, agent.line);
    const got = await received(collector, (g) => g.spans.some((s) => s.name === 'agent-work') && g.hooks.length);
    const client = one(got, SEND, APP_SPAN, 'node-agent');
    const request = one(got, SEND, client.id, 'python-agent');
    const execute = one(got, 'a2a.execute', request.id, 'python-agent');
    const work = one(got, 'agent-work', execute.id, 'python-agent-code');
    for (const span of [client, request, execute, work]) assert.equal(span.trace, TRACE_ID);
    assert.ok(got.hooks.length > 0);
    for (const hook of got.hooks) assert.ok(hook.startsWith(`00-${TRACE_ID}-`), hook);
  } finally {
    agent?.stop();
    receiver.stop();
  }
});
