// A Node agent's server exporting over OTLP, as an operator configures it (OTEL_* variables):
// one trace crosses the application's span → our client → our server (both spans named
// `lf.a2a.v1.A2AService/SendMessage`, OTel's RPC name) → the execution (`a2a.execute`) → the push webhook, and the metrics arrive.
// Export is set up once per process from the environment, so the application runs in a child
// process (otlp_child.mjs). The receiver decodes with OpenTelemetry's own OTLP messages, in
// Python (tests/otlp/receiver.py): skipped where no Python has opentelemetry-proto.
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

test('one trace crosses the Node client, our server, the execution and the webhook', { skip: py ? false : 'no Python with opentelemetry-proto' }, async () => {
  const receiver = spawn(py, [`${repo}tests/otlp/receiver.py`], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    const [port] = await createInterface({ input: receiver.stdout })[Symbol.asyncIterator]().next().then((r) => [r.value]);
    const collector = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, [fileURLToPath(new URL('./otlp_child.mjs', import.meta.url)), `${collector}/hook`, TRACE_ID, APP_SPAN], {
      env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: collector, OTEL_SERVICE_NAME: 'node-agent', OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_METRIC_EXPORT_INTERVAL: '200' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, output);

    let got;
    for (let i = 0; i < 200; i++) {
      got = await (await fetch(`${collector}/received`)).json();
      if (got.spans.some((s) => s.name === 'a2a.execute') && got.hooks.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const one = (name, parent) => {
      const found = got.spans.filter((s) => s.name === name && s.parent === parent && s.service === 'node-agent');
      assert.equal(found.length, 1, `${name} under ${parent}: ${JSON.stringify(got.spans)}`);
      return found[0];
    };
    const send = 'lf.a2a.v1.A2AService/SendMessage';
    const client = one(send, APP_SPAN);
    const request = one(send, client.id);
    const execute = one('a2a.execute', request.id);
    for (const span of [client, request, execute]) assert.equal(span.trace, TRACE_ID);
    // OTLP span kinds: SERVER is 2, CLIENT is 3.
    assert.deepEqual([client.kind, request.kind], [3, 2]);
    assert.ok(got.hooks.length > 0, output);
    for (const hook of got.hooks) assert.equal(hook, `00-${TRACE_ID}-${execute.id}-01`);
    assert.ok(got.metrics.some((m) => m.name === 'a2a.server.requests' && m.service === 'node-agent'), JSON.stringify(got.metrics));
  } finally {
    receiver.stdin.end();
    receiver.kill();
  }
});
