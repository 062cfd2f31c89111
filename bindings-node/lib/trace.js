// The caller's OpenTelemetry context, for the native client to carry (W3C `traceparent`,
// `tracestate` and `baggage`), so a call made inside an application's span joins that trace.
// Read through @opentelemetry/api when the application has it (its propagator and context manager are
// global, whichever copy of the API loads them); nothing otherwise.
import { createRequire } from 'node:module';

let api;
function otel() {
  if (api === undefined) {
    try {
      api = createRequire(import.meta.url)('@opentelemetry/api');
    } catch {
      api = null;
    }
  }
  return api;
}

/** `{ traceparent, tracestate, baggage }` of the active context (undefined without the API). */
export function callerTrace() {
  const otelApi = otel();
  if (!otelApi) return undefined;
  const carrier = {};
  otelApi.propagation.inject(otelApi.context.active(), carrier);
  return { traceparent: carrier.traceparent, tracestate: carrier.tracestate, baggage: carrier.baggage };
}
